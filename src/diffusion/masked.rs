//! Generation through valid-token masks: [`generate_masked`] (which describes the method) and
//! its [`MaskConstraint`].

use std::fmt;
use std::sync::Arc;

use hashbrown::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::canvas::tokens::TokenCanvas;
use crate::canvas::{Canvas, Cell, HoleyText};
use crate::checker::{CheckVerdict, Checker};
use crate::vocab::{TokenKind, TokenMask, Vocabulary};

use super::constraint::{after_prefix, completed};
use super::error::{DiffusionError, Result};
use super::generate::{
    covers, place, start, step_rows, GenerateOptions, Generation, GenerationStats,
};
use super::sampler::Sampler;
use super::Model;

mod finish;
mod template;

use finish::{finish, MaskRun, Spellings};
pub use template::FIXED_REGION;

/// What the masks of one generation cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaskStats {
    /// Masks computed (one per candidate position per step, and one per redraw).
    pub masks: u64,
    /// Wall time computing them.
    pub mask_time: Duration,
    /// Ids left out of masks because their check ran out of budget.
    pub unknown_ids: u64,
    /// Masks that came out empty (the position was left masked).
    pub empty_masks: u64,
    /// Checks of a step's later pairs against the canvas holding the earlier ones.
    pub rechecks: u64,
    /// Of those, the pairs refused (their position drew again from a fresh mask).
    pub redraws: u64,
    /// Wall time in single checks (rechecks, lazy checks) and completions.
    pub check_time: Duration,
}

/// A position's mask ([`MaskConstraint::mask`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionMask {
    /// The ids known to keep the canvas completable.
    pub mask: TokenMask,
    /// Whether every other id is known not to (no check ran out of budget).
    pub exact: bool,
}

/// A grammar constraint on one generation through masks: the token canvas of the generated
/// positions and the checker that reads it. See [`generate_masked`].
///
/// The output may continue fixed tokens that the model did not generate (a function's
/// declaration): [`MaskConstraint::with_prefix`]. The grammar then reads them and the output
/// together, while positions and texts stay those of the output alone.
///
/// `Debug` shows the canvas, statistics and mode, not the checker or the vocabulary.
pub struct MaskConstraint<'a> {
    checker: &'a mut Checker,
    vocab: Arc<Vocabulary>,
    /// The prefix's ids, then the generated positions.
    canvas: TokenCanvas,
    /// Positions of the prefix in front of the generated ones.
    offset: usize,
    /// The prefix's bytes.
    prefix: Vec<u8>,
    stats: MaskStats,
    lazy: bool,
    /// Lazy masks: checks of a refused position's next best tokens before its mask.
    checks_before_mask: usize,
    /// The vocabulary's text tokens by their bytes, made when a generation first has to
    /// finish (see `finish::fit_runs`).
    spellings: Option<Spellings>,
    /// The last text [`MaskConstraint::spelled_fillers`] read and its answer: the finisher
    /// asks of the same canvas twice a step (the token it weighs, then the runs' fit).
    last_spelled: Option<(HoleyText, Option<Vec<Vec<u32>>>)>,
    /// Pairs (position, id) that [`MaskConstraint::confirm`] refused on the canvas as it is
    /// now: left out of its masks and refused by its checks until the canvas changes.
    refused: Vec<(usize, u32)>,
    /// Each generated position's region ([`MaskConstraint::regions`]).
    regions: Vec<u32>,
}

