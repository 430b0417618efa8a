//! The emptiness search over the implicit Bar-Hillel intersection of a C2F+ε grammar and a
//! lexeme automaton.
//!
//! Items are triples `(p, A, q)`: "A derives a lexeme sequence that takes the automaton from
//! p to q". The search starts from the items that productions `A → a` (one per edge labelled
//! `a`) and `A → ε` (one per state) give directly, and extends a derived item `(p, X, q)`
//! upward through `A → X` (giving `(p, A, q)`), `A → X C` (joining every derived `(q, C, r)`)
//! and `A → B X` (joining every derived `(o, B, p)`). Nothing of the intersection grammar is
//! materialized: candidates are enumerated from the grammar's indices and the derived items'
//! start/end tables.
//!
//! Items are settled in order of cost (Knuth's generalization of Dijkstra to grammars), where an
//! item's cost is the sum of the costs of the edges of its cheapest derivation. So the first
//! start item settled, `(q0, S, f)` with f accepting, carries a cheapest witness, and the
//! recorded back-pointers form an acyclic derivation from which the witness is read.
//!
//! Every candidate considered costs one unit of a work budget; when the budget runs out the
//! answer is [`Verdict::Unknown`], never a guess.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use hashbrown::HashMap;
use smallvec::SmallVec;

use super::dfa::{LexemeDfa, StateId};
use crate::grammar::normalize::context::Context;
use crate::grammar::{NonterminalId, NormalGrammar, TerminalId};

/// The outcome of one search.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Some lexeme sequence is derived by the grammar and accepted by the automaton.
    NonEmpty,
    /// No such sequence exists.
    Empty,
    /// The work budget ran out before either could be shown.
    Unknown,
}

/// Counters of one search, for statistics and benchmarks.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Items settled (popped with their final cost).
    pub settled: u64,
    /// Candidate items considered (the unit of the work budget).
    pub work: u64,
}

/// A witness: the automaton edges (indices into [`LexemeDfa::edges`]) along one accepted
/// lexeme sequence that the grammar derives, in order, and its total cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    pub edges: Vec<u32>,
    pub cost: u64,
}

impl Witness {
    /// The lexemes of the witness.
    pub fn lexemes(&self, dfa: &LexemeDfa) -> Vec<TerminalId> {
        self.edges.iter().map(|&e| dfa.edge(e).terminal).collect()
    }
}

/// Default work budget: far above what real checks need (thousands to tens of thousands).
pub const DEFAULT_BUDGET: u64 = 4_000_000;

/// How an item was derived: the last production applied and its children.
#[derive(Copy, Clone, Debug)]
enum Back {
    Terminal(u32),
    Epsilon,
    Unit(ItemKey),
    Binary(ItemKey, ItemKey),
}

#[derive(Copy, Clone, Debug)]
struct Slot {
    cost: u32,
    settled: bool,
    back: Back,
}

/// An item `(p, A, q)` packed into 64 bits: A (24 bits), p (20 bits), q (20 bits).
type ItemKey = u64;

#[inline]
fn key(p: StateId, a: NonterminalId, q: StateId) -> ItemKey {
    ((a.0 as u64) << 40) | ((p as u64) << 20) | q as u64
}

#[inline]
fn unkey(k: ItemKey) -> (StateId, NonterminalId, StateId) {
    (
        ((k >> 20) & 0xF_FFFF) as StateId,
        NonterminalId((k >> 40) as u32),
        (k & 0xF_FFFF) as StateId,
    )
}

/// `(A, state)` packed, for the start and end tables.
#[inline]
fn anchor(a: NonterminalId, s: StateId) -> u64 {
    ((a.0 as u64) << 20) | s as u64
}

/// The largest number of nonterminals an item key can hold.
pub const MAX_NONTERMINALS: usize = 1 << 24;

/// A reusable search workspace. Keeping one per checker avoids re-allocating the tables on
/// every check; [`Searcher::witness`] reads the derivation left by the last search.
#[derive(Default)]
pub struct Searcher {
    items: HashMap<ItemKey, Slot>,
    /// For settled `(p, A, q)`: `(A, p)` → list of `(q, cost)`.
    by_start: HashMap<u64, SmallVec<[(StateId, u32); 4]>>,
    /// For settled `(p, A, q)`: `(A, q)` → list of `(p, cost)`.
    by_end: HashMap<u64, SmallVec<[(StateId, u32); 4]>>,
    queue: CostQueue,
    filter: ContextFilter,
    goal: Option<ItemKey>,
    stats: SearchStats,
    budget: u64,
}

