//! Token canvases: checks under token-exact semantics, valid-token masks, and joint steps.
//!
//! A position's mask is the set of ids `t` such that the canvas with `t` there is still
//! completable, exactly as [`Checker::check_tokens`] would answer for each. It is computed
//! without a check per id. The canvas is read with the position open (a hole of one token of
//! its own); each set of lexer configurations the hole can be entered from gets the paths of
//! every token from it (the terminals completed inside the token and the configuration after
//! it), from one walk of the vocabulary's trie that also groups the tokens by the paths they
//! take ([`crate::holey::HoleyLexer::token_groups`]). One search over the automaton with every
//! path marked says which paths some accepted word takes, and a group is allowed iff one of
//! its paths is. Where that search runs out of budget, tokens that fall in the same group from
//! every entry set (an *effect*) give the same lexeme automaton, so one check of one of them
//! decides all of them. End-of-output ids are one more candidate (allowed where the output may
//! end); forbidden ids never are.

use std::time::Instant;

use hashbrown::{HashMap, HashSet};

use super::mask_memo::{Reading, TextTokens};
use super::{Check, CheckVerdict, Checker};
use crate::canvas::tokens::{read_tokens, TokenCanvas, TokenCanvasError, TokenReading};
use crate::canvas::{HoleKind, HoleyText};
use crate::holey::config::HoleSetId;
use crate::holey::tokens::GroupUnion;
use crate::holey::PathMark;
use crate::holey::TooLarge;
use crate::intersect::{LexemeDfa, ProductTooLarge};
use crate::vocab::{TokenId, TokenKind, TokenMask, Vocabulary};

/// One position's mask, with what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allowed {
    /// The masked position the mask is for.
    pub position: usize,
    /// The ids that keep the canvas completable.
    pub mask: TokenMask,
    /// Ids whose check ran out of budget: in neither the mask nor its complement (never a
    /// guess). Usually 0.
    pub unknown: usize,
    /// Groups of tokens that take the same paths from one entry set, summed over the position's
    /// entry sets (when decided by checks: the effects checked or left unknown).
    pub effects: usize,
    /// Searches made (one for the marked automaton, or one check per effect; and one for the
    /// end of output); none for a part answered from the checker's memo of exact answers, kept
    /// by canvas reading (positions deep inside one long run of masks are read alike).
    pub checks: usize,
    /// Whether the effects were decided by one check each (the one-search route ran out of
    /// budget).
    pub by_checks: bool,
    /// Wall-clock time of the mask, in microseconds.
    pub micros: u64,
}

impl Allowed {
    /// The empty mask of `position` over `vocab_len` ids, nothing counted yet.
    fn nothing_yet(position: usize, vocab_len: usize) -> Allowed {
        Allowed {
            position,
            mask: TokenMask::new(vocab_len),
            unknown: 0,
            effects: 0,
            checks: 0,
            by_checks: false,
            micros: 0,
        }
    }
}

impl Checker {
    /// Reads canvases of `vocab`'s ids from now on ([`Checker::check_tokens`],
    /// [`Checker::allowed`]); builds the vocabulary's trie over this grammar's byte classes.
    pub fn set_vocabulary(&mut self, vocab: std::sync::Arc<Vocabulary>) {
        self.lexer.set_vocabulary(vocab);
        self.memo.clear();
    }

    /// The vocabulary token canvases are read with, if one was set.
    pub fn vocabulary(&self) -> Option<&std::sync::Arc<Vocabulary>> {
        self.lexer.token_caches().map(|t| &t.vocab)
    }

    fn vocab(&self) -> Result<std::sync::Arc<Vocabulary>, TokenCanvasError> {
        self.vocabulary()
            .cloned()
            .ok_or(TokenCanvasError::NoVocabulary)
    }

    /// Whether the masked positions of a token canvas can be filled, one text token each (or
    /// the end of the output, where it may end), so that the output is a word of the grammar.
    /// See [`crate::canvas::tokens`] for the semantics.
    pub fn check_tokens(&mut self, canvas: &TokenCanvas) -> Result<Check, TokenCanvasError> {
        self.evict_if_crowded();
        self.check_tokens_in_place(canvas)
    }

