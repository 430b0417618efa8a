//! The harness's three file formats — task items, result records, scored records — and the one
//! reader of JSON lines every stage uses. Stages talk only through these files (so generation
//! can run on a GPU machine and scoring anywhere), so each type is the whole contract between
//! two stages; `eval/README.md` documents the same fields for people and other tools.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which grammar constrains and judges a DLM item.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum GrammarKind {
    Cpp,
    Smiles,
    /// The item's own JSON Schema.
    Schema,
}

/// How functional correctness is judged.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Functional {
    /// C++: the answer with the item's tests compiles and exits 0.
    Tests,
    /// JSON: equal to the gold after parsing (key order counts, as in the paper's checker).
    JsonEqual,
    /// JSON without a gold answer: valid against the schema.
    SchemaValid,
    /// SMILES: RDKit's canonical isomeric SMILES equal to the gold's.
    SmilesEqual,
}

/// One DLM item (`dlm-cpp`, `dlm-json`, `dlm-smiles`).
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct TaskItem {
    pub task: String,
    pub id: String,
    pub source: String,
    /// The chat prompt of the paper's protocol, for instruct checkpoints.
    pub system: String,
    pub user: String,
    /// The start of the assistant's turn (the fence, and for C++ the declaration).
    pub prefill: String,
    /// The part of the constrained text that is given, not generated (C++: the declaration).
    #[serde(default)]
    pub fixed_prefix: String,
    pub grammar: GrammarKind,
    #[serde(default)]
    pub schema: Option<Value>,
    pub gold: Option<String>,
    pub tests: Option<String>,
    pub functional: Functional,
    /// Whether lacuna's embedded model was not trained on the item.
    pub held_out: bool,
}

/// One infilling item (`mri-K`, `mril-K`): a canonical solution with K removed regions.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct MriItem {
    pub task: String,
    pub id: String,
    pub source: String,
    /// The task's docstring, includes and signature.
    pub prompt: String,
    /// The includes and signature, without the docstring (what the tests are compiled after).
    pub declaration: String,
    /// The fixed text around the holes: `splits[0]`, hole, `splits[1]`, ... (one more split
    /// than holes).
    pub splits: Vec<String>,
    /// What was removed, hole by hole (the reference middles).
    pub removed: Vec<String>,
    pub test: String,
    pub held_out: bool,
}

/// One generation (`eval run`), whatever the mode.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub struct ResultRecord {
    pub task: String,
    pub id: String,
    pub model: String,
    pub seed: u64,
    pub mode: String,
    /// Con.⁻: the constrained text as the model wrote it (fixed prefix, then the generated
    /// tokens up to the first EOS, masked positions dropped).
    pub raw_text: String,
    /// Con.: `raw_text`, or the grammar's completion where one was needed.
    pub text: String,
    pub completed: bool,
    pub completion_bytes: usize,
    /// Tokens the finisher took from the completion's spelling, not the model's best
    /// (mask modes; `GenerationStats::spelled_tokens`).
    #[serde(default)]
    pub spelled_tokens: usize,
    pub error: Option<String>,
    pub timed_out: bool,
    pub gave_up: bool,
    pub rejections: u64,
    pub checks: u64,
    pub masks: u64,
    pub generated_tokens: usize,
    pub steps: u64,
    pub forward_passes: u64,
    pub t_total: f64,
    pub t_model: f64,
    /// Checker time, the final completion's included.
    pub t_checker: f64,
}

impl ResultRecord {
    /// The record of one output, before anything is known of it.
    pub fn new(task: &str, id: &str, model: &str, seed: u64, mode: &str) -> ResultRecord {
        ResultRecord {
            task: task.to_string(),
            id: id.to_string(),
            model: model.to_string(),
            seed,
            mode: mode.to_string(),
            ..ResultRecord::default()
        }
    }
}

/// The checks of one text (Con.⁻ or Con.).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct Verdicts {
    /// The text scored: up to the first fence, whitespace trimmed.
    pub extracted: String,
    pub syntax_grammar: bool,
    pub syntax_oracle: bool,
    pub functional: bool,
    /// Why a check failed, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A result record with its scores (`eval score`).
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct ScoredRecord {
    #[serde(flatten)]
    pub record: ResultRecord,
    pub con_minus: Verdicts,
    pub con: Verdicts,
}

/// What went wrong reading a JSON-lines file: the file and line, and why.
pub fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        out.push(
            serde_json::from_str(&line)
                .map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?,
        );
    }
    Ok(out)
}

/// Writes JSON lines to a file, one call per record, flushed as it goes: a run stopped half
/// way keeps what it wrote.
pub struct JsonlWriter {
    path: PathBuf,
    file: File,
}

impl JsonlWriter {
    pub fn create(path: &Path) -> Result<JsonlWriter, String> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(JsonlWriter {
            path: path.to_path_buf(),
            file,
        })
    }

    pub fn write<T: Serialize>(&mut self, record: &T) -> Result<(), String> {
        let line = serde_json::to_string(record).map_err(|e| e.to_string())?;
        writeln!(self.file, "{line}")
            .and_then(|()| self.file.flush())
            .map_err(|e| format!("{}: {e}", self.path.display()))
    }
}

/// The text a DLM answer is scored on: up to the first closing fence, whitespace trimmed (as
/// the paper's extraction does).
pub fn extract(text: &str) -> String {
    let cut = text.find("```").map_or(text, |i| &text[..i]);
    cut.trim().to_string()
}

/// A task file's items, of the kind its first line names.
pub enum TaskFile {
    Dlm(Vec<TaskItem>),
    Infilling(Vec<MriItem>),
}

/// Reads a task file of `eval prepare`: every line parsed as an item of the file's kind (errors
/// name the file and line), and a schema item without its schema refused.
pub fn read_task_file(path: &Path) -> Result<TaskFile, String> {
    let raw: Vec<Value> = read_jsonl(path)?;
    let infilling = raw
        .first()
        .and_then(|v| v.get("task"))
        .and_then(Value::as_str)
        .is_some_and(is_mri);
    fn parse<T: DeserializeOwned>(path: &Path, i: usize, v: Value) -> Result<T, String> {
        serde_json::from_value(v).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))
    }
    if infilling {
        let items: Result<Vec<MriItem>, String> = raw
            .into_iter()
            .enumerate()
            .map(|(i, v)| parse(path, i, v))
            .collect();
        return items.map(TaskFile::Infilling);
    }
    let items: Vec<TaskItem> = raw
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let item: TaskItem = parse(path, i, v)?;
            if item.grammar == GrammarKind::Schema && item.schema.is_none() {
                return Err(format!(
                    "{}:{}: item {} has grammar `schema` but no `schema`",
                    path.display(),
                    i + 1,
                    item.id
                ));
            }
            Ok(item)
        })
        .collect::<Result<_, String>>()?;
    Ok(TaskFile::Dlm(items))
}

/// Whether a task name is an infilling one.
pub fn is_mri(task: &str) -> bool {
    task.starts_with("mri-") || task.starts_with("mril-")
}
