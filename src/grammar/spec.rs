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
                let text = read_grammar_file(path)?;
                lark::parse(&text, path)?
            }
            SpecSource::Schema(path) => {
                let text = read_grammar_file(path)?;
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

/// The largest grammar or schema file read, in bytes (64 MiB): far above any grammar, and a
/// file that never ends (`/dev/zero`) is refused without being read whole.
pub const MAX_GRAMMAR_FILE_BYTES: u64 = 64 << 20;

/// The text of a spec's `.lark` or JSON Schema file (`path` as the spec gave it), read up to
/// [`MAX_GRAMMAR_FILE_BYTES`]; errors name the file (an empty path, `schema:`, is named as
/// such rather than as the file ``).
pub(crate) fn read_grammar_file(path: &str) -> Result<String, GrammarError> {
    if path.is_empty() {
        return Err(GrammarError::Io {
            path: "schema:".into(),
            message: "empty schema path in spec `schema:` (expected schema:PATH)".into(),
        });
    }
    let io = |message: String| GrammarError::Io {
        path: path.to_string(),
        message,
    };
    let bytes =
        crate::vocab::read_bounded(Path::new(path), MAX_GRAMMAR_FILE_BYTES, "grammar files")
            .map_err(|e| io(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let head = &e.as_bytes()[..at];
        let line = head.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = at - head.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        io(format!(
            "invalid UTF-8 at line {line}, column {column} (byte {at})"
        ))
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_schema_path_is_named_as_such() {
        let e = load("schema:").unwrap_err().to_string();
        assert!(e.contains("empty schema path in spec `schema:`"), "{e}");
    }

    #[test]
    fn a_grammar_file_that_never_ends_is_refused_at_the_cap() {
        let e = load("schema:/dev/zero").unwrap_err().to_string();
        assert!(e.contains("/dev/zero") && e.contains("64 MiB"), "{e}");
    }

    #[test]
    fn invalid_utf8_is_placed() {
        let dir = std::env::temp_dir().join(format!("lacuna-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.lark");
        std::fs::write(&path, b"start: A\nA: \"\xff\"\n").unwrap();
        let e = load(path.to_str().unwrap()).unwrap_err().to_string();
        assert!(
            e.contains("bad.lark") && e.contains("line 2, column 5"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