impl<'a> MaskConstraint<'a> {
    /// A constraint on `len` generated positions, all masked. The checker must read token
    /// canvases ([`Checker::with_vocabulary`]) of the model's ids, and its grammar must have a
    /// word (an empty language is an error here, not an empty mask later).
    pub fn new(checker: &'a mut Checker, len: usize) -> Result<MaskConstraint<'a>> {
        MaskConstraint::with_prefix(checker, &[], len)
    }

    /// A constraint on `len` generated positions, all masked, that continue the fixed text
    /// tokens `prefix` (placed positions in front of them): every mask, check and completion
    /// reads the prefix and the output together, as one word of the grammar. Positions given
    /// to the methods count from the first generated one, and the texts they return leave the
    /// prefix out. Besides [`MaskConstraint::new`]'s errors, a prefix id that is not a text
    /// token of the vocabulary, and a prefix that no word of the grammar starts with, are
    /// errors here.
    pub fn with_prefix(
        checker: &'a mut Checker,
        prefix: &[u32],
        len: usize,
    ) -> Result<MaskConstraint<'a>> {
        let vocab = checker.vocabulary().cloned().ok_or_else(|| {
            DiffusionError::Sampler(
                "mask-guided generation needs a checker with the model's vocabulary".into(),
            )
        })?;
        let mut bytes = Vec::new();
        for (i, &id) in prefix.iter().enumerate() {
            if vocab.kind(id) != Some(TokenKind::Text) {
                return Err(DiffusionError::Sampler(format!(
                    "prefix position {i}: id {id} is not a text token of the checker's \
                     vocabulary"
                )));
            }
            bytes.extend_from_slice(vocab.bytes(id));
        }
        let anything = crate::canvas::HoleyText {
            chunks: vec![bytes.clone(), Vec::new()],
        };
        if checker.check_text(&anything).verdict == CheckVerdict::NotCompletable {
            return Err(DiffusionError::Sampler(if prefix.is_empty() {
                "the grammar's language is empty: no output can follow it".into()
            } else {
                format!(
                    "no word of the grammar starts with the prefix {:?}",
                    String::from_utf8_lossy(&bytes)
                )
            }));
        }
        let mut cells: Vec<Option<u32>> = prefix.iter().map(|&id| Some(id)).collect();
        cells.resize(prefix.len() + len, None);
        Ok(MaskConstraint {
            checker,
            vocab,
            canvas: TokenCanvas::new(cells),
            offset: prefix.len(),
            prefix: bytes,
            stats: MaskStats::default(),
            lazy: false,
            checks_before_mask: LAZY_CHECKS,
            spellings: None,
            last_spelled: None,
            refused: Vec::new(),
            regions: vec![0; len],
        })
    }

    /// Computes a position's mask only when the pair it proposes is refused (see
    /// [`generate_masked`]).
    pub fn lazy(mut self) -> Self {
        self.lazy = true;
        self
    }

    /// Lazy masks, with `n` checks of a refused position's next best tokens before its mask
    /// is computed ([`LAZY_CHECKS`] by default; 0 computes the mask at the first refusal).
    pub fn lazy_checks(mut self, n: usize) -> Self {
        self.lazy = true;
        self.checks_before_mask = n;
        self
    }

    /// The ids that keep the canvas completable at masked `position` (ids whose check ran out
    /// of budget left out: see [`MaskConstraint::mask`]).
    pub fn allowed(&mut self, position: usize) -> Result<TokenMask> {
        Ok(self.mask(position)?.mask)
    }

    /// The mask of masked `position` and whether it is exact: with no id `unknown`, its
    /// complement is refused; else ids outside it may still be allowed (a single
    /// [`MaskConstraint::check`] decides one).
    pub fn mask(&mut self, position: usize) -> Result<PositionMask> {
        let t0 = Instant::now();
        let a = self
            .checker
            .allowed(&self.canvas, self.offset + position)
            .map_err(|e| DiffusionError::Sampler(format!("mask at position {position}: {e}")))?;
        self.stats.mask_time += t0.elapsed();
        self.stats.masks += 1;
        self.stats.unknown_ids += a.unknown as u64;
        let mut mask = a.mask;
        for &(_, id) in self.refused.iter().filter(|r| r.0 == position) {
            mask.remove(id);
        }
        if mask.is_empty() {
            self.stats.empty_masks += 1;
        }
        Ok(PositionMask {
            exact: a.unknown == 0,
            mask,
        })
    }

