//! The context-free grammar as users write it: terminals with their patterns, nonterminals,
//! and rules whose right-hand sides are arbitrary sequences of symbols.
//!
//! This is the shape every front end produces (the Lark parser, the JSON Schema compiler,
//! hand-built grammars in tests) and the shape the normalizer consumes. It is deliberately
//! plain: EBNF operators are already expanded into rules, every terminal is a regular language
//! given as a literal or a regex, and ids are dense indices so later stages can use vectors.
//!
//! Terminal ids are stable: normalization never renumbers terminals, so the lexicon built from
//! [`Grammar::terminals`] and the normalized grammar agree on what `TerminalId(7)` means.

use std::fmt;

use hashbrown::HashMap;
use regex_syntax::hir::Hir;

use super::GrammarError;

/// Index of a terminal in [`Grammar::terminals`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TerminalId(pub u32);

/// Index of a nonterminal in [`Grammar::nonterminals`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NonterminalId(pub u32);

impl TerminalId {
    /// The id as an index into [`Grammar::terminals`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl NonterminalId {
    /// The id as an index into [`Grammar::nonterminals`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One symbol of a right-hand side.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Symbol {
    /// A terminal: one lexeme.
    T(TerminalId),
    /// A nonterminal, expanded by its rules.
    N(NonterminalId),
}

impl From<TerminalId> for Symbol {
    fn from(t: TerminalId) -> Self {
        Symbol::T(t)
    }
}

impl From<NonterminalId> for Symbol {
    fn from(n: NonterminalId) -> Self {
        Symbol::N(n)
    }
}

/// The language of a terminal: an exact string, or a regex in `regex-syntax` syntax.
///
/// A regex matches the whole lexeme (anchoring is implied). Neither form may match the empty
/// string: a lexeme of length zero would let a lexer loop forever.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// Exactly this string (not a regex: its metacharacters are plain text).
    Literal(String),
    /// A regex in `regex-syntax` syntax, matched against the whole lexeme.
    Regex(String),
}

impl Pattern {
    /// The pattern as a regex, literals escaped.
    pub fn to_regex(&self) -> String {
        match self {
            Pattern::Literal(s) => regex_syntax::escape(s),
            Pattern::Regex(r) => r.clone(),
        }
    }
}

/// A terminal: its name (for messages and stats), its pattern, and its lexing priority
/// (higher wins between matches of equal length, as in Lark).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Terminal {
    /// Unique among the grammar's terminals.
    pub name: String,
    /// The lexemes it matches.
    pub pattern: Pattern,
    /// Lexing priority; 0 unless the grammar says otherwise (Lark's `NAME.p`).
    pub priority: i32,
}

/// A production `lhs → rhs`; an empty `rhs` is an ε-production.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rule {
    /// The nonterminal the rule defines.
    pub lhs: NonterminalId,
    /// What it expands to, left to right.
    pub rhs: Vec<Symbol>,
}

/// A validated context-free grammar over terminals that are regular languages.
#[derive(Clone, Debug)]
pub struct Grammar {
    terminals: Vec<Terminal>,
    nonterminals: Vec<String>,
    rules: Vec<Rule>,
    start: NonterminalId,
    ignore: Vec<TerminalId>,
}

impl Grammar {
    /// All terminals, indexed by [`TerminalId`].
    pub fn terminals(&self) -> &[Terminal] {
        &self.terminals
    }

    /// The terminal `t`; panics if `t` is not of this grammar.
    pub fn terminal(&self, t: TerminalId) -> &Terminal {
        &self.terminals[t.index()]
    }

    /// The names of all nonterminals, indexed by [`NonterminalId`].
    pub fn nonterminals(&self) -> &[String] {
        &self.nonterminals
    }

    /// The name of nonterminal `n`; panics if `n` is not of this grammar.
    pub fn nonterminal_name(&self, n: NonterminalId) -> &str {
        &self.nonterminals[n.index()]
    }

