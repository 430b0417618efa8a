//! `lacuna eval` end to end, as a researcher runs it: `prepare` from the repository's data,
//! `run` on the embedded model (and on the fixture LLaDA and Dream checkpoints with a
//! hand-written task in the paper's chat format), `score` with g++, the jsonschema crate and
//! RDKit where it is installed, and `tables`. The scores are checked against the tools run
//! here directly, not against values written down.

use std::path::{Path, PathBuf};
use std::process::Command;

use lacuna::diffusion::byte_to_char;
use serde_json::{json, Value};

#[path = "common/tokenizer_json.rs"]
mod tokenizer_json;
use tokenizer_json::{byte_level_tokenizer_json, write_qwen2_fim_checkpoint, QWEN_FIM_SENTINELS};

#[path = "../eval/held_out.rs"]
mod held_out;
#[path = "schema_support/mod.rs"]
mod schema_support;

fn lacuna(args: &[&str]) -> (String, String, bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_lacuna"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lacuna-eval-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Scores every result file in `results` (there must be `count`) against the task files in
/// `tasks`, with `lacuna eval score`; the result files.
fn score_all(tasks: &Path, results: &Path, count: usize) -> Vec<PathBuf> {
    let files: Vec<PathBuf> = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), count);
    let mut args = vec!["eval", "score", "--tasks", s(tasks)];
    args.extend(files.iter().map(|p| s(p)));
    let (_, err, ok) = lacuna(&args);
    assert!(ok, "{err}");
    files
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Whether RDKit can be imported by the interpreter `eval score` would use.
fn rdkit_available() -> bool {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/eval-venv/bin/python");
    let python = std::env::var("LACUNA_PYTHON").unwrap_or_else(|_| {
        if venv.exists() {
            venv.display().to_string()
        } else {
            "python3".into()
        }
    });
    Command::new(python)
        .args(["-c", "import rdkit"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn prepare_writes_every_task_with_held_out_items_as_the_corpus_builder_left_them() {
    let dir = scratch("prepare");
    let (_, err, ok) = lacuna(&["eval", "prepare", "--out", s(&dir)]);
    assert!(ok, "{err}");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("MANIFEST.json")).unwrap()).unwrap();
    for task in [
        "dlm-cpp",
        "dlm-json",
        "dlm-smiles",
        "mri-1",
        "mri-2",
        "mri-3",
        "mril-1",
        "mril-2",
        "mril-3",
    ] {
        let items = jsonl(&dir.join(format!("{task}.jsonl")));
        assert_eq!(manifest["tasks"][task]["count"], items.len(), "{task}");
        assert!(!items.is_empty(), "{task}");
    }
    // DLM C++: all 164 HumanEval-X tasks; the last 20 held out, as eval/held_out.rs says.
    let cpp = jsonl(&dir.join("dlm-cpp.jsonl"));
    assert_eq!(cpp.len(), 164);
    let held: Vec<usize> = (0..cpp.len())
        .filter(|&i| cpp[i]["held_out"] == true)
        .collect();
    assert_eq!(held.len(), held_out::HUMANEVAL_TASKS);
    assert_eq!(held[0], 164 - held_out::HUMANEVAL_TASKS);
    // Every C++ item's prefill ends with its fixed prefix, the declaration.
    for item in &cpp {
        let prefill = item["prefill"].as_str().unwrap();
        assert!(prefill.starts_with("```cpp\n"));
        assert!(prefill.ends_with(item["fixed_prefix"].as_str().unwrap()));
    }
    // DLM JSON stand-in: exactly the schemas the corpus builder held out, in its order.
    let expected: Vec<String> = schema_support::maskbench()
        .into_iter()
        .filter(|e| held_out::json_eligible(&e.schema, |s| schema_support::oracle(s).is_some()))
        .take(held_out::JSON_SCHEMAS)
        .map(|e| e.name)
        .collect();
    let json_ids: Vec<String> = jsonl(&dir.join("dlm-json.jsonl"))
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(json_ids, expected);
    // MRI: the five excluded tasks are absent and listed; the regions put back give the
    // canonical solution; spans are 5-100 bytes; a fixed seed gives the same files.
    let (he, _) = humaneval();
    for k in 1..=3 {
        let items = jsonl(&dir.join(format!("mri-{k}.jsonl")));
        let excluded = manifest["tasks"][format!("mri-{k}")]["excluded"]
            .as_array()
            .unwrap();
        for id in ["CPP/10", "CPP/32", "CPP/38", "CPP/50", "CPP/94"] {
            assert!(excluded.iter().any(|e| e["id"] == id), "{id}");
            assert!(!items
                .iter()
                .any(|i| i["id"].as_str().unwrap().starts_with(&format!("{id}_"))));
        }
        for item in &items {
            let splits: Vec<&str> = item["splits"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            let removed: Vec<&str> = item["removed"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(removed.len(), k);
            assert_eq!(splits.len(), k + 1);
            let mut whole = String::new();
            for (i, r) in removed.iter().enumerate() {
                assert!((5..=100).contains(&r.len()), "{r:?}");
                whole.push_str(splits[i]);
                whole.push_str(r);
            }
            whole.push_str(splits[k]);
            let task_id = item["id"].as_str().unwrap().split('_').next().unwrap();
            assert_eq!(whole, he[task_id], "{task_id}");
        }
        let lines = jsonl(&dir.join(format!("mril-{k}.jsonl")));
        for item in &lines {
            for r in item["removed"].as_array().unwrap() {
                assert!(!r.as_str().unwrap().trim().is_empty());
            }
        }
    }
    let again = scratch("prepare-again");
    assert!(lacuna(&["eval", "prepare", "--out", s(&again)]).2);
    for f in [
        "mri-2.jsonl",
        "mril-3.jsonl",
        "dlm-json.jsonl",
        "MANIFEST.json",
    ] {
        assert_eq!(
            std::fs::read(dir.join(f)).unwrap(),
            std::fs::read(again.join(f)).unwrap(),
            "{f}"
        );
    }
}

/// HumanEval-X canonical solutions by task id, and the raw records.
fn humaneval() -> (std::collections::HashMap<String, String>, Vec<Value>) {
    use std::io::Read;
    let gz = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/humaneval_cpp.jsonl.gz"),
    )
    .unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let map = records
        .iter()
        .map(|r| {
            (
                r["task_id"].as_str().unwrap().to_string(),
                r["canonical_solution"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (map, records)
}

/// `g++ -std=c++17 -fsyntax-only` on a program, run here.
fn gxx_accepts(program: &str, dir: &Path) -> bool {
    let f = dir.join("check.cpp");
    std::fs::write(&f, program).unwrap();
    Command::new("g++")
        .args(["-std=c++17", "-fsyntax-only"])
        .arg(&f)
        .output()
        .unwrap()
        .status
        .success()
}

/// The answer with its item's HumanEval-X tests compiled and run here.
fn gxx_passes_tests(answer: &str, dir: &Path, record: &Value) -> bool {
    let (_, records) = humaneval();
    let task = records
        .iter()
        .find(|t| t["task_id"] == record["id"])
        .unwrap();
    let src = dir.join("t.cpp");
    let exe = dir.join("t.exe");
    std::fs::write(
        &src,
        format!("{answer}\n\n{}", task["test"].as_str().unwrap()),
    )
    .unwrap();
    let built = Command::new("g++")
        .arg("-std=c++17")
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap()
        .success();
    // coreutils' timeout: an answer that loops fails, as the scorer's limit makes it.
    built
        && Command::new("timeout")
            .arg("20")
            .arg(&exe)
            .status()
            .unwrap()
            .success()
}

#[test]
fn the_four_stages_run_on_the_embedded_model() {
    let dir = scratch("embedded");
    let tasks = dir.join("tasks");
    let results = dir.join("results");
    assert!(lacuna(&["eval", "prepare", "--out", s(&tasks)]).2);
    let with_rdkit = rdkit_available();
    // Short schedules keep the test quick on two cores: the plumbing is what is tested here.
    let mut run_tasks = vec![
        ("dlm-json", vec!["--steps", "20"]),
        ("dlm-cpp", vec!["--length", "48", "--steps", "12"]),
    ];
    if with_rdkit {
        run_tasks.push(("dlm-smiles", vec![]));
    } else {
        eprintln!("RDKit is not installed (bash eval/setup-tools.sh): SMILES not run");
    }
    for (task, extra) in &run_tasks {
        let file = tasks.join(format!("{task}.jsonl"));
        let mut args = vec![
            "eval",
            "run",
            "--task",
            s(&file),
            "--modes",
            "van,reject,mask",
            "--seeds",
            "0,1",
            "--limit",
            if *task == "dlm-cpp" { "1" } else { "2" },
            "--out",
            s(&results),
        ];
        args.extend(extra.iter().copied());
        let (_, err, ok) = lacuna(&args);
        assert!(ok, "{task}: {err}");
    }
    let files = score_all(&tasks, &results, run_tasks.len() * 3 * 2);
    // Each scored record agrees with the tools run here, and the modes' promises hold.
    let mut checker_json = std::collections::HashMap::new();
    for f in &files {
        let name = f.file_name().unwrap().to_str().unwrap();
        let scored = jsonl(&results.join(name.replace(".jsonl", ".scored.jsonl")));
        let expected = if name.starts_with("dlm-cpp") { 1 } else { 2 };
        assert_eq!(scored.len(), expected, "{name}");
        for r in &scored {
            assert!(r["error"].is_null(), "{name}: {}", r["error"]);
            let con = &r["con"];
            let minus = &r["con_minus"];
            match r["mode"].as_str().unwrap() {
                // Under masks the grammar holds for what the model wrote, completion or not.
                "mask" | "reject" => assert_eq!(con["syntax_grammar"], true, "{name}: {r}"),
                _ => assert_eq!(r["raw_text"], r["text"]),
            }
            if r["completed"] == false {
                assert_eq!(r["raw_text"], r["text"]);
                assert_eq!(con, minus);
            }
            let text = con["extracted"].as_str().unwrap();
            match r["task"].as_str().unwrap() {
                "dlm-cpp" => {
                    assert_eq!(con["syntax_oracle"], gxx_accepts(text, &dir), "{text}");
                    // The answer starts with the item's declaration, and the scorer judged
                    // the same text g++ judges here.
                    assert!(r["text"].as_str().unwrap().starts_with("#include"));
                    assert_eq!(con["functional"] == true, gxx_passes_tests(text, &dir, r));
                }
                "dlm-json" => {
                    let items = checker_json.entry(()).or_insert_with(|| {
                        jsonl(&tasks.join("dlm-json.jsonl"))
                            .into_iter()
                            .map(|i| (i["id"].as_str().unwrap().to_string(), i))
                            .collect::<std::collections::HashMap<_, _>>()
                    });
                    let schema = &items[r["id"].as_str().unwrap()]["schema"];
                    let valid = serde_json::from_str::<Value>(text)
                        .is_ok_and(|v| schema_support::oracle(schema).unwrap().is_valid(&v));
                    assert_eq!(con["syntax_oracle"], valid, "{text}");
                    assert_eq!(con["functional"], valid, "schema-valid: {text}");
                }
                _ => {}
            }
        }
    }
    let out = dir.join("tables");
    let (_, err, ok) = lacuna(&["eval", "tables", "--results", s(&results), "--out", s(&out)]);
    assert!(ok, "{err}");
    let md = std::fs::read_to_string(out.join("dlm.md")).unwrap();
    for (task, _) in &run_tasks {
        assert!(md.contains(&format!("## {task}")), "{md}");
    }
    assert!(md.contains("mask Con.⁻") && md.contains("reject Con.") && md.contains("Van."));
    assert!(md.contains("2 × 2"), "{md}");
    let cost = std::fs::read_to_string(out.join("cost.csv")).unwrap();
    assert_eq!(cost.lines().count(), 1 + run_tasks.len() * 3, "{cost}");
}

/// A byte-level tokenizer for the fixture checkpoints' 320 ids (300 end of text, 310 mask),
/// with LLaDA's and Dream's chat markers as added tokens where the vocabulary has room.
fn tokenizer_json(specials: &[(u32, &str)]) -> String {
    let alphabet = byte_to_char();
    let mut vocab = serde_json::Map::new();
    let taken: Vec<u32> = specials.iter().map(|s| s.0).collect();
    for id in (0..320u32).filter(|id| !taken.contains(id)) {
        let text = if id < 256 {
            alphabet[id as usize].to_string()
        } else {
            format!("{}{}", alphabet[b'~' as usize], alphabet[id as usize - 256])
        };
        vocab.insert(text, id.into());
    }
    let specials: Vec<(u32, String)> = specials.iter().map(|(i, t)| (*i, t.to_string())).collect();
    byte_level_tokenizer_json(vocab, &specials)
}

fn fixture(name: &str, tag: &str, specials: &[(u32, &str)]) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    let dir = scratch(tag).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    std::fs::write(dir.join("tokenizer.json"), tokenizer_json(specials)).unwrap();
    dir
}

#[test]
fn the_four_stages_run_on_the_fixture_checkpoints_in_the_papers_chat_format() {
    let dir = scratch("fixtures");
    let tasks = dir.join("tasks");
    std::fs::create_dir_all(&tasks).unwrap();
    // A short item in the paper's format: the fixtures' context is 256 positions.
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}},
                        "required": ["n"], "additionalProperties": false});
    let item = json!({"task": "dlm-json", "id": "tiny/0", "source": "hand-written",
        "system": "JSON.", "user": "n?", "prefill": "```json\n", "fixed_prefix": "",
        "grammar": "schema", "schema": schema, "gold": "{\"n\": 1}", "tests": null,
        "functional": "json-equal", "held_out": true});
    std::fs::write(tasks.join("dlm-json.jsonl"), format!("{item}\n")).unwrap();
    let results = dir.join("results");
    let llada = fixture(
        "llada-tiny",
        "llada",
        &[(300, "<|endoftext|>"), (310, "<|mdm_mask|>")],
    );
    let dream = fixture(
        "dream-tiny",
        "dream",
        &[(300, "<|endoftext|>"), (311, "<|mask|>")],
    );
    for model in [&llada, &dream] {
        let (_, err, ok) = lacuna(&[
            "eval",
            "run",
            "--task",
            s(&tasks.join("dlm-json.jsonl")),
            "--model",
            s(model),
            "--modes",
            "van,reject,mask,mask-eager",
            "--seeds",
            "0,1",
            "--length",
            "32",
            "--steps",
            "8",
            "--max-resamples",
            "100000",
            "--out",
            s(&results),
        ]);
        assert!(ok, "{}: {err}", model.display());
    }
    let files = score_all(&tasks, &results, 2 * 4 * 2);
    for f in &files {
        let scored = jsonl(
            &f.with_file_name(
                f.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .replace(".jsonl", ".scored.jsonl"),
            ),
        );
        for r in &scored {
            assert!(r["error"].is_null(), "{r}");
            let text = r["con"]["extracted"].as_str().unwrap();
            // The scorer's verdicts are the jsonschema crate's, run here.
            let parsed = serde_json::from_str::<Value>(text).ok();
            let valid = parsed
                .as_ref()
                .is_some_and(|v| schema_support::oracle(&schema).unwrap().is_valid(v));
            assert_eq!(r["con"]["syntax_oracle"], valid, "{text}");
            assert_eq!(
                r["con"]["functional"],
                parsed == Some(json!({"n": 1})),
                "{text}"
            );
            if matches!(
                r["mode"].as_str().unwrap(),
                "mask" | "mask-eager" | "reject"
            ) {
                // Random weights, yet every constrained output is a word of the grammar
                // (through the completion where the model did not finish). The tools may
                // still refuse one: an integer such as 9E663353333 is beyond what serde_json
                // (and Python's float) can hold.
                assert_eq!(r["con"]["syntax_grammar"], true, "{text}");
            }
        }
    }
    let out = dir.join("tables");
    let (_, err, ok) = lacuna(&["eval", "tables", "--results", s(&results), "--out", s(&out)]);
    assert!(ok, "{err}");
    let md = std::fs::read_to_string(out.join("dlm.md")).unwrap();
    assert!(
        md.contains("| llada-tiny |") && md.contains("| dream-tiny |"),
        "{md}"
    );
    assert!(
        md.contains("mask-eager Con.") && !md.contains("G.P."),
        "{md}"
    );
    // The fixtures are not the paper's models: no paper values beside their cells.
    assert!(!md.contains("] |"), "{md}");
    // Grammar prompting: the grammar's rules in the user turn make this prompt too long for
    // the fixtures' 256 positions, which each record says; the run goes on and fails.
    let (_, err, ok) = lacuna(&[
        "eval",
        "run",
        "--task",
        s(&tasks.join("dlm-json.jsonl")),
        "--model",
        s(&llada),
        "--modes",
        "gp",
        "--length",
        "32",
        "--steps",
        "8",
        "--out",
        s(&dir.join("gp")),
    ]);
    assert!(!ok, "{err}");
    let gp = jsonl(&dir.join("gp/dlm-json__llada-tiny__s0__gp.jsonl"));
    let e = gp[0]["error"].as_str().unwrap();
    assert!(e.contains("do not fit") && e.contains("256"), "{e}");
}

/// A van-mode result record of `text` for item `id` of `task`, as `eval run` writes one.
fn result_record(task: &str, id: &str, text: &str) -> Value {
    json!({"task": task, "id": id, "model": "m", "seed": 0, "mode": "van",
           "raw_text": text, "text": text, "completed": false, "completion_bytes": 0,
           "error": null, "timed_out": false, "gave_up": false, "rejections": 0,
           "checks": 0, "masks": 0, "generated_tokens": 0, "steps": 0,
           "forward_passes": 0, "t_total": 0.0, "t_model": 0.0, "t_checker": 0.0})
}

#[test]
fn bad_input_is_named() {
    let dir = scratch("bad");
    // A task file with a missing field: the file and line are named.
    let task = dir.join("dlm-json.jsonl");
    std::fs::write(&task, "{\"task\": \"dlm-json\", \"id\": \"x\"}\n").unwrap();
    let (_, err, ok) = lacuna(&[
        "eval",
        "run",
        "--task",
        s(&task),
        "--out",
        s(&dir.join("r")),
    ]);
    assert!(!ok);
    assert!(
        err.contains("dlm-json.jsonl:1") && err.contains("missing field"),
        "{err}"
    );
    // A checkpoint folder that is not a model.
    let tasks = dir.join("tasks");
    assert!(lacuna(&["eval", "prepare", "--out", s(&tasks)]).2);
    let (_, err, ok) = lacuna(&[
        "eval",
        "run",
        "--task",
        s(&tasks.join("dlm-json.jsonl")),
        "--model",
        s(&dir),
        "--out",
        s(&dir.join("r")),
    ]);
    assert!(!ok);
    assert!(err.contains(s(&dir)), "{err}");
    // Native filling is for the infilling tasks, refused before the model folder is read
    // (the folder is still not a model).
    let (_, err, ok) = lacuna(&[
        "eval",
        "run",
        "--task",
        s(&tasks.join("dlm-json.jsonl")),
        "--modes",
        "native",
        "--model",
        s(&dir),
        "--out",
        s(&dir.join("r")),
    ]);
    assert!(
        !ok && err.contains("--modes native: only the infilling tasks"),
        "{err}"
    );
    // A result file naming an item the tasks do not hold.
    let results = dir.join("results.jsonl");
    std::fs::write(
        &results,
        result_record("dlm-json", "nope", "").to_string() + "\n",
    )
    .unwrap();
    let (_, err, ok) = lacuna(&["eval", "score", "--tasks", s(&tasks), s(&results)]);
    assert!(!ok);
    assert!(
        err.contains("nope") && err.contains("dlm-json.jsonl"),
        "{err}"
    );
    // A missing compiler is named before anything is scored.
    let cpp = dir.join("cpp.jsonl");
    std::fs::write(
        &cpp,
        result_record("dlm-cpp", "CPP/0", "").to_string() + "\n",
    )
    .unwrap();
    let (_, err, ok) = lacuna(&[
        "eval",
        "score",
        "--tasks",
        s(&tasks),
        "--gxx",
        "no-such-compiler",
        s(&cpp),
    ]);
    assert!(!ok);
    assert!(err.contains("no-such-compiler not found"), "{err}");
}

#[test]
fn a_test_that_loops_fails_its_item_after_the_time_limit() {
    let dir = scratch("loop");
    let tasks = dir.join("tasks");
    std::fs::create_dir_all(&tasks).unwrap();
    let item = json!({"task": "dlm-cpp", "id": "loop/0", "source": "hand-written",
        "system": "", "user": "", "prefill": "", "fixed_prefix": "", "grammar": "cpp",
        "schema": null, "gold": null, "tests": "int main(){ f(); }", "functional": "tests",
        "held_out": true});
    std::fs::write(tasks.join("dlm-cpp.jsonl"), format!("{item}\n")).unwrap();
    let record = |id: &str, text: &str| result_record("dlm-cpp", id, text);
    let results = dir.join("r.jsonl");
    std::fs::write(
        &results,
        format!(
            "{}\n{}\n",
            record("loop/0", "void f() { for (;;) {} }"),
            record("loop/0", "void f() {}")
        ),
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    let (_, err, ok) = lacuna(&[
        "eval",
        "score",
        "--tasks",
        s(&tasks),
        "--timeout",
        "2",
        s(&results),
    ]);
    assert!(ok, "{err}");
    assert!(t0.elapsed().as_secs() < 60);
    let scored = jsonl(&dir.join("r.scored.jsonl"));
    assert_eq!(scored[0]["con"]["syntax_oracle"], true);
    assert_eq!(scored[0]["con"]["functional"], false);
    let reason = scored[0]["con"]["reason"].as_str().unwrap();
    assert!(reason.contains("timed out"), "{reason}");
    assert_eq!(scored[1]["con"]["functional"], true, "{}", scored[1]);
}

/// The tiny Qwen2 FIM checkpoint with a byte-level tokenizer for its 384 ids (bytes, then its
/// FIM sentinels and unused specials), as `tests/cli_infill.rs` makes it.
fn qwen2_fim(tag: &str) -> PathBuf {
    let dir = scratch(tag).join("qwen2-fim-tiny");
    write_qwen2_fim_checkpoint(&dir, &QWEN_FIM_SENTINELS);
    dir
}

#[test]
fn infilling_tasks_run_hole_by_hole_and_score_as_programs() {
    let dir = scratch("mri");
    let tasks = dir.join("tasks");
    let results = dir.join("results");
    assert!(lacuna(&["eval", "prepare", "--out", s(&tasks)]).2);
    let qwen = qwen2_fim("mri-qwen");
    // A short two-hole item of the same shape for the FIM fixture, whose context is 256
    // positions (HumanEval-X items do not fit it).
    let short = dir.join("short");
    std::fs::create_dir_all(&short).unwrap();
    let item = json!({"task": "mri-2", "id": "add_spans_2", "source": "hand-written",
        "prompt": "/* Add two numbers. */\n#include<stdio.h>\nint add(int a,int b){\n",
        "declaration": "#include<stdio.h>\nint add(int a,int b){\n",
        "splits": ["    int c=a", ";\n    return ", ";\n}\n"], "removed": ["+b", "c"],
        "test": "int main(){ return add(2,3)==5 ? 0 : 1; }", "held_out": true});
    std::fs::write(short.join("mri-2.jsonl"), format!("{item}\n")).unwrap();
    // A causal FIM checkpoint (random weights) and the embedded diffusion model.
    for (model, task) in [(Some(&qwen), "mri-2"), (None, "mril-1")] {
        let file = if model.is_some() {
            short.join(format!("{task}.jsonl"))
        } else {
            tasks.join(format!("{task}.jsonl"))
        };
        let mut args = vec![
            "eval",
            "run",
            "--task",
            s(&file),
            "--modes",
            if model.is_some() {
                "van,mask"
            } else {
                "van,mask,native,native-van"
            },
            "--seeds",
            "0",
            "--limit",
            "2",
            "--max-tokens",
            "24",
            "--out",
            s(&results),
        ];
        if let Some(m) = model {
            args.extend(["--model", s(m)]);
        }
        let (_, err, ok) = lacuna(&args);
        assert!(ok, "{task}: {err}");
    }
    // A causal model writes left to right only.
    let (_, err, ok) = lacuna(&[
        "eval",
        "run",
        "--task",
        s(&short.join("mri-2.jsonl")),
        "--modes",
        "native",
        "--model",
        s(&qwen),
        "--out",
        s(&results),
    ]);
    assert!(
        !ok && err.contains("--modes native") && err.contains("diffusion"),
        "{err}"
    );
    // The task files in one folder, as `eval score` reads them.
    std::fs::copy(tasks.join("mril-1.jsonl"), short.join("mril-1.jsonl")).unwrap();
    let files = score_all(&short, &results, 6);
    let items: std::collections::HashMap<String, Value> = ["mri-2", "mril-1"]
        .iter()
        .flat_map(|t| jsonl(&short.join(format!("{t}.jsonl"))))
        .map(|i| (i["id"].as_str().unwrap().to_string(), i))
        .collect();
    for f in &files {
        let name = f.file_name().unwrap().to_str().unwrap();
        for r in jsonl(&results.join(name.replace(".jsonl", ".scored.jsonl"))) {
            assert!(r["error"].is_null(), "{r}");
            let item = &items[r["id"].as_str().unwrap()];
            // Con.⁻ is the declaration and the solution's fixed splits in order, with what
            // the model wrote between them.
            let raw = r["raw_text"].as_str().unwrap();
            let mut at = 0;
            let decl = item["declaration"].as_str().unwrap();
            assert!(raw.starts_with(decl), "{raw}");
            for split in item["splits"].as_array().unwrap() {
                let split = split.as_str().unwrap();
                let found = raw[at..]
                    .find(split)
                    .unwrap_or_else(|| panic!("{split:?} in {raw:?}"));
                at += found + split.len();
            }
            // The scorer's g++ verdict is g++'s, here.
            let con = &r["con"];
            let text = con["extracted"].as_str().unwrap();
            assert_eq!(con["syntax_oracle"], gxx_accepts(text, &dir), "{text}");
            if r["mode"] == "mask" || r["mode"] == "native" {
                // Under the grammar, Con. is a word of it (the completion closes what the
                // model left open).
                assert_eq!(con["syntax_grammar"], true, "{r}");
            }
        }
    }
    let out = dir.join("tables");
    assert!(lacuna(&["eval", "tables", "--results", s(&results), "--out", s(&out)]).2);
    let md = std::fs::read_to_string(out.join("dlm.md")).unwrap();
    assert!(md.contains("## mri-2") && md.contains("## mril-1"), "{md}");
    assert!(
        md.contains("native Con.⁻") && md.contains("native Van."),
        "{md}"
    );
}
