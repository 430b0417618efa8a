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

mod cases;
mod judge;
mod run;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use cases::battery;
use judge::{judge, Class};
use run::run_case;

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
    // Each case's index, class, detail, seconds and peak memory (KiB).
    type Outcome = (usize, Class, String, f64, u64);
    let results: Mutex<Vec<Outcome>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| {
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::SeqCst)) {
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
                }
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
