//! The dense lexer table: states × byte classes, with each state's winning lexemes.

use regex_automata::dfa::dense;
use regex_automata::nfa::thompson::{self, WhichCaptures, NFA};
use smallvec::SmallVec;
use thiserror::Error;

use super::counted::{Count, CountedStrings, CountedTerm, DfaTable, Rank};
use super::dense_fallback::with_regex_automata;
use super::determinize::{determinize, Determinized};
use super::Lexeme;
use crate::grammar::automaton_size::{pattern_dfa_config, pattern_nfa_config};
use crate::grammar::{
    Grammar, Pattern, Symbol, TerminalId, JSON_UNIT, MAX_DFA_BYTES, MAX_PATTERN_NFA_BYTES,
};

/// A state of the lexer table. [`DEAD`] is the state no continuation leaves.
pub type StateId = u32;

/// The dead state: no pattern matches any extension of the text read so far.
pub const DEAD: StateId = 0;

/// Upper bound on the memory regex-automata may use to build the lexer DFA (and on the DFA).
const DFA_SIZE_LIMIT: usize = MAX_DFA_BYTES;

/// Upper bound on the memory of the Thompson NFA of all terminals together, which is built
/// before the DFA and is not bounded by [`DFA_SIZE_LIMIT`]. Each pattern alone is held to
/// [`MAX_PATTERN_NFA_BYTES`] when it is parsed (an error naming the terminal); this limit
/// keeps the memory bounded for any grammar however it was built.
const NFA_SIZE_LIMIT: usize = 4 * MAX_PATTERN_NFA_BYTES;

/// Why a grammar's terminals could not be compiled into a lexer.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum LexiconError {
    #[error("cannot compile the grammar's terminals into a lexer: {0}")]
    Build(String),
    /// The terminals' automaton exceeds a limit (named in the message, with the terminals that
    /// need the most).
    #[error("cannot compile the grammar's terminals into a lexer: {0}")]
    TooLarge(String),
    #[error("the grammar has no terminals")]
    NoTerminals,
}

/// The text of one complete lexing failure: no pattern matches at `offset`.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("no terminal matches the text at byte {offset}")]
pub struct LexError {
    pub offset: usize,
}

/// All of a grammar's lexemes as one DFA over byte classes. See the [module docs](super).
#[derive(Clone, Debug)]
pub struct Lexicon {
    classes: [u8; 256],
    num_classes: usize,
    /// `trans[s * num_classes + c]`.
    trans: Vec<StateId>,
    winners: Vec<SmallVec<[Lexeme; 2]>>,
    /// Some continuation of one or more bytes reaches a match.
    extendable: Vec<bool>,
    start: StateId,
    /// The counted strings, if the grammar has any (see `counted.rs`).
    counted: Option<Box<CountedStrings>>,
}

/// One pattern of the lexer and how it ranks against others matching the same text.
pub(super) struct Entry {
    regex: String,
    lexeme: Lexeme,
    rank: Rank,
    terminal: TerminalId,
}

/// The lexer's patterns: one [`Entry`] per regex or literal pattern, then the counted strings'
/// *families*, one NFA pattern per distinct regex of counted strings (after the entries).
pub(super) struct Patterns {
    pub(super) entries: Vec<Entry>,
    counted: Vec<CountedTerm>,
    /// Family 0 is every JSON string of units, which tracks the count; the others are the
    /// counted strings' own regexes.
    families: Vec<String>,
}

/// The family of every counted string: a JSON string of units, of any length.
fn units_regex() -> String {
    format!("\"{JSON_UNIT}*\"")
}

impl Lexicon {
    /// Compiles the terminals that occur in `g`'s rules and its `%ignore` patterns.
    pub fn new(g: &Grammar) -> Result<Lexicon, LexiconError> {
        let patterns = patterns(g);
        if patterns.entries.is_empty() && patterns.counted.is_empty() {
            return Err(LexiconError::NoTerminals);
        }
        let nfa = terminals_nfa(g, &patterns)?;
        if let Some(d) = determinize(&nfa, DFA_SIZE_LIMIT) {
            return finish(g, d, patterns);
        }
        // Look-around, or past this construction's limit: regex-automata's determinizer.
        with_regex_automata(g, patterns, &nfa, Some(DFA_SIZE_LIMIT))
    }

