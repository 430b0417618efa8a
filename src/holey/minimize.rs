//! Trimming and Hopcroft minimization of the determinized lexeme automaton.
//!
//! The automaton is partial (a missing edge goes nowhere). Hopcroft's algorithm is run on its
//! completion with a sink state, but the sink's block is never used as a splitter: with the
//! initial partition {accepting, rejecting, sink}, it suffices to enqueue all blocks but one,
//! and the sink never splits, so its (many) incoming edges are never looked at.
//!
//! Only `coreachable` serves checks; the minimization serves the subset construction, which the
//! tests keep as a second route to compare the NFA route with (`HoleyLexer::dfa`).
#![cfg_attr(not(test), allow(dead_code))]

use hashbrown::{HashMap, HashSet};

use super::subset::RawDfa;
use crate::grammar::TerminalId;
use crate::intersect::{Edge, LexemeDfa};

/// Trims states that cannot reach acceptance, minimizes, and returns the lexeme automaton.
pub fn minimize(raw: &RawDfa) -> LexemeDfa {
    let arcs = raw
        .edges
        .iter()
        .enumerate()
        .flat_map(|(q, edges)| edges.iter().map(move |&(_, _, to)| (q as u32, to)));
    let live = coreachable(raw.accepting.clone(), arcs);
    if !live[0] {
        return LexemeDfa::new(1, 0, &[], Vec::new()).expect("one state is valid");
    }
    let n = raw.accepting.len();
    // Symbols: distinct (terminal, cost) labels.
    let mut symbols: HashMap<(TerminalId, u32), u32> = HashMap::new();
    // Inverse edges: (symbol, target) → sources, among live states only.
    let mut inverse: HashMap<(u32, u32), Vec<u32>> = HashMap::new();
    for (q, edges) in raw.edges.iter().enumerate() {
        if !live[q] {
            continue;
        }
        for &(t, cost, to) in edges {
            if live[to as usize] {
                let next = symbols.len() as u32;
                let a = *symbols.entry((t, cost)).or_insert(next);
                inverse.entry((a, to)).or_default().push(q as u32);
            }
        }
    }
    // The symbols on edges into each state: a splitter (block, symbol) marks nothing unless
    // the symbol leads into the block, so only such pairs are ever queued (a chain of text
    // states, one symbol into each, would otherwise queue every symbol for every block).
    let mut into: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &(a, to) in inverse.keys() {
        into[to as usize].push(a);
    }
    let mut part = Partition::new(n, |q| {
        if !live[q] {
            2
        } else if raw.accepting[q] {
            0
        } else {
            1
        }
    });
    let mut work: Vec<(u32, u32)> = Vec::new();
    let mut queued: HashSet<(u32, u32)> = HashSet::new();
    let mut syms: Vec<u32> = Vec::new();
    for b in 0..part.num_blocks() as u32 {
        if part.is_sink_class(b, &live) {
            continue;
        }
        symbols_into(&part, b, &into, &mut syms);
        for &a in &syms {
            work.push((b, a));
            queued.insert((b, a));
        }
    }
    while let Some((splitter, a)) = work.pop() {
        queued.remove(&(splitter, a));
        let members: Vec<u32> = part.members(splitter).to_vec();
        for t in members {
            if let Some(sources) = inverse.get(&(a, t)) {
                for &q in sources {
                    part.mark(q);
                }
            }
        }
        for (old, new) in part.split_marked() {
            let smaller = if part.size(old) <= part.size(new) {
                old
            } else {
                new
            };
            // Hopcroft: where (old, a) is still queued, (new, a) joins it; otherwise the
            // smaller half suffices. Symbols with no edge into a half need no entry.
            symbols_into(&part, new, &into, &mut syms);
            for &a in &syms {
                if queued.contains(&(old, a)) && queued.insert((new, a)) {
                    work.push((new, a));
                }
            }
            symbols_into(&part, smaller, &into, &mut syms);
            for &a in &syms {
                if !queued.contains(&(old, a)) && queued.insert((smaller, a)) {
                    work.push((smaller, a));
                }
            }
        }
    }
    assemble(raw, &live, &part)
}

/// The distinct symbols on edges into the members of block `b`, into `out`.
fn symbols_into(part: &Partition, b: u32, into: &[Vec<u32>], out: &mut Vec<u32>) {
    out.clear();
    for &q in part.members(b) {
        out.extend_from_slice(&into[q as usize]);
    }
    out.sort_unstable();
    out.dedup();
}

/// `live[q]`: q reaches a state marked in `accepting` along `arcs` (`(from, to)` pairs).
/// Shared with the NFA's trimming ([`super::nfa`]).
pub(super) fn coreachable(
    accepting: Vec<bool>,
    arcs: impl IntoIterator<Item = (u32, u32)>,
) -> Vec<bool> {
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); accepting.len()];
    for (from, to) in arcs {
        preds[to as usize].push(from);
    }
    let mut live = accepting;
    let mut stack: Vec<u32> = (0..live.len() as u32)
        .filter(|&q| live[q as usize])
        .collect();
    while let Some(q) = stack.pop() {
        for &p in &preds[q as usize] {
            if !live[p as usize] {
                live[p as usize] = true;
                stack.push(p);
            }
        }
    }
    live
}

