//! `dependencies` / `dependentSchemas` / `dependentRequired` the object lowering cannot track,
//! rewritten as alternatives: "if `t` is present, `S` holds" is exactly
//! `anyOf: [{properties: {t: false}}, {required: [t], allOf: [S]}]` (for a list of names,
//! `S` requires them). The object's own keywords are merged into each alternative, so every
//! alternative is an ordinary object schema the lowering handles.
//!
//! Used where the object lowering would refuse: a dependency on a schema that does more than
//! require names, or name dependencies among more properties than objects take in any order
//! (the lowering tracks presence only in its any-order objects). The alternatives multiply
//! (two per trigger), so at most [`MAX_TRIGGERS`] are rewritten.

use serde_json::{json, Map, Value};

/// The most dependency triggers rewritten into alternatives (2ⁿ of them after merging).
pub const MAX_TRIGGERS: usize = 6;

/// The keywords whose dependencies this rewrites.
const KEYWORDS: [&str; 3] = ["dependencies", "dependentSchemas", "dependentRequired"];

/// `o` as `allOf` of its other keywords and one `anyOf` per dependency trigger, when it has
/// dependencies the object lowering cannot enforce (`tracked_names`: whether it can track
/// name dependencies among this many properties); `None` otherwise, or past [`MAX_TRIGGERS`].
pub fn as_alternatives(
    o: &Map<String, Value>,
    tracked_names: impl Fn(usize) -> bool,
) -> Option<Value> {
    let mut triggers: Vec<(String, Value)> = vec![];
    let mut needs_rewrite = false;
    for key in KEYWORDS {
        let Some(deps) = o.get(key).and_then(Value::as_object) else {
            continue;
        };
        for (trigger, dep) in deps {
            let condition = match dep {
                Value::Array(names) => {
                    let mut required = vec![Value::String(trigger.clone())];
                    required.extend(names.iter().cloned());
                    json!({ "required": required })
                }
                Value::Object(_) | Value::Bool(_) => {
                    // A schema that only requires names is a list of names.
                    let only_requires = dep.as_object().is_some_and(|m| {
                        m.keys()
                            .all(|k| k == "required" || super::refs::is_annotation(k))
                    });
                    needs_rewrite |= !only_requires;
                    json!({ "required": [trigger], "allOf": [dep] })
                }
                _ => return None,
            };
            triggers.push((trigger.clone(), condition));
        }
    }
    if triggers.is_empty() || triggers.len() > MAX_TRIGGERS {
        return None;
    }
    if !needs_rewrite && tracked_names(declared_names(o)) {
        return None;
    }
    let mut rest = o.clone();
    for key in KEYWORDS {
        rest.remove(key);
    }
    let mut parts = vec![Value::Object(rest)];
    for (trigger, condition) in triggers {
        parts.push(json!({ "anyOf": [
            { "properties": { trigger: false } },
            condition,
        ]}));
    }
    Some(json!({ "allOf": parts }))
}

/// How many names the object lowering would track for `o`: declared properties, names only
/// `required`, and names dependencies mention.
fn declared_names(o: &Map<String, Value>) -> usize {
    let mut names: Vec<&str> = o
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    names.extend(o.get("required").map(listed).unwrap_or_default());
    for key in KEYWORDS {
        for (trigger, dep) in o.get(key).and_then(Value::as_object).into_iter().flatten() {
            names.push(trigger);
            names.extend(listed(dep));
        }
    }
    names.sort_unstable();
    names.dedup();
    names.len()
}

/// The strings of a JSON array (empty for anything else).
fn listed(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}
