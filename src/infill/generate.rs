//! The constrained infilling loop of a causal FIM model: one middle at a time, each token drawn
//! from the model's distribution masked to the exact frontier mask, the middle ended by the
//! family's end token only where the text so far and the suffix can be a word of the grammar.
//!
//! Holes are filled one after another, as the paper's autoregressive baseline does: earlier
//! holes' middles become part of the prefix, later holes are shown to the model as their marker
//! text and to the checker as holes of any text. A middle may be empty (the model ends it at
//! once) where the grammar allows that.

use candle_core::Tensor;
use thiserror::Error;

use super::frontier::{frontier_mask, may_end, may_follow, Piece};
use super::model::{CausalLm, KvCache};
use super::FimFormat;
use crate::canvas::tokens::TokenCanvasError;
use crate::checker::{CheckVerdict, Checker};
use crate::diffusion::{DiffusionError, Rng, LAZY_CHECKS};
use crate::vocab::{TokenId, TokenKind};

/// Why a middle could not be written.
#[derive(Debug, Error)]
pub enum InfillError {
    /// The model or its tensors failed.
    #[error(transparent)]
    Model(#[from] DiffusionError),
    /// A canvas the checker could not read (an id outside the vocabulary).
    #[error(transparent)]
    Canvas(#[from] TokenCanvasError),
    /// No text in this hole can make the file a word of the grammar: the text around it
    /// cannot be completed.
    #[error("hole {hole}: no middle can complete the text around it (the grammar rejects every filling)")]
    NoMiddle {
        /// The hole's index, from 0.
        hole: usize,
    },
    /// The model would have to read more positions than its context holds.
    #[error("{what} take {positions} positions, more than the model's context of {room}")]
    Context {
        /// What takes the positions.
        what: &'static str,
        /// Positions needed.
        positions: usize,
        /// The model's context, in positions.
        room: usize,
    },
    /// A file without the hole marker (or an empty marker).
    #[error("no hole marker {marker:?} in the file (--marker sets another)")]
    NoMarker {
        /// The marker looked for.
        marker: String,
    },
    /// No filling of the holes makes the file a word of the grammar.
    #[error("no filling of the holes makes the file a word of the grammar: {}", if *.at_end { "the file cannot end where it does".to_string() } else { format!("the text at line {line}, column {column} cannot follow what comes before it, whatever fills the holes") })]
    Unfillable {
        /// The first piece of fixed text that cannot follow what precedes it.
        piece: usize,
        /// Its line, from 1.
        line: usize,
        /// Its column in characters, from 1.
        column: usize,
        /// Whether every piece can follow, and only the end of the file is wrong.
        at_end: bool,
    },
    /// Native infilling with a causal model (it writes left to right only).
    #[error("native infilling needs a diffusion model (the embedded model, LLaDA or Dream); a causal FIM model fills one hole after another")]
    NotDiffusion,
    /// Native infilling: a hole of no positions.
    #[error("--span 0: a hole's span must be at least one position")]
    EmptySpan,
    /// Native infilling: two holes with no text between them (one run of masks on the
    /// canvas, so one hole).
    #[error("holes {first} and {} touch at line {line}, column {column}: with nothing between them they are one hole", first + 1)]
    Touching {
        /// The first of the two holes, from 0.
        first: usize,
        /// The second marker's line, from 1.
        line: usize,
        /// Its column in characters, from 1.
        column: usize,
    },
    /// The model left positions it could not fill, and the grammar's completion found no
    /// filling of them within its budget.
    #[error("the model left holes unfilled and the grammar's completion found no filling within its budget")]
    Completion,
    /// The middle so far can no longer be continued nor ended (a budget left the frontier
    /// undecided).
    #[error("hole {hole}: after {tokens} tokens no token is known to continue the middle ({unknown} ids undecided within the checker's budgets)")]
    Stuck {
        /// The hole's index, from 0.
        hole: usize,
        /// Tokens written so far.
        tokens: usize,
        /// Ids the budgets left undecided.
        unknown: usize,
    },
}

impl From<candle_core::Error> for InfillError {
    fn from(e: candle_core::Error) -> InfillError {
        InfillError::Model(DiffusionError::Candle(e))
    }
}

/// How a middle is drawn.
#[derive(Clone, Debug)]
pub struct InfillOptions {
    /// At most this many tokens per middle; a middle that has not ended by then stops there.
    pub max_tokens: usize,
    /// Softmax temperature; 0 takes the most likely allowed token.
    pub temperature: f64,
    /// Whether tokens are drawn under the frontier masks (false: the model alone, for
    /// comparison).
    pub constrained: bool,
    /// Draw from the model first and check that one token (one check); when it is refused,
    /// draw again without the refused tokens, checked in turn, up to [`LAZY_CHECKS`] times;
    /// only then compute the whole mask and draw within it. The result is distributed
    /// exactly as a draw within the mask: each draw is from `p` restricted to the tokens not
    /// yet refused, a superset of the allowed set `A`, so the token kept is `t` with
    /// probability `p(t)/p(A)`. False: the whole mask before every token.
    pub lazy: bool,
}

impl Default for InfillOptions {
    fn default() -> Self {
        InfillOptions {
            max_tokens: 64,
            temperature: 0.0,
            constrained: true,
            lazy: true,
        }
    }
}

/// One written middle and what it cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Middle {
    /// The middle's token ids (without the end token).
    pub ids: Vec<TokenId>,
    /// Whether it ended on an end token (false: `max_tokens` ran out first).
    pub ended: bool,
    /// Frontier masks computed.
    pub masks: usize,
    /// Proposals checked one by one (lazy masks), and how many were refused.
    pub checks: usize,
    /// Proposals refused (after [`LAZY_CHECKS`] of them in a row, or one whose check ran out
    /// of budget, the whole mask).
    pub refused: usize,
    /// Their total time, in microseconds.
    pub mask_micros: u64,
    /// At most this many ids were left undecided, over all masks.
    pub unknown: usize,
}

/// The pieces a middle is written between, as the checker reads them: fixed text and other
/// holes.
pub struct Surroundings<'a> {
    /// The hole's index, for messages.
    pub hole: usize,
    /// Everything before the middle.
    pub before: &'a [Piece],
    /// Everything after it.
    pub after: &'a [Piece],
}

