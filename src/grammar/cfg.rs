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

use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashMap, HashTable};
use regex_syntax::hir::Hir;

use super::ring_bonds::RingBonds;
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

/// The language of a terminal: an exact string, one of several exact strings, or a regex in
/// `regex-syntax` syntax.
///
/// A regex matches the whole lexeme (anchoring is implied). No form may match the empty
/// string: a lexeme of length zero would let a lexer loop forever.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// Exactly this string (not a regex: its metacharacters are plain text).
    Literal(String),
    /// Any one of these exact strings. It lexes as a literal (it beats a regex matching the
    /// same text), so a long alternation of literals can be one terminal instead of thousands
    /// (see [`GrammarBuilder::build_merging_alternatives`]).
    Literals(Vec<String>),
    /// A regex in `regex-syntax` syntax, matched against the whole lexeme.
    Regex(String),
    /// A JSON string, quotes included, whose decoded value has between `min` and `max`
    /// characters (code points; `None`: no upper bound), each written as one [`JSON_UNIT`],
    /// and that `regex` matches, if given (a match that is not such a string of units is
    /// not one of this pattern's). Without `regex` it is [`Pattern::to_regex`]'s
    /// counted repetition; either way the lexer counts the units instead of unrolling them
    /// (see [`crate::lexicon`]): `{0,65535}` unrolled is a DFA of ~10⁶ states, counted it is
    /// the dozen states of one unit, and a regex has no intersection to unroll into. Bounds
    /// are at most [`MAX_JSON_STRING_BOUND`].
    JsonString {
        /// The fewest characters.
        min: u32,
        /// The most characters (`None`: any number).
        max: Option<u32>,
        /// What the string must also match (quotes included), e.g. a JSON Schema `pattern`.
        regex: Option<String>,
    },
}

/// One encoded character of a JSON string, which decodes to exactly one code point: a raw
/// character, a short escape, a `\uXXXX` escape of a non-surrogate, or an escaped surrogate
/// pair. Every encoded string is one sequence of units (no unit is a prefix of another).
pub const JSON_UNIT: &str = r#"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u(?:[0-9a-cA-CefEF][0-9a-fA-F]{3}|[dD][0-7][0-9a-fA-F]{2})|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})"#;

/// The largest bound of a [`Pattern::JsonString`] (a string of 2³⁰ characters is a gigabyte).
pub const MAX_JSON_STRING_BOUND: u32 = 1 << 30;

impl Pattern {
    /// The pattern as a regex, literals escaped (several literals as a trie: `a(?:b|c)`). A
    /// [`Pattern::JsonString`] with a `regex` gives that regex without the length bound (no
    /// regex says both); see [`fmt::Display`] of [`Grammar`] for how it is shown.
    pub fn to_regex(&self) -> String {
        match self {
            Pattern::Literal(s) => regex_syntax::escape(s),
            Pattern::Literals(words) => literals_regex(words),
            Pattern::Regex(r) => r.clone(),
            Pattern::JsonString { regex: Some(r), .. } => r.clone(),
            Pattern::JsonString { min, max, .. } => match max {
                Some(max) => format!("\"{JSON_UNIT}{{{min},{max}}}\""),
                None => format!("\"{JSON_UNIT}{{{min},}}\""),
            },
        }
    }

    /// Whether the pattern lexes as a literal: between matches of equal length and priority,
    /// a literal beats a regex.
    pub fn is_literal(&self) -> bool {
        matches!(self, Pattern::Literal(_) | Pattern::Literals(_))
    }
}

/// A regex matching exactly `words`, shaped as their trie so that its automaton has one state
/// per distinct prefix (an alternation of 100,000 words stays small). Built with an explicit
/// stack: words may be long.
fn literals_regex(words: &[String]) -> String {
    let mut w: Vec<Vec<char>> = words.iter().map(|s| s.chars().collect()).collect();
    w.sort_unstable();
    w.dedup();
    if w.is_empty() {
        // An empty class: the pattern matches nothing (and is refused as such).
        return "[a&&b]".into();
    }
    enum Step {
        /// The words `lo..hi`, which share their first `depth` characters: their rests.
        Rest(usize, usize, usize),
        Text(String),
    }
    let escape = |c: char| regex_syntax::escape(c.encode_utf8(&mut [0; 4]));
    let mut out = String::new();
    let mut stack = vec![Step::Rest(0, w.len(), 0)];
    while let Some(step) = stack.pop() {
        let (lo, hi, depth) = match step {
            Step::Text(t) => {
                out.push_str(&t);
                continue;
            }
            Step::Rest(lo, hi, depth) => (lo, hi, depth),
        };
        // Sorted, so a word that ends here comes first; the others group by next character.
        let ends = w[lo].len() == depth;
        let mut groups: Vec<(char, usize, usize)> = Vec::new();
        for (i, word) in w.iter().enumerate().take(hi).skip(lo + usize::from(ends)) {
            let c = word[depth];
            match groups.last_mut() {
                Some(g) if g.0 == c => g.2 = i + 1,
                _ => groups.push((c, i, i + 1)),
            }
        }
        let mut steps = Vec::new();
        if groups.len() == 1 && !ends {
            let (c, glo, ghi) = groups[0];
            steps.push(Step::Text(escape(c)));
            steps.push(Step::Rest(glo, ghi, depth + 1));
        } else if !groups.is_empty() {
            steps.push(Step::Text("(?:".into()));
            for (k, &(c, glo, ghi)) in groups.iter().enumerate() {
                if k > 0 {
                    steps.push(Step::Text("|".into()));
                }
                steps.push(Step::Text(escape(c)));
                steps.push(Step::Rest(glo, ghi, depth + 1));
            }
            steps.push(Step::Text(if ends { ")?" } else { ")" }.into()));
        }
        stack.extend(steps.into_iter().rev());
    }
    out
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
    /// Where each terminal was defined, when the front end said (see
    /// [`GrammarBuilder::set_terminal_source`]).
    sources: Vec<Option<String>>,
    /// The ring-bond constraint on its lexemes, if it has one.
    ring_bonds: Option<RingBonds>,
    /// Nonterminals whose rules a front end wrote already normal (see
    /// [`GrammarBuilder::mark_normal`]).
    normal: Vec<NonterminalId>,
}

