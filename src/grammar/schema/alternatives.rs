//! `anyOf` and `oneOf`: one alternative per item, each merged with the sibling keywords. A
//! `oneOf` is exact when its alternatives are disjoint by construction (JSON types, a
//! discriminating property), or when each has a complement (`not`, see [`super::negation`])
//! that can exclude it from the others; otherwise it is refused.

use serde_json::{Map, Value};

use super::error::{push_pointer, SchemaError};
use super::lower::{possible_types, Lowered, Lowerer};
use super::refs::{flatten, is_contradiction, json_eq, merge};
use crate::grammar::{NonterminalId, Symbol};

/// The target of a schema that is only a `$ref` (annotations aside).
fn pure_ref(item: &Value) -> Option<&str> {
    let o = item.as_object()?;
    let r = o.get("$ref")?.as_str()?;
    o.keys()
        .all(|k| k == "$ref" || super::refs::is_annotation(k))
        .then_some(r)
}

/// What `oneOf` compares between alternatives: the JSON types a (flattened) schema admits
/// (`*`: any) and its discriminators.
fn signature(v: &Value) -> (Vec<&'static str>, Vec<(String, Vec<Value>)>) {
    match v {
        Value::Object(m) => (possible_types(m), discriminators(m)),
        _ => (vec!["*"], vec![]),
    }
}

/// The required properties of a flattened object schema whose own schema lists its values
/// (`enum`/`const`), with those values.
fn discriminators(o: &Map<String, Value>) -> Vec<(String, Vec<Value>)> {
    let required: Vec<&str> = o
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = o.get("properties").and_then(Value::as_object) else {
        return vec![];
    };
    /// The values a schema lists (`enum`, `const`, or those of its `allOf` parts, intersected).
    fn listed(v: &Value) -> Option<Vec<Value>> {
        let p = v.as_object()?;
        let mut values: Option<Vec<Value>> = p.get("enum").and_then(Value::as_array).cloned();
        let mut narrow = |vals: Vec<Value>| {
            values = Some(match values.take() {
                Some(v) => v
                    .into_iter()
                    .filter(|x| vals.iter().any(|y| json_eq(x, y)))
                    .collect(),
                None => vals,
            });
        };
        if let Some(c) = p.get("const") {
            narrow(vec![c.clone()]);
        }
        for part in p
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(vals) = listed(part) {
                narrow(vals);
            }
        }
        values
    }
    let mut out = vec![];
    for name in required {
        if let Some(v) = props.get(name).and_then(listed) {
            out.push((name.to_string(), v));
        }
    }
    out
}

impl<'a> Lowerer<'a> {
    /// `anyOf` / `oneOf`: one alternative per item, each merged with the sibling keywords.
    pub(super) fn alternatives(
        &mut self,
        o: &Map<String, Value>,
        key: &str,
        alts: &Value,
        ptr: &str,
        depth: usize,
    ) -> Lowered {
        let kptr = push_pointer(ptr, key);
        let items = alts.as_array().ok_or_else(|| SchemaError::BadKeyword {
            pointer: ptr.into(),
            keyword: key.into(),
            reason: "not an array".into(),
        })?;
        let mut rest = o.clone();
        rest.remove(key);
        let rest = Value::Object(rest);
        let mut subs = vec![];
        let mut signatures = vec![];
        let no_siblings = matches!(&rest, Value::Object(m) if m.is_empty());
        for (i, item) in items.iter().enumerate() {
            let iptr = push_pointer(&kptr, &i.to_string());
            // An item that is only a `$ref`, without sibling keywords to merge into it, is the
            // target's own language: its one nonterminal, shared by every such use, so that
            // definitions that each use the next twice compile in linear size.
            let item = &*super::refs::effective(self.root, item);
            if let (true, Some(r)) = (no_siblings, pure_ref(item)) {
                if key == "oneOf" {
                    let f = flatten(self.root, item, &iptr, 0, &mut self.expansions)?;
                    if let Value::Object(_) | Value::Bool(true) = &f {
                        signatures.push(signature(&f));
                    }
                }
                subs.push(self.reference(r, &iptr, depth + 1)?);
                continue;
            }
            let f = flatten(self.root, item, &iptr, 0, &mut self.expansions)?;
            let merged = match merge(&rest, &f, &iptr) {
                Ok(m) => m,
                Err(e) if is_contradiction(&e) => continue,
                Err(e) => return Err(e),
            };
            if let Value::Object(_) | Value::Bool(true) = &merged {
                signatures.push(signature(&merged));
            }
            if let Some(s) = self.flat(&merged, &iptr, depth + 1)? {
                subs.push(s);
            }
        }
        if key == "oneOf" {
            // Disjoint when the JSON types differ, or when both require a property whose
            // `enum`/`const` values differ (a discriminator).
            let overlap = signatures.iter().enumerate().any(|(i, (ta, da))| {
                signatures[i + 1..].iter().any(|(tb, db)| {
                    let types = ta
                        .iter()
                        .any(|t| *t == "*" || tb.contains(t) || tb.contains(&"*"));
                    let discriminated = da.iter().any(|(name, va)| {
                        db.iter().any(|(n, vb)| {
                            n == name && !va.iter().any(|x| vb.iter().any(|y| json_eq(x, y)))
                        })
                    });
                    types && !discriminated
                })
            });
            if overlap {
                if let Some(exclusive) = self.exclusive_alternatives(&rest, items, &kptr, depth)? {
                    subs = exclusive;
                } else {
                    self.unsupported(
                        ptr,
                        "oneOf",
                        "alternatives of the same JSON type may overlap, and not every \
                         alternative has a complement lacuna can lower to exclude it from the \
                         others (compiled as anyOf)",
                    )?;
                }
            }
        }
        if subs.is_empty() {
            return Ok(None);
        }
        let nt = self.fresh("alt");
        for s in subs {
            self.rule(nt, vec![Symbol::N(s)], ptr)?;
        }
        Ok(Some(nt))
    }

    /// `oneOf` made exclusive: alternative i is item i, the siblings `rest`, and the
    /// complement of every other item (`not`, see [`super::negation`]) — exactly one item
    /// holds. `None` when some item has no lowerable complement or the merge is not exact
    /// (the caller then refuses the `oneOf`); a budget exceeded is also `None` here, since the
    /// refusal names the keyword better.
    fn exclusive_alternatives(
        &mut self,
        rest: &Value,
        items: &[Value],
        kptr: &str,
        depth: usize,
    ) -> Result<Option<Vec<NonterminalId>>, SchemaError> {
        let mut complements = vec![];
        for item in items {
            match super::negation::negate(self.root, item, 0) {
                Some(c) => complements.push(c),
                None => return Ok(None),
            }
        }
        let mut subs = vec![];
        for (i, item) in items.iter().enumerate() {
            let iptr = push_pointer(kptr, &i.to_string());
            let mut parts = vec![item.clone()];
            parts.extend(
                complements
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, c)| c.clone()),
            );
            let alone = serde_json::json!({ "allOf": parts });
            let merged = flatten(self.root, &alone, &iptr, 0, &mut self.expansions)
                .and_then(|f| merge(rest, &f, &iptr));
            let merged = match merged {
                Ok(m) => m,
                Err(e) if is_contradiction(&e) => continue,
                Err(_) => return Ok(None),
            };
            if let Some(s) = self.flat(&merged, &iptr, depth + 1)? {
                subs.push(s);
            }
        }
        Ok(Some(subs))
    }
}
