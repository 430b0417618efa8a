//! `lacuna eval run`: one model over one DLM task file, in each mode and seed asked for, one
//! result file per (task, model, seed, mode).
//!
//! Two profiles, picked by the model: a checkpoint trained by lacuna (the embedded model, or a
//! folder with `lacuna.json`) is prompted exactly as in its training — the task's own prompt,
//! its answer length, temperature 1, one step per position, held-out items only — while any
//! other LLaDA or Dream checkpoint gets the paper's protocol: its chat template with the item's
//! system and user turns and the prefill, the grammar followed by an optional closing fence,
//! 256 positions, 32 steps, temperature 0.2, low-confidence remasking in blocks of 32 (LLaDA)
//! or entropy order with top-p 0.95 (Dream). Explicit flags override either.
//!
//! Modes: `van` (unconstrained), `reject` (the paper's Con.: proposals checked one at a time,
//! 100 rejections per output, no per-position retirement, then the grammar's completion),
//! `mask` (lacuna's: each token drawn from its position's valid-token mask, computed where
//! the model's first choices are refused: its 8 best, checked one by one), `mask-eager`
//! (every candidate's mask before the sampler ranks positions) and `gp` (unconstrained, the
//! grammar's rules appended to the user turn; instruct checkpoints only).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;

use super::records::{read_task_file, GrammarKind, JsonlWriter, ResultRecord, TaskFile, TaskItem};
use crate::checker::Checker;
use crate::deadline::Deadline;
use crate::diffusion::default_model::{load_default, load_folder, LoadedModel};
use crate::diffusion::tasks::{self, default_block};
use crate::diffusion::{
    generate, generate_masked, ChatTemplate, Constraint, DreamAlg, DreamSampler, Family,
    GenerateOptions, Generation, LLaDASampler, MaskConstraint, Remasking, Sampler, TokenTable,
};
use crate::fnv::Fnv1a;
use crate::grammar::schema::{compile, SchemaOptions};
use crate::grammar::spec::with_fence;
use crate::grammar::Grammar;
use crate::vocab::Vocabulary;

