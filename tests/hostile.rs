//! The hostile input battery of issue 19: grammars, schemas, regexes, canvas and token-canvas
//! lines, arguments, model folders, tokenizers and training files, as a malicious or careless
//! user would write them, run through the `lacuna` binary.
//!
//! Every case runs under a wall-clock limit (the child is killed at its deadline) and an
//! address-space cap (`ulimit -v`), and must end in the class it expects: `ok` (exit 0 and the
//! expected output) or a clean error (a non-zero exit whose message names what is wrong and
//! where: the file, line:column, JSON pointer, canvas line or tensor). Anything else fails the
//! case: a panic, a stack overflow, an allocation failure or other signal, a timeout, peak
//! memory over the case's bound, an answer of the wrong class, an error that does not say
//! what and where, or a line-oriented command that stops answering after a bad line.
//!
//! Small inputs live in `tests/hostile/`; large ones are generated into a scratch folder.
//! Environment knobs: `LACUNA_HOSTILE_FILTER` (run the cases whose name contains it),
//! `LACUNA_HOSTILE_JOBS` (parallel runs, default 2), `LACUNA_HOSTILE_TIMEOUT_SCALE` (multiplies
//! every deadline). The table of results is printed on stderr (`--nocapture`) and written to
//! `hostile-report.tsv` under `CARGO_TARGET_TMPDIR`.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_lacuna");
const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");
const TARGET_TMP: &str = env!("CARGO_TARGET_TMPDIR");

/// Address-space cap of every run, in KiB (`ulimit -v`).
const MEM_KIB: u64 = 4_000_000;
/// Default deadline of a case, seconds.
const TIMEOUT: f64 = 10.0;
/// Deadline of cases with large inputs, seconds.
const SLOW: f64 = 20.0;
/// How much of each stream is kept for the checks (lines are counted to the end).
const KEEP_BYTES: usize = 8 << 20;

// ---------------------------------------------------------------------------------------------
// Cases

/// What a case must end in.
#[derive(Clone, Debug)]
enum Expect {
    /// Exit 0; standard output contains each string.
    Ok(Vec<String>),
    /// Exit status 1; standard error contains each string (what and where).
    Err(Vec<String>),
    /// A usage error from the argument parser (exit 2) whose message contains each string.
    Usage(Vec<String>),
    /// A line-oriented command: this exit status, and exactly one output line per entry, each
    /// containing its strings.
    Lines { code: i32, lines: Vec<Vec<String>> },
    /// Exit 0, or a clean error (exit 1) whose message contains each string.
    OkOrErr(Vec<String>),
    /// One output line: a verdict (exit 0), or an error (exit 1) containing each string.
    EitherLine(Vec<String>),
    /// A command that writes output for as long as it runs (`-n` huge): still running at the
    /// deadline is fine once it has written a line.
    Streams,
}

struct Case {
    category: &'static str,
    name: String,
    args: Vec<OsString>,
    stdin: Vec<u8>,
    expect: Expect,
    timeout: f64,
    /// Peak resident memory allowed, MiB.
    max_rss_mib: Option<u64>,
}

impl Case {
    fn timeout(&mut self, secs: f64) -> &mut Case {
        self.timeout = secs;
        self
    }

    fn max_rss(&mut self, mib: u64) -> &mut Case {
        self.max_rss_mib = Some(mib);
        self
    }
}

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

// ---------------------------------------------------------------------------------------------
// The battery

