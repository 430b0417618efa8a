//! Lexical context of each nonterminal of a normalized grammar: which terminals can come right
//! before and right after it in a sentence, and whether it can start or end one.
//!
//! The emptiness search uses these as a sound filter: an item `(p, A, q)` can only be part of
//! an accepted derivation if the automaton can read a terminal that may precede A into p (or p
//! is the start and A may begin a sentence) and a terminal that may follow A out of q (or q
//! accepts and A may end a sentence). Without it, a bottom-up search derives a right-recursive
//! list's tail between every pair of positions: quadratic in the length of the canvas.

use crate::grammar::{NonterminalId, TerminalId};

/// Terminal sets as bitsets, `words` u64 words per nonterminal.
#[derive(Clone, Debug)]
pub struct Context {
    pub words: usize,
    pub precede: Vec<u64>,
    pub follow: Vec<u64>,
    pub can_start: Vec<bool>,
    pub can_end: Vec<bool>,
}

/// What [`Context::of`] reads of a normalized grammar: its productions and which
/// nonterminals are nullable. A view rather than the grammar, so that the context can be
/// computed while the grammar's indices are built (`NormalGrammar::new`).
pub(super) struct Productions<'a> {
    pub nonterminals: usize,
    pub terminals: usize,
    pub start: NonterminalId,
    pub terminal: &'a [(NonterminalId, TerminalId)],
    pub unit: &'a [(NonterminalId, NonterminalId)],
    pub binary: &'a [(NonterminalId, NonterminalId, NonterminalId)],
    pub nullable: &'a [bool],
}

impl Context {
    pub(super) fn of(g: &Productions<'_>) -> Context {
        let n = g.nonterminals;
        let words = g.terminals.div_ceil(64).max(1);
        let nullable = g.nullable;
        // A child inherits its parent's end context (follow, can_end) where nothing after it
        // in the production must be non-empty, and its start context likewise. LAST sets flow
        // along the end edges reversed (a parent's LAST set holds its last child's), FIRST
        // sets along the start edges reversed, so each graph's components serve twice.
        let edges = g.unit.len() + 2 * g.binary.len();
        let mut end_edges = Vec::with_capacity(edges);
        let mut start_edges = Vec::with_capacity(edges);
        for &(a, b) in g.unit {
            end_edges.push((a.index(), b.index()));
            start_edges.push((a.index(), b.index()));
        }
        for &(a, b, c) in g.binary {
            end_edges.push((a.index(), c.index()));
            start_edges.push((a.index(), b.index()));
            if nullable[c.index()] {
                end_edges.push((a.index(), b.index()));
            }
            if nullable[b.index()] {
                start_edges.push((a.index(), c.index()));
            }
        }
        let end = Graph::new(n, &end_edges);
        let start = Graph::new(n, &start_edges);
        let mut no_flags = vec![false; n];
        let first = edge_sets(g, words, |sets| {
            start.propagate_up(sets, &mut no_flags, words)
        });
        let last = edge_sets(g, words, |sets| {
            end.propagate_up(sets, &mut no_flags, words)
        });
        let mut cx = Context {
            words,
            precede: vec![0; n * words],
            follow: vec![0; n * words],
            can_start: vec![false; n],
            can_end: vec![false; n],
        };
        cx.can_start[g.start.index()] = true;
        cx.can_end[g.start.index()] = true;
        // Seeds: what follows B in `A → B C` is FIRST(C); what precedes C is LAST(B).
        for &(_, b, c) in g.binary {
            or_into(&mut cx.follow, b.index(), &first, c.index(), words);
            or_into(&mut cx.precede, c.index(), &last, b.index(), words);
        }
        end.propagate_down(&mut cx.follow, &mut cx.can_end, words);
        start.propagate_down(&mut cx.precede, &mut cx.can_start, words);
        cx
    }
}

/// A graph over nonterminals with its strongly connected components, for propagating sets
/// down its edges (parent to child) or up them.
struct Graph {
    children: super::normal::Csr<u32>,
    parents: super::normal::Csr<u32>,
    component: Vec<u32>,
    /// Children first.
    order: Components,
}

