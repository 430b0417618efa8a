//! The tasks of models trained by lacuna (the default model among them): their prompts, and
//! the model card `lacuna.json` that records each task's answer length. The corpus builder
//! (`examples/default_corpus.rs`) and `lacuna generate` both call these, so the model is
//! prompted at generation exactly as it was in training.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::{DiffusionError, Result};
use crate::grammar::spec::{GrammarSpec, SpecSource};
use crate::grammar::GrammarError;

/// What generation needs to know of a task: its answer length, and a prompt of it.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct TaskInfo {
    /// Answer length in tokens, EOS padding included.
    pub length: usize,
    /// One prompt of the task as seen in training (the JSON task's prompt names a schema).
    pub example_prompt: String,
    /// Examples trained on.
    pub examples: usize,
    /// Examples left out because they did not fit.
    pub dropped: usize,
}

/// `lacuna.json` of a model folder written by `lacuna train`.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct ModelCard {
    /// The text of the end-of-sequence token that pads answers.
    pub eos_token: String,
    /// The text of the mask token.
    pub mask_token: String,
    /// The tasks trained on, by name ([`SMILES`], [`JSON`], [`CPP`]).
    pub tasks: BTreeMap<String, TaskInfo>,
}

impl ModelCard {
    /// The file name in a model folder.
    pub const FILE: &'static str = "lacuna.json";

    /// Reads `dir/lacuna.json`, or `None` if the folder has none (a LLaDA or Dream release).
    pub fn read(dir: &Path) -> Result<Option<ModelCard>> {
        let path = dir.join(Self::FILE);
        if !path.is_file() {
            return Ok(None);
        }
        super::checkpoint::read_json(&path).map(Some)
    }
}

/// The task and prompt a grammar spec asks of a lacuna-trained model: `smiles`, `cpp`, `json`
/// (any JSON: the empty schema) and `schema:PATH` (the schema's prompt). `None` for grammars
/// no task covers (a user's Lark file).
pub fn task_for_spec(spec: &str) -> Result<Option<(&'static str, String)>> {
    let parsed = match GrammarSpec::parse(spec) {
        Ok(p) => p,
        Err(_) => return Ok(None),
    };
    Ok(match parsed.source {
        SpecSource::Shipped("smiles") => Some((SMILES, smiles_prompt())),
        SpecSource::Shipped("cpp") => Some((CPP, cpp_prompt())),
        SpecSource::Shipped("json") => Some((JSON, json_prompt(&Value::Object(Map::new())))),
        SpecSource::Schema(path) => {
            // The schema file as the grammar loader reads it (bounded, an empty path named).
            let text = crate::grammar::spec::read_grammar_file(&path).map_err(|e| {
                let (file, message) = match e {
                    GrammarError::Io { path, message } => (path, message),
                    e => (path.clone(), e.to_string()),
                };
                DiffusionError::Io {
                    path: file.into(),
                    source: std::io::Error::other(message),
                }
            })?;
            let schema: Value =
                serde_json::from_str(&text).map_err(|source| DiffusionError::Json {
                    path: path.into(),
                    source,
                })?;
            Some((JSON, json_prompt(&schema)))
        }
        _ => None,
    })
}

/// The SMILES task's name, as in the corpus and in the model's `lacuna.json`.
pub const SMILES: &str = "smiles";
/// The JSON task's name (schema-conditioned JSON).
pub const JSON: &str = "json";
/// The C++ task's name.
pub const CPP: &str = "cpp";

/// The prompt of a SMILES molecule.
pub fn smiles_prompt() -> String {
    "SMILES:\n".to_string()
}

/// The head of a C++ task's prompt. The embedded model was taught functions: this, then a
/// declaration up to the body's `{` (includes and signature), and the body as its answer; the
/// declaration is the output's fixed prefix (`lacuna generate --prefix`), which the grammar
/// reads with the body.
pub fn cpp_prompt() -> String {
    "C++:\n".to_string()
}

/// The longest JSON prompt (bytes) in the default model's corpus: longer schemas were left
/// out of its training, and its evaluation keeps to the same kind.
pub const MAX_JSON_PROMPT: usize = 600;

/// The prompt of a JSON value following `schema`: the schema without annotations, compact.
pub fn json_prompt(schema: &Value) -> String {
    format!("JSON schema: {}\nJSON:\n", compact_schema(schema))
}

/// The longest answer [`default_block`] draws as one block.
pub const WHOLE_BLOCK_MAX: usize = 64;

/// The default LLaDA block length for an answer of `length` tokens: the whole answer up to
/// [`WHOLE_BLOCK_MAX`] tokens, else the largest of 32, 16 and 8 that divides it into two
/// blocks or more, else the whole length. Filled block by block, a small model cannot place
/// its (very confident) EOS padding first and end a long output before it began; a short one
/// (a SMILES string) is better drawn whole: RDKit sanitizes the default model's unconstrained
/// SMILES six times as often (36% against 6%) with one block of 40 as with five of 8
/// (models/README.md).
pub fn default_block(length: usize) -> usize {
    if length <= WHOLE_BLOCK_MAX {
        return length;
    }
    [32, 16, 8]
        .into_iter()
        .find(|&b| length.is_multiple_of(b) && length / b >= 2)
        .unwrap_or(length)
}

/// Keywords that only annotate; they make prompts long and say nothing of the syntax.
const ANNOTATIONS: [&str; 7] = [
    "description",
    "title",
    "$schema",
    "$id",
    "$comment",
    "examples",
    "default",
];

/// Keywords whose value maps names (not keywords) to schemas.
const NAME_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// The schema as compact JSON, with annotation keywords removed (property names that happen
/// to be `description` or `title` stay).
pub fn compact_schema(schema: &Value) -> String {
    strip(schema, false).to_string()
}

fn strip(v: &Value, names: bool) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                if !names && ANNOTATIONS.contains(&k.as_str()) {
                    continue;
                }
                let child_names = !names && NAME_MAPS.contains(&k.as_str());
                out.insert(k.clone(), strip(x, child_names));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| strip(x, false)).collect()),
        _ => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_divide_the_length() {
        assert_eq!(default_block(40), 40);
        assert_eq!(default_block(64), 64);
        assert_eq!(default_block(80), 16);
        assert_eq!(default_block(96), 32);
        assert_eq!(default_block(448), 32);
        assert_eq!(default_block(16), 16);
        assert_eq!(default_block(12), 12);
    }

    #[test]
    fn annotations_go_but_property_names_stay() {
        let s = json!({"title": "T", "type": "object", "properties": {
            "description": {"type": "string", "description": "d"},
            "n": {"type": "integer", "default": 3}}});
        assert_eq!(
            compact_schema(&s),
            r#"{"type":"object","properties":{"description":{"type":"string"},"n":{"type":"integer"}}}"#
        );
    }
}