    /// Whether `id`, drawn from the mask of masked `position` on the canvas as it is now,
    /// may be placed there: a mask's ids need no check where masks are exact, and where they
    /// may be looser than the check of the placed id (ring bonds), that check decides. A
    /// refusal is kept until the canvas changes: the id leaves the position's masks and
    /// checks. A check that runs out of budget leaves the mask's word standing.
    ///
    /// Why: a mask judges a label its token writes but the canvas does not mention by parity
    /// (`C1CC` then `122` opens and closes `2` on one atom), and such a word, placed last,
    /// made an output that the grammar refuses (2 of 100 SMILES of the embedded model, whose
    /// tokens write several labels at once); the check of the placed token tracks its labels,
    /// and once no hole is left it is exact. Only grammars with ring bonds have masks looser
    /// than checks (DESIGN.md, *Ring bonds*, *Masks*).
    pub fn confirm(&mut self, position: usize, id: u32) -> bool {
        if self.checker.grammar().ring_bonds().is_none() {
            return true;
        }
        if self.verdict(position, id) != CheckVerdict::NotCompletable {
            return true;
        }
        self.refused.push((position, id));
        false
    }

    /// Whether `id` at masked `position` keeps the canvas completable (one check).
    pub fn check(&mut self, position: usize, id: u32) -> bool {
        self.verdict(position, id) == CheckVerdict::Completable
    }

    /// The check of `id` at masked `position`: `unknown` where it ran out of budget; not
    /// completable where `position` is not masked or the canvas cannot hold `id` (a
    /// forbidden id, an id past the vocabulary).
    pub fn verdict(&mut self, position: usize, id: u32) -> CheckVerdict {
        let at = self.offset + position;
        if self.canvas.cells.get(at) != Some(&None) || self.refused.contains(&(position, id)) {
            return CheckVerdict::NotCompletable;
        }
        let t0 = Instant::now();
        let verdict = self
            .checker
            .check_tokens(&self.canvas.with(at, id))
            .map_or(CheckVerdict::NotCompletable, |c| c.verdict);
        self.stats.check_time += t0.elapsed();
        self.stats.rechecks += 1;
        verdict
    }

    /// Places `id` at `position`; an end-of-output id fills every later position with it.
    /// Returns the positions that became end-of-output besides `position`.
    pub fn accept(&mut self, position: usize, id: u32) -> Vec<usize> {
        self.refused.clear();
        let mut filled = Vec::new();
        let offset = self.offset;
        let cells = &mut self.canvas.cells[offset..];
        if self.vocab.kind(id) == Some(TokenKind::Eos) {
            for (i, c) in cells.iter_mut().enumerate().skip(position + 1) {
                if *c != Some(id) {
                    *c = Some(id);
                    filled.push(i);
                }
            }
        }
        cells[position] = Some(id);
        filled
    }

    /// Inserts a masked position at `position` (the later ones move up by one).
    fn insert_mask(&mut self, position: usize) {
        let eos = self.cells()[..position]
            .iter()
            .flatten()
            .any(|&id| self.vocab.kind(id) == Some(TokenKind::Eos));
        debug_assert!(!eos, "no position is inserted after the end of the output");
        self.refused.clear();
        self.canvas.cells.insert(self.offset + position, None);
        // A position inserted into a run joins the run's region: it goes at a run's end, or
        // after an open position of it.
        let region = self
            .regions
            .get(position.saturating_sub(1))
            .copied()
            .unwrap_or(0);
        self.regions.insert(position, region);
    }

    /// Removes masked `position` (the later ones move down by one).
    fn remove_mask(&mut self, position: usize) {
        self.refused.clear();
        let removed = self.canvas.cells.remove(self.offset + position);
        debug_assert!(removed.is_none(), "only a masked position is removed");
        self.regions.remove(position);
    }

