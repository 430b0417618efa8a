//! The AST → a [`Grammar`], through [`GrammarBuilder`].
//!
//! Rules keep their names; EBNF inside them becomes helper nonterminals named after the rule
//! (`value_star__12`): `x*` is `N → ε | x N`, `x+` is `N → x | x N`, `x?` and `[x]` are
//! `N → ε | x`, a group with several alternatives is `N → a | b`, `x ~ n` is `x` written `n`
//! times and `x ~ n..m` is `x ~ n` followed by a chain `U_k → ε | x U_{k-1}` for the `m - n`
//! optional copies (linear in `m`, where listing every count would be quadratic). Equal
//! sub-expressions share one helper.
//!
//! Literals and regexes written inside rules become terminals: a defined terminal with the
//! same pattern is reused (as Lark does), otherwise one is created, named after the literal
//! (`"{"`, `"select"i`) or `__ANON_k` for a regex or a range; equal patterns share a terminal.
//! Terminals enter the grammar when a rule or `%ignore` first uses them, so unused ones (such
//! as helpers inlined into other terminals) never become lexemes.

use std::collections::HashMap;

use super::ast::{Def, Expansions, Expr, ExprKind, Item, RepeatOp};
use super::terminals::{self, common_defs, Source, Terminals};
use super::{syntax, unsupported, GrammarError, Pos};
use crate::grammar::{Grammar, GrammarBuilder, NonterminalId, Pattern, Symbol, TerminalId};

/// The most symbols all the `x ~ n..m` of a grammar may expand to, together.
const MAX_EXPANSION: usize = 500_000;

/// Lowers a parsed grammar file; `start` names the start rule.
pub(super) fn lower(items: &[Item], origin: &str, start: &str) -> Result<Grammar, GrammarError> {
    let mut rules: Vec<&Def> = Vec::new();
    let mut rule_pos: HashMap<&str, Pos> = HashMap::new();
    let mut terms: Vec<(String, Source)> = Vec::new();
    // Terminal name → where it was defined, and which `common` terminal it imports.
    let mut term_seen: HashMap<String, (Pos, Option<usize>)> = HashMap::new();
    let mut ignores: Vec<&Expansions> = Vec::new();
    let defined_twice = |kind: &str, name: &str, first: Pos, pos: Pos| {
        syntax(
            origin,
            pos,
            format!("{kind} `{name}` is defined more than once (first at {first})"),
        )
    };
    for item in items {
        match item {
            Item::Rule(def) => {
                if let Some(&first) = rule_pos.get(def.name.as_str()) {
                    return Err(defined_twice("rule", &def.name, first, def.pos));
                }
                rule_pos.insert(&def.name, def.pos);
                rules.push(def);
            }
            Item::Term(def) => {
                if let Some(&(first, _)) = term_seen.get(&def.name) {
                    return Err(defined_twice("terminal", &def.name, first, def.pos));
                }
                term_seen.insert(def.name.clone(), (def.pos, None));
                terms.push((def.name.clone(), Source::Defined(def)));
            }
            Item::Ignore(body) => ignores.push(body),
            Item::Import(import) => {
                if import.module != "common" {
                    return Err(unsupported(
                        origin,
                        import.pos,
                        format!(
                            "`%import` from module `{}` (only the built-in `common` module can be imported)",
                            import.module
                        ),
                    ));
                }
                for n in &import.names {
                    if n.is_rule {
                        return Err(unsupported(
                            origin,
                            n.pos,
                            format!(
                                "`%import` of rule `{}` (only terminals can be imported)",
                                n.name
                            ),
                        ));
                    }
                    let Some(index) = common_defs()?.iter().position(|d| d.name == n.name) else {
                        return Err(syntax(
                            origin,
                            n.pos,
                            format!("module `common` has no terminal `{}`", n.name),
                        ));
                    };
                    match term_seen.get(&n.alias) {
                        Some(&(_, Some(same))) if same == index => continue,
                        Some(&(first, _)) => {
                            return Err(defined_twice("terminal", &n.alias, first, n.pos))
                        }
                        None => {}
                    }
                    term_seen.insert(n.alias.clone(), (n.pos, Some(index)));
                    terms.push((
                        n.alias.clone(),
                        Source::Imported {
                            common: index,
                            pos: n.pos,
                        },
                    ));
                }
            }
        }
    }

    let terms = terminals::compile(&terms, origin)?;
    let mut by_pattern = HashMap::new();
    for c in &terms.list {
        by_pattern
            .entry(c.pattern.clone())
            .or_insert_with(|| c.name.clone());
    }
    let mut lw = Lowerer {
        origin,
        b: GrammarBuilder::new(),
        terms,
        rules: HashMap::new(),
        term_ids: HashMap::new(),
        by_pattern,
        anon: HashMap::new(),
        helpers: HashMap::new(),
        anon_count: 0,
        ignore_count: 0,
        expanded: 0,
    };
    let ids: Vec<NonterminalId> = rules.iter().map(|d| lw.b.nonterminal(&d.name)).collect();
    for (def, &id) in rules.iter().zip(&ids) {
        lw.rules.insert(&def.name, id);
    }
    for (def, &id) in rules.iter().zip(&ids) {
        for alt in &def.body {
            let rhs = lw.sequence(&alt.items, &def.name)?;
            lw.b.rule(id, rhs);
        }
    }
    for body in ignores {
        lw.ignore(body)?;
    }
    let Some(&start) = lw.rules.get(start) else {
        return Err(GrammarError::UndefinedRule(start.to_string()));
    };
    lw.b.build(start)
}

