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
//! regex-automata parses the patterns and compiles them into one Thompson NFA; the subset
//! construction into a dense table over the NFA's byte classes (anchored, every match, the
//! winners of each state precomputed) is this module's own (`determinize.rs`, which says why),
//! with regex-automata's determinizer as the fallback for look-around. That table is what the
//! canvas lexer steps through, byte by byte, for every check.
//!
//! JSON strings with length bounds ([`Pattern::JsonString`](crate::grammar::Pattern)) are not
//! unrolled into the table: they share one pattern, and the lexer's configurations count their
//! characters ([`Count`], `counted.rs`).

mod counted;
mod dense_fallback;
mod determinize;
mod table;

pub use counted::Count;
pub use table::{Lexicon, LexiconError, StateId, DEAD};

use crate::grammar::TerminalId;

/// What a token is once it ends: a terminal of the grammar, or ignored text.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lexeme {
    Terminal(TerminalId),
    Skip,
}
