//! Evaluates the embedded default model: N generations per domain (SMILES; JSON under the
//! held-out schemas; C++ function bodies under the held-out HumanEval-X declarations)
//! in four modes with the same seeds — unconstrained, `reject` (the paper's proposal checks,
//! then the grammar's completion), `mask` (every token drawn from its valid-token mask) and
//! `mask-lazy` (masks only where the model's first choices are refused) —
//! judged by independent oracles (purr, serde_json + jsonschema, tree-sitter-cpp). Prints a
//! markdown table; writes every output to `target/eval_default.jsonl`, with its counts and
//! times (`checks`, `masks`, `rejections`, `seconds`, `constraint_seconds`, `mask_seconds`):
//! RDKit reads the SMILES with `python3 eval/rdkit_smiles.py target/eval_default.jsonl`, and
//! `python3 eval/cpp_comments.py target/eval_default.jsonl` says how much of the C++ lies in
//! comments.
//!
//! Columns: `valid` by the oracle; `Con.⁻` valid with no byte written by the completion (the
//! model wrote it all); `fallback` outputs the completion finished; `completion bytes` per
//! output; seconds per output and the constraint's share of them.
//!
//! `cargo run --release --example eval_default -- [N] [smiles,json,cpp=30] [none,reject,mask,mask-lazy] [TEMPERATURE] [low-confidence|random]`
//! (temperature 1 and low-confidence remasking by default, as `lacuna generate` samples models
//! trained by lacuna; `LACUNA_EVAL_BLOCK=N` draws in blocks of N positions instead of
//! `tasks::default_block`'s, 1 being strictly left to right; `LACUNA_EVAL_WHOLE_SCHEMA=1`
//! steers JSON by the schema's whole language, as `lacuna generate --whole-schema`, instead
//! of its generation subset)

#[path = "../tests/corpus/mod.rs"]
mod corpus;
#[path = "held_out.rs"]
mod held_out;
#[path = "../tests/schema_support/mod.rs"]
mod schema_support;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use candle_core::{DType, Device};
use lacuna::checker::Checker;
use lacuna::diffusion::default_model::{load_default, LoadedModel};
use lacuna::diffusion::tasks;
use lacuna::diffusion::{
    generate, generate_masked, Constraint, GenerateOptions, Generation, LLaDASampler,
    MaskConstraint, Remasking, TokenTable,
};
use lacuna::grammar::schema::SchemaOptions;
use lacuna::vocab::Vocabulary;
use serde_json::{json, Value};

/// One generation to make: the task, the grammar, the prompt, the fixed start of the output
/// (a C++ task's declaration: the model sees it after the prompt, the grammar and the oracle
/// read it before the output), and the JSON schema if any.
struct Case {
    task: &'static str,
    spec: String,
    prompt: String,
    prefix: String,
    schema: Option<Value>,
    seed: u64,
}

#[derive(Default)]
struct Tally {
    n: usize,
    valid: usize,
    /// Valid with nothing written by the completion.
    model_valid: usize,
    /// The stricter tool: SMILES read by purr whose ring bonds also pair up (a molecule
    /// graph); C++ that `g++ -std=c++17 -fsyntax-only` accepts.
    strict: usize,
    fallback: usize,
    completion_bytes: usize,
    rejections: u64,
    total: Duration,
    checker: Duration,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(100, |s| s.parse().expect("N"));
    let domains = args
        .get(2)
        .map_or("smiles,json,cpp".to_string(), String::clone);
    let modes: Vec<String> = args
        .get(3)
        .map_or("none,reject,mask,mask-lazy", String::as_str)
        .split(',')
        .map(String::from)
        .collect();
    let temperature: f64 = args.get(4).map_or(1.0, |s| s.parse().expect("temperature"));
    let remasking = match args.get(5).map_or("low-confidence", String::as_str) {
        "low-confidence" => Remasking::LowConfidence,
        "random" => Remasking::Random,
        r => panic!("remasking {r}: expected low-confidence or random"),
    };
    let loaded = load_default(DType::F32, &Device::Cpu).expect("default model");
    let eos = [loaded.model.eos_token_id()];
    let table = TokenTable::from_tokens(&loaded.tokens, &eos);
    let vocab = Arc::new(loaded.tokens.vocabulary(&eos, loaded.model.vocab_size()));
    let mut log = std::io::BufWriter::new(
        std::fs::File::create("target/eval_default.jsonl").expect("target/ exists"),
    );
    println!("| domain | mode | valid | Con.⁻ | molecules / g++ | fallback | completion bytes/output | rejections/output | s/output | constraint share |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for item in domains.split(',') {
        // `cpp=30`: a count for one domain.
        let (domain, count) = match item.split_once('=') {
            Some((d, k)) => (d, k.parse().expect("count")),
            None => (item, n),
        };
        let cases = cases(domain, count);
        for mode in &modes {
            let mut t = Tally::default();
            for case in &cases {
                let (out, secs) = run(
                    &loaded,
                    &table,
                    &vocab,
                    case,
                    mode,
                    (temperature, remasking),
                );
                let whole = [case.prefix.as_bytes(), &out.text].concat();
                let (valid, strict) = oracle(case, &whole);
                t.n += 1;
                t.valid += valid as usize;
                t.model_valid += (valid && out.stats.completion_bytes == 0) as usize;
                t.strict += strict as usize;
                t.fallback += out.stats.fallback as usize;
                t.completion_bytes += out.stats.completion_bytes;
                t.rejections += out.stats.rejections;
                t.total += secs;
                t.checker += out.stats.checker_time;
                let line = json!({"task": case.task, "mode": mode, "seed": case.seed,
                    "valid": valid, "strict": strict, "fallback": out.stats.fallback,
                    "completion_bytes": out.stats.completion_bytes,
                    "rejections": out.stats.rejections, "masks": out.stats.masks,
                    "empty_masks": out.stats.empty_masks, "unknown_ids": out.stats.unknown_ids,
                    "unfilled": out.stats.unfilled, "extra_positions": out.stats.extra_positions,
                    "removed_positions": out.stats.removed_positions,
                    "spelled_tokens": out.stats.spelled_tokens,
                    "gave_up": out.stats.gave_up, "steps": out.stats.steps,
                    "seconds": secs.as_secs_f64(),
                    "constraint_seconds": out.stats.checker_time.as_secs_f64(),
                    "mask_seconds": out.stats.mask_time.as_secs_f64(),
                    "checks": out.stats.checks, "forward_passes": out.stats.forward_passes,
                    "prompt": case.prompt, "prefix": case.prefix,
                    "text": String::from_utf8_lossy(&out.text)});
                writeln!(log, "{line}").expect("write");
                log.flush().expect("flush");
            }
            print_row(domain, mode, &t);
        }
    }
}

