//! Schema documents before lowering: `$ref` resolution (local JSON pointers, `#`, `$anchor`s,
//! the root's `$id`), keyword classes (annotations, keywords lacuna cannot enforce), and
//! `allOf` merging — the conjunction of subschemas folded into one schema object wherever the
//! merge is exact (otherwise an error names the keyword that cannot be merged).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::error::{push_pointer, SchemaError};
use super::keywords::check_shapes;
use super::multiples::Step;

/// How deep `$ref`/`allOf` chains are followed while merging (a cycle hits this).
pub const MAX_MERGE_DEPTH: usize = 32;
/// The most alternatives an `anyOf` × `anyOf` product may have.
pub const MAX_ALTERNATIVES: usize = 256;
/// The most subschemas one compilation may expand, counted as calls of [`flatten`] (one per
/// schema object it visits: each subschema lowered, each `$ref` target and `allOf` item merged
/// into it). `$ref` targets and `allOf` items are copied, not shared, so definitions that each
/// use the next one k times cost kⁿ expansions for n definitions, which [`MAX_MERGE_DEPTH`]
/// only caps at about k¹⁶ (4¹⁶ ≈ 4·10⁹); with this budget such a schema fails fast with an
/// error naming it. (Sharing flattened targets would not bound the work alone: a merged value
/// can double in size at each level.)
pub const MAX_EXPANSIONS: usize = 100_000;

/// The subschemas expanded so far in one compilation, against [`MAX_EXPANSIONS`].
#[derive(Debug, Default)]
pub struct Expansions(usize);

impl Expansions {
    /// Counts one expansion of the subschema at `ptr`.
    fn charge(&mut self, ptr: &str) -> Result<(), SchemaError> {
        self.0 += 1;
        if self.0 > MAX_EXPANSIONS {
            return Err(SchemaError::Budget {
                pointer: ptr.to_string(),
                what: "the number of subschemas expanded through `$ref`/`allOf` (one per \
                       subschema visited; a definition used twice is expanded twice)"
                    .into(),
                limit: MAX_EXPANSIONS,
            });
        }
        Ok(())
    }
}

/// Keywords that carry no constraint (annotations, identifiers, containers of definitions).
pub const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "example",
    "$schema",
    "$id",
    "id",
    "$comment",
    "$defs",
    "definitions",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
    "readOnly",
    "writeOnly",
    "deprecated",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "discriminator",
    "xml",
    "externalDocs",
];

/// Annotations that neither constrain a value nor tell a `$ref` where to go: a copy of the
/// document without them ([`without_inert_annotations`]) lets [`flatten`] return most
/// subschemas as they are.
const INERT_ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "example",
    "$comment",
    "readOnly",
    "writeOnly",
    "deprecated",
];

/// Below this nesting the copy keeps annotations (only the copy's speed depends on it).
const MAX_STRIP_DEPTH: usize = 64;

/// The document without [`INERT_ANNOTATIONS`] wherever a keyword holds subschemas, so that
/// [`flatten`] copies none of them: a large document's descriptions were copied once at every
/// level of its nesting. Only keywords known to hold schemas are entered (a `const` value or a
/// property *named* `description` stays as it is); a schema the walk does not reach keeps its
/// annotations and is flattened as before. Every pointer into the document still leads where
/// it did, unless it led into a removed annotation (no schema lives there).
pub fn without_inert_annotations(schema: &Value) -> Value {
    strip(schema, 0)
}

fn strip(schema: &Value, depth: usize) -> Value {
    let Value::Object(o) = schema else {
        return schema.clone();
    };
    if depth > MAX_STRIP_DEPTH {
        return schema.clone();
    }
    let one = |v: &Value| strip(v, depth + 1);
    let each = |v: &Value| match v {
        Value::Array(a) => Value::Array(a.iter().map(one).collect()),
        other => one(other),
    };
    let values = |v: &Value| match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), one(x))).collect()),
        other => other.clone(),
    };
    let mut out = Map::with_capacity(o.len());
    for (k, v) in o {
        if INERT_ANNOTATIONS.contains(&k.as_str()) {
            continue;
        }
        let v = match k.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
            | "dependencies" => values(v),
            "items" | "prefixItems" | "allOf" | "anyOf" | "oneOf" => each(v),
            "additionalProperties"
            | "additionalItems"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties" => one(v),
            _ => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    Value::Object(out)
}