/// The items found but not yet settled, with their cost: where a derivation offers an item a
/// cheaper cost, the caller updates its slot and pushes it again.
struct Frontier<'a> {
    items: &'a mut HashMap<ItemKey, Slot>,
    queue: &'a mut CostQueue,
    work: &'a mut u64,
    budget: u64,
    filter: &'a ContextFilter,
    context: &'a Context,
}

/// The automaton's side of the context filter (see [`crate::grammar::normalize::context`]):
/// for each state, the terminals that can be read into it and out of it, as bitsets.
#[derive(Default)]
struct ContextFilter {
    words: usize,
    into: Vec<u64>,
    out_of: Vec<u64>,
    start: StateId,
    accepting: Vec<bool>,
}

impl ContextFilter {
    fn reset(&mut self, dfa: &LexemeDfa, words: usize) {
        let n = dfa.num_states();
        self.words = words;
        self.into.clear();
        self.into.resize(n * words, 0);
        self.out_of.clear();
        self.out_of.resize(n * words, 0);
        for e in dfa.edges() {
            let t = e.terminal.index();
            if t / 64 < words {
                self.into[e.to as usize * words + t / 64] |= 1 << (t % 64);
                self.out_of[e.from as usize * words + t / 64] |= 1 << (t % 64);
            }
        }
        self.start = dfa.start();
        self.accepting = (0..n as StateId).map(|q| dfa.is_accepting(q)).collect();
    }

    /// Whether item `(p, A, q)` can be part of an accepted derivation, judged by the terminals
    /// around it.
    #[inline]
    fn admits(&self, cx: &Context, p: StateId, a: NonterminalId, q: StateId) -> bool {
        let w = self.words;
        let (a, p, q) = (a.index(), p as usize, q as usize);
        let meets = |states: &[u64], s: usize, sets: &[u64]| {
            (0..w).any(|i| states[s * w + i] & sets[a * w + i] != 0)
        };
        let left =
            (p == self.start as usize && cx.can_start[a]) || meets(&self.into, p, &cx.precede);
        let right = (self.accepting[q] && cx.can_end[a]) || meets(&self.out_of, q, &cx.follow);
        left && right
    }
}

impl Frontier<'_> {
    /// Offers a derivation of item `k` at `cost`; keeps it if it is the cheapest so far.
    #[inline]
    fn relax(&mut self, k: ItemKey, cost: u32, back: Back) -> Result<(), OutOfBudget> {
        *self.work += 1;
        if *self.work > self.budget {
            return Err(OutOfBudget);
        }
        let (p, a, q) = unkey(k);
        if !self.filter.admits(self.context, p, a, q) {
            return Ok(());
        }
        match self.items.entry(k) {
            hashbrown::hash_map::Entry::Vacant(v) => {
                v.insert(Slot {
                    cost,
                    back,
                    settled: false,
                });
            }
            hashbrown::hash_map::Entry::Occupied(mut o) => {
                let slot = o.get_mut();
                if slot.settled || slot.cost <= cost {
                    return Ok(());
                }
                slot.cost = cost;
                slot.back = back;
            }
        }
        self.queue.push(cost, k);
        Ok(())
    }
}

/// A monotone priority queue on small integer costs: a bucket per cost below
/// [`CostQueue::BUCKETS`], a binary heap above (costs popped never decrease, so buckets are
/// exhausted before the heap is used).
#[derive(Default)]
struct CostQueue {
    buckets: Vec<Vec<ItemKey>>,
    cursor: usize,
    overflow: BinaryHeap<Reverse<(u32, ItemKey)>>,
}

impl CostQueue {
    const BUCKETS: usize = 1 << 12;

    fn clear(&mut self) {
        for b in &mut self.buckets {
            b.clear();
        }
        self.cursor = 0;
        self.overflow.clear();
    }

    #[inline]
    fn push(&mut self, cost: u32, k: ItemKey) {
        let c = cost as usize;
        if c < Self::BUCKETS {
            if c >= self.buckets.len() {
                self.buckets.resize_with(c + 1, Vec::new);
            }
            self.buckets[c].push(k);
        } else {
            self.overflow.push(Reverse((cost, k)));
        }
    }

    #[inline]
    fn pop(&mut self) -> Option<(u32, ItemKey)> {
        while self.cursor < self.buckets.len() {
            if let Some(k) = self.buckets[self.cursor].pop() {
                return Some((self.cursor as u32, k));
            }
            self.cursor += 1;
        }
        self.overflow.pop().map(|Reverse(x)| x)
    }
}

impl Searcher {
    pub fn new() -> Self {
        Self::default()
    }

    /// Counters of the last search.
    pub fn stats(&self) -> SearchStats {
        self.stats
    }