fn cases(domain: &str, n: usize) -> Vec<Case> {
    match domain {
        "smiles" => seeds(tasks::SMILES, tasks::smiles_prompt(), n),
        "cpp" => functions(n),
        "json" => schemas(n)
            .into_iter()
            .enumerate()
            .map(|(i, (path, schema))| Case {
                task: tasks::JSON,
                spec: format!("schema:{path}"),
                prompt: tasks::json_prompt(&schema),
                prefix: String::new(),
                schema: Some(schema),
                seed: i as u64,
            })
            .collect(),
        d => panic!("unknown domain {d}"),
    }
}

/// `n` generations of a task with one prompt (its grammar is named as the task), seeds 0..n.
fn seeds(task: &'static str, prompt: String, n: usize) -> Vec<Case> {
    (0..n as u64)
        .map(|seed| Case {
            task,
            spec: task.into(),
            prompt: prompt.clone(),
            prefix: String::new(),
            schema: None,
            seed,
        })
        .collect()
}

/// The first `n` of the held-out HumanEval-X tasks (the last [`held_out::HUMANEVAL_TASKS`]):
/// the model writes the body of each declaration, as it was taught on the others.
fn functions(n: usize) -> Vec<Case> {
    assert!(
        n <= held_out::HUMANEVAL_TASKS,
        "at most {} HumanEval-X tasks are held out of training",
        held_out::HUMANEVAL_TASKS
    );
    let tasks = corpus::humaneval_cpp();
    tasks[tasks.len() - held_out::HUMANEVAL_TASKS..][..n]
        .iter()
        .enumerate()
        .map(|(i, t)| Case {
            task: tasks::CPP,
            spec: tasks::CPP.into(),
            prompt: tasks::cpp_prompt(),
            prefix: t.declaration.clone(),
            schema: None,
            seed: i as u64,
        })
        .collect()
}

/// The first `n` JSONSchemaBench schemas of the kind the model was trained on (compiled in
/// strict mode, prompt of at most `MAX_JSON_PROMPT` bytes), written to `target/eval_schemas/`;
/// at most [`held_out::JSON_SCHEMAS`], the ones its training left out.
fn schemas(n: usize) -> Vec<(String, Value)> {
    assert!(
        n <= held_out::JSON_SCHEMAS,
        "at most {} JSON schemas are held out of training",
        held_out::JSON_SCHEMAS
    );
    std::fs::create_dir_all("target/eval_schemas").expect("mkdir");
    let mut out = Vec::new();
    for schema in schema_support::maskbench().into_iter().map(|e| e.schema) {
        if !held_out::json_eligible(&schema, |s| schema_support::oracle(s).is_some()) {
            continue;
        }
        let path = format!("target/eval_schemas/{}.json", out.len());
        std::fs::write(&path, schema.to_string()).expect("write schema");
        out.push((path, schema));
        if out.len() == n {
            break;
        }
    }
    out
}

