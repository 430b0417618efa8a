//! `lacuna eval score`: each result file's records judged by lacuna's grammar and by the
//! independent tools, for Con.⁻ (the text the model wrote) and Con. (with the grammar's
//! completion where one was needed). Writes `X.scored.jsonl` beside each `X.jsonl`.
//!
//! A record whose generation failed scores false everywhere, with its error as the reason; a
//! tool that is missing is named before anything is scored; a test that hangs fails its item
//! after the time limit. Scored files are written one at a time, so what was scored before an
//! interruption stays.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use clap::Args;

use super::oracles::{json_equal, json_valid, Gxx, Outcome, Rdkit};
use super::records::{
    extract, read_jsonl, read_task_file, Functional, GrammarKind, JsonlWriter, ResultRecord,
    ScoredRecord, TaskFile, TaskItem, Verdicts,
};
use super::run::ItemCheckers;

#[derive(Args, Debug)]
pub struct ScoreArgs {
    /// Result files of `eval run` (`*.scored.jsonl` files are skipped).
    #[arg(required = true)]
    results: Vec<PathBuf>,
    /// The folder of the task files (`eval prepare --out`).
    #[arg(long)]
    tasks: PathBuf,
    /// Seconds each compile and each test run may take.
    #[arg(long, default_value_t = 20.0)]
    timeout: f64,
    /// C++ programs compiled at once (default: the number of CPUs).
    #[arg(long)]
    jobs: Option<usize>,
    /// Python interpreter with RDKit (default: $LACUNA_PYTHON, else target/eval-venv, else
    /// python3).
    #[arg(long)]
    python: Option<String>,
    /// The C++ compiler.
    #[arg(long, default_value = "g++")]
    gxx: String,
}

pub fn run(args: ScoreArgs) -> Result<bool, String> {
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        return Err(format!("--timeout {}: must be positive", args.timeout));
    }
    let files: Vec<&PathBuf> = args
        .results
        .iter()
        .filter(|p| !p.to_string_lossy().ends_with(".scored.jsonl"))
        .collect();
    if files.is_empty() {
        return Err("no result files to score (only *.scored.jsonl given)".into());
    }
    // Read everything first: a bad file is named before any tool runs.
    let mut inputs = Vec::new();
    for f in &files {
        let records: Vec<ResultRecord> = read_jsonl(f)?;
        inputs.push((*f, records));
    }
    let mut items: HashMap<String, HashMap<String, TaskItem>> = HashMap::new();
    for (f, records) in &inputs {
        for r in records {
            if !items.contains_key(&r.task) {
                let path = args.tasks.join(format!("{}.jsonl", r.task));
                let list = read_items(&path)?;
                items.insert(
                    r.task.clone(),
                    list.into_iter().map(|i| (i.id.clone(), i)).collect(),
                );
            }
            if !items[&r.task].contains_key(&r.id) {
                return Err(format!(
                    "{}: item {} of task {} is not in {}",
                    f.display(),
                    r.id,
                    r.task,
                    args.tasks.join(format!("{}.jsonl", r.task)).display()
                ));
            }
        }
    }
    let kinds: Vec<GrammarKind> = items
        .values()
        .flat_map(|m| m.values().map(|i| i.grammar))
        .collect();
    let limit = Duration::from_secs_f64(args.timeout);
    let gxx = if kinds.contains(&GrammarKind::Cpp) {
        Some(Gxx::find(&args.gxx, limit)?)
    } else {
        None
    };
    let rdkit = if kinds.contains(&GrammarKind::Smiles) {
        Some(Rdkit::find(args.python.as_deref())?)
    } else {
        None
    };
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let mut checkers = ItemCheckers::new(false, None);
    let judges = Judges {
        gxx: gxx.as_ref(),
        rdkit: rdkit.as_ref(),
        jobs,
    };
    for (f, records) in &inputs {
        let out_path = scored_path(f);
        let scored = score_file(records, &items, &judges, &mut checkers)?;
        let mut w = JsonlWriter::create(&out_path)?;
        for s in &scored {
            w.write(s)?;
        }
        eprintln!("{}: {} records", out_path.display(), scored.len());
    }
    Ok(true)
}

/// A task file's items; an infilling item is judged as a C++ answer with its tests (its
/// program is the declaration and the filled solution).
fn read_items(path: &Path) -> Result<Vec<TaskItem>, String> {
    let items = match read_task_file(path)? {
        TaskFile::Dlm(items) => return Ok(items),
        TaskFile::Infilling(items) => items,
    };
    Ok(items
        .into_iter()
        .map(|m| TaskItem {
            task: m.task,
            id: m.id,
            source: m.source,
            system: String::new(),
            user: String::new(),
            prefill: String::new(),
            fixed_prefix: m.declaration,
            grammar: GrammarKind::Cpp,
            schema: None,
            gold: Some(m.removed.join("\n")),
            tests: Some(m.test),
            functional: Functional::Tests,
            held_out: m.held_out,
        })
        .collect())
}

fn scored_path(results: &Path) -> PathBuf {
    let name = results
        .file_name()
        .map_or_else(|| "results".into(), |n| n.to_string_lossy().into_owned());
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    results.with_file_name(format!("{stem}.scored.jsonl"))
}

struct Judges<'a> {
    gxx: Option<&'a Gxx>,
    rdkit: Option<&'a Rdkit>,
    jobs: usize,
}