/// How an output is steered.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Van,
    Reject,
    Mask,
    MaskEager,
    Gp,
    /// Infilling tasks with a diffusion model: every hole at once (`infill --native`).
    Native,
    /// The same canvas unconstrained (`infill --native --unconstrained`).
    NativeVan,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Van => "van",
            Mode::Reject => "reject",
            Mode::Mask => "mask",
            Mode::MaskEager => "mask-eager",
            Mode::Gp => "gp",
            Mode::Native => "native",
            Mode::NativeVan => "native-van",
        }
    }

    /// Every hole at once, on one canvas (`infill --native`).
    pub fn is_native(self) -> bool {
        matches!(self, Mode::Native | Mode::NativeVan)
    }
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// A task file of `eval prepare` (dlm-cpp, dlm-json, dlm-smiles; mri-K, mril-K).
    #[arg(long)]
    pub(super) task: PathBuf,
    /// Checkpoint folder (LLaDA or Dream; for infilling tasks also a causal FIM model:
    /// Qwen2, StarCoder2, Llama/DeepSeek, Gemma); default: the embedded model.
    #[arg(long)]
    pub(super) model: Option<PathBuf>,
    /// tokenizer.json (default: the one in the model folder).
    #[arg(long)]
    pub(super) tokenizer: Option<PathBuf>,
    /// Name of the model in result files; default: `default`, or the folder's name.
    #[arg(long)]
    pub(super) model_name: Option<String>,
    /// Modes, comma-separated: van, reject, mask, mask-eager, gp; native and native-van
    /// (infilling tasks, diffusion models: every hole at once, under masks or not).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "van,reject,mask"
    )]
    pub(super) modes: Vec<Mode>,
    /// Seeds, comma-separated (the paper's: 0,1,2,3).
    #[arg(long, value_delimiter = ',', default_value = "0")]
    pub(super) seeds: Vec<u64>,
    /// Items to run: the first N (after the held-out filter).
    #[arg(long)]
    pub(super) limit: Option<usize>,
    /// With a model trained by lacuna, run the items it was trained on too (by default only
    /// held-out items run: a score on memorized items is not a skill).
    #[arg(long)]
    pub(super) include_trained: bool,
    /// Generated positions (paper: 256; lacuna-trained models: the task's answer length).
    #[arg(long)]
    pub(super) length: Option<usize>,
    /// Denoising steps (paper: 32; lacuna-trained models: one per position).
    #[arg(long)]
    pub(super) steps: Option<usize>,
    /// LLaDA block length (paper: 32).
    #[arg(long)]
    pub(super) block: Option<usize>,
    /// Infilling tasks: at most this many tokens per hole (the paper's 256).
    #[arg(long, default_value_t = 256)]
    pub(super) max_tokens: usize,
    /// Infilling tasks with a diffusion model: masked positions shown ahead of each hole
    /// (`native`: each hole's length in tokens).
    #[arg(long, default_value_t = 16)]
    pub(super) span: usize,
    /// Sampling temperature (DLM paper: 0.2, MRI paper: 1; lacuna-trained models: 1).
    #[arg(long)]
    pub(super) temperature: Option<f64>,
    /// Dream's top-p (paper: 0.95).
    #[arg(long)]
    pub(super) top_p: Option<f64>,
    /// Rejections per output before the grammar's completion finishes it (reject mode).
    #[arg(long, default_value_t = 100)]
    pub(super) max_resamples: u64,
    /// Wall-clock limit per output, in seconds: the checker answers `unknown` past it, the
    /// output ends as it stands and its record says `timed_out`.
    #[arg(long, default_value_t = 300.0)]
    pub(super) timeout: f64,
    /// Folder for the result files.
    #[arg(long)]
    pub(super) out: PathBuf,
    /// Compute dtype: f32, f16 or bf16.
    #[arg(long, default_value = "f32")]
    pub(super) dtype: String,
    /// Run on the first CUDA GPU (needs the `cuda` feature).
    #[arg(long)]
    pub(super) cuda: bool,
}

/// The settled settings of a run.
#[derive(Clone, Copy)]
struct Plan {
    /// Prompted as in lacuna's training (the task's prompt) rather than by a chat template.
    trained_by_lacuna: bool,
    length: usize,
    /// The length is the task's answer length from the model's card, which counts the fixed
    /// prefix (a C++ declaration): the generated part is shorter by the prefix.
    length_from_card: bool,
    steps: usize,
    block: usize,
    temperature: f64,
    top_p: Option<f64>,
}

