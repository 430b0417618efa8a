//! `lacuna check [--grammar SPEC] [--complete] [--stats] [--timeout-ms MS]
//! [--tokenizer FILE [--eos NAME]..] [FILE|-]`: canvas JSON lines in, verdict JSON lines out
//! (formats in DESIGN.md).
//!
//! With `--tokenizer`, lines are token canvases (`"tokens": [id or null, ..]`) checked under
//! token-exact semantics ([`Checker::check_tokens`]): a masked position holds exactly one token.
//!
//! A bad line (malformed JSON, unknown grammar, bad cell) gets an error object of its own and
//! the run goes on; the exit status is 1 if any line had an error.

use std::sync::Arc;

use clap::Args;
use serde::Serialize;
use serde_json::Value;

use super::checkers::{
    answer_lines, id_of, load_vocabulary, open_input, spec_of, utf8, Checkers, LineAnswer,
    DEFAULT_MAX_POSITIONS,
};
use crate::canvas::token_lines::{parse_token_canvas_line_limited, TokenLineErrorKind};
use crate::canvas::{parse_canvas_line, CanvasLineError};
use crate::checker::{Check, CheckVerdict};
use crate::vocab::Vocabulary;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Grammar for lines that name none (json, smiles, cpp, FILE.lark, schema:PATH; +fence).
    #[arg(long, short)]
    grammar: Option<String>,
    /// Add a full completion to every completable verdict (text canvases only).
    #[arg(long)]
    complete: bool,
    /// Print a summary (median / p90 / max microseconds, DFA states) on stderr.
    #[arg(long)]
    stats: bool,
    /// Compile JSON Schemas leniently: keywords that cannot be enforced are ignored with a
    /// warning on stderr instead of failing the line.
    #[arg(long)]
    lenient: bool,
    /// Read token-canvas lines (`"tokens": [id or null, ..]`) over this tokenizer.json's
    /// vocabulary and check them token-exactly.
    #[arg(long, value_name = "FILE", conflicts_with = "complete")]
    tokenizer: Option<String>,
    /// An end-of-output token of the tokenizer (repeat for several); default: the usual names
    /// (<|endoftext|>, </s>, <|im_end|>, ...).
    #[arg(long = "eos", value_name = "NAME", requires = "tokenizer")]
    eos: Vec<String>,
    /// With --tokenizer: the longest token canvas read (positions); longer lines get an error.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_POSITIONS)]
    max_positions: usize,
    /// Give up on a line's work after this many milliseconds (from when its grammar is
    /// loaded): its answers are `unknown`. Without it, only the work budgets bound a line.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: Option<u64>,
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

/// Per-run figures for `--stats`.
#[derive(Default)]
struct Summary {
    micros: Vec<u64>,
    dfa_states: Vec<usize>,
    by_verdict: [usize; 3],
    errors: usize,
}

pub fn run(args: CheckArgs) -> Result<bool, String> {
    let input = open_input(args.file.as_deref())?;
    let vocab = match args.tokenizer.as_deref() {
        Some(path) => Some(load_vocabulary(path, &args.eos)?),
        None => None,
    };
    let mut checkers = Checkers::new(args.lenient, vocab.clone())
        .with_line_timeout(args.timeout_ms.map(std::time::Duration::from_millis));
    let mut summary = Summary::default();
    summary.errors = answer_lines(input, |line| match &vocab {
        Some(vocab) => check_token_line(&args, &mut checkers, vocab, line, &mut summary),
        None => check_line(&args, &mut checkers, line, &mut summary),
    })?;
    if args.stats {
        print_summary(&summary);
    }
    Ok(summary.errors == 0)
}

/// Checks one line; on failure returns the line's id (if it could be read) and the message.
fn check_line(
    args: &CheckArgs,
    checkers: &mut Checkers,
    line: &[u8],
    summary: &mut Summary,
) -> LineAnswer {
    let text = utf8(line)?;
    let parsed = parse_canvas_line(text).map_err(|e| {
        let hint = match e {
            CanvasLineError::MissingCanvas if text.contains("\"tokens\"") => {
                " (a token canvas: give --tokenizer)"
            }
            _ => "",
        };
        (id_of(text), format!("{e}{hint}"))
    })?;
    let fail = |e: String| (parsed.id.clone(), e);
    let spec = spec_of(parsed.grammar.as_deref(), args.grammar.as_deref()).map_err(fail)?;
    let checker = checkers.get(spec).map_err(fail)?;
    let check = checker.check(&parsed.canvas);
    summary.add(&check);
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

/// [`check_line`] for a token-canvas line (`--tokenizer`).
fn check_token_line(
    args: &CheckArgs,
    checkers: &mut Checkers,
    vocab: &Arc<Vocabulary>,
    line: &[u8],
    summary: &mut Summary,
) -> LineAnswer {
    let text = utf8(line)?;
    let parsed = parse_token_canvas_line_limited(text, args.max_positions).map_err(|e| {
        let hint = match e.kind {
            TokenLineErrorKind::MissingTokens if text.contains("\"canvas\"") => {
                " (a text canvas: leave out --tokenizer)"
            }
            _ => "",
        };
        (e.id.clone(), format!("{e}{hint}"))
    })?;
    let fail = |e: String| (parsed.id.clone(), e);
    parsed.check_ids(vocab).map_err(|e| fail(e.to_string()))?;
    let spec = spec_of(parsed.grammar.as_deref(), args.grammar.as_deref()).map_err(fail)?;
    let checker = checkers.get(spec).map_err(fail)?;
    let check = checker
        .check_tokens(&parsed.canvas)
        .map_err(|e| fail(e.to_string()))?;
    summary.add(&check);
    Ok(serde_json::to_string(&VerdictLine {
        id: &parsed.id,
        verdict: check.verdict,
        micros: check.micros,
        dfa_states: check.dfa_states,
        completion: None,
        completion_error: None,
    }))
}

/// The `id` of a line that could not be read as a canvas, if it is a JSON object.
impl Summary {
    fn add(&mut self, check: &Check) {
        self.micros.push(check.micros);
        self.dfa_states.push(check.dfa_states);
        self.by_verdict[check.verdict as usize] += 1;
    }
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
