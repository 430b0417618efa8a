//! Lexical context of each nonterminal of a normalized grammar: which terminals can come right
//! before and right after it in a sentence, and whether it can start or end one.
//!
//! The emptiness search uses these as a sound filter: an item `(p, A, q)` can only be part of
//! an accepted derivation if the automaton can read a terminal that may precede A into p (or p
//! is the start and A may begin a sentence) and a terminal that may follow A out of q (or q
//! accepts and A may end a sentence). Without it, a bottom-up search derives a right-recursive
//! list's tail between every pair of positions: quadratic in the length of the canvas.

use super::NormalGrammar;

/// Terminal sets as bitsets, `words` u64 words per nonterminal.
#[derive(Clone, Debug)]
pub struct Context {
    pub words: usize,
    pub precede: Vec<u64>,
    pub follow: Vec<u64>,
    pub can_start: Vec<bool>,
    pub can_end: Vec<bool>,
}

impl Context {
    pub fn new(g: &NormalGrammar) -> Context {
        let n = g.num_nonterminals();
        let words = g.num_terminals().div_ceil(64).max(1);
        let nullable = g.nullable();
        let first = edge_sets(g, nullable, words, true);
        let last = edge_sets(g, nullable, words, false);
        let mut cx = Context {
            words,
            precede: vec![0; n * words],
            follow: vec![0; n * words],
            can_start: vec![false; n],
            can_end: vec![false; n],
        };
        cx.can_start[g.start().index()] = true;
        cx.can_end[g.start().index()] = true;
        loop {
            let mut changed = false;
            for &(a, b) in g.unit_rules() {
                changed |= cx.inherit(a.index(), b.index());
            }
            for &(a, b, c) in g.binary_rules() {
                let (a, b, c) = (a.index(), b.index(), c.index());
                // What follows B: FIRST(C), and what follows A when C may vanish.
                changed |= or_into(&mut cx.follow, b, &first, c, words);
                // What precedes C: LAST(B), and what precedes A when B may vanish.
                changed |= or_into(&mut cx.precede, c, &last, b, words);
                changed |= cx.inherit_end(c, a);
                changed |= cx.inherit_start(b, a);
                if nullable[c] {
                    changed |= cx.inherit_end(b, a);
                }
                if nullable[b] {
                    changed |= cx.inherit_start(c, a);
                }
            }
            if !changed {
                return cx;
            }
        }
    }

    /// `child` (in `parent → child`) gets the parent's whole context.
    fn inherit(&mut self, parent: usize, child: usize) -> bool {
        self.inherit_end(child, parent) | self.inherit_start(child, parent)
    }

    fn inherit_end(&mut self, child: usize, parent: usize) -> bool {
        let mut changed = or_self(&mut self.follow, child, parent, self.words);
        if self.can_end[parent] && !self.can_end[child] {
            self.can_end[child] = true;
            changed = true;
        }
        changed
    }

    fn inherit_start(&mut self, child: usize, parent: usize) -> bool {
        let mut changed = or_self(&mut self.precede, child, parent, self.words);
        if self.can_start[parent] && !self.can_start[child] {
            self.can_start[child] = true;
            changed = true;
        }
        changed
    }
}

/// FIRST sets (`first = true`) or LAST sets of every nonterminal, as bitsets.
fn edge_sets(g: &NormalGrammar, nullable: &[bool], words: usize, first: bool) -> Vec<u64> {
    let mut sets = vec![0u64; g.num_nonterminals() * words];
    for &(a, t) in g.terminal_rules() {
        sets[a.index() * words + t.index() / 64] |= 1 << (t.index() % 64);
    }
    loop {
        let mut changed = false;
        for &(a, b) in g.unit_rules() {
            changed |= or_self(&mut sets, a.index(), b.index(), words);
        }
        for &(a, b, c) in g.binary_rules() {
            let (near, far) = if first { (b, c) } else { (c, b) };
            changed |= or_self(&mut sets, a.index(), near.index(), words);
            if nullable[near.index()] {
                changed |= or_self(&mut sets, a.index(), far.index(), words);
            }
        }
        if !changed {
            return sets;
        }
    }
}

/// `sets[dst] |= sets[src]`; whether anything changed.
fn or_self(sets: &mut [u64], dst: usize, src: usize, words: usize) -> bool {
    let row: smallvec::SmallVec<[u64; 4]> = sets[src * words..(src + 1) * words].into();
    or_into(sets, dst, &row, 0, words)
}

/// `dst_sets[dst] |= src_sets[src]`; whether anything changed.
fn or_into(dst_sets: &mut [u64], dst: usize, src_sets: &[u64], src: usize, words: usize) -> bool {
    let mut changed = false;
    for w in 0..words {
        let v = src_sets[src * words + w];
        let d = &mut dst_sets[dst * words + w];
        if *d | v != *d {
            *d |= v;
            changed = true;
        }
    }
    changed
}
