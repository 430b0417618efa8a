#![warn(missing_docs)]
//! lacuna: grammar-constrained decoding for diffusion and infilling language models.
//!
//! See `DESIGN.md` for the data flow: a grammar is normalized once ([`grammar`]); a canvas
//! with holes becomes a lexeme automaton; the two meet in the emptiness search of
//! [`intersect`], whose witness yields a completion.

pub mod canvas;
pub mod checker;
#[cfg(feature = "cli")]
pub mod cli;
mod complete;
pub mod deadline;
#[cfg(feature = "models")]
pub mod diffusion;
pub mod grammar;
mod holey;
mod intersect;
mod lexicon;
#[cfg(test)]
mod tests;
#[cfg(feature = "models")]
pub mod train;
pub mod vocab;

/// Not a stable API: the emptiness search on lexeme automata, exposed only for lacuna's own
/// micro-benchmarks (`cargo bench --features internals --bench core`).
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    pub use crate::holey::{HoleyLexer, LexLimits};
    pub use crate::intersect::{Edge, LexemeDfa, Searcher, Verdict, DEFAULT_BUDGET};
}