/// Builds the quotient automaton: one state per block of live states, start block first.
fn assemble(raw: &RawDfa, live: &[bool], part: &Partition) -> LexemeDfa {
    let mut block_id: HashMap<u32, u32> = HashMap::new();
    let mut reps: Vec<u32> = Vec::new();
    let mut order = vec![0u32];
    block_id.insert(part.block_of(0), 0);
    reps.push(0);
    let mut edges = Vec::new();
    let mut accepting = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let q = reps[i];
        if raw.accepting[q as usize] {
            accepting.push(i as u32);
        }
        for &(t, cost, to) in &raw.edges[q as usize] {
            if !live[to as usize] {
                continue;
            }
            let b = part.block_of(to);
            let target = *block_id.entry(b).or_insert_with(|| {
                reps.push(to);
                order.push(b);
                reps.len() as u32 - 1
            });
            edges.push(Edge {
                from: i as u32,
                terminal: t,
                to: target,
                cost,
            });
        }
        i += 1;
    }
    LexemeDfa::new(reps.len(), 0, &accepting, edges).expect("states are in range by construction")
}

/// A refinable partition of `0..n` with marking, as in Hopcroft's algorithm.
struct Partition {
    elems: Vec<u32>,
    loc: Vec<u32>,
    block: Vec<u32>,
    start: Vec<u32>,
    end: Vec<u32>,
    marked: Vec<u32>,
    touched: Vec<u32>,
}

impl Partition {
    /// The initial partition by `class(q)` (classes are small integers).
    fn new(n: usize, class: impl Fn(usize) -> u32) -> Self {
        let mut by_class: Vec<Vec<u32>> = Vec::new();
        for q in 0..n {
            let c = class(q) as usize;
            if by_class.len() <= c {
                by_class.resize(c + 1, Vec::new());
            }
            by_class[c].push(q as u32);
        }
        let mut p = Partition {
            elems: Vec::with_capacity(n),
            loc: vec![0; n],
            block: vec![0; n],
            start: Vec::new(),
            end: Vec::new(),
            marked: Vec::new(),
            touched: Vec::new(),
        };
        for members in by_class.into_iter().filter(|m| !m.is_empty()) {
            let b = p.start.len() as u32;
            p.start.push(p.elems.len() as u32);
            for q in members {
                p.loc[q as usize] = p.elems.len() as u32;
                p.block[q as usize] = b;
                p.elems.push(q);
            }
            p.end.push(p.elems.len() as u32);
            p.marked.push(0);
        }
        p
    }

    fn num_blocks(&self) -> usize {
        self.start.len()
    }

    fn is_sink_class(&self, b: u32, live: &[bool]) -> bool {
        !live[self.elems[self.start[b as usize] as usize] as usize]
    }

    fn block_of(&self, q: u32) -> u32 {
        self.block[q as usize]
    }

    fn size(&self, b: u32) -> u32 {
        self.end[b as usize] - self.start[b as usize]
    }

    fn members(&self, b: u32) -> &[u32] {
        &self.elems[self.start[b as usize] as usize..self.end[b as usize] as usize]
    }

    /// Moves `q` into the marked prefix of its block.
    fn mark(&mut self, q: u32) {
        let b = self.block[q as usize] as usize;
        let pos = self.loc[q as usize];
        let first_unmarked = self.start[b] + self.marked[b];
        if pos < first_unmarked {
            return;
        }
        if self.marked[b] == 0 {
            self.touched.push(b as u32);
        }
        let other = self.elems[first_unmarked as usize];
        self.elems.swap(pos as usize, first_unmarked as usize);
        self.loc[other as usize] = pos;
        self.loc[q as usize] = first_unmarked;
        self.marked[b] += 1;
    }

    /// Splits every block with marked and unmarked members; returns (old, new) pairs, the new
    /// block holding the marked members.
    fn split_marked(&mut self) -> Vec<(u32, u32)> {
        let mut splits = Vec::new();
        for b in std::mem::take(&mut self.touched) {
            let b = b as usize;
            let m = self.marked[b];
            self.marked[b] = 0;
            if m == self.end[b] - self.start[b] {
                continue;
            }
            let nb = self.start.len() as u32;
            let s = self.start[b];
            self.start.push(s);
            self.end.push(s + m);
            self.marked.push(0);
            self.start[b] = s + m;
            for i in s..s + m {
                self.block[self.elems[i as usize] as usize] = nb;
            }
            splits.push((b as u32, nb));
        }
        splits
    }
}
