//! Mask answers already computed, by the reading of the canvas they were computed from.
//!
//! A position's mask is a function of the canvas's *reading* (its text, the kinds of its holes,
//! which hole is open), not of the canvas itself: a run of more than
//! [`EXACT_RUN`](crate::canvas::tokens::EXACT_RUN) masks is read as one token then any text,
//! however long the run is, so every position at least `EXACT_RUN + 1` positions inside a long
//! run is read alike — 26 of the 32 positions of a block in the middle of a canvas. One search
//! answers for all of them; the others look the answer up. The end-of-output check a mask makes
//! is kept the same way.
//!
//! Only exact answers are kept (no id `unknown`, no `unknown` verdict), so a kept answer is what
//! the computation gives under any deadline. Budgets are fixed when the checker is built, and
//! the memo is emptied when its vocabulary changes. Bounded: at most [`MaskMemo::CAPACITY`]
//! answers (a mask over a 151k vocabulary is 19 KB), emptied when full, as the lexer's caches
//! are.

use hashbrown::HashMap;

use super::CheckVerdict;
use crate::canvas::{HoleKind, HoleyText};
use crate::vocab::TokenMask;

/// What an answer was computed from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Reading {
    chunks: Vec<Vec<u8>>,
    kinds: Vec<HoleKind>,
    /// The open hole (a mask's text part), or `None` (a check).
    open: Option<u32>,
    /// Whether a mask's per-effect fallback places tokens into the text rather than on a token
    /// canvas (the two agree, but the key does not rely on it).
    in_text: bool,
}

impl Reading {
    /// The text tokens allowed in hole `open` of `text`, its holes read as `kinds`.
    pub(super) fn mask(text: &HoleyText, kinds: &[HoleKind], open: u32, in_text: bool) -> Self {
        Reading {
            chunks: text.chunks.clone(),
            kinds: kinds.to_vec(),
            open: Some(open),
            in_text,
        }
    }

    /// The verdict on `text`, its holes read as `kinds`.
    pub(super) fn check(text: &HoleyText, kinds: &[HoleKind]) -> Self {
        Reading {
            chunks: text.chunks.clone(),
            kinds: kinds.to_vec(),
            open: None,
            in_text: false,
        }
    }
}

/// The text part of a mask: the ids allowed, and the groups they were decided in (what a
/// memo hit reports; it makes no search).
#[derive(Clone, Debug)]
pub(super) struct TextTokens {
    pub mask: TokenMask,
    pub effects: usize,
}

#[derive(Clone, Debug)]
enum Answer {
    Mask(TextTokens),
    Verdict(CheckVerdict),
}

/// Exact answers by reading; see the [module docs](self).
#[derive(Debug, Default)]
pub(super) struct MaskMemo {
    answers: HashMap<Reading, Answer>,
}

impl MaskMemo {
    /// Answers kept before the memo is emptied.
    pub const CAPACITY: usize = 64;

    pub fn mask(&self, reading: &Reading) -> Option<&TextTokens> {
        match self.answers.get(reading) {
            Some(Answer::Mask(m)) => Some(m),
            _ => None,
        }
    }

    pub fn verdict(&self, reading: &Reading) -> Option<CheckVerdict> {
        match self.answers.get(reading) {
            Some(Answer::Verdict(v)) => Some(*v),
            _ => None,
        }
    }

    /// Keeps `mask`, an exact answer (no id unknown) for `reading`.
    pub fn keep_mask(&mut self, reading: Reading, mask: TextTokens) {
        self.keep(reading, Answer::Mask(mask));
    }

    /// Keeps `verdict` for `reading` unless it is `unknown`.
    pub fn keep_verdict(&mut self, reading: Reading, verdict: CheckVerdict) {
        if verdict != CheckVerdict::Unknown {
            self.keep(reading, Answer::Verdict(verdict));
        }
    }

    fn keep(&mut self, reading: Reading, answer: Answer) {
        if self.answers.len() >= Self::CAPACITY {
            self.answers.clear();
        }
        self.answers.insert(reading, answer);
    }

    pub fn clear(&mut self) {
        self.answers.clear();
    }

    pub fn len(&self) -> usize {
        self.answers.len()
    }
}
