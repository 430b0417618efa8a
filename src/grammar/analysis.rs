//! Fixpoint analyses on a [`Grammar`]: which nonterminals generate a word, which are reachable
//! from the start, which derive ε. Shared by validation and the normalizer.

use super::{Grammar, Symbol};

/// `generating[A]` is true iff A derives some word of terminals.
pub fn generating(g: &Grammar) -> Vec<bool> {
    generating_rules(
        g.nonterminals().len(),
        g.rules().iter().map(|r| (r.lhs, &r.rhs[..])),
    )
}

/// The same fixpoint over any rule list; `n` is the number of nonterminals.
pub fn generating_rules<'a>(
    n: usize,
    rules: impl Iterator<Item = (super::NonterminalId, &'a [Symbol])> + Clone,
) -> Vec<bool> {
    let mut gen = vec![false; n];
    loop {
        let mut changed = false;
        for (lhs, rhs) in rules.clone() {
            if gen[lhs.index()] {
                continue;
            }
            let ok = rhs.iter().all(|s| match s {
                Symbol::T(_) => true,
                Symbol::N(b) => gen[b.index()],
            });
            if ok {
                gen[lhs.index()] = true;
                changed = true;
            }
        }
        if !changed {
            return gen;
        }
    }
}

/// `nullable[A]` is true iff A derives the empty word (for the Earley oracle of the tests).
#[cfg(test)]
pub fn nullable(g: &Grammar) -> Vec<bool> {
    let mut null = vec![false; g.nonterminals().len()];
    loop {
        let mut changed = false;
        for r in g.rules() {
            if !null[r.lhs.index()]
                && r.rhs
                    .iter()
                    .all(|s| matches!(s, Symbol::N(b) if null[b.index()]))
            {
                null[r.lhs.index()] = true;
                changed = true;
            }
        }
        if !changed {
            return null;
        }
    }
}