    /// The lexicon of the same NFA as regex-automata's dense determinizer builds it (no limits:
    /// for tests and benchmarks), which the tests hold [`Lexicon::new`] to and the benchmarks
    /// time it against.
    #[cfg(any(test, feature = "internals"))]
    pub fn new_with_regex_automata(g: &Grammar) -> Lexicon {
        let patterns = patterns(g);
        let nfa = terminals_nfa(g, &patterns).unwrap();
        with_regex_automata(g, patterns, &nfa, None).unwrap()
    }

    /// The state before any byte.
    pub fn start(&self) -> StateId {
        self.start
    }

    /// The number of states, [`DEAD`] included.
    pub fn num_states(&self) -> usize {
        self.winners.len()
    }

    /// The number of byte classes (bytes no pattern tells apart share one).
    pub fn num_classes(&self) -> usize {
        self.num_classes
    }

    /// The class of `byte`.
    #[inline]
    pub fn class_of(&self, byte: u8) -> usize {
        self.classes[byte as usize] as usize
    }

    /// The state after `byte` from `s`.
    #[inline]
    pub fn next(&self, s: StateId, byte: u8) -> StateId {
        self.trans[s as usize * self.num_classes + self.classes[byte as usize] as usize]
    }

    /// The state after any byte of `class` from `s`.
    #[inline]
    pub fn next_class(&self, s: StateId, class: usize) -> StateId {
        self.trans[s as usize * self.num_classes + class]
    }

    /// The lexemes the text read so far would be, if the token ended here (empty: none),
    /// leaving out counted strings (see [`Lexicon::winners_counted`]).
    #[inline]
    pub fn winners(&self, s: StateId) -> &[Lexeme] {
        &self.winners[s as usize]
    }

    /// Whether the grammar has counted strings: configurations then carry a [`Count`].
    pub fn counts_strings(&self) -> bool {
        self.counted.is_some()
    }

    /// The count from which, at one state, a smaller count of a counted string admits every
    /// continuation a larger one does (see [`CountedStrings::dominance_floor`]); `None` without
    /// counted strings or where their ranks make that false.
    pub fn counted_dominance_floor(&self) -> Option<u32> {
        self.counted.as_ref().and_then(|c| c.dominance_floor())
    }

    /// The count after the step `from` → `to` from `count` ([`Count::NONE`] without counted
    /// strings, and outside them).
    #[inline]
    pub fn step_count(&self, from: StateId, to: StateId, count: Count) -> Count {
        match &self.counted {
            Some(c) => c.step(from, to, count),
            None => Count::NONE,
        }
    }

    /// Whether a token at `s` could end here: it has winners, or it closes a counted string
    /// (whose count decides).
    #[inline]
    pub fn may_match(&self, s: StateId) -> bool {
        !self.winners[s as usize].is_empty() || self.counted.as_ref().is_some_and(|c| c.closed(s))
    }

    /// The winners at `s` with the counted string's `count`: [`Lexicon::winners`] and the
    /// counted strings admitting the count, of the best rank (for an open count, those of
    /// every count it stands for).
    pub fn winners_counted(&self, s: StateId, count: Count) -> SmallVec<[Lexeme; 2]> {
        match &self.counted {
            Some(c) if c.closed(s) => c.winners(s, count, &self.winners[s as usize]),
            _ => self.winners[s as usize].iter().copied().collect(),
        }
    }

    /// Whether a hole that reaches `s` with `n` counted units also reaches it with every
    /// larger count (false outside counted strings).
    pub fn pumpable(&self, s: StateId) -> bool {
        self.counted.as_ref().is_some_and(|c| c.pumpable(s))
    }

    /// Whether one or more further bytes can lead to a match (a longer token).
    #[inline]
    pub fn extendable(&self, s: StateId) -> bool {
        self.extendable[s as usize]
    }

    /// Lexes a complete text: the tokens in order, each with its possible lexemes (skipped
    /// text omitted; a token whose winners include both a skip and terminals keeps all).
    pub fn lex(&self, text: &[u8]) -> Result<Vec<SmallVec<[Lexeme; 2]>>, LexError> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < text.len() {
            let mut s = self.start;
            let mut count = Count::NONE;
            let mut last = None;
            for (i, &b) in text[pos..].iter().enumerate() {
                let next = self.next(s, b);
                if next == DEAD {
                    break;
                }
                count = self.step_count(s, next, count);
                s = next;
                if self.may_match(s) {
                    let w = self.winners_counted(s, count);
                    if !w.is_empty() {
                        last = Some((pos + i + 1, w));
                    }
                }
            }
            let (end, w) = last.ok_or(LexError { offset: pos })?;
            if w.as_slice() != [Lexeme::Skip] {
                out.push(w);
            }
            pos = end;
        }
        Ok(out)
    }
}

