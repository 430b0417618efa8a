//! Lark tokens → an AST of definitions and directives.
//!
//! Recursive descent over Lark's own grammar:
//!
//! ```text
//! item        := [`?` | `!`]* RULE [`.` NUMBER] `:` expansions
//!              | TERM [`.` NUMBER] `:` expansions
//!              | `%ignore` expansions | `%import` path [`->` NAME | `(` NAME (`,` NAME)* `)`]
//!              | `%ring_bonds` TERM `atoms` TERM+ [`branches` TERM TERM] [`breaks` TERM+]   (lacuna's own: see [`crate::grammar::RingBonds`])
//! expansions  := alternative ((`|` | NEWLINE `|`) alternative)*
//! alternative := expr* [`->` NAME]
//! expr        := atom [`?` | `*` | `+` | `~` NUMBER [`..` NUMBER]]
//! atom        := `(` expansions `)` | `[` expansions `]` | STRING [`..` STRING] | REGEX | NAME
//! ```
//!
//! Every definition ends at a newline (or the end of the file). Like Lark, an expression takes
//! at most one operator and an alternative may be empty (`a: | b` derives ε). Brackets nest at
//! most [`MAX_DEPTH`] deep so that no input can exhaust the stack of this or a later stage.

use super::ast::{
    Alternative, Def, Expansions, Expr, ExprKind, Import, ImportName, Item, RepeatOp, RingBondsItem,
};
use super::lexer::{Tok, Token};
use super::{syntax, unsupported, GrammarError, Pos};

/// How deep `( )` and `[ ]` may nest.
pub(super) const MAX_DEPTH: usize = 64;

/// The largest count `x ~ n` or `x ~ n..m` may use.
pub(super) const MAX_REPEAT: i64 = 10_000;

/// Parses a whole token stream (as produced by [`super::lexer::tokenize`]).
pub(super) fn parse(tokens: &[Token], origin: &str) -> Result<Vec<Item>, GrammarError> {
    let mut p = Parser {
        tokens,
        i: 0,
        origin,
    };
    p.file()
}

struct Parser<'a> {
    tokens: &'a [Token],
    i: usize,
    origin: &'a str,
}

const EOF: Token = Token {
    tok: Tok::Eof,
    pos: Pos { line: 1, column: 1 },
};