pub fn run(args: RunArgs) -> Result<bool, String> {
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        return Err(format!(
            "--timeout {}: must be a positive number of seconds",
            args.timeout
        ));
    }
    if args.max_tokens == 0 {
        return Err("--max-tokens must be positive".into());
    }
    let items = match read_task_file(&args.task)? {
        TaskFile::Infilling(items) => return super::run_mri::run(&args, items),
        TaskFile::Dlm(items) => items,
    };
    // Decided by the arguments alone: refused before a model is loaded.
    if let Some(m) = args.modes.iter().find(|m| m.is_native()) {
        return Err(format!(
            "--modes {}: only the infilling tasks (mri-K, mril-K) fill holes natively",
            m.name()
        ));
    }
    let (dtype, device) = super::super::generate::dtype_and_device(&args.dtype, args.cuda)?;
    let loaded = match &args.model {
        Some(dir) => load_folder(dir, args.tokenizer.as_deref(), dtype, &device),
        None => load_default(dtype, &device),
    }
    .map_err(|e| e.to_string())?;
    let model_name = model_name(&args);
    let trained_by_lacuna = loaded.card.is_some();
    if trained_by_lacuna && args.modes.contains(&Mode::Gp) {
        return Err(format!(
            "--modes gp: {model_name} was trained by lacuna on fixed task prompts; grammar \
             prompting needs an instruct checkpoint"
        ));
    }
    let items = select_items(&args, items, trained_by_lacuna, |i| i.held_out)?;
    let task = items[0].task.clone();
    let plan = plan(&args, &loaded, &task)?;
    let model = loaded.model.as_ref();
    // The schedule is checked once, before any item: a bad one would fail every item alike.
    sampler(&plan, model.family())
        .begin(0, plan.length)
        .map_err(|e| format!("--steps/--block/--length: {e}"))?;
    let template = ChatTemplate::for_family(model.family());
    let mut eos = vec![model.eos_token_id()];
    eos.extend(loaded.tokens.token_id(template.end_of_turn()));
    let table = TokenTable::from_tokens(&loaded.tokens, &eos);
    let vocab = Arc::new(loaded.tokens.vocabulary(&eos, model.vocab_size()));
    let mut checkers = ItemCheckers::new(!plan.trained_by_lacuna, Some(vocab.clone()));
    let cx = RunContext {
        loaded: &loaded,
        plan: &plan,
        table: &table,
        args: &args,
        model_name: &model_name,
    };
    each_run(&args, &task, &model_name, &items, |item, mode, seed| {
        Ok(run_item(&cx, &mut checkers, item, mode, seed))
    })
}

/// The model's name in result files: `--model-name`, else `default` for the embedded model,
/// else the checkpoint folder's name.
pub(super) fn model_name(args: &RunArgs) -> String {
    args.model_name
        .clone()
        .unwrap_or_else(|| match &args.model {
            None => "default".into(),
            Some(dir) => dir
                .file_name()
                .map_or("model".into(), |n| n.to_string_lossy().into_owned()),
        })
}

/// The items a run takes: held-out ones only for a model trained by lacuna (unless
/// `--include-trained`), the first `--limit`; none is an error.
pub(super) fn select_items<T>(
    args: &RunArgs,
    items: Vec<T>,
    trained_by_lacuna: bool,
    held_out: fn(&T) -> bool,
) -> Result<Vec<T>, String> {
    let items: Vec<T> = items
        .into_iter()
        .filter(|i| held_out(i) || !trained_by_lacuna || args.include_trained)
        .take(args.limit.unwrap_or(usize::MAX))
        .collect();
    if items.is_empty() {
        return Err(format!(
            "{}: no items to run (with a model trained by lacuna only held-out items run; \
             --include-trained runs the others)",
            args.task.display()
        ));
    }
    Ok(items)
}

/// Runs `one` on every item for each mode and seed, one result file each
/// (`<task>__<model>__s<seed>__<mode>.jsonl`, written record by record), and says on stderr
/// how each went. Whether no item failed.
pub(super) fn each_run<T>(
    args: &RunArgs,
    task: &str,
    model_name: &str,
    items: &[T],
    mut one: impl FnMut(&T, Mode, u64) -> Result<ResultRecord, String>,
) -> Result<bool, String> {
    let mut all_ok = true;
    for &mode in &args.modes {
        for &seed in &args.seeds {
            let path = args.out.join(format!(
                "{task}__{model_name}__s{seed}__{}.jsonl",
                mode.name()
            ));
            let mut out = JsonlWriter::create(&path)?;
            let t0 = Instant::now();
            let mut failed = 0;
            for item in items {
                let record = one(item, mode, seed)?;
                failed += usize::from(record.error.is_some());
                out.write(&record)?;
            }
            all_ok &= failed == 0;
            eprintln!(
                "{}: {} items in {:.1} s{}",
                path.display(),
                items.len(),
                t0.elapsed().as_secs_f64(),
                if failed > 0 {
                    format!(" ({failed} failed: see their `error`)")
                } else {
                    String::new()
                }
            );
        }
    }
    Ok(all_ok)
}

