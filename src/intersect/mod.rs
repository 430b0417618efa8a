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
mod ring_bonds;
mod search;

#[cfg(test)]
pub use dfa::StateId;
pub use dfa::{Edge, LexemeDfa};
pub(crate) use ring_bonds::MAX_HOLEY_DEPTH;
pub use ring_bonds::{ProductMode, ProductTooLarge, RingProduct};
pub use search::{Searcher, Verdict, DEFAULT_BUDGET};
#[cfg(test)]
use {crate::grammar::NormalGrammar, search::Witness};

#[cfg(test)]
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