    /// The runs of masked positions before the first end-of-output id, as (first position,
    /// length), left to right, and whether each is the last thing of the output (nothing but
    /// the canvas's end or an end-of-output id after it).
    fn runs(&self) -> Vec<MaskRun> {
        let mut runs: Vec<MaskRun> = Vec::new();
        for o in self.open_positions() {
            match runs.last_mut() {
                Some(r) if r.start + r.len == o => r.len += 1,
                _ => runs.push(MaskRun {
                    start: o,
                    len: 1,
                    trailing: false,
                }),
            }
        }
        if let Some(r) = runs.last_mut() {
            r.trailing = match self.cells().get(r.start + r.len) {
                None => true,
                Some(&Some(id)) => self.vocab.kind(id) == Some(TokenKind::Eos),
                Some(None) => false,
            };
        }
        runs
    }

    /// For each run of masks ([`MaskConstraint::runs`]), the fewest of the vocabulary's text
    /// tokens that write what the grammar's completion puts there; `None` when the completion
    /// finds nothing within its budget or a filler is no sequence of text tokens.
    fn tokens_to_complete(&mut self) -> Option<Vec<usize>> {
        Some(self.spelled_fillers()?.iter().map(Vec::len).collect())
    }

    /// For each run of masks, the ids of the fewest tokens that write the grammar's filler
    /// there (see [`MaskConstraint::tokens_to_complete`]).
    fn spelled_fillers(&mut self) -> Option<Vec<Vec<u32>>> {
        let text = self.text_canvas().holey_text();
        if let Some((last, spelled)) = &self.last_spelled {
            if *last == text {
                return spelled.clone();
            }
        }
        let spelled = self.spell_fillers(&text);
        self.last_spelled = Some((text, spelled.clone()));
        spelled
    }

    fn spell_fillers(&mut self, text: &HoleyText) -> Option<Vec<Vec<u32>>> {
        if text.with_holes_merged().num_holes() != text.num_holes() {
            // Two runs with nothing between them (an id without bytes, which no mask
            // admits): the completion's holes would not be the runs.
            return None;
        }
        let t0 = Instant::now();
        let fillers = self.checker.fillers(text);
        self.stats.check_time += t0.elapsed();
        let fillers = fillers.ok()??;
        let spellings = self
            .spellings
            .get_or_insert_with(|| Spellings::new(&self.vocab));
        fillers.iter().map(|f| spellings.spell(f)).collect()
    }

    /// The masked positions before the first end-of-output id.
    fn open_positions(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for (i, c) in self.cells().iter().enumerate() {
            match c {
                None => out.push(i),
                Some(id) if self.vocab.kind(*id) == Some(TokenKind::Eos) => break,
                Some(_) => {}
            }
        }
        out
    }

    /// Whether no position is masked before the first end-of-output id.
    pub fn is_complete(&self) -> bool {
        for c in self.cells() {
            match c {
                None => return false,
                Some(id) if self.vocab.kind(*id) == Some(TokenKind::Eos) => return true,
                Some(_) => {}
            }
        }
        true
    }

    /// The output's bytes: the placed tokens up to the first end-of-output id (masks add
    /// nothing), without the prefix.
    pub fn text(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for id in self.cells().iter().flatten() {
            if self.vocab.kind(*id) == Some(TokenKind::Eos) {
                break;
            }
            out.extend_from_slice(self.vocab.bytes(*id));
        }
        out
    }

    /// Bytes of every placed text token of the output, EOS or not before them.
    fn text_bytes(&self) -> usize {
        self.cells()
            .iter()
            .flatten()
            .filter(|&&id| self.vocab.kind(id) == Some(TokenKind::Text))
            .map(|&id| self.vocab.bytes(id).len())
            .sum()
    }

    /// How many bytes the grammar's completion would add to the output's text (`None` when
    /// it finds none within its budget).
    fn left_to_complete(&mut self) -> Option<usize> {
        let text = self.completion().ok()?;
        Some(text.len().saturating_sub(self.text_bytes()))
    }