impl Parser<'_> {
    fn peek_token(&self) -> &Token {
        // The lexer always ends the stream with `Eof`, and `bump` never moves past it.
        self.tokens
            .get(self.i)
            .or(self.tokens.last())
            .unwrap_or(&EOF)
    }

    fn peek(&self) -> &Tok {
        &self.peek_token().tok
    }

    fn pos(&self) -> Pos {
        self.peek_token().pos
    }

    fn bump(&mut self) -> Token {
        let t = self.peek_token().clone();
        if self.i < self.tokens.len() && t.tok != Tok::Eof {
            self.i += 1;
        }
        t
    }

    fn err(&self, pos: Pos, message: impl Into<String>) -> GrammarError {
        syntax(self.origin, pos, message)
    }

    /// "expected X, found Y" at the current token.
    fn expected(&self, what: &str) -> GrammarError {
        self.err(
            self.pos(),
            format!("expected {what}, found {}", self.peek().describe()),
        )
    }

    fn skip_newlines(&mut self) {
        while *self.peek() == Tok::Newline {
            self.bump();
        }
    }

    fn file(&mut self) -> Result<Vec<Item>, GrammarError> {
        let mut items = Vec::new();
        loop {
            self.skip_newlines();
            let pos = self.pos();
            match self.peek().clone() {
                Tok::Eof => return Ok(items),
                Tok::Directive(d) => {
                    self.bump();
                    items.push(self.directive(&d, pos)?);
                }
                Tok::Question | Tok::Bang => {
                    while matches!(self.peek(), Tok::Question | Tok::Bang) {
                        self.bump();
                    }
                    if !matches!(self.peek(), Tok::Rule(_)) {
                        return Err(self.expected("a rule name after the modifiers `?`/`!`"));
                    }
                    items.push(Item::Rule(self.definition()?));
                }
                Tok::Rule(_) => items.push(Item::Rule(self.definition()?)),
                Tok::Term(_) => items.push(Item::Term(self.definition()?)),
                _ => {
                    return Err(self
                        .expected("a rule definition, a terminal definition or a `%` directive"))
                }
            }
        }
    }

    /// `name [.priority] : expansions` up to the end of the line.
    fn definition(&mut self) -> Result<Def, GrammarError> {
        let Token { tok, pos } = self.bump();
        let (name, kind) = match tok {
            Tok::Rule(n) => (n, "rule"),
            Tok::Term(n) => (n, "terminal"),
            _ => return Err(self.err(pos, "expected a rule or terminal name")),
        };
        if *self.peek() == Tok::LBrace && kind == "rule" {
            return Err(unsupported(
                self.origin,
                self.pos(),
                format!("rule templates (`{name}{{...}}`)"),
            ));
        }
        let mut priority = 0;
        if *self.peek() == Tok::Dot {
            self.bump();
            if *self.peek() == Tok::Plus {
                self.bump();
            }
            let npos = self.pos();
            match self.peek().clone() {
                Tok::Number(n) => {
                    self.bump();
                    priority = i32::try_from(n)
                        .map_err(|_| self.err(npos, format!("priority {n} is out of range")))?;
                }
                _ => return Err(self.expected(&format!("a priority number after `{name}.`"))),
            }
        }
        if *self.peek() != Tok::Colon {
            return Err(self.expected(&format!("`:` after {kind} name `{name}`")));
        }
        self.bump();
        let body = self.expansions(0)?;
        self.end_of_line(&format!("the definition of `{name}`"))?;
        Ok(Def {
            name,
            pos,
            priority,
            body,
        })
    }

    /// Requires the end of a line (or of the file) after a statement.
    fn end_of_line(&mut self, after: &str) -> Result<(), GrammarError> {
        match self.peek() {
            Tok::Newline | Tok::Eof => Ok(()),
            Tok::RParen | Tok::RBracket => Err(self.err(
                self.pos(),
                format!("unmatched {} in {after}", self.peek().describe()),
            )),
            op @ (Tok::Star | Tok::Plus | Tok::Question | Tok::Tilde) => Err(self.misplaced(op)),
            _ => Err(self.expected(&format!("`|` or the end of the line after {after}"))),
        }
    }

    fn expansions(&mut self, depth: usize) -> Result<Expansions, GrammarError> {
        let mut alts = vec![self.alternative(depth)?];
        loop {
            if *self.peek() == Tok::Pipe {
                self.bump();
            } else if *self.peek() == Tok::Newline && self.pipe_after_newlines() {
                self.skip_newlines();
                self.bump();
            } else {
                return Ok(alts);
            }
            alts.push(self.alternative(depth)?);
        }
    }

    /// Whether the next token after a run of newlines is `|` (a continuation line).
    fn pipe_after_newlines(&self) -> bool {
        self.tokens
            .get(self.i..)
            .unwrap_or_default()
            .iter()
            .find(|t| t.tok != Tok::Newline)
            .is_some_and(|t| t.tok == Tok::Pipe)
    }

    fn alternative(&mut self, depth: usize) -> Result<Alternative, GrammarError> {
        let mut items = Vec::new();
        while let Some(e) = self.expr(depth)? {
            items.push(e);
        }
        let mut alias = None;
        if *self.peek() == Tok::Arrow {
            self.bump();
            let pos = self.pos();
            match self.peek().clone() {
                Tok::Rule(n) | Tok::Term(n) => {
                    self.bump();
                    alias = Some((n, pos));
                }
                _ => return Err(self.expected("a name after `->`")),
            }
        }
        Ok(Alternative { items, alias })
    }

    fn expr(&mut self, depth: usize) -> Result<Option<Expr>, GrammarError> {
        let Some(atom) = self.atom(depth)? else {
            return Ok(None);
        };
        let pos = self.pos();
        let op = match self.peek() {
            Tok::Question => RepeatOp::Optional,
            Tok::Star => RepeatOp::Star,
            Tok::Plus => RepeatOp::Plus,
            Tok::Tilde => {
                self.bump();
                let lo = self.repeat_count("a count after `~`")?;
                let hi = if *self.peek() == Tok::DotDot {
                    self.bump();
                    self.repeat_count("a count after `..`")?
                } else {
                    lo
                };
                if hi < lo {
                    return Err(self.err(
                        pos,
                        format!(
                            "bad repetition range `~ {lo}..{hi}`: the maximum is below the minimum"
                        ),
                    ));
                }
                RepeatOp::Between(lo, hi)
            }
            _ => return Ok(Some(atom)),
        };
        // `~` and its counts were consumed above; the other operators are one token.
        if !matches!(op, RepeatOp::Between(..)) {
            self.bump();
        }
        if let op @ (Tok::Star | Tok::Plus | Tok::Question | Tok::Tilde) = self.peek() {
            return Err(self.misplaced(op));
        }
        let pos = atom.pos;
        Ok(Some(Expr {
            kind: ExprKind::Repeat {
                inner: Box::new(atom),
                op,
            },
            pos,
        }))
    }

    fn misplaced(&self, op: &Tok) -> GrammarError {
        self.err(
            self.pos(),
            format!(
                "misplaced operator {}: it must follow an expression, and an expression \
                 takes at most one operator (use parentheses)",
                op.describe()
            ),
        )
    }

    fn repeat_count(&mut self, what: &str) -> Result<u32, GrammarError> {
        let pos = self.pos();
        let Tok::Number(n) = *self.peek() else {
            return Err(self.expected(what));
        };
        self.bump();
        if n < 0 {
            return Err(self.err(pos, format!("repetition count {n} is negative")));
        }
        if n > MAX_REPEAT {
            return Err(unsupported(
                self.origin,
                pos,
                format!("repetition counts above {MAX_REPEAT} (found {n})"),
            ));
        }
        u32::try_from(n).map_err(|_| self.err(pos, "repetition count out of range"))
    }

    fn atom(&mut self, depth: usize) -> Result<Option<Expr>, GrammarError> {
        let pos = self.pos();
        let kind = match self.peek().clone() {
            open @ (Tok::LParen | Tok::LBracket) => {
                if depth >= MAX_DEPTH {
                    return Err(unsupported(
                        self.origin,
                        pos,
                        format!("brackets nested more than {MAX_DEPTH} deep"),
                    ));
                }
                self.bump();
                let body = self.expansions(depth + 1)?;
                let (close, kind) = if open == Tok::LParen {
                    (Tok::RParen, ExprKind::Group(body))
                } else {
                    (Tok::RBracket, ExprKind::Maybe(body))
                };
                if *self.peek() != close {
                    return Err(self.expected(&format!(
                        "{} to close the {} at {pos}",
                        close.describe(),
                        open.describe()
                    )));
                }
                self.bump();
                kind
            }
            Tok::Str { value, insensitive } => {
                self.bump();
                if *self.peek() == Tok::DotDot {
                    self.bump();
                    self.range_end(value, insensitive, pos)?
                } else {
                    ExprKind::Literal { value, insensitive }
                }
            }
            Tok::Regex { body, flags } => {
                self.bump();
                ExprKind::Regex { body, flags }
            }
            Tok::Rule(name) => {
                self.bump();
                if *self.peek() == Tok::LBrace {
                    return Err(unsupported(
                        self.origin,
                        pos,
                        format!("template instantiation (`{name}{{...}}`)"),
                    ));
                }
                ExprKind::Rule(name)
            }
            Tok::Term(name) => {
                self.bump();
                ExprKind::Term(name)
            }
            _ => return Ok(None),
        };
        Ok(Some(Expr { kind, pos }))
    }

    /// The `.."z"` part of a range whose start `from` was just read.
    fn range_end(
        &mut self,
        from: String,
        from_insensitive: bool,
        pos: Pos,
    ) -> Result<ExprKind, GrammarError> {
        let Tok::Str {
            value: to,
            insensitive,
        } = self.peek().clone()
        else {
            return Err(self.expected("a string after `..` in a range"));
        };
        self.bump();
        if from_insensitive || insensitive {
            return Err(unsupported(
                self.origin,
                pos,
                "the `i` flag on the ends of a range",
            ));
        }
        let single = |s: &str| {
            let mut it = s.chars();
            match (it.next(), it.next()) {
                (Some(c), None) => Some(c),
                _ => None,
            }
        };
        let (Some(a), Some(b)) = (single(&from), single(&to)) else {
            return Err(self.err(
                pos,
                format!("a range needs single characters at both ends, found {from:?}..{to:?}"),
            ));
        };
        if a > b {
            return Err(self.err(
                pos,
                format!("empty range {from:?}..{to:?}: its start is after its end"),
            ));
        }
        Ok(ExprKind::Range { from: a, to: b })
    }

    fn directive(&mut self, name: &str, pos: Pos) -> Result<Item, GrammarError> {
        match name {
            "ignore" => {
                let body = self.expansions(0)?;
                self.end_of_line("`%ignore`")?;
                Ok(Item::Ignore(body))
            }
            "import" => self.import(pos),
            "ring_bonds" => self.ring_bonds(pos),
            "declare" | "override" | "extend" => Err(unsupported(
                self.origin,
                pos,
                format!("the `%{name}` directive"),
            )),
            _ => Err(self.err(
                pos,
                format!(
                    "unknown directive `%{name}` (expected `%ignore`, `%import` or `%ring_bonds`)"
                ),
            )),
        }
    }

    fn import(&mut self, pos: Pos) -> Result<Item, GrammarError> {
        let mut relative = String::new();
        while matches!(self.peek(), Tok::Dot | Tok::DotDot) {
            relative.push_str(if *self.peek() == Tok::Dot { "." } else { ".." });
            self.bump();
        }
        let mut path: Vec<(String, bool, Pos)> = vec![self.import_name()?];
        while *self.peek() == Tok::Dot {
            self.bump();
            path.push(self.import_name()?);
        }
        let dotted = |p: &[(String, bool, Pos)]| {
            p.iter()
                .map(|(n, _, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(".")
        };
        if !relative.is_empty() {
            return Err(unsupported(
                self.origin,
                pos,
                format!(
                    "file-relative `%import {relative}{}` (only the built-in `common` module can be imported)",
                    dotted(&path)
                ),
            ));
        }
        let (module, names) = if *self.peek() == Tok::LParen {
            self.bump();
            let mut names = Vec::new();
            loop {
                let (name, is_rule, npos) = self.import_name()?;
                names.push(ImportName {
                    alias: name.clone(),
                    name,
                    is_rule,
                    pos: npos,
                });
                match self.peek() {
                    Tok::Comma => {
                        self.bump();
                    }
                    Tok::RParen => {
                        self.bump();
                        break;
                    }
                    _ => return Err(self.expected("`,` or `)` in the `%import` name list")),
                }
            }
            (dotted(&path), names)
        } else {
            if path.len() < 2 {
                return Err(self.err(
                    pos,
                    format!(
                        "`%import {}` imports nothing: write `%import {0}.NAME` or `%import {0} (A, B)`",
                        dotted(&path)
                    ),
                ));
            }
            let Some((name, is_rule, npos)) = path.pop() else {
                return Err(self.err(pos, "`%import` needs a name"));
            };
            let mut alias = name.clone();
            if *self.peek() == Tok::Arrow {
                self.bump();
                let apos = self.pos();
                let (a, alias_is_rule, _) = self.import_name()?;
                if alias_is_rule != is_rule {
                    return Err(self.err(
                        apos,
                        format!("`{name}` cannot be imported as `{a}`: a terminal's name must stay uppercase and a rule's lowercase"),
                    ));
                }
                alias = a;
            }
            (
                dotted(&path),
                vec![ImportName {
                    name,
                    alias,
                    is_rule,
                    pos: npos,
                }],
            )
        };
        self.end_of_line("`%import`")?;
        Ok(Item::Import(Import { module, pos, names }))
    }

    /// `%ring_bonds LABEL atoms ATOM... [branches OPEN CLOSE] [breaks BREAK...]`: the terminal
    /// whose lexemes are ring-bond labels, the terminals that are atoms, the two that open and
    /// close a branch, and those after which the next atom is not bonded to the atom before
    /// them.
    fn ring_bonds(&mut self, pos: Pos) -> Result<Item, GrammarError> {
        let usage = "`%ring_bonds LABEL atoms ATOM... [branches OPEN CLOSE] [breaks TERMINAL...]`";
        let Tok::Term(label) = self.peek().clone() else {
            return Err(self.expected(&format!("the label terminal in {usage}")));
        };
        let label = (label, self.pos());
        self.bump();
        let mut lists: [Vec<(String, Pos)>; 3] = [Vec::new(), Vec::new(), Vec::new()];
        for (k, keyword) in ["atoms", "branches", "breaks"].into_iter().enumerate() {
            match self.peek().clone() {
                Tok::Rule(w) if w == keyword => {
                    self.bump();
                }
                _ if k > 0 => continue,
                _ => return Err(self.expected(&format!("`{keyword}` in {usage}"))),
            }
            while let Tok::Term(n) = self.peek().clone() {
                lists[k].push((n, self.pos()));
                self.bump();
            }
            if lists[k].is_empty() {
                return Err(self.expected(&format!("a terminal name after `{keyword}` in {usage}")));
            }
            if keyword == "branches" && lists[k].len() != 2 {
                return Err(self.err(
                    lists[k][0].1,
                    format!(
                        "`branches` takes two terminals, the one that opens a branch and the one \
                         that closes it; {} given",
                        lists[k].len()
                    ),
                ));
            }
        }
        self.end_of_line("`%ring_bonds`")?;
        let [atoms, branches, breaks] = lists;
        Ok(Item::RingBonds(RingBondsItem {
            pos,
            label,
            atoms,
            branches,
            breaks,
        }))
    }

    fn import_name(&mut self) -> Result<(String, bool, Pos), GrammarError> {
        let pos = self.pos();
        match self.peek().clone() {
            Tok::Rule(n) => {
                self.bump();
                Ok((n, true, pos))
            }
            Tok::Term(n) => {
                self.bump();
                Ok((n, false, pos))
            }
            _ => Err(self.expected("a name in `%import`")),
        }
    }
}
