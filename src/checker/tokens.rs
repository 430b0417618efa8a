//! Token canvases: checks under token-exact semantics, valid-token masks, and joint steps.
//!
//! A position's mask is the set of ids `t` such that the canvas with `t` there is still
//! completable, exactly as [`Checker::check_tokens`] would answer for each. It is computed
//! without a check per id: the configurations the lexer can be in where the token would begin
//! are found once ([`crate::holey::HoleyLexer::configs_at`]); the vocabulary's trie is walked
//! from them, pruning every subtree in which all of them die, and the surviving tokens are
//! grouped by *effect* (the terminals completed inside the token and the configuration after
//! it, from each of those configurations). Tokens of one effect give the same lexeme
//! automaton, so one check of one representative decides the whole group. End-of-output ids
//! are one more candidate (allowed where the output may end); forbidden ids never are.

use std::time::Instant;

use hashbrown::HashSet;

use super::{Check, CheckVerdict, Checker};
use crate::canvas::tokens::{read_tokens, TokenCanvas, TokenCanvasError, TokenReading};
use crate::canvas::{HoleKind, HoleyText};
use crate::holey::config::ConfigId;
use crate::holey::tokens::TokenPath;
use crate::holey::TooLarge;
use crate::vocab::{TokenId, TokenKind, TokenMask, Vocabulary};

/// One position's mask, with what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allowed {
    pub position: usize,
    /// The ids that keep the canvas completable.
    pub mask: TokenMask,
    /// Ids whose check ran out of budget: in neither the mask nor its complement (never a
    /// guess). Usually 0.
    pub unknown: usize,
    /// Groups of tokens with one effect that survived the trie walk.
    pub effects: usize,
    /// Canvas checks made (one per effect, and one for the end of output).
    pub checks: usize,
    pub micros: u64,
}

impl Checker {
    /// Reads canvases of `vocab`'s ids from now on ([`Checker::check_tokens`],
    /// [`Checker::allowed`]); builds the vocabulary's trie over this grammar's byte classes.
    pub fn set_vocabulary(&mut self, vocab: std::sync::Arc<Vocabulary>) {
        self.lexer.set_vocabulary(vocab);
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
        let t0 = Instant::now();
        let vocab = self.vocab()?;
        let reading = read_tokens(canvas, &vocab, None)?;
        let (verdict, dfa_states, items) = match reading {
            TokenReading::Broken(_) => (CheckVerdict::NotCompletable, 0, 0),
            TokenReading::Text { text, kinds, .. } => {
                match self.lexer.automaton_of_kinds(&text, &kinds) {
                    Err(_) => (CheckVerdict::Unknown, 0, 0),
                    Ok(dfa) => {
                        let v = self.search(&dfa, false);
                        (v, dfa.num_states(), self.searcher.stats().settled)
                    }
                }
            }
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
    /// is `unknown` are counted apart). See the [module docs](self).
    pub fn allowed(
        &mut self,
        canvas: &TokenCanvas,
        position: usize,
    ) -> Result<Allowed, TokenCanvasError> {
        let t0 = Instant::now();
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
        let mut out = Allowed {
            position,
            mask: TokenMask::new(vocab.len()),
            unknown: 0,
            effects: 0,
            checks: 0,
            micros: 0,
        };
        // The end of the output: allowed where no text token follows.
        let text_after = canvas.cells[position + 1..]
            .iter()
            .flatten()
            .any(|&id| vocab.kind(id) == Some(TokenKind::Text));
        if let (false, Some(eos)) = (text_after, vocab.eos_ids().next()) {
            out.checks += 1;
            let verdict = self.check_tokens(&canvas.with(position, eos))?.verdict;
            self.tally(&mut out, verdict, vocab.eos_ids());
        }
        if let TokenReading::Text {
            text,
            kinds,
            open_hole: Some(hole),
        } = read_tokens(canvas, &vocab, Some(position))?
        {
            match self.text_tokens_allowed(&text, &kinds, hole as u32, &mut out) {
                Ok(()) => {}
                Err(TooLarge) => out.unknown = vocab.text_ids().count(),
            }
        }
        out.micros = t0.elapsed().as_micros() as u64;
        Ok(out)
    }

    /// Adds to `out` the text tokens allowed in hole `hole` of `text`, a hole of one token: one
    /// search marks the paths through the hole that some accepted word takes, and a token is
    /// allowed iff one of its paths (from a configuration of the hole's entry set) is marked.
    fn text_tokens_allowed(
        &mut self,
        text: &HoleyText,
        kinds: &[HoleKind],
        hole: u32,
        out: &mut Allowed,
    ) -> Result<(), TooLarge> {
        let t0 = Instant::now();
        let (dfa, marks) = self.lexer.marked_automaton(text, kinds, Some(hole))?;
        let t1 = t0.elapsed();
        out.checks += 1;
        let useful = self
            .searcher
            .useful_states(&self.normal, &dfa, self.budgets.search);
        let t2 = t0.elapsed();
        if std::env::var("DBG").is_ok() {
            eprintln!(
                "nfa {:?} ({} states, {} edges, {} marks) search {:?} settled {} work {} ok {}",
                t1,
                dfa.num_states(),
                dfa.edges().len(),
                marks.len(),
                t2 - t1,
                self.searcher.stats().settled,
                self.searcher.stats().work,
                useful.is_some()
            );
        }
        let useful = useful.ok_or(TooLarge)?;
        let mut entries: Vec<ConfigId> = Vec::new();
        let mut taken: HashSet<(ConfigId, TokenPath)> = HashSet::new();
        for mark in &marks {
            let configs = self.lexer.config_set(mark.set).to_vec();
            if mark.state.is_some_and(|s| useful[s as usize]) {
                let path = self.lexer.token_paths(mark.set)?.paths[mark.path as usize].clone();
                for &c in &configs {
                    taken.insert((c, path.clone()));
                }
            }
            entries.extend(configs);
        }
        if taken.is_empty() {
            return Ok(());
        }
        entries.sort_unstable();
        entries.dedup();
        let t3 = Instant::now();
        let effects = self.lexer.effects(&entries)?;
        if std::env::var("DBG").is_ok() {
            eprintln!("effects {:?} from {} entries", t3.elapsed(), entries.len());
        }
        out.effects = effects.len();
        for effect in effects {
            let allowed = effect
                .paths
                .iter()
                .any(|(e, path)| taken.contains(&(entries[*e as usize], path.clone())));
            if allowed {
                effect.tokens.iter().for_each(|&id| out.mask.insert(id));
            }
        }
        Ok(())
    }

    fn tally(&self, out: &mut Allowed, verdict: CheckVerdict, ids: impl Iterator<Item = TokenId>) {
        match verdict {
            CheckVerdict::Completable => ids.for_each(|id| out.mask.insert(id)),
            CheckVerdict::NotCompletable => {}
            CheckVerdict::Unknown => out.unknown += ids.count(),
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
