//! Completeness with holes on schema grammars: valid instances of maskbench schemas (oracle-
//! confirmed) with 1–8 random holes cut into them are judged completable, and the completion
//! the checker builds is JSON that the `jsonschema` crate validates against the schema. Also:
//! every uncorrupted JSON canvas of the shared workload (benches/data/workload) is completable.

mod corpus;
mod schema_support;

use corpus::Rng;
use lacuna::canvas::{parse_canvas_line, HoleyText};
use lacuna::checker::{CheckVerdict, Checker};
use lacuna::grammar::schema::{compile, SchemaOptions};

/// Cuts `holes` holes at random byte positions (a hole may be empty-bounded at either end).
fn cut(text: &str, holes: usize, rng: &mut Rng) -> HoleyText {
    let bytes = text.as_bytes();
    let mut cuts: Vec<usize> = (0..2 * holes).map(|_| rng.below(bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut chunks = vec![];
    let mut pos = 0;
    for pair in cuts.chunks(2) {
        chunks.push(bytes[pos..pair[0]].to_vec());
        pos = pair[1];
    }
    chunks.push(bytes[pos..].to_vec());
    HoleyText { chunks }
}

#[test]
fn valid_instances_with_holes_complete_to_valid_instances() {
    let entries = schema_support::maskbench();
    let mut rng = Rng(0x5eed);
    let (mut cases, mut schemas) = (0, 0);
    let mut failures = vec![];
    let only = std::env::var("SCHEMA_HOLES_ONLY").ok();
    for e in entries.iter().step_by(3) {
        if only.as_ref().is_some_and(|o| !e.name.contains(o.as_str())) {
            continue;
        }
        let Ok(c) = compile(&e.schema, &SchemaOptions::default()) else {
            continue;
        };
        let Some(oracle) = schema_support::oracle(&e.schema) else {
            continue;
        };
        schemas += 1;
        let mut checker = Checker::new(c.grammar).unwrap();
        for (data, valid) in &e.tests {
            if !valid || !oracle.is_valid(data) {
                continue;
            }
            let text = if rng.below(2) == 0 {
                serde_json::to_string(data).unwrap()
            } else {
                serde_json::to_string_pretty(data).unwrap()
            };
            if !checker.accepts(text.as_bytes()) {
                continue; // rejected for its order: counted by the maskbench test
            }
            for _ in 0..3 {
                let holes = 1 + rng.below(8);
                let holey = cut(&text, holes, &mut rng);
                cases += 1;
                let check = checker.check_text(&holey);
                if check.verdict != CheckVerdict::Completable {
                    failures.push(format!("{}: {:?} for {:?}", e.name, check.verdict, holey));
                    continue;
                }
                match checker.complete_text(&holey) {
                    Ok(Some(bytes)) => {
                        let completion = String::from_utf8_lossy(&bytes).into_owned();
                        let ok = serde_json::from_str::<serde_json::Value>(&completion)
                            .map(|v| oracle.is_valid(&v))
                            .unwrap_or(false);
                        if !ok {
                            failures.push(format!("{}: invalid completion {completion}", e.name));
                        }
                    }
                    other => failures.push(format!(
                        "{}: completion {other:?} for {:?}",
                        e.name,
                        holey
                            .chunks
                            .iter()
                            .map(|c| String::from_utf8_lossy(c).into_owned())
                            .collect::<Vec<_>>()
                    )),
                }
            }
        }
    }
    println!("{cases} holey canvases on {schemas} schemas");
    for f in &failures {
        println!("FAIL {}", f.chars().take(600).collect::<String>());
    }
    assert!(cases > 1000, "only {cases} cases");
    assert!(failures.is_empty(), "{} failures", failures.len());
}

#[test]
fn uncorrupted_workload_json_canvases_are_completable() {
    let text = include_str!("../benches/data/workload/canvases.jsonl");
    let mut checkers = std::collections::HashMap::new();
    let (mut n, mut rejected_corrupted) = (0, 0);
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["family"] != "json" {
            continue;
        }
        let parsed = parse_canvas_line(line).unwrap();
        let spec = parsed.grammar.clone().unwrap();
        // Schema paths in the workload are relative to the repository root.
        let full = match spec.strip_prefix("schema:") {
            Some(path) => format!("schema:{}/{path}", env!("CARGO_MANIFEST_DIR")),
            None => spec.clone(),
        };
        let checker = checkers
            .entry(spec.clone())
            .or_insert_with(|| Checker::from_spec(&full).unwrap());
        let verdict = checker.check(&parsed.canvas).verdict;
        if v["corrupted"] == false {
            n += 1;
            assert_eq!(verdict, CheckVerdict::Completable, "{}", v["id"]);
        } else if verdict == CheckVerdict::NotCompletable {
            rejected_corrupted += 1;
        }
    }
    println!("{n} uncorrupted canvases completable; {rejected_corrupted} corrupted ones rejected");
    assert!(n > 100);
}

/// A canvas whose completion once ran out of the completion budget around a `format: email`
/// string (when property names were regexes overlapping the string lexeme).
#[test]
fn completion_through_an_email_string() {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "customer_details": {
                "type": "object",
                "properties": {
                    "address": {"type": "string"},
                    "email": {"type": "string", "format": "email"},
                    "name": {"type": "string"}
                },
                "required": ["name", "email"]
            },
            "items_purchased": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "price": {"type": "number"},
                        "quantity": {"type": "integer"}
                    },
                    "required": ["name", "quantity", "price"]
                }
            }
        },
        "required": ["customer_details", "items_purchased"]
    });
    let grammar = compile(&schema, &SchemaOptions::default()).unwrap().grammar;
    let mut checker = Checker::new(grammar).unwrap();
    let parts = [
        "{\"customer_",
        "town, USA\",\"em",
        "\"",
        "rchased\":[{\"nam",
        "Sa",
        "es\",\"price\":99.99,\"quantity\":2}]}",
    ];
    let text = HoleyText {
        chunks: parts.iter().map(|p| p.as_bytes().to_vec()).collect(),
    };
    assert_eq!(checker.check_text(&text).verdict, CheckVerdict::Completable);
    assert!(checker.complete_text(&text).unwrap().is_some());
}