fn plan(args: &RunArgs, loaded: &LoadedModel, task: &str) -> Result<Plan, String> {
    let trained_by_lacuna = loaded.card.is_some();
    let card_length = loaded.card.as_ref().and_then(|card| {
        let name = match task {
            "dlm-cpp" => tasks::CPP,
            "dlm-json" => tasks::JSON,
            _ => tasks::SMILES,
        };
        card.tasks.get(name).map(|t| t.length)
    });
    let length_from_card = args.length.is_none() && trained_by_lacuna && card_length.is_some();
    let length = args
        .length
        .or(if trained_by_lacuna { card_length } else { None })
        .unwrap_or(256);
    if length == 0 {
        return Err("--length must be positive".into());
    }
    let steps = args.steps.unwrap_or(if trained_by_lacuna {
        length
    } else {
        32.min(length)
    });
    if steps == 0 || steps > length {
        return Err(format!(
            "--steps {steps}: must be from 1 to the length {length}"
        ));
    }
    let block = args.block.unwrap_or(if trained_by_lacuna {
        default_block(length)
    } else if length.is_multiple_of(32) {
        32
    } else {
        length
    });
    Ok(Plan {
        trained_by_lacuna,
        length,
        length_from_card,
        steps,
        block,
        temperature: args
            .temperature
            .unwrap_or(if trained_by_lacuna { 1.0 } else { 0.2 }),
        top_p: args
            .top_p
            .or(if trained_by_lacuna { None } else { Some(0.95) }),
    })
}

fn sampler(plan: &Plan, family: Family) -> Box<dyn Sampler> {
    match family {
        Family::LLaDA => Box::new(
            LLaDASampler::new(plan.steps, plan.block)
                .temperature(plan.temperature)
                .remasking(Remasking::LowConfidence),
        ),
        Family::Dream => {
            let mut d = DreamSampler::new(plan.steps)
                .alg(DreamAlg::Entropy)
                .temperature(plan.temperature);
            d.top_p = plan.top_p;
            Box::new(d)
        }
    }
}

/// lacuna's checker of each item's grammar (the task's, or the item's own schema; followed by
/// an optional fence when `fence`), built once and kept: the C++ checker serves every C++
/// output of a run (its caches are bounded), and no output's time includes building one.
pub(super) struct ItemCheckers {
    fence: bool,
    vocab: Option<Arc<Vocabulary>>,
    by_key: HashMap<String, Checker>,
}

impl ItemCheckers {
    /// Checkers that read token canvases of `vocab`'s ids too, when one is given.
    pub(super) fn new(fence: bool, vocab: Option<Arc<Vocabulary>>) -> ItemCheckers {
        ItemCheckers {
            fence,
            vocab,
            by_key: HashMap::new(),
        }
    }

    pub(super) fn get(&mut self, item: &TaskItem) -> Result<&mut Checker, String> {
        let key = match item.grammar {
            GrammarKind::Schema => format!("schema {}", item.id),
            GrammarKind::Cpp => "cpp".into(),
            GrammarKind::Smiles => "smiles".into(),
        };
        if !self.by_key.contains_key(&key) {
            let grammar = item_grammar(item)?;
            let grammar = if self.fence {
                with_fence(&grammar)
            } else {
                grammar
            };
            let mut checker = Checker::new(grammar).map_err(|e| e.to_string())?;
            if let Some(v) = &self.vocab {
                checker.set_vocabulary(v.clone());
            }
            // A task's schemas are many, each used once per mode and seed: drop them in bulk.
            if self.by_key.len() > 64 {
                self.by_key.retain(|k, _| !k.starts_with("schema "));
            }
            self.by_key.insert(key.clone(), checker);
        }
        Ok(self.by_key.get_mut(&key).expect("inserted above"))
    }
}

