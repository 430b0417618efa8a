//! What the default model's evaluation uses and its training therefore leaves out: shared by
//! `eval/default_model.rs` (which evaluates on these) and `examples/default_corpus.rs` (which
//! skips them), so the two cannot drift apart. Each includes it; not every item is used by both.

#![allow(dead_code)]

use lacuna::diffusion::tasks;
use lacuna::grammar::schema::{compile, SchemaOptions};
use serde_json::Value;

/// How many JSONSchemaBench schemas the evaluation may use: the first this many eligible ones.
pub const JSON_SCHEMAS: usize = 100;

/// HumanEval-X C++ tasks held out: the last this many (of 164), for the evaluation and the
/// infilling demo.
pub const HUMANEVAL_TASKS: usize = 20;

/// Whether a schema is of the kind the model is trained and evaluated on: its prompt fits,
/// lacuna compiles it in strict mode, and the oracle (`valid`) can be built.
pub fn json_eligible(schema: &Value, oracle_builds: impl FnOnce(&Value) -> bool) -> bool {
    tasks::json_prompt(schema).len() <= tasks::MAX_JSON_PROMPT
        && compile(schema, &SchemaOptions::default()).is_ok()
        && oracle_builds(schema)
}
