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
///
/// A worklist: each rule counts the nonterminal occurrences on its right-hand side not yet
/// known to generate, and a nonterminal found generating decrements the counts of the rules
/// that use it. Linear in the size of the rules (a sweep to a fixpoint would be quadratic on a
/// chain of rules listed against its dependency order).
pub fn generating_rules<'a>(
    n: usize,
    rules: impl Iterator<Item = (super::NonterminalId, &'a [Symbol])> + Clone,
) -> Vec<bool> {
    let lhs: Vec<usize> = rules.clone().map(|(l, _)| l.index()).collect();
    let mut missing = vec![0u32; lhs.len()];
    // uses[offsets[b]..offsets[b + 1]]: the rules that mention b, once per occurrence.
    let mut offsets = vec![0usize; n + 1];
    for (ri, (_, rhs)) in rules.clone().enumerate() {
        for s in rhs {
            if let Symbol::N(b) = s {
                missing[ri] += 1;
                offsets[b.index() + 1] += 1;
            }
        }
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    let mut fill = offsets.clone();
    let mut uses = vec![0u32; offsets[n]];
    for (ri, (_, rhs)) in rules.enumerate() {
        for s in rhs {
            if let Symbol::N(b) = s {
                uses[fill[b.index()]] = ri as u32;
                fill[b.index()] += 1;
            }
        }
    }
    let mut gen = vec![false; n];
    let mut stack = Vec::new();
    for (ri, &a) in lhs.iter().enumerate() {
        if missing[ri] == 0 && !gen[a] {
            gen[a] = true;
            stack.push(a);
        }
    }
    while let Some(b) = stack.pop() {
        for &ri in &uses[offsets[b]..offsets[b + 1]] {
            let ri = ri as usize;
            missing[ri] -= 1;
            if missing[ri] == 0 && !gen[lhs[ri]] {
                gen[lhs[ri]] = true;
                stack.push(lhs[ri]);
            }
        }
    }
    gen
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
