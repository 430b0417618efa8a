//! `lacuna eval prepare`: the task files, from local data, with a manifest.
//!
//! Everything comes from the copies in `tests/data` (or the paper's own files when a user has
//! them), so a fresh clone prepares the same files byte for byte: items keep their source's
//! order, and the removed spans and lines of the infilling tasks come from a seeded generator.
//! Each item says whether lacuna's embedded model was trained on it (`held_out`), with the
//! rule in the manifest, since a model's score on items it memorized is not a skill.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::records::{Functional, GrammarKind, JsonlWriter, MriItem, TaskItem};
use crate::diffusion::tasks::{json_prompt, MAX_JSON_PROMPT};
use crate::diffusion::Rng;
use crate::grammar::schema::{compile, SchemaOptions};

/// HumanEval-X tasks the embedded model was not trained on: the last this many (the same
/// rule as `eval/held_out.rs`, which the corpus builder reads; a test keeps the two equal).
pub const HUMANEVAL_HELD_OUT: usize = 20;

/// JSONSchemaBench schemas the embedded model was not trained on: the first this many
/// eligible ones of `jsonschemabench.jsonl.gz` (same rule as `eval/held_out.rs`).
pub const JSON_HELD_OUT: usize = 100;

/// Tasks the paper leaves out of MRI: a helper function before the target one, or a
/// canonical solution that ends in the test header (PROTOCOL 1.5).
pub const MRI_EXCLUDED: [&str; 5] = ["CPP/10", "CPP/32", "CPP/38", "CPP/50", "CPP/94"];

/// The paper's system prompt for C++ (its Figure 10), word for word.
const CPP_SYSTEM: &str = "You are an expert in C++ programming. Solve the given problem by \
writing solution code in C++.\nWhen answering, insert the solution code in a ```cpp...``` \
block. Do neither include test cases not a main function.";

/// The paper's SMILES system prompt (its Figure 12), word for word.
const SMILES_SYSTEM: &str = include_str!("smiles_system.txt");

/// The user turn of the JSON stand-in task, which has no extraction text.
const JSON_STANDIN_USER: &str = "Write one JSON value that follows the schema.";

