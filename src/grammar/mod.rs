//! Grammars: the user-facing CFG model ([`Grammar`]), its front ends (Lark text), and the
//! normalizer that turns it into the C2F+ε form the emptiness search runs on.
//!
//! Data flows one way: text → [`Grammar`] → [`NormalGrammar`]. Terminal ids are shared by both,
//! so the lexicon (built from the terminals' patterns) and the search agree on lexeme ids.

pub(crate) mod analysis;
pub(crate) mod automaton_size;
mod cfg;
#[cfg(test)]
pub(crate) mod earley;
mod error;
pub mod lark;
pub(crate) mod normalize;
#[cfg(feature = "internals")]
pub use normalize::pass_times;
mod regex_cache;
mod ring_bonds;
pub mod schema;
pub mod spec;

pub(crate) use automaton_size::{check_automaton_size, check_dfa_size};
pub use automaton_size::{MAX_DFA_BYTES, MAX_PATTERN_DETERMINIZE_BYTES, MAX_PATTERN_NFA_BYTES};
pub(crate) use cfg::parse_regex;
pub use cfg::{
    parse_pattern, shorten, Grammar, GrammarBuilder, NonterminalId, Pattern, Rule, Symbol,
    Terminal, TerminalId, JSON_UNIT, MAX_CONTEXT_TABLE_BYTES, MAX_JSON_STRING_BOUND,
    MAX_NAME_IN_MESSAGE, MAX_PRODUCTIONS, MAX_TERMINALS, MIN_MERGED_ALTERNATIVES,
};
pub use error::GrammarError;
pub use normalize::{GrammarSize, NormalGrammar, NormalizeOptions};
pub use ring_bonds::{with_ring_bonds, RingBondRoles, RingBonds, MAX_RING_LABELS};