impl Grammar {
    /// Nonterminals whose rules are already in the normal form (`A → B C`, `A → B`, `A → ε`,
    /// no terminal), which normalization may leave as they are: a JSON Schema's objects in
    /// any order are thousands of such rules (see [`GrammarBuilder::mark_normal`]).
    pub fn normal_nonterminals(&self) -> &[NonterminalId] {
        &self.normal
    }

    /// The ring-bond constraint on the grammar's lexemes (`%ring_bonds`), if it has one: a
    /// side condition every word must meet besides being derived.
    pub fn ring_bonds(&self) -> Option<&RingBonds> {
        self.ring_bonds.as_ref()
    }

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

    /// Where terminal `t` was defined, as its front end put it (a Lark file's
    /// `file:line:column`, a JSON Schema's pointer), if it said.
    pub fn terminal_source(&self, t: TerminalId) -> Option<&str> {
        self.sources.get(t.index())?.as_deref()
    }

    /// Terminal `t`'s name for messages: shortened to [`MAX_NAME_IN_MESSAGE`] characters, with
    /// where it was defined when known.
    pub fn terminal_label(&self, t: TerminalId) -> String {
        let name = shorten(&self.terminal(t).name, MAX_NAME_IN_MESSAGE);
        match self.terminal_source(t) {
            Some(src) => format!("`{name}` ({src})"),
            None => format!("`{name}`"),
        }
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
            match &t.pattern {
                Pattern::JsonString {
                    min,
                    max,
                    regex: Some(r),
                } => {
                    let max = max.map_or(String::new(), |m| m.to_string());
                    writeln!(f, "{}: /{r}/ of {min}..{max} characters", t.name)?;
                }
                p => writeln!(f, "{}: /{}/", t.name, p.to_regex())?,
            }
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
    nonterminal_ids: NameIndex,
    sources: Vec<Option<String>>,
    ring_bonds: Option<RingBonds>,
    normal: Vec<NonterminalId>,
}

/// Nonterminal names → ids, over the names the builder keeps in its vector: the table holds
/// ids only, so a name is stored once (as a map's key it was stored twice, and a large schema
/// makes thousands of helper names).
#[derive(Clone, Debug, Default)]
struct NameIndex {
    table: HashTable<NonterminalId>,
    hasher: DefaultHashBuilder,
}

impl NameIndex {
    /// The index of `names`, which are distinct.
    fn of(names: &[String]) -> NameIndex {
        let mut index = NameIndex::default();
        for (i, name) in names.iter().enumerate() {
            let hash = index.hash(name);
            index.insert(names, hash, NonterminalId(i as u32));
        }
        index
    }

    fn hash(&self, name: &str) -> u64 {
        self.hasher.hash_one(name)
    }

    /// The id of `name` (whose hash is `hash`), if it is in the index.
    fn find(&self, names: &[String], hash: u64, name: &str) -> Option<NonterminalId> {
        self.table
            .find(hash, |id| names[id.index()] == name)
            .copied()
    }

    /// Indexes the last of `names`, not yet indexed and distinct from the others; its id.
    fn insert_last(&mut self, names: &[String], hash: u64) -> NonterminalId {
        let id = NonterminalId(names.len() as u32 - 1);
        self.insert(names, hash, id);
        id
    }

    fn insert(&mut self, names: &[String], hash: u64, id: NonterminalId) {
        let hasher = &self.hasher;
        self.table.insert_unique(hash, id, |other| {
            hasher.hash_one(names[other.index()].as_str())
        });
    }
}

/// Appends `k` in decimal: `write!` through `fmt` was a twentieth of a large schema's lowering.
fn push_decimal(out: &mut String, mut k: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (k % 10) as u8;
        k /= 10;
        if k == 0 {
            break;
        }
    }
    out.extend(digits[at..].iter().map(|&d| d as char));
}

