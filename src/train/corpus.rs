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
}

impl Corpus {
    /// Reads a JSON-lines corpus; a malformed line is an error naming it.
    pub fn read(path: &Path) -> Result<Corpus> {
        let text = std::fs::read_to_string(path).map_err(|source| TrainError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut examples = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let ex: Example = serde_json::from_str(line).map_err(|e| TrainError::Corpus {
                path: path.to_path_buf(),
                line: i + 1,
                reason: e.to_string(),
            })?;
            if ex.answer.is_empty() || ex.task.is_empty() {
                return Err(TrainError::Corpus {
                    path: path.to_path_buf(),
                    line: i + 1,
                    reason: "`task` and `answer` must not be empty".into(),
                });
            }
            examples.push(ex);
        }
        if examples.is_empty() {
            return Err(TrainError::Corpus {
                path: path.to_path_buf(),
                line: 0,
                reason: "no examples".into(),
            });
        }
        Ok(Corpus { examples })
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

    /// A batch of about `tokens` tokens from one task (tasks take turns at random, equally
    /// often), rows padded with `eos` to the longest.
    pub fn batch(&self, rng: &mut Rng, tokens: usize, eos: u32) -> Batch {
        let task = (rng.next_u64() % self.tasks.len() as u64) as usize;
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
