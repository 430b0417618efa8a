//! `if`/`then`/`else`, rewritten as alternatives: "if `I` holds then `T`, else `E`" is exactly
//! `anyOf: [{allOf: [I, T]}, {allOf: [¬I, E]}]`, where `¬I` is `I`'s complement as a schema
//! ([`negate`]: types, `required`, `properties`, `const`/`enum` of null and booleans, `$ref`s
//! and combinations of those). The object's other keywords are merged with it as an `allOf`,
//! so each alternative is an ordinary schema the lowering handles, and a merge that is not
//! exact is refused as any `allOf` is. A missing `then` or `else` is `true`. Two `allOf`
//! parts with an `if` each ([`apart`]) have their conditions turned into alternatives before
//! they merge, whose `anyOf`s then multiply (four alternatives for two conditions).
//!
//! Where `I` has no complement lacuna can write, or the root's `$schema` is draft 4 or 6
//! (which have no `if`: a validator ignores it there), nothing is rewritten and the keyword is
//! refused as before.

use serde_json::{json, Map, Value};

use super::error::SchemaError;
use super::negation::negate;
use super::refs::{merge, root_draft_among, DRAFT_04, DRAFT_06};

/// `o` as `allOf` of its other keywords and one `anyOf` of the two branches, when it has an
/// `if` whose complement lacuna can write; `None` otherwise.
pub fn as_alternatives(root: &Value, o: &Map<String, Value>) -> Option<Value> {
    let alternatives = branches(root, o)?;
    Some(json!({ "allOf": [Value::Object(without_condition(o)), {"anyOf": alternatives}] }))
}

/// Two flattened schemas about to be merged (an `allOf`'s parts), each with an `if` of its
/// own: one schema holds one condition, so each condition becomes alternatives merged with
/// the rest of its schema (the `anyOf`s then multiply, as any two do). A condition without a
/// complement stays, and the merge refuses it.
pub fn apart(root: &Value, a: Value, b: Value, ptr: &str) -> Result<(Value, Value), SchemaError> {
    match (a.as_object(), b.as_object()) {
        (Some(x), Some(y)) if x.contains_key("if") && y.contains_key("if") => {
            if same_condition(x, y) {
                return Ok((a, b));
            }
        }
        _ => return Ok((a, b)),
    }
    Ok((lifted(root, a, ptr)?, lifted(root, b, ptr)?))
}

/// Whether `a` and `b` write the same `if`, `then` and `else` (each present or not alike).
pub fn same_condition(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    CONDITION.iter().all(|k| a.get(*k) == b.get(*k))
}

/// The keywords of a condition, which mean something only together.
const CONDITION: [&str; 3] = ["if", "then", "else"];

/// `v` with its condition merged in as alternatives, or as it is.
fn lifted(root: &Value, v: Value, ptr: &str) -> Result<Value, SchemaError> {
    let Some(o) = v.as_object() else {
        return Ok(v);
    };
    let Some(alternatives) = branches(root, o) else {
        return Ok(v);
    };
    merge(
        &Value::Object(without_condition(o)),
        &json!({ "anyOf": alternatives }),
        ptr,
    )
}

/// The alternatives `o`'s `if`/`then`/`else` stands for, when it has an `if` whose
/// complement lacuna can write.
fn branches(root: &Value, o: &Map<String, Value>) -> Option<Vec<Value>> {
    let condition = o.get("if")?;
    if !knows_if(root) {
        return None;
    }
    let then = o.get("then").cloned().unwrap_or(Value::Bool(true));
    let otherwise = o.get("else").cloned().unwrap_or(Value::Bool(true));
    Some(match condition {
        // `if: true` always takes `then`; `if: false` always `else`.
        Value::Bool(true) => vec![then],
        Value::Bool(false) => vec![otherwise],
        _ => {
            let complement = negate(root, condition, 0)?;
            vec![
                json!({ "allOf": [condition, then] }),
                json!({ "allOf": [complement, otherwise] }),
            ]
        }
    })
}

fn without_condition(o: &Map<String, Value>) -> Map<String, Value> {
    let mut rest = o.clone();
    for key in CONDITION {
        rest.remove(key);
    }
    rest
}

/// Whether the root's draft has `if` (draft 7 on, and a document without `$schema`, which
/// validators read as the newest draft).
fn knows_if(root: &Value) -> bool {
    !root_draft_among(root, &[DRAFT_04, DRAFT_06])
}
