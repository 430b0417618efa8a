//! Finishing an output the schedule left with masked positions: the model writes the rest
//! under masks, one position per forward pass, in runs of masks fitted to what the grammar
//! still needs ([`fit_runs`]), with tokens that keep the output finishable in the positions
//! it has and may still add ([`within_reach`]) and, once positions were added, that bring
//! the end closer ([`closer`]). See [`generate_masked`](super::generate_masked).

use hashbrown::HashMap;
use std::time::Instant;

use super::{MaskConstraint, CHECKS_PAST_INEXACT_MASK, LAZY_CHECKS};
use crate::checker::CheckVerdict;
use crate::diffusion::error::Result;
use crate::diffusion::generate::{logits_rows, GenerateOptions, GenerationStats};
use crate::diffusion::Model;
use crate::vocab::{TokenMask, Vocabulary};

/// The model finishes an output the schedule left with masked positions (see
/// [`generate_masked`](super::generate_masked)): one forward pass per position, each filling
/// the leftmost masked position that a token can fill with the model's best token under its
/// mask (once positions were added, the best of those that bring the end closer:
/// [`closer`]), held to what still fits ([`within_reach`]), after the runs of masks were
/// grown to what the grammar's completion writes in them ([`fit_runs`]); when every masked
/// position's mask is empty, a run longer than its completion gives up positions, or else
/// each run gets one more masked position at its end, within `options.max_extra_positions`.
pub(super) fn finish(
    model: &dyn Model,
    ids: &mut Vec<u32>,
    p: usize,
    options: &GenerateOptions,
    constraint: &mut MaskConstraint<'_>,
    stats: &mut GenerationStats,
) -> Result<()> {
    let mask = model.mask_token_id();
    loop {
        if constraint.open_positions().is_empty() {
            return Ok(());
        }
        fit_runs(model, ids, p, options, constraint, stats, Fit::Grow);
        let open = constraint.open_positions();
        let positions: Vec<usize> = open.iter().map(|&o| o + p).collect();
        let t0 = Instant::now();
        let rows = logits_rows(model, ids, p, 0.0, &positions, stats)?;
        stats.model_time += t0.elapsed();
        // The leftmost position that a token can fill, with the model's best allowed token
        // there: left to right, so that a run too short for what it must bridge grows at its
        // end and is written from its start.
        let mut stuck_runs: Vec<usize> = Vec::new();
        let mut chosen: Option<(usize, u32)> = None;
        for (row, &o) in rows.iter().zip(&open) {
            let mut allowed = MaskAt::new(o);
            let Some(mut token) = best_allowed(constraint, row, &mut allowed)? else {
                // A position of a run no token can start: the run needs another position.
                if stuck_runs.last().is_none_or(|&r| r + 1 != o) {
                    stuck_runs.push(o);
                } else {
                    *stuck_runs.last_mut().expect("not empty") = o;
                }
                continue;
            };
            if stats.extra_positions > 0 {
                let allowed = allowed.get(constraint)?;
                token = closer(constraint, o, row, allowed).unwrap_or(token);
            }
            let slack = positions_left(model, options, stats, ids.len());
            match within_reach(constraint, token, row, &mut allowed, slack)? {
                Some(Reach::Model(t)) => token = t,
                Some(Reach::Spelled(t)) => {
                    token = t;
                    stats.spelled_tokens += 1;
                }
                None => {}
            }
            chosen = Some((o, token));
            break;
        }
        if let Some((o, token)) = chosen {
            // A token the mask allowed but the check of the placed token refuses (ring
            // bonds) leaves this canvas's masks and checks: choose again.
            if !constraint.confirm(o, token) {
                constraint.stats.redraws += 1;
                continue;
            }
            ids[o + p] = token;
            for q in constraint.accept(o, token) {
                ids[q + p] = token;
            }
            continue;
        }
        // Every open position is stuck. A run longer than what the completion writes there
        // (three positions for the two digits a date still needs) gives up positions; else
        // each stuck run gets one more position after its last one (from the right, so the
        // earlier insertions' places stay put).
        if fit_runs(model, ids, p, options, constraint, stats, Fit::Shrink) {
            continue;
        }
        if stuck_runs.len() > positions_left(model, options, stats, ids.len()) {
            return Ok(());
        }
        for &o in stuck_runs.iter().rev() {
            constraint.insert_mask(o + 1);
            ids.insert(o + 1 + p, mask);
            stats.extra_positions += 1;
        }
    }
}