impl GrammarBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts from an existing grammar's symbols and rules, to extend it.
    pub fn from_grammar(g: &Grammar) -> Self {
        let terminal_ids = g.terminals.iter().enumerate();
        GrammarBuilder {
            terminals: g.terminals.clone(),
            nonterminals: g.nonterminals.clone(),
            rules: g.rules.clone(),
            ignore: g.ignore.clone(),
            terminal_ids: terminal_ids
                .map(|(i, t)| (t.name.clone(), TerminalId(i as u32)))
                .collect(),
            nonterminal_ids: NameIndex::of(&g.nonterminals),
            sources: g.sources.clone(),
            ring_bonds: g.ring_bonds.clone(),
            normal: g.normal.clone(),
        }
    }

    /// Says that `a`'s rules are already normal: each is `A → B C`, `A → B` or `A → ε` over
    /// nonterminals only, and rewriting them cannot make the grammar smaller, so normalization
    /// sets them aside while it rewrites the others (a JSON Schema's objects in any order
    /// were two thirds of a Kubernetes schema's rules and a fifth of its normalization). A
    /// rule of another shape, found when normalizing, makes `a` rewritten like any other.
    pub fn mark_normal(&mut self, a: NonterminalId) {
        self.normal.push(a);
    }

    /// Gives terminal `t` a new name and pattern (its priority stays).
    pub(crate) fn replace_terminal(&mut self, t: TerminalId, name: &str, pattern: Pattern) {
        let old = std::mem::replace(&mut self.terminals[t.index()].name, name.to_string());
        self.terminal_ids.remove(&old);
        self.terminal_ids.insert(name.to_string(), t);
        self.terminals[t.index()].pattern = pattern;
    }

    /// Rewrites every symbol on the right of every rule with `f`.
    pub(crate) fn map_rule_symbols(&mut self, mut f: impl FnMut(Symbol) -> Symbol) {
        for r in &mut self.rules {
            for s in &mut r.rhs {
                *s = f(*s);
            }
        }
    }

    /// Records the grammar's ring-bond constraint.
    pub(crate) fn set_ring_bonds(&mut self, rb: RingBonds) {
        self.ring_bonds = Some(rb);
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
        self.sources.push(None);
        self.terminal_ids.insert(name.to_string(), id);
        id
    }

    /// Records where terminal `t` was defined (a Lark file's `file:line:column`, a JSON
    /// Schema's pointer), for the messages of later stages; the first record stays.
    pub fn set_terminal_source(&mut self, t: TerminalId, source: impl Into<String>) {
        let slot = &mut self.sources[t.index()];
        if slot.is_none() {
            *slot = Some(source.into());
        }
    }

    /// Whether a terminal of that name has been added.
    pub fn has_terminal(&self, name: &str) -> bool {
        self.terminal_ids.contains_key(name)
    }

    /// Adds a nonterminal, or returns the existing one with the same name.
    pub fn nonterminal(&mut self, name: &str) -> NonterminalId {
        let hash = self.nonterminal_ids.hash(name);
        if let Some(id) = self.nonterminal_ids.find(&self.nonterminals, hash, name) {
            return id;
        }
        self.nonterminals.push(name.to_string());
        self.nonterminal_ids.insert_last(&self.nonterminals, hash)
    }

    /// Adds a nonterminal with a name not yet used, derived from `base` (for EBNF helpers).
    /// One lookup and one copy of the name each: a large schema's lowering makes thousands.
    pub fn fresh_nonterminal(&mut self, base: &str) -> NonterminalId {
        let mut name = String::with_capacity(base.len() + 8);
        for k in self.nonterminals.len().. {
            name.clear();
            name.push_str(base);
            name.push_str("__");
            push_decimal(&mut name, k);
            let hash = self.nonterminal_ids.hash(&name);
            if self
                .nonterminal_ids
                .find(&self.nonterminals, hash, &name)
                .is_none()
            {
                self.nonterminals.push(name);
                return self.nonterminal_ids.insert_last(&self.nonterminals, hash);
            }
        }
        unreachable!("some name {base}__k is free")
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
        let hash = self.nonterminal_ids.hash(name);
        self.nonterminal_ids
            .find(&self.nonterminals, hash, name)
            .is_some()
    }

    /// Validates and returns the grammar.
    ///
    /// Errors: a nonterminal without rules, a terminal whose pattern is not a valid regex or
    /// matches the empty string, more productions than [`MAX_PRODUCTIONS`], more terminals than
    /// [`MAX_TERMINALS`] or context tables over
    /// [`MAX_CONTEXT_TABLE_BYTES`], a start symbol that derives no word.
    pub fn build(self, start: NonterminalId) -> Result<Grammar, GrammarError> {
        self.check_defined()?;
        self.check_patterns(0..self.terminals.len())?;
        self.finish(start)
    }

    /// Checks the patterns of terminals `ids`; an error is placed where its terminal was
    /// defined, when the front end said.
    fn check_patterns(&self, ids: impl Iterator<Item = usize>) -> Result<(), GrammarError> {
        for i in ids {
            check_terminal_pattern(&self.terminals[i]).map_err(|e| match &self.sources[i] {
                Some(place) => GrammarError::At {
                    place: place.clone(),
                    error: Box::new(e),
                },
                None => e,
            })?;
        }
        Ok(())
    }

    /// [`GrammarBuilder::build`], after turning each long list of alternatives `A → t₁ | … |
    /// tₙ` (at least [`MIN_MERGED_ALTERNATIVES`] of them, each terminal used nowhere else and
    /// not ignored, all of one priority and all literals or all regexes; `A → B` with `B → t`
    /// counts as `A → t` when B has no other rule and no other use) into `A → T` with one
    /// terminal T matching what any of them matches.
    ///
    /// The language and the lexing are unchanged: T matches the same texts as the tᵢ together,
    /// ranks as they did, and stands where they stood. But the lexer and everything built on
    /// it grow with the number of terminals, so an `enum` of 10,000 values or an alternation of
    /// 100,000 keywords becomes one lexeme instead of thousands. Front ends call this; the ids
    /// of the merged terminals (and of helpers like B) are gone afterwards, and the others are
    /// renumbered densely.
    pub fn build_merging_alternatives(
        mut self,
        start: NonterminalId,
    ) -> Result<Grammar, GrammarError> {
        self.check_defined()?;
        self.check_patterns(0..self.terminals.len())?;
        let (start, merged) = self.merge_alternatives(start);
        self.check_patterns(merged.iter().map(|t| t.index()))?;
        self.finish(start)
    }

    fn check_defined(&self) -> Result<(), GrammarError> {
        let mut has_rule = vec![false; self.nonterminals.len()];
        for r in &self.rules {
            has_rule[r.lhs.index()] = true;
        }
        if let Some(i) = has_rule.iter().position(|h| !h) {
            return Err(GrammarError::UndefinedRule(self.nonterminals[i].clone()));
        }
        Ok(())
    }

    /// The checks after the patterns': size limits and a start symbol that derives a word.
    fn finish(self, start: NonterminalId) -> Result<Grammar, GrammarError> {
        let terminals = self.terminals.len();
        if self.rules.len() > MAX_PRODUCTIONS {
            return Err(GrammarError::TooLarge(format!(
                "{} productions exceed the limit of {MAX_PRODUCTIONS}",
                self.rules.len()
            )));
        }
        if terminals > MAX_TERMINALS {
            return Err(GrammarError::TooLarge(format!(
                "{terminals} terminals exceed the limit of {MAX_TERMINALS} (a long list of \
                 alternatives is one terminal when each is a single terminal used nowhere else)"
            )));
        }
        // The normalizer keeps, for every nonterminal of the normal form, a bitset of the
        // terminals that may precede it and one of those that may follow it; the normal form
        // has at most the nonterminals, the right-hand-side symbols and the terminals of this
        // grammar.
        let symbols: usize = self.rules.iter().map(|r| r.rhs.len()).sum();
        let rows = self.nonterminals.len() + symbols + terminals;
        let table = rows.saturating_mul(terminals.div_ceil(64).max(1) * 8);
        if table > MAX_CONTEXT_TABLE_BYTES {
            return Err(GrammarError::TooLarge(format!(
                "{terminals} terminals and {} nonterminals: the normal form's context tables \
                 (up to {rows} rows of {terminals} bits) would take {} MiB, more than the limit \
                 of {} MiB",
                self.nonterminals.len(),
                table >> 20,
                MAX_CONTEXT_TABLE_BYTES >> 20
            )));
        }
        let grammar = Grammar {
            terminals: self.terminals,
            nonterminals: self.nonterminals,
            rules: self.rules,
            start,
            ignore: self.ignore,
            sources: self.sources,
            ring_bonds: self.ring_bonds,
            normal: self.normal,
        };
        let generating = super::analysis::generating(&grammar);
        if !generating[start.index()] {
            return Err(GrammarError::EmptyLanguage(
                grammar.nonterminal_name(start).to_string(),
            ));
        }
        Ok(grammar)
    }

    /// See [`GrammarBuilder::build_merging_alternatives`]; returns the start symbol's new id
    /// and the merged terminals' ids.
    fn merge_alternatives(&mut self, start: NonterminalId) -> (NonterminalId, Vec<TerminalId>) {
        if self.ring_bonds.is_some() {
            // Ring-bond labels are one terminal each so that automata tell them apart.
            return (start, Vec::new());
        }
        let (nts, ts) = (self.nonterminals.len(), self.terminals.len());
        let mut t_uses = vec![0u32; ts];
        let mut n_uses = vec![0u32; nts];
        let mut n_rules = vec![0u32; nts];
        let mut only_rule = vec![usize::MAX; nts];
        for (i, r) in self.rules.iter().enumerate() {
            n_rules[r.lhs.index()] += 1;
            only_rule[r.lhs.index()] = i;
            for s in &r.rhs {
                match *s {
                    Symbol::T(t) => t_uses[t.index()] += 1,
                    Symbol::N(n) => n_uses[n.index()] += 1,
                }
            }
        }
        for &t in &self.ignore {
            t_uses[t.index()] += 1;
        }
        // The terminal rule i (`A → X`) stands for, and B when X is such a helper.
        let leaf = |i: usize| -> Option<(TerminalId, Option<NonterminalId>)> {
            let r = &self.rules[i];
            // A counted string stays a terminal of its own: the lexer counts it.
            let mergeable = |t: TerminalId| {
                !matches!(
                    self.terminals[t.index()].pattern,
                    Pattern::JsonString { .. }
                )
            };
            match r.rhs[..] {
                [Symbol::T(t)] if t_uses[t.index()] == 1 && mergeable(t) => Some((t, None)),
                [Symbol::N(b)]
                    if b != start
                        && b != r.lhs
                        && n_uses[b.index()] == 1
                        && n_rules[b.index()] == 1 =>
                {
                    match self.rules[only_rule[b.index()]].rhs[..] {
                        [Symbol::T(t)] if t_uses[t.index()] == 1 && mergeable(t) => {
                            Some((t, Some(b)))
                        }
                        _ => None,
                    }
                }
                _ => None,
            }
        };
        let leaves: Vec<Option<(TerminalId, Option<NonterminalId>)>> =
            (0..self.rules.len()).map(leaf).collect();
        let mut groups: HashMap<(NonterminalId, i32, bool), Vec<usize>> = HashMap::new();
        let mut keys = Vec::new();
        for (i, leaf) in leaves.iter().enumerate() {
            if let Some((t, _)) = *leaf {
                let term = &self.terminals[t.index()];
                let key = (self.rules[i].lhs, term.priority, term.pattern.is_literal());
                let group = groups.entry(key).or_default();
                if group.is_empty() {
                    keys.push(key);
                }
                group.push(i);
            }
        }
        let mut dead_rule = vec![false; self.rules.len()];
        let mut dead_t = vec![false; ts];
        let mut dead_n = vec![false; nts];
        let mut merged = Vec::new();
        let mut replaced = Vec::new();
        for key in keys {
            let group = &groups[&key];
            if group.len() < MIN_MERGED_ALTERNATIVES {
                continue;
            }
            let mut words = Vec::new();
            let mut regexes = Vec::new();
            let mut source = None;
            for &i in group {
                let (t, helper) = leaves[i].expect("grouped rules are leaves");
                dead_rule[i] = true;
                dead_t[t.index()] = true;
                if let Some(b) = helper {
                    dead_n[b.index()] = true;
                    dead_rule[only_rule[b.index()]] = true;
                }
                source = source.or_else(|| self.sources[t.index()].clone());
                match &self.terminals[t.index()].pattern {
                    Pattern::Literal(w) => words.push(w.clone()),
                    Pattern::Literals(ws) => words.extend(ws.iter().cloned()),
                    Pattern::Regex(r) => regexes.push(format!("(?:{r})")),
                    Pattern::JsonString { .. } => {
                        unreachable!("counted strings are not leaves")
                    }
                }
            }
            let first = leaves[group[0]].expect("a leaf").0;
            let last = leaves[group[group.len() - 1]].expect("a leaf").0;
            let base = format!(
                "{} | … | {} ({} alternatives)",
                shorten(&self.terminals[first.index()].name, 32),
                shorten(&self.terminals[last.index()].name, 32),
                group.len()
            );
            let mut name = base.clone();
            let mut k = 1;
            while self.has_terminal(&name) {
                k += 1;
                name = format!("{base}#{k}");
            }
            let pattern = if key.2 {
                Pattern::Literals(words)
            } else {
                Pattern::Regex(regexes.join("|"))
            };
            let t = self.terminal(&name, pattern, key.1);
            self.sources[t.index()] = source;
            dead_t.push(false);
            merged.push(t);
            dead_rule[group[0]] = false;
            replaced.push((group[0], key.0, t));
        }
        if merged.is_empty() {
            return (start, merged);
        }
        for (i, lhs, t) in replaced {
            self.rules[i] = Rule {
                lhs,
                rhs: vec![Symbol::T(t)],
            };
        }
        // Renumber densely without the dead symbols and rules.
        let mut t_map = vec![u32::MAX; dead_t.len()];
        let mut n_map = vec![u32::MAX; nts];
        let terminals = std::mem::take(&mut self.terminals);
        let sources = std::mem::take(&mut self.sources);
        for (i, (t, src)) in terminals.into_iter().zip(sources).enumerate() {
            if !dead_t[i] {
                t_map[i] = self.terminals.len() as u32;
                self.terminals.push(t);
                self.sources.push(src);
            }
        }
        let nonterminals = std::mem::take(&mut self.nonterminals);
        for (i, n) in nonterminals.into_iter().enumerate() {
            if !dead_n[i] {
                n_map[i] = self.nonterminals.len() as u32;
                self.nonterminals.push(n);
            }
        }
        let rules = std::mem::take(&mut self.rules);
        self.rules = rules
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !dead_rule[*i])
            .map(|(_, r)| Rule {
                lhs: NonterminalId(n_map[r.lhs.index()]),
                rhs: r
                    .rhs
                    .into_iter()
                    .map(|s| match s {
                        Symbol::T(t) => Symbol::T(TerminalId(t_map[t.index()])),
                        Symbol::N(n) => Symbol::N(NonterminalId(n_map[n.index()])),
                    })
                    .collect(),
            })
            .collect();
        for t in &mut self.ignore {
            *t = TerminalId(t_map[t.index()]);
        }
        self.normal.retain(|a| n_map[a.index()] != u32::MAX);
        for a in &mut self.normal {
            *a = NonterminalId(n_map[a.index()]);
        }
        self.terminal_ids = self
            .terminals
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), TerminalId(i as u32)))
            .collect();
        self.nonterminal_ids = NameIndex::of(&self.nonterminals);
        let merged = merged
            .into_iter()
            .map(|t| TerminalId(t_map[t.index()]))
            .collect();
        (NonterminalId(n_map[start.index()]), merged)
    }
}

