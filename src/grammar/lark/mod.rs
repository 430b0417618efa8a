//! The Lark front end: Lark grammar text in, a validated [`Grammar`] out.
//!
//! [Lark](https://lark-parser.readthedocs.io/) is the grammar format that SynCode, Outlines and
//! llguidance users already write, so it is the format lacuna reads. Only the *language* a Lark
//! grammar defines matters here, not the parse trees Lark would build from it: tree-shaping
//! notation (`?rule`, `!rule`, `_rule`, `-> alias`, rule priorities) is accepted and has no
//! effect, while everything that would change the language and that lacuna does not implement
//! (templates, `%declare`, `%override`, `%extend`, imports other than the built-in `common`
//! module, lookaround in regexes, ...) is refused by name, with a line and a column. Nothing is
//! silently dropped.
//!
//! Data flows one way through four stages, one file each:
//!
//! 1. `lexer` turns the text into tokens, decoding string escapes the way Lark does;
//! 2. `parser` builds a small `ast` of definitions and directives (recursive descent,
//!    nesting bounded so no input can exhaust the stack);
//! 3. `terminals` compiles every terminal definition to **one** regex: referenced terminals are
//!    inlined (a cycle among them is an error), EBNF operators become regex operators, and
//!    Python-regex spellings are translated to `regex-syntax` ones by `pyregex`;
//! 4. `lower` expands the EBNF of rules into plain productions through fresh helper
//!    nonterminals (right recursion for `*` and `+`, shared between equal sub-expressions),
//!    turns anonymous literals and regexes into terminals (reusing a defined terminal with the
//!    same pattern, as Lark does), and hands everything to [`GrammarBuilder`], which turns a
//!    long alternation of single terminals (`start: "w0" | … | "w99999"`) into one terminal.
//!    Every terminal carries its `file:line:column`, so an error about a whole terminal (it
//!    matches the empty string, its automaton is too large) says where it is defined.
//!
//! The shape follows the consumers: the normalizer wants plain productions and the lexicon wants
//! one regular language per terminal, so all EBNF is gone by the time a [`Grammar`] exists.
//! Terminals that no rule uses and that are not ignored are dropped (as Lark drops them), so
//! helper definitions such as `DIGIT` in `INT: DIGIT+` do not become lexemes of their own.
//!
//! [`GrammarBuilder`]: super::GrammarBuilder

mod ast;
mod lexer;
mod lower;
mod parser;
mod pyregex;
mod terminals;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_errors;

use super::{Grammar, GrammarError};

/// Parses Lark grammar text into a [`Grammar`] whose start rule is `start`.
///
/// `origin` names the text in error messages (usually its file name).
///
/// ```
/// let g = lacuna::grammar::lark::parse(
///     "start: \"[\" [INT (\",\" INT)*] \"]\"\n%import common.INT\n%ignore \" \"",
///     "list.lark",
/// )
/// .unwrap();
/// assert!(g.terminal_by_name("INT").is_some());
/// ```
pub fn parse(source: &str, origin: &str) -> Result<Grammar, GrammarError> {
    parse_with_start(source, origin, "start")
}

/// Parses Lark grammar text into a [`Grammar`] whose start rule is `start`.
pub fn parse_with_start(source: &str, origin: &str, start: &str) -> Result<Grammar, GrammarError> {
    let tokens = lexer::tokenize(source, origin)?;
    let items = parser::parse(&tokens, origin)?;
    lower::lower(&items, origin, start)
}

/// A 1-based position in the grammar text (columns count characters).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Pos {
    pub line: usize,
    pub column: usize,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// A [`GrammarError::Syntax`] at `pos`.
fn syntax(origin: &str, pos: Pos, message: impl Into<String>) -> GrammarError {
    GrammarError::Syntax {
        origin: origin.to_string(),
        line: pos.line,
        column: pos.column,
        message: message.into(),
    }
}

/// A [`GrammarError::Unsupported`] at `pos`.
fn unsupported(origin: &str, pos: Pos, feature: impl Into<String>) -> GrammarError {
    GrammarError::Unsupported {
        origin: origin.to_string(),
        line: pos.line,
        column: pos.column,
        feature: feature.into(),
    }
}