fn run(
    m: &LoadedModel,
    table: &TokenTable,
    vocab: &Arc<Vocabulary>,
    case: &Case,
    mode: &str,
    (temperature, remasking): (f64, Remasking),
) -> (Generation, Duration) {
    let length = m.card.as_ref().expect("card").tasks[case.task].length;
    // LACUNA_EVAL_BLOCK overrides the block length (1: strictly left to right).
    let block = std::env::var("LACUNA_EVAL_BLOCK")
        .ok()
        .map_or(tasks::default_block(length), |b| {
            b.parse().expect("LACUNA_EVAL_BLOCK")
        });
    let mut sampler = LLaDASampler::new(length, block)
        .temperature(temperature)
        .remasking(remasking);
    // The prefix is encoded on its own, as `lacuna generate --prefix` and `lacuna eval` do.
    let prefix = m.tokens.encode(&case.prefix).expect("encode");
    let mut prompt = m.tokens.encode(&case.prompt).expect("encode");
    prompt.extend_from_slice(&prefix);
    // As `lacuna generate` runs it.
    let mut options = GenerateOptions::new(length, case.seed);
    options.stop_when_settled = true;
    // As `lacuna generate` builds it: a JSON Schema compiled for generation while the grammar
    // steers, unless LACUNA_EVAL_WHOLE_SCHEMA is set (as --whole-schema).
    let schema_options =
        if mode == "unconstrained" || std::env::var_os("LACUNA_EVAL_WHOLE_SCHEMA").is_some() {
            SchemaOptions::default()
        } else {
            SchemaOptions::for_generation()
        };
    let mut checker = Checker::from_spec_with(&case.spec, &schema_options).expect("grammar");
    let model = m.model.as_ref();
    let t0 = Instant::now();
    let out = match mode {
        "mask" | "mask-lazy" => {
            checker.set_vocabulary(vocab.clone());
            let mut c =
                MaskConstraint::with_prefix(&mut checker, &prefix, length).expect("vocabulary");
            if mode == "mask-lazy" {
                c = c.lazy();
            }
            generate_masked(model, &mut sampler, &prompt, &options, &mut c)
        }
        "reject" => {
            let mut c =
                Constraint::with_prefix(&mut checker, table, case.prefix.as_bytes(), length);
            generate(model, &mut sampler, table, &prompt, &options, Some(&mut c))
        }
        "none" => generate(model, &mut sampler, table, &prompt, &options, None),
        m => panic!("unknown mode {m}: none, reject, mask or mask-lazy"),
    }
    .expect("generate");
    (out, t0.elapsed())
}

/// (valid, strict): the oracle's verdict; for SMILES also whether ring bonds pair up, for C++
/// whether g++ accepts it.
fn oracle(case: &Case, text: &[u8]) -> (bool, bool) {
    let Ok(text) = std::str::from_utf8(text) else {
        return (false, false);
    };
    match case.task {
        tasks::SMILES => {
            let mut builder = purr::graph::Builder::new();
            let read = purr::read::read(text, &mut builder, None).is_ok();
            // purr's builder panics on some chirality classes; a panic counts as no molecule.
            let built =
                read && std::panic::catch_unwind(move || builder.build().is_ok()).unwrap_or(false);
            (read, built)
        }
        tasks::JSON => {
            let ok = serde_json::from_str::<Value>(text).is_ok_and(|v| {
                schema_support::oracle(case.schema.as_ref().expect("schema"))
                    .is_some_and(|s| s.is_valid(&v))
            });
            (ok, false)
        }
        _ => {
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&tree_sitter_cpp::LANGUAGE.into())
                .expect("tree-sitter-cpp");
            let ok = parser
                .parse(text, None)
                .is_some_and(|t| !t.root_node().has_error());
            (ok, gpp_accepts(text))
        }
    }
}

/// Whether `g++ -std=c++17 -fsyntax-only` accepts `src` (false when g++ is missing).
fn gpp_accepts(src: &str) -> bool {
    corpus::gpp_accepts(src).unwrap_or(false)
}

fn print_row(domain: &str, mode: &str, t: &Tally) {
    let pct = |k: usize| 100.0 * k as f64 / t.n.max(1) as f64;
    let molecules = if domain == "json" {
        "–".into()
    } else {
        format!("{:.0}%", pct(t.strict))
    };
    println!(
        "| {domain} | {mode} | {:.0}% | {:.0}% | {molecules} | {} | {:.1} | {:.1} | {:.2} | {:.0}% |",
        pct(t.valid),
        pct(t.model_valid),
        t.fallback,
        t.completion_bytes as f64 / t.n.max(1) as f64,
        t.rejections as f64 / t.n.max(1) as f64,
        t.total.as_secs_f64() / t.n.max(1) as f64,
        100.0 * t.checker.as_secs_f64() / t.total.as_secs_f64().max(1e-9),
    );
}
