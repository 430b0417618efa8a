//! The training loop: a LLaDA built on candle variables, the masked-diffusion loss, AdamW with
//! warmup and cosine decay, gradient clipping, and checkpoints.
//!
//! A checkpoint is a complete model folder (`config.json`, `model.safetensors`,
//! `tokenizer.json`, `lacuna.json`) plus what resuming needs (`optimizer.safetensors`,
//! `train_state.json`). Batches and masks are drawn from a generator seeded by the step, so a
//! resumed run sees the batches an uninterrupted one would have.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use candle_core::{DType, Device, Tensor, Var, D};
use candle_nn::{Init, VarMap};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokenizers::Tokenizer;

use super::adamw::{AdamW, AdamWParams};
use super::bpe::{self, EOS_ID, MASK_ID};
use super::corpus::{Batch, Corpus, TaskInfo, TaskSet};
use super::{Result, TrainError, TASKS_FILE};
use crate::diffusion::checkpoint::{read_json_limited, Weights};
use crate::diffusion::layers::Kernels;
use crate::diffusion::llada::{Config, LLaDA};
use crate::diffusion::rng::Rng;
use crate::vocab::{read_bounded, MAX_TOKENIZER_BYTES, MAX_VOCAB};

/// How to train.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrainOptions {
    /// The corpus: JSON lines of `task`, `prompt` and `answer`.
    pub corpus: PathBuf,
    /// The model folder written (created if absent); a run resumes from a checkpoint there.
    pub out: PathBuf,
    /// Total optimizer steps (a resumed run continues up to this many).
    pub steps: usize,
    /// Tokens per batch (rows × length, prompts included). Like the task weights, the shape
    /// and the seed, a resumed run keeps its first run's value: it sees the batches an
    /// uninterrupted run would have.
    pub batch_tokens: usize,
    /// Peak learning rate, reached after `warmup`, then cosine decay to a tenth of it.
    pub lr: f64,
    /// Steps of linear warmup.
    pub warmup: usize,
    /// Gradient clipping by global norm.
    pub clip: f64,
    /// Most ids of the byte-level BPE tokenizer trained on the corpus; at least 260 (256
    /// bytes, EOS, mask, merges). Like the shape fields below, `max_len` and `seed`, a
    /// resumed run keeps its first run's value.
    pub vocab_size: usize,
    /// Width of the residual stream.
    pub d_model: usize,
    /// Number of transformer blocks.
    pub n_layers: usize,
    /// Number of attention heads; must divide `d_model`.
    pub n_heads: usize,
    /// Width of the SwiGLU feed-forward layer.
    pub mlp_hidden: usize,
    /// Longest sequence (prompt + answer), in tokens.
    pub max_len: usize,
    /// Seed of the initial weights, batches and masks.
    pub seed: u64,
    /// Write a checkpoint every this many steps (and at the end).
    pub checkpoint_every: usize,
    /// Stop (with a checkpoint) after this long; resume later to go on.
    pub time_limit: Option<Duration>,
    /// Stop (with a checkpoint) at this step; resume later to go on.
    pub stop_at: Option<usize>,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Where to train: the CPU, or a CUDA GPU (a build with the `cuda` feature). Not part of
    /// what defines a run: a run may resume on another device.
    #[serde(default)]
    pub device: TrainDevice,
    /// Start from this model folder's weights and tokenizer instead of fresh ones (a run
    /// that continues an earlier model whose optimizer state is gone). Its `config.json`
    /// must have the shape given here. Part of what defines the run: a resume keeps it.
    #[serde(default)]
    pub init_from: Option<PathBuf>,
    /// How often each task is drawn, relative to the others (a task not named: 1). Empty:
    /// tasks take equal turns. A resumed run keeps its first run's weights.
    #[serde(default)]
    pub task_weights: BTreeMap<String, f64>,
}

/// The device a model is trained on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TrainDevice {
    /// The CPU (candle's CPU kernels, all cores).
    #[default]
    Cpu,
    /// CUDA GPU number `n` (needs a build with the `cuda` feature).
    Cuda(usize),
}

