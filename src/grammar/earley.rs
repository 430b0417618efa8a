//! A plain Earley recognizer over lexeme sequences, for any [`Grammar`] as written (no
//! normalization).
//!
//! It exists as an independent oracle: the normalizer and the emptiness search are checked
//! against it, so it shares none of their code. It is simple rather than fast (cubic time,
//! hash sets per position) and is meant for short words in tests and re-checks.

use hashbrown::HashSet;

use super::analysis::nullable;
use super::{Grammar, Symbol, TerminalId};

/// Whether `g` derives the lexeme sequence `word` from its start symbol.
pub fn recognizes(g: &Grammar, word: &[TerminalId]) -> bool {
    Recognizer::new(g).recognizes(word)
}

/// An Earley recognizer prepared for one grammar (rule index by left-hand side, nullable set).
pub struct Recognizer<'g> {
    grammar: &'g Grammar,
    rules_of: Vec<Vec<usize>>,
    nullable: Vec<bool>,
}

/// An Earley item: rule, dot position, origin.
type Item = (usize, usize, usize);

impl<'g> Recognizer<'g> {
    pub fn new(grammar: &'g Grammar) -> Self {
        let mut rules_of = vec![Vec::new(); grammar.nonterminals().len()];
        for (i, r) in grammar.rules().iter().enumerate() {
            rules_of[r.lhs.index()].push(i);
        }
        Recognizer {
            grammar,
            rules_of,
            nullable: nullable(grammar),
        }
    }

    pub fn recognizes(&self, word: &[TerminalId]) -> bool {
        let rules = self.grammar.rules();
        let mut sets: Vec<HashSet<Item>> = vec![HashSet::new(); word.len() + 1];
        let mut agenda: Vec<Item> = Vec::new();
        for &ri in &self.rules_of[self.grammar.start().index()] {
            if sets[0].insert((ri, 0, 0)) {
                agenda.push((ri, 0, 0));
            }
        }
        for pos in 0..=word.len() {
            if pos > 0 {
                agenda.extend(sets[pos].iter().copied());
            }
            while let Some((ri, dot, origin)) = agenda.pop() {
                let rule = &rules[ri];
                match rule.rhs.get(dot) {
                    None => {
                        // Complete: advance every item at `origin` waiting for rule.lhs.
                        let waiting: Vec<Item> = sets[origin]
                            .iter()
                            .filter(|&&(r2, d2, _)| {
                                rules[r2].rhs.get(d2) == Some(&Symbol::N(rule.lhs))
                            })
                            .copied()
                            .collect();
                        for (r2, d2, o2) in waiting {
                            if sets[pos].insert((r2, d2 + 1, o2)) {
                                agenda.push((r2, d2 + 1, o2));
                            }
                        }
                    }
                    Some(&Symbol::N(b)) => {
                        for &rb in &self.rules_of[b.index()] {
                            if sets[pos].insert((rb, 0, pos)) {
                                agenda.push((rb, 0, pos));
                            }
                        }
                        if self.nullable[b.index()] && sets[pos].insert((ri, dot + 1, origin)) {
                            agenda.push((ri, dot + 1, origin));
                        }
                    }
                    Some(&Symbol::T(t)) => {
                        if word.get(pos) == Some(&t) {
                            sets[pos + 1].insert((ri, dot + 1, origin));
                        }
                    }
                }
            }
        }
        let start = self.grammar.start();
        sets[word.len()].iter().any(|&(ri, dot, origin)| {
            origin == 0 && rules[ri].lhs == start && dot == rules[ri].rhs.len()
        })
    }
}