#[derive(Args, Debug)]
pub struct PrepareArgs {
    /// Folder for the task files and MANIFEST.json.
    #[arg(long)]
    out: PathBuf,
    /// HumanEval-X C++ (gzipped JSON lines).
    #[arg(long, default_value = "tests/data/humaneval_cpp.jsonl.gz")]
    humaneval: PathBuf,
    /// ChEBI-20 test split (CID, SMILES, description; tab-separated, gzipped or not): the
    /// SMILES stand-in task when --smiles-hf is absent.
    #[arg(long, default_value = "tests/data/chebi20_test.tsv.gz")]
    chebi: PathBuf,
    /// JSONSchemaBench schemas (gzipped JSON lines): the JSON stand-in task when --json-hf is
    /// absent.
    #[arg(long, default_value = "tests/data/jsonschemabench.jsonl.gz")]
    jsonschemabench: PathBuf,
    /// The paper's JSON task (eth-sri/json-mode-eval-extended as JSON lines: instance_id,
    /// input, output, schema).
    #[arg(long)]
    json_hf: Option<PathBuf>,
    /// The paper's SMILES task (eth-sri/smiles-eval as JSON lines: instance_id, input,
    /// output).
    #[arg(long)]
    smiles_hf: Option<PathBuf>,
    /// Seed of the removed spans and lines of the infilling tasks.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

/// One written task file, for the manifest.
struct Written {
    name: String,
    source: String,
    source_sha256: String,
    count: usize,
    held_out: usize,
    excluded: Vec<Value>,
    note: &'static str,
}

pub fn run(args: PrepareArgs) -> Result<bool, String> {
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let mut written = Vec::new();

    let (he_bytes, humaneval) = read_humaneval(&args.humaneval)?;
    let he_source = args.humaneval.display().to_string();
    let he_hash = sha256(&he_bytes);
    let cpp = dlm_cpp(&humaneval)?;
    written.push(write_items(
        &args.out, "dlm-cpp", &cpp, &he_source, &he_hash,
    )?);

    let (name, smiles_bytes, smiles) = match &args.smiles_hf {
        Some(p) => (p, read_file(p)?, None),
        None => (&args.chebi, read_file(&args.chebi)?, Some(())),
    };
    let smiles_items = match smiles {
        Some(()) => dlm_smiles_chebi(&name.display().to_string(), &smiles_bytes)?,
        None => dlm_smiles_hf(name, &smiles_bytes)?,
    };
    let mut w = write_items(
        &args.out,
        "dlm-smiles",
        &smiles_items,
        &name.display().to_string(),
        &sha256(&smiles_bytes),
    )?;
    if args.smiles_hf.is_none() {
        w.note = "stand-in: ChEBI-20 test descriptions, not the paper's 167 pairs; not \
                  comparable with the paper's SMILES columns";
    }
    written.push(w);

    let (name, json_bytes) = match &args.json_hf {
        Some(p) => (p, read_file(p)?),
        None => (&args.jsonschemabench, read_file(&args.jsonschemabench)?),
    };
    let json_items = match &args.json_hf {
        Some(p) => dlm_json_hf(p, &json_bytes)?,
        None => dlm_json_standin(&name.display().to_string(), &json_bytes)?,
    };
    let mut w = write_items(
        &args.out,
        "dlm-json",
        &json_items,
        &name.display().to_string(),
        &sha256(&json_bytes),
    )?;
    if args.json_hf.is_none() {
        w.note = "stand-in: the 100 JSONSchemaBench schemas held out of the embedded model, no \
                  extraction text, scored by schema validity (as Dgrammar does); not comparable \
                  with the paper's JSON columns";
    }
    written.push(w);

    for lines in [false, true] {
        for k in 1..=3 {
            let (items, excluded) = mri(&humaneval, k, lines, args.seed)?;
            let name = format!("{}-{k}", if lines { "mril" } else { "mri" });
            let mut w = write_items(&args.out, &name, &items, &he_source, &he_hash)?;
            w.excluded = excluded;
            w.note = "regenerated with the paper's rule and this seed: comparable in \
                      distribution only (the paper's spans cannot be regenerated exactly)";
            written.push(w);
        }
    }

    let manifest = json!({
        "created_by": format!("lacuna {} eval prepare", env!("CARGO_PKG_VERSION")),
        "seed": args.seed,
        "held_out_rules": {
            "dlm-cpp, mri-*, mril-*": format!(
                "the last {HUMANEVAL_HELD_OUT} HumanEval-X tasks (the embedded model was trained \
                 on declaration + canonical solution of the others)"),
            "dlm-json": format!(
                "stand-in: the first {JSON_HELD_OUT} JSONSchemaBench schemas whose prompt fits \
                 {MAX_JSON_PROMPT} bytes, that lacuna compiles strictly and the jsonschema crate \
                 builds (the embedded model never saw them); --json-hf items are all held out"),
            "dlm-smiles": "all: the embedded model saw no descriptions (it cannot condition on \
                 one, so its functional SMILES score measures chance)",
        },
        "tasks": written.iter().map(|w| (w.name.clone(), json!({
            "file": format!("{}.jsonl", w.name),
            "source": w.source,
            "source_sha256": w.source_sha256,
            "count": w.count,
            "held_out": w.held_out,
            "excluded": w.excluded,
            "note": w.note,
            "file_sha256": sha256(&std::fs::read(args.out.join(format!("{}.jsonl", w.name))).unwrap_or_default()),
        }))).collect::<serde_json::Map<_, _>>(),
    });
    let path = args.out.join("MANIFEST.json");
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    std::fs::write(&path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    for w in &written {
        eprintln!(
            "{}: {} items ({} held out{})",
            w.name,
            w.count,
            w.held_out,
            if w.excluded.is_empty() {
                String::new()
            } else {
                format!(", {} excluded", w.excluded.len())
            }
        );
    }
    Ok(true)
}

/// Items that say whether they were held out, for the manifest's count.
trait HeldOut: serde::Serialize {
    fn held_out(&self) -> bool;
}

impl HeldOut for TaskItem {
    fn held_out(&self) -> bool {
        self.held_out
    }
}

impl HeldOut for MriItem {
    fn held_out(&self) -> bool {
        self.held_out
    }
}

fn write_items<T: HeldOut>(
    out: &Path,
    name: &str,
    items: &[T],
    source: &str,
    source_sha256: &str,
) -> Result<Written, String> {
    let mut w = JsonlWriter::create(&out.join(format!("{name}.jsonl")))?;
    for item in items {
        w.write(item)?;
    }
    Ok(Written {
        name: name.to_string(),
        source: source.to_string(),
        source_sha256: source_sha256.to_string(),
        count: items.len(),
        held_out: items.iter().filter(|i| i.held_out()).count(),
        excluded: Vec::new(),
        note: "",
    })
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A file's bytes, gunzipped when it is gzip.
fn read_file(path: &Path) -> Result<Vec<u8>, String> {
    let raw = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .map_err(|e| format!("{}: not a readable gzip file: {e}", path.display()))?;
        return Ok(out);
    }
    Ok(raw)
}

/// The JSON objects of a JSON-lines text, each with its line number for errors.
fn json_lines(path: &Path, bytes: &[u8]) -> Result<Vec<Value>, String> {
    let text =
        std::str::from_utf8(bytes).map_err(|e| format!("{}: not UTF-8: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}

/// A string field of a source record, or an error naming the file, record and field.
fn field<'a>(path: &Path, i: usize, v: &'a Value, name: &str) -> Result<&'a str, String> {
    v.get(name).and_then(Value::as_str).ok_or_else(|| {
        format!(
            "{}: record {}: missing string field `{name}`",
            path.display(),
            i + 1
        )
    })
}

/// One HumanEval-X task.
pub struct HumanEvalTask {
    pub task_id: String,
    pub prompt: String,
    pub declaration: String,
    pub canonical_solution: String,
    pub test: String,
}

fn read_humaneval(path: &Path) -> Result<(Vec<u8>, Vec<HumanEvalTask>), String> {
    let bytes = read_file(path)?;
    let mut tasks = Vec::new();
    for (i, v) in json_lines(path, &bytes)?.iter().enumerate() {
        tasks.push(HumanEvalTask {
            task_id: field(path, i, v, "task_id")?.to_string(),
            prompt: field(path, i, v, "prompt")?.to_string(),
            declaration: field(path, i, v, "declaration")?.to_string(),
            canonical_solution: field(path, i, v, "canonical_solution")?.to_string(),
            test: field(path, i, v, "test")?.to_string(),
        });
    }
    if tasks.is_empty() {
        return Err(format!("{}: no tasks", path.display()));
    }
    Ok((bytes, tasks))
}

/// The docstring of a HumanEval-X prompt: the text between the first `/*` and the next `*/`,
/// trimmed (the paper's user turn).
fn docstring(prompt: &str) -> String {
    let Some(start) = prompt.find("/*") else {
        return prompt.trim().to_string();
    };
    let rest = &prompt[start + 2..];
    let end = rest.find("*/").unwrap_or(rest.len());
    rest[..end].trim().to_string()
}

fn held_out_humaneval(i: usize, n: usize) -> bool {
    i + HUMANEVAL_HELD_OUT >= n
}

fn dlm_cpp(tasks: &[HumanEvalTask]) -> Result<Vec<TaskItem>, String> {
    Ok(tasks
        .iter()
        .enumerate()
        .map(|(i, t)| TaskItem {
            task: "dlm-cpp".into(),
            id: t.task_id.clone(),
            source: "HumanEval-X C++".into(),
            system: CPP_SYSTEM.into(),
            user: docstring(&t.prompt),
            prefill: format!("```cpp\n{}", t.declaration),
            fixed_prefix: t.declaration.clone(),
            grammar: GrammarKind::Cpp,
            schema: None,
            gold: Some(t.canonical_solution.clone()),
            tests: Some(t.test.clone()),
            functional: Functional::Tests,
            held_out: held_out_humaneval(i, tasks.len()),
        })
        .collect())
}

/// ChEBI-20 rows (`CID<TAB>SMILES<TAB>description`, a header first); the doubled backslashes
/// of its SMILES (an escaping artifact) are undone.
fn dlm_smiles_chebi(source: &str, bytes: &[u8]) -> Result<Vec<TaskItem>, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("{source}: not UTF-8: {e}"))?;
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [cid, smiles, description] = cols[..] else {
            return Err(format!(
                "{source}:{}: expected 3 tab-separated columns (CID, SMILES, description), \
                 found {}",
                i + 1,
                cols.len()
            ));
        };
        items.push(smiles_item(
            format!("chebi20/{cid}"),
            "ChEBI-20 test",
            description,
            &smiles.replace("\\\\", "\\"),
        ));
    }
    Ok(items)
}