/// Alternatives `A → t` of one nonterminal (see [`GrammarBuilder::build_merging_alternatives`])
/// are merged into one terminal from this many on; shorter lists keep their terminals.
pub const MIN_MERGED_ALTERNATIVES: usize = 32;

/// The most productions (alternatives of all rules) a grammar may have: each costs about a
/// kilobyte through normalization, so this bounds a grammar's memory near half a gigabyte.
pub const MAX_PRODUCTIONS: usize = 500_000;

/// The most terminals a grammar may have (after merging alternatives).
pub const MAX_TERMINALS: usize = 32_768;

/// The most memory, in bytes, one of the normal form's context tables may take by the
/// estimate in [`GrammarBuilder::build`] (a bitset of terminals per nonterminal).
pub const MAX_CONTEXT_TABLE_BYTES: usize = 256 << 20;

/// The most characters of a name or a piece of grammar text an error message echoes.
pub const MAX_NAME_IN_MESSAGE: usize = 80;

/// `s` cut to at most `max` characters (`max` ≥ 32): its beginning, `…` and its full length.
pub fn shorten(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    // The tail "… (N characters)" takes at most 24 characters.
    let head: String = s.chars().take(max.saturating_sub(24).max(8)).collect();
    format!("{head}… ({n} characters)")
}