    /// Decides whether `grammar` and `dfa` share a word, spending at most `budget` units.
    pub fn search(&mut self, grammar: &NormalGrammar, dfa: &LexemeDfa, budget: u64) -> Verdict {
        self.reset(budget);
        self.filter.reset(dfa, grammar.context().words);
        if grammar.num_nonterminals() > MAX_NONTERMINALS {
            return Verdict::Unknown;
        }
        if self.seed(grammar, dfa).is_err() {
            return Verdict::Unknown;
        }
        let start = grammar.start();
        while let Some((cost, k)) = self.queue.pop() {
            let slot = self.items.get_mut(&k).expect("queued items have slots");
            if slot.settled || slot.cost != cost {
                continue;
            }
            slot.settled = true;
            self.stats.settled += 1;
            let (p, x, q) = unkey(k);
            if x == start && p == dfa.start() && dfa.is_accepting(q) {
                self.goal = Some(k);
                return Verdict::NonEmpty;
            }
            if self.extend(grammar, p, x, q, cost).is_err() {
                return Verdict::Unknown;
            }
        }
        Verdict::Empty
    }

    fn reset(&mut self, budget: u64) {
        self.items.clear();
        self.by_start.clear();
        self.by_end.clear();
        self.queue.clear();
        self.goal = None;
        self.stats = SearchStats::default();
        self.budget = budget;
    }

    /// Items given directly by `A → a` (one per edge) and `A → ε` (one per state).
    fn seed(&mut self, grammar: &NormalGrammar, dfa: &LexemeDfa) -> Result<(), OutOfBudget> {
        let mut f = Frontier {
            items: &mut self.items,
            queue: &mut self.queue,
            work: &mut self.stats.work,
            budget: self.budget,
            filter: &self.filter,
            context: grammar.context(),
        };
        for (i, e) in dfa.edges().iter().enumerate() {
            for &a in grammar.lhs_of_terminal(e.terminal) {
                f.relax(key(e.from, a, e.to), e.cost, Back::Terminal(i as u32))?;
            }
        }
        for &a in grammar.epsilon_rules() {
            for p in 0..dfa.num_states() as StateId {
                f.relax(key(p, a, p), 0, Back::Epsilon)?;
            }
        }
        Ok(())
    }

    /// Records the settled item `(p, X, q)` and derives every item it completes.
    fn extend(
        &mut self,
        grammar: &NormalGrammar,
        p: StateId,
        x: NonterminalId,
        q: StateId,
        cost: u32,
    ) -> Result<(), OutOfBudget> {
        let k = key(p, x, q);
        // Index before combining, so that `A → X X` can join the item with itself.
        self.by_start
            .entry(anchor(x, p))
            .or_default()
            .push((q, cost));
        self.by_end.entry(anchor(x, q)).or_default().push((p, cost));
        let Searcher {
            items,
            by_start,
            by_end,
            queue,
            stats,
            budget,
            filter,
            ..
        } = self;
        let mut f = Frontier {
            items,
            queue,
            work: &mut stats.work,
            budget: *budget,
            filter,
            context: grammar.context(),
        };
        for &a in grammar.unit_parents(x) {
            f.relax(key(p, a, q), cost, Back::Unit(k))?;
        }
        for &(a, c) in grammar.as_left_child(x) {
            let Some(rights) = by_start.get(&anchor(c, q)) else {
                continue;
            };
            for &(r, rc) in rights {
                f.relax(
                    key(p, a, r),
                    cost.saturating_add(rc),
                    Back::Binary(k, key(q, c, r)),
                )?;
            }
        }
        for &(a, b) in grammar.as_right_child(x) {
            let Some(lefts) = by_end.get(&anchor(b, p)) else {
                continue;
            };
            for &(o, lc) in lefts {
                f.relax(
                    key(o, a, q),
                    lc.saturating_add(cost),
                    Back::Binary(key(o, b, p), k),
                )?;
            }
        }
        Ok(())
    }

    /// The witness of the last search, if it answered [`Verdict::NonEmpty`].
    pub fn witness(&self) -> Option<Witness> {
        let goal = self.goal?;
        let cost = self.items[&goal].cost as u64;
        let mut edges = Vec::new();
        let mut stack = vec![goal];
        while let Some(k) = stack.pop() {
            match self.items[&k].back {
                Back::Terminal(e) => edges.push(e),
                Back::Epsilon => {}
                Back::Unit(child) => stack.push(child),
                Back::Binary(left, right) => {
                    stack.push(right);
                    stack.push(left);
                }
            }
        }
        Some(Witness { edges, cost })
    }

    /// The start and end states and the nonterminal of the last search's goal item.
    pub fn goal(&self) -> Option<(StateId, NonterminalId, StateId)> {
        self.goal.map(unkey)
    }
}

/// The work budget ran out.
struct OutOfBudget;
