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
//! - `cpp`: small programs: every namespace-level function of TheAlgorithms/C-Plus-Plus with
//!   its file's `#include`s, comments removed, that `g++ -std=c++17 -fsyntax-only` accepts on
//!   its own; and HumanEval-X programs (`declaration + canonical_solution`) but the held-out
//!   last 20.
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
/// The shortest function taken from the C++ corpus (bytes).
const MIN_FUNCTION: usize = 60;

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
    for program in cpp_programs(&mut skipped) {
        if cpp.accepts(program.as_bytes()) {
            emit(tasks::CPP, &tasks::cpp_prompt(), &program);
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

/// The C++ programs: functions of the algorithms corpus that g++ accepts alone, then the
/// HumanEval-X programs that are not held out.
fn cpp_programs(skipped: &mut Skipped) -> Vec<String> {
    let mut candidates = Vec::new();
    let mut seen = HashSet::new();
    for line in gz_lines(include_bytes!("../tests/data/cpp_algorithms.jsonl.gz")) {
        let file: Value = serde_json::from_str(&line).expect("cpp_algorithms line");
        let text = file["text"].as_str().expect("text");
        for program in standalone_functions(text) {
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
    let mut programs = accepted;
    let humaneval = corpus::humaneval_cpp();
    let kept = humaneval.len() - held_out::HUMANEVAL_TASKS;
    for task in &humaneval[..kept] {
        let program = format!("{}{}", task.declaration, task.solution);
        if program.len() > MAX_PROGRAM {
            skipped.add("cpp: program too long");
        } else {
            programs.push(program);
        }
    }
    programs
}

/// The programs of `candidates` that `g++ -std=c++17 -fsyntax-only` accepts, in order (two
/// compilers at a time).
fn gpp_filter(candidates: &[String]) -> Vec<String> {
    let half = candidates.len().div_ceil(2).max(1);
    let verdicts: Vec<bool> = std::thread::scope(|s| {
        let parts: Vec<_> = candidates
            .chunks(half)
            .map(|part| s.spawn(move || part.iter().map(|p| gpp_accepts(p)).collect::<Vec<_>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().expect("g++ thread"))
            .collect()
    });
    candidates
        .iter()
        .zip(verdicts)
        .filter(|(_, ok)| *ok)
        .map(|(p, _)| p.clone())
        .collect()
}

fn gpp_accepts(src: &str) -> bool {
    corpus::gpp_accepts(src).expect("g++ is needed to build the C++ part of the corpus")
}

/// The namespace-level functions of a C++ file, each as a small program: the file's system
/// `#include`s (and `using namespace std;` where the file has it), then the function,
/// comments removed and dedented.
fn standalone_functions(text: &str) -> Vec<String> {
    let (code, shape) = strip_comments(text);
    let mut header = String::new();
    for line in code.lines() {
        let line = line.trim();
        if line.starts_with("#include <") {
            header.push_str(line);
            header.push('\n');
        }
    }
    if code.lines().any(|l| l.trim() == "using namespace std;") {
        header.push_str("using namespace std;\n");
    }
    let mut programs = Vec::new();
    for (start, end) in function_spans(&shape) {
        let line_start = code[..start].rfind('\n').map_or(0, |i| i + 1);
        let function = dedent(&code[line_start..=end]);
        if function.len() >= MIN_FUNCTION {
            programs.push(format!("{header}\n{function}\n"));
        }
    }
    programs
}

/// The text without comments (a block comment becomes a space, a line comment nothing; lines
/// left blank are dropped), and the same text with the insides of string and character
/// literals and whole preprocessor lines blanked, for finding braces.
fn strip_comments(text: &str) -> (String, String) {
    let b = text.as_bytes();
    let (mut code, mut shape) = (Vec::with_capacity(b.len()), Vec::with_capacity(b.len()));
    let mut i = 0;
    let mut line_start = true;
    let mut preprocessor = false;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i = (i + 2).min(b.len());
            code.push(b' ');
            shape.push(b' ');
            continue;
        }
        if c == b'"' || c == b'\'' {
            code.push(c);
            shape.push(c);
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                let step = if b[i] == b'\\' { 2 } else { 1 };
                for k in 0..step {
                    if let Some(&x) = b.get(i + k) {
                        code.push(x);
                        shape.push(b'x');
                    }
                }
                i += step;
            }
            if i < b.len() && b[i] == c {
                code.push(c);
                shape.push(c);
                i += 1;
            }
            continue;
        }
        if line_start && c == b'#' {
            preprocessor = true;
        }
        if c == b'\n' {
            preprocessor = false;
            line_start = true;
        } else if !c.is_ascii_whitespace() {
            line_start = false;
        }
        code.push(c);
        shape.push(if preprocessor && c != b'\n' { b' ' } else { c });
        i += 1;
    }
    // Drop the lines comments left blank, in both texts alike (they have equal lengths and
    // the same line breaks).
    let code = String::from_utf8_lossy(&code).into_owned();
    let shape = String::from_utf8_lossy(&shape).into_owned();
    let (mut kept_code, mut kept_shape) = (String::new(), String::new());
    for (c, s) in code.split('\n').zip(shape.split('\n')) {
        if c.trim().is_empty() {
            continue;
        }
        kept_code.push_str(c.trim_end());
        kept_code.push('\n');
        kept_shape.push_str(&s[..c.trim_end().len().min(s.len())]);
        kept_shape.push('\n');
    }
    (kept_code, kept_shape)
}

/// Byte spans (header start, closing brace) of function definitions whose enclosing braces
/// are all namespaces (not classes or other functions), found on the blanked text.
fn function_spans(shape: &str) -> Vec<(usize, usize)> {
    #[derive(PartialEq)]
    enum Brace {
        Namespace,
        Function(usize),
        Other,
    }
    let b = shape.as_bytes();
    let mut stack: Vec<Brace> = Vec::new();
    let mut boundary = 0;
    let mut spans = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b';' => boundary = i + 1,
            b'{' => {
                let head = shape[boundary..i].trim();
                let head_start = i - shape[boundary..i].trim_start().len();
                let at_namespace_level = stack.iter().all(|s| *s == Brace::Namespace);
                let kind = if head.starts_with("namespace") || head.starts_with("extern \"C\"") {
                    Brace::Namespace
                } else if at_namespace_level && looks_like_function(head) {
                    Brace::Function(head_start)
                } else {
                    Brace::Other
                };
                stack.push(kind);
                boundary = i + 1;
            }
            b'}' => {
                if let Some(Brace::Function(start)) = stack.pop() {
                    spans.push((start, i));
                }
                boundary = i + 1;
            }
            _ => {}
        }
    }
    spans
}

/// Whether the text before a `{` is a function's head: a parameter list closed before any
/// trailing qualifiers, not a control statement, class, initializer or lambda.
fn looks_like_function(head: &str) -> bool {
    let Some(open) = head.find('(') else {
        return false;
    };
    let first = head.split_whitespace().next().unwrap_or("");
    let control = [
        "if", "for", "while", "switch", "catch", "do", "else", "return", "struct", "class",
        "union", "enum", "typedef", "using",
    ];
    let tail = head[head.rfind(')').unwrap_or(0) + 1..].trim();
    let tail_ok = tail.is_empty()
        || tail
            .split_whitespace()
            .all(|w| ["const", "noexcept", "override", "final"].contains(&w))
        || tail.starts_with("->");
    !control.contains(&first)
        && !head[..open].contains('=')
        && !head.contains("[]")
        && head.contains(')')
        && tail_ok
}

/// Removes the indentation every non-empty line shares.
fn dedent(text: &str) -> String {
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for line in text.lines() {
        out.push_str(line.get(indent..).unwrap_or(line.trim_start()));
        out.push('\n');
    }
    out.trim_end().to_string()
}