/// Keywords lacuna knows but cannot enforce: an error in strict mode, a warning in lenient.
pub const UNSUPPORTED: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "multipleOf",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
    "$recursiveRef",
];

/// Whether a `$ref` hides its sibling keywords, as in drafts 4, 6 and 7 ("All other properties
/// in a `$ref` object MUST be ignored"); from 2019-09 on they apply beside it. Read off the
/// root's `$schema`; a document without one follows the newest draft, as validators do.
pub fn ref_hides_siblings(root: &Value) -> bool {
    root_draft_among(root, &[DRAFT_04, DRAFT_06, DRAFT_07])
}

pub const DRAFT_04: &str = "http://json-schema.org/draft-04/schema";
pub const DRAFT_06: &str = "http://json-schema.org/draft-06/schema";
pub const DRAFT_07: &str = "http://json-schema.org/draft-07/schema";

/// Whether the root's `$schema` names one of `drafts` (with or without the trailing `#`).
pub fn root_draft_among(root: &Value, drafts: &[&str]) -> bool {
    root.get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|m| drafts.contains(&m.trim_end_matches('#')))
}

/// `schema` as it constrains: with a `$ref` under [`ref_hides_siblings`], the `$ref` alone.
pub fn effective<'v>(root: &Value, schema: &'v Value) -> Cow<'v, Value> {
    match schema.as_object() {
        Some(o) if o.len() > 1 && o.contains_key("$ref") && ref_hides_siblings(root) => {
            let mut only = Map::new();
            only.insert("$ref".into(), o["$ref"].clone());
            Cow::Owned(Value::Object(only))
        }
        _ => Cow::Borrowed(schema),
    }
}

pub fn is_annotation(k: &str) -> bool {
    ANNOTATIONS.contains(&k)
}

/// Resolves a `$ref` against the root document; returns the target and its pointer.
pub fn resolve<'a>(
    root: &'a Value,
    reference: &str,
    at: &str,
) -> Result<(&'a Value, String), SchemaError> {
    let bad = |reason: &str| SchemaError::BadRef {
        pointer: at.to_string(),
        target: reference.to_string(),
        reason: reason.to_string(),
    };
    let (base, fragment) = match reference.split_once('#') {
        Some((b, f)) => (b, f),
        None => (reference, ""),
    };
    if !base.is_empty() {
        let root_id = root
            .get("$id")
            .or_else(|| root.get("id"))
            .and_then(Value::as_str);
        if root_id.map(|id| id.trim_end_matches('#')) != Some(base) {
            return Err(bad("only references into this document are supported"));
        }
    }
    if fragment.is_empty() {
        return Ok((root, String::new()));
    }
    if !fragment.starts_with('/') {
        return find_anchor(root, fragment, "").ok_or_else(|| bad("no `$anchor` of that name"));
    }
    let mut cur = root;
    let mut ptr = String::new();
    for raw in fragment[1..].split('/') {
        let token = percent_decode(raw)
            .map_err(|reason| bad(&reason))?
            .replace("~1", "/")
            .replace("~0", "~");
        cur = match cur {
            Value::Object(m) => m.get(&token),
            Value::Array(a) => token.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        }
        .ok_or_else(|| bad(&format!("no member {token:?} at {ptr:?}")))?;
        ptr = push_pointer(&ptr, &token);
    }
    Ok((cur, ptr))
}

fn find_anchor<'a>(v: &'a Value, name: &str, ptr: &str) -> Option<(&'a Value, String)> {
    match v {
        Value::Object(m) => {
            if m.get("$anchor").and_then(Value::as_str) == Some(name) {
                return Some((v, ptr.to_string()));
            }
            m.iter()
                .find_map(|(k, c)| find_anchor(c, name, &push_pointer(ptr, k)))
        }
        Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, c)| find_anchor(c, name, &push_pointer(ptr, &i.to_string()))),
        _ => None,
    }
}