fn lark_cases(b: &mut Battery) {
    lark_case(b, "empty.lark", &["empty.lark", "start"]);
    lark_case(b, "comments_only.lark", &["comments_only.lark", "start"]);
    lark_case(b, "no_start.lark", &["no_start.lark", "start"]);
    lark_case(
        b,
        "undefined_rule.lark",
        &["undefined_rule.lark", "missing_rule"],
    );
    lark_case(
        b,
        "undefined_terminal.lark",
        &["undefined_terminal.lark", "MISSING_TERM"],
    );
    lark_case(b, "syntax_error.lark", &["syntax_error.lark:3:"]);
    lark_case(
        b,
        "unterminated_string.lark",
        &["unterminated_string.lark:1:"],
    );
    lark_case(
        b,
        "unterminated_regex.lark",
        &["unterminated_regex.lark:1:"],
    );
    lark_case(b, "bad_regex.lark", &["bad_regex.lark:2:", "`A`"]);
    lark_case(
        b,
        "empty_match.lark",
        &["empty_match.lark:2:", "`A`", "empty"],
    );
    lark_case(b, "empty_literal.lark", &["empty_literal.lark:1:"]);
    lark_case(b, "lookahead.lark", &["lookahead.lark:2:", "`A`"]);
    lark_case(b, "lookbehind.lark", &["lookbehind.lark:2:", "`A`"]);
    lark_case(b, "backref.lark", &["backref.lark:2:", "`A`"]);
    lark_case(
        b,
        "possessive_plus.lark",
        &["possessive_plus.lark:2:", "possessive"],
    );
    lark_case(
        b,
        "possessive_star.lark",
        &["possessive_star.lark:2:", "possessive"],
    );
    lark_case(
        b,
        "possessive_counted.lark",
        &["possessive_counted.lark:2:", "possessive"],
    );
    lark_case(
        b,
        "inline_flag_mid.lark",
        &["inline_flag_mid.lark:2:", "(?i)"],
    );
    lark_case(
        b,
        "quantifier_quantifier.lark",
        &["quantifier_quantifier.lark:2:", "`A`"],
    );
    lark_case(b, "unknown_flag.lark", &["unknown_flag.lark:2:", "q"]);
    lark_case(b, "bad_flag_group.lark", &["bad_flag_group.lark:2:", "`A`"]);
    lark_case(b, "terminal_cycle.lark", &["terminal_cycle.lark:", "cycle"]);
    lark_case(
        b,
        "nested_repeat.lark",
        &["nested_repeat.lark:2:", "16 MiB"],
    );
    lark_case(
        b,
        "nested_repeat_rule.lark",
        &["nested_repeat_rule.lark:1:"],
    );
    lark_case(
        b,
        "nested_regex_repeat.lark",
        &["nested_regex_repeat.lark:2:", "`A`"],
    );
    lark_case(
        b,
        "repeat_over_limit.lark",
        &["repeat_over_limit.lark:1:", "10000"],
    );
    lark_case(b, "repeat_reversed.lark", &["repeat_reversed.lark:1:"]);
    lark_case(b, "repeat_negative.lark", &["repeat_negative.lark:1:"]);
    lark_case(b, "repeat_overflow.lark", &["repeat_overflow.lark:1:"]);
    // 10,000 optional copies are a chain of 10,000 helper rules: milliseconds of work.
    lark_case(b, "repeat_range_one.lark", &[]);
    b.cases.last_mut().unwrap().timeout(3.0);
    lark_case(b, "repeat_range_fifty.lark", &[]);
    b.cases.last_mut().unwrap().timeout(3.0);
    lark_case(
        b,
        "repeat_range_fifty_distinct.lark",
        &[EITHER, "repeat_range_fifty_distinct.lark:"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);
    lark_case(
        b,
        "huge_repeat_terminal_range.lark",
        &["huge_repeat_terminal_range.lark:2:"],
    );
    lark_case(b, "import_other.lark", &["import_other.lark:2:", "python"]);
    lark_case(
        b,
        "import_unknown_common.lark",
        &["import_unknown_common.lark:2:", "NOPE"],
    );
    lark_case(b, "declare.lark", &["declare.lark:2:", "%declare"]);
    lark_case(b, "template.lark", &["template.lark:"]);
    lark_case(b, "override.lark", &["override.lark:2:", "%override"]);
    lark_case(b, "ignore_empty.lark", &["ignore_empty.lark", "empty"]);
    // Python keeps unknown escapes: the literal is `\q`.
    lark_case(b, "bad_escape.lark", &[]);
    lark_case(
        b,
        "bad_unicode_escape.lark",
        &["bad_unicode_escape.lark:1:"],
    );
    lark_case(b, "bad_hex_escape.lark", &["bad_hex_escape.lark:1:"]);
    lark_case(b, "reversed_range.lark", &["reversed_range.lark:2:"]);
    lark_case(b, "multichar_range.lark", &["multichar_range.lark:2:"]);
    lark_case(
        b,
        "empty_language.lark",
        &["empty_language.lark", "start", "empty"],
    );
    lark_case(b, "priority_overflow.lark", &["priority_overflow.lark:2:"]);
    lark_case(b, "priority_negative.lark", &[]);
    // Lark names are ASCII.
    lark_case(b, "unicode_names.lark", &["unicode_names.lark:1:"]);
    lark_case(b, "dfa_blowup.lark", &[EITHER, "dfa_blowup.lark:2:", "`A`"]);
    lark_case(b, "unicode_class_repeat.lark", &[]);
    lark_case(b, "any_char_repeat.lark", &[]);
    lark_case(b, "terminal_fanout.lark", &["terminal_fanout.lark:", "T"]);
    lark_case(b, "crlf.lark", &[]);
    lark_case(b, "bom.lark", &["bom.lark:1:1"]);
    lark_case(
        b,
        "deep_parens_terminal.lark",
        &["deep_parens_terminal.lark:2:", "nested"],
    );
    lark_case(
        b,
        "deep_regex_groups.lark",
        &["deep_regex_groups.lark:2:", "`A`"],
    );
    lark_case(
        b,
        "deep_optional.lark",
        &["deep_optional.lark:1:", "nested"],
    );
    lark_case(
        b,
        "duplicate_rule.lark",
        &["duplicate_rule.lark:2:", "start"],
    );
    lark_case(b, "invalid_utf8.lark", &["invalid_utf8.lark", "UTF-8"]);
    lark_case(b, "nul_bytes.lark", &["nul_bytes.lark:1:"]);
    lark_case(b, "nul_in_literal.lark", &[]);
    lark_case(b, "regex_nul_class.lark", &[]);
    lark_case(b, "alias_and_shaping.lark", &[]);
    lark_case(b, "huge_priority_many_terms.lark", &[]);
    lark_case(b, "ambiguous_deep.lark", &[]);
    lark_case(b, "left_recursive.lark", &[]);
    lark_case(b, "regex_newline_flag_x.lark", &[]);
    lark_case(b, "string_escapes.lark", &[]);
    lark_case(b, "priority_rule.lark", &[]);
    lark_case(b, "only_ignore.lark", &["only_ignore.lark", "start"]);

    // Generated: large grammars (issue 19's examples).
    let mut chain = String::from("start: r0\n");
    for i in 0..100_000 {
        writeln!(chain, "r{i}: r{} \"a\"", i + 1).unwrap();
    }
    chain.push_str("r100000: \"a\"\n");
    let p = b.file("chain_100k.lark", &chain);
    grammar_case(
        b,
        "lark",
        "chain of 100,000 rules",
        &p,
        &[EITHER, "chain_100k.lark"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);
    let p2 = p.clone();
    b.add(
        "lark",
        "chain of 100,000 rules: grammar stats",
        &["grammar", "stats", &p2, "--json"],
        "",
        ok(&["\"raw\""]),
    )
    .timeout(SLOW);

    let mut alt = String::from("start: \"w0\"");
    for i in 1..100_000 {
        write!(alt, " | \"w{i}\"").unwrap();
    }
    alt.push('\n');
    let p = b.file("alternation_100k.lark", &alt);
    grammar_case(
        b,
        "lark",
        "alternation of 100,000 literals",
        &p,
        &[EITHER, "alternation_100k.lark"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let mut terms = String::from("start: ");
    for i in 0..20_000 {
        if i > 0 {
            terms.push_str(" | ");
        }
        write!(terms, "T{i}").unwrap();
    }
    terms.push('\n');
    for i in 0..20_000 {
        writeln!(terms, "T{i}: /x{i}[a-z]*/").unwrap();
    }
    let p = b.file("regex_terminals_20k.lark", &terms);
    grammar_case(
        b,
        "lark",
        "20,000 regex terminals",
        &p,
        &[EITHER, "regex_terminals_20k.lark"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let deep = format!(
        "start: {}\"a\"{}\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let p = b.file("deep_parens_rule.lark", &deep);
    grammar_case(
        b,
        "lark",
        "100,000 nested parentheses in a rule",
        &p,
        &["deep_parens_rule.lark:1:", "nested"],
    );

    let lit = format!("start: \"{}\"\n", "abcdefghij".repeat(100_000));
    let p = b.file("literal_1mb.lark", &lit);
    grammar_case(
        b,
        "lark",
        "1 MB literal",
        &p,
        &[EITHER, "literal_1mb.lark:1:"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let lit = format!("start: A\nA: /{}/\n", "abcdefghij".repeat(110_000));
    let p = b.file("regex_1mb.lark", &lit);
    grammar_case(
        b,
        "lark",
        "1.1 MB regex (over the regex length limit)",
        &p,
        &["regex_1mb.lark:2:", "`A`"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let p = b.file("dir.lark/keep", "");
    let dir = Path::new(&p)
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    grammar_case(b, "lark", "a directory named *.lark", &dir, &["dir.lark"]);
    let missing = b.path("missing.lark");
    grammar_case(b, "lark", "missing .lark file", &missing, &["missing.lark"]);
    std::os::unix::fs::symlink("/dev/zero", b.scratch.join("zero.lark")).unwrap();
    let zero = b.path("zero.lark");
    grammar_case(
        b,
        "lark",
        "a .lark file that never ends (/dev/zero)",
        &zero,
        &["zero.lark"],
    );
    b.cases.last_mut().unwrap().max_rss(256);
    b.add(
        "lark",
        "grammar show of 100,000-literal alternation",
        &["grammar", "show", &b.path("alternation_100k.lark")],
        "",
        ok(&["start"]),
    )
    .timeout(SLOW);
    b.add(
        "lark",
        "grammar show --normalized: nested parentheses rule",
        &[
            "grammar",
            "show",
            "--normalized",
            &input("lark/ambiguous_deep.lark"),
        ],
        "",
        ok(&["start"]),
    );
}

fn schema_cases(b: &mut Battery) {
    schema_case(
        b,
        "ref_percent_utf8.json",
        &["ref_percent_utf8.json", "/$ref", "%"],
    );
    schema_case(
        b,
        "ref_percent_end.json",
        &["ref_percent_end.json", "/$ref", "%"],
    );
    schema_case(
        b,
        "ref_percent_bad_hex.json",
        &["ref_percent_bad_hex.json", "/$ref", "%zz"],
    );
    schema_case(
        b,
        "ref_percent_invalid_utf8.json",
        &["ref_percent_invalid_utf8.json", "/$ref"],
    );
    schema_case(
        b,
        "ref_percent_split_char.json",
        &["ref_percent_split_char.json", "/$ref"],
    );
    schema_case(b, "ref_percent_ok.json", &[]);
    schema_case(
        b,
        "ref_bad_tilde.json",
        &["ref_bad_tilde.json", "/$ref", "~2"],
    );
    schema_case(b, "ref_not_string.json", &["ref_not_string.json", "`$ref`"]);
    schema_case(
        b,
        "ref_nowhere.json",
        &["ref_nowhere.json", "/$ref", "nope"],
    );
    schema_case(
        b,
        "ref_remote.json",
        &["ref_remote.json", "/$ref", "http://example.com"],
    );
    schema_case(b, "ref_self.json", &["ref_self.json", "\\\"\\\""]);
    schema_case(
        b,
        "ref_cycle.json",
        &["ref_cycle.json", "admits no instance"],
    );
    schema_case(b, "allof_self.json", &["allof_self.json", "/allOf"]);
    schema_case(
        b,
        "allof_self_recursive_merge.json",
        &["allof_self_recursive_merge.json"],
    );
    schema_case(
        b,
        "allof_fanout.json",
        &["allof_fanout.json", "/definitions/d", "budget"],
    );
    schema_case(
        b,
        "ref_sibling_fanout.json",
        &["ref_sibling_fanout.json", "/definitions/d", "budget"],
    );
    schema_case(b, "anyof_fanout.json", &[]);
    schema_case(b, "anyof_allof_distribution.json", &[]);
    schema_case(
        b,
        "nested_pattern.json",
        &["nested_pattern.json", "/pattern", "16 MiB"],
    );
    schema_case(
        b,
        "pattern_huge_repeat.json",
        &["pattern_huge_repeat.json", "/pattern"],
    );
    schema_case(
        b,
        "pattern_dfa_blowup.json",
        &[EITHER, "pattern_dfa_blowup.json", "/pattern"],
    );
    schema_case(
        b,
        "max_length_string.json",
        &["max_length_string.json", "/maxLength"],
    );
    schema_case(
        b,
        "max_items_fraction.json",
        &["max_items_fraction.json", "/maxItems"],
    );
    schema_case(
        b,
        "min_items_negative.json",
        &["min_items_negative.json", "/minItems"],
    );
    schema_case(
        b,
        "pattern_number.json",
        &["pattern_number.json", "/pattern"],
    );
    schema_case(
        b,
        "minimum_string.json",
        &["minimum_string.json", "/minimum"],
    );
    schema_case(
        b,
        "required_string.json",
        &["required_string.json", "/required"],
    );
    schema_case(
        b,
        "properties_array.json",
        &["properties_array.json", "/properties"],
    );
    schema_case(b, "enum_object.json", &["enum_object.json", "/enum"]);
    schema_case(
        b,
        "multiple_of_zero.json",
        &["multiple_of_zero.json", "/multipleOf"],
    );
    schema_case(
        b,
        "multiple_of_negative.json",
        &["multiple_of_negative.json", "/multipleOf"],
    );
    schema_case(
        b,
        "type_unknown.json",
        &["type_unknown.json", "/type", "nope"],
    );
    schema_case(
        b,
        "type_number_value.json",
        &["type_number_value.json", "/type"],
    );
    schema_case(b, "type_empty.json", &["type_empty.json", "\\\"\\\""]);
    schema_case(b, "enum_empty.json", &["enum_empty.json", "\\\"\\\""]);
    schema_case(b, "anyof_empty.json", &["anyof_empty.json", "\\\"\\\""]);
    schema_case(
        b,
        "allof_contradiction.json",
        &["allof_contradiction.json", "allOf"],
    );
    schema_case(
        b,
        "min_items_huge.json",
        &["min_items_huge.json", "minItems", "1024"],
    );
    schema_case(
        b,
        "max_items_u64.json",
        &["max_items_u64.json", "maxItems", "1024"],
    );
    schema_case(
        b,
        "min_items_1e300.json",
        &["min_items_1e300.json", "minItems", "1024"],
    );
    schema_case(
        b,
        "max_length_1e20.json",
        &["max_length_1e20.json", "/maxLength"],
    );
    schema_case(
        b,
        "min_length_300.json",
        &["min_length_300.json", "/minLength"],
    );
    schema_case(
        b,
        "number_out_of_range.json",
        &["number_out_of_range.json", "line 1"],
    );
    schema_case(
        b,
        "minimum_huge_integer.json",
        &["minimum_huge_integer.json", "/minimum"],
    );
    schema_case(b, "min_gt_max.json", &["min_gt_max.json", "\\\"\\\""]);
    schema_case(
        b,
        "min_length_gt_max.json",
        &["min_length_gt_max.json", "\\\"\\\""],
    );
    schema_case(
        b,
        "pattern_unbalanced.json",
        &["pattern_unbalanced.json", "/pattern"],
    );
    schema_case(
        b,
        "pattern_lookbehind.json",
        &["pattern_lookbehind.json", "/pattern"],
    );
    schema_case(
        b,
        "pattern_backref.json",
        &["pattern_backref.json", "/pattern"],
    );
    schema_case(
        b,
        "pattern_properties_bad.json",
        &["pattern_properties_bad.json", "/patternProperties"],
    );
    schema_case(
        b,
        "format_unknown.json",
        &["format_unknown.json", "/format", "nope"],
    );
    schema_case(
        b,
        "schema_unknown.json",
        &["schema_unknown.json", "/$schema"],
    );
    schema_case(b, "weird_property_names.json", &[]);
    schema_case(b, "not_json.json", &["not_json.json", "line 1 column"]);
    schema_case(b, "empty.json", &["empty.json", "line 1 column"]);
    schema_case(b, "whitespace.json", &["whitespace.json", "line 2 column"]);
    schema_case(b, "scalar.json", &["scalar.json", "\\\"\\\"", "number"]);
    schema_case(b, "null.json", &["null.json", "\\\"\\\"", "null"]);
    schema_case(b, "false.json", &["false.json", "\\\"\\\""]);
    schema_case(b, "true.json", &[]);
    schema_case(
        b,
        "trailing_garbage.json",
        &["trailing_garbage.json", "line 1 column"],
    );
    schema_case(b, "invalid_utf8.json", &["invalid_utf8.json", "UTF-8"]);
    schema_case(b, "nul_bytes.json", &["nul_bytes.json", "line 1 column"]);
    schema_case(b, "bom.json", &["bom.json", "line 1 column 1"]);
    // The last `type` wins, as in most JSON readers.
    schema_case(b, "duplicate_keys.json", &[]);
    schema_case(
        b,
        "subschema_number.json",
        &["subschema_number.json", "/properties/a"],
    );
    schema_case(b, "items_string.json", &["items_string.json", "/items"]);
    schema_case(b, "not_keyword.json", &["not_keyword.json", "/not"]);
    schema_case(b, "const_deep.json", &[]);
    schema_case(
        b,
        "ref_chain_300.json",
        &["ref_chain_300.json", "/definitions/d", "128"],
    );
    schema_case(
        b,
        "prefix_items_many.json",
        &["prefix_items_many.json", "prefixItems", "1024"],
    );
    schema_case(b, "enum_strings_escapes.json", &[]);
    schema_case(b, "ok_person.json", &[]);
    schema_case(
        b,
        "ref_anchor_missing.json",
        &["ref_anchor_missing.json", "/$ref", "#missing"],
    );
    schema_case(
        b,
        "ref_into_non_schema.json",
        &["ref_into_non_schema.json", "/definitions/a"],
    );
    schema_case(
        b,
        "ref_into_array_index.json",
        &["ref_into_array_index.json", "#/anyOf/99"],
    );
    schema_case(
        b,
        "dependencies_weird.json",
        &["dependencies_weird.json", "/dependencies"],
    );
    schema_case(b, "any_order_many.json", &[]);

    // Generated (issue 19's examples and deep nesting).
    let numbers: Vec<String> = (0..10_000).map(|i| i.to_string()).collect();
    let p = b.file(
        "enum_10000.json",
        format!("{{\"enum\": [{}]}}", numbers.join(", ")),
    );
    grammar_case(
        b,
        "schema",
        "enum of 10,000 integers",
        &format!("schema:{p}"),
        &[EITHER, "enum_10000.json", "/enum"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let names: Vec<String> = (0..10_000).map(|i| format!("\"p{i}\"")).collect();
    let props: Vec<String> = (0..10_000)
        .map(|i| format!("\"p{i}\": {{\"type\": \"integer\"}}"))
        .collect();
    let p = b.file(
        "required_10000.json",
        format!(
            "{{\"type\": \"object\", \"properties\": {{{}}}, \"required\": [{}]}}",
            props.join(", "),
            names.join(", ")
        ),
    );
    grammar_case(
        b,
        "schema",
        "10,000 required properties",
        &format!("schema:{p}"),
        &[EITHER, "required_10000.json", "/"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);
    let p = b.file(
        "required_only_10000.json",
        format!(
            "{{\"type\": \"object\", \"required\": [{}]}}",
            names.join(", ")
        ),
    );
    grammar_case(
        b,
        "schema",
        "10,000 required names without properties",
        &format!("schema:{p}"),
        &[EITHER, "required_only_10000.json", "/required"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let p = b.file(
        "pattern_1mb.json",
        format!(
            "{{\"type\": \"string\", \"pattern\": \"^{}$\"}}",
            "abcdefghij".repeat(100_000)
        ),
    );
    grammar_case(
        b,
        "schema",
        "1 MB literal pattern",
        &format!("schema:{p}"),
        &[EITHER, "pattern_1mb.json", "/pattern"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let p = b.file(
        "deep_items_10000.json",
        format!(
            "{}{{}}{}",
            "{\"items\": ".repeat(10_000),
            "}".repeat(10_000)
        ),
    );
    grammar_case(
        b,
        "schema",
        "schema nested 10,000 levels (items)",
        &format!("schema:{p}"),
        &["deep_items_10000.json", "line 1"],
    );

    let mut defs = Vec::new();
    for i in 0..10_000 {
        defs.push(format!(
            "\"d{i}\": {{\"type\": \"array\", \"items\": {{\"$ref\": \"#/definitions/d{}\"}}}}",
            i + 1
        ));
    }
    defs.push("\"d10000\": {\"type\": \"integer\"}".into());
    let p = b.file(
        "ref_chain_10000.json",
        format!(
            "{{\"definitions\": {{{}}}, \"$ref\": \"#/definitions/d0\"}}",
            defs.join(", ")
        ),
    );
    grammar_case(
        b,
        "schema",
        "schema nested 10,000 levels through $ref",
        &format!("schema:{p}"),
        &["ref_chain_10000.json", "/definitions/d"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let big_enum: Vec<String> = (0..2000)
        .map(|i| format!("\"{}{i}\"", "x".repeat(500)))
        .collect();
    let p = b.file(
        "enum_long_strings.json",
        format!("{{\"enum\": [{}]}}", big_enum.join(",")),
    );
    grammar_case(
        b,
        "schema",
        "enum of 2,000 500-byte strings",
        &format!("schema:{p}"),
        &[EITHER, "enum_long_strings.json", "/enum"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let p = b.file("dir.json/keep", "");
    let dir = Path::new(&p)
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    grammar_case(
        b,
        "schema",
        "schema path is a directory",
        &format!("schema:{dir}"),
        &["dir.json"],
    );
    grammar_case(
        b,
        "schema",
        "schema: with an empty path",
        "schema:",
        &["schema:"],
    );
    grammar_case(
        b,
        "schema",
        "schema file that never ends (/dev/zero)",
        "schema:/dev/zero",
        &["/dev/zero"],
    );
    b.cases.last_mut().unwrap().max_rss(256);
    let lenient = format!("schema:{}", input("schema/max_length_string.json"));
    b.add(
        "schema",
        "wrong-type keyword in lenient mode",
        &["check", "--lenient", "--grammar", &lenient],
        LINE,
        lines(1, &[&["\"id\":\"g\"", "/maxLength"]]),
    );
    let p = format!("schema:{}", input("schema/allof_fanout.json"));
    b.add(
        "schema",
        "allOf fan-out: grammar stats",
        &["grammar", "stats", &p],
        "",
        err(&["allof_fanout.json", "/definitions/d"]),
    );
}

fn canvas_cases(b: &mut Battery) {
    let json = ["check", "--grammar", "json"];
    b.add(
        "canvas line",
        "mixed bad lines keep their ids and the run goes on",
        &["check", "--grammar", "json", &input("canvas/mixed.jsonl")],
        "",
        lines(
            1,
            &[
                &["\"line\":1", "JSON", "column 2"],
                &["\"line\":2", "object"],
                &["\"line\":3", "object"],
                &["\"id\":\"t\"", "\"line\":4", "--tokenizer"],
                &["\"id\":5", "\"line\":5", "canvas"],
                &["\"id\":6", "\"line\":6", "canvas", "must be an array"],
                &["\"id\":7", "\"line\":7", "canvas[1]"],
                &["\"id\":8", "\"line\":8", "canvas[0]"],
                &["\"id\":9", "\"line\":9", "canvas[0]", "256"],
                &["\"id\":10", "\"line\":10", "canvas[0]", "-1"],
                &["\"id\":11", "\"line\":11", "canvas[0]"],
                &["\"id\":12", "\"line\":12", "canvas[0]"],
                &["\"id\":13", "\"line\":13", "grammar"],
                &["\"id\":14", "\"line\":14", "nosuchgrammar"],
                &["\"id\":15", "\"line\":15", "missing_file.lark"],
                &["\"id\":16", "\"line\":16", "missing.json"],
                &["\"id\":17", "\"verdict\":\"completable\""],
                &["\"id\":{\"nested\":[1,2]}", "\"verdict\""],
                &["\"id\":20", "\"line\":21", "canvas[0]"],
                &["\"id\":21", "\"line\":22", "canvas"],
                &["\"id\":\"last\"", "\"verdict\":\"completable\""],
            ],
        ),
    );
    line_case(
        b,
        "invalid UTF-8 inside a string keeps the id",
        &json,
        b"{\"id\": 7, \"canvas\": [\"\xff\"]}",
        &["\"id\":7", "UTF-8"],
    );
    line_case(
        b,
        "invalid UTF-8 before the id",
        &json,
        b"{\"x\": \"\xc3\", \"id\": 8, \"canvas\": [\"1\"]}",
        &["\"id\":8", "UTF-8"],
    );
    line_case(
        b,
        "raw NUL byte in a line",
        &json,
        b"{\"id\": 9, \"canvas\": [\"1\x00\"]}",
        &["JSON", "column"],
    );
    line_case(
        b,
        "canvas is a string",
        &json,
        b"{\"id\": 10, \"canvas\": \"[1]\"}",
        &["\"id\":10", "canvas", "must be an array"],
    );
    line_case(
        b,
        "id out of f64 range",
        &json,
        b"{\"id\": 1e400, \"canvas\": [\"1\"]}",
        &["JSON", "column"],
    );
    line_case(
        b,
        "canvas is an object",
        &json,
        b"{\"id\": 12, \"canvas\": {\"a\": 1}}",
        &["\"id\":12", "canvas", "must be an array"],
    );
    line_case(
        b,
        "grammar field is an array",
        &json,
        b"{\"id\": 13, \"grammar\": [\"json\"], \"canvas\": [\"1\"]}",
        &["\"id\":13", "grammar"],
    );
    line_case(
        b,
        "grammar field names a directory",
        &json,
        b"{\"id\": 14, \"grammar\": \"/.lark\", \"canvas\": [\"1\"]}",
        &["\"id\":14", "/.lark"],
    );
    line_case(
        b,
        "grammar field is empty",
        &json,
        b"{\"id\": 15, \"grammar\": \"\", \"canvas\": [\"1\"]}",
        &["\"id\":15", "grammar"],
    );
    line_case(
        b,
        "grammar field +fence+fence",
        &json,
        b"{\"id\": 16, \"grammar\": \"json+fence+fence\", \"canvas\": [\"1\"]}",
        &["\"id\":16", "json+fence+fence"],
    );
    line_case(b, "a line that is JSON null", &json, b"null", &["object"]);
    line_case(
        b,
        "canvas nested 100,000 arrays deep in the line",
        &json,
        format!(
            "{{\"id\": 17, \"canvas\": {}{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        )
        .as_bytes(),
        &["JSON", "column"],
    );
    line_case(
        b,
        "truncated line",
        &json,
        b"{\"id\": 18, \"canvas\": [\"[1\", nu",
        &["JSON", "column"],
    );

    b.add(
        "canvas line",
        "bytes cells that are not UTF-8, EOS then text",
        &["check", "--grammar", "json", "--complete"],
        "{\"id\": 1, \"canvas\": [\"\\\"\", {\"bytes\": [255, 254]}, null]}\n{\"id\": 2, \"canvas\": [\"[1\", {\"eos\": true}, \"]\"]}\n",
        lines(0, &[&["\"id\":1", "not_completable"], &["\"id\":2", "not_completable"]]),
    );
    let mut eos = String::from("{\"id\": \"e\", \"canvas\": [\"[1]\"");
    for _ in 0..100_000 {
        eos.push_str(", {\"eos\": true}");
    }
    eos.push_str("]}\n");
    b.add(
        "canvas line",
        "100,000 EOS cells",
        &["check", "--grammar", "json", "--complete"],
        eos,
        lines(0, &[&["\"id\":\"e\"", "\"verdict\":\"completable\""]]),
    );

    // No grammar at all.
    b.add(
        "canvas line",
        "no grammar anywhere",
        &["check"],
        "{\"id\": 1, \"canvas\": [\"1\"]}\n",
        lines(1, &[&["\"id\":1", "--grammar"]]),
    );
    // Empty input, blank input, no trailing newline, CRLF.
    b.add("canvas line", "empty input", &json, "", lines(0, &[]));
    b.add(
        "canvas line",
        "only blank lines",
        &json,
        "\n\n \t\n\r\n",
        lines(0, &[]),
    );
    b.add(
        "canvas line",
        "CRLF line endings and no final newline",
        &json,
        "{\"id\": 1, \"canvas\": [\"[1\", null]}\r\n{\"id\": 2, \"canvas\": [\"[1]\"]}",
        lines(
            0,
            &[&["\"id\":1", "completable"], &["\"id\":2", "completable"]],
        ),
    );
    b.add(
        "canvas line",
        "--stats with no lines",
        &["check", "--grammar", "json", "--stats"],
        "",
        Expect::Ok(vec![]),
    );

    // Deep nesting in the canvas text.
    let deep = format!(
        "{{\"id\": \"deep\", \"canvas\": [\"{}\", null]}}\n",
        "[".repeat(100_000)
    );
    b.add(
        "canvas line",
        "100,000 open brackets in canvas text",
        &json,
        deep.clone(),
        lines(0, &[&["\"id\":\"deep\"", "\"verdict\""]]),
    )
    .timeout(SLOW);
    b.add(
        "canvas line",
        "100,000 open brackets in canvas text, --complete",
        &["check", "--grammar", "json", "--complete"],
        deep,
        lines(0, &[&["\"id\":\"deep\"", "\"verdict\""]]),
    )
    .timeout(SLOW);
    let deep_smiles = format!(
        "{{\"id\": \"s\", \"canvas\": [\"C{}\", null]}}\n",
        "(C".repeat(50_000)
    );
    b.add(
        "canvas line",
        "50,000 open SMILES branches, --complete",
        &["check", "--grammar", "smiles", "--complete"],
        deep_smiles,
        lines(0, &[&["\"id\":\"s\"", "\"verdict\""]]),
    )
    .timeout(SLOW);
    let deep_cpp = format!(
        "{{\"id\": \"c\", \"canvas\": [\"int main() {{ return {}\", null]}}\n",
        "(".repeat(20_000)
    );
    b.add(
        "canvas line",
        "20,000 open C++ parentheses, --complete",
        &["check", "--grammar", "cpp", "--complete"],
        deep_cpp,
        lines(0, &[&["\"id\":\"c\"", "\"verdict\""]]),
    )
    .timeout(SLOW);

    // Many cells, many holes, huge cells.
    let mut nulls = String::from("{\"id\": \"n\", \"canvas\": [\"[\"");
    for _ in 0..1_000_000 {
        nulls.push_str(",null");
    }
    nulls.push_str("]}\n");
    b.add(
        "canvas line",
        "1,000,000 masked cells",
        &json,
        nulls,
        lines(0, &[&["\"id\":\"n\"", "\"verdict\""]]),
    )
    .timeout(SLOW);
    let mut holes = String::from("{\"id\": \"h\", \"canvas\": [\"[\"");
    for _ in 0..100_000 {
        holes.push_str(",null,\"1\"");
    }
    holes.push_str("]}\n");
    b.add(
        "canvas line",
        "100,000 holes between text",
        &json,
        holes,
        lines(0, &[&["\"id\":\"h\"", "\"verdict\""]]),
    )
    .timeout(SLOW);
    let mut holes = String::from("{\"id\": \"h\", \"canvas\": [\"int main() {\"");
    for _ in 0..2_000 {
        holes.push_str(",null,\"x\"");
    }
    holes.push_str("]}\n");
    b.add(
        "canvas line",
        "2,000 holes in C++",
        &["check", "--grammar", "cpp"],
        holes,
        lines(0, &[&["\"id\":\"h\"", "\"verdict\""]]),
    )
    .timeout(SLOW);
    let big = format!(
        "{{\"id\": \"big\", \"canvas\": [\"\\\"{}\", null]}}\n",
        "a".repeat(10 << 20)
    );
    b.add(
        "canvas line",
        "10 MB text cell",
        &json,
        big,
        lines(0, &[&["\"id\":\"big\"", "completable"]]),
    )
    .timeout(SLOW);
    let big_id = format!(
        "{{\"id\": \"{}\", \"canvas\": [\"[1]\"]}}\n",
        "i".repeat(1 << 20)
    );
    b.add(
        "canvas line",
        "1 MB id",
        &json,
        big_id,
        lines(0, &[&["iiii", "completable"]]),
    );
    let no_newline = format!("{}", "[".repeat(50 << 20));
    b.add(
        "canvas line",
        "50 MB line that is not JSON",
        &json,
        no_newline,
        lines(1, &[&["\"line\":1", "JSON"]]),
    )
    .timeout(SLOW);

    // Many lines.
    let mut many = String::new();
    for i in 0..20_000 {
        writeln!(
            many,
            "{{\"id\": {i}, \"canvas\": [\"[{i}, \", null, \"]\"]}}"
        )
        .unwrap();
    }
    let mut expect: Vec<Vec<String>> = Vec::new();
    for i in 0..20_000 {
        expect.push(vec![format!("\"id\":{i},"), "completable".into()]);
    }
    b.add(
        "canvas line",
        "20,000 distinct canvases",
        &json,
        many,
        Expect::Lines {
            code: 0,
            lines: expect,
        },
    )
    .timeout(SLOW)
    .max_rss(500);

    // 20,000 spellings of one grammar path.
    b.file(
        "spell/g.lark",
        "start: \"[\" [D (\",\" D)*] \"]\"\nD: /[0-9]+/\n",
    );
    let root = b.path("spell");
    let mut spellings = String::new();
    let mut expect: Vec<Vec<String>> = Vec::new();
    let mut n = 0;
    'outer: for i in 0..200 {
        for j in 0..100 {
            let spec = format!("{root}{}{}g.lark", "/.".repeat(i), "/".repeat(j + 1));
            writeln!(
                spellings,
                "{{\"id\": {n}, \"grammar\": \"{spec}\", \"canvas\": [\"[1\", null]}}"
            )
            .unwrap();
            expect.push(vec![format!("\"id\":{n},"), "completable".into()]);
            n += 1;
            if n == 20_000 {
                break 'outer;
            }
        }
    }
    b.add(
        "canvas line",
        "20,000 spellings of one grammar path",
        &["check"],
        spellings,
        Expect::Lines {
            code: 0,
            lines: expect,
        },
    )
    .timeout(SLOW)
    .max_rss(150);

    // A grammar that fails slowly, named by 300 lines: it must not be rebuilt per line.
    let mut slow = String::from("start: r0\n");
    for i in 0..30_000 {
        writeln!(slow, "r{i}: r{} \"a\" | \"b\" r{}", i + 1, i + 1).unwrap();
    }
    slow.push_str("r30000: undefined_at_the_end\n");
    let spec = b.file("slow_failing.lark", &slow);
    let mut stdin = String::new();
    let mut expect: Vec<Vec<String>> = Vec::new();
    for i in 0..300 {
        writeln!(
            stdin,
            "{{\"id\": {i}, \"grammar\": \"{spec}\", \"canvas\": [\"a\"]}}"
        )
        .unwrap();
        expect.push(vec![format!("\"id\":{i},"), "undefined_at_the_end".into()]);
    }
    b.add(
        "canvas line",
        "a failing grammar named by 300 lines (loaded once?)",
        &["check"],
        stdin,
        Expect::Lines {
            code: 1,
            lines: expect,
        },
    )
    .timeout(SLOW);

    // 2,000 distinct failing grammar names.
    let mut stdin = String::new();
    let mut expect: Vec<Vec<String>> = Vec::new();
    for i in 0..2_000 {
        writeln!(
            stdin,
            "{{\"id\": {i}, \"grammar\": \"/nonexistent/{i}.lark\", \"canvas\": [\"a\"]}}"
        )
        .unwrap();
        expect.push(vec![format!("\"id\":{i},"), format!("{i}.lark")]);
    }
    b.add(
        "canvas line",
        "2,000 distinct missing grammars",
        &["check"],
        stdin,
        Expect::Lines {
            code: 1,
            lines: expect,
        },
    );

    // Inputs that are not files.
    b.add(
        "canvas line",
        "input file is a directory",
        &["check", "--grammar", "json", "/"],
        "",
        err(&["/", "directory"]),
    );
    b.add(
        "canvas line",
        "input file missing",
        &["check", "--grammar", "json", "/nonexistent/in.jsonl"],
        "",
        err(&["/nonexistent/in.jsonl"]),
    );
    b.add(
        "canvas line",
        "input that never ends (/dev/zero)",
        &["check", "--grammar", "json", "/dev/zero"],
        "",
        err(&["/dev/zero", "line 1"]),
    )
    .timeout(SLOW)
    .max_rss(256);
    let binary: Vec<u8> = (0..=255u8).cycle().take(1 << 16).collect();
    b.add(
        "canvas line",
        "64 KB of binary garbage on stdin",
        &json,
        binary,
        Expect::OkOrErr(vec![]),
    )
    .timeout(SLOW);
    let long = b.file("long_forced.lark", "start: \"a\" ~ 10000\n");
    b.add(
        "canvas line",
        "--complete of a 10,000-symbol forced completion",
        &["check", "--grammar", &long, "--complete"],
        "{\"id\": 1, \"canvas\": [\"a\", null]}\n",
        lines(0, &[&["\"id\":1", "completable", "aaaaaaaa"]]),
    )
    .timeout(SLOW);
}

fn token_cases(b: &mut Battery) {
    let small = input("tokenizer/small.json");
    let args = ["check", "--grammar", "json", "--tokenizer", small.as_str()];
    b.add(
        "token line",
        "mixed bad token lines keep their ids and the run goes on",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            &input("tokens/mixed.jsonl"),
        ],
        "",
        lines(
            1,
            &[
                &["\"line\":1", "JSON", "column 2"],
                &["\"line\":2", "object"],
                &["\"id\":\"c\"", "\"line\":3", "leave out --tokenizer"],
                &["\"id\":4", "tokens"],
                &["\"id\":5", "tokens[1]"],
                &["\"id\":6", "tokens[1]"],
                &["\"id\":7", "tokens[1]"],
                &["\"id\":8", "tokens[1]"],
                &["\"id\":9", "tokens[1]"],
                &["\"id\":10", "tokens[1]", "999999"],
                &["\"id\":11", "grammar"],
                &["\"id\":12", "nosuchgrammar"],
                &["\"id\":13", "\"verdict\":\"completable\""],
                &["\"id\":14", "\"verdict\":\"not_completable\""],
                &["\"id\":15", "\"verdict\":\"not_completable\""],
                &["\"id\":16", "\"verdict\":\"not_completable\""],
                &["\"id\":\"last\"", "\"verdict\":\"completable\""],
            ],
        ),
    );
    line_case(
        b,
        "token line: invalid UTF-8 keeps the id",
        &args,
        b"{\"id\": 7, \"x\": \"\xff\", \"tokens\": [0]}",
        &["\"id\":7", "UTF-8"],
    );
    line_case(
        b,
        "token line: nested arrays 100,000 deep",
        &args,
        format!(
            "{{\"id\": 8, \"tokens\": {}{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        )
        .as_bytes(),
        &["JSON", "column"],
    );
    line_case(
        b,
        "token line: id past the vocabulary (u32::MAX)",
        &args,
        b"{\"id\": 9, \"tokens\": [0, 4294967295]}",
        &["\"id\":9", "tokens[1]", "4294967295"],
    );
    let mut long = String::from("{\"id\": 10, \"tokens\": [0");
    for _ in 0..131_072 {
        long.push_str(",null");
    }
    long.push_str("]}");
    line_case(
        b,
        "token line: more positions than --max-positions",
        &args,
        long.as_bytes(),
        &["\"id\":10", "131073", "--max-positions"],
    );
    let mut many = String::from("{\"id\": \"m\", \"tokens\": [0");
    for _ in 0..1_000_000 {
        many.push_str(",null");
    }
    many.push_str("]}\n");
    b.add(
        "token line",
        "1,000,000 masked positions with --max-positions unbounded",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--max-positions",
            "18446744073709551615",
        ],
        many,
        lines(0, &[&["\"id\":\"m\"", "\"verdict\""]]),
    )
    .timeout(SLOW);
    let mut eos = String::from("{\"id\": \"e\", \"tokens\": [0, 2, 1");
    for _ in 0..100_000 {
        eos.push_str(", 10");
    }
    eos.push_str("]}\n");
    b.add(
        "token line",
        "100,000 EOS ids",
        &args,
        eos,
        lines(0, &[&["\"id\":\"e\"", "\"verdict\":\"completable\""]]),
    );
    b.add(
        "token line",
        "--max-positions 0 and an empty canvas",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--max-positions",
            "0",
        ],
        "{\"id\": 1, \"tokens\": []}\n{\"id\": 2, \"tokens\": [0]}\n",
        lines(
            1,
            &[
                &["\"id\":1", "\"verdict\""],
                &["\"id\":2", "--max-positions"],
            ],
        ),
    );
    b.add(
        "token line",
        "gap id (no bytes) between brackets is refused",
        &args,
        "{\"id\": 1, \"tokens\": [0, 12, 1, 10]}\n",
        lines(0, &[&["\"id\":1", "not_completable"]]),
    );
    b.add(
        "token line",
        "empty token (\"\" in vocab) between brackets is refused",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &input("tokenizer/empty_token.json"),
        ],
        "{\"id\": 1, \"tokens\": [1, 0, 2, 3]}\n",
        lines(0, &[&["\"id\":1", "not_completable"]]),
    );

    // mask
    let m = ["mask", "--grammar", "json", "--tokenizer", small.as_str()];
    b.add(
        "mask",
        "mask: bad lines and positions, the run goes on",
        &m,
        concat!(
            "{\"id\": 1, \"tokens\": [0, null, 1]}\n",
            "{\"id\": 2, \"tokens\": [0, -3]}\n",
            "not json\n",
            "{\"id\": 4, \"tokens\": [0, null, 1, 10]}\n",
        ),
        lines(
            1,
            &[
                &["\"id\":1", "\"masks\""],
                &["\"id\":2", "tokens[1]"],
                &["\"line\":3", "JSON"],
                &["\"id\":4", "\"masks\""],
            ],
        ),
    );
    b.add(
        "mask",
        "--positions out of range, then not masked",
        &["mask", "--grammar", "json", "--tokenizer", &small, "--positions", "5"],
        "{\"id\": 1, \"tokens\": [0, null, 1]}\n{\"id\": 2, \"tokens\": [0, 1, 1, 1, 1, 1, 1]}\n{\"id\": 3, \"tokens\": [0, 2, 2, 2, 2, null, 1]}\n",
        lines(1, &[&["\"id\":1", "5"], &["\"id\":2", "5"], &["\"id\":3", "\"masks\""]]),
    );
    b.add(
        "mask",
        "--positions u64::MAX",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--positions",
            "18446744073709551615",
        ],
        "{\"id\": 1, \"tokens\": [0, null, 1]}\n",
        lines(1, &[&["\"id\":1", "18446744073709551615"]]),
    );
    b.add(
        "mask",
        "--positions past u64",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--positions",
            "99999999999999999999999",
        ],
        "",
        usage(&["--positions"]),
    );
    b.add(
        "mask",
        "--positions abc",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--positions",
            "abc",
        ],
        "",
        usage(&["--positions", "abc"]),
    );
    b.add(
        "mask",
        "--positions empty",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--positions",
            "",
        ],
        "",
        usage(&["--positions"]),
    );
    b.add(
        "mask",
        "--positions -1",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--positions=-1",
        ],
        "",
        usage(&["--positions", "-1"]),
    );
    let dup = vec!["1"; 50_000].join(",");
    b.add(
        "mask",
        "--positions listing one position 50,000 times",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--count-only",
            "--positions",
            &dup,
        ],
        "{\"id\": 1, \"tokens\": [0, null, 1]}\n",
        Expect::OkOrErr(vec![]),
    )
    .timeout(SLOW);
    let mut nulls = String::from("{\"id\": \"n\", \"tokens\": [4");
    for _ in 0..2_000 {
        nulls.push_str(",null");
    }
    nulls.push_str(",5]}\n");
    b.add(
        "mask",
        "mask every position of a 2,000-position canvas",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--count-only",
        ],
        nulls,
        lines(0, &[&["\"id\":\"n\"", "\"masks\""]]),
    )
    .timeout(SLOW);
    b.add(
        "mask",
        "mask with a grammar that fails on every line",
        &[
            "mask",
            "--grammar",
            &input("lark/nested_repeat.lark"),
            "--tokenizer",
            &small,
        ],
        "{\"id\": 1, \"tokens\": [0, null]}\n{\"id\": 2, \"tokens\": [0, null]}\n",
        lines(
            1,
            &[
                &["\"id\":1", "nested_repeat.lark:2:"],
                &["\"id\":2", "nested_repeat.lark:2:"],
            ],
        ),
    );
    b.add(
        "mask",
        "mask with the Qwen tokenizer on 200 lines",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &format!("{MANIFEST}/tests/data/qwen-bpe/tokenizer.json"),
            "--count-only",
        ],
        "{\"id\": 1, \"tokens\": [58, null, 60]}\n".repeat(200),
        Expect::Lines {
            code: 0,
            lines: vec![vec!["\"id\":1".to_string(), "count".to_string()]; 200],
        },
    )
    .timeout(SLOW);

    // Tokenizers.
    for (file, needles) in [
        ("not_json.json", &["not_json.json", "column"][..]),
        ("empty.json", &["empty.json", "column"][..]),
        ("no_model.json", &["no_model.json", "model"][..]),
        (
            "vocab_not_ids.json",
            &["vocab_not_ids.json", "model.vocab"][..],
        ),
        (
            "vocab_negative_id.json",
            &["vocab_negative_id.json", "model.vocab"][..],
        ),
        ("too_large.json", &["too_large.json", "16777217"][..]),
        ("u64_id.json", &["u64_id.json", "ids"][..]),
        ("added_u32_max.json", &["added_u32_max.json", "ids"][..]),
        ("duplicate_ids.json", &["duplicate_ids.json", "twice"][..]),
        ("no_eos.json", &["no_eos.json", "--eos"][..]),
        ("added_bad.json", &["added_bad.json", "added_tokens[0]"][..]),
        (
            "unigram_bad.json",
            &["unigram_bad.json", "model.vocab[0]"][..],
        ),
        (
            "vocab_array_of_junk.json",
            &["vocab_array_of_junk.json", "model.vocab[0]"][..],
        ),
        ("invalid_utf8.json", &["invalid_utf8.json", "column"][..]),
        ("nul.json", &["nul.json", "column"][..]),
    ] {
        b.add(
            "tokenizer",
            &format!("check --tokenizer {file}"),
            &[
                "check",
                "--grammar",
                "json",
                "--tokenizer",
                &input(&format!("tokenizer/{file}")),
            ],
            "{\"id\": 1, \"tokens\": [0]}\n",
            err(needles),
        );
    }
    b.add(
        "tokenizer",
        "check --tokenizer unigram_ok.json",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &input("tokenizer/unigram_ok.json"),
        ],
        "{\"id\": 1, \"tokens\": [0, 2, 1, 3]}\n",
        lines(0, &[&["\"id\":1", "\"verdict\":\"completable\""]]),
    );
    b.add(
        "tokenizer",
        "check --tokenizer largest_id.json (16,777,216 ids)",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &input("tokenizer/largest_id.json"),
        ],
        "{\"id\": 1, \"tokens\": [0, null, 1]}\n",
        lines(0, &[&["\"id\":1", "\"verdict\""]]),
    )
    .timeout(SLOW);
    b.add(
        "tokenizer",
        "mask --tokenizer largest_id.json (16,777,216 ids)",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &input("tokenizer/largest_id.json"),
            "--count-only",
        ],
        "{\"id\": 1, \"tokens\": [0, null, 1]}\n",
        lines(0, &[&["\"id\":1", "\"masks\""]]),
    )
    .timeout(SLOW);
    b.add(
        "tokenizer",
        "--tokenizer is a directory",
        &["check", "--grammar", "json", "--tokenizer", "/"],
        "",
        err(&["tokenizer", "/", "directory"]),
    );
    b.add(
        "tokenizer",
        "--tokenizer missing",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            "/nonexistent/tok.json",
        ],
        "",
        err(&["/nonexistent/tok.json"]),
    );
    b.add(
        "tokenizer",
        "--tokenizer that never ends (/dev/zero)",
        &["check", "--grammar", "json", "--tokenizer", "/dev/zero"],
        "",
        err(&["/dev/zero"]),
    )
    .timeout(SLOW)
    .max_rss(256);
    b.add(
        "tokenizer",
        "--eos names no token",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--eos",
            "<nope>",
        ],
        "",
        err(&["small.json", "<nope>"]),
    );
    b.add(
        "tokenizer",
        "--eos empty string",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--eos",
            "",
        ],
        "",
        err(&["small.json", "--eos"]),
    );
    b.add(
        "tokenizer",
        "--eos without --tokenizer",
        &["check", "--grammar", "json", "--eos", "x"],
        "",
        usage(&["--tokenizer"]),
    );
    b.add(
        "tokenizer",
        "check --tokenizer with --complete",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--complete",
        ],
        "",
        usage(&["--complete"]),
    );
}

fn cli_cases(b: &mut Battery) {
    let gen = |extra: &[&str]| -> Vec<String> {
        let mut v = strs(&["generate", "--grammar", "smiles"]);
        v.extend(strs(extra));
        v
    };
    let add = |b: &mut Battery, name: &str, extra: &[&str], expect: Expect| {
        let args = gen(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        b.add("arguments", name, &args, "", expect);
    };
    add(
        b,
        "generate --length 18446744073709551615",
        &["--length", "18446744073709551615"],
        err(&["--length", "context"]),
    );
    add(
        b,
        "generate --length 100000",
        &["--length", "100000"],
        err(&["--length 100000", "context"]),
    );
    add(
        b,
        "generate --length 0",
        &["--length", "0"],
        err(&["--length"]),
    );
    add(
        b,
        "generate --length -1",
        &["--length", "-1"],
        usage(&["-1"]),
    );
    add(
        b,
        "generate --length=-1",
        &["--length=-1"],
        usage(&["--length", "-1"]),
    );
    add(
        b,
        "generate --length 1e3",
        &["--length", "1e3"],
        usage(&["--length", "1e3"]),
    );
    add(b, "generate -n 0", &["-n", "0"], ok_or_err(&["-n"]));
    b.add(
        "arguments",
        "generate -n 18446744073709551615 streams",
        &[
            "generate",
            "--grammar",
            "smiles",
            "-n",
            "18446744073709551615",
        ],
        "",
        Expect::Streams,
    )
    .timeout(5.0)
    .max_rss(1000);
    add(
        b,
        "generate --steps 0",
        &["--steps", "0"],
        err(&["steps 0"]),
    );
    add(
        b,
        "generate --steps 18446744073709551615",
        &["--steps", "18446744073709551615"],
        ok_or_err(&["--steps"]),
    );
    add(
        b,
        "generate --steps 100000",
        &["--steps", "100000"],
        ok_or_err(&["--steps"]),
    );
    add(
        b,
        "generate --steps 1 (fewer than the blocks)",
        &["--steps", "1"],
        err(&["steps 1"]),
    );
    add(
        b,
        "generate --steps 0 -n 3 (one message, not one per output)",
        &["--steps", "0", "-n", "3"],
        err(&["steps 0"]),
    );
    add(
        b,
        "generate --block 0",
        &["--block", "0"],
        err(&["block_length 0"]),
    );
    add(
        b,
        "generate --block 7 (does not divide 40)",
        &["--block", "7"],
        err(&["block"]),
    );
    add(
        b,
        "generate --block 18446744073709551615",
        &["--block", "18446744073709551615"],
        err(&["block"]),
    );
    add(
        b,
        "generate --temperature=-1",
        &["--temperature=-1"],
        err(&["temperature -1"]),
    );
    add(
        b,
        "generate --temperature NaN",
        &["--temperature", "NaN"],
        err(&["temperature NaN"]),
    );
    add(
        b,
        "generate --temperature inf",
        &["--temperature", "inf"],
        err(&["temperature inf"]),
    );
    add(
        b,
        "generate --temperature 1e308",
        &["--temperature", "1e308"],
        ok_or_err(&["--temperature"]),
    );
    add(
        b,
        "generate --cfg-scale NaN",
        &["--cfg-scale", "NaN"],
        err(&["cfg_scale NaN"]),
    );
    add(
        b,
        "generate --cfg-scale 1e308",
        &["--cfg-scale", "1e308"],
        ok_or_err(&["--cfg-scale"]),
    );
    add(
        b,
        "generate --top-p 2 (LLaDA ignores it)",
        &["--top-p", "2"],
        ok_or_err(&["--top-p"]),
    );
    add(
        b,
        "generate --alg nope",
        &["--alg", "nope"],
        err(&["--alg nope"]),
    );
    add(
        b,
        "generate --dtype f64",
        &["--dtype", "f64"],
        err(&["--dtype f64"]),
    );
    add(
        b,
        "generate --cuda without CUDA",
        &["--cuda"],
        err(&["--cuda"]),
    );
    add(
        b,
        "generate --constraint nope",
        &["--constraint", "nope"],
        usage(&["--constraint", "nope"]),
    );
    add(
        b,
        "generate --seed u64::MAX -n 2",
        &["--seed", "18446744073709551615", "-n", "2"],
        ok(&[]),
    );
    add(
        b,
        "generate --max-resamples 0 --constraint reject",
        &["--max-resamples", "0", "--constraint", "reject"],
        ok(&[]),
    );
    add(
        b,
        "generate --max-rejections-per-position 0 --constraint reject",
        &[
            "--max-rejections-per-position",
            "0",
            "--constraint",
            "reject",
        ],
        ok(&[]),
    );
    add(
        b,
        "generate --eps 0",
        &["--eps", "0"],
        ok_or_err(&["--eps"]),
    );
    // The prompt `SMILES:\n` is 3 tokens of the 512-position context.
    add(
        b,
        "generate --length 509 --steps 8 (exactly the context)",
        &["--length", "509", "--steps", "8"],
        ok(&[]),
    );
    b.cases.last_mut().unwrap().timeout(SLOW);
    add(
        b,
        "generate --length 510 (one past the context)",
        &["--length", "510"],
        err(&["--length 510", "context"]),
    );
    let prompt = "x".repeat(100_000);
    add(
        b,
        "generate --prompt of 100,000 characters",
        &["--prompt", &prompt],
        err(&["context"]),
    );
    let prompt = "é🦀\u{1}\u{202e}".repeat(10_000);
    add(
        b,
        "generate --prompt of 40,000 odd characters",
        &["--prompt", &prompt],
        err(&["context"]),
    );
    add(
        b,
        "generate --prefill of 100,000 characters",
        &["--prefill", &"(".repeat(100_000)],
        err(&["context"]),
    );
    add(
        b,
        "generate --chat --system of 100,000 characters",
        &["--chat", "--system", &"s".repeat(100_000)],
        err(&["context"]),
    );
    b.add(
        "arguments",
        "generate --grammar nosuch",
        &["generate", "--grammar", "nosuch"],
        "",
        err(&["nosuch"]),
    );
    b.add(
        "arguments",
        "generate --grammar with a bad Lark file",
        &[
            "generate",
            "--grammar",
            &input("lark/nested_repeat.lark"),
            "--prompt",
            "x",
        ],
        "",
        err(&["nested_repeat.lark:2:"]),
    );
    b.add(
        "arguments",
        "generate --grammar with a schema of an empty language",
        &[
            "generate",
            "--grammar",
            &format!("schema:{}", input("schema/false.json")),
            "--prompt",
            "x",
        ],
        "",
        err(&["false.json"]),
    );
    b.add(
        "arguments",
        "generate --grammar json --unconstrained --json",
        &["generate", "--grammar", "json", "--unconstrained", "--json"],
        "",
        ok(&["\"valid\""]),
    );
    b.add("arguments", "no arguments", &[], "", usage(&["Usage"]));
    b.add(
        "arguments",
        "unknown subcommand",
        &["frobnicate"],
        "",
        usage(&["frobnicate"]),
    );
    b.add(
        "arguments",
        "check --max-positions=-1",
        &["check", "--max-positions=-1"],
        "",
        usage(&["--max-positions", "-1"]),
    );
    b.add(
        "arguments",
        "check --max-positions 1e9",
        &["check", "--max-positions", "1e9"],
        "",
        usage(&["--max-positions"]),
    );
    b.add(
        "arguments",
        "grammar stats with no spec",
        &["grammar", "stats"],
        "",
        usage(&["SPEC"]),
    );
    b.add(
        "arguments",
        "grammar stats of an unknown spec",
        &["grammar", "stats", "nope"],
        "",
        err(&["nope"]),
    );
    {
        use std::os::unix::ffi::OsStringExt;
        let case = b.add(
            "arguments",
            "grammar spec that is not UTF-8",
            &["grammar", "stats"],
            "",
            usage(&["UTF-8"]),
        );
        case.args.push(OsString::from_vec(b"g\xff.lark".to_vec()));
        let case = b.add(
            "arguments",
            "--prompt that is not UTF-8",
            &["generate", "--grammar", "smiles", "--prompt"],
            "",
            usage(&["--prompt", "UTF-8"]),
        );
        case.args.push(OsString::from_vec(b"\xff\xfe".to_vec()));
    }
    b.add(
        "arguments",
        "grammar spec of 10,000 characters",
        &["grammar", "stats", &format!("{}.lark", "a".repeat(10_000))],
        "",
        err(&["cannot read grammar file", "aaaa.lark"]),
    );
}

/// Copies the embedded model's folder into the scratch folder (the weights linked, not
/// copied, unless `weights` replaces them); returns its path.
fn model_dir(b: &Battery, name: &str, edit: impl Fn(&Path)) -> String {
    let src = Path::new(MANIFEST).join("models/default");
    let dir = b.scratch.join("models").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["config.json", "tokenizer.json", "lacuna.json"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    std::os::unix::fs::symlink(src.join("model.safetensors"), dir.join("model.safetensors"))
        .unwrap();
    edit(&dir);
    dir.to_str().unwrap().to_string()
}

/// Replaces `from` by `to` in the text file `path` (which must contain it).
fn edit_text(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} lacks {from}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// The embedded model's safetensors: header (JSON text) and data.
fn weights() -> (String, Vec<u8>) {
    let bytes =
        std::fs::read(Path::new(MANIFEST).join("models/default/model.safetensors")).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    (
        String::from_utf8(bytes[8..8 + n].to_vec()).unwrap(),
        bytes[8 + n..].to_vec(),
    )
}

fn write_weights(dir: &Path, header: &str, data: &[u8]) {
    let path = dir.join("model.safetensors");
    let _ = std::fs::remove_file(&path);
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).unwrap();
}

fn replace_weights(dir: &Path, bytes: &[u8]) {
    let path = dir.join("model.safetensors");
    let _ = std::fs::remove_file(&path);
    std::fs::write(path, bytes).unwrap();
}

fn model_cases(b: &mut Battery) {
    let run = |b: &mut Battery, name: &str, dir: &str, expect: Expect| {
        b.add(
            "model folder",
            name,
            &[
                "generate",
                "--model",
                dir,
                "--grammar",
                "smiles",
                "--length",
                "16",
                "--steps",
                "8",
            ],
            "",
            expect,
        );
    };
    let good = model_dir(b, "good", |_| {});
    run(b, "a good copy of the embedded model", &good, ok(&[]));
    run(
        b,
        "folder missing",
        "/nonexistent/model",
        err(&["/nonexistent/model"]),
    );
    let f = b.file("models/a_file", "x");
    run(b, "folder is a file", &f, err(&["a_file"]));
    let d = model_dir(b, "no_config", |d| {
        std::fs::remove_file(d.join("config.json")).unwrap()
    });
    run(b, "no config.json", &d, err(&["no_config", "config.json"]));
    let d = model_dir(b, "config_garbage", |d| {
        std::fs::write(d.join("config.json"), "{\"model_type\": ").unwrap()
    });
    run(
        b,
        "config.json garbage",
        &d,
        err(&["config_garbage", "config.json", "column"]),
    );
    let d = model_dir(b, "config_empty", |d| {
        std::fs::write(d.join("config.json"), "").unwrap()
    });
    run(
        b,
        "config.json empty",
        &d,
        err(&["config_empty", "config.json"]),
    );
    let d = model_dir(b, "config_invalid_utf8", |d| {
        std::fs::write(d.join("config.json"), b"{\"model_type\": \"\xff\"}").unwrap()
    });
    run(
        b,
        "config.json invalid UTF-8",
        &d,
        err(&["config_invalid_utf8", "config.json"]),
    );
    let d = model_dir(b, "config_dir", |d| {
        std::fs::remove_file(d.join("config.json")).unwrap();
        std::fs::create_dir(d.join("config.json")).unwrap();
    });
    run(
        b,
        "config.json is a directory",
        &d,
        err(&["config_dir", "config.json"]),
    );
    let d = model_dir(b, "config_zero", |d| {
        std::fs::remove_file(d.join("config.json")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.join("config.json")).unwrap();
    });
    run(
        b,
        "config.json never ends (/dev/zero)",
        &d,
        err(&["config_zero", "config.json"]),
    );
    b.cases.last_mut().unwrap().timeout(SLOW).max_rss(256);
    let d = model_dir(b, "no_d_model", |d| {
        edit_text(&d.join("config.json"), "\"d_model\": 256,", "")
    });
    run(
        b,
        "config.json without d_model",
        &d,
        err(&["no_d_model", "config.json", "d_model"]),
    );
    let d = model_dir(b, "d_model_string", |d| {
        edit_text(
            &d.join("config.json"),
            "\"d_model\": 256",
            "\"d_model\": \"256\"",
        )
    });
    run(
        b,
        "config.json d_model a string",
        &d,
        err(&["d_model_string", "config.json", "d_model"]),
    );
    let d = model_dir(b, "d_model_zero", |d| {
        edit_text(&d.join("config.json"), "\"d_model\": 256", "\"d_model\": 0")
    });
    run(
        b,
        "config.json d_model 0",
        &d,
        err(&["d_model_zero", "d_model"]),
    );
    let d = model_dir(b, "heads_zero", |d| {
        edit_text(&d.join("config.json"), "\"n_heads\": 4", "\"n_heads\": 0");
        edit_text(
            &d.join("config.json"),
            "\"n_kv_heads\": 4",
            "\"n_kv_heads\": 0",
        );
    });
    run(
        b,
        "config.json n_heads 0",
        &d,
        err(&["heads_zero", "n_heads"]),
    );
    let d = model_dir(b, "heads_not_dividing", |d| {
        edit_text(&d.join("config.json"), "\"n_heads\": 4", "\"n_heads\": 3")
    });
    run(
        b,
        "config.json n_heads 3 (does not divide d_model)",
        &d,
        err(&["heads_not_dividing", "n_heads"]),
    );
    let d = model_dir(b, "kv_heads_not_dividing", |d| {
        edit_text(
            &d.join("config.json"),
            "\"n_kv_heads\": 4",
            "\"n_kv_heads\": 3",
        )
    });
    run(
        b,
        "config.json n_kv_heads 3",
        &d,
        err(&["kv_heads_not_dividing", "n_kv_heads"]),
    );
    let d = model_dir(b, "layers_huge", |d| {
        edit_text(
            &d.join("config.json"),
            "\"n_layers\": 4",
            "\"n_layers\": 1000000000",
        )
    });
    run(
        b,
        "config.json n_layers 10^9",
        &d,
        err(&["layers_huge", "blocks.4"]),
    );
    let d = model_dir(b, "wrong_shape", |d| {
        edit_text(
            &d.join("config.json"),
            "\"mlp_hidden_size\": 704",
            "\"mlp_hidden_size\": 700",
        )
    });
    run(
        b,
        "config.json mlp_hidden_size 700 (wrong tensor shapes)",
        &d,
        err(&["wrong_shape", "ff_"]),
    );
    let d = model_dir(b, "vocab_huge", |d| {
        edit_text(
            &d.join("config.json"),
            "\"vocab_size\": 2048",
            "\"vocab_size\": 1000000000000",
        );
        edit_text(
            &d.join("config.json"),
            "\"embedding_size\": 2048",
            "\"embedding_size\": 1000000000000",
        );
    });
    run(
        b,
        "config.json vocab_size 10^12",
        &d,
        err(&["vocab_huge", "wte"]),
    );
    let d = model_dir(b, "context_zero", |d| {
        edit_text(
            &d.join("config.json"),
            "\"max_sequence_length\": 512",
            "\"max_sequence_length\": 0",
        )
    });
    run(
        b,
        "config.json max_sequence_length 0",
        &d,
        err(&["context_zero"]),
    );
    let d = model_dir(b, "context_huge", |d| {
        edit_text(
            &d.join("config.json"),
            "\"max_sequence_length\": 512",
            "\"max_sequence_length\": 18446744073709551615",
        )
    });
    b.add(
        "model folder",
        "config.json max_sequence_length u64::MAX and --length 10^7",
        &[
            "generate",
            "--model",
            &d,
            "--grammar",
            "smiles",
            "--length",
            "10000000",
        ],
        "",
        err(&["--length"]),
    );
    let d = model_dir(b, "mask_out_of_vocab", |d| {
        edit_text(
            &d.join("config.json"),
            "\"mask_token_id\": 1",
            "\"mask_token_id\": 999999",
        )
    });
    run(
        b,
        "config.json mask_token_id outside the vocabulary",
        &d,
        err(&["mask_out_of_vocab", "mask"]),
    );
    let d = model_dir(b, "eos_out_of_vocab", |d| {
        edit_text(
            &d.join("config.json"),
            "\"eos_token_id\": 0",
            "\"eos_token_id\": 4294967295",
        )
    });
    run(
        b,
        "config.json eos_token_id u32::MAX",
        &d,
        err(&["eos_out_of_vocab", "eos"]),
    );
    let d = model_dir(b, "model_type_unknown", |d| {
        edit_text(
            &d.join("config.json"),
            "\"model_type\": \"llada\"",
            "\"model_type\": \"gpt9\"",
        )
    });
    run(
        b,
        "config.json unknown model_type",
        &d,
        err(&["model_type_unknown", "gpt9"]),
    );
    let d = model_dir(b, "rope_nan", |d| {
        edit_text(
            &d.join("config.json"),
            "\"rope_theta\": 10000.0",
            "\"rope_theta\": -1.0",
        )
    });
    run(
        b,
        "config.json rope_theta -1",
        &d,
        err(&["rope_nan", "rope_theta"]),
    );
    let d = model_dir(b, "eps_negative", |d| {
        edit_text(
            &d.join("config.json"),
            "\"rms_norm_eps\": 0.00001",
            "\"rms_norm_eps\": -1e30",
        )
    });
    run(
        b,
        "config.json rms_norm_eps -1e30",
        &d,
        ok_or_err(&["eps_negative", "rms_norm_eps"]),
    );

    // Weights.
    let d = model_dir(b, "no_weights", |d| {
        std::fs::remove_file(d.join("model.safetensors")).unwrap()
    });
    run(
        b,
        "no model.safetensors",
        &d,
        err(&["no_weights", "model.safetensors"]),
    );
    let (header, data) = weights();
    let all: Vec<u8> =
        std::fs::read(Path::new(MANIFEST).join("models/default/model.safetensors")).unwrap();
    let d = model_dir(b, "truncated", |d| {
        replace_weights(d, &all[..all.len() / 2])
    });
    run(
        b,
        "model.safetensors truncated to half",
        &d,
        err(&["truncated", "model.safetensors"]),
    );
    let d = model_dir(b, "truncated_header", |d| replace_weights(d, &all[..100]));
    run(
        b,
        "model.safetensors cut inside its header",
        &d,
        err(&["truncated_header", "model.safetensors"]),
    );
    let d = model_dir(b, "empty_weights", |d| replace_weights(d, b""));
    run(
        b,
        "model.safetensors empty",
        &d,
        err(&["empty_weights", "model.safetensors"]),
    );
    let garbage: Vec<u8> = (0..100_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let d = model_dir(b, "garbage_weights", |d| replace_weights(d, &garbage));
    run(
        b,
        "model.safetensors random bytes",
        &d,
        err(&["garbage_weights", "model.safetensors"]),
    );
    for (tag, n) in [
        ("u64max", u64::MAX),
        ("u64max_minus_7", u64::MAX - 7),
        ("u64max_minus_8", u64::MAX - 8),
    ] {
        let mut bytes = n.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{}      ");
        let d = model_dir(b, &format!("header_{tag}"), |d| replace_weights(d, &bytes));
        run(
            b,
            &format!("safetensors header length {tag}"),
            &d,
            err(&[&format!("header_{tag}"), "header length"]),
        );
    }
    let d = model_dir(b, "header_not_json", |d| {
        write_weights(d, &"x".repeat(64), &data)
    });
    run(
        b,
        "safetensors header not JSON",
        &d,
        err(&["header_not_json", "model.safetensors"]),
    );
    let d = model_dir(b, "header_invalid_utf8", |d| {
        let mut bytes = 8u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{\"\xff\": 1}");
        replace_weights(d, &bytes);
    });
    run(
        b,
        "safetensors header invalid UTF-8",
        &d,
        err(&["header_invalid_utf8", "model.safetensors"]),
    );
    let first = "\"data_offsets\":[0,1024]";
    assert!(header.contains(first), "unexpected header layout");
    let d = model_dir(b, "offsets_past_end", |d| {
        write_weights(
            d,
            &header.replacen(first, "\"data_offsets\":[0,99999999999]", 1),
            &data,
        )
    });
    run(
        b,
        "safetensors data offsets past the end",
        &d,
        err(&["offsets_past_end", "model.safetensors"]),
    );
    let d = model_dir(b, "offsets_reversed", |d| {
        write_weights(
            d,
            &header.replacen(first, "\"data_offsets\":[1024,0]", 1),
            &data,
        )
    });
    run(
        b,
        "safetensors data offsets reversed",
        &d,
        err(&["offsets_reversed", "model.safetensors"]),
    );
    let d = model_dir(b, "dtype_i32", |d| {
        write_weights(
            d,
            &header.replacen("\"dtype\":\"F32\"", "\"dtype\":\"I32\"", 1),
            &data,
        )
    });
    run(
        b,
        "safetensors tensor of dtype I32",
        &d,
        ok_or_err(&["dtype_i32", "attn_norm"]),
    );
    let d = model_dir(b, "dtype_u8", |d| {
        write_weights(
            d,
            &header.replacen(
                "\"dtype\":\"F32\",\"shape\":[256]",
                "\"dtype\":\"U8\",\"shape\":[1024]",
                1,
            ),
            &data,
        )
    });
    run(
        b,
        "safetensors tensor of dtype U8 and the wrong shape",
        &d,
        err(&["dtype_u8", "attn_norm"]),
    );
    let name = "model.transformer.blocks.0.attn_norm.weight";
    let d = model_dir(b, "missing_tensor", |d| {
        write_weights(
            d,
            &header.replacen(name, "model.transformer.blocks.0.attn_norm.weighx", 1),
            &data,
        )
    });
    run(
        b,
        "safetensors without a tensor",
        &d,
        err(&["missing_tensor", name]),
    );
    let d = model_dir(b, "shape_huge", |d| {
        write_weights(
            d,
            &header.replacen("\"shape\":[256]", "\"shape\":[4294967296,4294967296]", 1),
            &data,
        )
    });
    run(
        b,
        "safetensors shape whose size overflows",
        &d,
        err(&["shape_huge", "model.safetensors"]),
    );
    let mut nan = data.clone();
    nan.iter_mut().for_each(|x| *x = 0xff);
    let d = model_dir(b, "nan_weights", |d| write_weights(d, &header, &nan));
    run(b, "all weights NaN", &d, ok_or_err(&["nan_weights", "NaN"]));
    let d = model_dir(b, "weights_dir", |d| {
        std::fs::remove_file(d.join("model.safetensors")).unwrap();
        std::fs::create_dir(d.join("model.safetensors")).unwrap();
    });
    run(
        b,
        "model.safetensors is a directory",
        &d,
        err(&["weights_dir", "model.safetensors"]),
    );
    let d = model_dir(b, "weights_loop", |d| {
        std::fs::remove_file(d.join("model.safetensors")).unwrap();
        std::os::unix::fs::symlink("model.safetensors", d.join("model.safetensors")).unwrap();
    });
    run(
        b,
        "model.safetensors is a symlink loop",
        &d,
        err(&["weights_loop", "model.safetensors"]),
    );
    let d = model_dir(b, "index_garbage", |d| {
        std::fs::remove_file(d.join("model.safetensors")).unwrap();
        std::fs::write(d.join("model.safetensors.index.json"), "{\"weight_map\": [").unwrap();
    });
    run(
        b,
        "model.safetensors.index.json garbage",
        &d,
        err(&["index_garbage", "model.safetensors.index.json"]),
    );
    let d = model_dir(b, "index_missing_shard", |d| {
        std::fs::remove_file(d.join("model.safetensors")).unwrap();
        std::fs::write(
            d.join("model.safetensors.index.json"),
            "{\"weight_map\": {\"a\": \"shard-1.safetensors\"}}",
        )
        .unwrap();
    });
    run(
        b,
        "index names a missing shard",
        &d,
        err(&["index_missing_shard", "shard-1.safetensors"]),
    );
    let d = model_dir(b, "index_traversal", |d| {
        std::fs::remove_file(d.join("model.safetensors")).unwrap();
        std::fs::write(
            d.join("model.safetensors.index.json"),
            "{\"weight_map\": {\"a\": \"../../../../../../../../etc/passwd\"}}",
        )
        .unwrap();
    });
    run(
        b,
        "index names ../../etc/passwd",
        &d,
        err(&["index_traversal", "passwd"]),
    );
    let d = model_dir(b, "index_empty", |d| {
        std::fs::remove_file(d.join("model.safetensors")).unwrap();
        std::fs::write(
            d.join("model.safetensors.index.json"),
            "{\"weight_map\": {}}",
        )
        .unwrap();
    });
    run(
        b,
        "index with an empty weight_map",
        &d,
        err(&["index_empty", "weight_map"]),
    );

    // Tokenizer and card of the folder.
    let d = model_dir(b, "no_tokenizer", |d| {
        std::fs::remove_file(d.join("tokenizer.json")).unwrap()
    });
    run(
        b,
        "no tokenizer.json",
        &d,
        err(&["no_tokenizer", "tokenizer.json"]),
    );
    let d = model_dir(b, "tokenizer_garbage", |d| {
        std::fs::write(d.join("tokenizer.json"), "{\"model\": 5").unwrap()
    });
    run(
        b,
        "tokenizer.json garbage",
        &d,
        err(&["tokenizer_garbage", "tokenizer.json"]),
    );
    let d = model_dir(b, "tokenizer_empty", |d| {
        std::fs::write(d.join("tokenizer.json"), "").unwrap()
    });
    run(
        b,
        "tokenizer.json empty",
        &d,
        err(&["tokenizer_empty", "tokenizer.json"]),
    );
    let d = model_dir(b, "tokenizer_no_mask", |d| {
        let path = d.join("tokenizer.json");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("<|mask|>", "<|nomask|>")).unwrap();
    });
    run(
        b,
        "tokenizer.json without a mask token",
        &d,
        err(&["tokenizer_no_mask", "mask"]),
    );
    let d = model_dir(b, "tokenizer_added_u32_max", |d| {
        edit_text(
            &d.join("tokenizer.json"),
            "\"added_tokens\":[",
            "\"added_tokens\":[{\"id\":4294967294,\"content\":\"<|evil|>\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true},",
        )
    });
    run(
        b,
        "tokenizer.json added token id 4294967294",
        &d,
        ok_or_err(&["tokenizer_added_u32_max", "tokenizer.json"]),
    );
    b.cases.last_mut().unwrap().timeout(SLOW);
    let d = model_dir(b, "tokenizer_zero", |d| {
        std::fs::remove_file(d.join("tokenizer.json")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.join("tokenizer.json")).unwrap();
    });
    run(
        b,
        "tokenizer.json never ends (/dev/zero)",
        &d,
        err(&["tokenizer_zero", "tokenizer.json"]),
    );
    b.cases.last_mut().unwrap().timeout(SLOW);
    let d = model_dir(b, "card_garbage", |d| {
        std::fs::write(d.join("lacuna.json"), "{\"tasks\": 5}").unwrap()
    });
    run(
        b,
        "lacuna.json garbage",
        &d,
        err(&["card_garbage", "lacuna.json", "tasks"]),
    );
    let d = model_dir(b, "card_length_huge", |d| {
        edit_text(
            &d.join("lacuna.json"),
            "\"length\": 40",
            "\"length\": 18446744073709551615",
        )
    });
    b.add(
        "model folder",
        "lacuna.json task length u64::MAX",
        &["generate", "--model", &d, "--grammar", "smiles"],
        "",
        err(&["card_length_huge", "context"]),
    );
    let d = model_dir(b, "card_length_zero", |d| {
        edit_text(&d.join("lacuna.json"), "\"length\": 40", "\"length\": 0")
    });
    b.add(
        "model folder",
        "lacuna.json task length 0",
        &["generate", "--model", &d, "--grammar", "smiles"],
        "",
        err(&["length"]),
    );
    b.add(
        "model folder",
        "--tokenizer garbage beside a good folder",
        &[
            "generate",
            "--model",
            &good,
            "--tokenizer",
            &input("tokenizer/not_json.json"),
            "--grammar",
            "smiles",
            "--length",
            "16",
        ],
        "",
        err(&["not_json.json"]),
    );
    b.add(
        "model folder",
        "--tokenizer with a different mask id",
        &[
            "generate",
            "--model",
            &good,
            "--tokenizer",
            &format!("{MANIFEST}/tests/data/qwen-bpe/tokenizer.json"),
            "--grammar",
            "smiles",
            "--length",
            "16",
            "--prompt",
            "x",
        ],
        "",
        err(&["tokenizer", "mask"]),
    );
    b.add(
        "model folder",
        "LLaDA test checkpoint without a tokenizer",
        &[
            "generate",
            "--model",
            &format!("{MANIFEST}/tests/data/llada-tiny"),
            "--prompt",
            "x",
            "--length",
            "8",
        ],
        "",
        err(&["llada-tiny", "tokenizer.json"]),
    );
}

fn train_cases(b: &mut Battery) {
    let out = |b: &Battery, tag: &str| b.path(&format!("train/{tag}"));
    // A model small enough to train a step in milliseconds; `extra` overrides these.
    let small = [
        ("--steps", "1"),
        ("--d-model", "16"),
        ("--heads", "2"),
        ("--layers", "1"),
        ("--mlp-hidden", "16"),
        ("--vocab-size", "300"),
        ("--max-len", "64"),
        ("--batch-tokens", "64"),
    ];
    let run = |b: &mut Battery, name: &str, corpus: &str, extra: &[&str], expect: Expect| {
        let o = out(b, &name.replace(|c: char| !c.is_ascii_alphanumeric(), "_"));
        let mut args = vec!["train", "--corpus", corpus, "--out", &o, "--quiet"];
        for (flag, value) in small {
            if !extra.iter().any(|e| e.split('=').next() == Some(flag)) {
                args.extend_from_slice(&[flag, value]);
            }
        }
        args.extend_from_slice(extra);
        b.add("train", name, &args, "", expect).timeout(SLOW);
    };
    let ok_corpus = input("corpus/ok.jsonl");
    run(b, "a small good run", &ok_corpus, &[], ok(&["\"steps\":1"]));
    run(
        b,
        "corpus missing",
        "/nonexistent/corpus.jsonl",
        &[],
        err(&["/nonexistent/corpus.jsonl"]),
    );
    run(
        b,
        "corpus is a directory",
        "/",
        &[],
        err(&["/", "directory"]),
    );
    run(
        b,
        "corpus never ends (/dev/zero)",
        "/dev/zero",
        &[],
        err(&["/dev/zero"]),
    );
    b.cases.last_mut().unwrap().max_rss(256);
    run(
        b,
        "corpus empty",
        &input("corpus/empty.jsonl"),
        &[],
        err(&["empty.jsonl", "no examples"]),
    );
    run(
        b,
        "corpus of blank lines",
        &input("corpus/blank_lines.jsonl"),
        &[],
        err(&["blank_lines.jsonl", "no examples"]),
    );
    run(
        b,
        "corpus with garbage on line 3",
        &input("corpus/garbage_line3.jsonl"),
        &[],
        err(&["garbage_line3.jsonl:3"]),
    );
    run(
        b,
        "corpus line without answer",
        &input("corpus/missing_answer.jsonl"),
        &[],
        err(&["missing_answer.jsonl:2", "answer"]),
    );
    run(
        b,
        "corpus line with an empty answer",
        &input("corpus/empty_answer.jsonl"),
        &[],
        err(&["empty_answer.jsonl:2", "answer"]),
    );
    run(
        b,
        "corpus answer is a number",
        &input("corpus/answer_number.jsonl"),
        &[],
        err(&["answer_number.jsonl:2", "answer"]),
    );
    run(
        b,
        "corpus line not an object",
        &input("corpus/not_object.jsonl"),
        &[],
        err(&["not_object.jsonl:1"]),
    );
    run(
        b,
        "corpus invalid UTF-8 on line 2",
        &input("corpus/invalid_utf8.jsonl"),
        &[],
        err(&["invalid_utf8.jsonl:2", "UTF-8"]),
    );
    run(
        b,
        "corpus NUL bytes on line 2",
        &input("corpus/nul_bytes.jsonl"),
        &[],
        err(&["nul_bytes.jsonl:2"]),
    );
    run(
        b,
        "corpus CRLF line endings",
        &input("corpus/crlf.jsonl"),
        &[],
        ok(&["\"steps\":1"]),
    );
    run(
        b,
        "every example longer than --max-len",
        &input("corpus/all_too_long.jsonl"),
        &["--max-len", "8"],
        err(&["smiles", "8 tokens"]),
    );
    let huge = format!(
        "{{\"task\": \"smiles\", \"prompt\": \"SMILES:\\n\", \"answer\": \"{}\"}}\n{{\"task\": \"smiles\", \"prompt\": \"SMILES:\\n\", \"answer\": \"CCO\"}}\n",
        "C".repeat(10 << 20)
    );
    let p = b.file("corpus_huge_line.jsonl", huge);
    run(
        b,
        "corpus with a 10 MB answer",
        &p,
        &[],
        ok_or_err(&["corpus_huge_line.jsonl"]),
    );
    run(
        b,
        "--steps 0",
        &ok_corpus,
        &["--steps", "0"],
        err(&["--steps"]),
    );
    run(b, "--lr NaN", &ok_corpus, &["--lr", "NaN"], err(&["--lr"]));
    run(b, "--lr=-1", &ok_corpus, &["--lr=-1"], err(&["--lr"]));
    run(
        b,
        "--lr 1e308",
        &ok_corpus,
        &["--lr", "1e308"],
        ok_or_err(&["--lr"]),
    );
    run(
        b,
        "--heads 0",
        &ok_corpus,
        &["--heads", "0"],
        err(&["--heads"]),
    );
    run(
        b,
        "--d-model 3",
        &ok_corpus,
        &["--d-model", "3"],
        err(&["--heads", "--d-model"]),
    );
    run(
        b,
        "--max-len 0",
        &ok_corpus,
        &["--max-len", "0"],
        err(&["--max-len"]),
    );
    run(
        b,
        "--vocab-size 0",
        &ok_corpus,
        &["--vocab-size", "0"],
        err(&["vocabulary size 0"]),
    );
    run(
        b,
        "--vocab-size 1",
        &ok_corpus,
        &["--vocab-size", "1"],
        err(&["vocabulary size 1"]),
    );
    run(
        b,
        "--vocab-size 18446744073709551615",
        &ok_corpus,
        &["--vocab-size", "18446744073709551615"],
        ok_or_err(&["--vocab-size"]),
    );
    run(
        b,
        "--d-model 100000000 (400 GB of weights)",
        &ok_corpus,
        &["--d-model", "100000000"],
        err(&["--d-model"]),
    );
    run(
        b,
        "--layers 100000000",
        &ok_corpus,
        &["--layers", "100000000"],
        err(&["--layers"]),
    );
    run(
        b,
        "--mlp-hidden 18446744073709551615",
        &ok_corpus,
        &["--mlp-hidden", "18446744073709551615"],
        err(&["--mlp-hidden"]),
    );
    run(
        b,
        "--batch-tokens 18446744073709551615",
        &ok_corpus,
        &["--batch-tokens", "18446744073709551615"],
        err(&["--batch-tokens"]),
    );
    run(
        b,
        "--max-len 18446744073709551615",
        &ok_corpus,
        &["--max-len", "18446744073709551615"],
        ok_or_err(&["--max-len"]),
    );
    run(
        b,
        "--minutes=-1",
        &ok_corpus,
        &["--minutes=-1"],
        err(&["--minutes"]),
    );
    run(
        b,
        "--minutes NaN",
        &ok_corpus,
        &["--minutes", "NaN"],
        err(&["--minutes"]),
    );
    run(
        b,
        "--minutes 1e300",
        &ok_corpus,
        &["--minutes", "1e300"],
        ok_or_err(&["--minutes"]),
    );
    run(
        b,
        "--checkpoint-every 0",
        &ok_corpus,
        &["--checkpoint-every", "0"],
        err(&["--checkpoint-every"]),
    );
    let f = b.file("train/out_is_a_file", "x");
    let args = [
        "train", "--corpus", &ok_corpus, "--out", &f, "--steps", "1", "--quiet",
    ];
    b.add(
        "train",
        "--out is a file",
        &args,
        "",
        err(&["out_is_a_file"]),
    )
    .timeout(SLOW);
    let o = out(b, "garbage_state");
    std::fs::create_dir_all(&o).unwrap();
    std::fs::write(Path::new(&o).join("train_state.json"), "{\"step\": ").unwrap();
    let args = [
        "train", "--corpus", &ok_corpus, "--out", &o, "--steps", "1", "--quiet",
    ];
    b.add(
        "train",
        "resume from a garbage train_state.json",
        &args,
        "",
        err(&["train_state.json"]),
    )
    .timeout(SLOW);
    let o = out(b, "state_without_weights");
    std::fs::create_dir_all(&o).unwrap();
    std::fs::write(
        Path::new(&o).join("train_state.json"),
        "{\"step\": 1, \"seconds\": 0, \"losses\": [], \"options\": 5}",
    )
    .unwrap();
    let args = [
        "train", "--corpus", &ok_corpus, "--out", &o, "--steps", "2", "--quiet",
    ];
    b.add(
        "train",
        "resume from a state with bad options",
        &args,
        "",
        err(&["train_state.json", "options"]),
    )
    .timeout(SLOW);
}

fn battery(scratch: &Path) -> Vec<Case> {
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
    b.cases
}

// ---------------------------------------------------------------------------------------------
// Running and judging

struct Run {
    code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    secs: f64,
    peak_kib: u64,
    stdout: Vec<u8>,
    stdout_lines: usize,
    stderr: Vec<u8>,
}

/// Reads a stream to its end, keeping its first [`KEEP_BYTES`] and counting its lines.
fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<(Vec<u8>, usize)> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut lines = 0;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    lines += buf[..n].iter().filter(|&&c| c == b'\n').count();
                    let room = KEEP_BYTES.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
        (kept, lines)
    })
}

/// Peak resident set of a live process, KiB.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn run_case(case: &Case, cwd: &Path, scale: f64) -> Run {
    use std::os::unix::process::ExitStatusExt;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {MEM_KIB}; exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(&case.args)
        .current_dir(cwd)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    let t0 = Instant::now();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let input = case.stdin.clone();
    // A child that stops reading early closes its end: that write error is expected.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = drain(child.stdout.take().unwrap());
    let errs = drain(child.stderr.take().unwrap());
    let deadline = Duration::from_secs_f64(case.timeout * scale);
    let mut peak = 0;
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Some(kib) = peak_kib(pid) {
            peak = peak.max(kib);
        }
        if t0.elapsed() > deadline {
            timed_out = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(if t0.elapsed().as_millis() < 200 {
            2
        } else {
            20
        }));
    };
    let secs = t0.elapsed().as_secs_f64();
    let _ = writer.join();
    let (stdout, stdout_lines) = out.join().unwrap();
    let (stderr, _) = errs.join().unwrap();
    Run {
        code: status.code(),
        signal: status.signal(),
        timed_out,
        secs,
        peak_kib: peak,
        stdout,
        stdout_lines,
        stderr,
    }
}

