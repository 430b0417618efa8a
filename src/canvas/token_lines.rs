//! The token-canvas JSON-lines format (DESIGN.md): one object per line with `id`, optional
//! `grammar` and `tokens`, an array whose elements are a vocabulary id (a non-negative integer:
//! a placed token) or `null` (a masked position). An end-of-output id ends the output (see
//! [`super::tokens`]). Unknown fields are ignored.
//!
//! Errors keep the line's `id` whenever the JSON could be read, so a caller can echo it.

use serde_json::Value;
use thiserror::Error;

use super::tokens::TokenCanvas;
use crate::vocab::{TokenId, Vocabulary};

/// One parsed line.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedTokenLine {
    /// The line's `id`, echoed in its answer (`null` when absent).
    pub id: Value,
    /// The line's `grammar` spec (see [`crate::grammar::spec`]), which wins over the run's
    /// default; `None` when absent or `null`.
    pub grammar: Option<String>,
    /// The ids of the `tokens` array; not yet checked against a vocabulary (see
    /// [`ParsedTokenLine::check_ids`]).
    pub canvas: TokenCanvas,
}

/// What is wrong with a token-canvas line, and the line's `id` (`null` when it could not be
/// read).
#[derive(Debug, Error, Clone, PartialEq)]
#[error("{kind}")]
pub struct TokenLineError {
    /// The line's `id`, for echoing in its answer; `null` when absent or the JSON was unreadable.
    pub id: Value,
    /// What is wrong.
    pub kind: TokenLineErrorKind,
}

/// The problems a token-canvas line may have.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum TokenLineErrorKind {
    /// The line is not JSON; holds the parser's message.
    #[error("not valid JSON: {0}")]
    Json(String),
    /// The line is JSON but not an object.
    #[error("expected a JSON object with a `tokens` array")]
    NotAnObject,
    /// The object has no `tokens` field.
    #[error("missing field `tokens` (an array of token ids and nulls)")]
    MissingTokens,
    /// `tokens` is not an array; holds the value found, abbreviated.
    #[error("field `tokens` must be an array of token ids and nulls, found {0}")]
    TokensNotArray(String),
    /// `grammar` is present and neither a string nor `null`.
    #[error("field `grammar` must be a string")]
    GrammarNotString,
    /// An element of `tokens` is neither `null` nor an integer that fits a [`TokenId`].
    #[error("tokens[{index}]: expected a token id (an integer from 0 to {max}) or null, found {found}", max = TokenId::MAX)]
    BadElement {
        /// The element's index in `tokens`.
        index: usize,
        /// The element as JSON, abbreviated.
        found: String,
    },
    /// `tokens` has more elements than the caller's limit (checked before reading them).
    #[error("the canvas has {len} positions, more than the limit of {max} (--max-positions)")]
    TooLong {
        /// The number of elements in `tokens`.
        len: usize,
        /// The limit passed to [`parse_token_canvas_line_limited`].
        max: usize,
    },
    /// An id is not in the vocabulary (from [`ParsedTokenLine::check_ids`]).
    #[error("tokens[{index}]: token id {id} is outside the vocabulary ({vocab_len} ids)")]
    IdOutOfRange {
        /// The element's index in `tokens`.
        index: usize,
        /// The id found there.
        id: TokenId,
        /// The vocabulary's size: valid ids are below it.
        vocab_len: usize,
    },
}

/// Parses one line of the token-canvas format.
pub fn parse_token_canvas_line(text: &str) -> Result<ParsedTokenLine, TokenLineError> {
    parse_token_canvas_line_limited(text, usize::MAX)
}

/// [`parse_token_canvas_line`], refusing canvases of more than `max_positions` positions
/// before reading their elements.
pub fn parse_token_canvas_line_limited(
    text: &str,
    max_positions: usize,
) -> Result<ParsedTokenLine, TokenLineError> {
    let fail = |id: &Value, kind| TokenLineError {
        id: id.clone(),
        kind,
    };
    let v: Value = serde_json::from_str(text)
        .map_err(|e| fail(&Value::Null, TokenLineErrorKind::Json(e.to_string())))?;
    let Value::Object(obj) = v else {
        return Err(fail(&Value::Null, TokenLineErrorKind::NotAnObject));
    };
    let id = obj.get("id").cloned().unwrap_or(Value::Null);
    let grammar = match obj.get("grammar") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(fail(&id, TokenLineErrorKind::GrammarNotString)),
    };
    let items = match obj.get("tokens") {
        None => return Err(fail(&id, TokenLineErrorKind::MissingTokens)),
        Some(Value::Array(items)) => items,
        Some(other) => {
            let found = abbreviate(other);
            return Err(fail(&id, TokenLineErrorKind::TokensNotArray(found)));
        }
    };
    if items.len() > max_positions {
        let kind = TokenLineErrorKind::TooLong {
            len: items.len(),
            max: max_positions,
        };
        return Err(fail(&id, kind));
    }
    let mut cells = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let cell = match item {
            Value::Null => None,
            Value::Number(n) => match n.as_u64().and_then(|x| TokenId::try_from(x).ok()) {
                Some(t) => Some(t),
                None => return Err(fail(&id, bad_element(index, item))),
            },
            _ => return Err(fail(&id, bad_element(index, item))),
        };
        cells.push(cell);
    }
    Ok(ParsedTokenLine {
        id,
        grammar,
        canvas: TokenCanvas::new(cells),
    })
}

