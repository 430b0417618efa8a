//! What the JSON Schema compiler reports: errors (the schema cannot be compiled as asked) and
//! warnings (in lenient mode, keywords that were dropped or approximated), each naming the JSON
//! pointer of the schema location it is about.

use std::fmt;

use thiserror::Error;

use crate::grammar::GrammarError;

/// Why a schema could not be compiled. Every variant names the JSON pointer (RFC 6901, `""` is
/// the root) of the schema location at fault.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SchemaError {
    /// The schema file is not JSON.
    #[error("the schema is not JSON: {0}")]
    NotJson(String),
    /// A schema (the root or a subschema) is neither an object nor a boolean.
    #[error("{pointer:?}: a schema must be an object or a boolean, found {found}")]
    NotASchema {
        /// JSON pointer of the schema location at fault.
        pointer: String,
        /// The kind of JSON value found there (`a number`, `an array`, ...).
        found: String,
    },
    /// A keyword that lacuna cannot enforce exactly (strict mode only; lenient mode warns).
    #[error("{pointer:?}: keyword `{keyword}` cannot be enforced: {reason} (use lenient mode to ignore it)")]
    Unsupported {
        /// JSON pointer of the keyword, or of the schema that holds it.
        pointer: String,
        /// The keyword, as spelled in the schema.
        keyword: String,
        /// Why it cannot be enforced exactly.
        reason: String,
    },
    /// A keyword with a value of the wrong shape (`"required": 3`).
    #[error("{pointer:?}: keyword `{keyword}` has an invalid value: {reason}")]
    BadKeyword {
        /// JSON pointer of the keyword, or of the schema that holds it.
        pointer: String,
        /// The keyword, as spelled in the schema.
        keyword: String,
        /// What shape its value should have.
        reason: String,
    },
    /// A `$ref` that names no schema of this document.
    #[error("{pointer:?}: `$ref` {target:?} does not resolve: {reason}")]
    BadRef {
        /// JSON pointer of the `$ref`'s location.
        pointer: String,
        /// The `$ref`'s value.
        target: String,
        /// Why it does not resolve.
        reason: String,
    },
    /// An `allOf` (or a `$ref` with siblings) whose parts contradict each other, or cannot be
    /// merged exactly.
    #[error("{pointer:?}: cannot merge the subschemas of `allOf`: {reason}")]
    Merge {
        /// JSON pointer of the schema holding the `allOf` (or `$ref`).
        pointer: String,
        /// Which parts conflict, and how.
        reason: String,
    },
    /// A `pattern` (or `patternProperties` key) the regex engine cannot compile.
    #[error("{pointer:?}: `pattern` {pattern:?} cannot be compiled: {reason}")]
    BadPattern {
        /// JSON pointer of the `pattern` (or `patternProperties` key).
        pointer: String,
        /// The pattern, as written in the schema.
        pattern: String,
        /// The regex engine's complaint.
        reason: String,
    },
    /// A size budget ran out (nesting depth, expansion of `minItems`/`maxItems`, grammar size).
    #[error("{pointer:?}: {what} exceeds the budget of {limit}")]
    Budget {
        /// JSON pointer of the schema location where the budget ran out.
        pointer: String,
        /// What was counted (depth, array positions, rules, ...), in words.
        what: String,
        /// The budget, in the units of `what`.
        limit: usize,
    },
    /// The schema admits no JSON value at all.
    #[error("{pointer:?}: the schema admits no instance")]
    Empty {
        /// JSON pointer of the (sub)schema that admits nothing; `""` for the root.
        pointer: String,
    },
    /// The generated grammar failed validation (an internal error).
    #[error("internal error: the generated grammar is invalid: {0}")]
    Grammar(#[from] GrammarError),
}

impl SchemaError {
    /// The JSON pointer the error is about, if it has one.
    pub fn pointer(&self) -> Option<&str> {
        match self {
            SchemaError::NotASchema { pointer, .. }
            | SchemaError::Unsupported { pointer, .. }
            | SchemaError::BadKeyword { pointer, .. }
            | SchemaError::BadRef { pointer, .. }
            | SchemaError::Merge { pointer, .. }
            | SchemaError::BadPattern { pointer, .. }
            | SchemaError::Budget { pointer, .. }
            | SchemaError::Empty { pointer } => Some(pointer),
            SchemaError::NotJson(_) | SchemaError::Grammar(_) => None,
        }
    }
}

/// A keyword that lenient mode did not enforce (or enforced approximately).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaWarning {
    /// JSON pointer of the keyword, or of the schema that holds it.
    pub pointer: String,
    /// The keyword, as spelled in the schema.
    pub keyword: String,
    /// What was dropped or approximated, and why.
    pub message: String,
}

impl fmt::Display for SchemaWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?}: keyword `{}` not enforced: {}",
            self.pointer, self.keyword, self.message
        )
    }
}

/// Appends a reference token to a JSON pointer, escaping `~` and `/`.
pub(crate) fn push_pointer(base: &str, token: &str) -> String {
    format!("{base}/{}", token.replace('~', "~0").replace('/', "~1"))
}
