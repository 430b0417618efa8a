//! The AST → a [`Grammar`], through [`GrammarBuilder`].
//!
//! Rules keep their names; EBNF inside them becomes helper nonterminals named after the rule
//! (`value_star__12`): `x*` is `N → ε | x N`, `x+` is `N → x | x N`, `x?` and `[x]` are
//! `N → ε | x`, a group with several alternatives is `N → a | b`, `x ~ n` is `x` written `n`
//! times and `x ~ n..m` is `x ~ n` followed by `U_{m-n}` for the optional copies, where
//! `U_1 → ε | x` and `U_k → U_⌊k/2⌋ U_⌈k/2⌉` (O(log m) helpers, where a chain would take m and
//! listing every count m²). Equal sub-expressions share one helper.
//!
//! Literals and regexes written inside rules become terminals: a defined terminal with the
//! same pattern is reused (as Lark does), otherwise one is created, named after the literal
//! (`"{"`, `"select"i`) or `__ANON_k` for a regex or a range; equal patterns share a terminal.
//! Terminals enter the grammar when a rule or `%ignore` first uses them, so unused ones (such
//! as helpers inlined into other terminals) never become lexemes.

use std::collections::HashMap;

use super::ast::{Def, Expansions, Expr, ExprKind, Item, RepeatOp, RingBondsItem};
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
    let mut ring_bonds: Option<&RingBondsItem> = None;
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
            Item::RingBonds(rb) => {
                if let Some(first) = ring_bonds {
                    return Err(syntax(
                        origin,
                        rb.pos,
                        format!("`%ring_bonds` may be given once (first at {})", first.pos),
                    ));
                }
                ring_bonds = Some(rb);
            }
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
    let term_pos = term_seen
        .iter()
        .map(|(n, &(p, _))| (n.clone(), p))
        .collect();
    let mut lw = Lowerer {
        origin,
        b: GrammarBuilder::new(),
        terms,
        term_pos,
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
    let Some(&start_id) = lw.rules.get(start) else {
        return Err(GrammarError::MissingStart {
            origin: origin.to_string(),
            name: start.to_string(),
        });
    };
    let grammar =
        lw.b.build_merging_alternatives(start_id)
            .map_err(|e| match e {
                GrammarError::EmptyLanguage(_) | GrammarError::UndefinedRule(_) => {
                    // Placed at the start rule's definition (every other rule is checked where
                    // it is used).
                    let pos = rule_pos
                        .get(start)
                        .copied()
                        .unwrap_or(Pos { line: 1, column: 1 });
                    GrammarError::At {
                        place: format!("{origin}:{pos}"),
                        error: Box::new(e),
                    }
                }
                GrammarError::TooLarge(_) => GrammarError::At {
                    place: origin.to_string(),
                    error: Box::new(e),
                },
                e => e,
            })?;
    let Some(rb) = ring_bonds else {
        return Ok(grammar);
    };
    let names =
        |list: &[(String, Pos)]| -> Vec<String> { list.iter().map(|(n, _)| n.clone()).collect() };
    let roles = crate::grammar::RingBondRoles {
        atoms: names(&rb.atoms),
        branches: names(&rb.branches),
        breaks: names(&rb.breaks),
    };
    crate::grammar::with_ring_bonds(&grammar, &rb.label.0, &roles).map_err(|e| GrammarError::At {
        place: format!("{origin}:{}", rb.pos),
        error: Box::new(e),
    })
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
    /// Where each terminal name is defined or imported.
    term_pos: HashMap<String, Pos>,
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
        let at = self.term_pos.get(name).copied().unwrap_or(pos);
        self.b
            .set_terminal_source(id, format!("{}:{at}", self.origin));
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
        // A literal's name is its text: messages quote a long one cut short, and the cut
        // name gets a number so that it stays unique.
        let short = crate::grammar::shorten(&name, crate::grammar::MAX_NAME_IN_MESSAGE - 16);
        let name = if short.len() < name.len() {
            format!("{short}#{}", self.anon.len())
        } else {
            name
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
        self.b
            .set_terminal_source(id, format!("{}:{}", self.origin, e.pos));
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
        if let Some(e) = body.first().and_then(|alt| alt.items.first()) {
            self.b
                .set_terminal_source(id, format!("{}:{}", self.origin, e.pos));
        }
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
                // Only `up_to` builds these: here the one of a single optional copy.
                rhss.push(Vec::new());
                rhss.push(s.clone());
            }
        }
        let mut seen: std::collections::HashSet<&Vec<Symbol>> = Default::default();
        for rhs in &rhss {
            if seen.insert(rhs) {
                self.b.rule(n, rhs.clone());
            }
        }
        self.helpers.insert(key, n);
        n
    }

    /// A nonterminal deriving zero to `k` (≥ 1) copies of `seq`: `U_1 → ε | seq`, and for
    /// larger k `U_k → U_⌊k/2⌋ U_⌈k/2⌉` (a count up to k is two counts up to the halves), so
    /// `seq ~ 0..k` takes O(log k) helpers, shared between equal `(seq, k)`.
    fn up_to(&mut self, seq: Vec<Symbol>, k: u32, base: &str) -> NonterminalId {
        let key = Helper::UpTo(seq.clone(), k);
        if let Some(&n) = self.helpers.get(&key) {
            return n;
        }
        if k <= 1 {
            return self.helper(key, base);
        }
        let low = self.up_to(seq.clone(), k / 2, base);
        let high = self.up_to(seq, k - k / 2, base);
        let n = self.b.fresh_nonterminal(&format!("{base}_upto"));
        self.b.rule(n, vec![Symbol::N(low), Symbol::N(high)]);
        self.helpers.insert(key, n);
        n
    }
}