impl ParsedTokenLine {
    /// Checks that every placed id is in `vocab`, naming the first that is not.
    pub fn check_ids(&self, vocab: &Vocabulary) -> Result<(), TokenLineError> {
        let bad = self.canvas.cells.iter().enumerate().find_map(|(index, c)| {
            c.filter(|&id| vocab.kind(id).is_none())
                .map(|id| (index, id))
        });
        match bad {
            None => Ok(()),
            Some((index, id)) => Err(TokenLineError {
                id: self.id.clone(),
                kind: TokenLineErrorKind::IdOutOfRange {
                    index,
                    id,
                    vocab_len: vocab.len(),
                },
            }),
        }
    }
}

fn bad_element(index: usize, item: &Value) -> TokenLineErrorKind {
    TokenLineErrorKind::BadElement {
        index,
        found: abbreviate(item),
    }
}

/// A JSON value for an error message, cut short if long.
fn abbreviate(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> TokenLineErrorKind {
        parse_token_canvas_line(text).unwrap_err().kind
    }

    #[test]
    fn parses_ids_and_masks() {
        let line = r#"{"id": "t1", "grammar": "json", "tokens": [90, null, 92, 151643], "x": 1}"#;
        let p = parse_token_canvas_line(line).unwrap();
        assert_eq!(p.id, Value::String("t1".into()));
        assert_eq!(p.grammar.as_deref(), Some("json"));
        assert_eq!(p.canvas.cells, [Some(90), None, Some(92), Some(151643)]);
        let p = parse_token_canvas_line(r#"{"tokens": []}"#).unwrap();
        assert_eq!((p.id, p.canvas.len()), (Value::Null, 0));
    }

    #[test]
    fn bad_lines_name_the_element_and_keep_the_id() {
        assert!(matches!(kind("{"), TokenLineErrorKind::Json(_)));
        assert_eq!(kind("[1]"), TokenLineErrorKind::NotAnObject);
        assert_eq!(kind(r#"{"id": 1}"#), TokenLineErrorKind::MissingTokens);
        assert!(matches!(
            kind(r#"{"tokens": "abc"}"#),
            TokenLineErrorKind::TokensNotArray(_)
        ));
        for bad in ["-1", "1.5", "\"a\"", "4294967296", "[1]", "true"] {
            let e = parse_token_canvas_line(&format!(r#"{{"id": 7, "tokens": [1, {bad}]}}"#))
                .unwrap_err();
            assert_eq!(e.id, Value::from(7));
            assert!(
                matches!(e.kind, TokenLineErrorKind::BadElement { index: 1, .. }),
                "{bad}: {e}"
            );
            assert!(e.to_string().starts_with("tokens[1]: "), "{e}");
        }
        let e =
            parse_token_canvas_line_limited(r#"{"id": "l", "tokens": [1, 2, 3]}"#, 2).unwrap_err();
        assert_eq!(e.kind, TokenLineErrorKind::TooLong { len: 3, max: 2 });
        assert_eq!(e.id, Value::from("l"));
    }

    #[test]
    fn ids_outside_the_vocabulary_are_named() {
        let vocab = Vocabulary::new(vec![b"a".to_vec(), b"</s>".to_vec()], &[1], &[]);
        let p = parse_token_canvas_line(r#"{"id": 2, "tokens": [0, null, 1, 2]}"#).unwrap();
        let e = p.check_ids(&vocab).unwrap_err();
        assert_eq!(e.id, Value::from(2));
        assert_eq!(
            e.to_string(),
            "tokens[3]: token id 2 is outside the vocabulary (2 ids)"
        );
        let p = parse_token_canvas_line(r#"{"tokens": [0, null, 1]}"#).unwrap();
        assert!(p.check_ids(&vocab).is_ok());
    }
}