    /// [`Checker::check_tokens`] without the eviction, for checks made while the lexer's ids
    /// (entry sets) are held.
    fn check_tokens_in_place(&mut self, canvas: &TokenCanvas) -> Result<Check, TokenCanvasError> {
        let t0 = Instant::now();
        let vocab = self.vocab()?;
        let reading = read_tokens(canvas, &vocab, None)?;
        let (verdict, dfa_states, items) = match reading {
            TokenReading::Broken(_) => (CheckVerdict::NotCompletable, 0, 0),
            TokenReading::Text { text, kinds, .. } => self.search_kinds(&text, &kinds),
        };
        Ok(Check {
            verdict,
            dfa_states,
            items,
            micros: t0.elapsed().as_micros() as u64,
        })
    }

    /// The ids that may stand at masked `position`: exactly those `t` for which
    /// [`Checker::check_tokens`] calls the canvas with `t` there completable (ids whose check
    /// is `unknown` are counted apart). (How: `src/checker/tokens.rs`.)
    ///
    /// ```
    /// use std::sync::Arc;
    /// use lacuna::canvas::tokens::TokenCanvas;
    /// use lacuna::checker::Checker;
    /// use lacuna::vocab::Vocabulary;
    ///
    /// // ids 0..4: `[`, `]`, `1`, `,`; id 4 ends the output.
    /// let words = ["[", "]", "1", ",", "</s>"];
    /// let bytes = words.iter().map(|w| w.as_bytes().to_vec()).collect();
    /// let vocab = Vocabulary::new(bytes, &[4], &[]);
    /// let grammar = lacuna::grammar::spec::load("json").unwrap();
    /// let mut checker = Checker::with_vocabulary(grammar, Arc::new(vocab)).unwrap();
    /// // `[ □ ]`: exactly one token between the brackets.
    /// let canvas = TokenCanvas::new(vec![Some(0), None, Some(1)]);
    /// let allowed = checker.allowed(&canvas, 1).unwrap();
    /// assert_eq!(allowed.mask.ids().collect::<Vec<_>>(), [2]); // only `1`
    /// // `[ □ □`: the output ends after at most two tokens: `1` then `]`, or `]` then the end.
    /// let open = TokenCanvas::new(vec![Some(0), None, None]);
    /// assert_eq!(checker.allowed(&open, 2).unwrap().mask.ids().collect::<Vec<_>>(), [1, 4]);
    /// ```
    pub fn allowed(
        &mut self,
        canvas: &TokenCanvas,
        position: usize,
    ) -> Result<Allowed, TokenCanvasError> {
        let t0 = Instant::now();
        self.under_mask_limit(t0, |c| c.allowed_by(canvas, position, t0))
    }

    /// Runs `mask` under the mask's time limit from `t0` (and never past the caller's
    /// deadline), then gives the caller's deadline back, whatever `mask` returned. The limit
    /// bounds all of a mask's work (the one search and the automaton it searches, not only
    /// the per-effect checks), as the caller's deadline does.
    fn under_mask_limit<T>(&mut self, t0: Instant, mask: impl FnOnce(&mut Checker) -> T) -> T {
        let Some(limit) = self.budgets.mask_deadline else {
            return mask(self);
        };
        let caller = self.deadline.clone();
        self.set_deadline(caller.no_later_than(t0 + limit));
        let out = mask(self);
        self.set_deadline(caller);
        out
    }