/// One Thompson NFA of all of `entries`' patterns (pattern `i` is `entries[i]`), without
/// captures, under [`NFA_SIZE_LIMIT`].
fn terminals_nfa(g: &Grammar, patterns: &Patterns) -> Result<NFA, LexiconError> {
    let entries = &patterns.entries;
    let mut regexes: Vec<&str> = entries.iter().map(|e| e.regex.as_str()).collect();
    regexes.extend(patterns.families.iter().map(String::as_str));
    // Parsed through the process's cache (the grammar's check parsed them already, and other
    // grammars share most), with the dialect `syntax::Config::new()` would give.
    let hirs = regexes
        .iter()
        .map(|re| crate::grammar::parse_regex(re))
        .collect::<Result<Vec<_>, String>>()
        .map_err(LexiconError::Build)?;
    thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .nfa_size_limit(Some(NFA_SIZE_LIMIT))
                .which_captures(WhichCaptures::None),
        )
        .build_many_from_hir(&hirs)
        .map_err(|e| {
            if e.size_limit().is_some() {
                too_large(g, entries)
            } else {
                LexiconError::Build(e.to_string())
            }
        })
}

/// The lexer's patterns: terminals used by some rule, then ignored ones.
fn patterns(g: &Grammar) -> Patterns {
    let mut used = vec![false; g.terminals().len()];
    for r in g.rules() {
        for s in &r.rhs {
            if let Symbol::T(t) = *s {
                used[t.index()] = true;
            }
        }
    }
    let mut out = Vec::new();
    let mut counted = Vec::new();
    let mut families: Vec<String> = Vec::new();
    for (i, t) in g.terminals().iter().enumerate() {
        let literal = t.pattern.is_literal();
        let id = TerminalId(i as u32);
        if let Pattern::JsonString { min, max, regex } = &t.pattern {
            if families.is_empty() {
                families.push(units_regex());
            }
            let family = match regex {
                None => 0,
                Some(r) => match families.iter().position(|f| f == r) {
                    Some(f) => f,
                    None => {
                        families.push(r.clone());
                        families.len() - 1
                    }
                },
            } as u32;
            let lexemes = [
                (used[i], Lexeme::Terminal(id)),
                (g.ignored().contains(&id), Lexeme::Skip),
            ];
            for (_, lexeme) in lexemes.into_iter().filter(|(on, _)| *on) {
                counted.push(CountedTerm {
                    lexeme,
                    rank: (t.priority, false),
                    min: *min,
                    max: *max,
                    family,
                });
            }
            continue;
        }
        if used[i] {
            out.push(Entry {
                regex: t.pattern.to_regex(),
                lexeme: Lexeme::Terminal(id),
                rank: (t.priority, literal),
                terminal: id,
            });
        }
        if g.ignored().contains(&id) {
            out.push(Entry {
                regex: t.pattern.to_regex(),
                lexeme: Lexeme::Skip,
                rank: (t.priority, literal),
                terminal: id,
            });
        }
    }
    Patterns {
        entries: out,
        counted,
        families,
    }
}

/// The error for terminals whose DFA together exceeds a limit: each terminal's own DFA is built
/// (under the limits of one pattern) to name those that need the most, or that fail alone.
pub(super) fn too_large(g: &Grammar, entries: &[Entry]) -> LexiconError {
    let mut sizes: Vec<(Option<usize>, TerminalId)> = Vec::new();
    for e in entries {
        if sizes.iter().any(|(_, t)| *t == e.terminal) {
            continue;
        }
        let alone = dense::Builder::new()
            .configure(pattern_dfa_config())
            .thompson(pattern_nfa_config())
            .build(&e.regex)
            .ok()
            .map(|d| d.memory_usage());
        sizes.push((alone, e.terminal));
    }
    // Failures alone first, then the largest.
    sizes.sort_by_key(|&(m, t)| (m.map_or(0, |_| 1), std::cmp::Reverse(m), t));
    let named: Vec<String> = sizes
        .iter()
        .take(3)
        .map(|&(m, t)| match m {
            None => format!(
                "{} alone exceeds the limits of one pattern",
                g.terminal_label(t)
            ),
            Some(m) => format!("{} alone takes {} KiB", g.terminal_label(t), m >> 10),
        })
        .collect();
    LexiconError::TooLarge(format!(
        "the DFA of its {} terminals together exceeds the limit of {} MiB (or its construction \
         the same, or their Thompson NFA {} MiB); {}",
        sizes.len(),
        DFA_SIZE_LIMIT >> 20,
        NFA_SIZE_LIMIT >> 20,
        named.join("; ")
    ))
}