    /// A full output from the canvas: its text with every run of masks as a hole that the
    /// checker's completion fills (any text: the last resort, when positions ran out),
    /// without the prefix.
    pub fn completion(&mut self) -> Result<Vec<u8>> {
        let canvas = self.text_canvas();
        let t0 = Instant::now();
        let out = self.checker.complete(&canvas);
        self.stats.check_time += t0.elapsed();
        after_prefix(completed(out)?, &self.prefix)
    }

    /// The canvas as text: each placed id's bytes, masks as masks (a run of them is one hole
    /// of any text: text tokens are never empty), EOS as the end.
    fn text_canvas(&self) -> Canvas {
        let cells = self
            .canvas
            .cells
            .iter()
            .map(|c| match c {
                None => Cell::Mask,
                Some(id) if self.vocab.kind(*id) == Some(TokenKind::Eos) => Cell::Eos,
                Some(id) => Cell::Token(self.vocab.bytes(*id).to_vec()),
            })
            .collect();
        Canvas::new(cells)
    }

    /// The whole token canvas as the checker reads it: the prefix's ids, then the generated
    /// positions (placed ids, `None` where still masked). [`MaskConstraint::cells`] has the
    /// generated positions alone.
    pub fn canvas(&self) -> &TokenCanvas {
        &self.canvas
    }

    /// The vocabulary the canvas's ids are read in.
    pub fn vocabulary(&self) -> &Arc<Vocabulary> {
        &self.vocab
    }

    /// The cells of the generated positions, indexed as the methods' positions are.
    pub fn cells(&self) -> &[Option<u32>] {
        &self.canvas.cells[self.offset..]
    }

    /// The fixed prefix's bytes (empty for [`MaskConstraint::new`]).
    pub fn prefix(&self) -> &[u8] {
        &self.prefix
    }

    /// What the masks and checks have cost so far.
    pub fn stats(&self) -> MaskStats {
        self.stats
    }
}

impl fmt::Debug for MaskConstraint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaskConstraint")
            .field("canvas", &self.canvas)
            .field("offset", &self.offset)
            .field("vocab_len", &self.vocab.len())
            .field("stats", &self.stats)
            .field("lazy", &self.lazy)
            .field("checks_before_mask", &self.checks_before_mask)
            .finish_non_exhaustive()
    }
}

