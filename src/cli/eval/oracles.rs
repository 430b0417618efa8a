//! The independent judges of `eval score`: g++ (syntax, then compile and run the tests),
//! the `jsonschema` crate, and RDKit (through Python). None of them shares code with lacuna's
//! grammars, so "valid" means what the real tools say.
//!
//! Every external program runs under a wall-clock limit and is killed past it: a test that
//! hangs or a program that loops fails its item with that reason instead of stalling the run.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A check's outcome: passed, or failed with a reason.
pub type Outcome = Result<(), String>;

/// Runs `cmd` with stdout and stderr to files, killing it after `limit`. Returns the exit
/// success and the head of stderr, or why it did not finish.
fn run_limited(
    mut cmd: Command,
    limit: Duration,
    scratch: &Path,
) -> Result<(bool, String), String> {
    let err_path = scratch.join("stderr.txt");
    let err = File::create(&err_path).map_err(|e| format!("{}: {e}", err_path.display()))?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    let t0 = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let text = std::fs::read(&err_path).unwrap_or_default();
                // Messages name the scratch folder's files by their names alone.
                let text =
                    String::from_utf8_lossy(&text).replace(&format!("{}/", scratch.display()), "");
                let head: String = text.chars().take(300).collect();
                return Ok((status.success(), head));
            }
            Ok(None) if t0.elapsed() >= limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {:.0} s", limit.as_secs_f64()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// A fresh scratch folder for one program, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "lacuna-eval-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The C++ compiler, checked once: a missing one is named before anything is scored.
pub struct Gxx {
    pub program: String,
    pub limit: Duration,
}

impl Gxx {
    pub fn find(program: &str, limit: Duration) -> Result<Gxx, String> {
        match Command::new(program).arg("--version").output() {
            Ok(o) if o.status.success() => Ok(Gxx {
                program: program.to_string(),
                limit,
            }),
            _ => Err(format!(
                "{program} not found: scoring C++ needs g++ (e.g. `apt-get install g++`)"
            )),
        }
    }

    /// `g++ -std=c++17 -fsyntax-only` on `source`.
    pub fn syntax(&self, source: &str) -> Outcome {
        let scratch = Scratch::new()?;
        let file = scratch.0.join("answer.cpp");
        std::fs::write(&file, source).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&self.program);
        cmd.args(["-std=c++17", "-fsyntax-only"]).arg(&file);
        match run_limited(cmd, self.limit, &scratch.0)? {
            (true, _) => Ok(()),
            (false, err) => Err(format!("g++: {}", first_error(&err))),
        }
    }

    /// Compiles `source` with `g++ -std=c++17` and runs it: passes iff it exits 0.
    pub fn run_tests(&self, source: &str) -> Outcome {
        let scratch = Scratch::new()?;
        let file = scratch.0.join("test.cpp");
        let exe = scratch.0.join("test.exe");
        std::fs::write(&file, source).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&self.program);
        cmd.arg("-std=c++17").arg(&file).arg("-o").arg(&exe);
        match run_limited(cmd, self.limit, &scratch.0) {
            Ok((true, _)) => {}
            Ok((false, err)) => return Err(format!("does not compile: {}", first_error(&err))),
            Err(e) => return Err(format!("compiling: {e}")),
        }
        match run_limited(Command::new(&exe), self.limit, &scratch.0) {
            Ok((true, _)) => Ok(()),
            Ok((false, err)) => Err(format!("tests fail: {}", err.trim())),
            Err(e) => Err(format!("running the tests: {e}")),
        }
    }
}

/// The first line of g++'s output that says `error`.
fn first_error(stderr: &str) -> String {
    stderr
        .lines()
        .find(|l| l.contains("error"))
        .unwrap_or(stderr.lines().next().unwrap_or(""))
        .trim()
        .to_string()
}

/// `text` parsed as JSON and validated against `schema` by the `jsonschema` crate, formats
/// asserted.
pub fn json_valid(text: &str, schema: &Value) -> Outcome {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| format!("the jsonschema crate cannot build the schema: {e}"))?;
    validator
        .validate(&value)
        .map_err(|e| format!("schema: {e}"))
}