/// One text to judge by the tools: its item, its extracted answer, and lacuna's grammar's
/// verdict on it.
struct Job<'a> {
    item: &'a TaskItem,
    extracted: String,
    syntax_grammar: bool,
}

/// What the tools said of one text.
#[derive(Clone)]
struct ToolVerdict {
    oracle: Outcome,
    functional: Outcome,
}

fn score_file(
    records: &[ResultRecord],
    items: &HashMap<String, HashMap<String, TaskItem>>,
    judges: &Judges,
    checkers: &mut ItemCheckers,
) -> Result<Vec<ScoredRecord>, String> {
    // Every distinct (item, text) is judged once: Van.'s Con. is its Con.⁻, and equal
    // outputs recur across seeds.
    let mut jobs: Vec<Job> = Vec::new();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    for r in records.iter().filter(|r| r.error.is_none()) {
        let item = &items[&r.task][&r.id];
        for text in [&r.raw_text, &r.text] {
            let extracted = extract(text);
            let key = (r.id.clone(), extracted.clone());
            if let std::collections::hash_map::Entry::Vacant(slot) = index.entry(key) {
                let syntax_grammar = checkers.get(item)?.accepts(extracted.as_bytes());
                slot.insert(jobs.len());
                jobs.push(Job {
                    item,
                    extracted,
                    syntax_grammar,
                });
            }
        }
    }
    let verdicts = judge(&jobs, judges)?;
    let mut out = Vec::new();
    for r in records {
        let verdict = |text: &str| -> Verdicts {
            if let Some(e) = &r.error {
                return Verdicts {
                    extracted: String::new(),
                    reason: Some(format!("generation failed: {e}")),
                    ..Verdicts::default()
                };
            }
            let extracted = extract(text);
            let i = index[&(r.id.clone(), extracted.clone())];
            let v = &verdicts[i];
            Verdicts {
                extracted,
                syntax_grammar: jobs[i].syntax_grammar,
                syntax_oracle: v.oracle.is_ok(),
                functional: v.functional.is_ok(),
                reason: v.oracle.clone().err().or(v.functional.clone().err()),
            }
        };
        out.push(ScoredRecord {
            record: r.clone(),
            con_minus: verdict(&r.raw_text),
            con: verdict(&r.text),
        });
    }
    Ok(out)
}

/// The tools' verdicts on every job: C++ on a pool of threads, SMILES in one RDKit batch,
/// JSON in process.
fn judge(jobs: &[Job], judges: &Judges) -> Result<Vec<ToolVerdict>, String> {
    let mut canonical = HashMap::new();
    if let Some(rdkit) = judges.rdkit {
        let mut smiles: Vec<String> = Vec::new();
        for j in jobs
            .iter()
            .filter(|j| j.item.grammar == GrammarKind::Smiles)
        {
            smiles.push(j.extracted.clone());
            smiles.extend(j.item.gold.clone());
        }
        smiles.sort();
        smiles.dedup();
        canonical = rdkit.canonical(&smiles)?;
    }
    let results: Mutex<Vec<Option<ToolVerdict>>> = Mutex::new(vec![None; jobs.len()]);
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..judges.jobs.max(1) {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().expect("no panics hold it");
                    let i = *n;
                    *n += 1;
                    i
                };
                let Some(job) = jobs.get(i) else { break };
                let v = judge_one(job, judges, &canonical);
                results.lock().expect("no panics hold it")[i] = Some(v);
            });
        }
    });
    Ok(results
        .into_inner()
        .expect("threads joined")
        .into_iter()
        .map(|v| v.expect("every job judged"))
        .collect())
}

fn judge_one(
    job: &Job,
    judges: &Judges,
    canonical: &HashMap<String, Option<String>>,
) -> ToolVerdict {
    let item = job.item;
    let text = &job.extracted;
    match item.grammar {
        GrammarKind::Cpp => {
            let gxx = judges.gxx.expect("g++ found for C++ items");
            let oracle = gxx.syntax(text);
            let functional = match (item.functional, &item.tests) {
                (Functional::Tests, Some(tests)) => {
                    // The paper's checker: the answer, a blank line, the tests.
                    gxx.run_tests(&format!("{text}\n\n{tests}"))
                }
                _ => Err("the item has no tests".into()),
            };
            ToolVerdict { oracle, functional }
        }
        GrammarKind::Schema => {
            let schema = item.schema.as_ref().expect("checked when read");
            let oracle = json_valid(text, schema);
            let functional = match (item.functional, &item.gold) {
                (Functional::JsonEqual, Some(gold)) => json_equal(text, gold),
                _ => oracle.clone(),
            };
            ToolVerdict { oracle, functional }
        }
        GrammarKind::Smiles => {
            let canon = |s: &str| canonical.get(s).cloned().flatten();
            let out = canon(text);
            let oracle = match &out {
                Some(_) => Ok(()),
                None => Err("RDKit cannot sanitize it".to_string()),
            };
            let functional = match (&out, item.gold.as_deref().and_then(canon)) {
                (Some(a), Some(b)) if *a == b => Ok(()),
                (Some(_), Some(_)) => Err("another molecule than the gold".into()),
                (None, _) => Err("RDKit cannot sanitize it".into()),
                (_, None) => Err("RDKit cannot sanitize the gold".into()),
            };
            ToolVerdict { oracle, functional }
        }
    }
}