impl TrainDevice {
    fn open(self) -> Result<Device> {
        match self {
            TrainDevice::Cpu => Ok(Device::Cpu),
            TrainDevice::Cuda(n) => Device::new_cuda(n).map_err(|e| {
                TrainError::Invalid(format!(
                    "--device cuda:{n}: {e} (CUDA needs a build with `--features cuda` and a GPU)"
                ))
            }),
        }
    }
}

impl TrainOptions {
    /// Defaults for a model of a few million parameters.
    pub fn new(corpus: PathBuf, out: PathBuf) -> TrainOptions {
        TrainOptions {
            corpus,
            out,
            steps: 2000,
            batch_tokens: 2048,
            lr: 2e-3,
            warmup: 100,
            clip: 1.0,
            vocab_size: 2048,
            d_model: 256,
            n_layers: 4,
            n_heads: 4,
            mlp_hidden: 704,
            max_len: 320,
            seed: 0,
            checkpoint_every: 200,
            time_limit: None,
            stop_at: None,
            progress: true,
            device: TrainDevice::Cpu,
            init_from: None,
            task_weights: BTreeMap::new(),
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, Serialize, Deserialize, Default)]
pub struct TrainReport {
    /// Optimizer steps taken so far, earlier runs included.
    pub steps: usize,
    /// Number of trainable parameters.
    pub parameters: usize,
    /// Mean loss over the first (up to) 50 steps of the whole training.
    pub first_loss: f64,
    /// Mean loss over the last (up to) 50 steps.
    pub last_loss: f64,
    /// Training time of all runs together.
    pub seconds: f64,
}

/// What `train_state.json` holds.
#[derive(Serialize, Deserialize)]
struct TrainState {
    step: usize,
    seconds: f64,
    /// Loss of every step so far.
    losses: Vec<f32>,
    /// The first run's options: what defines the run is read back from them on resume.
    options: TrainOptions,
    /// The first run's corpus ([`Corpus::fingerprint`]); absent in states written before it
    /// was kept, whose resumes are not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    corpus: Option<String>,
}

const STATE_FILE: &str = "train_state.json";
/// The largest `train_state.json` read (256 MiB): it holds the loss of every step, some ten
/// bytes each.
const MAX_STATE_BYTES: u64 = 256 << 20;
const OPTIMIZER_FILE: &str = "optimizer.safetensors";

/// Trains (or resumes, when `opts.out` holds a checkpoint) and returns what was done.
pub fn train(opts: &TrainOptions) -> Result<TrainReport> {
    validate(opts)?;
    let device = opts.device.open()?;
    let corpus = Corpus::read(&opts.corpus)?;
    std::fs::create_dir_all(&opts.out).map_err(|source| TrainError::Write {
        path: opts.out.clone(),
        source,
    })?;
    let state_path = opts.out.join(STATE_FILE);
    let resumed: Option<TrainState> = if state_path.is_file() {
        let state: TrainState = read_json_limited(&state_path, MAX_STATE_BYTES)?;
        // What defines the run comes from the file: it is checked as the arguments were.
        validate(&state.options).map_err(|e| {
            TrainError::Invalid(format!(
                "{}: field `options` (the first run's): {e}",
                state_path.display()
            ))
        })?;
        if let Some(first_corpus) = state.corpus.as_ref().filter(|&c| *c != corpus.fingerprint) {
            return Err(TrainError::Invalid(format!(
                "--corpus {}: not the corpus the run in {} started on ({first_corpus}; this \
                 one: {}). A resume goes on with the batches of its first corpus: give it that \
                 corpus, or start a new run from this checkpoint's weights with --init-from {} \
                 and another --out",
                opts.corpus.display(),
                opts.out.display(),
                corpus.fingerprint,
                opts.out.display()
            )));
        }
        Some(state)
    } else {
        None
    };
    // A resumed run keeps what defines it (model shape, vocabulary, sequence length, seed,
    // batch size, task weights, starting weights) from its first run, whatever it is given
    // now; steps, learning rate and limits are new. (A resume once given no --batch-tokens
    // trained on the default 2,048 instead of the first run's 32,768.)
    let first = resumed.as_ref().map_or(opts, |s| &s.options).clone();
    let tok_path = opts.out.join("tokenizer.json");
    let tokenizer = match (&resumed, &first.init_from) {
        (Some(_), _) => read_tokenizer(&tok_path)?,
        (None, Some(dir)) => {
            if !dir.is_dir() {
                return Err(TrainError::Invalid(format!(
                    "--init-from {}: not a folder (a model folder: config.json, \
                     model.safetensors, tokenizer.json)",
                    dir.display()
                )));
            }
            // The starting model's ids are the ones its weights know.
            let source = dir.join("tokenizer.json");
            let tokenizer = read_tokenizer(&source)?;
            std::fs::copy(&source, &tok_path).map_err(|source| TrainError::Write {
                path: tok_path.clone(),
                source,
            })?;
            tokenizer
        }
        (None, None) => bpe::train_tokenizer(corpus.texts(), first.vocab_size, &tok_path)?,
    };
    let encode = |s: &str| -> Result<Vec<u32>> {
        Ok(tokenizer
            .encode(s, false)
            .map_err(|e| TrainError::Tokenizer(e.to_string()))?
            .get_ids()
            .to_vec())
    };
    let tasks = TaskSet::build(&corpus, first.max_len, encode)?;
    let task_weights = tasks.weights(&first.task_weights)?;
    let vocab = tokenizer.get_vocab_size(true);
    let (cfg, cfg_json) = model_config(&first, vocab)?;
    let mut varmap = VarMap::new();
    init_vars(&mut varmap, &cfg, first.seed, &device)?;
    match (&resumed, &first.init_from) {
        (Some(_), _) => varmap.load(opts.out.join("model.safetensors"))?,
        (None, Some(dir)) => load_initial_weights(&varmap, dir, &cfg_json, &device)?,
        (None, None) => {}
    }
    let weights = Weights::from_varmap(&varmap, DType::F32, &device, &opts.out);
    let mut model = LLaDA::new(&cfg, &weights)?;
    model.set_kernels(Kernels::Differentiable);
    let vars: HashMap<String, Var> = varmap.data().lock().expect("varmap lock").clone();
    let parameters = vars.values().map(|v| v.elem_count()).sum();
    let mut opt = AdamW::new(vars, AdamWParams::default())?;
    let (mut step, mut seconds, mut losses) = match resumed {
        Some(s) => {
            opt.load(&opts.out.join(OPTIMIZER_FILE), s.step as u64, &device)?;
            (s.step, s.seconds, s.losses)
        }
        None => (0, 0.0, Vec::new()),
    };
    let bar = progress_bar(opts, step);
    let started = Instant::now();
    let base_seconds = seconds;
    while step < opts.steps {
        let mut rng = Rng::new(first.seed ^ (step as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let batch = tasks.batch(
            &mut rng,
            task_weights.as_deref(),
            first.batch_tokens,
            EOS_ID,
        );
        let loss = masked_loss(&model, &batch, &mut rng, &device)?;
        let grads = loss.backward()?;
        let norm = opt.grad_norm(&grads)?;
        let scale = if norm > opts.clip {
            opts.clip / norm
        } else {
            1.0
        };
        opt.step(&grads, learning_rate(opts, step), scale)?;
        let value = loss.to_scalar::<f32>()?;
        if !value.is_finite() {
            return Err(TrainError::Invalid(format!(
                "loss became {value} at step {step}; try a lower --lr"
            )));
        }
        losses.push(value);
        step += 1;
        seconds = base_seconds + started.elapsed().as_secs_f64();
        let message = format!(
            "loss {:.3} · {}",
            tail_mean(&losses, 50),
            tasks.tasks[batch.task].name
        );
        match &bar {
            Some(b) if !b.is_hidden() => {
                b.set_position(step as u64);
                b.set_message(message);
            }
            // Not a terminal (a log file): a plain line now and then instead.
            Some(_) if step % 50 == 0 || step == opts.steps => {
                eprintln!("step {step}/{} · {message} · {seconds:.0} s", opts.steps);
            }
            _ => {}
        }
        let out_of_time = opts.time_limit.is_some_and(|t| started.elapsed() >= t)
            || opts.stop_at.is_some_and(|s| step >= s);
        if step % opts.checkpoint_every == 0 || step == opts.steps || out_of_time {
            let state = TrainState {
                step,
                seconds,
                losses: losses.clone(),
                options: first.clone(),
                corpus: Some(corpus.fingerprint.clone()),
            };
            save_checkpoint(opts, &varmap, &cfg_json, &tasks, &opt, &state)?;
        }
        if out_of_time {
            break;
        }
    }
    if let Some(b) = bar {
        b.finish();
    }
    Ok(TrainReport {
        steps: step,
        parameters,
        first_loss: losses.iter().take(50).map(|&l| l as f64).sum::<f64>()
            / losses.len().clamp(1, 50) as f64,
        last_loss: tail_mean(&losses, 50),
        seconds,
    })
}

/// The most parameters a model may have to be trained: 2^28 (268,435,456), 1 GiB of f32
/// weights; training holds about four times that (weights, gradients, two AdamW moments).
pub const MAX_PARAMETERS: u64 = 1 << 28;

/// The largest `--batch-tokens`: 2^20 (1,048,576) tokens a step.
pub const MAX_BATCH_TOKENS: usize = 1 << 20;

/// The largest `--max-len`: 8,192 tokens, the longest context a LLaDA model reports
/// ([`crate::diffusion::Model::max_positions`]).
pub const MAX_LEN: usize = 8192;

/// The smallest `--vocab-size`: the 256 bytes, EOS and mask, and two merges.
pub const MIN_VOCAB: usize = 260;

/// The parameters of a model of this shape with a vocabulary of `vocab` ids (embedding and
/// output matrices, and per block two norms, four attention and three feed-forward
/// matrices), or `None` if the count overflows.
fn parameter_count(o: &TrainOptions, vocab: usize) -> Option<u128> {
    let (v, d, l, h) = (
        vocab as u128,
        o.d_model as u128,
        o.n_layers as u128,
        o.mlp_hidden as u128,
    );
    let embeddings = v.checked_mul(d)?.checked_mul(2)?.checked_add(d)?;
    let block = d
        .checked_mul(d)?
        .checked_mul(4)?
        .checked_add(d.checked_mul(h)?.checked_mul(3)?)?
        .checked_add(d * 2)?;
    embeddings.checked_add(block.checked_mul(l)?)
}

/// Checks options before anything is read or allocated; each error names the flags at fault
/// and the limit.
fn validate(o: &TrainOptions) -> Result<()> {
    let bad = |m: String| Err(TrainError::Invalid(m));
    if o.steps == 0 || o.batch_tokens == 0 || o.checkpoint_every == 0 {
        return bad("--steps, --batch-tokens and --checkpoint-every must be positive".into());
    }
    if o.batch_tokens > MAX_BATCH_TOKENS {
        return bad(format!(
            "--batch-tokens {}: at most {MAX_BATCH_TOKENS} tokens a step",
            o.batch_tokens
        ));
    }
    if !(o.lr > 0.0 && o.lr.is_finite()) {
        return bad("--lr must be a positive number".into());
    }
    if !(MIN_VOCAB..=MAX_VOCAB).contains(&o.vocab_size) {
        return bad(format!(
            "--vocab-size {0}: vocabulary size {0} must be from {MIN_VOCAB} (256 bytes, EOS, \
             mask, merges) to {MAX_VOCAB}",
            o.vocab_size
        ));
    }
    if o.n_heads == 0
        || !o.d_model.is_multiple_of(o.n_heads)
        || !(o.d_model / o.n_heads).is_multiple_of(2)
    {
        return bad("--heads must divide --d-model into heads of even size".into());
    }
    if o.n_layers == 0 || o.mlp_hidden == 0 || o.max_len < 8 {
        return bad("--layers and --mlp-hidden must be positive, --max-len at least 8".into());
    }
    if o.max_len > MAX_LEN {
        return bad(format!(
            "--max-len {}: at most {MAX_LEN} tokens (the longest context of a LLaDA model)",
            o.max_len
        ));
    }
    // The tokenizer trained has at most `vocab_size` ids.
    let count = parameter_count(o, o.vocab_size);
    if count.is_none_or(|c| c > MAX_PARAMETERS as u128) {
        let count = count.map_or("more than 2^128".to_string(), |c| c.to_string());
        return bad(format!(
            "model too large: --vocab-size {} × --d-model {} embeddings and --layers {} blocks \
             of --d-model {} and --mlp-hidden {} make {count} parameters; at most \
             {MAX_PARAMETERS} (1 GiB of f32 weights) are trained",
            o.vocab_size, o.d_model, o.n_layers, o.d_model, o.mlp_hidden
        ));
    }
    Ok(())
}

/// The LLaDA config of the model being trained, and its `config.json`.
fn model_config(o: &TrainOptions, vocab: usize) -> Result<(Config, serde_json::Value)> {
    let value = json!({
        "model_type": "llada",
        "architectures": ["LLaDAModelLM"],
        "d_model": o.d_model,
        "n_layers": o.n_layers,
        "n_heads": o.n_heads,
        "n_kv_heads": o.n_heads,
        "mlp_hidden_size": o.mlp_hidden,
        "vocab_size": vocab,
        "embedding_size": vocab,
        "max_sequence_length": o.max_len,
        "rope_theta": 10000.0,
        "rms_norm_eps": 1e-5,
        "weight_tying": false,
        "include_bias": false,
        "block_type": "llama",
        "layer_norm_type": "rms",
        "activation_type": "silu",
        "mask_token_id": MASK_ID,
        "eos_token_id": EOS_ID,
    });
    let cfg: Config = serde_json::from_value(value.clone())
        .map_err(|e| TrainError::Invalid(format!("model config: {e}")))?;
    Ok((cfg, value))
}

/// Reads a tokenizer file (bounded, as every tokenizer lacuna reads).
fn read_tokenizer(path: &Path) -> Result<Tokenizer> {
    let json = read_bounded(path, MAX_TOKENIZER_BYTES, "tokenizer files").map_err(|source| {
        TrainError::Read {
            path: path.to_path_buf(),
            source,
        }
    })?;
    Tokenizer::from_bytes(json)
        .map_err(|e| TrainError::Tokenizer(format!("{}: {e}", path.display())))
}

/// Sets every variable to the weight of the same name in the model folder `dir` (any float
/// dtype, converted to f32), after checking that the folder's `config.json` has the shape
/// being trained: each field that differs is named.
fn load_initial_weights(
    vm: &VarMap,
    dir: &Path,
    cfg: &serde_json::Value,
    dev: &Device,
) -> Result<()> {
    let config_path = dir.join("config.json");
    let theirs: serde_json::Value = read_json_limited(&config_path, 1 << 20)?;
    let shape_fields = [
        "d_model",
        "n_layers",
        "n_heads",
        "n_kv_heads",
        "mlp_hidden_size",
        "vocab_size",
        "max_sequence_length",
    ];
    let differing: Vec<String> = shape_fields
        .iter()
        .filter(|f| theirs.get(**f) != cfg.get(**f))
        .map(|f| {
            let shown = theirs.get(*f).map_or("absent".into(), |v| v.to_string());
            format!("`{f}` is {shown} there, {} here", cfg[*f])
        })
        .collect();
    if !differing.is_empty() {
        return Err(TrainError::Invalid(format!(
            "--init-from {}: {} (give the starting model's shape)",
            config_path.display(),
            differing.join("; ")
        )));
    }
    let weights = Weights::open(dir, DType::F32, dev)?;
    let vars = vm.data().lock().expect("varmap lock");
    for (name, var) in vars.iter() {
        var.set(&weights.get(var.shape().clone(), name)?)?;
    }
    Ok(())
}

/// Creates every weight with its initial value, drawn from `seed` (candle's own generator is
/// not seeded per run): N(0, 0.02) for matrices, scaled down by sqrt(2 × layers) for the
/// projections into the residual stream; ones for norm scales.
fn init_vars(vm: &mut VarMap, cfg: &Config, seed: u64, dev: &Device) -> Result<()> {
    let (d, h, n) = (cfg.d_model, cfg.hidden(), cfg.logits_size());
    let residual = 0.02 / (2.0 * cfg.n_layers as f64).sqrt();
    let mut rng = Rng::new(seed ^ 0x1417_5EED);
    let t = "model.transformer";
    // stdev 0 means ones (a norm scale).
    let mut add = |name: String, shape: &[usize], stdev: f64| -> Result<()> {
        let count: usize = shape.iter().product();
        let values: Vec<f32> = if stdev == 0.0 {
            vec![1.0; count]
        } else {
            (0..count)
                .map(|_| (normal(&mut rng) * stdev) as f32)
                .collect()
        };
        vm.get(shape, &name, Init::Const(0.0), DType::F32, dev)?;
        vm.set_one(&name, Tensor::from_vec(values, shape, dev)?)?;
        Ok(())
    };
    add(format!("{t}.wte.weight"), &[n, d], 0.02)?;
    add(format!("{t}.ff_out.weight"), &[n, d], 0.02)?;
    add(format!("{t}.ln_f.weight"), &[d], 0.0)?;
    for i in 0..cfg.n_layers {
        let b = format!("{t}.blocks.{i}");
        add(format!("{b}.attn_norm.weight"), &[d], 0.0)?;
        add(format!("{b}.ff_norm.weight"), &[d], 0.0)?;
        for p in ["q_proj", "k_proj", "v_proj"] {
            add(format!("{b}.{p}.weight"), &[d, d], 0.02)?;
        }
        add(format!("{b}.attn_out.weight"), &[d, d], residual)?;
        add(format!("{b}.ff_proj.weight"), &[h, d], 0.02)?;
        add(format!("{b}.up_proj.weight"), &[h, d], 0.02)?;
        add(format!("{b}.ff_out.weight"), &[d, h], residual)?;
    }
    Ok(())
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut Rng) -> f64 {
    let (u, v) = (rng.uniform(), rng.uniform());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// Linear warmup, then cosine decay to a tenth of the peak.
fn learning_rate(o: &TrainOptions, step: usize) -> f64 {
    if step < o.warmup {
        return o.lr * (step + 1) as f64 / o.warmup as f64;
    }
    let span = (o.steps - o.warmup.min(o.steps)).max(1) as f64;
    let progress = ((step - o.warmup) as f64 / span).min(1.0);
    o.lr * (0.1 + 0.9 * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()))
}

/// Masks each row's answer region with probability t ~ U(0, 1) and returns the
/// 1/t-weighted cross-entropy on masked positions, over the number of answer positions.
pub fn masked_loss(model: &LLaDA, batch: &Batch, rng: &mut Rng, dev: &Device) -> Result<Tensor> {
    const EPS: f64 = 1e-3;
    let mut noisy = batch.ids.clone();
    let (mut picked, mut targets, mut weights) = (Vec::new(), Vec::new(), Vec::new());
    let mut answer_positions = 0usize;
    for row in 0..batch.rows {
        let p = (1.0 - EPS) * rng.uniform() + EPS;
        let start = row * batch.len + batch.answer_start[row];
        let end = (row + 1) * batch.len;
        answer_positions += end - start;
        for (i, slot) in noisy.iter_mut().enumerate().take(end).skip(start) {
            if rng.uniform() < p {
                *slot = MASK_ID;
                picked.push(i as u32);
                targets.push(batch.ids[i]);
                weights.push((1.0 / p) as f32);
            }
        }
    }
    if picked.is_empty() {
        let i = batch.answer_start[0];
        noisy[i] = MASK_ID;
        picked.push(i as u32);
        targets.push(batch.ids[i]);
        weights.push(1.0);
    }
    let m = picked.len();
    let input = Tensor::from_vec(noisy, (batch.rows, batch.len), dev)?;
    let hidden = model.hidden_states(&input)?;
    let d = hidden.dim(D::Minus1)?;
    let rows = hidden
        .reshape((batch.rows * batch.len, d))?
        .index_select(&Tensor::from_vec(picked, m, dev)?, 0)?;
    let logp = candle_nn::ops::log_softmax(&model.logits(&rows)?, D::Minus1)?;
    let nll = logp
        .gather(&Tensor::from_vec(targets, (m, 1), dev)?, 1)?
        .squeeze(1)?
        .neg()?;
    let weighted = (nll * Tensor::from_vec(weights, m, dev)?)?.sum_all()?;
    Ok((weighted / answer_positions.max(1) as f64)?)
}

fn tail_mean(losses: &[f32], n: usize) -> f64 {
    let tail = &losses[losses.len().saturating_sub(n)..];
    tail.iter().map(|&l| l as f64).sum::<f64>() / tail.len().max(1) as f64
}

fn progress_bar(o: &TrainOptions, step: usize) -> Option<ProgressBar> {
    if !o.progress {
        return None;
    }
    let bar = ProgressBar::new(o.steps as u64);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} ({eta}) {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_position(step as u64);
    Some(bar)
}

/// Writes the model folder and the resume state; each file is written beside and renamed,
/// so an interrupted write never leaves a broken checkpoint.
fn save_checkpoint(
    o: &TrainOptions,
    vm: &VarMap,
    cfg: &serde_json::Value,
    tasks: &TaskSet,
    opt: &AdamW,
    state: &TrainState,
) -> Result<()> {
    let task_map: BTreeMap<&str, &TaskInfo> = tasks
        .tasks
        .iter()
        .map(|t| (t.name.as_str(), &t.info))
        .collect();
    let card = json!({
        "eos_token": bpe::EOS_TOKEN,
        "mask_token": bpe::MASK_TOKEN,
        "tasks": task_map,
        "training": {"steps": state.step, "seconds": state.seconds,
                     "last_loss": tail_mean(&state.losses, 50)},
    });
    let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).expect("json");
    write_atomic(&o.out.join("config.json"), |p| write_text(p, &pretty(cfg)))?;
    write_atomic(&o.out.join(TASKS_FILE), |p| write_text(p, &pretty(&card)))?;
    write_atomic(&o.out.join("model.safetensors"), |p| Ok(vm.save(p)?))?;
    write_atomic(&o.out.join(OPTIMIZER_FILE), |p| opt.save(p))?;
    let state_json = serde_json::to_string(state).expect("json");
    write_atomic(&o.out.join(STATE_FILE), |p| write_text(p, &state_json))
}

fn write_text(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|source| TrainError::Write {
        path: path.to_path_buf(),
        source,
    })
}

fn write_atomic(path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let tmp = path.with_extension("tmp");
    write(&tmp)?;
    std::fs::rename(&tmp, path).map_err(|source| TrainError::Write {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(edit: impl FnOnce(&mut TrainOptions)) -> TrainOptions {
        let mut o = TrainOptions::new("c.jsonl".into(), "out".into());
        edit(&mut o);
        o
    }

    fn refused(edit: impl FnOnce(&mut TrainOptions)) -> String {
        match validate(&options(edit)) {
            Err(e) => e.to_string(),
            Ok(()) => panic!("accepted"),
        }
    }

    #[test]
    fn sizes_are_bounded_before_anything_is_allocated() {
        assert!(validate(&options(|_| {})).is_ok());
        let e = refused(|o| o.vocab_size = usize::MAX);
        assert!(e.contains("--vocab-size 18446744073709551615"), "{e}");
        let e = refused(|o| o.vocab_size = 1);
        assert!(e.contains("vocabulary size 1"), "{e}");
        let e = refused(|o| o.d_model = 100_000_000);
        assert!(
            e.contains("--d-model 100000000") && e.contains("268435456"),
            "{e}"
        );
        let e = refused(|o| o.n_layers = 100_000_000);
        assert!(e.contains("--layers 100000000"), "{e}");
        let e = refused(|o| o.mlp_hidden = usize::MAX);
        assert!(e.contains("--mlp-hidden 18446744073709551615"), "{e}");
        let e = refused(|o| o.batch_tokens = usize::MAX);
        assert!(e.contains("--batch-tokens"), "{e}");
        let e = refused(|o| o.max_len = usize::MAX);
        assert!(e.contains("--max-len"), "{e}");
        // Overflow of the count itself is refused, not wrapped.
        let e = refused(|o| {
            o.d_model = 1 << 62;
            o.n_heads = 1 << 30;
        });
        assert!(e.contains("more than 2^128"), "{e}");
    }

    #[test]
    fn the_default_model_shape_is_counted_exactly() {
        // models/default: 2048 ids, d 256, 4 blocks, hidden 704.
        let o = options(|_| {});
        let blocks = 4 * (4 * 256 * 256 + 3 * 256 * 704 + 2 * 256);
        assert_eq!(
            parameter_count(&o, 2048),
            Some(2 * 2048 * 256 + 256 + blocks)
        );
    }
}