/// Literal patterns of at most this many bytes in all are accepted without being parsed as
/// regexes ([`check_terminal_pattern`]).
const SHORT_WORDS_BYTES: usize = 4096;

/// Parses a terminal's pattern and refuses ones that match the empty string.
///
/// The automaton's size is checked as far as its Thompson NFA (see [`parse_pattern`]); the
/// front ends check the DFA of each pattern a user wrote where they read it, and the lexicon
/// bounds the DFA of all terminals together.
fn check_terminal_pattern(t: &Terminal) -> Result<(), GrammarError> {
    let name = shorten(&t.name, MAX_NAME_IN_MESSAGE);
    if let Pattern::JsonString { min, max, regex } = &t.pattern {
        let (min, max) = (*min, *max);
        // Never unrolled (its regex may be enormous): its bounds, and its own regex if any.
        if let Some(r) = regex {
            let hir = parse_size_checked(r).map_err(|message| GrammarError::InvalidPattern {
                terminal: name.clone(),
                message,
            })?;
            if !hir.properties().look_set().is_empty() || hir.properties().minimum_len() == Some(0)
            {
                return Err(GrammarError::InvalidPattern {
                    terminal: name,
                    message: "a counted string's regex must match non-empty strings and not \
                              look around"
                        .into(),
                });
            }
        }
        let message = if max.is_some_and(|max| max < min) {
            "the pattern matches nothing (its maximum length is below its minimum)".to_string()
        } else if min.max(max.unwrap_or(0)) > MAX_JSON_STRING_BOUND {
            format!("a string length bound above {MAX_JSON_STRING_BOUND}")
        } else {
            return Ok(());
        };
        return Err(GrammarError::InvalidPattern {
            terminal: name,
            message,
        });
    }
    // Words of a few KiB make small automata and match no empty string when none is empty:
    // nothing to check, and parsing each as a regex was a tenth of lowering a Kubernetes
    // schema (hundreds of property-name literals).
    let words: &[String] = match &t.pattern {
        Pattern::Literal(w) => std::slice::from_ref(w),
        Pattern::Literals(ws) => ws,
        _ => &[],
    };
    let bytes: usize = words.iter().map(String::len).sum();
    if !words.is_empty() && words.iter().all(|w| !w.is_empty()) && bytes <= SHORT_WORDS_BYTES {
        return Ok(());
    }
    let hir = parse_size_checked(&t.pattern.to_regex()).map_err(|message| {
        GrammarError::InvalidPattern {
            terminal: name.clone(),
            message,
        }
    })?;
    if !hir.properties().look_set().is_empty() {
        return Err(GrammarError::InvalidPattern {
            terminal: name,
            message: "look-around assertions (^, $, \\b, \\B) cannot be used in a lexeme".into(),
        });
    }
    if hir.properties().minimum_len() == Some(0) {
        return Err(GrammarError::EmptyMatch(name));
    }
    if hir.properties().minimum_len().is_none() {
        return Err(GrammarError::InvalidPattern {
            terminal: name,
            message: "the pattern matches nothing".into(),
        });
    }
    Ok(())
}