/// What proposes a middle's tokens: a model, seeing the hole its own way (a causal model in
/// its FIM prompt; a diffusion model with the rest of the hole masked).
pub trait MiddleWriter {
    /// Logits (one per id) of the token after `written`, the middle so far.
    fn next_logits(&mut self, written: &[TokenId]) -> Result<Vec<f32>, InfillError>;
    /// The ids that end the middle.
    fn ends(&self) -> &[TokenId];
    /// The text after the middle, if a token that starts it ends the middle where it may
    /// end (for writers without an end-of-middle token).
    fn suffix(&self) -> Option<&[u8]> {
        None
    }
}

/// A causal FIM model in its family's prompt, with a key/value cache: each token costs one
/// position of forward pass.
pub struct CausalWriter<'a> {
    model: &'a CausalLm,
    format: &'a FimFormat,
    prompt: Vec<TokenId>,
    cache: KvCache,
    fed: usize,
    last: Vec<f32>,
}

impl<'a> CausalWriter<'a> {
    /// The writer of the middle between `prefix` and `suffix` (token ids; later holes in the
    /// suffix as the marker's text).
    pub fn new(
        model: &'a CausalLm,
        format: &'a FimFormat,
        prefix: &[TokenId],
        suffix: &[TokenId],
    ) -> CausalWriter<'a> {
        CausalWriter {
            model,
            format,
            prompt: format.prompt(prefix, suffix),
            cache: KvCache::new(),
            fed: 0,
            last: Vec::new(),
        }
    }
}

impl MiddleWriter for CausalWriter<'_> {
    fn next_logits(&mut self, written: &[TokenId]) -> Result<Vec<f32>, InfillError> {
        let room = self.model.config().max_positions;
        if self.prompt.len() + written.len() > room {
            return Err(InfillError::Context {
                what: "the FIM prompt and the middle",
                positions: self.prompt.len() + written.len(),
                room,
            });
        }
        let device = self.model.device().clone();
        let mut feed = Vec::new();
        if self.cache.is_empty() {
            feed.extend_from_slice(&self.prompt);
        }
        if written.len() < self.fed {
            // The middle was taken back: go back to the prompt and feed it again.
            self.cache.truncate(self.prompt.len())?;
            self.fed = 0;
        }
        feed.extend_from_slice(&written[self.fed..]);
        self.fed = written.len();
        if !feed.is_empty() {
            let input = Tensor::new(feed.as_slice(), &device)?.unsqueeze(0)?;
            self.last = last_row(&self.model.forward(&input, &mut self.cache)?)?;
        }
        Ok(self.last.clone())
    }

    fn ends(&self) -> &[TokenId] {
        &self.format.ends
    }
}