/// The grammar of a DLM item's answer (without a fence).
pub fn item_grammar(item: &TaskItem) -> Result<Grammar, String> {
    match item.grammar {
        GrammarKind::Cpp => crate::grammar::spec::load("cpp").map_err(|e| e.to_string()),
        GrammarKind::Smiles => crate::grammar::spec::load("smiles").map_err(|e| e.to_string()),
        GrammarKind::Schema => {
            let schema = item.schema.as_ref().ok_or("no schema")?;
            compile(schema, &SchemaOptions::default())
                .map(|c| c.grammar)
                .map_err(|e| format!("schema: {e}"))
        }
    }
}

struct RunContext<'a> {
    loaded: &'a LoadedModel,
    plan: &'a Plan,
    table: &'a TokenTable,
    args: &'a RunArgs,
    model_name: &'a str,
}

/// One item in one mode and seed; a failure is recorded in the record, never raised.
fn run_item(
    cx: &RunContext,
    checkers: &mut ItemCheckers,
    item: &TaskItem,
    mode: Mode,
    seed: u64,
) -> ResultRecord {
    let mut record = ResultRecord::new(&item.task, &item.id, cx.model_name, seed, mode.name());
    let t0 = Instant::now();
    match generate_item(cx, checkers, item, mode, seed, t0) {
        Ok((out, raw)) => {
            let st = &out.stats;
            record.raw_text = format!("{}{}", item.fixed_prefix, String::from_utf8_lossy(&raw));
            record.text = format!(
                "{}{}",
                item.fixed_prefix,
                String::from_utf8_lossy(&out.text)
            );
            record.completed = st.fallback;
            record.completion_bytes = st.completion_bytes;
            record.spelled_tokens = st.spelled_tokens;
            record.gave_up = st.gave_up;
            record.rejections = st.rejections;
            record.checks = st.checks;
            record.masks = st.masks;
            record.generated_tokens = out
                .ids
                .iter()
                .take_while(|&&id| !cx.table.is_eos(id))
                .filter(|&&id| id != cx.loaded.model.mask_token_id())
                .count();
            record.steps = st.steps;
            record.forward_passes = st.forward_passes;
            record.t_model = st.model_time.as_secs_f64();
            record.t_checker = st.checker_time.as_secs_f64();
        }
        Err(e) => record.error = Some(e),
    }
    record.t_total = t0.elapsed().as_secs_f64();
    record.timed_out = record.t_total > cx.args.timeout;
    record
}

