//! The AST of a Lark grammar file, as [`super::parser`] builds it.
//!
//! It mirrors the text closely (no expansion, no name resolution) so that every later error can
//! point at a position: each definition and each expression keeps where it starts.

use super::Pos;

/// A top-level statement.
#[derive(Clone, Debug)]
pub(super) enum Item {
    Rule(Def),
    Term(Def),
    Ignore(Expansions),
    Import(Import),
    RingBonds(RingBondsItem),
}

/// `%ring_bonds LABEL atoms ATOM... [branches OPEN CLOSE] [breaks BREAK...]` (lacuna's own
/// directive).
#[derive(Clone, Debug)]
pub(super) struct RingBondsItem {
    pub pos: Pos,
    /// The terminal whose lexemes are ring-bond labels, and where it is named.
    pub label: (String, Pos),
    /// The atom terminals, each with where it is named.
    pub atoms: Vec<(String, Pos)>,
    /// The terminals that open and close a branch (none, or the two), each with where it is
    /// named.
    pub branches: Vec<(String, Pos)>,
    /// The terminals after which the next atom is not bonded to the atom before them.
    pub breaks: Vec<(String, Pos)>,
}

/// A rule or terminal definition. `priority` is meaningful for terminals only.
#[derive(Clone, Debug)]
pub(super) struct Def {
    pub name: String,
    pub pos: Pos,
    pub priority: i32,
    pub body: Expansions,
}

/// `%import module.NAME [-> ALIAS]` or `%import module (A, B)`.
#[derive(Clone, Debug)]
pub(super) struct Import {
    pub module: String,
    pub pos: Pos,
    pub names: Vec<ImportName>,
}

#[derive(Clone, Debug)]
pub(super) struct ImportName {
    pub name: String,
    /// The name it gets in the importing grammar.
    pub alias: String,
    pub is_rule: bool,
    pub pos: Pos,
}

pub(super) type Expansions = Vec<Alternative>;

/// One alternative: a sequence of expressions, with an optional (ignored) alias.
#[derive(Clone, Debug)]
pub(super) struct Alternative {
    pub items: Vec<Expr>,
    pub alias: Option<(String, Pos)>,
}

#[derive(Clone, Debug)]
pub(super) struct Expr {
    pub kind: ExprKind,
    pub pos: Pos,
}

#[derive(Clone, Debug)]
pub(super) enum ExprKind {
    Rule(String),
    Term(String),
    Literal {
        value: String,
        insensitive: bool,
    },
    Regex {
        body: String,
        flags: String,
    },
    /// `"a".."z"`: one character of the inclusive range.
    Range {
        from: char,
        to: char,
    },
    /// `( ... )`.
    Group(Expansions),
    /// `[ ... ]`.
    Maybe(Expansions),
    Repeat {
        inner: Box<Expr>,
        op: RepeatOp,
    },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum RepeatOp {
    Optional,
    Star,
    Plus,
    /// `~ n..m` (`~ n` is `n..n`).
    Between(u32, u32),
}
