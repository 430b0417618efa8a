//! Lark grammar front end (in progress).

use super::{Grammar, GrammarError};

/// Parses Lark grammar text into a [`Grammar`] whose start rule is `start`.
pub fn parse(_source: &str, origin: &str) -> Result<Grammar, GrammarError> {
    Err(GrammarError::Syntax {
        origin: origin.to_string(),
        line: 1,
        column: 1,
        message: "the Lark parser is not written yet".into(),
    })
}
