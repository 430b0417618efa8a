//! Closed objects for generation (`SchemaOptions::close_objects`): an object that names its
//! members and leaves `additionalProperties` unspecified takes no others.
//!
//! The oracle is the `jsonschema` crate on the schema itself and on the schema with
//! `"additionalProperties": false` written into each object the rule closes (a rewrite of the
//! document, independent of the compiler's lowering):
//! - every instance the closed grammar accepts is valid by the schema, and accepted by the open
//!   grammar (closing only removes instances);
//! - on schemas whose objects are not combined with others (no `allOf`, `anyOf`, `oneOf`,
//!   `not`, `if`, dependencies, or `$ref` beside members, where the compiler closes the merged
//!   object and the rewrite would close each part), the closed grammar accepts exactly what the
//!   validator of the rewritten schema accepts.
//!
//! Instances: JSONSchemaBench's maskbench data (valid and invalid), each also stripped of one
//! member per object and given one extra member, so that the closing decides something.

mod schema_support;

use lacuna::checker::Checker;
use lacuna::grammar::schema::{compile, SchemaOptions};
use serde_json::{json, Map, Value};

fn checker(schema: &Value, close_objects: bool) -> Option<Checker> {
    let options = SchemaOptions {
        close_objects,
        ..SchemaOptions::default()
    };
    let grammar = compile(schema, &options).ok()?.grammar;
    Checker::new(grammar).ok()
}

fn accepts(c: &mut Checker, v: &Value) -> bool {
    c.accepts(serde_json::to_string(v).unwrap().as_bytes())
}

/// Keywords under which the compiler merges or combines object schemas.
const COMBINING: &[&str] = &[
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "dependencies",
    "dependentSchemas",
    "dependentRequired",
    "unevaluatedProperties",
];

/// Whether any object of the document combines schemas (see [`COMBINING`]) or holds `$ref`
/// beside members.
fn combines(v: &Value) -> bool {
    match v {
        Value::Object(m) => {
            COMBINING.iter().any(|k| m.contains_key(*k))
                || (m.contains_key("$ref")
                    && ["properties", "patternProperties", "required"]
                        .iter()
                        .any(|k| m.contains_key(*k)))
                || m.values().any(combines)
        }
        Value::Array(a) => a.iter().any(combines),
        _ => false,
    }
}

/// The rule, on one schema object: it names members, leaves `additionalProperties`
/// unspecified, and needs no more members than it names.
fn closes(s: &Map<String, Value>) -> bool {
    let keys = |k: &str| {
        s.get(k)
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let props = keys("properties");
    let pats = keys("patternProperties");
    let mut names: Vec<String> = props.clone();
    for r in s
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(r) = r.as_str() {
            if !names.iter().any(|n| n == r) {
                names.push(r.to_string());
            }
        }
    }
    let min = s.get("minProperties").and_then(Value::as_u64).unwrap_or(0);
    let names_something = !names.is_empty() || !pats.is_empty();
    let enough_names = !pats.is_empty() || min <= names.len() as u64;
    !s.contains_key("additionalProperties") && names_something && enough_names
}