/// How many positions may still be added to an output of `len` ids (the prompt's
/// included): what is left of `options.max_extra_positions` and of the model's context.
fn positions_left(
    model: &dyn Model,
    options: &GenerateOptions,
    stats: &GenerationStats,
    len: usize,
) -> usize {
    let room = model.max_positions().unwrap_or(usize::MAX);
    (options.max_extra_positions - stats.extra_positions).min(room.saturating_sub(len))
}

/// What [`fit_runs`] may do to a run of masks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fit {
    /// Add positions to a run shorter than its completion.
    Grow,
    /// Take positions from a run (before the output's end) longer than its completion.
    Shrink,
}

/// Fits the runs of masks to what the grammar's completion writes in them, counted in the
/// fewest of the vocabulary's tokens: with [`Fit::Grow`], a shorter run gets positions at
/// its end (within `options.max_extra_positions` and the model's context); with
/// [`Fit::Shrink`], a longer run before the output's end gives up positions (a trailing run
/// may end early instead, with an EOS). Returns whether a run changed.
///
/// Why: a long run of masks is read loosely ([`crate::canvas::tokens`]), a short one
/// exactly, so a masked position just before a run of two reads that run as two tokens at
/// most and lets in only tokens after which two more finish the output: where the output
/// needs twenty bytes more, that steers the model into whatever fits, not into its own
/// text, and adding one position when every mask is empty repeats that at every step
/// (measured on the embedded model, JSON: 6 of 20 outputs spent all 64 added positions that
/// way and left the rest to the completion). A run as long as the completion's tokens has
/// room for the model's text; a middle run longer than that can never be filled (each
/// position takes a token of at least one byte) however many positions it gains.
fn fit_runs(
    model: &dyn Model,
    ids: &mut Vec<u32>,
    p: usize,
    options: &GenerateOptions,
    constraint: &mut MaskConstraint<'_>,
    stats: &mut GenerationStats,
    fit: Fit,
) -> bool {
    let runs = constraint.runs();
    let Some(needed) = constraint.tokens_to_complete() else {
        return false;
    };
    if needed.len() != runs.len() {
        return false;
    }
    let mask = model.mask_token_id();
    let mut changed = false;
    // From the right, so that the earlier runs' positions stay put.
    for (run, &want) in runs.iter().zip(&needed).rev() {
        let end = run.start + run.len;
        match fit {
            Fit::Grow if want > run.len => {
                let add = (want - run.len).min(positions_left(model, options, stats, ids.len()));
                for _ in 0..add {
                    constraint.insert_mask(end);
                    ids.insert(end + p, mask);
                }
                stats.extra_positions += add;
                changed |= add > 0;
            }
            Fit::Shrink
                if want < run.len
                    && !run.trailing
                    && stats.removed_positions < options.max_extra_positions =>
            {
                let remove = run.len - want;
                for _ in 0..remove {
                    constraint.remove_mask(run.start);
                    ids.remove(run.start + p);
                }
                stats.removed_positions += remove;
                changed = true;
            }
            _ => {}
        }
    }
    changed
}

/// Candidates [`closer`] weighs at a position, at most: the model's best allowed tokens.
const CLOSING_CANDIDATES: usize = 256;

/// Candidates [`within_reach`] measures at a position, at most, after the model's choice:
/// each measure is a whole completion spelled in tokens (milliseconds on a JSON schema), and
/// where none fits (an array that has grown past what its positions can close) all 256 were
/// measured at every position: 74 s of one output's 84 on the embedded model.
const REACH_MEASURES: usize = 32;

/// Once positions had to be added, the model must end the output, not wander (under a long
/// run of masks, read as any text, a mask lets a string or an object go on forever): in the
/// model's order, the first allowed token at `position` whose placement leaves fewer bytes
/// for the grammar's completion to write (so the bytes left fall at every step while one
/// exists), else of the [`CLOSING_CANDIDATES`] best the one that leaves the fewest. `None`
/// when no completion can be measured.
fn closer(
    constraint: &mut MaskConstraint<'_>,
    position: usize,
    logits: &[f32],
    allowed: &TokenMask,
) -> Option<u32> {
    let now = constraint.left_to_complete()?;
    let candidates = best_candidates(logits, allowed, None);
    let measure = |c: &mut MaskConstraint<'_>| c.left_to_complete();
    match first_or_least(constraint, position, &candidates, measure, |left| {
        left < now
    })? {
        Pick::First(t) | Pick::Least(t) => Some(t),
    }
}