/// Decodes the `%XX` escapes of a URI fragment (RFC 3986) byte by byte; the decoded bytes must
/// be UTF-8. A `%` not followed by two hex digits is an error, not a literal `%`.
fn percent_decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        let hex = |k: usize| b.get(k).and_then(|d| char::from(*d).to_digit(16));
        match (hex(i + 1), hex(i + 2)) {
            (Some(hi), Some(lo)) => out.push((hi * 16 + lo) as u8),
            _ => {
                return Err(format!(
                    "`%` at byte {i} of {s:?} does not start a percent-escape `%XX`"
                ))
            }
        }
        i += 3;
    }
    String::from_utf8(out)
        .map_err(|_| format!("the percent-escapes of {s:?} do not decode to UTF-8"))
}

/// A schema with its top-level `$ref` and `allOf` folded in: a boolean, or an object with
/// neither keyword. `items` given as an array (draft 4–2019) becomes `prefixItems` (with
/// `additionalItems` as `items`). Annotations are dropped. Every schema object visited has its
/// keyword values checked (module `keywords`) and is charged to `spent`.
pub fn flatten<'v>(
    root: &Value,
    schema: &'v Value,
    ptr: &str,
    depth: usize,
    spent: &mut Expansions,
) -> Result<Cow<'v, Value>, SchemaError> {
    spent.charge(ptr)?;
    if depth > MAX_MERGE_DEPTH {
        return Err(SchemaError::Budget {
            pointer: ptr.to_string(),
            what: "the nesting of `$ref`/`allOf` merges".into(),
            limit: MAX_MERGE_DEPTH,
        });
    }
    let effective = effective(root, schema);
    if let Cow::Borrowed(Value::Object(obj)) = effective {
        if nothing_to_fold(obj) {
            check_shapes(obj, ptr)?;
            return Ok(Cow::Borrowed(schema));
        }
    }
    let schema = &*effective;
    let obj = match schema {
        Value::Bool(_) => return Ok(Cow::Owned(schema.clone())),
        Value::Object(o) => o,
        other => {
            return Err(SchemaError::NotASchema {
                pointer: ptr.to_string(),
                found: kind_name(other).into(),
            })
        }
    };
    check_shapes(obj, ptr)?;
    let mut own = Map::new();
    for (k, v) in obj {
        if k == "$ref" || k == "allOf" || is_annotation(k) {
            continue;
        }
        own.insert(k.clone(), v.clone());
    }
    if let Some(items @ Value::Array(_)) = own.get("items").cloned() {
        own.remove("items");
        own.insert("prefixItems".into(), items);
        if let Some(extra) = own.remove("additionalItems") {
            own.insert("items".into(), extra);
        }
    } else {
        own.remove("additionalItems");
    }
    let mut acc = Value::Object(own);
    if let Some(n) = obj.get("not") {
        // Before `$ref`/`allOf` are merged in: a `not` of theirs that stays is then never
        // mistaken for this one.
        acc = with_negation(root, acc, n, ptr, depth, spent)?;
    }
    // The names the merged parts declare, in their order (repeats are harmless): where the
    // schema writes `$ref` or `allOf` before its own `properties`, their members come first.
    let first = parts_first(obj);
    let mut part_names: Vec<String> = vec![];
    let mut note_names = |part: &Value| {
        if !first {
            return;
        }
        if let Some(Value::Object(p)) = part.get("properties") {
            part_names.extend(p.keys().cloned());
        }
    };
    if let Some(r) = obj.get("$ref") {
        let r = r.as_str().ok_or_else(|| SchemaError::BadKeyword {
            pointer: ptr.to_string(),
            keyword: "$ref".into(),
            reason: "not a string".into(),
        })?;
        let (target, tptr) = resolve(root, r, ptr)?;
        let t = flatten(root, target, &tptr, depth + 1, spent)?;
        note_names(&t);
        let (a, t) = super::conditionals::apart(root, acc, t.into_owned(), ptr)?;
        acc = merge(&a, &t, ptr)?;
    }
    if let Some(all) = obj.get("allOf") {
        let items = all.as_array().ok_or_else(|| SchemaError::BadKeyword {
            pointer: ptr.to_string(),
            keyword: "allOf".into(),
            reason: "not an array".into(),
        })?;
        let aptr = push_pointer(ptr, "allOf");
        for (i, item) in items.iter().enumerate() {
            let iptr = push_pointer(&aptr, &i.to_string());
            let f = flatten(root, item, &iptr, depth + 1, spent)?;
            note_names(&f);
            let (a, f) = super::conditionals::apart(root, acc, f.into_owned(), &aptr)?;
            acc = merge(&a, &f, &aptr)?;
        }
    }
    if first {
        put_first(&mut acc, &part_names);
    }
    Ok(Cow::Owned(acc))
}

