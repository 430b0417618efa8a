//! The training corpus: JSON lines `{"task": "smiles", "prompt": "SMILES:\n", "answer": "CCO"}`,
//! grouped by task. Each task gets an answer length (in tokens, EOS padding included) that
//! covers nearly all of its answers; generation uses the same length by default, so the model
//! sees at training time exactly the canvas it fills later.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Result, TrainError};
use crate::diffusion::rng::Rng;
pub use crate::diffusion::tasks::TaskInfo;
use crate::fnv::Fnv1a;
use crate::vocab::human_bytes;

/// One prompt/answer pair.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Example {
    pub task: String,
    #[serde(default)]
    pub prompt: String,
    pub answer: String,
}

/// The examples of a corpus file.
#[derive(Clone, Debug)]
pub struct Corpus {
    pub examples: Vec<Example>,
    /// What identifies the corpus's content (its example lines, line endings and blank lines
    /// aside): a resumed run must be given the corpus it started on.
    pub fingerprint: String,
}

/// The longest corpus line read, in bytes (1 MiB): a line is read whole before it is parsed,
/// so a file without line breaks (`/dev/zero`) is refused at this length.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The longest `prompt` or `answer` trained on, in bytes (16 KiB): far above an example of
/// the longest `--max-len` (8,192 tokens of a few bytes each, answers of the default corpus
/// are at most a few KiB), and short enough that the BPE trainer, whose merges are quadratic
/// in the length of a word, never stalls on one.
pub const MAX_TEXT_BYTES: usize = 16 << 10;

/// The largest corpus read, in bytes (1 GiB); it is held in memory while training.
pub const MAX_CORPUS_BYTES: u64 = 1 << 30;

impl Corpus {
    /// Reads a JSON-lines corpus (lines of at most [`MAX_LINE_BYTES`], texts of at most
    /// [`MAX_TEXT_BYTES`], [`MAX_CORPUS_BYTES`] in all); a malformed line (not JSON, not
    /// UTF-8, too long) is an error naming it.
    pub fn read(path: &Path) -> Result<Corpus> {
        use std::io::{BufRead, Read};
        let io = |source| TrainError::Read {
            path: path.to_path_buf(),
            source,
        };
        let at = |line: usize, reason: String| TrainError::Corpus {
            path: path.to_path_buf(),
            line,
            reason,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let mut reader = std::io::BufReader::new(file);
        let mut examples = Vec::new();
        let mut bytes = Vec::new();
        let mut total = 0u64;
        let mut hash = Fnv1a::new();
        let mut hashed = 0u64;
        for n in 1.. {
            bytes.clear();
            // At most one byte past the limit: enough to know the line is too long.
            let read = (&mut reader)
                .take(MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut bytes)
                .map_err(io)?;
            if read == 0 {
                break;
            }
            total += read as u64;
            if total > MAX_CORPUS_BYTES {
                return Err(at(
                    n,
                    format!(
                        "the corpus is larger than {} (the limit of a corpus)",
                        human_bytes(MAX_CORPUS_BYTES)
                    ),
                ));
            }
            if bytes.last() == Some(&b'\n') {
                bytes.pop();
            } else if bytes.len() > MAX_LINE_BYTES {
                return Err(at(
                    n,
                    format!(
                        "the line is longer than {} (the limit of a corpus line)",
                        human_bytes(MAX_LINE_BYTES as u64)
                    ),
                ));
            }
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
            let line = std::str::from_utf8(&bytes).map_err(|e| {
                at(
                    n,
                    format!("invalid UTF-8 at byte {} of the line", e.valid_up_to() + 1),
                )
            })?;
            if line.trim().is_empty() {
                continue;
            }
            hash.write(line.as_bytes());
            hash.write(b"\n");
            hashed += line.len() as u64 + 1;
            let ex: Example = serde_json::from_str(line).map_err(|e| at(n, e.to_string()))?;
            if ex.answer.is_empty() || ex.task.is_empty() {
                return Err(at(n, "`task` and `answer` must not be empty".into()));
            }
            for (field, text) in [("prompt", &ex.prompt), ("answer", &ex.answer)] {
                if text.len() > MAX_TEXT_BYTES {
                    return Err(at(
                        n,
                        format!(
                            "`{field}` is {} bytes long; at most {} ({}) are trained on",
                            text.len(),
                            MAX_TEXT_BYTES,
                            human_bytes(MAX_TEXT_BYTES as u64)
                        ),
                    ));
                }
            }
            examples.push(ex);
        }
        if examples.is_empty() {
            return Err(at(0, "no examples".into()));
        }
        let fingerprint = format!(
            "{} examples, {hashed} bytes, FNV-1a {:016x}",
            examples.len(),
            hash.finish()
        );
        Ok(Corpus {
            examples,
            fingerprint,
        })
    }

    /// All texts, for training a tokenizer.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.examples
            .iter()
            .flat_map(|e| [e.prompt.as_str(), e.answer.as_str()])
    }
}

