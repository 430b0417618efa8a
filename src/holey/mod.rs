//! Text with holes → one minimal DFA over lexemes.
//!
//! Every way of filling the holes yields a text, and every text a lexing (longest match, see
//! [`crate::lexicon`]). The lexeme sequences of all fillings form a regular language; this
//! module builds its minimal DFA directly, without enumerating lexings: a subset construction
//! over (place, lexer configuration) states ([`build`]), then trimming and Hopcroft
//! minimization ([`minimize`]). A lexeme may end inside a hole, start in one, or span holes and
//! the chunks between them; it is admitted only where the lexeme's own automaton runs through
//! the fixed bytes, so `whil□hile` is never one `while`.
//!
//! The configuration graph and hole summaries are cached in a [`HoleyLexer`] across calls, so
//! the per-check work is proportional to the canvas text, not to the lexicon.

mod chunk_cache;
pub mod config;
mod merge;
mod minimize;
mod nfa;
pub mod path_graph;
mod subset;
pub mod token_caches;
pub mod tokens;
mod walker;

use std::sync::Arc;

use crate::canvas::{HoleKind, HoleyText};
use crate::deadline::Deadline;
use crate::grammar::Grammar;
use crate::intersect::LexemeDfa;
use crate::lexicon::{Lexicon, LexiconError};

pub use config::{ConfigTable, TooLarge};
pub use nfa::PathMark;

/// Limits on the work of one lexing; exceeding one makes the check `unknown`.
#[derive(Clone, Copy, Debug)]
pub struct LexLimits {
    /// Configurations (and hole sets) cached per grammar.
    pub max_configs: usize,
    /// States of the lexeme automaton built for one canvas (subsets, for the minimal DFA).
    pub max_dfa_states: usize,
}

impl Default for LexLimits {
    fn default() -> Self {
        LexLimits {
            max_configs: 200_000,
            max_dfa_states: 500_000,
        }
    }
}

/// Sizes of what a [`HoleyLexer`] keeps between canvases.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheSizes {
    /// Lexer configurations interned (capped by [`LexLimits::max_configs`]).
    pub configs: usize,
    /// Hole sets interned (same cap).
    pub hole_sets: usize,
    /// Entries kept by chunk text (flows and hole edges).
    pub chunk_entries: usize,
    /// Bytes of chunk text those entries' keys hold.
    pub chunk_bytes: usize,
}

/// Builds lexeme DFAs for canvases of one grammar, caching the lexer's configuration graph.
pub struct HoleyLexer {
    lexicon: Lexicon,
    table: ConfigTable,
    min_cost: Vec<u32>,
    limits: LexLimits,
    flows: walker::FlowCache,
    nfa: nfa::NfaCaches,
    tokens: Option<token_caches::TokenCaches>,
    deadline: Deadline,
}

impl HoleyLexer {
    /// A lexer for `grammar`'s terminals, within `limits`.
    pub fn new(grammar: &Grammar, limits: LexLimits) -> Result<Self, LexiconError> {
        let lexicon = Lexicon::new(grammar)?;
        let min_cost = lexicon.shortest_lengths(grammar.terminals().len());
        let table = ConfigTable::new(&lexicon, limits.max_configs);
        Ok(HoleyLexer {
            lexicon,
            table,
            min_cost,
            limits,
            flows: walker::FlowCache::default(),
            nfa: nfa::NfaCaches::default(),
            tokens: None,
            deadline: Deadline::never(),
        })
    }

    /// Reads holes of one token ([`HoleKind::Token`]) with `vocab`'s tokens from now on:
    /// builds the vocabulary's trie over this grammar's byte classes.
    pub fn set_vocabulary(&mut self, vocab: Arc<crate::vocab::Vocabulary>) {
        self.tokens = Some(token_caches::TokenCaches::new(&self.lexicon, vocab));
    }

    /// The union of the paths of every token from the configuration set `set` (see
    /// [`tokens`]), and the text tokens grouped by the paths they take from `set` (each
    /// group's tokens are interchangeable at a position entered from `set`).
    #[allow(clippy::type_complexity)]
    pub fn token_groups(
        &mut self,
        set: config::HoleSetId,
    ) -> Result<(Arc<path_graph::TokenPaths>, Arc<[tokens::TokenGroup]>), TooLarge> {
        let caches = self.tokens.as_mut().ok_or(TooLarge)?;
        caches.grouped(&self.lexicon, &mut self.table, set)
    }

    /// The vocabulary and its trie, if one was set.
    pub fn token_caches(&self) -> Option<&token_caches::TokenCaches> {
        self.tokens.as_ref()
    }

    /// The grammar's lexer, as one DFA over byte classes.
    pub fn lexicon(&self) -> &Lexicon {
        &self.lexicon
    }