/// The paper's JSON equality: both parse and print the same (key order counts; number
/// spelling and string escapes do not).
pub fn json_equal(text: &str, gold: &str) -> Outcome {
    let out: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let gold: Value = serde_json::from_str(gold).map_err(|e| format!("gold is not JSON: {e}"))?;
    // Printed, not compared as values: `Value`'s equality ignores key order, the paper's
    // `json.dumps` comparison does not.
    let (out, gold) = (out.to_string(), gold.to_string());
    if out == gold {
        Ok(())
    } else {
        Err("differs from the gold answer".into())
    }
}

/// The RDKit script `eval score` runs: SMILES in (one JSON string per line), canonical
/// isomeric SMILES out (one JSON string or null per line, null where RDKit cannot sanitize).
const RDKIT_SCRIPT: &str = r#"
import json, sys
from rdkit import Chem, RDLogger
RDLogger.DisableLog("rdApp.*")
for line in sys.stdin:
    s = json.loads(line)
    m = Chem.MolFromSmiles(s) if s else None
    print(json.dumps(None if m is None else Chem.MolToSmiles(m, isomericSmiles=True)), flush=True)
"#;

/// RDKit, through a Python interpreter that has it.
pub struct Rdkit {
    python: String,
}

impl Rdkit {
    /// The interpreter: `python` if given, else `$LACUNA_PYTHON`, else the harness's venv
    /// (`target/eval-venv`, made by `eval/setup-tools.sh`), else `python3`.
    pub fn find(python: Option<&str>) -> Result<Rdkit, String> {
        let python = python
            .map(str::to_string)
            .or_else(|| std::env::var("LACUNA_PYTHON").ok())
            .or_else(|| {
                let venv = Path::new("target/eval-venv/bin/python");
                venv.exists().then(|| venv.display().to_string())
            })
            .unwrap_or_else(|| "python3".into());
        let ok = Command::new(&python)
            .args(["-c", "import rdkit"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return Err(format!(
                "RDKit is not importable by {python}: scoring SMILES needs it (run `bash \
                 eval/setup-tools.sh`, or name an interpreter with --python)"
            ));
        }
        Ok(Rdkit { python })
    }

    /// Canonical isomeric SMILES of each distinct string (None where RDKit refuses it).
    pub fn canonical(&self, smiles: &[String]) -> Result<HashMap<String, Option<String>>, String> {
        let mut child = Command::new(&self.python)
            .args(["-c", RDKIT_SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.python))?;
        let mut input = String::new();
        for s in smiles {
            input.push_str(&Value::String(s.clone()).to_string());
            input.push('\n');
        }
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        // Written from a thread: RDKit answers as it reads, and a full pipe would block both.
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        let _ = writer.join();
        if !out.status.success() {
            return Err(format!("the RDKit script failed ({})", out.status));
        }
        let lines: Vec<&str> = std::str::from_utf8(&out.stdout)
            .map_err(|e| e.to_string())?
            .lines()
            .collect();
        if lines.len() != smiles.len() {
            return Err(format!(
                "the RDKit script answered {} of {} SMILES",
                lines.len(),
                smiles.len()
            ));
        }
        smiles
            .iter()
            .zip(lines)
            .map(|(s, l)| {
                let v: Option<String> = serde_json::from_str(l).map_err(|e| e.to_string())?;
                Ok((s.clone(), v))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_equality_is_the_papers_printed_comparison() {
        // Whitespace, number spelling and string escapes do not count...
        assert!(json_equal(
            "{ \"a\" : 5210.5000, \"b\": \"\\u0041\" }",
            "{\"a\":5210.5,\"b\":\"A\"}"
        )
        .is_ok());
        // ...key order does (Python's json.dumps without sort_keys), and so do values.
        assert!(json_equal("{\"b\": 1, \"a\": 2}", "{\"a\": 2, \"b\": 1}").is_err());
        assert!(json_equal("[1, 2]", "[1, 3]").is_err());
        assert!(json_equal("{", "{}").is_err());
    }

    #[test]
    fn schema_validity_asserts_formats() {
        let schema = serde_json::json!({"type": "string", "format": "date"});
        assert!(json_valid("\"2024-02-29\"", &schema).is_ok());
        assert!(json_valid("\"2023-02-29\"", &schema).is_err());
        assert!(json_valid("\"x", &schema).is_err());
    }
}