/// One task's tokenized examples.
#[derive(Clone, Debug)]
pub struct TaskData {
    pub name: String,
    pub info: TaskInfo,
    /// (prompt ids, answer ids without EOS).
    pub pairs: Vec<(Vec<u32>, Vec<u32>)>,
    /// Mean prompt length in tokens, which sizes the task's batches.
    pub mean_prompt: usize,
}

/// The tokenized corpus, by task.
#[derive(Clone, Debug)]
pub struct TaskSet {
    pub tasks: Vec<TaskData>,
}

/// A batch: `ids` `[rows, len]` row-major, each row prompt + answer + EOS padding, and where
/// each row's answer region starts (it runs to the row's end).
#[derive(Clone, Debug)]
pub struct Batch {
    pub ids: Vec<u32>,
    pub rows: usize,
    pub len: usize,
    pub answer_start: Vec<usize>,
    pub task: usize,
}

impl TaskSet {
    /// Tokenizes the corpus with `encode`; a task's length covers 99% of its answers plus
    /// EOS, rounded up to 8, as far as `max_len` leaves room beside the shortest prompt.
    /// Longer examples are dropped (truncating them would teach invalid outputs).
    pub fn build(
        corpus: &Corpus,
        max_len: usize,
        mut encode: impl FnMut(&str) -> Result<Vec<u32>>,
    ) -> Result<TaskSet> {
        // Per task: (prompt ids, answer ids, prompt text).
        type Tokenized<'a> = Vec<(Vec<u32>, Vec<u32>, &'a str)>;
        let mut by_task: BTreeMap<&str, Tokenized> = BTreeMap::new();
        for ex in &corpus.examples {
            let p = encode(&ex.prompt)?;
            let a = encode(&ex.answer)?;
            by_task
                .entry(&ex.task)
                .or_default()
                .push((p, a, &ex.prompt));
        }
        let mut tasks = Vec::new();
        for (name, items) in by_task {
            let mut lens: Vec<usize> = items.iter().map(|(_, a, _)| a.len() + 1).collect();
            lens.sort_unstable();
            let p99 = lens[(lens.len() - 1) * 99 / 100];
            let shortest_prompt = items.iter().map(|(p, _, _)| p.len()).min().unwrap_or(0);
            let room = max_len.saturating_sub(shortest_prompt) / 8 * 8;
            let length = (p99.div_ceil(8) * 8).min(room);
            let mut pairs = Vec::new();
            let mut example_prompt = String::new();
            let mut dropped = 0;
            for (p, a, text) in items {
                if a.len() < length && p.len() + length <= max_len {
                    if example_prompt.is_empty() {
                        example_prompt = text.to_string();
                    }
                    pairs.push((p, a));
                } else {
                    dropped += 1;
                }
            }
            if pairs.is_empty() {
                return Err(TrainError::Invalid(format!(
                    "task {name}: no example fits in {max_len} tokens"
                )));
            }
            let mean_prompt = pairs.iter().map(|(p, _)| p.len()).sum::<usize>() / pairs.len();
            tasks.push(TaskData {
                mean_prompt,
                name: name.to_string(),
                info: TaskInfo {
                    length,
                    example_prompt,
                    examples: pairs.len(),
                    dropped,
                },
                pairs,
            });
        }
        Ok(TaskSet { tasks })
    }

    /// Each task's share of the batches from weights by task name (absent: 1), or `None`
    /// when none is given (equal turns). A weight must be a finite number ≥ 0, name a task
    /// of the corpus, and leave some task a positive weight.
    pub fn weights(&self, by_name: &BTreeMap<String, f64>) -> Result<Option<Vec<f64>>> {
        if by_name.is_empty() {
            return Ok(None);
        }
        let bad = |why: String| Err(TrainError::Invalid(format!("--task-weights: {why}")));
        for (name, &w) in by_name {
            if !self.tasks.iter().any(|t| &t.name == name) {
                let known: Vec<&str> = self.tasks.iter().map(|t| t.name.as_str()).collect();
                return bad(format!(
                    "no task `{name}` in the corpus (its tasks: {})",
                    known.join(", ")
                ));
            }
            if !(w.is_finite() && w >= 0.0) {
                return bad(format!("`{name}`: weight {w} is not a number ≥ 0"));
            }
        }
        let weights: Vec<f64> = self
            .tasks
            .iter()
            .map(|t| by_name.get(&t.name).copied().unwrap_or(1.0))
            .collect();
        if weights.iter().sum::<f64>() <= 0.0 {
            return bad("every task has weight 0".into());
        }
        Ok(Some(weights))
    }

    /// A batch of about `tokens` tokens from one task, rows padded with `eos` to the
    /// longest. Tasks are drawn at random in proportion to `weights` (from
    /// [`TaskSet::weights`]), or equally often when there are none.
    pub fn batch(&self, rng: &mut Rng, weights: Option<&[f64]>, tokens: usize, eos: u32) -> Batch {
        let task = pick_task(rng, weights, self.tasks.len());
        let data = &self.tasks[task];
        let rows = (tokens / (data.mean_prompt + data.info.length)).max(1);
        let picks: Vec<&(Vec<u32>, Vec<u32>)> = (0..rows)
            .map(|_| &data.pairs[(rng.next_u64() % data.pairs.len() as u64) as usize])
            .collect();
        let len = picks
            .iter()
            .map(|(p, _)| p.len() + data.info.length)
            .max()
            .unwrap_or(1);
        let mut ids = Vec::with_capacity(rows * len);
        let mut answer_start = Vec::with_capacity(rows);
        for (p, a) in picks {
            ids.extend_from_slice(p);
            ids.extend_from_slice(a);
            ids.resize(ids.len() + len - p.len() - a.len(), eos);
            answer_start.push(p.len());
        }
        Batch {
            ids,
            rows,
            len,
            answer_start,
            task,
        }
    }
}