/// The model's [`CLOSING_CANDIDATES`] best allowed tokens, best first, `except` left out.
fn best_candidates(logits: &[f32], allowed: &TokenMask, except: Option<u32>) -> Vec<u32> {
    let mut ranked: Vec<u32> = allowed
        .ids()
        .filter(|&t| (t as usize) < logits.len() && Some(t) != except)
        .collect();
    ranked.sort_by(|&a, &b| logits[b as usize].total_cmp(&logits[a as usize]));
    ranked.truncate(CLOSING_CANDIDATES);
    ranked
}

/// What [`first_or_least`] found.
enum Pick {
    /// The first candidate whose measure passed.
    First(u32),
    /// None passed: the first of least measure.
    Least(u32),
}

/// Of `candidates` in order, each placed at `position` in turn and measured on that canvas
/// (a candidate without a measure is passed over): the first whose measure `passes`, else
/// the first of least measure; `None` when no candidate was measured.
fn first_or_least<M: Ord + Copy>(
    constraint: &mut MaskConstraint<'_>,
    position: usize,
    candidates: &[u32],
    mut measure: impl FnMut(&mut MaskConstraint<'_>) -> Option<M>,
    passes: impl Fn(M) -> bool,
) -> Option<Pick> {
    let at = constraint.offset + position;
    let mut least: Option<(M, u32)> = None;
    for &t in candidates {
        constraint.canvas.cells[at] = Some(t);
        let m = measure(constraint);
        constraint.canvas.cells[at] = None;
        let Some(m) = m else { continue };
        if passes(m) {
            return Some(Pick::First(t));
        }
        if least.is_none_or(|(l, _)| m < l) {
            least = Some((m, t));
        }
    }
    least.map(|(_, t)| Pick::Least(t))
}

/// The token [`within_reach`] chose, and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reach {
    /// One of the model's [`CLOSING_CANDIDATES`] best allowed tokens.
    Model(u32),
    /// The first token of the shortest spelling of the grammar's completion: none of the
    /// model's best kept the output within its positions.
    Spelled(u32),
}

/// Keeps the output finishable within the positions it has and `slack` more that may still
/// be added: of the model's allowed tokens at `position`, `best` (the model's choice) if
/// after it the grammar's completion, counted in the fewest tokens that write it
/// ([`MaskConstraint::tokens_to_complete`]), fits in the positions still open and `slack`;
/// else the first of the model's next [`REACH_MEASURES`] best that does; else, where
/// `position` starts its run, the completion's own first token there, which does by
/// construction; else the candidate that needs the fewest. `None` when the completion
/// cannot be measured.
///
/// Why: a long run of masks is read loosely (one token, then any text), so its masks let
/// the model write on where the output has no positions left for it (a new member after
/// each member, measured on the embedded model's JSON: 4 of 20 outputs spent all 64 added
/// positions that way and ended with the grammar's completion). Once the positions run
/// short, this holds the model to what still fits, and the completion is never needed.
fn within_reach(
    constraint: &mut MaskConstraint<'_>,
    best: u32,
    logits: &[f32],
    allowed: &mut MaskAt,
    slack: usize,
) -> Result<Option<Reach>> {
    let position = allowed.position;
    // How many tokens more than the output has room for the completion needs (measured
    // with the candidate in place).
    let over = |c: &mut MaskConstraint<'_>| -> Option<isize> {
        let open = c.open_positions().len();
        let needed = c.tokens_to_complete()?;
        Some(needed.iter().sum::<usize>() as isize - (open + slack) as isize)
    };
    let fits = |o: isize| o <= 0;
    // The model's choice first: when it cannot be measured, nothing can be said.
    match first_or_least(constraint, position, &[best], over, fits) {
        None => return Ok(None),
        Some(Pick::First(t)) => return Ok(Some(Reach::Model(t))),
        Some(Pick::Least(_)) => {}
    }
    let allowed = allowed.get(constraint)?;
    let mut candidates = best_candidates(logits, allowed, Some(best));
    candidates.truncate(REACH_MEASURES);
    let fewest = match first_or_least(constraint, position, &candidates, over, fits) {
        Some(Pick::First(t)) => return Ok(Some(Reach::Model(t))),
        Some(Pick::Least(t)) => Some(t),
        None => None,
    };
    let run = constraint.runs().iter().position(|r| r.start == position);
    if let (Some(r), Some(spelled)) = (run, constraint.spelled_fillers()) {
        if let Some(&t) = spelled.get(r).and_then(|ids| ids.first()) {
            if allowed.contains(t) {
                return Ok(Some(Reach::Spelled(t)));
            }
        }
    }
    Ok(fewest.map(Reach::Model))
}