    /// [`Checker::allowed`] under the deadline already set; `t0` is when the mask began.
    fn allowed_by(
        &mut self,
        canvas: &TokenCanvas,
        position: usize,
        t0: Instant,
    ) -> Result<Allowed, TokenCanvasError> {
        self.evict_if_crowded();
        let vocab = self.vocab()?;
        match canvas.cells.get(position) {
            None => {
                return Err(TokenCanvasError::PositionOutOfRange {
                    position,
                    len: canvas.len(),
                })
            }
            Some(Some(id)) => return Err(TokenCanvasError::NotMasked { position, id: *id }),
            Some(None) => {}
        }
        let mut out = Allowed::nothing_yet(position, vocab.len());
        // The end of the output: allowed where no text token follows.
        let text_after = canvas.cells[position + 1..]
            .iter()
            .flatten()
            .any(|&id| vocab.kind(id) == Some(TokenKind::Text));
        if let (false, Some(eos)) = (text_after, vocab.eos_ids().next()) {
            let verdict = match read_tokens(&canvas.with(position, eos), &vocab, None)? {
                TokenReading::Broken(_) => CheckVerdict::NotCompletable,
                TokenReading::Text { text, kinds, .. } => {
                    let reading = Reading::check(&text, &kinds);
                    match self.memo.verdict(&reading) {
                        Some(v) => v,
                        None => {
                            out.checks += 1;
                            let v = self.search_kinds(&text, &kinds).0;
                            self.memo.keep_verdict(reading, v);
                            v
                        }
                    }
                }
            };
            self.tally(&mut out, verdict, vocab.eos_ids());
        }
        if let TokenReading::Text {
            text,
            kinds,
            open_hole: Some(hole),
        } = read_tokens(canvas, &vocab, Some(position))?
        {
            let by = self.text_tokens_allowed(
                Placement::Canvas(canvas, position),
                &text,
                &kinds,
                hole as u32,
                &mut out,
            );
            if let Err(TooLarge) = by {
                out.unknown += vocab.text_ids().count();
            }
        }
        out.micros = t0.elapsed().as_micros() as u64;
        Ok(out)
    }

    /// Adds to `out` the text tokens allowed in hole `hole` of `text` (the reading of `canvas`
    /// with `position` open), a hole of one token.
    ///
    /// One search marks the paths through the hole that some accepted word takes, and a token
    /// is allowed iff one of its paths (from a configuration of the hole's entry set) is
    /// marked. That search is exhaustive, so it can run out of budget (long runs of masks on
    /// both sides), and the automaton with every path of the hole can be too large (C++ after
    /// a long run, where the entry set holds most configurations). Then each *effect* is
    /// decided by a check of the canvas with one of its tokens placed: goal-directed checks
    /// stop at the first derivation, so the answer stays exact, at the cost of one check per
    /// effect.
    ///
    /// Answered from the memo when the same reading was answered exactly before (every
    /// position deep inside a long run of masks is read alike; see [`super::mask_memo`]).
    fn text_tokens_allowed(
        &mut self,
        placement: Placement<'_>,
        text: &HoleyText,
        kinds: &[HoleKind],
        hole: u32,
        out: &mut Allowed,
    ) -> Result<(), TooLarge> {
        let reading = Reading::mask(text, kinds, hole, matches!(placement, Placement::Text));
        if let Some(known) = self.memo.mask(&reading) {
            out.mask.union_with(&known.mask);
            out.effects += known.effects;
            return Ok(());
        }
        let mut part = Allowed::nothing_yet(out.position, out.mask.vocab_len());
        self.text_tokens_searched(placement, text, kinds, hole, &mut part)?;
        out.mask.union_with(&part.mask);
        out.unknown += part.unknown;
        out.effects += part.effects;
        out.checks += part.checks;
        out.by_checks |= part.by_checks;
        if part.unknown == 0 {
            let answer = TextTokens {
                mask: part.mask,
                effects: part.effects,
            };
            self.memo.keep_mask(reading, answer);
        }
        Ok(())
    }

