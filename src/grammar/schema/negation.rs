//! `not`, where its complement is a schema lacuna can lower: the negation is pushed inward
//! (`¬(A ∧ B) = ¬A ∨ ¬B`, `¬anyOf = allOf of ¬`, `¬¬A = A`) down to keywords whose complement
//! within JSON values is itself a schema — `type` (unless it leaves non-integral numbers),
//! `required`, `properties`, `enum`/`const` over `null` and booleans, `true`/`false`, `$ref`.
//! Anything else answers `None`, and the `not` is then refused (or, leniently, dropped) as
//! before. The complement is exact: each keyword constrains only values of its own type, so
//! "violates `required: [a, b]`" is "an object without `a`, or without `b`".

use serde_json::{json, Map, Value};

use super::refs::{effective, is_annotation, resolve, MAX_MERGE_DEPTH};

const TYPES: [&str; 6] = ["null", "boolean", "object", "array", "string", "number"];

/// A schema equivalent to `not: schema`, if there is one lacuna can lower.
pub fn negate(root: &Value, schema: &Value, depth: usize) -> Option<Value> {
    if depth > MAX_MERGE_DEPTH {
        return None;
    }
    let schema = &*effective(root, schema);
    let o = match schema {
        Value::Bool(b) => return Some(Value::Bool(!b)),
        Value::Object(o) => o,
        _ => return None,
    };
    // The schema is the conjunction of its keywords: its complement, the union of theirs.
    let mut parts = vec![];
    for (k, v) in o {
        if is_annotation(k) {
            continue;
        }
        let part = match k.as_str() {
            "$ref" => {
                let (target, _) = resolve(root, v.as_str()?, "").ok()?;
                negate(root, target, depth + 1)?
            }
            "not" => v.clone(),
            "type" => not_types(v)?,
            "required" => {
                let names: Vec<&str> = v
                    .as_array()?
                    .iter()
                    .map(Value::as_str)
                    .collect::<Option<_>>()?;
                for name in names {
                    parts.push(json!({"type": "object", "properties": {name: false}}));
                }
                continue;
            }
            "properties" => {
                for (name, sub) in v.as_object()? {
                    let violated = negate(root, sub, depth + 1)?;
                    parts.push(json!({"type": "object", "required": [name],
                        "properties": {name: violated}}));
                }
                continue;
            }
            "enum" => not_values(v.as_array()?)?,
            "const" => not_values(std::slice::from_ref(v))?,
            "anyOf" => {
                let negated: Vec<Value> = v
                    .as_array()?
                    .iter()
                    .map(|s| negate(root, s, depth + 1))
                    .collect::<Option<_>>()?;
                json!({ "allOf": negated })
            }
            "allOf" => {
                for s in v.as_array()? {
                    parts.push(negate(root, s, depth + 1)?);
                }
                continue;
            }
            _ => return None,
        };
        parts.push(part);
    }
    Some(match parts.len() {
        0 => Value::Bool(false),
        1 => parts.pop().expect("one part"),
        _ => json!({ "anyOf": parts }),
    })
}

/// The values whose type is not in `types`; `None` when that includes the non-integral
/// numbers (`integer` excluded without `number`), which no type names.
fn not_types(types: &Value) -> Option<Value> {
    let listed: Vec<&str> = match types {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().map(Value::as_str).collect::<Option<_>>()?,
        _ => return None,
    };
    if listed.contains(&"integer") && !listed.contains(&"number") {
        return None;
    }
    let rest: Vec<&str> = TYPES
        .iter()
        .copied()
        .filter(|t| !listed.contains(t))
        .collect();
    Some(if rest.is_empty() {
        Value::Bool(false)
    } else {
        json!({ "type": rest })
    })
}

/// The values not among `values`, when these are all `null` or booleans.
fn not_values(values: &[Value]) -> Option<Value> {
    if !values.iter().all(|v| v.is_null() || v.is_boolean()) {
        return None;
    }
    let mut alts = vec![json!({"type": ["object", "array", "string", "number"]})];
    let rest: Vec<Value> = [Value::Null, Value::Bool(true), Value::Bool(false)]
        .into_iter()
        .filter(|v| !values.contains(v))
        .collect();
    if !rest.is_empty() {
        alts.push(json!({ "enum": rest }));
    }
    let mut m = Map::new();
    m.insert("anyOf".into(), Value::Array(alts));
    Some(Value::Object(m))
}