    /// The configuration table (for completion, which replays lexings byte by byte).
    pub fn parts(&mut self) -> (&Lexicon, &mut ConfigTable) {
        (&self.lexicon, &mut self.table)
    }

    /// An automaton (nondeterministic, trimmed) of all lexings of all fillings of `text`: the
    /// one the checker searches. See [`nfa`] for why it is not the DFA.
    pub fn automaton(&mut self, text: &HoleyText) -> Result<LexemeDfa, TooLarge> {
        self.automaton_of_kinds(text, &[])
    }

    /// [`HoleyLexer::automaton`] for holes filled as `kinds` says (a hole of one token needs a
    /// vocabulary: [`HoleyLexer::set_vocabulary`]).
    pub fn automaton_of_kinds(
        &mut self,
        text: &HoleyText,
        kinds: &[HoleKind],
    ) -> Result<LexemeDfa, TooLarge> {
        self.marked_automaton(text, kinds, None).map(|(dfa, _)| dfa)
    }

    /// [`HoleyLexer::automaton_of_kinds`] with hole `marked` (a hole of one token) marked:
    /// every path of a token through it ends in a state of its own, listed.
    pub fn marked_automaton(
        &mut self,
        text: &HoleyText,
        kinds: &[HoleKind],
        marked: Option<u32>,
    ) -> Result<(LexemeDfa, Vec<PathMark>), TooLarge> {
        let open = marked.map_or(nfa::OpenHole::None, nfa::OpenHole::Marked);
        self.build(text, kinds, open).map(|b| (b.dfa, b.marks))
    }

    /// The entry sets of hole `open` (a hole of one token) that the start reaches, without
    /// building the automaton past it ([`nfa::OpenHole::Probed`]).
    pub fn open_entry_sets(
        &mut self,
        text: &HoleyText,
        kinds: &[HoleKind],
        open: u32,
    ) -> Result<Vec<config::HoleSetId>, TooLarge> {
        self.build(text, kinds, nfa::OpenHole::Probed(open))
            .map(|b| b.entry_sets)
    }

    fn build(
        &mut self,
        text: &HoleyText,
        kinds: &[HoleKind],
        open: nfa::OpenHole,
    ) -> Result<nfa::Built, TooLarge> {
        nfa::build(
            &self.lexicon,
            &mut self.table,
            text,
            kinds,
            self.tokens.as_mut(),
            open,
            &self.min_cost,
            self.limits.max_dfa_states,
            &mut self.flows,
            &mut self.nfa,
            &self.deadline,
        )
    }

    /// Makes every later automaton construction give up (as too large) once `deadline`
    /// expires.
    pub fn set_deadline(&mut self, deadline: Deadline) {
        self.table.set_deadline(deadline.clone());
        self.deadline = deadline;
    }

    /// The minimal DFA of all lexings of all fillings of `text`.
    #[cfg(test)]
    pub fn dfa(&mut self, text: &HoleyText) -> Result<LexemeDfa, TooLarge> {
        let raw = subset::determinize(
            &self.lexicon,
            &mut self.table,
            text,
            &self.min_cost,
            self.limits.max_dfa_states,
            &mut self.flows,
        )?;
        Ok(minimize::minimize(&raw))
    }

    /// Empties the caches kept by chunk text (hole flows and hole members' edges); the
    /// grammar's configurations and hole sets stay.
    pub fn forget_chunks(&mut self) {
        self.flows = walker::FlowCache::default();
        self.nfa.forget_chunks();
    }

    /// Empties everything the lexer learned from canvases when its configuration table is
    /// crowded ([`ConfigTable::crowded`]); returns whether it did. Every cache keyed by
    /// configuration or hole-set ids goes with the table (their ids would dangle); the
    /// vocabulary's trie, which is the grammar's, stays. Call only between canvases: ids handed
    /// out before (entry sets, marks) are void after an eviction.
    pub fn evict_if_crowded(&mut self) -> bool {
        if !self.table.crowded() {
            return false;
        }
        self.table = ConfigTable::new(&self.lexicon, self.limits.max_configs);
        self.table.set_deadline(self.deadline.clone());
        self.flows = walker::FlowCache::default();
        self.nfa = nfa::NfaCaches::default();
        if let Some(tokens) = self.tokens.as_mut() {
            tokens.forget_sets();
        }
        true
    }

    /// What the lexer keeps between canvases, for callers that watch memory.
    pub fn cache_sizes(&self) -> CacheSizes {
        CacheSizes {
            configs: self.table.num_configs(),
            hole_sets: self.table.num_hole_sets(),
            chunk_entries: self.flows.len() + self.nfa.chunk_entries(),
            chunk_bytes: self.flows.key_bytes() + self.nfa.chunk_bytes(),
        }
    }
}
