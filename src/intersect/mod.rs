//! Emptiness of the intersection of a normalized grammar and a lexeme automaton, with
//! witnesses.
//!
//! This module sees lexeme ids and automaton states, never text: the checker turns a canvas
//! into a [`LexemeDfa`], and a [`Searcher`] answers whether the grammar derives some lexeme
//! sequence the automaton accepts. A witness (the edges of one such sequence, cheapest first)
//! is what the completion is built from.

mod anchors;
mod dfa;
mod items;
mod search;

pub use dfa::{DfaError, Edge, LexemeDfa, StateId, MAX_STATES};
pub use search::{
    SearchStats, Searcher, Useful, Verdict, Witness, DEFAULT_BUDGET, MAX_NONTERMINALS,
};

use crate::grammar::NormalGrammar;

/// One-shot search: the verdict and, when non-empty, a cheapest witness.
pub fn intersect(
    grammar: &NormalGrammar,
    dfa: &LexemeDfa,
    budget: u64,
) -> (Verdict, Option<Witness>) {
    let mut s = Searcher::new();
    let v = s.search(grammar, dfa, budget);
    (v, s.witness())
}