/// A task index drawn in proportion to `weights`, or uniformly among `n` without them.
fn pick_task(rng: &mut Rng, weights: Option<&[f64]>, n: usize) -> usize {
    let Some(w) = weights else {
        return (rng.next_u64() % n as u64) as usize;
    };
    let mut left = rng.uniform() * w.iter().sum::<f64>();
    // The last task with a positive weight takes what rounding leaves.
    let last = w.iter().rposition(|&x| x > 0.0).unwrap_or(0);
    (0..w.len())
        .find(|&i| {
            left -= w[i];
            w[i] > 0.0 && left < 0.0
        })
        .unwrap_or(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_are_drawn_in_proportion_to_their_weights() {
        let mut rng = Rng::new(7);
        let draws = 40_000;
        let mut counts = [0usize; 4];
        for _ in 0..draws {
            counts[pick_task(&mut rng, Some(&[3.0, 0.0, 1.0, 0.0]), 4)] += 1;
        }
        assert_eq!((counts[1], counts[3]), (0, 0), "weight 0 is never drawn");
        let share = counts[0] as f64 / draws as f64;
        // 0.75 within six standard deviations (0.0022 each).
        assert!((share - 0.75).abs() < 0.013, "{counts:?}");
        let mut counts = [0usize; 3];
        for _ in 0..draws {
            counts[pick_task(&mut rng, None, 3)] += 1;
        }
        for c in counts {
            assert!(
                (c as f64 / draws as f64 - 1.0 / 3.0).abs() < 0.015,
                "{counts:?}"
            );
        }
    }

    fn read_text(tag: &str, bytes: &[u8]) -> std::result::Result<Corpus, String> {
        let path =
            std::env::temp_dir().join(format!("lacuna-corpus-{}-{tag}.jsonl", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        let out = Corpus::read(&path).map_err(|e| e.to_string());
        std::fs::remove_file(&path).unwrap();
        out
    }

    const OK: &str = r#"{"task": "smiles", "prompt": "SMILES:\n", "answer": "CCO"}"#;

    #[test]
    fn lines_are_read_one_by_one_and_named() {
        let c = read_text("ok", format!("{OK}\r\n\n{OK}").as_bytes()).unwrap();
        assert_eq!(c.examples.len(), 2);
        let mut bad = format!("{OK}\n").into_bytes();
        bad.extend_from_slice(b"{\"task\": \"s\", \"answer\": \"\xff\"}\n");
        let e = read_text("utf8", &bad).unwrap_err();
        assert!(e.contains(".jsonl:2: invalid UTF-8 at byte 26"), "{e}");
    }

    #[test]
    fn long_lines_and_texts_are_refused_with_their_line() {
        let long = format!(
            "{OK}\n{{\"task\": \"s\", \"answer\": \"{}\"}}\n",
            "C".repeat(MAX_TEXT_BYTES + 1)
        );
        let e = read_text("text", long.as_bytes()).unwrap_err();
        assert!(e.contains(".jsonl:2: `answer` is 16385 bytes"), "{e}");
        let e = read_text("line", &vec![b'x'; MAX_LINE_BYTES + 10]).unwrap_err();
        assert!(e.contains(".jsonl:1: the line is longer than 1 MiB"), "{e}");
        let e = Corpus::read(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/dev/zero:1") && e.contains("1 MiB"), "{e}");
    }
}