fn dlm_smiles_hf(path: &Path, bytes: &[u8]) -> Result<Vec<TaskItem>, String> {
    json_lines(path, bytes)?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            Ok(smiles_item(
                instance_id(path, i, v)?,
                "eth-sri/smiles-eval",
                field(path, i, v, "input")?,
                field(path, i, v, "output")?,
            ))
        })
        .collect()
}

fn smiles_item(id: String, source: &str, description: &str, gold: &str) -> TaskItem {
    TaskItem {
        task: "dlm-smiles".into(),
        id,
        source: source.into(),
        system: SMILES_SYSTEM.into(),
        user: description.trim().to_string(),
        prefill: "```smiles\n".into(),
        fixed_prefix: String::new(),
        grammar: GrammarKind::Smiles,
        schema: None,
        gold: Some(gold.to_string()),
        tests: None,
        functional: Functional::SmilesEqual,
        held_out: true,
    }
}

/// `instance_id` as a string (the HF exports write strings; an integer is accepted too).
fn instance_id(path: &Path, i: usize, v: &Value) -> Result<String, String> {
    match v.get("instance_id") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        _ => Err(format!(
            "{}: record {}: missing field `instance_id`",
            path.display(),
            i + 1
        )),
    }
}

/// The paper's JSON system prompt, as its code writes it ("Here's", a final newline).
fn json_system(schema: &str) -> String {
    format!(
        "You are a helpful assistant that answers in JSON. Here's the JSON schema you must \
         adhere to:\n<schema>\n{schema}\n</schema>\n"
    )
}