/// How a case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Ok,
    CleanError,
    Panic,
    StackOverflow,
    Oom,
    Signal,
    Hang,
    Memory,
    WrongAnswer,
    UnclearError,
    StopsLines,
}

impl Class {
    fn bad(self) -> bool {
        !matches!(self, Class::Ok | Class::CleanError)
    }

    fn label(self) -> &'static str {
        match self {
            Class::Ok => "ok",
            Class::CleanError => "clean error",
            Class::Panic => "BAD: panic",
            Class::StackOverflow => "BAD: stack overflow",
            Class::Oom => "BAD: out of memory",
            Class::Signal => "BAD: killed by a signal",
            Class::Hang => "BAD: hang (timeout)",
            Class::Memory => "BAD: memory over bound",
            Class::WrongAnswer => "BAD: wrong answer",
            Class::UnclearError => "BAD: unclear error",
            Class::StopsLines => "BAD: stops after a bad line",
        }
    }
}

fn missing<'a>(text: &str, needles: &'a [String]) -> Vec<&'a str> {
    needles
        .iter()
        .filter(|n| !text.contains(n.as_str()))
        .map(String::as_str)
        .collect()
}

/// The first line of a text, cut short.
fn gist(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut s: String = line.chars().take(220).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    s
}

/// The longest error message that still reads as one (an error that echoes a megabyte of
/// input does not).
const MAX_MESSAGE: usize = 16 << 10;

