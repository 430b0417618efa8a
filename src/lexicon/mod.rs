//! The lexicon: every terminal of a grammar (and every `%ignore` pattern) compiled once into a
//! single byte-level DFA that tells, after any byte string, which lexemes that string would be
//! if the token ended there.
//!
//! Lexing is longest-match: at each position the longest prefix that any pattern matches is the
//! next token. Among patterns matching that same longest prefix, the highest priority wins, then
//! literals beat regexes (so a keyword beats the identifier pattern that also matches it); if
//! several patterns still tie, each is a possible lexeme, and the checker accepts any of them
//! that parses. A winning `%ignore` pattern yields [`Lexeme::Skip`].
//!
//! The DFA is built with regex-automata (anchored, all matches), then re-tabulated over its byte
//! classes into a dense table owned here, with the winners of each state precomputed. That table
//! is what the canvas lexer steps through, byte by byte, for every check.

mod table;

pub use table::{Lexicon, LexiconError, StateId, DEAD};

use crate::grammar::TerminalId;

/// What a token is once it ends: a terminal of the grammar, or ignored text.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lexeme {
    Terminal(TerminalId),
    Skip,
}
