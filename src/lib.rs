//! lacuna: grammar-constrained decoding for diffusion and infilling language models.
//!
//! See `DESIGN.md` for the data flow: grammar → normalized grammar; canvas → hole DFA;
//! the two meet in the emptiness search of [`intersect`].

pub mod grammar;