    /// [`Checker::text_tokens_allowed`], computed.
    fn text_tokens_searched(
        &mut self,
        placement: Placement<'_>,
        text: &HoleyText,
        kinds: &[HoleKind],
        hole: u32,
        out: &mut Allowed,
    ) -> Result<(), TooLarge> {
        let loose = loosened(kinds, Some(hole as usize));
        let built = self
            .lexer
            .marked_automaton(text, kinds, Some(hole))
            // The other holes' token paths made the automaton too large: read them loosely.
            .or_else(|TooLarge| self.lexer.marked_automaton(text, &loose, Some(hole)));
        // The open hole's entry sets, and (when the one search finished) the paths from each
        // that some accepted word takes.
        let mut sets: Vec<HoleSetId> = Vec::new();
        let mut taken: Option<HashSet<(HoleSetId, u32)>> = None;
        match built {
            Ok((dfa, marks)) => {
                out.checks += 1;
                taken = self.taken_paths(&dfa, &marks, text);
                sets.extend(marks.iter().map(|m| m.set));
            }
            Err(TooLarge) => sets = self.lexer.open_entry_sets(text, &loose, hole)?,
        }
        sets.sort_unstable();
        sets.dedup();
        if let Some(taken) = taken {
            // A token is allowed iff, from one of the entry sets, one of its paths is taken.
            // Sets none of whose paths is taken allow nothing: their tokens are not grouped
            // (after a run of masks the open hole has dozens of entry sets, most of them dead
            // ends, and grouping one walks the whole vocabulary).
            let live: HashSet<HoleSetId> = taken.iter().map(|&(set, _)| set).collect();
            let mut allowed = GroupUnion::default();
            for &set in sets.iter().filter(|&s| live.contains(s)) {
                if self.deadline.expired() {
                    // The ids allowed so far are; the others are undecided.
                    allowed.ids().for_each(|id| out.mask.insert(id));
                    out.unknown += self.undecided_text_ids(out);
                    return Ok(());
                }
                let (_, groups) = self.lexer.token_groups(set)?;
                out.effects += groups.len();
                for g in groups.iter() {
                    if g.paths.iter().any(|&p| taken.contains(&(set, p))) {
                        allowed.add(g);
                    }
                }
            }
            allowed.ids().for_each(|id| out.mask.insert(id));
            return Ok(());
        }
        out.by_checks = true;
        if self.deadline.expired() {
            out.unknown += self.undecided_text_ids(out);
            return Ok(());
        }
        let effects = self.effects(&sets)?;
        out.effects = effects.len();
        let mut work = 0;
        for tokens in effects {
            if out.checks > self.budgets.mask_checks
                || work > self.budgets.search * self.budgets.mask_work_factor
                || self.deadline.expired()
            {
                out.unknown += tokens.len();
                continue;
            }
            out.checks += 1;
            let verdict = match placement {
                // The canvas was read already, so this check cannot fail; if it did, the
                // effect would count as unknown, never as a guess.
                Placement::Canvas(canvas, position) => self
                    .check_tokens_in_place(&canvas.with(position, tokens[0]))
                    .map_or(CheckVerdict::Unknown, |c| c.verdict),
                Placement::Text => {
                    let bytes = self.vocab().map(|v| v.bytes(tokens[0]).to_vec());
                    let bytes = bytes.unwrap_or_default();
                    self.check_placed_in_text(text, kinds, hole as usize, &bytes)
                }
            };
            work += self.searcher.stats().work;
            self.tally(out, verdict, tokens.iter().copied());
        }
        Ok(())
    }

    /// The paths of `marks` (through the open hole of `dfa`, the marked automaton of `text`)
    /// that some accepted word takes, under the grammar's ring bonds if it has them. `None`
    /// when the search (or the product) ran out.
    fn taken_paths(
        &mut self,
        dfa: &LexemeDfa,
        marks: &[PathMark],
        text: &HoleyText,
    ) -> Option<HashSet<(HoleSetId, u32)>> {
        let wanted: Vec<(u32, u32)> = marks
            .iter()
            .filter_map(|m| m.from.map(|from| m.to.iter().map(move |&to| (from, to))))
            .flatten()
            .collect();
        let budget = self.budgets.search * self.budgets.mask_search_factor;
        let under_rings = match self.constrained(dfa, text) {
            // Under the grammar's ring bonds: the product's copies of the marks.
            Ok(Some(p)) => self
                .searcher
                .useful_epsilons(&self.normal, &p.dfa, budget, &p.epsilons_copying(&wanted))
                .map(|used| p.original_epsilons(&used)),
            Ok(None) | Err(ProductTooLarge) => None,
        };
        // Without ring bonds, or where their product ran out: the grammar alone (see
        // `Checker::search`).
        let used = match under_rings {
            Some(used) => used,
            None => self
                .searcher
                .useful_epsilons(&self.normal, dfa, budget, &wanted)?,
        };
        Some(
            marks
                .iter()
                .filter(|m| {
                    m.from
                        .is_some_and(|from| m.to.iter().any(|&to| used.contains(&(from, to))))
                })
                .map(|m| (m.set, m.path))
                .collect(),
        )
    }

