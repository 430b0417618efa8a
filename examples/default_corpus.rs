//! Builds the training corpus of lacuna's default model from the data in `tests/data`
//! (provenance and licences in `tests/data/README.md`):
//!
//! - `smiles`: the SMILES of MOSES's training split (the first 200,000 rows, as shipped);
//! - `json`: valid instances of the MaskBench schemas (`jsonschemabench.jsonl.gz` and
//!   `maskbench_more_valid.jsonl.gz`) and of the JSON Schema Test Suite's schemas, prompted
//!   with the schema (annotations stripped), when lacuna compiles the schema in strict mode and
//!   the `jsonschema` crate validates the instance; plus up to six synthetic instances per
//!   schema (`json_synth`: a walk of the schema with values from the real instances), for
//!   those schemas and every other MaskBench schema in `maskbench_more.jsonl.gz`, kept under
//!   the same checks; then two instances each of 40,000 recombined schemas
//!   (`json_recombine`: real top-level properties put together anew, so that names must be
//!   read from the prompt); the schemas the evaluation uses (`eval/held_out.rs`) are left out;
//! - `cpp`: function bodies prompted by their declaration (`C++:\n` then the includes and the
//!   signature up to the body's `{`, the answer the body and its closing `}`), as
//!   HumanEval-X's tasks are posed and as the evaluation prompts them: every namespace-level
//!   function of TheAlgorithms/C-Plus-Plus with its file's `#include`s, comments removed, that
//!   `g++ -std=c++17 -fsyntax-only` accepts on its own; and HumanEval-X's tasks
//!   (`declaration`, `canonical_solution`) but the held-out last 20.
//!
//! Every answer is also checked with lacuna's own grammar for its task and left out if
//! refused, so the model is never taught an output the constraint would forbid. Counts of
//! what was left out, and why, go to stderr.
//!
//! `cargo run --release --example default_corpus -- OUT.jsonl [SMILES_COUNT] [RECOMBINED_SCHEMAS]`

#[path = "../tests/corpus/mod.rs"]
mod corpus;
#[path = "../eval/held_out.rs"]
mod held_out;
#[path = "default_corpus/json_recombine.rs"]
mod json_recombine;
#[path = "default_corpus/json_synth.rs"]
mod json_synth;
#[path = "../tests/schema_support/mod.rs"]
mod schema_support;

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};

use lacuna::checker::Checker;
use lacuna::diffusion::tasks;
use lacuna::grammar::schema::{compile, SchemaOptions};
use serde_json::{json, Value};

/// The longest JSON instance taught (bytes).
const MAX_INSTANCE: usize = 400;
/// The longest C++ program taught (bytes, includes and all).
const MAX_PROGRAM: usize = 1000;
/// Synthetic instances written per schema, at most (`json_synth`), and walks tried for them.
const SYNTHETIC_PER_SCHEMA: usize = 6;
const SYNTHETIC_TRIES: usize = 24;
/// Recombined schemas made by default (`json_recombine`), and instances written for each.
const RECOMBINED_SCHEMAS: usize = 40_000;
const RECOMBINED_PER_SCHEMA: usize = 2;

fn gz_lines(bytes: &[u8]) -> Vec<String> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_string(&mut text)
        .expect("gzip");
    text.lines().map(str::to_string).collect()
}

/// What was left out, by reason, per task.
#[derive(Default)]
struct Skipped(BTreeMap<String, usize>);

