//! The exact mask at the frontier of a middle written left to right: which tokens may come
//! next so that `prefix · middle · t · (more text) · suffix` can still be a word of the
//! grammar, and whether the middle may end here.
//!
//! A middle has no fixed length, so its frontier is not a token canvas's masked position (a
//! run of masks there is exactly that many tokens). It is a text with holes: the text so far,
//! a hole of one token, a hole of any text, then the suffix, whose later holes (other middles,
//! to be written after this one) are holes of any text. [`Checker::allowed_in_text`] answers
//! it exactly. With a vocabulary that writes every byte (byte-level BPE, byte fallback) any
//! text is some sequence of tokens, so "any text" is exactly what the model can still write;
//! otherwise it is a superset, and never rejects what tokens could do. The only bound it does
//! not know is the middle's token budget.

use crate::canvas::tokens::TokenCanvasError;
use crate::canvas::{HoleKind, HoleyText};
use crate::checker::{CheckVerdict, Checker};
use crate::vocab::TokenMask;

/// A piece of the text around the middle being written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Fixed text (the prefix, the suffix, middles already written).
    Text(Vec<u8>),
    /// Another hole, to be filled later: any text.
    Hole,
}

/// The frontier's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrontierMask {
    /// The text tokens that may come next.
    pub mask: TokenMask,
    /// Whether the middle may end here (the text so far, then the suffix, can be a word).
    pub may_end: CheckVerdict,
    /// Ids left undecided by a budget (in neither the mask nor its complement).
    pub unknown: usize,
    /// Wall-clock time, in microseconds.
    pub micros: u64,
}

/// Appends `pieces` to a text with holes (holes of any text).
fn append(pieces: &[Piece], chunks: &mut Vec<Vec<u8>>, kinds: &mut Vec<HoleKind>) {
    for p in pieces {
        match p {
            Piece::Text(bytes) => chunks
                .last_mut()
                .expect("a text starts with a chunk")
                .extend_from_slice(bytes),
            Piece::Hole => {
                kinds.push(HoleKind::Any);
                chunks.push(Vec::new());
            }
        }
    }
}

/// The frontier mask after `before` (the prefix, middles already written, the middle so far)
/// with `after` (the suffix, later holes among it) to come. The checker must have a
/// vocabulary.
pub fn frontier_mask(
    checker: &mut Checker,
    before: &[Piece],
    after: &[Piece],
) -> Result<FrontierMask, TokenCanvasError> {
    let t0 = std::time::Instant::now();
    let (mut chunks, mut kinds) = (vec![Vec::new()], Vec::new());
    append(before, &mut chunks, &mut kinds);
    let open = kinds.len();
    // The token (a hole of one), then any text, then the suffix.
    kinds.extend([HoleKind::Token, HoleKind::Any]);
    chunks.extend([Vec::new(), Vec::new()]);
    append(after, &mut chunks, &mut kinds);
    let allowed = checker.allowed_in_text(&HoleyText { chunks }, &kinds, open)?;
    let may_end = may_end(checker, before, after);
    Ok(FrontierMask {
        mask: allowed.mask,
        may_end,
        unknown: allowed.unknown,
        micros: t0.elapsed().as_micros() as u64,
    })
}

/// Whether the middle may end after `before`: `before · after` completable (later holes any
/// text). One check.
pub fn may_end(checker: &mut Checker, before: &[Piece], after: &[Piece]) -> CheckVerdict {
    let (mut chunks, mut kinds) = (vec![Vec::new()], Vec::new());
    append(before, &mut chunks, &mut kinds);
    append(after, &mut chunks, &mut kinds);
    checker.check_text(&HoleyText { chunks }).verdict
}

/// Whether `token` (its bytes) may come next after `before`: `before · token`, any text, then
/// `after`, completable. One check: what a sampler pays for a proposal it checks instead of
/// computing the whole mask ([`frontier_mask`] holds exactly the tokens this accepts).
pub fn may_follow(
    checker: &mut Checker,
    before: &[Piece],
    token: &[u8],
    after: &[Piece],
) -> CheckVerdict {
    let (mut chunks, mut kinds) = (vec![Vec::new()], Vec::new());
    append(before, &mut chunks, &mut kinds);
    chunks
        .last_mut()
        .expect("a text starts with a chunk")
        .extend_from_slice(token);
    append(&[Piece::Hole], &mut chunks, &mut kinds);
    append(after, &mut chunks, &mut kinds);
    checker.check_text(&HoleyText { chunks }).verdict
}