/// A position's mask, computed when first needed: the finisher weighs the model's best
/// tokens by single checks first ([`best_allowed`]), and most positions need no mask.
struct MaskAt {
    position: usize,
    mask: Option<TokenMask>,
}

impl MaskAt {
    fn new(position: usize) -> MaskAt {
        MaskAt {
            position,
            mask: None,
        }
    }

    /// The ids known to be allowed at the position ([`MaskConstraint::mask`]).
    fn get(&mut self, constraint: &mut MaskConstraint<'_>) -> Result<&TokenMask> {
        if self.mask.is_none() {
            self.mask = Some(constraint.mask(self.position)?.mask);
        }
        Ok(self.mask.as_ref().expect("just computed"))
    }
}

/// The model's best token at the position of `mask` that keeps the canvas completable
/// (`logits` its row), `None` when no token is known to: the first of the model's
/// [`LAZY_CHECKS`] best that a check allows; else the best in the position's mask, where the
/// mask is exact; else (ids left unknown by the mask's budget) the first of the next
/// [`CHECKS_PAST_INEXACT_MASK`] that a check allows, else the best the mask allows. The
/// same token the exact mask's best is, without the mask where the model's choice is
/// allowed (see [`LAZY_CHECKS`] for why).
fn best_allowed(
    constraint: &mut MaskConstraint<'_>,
    logits: &[f32],
    mask: &mut MaskAt,
) -> Result<Option<u32>> {
    let ranked = ranked_ids(logits, LAZY_CHECKS + CHECKS_PAST_INEXACT_MASK);
    let (first, past) = ranked.split_at(LAZY_CHECKS.min(ranked.len()));
    if let Some(t) = first_checked(constraint, mask.position, first, None) {
        return Ok(Some(t));
    }
    let m = constraint.mask(mask.position)?;
    let exact = m.exact;
    let known = mask.mask.insert(m.mask);
    let best = masked_argmax(logits, known).map(|(t, _)| t);
    if exact {
        return Ok(best);
    }
    Ok(first_checked(constraint, mask.position, past, Some(known)).or(best))
}

/// The first of `candidates` that `known` allows or a check allows at `position`; `None`
/// when none does or a check runs out of budget first (the canvas is hard, not the token:
/// see `LazyRefusals::refused` in `masked.rs`).
fn first_checked(
    constraint: &mut MaskConstraint<'_>,
    position: usize,
    candidates: &[u32],
    known: Option<&TokenMask>,
) -> Option<u32> {
    for &t in candidates {
        if known.is_some_and(|k| k.contains(t)) {
            return Some(t);
        }
        match constraint.verdict(position, t) {
            CheckVerdict::Completable => return Some(t),
            CheckVerdict::Unknown => return None,
            CheckVerdict::NotCompletable => {}
        }
    }
    None
}

/// The ids of the `n` highest `logits`, highest first (the lower id first on ties, as
/// [`masked_argmax`] picks).
fn ranked_ids(logits: &[f32], n: usize) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..logits.len() as u32).collect();
    let by_logit = |a: &u32, b: &u32| logits[*b as usize].total_cmp(&logits[*a as usize]);
    if n < ids.len() {
        ids.select_nth_unstable_by(n, |a, b| by_logit(a, b).then(a.cmp(b)));
        ids.truncate(n);
    }
    ids.sort_by(|a, b| by_logit(a, b).then(a.cmp(b)));
    ids
}