    /// All rules, in the order they were added.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The start symbol: the grammar's language is what it derives.
    pub fn start(&self) -> NonterminalId {
        self.start
    }

    /// Terminals that the lexer skips between lexemes (`%ignore`); they occur in no rule.
    pub fn ignored(&self) -> &[TerminalId] {
        &self.ignore
    }

    /// Looks a nonterminal up by name.
    pub fn nonterminal_by_name(&self, name: &str) -> Option<NonterminalId> {
        self.nonterminals
            .iter()
            .position(|n| n == name)
            .map(|i| NonterminalId(i as u32))
    }

    /// Looks a terminal up by name.
    pub fn terminal_by_name(&self, name: &str) -> Option<TerminalId> {
        self.terminals
            .iter()
            .position(|t| t.name == name)
            .map(|i| TerminalId(i as u32))
    }

    /// A readable name for a symbol.
    pub fn symbol_name(&self, s: Symbol) -> &str {
        match s {
            Symbol::T(t) => &self.terminal(t).name,
            Symbol::N(n) => self.nonterminal_name(n),
        }
    }
}

impl fmt::Display for Grammar {
    /// Prints the grammar in a Lark-like notation, one rule per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rule in &self.rules {
            write!(f, "{}:", self.nonterminal_name(rule.lhs))?;
            if rule.rhs.is_empty() {
                write!(f, " ε")?;
            }
            for &s in &rule.rhs {
                write!(f, " {}", self.symbol_name(s))?;
            }
            writeln!(f)?;
        }
        for t in &self.terminals {
            writeln!(f, "{}: /{}/", t.name, t.pattern.to_regex())?;
        }
        Ok(())
    }
}

/// Builds a [`Grammar`] symbol by symbol, then validates it as a whole.
///
/// ```
/// use lacuna::grammar::{GrammarBuilder, Pattern};
/// let mut b = GrammarBuilder::new();
/// let a = b.terminal("A", Pattern::Literal("a".into()), 0);
/// let s = b.nonterminal("s");
/// b.rule(s, vec![a.into(), s.into()]);
/// b.rule(s, vec![]);
/// let g = b.build(s).unwrap();
/// assert_eq!(g.rules().len(), 2);
/// ```
#[derive(Default, Debug)]
pub struct GrammarBuilder {
    terminals: Vec<Terminal>,
    nonterminals: Vec<String>,
    rules: Vec<Rule>,
    ignore: Vec<TerminalId>,
    /// Name → id, so that adding n symbols costs O(n), not O(n²) (schemas and `~` expansions
    /// create hundreds of thousands of nonterminals).
    terminal_ids: HashMap<String, TerminalId>,
    nonterminal_ids: HashMap<String, NonterminalId>,
}