fn dlm_json_hf(path: &Path, bytes: &[u8]) -> Result<Vec<TaskItem>, String> {
    json_lines(path, bytes)?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let schema_text = field(path, i, v, "schema")?;
            let schema: Value = serde_json::from_str(schema_text).map_err(|e| {
                format!(
                    "{}: record {}: `schema` is not JSON: {e}",
                    path.display(),
                    i + 1
                )
            })?;
            Ok(TaskItem {
                task: "dlm-json".into(),
                id: instance_id(path, i, v)?,
                source: "eth-sri/json-mode-eval-extended".into(),
                system: json_system(schema_text),
                user: field(path, i, v, "input")?.to_string(),
                prefill: "```json\n".into(),
                fixed_prefix: String::new(),
                grammar: GrammarKind::Schema,
                schema: Some(schema),
                gold: Some(field(path, i, v, "output")?.to_string()),
                tests: None,
                functional: Functional::JsonEqual,
                held_out: true,
            })
        })
        .collect()
}

/// Whether the embedded model's corpus builder held a schema out (`eval/held_out.rs`).
pub fn json_eligible(schema: &Value) -> bool {
    json_prompt(schema).len() <= MAX_JSON_PROMPT
        && compile(schema, &SchemaOptions::default()).is_ok()
        && jsonschema::options()
            .should_validate_formats(true)
            .build(schema)
            .is_ok()
}

fn dlm_json_standin(source: &str, bytes: &[u8]) -> Result<Vec<TaskItem>, String> {
    let path = Path::new(source);
    let mut items = Vec::new();
    for (i, v) in json_lines(path, bytes)?.iter().enumerate() {
        if items.len() == JSON_HELD_OUT {
            break;
        }
        let name = field(path, i, v, "name")?;
        let schema = v
            .pointer("/content/schema")
            .ok_or_else(|| format!("{source}: record {}: missing `content.schema`", i + 1))?;
        if !json_eligible(schema) {
            continue;
        }
        let gold = v
            .pointer("/content/tests")
            .and_then(Value::as_array)
            .and_then(|ts| ts.iter().find(|t| t["valid"] == Value::Bool(true)))
            .map(|t| t["data"].to_string());
        items.push(TaskItem {
            task: "dlm-json".into(),
            id: name.to_string(),
            source: "JSONSchemaBench".into(),
            system: json_system(&schema.to_string()),
            user: JSON_STANDIN_USER.into(),
            prefill: "```json\n".into(),
            fixed_prefix: String::new(),
            grammar: GrammarKind::Schema,
            schema: Some(schema.clone()),
            gold,
            tests: None,
            functional: Functional::SchemaValid,
            held_out: true,
        });
    }
    Ok(items)
}