/// The allowed token of highest logit and its probability renormalized over the allowed
/// tokens; `None` when nothing is allowed.
fn masked_argmax(logits: &[f32], allowed: &TokenMask) -> Option<(u32, f64)> {
    let ids = || allowed.ids().filter(|&t| (t as usize) < logits.len());
    let (token, max) = ids().map(|t| (t, logits[t as usize] as f64)).fold(
        None,
        |b: Option<(u32, f64)>, (t, l)| match b {
            Some((_, bl)) if bl >= l => b,
            _ => Some((t, l)),
        },
    )?;
    let sum: f64 = ids().map(|t| (logits[t as usize] as f64 - max).exp()).sum();
    Some((token, 1.0 / sum))
}

/// A run of masked positions of the output: `len` positions from `start`; `trailing` when
/// the output ends after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct MaskRun {
    pub start: usize,
    pub len: usize,
    pub trailing: bool,
}

/// The vocabulary's text tokens by their bytes: how few of them write a given text.
pub(super) struct Spellings {
    /// Each text token's bytes and its lowest id.
    tokens: HashMap<Vec<u8>, u32>,
    longest: usize,
}

impl Spellings {
    pub fn new(vocab: &Vocabulary) -> Spellings {
        let mut tokens: HashMap<Vec<u8>, u32> = HashMap::new();
        for id in vocab.text_ids() {
            let bytes = vocab.bytes(id);
            if !bytes.is_empty() {
                tokens.entry(bytes.to_vec()).or_insert(id);
            }
        }
        let longest = tokens.keys().map(Vec::len).max().unwrap_or(0);
        Spellings { tokens, longest }
    }

    /// The ids of a shortest sequence of tokens whose bytes are `text` (none for the empty
    /// text); `None` if no sequence of tokens is.
    pub fn spell(&self, text: &[u8]) -> Option<Vec<u32>> {
        let n = text.len();
        // best[i]: the fewest tokens that write text[..i], and the last one's length.
        let mut best = vec![(usize::MAX, 0); n + 1];
        best[0] = (0, 0);
        for i in 0..n {
            if best[i].0 == usize::MAX {
                continue;
            }
            for l in 1..=self.longest.min(n - i) {
                if self.tokens.contains_key(&text[i..i + l]) && best[i].0 + 1 < best[i + l].0 {
                    best[i + l] = (best[i].0 + 1, l);
                }
            }
        }
        if best[n].0 == usize::MAX {
            return None;
        }
        let mut ids = Vec::with_capacity(best[n].0);
        let mut end = n;
        while end > 0 {
            let l = best[end].1;
            ids.push(self.tokens[&text[end - l..end]]);
            end -= l;
        }
        ids.reverse();
        Some(ids)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use candle_core::{DType, Device};

    use super::*;
    use crate::checker::Checker;
    use crate::grammar::lark;

    /// The tiny LLaDA fixture (random weights) over a vocabulary whose ids below 256 are bytes
    /// and whose others are special (never in a mask).
    fn byte_model() -> (Box<dyn Model>, Arc<Vocabulary>) {
        model_with_tokens(&[])
    }

    /// As [`byte_model`], with `extra` text tokens at ids 256 on.
    fn model_with_tokens(extra: &[&str]) -> (Box<dyn Model>, Arc<Vocabulary>) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/llada-tiny");
        let model = crate::diffusion::load(&dir, DType::F32, &Device::Cpu).unwrap();
        let bytes: Vec<Vec<u8>> = (0..model.vocab_size() as u32)
            .map(|id| {
                let extra = (id as usize).checked_sub(256).and_then(|i| extra.get(i));
                match (u8::try_from(id), extra) {
                    (Ok(b), _) => vec![b],
                    (_, Some(token)) => token.as_bytes().to_vec(),
                    _ => format!("<|{id}|>").into_bytes(),
                }
            })
            .collect();
        let specials: Vec<u32> = (256 + extra.len() as u32..model.vocab_size() as u32).collect();
        let vocab = Vocabulary::new(bytes, &[model.eos_token_id()], &specials);
        (model, Arc::new(vocab))
    }

    /// The ids the model reads for `cells` (a placed byte, or `None` for a mask) after the
    /// prompt `w: `, each byte placed in `c` as well; and the prompt's length.
    fn place(
        model: &dyn Model,
        c: &mut MaskConstraint<'_>,
        cells: &[Option<u8>],
    ) -> (Vec<u32>, usize) {
        let prompt = b"w: ".map(u32::from);
        let mut ids = prompt.to_vec();
        for (position, cell) in cells.iter().enumerate() {
            match cell {
                Some(b) => {
                    c.accept(position, u32::from(*b));
                    ids.push(u32::from(*b));
                }
                None => ids.push(model.mask_token_id()),
            }
        }
        (ids, prompt.len())
    }

