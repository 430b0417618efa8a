//! The battery: the helpers that build cases, one module per input family.

mod canvas;
mod cli;
mod infill;
mod lark;
mod model;
mod schema;
mod tokens;
mod train;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::{Case, Expect, MANIFEST, TIMEOUT};
use canvas::canvas_cases;
use cli::cli_cases;
use infill::infill_cases;
use lark::lark_cases;
use model::model_cases;
use schema::schema_cases;
use tokens::token_cases;
use train::train_cases;

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn ok(v: &[&str]) -> Expect {
    Expect::Ok(strs(v))
}

fn err(v: &[&str]) -> Expect {
    Expect::Err(strs(v))
}

fn usage(v: &[&str]) -> Expect {
    Expect::Usage(strs(v))
}

fn ok_or_err(v: &[&str]) -> Expect {
    Expect::OkOrErr(strs(v))
}

fn lines(code: i32, v: &[&[&str]]) -> Expect {
    Expect::Lines {
        code,
        lines: v.iter().map(|l| strs(l)).collect(),
    }
}

/// The battery under construction, with its scratch folder.
struct Battery {
    cases: Vec<Case>,
    scratch: PathBuf,
}

impl Battery {
    fn add(
        &mut self,
        category: &'static str,
        name: &str,
        args: &[&str],
        stdin: impl Into<Vec<u8>>,
        expect: Expect,
    ) -> &mut Case {
        self.cases.push(Case {
            category,
            name: name.to_string(),
            args: args.iter().map(OsString::from).collect(),
            stdin: stdin.into(),
            expect,
            timeout: TIMEOUT,
            max_rss_mib: None,
        });
        self.cases.last_mut().unwrap()
    }

    /// Writes a generated input into the scratch folder; returns its path.
    fn file(&self, name: &str, bytes: impl AsRef<[u8]>) -> String {
        let path = self.scratch.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_string()
    }

    fn path(&self, name: &str) -> String {
        self.scratch.join(name).to_str().unwrap().to_string()
    }
}

/// A committed input under `tests/hostile/`.
fn input(rel: &str) -> String {
    format!("{MANIFEST}/tests/hostile/{rel}")
}

/// See [`grammar_case`].
const EITHER: &str = "<either>";

/// The one canvas line the grammar cases check, and its answer if the grammar loads.
const LINE: &str = "{\"id\": \"g\", \"canvas\": [\"a\", null]}\n";
const VERDICT: &[&str] = &["\"id\":\"g\"", "\"verdict\""];

/// `check --grammar SPEC` on [`LINE`]: the grammar must load (`fails` empty) or the line must
/// get an error naming each of `fails`.
/// `fails` starting with [`EITHER`]: the grammar may load, or be refused with an error naming
/// the rest of `fails` (a documented size limit).
fn grammar_case(b: &mut Battery, category: &'static str, name: &str, spec: &str, fails: &[&str]) {
    let expect = if fails.first() == Some(&EITHER) {
        let mut needles = vec!["\"id\":\"g\"", "\"line\":1"];
        needles.extend_from_slice(&fails[1..]);
        Expect::EitherLine(strs(&needles))
    } else if fails.is_empty() {
        lines(0, &[VERDICT])
    } else {
        let mut needles = vec!["\"id\":\"g\"", "\"line\":1"];
        needles.extend_from_slice(fails);
        lines(1, &[&needles])
    };
    b.add(category, name, &["check", "--grammar", spec], LINE, expect);
}

fn lark_case(b: &mut Battery, file: &str, fails: &[&str]) {
    let path = input(&format!("lark/{file}"));
    grammar_case(b, "lark", file, &path, fails);
}

fn schema_case(b: &mut Battery, file: &str, fails: &[&str]) {
    let spec = format!("schema:{}", input(&format!("schema/{file}")));
    grammar_case(b, "schema", file, &spec, fails);
}

/// A bad canvas line followed by a good one: the bad one gets an error that keeps its id and
/// names the problem, the good one its verdict.
fn line_case(b: &mut Battery, name: &str, args: &[&str], bad: &[u8], needles: &[&str]) {
    let good: &[u8] = if args.contains(&"--tokenizer") {
        b"{\"id\": \"next\", \"tokens\": [0, null, 1]}\n"
    } else {
        b"{\"id\": \"next\", \"canvas\": [\"[1,\", null, \"]\"]}\n"
    };
    let mut stdin = bad.to_vec();
    stdin.push(b'\n');
    stdin.extend_from_slice(good);
    let mut first = vec!["\"line\":1"];
    first.extend_from_slice(needles);
    let category = if args.contains(&"--tokenizer") {
        "token line"
    } else {
        "canvas line"
    };
    b.add(
        category,
        name,
        args,
        stdin,
        lines(
            1,
            &[&first, &["\"id\":\"next\"", "\"verdict\":\"completable\""]],
        ),
    );
}

pub(crate) fn battery(scratch: &Path) -> Vec<Case> {
    let mut b = Battery {
        cases: Vec::new(),
        scratch: scratch.to_path_buf(),
    };
    lark_cases(&mut b);
    schema_cases(&mut b);
    canvas_cases(&mut b);
    token_cases(&mut b);
    cli_cases(&mut b);
    model_cases(&mut b);
    train_cases(&mut b);
    infill_cases(&mut b);
    b.cases
}