impl Graph {
    fn new(n: usize, edges: &[(usize, usize)]) -> Graph {
        let children = super::normal::Csr::build(n, edges.iter().map(|&(p, c)| (p, c as u32)));
        let parents = super::normal::Csr::build(n, edges.iter().map(|&(p, c)| (c, p as u32)));
        let (component, order) = components(n, &children);
        Graph {
            children,
            parents,
            component,
            order,
        }
    }

    /// The least solution of `sets[child] ⊇ sets[parent]`, `flags[child] ≥ flags[parent]`
    /// for each edge, from the current values: the components parents first.
    fn propagate_down(&self, sets: &mut [u64], flags: &mut [bool], words: usize) {
        propagate_in(
            sets,
            flags,
            words,
            &self.children,
            &self.component,
            self.order.iter().rev(),
        );
    }

    /// The same with every edge reversed: the components children first.
    fn propagate_up(&self, sets: &mut [u64], flags: &mut [bool], words: usize) {
        propagate_in(
            sets,
            flags,
            words,
            &self.parents,
            &self.component,
            self.order.iter(),
        );
    }
}

/// [`Graph::propagate_down`] over `edges` (`(parent, child)` pairs), for the tests.
#[cfg(test)]
fn propagate(sets: &mut [u64], flags: &mut [bool], words: usize, edges: &[(usize, usize)]) {
    Graph::new(flags.len(), edges).propagate_down(sets, flags, words);
}

/// The least solution of `sets[child] ⊇ sets[parent]`, `flags[child] ≥ flags[parent]` for
/// each edge of `children`, from the current values. The strongly connected components of the
/// edges are visited parents first, so each edge is used once: the members of a cycle end
/// with one set, their union. (A worklist revisited nodes each time their set grew: 20 times
/// per edge on the grammar of a Kubernetes schema.)
fn propagate_in<'a>(
    sets: &mut [u64],
    flags: &mut [bool],
    words: usize,
    children: &super::normal::Csr<u32>,
    component: &[u32],
    parents_first: impl Iterator<Item = &'a [usize]>,
) {
    for members in parents_first {
        let (&first, rest) = members.split_first().expect("components are not empty");
        for &m in rest {
            or_self(sets, first, m, words);
            flags[first] |= flags[m];
        }
        for &m in rest {
            or_self(sets, m, first, words);
            flags[m] = flags[first];
        }
        for &p in members {
            for &c in children.get(p) {
                let c = c as usize;
                if component[c] != component[p] {
                    or_self(sets, c, p, words);
                    flags[c] |= flags[p];
                }
            }
        }
    }
}