/// Parses a pattern with the regex dialect lacuna uses everywhere (Unicode, `.` excludes `\n`),
/// and refuses one whose automaton would be too large to build: a Thompson NFA over
/// [`MAX_PATTERN_NFA_BYTES`](super::MAX_PATTERN_NFA_BYTES), or a DFA whose construction needs
/// more than [`MAX_PATTERN_DETERMINIZE_BYTES`](super::MAX_PATTERN_DETERMINIZE_BYTES) (a DFA can
/// have exponentially more states than its pattern has characters: `(a|b)*a(a|b){24}` has
/// 2²⁵).
pub fn parse_pattern(p: &Pattern) -> Result<Hir, String> {
    let hir = parse_size_checked(&p.to_regex())?;
    super::automaton_size::check_dfa_size(&hir)?;
    Ok(hir)
}

/// Parses a regex with lacuna's dialect; a syntax error's message quotes at most
/// [`MAX_NAME_IN_MESSAGE`] characters of the regex around the error.
pub(crate) fn parse_regex(re: &str) -> Result<Hir, String> {
    super::regex_cache::parsed(re, |re| {
        regex_syntax::ParserBuilder::new()
            .build()
            .parse(re)
            .map_err(|e| regex_error_message(&e, re))
    })
}

/// [`parse_regex`] and [`check_automaton_size`](super::check_automaton_size), each done once
/// a process for a regex many grammars share.
fn parse_size_checked(re: &str) -> Result<Hir, String> {
    super::regex_cache::parsed_and_checked(
        re,
        parse_regex,
        super::automaton_size::check_automaton_size,
    )
}