/// A uniform integer in `lo..=hi`.
fn uniform(rng: &mut Rng, lo: usize, hi: usize) -> usize {
    lo + (rng.next_u64() % (hi - lo + 1) as u64) as usize
}

/// Byte ranges removed from `solution`: `k` random spans of 5–100 bytes that neither overlap
/// nor touch (the paper's rule, 1000 attempts), or `k` random non-blank lines with adjacent
/// ones merged into one region (MRI-L). `None` when the rule finds too few.
fn removed_regions(
    solution: &str,
    k: usize,
    lines: bool,
    rng: &mut Rng,
) -> Option<Vec<(usize, usize)>> {
    if lines {
        let mut spans = Vec::new();
        let mut at = 0;
        for line in solution.split_inclusive('\n') {
            let body = line.trim_end_matches('\n');
            if !body.trim().is_empty() {
                spans.push((at, at + body.len()));
            }
            at += line.len();
        }
        if spans.len() < k {
            return None;
        }
        // k distinct lines, uniformly (a partial Fisher-Yates shuffle).
        for i in 0..k {
            let j = uniform(rng, i, spans.len() - 1);
            spans.swap(i, j);
        }
        let mut picked = spans[..k].to_vec();
        picked.sort();
        // Adjacent lines (only a newline between them) become one region.
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for (s, e) in picked {
            match merged.last_mut() {
                Some(last) if solution[last.1..s].chars().all(|c| c == '\n') && s == last.1 + 1 => {
                    last.1 = e
                }
                _ => merged.push((s, e)),
            }
        }
        return Some(merged);
    }
    let n = solution.len();
    if n < 5 {
        return None;
    }
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for _ in 0..1000 {
        if spans.len() == k {
            break;
        }
        let len = uniform(rng, 5, 100.min(n));
        let start = uniform(rng, 0, n - len);
        let (s, e) = (start, start + len);
        if !solution.is_char_boundary(s) || !solution.is_char_boundary(e) {
            continue;
        }
        if spans.iter().all(|&(a, b)| e < a || s > b) {
            spans.push((s, e));
        }
    }
    if spans.len() < k {
        return None;
    }
    spans.sort();
    Some(spans)
}

/// The `k`-region infilling items (spans, or lines with `lines`) of every task but the
/// excluded ones; one generator, seeded once, draws every task's regions in order.
fn mri(
    tasks: &[HumanEvalTask],
    k: usize,
    lines: bool,
    seed: u64,
) -> Result<(Vec<MriItem>, Vec<Value>), String> {
    // One stream per (k, kind), so adding a task kind never shifts another's regions.
    let mut rng = Rng::new(seed ^ ((k as u64) << 32) ^ if lines { 1 << 40 } else { 0 });
    let mut items = Vec::new();
    let mut excluded = Vec::new();
    let kind = if lines { "lines" } else { "spans" };
    for (i, t) in tasks.iter().enumerate() {
        let regions = removed_regions(&t.canonical_solution, k, lines, &mut rng);
        if MRI_EXCLUDED.contains(&t.task_id.as_str()) {
            excluded.push(
                json!({"id": t.task_id, "reason": "the paper's MRI exclusions: a \
                helper function before the target one, or the test header in the solution"}),
            );
            continue;
        }
        let Some(regions) = regions else {
            excluded.push(
                json!({"id": t.task_id, "reason": format!("fewer than {k} removable {kind}")}),
            );
            continue;
        };
        let s = &t.canonical_solution;
        let mut splits = Vec::new();
        let mut removed = Vec::new();
        let mut at = 0;
        for &(a, b) in &regions {
            splits.push(s[at..a].to_string());
            removed.push(s[a..b].to_string());
            at = b;
        }
        splits.push(s[at..].to_string());
        items.push(MriItem {
            task: format!("{}-{k}", if lines { "mril" } else { "mri" }),
            id: format!("{}_{kind}_{k}", t.task_id),
            source: "HumanEval-X C++".into(),
            prompt: t.prompt.clone(),
            declaration: t.declaration.clone(),
            splits,
            removed,
            test: t.test.clone(),
            held_out: held_out_humaneval(i, tasks.len()),
        });
    }
    Ok((items, excluded))
}