/// Whether `o` writes `$ref` or `allOf` before its own `properties` (and has both). Objects of
/// more declared properties than the any-order budget take them in one order, and the order
/// the author wrote is the one instances follow (`{"allOf": [{"$ref": "#/$defs/rule"}],
/// "properties": {"threshold": …}}`: the rule's `active` first).
fn parts_first(o: &Map<String, Value>) -> bool {
    let at = |k: &str| o.keys().position(|x| x == k);
    let Some(own) = at("properties") else {
        return false;
    };
    [at("$ref"), at("allOf")]
        .into_iter()
        .flatten()
        .any(|p| p < own)
}

/// Reorders `schema`'s `properties` so that `names` (those present) come first, in their
/// order, and the rest after them in theirs.
fn put_first(schema: &mut Value, names: &[String]) {
    let Some(Value::Object(props)) = schema.get_mut("properties") else {
        return;
    };
    if names.is_empty() || props.keys().zip(names).all(|(a, b)| a == b) {
        return;
    }
    // Linear: removing each name from the map in place shifts the rest each time, quadratic
    // in the number of properties (1.5 s for 20,000 of them on each side).
    let entries: Vec<(String, Value)> = std::mem::take(props).into_iter().collect();
    let order = {
        let index: hashbrown::HashMap<&str, usize> = entries
            .iter()
            .enumerate()
            .map(|(i, (k, _))| (k.as_str(), i))
            .collect();
        let mut placed = vec![false; entries.len()];
        let mut order = Vec::with_capacity(entries.len());
        for name in names {
            if let Some(&i) = index.get(name.as_str()) {
                if !std::mem::replace(&mut placed[i], true) {
                    order.push(i);
                }
            }
        }
        order.extend((0..entries.len()).filter(|&i| !placed[i]));
        order
    };
    let mut slots: Vec<Option<(String, Value)>> = entries.into_iter().map(Some).collect();
    for i in order {
        let (k, v) = slots[i].take().expect("each entry placed once");
        props.insert(k, v);
    }
}

/// Whether [`flatten`] would return a schema object as it is: no keyword to merge in, drop or
/// rename. Most subschemas of a large document are such, and copying them at every level
/// (their subschemas with them) was a tenth of a large schema's compilation.
fn nothing_to_fold(o: &Map<String, Value>) -> bool {
    o.keys().all(|k| {
        !matches!(k.as_str(), "$ref" | "allOf" | "not" | "additionalItems") && !is_annotation(k)
    }) && !o.get("items").is_some_and(Value::is_array)
}

/// `acc` (which holds `not: n`) with the `not` replaced by its complement merged in, where
/// [`negation::negate`](super::negation::negate) finds one and the merge is exact; a
/// contradiction makes the schema `false`. Otherwise `acc` as it is: the `not` is refused
/// (strict) or dropped with a warning (lenient) when lowered.
fn with_negation(
    root: &Value,
    acc: Value,
    n: &Value,
    ptr: &str,
    depth: usize,
    spent: &mut Expansions,
) -> Result<Value, SchemaError> {
    let Some(complement) = super::negation::negate(root, n, depth) else {
        return Ok(acc);
    };
    let nptr = push_pointer(ptr, "not");
    let mut without = acc.clone();
    if let Value::Object(m) = &mut without {
        m.remove("not");
    }
    let merged = flatten(root, &complement, &nptr, depth + 1, spent)
        .and_then(|f| merge(&without, &f, &nptr));
    match merged {
        Ok(v) => Ok(v),
        Err(e @ SchemaError::Budget { .. }) => Err(e),
        Err(e) if is_contradiction(&e) => Ok(Value::Bool(false)),
        Err(_) => Ok(acc),
    }
}

