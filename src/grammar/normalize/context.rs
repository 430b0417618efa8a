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
        // Seeds: what follows B in `A → B C` is FIRST(C); what precedes C is LAST(B).
        for &(_, b, c) in g.binary_rules() {
            or_into(&mut cx.follow, b.index(), &first, c.index(), words);
            or_into(&mut cx.precede, c.index(), &last, b.index(), words);
        }
        // A child inherits its parent's end context (follow, can_end) where nothing after it
        // in the production must be non-empty, and its start context likewise.
        let mut end_edges = Vec::new();
        let mut start_edges = Vec::new();
        for &(a, b) in g.unit_rules() {
            end_edges.push((a.index(), b.index()));
            start_edges.push((a.index(), b.index()));
        }
        for &(a, b, c) in g.binary_rules() {
            end_edges.push((a.index(), c.index()));
            start_edges.push((a.index(), b.index()));
            if nullable[c.index()] {
                end_edges.push((a.index(), b.index()));
            }
            if nullable[b.index()] {
                start_edges.push((a.index(), c.index()));
            }
        }
        propagate(&mut cx.follow, &mut cx.can_end, words, &end_edges);
        propagate(&mut cx.precede, &mut cx.can_start, words, &start_edges);
        cx
    }
}

/// The least solution of `sets[child] ⊇ sets[parent]`, `flags[child] ≥ flags[parent]` for
/// each edge `(parent, child)`, from the current values: a worklist, so each node is revisited
/// only when its own set grew.
fn propagate(sets: &mut [u64], flags: &mut [bool], words: usize, edges: &[(usize, usize)]) {
    let n = flags.len();
    let children = super::normal::Csr::build(n, edges.iter().map(|&(p, c)| (p, c as u32)));
    let mut queued = vec![true; n];
    let mut stack: Vec<usize> = (0..n).rev().collect();
    while let Some(p) = stack.pop() {
        queued[p] = false;
        for &c in children.get(p) {
            let c = c as usize;
            let mut changed = or_self(sets, c, p, words);
            if flags[p] && !flags[c] {
                flags[c] = true;
                changed = true;
            }
            if changed && !queued[c] {
                queued[c] = true;
                stack.push(c);
            }
        }
    }
}

/// FIRST sets (`first = true`) or LAST sets of every nonterminal, as bitsets: `A → t` puts t
/// in A's set; `A → B` and `A → B C` pass B's set up to A (and C's, when B is nullable; for
/// LAST sets the other way round).
fn edge_sets(g: &NormalGrammar, nullable: &[bool], words: usize, first: bool) -> Vec<u64> {
    let mut sets = vec![0u64; g.num_nonterminals() * words];
    for &(a, t) in g.terminal_rules() {
        sets[a.index() * words + t.index() / 64] |= 1 << (t.index() % 64);
    }
    let mut edges = Vec::new();
    for &(a, b) in g.unit_rules() {
        edges.push((b.index(), a.index()));
    }
    for &(a, b, c) in g.binary_rules() {
        let (near, far) = if first { (b, c) } else { (c, b) };
        edges.push((near.index(), a.index()));
        if nullable[near.index()] {
            edges.push((far.index(), a.index()));
        }
    }
    let mut flags = vec![false; g.num_nonterminals()];
    propagate(&mut sets, &mut flags, words, &edges);
    sets
}

/// `sets[dst] |= sets[src]`; whether anything changed.
fn or_self(sets: &mut [u64], dst: usize, src: usize, words: usize) -> bool {
    if dst == src {
        return false;
    }
    let (d, s) = if dst < src {
        let (lo, hi) = sets.split_at_mut(src * words);
        (&mut lo[dst * words..(dst + 1) * words], &hi[..words])
    } else {
        let (lo, hi) = sets.split_at_mut(dst * words);
        (&mut hi[..words], &lo[src * words..(src + 1) * words])
    };
    let mut changed = false;
    for (d, &v) in d.iter_mut().zip(s) {
        if *d | v != *d {
            *d |= v;
            changed = true;
        }
    }
    changed
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