    /// How many text ids `out` does not allow yet: those a mask stopped by its deadline leaves
    /// undecided.
    fn undecided_text_ids(&self, out: &Allowed) -> usize {
        self.vocab()
            .map(|v| v.text_ids().filter(|&id| !out.mask.contains(id)).count())
            .unwrap_or(0)
    }

    /// The text tokens that can enter the open hole from one of `sets`, grouped by *effect*:
    /// tokens of one group take the same paths from every set, so one check of one of them
    /// decides the group.
    fn effects(&mut self, sets: &[HoleSetId]) -> Result<Vec<Vec<TokenId>>, TooLarge> {
        if let [set] = sets {
            let (_, groups) = self.lexer.token_groups(*set)?;
            return Ok(groups.iter().map(|g| g.tokens().collect()).collect());
        }
        // Each token's group in each set, as its key.
        let mut keys: HashMap<TokenId, Vec<u32>> = HashMap::new();
        for (i, &set) in sets.iter().enumerate() {
            // Past the deadline every effect would be unknown: none is worth its trie walk
            // (the caller counts every text id unknown).
            if self.deadline.expired() {
                return Err(TooLarge);
            }
            let (_, groups) = self.lexer.token_groups(set)?;
            for (j, g) in groups.iter().enumerate() {
                for id in g.tokens() {
                    keys.entry(id).or_default().extend([i as u32, j as u32]);
                }
            }
        }
        let mut by_key: HashMap<Vec<u32>, Vec<TokenId>> = HashMap::new();
        for (id, key) in keys {
            by_key.entry(key).or_default().push(id);
        }
        let mut effects: Vec<Vec<TokenId>> = by_key.into_values().collect();
        // In id order, so which effects a budget leaves unknown does not vary between runs.
        effects.iter_mut().for_each(|e| e.sort_unstable());
        effects.sort_unstable();
        Ok(effects)
    }

    fn tally(&self, out: &mut Allowed, verdict: CheckVerdict, ids: impl Iterator<Item = TokenId>) {
        match verdict {
            CheckVerdict::Completable => ids.for_each(|id| out.mask.insert(id)),
            CheckVerdict::NotCompletable => {}
            CheckVerdict::Unknown => out.unknown += ids.count(),
        }
    }

    /// The text tokens that may fill hole `hole` of `text` (a hole of one token), the other
    /// holes read as `kinds` says: the mask of a position whose surroundings are text, not
    /// token ids. A fill-in-the-middle frontier is one: the token, then any text, then the
    /// suffix (see [`crate::infill`]). End-of-output ids are never in it. Exact as
    /// [`Checker::allowed`] is, and under the same budgets and time limit.
    pub fn allowed_in_text(
        &mut self,
        text: &HoleyText,
        kinds: &[HoleKind],
        hole: usize,
    ) -> Result<Allowed, TokenCanvasError> {
        if kinds.len() != text.num_holes() {
            return Err(TokenCanvasError::HoleKinds {
                holes: text.num_holes(),
                kinds: kinds.len(),
            });
        }
        if hole >= kinds.len() {
            return Err(TokenCanvasError::PositionOutOfRange {
                position: hole,
                len: kinds.len(),
            });
        }
        let t0 = Instant::now();
        let vocab = self.vocab()?;
        let mut kinds = kinds.to_vec();
        kinds[hole] = HoleKind::Token;
        let mut out = Allowed::nothing_yet(hole, vocab.len());
        self.under_mask_limit(t0, |c| {
            c.evict_if_crowded();
            let by = c.text_tokens_allowed(Placement::Text, text, &kinds, hole as u32, &mut out);
            if let Err(TooLarge) = by {
                out.unknown += vocab.text_ids().count();
            }
        });
        out.micros = t0.elapsed().as_micros() as u64;
        Ok(out)
    }

