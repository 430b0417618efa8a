//! Errors raised while building, parsing or normalizing a grammar.

use thiserror::Error;

/// What is wrong with a grammar, named precisely enough to fix it.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum GrammarError {
    #[error("rule `{0}` is used but never defined")]
    UndefinedRule(String),
    #[error("terminal `{terminal}` has an invalid pattern: {message}")]
    InvalidPattern { terminal: String, message: String },
    #[error("terminal `{0}` matches the empty string; lexemes must be non-empty")]
    EmptyMatch(String),
    #[error("the start symbol `{0}` derives no word: the grammar's language is empty")]
    EmptyLanguage(String),
    #[error("{origin}:{line}:{column}: {message}")]
    Syntax {
        origin: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{origin}:{line}:{column}: unsupported Lark feature: {feature}")]
    Unsupported {
        origin: String,
        line: usize,
        column: usize,
        feature: String,
    },
    #[error("unknown grammar spec `{0}`: expected json, smiles, cpp, a path to a .lark file, or schema:PATH")]
    UnknownSpec(String),
    #[error("cannot read grammar file `{path}`: {message}")]
    Io { path: String, message: String },
    #[error("JSON Schema `{path}`: {error}")]
    Schema {
        path: String,
        error: Box<super::schema::SchemaError>,
    },
}