    /// `[` and `]` placed with three masks between them, where the grammar's only word puts
    /// two bytes: no token fits any of the three positions, and adding positions (what the
    /// finisher did before) never helps. The run gives up one position and the model writes
    /// the two bytes.
    #[test]
    fn a_run_longer_than_its_text_gives_up_positions() {
        let (model, vocab) = byte_model();
        let grammar = lark::parse("start: \"[12]\"\n", "word.lark").unwrap();
        let mut checker = Checker::with_vocabulary(grammar, vocab).unwrap();
        let mut c = MaskConstraint::new(&mut checker, 5).unwrap();
        let cells = [Some(b'['), None, None, None, Some(b']')];
        let (mut ids, p) = place(model.as_ref(), &mut c, &cells);
        for position in 1..4 {
            assert!(c.allowed(position).unwrap().is_empty(), "{position}");
        }
        let options = GenerateOptions::new(cells.len(), 0);
        let mut stats = GenerationStats::default();
        finish(model.as_ref(), &mut ids, p, &options, &mut c, &mut stats).unwrap();
        assert!(c.is_complete(), "{c:?}");
        assert_eq!(c.text(), b"[12]");
        assert_eq!((stats.removed_positions, stats.extra_positions), (1, 0));
        assert_eq!(&ids[p..], b"[12]".map(u32::from));
    }

    /// A trailing run of two masks after `[`, where the word needs six bytes more: the run
    /// grows to six positions at once, before the model writes, not one at a time.
    #[test]
    fn a_run_shorter_than_its_text_grows_to_it_at_once() {
        let (model, vocab) = byte_model();
        let grammar = lark::parse("start: \"[12345]\"\n", "word.lark").unwrap();
        let mut checker = Checker::with_vocabulary(grammar, vocab).unwrap();
        let mut c = MaskConstraint::new(&mut checker, 3).unwrap();
        let cells = [Some(b'['), None, None];
        let (mut ids, p) = place(model.as_ref(), &mut c, &cells);
        let options = GenerateOptions::new(cells.len(), 0);
        let mut stats = GenerationStats::default();
        let m = model.as_ref();
        fit_runs(m, &mut ids, p, &options, &mut c, &mut stats, Fit::Grow);
        assert_eq!(stats.extra_positions, 4);
        assert_eq!(c.cells().len(), 7);
        assert_eq!(ids.len(), p + 7);
        finish(m, &mut ids, p, &options, &mut c, &mut stats).unwrap();
        assert_eq!(c.text(), b"[12345]");
        assert_eq!(stats.extra_positions, 4);
    }

    /// Eight masks where a word of letters must end in six marks, no position may be
    /// added, and the vocabulary has two-letter tokens: read loosely (a long run holds from
    /// one byte a position to two), the masks of the first positions let in letters after
    /// which six positions are too few for the marks. Held to what fits, the model ends the
    /// word in the eight positions it has.
    #[test]
    fn a_run_is_held_to_what_still_fits() {
        let (model, vocab) = model_with_tokens(&["ab", "cd", "ef"]);
        let grammar = lark::parse("start: /[a-w]/* \".:;,!?\"\n", "word.lark").unwrap();
        let mut checker = Checker::with_vocabulary(grammar, vocab).unwrap();
        let mut c = MaskConstraint::new(&mut checker, 8).unwrap();
        let (mut ids, p) = place(model.as_ref(), &mut c, &[None; 8]);
        let mut options = GenerateOptions::new(8, 0);
        options.max_extra_positions = 0;
        let mut stats = GenerationStats::default();
        finish(model.as_ref(), &mut ids, p, &options, &mut c, &mut stats).unwrap();
        assert!(c.is_complete(), "{c:?}");
        let text = c.text();
        assert!(
            text.ends_with(b".:;,!?"),
            "{:?}",
            String::from_utf8_lossy(&text)
        );
        assert_eq!(stats.extra_positions, 0);
    }

