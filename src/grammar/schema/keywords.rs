//! The shape the metaschema requires of each keyword's value (`maxLength` a non-negative
//! integer, `pattern` a string, ...), checked on every schema object before it is used.
//!
//! Lowering reads a keyword through accessors such as `as_u64` or `as_str`, which would see a
//! value of the wrong type (`"maxLength": "2"`, `"minItems": -1`) as absent and compile the
//! schema *without* the constraint. Such a schema is invalid under every draft's metaschema, so
//! it is an error in strict and lenient mode alike, naming the keyword and its JSON pointer.
//! Subschema-valued keywords are checked where they are lowered (`NotASchema`), and `type` and
//! `$ref` where they are read.

use serde_json::{Map, Value};

use super::error::{push_pointer, SchemaError};
use super::refs::kind_name;

/// What a keyword's value must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// An integer ≥ 0 (`2` or `2.0`).
    Count,
    /// Any number.
    Number,
    /// A number > 0.
    Positive,
    /// A number, or a boolean (draft 4's `exclusiveMinimum: true`).
    NumberOrBool,
    Boolean,
    String,
    Array,
    /// An array of strings.
    Strings,
    Object,
}

/// Keywords with a value of a known shape (drafts 4 to 2020-12).
const SHAPES: &[(&str, Shape)] = &[
    ("minLength", Shape::Count),
    ("maxLength", Shape::Count),
    ("minItems", Shape::Count),
    ("maxItems", Shape::Count),
    ("minProperties", Shape::Count),
    ("maxProperties", Shape::Count),
    ("minContains", Shape::Count),
    ("maxContains", Shape::Count),
    ("minimum", Shape::Number),
    ("maximum", Shape::Number),
    ("exclusiveMinimum", Shape::NumberOrBool),
    ("exclusiveMaximum", Shape::NumberOrBool),
    ("multipleOf", Shape::Positive),
    ("uniqueItems", Shape::Boolean),
    ("pattern", Shape::String),
    ("format", Shape::String),
    ("enum", Shape::Array),
    ("allOf", Shape::Array),
    ("anyOf", Shape::Array),
    ("oneOf", Shape::Array),
    ("prefixItems", Shape::Array),
    ("required", Shape::Strings),
    ("properties", Shape::Object),
    ("patternProperties", Shape::Object),
    ("$defs", Shape::Object),
    ("definitions", Shape::Object),
];

impl Shape {
    fn admits(self, v: &Value) -> bool {
        let number = v.as_f64();
        match self {
            Shape::Count => number.is_some_and(|f| f >= 0.0 && f.fract() == 0.0),
            Shape::Number => v.is_number(),
            Shape::Positive => number.is_some_and(|f| f > 0.0),
            Shape::NumberOrBool => v.is_number() || v.is_boolean(),
            Shape::Boolean => v.is_boolean(),
            Shape::String => v.is_string(),
            Shape::Array => v.is_array(),
            Shape::Strings => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
            Shape::Object => v.is_object(),
        }
    }

    fn expected(self) -> &'static str {
        match self {
            Shape::Count => "a non-negative integer",
            Shape::Number => "a number",
            Shape::Positive => "a number greater than 0",
            Shape::NumberOrBool => "a number (or, in draft 4, a boolean)",
            Shape::Boolean => "a boolean",
            Shape::String => "a string",
            Shape::Array => "an array",
            Shape::Strings => "an array of strings",
            Shape::Object => "an object",
        }
    }
}

/// Checks the value of every keyword of a known shape in the schema object at `ptr`.
pub fn check_shapes(o: &Map<String, Value>, ptr: &str) -> Result<(), SchemaError> {
    for &(keyword, shape) in SHAPES {
        let Some(v) = o.get(keyword) else { continue };
        if !shape.admits(v) {
            return Err(SchemaError::BadKeyword {
                pointer: push_pointer(ptr, keyword),
                keyword: keyword.into(),
                reason: format!(
                    "must be {}, found {} {}",
                    shape.expected(),
                    kind_name(v),
                    shown(v)
                ),
            });
        }
    }
    Ok(())
}

/// A value as JSON text, cut short after [`SHOWN_CHARS`] characters.
fn shown(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// How much of a wrong value an error message quotes.
const SHOWN_CHARS: usize = 60;
