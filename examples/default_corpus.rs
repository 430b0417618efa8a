//! Builds the training corpus of lacuna's default model from the data in `tests/data`
//! (provenance and licences in `tests/data/README.md`):
//!
//! - `smiles`: the first SMILES of MOSES;
//! - `json`: valid instances of the JSONSchemaBench schemas that lacuna compiles in strict
//!   mode, prompted with the schema (annotations stripped);
//! - `cpp`: HumanEval-X programs (`declaration + canonical_solution`).
//!
//! Every answer is checked with lacuna's own grammar for its task and left out if refused, so
//! the model is never taught an invalid output.
//!
//! `cargo run --release --example default_corpus -- OUT.jsonl [SMILES_COUNT]`

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};

use lacuna::checker::Checker;
use lacuna::diffusion::tasks;
use lacuna::grammar::schema::{compile, SchemaOptions};
use serde_json::{json, Value};

const MAX_INSTANCE: usize = 400;

fn gz_lines(bytes: &[u8]) -> Vec<String> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_string(&mut text)
        .expect("gzip");
    text.lines().map(str::to_string).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let out_path = args
        .get(1)
        .expect("usage: default_corpus OUT.jsonl [SMILES_COUNT]");
    let smiles_count: usize = args.get(2).map_or(50_000, |s| s.parse().expect("count"));
    let mut out = std::io::BufWriter::new(std::fs::File::create(out_path).expect("create"));
    let mut emit = |task: &str, prompt: &str, answer: &str| {
        let line = json!({"task": task, "prompt": prompt, "answer": answer});
        writeln!(out, "{line}").expect("write");
    };
    let mut counts = [0usize; 3];

    let mut smiles = Checker::from_spec("smiles").expect("smiles grammar");
    let moses = include_bytes!("../tests/data/moses_train_head200k.csv.gz");
    let reader = BufReader::new(flate2::read::GzDecoder::new(&moses[..]));
    for line in reader.lines().skip(1).take(smiles_count) {
        let s = line.expect("moses");
        if smiles.accepts(s.as_bytes()) {
            emit(tasks::SMILES, &tasks::smiles_prompt(), &s);
            counts[0] += 1;
        }
    }

    for line in gz_lines(include_bytes!("../tests/data/jsonschemabench.jsonl.gz")) {
        let entry: Value = serde_json::from_str(&line).expect("pack line");
        let content = &entry["content"];
        let schema = &content["schema"];
        let prompt = tasks::json_prompt(schema);
        if prompt.len() > tasks::MAX_JSON_PROMPT {
            continue;
        }
        let Ok(compiled) = compile(schema, &SchemaOptions::default()) else {
            continue;
        };
        let Ok(mut checker) = Checker::new(compiled.grammar) else {
            continue;
        };
        let mut seen = HashSet::new();
        for test in content["tests"].as_array().into_iter().flatten() {
            if test["valid"] != Value::Bool(true) {
                continue;
            }
            let answer = test["data"].to_string();
            if answer.len() <= MAX_INSTANCE
                && checker.accepts(answer.as_bytes())
                && seen.insert(answer.clone())
            {
                emit(tasks::JSON, &prompt, &answer);
                counts[1] += 1;
            }
        }
    }

    let mut cpp = Checker::from_spec("cpp").expect("cpp grammar");
    for line in gz_lines(include_bytes!("../tests/data/humaneval_cpp.jsonl.gz")) {
        let task: Value = serde_json::from_str(&line).expect("humaneval line");
        let program = format!(
            "{}{}",
            task["declaration"].as_str().unwrap_or(""),
            task["canonical_solution"].as_str().unwrap_or("")
        );
        if cpp.accepts(program.as_bytes()) {
            emit(tasks::CPP, &tasks::cpp_prompt(), &program);
            counts[2] += 1;
        }
    }
    eprintln!(
        "smiles {}, json {}, cpp {} examples",
        counts[0], counts[1], counts[2]
    );
}