    /// Whether `text` with `bytes` in hole `hole` (and the other holes read as `kinds` says)
    /// is completable.
    fn check_placed_in_text(
        &mut self,
        text: &HoleyText,
        kinds: &[HoleKind],
        hole: usize,
        bytes: &[u8],
    ) -> CheckVerdict {
        let mut chunks = text.chunks.clone();
        let right = chunks.remove(hole + 1);
        chunks[hole].extend_from_slice(bytes);
        chunks[hole].extend_from_slice(&right);
        let mut kinds = kinds.to_vec();
        kinds.remove(hole);
        self.search_kinds(&HoleyText { chunks }, &kinds).0
    }

    /// Whether `text`, its holes read as `kinds` says, is completable; with the lexeme
    /// automaton's states and the items the search settled (0, 0 when lexing ran out of
    /// budget).
    fn search_kinds(&mut self, text: &HoleyText, kinds: &[HoleKind]) -> (CheckVerdict, usize, u64) {
        let built = self
            .lexer
            .automaton_of_kinds(text, kinds)
            .or_else(|TooLarge| {
                // Token paths from large entry sets (long runs of masks in C++) can make the
                // automaton too large: read the holes loosely, as any text.
                self.lexer.automaton_of_kinds(text, &loosened(kinds, None))
            });
        match built {
            Err(_) => (CheckVerdict::Unknown, 0, 0),
            Ok(dfa) => {
                let v = self.search(&dfa, text, false);
                (v, dfa.num_states(), self.searcher.stats().settled)
            }
        }
    }

    /// The masks of several positions of one canvas (work is shared through the checker's
    /// caches).
    pub fn allowed_many(
        &mut self,
        canvas: &TokenCanvas,
        positions: &[usize],
    ) -> Result<Vec<Allowed>, TokenCanvasError> {
        positions.iter().map(|&p| self.allowed(canvas, p)).collect()
    }

    /// How many of `pairs` (position, id), placed in order, keep the canvas completable: the
    /// first `n` are accepted, the `n + 1`-th (if any) is not. The canvas is not changed.
    pub fn validate(
        &mut self,
        canvas: &TokenCanvas,
        pairs: &[(usize, TokenId)],
    ) -> Result<usize, TokenCanvasError> {
        let mut c = canvas.clone();
        self.place(&mut c, pairs)
    }

    /// [`Checker::validate`], placing the accepted pairs on the canvas.
    pub fn commit(
        &mut self,
        canvas: &mut TokenCanvas,
        pairs: &[(usize, TokenId)],
    ) -> Result<usize, TokenCanvasError> {
        self.place(canvas, pairs)
    }

    fn place(
        &mut self,
        canvas: &mut TokenCanvas,
        pairs: &[(usize, TokenId)],
    ) -> Result<usize, TokenCanvasError> {
        for (n, &(position, id)) in pairs.iter().enumerate() {
            match canvas.cells.get(position) {
                None => {
                    return Err(TokenCanvasError::PositionOutOfRange {
                        position,
                        len: canvas.len(),
                    })
                }
                Some(Some(held)) => {
                    return Err(TokenCanvasError::NotMasked {
                        position,
                        id: *held,
                    })
                }
                Some(None) => {}
            }
            canvas.cells[position] = Some(id);
            if self.check_tokens(canvas)?.verdict != CheckVerdict::Completable {
                canvas.cells[position] = None;
                return Ok(n);
            }
        }
        Ok(pairs.len())
    }
}

/// Where the one-check-per-effect fallback of a mask places a token.
#[derive(Copy, Clone)]
enum Placement<'a> {
    /// At a masked position of a token canvas.
    Canvas(&'a TokenCanvas, usize),
    /// Into the open hole of the text (its bytes joined with the chunks around it).
    Text,
}

/// `kinds` with every hole but `keep` read as any text: a superset of what its tokens can
/// write, so a check on it never rejects what the tokens could complete (it may accept more).
fn loosened(kinds: &[HoleKind], keep: Option<usize>) -> Vec<HoleKind> {
    kinds
        .iter()
        .enumerate()
        .map(|(i, &k)| if Some(i) == keep { k } else { HoleKind::Any })
        .collect()
}