fn judge(case: &Case, run: &Run) -> (Class, String) {
    let (class, detail) = judge_run(case, run);
    if class == Class::CleanError {
        let stderr = String::from_utf8_lossy(&run.stderr);
        let stdout = String::from_utf8_lossy(&run.stdout);
        let longest = stderr
            .lines()
            .chain(stdout.lines().filter(|l| l.contains("\"error\"")))
            .map(str::len)
            .max()
            .unwrap_or(0);
        if longest > MAX_MESSAGE {
            return (
                Class::UnclearError,
                format!("an error message of {longest} bytes: {detail}"),
            );
        }
    }
    (class, detail)
}

fn judge_run(case: &Case, run: &Run) -> (Class, String) {
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    if run.timed_out {
        if matches!(case.expect, Expect::Streams) && run.stdout_lines > 0 {
            if let Some(limit) = case.max_rss_mib {
                if run.peak_kib > limit * 1024 {
                    return (
                        Class::Memory,
                        format!("peak {} MiB > {limit} MiB", run.peak_kib / 1024),
                    );
                }
            }
            return (
                Class::Ok,
                format!("{} outputs before the deadline", run.stdout_lines),
            );
        }
        return (
            Class::Hang,
            format!(
                "killed after {:.0} s; {} output lines; stderr: {}",
                run.secs,
                run.stdout_lines,
                gist(&stderr)
            ),
        );
    }
    if stderr.contains("has overflowed its stack") {
        return (Class::StackOverflow, gist(&stderr));
    }
    if stderr.contains("memory allocation of") || run.signal == Some(9) {
        return (
            Class::Oom,
            format!("{} (signal {:?})", gist(&stderr), run.signal),
        );
    }
    if stderr.contains("panicked at") || run.code == Some(101) {
        let msg: Vec<&str> = stderr
            .lines()
            .filter(|l| !l.contains("RUST_BACKTRACE"))
            .take(2)
            .collect();
        return (Class::Panic, msg.join(" / "));
    }
    if let Some(sig) = run.signal {
        return (Class::Signal, format!("signal {sig}: {}", gist(&stderr)));
    }
    if let Some(limit) = case.max_rss_mib {
        if run.peak_kib > limit * 1024 {
            return (
                Class::Memory,
                format!("peak {} MiB > {limit} MiB", run.peak_kib / 1024),
            );
        }
    }
    let code = run.code.unwrap_or(-1);
    let error_text = format!("{stderr}\n{stdout}");
    match &case.expect {
        Expect::Ok(needles) => {
            if code != 0 {
                return (
                    Class::WrongAnswer,
                    format!("exit {code}, expected success: {}", gist(&error_text)),
                );
            }
            let m = missing(&stdout, needles);
            if m.is_empty() {
                (Class::Ok, gist(&stdout))
            } else {
                (
                    Class::WrongAnswer,
                    format!("output lacks {m:?}: {}", gist(&stdout)),
                )
            }
        }
        Expect::Err(needles) | Expect::OkOrErr(needles) => {
            if code == 0 {
                if matches!(case.expect, Expect::OkOrErr(_)) {
                    return (Class::Ok, gist(&stdout));
                }
                return (
                    Class::WrongAnswer,
                    format!("accepted (exit 0): {}", gist(&stdout)),
                );
            }
            if code != 1 {
                return (
                    Class::WrongAnswer,
                    format!("exit {code}: {}", gist(&error_text)),
                );
            }
            let m = missing(&stderr, needles);
            if m.is_empty() {
                (Class::CleanError, gist(&stderr))
            } else {
                (
                    Class::UnclearError,
                    format!("message lacks {m:?}: {}", gist(&error_text)),
                )
            }
        }
        Expect::Usage(needles) => {
            if code != 2 {
                return (
                    Class::WrongAnswer,
                    format!("exit {code}, expected a usage error: {}", gist(&error_text)),
                );
            }
            let m = missing(&stderr, needles);
            if m.is_empty() {
                (Class::CleanError, gist(&stderr))
            } else {
                (
                    Class::UnclearError,
                    format!("message lacks {m:?}: {}", gist(&stderr)),
                )
            }
        }
        Expect::EitherLine(needles) => {
            let line = stdout.lines().next().unwrap_or("");
            if run.stdout_lines != 1 {
                return (
                    Class::WrongAnswer,
                    format!(
                        "{} output lines for 1: {}",
                        run.stdout_lines,
                        gist(&error_text)
                    ),
                );
            }
            if line.contains("\"verdict\"") && code == 0 {
                return (Class::Ok, gist(line));
            }
            if !line.contains("\"error\"") || code != 1 {
                return (Class::WrongAnswer, format!("exit {code}: {}", gist(line)));
            }
            let m = missing(line, needles);
            if m.is_empty() {
                (Class::CleanError, gist(line))
            } else {
                (
                    Class::UnclearError,
                    format!("output line 1 lacks {m:?}: {}", gist(line)),
                )
            }
        }
        Expect::Streams => {
            if code == 0 && run.stdout_lines > 0 {
                (Class::Ok, gist(&stdout))
            } else {
                (
                    Class::WrongAnswer,
                    format!("exit {code}: {}", gist(&error_text)),
                )
            }
        }
        Expect::Lines { code: want, lines } => {
            if run.stdout_lines < lines.len() {
                return (
                    Class::StopsLines,
                    format!(
                        "{} of {} lines answered (exit {code}): {}",
                        run.stdout_lines,
                        lines.len(),
                        gist(&error_text)
                    ),
                );
            }
            if run.stdout_lines > lines.len() {
                return (
                    Class::WrongAnswer,
                    format!(
                        "{} lines for {} expected: {}",
                        run.stdout_lines,
                        lines.len(),
                        gist(&stdout)
                    ),
                );
            }
            for (i, (got, needles)) in stdout.lines().zip(lines).enumerate() {
                let m = missing(got, needles);
                if !m.is_empty() {
                    let class = if got.contains("\"error\"")
                        && needles
                            .iter()
                            .any(|n| !n.contains("verdict") && !n.contains("masks"))
                    {
                        if needles.iter().any(|n| {
                            n.contains("verdict") || n.contains("masks") || n.contains("count")
                        }) {
                            Class::WrongAnswer
                        } else {
                            Class::UnclearError
                        }
                    } else {
                        Class::WrongAnswer
                    };
                    let mut shown: String = got.chars().take(260).collect();
                    if shown.len() < got.len() {
                        shown.push('…');
                    }
                    return (class, format!("output line {} lacks {m:?}: {shown}", i + 1));
                }
            }
            if code != *want {
                return (
                    Class::WrongAnswer,
                    format!("exit {code}, expected {want}: {}", gist(&stderr)),
                );
            }
            let first = stdout.lines().next().unwrap_or("");
            let class = if *want == 0 {
                Class::Ok
            } else {
                Class::CleanError
            };
            (class, gist(first))
        }
    }
}