/// regex-syntax's message, which quotes the whole regex with a caret under the error, for
/// short regexes; for long ones what is wrong, where, and the text around it.
fn regex_error_message(e: &regex_syntax::Error, re: &str) -> String {
    if re.chars().count() <= MAX_NAME_IN_MESSAGE {
        return e.to_string();
    }
    let (kind, span) = match e {
        regex_syntax::Error::Parse(e) => (e.kind().to_string(), *e.span()),
        regex_syntax::Error::Translate(e) => (e.kind().to_string(), *e.span()),
        _ => return shorten(&e.to_string(), MAX_NAME_IN_MESSAGE),
    };
    let at = span.start.offset.min(re.len());
    let mut from = at.saturating_sub(MAX_NAME_IN_MESSAGE / 2);
    while !re.is_char_boundary(from) {
        from -= 1;
    }
    let excerpt: String = re[from..].chars().take(MAX_NAME_IN_MESSAGE).collect();
    format!(
        "regex parse error at line {} column {} of a {}-byte regex: {kind} (near `{excerpt}`)",
        span.start.line,
        span.start.column,
        re.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full_match(re: &str, text: &str) -> bool {
        regex_automata::meta::Regex::new(&format!("^(?:{re})$"))
            .unwrap()
            .is_match(text)
    }

    #[test]
    fn literal_alternations_become_tries_that_match_exactly_their_words() {
        let words: Vec<String> = [
            "a",
            "ab",
            "abc",
            "b",
            "ba",
            "",
            "a.b",
            "日本",
            "日本語",
            "x",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let re = Pattern::Literals(words.clone()).to_regex();
        for w in &words {
            assert!(full_match(&re, w), "{re} should match {w:?}");
        }
        for w in ["abd", "aab", "c", "a-b", "日", "bab", "xx"] {
            assert!(!full_match(&re, w), "{re} should not match {w:?}");
        }
        assert_eq!(
            Pattern::Literals(vec!["ab".into(), "ac".into()]).to_regex(),
            "a(?:b|c)"
        );
        assert!(Pattern::Literals(vec![]).to_regex().contains("&&"));
        // A hundred thousand words: a trie, built without recursion.
        let many: Vec<String> = (0..100_000).map(|i| format!("w{i}")).collect();
        let re = Pattern::Literals(many).to_regex();
        assert!(re.len() < 600_000, "{}", re.len());
        assert!(full_match(&re, "w99999") && !full_match(&re, "w100000"));
        let long = vec!["x".repeat(100_000)];
        assert_eq!(Pattern::Literals(long).to_regex().len(), 100_000);
    }

    /// `start → t₀ | … | tₙ₋₁` with each tᵢ a literal or regex, plus `start → "z" u` and
    /// `u → "y"` (not merged: used twice / in a longer rule).
    fn alternation(n: usize, regex: bool) -> GrammarBuilder {
        let mut b = GrammarBuilder::new();
        let s = b.nonterminal("start");
        for i in 0..n {
            let p = if regex {
                Pattern::Regex(format!("w{i}[a-c]*"))
            } else {
                Pattern::Literal(format!("w{i}"))
            };
            let t = b.terminal(&format!("T{i}"), p, 0);
            b.set_terminal_source(t, format!("g.lark:{}:1", i + 1));
            b.rule(s, vec![Symbol::T(t)]);
        }
        let z = b.terminal("Z", Pattern::Literal("z".into()), 0);
        b.rule(s, vec![Symbol::T(z), Symbol::T(z)]);
        b
    }

    #[test]
    fn long_alternations_of_single_use_terminals_merge_into_one() {
        for regex in [false, true] {
            let b = alternation(MIN_MERGED_ALTERNATIVES, regex);
            let s = NonterminalId(0);
            let g = b.build_merging_alternatives(s).unwrap();
            assert_eq!(g.terminals().len(), 2, "Z and the merged terminal");
            assert_eq!(g.rules().len(), 2);
            let merged = g.terminals().iter().find(|t| t.name != "Z").unwrap();
            assert!(merged.name.contains("T0") && merged.name.contains("alternatives"));
            assert_eq!(merged.pattern.is_literal(), !regex);
            let re = merged.pattern.to_regex();
            assert!(full_match(&re, "w0") && full_match(&re, "w31") && !full_match(&re, "w32"));
            let id = g.terminal_by_name(&merged.name).unwrap();
            assert_eq!(g.terminal_source(id), Some("g.lark:1:1"));
        }
        // Fewer alternatives stay apart.
        let b = alternation(MIN_MERGED_ALTERNATIVES - 1, false);
        let g = b.build_merging_alternatives(NonterminalId(0)).unwrap();
        assert_eq!(g.terminals().len(), MIN_MERGED_ALTERNATIVES);
    }

    #[test]
    fn terminals_used_elsewhere_ignored_or_of_other_ranks_are_not_merged() {
        let mut b = alternation(MIN_MERGED_ALTERNATIVES + 3, false);
        let s = NonterminalId(0);
        // T0 used a second time, T1 ignored, T2 of another priority.
        let other = b.nonterminal("other");
        b.rule(other, vec![Symbol::T(TerminalId(0))]);
        b.rule(s, vec![Symbol::N(other)]);
        b.ignore(TerminalId(1));
        b.terminals[2].priority = 3;
        // A helper `h → T3`, used once as `start → h`, counts as T3.
        let h = b.nonterminal("h");
        let t = b.terminal("H", Pattern::Literal("h".into()), 0);
        b.rule(h, vec![Symbol::T(t)]);
        b.rule(s, vec![Symbol::N(h)]);
        let g = b.build_merging_alternatives(s).unwrap();
        let names: Vec<&str> = g.terminals().iter().map(|t| t.name.as_str()).collect();
        assert!(names.contains(&"T0") && names.contains(&"T1") && names.contains(&"T2"));
        assert!(!names.contains(&"T3") && !names.contains(&"H"), "{names:?}");
        assert!(g.nonterminal_by_name("h").is_none());
        assert_eq!(g.ignored(), &[g.terminal_by_name("T1").unwrap()]);
        let merged = g
            .terminals()
            .iter()
            .find(|t| t.name.contains("alternatives"));
        assert!(full_match(&merged.unwrap().pattern.to_regex(), "h"));
    }

    #[test]
    fn terminal_errors_are_placed_where_the_front_end_said() {
        let mut b = GrammarBuilder::new();
        let s = b.nonterminal("start");
        let t = b.terminal("A", Pattern::Regex("a?".into()), 0);
        b.set_terminal_source(t, "x.lark:2:1");
        b.rule(s, vec![Symbol::T(t)]);
        let e = b.build(s).unwrap_err();
        assert_eq!(e.to_string(), format!("x.lark:2:1: {}", e.unplaced()));
        assert_eq!(e.unplaced(), &GrammarError::EmptyMatch("A".into()));
    }

    #[test]
    fn too_many_terminals_are_refused_by_name() {
        let mut b = GrammarBuilder::new();
        let s = b.nonterminal("start");
        let mut rhs = Vec::new();
        for i in 0..=MAX_TERMINALS {
            rhs.push(Symbol::T(b.terminal(
                &i.to_string(),
                Pattern::Literal(format!("x{i}")),
                0,
            )));
        }
        b.rule(s, rhs);
        let e = b.build(s).unwrap_err().to_string();
        assert!(
            e.contains(&MAX_TERMINALS.to_string()) && e.contains("terminals"),
            "{e}"
        );
    }

    #[test]
    fn long_names_and_regexes_are_quoted_short() {
        assert_eq!(shorten("abc", 80), "abc");
        let s = shorten(&"x".repeat(1000), 80);
        assert!(
            s.chars().count() <= 80 && s.ends_with("(1000 characters)"),
            "{s}"
        );
        let re = format!("{}(", "a".repeat(100_000));
        let e = parse_regex(&re).unwrap_err();
        assert!(e.len() < 400 && e.contains("100001-byte"), "{e}");
    }
}