/// Generates `options.gen_length` tokens after `prompt` with `sampler`, every token drawn
/// from its position's valid-token mask. `constraint` covers the generated positions,
/// typically fresh; with a fixed prefix ([`MaskConstraint::with_prefix`]) the text is still
/// the generated part alone (the prompt is the caller's, so it typically ends with the
/// prefix's tokens).
///
/// The grammar steers the model's own distribution, so the model writes the output and nothing
/// is proposed only to be rejected.
///
/// At each step, every candidate position of the output gets its exact mask from the checker
/// ([`Checker::allowed`] on the token canvas of this generation), and its logits are set to
/// −∞ outside it *before* the sampler computes anything: the confidence (LLaDA), the entropy or
/// margin (Dream) and the token all come from the constrained, renormalized distribution.
/// The step's `k` tokens are then placed best first. The masks were computed on the canvas
/// before the step, so a pair after the first is checked again on the canvas that holds the
/// earlier ones; if it is refused, its position's mask is computed again on that canvas and
/// the position proposes its best token within it (a *redraw*).
///
/// *Lazy* masks ([`MaskConstraint::lazy`]) trade that ordering for speed: positions are
/// ranked by the model's unconstrained confidence, each proposed pair is checked (one check,
/// not a mask), and a refused position proposes its next best token, checked in turn; only
/// after [`LAZY_CHECKS`] refusals is its mask computed, and the position then proposes its
/// best token within it. The tokens still come from the constrained distribution at their
/// position (the best allowed token: the sampler's draw with the refused tokens left out is
/// its draw within the allowed ones), only the order of positions does not see the masks.
/// Where a mask comes out inexact (ids its budget left `unknown`, as inside long runs of
/// masks in C++), the position goes on checking the model's order, up to
/// [`CHECKS_PAST_INEXACT_MASK`] more, before it is held to the ids the mask allows.
///
/// Where the grammar's masks may allow what the check of the placed token refuses (ring
/// bonds), a pair drawn from a mask is placed only once that check confirms it
/// ([`MaskConstraint::confirm`]), so the last placement is checked with no hole left, exactly.
///
/// Ids whose mask check ran out of budget (`unknown`) are never proposed: never a guess. A
/// position whose mask is empty cannot be filled on this canvas; it is left masked (counted
/// in [`MaskStats::empty_masks`]). The token semantics read a long run of masks loosely (one
/// token, then any text: see [`crate::canvas::tokens`]), so an output can run out of
/// positions before the grammar lets it end (a JSON object whose required keys are not
/// written yet, two positions before the end). When the schedule is over, the model finishes
/// what is left: the model fills the masked positions one per forward pass, left to right,
/// each with its best token under the position's mask, in runs of masks first fitted to the
/// fewest tokens that write what the grammar's completion puts in them (a shorter run grows,
/// a longer one between placed text gives up positions when no token fits it); when no masked
/// position can be filled otherwise (a run too short for what it must bridge: each of its
/// positions reads the others exactly), each run gets one more masked position at its end (up to
/// [`GenerateOptions::max_extra_positions`]), and from then on the model's best tokens that
/// leave the grammar's completion less to write are preferred, so the output ends rather than
/// wanders. Every finishing token is also held within reach: kept only if the completion,
/// counted in the fewest tokens that spell it, still fits in the open positions and what is
/// left of that budget (else the model's next best that does, else the completion's own
/// first token, counted in [`GenerationStats::spelled_tokens`]), so the output ends in the
/// positions it has. The checker's completion writes the rest only where that fails (no
/// completion measured, or runs no token can fill past the budget); the record says so, and
/// how many bytes it wrote.
pub fn generate_masked(
    model: &dyn Model,
    sampler: &mut dyn Sampler,
    prompt: &[u32],
    options: &GenerateOptions,
    constraint: &mut MaskConstraint<'_>,
) -> Result<Generation> {
    let mask = model.mask_token_id();
    let n = options.gen_length;
    let p = prompt.len();
    covers(constraint.cells().len(), n)?;
    if constraint.vocab.len() < model.vocab_size() {
        return Err(DiffusionError::Sampler(format!(
            "the checker's vocabulary has {} ids, the model's logits {}",
            constraint.vocab.len(),
            model.vocab_size()
        )));
    }
    let (mut ids, mut rng) = start(model, sampler, prompt, options)?;
    // Fixed text of a template (infilling) is on the model's canvas from the start.
    for (i, cell) in constraint.cells().iter().enumerate() {
        if let Some(id) = *cell {
            ids[p + i] = id;
        }
    }
    let mut stats = GenerationStats::default();
    let before = constraint.stats();
    // Positions whose mask came out empty: no token can stand there on this canvas, nor on
    // any later one (the canvas only grows, so its completions only shrink).
    let mut stuck = vec![false; n];
    while let Some(mut plan) = sampler.plan(&ids, mask, &mut rng) {
        stats.steps += 1;
        plan.candidates.retain(|&c| c < p || !stuck[c - p]);
        if plan.candidates.is_empty() {
            continue;
        }
        let mut rows = step_rows(model, sampler, &ids, p, &plan.candidates, &mut stats)?;
        let t1 = Instant::now();
        let check_before = constraint.stats().mask_time + constraint.stats().check_time;
        let mut masks: Vec<Option<TokenMask>> = Vec::with_capacity(rows.len());
        for (row, &c) in rows.iter_mut().zip(&plan.candidates) {
            if c < p || constraint.lazy {
                masks.push(None);
                continue;
            }
            let allowed = constraint.allowed(c - p)?;
            if allowed.is_empty() {
                stuck[c - p] = true;
            }
            for (t, l) in row.iter_mut().enumerate() {
                if !allowed.contains(t as u32) {
                    *l = f32::NEG_INFINITY;
                }
            }
            masks.push(Some(allowed));
        }
        let banned: Vec<Vec<u32>> = vec![vec![mask]; plan.candidates.len()];
        let mut props = sampler.proposals(&plan, rows, &banned, &mut rng);
        for (&c, m) in plan.candidates.iter().zip(masks) {
            if let Some(m) = m {
                props.restrict(c, m);
            }
        }
        // Positions whose mask was computed on the canvas as it is now.
        let mut fresh: HashSet<usize> = if constraint.lazy {
            HashSet::new()
        } else {
            plan.candidates
                .iter()
                .copied()
                .filter(|&c| c >= p)
                .collect()
        };
        let mut lazy = LazyRefusals::default();
        let mut placed = 0;
        while placed < plan.k {
            let Some((pos, tok)) = props.next_best() else {
                break;
            };
            if pos < p {
                // A masked prompt position: not part of the constrained output.
                place(&mut ids, &mut props, pos, tok, []);
                placed += 1;
                continue;
            }
            // A pair drawn from a mask of this very canvas stands (once confirmed, where
            // masks may be looser than checks); others (drawn before an earlier pair of the
            // step was placed, or lazily with no mask) are checked against the canvas as it
            // is now.
            let verdict = if fresh.contains(&pos) {
                if !constraint.confirm(pos - p, tok) {
                    constraint.stats.redraws += 1;
                    props.reject(pos, tok);
                    continue;
                }
                CheckVerdict::Completable
            } else {
                constraint.verdict(pos - p, tok)
            };
            if verdict != CheckVerdict::Completable {
                constraint.stats.redraws += 1;
                if constraint.lazy {
                    let refused = Refused {
                        position: pos,
                        token: tok,
                        prompt_len: p,
                        unknown: verdict == CheckVerdict::Unknown,
                    };
                    stuck[pos - p] |= lazy.refused(constraint, &mut props, refused)?;
                    fresh.insert(pos);
                    continue;
                }
                let allowed = constraint.allowed(pos - p)?;
                if allowed.is_empty() {
                    stuck[pos - p] = true;
                }
                props.restrict(pos, allowed);
                fresh.insert(pos);
                continue;
            }
            fresh.clear();
            let filled = constraint.accept(pos - p, tok).into_iter().map(|q| q + p);
            place(&mut ids, &mut props, pos, tok, filled);
            placed += 1;
        }
        let s = constraint.stats();
        let spent = s.mask_time + s.check_time - check_before;
        stats.sampler_time += t1.elapsed().saturating_sub(spent);
        stats.checker_time = s.mask_time + s.check_time - before.mask_time - before.check_time;
        if constraint.is_complete() {
            break;
        }
    }
    if !constraint.is_complete() {
        finish(model, &mut ids, p, options, constraint, &mut stats)?;
    }
    let s = constraint.stats();
    // The finisher's masks and completions count as well (and the fallback's, below).
    stats.checker_time = s.mask_time + s.check_time - before.mask_time - before.check_time;
    stats.checks = s.rechecks - before.rechecks;
    stats.rejections = s.redraws - before.redraws;
    stats.masks = s.masks - before.masks;
    stats.mask_time = s.mask_time - before.mask_time;
    stats.unknown_ids = s.unknown_ids - before.unknown_ids;
    stats.empty_masks = s.empty_masks - before.empty_masks;
    stats.unfilled = constraint.cells().iter().filter(|c| c.is_none()).count();
    let text = if constraint.is_complete() {
        constraint.text()
    } else {
        stats.fallback = true;
        let t = constraint.completion()?;
        stats.completion_bytes = t.len().saturating_sub(constraint.text_bytes());
        stats.checker_time = constraint.stats().mask_time + constraint.stats().check_time
            - before.mask_time
            - before.check_time;
        t
    };
    Ok(Generation {
        ids: ids[p..].to_vec(),
        text,
        stats,
    })
}

