//! `lacuna train --corpus FILE --out DIR`: trains a small masked diffusion model (LLaDA
//! layout) and its tokenizer on prompt/answer JSON lines; run it again on the same `--out` to
//! resume. Prints one JSON summary line at the end.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::train::{train, TrainOptions};

#[derive(Args, Debug)]
pub struct TrainArgs {
    /// JSON lines: {"task": ..., "prompt": ..., "answer": ...}.
    #[arg(long)]
    corpus: PathBuf,
    /// Output folder: a model folder plus resume state (resumed if it holds one).
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = 2000)]
    steps: usize,
    /// Tokens per batch.
    #[arg(long, default_value_t = 2048)]
    batch_tokens: usize,
    /// Peak learning rate.
    #[arg(long, default_value_t = 2e-3)]
    lr: f64,
    #[arg(long, default_value_t = 100)]
    warmup: usize,
    #[arg(long, default_value_t = 2048)]
    vocab_size: usize,
    #[arg(long, default_value_t = 256)]
    d_model: usize,
    #[arg(long, default_value_t = 4)]
    layers: usize,
    #[arg(long, default_value_t = 4)]
    heads: usize,
    #[arg(long, default_value_t = 704)]
    mlp_hidden: usize,
    /// Longest prompt + answer, in tokens (longer examples are left out).
    #[arg(long, default_value_t = 320)]
    max_len: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long, default_value_t = 200)]
    checkpoint_every: usize,
    /// Stop after this many minutes, with a checkpoint (resume to go on).
    #[arg(long)]
    minutes: Option<f64>,
    /// Stop at this step, with a checkpoint (resume to go on).
    #[arg(long)]
    stop_at: Option<usize>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

pub fn run(a: TrainArgs) -> Result<bool, String> {
    let mut o = TrainOptions::new(a.corpus, a.out);
    o.steps = a.steps;
    o.batch_tokens = a.batch_tokens;
    o.lr = a.lr;
    o.warmup = a.warmup;
    o.vocab_size = a.vocab_size;
    o.d_model = a.d_model;
    o.n_layers = a.layers;
    o.n_heads = a.heads;
    o.mlp_hidden = a.mlp_hidden;
    o.max_len = a.max_len;
    o.seed = a.seed;
    o.checkpoint_every = a.checkpoint_every;
    o.progress = !a.quiet;
    o.stop_at = a.stop_at;
    if let Some(m) = a.minutes {
        if !(m > 0.0 && m.is_finite()) {
            return Err(format!("--minutes {m}: must be a positive number"));
        }
        o.time_limit = Some(Duration::from_secs_f64(m * 60.0));
    }
    let report = train(&o).map_err(|e| e.to_string())?;
    println!("{}", serde_json::to_string(&report).expect("json"));
    Ok(true)
}
