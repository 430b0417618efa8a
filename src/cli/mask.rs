//! `lacuna mask --grammar SPEC --tokenizer FILE [--positions masked|P,Q,..] [--count-only]
//! [--timeout-ms MS] [FILE|-]`: token-canvas JSON lines in, one mask line per canvas out (formats in DESIGN.md).
//!
//! A position's mask is the set of ids that keep the canvas completable when placed there
//! ([`Checker::allowed`](crate::checker::Checker::allowed)), exactly as `check --tokenizer`
//! would answer for each. A bad line gets an error object of its own and the run goes on; the
//! exit status is 1 if any line had an error.

use std::sync::Arc;

use clap::Args;
use serde::Serialize;
use serde_json::Value;

use super::checkers::{
    answer_lines, load_vocabulary, open_input, spec_of, utf8, Checkers, LineAnswer,
    DEFAULT_MAX_POSITIONS,
};
use crate::canvas::token_lines::{parse_token_canvas_line_limited, ParsedTokenLine};
use crate::canvas::tokens::TokenCanvasError;
use crate::vocab::{TokenId, Vocabulary};

#[derive(Args, Debug)]
pub struct MaskArgs {
    /// Grammar for lines that name none (json, smiles, cpp, FILE.lark, schema:PATH; +fence).
    #[arg(long, short)]
    grammar: Option<String>,
    /// The model's tokenizer.json: its vocabulary gives every id's bytes.
    #[arg(long, value_name = "FILE")]
    tokenizer: String,
    /// An end-of-output token of the tokenizer (repeat for several); default: the usual names
    /// (<|endoftext|>, </s>, <|im_end|>, ...).
    #[arg(long = "eos", value_name = "NAME")]
    eos: Vec<String>,
    /// The positions to mask: `masked` (every masked position) or a list `P,Q,..` (each must
    /// be masked).
    #[arg(long, value_name = "masked|P,Q,..", default_value = "masked", value_parser = parse_positions)]
    positions: Positions,
    /// Give each position's count only, not its list of allowed ids.
    #[arg(long)]
    count_only: bool,
    /// The longest token canvas read (positions); longer lines get an error.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_POSITIONS)]
    max_positions: usize,
    /// Compile JSON Schemas leniently: keywords that cannot be enforced are ignored with a
    /// warning on stderr instead of failing the line.
    #[arg(long)]
    lenient: bool,
    /// Give up on a line's work after this many milliseconds (from when its grammar is
    /// loaded): its answers are `unknown`. Without it, only the work budgets bound a line.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: Option<u64>,
    /// Token-canvas JSON lines; `-` or nothing reads standard input.
    file: Option<String>,
}

/// Which positions of each canvas get a mask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Positions {
    /// Every masked position.
    Masked,
    /// These positions, in this order.
    List(Vec<usize>),
}

fn parse_positions(text: &str) -> Result<Positions, String> {
    if text == "masked" {
        return Ok(Positions::Masked);
    }
    text.split(',')
        .map(|p| {
            p.trim()
                .parse::<usize>()
                .map_err(|_| format!("`{p}` is not a position: give `masked` or P,Q,.."))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Positions::List)
}

#[derive(Serialize)]
struct MaskLine<'a> {
    id: &'a Value,
    masks: Vec<PositionMask>,
    micros: u64,
}

#[derive(Serialize)]
struct PositionMask {
    position: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    allowed: Option<Vec<TokenId>>,
    count: usize,
    /// Ids whose check ran out of budget: in neither `allowed` nor its complement.
    unknown: usize,
}

pub fn run(args: MaskArgs) -> Result<bool, String> {
    let input = open_input(args.file.as_deref())?;
    let vocab = load_vocabulary(&args.tokenizer, &args.eos)?;
    let mut checkers = Checkers::new(args.lenient, Some(vocab.clone()))
        .with_line_timeout(args.timeout_ms.map(std::time::Duration::from_millis));
    let errors = answer_lines(input, |line| mask_line(&args, &mut checkers, &vocab, line))?;
    Ok(errors == 0)
}

/// Masks one line; on failure returns the line's id (if it could be read) and the message.
fn mask_line(
    args: &MaskArgs,
    checkers: &mut Checkers,
    vocab: &Arc<Vocabulary>,
    line: &[u8],
) -> LineAnswer {
    let t0 = std::time::Instant::now();
    let text = utf8(line)?;
    let parsed = parse_token_canvas_line_limited(text, args.max_positions)
        .map_err(|e| (e.id.clone(), e.to_string()))?;
    let fail = |e: String| (parsed.id.clone(), e);
    parsed.check_ids(vocab).map_err(|e| fail(e.to_string()))?;
    let positions = positions_of(&parsed, &args.positions).map_err(|e| fail(e.to_string()))?;
    let spec = spec_of(parsed.grammar.as_deref(), args.grammar.as_deref()).map_err(fail)?;
    let checker = checkers.get(spec).map_err(fail)?;
    let mut masks = Vec::with_capacity(positions.len());
    for position in positions {
        let allowed = checker
            .allowed(&parsed.canvas, position)
            .map_err(|e| fail(e.to_string()))?;
        masks.push(PositionMask {
            position,
            allowed: (!args.count_only).then(|| allowed.mask.ids().collect()),
            count: allowed.mask.count(),
            unknown: allowed.unknown,
        });
    }
    Ok(serde_json::to_string(&MaskLine {
        id: &parsed.id,
        masks,
        micros: t0.elapsed().as_micros() as u64,
    }))
}

/// The positions to mask on this line, each checked to be a masked position of its canvas.
fn positions_of(
    parsed: &ParsedTokenLine,
    which: &Positions,
) -> Result<Vec<usize>, TokenCanvasError> {
    let cells = &parsed.canvas.cells;
    match which {
        Positions::Masked => Ok(parsed.canvas.masked_positions()),
        Positions::List(list) => {
            for &position in list {
                match cells.get(position) {
                    None => {
                        return Err(TokenCanvasError::PositionOutOfRange {
                            position,
                            len: cells.len(),
                        })
                    }
                    Some(&Some(id)) => return Err(TokenCanvasError::NotMasked { position, id }),
                    Some(None) => {}
                }
            }
            Ok(list.clone())
        }
    }
}