/// The generation seed of an item in a run seeded `seed`: the run's seed mixed with the item's
/// id (FNV-1a, then splitmix64), so items whose prompts are equal (a lacuna-trained model's
/// SMILES prompt ignores the description) are still different draws, and a run is
/// reproducible item by item whatever the order or subset of items.
pub fn item_seed(seed: u64, id: &str) -> u64 {
    let mut h = Fnv1a::new();
    h.write(id.as_bytes());
    let mut z = h.finish() ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The prompt ids of an item, and the ids of its fixed prefix (part of the prompt the model
/// sees, and the start of the constrained text).
fn prompt_ids(
    cx: &RunContext,
    item: &TaskItem,
    mode: Mode,
    grammar: &Grammar,
) -> Result<(Vec<u32>, Vec<u32>), String> {
    let tokens = &cx.loaded.tokens;
    let enc = |t: &str| tokens.encode(t).map_err(|e| e.to_string());
    let prefix = enc(&item.fixed_prefix)?;
    let head = if cx.plan.trained_by_lacuna {
        match item.grammar {
            GrammarKind::Cpp => tasks::cpp_prompt(),
            GrammarKind::Smiles => tasks::smiles_prompt(),
            GrammarKind::Schema => tasks::json_prompt(item.schema.as_ref().ok_or("no schema")?),
        }
    } else {
        let template = ChatTemplate::for_family(cx.loaded.model.family());
        let user = if mode == Mode::Gp {
            format!(
                "{}\nThe answer must adhere to the following grammar:\n\n{grammar}",
                item.user
            )
        } else {
            item.user.clone()
        };
        // The prefill's fixed part is encoded apart, so its ids are exactly the prefix's.
        let fence = item
            .prefill
            .strip_suffix(item.fixed_prefix.as_str())
            .unwrap_or(&item.prefill);
        template.render(Some(&item.system), &user, fence)
    };
    let mut ids = enc(&head)?;
    ids.extend_from_slice(&prefix);
    Ok((ids, prefix))
}

/// Runs one generation; returns it with the Con.⁻ text (the model's tokens up to the first
/// EOS, masks dropped).
fn generate_item(
    cx: &RunContext,
    checkers: &mut ItemCheckers,
    item: &TaskItem,
    mode: Mode,
    seed: u64,
    t0: Instant,
) -> Result<(Generation, Vec<u8>), String> {
    let checker = checkers.get(item)?;
    let (prompt, prefix) = prompt_ids(cx, item, mode, checker.grammar())?;
    let model = cx.loaded.model.as_ref();
    // A card's length counts the fixed prefix: the generated part is what is left, cut to
    // whole blocks of the size the full length is drawn in, so the model fills it block by
    // block as in its training (one block of a few hundred positions would let it place its
    // confident end-of-text padding first and close the function at once).
    let card_block = default_block(cx.plan.length);
    let length = if !cx.plan.length_from_card {
        cx.plan.length
    } else if card_block == cx.plan.length {
        cx.plan.length.saturating_sub(prefix.len()).max(1)
    } else {
        (cx.plan.length.saturating_sub(prefix.len()) / card_block * card_block).max(card_block)
    };
    if let Some(room) = model.max_positions() {
        if prompt.len() + length > room {
            return Err(format!(
                "the prompt ({} tokens) and {length} generated positions do not fit the \
                 model's context of {room} positions",
                prompt.len(),
            ));
        }
    }
    // The item's own length (the card's less its prefix) gets its own blocks, and the steps
    // a whole number per block (rounded up), so that every item runs.
    let plan = if cx.plan.length_from_card {
        let block = if card_block == cx.plan.length {
            length
        } else {
            card_block
        };
        let blocks = length / block;
        Plan {
            length,
            block,
            steps: cx
                .plan
                .steps
                .div_ceil(blocks)
                .saturating_mul(blocks)
                .min(length),
            ..*cx.plan
        }
    } else {
        *cx.plan
    };
    let mut sampler = sampler(&plan, model.family());
    let mut options = GenerateOptions::new(length, item_seed(seed, &item.id));
    options.max_resamples = cx.args.max_resamples;
    // The paper retires no position: only the per-output budget ends a rejection loop.
    options.max_rejections_per_position = usize::MAX;
    options.stop_when_settled = true;
    let s = |e: crate::diffusion::DiffusionError| e.to_string();
    checker.set_deadline(Deadline::at(t0 + Duration::from_secs_f64(cx.args.timeout)));
    let mask = model.mask_token_id();
    let out = match mode {
        Mode::Van | Mode::Gp => {
            generate(model, sampler.as_mut(), cx.table, &prompt, &options, None)
        }
        Mode::Native | Mode::NativeVan => {
            unreachable!("refused for generation tasks before any item")
        }
        Mode::Reject => {
            let mut c =
                Constraint::with_prefix(checker, cx.table, item.fixed_prefix.as_bytes(), length);
            generate(
                model,
                sampler.as_mut(),
                cx.table,
                &prompt,
                &options,
                Some(&mut c),
            )
        }
        Mode::Mask | Mode::MaskEager => {
            let mut c = MaskConstraint::with_prefix(checker, &prefix, length).map_err(s)?;
            if mode == Mode::Mask {
                c = c.lazy();
            }
            generate_masked(model, sampler.as_mut(), &prompt, &options, &mut c)
        }
    }
    .map_err(s)?;
    let raw = cx.table.text(&out.ids, mask);
    Ok((out, raw))
}
