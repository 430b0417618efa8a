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

use super::frontier::{frontier_mask, Piece};
use super::model::{CausalLm, KvCache};
use super::FimFormat;
use crate::canvas::tokens::TokenCanvasError;
use crate::checker::{CheckVerdict, Checker};
use crate::diffusion::{DiffusionError, Rng};
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
}

impl Default for InfillOptions {
    fn default() -> Self {
        InfillOptions {
            max_tokens: 64,
            temperature: 0.0,
            constrained: true,
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
    /// Their total time, in microseconds.
    pub mask_micros: u64,
    /// At most this many ids were left undecided, over all masks.
    pub unknown: usize,
}

/// The pieces a middle is written between, for the checker (`before`, `after`: fixed text
/// and other holes) and for the model (its prompt's prefix and suffix ids).
pub struct Surroundings<'a> {
    /// The hole's index, for messages.
    pub hole: usize,
    /// Everything before the middle, for the checker.
    pub before: &'a [Piece],
    /// Everything after it, for the checker.
    pub after: &'a [Piece],
    /// The prompt's prefix ids.
    pub prefix: &'a [TokenId],
    /// The prompt's suffix ids (later holes as their marker's text).
    pub suffix: &'a [TokenId],
}

/// Writes one middle with `model`, in `format`'s prompt, checked by `checker` (built with the
/// vocabulary of the model's tokenizer, as wide as its logits).
pub fn fill_middle(
    model: &CausalLm,
    format: &FimFormat,
    checker: &mut Checker,
    around: &Surroundings<'_>,
    options: &InfillOptions,
    rng: &mut Rng,
) -> Result<Middle, InfillError> {
    let vocab = checker
        .vocabulary()
        .cloned()
        .ok_or(TokenCanvasError::NoVocabulary)?;
    let device = model.device().clone();
    let prompt = format.prompt(around.prefix, around.suffix);
    let mut cache = KvCache::new();
    let input = Tensor::new(prompt.as_slice(), &device)?.unsqueeze(0)?;
    let mut logits = last_row(&model.forward(&input, &mut cache)?)?;
    let mut middle = Middle::default();
    let mut before = around.before.to_vec();
    before.push(Piece::Text(Vec::new()));
    for _ in 0..options.max_tokens {
        let allowed: Option<Vec<bool>> = if options.constrained {
            let Some(Piece::Text(written)) = before.last_mut() else {
                unreachable!("the middle is the last piece")
            };
            written.clear();
            written.extend(middle.ids.iter().flat_map(|&t| vocab.bytes(t)));
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
                for &e in &format.ends {
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
            Some(ok)
        } else {
            None
        };
        let next = pick(&logits, allowed.as_deref(), options.temperature, rng);
        if format.is_end(next) {
            middle.ended = true;
            break;
        }
        middle.ids.push(next);
        let input = Tensor::new(&[next], &device)?.unsqueeze(0)?;
        logits = last_row(&model.forward(&input, &mut cache)?)?;
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