impl GrammarBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts from an existing grammar's symbols and rules, to extend it.
    pub fn from_grammar(g: &Grammar) -> Self {
        let terminal_ids = g.terminals.iter().enumerate();
        let nonterminal_ids = g.nonterminals.iter().enumerate();
        GrammarBuilder {
            terminals: g.terminals.clone(),
            nonterminals: g.nonterminals.clone(),
            rules: g.rules.clone(),
            ignore: g.ignore.clone(),
            terminal_ids: terminal_ids
                .map(|(i, t)| (t.name.clone(), TerminalId(i as u32)))
                .collect(),
            nonterminal_ids: nonterminal_ids
                .map(|(i, n)| (n.clone(), NonterminalId(i as u32)))
                .collect(),
        }
    }

    /// Adds a terminal, or returns the existing one with the same name.
    pub fn terminal(&mut self, name: &str, pattern: Pattern, priority: i32) -> TerminalId {
        if let Some(&id) = self.terminal_ids.get(name) {
            return id;
        }
        let id = TerminalId(self.terminals.len() as u32);
        self.terminals.push(Terminal {
            name: name.to_string(),
            pattern,
            priority,
        });
        self.terminal_ids.insert(name.to_string(), id);
        id
    }

    /// Adds a nonterminal, or returns the existing one with the same name.
    pub fn nonterminal(&mut self, name: &str) -> NonterminalId {
        if let Some(&id) = self.nonterminal_ids.get(name) {
            return id;
        }
        let id = NonterminalId(self.nonterminals.len() as u32);
        self.nonterminals.push(name.to_string());
        self.nonterminal_ids.insert(name.to_string(), id);
        id
    }

    /// Adds a nonterminal with a name not yet used, derived from `base` (for EBNF helpers).
    pub fn fresh_nonterminal(&mut self, base: &str) -> NonterminalId {
        let mut k = self.nonterminals.len();
        loop {
            let name = format!("{base}__{k}");
            if !self.nonterminal_ids.contains_key(&name) {
                return self.nonterminal(&name);
            }
            k += 1;
        }
    }

    /// Adds the rule `lhs → rhs` (`rhs` empty for an ε-rule); duplicates are kept.
    pub fn rule(&mut self, lhs: NonterminalId, rhs: Vec<Symbol>) {
        self.rules.push(Rule { lhs, rhs });
    }

    /// Marks a terminal as skipped between lexemes.
    pub fn ignore(&mut self, t: TerminalId) {
        if !self.ignore.contains(&t) {
            self.ignore.push(t);
        }
    }

    /// Whether a nonterminal of that name has been added.
    pub fn has_nonterminal(&self, name: &str) -> bool {
        self.nonterminal_ids.contains_key(name)
    }

    /// Validates and returns the grammar.
    ///
    /// Errors: a nonterminal without rules, a terminal whose pattern is not a valid regex or
    /// matches the empty string, a start symbol that derives no word.
    pub fn build(self, start: NonterminalId) -> Result<Grammar, GrammarError> {
        let mut has_rule = vec![false; self.nonterminals.len()];
        for r in &self.rules {
            has_rule[r.lhs.index()] = true;
        }
        if let Some(i) = has_rule.iter().position(|h| !h) {
            return Err(GrammarError::UndefinedRule(self.nonterminals[i].clone()));
        }
        for t in &self.terminals {
            check_terminal_pattern(t)?;
        }
        let grammar = Grammar {
            terminals: self.terminals,
            nonterminals: self.nonterminals,
            rules: self.rules,
            start,
            ignore: self.ignore,
        };
        let generating = super::analysis::generating(&grammar);
        if !generating[start.index()] {
            return Err(GrammarError::EmptyLanguage(
                grammar.nonterminal_name(start).to_string(),
            ));
        }
        Ok(grammar)
    }
}

/// Parses a terminal's pattern and refuses ones that match the empty string.
fn check_terminal_pattern(t: &Terminal) -> Result<(), GrammarError> {
    let hir = parse_pattern(&t.pattern).map_err(|message| GrammarError::InvalidPattern {
        terminal: t.name.clone(),
        message,
    })?;
    if !hir.properties().look_set().is_empty() {
        return Err(GrammarError::InvalidPattern {
            terminal: t.name.clone(),
            message: "look-around assertions (^, $, \\b, \\B) cannot be used in a lexeme".into(),
        });
    }
    if hir.properties().minimum_len() == Some(0) {
        return Err(GrammarError::EmptyMatch(t.name.clone()));
    }
    if hir.properties().minimum_len().is_none() {
        return Err(GrammarError::InvalidPattern {
            terminal: t.name.clone(),
            message: "the pattern matches nothing".into(),
        });
    }
    Ok(())
}

/// Parses a pattern with the regex dialect lacuna uses everywhere (Unicode, `.` excludes `\n`),
/// and refuses one whose automaton would be too large to build (a Thompson NFA over 16 MiB).
pub fn parse_pattern(p: &Pattern) -> Result<Hir, String> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(&p.to_regex())
        .map_err(|e| e.to_string())?;
    super::automaton_size::check_automaton_size(&hir)?;
    Ok(hir)
}
