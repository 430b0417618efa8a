//! Errors raised while building, parsing or normalizing a grammar.

use thiserror::Error;

/// What is wrong with a grammar, named precisely enough to fix it.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum GrammarError {
    /// A nonterminal (named here) has no rules.
    #[error("rule `{0}` is used but never defined")]
    UndefinedRule(String),
    /// A terminal's pattern does not parse, uses look-around, matches nothing, or would build
    /// too large an automaton.
    #[error("terminal `{terminal}` has an invalid pattern: {message}")]
    InvalidPattern {
        /// The terminal's name.
        terminal: String,
        /// What is wrong with its pattern.
        message: String,
    },
    /// A terminal (named here) matches the empty string, which would let a lexer loop forever.
    #[error("terminal `{0}` matches the empty string; lexemes must be non-empty")]
    EmptyMatch(String),
    /// The grammar is larger than a limit (named in the message) allows.
    #[error("the grammar is too large: {0}")]
    TooLarge(String),
    /// The grammar text defines no rule to start from.
    #[error("{origin}: the grammar defines no rule `{name}` to start from")]
    MissingStart {
        /// What the caller called the text (usually its file name).
        origin: String,
        /// The start rule's name.
        name: String,
    },
    /// An error about one symbol of the grammar (a bad terminal, an empty start rule), placed
    /// where the symbol is defined.
    #[error("{place}: {error}")]
    At {
        /// Where: `file:line:column` of a Lark definition, the JSON pointer of a schema's
        /// keyword.
        place: String,
        /// The error.
        error: Box<GrammarError>,
    },
    /// The start symbol (named here) derives no finite word.
    #[error("the start symbol `{0}` derives no word: the grammar's language is empty")]
    EmptyLanguage(String),
    /// The Lark text does not parse.
    #[error("{origin}:{line}:{column}: {message}")]
    Syntax {
        /// What the caller called the text (usually its file name).
        origin: String,
        /// 1-based line of the offending token.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What was expected or found.
        message: String,
    },
    /// The Lark text uses a feature lacuna does not implement.
    #[error("{origin}:{line}:{column}: unsupported Lark feature: {feature}")]
    Unsupported {
        /// What the caller called the text (usually its file name).
        origin: String,
        /// 1-based line of the feature's use.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// The feature.
        feature: String,
    },
    /// A grammar spec (given here) that names no shipped grammar, `.lark` file or schema.
    #[error("unknown grammar spec `{0}`: expected json, smiles, cpp, a path to a .lark file, or schema:PATH")]
    UnknownSpec(String),
    /// A spec's grammar or schema file could not be read.
    #[error("cannot read grammar file `{path}`: {message}")]
    Io {
        /// The file's path, as the spec gave it.
        path: String,
        /// The I/O error's message.
        message: String,
    },
    /// A spec's JSON Schema does not compile.
    #[error("JSON Schema `{path}`: {error}")]
    Schema {
        /// The schema file's path, as the spec gave it.
        path: String,
        /// Why it does not compile (boxed: it is large, and rare).
        error: Box<super::schema::SchemaError>,
    },
}

impl GrammarError {
    /// The error itself, without the place [`GrammarError::At`] adds.
    pub fn unplaced(&self) -> &GrammarError {
        match self {
            GrammarError::At { error, .. } => error.unplaced(),
            e => e,
        }
    }
}
