//! `lacuna check [--grammar SPEC] [--complete] [--stats] [FILE|-]`: canvas JSON lines in,
//! verdict JSON lines out (formats in DESIGN.md).
//!
//! A bad line (malformed JSON, unknown grammar, bad cell) gets an error object of its own and
//! the run goes on; the exit status is 1 if any line had an error.

use std::io::{BufRead, BufReader, Read, Write};

use clap::Args;
use hashbrown::HashMap;
use serde::Serialize;
use serde_json::Value;

use crate::canvas::parse_canvas_line;
use crate::checker::{CheckVerdict, Checker};
use crate::grammar::schema::SchemaOptions;
use crate::grammar::spec;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Grammar for lines that name none (json, smiles, cpp, FILE.lark, schema:PATH; +fence).
    #[arg(long, short)]
    grammar: Option<String>,
    /// Add a full completion to every completable verdict.
    #[arg(long)]
    complete: bool,
    /// Print a summary (median / p90 / max microseconds, DFA states) on stderr.
    #[arg(long)]
    stats: bool,
    /// Compile JSON Schemas leniently: keywords that cannot be enforced are ignored with a
    /// warning on stderr instead of failing the line.
    #[arg(long)]
    lenient: bool,
    /// Canvas JSON lines; `-` or nothing reads standard input.
    file: Option<String>,
}

#[derive(Serialize)]
struct VerdictLine<'a> {
    id: &'a Value,
    verdict: CheckVerdict,
    micros: u64,
    dfa_states: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    completion: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    completion_error: Option<String>,
}

#[derive(Serialize)]
struct ErrorLine<'a> {
    id: &'a Value,
    line: usize,
    error: String,
}

/// Per-run figures for `--stats`.
#[derive(Default)]
struct Summary {
    micros: Vec<u64>,
    dfa_states: Vec<usize>,
    by_verdict: [usize; 3],
    errors: usize,
}

pub fn run(args: CheckArgs) -> Result<bool, String> {
    let input: Box<dyn Read> = match args.file.as_deref() {
        None | Some("-") => Box::new(std::io::stdin()),
        Some(path) => {
            Box::new(std::fs::File::open(path).map_err(|e| format!("cannot open {path}: {e}"))?)
        }
    };
    let mut checkers: HashMap<String, Checker> = HashMap::new();
    let mut summary = Summary::default();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (n, line) in BufReader::new(input).split(b'\n').enumerate() {
        let line = line.map_err(|e| format!("cannot read input: {e}"))?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let json = match check_line(&args, &mut checkers, &line, &mut summary) {
            Ok(v) => v,
            Err((id, error)) => {
                summary.errors += 1;
                serde_json::to_string(&ErrorLine {
                    id: &id,
                    line: n + 1,
                    error,
                })
            }
        }
        .expect("verdicts serialize");
        writeln!(out, "{json}").map_err(|e| format!("cannot write output: {e}"))?;
    }
    if args.stats {
        print_summary(&summary);
    }
    Ok(summary.errors == 0)
}

/// Checks one line; on failure returns the line's id (if it could be read) and the message.
fn check_line(
    args: &CheckArgs,
    checkers: &mut HashMap<String, Checker>,
    line: &[u8],
    summary: &mut Summary,
) -> Result<serde_json::Result<String>, (Value, String)> {
    let text =
        std::str::from_utf8(line).map_err(|e| (Value::Null, format!("invalid UTF-8: {e}")))?;
    let parsed = parse_canvas_line(text).map_err(|e| (Value::Null, e.to_string()))?;
    let spec = parsed
        .grammar
        .as_deref()
        .or(args.grammar.as_deref())
        .ok_or_else(|| {
            (
                parsed.id.clone(),
                "no grammar: give --grammar or a \"grammar\" field".to_string(),
            )
        })?;
    if !checkers.contains_key(spec) {
        let options = SchemaOptions::lenient(args.lenient);
        let (grammar, warnings) =
            spec::load_with(spec, &options).map_err(|e| (parsed.id.clone(), e.to_string()))?;
        for w in warnings {
            eprintln!("lacuna: warning: {spec}: {w}");
        }
        let checker = Checker::new(grammar).map_err(|e| (parsed.id.clone(), e.to_string()))?;
        checkers.insert(spec.to_string(), checker);
    }
    let checker = checkers.get_mut(spec).expect("inserted above");
    let check = checker.check(&parsed.canvas);
    summary.micros.push(check.micros);
    summary.dfa_states.push(check.dfa_states);
    summary.by_verdict[check.verdict as usize] += 1;
    let (mut completion, mut completion_error) = (None, None);
    if args.complete && check.verdict == CheckVerdict::Completable {
        match checker.complete(&parsed.canvas) {
            Ok(Some(bytes)) => completion = Some(String::from_utf8_lossy(&bytes).into_owned()),
            Ok(None) => completion_error = Some("not completable".to_string()),
            Err(e) => completion_error = Some(e.to_string()),
        }
    }
    Ok(serde_json::to_string(&VerdictLine {
        id: &parsed.id,
        verdict: check.verdict,
        micros: check.micros,
        dfa_states: check.dfa_states,
        completion,
        completion_error,
    }))
}

fn print_summary(s: &Summary) {
    let mut micros = s.micros.clone();
    micros.sort_unstable();
    let pct = |p: f64| -> u64 {
        if micros.is_empty() {
            0
        } else {
            micros[((micros.len() - 1) as f64 * p).round() as usize]
        }
    };
    let mean_states = if s.dfa_states.is_empty() {
        0.0
    } else {
        s.dfa_states.iter().sum::<usize>() as f64 / s.dfa_states.len() as f64
    };
    eprintln!(
        "checks {}  completable {}  not_completable {}  unknown {}  errors {}",
        micros.len(),
        s.by_verdict[0],
        s.by_verdict[1],
        s.by_verdict[2],
        s.errors
    );
    eprintln!(
        "micros: median {}  p90 {}  p99 {}  max {}   dfa states: mean {:.1}  max {}",
        pct(0.5),
        pct(0.9),
        pct(0.99),
        micros.last().copied().unwrap_or(0),
        mean_states,
        s.dfa_states.iter().max().copied().unwrap_or(0)
    );
}
