//! `anyOf` and `oneOf`: one alternative per item, each merged with the sibling keywords. A
//! `oneOf` is exact when its alternatives are disjoint by construction (JSON types, a
//! discriminating property or the types of a property both require, string patterns or
//! formats whose automata do not intersect), or when each has a complement (`not`, see
//! [`super::negation`]) that can exclude it from the others; otherwise it is refused.

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

/// The JSON types, folded as [`possible_types`] folds them.
const TYPES: [&str; 6] = ["null", "boolean", "object", "array", "number", "string"];

/// Keywords that constrain values of one type only, with that type: a schema of these, `type`
/// and annotations admits every value of each of its other types.
const ONE_TYPE_KEYWORDS: &[(&str, &str)] = &[
    ("properties", "object"),
    ("required", "object"),
    ("additionalProperties", "object"),
    ("patternProperties", "object"),
    ("minProperties", "object"),
    ("maxProperties", "object"),
    ("dependencies", "object"),
    ("dependentRequired", "object"),
    ("pattern", "string"),
    ("format", "string"),
    ("minLength", "string"),
    ("maxLength", "string"),
    ("items", "array"),
    ("prefixItems", "array"),
    ("minItems", "array"),
    ("maxItems", "array"),
    ("minimum", "number"),
    ("maximum", "number"),
    ("exclusiveMinimum", "number"),
    ("exclusiveMaximum", "number"),
];

/// The one type `keyword` constrains, if it constrains only one.
fn constrained_type(keyword: &str) -> Option<&'static str> {
    ONE_TYPE_KEYWORDS
        .iter()
        .find(|(k, _)| *k == keyword)
        .map(|&(_, t)| t)
}

/// What `oneOf` compares between alternatives, from a flattened schema.
struct Signature {
    /// The JSON types it admits.
    types: Vec<&'static str>,
    /// The types of which it admits every value (its keywords constrain other types only).
    free: Vec<&'static str>,
    /// Required properties whose values are listed (`enum`/`const`), with those values.
    discriminators: Vec<(String, Vec<Value>)>,
    /// The values it lists, if it is an `enum`/`const`.
    listed: Option<Vec<Value>>,
    /// Its required property names.
    required: Vec<String>,
    /// Its declared property names, when no other name may appear (`additionalProperties:
    /// false`, no `patternProperties`).
    closed: Option<Vec<String>>,
    /// Required properties with the JSON types their own schemas admit.
    required_types: Vec<(String, Vec<&'static str>)>,
    /// The regex of the strings it admits, where a `pattern` or `format` constrains them
    /// (`None`: unconstrained, or not expressible as one regex).
    strings: Option<String>,
}

impl Signature {
    fn of(v: &Value) -> Signature {
        let Value::Object(m) = v else {
            return Signature {
                types: TYPES.to_vec(),
                free: TYPES.to_vec(),
                discriminators: vec![],
                listed: None,
                required: vec![],
                closed: None,
                required_types: vec![],
                strings: None,
            };
        };
        let types = possible_types(m);
        // The types its keywords constrain (`None`: a keyword that may constrain any).
        let constrained: Option<Vec<&str>> = m
            .keys()
            .filter(|k| *k != "type" && !super::refs::is_annotation(k))
            .map(|k| constrained_type(k))
            .collect();
        let named = |t: &str| match m.get("type") {
            Some(Value::String(s)) => s == t,
            Some(Value::Array(a)) => a.iter().any(|x| x == t),
            _ => false,
        };
        // `integer` is folded into `number` but admits only some numbers.
        let only_integers = named("integer") && !named("number");
        let free = match constrained {
            Some(constrained) => types
                .iter()
                .copied()
                .filter(|t| !(constrained.contains(t) || (*t == "number" && only_integers)))
                .collect(),
            None => vec![],
        };
        let closed = (m.get("additionalProperties") == Some(&Value::Bool(false))
            && !m.contains_key("patternProperties"))
        .then(|| {
            m.get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default()
        });
        Signature {
            types,
            free,
            discriminators: discriminators(m),
            listed: listed(v),
            required: required_names(m).into_iter().map(String::from).collect(),
            closed,
            required_types: required_types(m),
            strings: constrained_strings(m),
        }
    }

