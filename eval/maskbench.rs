//! lacuna's half of the MaskBench side-by-side run (issue 18), driven by `eval/maskbench.py`:
//!
//! ```sh
//! cargo run --release --example maskbench -- CASES.jsonl > lacuna.jsonl
//! ```
//!
//! Each line of CASES is `{"name", "schema", "texts": [..], "reordered": [..], "labels": [..]}`:
//! a schema and the exact instance texts both engines are given (and the same instances with
//! their object members in schema order), with MaskBench's labels. For each schema this
//! compiles it in strict mode and builds its checker (both timed, in process), asks the
//! `jsonschema` crate (formats asserted) whether each instance is valid, and checks each text.
//! An instance whose MaskBench label the oracle disputes is not scored; the oracle's verdicts
//! are written out so the llguidance half scores against the same labels.
//!
//! Out: one line per schema, `{"name", "compiled", "error", "keyword", "compile_us",
//! "checker_us", "checks_us", "hole_check_us", "hole_verdict", "oracle": [true|false|null],
//! "verdicts": ["accept"|"reject"|"unknown"], "reordered_verdicts": [..]}`: `checks_us` is the
//! time of all instance checks, `hole_check_us` that of a canvas that is one hole, checked
//! after them (what a generation's first check adds: the hole sets the instances never need).

use std::io::{BufRead, Write};
use std::time::Instant;

use lacuna::canvas::HoleyText;
use lacuna::checker::{CheckVerdict, Checker};
use lacuna::grammar::schema::{compile, SchemaError, SchemaOptions};
use serde_json::{json, Value};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut options = SchemaOptions::default();
    let mut path = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--any-order-up-to" => {
                options.any_order_up_to = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--any-order-up-to N");
            }
            _ => path = Some(a.clone()),
        }
    }
    let Some(path) = path else {
        eprintln!("usage: maskbench [--any-order-up-to N] CASES.jsonl");
        std::process::exit(2);
    };
    let file = std::fs::File::open(&path).unwrap_or_else(|e| {
        eprintln!("cannot read {path}: {e}");
        std::process::exit(2);
    });
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.expect("a readable line");
        let case: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("{path}:{}: not JSON: {e}", i + 1));
        let record = run(&case, &options);
        writeln!(out, "{record}").expect("stdout");
        out.flush().expect("stdout");
    }
}

fn run(case: &Value, options: &SchemaOptions) -> Value {
    let name = case["name"].as_str().unwrap_or("?");
    let schema = &case["schema"];
    let texts: Vec<&str> = case["texts"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let oracle = jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .ok();
    let oracle_verdicts: Vec<Value> = texts
        .iter()
        .map(|t| match (&oracle, serde_json::from_str::<Value>(t)) {
            (Some(o), Ok(v)) => json!(o.is_valid(&v)),
            _ => Value::Null,
        })
        .collect();
    let t0 = Instant::now();
    let compiled = compile(schema, options);
    let compile_us = t0.elapsed().as_micros() as u64;
    let grammar = match compiled {
        Ok(c) => c.grammar,
        Err(e) => {
            return json!({
                "name": name, "compiled": false, "error": e.to_string(),
                "keyword": keyword(&e), "compile_us": compile_us,
                "oracle": oracle_verdicts,
            })
        }
    };
    let t1 = Instant::now();
    let checker = Checker::new(grammar);
    let checker_us = t1.elapsed().as_micros() as u64;
    let mut checker = match checker {
        Ok(c) => c,
        Err(e) => {
            return json!({
                "name": name, "compiled": false, "error": e.to_string(),
                "keyword": "checker", "compile_us": compile_us, "checker_us": checker_us,
                "oracle": oracle_verdicts,
            })
        }
    };
    let mut checks_us = 0;
    let mut verdicts = |key: &str| -> Vec<&'static str> {
        let texts = case[key].as_array().map(Vec::as_slice).unwrap_or_default();
        texts
            .iter()
            .filter_map(Value::as_str)
            .map(|t| {
                let t0 = Instant::now();
                let verdict = checker.check_text(&HoleyText::solid(t.as_bytes())).verdict;
                checks_us += t0.elapsed().as_micros() as u64;
                match verdict {
                    CheckVerdict::Completable => "accept",
                    CheckVerdict::NotCompletable => "reject",
                    CheckVerdict::Unknown => "unknown",
                }
            })
            .collect()
    };
    let (texts, reordered) = (verdicts("texts"), verdicts("reordered"));
    // What a generation's first check costs after the instances: a canvas that is one hole.
    let t2 = Instant::now();
    let hole_verdict = checker.check_text(&HoleyText::one_hole());
    let hole_check_us = t2.elapsed().as_micros() as u64;
    json!({
        "name": name, "compiled": true, "compile_us": compile_us, "checker_us": checker_us,
        "checks_us": checks_us, "hole_check_us": hole_check_us,
        "hole_verdict": format!("{:?}", hole_verdict.verdict),
        "oracle": oracle_verdicts, "verdicts": texts, "reordered_verdicts": reordered,
    })
}

/// The keyword a refusal names first (the refusal table's key).
fn keyword(e: &SchemaError) -> String {
    match e {
        SchemaError::Unsupported { keyword, .. } | SchemaError::BadKeyword { keyword, .. } => {
            keyword.clone()
        }
        SchemaError::Merge { .. } => "allOf (merge)".into(),
        SchemaError::BadPattern { .. } => "pattern".into(),
        SchemaError::BadRef { .. } => "$ref".into(),
        SchemaError::Budget { .. } => "budget".into(),
        SchemaError::Empty { .. } => "empty".into(),
        SchemaError::TooLarge { .. } => "too large".into(),
        SchemaError::NotJson(_) => "not JSON".into(),
        SchemaError::NotASchema { .. } => "not a schema".into(),
        SchemaError::Grammar(_) => "grammar".into(),
    }
}