/// The schema with `additionalProperties: false` in every schema object the rule closes,
/// following the places that hold schemas.
fn rewritten(s: &Value) -> Value {
    let Value::Object(m) = s else {
        return s.clone();
    };
    let mut out = Map::new();
    for (k, v) in m {
        let v = match (k.as_str(), v) {
            (
                "properties" | "patternProperties" | "definitions" | "$defs" | "dependentSchemas",
                Value::Object(children),
            ) => Value::Object(
                children
                    .iter()
                    .map(|(name, c)| (name.clone(), rewritten(c)))
                    .collect(),
            ),
            (
                "items" | "additionalItems" | "contains" | "additionalProperties",
                Value::Object(_),
            ) => rewritten(v),
            ("items" | "prefixItems", Value::Array(a)) => {
                Value::Array(a.iter().map(rewritten).collect())
            }
            _ => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    if closes(m) {
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    Value::Object(out)
}

/// The instance, then variants that the closing decides: each object given an extra member
/// `"zz_extra"`, and each object without its first member.
fn variants(v: &Value) -> Vec<Value> {
    fn edit(v: &Value, add: bool) -> Value {
        match v {
            Value::Object(m) => {
                let mut out: Map<String, Value> = m
                    .iter()
                    .skip(usize::from(!add && !m.is_empty()))
                    .map(|(k, x)| (k.clone(), edit(x, add)))
                    .collect();
                if add {
                    out.insert("zz_extra".into(), json!(1));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| edit(x, add)).collect()),
            _ => v.clone(),
        }
    }
    vec![v.clone(), edit(v, true), edit(v, false)]
}

#[test]
fn closed_objects_on_the_maskbench_schemas() {
    let (mut schemas, mut instances, mut exact_schemas, mut exact_instances) = (0, 0, 0, 0);
    let (mut closed_accepts, mut open_only) = (0, 0);
    for e in schema_support::maskbench() {
        let Some(oracle) = schema_support::oracle(&e.schema) else {
            continue;
        };
        let (Some(mut closed), Some(mut open)) =
            (checker(&e.schema, true), checker(&e.schema, false))
        else {
            continue;
        };
        schemas += 1;
        let exact = !combines(&e.schema);
        let closed_oracle = exact
            .then(|| schema_support::oracle(&rewritten(&e.schema)))
            .flatten();
        exact_schemas += usize::from(closed_oracle.is_some());
        for (data, _) in &e.tests {
            for v in variants(data) {
                instances += 1;
                let by_closed = accepts(&mut closed, &v);
                let by_open = accepts(&mut open, &v);
                if by_closed {
                    closed_accepts += 1;
                    assert!(
                        oracle.is_valid(&v),
                        "{}: closed grammar accepts an invalid {v}",
                        e.name
                    );
                    assert!(
                        by_open,
                        "{}: closed grammar accepts {v}, the open one does not",
                        e.name
                    );
                } else if by_open {
                    open_only += 1;
                }
                // Where the open grammar agrees with the schema (not a property-order
                // exception), the closed one agrees with the closed schema.
                if let Some(co) = &closed_oracle {
                    if by_open == oracle.is_valid(&v) {
                        exact_instances += 1;
                        assert_eq!(
                            by_closed,
                            co.is_valid(&v),
                            "{}: closed grammar and the closed schema's validator disagree on {v}",
                            e.name
                        );
                    }
                }
            }
        }
    }
    eprintln!(
        "{schemas} schemas ({exact_schemas} compared exactly), {instances} instances \
         ({exact_instances} exactly): the closed grammar accepts {closed_accepts}, \
         only the open one {open_only}"
    );
    // The comparison must have decided something both ways.
    assert!(exact_schemas > 1000 && closed_accepts > 1000 && open_only > 1000);
}

/// Hand-made cases of the rule's edges.
#[test]
fn which_objects_close() {
    let cases: &[(Value, &[&str], &[&str])] = &[
        // Named members only.
        (
            json!({"properties": {"a": {}}}),
            &[r#"{"a":1}"#, "{}"],
            &[r#"{"b":1}"#, r#"{"a":1,"b":2}"#],
        ),
        // Names nothing: stays open.
        (json!({"type": "object"}), &[r#"{"b":1}"#, "{}"], &[]),
        // A name only `required` stays possible.
        (
            json!({"required": ["x"]}),
            &[r#"{"x":[1]}"#],
            &[r#"{"x":1,"y":2}"#, "{}"],
        ),
        // `additionalProperties` given: as given.
        (
            json!({"properties": {"a": {}}, "additionalProperties": {"type": "integer"}}),
            &[r#"{"b":1}"#],
            &[r#"{"b":"x"}"#],
        ),
        // Patterns keep their names.
        (
            json!({"patternProperties": {"^x": {"type": "integer"}}}),
            &[r#"{"x1":1}"#],
            &[r#"{"y":1}"#, r#"{"x1":"a"}"#],
        ),
        // Closed after `allOf` merges its parts.
        (
            json!({"properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}]}),
            &[r#"{"a":1,"b":2}"#],
            &[r#"{"c":1}"#],
        ),
        // Nested objects close too; free values inside named members stay free.
        (
            json!({"properties": {"o": {"properties": {"p": {}}}, "free": {}}}),
            &[r#"{"o":{"p":1},"free":{"q":1}}"#],
            &[r#"{"o":{"q":1}}"#],
        ),
    ];
    for (schema, accepted, rejected) in cases {
        let mut closed = checker(schema, true).expect("compiles closed");
        let mut open = checker(schema, false).expect("compiles open");
        let oracle = schema_support::oracle(schema).expect("oracle");
        for t in *accepted {
            assert!(closed.accepts(t.as_bytes()), "{schema}: closed rejects {t}");
        }
        for t in *rejected {
            assert!(
                !closed.accepts(t.as_bytes()),
                "{schema}: closed accepts {t}"
            );
            let v: Value = serde_json::from_str(t).unwrap();
            assert_eq!(
                open.accepts(t.as_bytes()),
                oracle.is_valid(&v),
                "{schema}: open on {t}"
            );
        }
    }
}