/// Checks of a position's next best tokens, in the sampler's order, after its proposal was
/// refused and before its mask is computed (lazy masks).
///
/// Why: a check costs what one search of the canvas costs, a mask far more where the
/// position sits inside long runs of masks (a C++ position there runs into the mask's 2 s
/// limit, measured in `examples/mask_block.rs`), and the token drawn after `n` refusals is
/// the one the exact mask would give (the sampler's draw excluding refused tokens is its draw
/// within the allowed ones: the same scores, the best of a smaller set).
pub const LAZY_CHECKS: usize = 8;

/// Checks past an inexact mask (ids left `unknown` by its budget), in the sampler's order,
/// before the position is held to the ids the mask allows: the unknown ids may be the
/// model's best, and the ids a mask decides before its limit are in no order the model
/// chose (in C++, a comment's opening).
pub const CHECKS_PAST_INEXACT_MASK: usize = 64;

/// A pair of a step that its check refused.
#[derive(Clone, Copy, Debug)]
struct Refused {
    position: usize,
    token: u32,
    /// The prompt's length: `position` counts from the prompt's start, the constraint's
    /// positions from the output's.
    prompt_len: usize,
    /// Whether its check ran out of budget.
    unknown: bool,
}

/// A step's refusals under lazy masks, per position.
#[derive(Default)]
struct LazyRefusals {
    counts: HashMap<usize, usize>,
}