/// Whether a [`merge`] error only says that the two sides admit no common value (its
/// "contradictory types" and empty `enum`/`const` intersections).
pub fn is_contradiction(e: &SchemaError) -> bool {
    matches!(e, SchemaError::Merge { reason, .. }
        if reason.starts_with("contradictory") || reason.starts_with("`enum`/`const` values"))
}

pub fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// JSON equality as JSON Schema defines it (`1` equals `1.0`).
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn all_of(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Bool(true), x) | (x, Value::Bool(true)) => x.clone(),
        _ if a == b => a.clone(),
        _ => serde_json::json!({ "allOf": [a, b] }),
    }
}

fn type_set(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(a) => a.iter().map(|t| t.as_str().map(String::from)).collect(),
        _ => None,
    }
}

/// The conjunction of two flattened schemas as one schema, where that is exact.
pub fn merge(a: &Value, b: &Value, ptr: &str) -> Result<Value, SchemaError> {
    let (a, b) = match (a, b) {
        (Value::Bool(false), _) | (_, Value::Bool(false)) => return Ok(Value::Bool(false)),
        (Value::Bool(true), x) | (x, Value::Bool(true)) => return Ok(x.clone()),
        (Value::Object(a), Value::Object(b)) => (a, b),
        _ => unreachable!("flatten returns booleans and objects"),
    };
    let err = |reason: String| SchemaError::Merge {
        pointer: ptr.to_string(),
        reason,
    };
    // `if`/`then`/`else` mean something only together (conditionals.rs): a part's `then` or
    // `else` without its `if` does nothing, and one schema holds one condition.
    let (a_if, b_if) = (a.contains_key("if"), b.contains_key("if"));
    if a_if && b_if && !super::conditionals::same_condition(a, b) {
        return Err(err(
            "two parts' `if` cannot be combined in one schema".into()
        ));
    }
    let mut out = a.clone();
    if !a_if {
        out.remove("then");
        out.remove("else");
    }
    for (k, bv) in b {
        if !b_if && (k == "then" || k == "else") {
            continue;
        }
        let Some(av) = out.get(k) else {
            out.insert(k.clone(), bv.clone());
            continue;
        };
        if av == bv {
            continue;
        }
        let merged = match k.as_str() {
            "type" => {
                let (Some(x), Some(y)) = (type_set(av), type_set(bv)) else {
                    return Err(err("`type` is not a string or a list of strings".into()));
                };
                let mut t: Vec<Value> = vec![];
                for s in &x {
                    for u in &y {
                        let m = if s == u {
                            Some(s.as_str())
                        } else if (s == "integer" && u == "number")
                            || (s == "number" && u == "integer")
                        {
                            Some("integer")
                        } else {
                            None
                        };
                        if let Some(m) = m {
                            if !t.iter().any(|v| v == m) {
                                t.push(Value::String(m.into()));
                            }
                        }
                    }
                }
                if t.is_empty() {
                    return Err(err(format!("contradictory types {av} and {bv}")));
                }
                Value::Array(t)
            }
            "enum" | "const" => continue, // handled below, after the loop
            "required" => {
                let mut r = av.as_array().cloned().unwrap_or_default();
                for x in bv.as_array().into_iter().flatten() {
                    if !r.contains(x) {
                        r.push(x.clone());
                    }
                }
                Value::Array(r)
            }
            "properties" | "additionalProperties" | "patternProperties" => continue,
            "items" | "contentSchema" => all_of(av, bv),
            "prefixItems" => continue,
            "minLength" | "minItems" | "minProperties" | "minimum" | "exclusiveMinimum"
                if av.is_number() && bv.is_number() =>
            {
                if av.as_f64() >= bv.as_f64() {
                    av.clone()
                } else {
                    bv.clone()
                }
            }
            "maxLength" | "maxItems" | "maxProperties" | "maximum" | "exclusiveMaximum"
                if av.is_number() && bv.is_number() =>
            {
                if av.as_f64() <= bv.as_f64() {
                    av.clone()
                } else {
                    bv.clone()
                }
            }
            "anyOf" => {
                let (Some(x), Some(y)) = (av.as_array(), bv.as_array()) else {
                    return Err(err("`anyOf` is not an array".into()));
                };
                if x.len() * y.len() > MAX_ALTERNATIVES {
                    return Err(SchemaError::Budget {
                        pointer: ptr.to_string(),
                        what: "the product of two `anyOf`s".into(),
                        limit: MAX_ALTERNATIVES,
                    });
                }
                let mut alts = vec![];
                for p in x {
                    for q in y {
                        alts.push(serde_json::json!({ "allOf": [p, q] }));
                    }
                }
                Value::Array(alts)
            }
            // Multiples of both steps: multiples of their least common multiple.
            "multipleOf" => {
                let steps = av
                    .as_number()
                    .and_then(Step::from_json)
                    .zip(bv.as_number().and_then(Step::from_json));
                match steps.and_then(|(x, y)| x.lcm(y)) {
                    Some(l) => serde_json::from_str(&l.to_string())
                        .map_err(|e| err(format!("`multipleOf` {l}: {e}")))?,
                    None => {
                        return Err(err(format!(
                            "two different values of `multipleOf` ({av} and {bv}) cannot be \
                             combined into one step"
                        )))
                    }
                }
            }
            "nullable" => Value::Bool(av.as_bool() == Some(true) && bv.as_bool() == Some(true)),
            // Both sides' dependencies hold: united, a shared trigger's names too (they are
            // enforced by the object lowering, so neither side may be dropped).
            "dependentRequired" | "dependencies" => {
                let (Some(x), Some(y)) = (av.as_object(), bv.as_object()) else {
                    return Err(err(format!("`{k}` is not an object")));
                };
                let mut m = x.clone();
                for (t, needs) in y {
                    match (m.get(t).and_then(Value::as_array), needs.as_array()) {
                        (None, _) => {
                            m.insert(t.clone(), needs.clone());
                        }
                        (Some(a), Some(b)) => {
                            let mut u = a.clone();
                            u.extend(b.iter().filter(|n| !a.contains(n)).cloned());
                            m.insert(t.clone(), Value::Array(u));
                        }
                        (Some(_), None) => {
                            return Err(err(format!(
                                "two different dependencies of `{t}` cannot be combined"
                            )))
                        }
                    }
                }
                Value::Object(m)
            }
            _ if UNSUPPORTED.contains(&k.as_str()) => av.clone(),
            _ => {
                return Err(err(format!(
                    "two different values of `{k}` ({av} and {bv}) cannot be combined"
                )))
            }
        };
        out.insert(k.clone(), merged);
    }
    merge_enums(a, b, &mut out).map_err(err)?;
    merge_objects(a, b, &mut out).map_err(err)?;
    merge_prefix(a, b, &mut out);
    Ok(Value::Object(out))
}

