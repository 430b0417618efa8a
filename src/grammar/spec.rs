//! Grammar specs: the strings the CLI, the tests and the benchmarks use to name a grammar.
//!
//! `json`, `smiles`, `cpp` name the shipped grammars (embedded in the binary, so they work from
//! any directory); a path ending in `.lark` is read from disk; `schema:PATH` names a JSON Schema
//! file. A `+fence` suffix lets the output end with optional whitespace and a closing markdown
//! fence, as chat models write it.

use std::path::Path;

use super::schema::{SchemaOptions, SchemaWarning};
use super::{lark, Grammar, GrammarBuilder, GrammarError, Pattern, Symbol};

/// The grammars that ship with lacuna, by name, with their Lark source.
pub const SHIPPED: &[(&str, &str)] = &[
    ("json", include_str!("../../grammars/json.lark")),
    ("smiles", include_str!("../../grammars/smiles.lark")),
    ("cpp", include_str!("../../grammars/cpp.lark")),
];

/// A parsed grammar spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrammarSpec {
    /// The grammar itself.
    pub source: SpecSource,
    /// Whether the spec ended in `+fence`: the output may end with optional whitespace and a
    /// closing markdown fence.
    pub fence: bool,
}

/// Where a spec's grammar comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecSource {
    /// A shipped grammar, by its name in [`SHIPPED`].
    Shipped(&'static str),
    /// A Lark file, by path.
    LarkFile(String),
    /// A JSON Schema file, by path (the spec without its `schema:` prefix).
    Schema(String),
}

impl GrammarSpec {
    /// Parses a spec string such as `json`, `grammars/x.lark+fence` or `schema:p.json`.
    pub fn parse(spec: &str) -> Result<GrammarSpec, GrammarError> {
        let (body, fence) = match spec.strip_suffix("+fence") {
            Some(b) => (b, true),
            None => (spec, false),
        };
        let source = if let Some(&(name, _)) = SHIPPED.iter().find(|(n, _)| *n == body) {
            SpecSource::Shipped(name)
        } else if let Some(path) = body.strip_prefix("schema:") {
            SpecSource::Schema(path.to_string())
        } else if body.ends_with(".lark") {
            SpecSource::LarkFile(body.to_string())
        } else {
            return Err(GrammarError::UnknownSpec(spec.to_string()));
        };
        Ok(GrammarSpec { source, fence })
    }

    /// Loads the grammar the spec names (a JSON Schema in strict mode).
    pub fn load(&self) -> Result<Grammar, GrammarError> {
        self.load_with(&SchemaOptions::default()).map(|(g, _)| g)
    }

    /// Loads the grammar the spec names, compiling a JSON Schema with `options`; returns the
    /// schema compiler's warnings too (empty for other grammars).
    pub fn load_with(
        &self,
        options: &SchemaOptions,
    ) -> Result<(Grammar, Vec<SchemaWarning>), GrammarError> {
        let mut warnings = vec![];
        let grammar = match &self.source {
            SpecSource::Shipped(name) => {
                let text = SHIPPED
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, t)| *t)
                    .ok_or_else(|| GrammarError::UnknownSpec(name.to_string()))?;
                lark::parse(text, &format!("grammars/{name}.lark"))?
            }
            SpecSource::LarkFile(path) => {
                let text =
                    std::fs::read_to_string(Path::new(path)).map_err(|e| GrammarError::Io {
                        path: path.clone(),
                        message: e.to_string(),
                    })?;
                lark::parse(&text, path)?
            }
            SpecSource::Schema(path) => {
                let text =
                    std::fs::read_to_string(Path::new(path)).map_err(|e| GrammarError::Io {
                        path: path.clone(),
                        message: e.to_string(),
                    })?;
                let compiled = super::schema::compile_str(&text, options).map_err(|error| {
                    GrammarError::Schema {
                        path: path.clone(),
                        error: Box::new(error),
                    }
                })?;
                warnings = compiled.warnings;
                compiled.grammar
            }
        };
        let grammar = if self.fence {
            with_fence(&grammar)
        } else {
            grammar
        };
        Ok((grammar, warnings))
    }
}

/// Loads the grammar a spec string names.
pub fn load(spec: &str) -> Result<Grammar, GrammarError> {
    GrammarSpec::parse(spec)?.load()
}

/// Loads the grammar a spec string names, a JSON Schema compiled with `options`, with the
/// schema compiler's warnings.
pub fn load_with(
    spec: &str,
    options: &SchemaOptions,
) -> Result<(Grammar, Vec<SchemaWarning>), GrammarError> {
    GrammarSpec::parse(spec)?.load_with(options)
}

/// The grammar's language, optionally followed by whitespace and a closing ```` ``` ````.
pub fn with_fence(g: &Grammar) -> Grammar {
    let mut b = GrammarBuilder::from_grammar(g);
    let fence = b.terminal("FENCE_CLOSE", Pattern::Regex(r"[ \t\r\n]*```".into()), 0);
    let start = b.fresh_nonterminal("start_fenced");
    b.rule(start, vec![Symbol::N(g.start())]);
    b.rule(start, vec![Symbol::N(g.start()), Symbol::T(fence)]);
    b.build(start)
        .expect("adding an optional fence keeps a valid grammar valid")
}
