//! lacuna: grammar-constrained decoding for diffusion and infilling language models.
//!
//! See `DESIGN.md` for the data flow: a grammar is normalized once ([`grammar`]); a canvas
//! with holes becomes a lexeme automaton; the two meet in the emptiness search of
//! [`intersect`], whose witness yields a completion.

pub mod canvas;
pub mod checker;
pub mod cli;
pub mod complete;
pub mod diffusion;
pub mod grammar;
pub mod holey;
pub mod intersect;
pub mod lexicon;
pub mod train;
pub mod vocab;