/// A helper nonterminal, identified by what it derives.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Helper {
    Group(Vec<Vec<Symbol>>),
    Maybe(Vec<Vec<Symbol>>),
    Star(Vec<Symbol>),
    Plus(Vec<Symbol>),
    /// Zero to `k` copies.
    UpTo(Vec<Symbol>, u32),
}

struct Lowerer<'a> {
    origin: &'a str,
    b: GrammarBuilder,
    terms: Terminals<'a>,
    rules: HashMap<&'a str, NonterminalId>,
    term_ids: HashMap<String, TerminalId>,
    /// Defined terminals by pattern (the first definition wins), for anonymous reuse.
    by_pattern: HashMap<Pattern, String>,
    anon: HashMap<Pattern, TerminalId>,
    helpers: HashMap<Helper, NonterminalId>,
    anon_count: usize,
    ignore_count: usize,
    /// Symbols written out by `~` so far.
    expanded: usize,
}

impl Lowerer<'_> {
    fn named_terminal(&mut self, name: &str, pos: Pos) -> Result<TerminalId, GrammarError> {
        if let Some(&id) = self.term_ids.get(name) {
            return Ok(id);
        }
        let Some(c) = self.terms.get(name) else {
            return Err(syntax(
                self.origin,
                pos,
                format!("undefined terminal `{name}`"),
            ));
        };
        let id = self.b.terminal(name, c.pattern.clone(), c.priority);
        self.term_ids.insert(name.to_string(), id);
        Ok(id)
    }

    /// The terminal for a literal, regex or range written inside a rule.
    fn anonymous_terminal(&mut self, e: &Expr) -> Result<TerminalId, GrammarError> {
        let (name, is_literal) = match &e.kind {
            ExprKind::Literal { value, insensitive } => {
                let flag = if *insensitive { "i" } else { "" };
                (format!("{value:?}{flag}"), true)
            }
            ExprKind::Regex { body, flags } => (format!("/{body}/{flags}"), false),
            ExprKind::Range { from, to } => (format!("{from:?}..{to:?}"), false),
            _ => (String::from("<anonymous>"), false),
        };
        let pattern = self.terms.anonymous_expr(e, &name)?;
        if let Some(defined) = self.by_pattern.get(&pattern).cloned() {
            return self.named_terminal(&defined, e.pos);
        }
        if let Some(&id) = self.anon.get(&pattern) {
            return Ok(id);
        }
        let name = if is_literal {
            name
        } else {
            self.anon_count += 1;
            format!("__ANON_{}", self.anon_count - 1)
        };
        let id = self.b.terminal(&name, pattern.clone(), 0);
        self.anon.insert(pattern, id);
        Ok(id)
    }

    fn ignore(&mut self, body: &Expansions) -> Result<(), GrammarError> {
        if let [alt] = body.as_slice() {
            if let ([e], None) = (alt.items.as_slice(), &alt.alias) {
                match &e.kind {
                    ExprKind::Term(name) => {
                        let id = self.named_terminal(name, e.pos)?;
                        self.b.ignore(id);
                        return Ok(());
                    }
                    ExprKind::Rule(name) => {
                        return Err(syntax(
                            self.origin,
                            e.pos,
                            format!("`%ignore` takes terminals, but `{name}` is a rule"),
                        ))
                    }
                    _ => {}
                }
            }
        }
        let name = format!("__IGNORE_{}", self.ignore_count);
        self.ignore_count += 1;
        let pattern = self.terms.anonymous(body, &name)?;
        let id = self.b.terminal(&name, pattern, 0);
        self.b.ignore(id);
        Ok(())
    }

    fn sequence(&mut self, items: &[Expr], base: &str) -> Result<Vec<Symbol>, GrammarError> {
        let mut out = Vec::new();
        for e in items {
            self.expr(e, base, &mut out)?;
        }
        Ok(out)
    }

    fn alternatives(
        &mut self,
        alts: &Expansions,
        base: &str,
    ) -> Result<Vec<Vec<Symbol>>, GrammarError> {
        let mut out = Vec::with_capacity(alts.len());
        for alt in alts {
            if let Some((alias, pos)) = &alt.alias {
                return Err(syntax(
                    self.origin,
                    *pos,
                    format!(
                        "an alias (`-> {alias}`) may follow only a whole alternative of a rule, not one inside brackets"
                    ),
                ));
            }
            out.push(self.sequence(&alt.items, base)?);
        }
        Ok(out)
    }

    /// Appends the symbols `e` lowers to.
    fn expr(&mut self, e: &Expr, base: &str, out: &mut Vec<Symbol>) -> Result<(), GrammarError> {
        match &e.kind {
            ExprKind::Rule(name) => match self.rules.get(name.as_str()) {
                Some(&n) => out.push(Symbol::N(n)),
                None => {
                    return Err(syntax(
                        self.origin,
                        e.pos,
                        format!("undefined rule `{name}`"),
                    ))
                }
            },
            ExprKind::Term(name) => out.push(Symbol::T(self.named_terminal(name, e.pos)?)),
            ExprKind::Literal { .. } | ExprKind::Regex { .. } | ExprKind::Range { .. } => {
                out.push(Symbol::T(self.anonymous_terminal(e)?))
            }
            ExprKind::Group(alts) => {
                let mut alts = self.alternatives(alts, base)?;
                if alts.len() == 1 {
                    out.extend(alts.pop().unwrap_or_default());
                } else {
                    out.push(Symbol::N(self.helper(Helper::Group(alts), base)));
                }
            }
            ExprKind::Maybe(alts) => {
                let alts = self.alternatives(alts, base)?;
                out.push(Symbol::N(self.helper(Helper::Maybe(alts), base)));
            }
            ExprKind::Repeat { inner, op } => {
                let mut seq = Vec::new();
                self.expr(inner, base, &mut seq)?;
                if seq.is_empty() {
                    // Any repetition of ε is ε.
                    return Ok(());
                }
                match *op {
                    RepeatOp::Optional => {
                        out.push(Symbol::N(self.helper(Helper::Maybe(vec![seq]), base)))
                    }
                    RepeatOp::Star => out.push(Symbol::N(self.helper(Helper::Star(seq), base))),
                    RepeatOp::Plus => out.push(Symbol::N(self.helper(Helper::Plus(seq), base))),
                    RepeatOp::Between(lo, hi) => {
                        self.expanded = self
                            .expanded
                            .saturating_add(seq.len().saturating_mul(hi as usize));
                        if self.expanded > MAX_EXPANSION {
                            return Err(unsupported(
                                self.origin,
                                e.pos,
                                format!(
                                    "repetitions `~` that expand to more than {MAX_EXPANSION} symbols in all"
                                ),
                            ));
                        }
                        for _ in 0..lo {
                            out.extend_from_slice(&seq);
                        }
                        if hi > lo {
                            out.push(Symbol::N(self.up_to(seq, hi - lo, base)));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn helper(&mut self, key: Helper, base: &str) -> NonterminalId {
        if let Some(&n) = self.helpers.get(&key) {
            return n;
        }
        let kind = match &key {
            Helper::Group(_) => "group",
            Helper::Maybe(_) => "opt",
            Helper::Star(_) => "star",
            Helper::Plus(_) => "plus",
            Helper::UpTo(..) => "upto",
        };
        let n = self.b.fresh_nonterminal(&format!("{base}_{kind}"));
        let mut rhss: Vec<Vec<Symbol>> = Vec::new();
        match &key {
            Helper::Group(alts) => rhss.extend(alts.iter().cloned()),
            Helper::Maybe(alts) => {
                rhss.push(Vec::new());
                rhss.extend(alts.iter().cloned());
            }
            Helper::Star(s) => {
                rhss.push(Vec::new());
                rhss.push(s.iter().copied().chain([Symbol::N(n)]).collect());
            }
            Helper::Plus(s) => {
                rhss.push(s.clone());
                rhss.push(s.iter().copied().chain([Symbol::N(n)]).collect());
            }
            Helper::UpTo(s, _) => {
                // Only `up_to` builds these, one link at a time.
                rhss.push(Vec::new());
                rhss.push(s.clone());
            }
        }
        let mut seen: Vec<&Vec<Symbol>> = Vec::new();
        for rhs in &rhss {
            if !seen.contains(&rhs) {
                seen.push(rhs);
                self.b.rule(n, rhs.clone());
            }
        }
        self.helpers.insert(key, n);
        n
    }

    /// A nonterminal deriving zero to `k` (≥ 1) copies of `seq`.
    fn up_to(&mut self, seq: Vec<Symbol>, k: u32, base: &str) -> NonterminalId {
        let mut prev: Option<NonterminalId> = None;
        for j in 1..=k {
            let key = Helper::UpTo(seq.clone(), j);
            let n = match self.helpers.get(&key) {
                Some(&n) => n,
                None => {
                    let n = self.b.fresh_nonterminal(&format!("{base}_upto"));
                    self.b.rule(n, Vec::new());
                    let mut rhs = seq.clone();
                    rhs.extend(prev.map(Symbol::N));
                    self.b.rule(n, rhs);
                    self.helpers.insert(key, n);
                    n
                }
            };
            prev = Some(n);
        }
        match prev {
            Some(n) => n,
            None => self.helper(Helper::UpTo(seq, 1), base),
        }
    }
}
