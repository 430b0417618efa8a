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
    #[error(
        "{}: a schema must be an object or a boolean, found {found}",
        at(pointer)
    )]
    NotASchema {
        /// JSON pointer of the schema location at fault.
        pointer: String,
        /// The kind of JSON value found there (`a number`, `an array`, ...).
        found: String,
    },
    /// A keyword that lacuna cannot enforce exactly (strict mode only; lenient mode warns).
    #[error(
        "{}: keyword `{keyword}` cannot be enforced: {reason} (use lenient mode to ignore it)",
        at(pointer)
    )]
    Unsupported {
        /// JSON pointer of the keyword, or of the schema that holds it.
        pointer: String,
        /// The keyword, as spelled in the schema.
        keyword: String,
        /// Why it cannot be enforced exactly.
        reason: String,
    },
    /// A keyword with a value of the wrong shape (`"required": 3`).
    #[error("{}: keyword `{keyword}` has an invalid value: {reason}", at(pointer))]
    BadKeyword {
        /// JSON pointer of the keyword, or of the schema that holds it.
        pointer: String,
        /// The keyword, as spelled in the schema.
        keyword: String,
        /// What shape its value should have.
        reason: String,
    },
    /// A `$ref` that names no schema of this document.
    #[error("{}: `$ref` {target:?} does not resolve: {reason}", at(pointer))]
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
    #[error("{}: cannot merge the subschemas of `allOf`: {reason}", at(pointer))]
    Merge {
        /// JSON pointer of the schema holding the `allOf` (or `$ref`).
        pointer: String,
        /// Which parts conflict, and how.
        reason: String,
    },
    /// A `pattern` (or `patternProperties` key) the regex engine cannot compile.
    #[error(
        "{}: `pattern` {} cannot be compiled: {reason}",
        at(pointer),
        shown(pattern)
    )]
    BadPattern {
        /// JSON pointer of the `pattern` (or `patternProperties` key).
        pointer: String,
        /// The pattern, as written in the schema.
        pattern: String,
        /// The regex engine's complaint.
        reason: String,
    },
    /// A size budget ran out (nesting depth, expansion of `minItems`/`maxItems`, grammar size).
    #[error("{}: {what} exceeds the budget of {limit}", at(pointer))]
    Budget {
        /// JSON pointer of the schema location where the budget ran out.
        pointer: String,
        /// What was counted (depth, array positions, rules, ...), in words.
        what: String,
        /// The budget, in the units of `what`.
        limit: usize,
    },
    /// The compiled grammar exceeds a size limit (named in the message).
    #[error("{}: the compiled grammar is too large: {message}", at(pointer))]
    TooLarge {
        /// JSON pointer of the schema whose grammar is too large (`""`: the whole schema).
        pointer: String,
        /// Which limit, and by how much.
        message: String,
    },
    /// The schema admits no JSON value at all.
    #[error("{}: the schema admits no instance", at(pointer))]
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
            | SchemaError::TooLarge { pointer, .. }
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

/// A JSON pointer as an error message quotes it: in Rust string syntax, long reference tokens
/// (a `patternProperties` key is a whole regex) cut to
/// [`MAX_NAME_IN_MESSAGE`](crate::grammar::MAX_NAME_IN_MESSAGE) characters.
fn at(pointer: &str) -> String {
    if pointer.chars().count() <= 2 * crate::grammar::MAX_NAME_IN_MESSAGE {
        return format!("{pointer:?}");
    }
    let tokens: Vec<String> = pointer
        .split('/')
        .map(|t| crate::grammar::shorten(t, crate::grammar::MAX_NAME_IN_MESSAGE))
        .collect();
    format!("{:?}", tokens.join("/"))
}

/// A pattern as an error message quotes it: in Rust string syntax, at most
/// [`MAX_NAME_IN_MESSAGE`](crate::grammar::MAX_NAME_IN_MESSAGE) characters of it.
fn shown(pattern: &str) -> String {
    let n = pattern.chars().count();
    if n <= crate::grammar::MAX_NAME_IN_MESSAGE {
        format!("{pattern:?}")
    } else {
        let head: String = pattern
            .chars()
            .take(crate::grammar::MAX_NAME_IN_MESSAGE - 24)
            .collect();
        format!("{head:?}… ({n} characters)")
    }
}

/// Appends a reference token to a JSON pointer, escaping `~` and `/`. (One allocation when
/// there is nothing to escape, as for almost every token: a schema's lowering builds a
/// pointer for each node it visits.)
pub(crate) fn push_pointer(base: &str, token: &str) -> String {
    let mut out = String::with_capacity(base.len() + 1 + token.len());
    out.push_str(base);
    out.push('/');
    if token.contains(['~', '/']) {
        out.push_str(&token.replace('~', "~0").replace('/', "~1"));
    } else {
        out.push_str(token);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::push_pointer;

    #[test]
    fn pointer_tokens_are_escaped_only_where_needed() {
        assert_eq!(push_pointer("#/properties", "name"), "#/properties/name");
        assert_eq!(push_pointer("#", "a~b/c"), "#/a~0b~1c");
        assert_eq!(
            push_pointer("#", "~1"),
            "#/~01",
            "`~` is escaped before `/`"
        );
        assert_eq!(push_pointer("", ""), "/");
    }
}