fn enum_of(m: &Map<String, Value>) -> Option<Vec<Value>> {
    let mut vals: Option<Vec<Value>> = m.get("enum").and_then(Value::as_array).cloned();
    if let Some(c) = m.get("const") {
        vals = Some(match vals {
            None => vec![c.clone()],
            Some(v) => v.into_iter().filter(|x| json_eq(x, c)).collect(),
        });
    }
    vals
}

fn merge_enums(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    out: &mut Map<String, Value>,
) -> Result<(), String> {
    let (ea, eb) = (enum_of(a), enum_of(b));
    if ea.is_none() && eb.is_none() {
        return Ok(());
    }
    out.remove("const");
    let vals = match (ea, eb) {
        (Some(x), Some(y)) => x
            .into_iter()
            .filter(|v| y.iter().any(|w| json_eq(v, w)))
            .collect(),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => unreachable!(),
    };
    if vals.is_empty() {
        return Err("`enum`/`const` values have nothing in common".into());
    }
    out.insert("enum".into(), Value::Array(vals));
    Ok(())
}

/// Merges `properties`, `additionalProperties` and `patternProperties`: a property named by one
/// side is constrained by the other side's schema for that name (its own property schema, or
/// else its matching pattern schemas, or else its `additionalProperties`).
fn merge_objects(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    out: &mut Map<String, Value>,
) -> Result<(), String> {
    let keys = ["properties", "additionalProperties", "patternProperties"];
    let both = keys
        .iter()
        .any(|k| a.contains_key(*k) && b.contains_key(*k));
    let crossed = |x: &Map<String, Value>, y: &Map<String, Value>| {
        (x.contains_key("additionalProperties") || x.contains_key("patternProperties"))
            && y.contains_key("properties")
    };
    if !both && !crossed(a, b) && !crossed(b, a) {
        return Ok(());
    }
    let (pa, pb) = (a.get("patternProperties"), b.get("patternProperties"));
    if pa.is_some() && pb.is_some() && pa != pb {
        return Err("two different `patternProperties` cannot be merged".into());
    }
    if (pa.is_some() && b.contains_key("additionalProperties"))
        || (pb.is_some() && a.contains_key("additionalProperties"))
    {
        return Err("`patternProperties` of one side and `additionalProperties` of the other cannot be merged exactly".into());
    }
    let empty = Map::new();
    let props = |m: &Map<String, Value>| {
        m.get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (xa, xb) = (props(a), props(b));
    let side =
        |m: &Map<String, Value>, p: &Map<String, Value>, name: &str| -> Result<Value, String> {
            if let Some(s) = p.get(name) {
                return Ok(s.clone());
            }
            let mut acc = Value::Bool(true);
            let mut matched = false;
            for (pat, s) in m
                .get("patternProperties")
                .and_then(Value::as_object)
                .unwrap_or(&empty)
            {
                if super::strings::pattern_matches(pat, name).map_err(|e| format!("{e:?}"))? {
                    acc = all_of(&acc, s);
                    matched = true;
                }
            }
            if !matched {
                if let Some(s) = m.get("additionalProperties") {
                    acc = s.clone();
                }
            }
            Ok(acc)
        };
    let mut merged = Map::new();
    for name in xa.keys().chain(xb.keys()) {
        if merged.contains_key(name) {
            continue;
        }
        merged.insert(
            name.clone(),
            all_of(&side(a, &xa, name)?, &side(b, &xb, name)?),
        );
    }
    out.insert("properties".into(), Value::Object(merged));
    match (a.get("additionalProperties"), b.get("additionalProperties")) {
        (Some(x), Some(y)) => {
            out.insert("additionalProperties".into(), all_of(x, y));
        }
        (Some(x), None) | (None, Some(x)) => {
            out.insert("additionalProperties".into(), x.clone());
        }
        (None, None) => {}
    }
    if let Some(p) = pa.or(pb) {
        out.insert("patternProperties".into(), p.clone());
    }
    Ok(())
}

fn merge_prefix(a: &Map<String, Value>, b: &Map<String, Value>, out: &mut Map<String, Value>) {
    let (pa, pb) = (a.get("prefixItems"), b.get("prefixItems"));
    if pa.is_none() && pb.is_none() {
        return;
    }
    let list = |p: Option<&Value>| p.and_then(Value::as_array).cloned().unwrap_or_default();
    let (la, lb) = (list(pa), list(pb));
    let at = |l: &Vec<Value>, m: &Map<String, Value>, i: usize| {
        l.get(i)
            .cloned()
            .unwrap_or_else(|| m.get("items").cloned().unwrap_or(Value::Bool(true)))
    };
    let n = la.len().max(lb.len());
    let merged: Vec<Value> = (0..n)
        .map(|i| all_of(&at(&la, a, i), &at(&lb, b, i)))
        .collect();
    out.insert("prefixItems".into(), Value::Array(merged));
}
