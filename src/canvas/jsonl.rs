//! The canvas JSON-lines format (DESIGN.md): one object per line with `id`, optional `grammar`
//! and `canvas`, an array whose elements are a string (a filled position), `null` (a mask),
//! `{"eos": true}`, or `{"bytes": [..]}` (a token's raw bytes, for partial UTF-8 sequences).
//! Unknown fields are ignored.

use serde_json::Value;
use thiserror::Error;

use super::{Canvas, Cell};

/// One parsed line.
#[derive(Clone, Debug, PartialEq)]
pub struct CanvasLine {
    /// The line's `id`, echoed in its verdict (`null` when absent).
    pub id: Value,
    /// The line's `grammar` spec (see [`crate::grammar::spec`]), which wins over the run's
    /// default; `None` when absent or `null`.
    pub grammar: Option<String>,
    /// The cells of the `canvas` array.
    pub canvas: Canvas,
}

/// What is wrong with a canvas line.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CanvasLineError {
    /// The line is not JSON; holds the parser's message.
    #[error("not valid JSON: {0}")]
    Json(String),
    /// The line is JSON but not an object.
    #[error("expected a JSON object with a `canvas` array")]
    NotAnObject,
    /// The object has no `canvas` field.
    #[error("missing field `canvas` (an array of cells)")]
    MissingCanvas,
    /// `canvas` is not an array; holds the JSON type found.
    #[error("field `canvas` must be an array of cells, found {0}")]
    CanvasNotArray(&'static str),
    /// `grammar` is present and neither a string nor `null`.
    #[error("field `grammar` must be a string")]
    GrammarNotString,
    /// An element of `canvas` is none of the accepted cell forms.
    #[error("canvas[{index}]: {message}")]
    BadCell {
        /// The element's index in the `canvas` array.
        index: usize,
        /// What is wrong with it.
        message: String,
    },
}

/// Parses one line of the canvas format.
pub fn parse_canvas_line(line: &str) -> Result<CanvasLine, CanvasLineError> {
    let v: Value = serde_json::from_str(line).map_err(|e| CanvasLineError::Json(e.to_string()))?;
    let Value::Object(obj) = v else {
        return Err(CanvasLineError::NotAnObject);
    };
    let id = obj.get("id").cloned().unwrap_or(Value::Null);
    let grammar = match obj.get("grammar") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(CanvasLineError::GrammarNotString),
    };
    let items = match obj.get("canvas") {
        Some(Value::Array(items)) => items,
        Some(other) => return Err(CanvasLineError::CanvasNotArray(json_type(other))),
        None => return Err(CanvasLineError::MissingCanvas),
    };
    let cells = items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            cell(item).map_err(|message| CanvasLineError::BadCell { index, message })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(CanvasLine {
        id,
        grammar,
        canvas: Canvas::new(cells),
    })
}

/// The JSON type of a value, for messages (the value itself may be huge).
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn cell(item: &Value) -> Result<Cell, String> {
    match item {
        Value::Null => Ok(Cell::Mask),
        Value::String(s) => Ok(Cell::Token(s.as_bytes().to_vec())),
        Value::Object(o) => {
            if o.get("eos") == Some(&Value::Bool(true)) {
                return Ok(Cell::Eos);
            }
            if let Some(Value::Array(bytes)) = o.get("bytes") {
                return bytes
                    .iter()
                    .map(|b| {
                        b.as_u64()
                            .filter(|&x| x <= 255)
                            .map(|x| x as u8)
                            .ok_or_else(|| format!("`bytes` holds {b}, not a byte"))
                    })
                    .collect::<Result<Vec<u8>, String>>()
                    .map(Cell::Token);
            }
            Err("an object cell must be {\"eos\": true} or {\"bytes\": [..]}".into())
        }
        other => Err(format!(
            "expected a string, null or an object, found {other}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_design_example() {
        let line = r#"{"id": "a1", "grammar": "json", "canvas": ["{\"na", "me\": ", null, null, ", \"age\": 3", null, {"eos": true}, {"eos": true}], "extra": 1}"#;
        let c = parse_canvas_line(line).unwrap();
        assert_eq!(c.id, Value::String("a1".into()));
        assert_eq!(c.grammar.as_deref(), Some("json"));
        let chunks = c.canvas.holey_text().chunks;
        assert_eq!(
            chunks,
            vec![b"{\"name\": ".to_vec(), b", \"age\": 3".to_vec(), vec![]]
        );
    }

    #[test]
    fn bad_lines_name_the_problem() {
        assert!(matches!(
            parse_canvas_line("{"),
            Err(CanvasLineError::Json(_))
        ));
        assert_eq!(parse_canvas_line("[1]"), Err(CanvasLineError::NotAnObject));
        assert_eq!(
            parse_canvas_line("{\"id\": 1}"),
            Err(CanvasLineError::MissingCanvas)
        );
        assert!(matches!(
            parse_canvas_line("{\"canvas\": [\"a\", 3]}"),
            Err(CanvasLineError::BadCell { index: 1, .. })
        ));
        assert!(matches!(
            parse_canvas_line("{\"canvas\": [{\"bytes\": [300]}]}"),
            Err(CanvasLineError::BadCell { index: 0, .. })
        ));
    }

    #[test]
    fn raw_bytes_cells_carry_partial_utf8() {
        let c = parse_canvas_line(r#"{"canvas": [{"bytes": [195]}, {"bytes": [169]}]}"#).unwrap();
        assert_eq!(c.canvas.holey_text().chunks, vec!["é".as_bytes().to_vec()]);
    }
}
