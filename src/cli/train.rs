//! `lacuna train --corpus FILE --out DIR`: trains a small masked diffusion model (LLaDA
//! layout) and its tokenizer on prompt/answer JSON lines; run it again on the same `--out` to
//! resume. Prints one JSON summary line at the end.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::train::{train, TrainDevice, TrainOptions};

/// The longest `--minutes`: about two years, far past any run, and far inside what a
/// [`Duration`] holds (a larger number of seconds would not convert).
pub const MAX_MINUTES: f64 = 1e6;

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
    /// Tokens per batch (a resume keeps its first run's).
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
    /// Stop after this many minutes (at most 1,000,000), with a checkpoint (resume to go on).
    #[arg(long)]
    minutes: Option<f64>,
    /// Stop at this step, with a checkpoint (resume to go on).
    #[arg(long)]
    stop_at: Option<usize>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Where to train: `cpu`, or `cuda` / `cuda:N` (a build with `--features cuda`).
    #[arg(long, default_value = "cpu", value_parser = parse_device)]
    device: TrainDevice,
    /// Start from this model folder's weights and tokenizer (e.g. models/default) instead of
    /// fresh ones; its config.json must have the shape given by the flags above.
    #[arg(long, value_name = "DIR")]
    init_from: Option<PathBuf>,
    /// How often each task is drawn: `smiles=2,json=1` (tasks not named: 1; default: equal
    /// turns; a resume keeps its first run's).
    #[arg(long, value_name = "TASK=W,...", value_parser = parse_task_weights)]
    task_weights: Option<BTreeMap<String, f64>>,
}

fn parse_task_weights(s: &str) -> Result<BTreeMap<String, f64>, String> {
    let mut weights = BTreeMap::new();
    for item in s.split(',') {
        let (name, w) = item
            .split_once('=')
            .ok_or_else(|| format!("`{item}`: expected TASK=WEIGHT"))?;
        let w: f64 = w
            .parse()
            .map_err(|_| format!("`{item}`: `{w}` is not a number"))?;
        if weights.insert(name.to_string(), w).is_some() {
            return Err(format!("task `{name}` is given twice"));
        }
    }
    Ok(weights)
}

fn parse_device(s: &str) -> Result<TrainDevice, String> {
    match s {
        "cpu" => Ok(TrainDevice::Cpu),
        "cuda" => Ok(TrainDevice::Cuda(0)),
        _ => s
            .strip_prefix("cuda:")
            .and_then(|n| n.parse().ok())
            .map(TrainDevice::Cuda)
            .ok_or_else(|| format!("`{s}`: expected cpu, cuda or cuda:N")),
    }
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
    o.device = a.device;
    o.init_from = a.init_from;
    o.task_weights = a.task_weights.unwrap_or_default();
    if let Some(m) = a.minutes {
        o.time_limit = Some(time_limit(m)?);
    }
    let report = train(&o).map_err(|e| e.to_string())?;
    println!("{}", serde_json::to_string(&report).expect("json"));
    Ok(true)
}

/// `--minutes m` as a duration: a number above 0 and at most [`MAX_MINUTES`].
fn time_limit(m: f64) -> Result<Duration, String> {
    // `!(..)` so that NaN is refused too.
    if !(m > 0.0 && m <= MAX_MINUTES) {
        // 1e300 as 1e300, not as its 301 digits.
        let shown = if m.abs() < 1e15 {
            m.to_string()
        } else {
            format!("{m:e}")
        };
        return Err(format!(
            "--minutes {shown}: must be a number above 0 and at most {MAX_MINUTES}"
        ));
    }
    Ok(Duration::from_secs_f64(m * 60.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_are_bounded_before_they_become_a_duration() {
        assert_eq!(time_limit(1.5), Ok(Duration::from_secs(90)));
        assert!(time_limit(MAX_MINUTES).is_ok());
        for m in [
            0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            1e300,
            MAX_MINUTES * 1.01,
        ] {
            let e = time_limit(m).unwrap_err();
            assert!(e.starts_with("--minutes"), "{e}");
        }
        assert!(time_limit(1e300)
            .unwrap_err()
            .starts_with("--minutes 1e300:"));
    }
}