/// Tarjan's strongly connected components of the graph `children` over nodes `0..n`: each
/// node's component, and the components' members, every component after all those it reaches
/// (children first). Iterative, so deep grammars do not overflow the stack.
fn components(n: usize, children: &super::normal::Csr<u32>) -> (Vec<u32>, Components) {
    const UNSEEN: u32 = u32::MAX;
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut component = vec![UNSEEN; n];
    let mut order = Components {
        members: Vec::with_capacity(n),
        ends: Vec::new(),
    };
    let mut stack: Vec<usize> = Vec::new();
    // (node, next child to look at)
    let mut calls: Vec<(usize, usize)> = Vec::new();
    let mut next_index = 0u32;
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        calls.push((root, 0));
        while let Some(&mut (v, ref mut next)) = calls.last_mut() {
            if *next == 0 && index[v] == UNSEEN {
                index[v] = next_index;
                low[v] = next_index;
                next_index += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            let kids = children.get(v);
            if let Some(&c) = kids.get(*next) {
                *next += 1;
                let c = c as usize;
                if index[c] == UNSEEN {
                    calls.push((c, 0));
                } else if on_stack[c] {
                    low[v] = low[v].min(index[c]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let id = order.ends.len() as u32;
                loop {
                    let w = stack.pop().expect("v is on the stack");
                    on_stack[w] = false;
                    component[w] = id;
                    order.members.push(w);
                    if w == v {
                        break;
                    }
                }
                order.ends.push(order.members.len());
            }
        }
    }
    (component, order)
}

/// Strongly connected components in the order [`components`] finds them, their members
/// listed one component after another (one allocation, not one per component: a normalized
/// Kubernetes schema has some 10,000, and this runs twice per grammar).
struct Components {
    members: Vec<usize>,
    /// Where each component's members end in `members`.
    ends: Vec<usize>,
}

impl Components {
    /// The components' members, in the order found.
    fn iter(&self) -> impl DoubleEndedIterator<Item = &[usize]> {
        (0..self.ends.len()).map(|i| {
            let start = if i == 0 { 0 } else { self.ends[i - 1] };
            &self.members[start..self.ends[i]]
        })
    }
}

/// FIRST or LAST sets of every nonterminal, as bitsets: `A → t` puts t in A's set, and
/// `propagate` passes the sets up the start edges (FIRST) or the end edges (LAST).
fn edge_sets(g: &Productions<'_>, words: usize, propagate: impl FnOnce(&mut [u64])) -> Vec<u64> {
    let mut sets = vec![0u64; g.nonterminals * words];
    for &(a, t) in g.terminal {
        sets[a.index() * words + t.index() / 64] |= 1 << (t.index() % 64);
    }
    propagate(&mut sets);
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// The fixpoint by brute force: every edge applied until nothing changes.
    fn propagate_naively(
        sets: &mut [u64],
        flags: &mut [bool],
        words: usize,
        edges: &[(usize, usize)],
    ) {
        loop {
            let mut changed = false;
            for &(p, c) in edges {
                changed |= super::or_self(sets, c, p, words);
                if flags[p] && !flags[c] {
                    flags[c] = true;
                    changed = true;
                }
            }
            if !changed {
                return;
            }
        }
    }

    proptest! {
        /// Random graphs of up to 40 nodes (cycles, self-loops, parallel edges) with random
        /// seeds of two words: the component order reaches the same least solution.
        #[test]
        fn propagation_by_components_is_the_least_fixpoint(
            n in 1usize..40,
            raw_edges in proptest::collection::vec((0usize..40, 0usize..40), 0..120),
            seeds in proptest::collection::vec((any::<u64>(), any::<u64>(), any::<bool>()), 40),
        ) {
            let edges: Vec<(usize, usize)> =
                raw_edges.into_iter().map(|(p, c)| (p % n, c % n)).collect();
            let mut sets: Vec<u64> = seeds[..n].iter().flat_map(|&(a, b, _)| [a & b, a & !b]).collect();
            // Sparse seeds, so that propagation has something to add.
            for (i, w) in sets.iter_mut().enumerate() {
                *w &= 0x0101_0101_0101_0101u64.rotate_left(i as u32 % 8);
            }
            let mut flags: Vec<bool> = seeds[..n].iter().map(|&(_, _, f)| f && n % 3 == 0).collect();
            let (mut want_sets, mut want_flags) = (sets.clone(), flags.clone());
            let (mut up_sets, mut up_flags) = (sets.clone(), flags.clone());
            propagate_naively(&mut want_sets, &mut want_flags, 2, &edges);
            super::propagate(&mut sets, &mut flags, 2, &edges);
            prop_assert_eq!(sets, want_sets);
            prop_assert_eq!(flags, want_flags);
            // Up the edges: the same graph's components, the other way round.
            let reversed: Vec<(usize, usize)> = edges.iter().map(|&(p, c)| (c, p)).collect();
            let (mut want_sets, mut want_flags) = (up_sets.clone(), up_flags.clone());
            propagate_naively(&mut want_sets, &mut want_flags, 2, &reversed);
            super::Graph::new(n, &edges).propagate_up(&mut up_sets, &mut up_flags, 2);
            prop_assert_eq!(up_sets, want_sets);
            prop_assert_eq!(up_flags, want_flags);
        }
    }
}