/// The winning lexemes among the patterns (indices into `entries`) matching the same text:
/// those of the highest rank, with that rank.
fn winners_of(
    patterns: impl Iterator<Item = usize>,
    entries: &[Entry],
) -> (SmallVec<[Lexeme; 2]>, Option<Rank>) {
    let matched: Vec<&Entry> = patterns.map(|p| &entries[p]).collect();
    let Some(best) = matched.iter().map(|e| e.rank).max() else {
        return (SmallVec::new(), None);
    };
    let mut w: SmallVec<[Lexeme; 2]> = matched
        .iter()
        .filter(|e| e.rank == best)
        .map(|e| e.lexeme)
        .collect();
    w.sort();
    w.dedup();
    (w, Some(best))
}

/// The lexicon of a determinized table: each state's winners, and the counted strings'
/// analysis where the grammar has any (an error if counting cannot work in this lexer).
pub(super) fn finish(
    g: &Grammar,
    d: Determinized,
    patterns: Patterns,
) -> Result<Lexicon, LexiconError> {
    let first_family = patterns.entries.len();
    let (winners, ranks): (Vec<SmallVec<[Lexeme; 2]>>, Vec<Option<Rank>>) = d
        .matches
        .iter()
        .map(|m| {
            winners_of(
                m.iter().map(|&p| p as usize).filter(|&p| p < first_family),
                &patterns.entries,
            )
        })
        .unzip();
    // The families matching at each state (family 0 first when it does).
    let families: Vec<SmallVec<[u32; 2]>> = d
        .matches
        .iter()
        .map(|m| {
            m.iter()
                .filter(|&&p| p as usize >= first_family)
                .map(|&p| p - first_family as u32)
                .collect()
        })
        .collect();
    let closed: Vec<bool> = families.iter().map(|f| f.first() == Some(&0)).collect();
    let may_match: Vec<bool> = (0..winners.len())
        .map(|s| !winners[s].is_empty() || closed[s])
        .collect();
    let extendable = extendable(&d.trans, d.num_classes, &may_match);
    let counted = if patterns.counted.is_empty() {
        None
    } else {
        let quote = d.classes[b'"' as usize] as usize;
        let dfa = DfaTable {
            trans: &d.trans,
            num_classes: d.num_classes,
            start: 1,
            quote,
        };
        let c = CountedStrings::new(patterns.counted, dfa, families, &winners, ranks).map_err(
            |lexeme| {
                let what = match lexeme {
                    Lexeme::Terminal(t) => g.terminal_label(t),
                    Lexeme::Skip => "an ignored pattern".to_string(),
                };
                LexiconError::Build(format!(
                    "{what} can end inside a string whose length is counted (a string with a \
                 length bound), where the lexer cannot count"
                ))
            },
        )?;
        Some(Box::new(c))
    };
    Ok(Lexicon {
        classes: d.classes,
        num_classes: d.num_classes,
        trans: d.trans,
        winners,
        extendable,
        start: 1,
        counted,
    })
}