/// Writes one middle with `writer`, each token under the exact frontier mask of `checker`
/// (built with the vocabulary of the writer's tokenizer, as wide as its logits), the middle
/// ended by one of the writer's end ids only where the grammar allows.
pub fn fill_middle(
    writer: &mut dyn MiddleWriter,
    checker: &mut Checker,
    around: &Surroundings<'_>,
    options: &InfillOptions,
    rng: &mut Rng,
) -> Result<Middle, InfillError> {
    let vocab = checker
        .vocabulary()
        .cloned()
        .ok_or(TokenCanvasError::NoVocabulary)?;
    let ends = writer.ends().to_vec();
    let mut middle = Middle::default();
    let mut before = around.before.to_vec();
    before.push(Piece::Text(Vec::new()));
    for _ in 0..options.max_tokens {
        let logits = writer.next_logits(&middle.ids)?;
        if let Some(Piece::Text(written)) = before.last_mut() {
            written.clear();
            written.extend(middle.ids.iter().flat_map(|&t| vocab.bytes(t)));
        }
        // A writer's bridge to the suffix: a token that starts it (an end where the middle
        // may end, text elsewhere).
        let bridges = |t: TokenId| {
            writer.suffix().is_some_and(|suffix| {
                let b = vocab.bytes(t);
                !b.is_empty() && suffix.starts_with(b)
            })
        };
        let (next, ends_here) = if !options.constrained {
            let t = pick(&logits, None, options.temperature, rng);
            (t, ends.contains(&t) || bridges(t))
        } else {
            let proposal = if options.lazy {
                // The model's draw, checked; when refused, its draw without the refused
                // tokens, up to LAZY_CHECKS times (the same distribution as a draw within
                // the mask); a check that runs out of budget goes to the mask at once.
                // `left`: the tokens not refused yet (all, until one is).
                let mut left: Option<Vec<bool>> = None;
                let mut accepted = None;
                // Whether the middle may end here: the same question for every draw that
                // ends or bridges, so asked once.
                let mut end_verdict: Option<CheckVerdict> = None;
                let mut may_end_here = |checker: &mut Checker| {
                    *end_verdict.get_or_insert_with(|| may_end(checker, &before, around.after))
                };
                for _ in 0..=LAZY_CHECKS {
                    let t = pick(&logits, left.as_deref(), options.temperature, rng);
                    let i = t as usize;
                    if !logits[i].is_finite() || left.as_ref().is_some_and(|l| !l[i]) {
                        break; // every token with any weight was refused
                    }
                    middle.checks += 1;
                    let (verdict, ends_here) = if ends.contains(&t) {
                        (may_end_here(checker), true)
                    } else if vocab.kind(t) != Some(TokenKind::Text) {
                        (CheckVerdict::NotCompletable, false)
                    } else if bridges(t) && may_end_here(checker) == CheckVerdict::Completable {
                        (CheckVerdict::Completable, true)
                    } else {
                        let v = may_follow(checker, &before, vocab.bytes(t), around.after);
                        (v, false)
                    };
                    if verdict == CheckVerdict::Completable {
                        accepted = Some((t, ends_here));
                        break;
                    }
                    middle.refused += 1;
                    if verdict == CheckVerdict::Unknown {
                        break;
                    }
                    left.get_or_insert_with(|| vec![true; logits.len()])[i] = false;
                }
                accepted
            } else {
                None
            };
            match proposal {
                Some(p) => p,
                None => {
                    let f = frontier_mask(checker, &before, around.after)?;
                    middle.masks += 1;
                    middle.mask_micros += f.micros;
                    middle.unknown += f.unknown;
                    let may_end = f.may_end == CheckVerdict::Completable;
                    let mut ok = vec![false; logits.len()];
                    for id in f.mask.ids() {
                        if vocab.kind(id) == Some(TokenKind::Text) && (id as usize) < ok.len() {
                            ok[id as usize] = true;
                        }
                    }
                    if may_end {
                        for &e in &ends {
                            if let Some(slot) = ok.get_mut(e as usize) {
                                *slot = true;
                            }
                        }
                    }
                    if !ok.iter().any(|&b| b) {
                        return Err(if middle.ids.is_empty() && f.unknown == 0 {
                            InfillError::NoMiddle { hole: around.hole }
                        } else {
                            InfillError::Stuck {
                                hole: around.hole,
                                tokens: middle.ids.len(),
                                unknown: f.unknown,
                            }
                        });
                    }
                    let t = pick(&logits, Some(&ok), options.temperature, rng);
                    (t, may_end && (ends.contains(&t) || bridges(t)))
                }
            }
        };
        if ends_here {
            middle.ended = true;
            break;
        }
        middle.ids.push(next);
    }
    Ok(middle)
}

/// The last position's logits of `[1, t, vocab]`.
fn last_row(logits: &Tensor) -> candle_core::Result<Vec<f32>> {
    let t = logits.dim(1)?;
    logits.narrow(1, t - 1, 1)?.flatten_all()?.to_vec1::<f32>()
}

/// The most likely allowed id (temperature 0), or one drawn from the allowed ids' softmax at
/// `temperature`.
fn pick(logits: &[f32], allowed: Option<&[bool]>, temperature: f64, rng: &mut Rng) -> TokenId {
    let ok = |i: usize| allowed.is_none_or(|a| a[i]) && logits[i].is_finite();
    if temperature <= 0.0 {
        let mut best = None;
        for i in (0..logits.len()).filter(|&i| ok(i)) {
            if best.is_none_or(|b: usize| logits[i] > logits[b]) {
                best = Some(i);
            }
        }
        return best.unwrap_or(0) as TokenId;
    }
    let max = (0..logits.len())
        .filter(|&i| ok(i))
        .map(|i| logits[i])
        .fold(f32::NEG_INFINITY, f32::max);
    let weights: Vec<f64> = (0..logits.len())
        .map(|i| {
            if ok(i) {
                (((logits[i] - max) as f64) / temperature).exp()
            } else {
                0.0
            }
        })
        .collect();
    rng.categorical(&weights).unwrap_or(0) as TokenId
}