impl Skipped {
    fn add(&mut self, why: &str) {
        *self.0.entry(why.to_string()).or_default() += 1;
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let out_path = args
        .get(1)
        .expect("usage: default_corpus OUT.jsonl [SMILES_COUNT] [RECOMBINED_SCHEMAS]");
    let smiles_count: usize = args.get(2).map_or(200_000, |s| s.parse().expect("count"));
    let recombined_count: usize = args
        .get(3)
        .map_or(RECOMBINED_SCHEMAS, |s| s.parse().expect("count"));
    let mut out = std::io::BufWriter::new(std::fs::File::create(out_path).expect("create"));
    let mut emit = |task: &str, prompt: &str, answer: &str| {
        let line = json!({"task": task, "prompt": prompt, "answer": answer});
        writeln!(out, "{line}").expect("write");
    };
    let mut skipped = Skipped::default();
    let mut counts = [0usize; 5];

    let mut smiles = Checker::from_spec("smiles").expect("smiles grammar");
    let moses = include_bytes!("../tests/data/moses_train_head200k.csv.gz");
    let reader = BufReader::new(flate2::read::GzDecoder::new(&moses[..]));
    for line in reader.lines().skip(1).take(smiles_count) {
        let s = line.expect("moses");
        if smiles.accepts(s.as_bytes()) {
            emit(tasks::SMILES, &tasks::smiles_prompt(), &s);
            counts[0] += 1;
        } else {
            skipped.add("smiles: refused by the grammar");
        }
    }

    let (sources, held) = json_sources(&mut skipped);
    let mut pools = json_synth::ValuePools::default();
    for instance in sources.iter().flat_map(|(_, i)| i) {
        pools.add(instance);
    }
    pools.dedup();
    // Real instances first, then synthetic ones for every schema (those with real instances
    // and MaskBench's others), never for a held-out schema.
    let mut synthetic_only: Vec<Value> =
        gz_lines(include_bytes!("../tests/data/maskbench_more.jsonl.gz"))
            .iter()
            .filter_map(|line| {
                let entry: Value = serde_json::from_str(line).ok()?;
                let content: Value = serde_json::from_str(entry["content"].as_str()?).ok()?;
                Some(content["schema"].clone())
            })
            .collect();
    synthetic_only.retain(|s| !held.contains(&s.to_string()));
    // One entry per distinct schema, in first-seen order, with all its real instances.
    let mut work: Vec<(Value, Vec<Value>)> = Vec::new();
    let mut index_of: HashMap<String, usize> = HashMap::new();
    let all = sources
        .into_iter()
        .chain(synthetic_only.into_iter().map(|s| (s, Vec::new())));
    for (schema, instances) in all {
        match index_of.entry(schema.to_string()) {
            Entry::Occupied(e) => work[*e.get()].1.extend(instances),
            Entry::Vacant(e) => {
                e.insert(work.len());
                work.push((schema, instances));
            }
        }
    }
    // Then the recombined schemas, after every real one (so the real ones' synthetic
    // instances are drawn as before).
    let pool = json_recombine::PropertyPool::new(work.iter().map(|(s, _)| s));
    let mut draw = json_synth::Draw::new(u64::MAX / 3);
    let mut recombined = Vec::new();
    let mut recombined_texts = HashSet::new();
    while recombined.len() < recombined_count {
        let Some(schema) = pool.schema(&mut draw) else {
            break;
        };
        // New schemas only: none a real or held-out one, none twice.
        let text = schema.to_string();
        if !held.contains(&text) && !index_of.contains_key(&text) && recombined_texts.insert(text) {
            recombined.push(schema);
        }
    }
    eprintln!(
        "{} real properties recombined into {} schemas",
        pool.len(),
        recombined.len()
    );
    let real = work.len();
    let work = work
        .into_iter()
        .chain(recombined.into_iter().map(|s| (s, Vec::new())));
    for (index, (schema, instances)) in work.enumerate() {
        let is_recombined = index >= real;
        let (per_schema, kind) = if is_recombined {
            (RECOMBINED_PER_SCHEMA, "recombined")
        } else {
            (SYNTHETIC_PER_SCHEMA, "synthetic")
        };
        let prompt = tasks::json_prompt(&schema);
        if prompt.len() > tasks::MAX_JSON_PROMPT {
            skipped.add("json: prompt too long");
            continue;
        }
        let (Ok(compiled), Some(oracle)) = (
            compile(&schema, &SchemaOptions::default()),
            schema_support::oracle(&schema),
        ) else {
            skipped.add("json: schema not compiled strictly, or no oracle");
            continue;
        };
        let Ok(mut checker) = Checker::new(compiled.grammar) else {
            skipped.add("json: grammar not built");
            continue;
        };
        let mut seen = HashSet::new();
        let mut keep = |instance: &Value, kind: &str, skipped: &mut Skipped| -> bool {
            let answer = instance.to_string();
            if answer.len() > MAX_INSTANCE {
                skipped.add(&format!("json ({kind}): instance too long"));
            } else if !oracle.is_valid(instance) {
                skipped.add(&format!("json ({kind}): instance invalid to jsonschema"));
            } else if !checker.accepts(answer.as_bytes()) {
                skipped.add(&format!("json ({kind}): instance refused by the grammar"));
            } else if seen.insert(answer.clone()) {
                emit(tasks::JSON, &prompt, &answer);
                return true;
            }
            false
        };
        for instance in &instances {
            counts[1] += keep(instance, "real", &mut skipped) as usize;
        }
        let synthesizer = json_synth::Synthesizer::new(&schema, &pools);
        let mut draw = json_synth::Draw::new(index as u64);
        let mut made = 0;
        for _ in 0..SYNTHETIC_TRIES {
            if made == per_schema {
                break;
            }
            match synthesizer.instance(&mut draw) {
                Some(instance) => made += keep(&instance, kind, &mut skipped) as usize,
                None => skipped.add(&format!("json ({kind}): schema not walked")),
            }
        }
        counts[if is_recombined { 4 } else { 3 }] += made;
    }

    let mut cpp = Checker::from_spec("cpp").expect("cpp grammar");
    for (declaration, body) in cpp_functions(&mut skipped) {
        if cpp.accepts(format!("{declaration}{body}").as_bytes()) {
            emit(
                tasks::CPP,
                &format!("{}{declaration}", tasks::cpp_prompt()),
                &body,
            );
            counts[2] += 1;
        } else {
            skipped.add("cpp: refused by the grammar");
        }
    }
    eprintln!(
        "smiles {}, json {} real, {} synthetic and {} of recombined schemas, cpp {} examples",
        counts[0], counts[1], counts[3], counts[4], counts[2]
    );
    for (why, n) in &skipped.0 {
        eprintln!("left out: {why}: {n}");
    }
}

/// Every (schema, valid instances) the JSON task may learn from, held-out schemas removed;
/// and the held-out schemas (as text), which no other source may bring back.
fn json_sources(skipped: &mut Skipped) -> (Vec<(Value, Vec<Value>)>, HashSet<String>) {
    let mut sources = Vec::new();
    let mut held_schemas = HashSet::new();
    let mut held = 0;
    for entry in schema_support::maskbench() {
        let valid = entry.tests.into_iter().filter(|t| t.1).map(|t| t.0);
        // The evaluation takes the first eligible schemas of this file, in order.
        if held < held_out::JSON_SCHEMAS
            && held_out::json_eligible(&entry.schema, |s| schema_support::oracle(s).is_some())
        {
            held += 1;
            held_schemas.insert(entry.schema.to_string());
            skipped.add("json: schema held out for the evaluation");
            continue;
        }
        sources.push((entry.schema, valid.collect()));
    }
    for line in gz_lines(include_bytes!(
        "../tests/data/maskbench_more_valid.jsonl.gz"
    )) {
        let mut entry: Value = serde_json::from_str(&line).expect("maskbench_more line");
        let content = entry["content"].take();
        sources.push((content["schema"].clone(), valid_instances(&content)));
    }
    for groups in schema_support::test_suite().into_values() {
        for group in groups.as_array().into_iter().flatten() {
            sources.push((group["schema"].clone(), valid_instances(group)));
        }
    }
    sources.retain(|(s, _)| !held_schemas.contains(&s.to_string()));
    (sources, held_schemas)
}

/// The instances of a `{"schema", "tests": [{"valid", "data"}]}` object marked valid.
fn valid_instances(case: &Value) -> Vec<Value> {
    case["tests"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["valid"] == Value::Bool(true))
        .map(|t| t["data"].clone())
        .collect()
}

/// The C++ tasks as (declaration, body): functions of the algorithms corpus that g++ accepts
/// alone, then the HumanEval-X tasks that are not held out.
fn cpp_functions(skipped: &mut Skipped) -> Vec<(String, String)> {
    let mut candidates = Vec::new();
    let mut seen = HashSet::new();
    for text in corpus::cpp_functions::algorithms_files() {
        for program in corpus::cpp_functions::standalone_functions(&text) {
            if program.len() > MAX_PROGRAM {
                skipped.add("cpp: program too long");
            } else if seen.insert(program.clone()) {
                candidates.push(program);
            }
        }
    }
    let accepted = gpp_filter(&candidates);
    skipped.0.insert(
        "cpp: function not accepted by g++ alone".into(),
        candidates.len() - accepted.len(),
    );
    let mut functions: Vec<(String, String)> = accepted
        .iter()
        .filter_map(|p| {
            let split = split_at_body(p);
            if split.is_none() {
                skipped.add("cpp: no body to split off");
            }
            split
        })
        .collect();
    let humaneval = corpus::humaneval_cpp();
    let kept = humaneval.len() - held_out::HUMANEVAL_TASKS;
    for task in &humaneval[..kept] {
        if task.declaration.len() + task.solution.len() > MAX_PROGRAM {
            skipped.add("cpp: program too long");
        } else {
            functions.push((task.declaration.clone(), task.solution.clone()));
        }
    }
    functions
}

/// A standalone function's program split after its body's opening `{` (and the line break
/// after it): the declaration, which prompts, and the body, which answers. The function's
/// head holds no brace (`function_spans` starts it after the last one) and neither do the
/// includes before it, so the first `{` opens the body.
fn split_at_body(program: &str) -> Option<(String, String)> {
    let open = program.find('{')?;
    let mut end = open + 1;
    if program[end..].starts_with('\n') {
        end += 1;
    }
    let (declaration, body) = program.split_at(end);
    (!body.trim().is_empty()).then(|| (declaration.to_string(), body.to_string()))
}

/// The programs of `candidates` that `g++ -std=c++17 -fsyntax-only` accepts, in order.
fn gpp_filter(candidates: &[String]) -> Vec<String> {
    let verdicts = corpus::gpp_verdicts(candidates)
        .expect("g++ is needed to build the C++ part of the corpus");
    candidates
        .iter()
        .zip(verdicts)
        .filter(|(_, ok)| *ok)
        .map(|(p, _)| p.clone())
        .collect()
}