/// `reach[s]`: `s` is one of `targets` or some path of steps from `s` leads to one (a walk
/// back from the targets over the table's reversed transitions; `k` classes).
pub(super) fn reaching(trans: &[StateId], k: usize, targets: &[bool]) -> Vec<bool> {
    let n = targets.len();
    // Each state's distinct successors, as far as neighbouring classes tell them apart (a
    // range of bytes mostly leads to one state): the reversed edges in one flat list.
    let successors = |s: usize| {
        let row = &trans[s * k..(s + 1) * k];
        (0..k).filter_map(move |c| {
            let t = row[c];
            (t != DEAD && (c == 0 || row[c - 1] != t)).then_some(t as usize)
        })
    };
    let mut start = vec![0u32; n + 1];
    for s in 1..n {
        for t in successors(s) {
            start[t + 1] += 1;
        }
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut preds = vec![0u32; start[n] as usize];
    for s in 1..n {
        for t in successors(s) {
            preds[fill[t] as usize] = s as u32;
            fill[t] += 1;
        }
    }
    let mut reach: Vec<bool> = targets.to_vec();
    let mut stack: Vec<u32> = (0..n as u32).filter(|&s| reach[s as usize]).collect();
    while let Some(s) = stack.pop() {
        let s = s as usize;
        for &p in &preds[start[s] as usize..start[s + 1] as usize] {
            if !reach[p as usize] {
                reach[p as usize] = true;
                stack.push(p);
            }
        }
    }
    reach
}

/// `extendable[s]`: some successor of `s` reaches a state that may match.
fn extendable(trans: &[StateId], k: usize, may_match: &[bool]) -> Vec<bool> {
    let n = may_match.len();
    let reach = reaching(trans, k, may_match);
    (0..n)
        .map(|s| {
            s != 0 && (0..k).any(|c| reach[trans[s * k + c] as usize] && trans[s * k + c] != DEAD)
        })
        .collect()
}

impl Lexicon {
    /// For each terminal id below `num_terminals`, the length of its shortest lexeme (by a
    /// breadth-first walk of the table; `u32::MAX` for terminals that never win).
    pub fn shortest_lengths(&self, num_terminals: usize) -> Vec<u32> {
        let mut best = vec![u32::MAX; num_terminals];
        let mut depth = vec![u32::MAX; self.num_states()];
        let mut queue = std::collections::VecDeque::from([self.start]);
        depth[self.start as usize] = 0;
        while let Some(s) = queue.pop_front() {
            let d = depth[s as usize];
            for &l in self.winners(s) {
                if let Lexeme::Terminal(t) = l {
                    if t.index() < num_terminals && best[t.index()] == u32::MAX {
                        best[t.index()] = d;
                    }
                }
            }
            for c in 0..self.num_classes {
                let n = self.next_class(s, c);
                if n != DEAD && depth[n as usize] == u32::MAX {
                    depth[n as usize] = d + 1;
                    queue.push_back(n);
                }
            }
        }
        // A counted string's shortest: its quotes and `min` one-byte characters.
        for t in self.counted.iter().flat_map(|c| c.terms()) {
            if let Lexeme::Terminal(t_id) = t.lexeme {
                if t_id.index() < num_terminals {
                    best[t_id.index()] = best[t_id.index()].min(t.min.saturating_add(2));
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::{GrammarBuilder, Pattern};

    /// A keyword alternation merged into one terminal still beats the identifier regex on a
    /// tie, as each keyword literal did.
    #[test]
    fn merged_literals_rank_as_literals() {
        let mut b = GrammarBuilder::new();
        let s = b.nonterminal("start");
        let kw = b.terminal(
            "KW",
            Pattern::Literals(vec!["if".into(), "else".into(), "while".into()]),
            0,
        );
        let name = b.terminal("NAME", Pattern::Regex("[a-z]+".into()), 0);
        b.rule(s, vec![Symbol::T(kw)]);
        b.rule(s, vec![Symbol::T(name)]);
        let g = b.build(s).unwrap();
        let lx = Lexicon::new(&g).unwrap();
        let lex = |t: &str| lx.lex(t.as_bytes()).unwrap();
        assert_eq!(lex("else")[0].as_slice(), &[Lexeme::Terminal(kw)]);
        assert_eq!(lex("elsewhere")[0].as_slice(), &[Lexeme::Terminal(name)]);
        assert_eq!(lex("whil")[0].as_slice(), &[Lexeme::Terminal(name)]);
    }

    /// When the terminals' DFA is too large, the message names the terminals that need the
    /// most alone (those that fail alone first) and where they were defined.
    #[test]
    fn too_large_names_the_terminals_that_need_the_most() {
        let mut b = GrammarBuilder::new();
        let s = b.nonterminal("start");
        let small = b.terminal("SMALL", Pattern::Regex("[a-z]+".into()), 0);
        let big = b.terminal("BIG", Pattern::Regex("(a|b)*a(a|b){24}".into()), 0);
        b.set_terminal_source(big, "g.lark:3:1");
        b.rule(s, vec![Symbol::T(small), Symbol::T(big)]);
        let g = b.build(s).unwrap();
        let e = too_large(&g, &patterns(&g).entries).to_string();
        assert!(e.contains("2 terminals") && e.contains("256 MiB"), "{e}");
        let at = |needle: &str| e.find(needle).unwrap_or_else(|| panic!("{needle}: {e}"));
        assert!(
            at("`BIG` (g.lark:3:1) alone exceeds") < at("`SMALL` alone takes"),
            "{e}"
        );
    }
}