#[test]
fn hostile_battery() {
    let scratch = Path::new(TARGET_TMP).join("hostile");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let filter = std::env::var("LACUNA_HOSTILE_FILTER").unwrap_or_default();
    let jobs: usize = std::env::var("LACUNA_HOSTILE_JOBS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let scale: f64 = std::env::var("LACUNA_HOSTILE_TIMEOUT_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let all = battery(&scratch);
    assert!(all.len() > 100, "the battery has {} cases", all.len());
    let cases: Vec<&Case> = all
        .iter()
        .filter(|c| c.name.contains(&filter) || c.category.contains(&filter))
        .collect();
    // The slowest cases first, so that the workers finish together.
    let mut order: Vec<usize> = (0..cases.len()).collect();
    order.sort_by(|&a, &b| cases[b].timeout.total_cmp(&cases[a].timeout));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Class, String, f64, u64)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let Some(&i) = order.get(next.fetch_add(1, Ordering::SeqCst)) else {
                    break;
                };
                let case = cases[i];
                let run = run_case(case, &scratch, scale);
                let (class, detail) = judge(case, &run);
                eprintln!(
                    "{:<22} {:>6.2}s {:>6} MiB  [{}] {}: {}",
                    class.label(),
                    run.secs,
                    run.peak_kib / 1024,
                    case.category,
                    case.name,
                    detail
                );
                results
                    .lock()
                    .unwrap()
                    .push((i, class, detail, run.secs, run.peak_kib));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| r.0);
    let mut tsv = String::from("category\tcase\tclass\tseconds\tpeak_mib\tdetail\n");
    let mut counts: Vec<(Class, usize)> = Vec::new();
    let mut bad = Vec::new();
    for (i, class, detail, secs, kib) in &results {
        let case = cases[*i];
        writeln!(
            tsv,
            "{}\t{}\t{}\t{secs:.2}\t{}\t{}",
            case.category,
            case.name,
            class.label(),
            kib / 1024,
            detail.replace('\t', " ")
        )
        .unwrap();
        match counts.iter_mut().find(|(c, _)| c == class) {
            Some((_, n)) => *n += 1,
            None => counts.push((*class, 1)),
        }
        if class.bad() {
            bad.push(format!(
                "[{}] {}: {} ({secs:.1} s, {} MiB): {detail}",
                case.category,
                case.name,
                class.label(),
                kib / 1024
            ));
        }
    }
    counts.sort();
    let report = Path::new(TARGET_TMP).join("hostile-report.tsv");
    std::fs::write(&report, &tsv).unwrap();
    let summary: Vec<String> = counts
        .iter()
        .map(|(c, n)| format!("{}: {n}", c.label()))
        .collect();
    eprintln!(
        "\n{} cases; {}; report in {}",
        results.len(),
        summary.join(", "),
        report.display()
    );
    assert!(
        bad.is_empty(),
        "{} of {} hostile cases failed:\n{}",
        bad.len(),
        results.len(),
        bad.join("\n")
    );
}