    /// The finisher's token by checks first ([`best_allowed`]) is the best token of the
    /// position's exact mask, on canvases of a list grammar with random logits: where one of
    /// the model's first choices is allowed (no mask computed) and where none is.
    #[test]
    fn best_allowed_is_the_best_of_the_mask() {
        let (_, vocab) = model_with_tokens(&["12", ",3", "[4", "5]", "],"]);
        let grammar = lark::parse("start: \"[\" [D (\",\" D)*] \"]\"\nD: /[0-9]+/\n", "l").unwrap();
        let mut checker = Checker::with_vocabulary(grammar, vocab.clone()).unwrap();
        let mut rng = crate::diffusion::Rng::new(7);
        let (mut by_checks, mut by_mask) = (0, 0);
        for round in 0..60 {
            let len = 3 + round % 5;
            let mut c = MaskConstraint::new(&mut checker, len).unwrap();
            // Up to two placed tokens, each one its position's mask allows.
            for _ in 0..(round % 3) {
                let position = (rng.next_u64() % len as u64) as usize;
                if c.cells()[position].is_some() {
                    continue;
                }
                let allowed: Vec<u32> = c.allowed(position).unwrap().ids().collect();
                if !allowed.is_empty() {
                    let id = allowed[(rng.next_u64() % allowed.len() as u64) as usize];
                    c.accept(position, id);
                }
            }
            for position in c.open_positions() {
                let logits: Vec<f32> = (0..vocab.len())
                    .map(|_| (rng.next_u64() % 1000) as f32 / 100.0)
                    .collect();
                let expected = masked_argmax(&logits, &c.allowed(position).unwrap());
                let masks = c.stats().masks;
                let mut at = MaskAt::new(position);
                let got = best_allowed(&mut c, &logits, &mut at).unwrap();
                assert_eq!(got, expected.map(|(t, _)| t), "{c:?} at {position}");
                if c.stats().masks == masks {
                    by_checks += 1;
                } else {
                    by_mask += 1;
                }
            }
        }
        assert!(by_checks >= 10 && by_mask >= 10, "{by_checks} {by_mask}");
    }

    /// The shortest spelling of a text is one of its splits into tokens, and as short.
    #[test]
    fn spellings_are_splits_into_tokens() {
        let bytes: Vec<Vec<u8>> = ["a", "b", "ab", "abc", "ca", "bca", "ab"]
            .iter()
            .map(|t| t.as_bytes().to_vec())
            .collect();
        let vocab = Vocabulary::new(bytes.clone(), &[], &[]);
        let spellings = Spellings::new(&vocab);
        for text in ["abcab", "bcaab", "cab", "ab", ""] {
            let ids = spellings.spell(text.as_bytes()).unwrap();
            let joined: Vec<u8> = ids
                .iter()
                .flat_map(|&id| vocab.bytes(id).to_vec())
                .collect();
            assert_eq!(joined, text.as_bytes());
        }
        assert_eq!(spellings.spell(b"abd"), None);
    }

    /// The fewest tokens that spell a text, against every split of it into tokens.
    #[test]
    fn fewest_tokens_agree_with_every_split() {
        let bytes: Vec<Vec<u8>> = ["a", "b", "ab", "abc", "ca", "bca"]
            .iter()
            .map(|t| t.as_bytes().to_vec())
            .collect();
        let spellings = Spellings::new(&Vocabulary::new(bytes.clone(), &[], &[]));
        fn splits(text: &[u8], tokens: &[Vec<u8>]) -> Option<usize> {
            if text.is_empty() {
                return Some(0);
            }
            tokens
                .iter()
                .filter(|t| text.starts_with(t))
                .filter_map(|t| splits(&text[t.len()..], tokens).map(|n| n + 1))
                .min()
        }
        let mut words: Vec<Vec<u8>> = vec![Vec::new()];
        for _ in 0..6 {
            let longer: Vec<Vec<u8>> = words
                .iter()
                .filter(|w| w.len() < 6)
                .flat_map(|w| b"abcd".iter().map(move |&x| [w.as_slice(), &[x]].concat()))
                .collect();
            words.extend(longer);
            words.sort();
            words.dedup();
        }
        for w in &words {
            assert_eq!(
                spellings.spell(w).map(|ids| ids.len()),
                splits(w, &bytes),
                "{:?}",
                String::from_utf8_lossy(w)
            );
        }
    }
}