    /// Whether some value of type `t` may satisfy both.
    fn overlaps_on(&self, other: &Signature, t: &str) -> bool {
        if !self.types.contains(&t) || !other.types.contains(&t) {
            return false;
        }
        if let (Some(a), Some(b)) = (&self.listed, &other.listed) {
            if !a.iter().any(|x| b.iter().any(|y| json_eq(x, y))) {
                return false;
            }
        }
        if t == "string" {
            if let (Some(a), Some(b)) = (&self.strings, &other.strings) {
                return super::strings::regexes_intersect(a, b);
            }
        }
        if t != "object" {
            return true;
        }
        let discriminated = self.discriminators.iter().any(|(name, va)| {
            other
                .discriminators
                .iter()
                .any(|(n, vb)| n == name && !va.iter().any(|x| vb.iter().any(|y| json_eq(x, y))))
        });
        // One requires a name the other, closed, cannot have.
        let excluded = |a: &Signature, b: &Signature| {
            b.closed
                .as_ref()
                .is_some_and(|names| a.required.iter().any(|r| !names.contains(r)))
        };
        // A property both require whose schemas admit no common JSON type.
        let typed_apart = self.required_types.iter().any(|(name, ta)| {
            other
                .required_types
                .iter()
                .any(|(n, tb)| n == name && !ta.iter().any(|t| tb.contains(t)))
        });
        !discriminated && !typed_apart && !excluded(self, other) && !excluded(other, self)
    }
}

/// The required properties of a flattened object schema with the types their schemas admit
/// (a superset: [`possible_types`] reads only `type`, `enum` and `const`).
fn required_types(o: &Map<String, Value>) -> Vec<(String, Vec<&'static str>)> {
    let Some(props) = o.get("properties").and_then(Value::as_object) else {
        return vec![];
    };
    required_names(o)
        .into_iter()
        .filter_map(|name| match props.get(name)? {
            Value::Object(p) => Some((name.to_string(), possible_types(p))),
            _ => None,
        })
        .collect()
}

/// The regex of the JSON strings a flattened schema admits, when a `pattern` or an enforced
/// `format` constrains them (with its length bounds, if a regex can say them).
fn constrained_strings(o: &Map<String, Value>) -> Option<String> {
    let pattern = o.get("pattern").and_then(Value::as_str);
    let format = o
        .get("format")
        .and_then(Value::as_str)
        .filter(|f| super::strings::format_regex(f).is_some());
    if pattern.is_none() && format.is_none() {
        return None;
    }
    let length = |k: &str| o.get(k).and_then(Value::as_u64);
    let spec = super::strings::StringSpec {
        min_length: length("minLength").unwrap_or(0),
        max_length: length("maxLength"),
        pattern,
        format,
    };
    super::strings::string_regex(&spec).ok().flatten()
}

fn required_names(o: &Map<String, Value>) -> Vec<&str> {
    o.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

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

/// The types no value of which satisfies exactly one alternative, because two alternatives
/// admit all of its values (a value of that type then satisfies two).
fn dead_types(signatures: &[Signature]) -> Vec<&'static str> {
    TYPES
        .into_iter()
        .filter(|t| signatures.iter().filter(|s| s.free.contains(t)).count() >= 2)
        .collect()
}

/// Whether two alternatives may hold of one value, leaving out the types in `dead`.
fn may_overlap(signatures: &[Signature], dead: &[&str]) -> bool {
    signatures.iter().enumerate().any(|(i, a)| {
        signatures[i + 1..].iter().any(|b| {
            TYPES
                .iter()
                .any(|t| !dead.contains(t) && a.overlaps_on(b, t))
        })
    })
}

/// The required properties of a flattened object schema whose own schema lists its values
/// (`enum`/`const`), with those values.
fn discriminators(o: &Map<String, Value>) -> Vec<(String, Vec<Value>)> {
    let required = required_names(o);
    let Some(props) = o.get("properties").and_then(Value::as_object) else {
        return vec![];
    };
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
        let no_siblings = matches!(&rest, Value::Object(m) if m.is_empty());
        // Each item merged with the siblings (`None`: a pure `$ref` lowered as its target's
        // own nonterminal), with its flattened schema for `oneOf`'s comparisons.
        let mut prepared: Vec<(String, Option<String>, Value)> = vec![];
        for (i, item) in items.iter().enumerate() {
            let iptr = push_pointer(&kptr, &i.to_string());
            // An item that is only a `$ref`, without sibling keywords to merge into it, is the
            // target's own language: its one nonterminal, shared by every such use, so that
            // definitions that each use the next twice compile in linear size.
            let item = super::refs::effective(self.root, item);
            if let (true, Some(r)) = (no_siblings, pure_ref(&item)) {
                let r = r.to_string();
                let f = if key == "oneOf" {
                    flatten(self.root, &item, &iptr, 0, &mut self.expansions)?.into_owned()
                } else {
                    Value::Bool(true)
                };
                prepared.push((iptr, Some(r), f));
                continue;
            }
            let f = flatten(self.root, &item, &iptr, 0, &mut self.expansions)?;
            match merge(&rest, &f, &iptr) {
                Ok(m) => prepared.push((iptr, None, m)),
                Err(e) if is_contradiction(&e) => continue,
                Err(e) => return Err(e),
            }
        }
        let mut dead = vec![];
        let mut overlap = false;
        if key == "oneOf" {
            // Disjoint when no value of any type can satisfy two alternatives: their types
            // differ, their listed values differ, a required property's listed values differ
            // (a discriminator), or one requires a name the other, closed, cannot have. A type
            // whose every value two alternatives admit is left out of all of them.
            let signatures: Vec<Signature> = prepared
                .iter()
                .filter(|(_, _, v)| matches!(v, Value::Object(_) | Value::Bool(true)))
                .map(|(_, _, v)| Signature::of(v))
                .collect();
            dead = dead_types(&signatures);
            overlap = may_overlap(&signatures, &dead);
        }
        let mut subs = vec![];
        for (iptr, reference, merged) in prepared {
            if let (Some(r), true) = (&reference, dead.is_empty()) {
                subs.push(self.reference(r, &iptr, depth + 1)?);
                continue;
            }
            let merged = if dead.is_empty() {
                merged
            } else {
                let live: Vec<&str> = TYPES.into_iter().filter(|t| !dead.contains(t)).collect();
                match merge(&merged, &serde_json::json!({ "type": live }), &iptr) {
                    Ok(m) => m,
                    Err(e) if is_contradiction(&e) => continue,
                    Err(e) => return Err(e),
                }
            };
            if let Some(s) = self.flat(&merged, &iptr, depth + 1)? {
                subs.push(s);
            }
        }
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