impl LazyRefusals {
    /// Answers a refused pair before the step goes on, so that the position ranks with its
    /// best allowed token, as its exact mask would make it: the position proposes its next
    /// best token (the refused one banned), checked in turn, until one is allowed or its
    /// checks are spent ([`MaskConstraint::lazy_checks`]); then its mask is computed and the
    /// position is restricted to it. Where the mask is inexact, the model's order is checked
    /// [`CHECKS_PAST_INEXACT_MASK`] tokens further (the ids the mask allows need no check)
    /// before the position is held to the mask. A check that runs out of budget ends the
    /// checks at once: it says the canvas is hard, not the token, and the next token's check
    /// would run out too (C++ positions between single masks: 0.4 s each on the embedded
    /// model, 77 of one output's 442 checks). Either way the position's proposal is allowed
    /// on the canvas as it is now, or it has none. Returns whether the position is stuck (its
    /// exact mask is empty).
    fn refused(
        &mut self,
        constraint: &mut MaskConstraint<'_>,
        props: &mut super::sampler::Proposals,
        r: Refused,
    ) -> Result<bool> {
        let before_mask = constraint.checks_before_mask;
        let at = r.position - r.prompt_len;
        let count = self.counts.entry(r.position).or_default();
        // An inexact mask of the canvas as it is now.
        let mut known: Option<TokenMask> = None;
        let (mut token, mut unknown) = (r.token, r.unknown);
        loop {
            *count += 1;
            props.reject(r.position, token);
            if known.is_none() && (*count > before_mask || unknown) {
                let m = constraint.mask(at)?;
                if m.exact {
                    let stuck = m.mask.is_empty();
                    props.restrict(r.position, m.mask);
                    return Ok(stuck);
                }
                known = Some(m.mask);
            }
            if let Some(k) =
                known.take_if(|_| *count > before_mask + CHECKS_PAST_INEXACT_MASK || unknown)
            {
                props.restrict(r.position, k);
                return Ok(false);
            }
            let Some(next) = props.current(r.position) else {
                return Ok(false);
            };
            if known.as_ref().is_some_and(|k| k.contains(next)) {
                return Ok(false);
            }
            match constraint.verdict(at, next) {
                CheckVerdict::Completable => return Ok(false),
                v => unknown = v == CheckVerdict::Unknown,
            }
            constraint.stats.redraws += 1;
            token = next;
        }
    }
}
