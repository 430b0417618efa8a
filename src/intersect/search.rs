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
//! ε-edges of the automaton are followed on the right: a settled `(p, X, q)` with an ε-edge
//! `q → q'` gives `(p, X, q')`, which covers every ε-edge inside a path; an item that starts in
//! a state the start reaches by ε-edges gives the same item from the start, which covers those
//! at the beginning.
//!
//! Every candidate considered costs one unit of a work budget; when the budget runs out the
//! answer is [`Verdict::Unknown`], never a guess.

mod predict;
mod useful;

use std::cmp::Reverse;

use crate::deadline::Deadline;
use std::collections::BinaryHeap;

use hashbrown::HashMap;

use super::anchors::AnchoredLists;
use super::dfa::{LexemeDfa, StateId};
use super::items::{key, unkey, ItemKey, ItemTable, Offer, MAX_COST};
use crate::grammar::normalize::context::Context;
use crate::grammar::{NonterminalId, NormalGrammar, TerminalId};
use predict::{Predicted, Reads};

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

/// The largest number of nonterminals an item key can hold.
pub const MAX_NONTERMINALS: usize = 1 << 24;

/// A reusable search workspace. Keeping one per checker avoids re-allocating the tables on
/// every check; [`Searcher::witness`] reads the derivation left by the last
/// [`Searcher::search`] ([`Searcher::decide`] keeps none, and is faster for it).
#[derive(Default)]
pub struct Searcher {
    items: ItemTable,
    /// How each item's best derivation so far was made; kept only when a witness is wanted.
    backs: Option<HashMap<ItemKey, Back>>,
    /// For settled `(p, A, q)`: `(A, p)` → list of `(q, cost)`.
    by_start: AnchoredLists,
    /// For settled `(p, A, q)`: `(A, q)` → list of `(p, cost)`.
    by_end: AnchoredLists,
    queue: CostQueue,
    filter: ContextFilter,
    /// Top-down prediction (see [`predict`]): on in the masks' exhaustive search and in the
    /// checks' second try, never where a cheapest witness is wanted.
    predicted: Predicted,
    predicting: bool,
    /// Set by [`Searcher::without_prediction`].
    bottom_up_only: bool,
    predict_stack: Vec<(StateId, NonterminalId)>,
    /// States other than the start that the start reaches by ε-edges.
    from_start: Vec<StateId>,
    goal: Option<ItemKey>,
    stats: SearchStats,
    budget: u64,
    deadline: Deadline,
}

/// The items found but not yet settled, with their cost: where a derivation offers an item a
/// cheaper cost, the caller updates its slot and pushes it again.
struct Frontier<'a> {
    items: &'a mut ItemTable,
    backs: &'a mut Option<HashMap<ItemKey, Back>>,
    queue: &'a mut CostQueue,
    work: &'a mut u64,
    budget: u64,
    deadline: &'a Deadline,
    filter: &'a ContextFilter,
    context: &'a Context,
    /// The prediction table when the search predicts.
    predicted: Option<&'a mut Predicted>,
    predict_stack: &'a mut Vec<(StateId, NonterminalId)>,
    /// The priority of the item being extended: no item is queued below it (a prediction can
    /// admit items cheaper than that; see [`predict`]).
    floor: u32,
}

/// The automaton's side of the context filter (see [`crate::grammar::normalize::context`]):
/// for each state, the terminals that can be read into it and out of it, as bitsets. Through
/// ε-edges: a state reads in what its ε-predecessors read in, reads out what its ε-successors
/// read out, and counts as the start (as accepting) where the start reaches it (it reaches an
/// accepting state) by ε-edges.
#[derive(Default)]
struct ContextFilter {
    words: usize,
    into: Vec<u64>,
    out_of: Vec<u64>,
    at_start: Vec<bool>,
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
        self.at_start = vec![false; n];
        self.at_start[dfa.start() as usize] = true;
        self.accepting = (0..n as StateId).map(|q| dfa.is_accepting(q)).collect();
        if dfa.has_epsilons() {
            self.follow_epsilons(dfa);
        }
    }

    /// Propagates the sets along ε-edges to a fixpoint (ε-edges are few).
    fn follow_epsilons(&mut self, dfa: &LexemeDfa) {
        let w = self.words;
        let mut changed = true;
        while changed {
            changed = false;
            for p in 0..dfa.num_states() {
                for &q in dfa.epsilon_successors(p as StateId) {
                    let q = q as usize;
                    for i in 0..w {
                        let into = self.into[q * w + i] | self.into[p * w + i];
                        let out = self.out_of[p * w + i] | self.out_of[q * w + i];
                        changed |= into != self.into[q * w + i] || out != self.out_of[p * w + i];
                        self.into[q * w + i] = into;
                        self.out_of[p * w + i] = out;
                    }
                    changed |= (self.at_start[p] && !self.at_start[q])
                        || (self.accepting[q] && !self.accepting[p]);
                    self.at_start[q] |= self.at_start[p];
                    self.accepting[p] |= self.accepting[q];
                }
            }
        }
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
        let left = (self.at_start[p] && cx.can_start[a]) || meets(&self.into, p, &cx.precede);
        let right = (self.accepting[q] && cx.can_end[a]) || meets(&self.out_of, q, &cx.follow);
        left && right
    }
}

impl Frontier<'_> {
    /// One unit of work against the budget and the deadline.
    #[inline]
    fn charge(&mut self) -> Result<(), OutOfBudget> {
        *self.work += 1;
        // The clock is read once every 4,096 units (tens of microseconds of work).
        if *self.work > self.budget || (*self.work & 0xfff == 0 && self.deadline.expired()) {
            return Err(OutOfBudget);
        }
        Ok(())
    }

    /// Offers a derivation of item `k` at `cost`; keeps it if it is the cheapest so far.
    #[inline]
    fn relax(&mut self, k: ItemKey, cost: u32, back: Back) -> Result<(), OutOfBudget> {
        self.charge()?;
        let (p, a, q) = unkey(k);
        if self.predicted.as_deref().is_some_and(|t| !t.contains(p, a)) {
            return Ok(());
        }
        if !self.filter.admits(self.context, p, a, q) {
            return Ok(());
        }
        let cost = cost.min(MAX_COST);
        if self.items.offer(p, a, q, cost) == Offer::Refused {
            return Ok(());
        }
        if let Some(backs) = self.backs {
            backs.insert(k, back);
        }
        self.queue.push(cost.max(self.floor), k, cost);
        Ok(())
    }
}

/// A monotone priority queue on small integer priorities: a bucket per priority below
/// [`CostQueue::BUCKETS`], a binary heap above (priorities popped never decrease, so buckets
/// are exhausted before the heap is used). Each entry carries its item's cost, which is its
/// priority except where a prediction admitted an item cheaper than the search's current
/// priority (see [`predict`]): it is queued at that priority, and keeps its cost for the sums
/// of its parents.
#[derive(Default)]
struct CostQueue {
    buckets: Vec<Vec<(ItemKey, u32)>>,
    cursor: usize,
    overflow: BinaryHeap<Reverse<(u32, ItemKey, u32)>>,
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
    fn push(&mut self, priority: u32, k: ItemKey, cost: u32) {
        let c = priority as usize;
        if c < Self::BUCKETS {
            if c >= self.buckets.len() {
                self.buckets.resize_with(c + 1, Vec::new);
            }
            self.buckets[c].push((k, cost));
        } else {
            self.overflow.push(Reverse((priority, k, cost)));
        }
    }

    /// The next entry: `(priority, item, cost)`.
    #[inline]
    fn pop(&mut self) -> Option<(u32, ItemKey, u32)> {
        while self.cursor < self.buckets.len() {
            if let Some((k, cost)) = self.buckets[self.cursor].pop() {
                return Some((self.cursor as u32, k, cost));
            }
            self.cursor += 1;
        }
        self.overflow.pop().map(|Reverse(x)| x)
    }
}

impl Searcher {
    /// An empty workspace.
    pub fn new() -> Self {
        Self::default()
    }

    /// A workspace whose searches never predict: the plain bottom-up search, for comparisons
    /// (tests, benchmarks).
    #[cfg(any(test, feature = "internals"))]
    pub fn without_prediction() -> Self {
        Searcher {
            bottom_up_only: true,
            ..Self::default()
        }
    }

    /// Makes every later search answer `unknown` once `deadline` expires.
    pub fn set_deadline(&mut self, deadline: Deadline) {
        self.deadline = deadline;
    }

    /// Counters of the last search.
    pub fn stats(&self) -> SearchStats {
        self.stats
    }

    /// Decides whether `grammar` and `dfa` share a word, spending at most `budget` units, and
    /// keeps a cheapest witness for [`Searcher::witness`].
    pub fn search(&mut self, grammar: &NormalGrammar, dfa: &LexemeDfa, budget: u64) -> Verdict {
        self.run(grammar, dfa, budget, true, false)
    }

    /// [`Searcher::search`] without the witness: the same verdict, with less bookkeeping.
    ///
    /// Three tries, each exact or `unknown`: bottom-up on a sixteenth of `budget` (checks end
    /// there: the shared workload's 432 canvases need at most 90,023 units, a sixteenth of the
    /// default budget is 250,000); then with top-down prediction (see [`predict`]) on a
    /// quarter, for grammars whose bottom-up items are mostly unwanted (many nonterminals
    /// deriving the same words); then bottom-up on the whole budget, where prediction, which
    /// discovers cheap items late, took longer than the cost order would (canvases of many
    /// holes). Every verdict bottom-up alone reaches within `budget` is reached, with at most
    /// 5/16 more work; [`SearchStats::work`] counts all three.
    pub fn decide(&mut self, grammar: &NormalGrammar, dfa: &LexemeDfa, budget: u64) -> Verdict {
        if self.bottom_up_only {
            return self.run(grammar, dfa, budget, false, false);
        }
        let mut spent = 0;
        for (budget, predict) in [(budget / 16, false), (budget / 4, true), (budget, false)] {
            let v = self.run(grammar, dfa, budget, false, predict);
            spent += self.stats.work;
            if v != Verdict::Unknown || self.deadline.expired() {
                self.stats.work = spent;
                return v;
            }
        }
        self.stats.work = spent;
        Verdict::Unknown
    }

    /// The search with top-down prediction alone, on the whole budget (`unknown` where its
    /// table would be too large): for tests and benchmarks; [`Searcher::decide`] tries it
    /// second.
    #[cfg(any(test, feature = "internals"))]
    pub fn decide_predicting(
        &mut self,
        grammar: &NormalGrammar,
        dfa: &LexemeDfa,
        budget: u64,
    ) -> Verdict {
        self.run(grammar, dfa, budget, false, true)
    }

    fn run(
        &mut self,
        grammar: &NormalGrammar,
        dfa: &LexemeDfa,
        budget: u64,
        witness: bool,
        predict: bool,
    ) -> Verdict {
        self.reset(grammar, dfa, budget, witness, predict);
        if predict && !self.predicting {
            // The prediction table would be too large: the bottom-up tries decide.
            return Verdict::Unknown;
        }
        self.settle_all(grammar, dfa, None)
    }

    /// Seeds the search reset last and settles items until the goal or exhaustion; with
    /// `goals`, to exhaustion, collecting every goal item there (`NonEmpty` if any).
    fn settle_all(
        &mut self,
        grammar: &NormalGrammar,
        dfa: &LexemeDfa,
        mut goals: Option<&mut Vec<ItemKey>>,
    ) -> Verdict {
        if grammar.num_nonterminals() > MAX_NONTERMINALS {
            return Verdict::Unknown;
        }
        if self.seed(grammar, dfa).is_err() {
            return Verdict::Unknown;
        }
        let start = grammar.start();
        while let Some((priority, k, cost)) = self.queue.pop() {
            let (p, x, q) = unkey(k);
            if !self.items.settle(p, x, q, cost) {
                continue;
            }
            self.stats.settled += 1;
            if x == start && p == dfa.start() && dfa.is_accepting(q) {
                match goals.as_deref_mut() {
                    Some(all) => all.push(k),
                    None => {
                        self.goal = Some(k);
                        return Verdict::NonEmpty;
                    }
                }
            }
            if self
                .extend(grammar, dfa, (p, x, q), cost, priority)
                .is_err()
            {
                return Verdict::Unknown;
            }
        }
        match goals {
            Some(all) if !all.is_empty() => Verdict::NonEmpty,
            _ => Verdict::Empty,
        }
    }

    /// Empties every table for a search of `dfa` with `grammar`, predicting if asked to and
    /// the prediction table fits.
    fn reset(
        &mut self,
        grammar: &NormalGrammar,
        dfa: &LexemeDfa,
        budget: u64,
        witness: bool,
        predict: bool,
    ) {
        let (nonterminals, states) = (grammar.num_nonterminals(), dfa.num_states());
        self.items.reset(nonterminals, states);
        self.by_start.reset(nonterminals, states);
        self.by_end.reset(nonterminals, states);
        self.filter.reset(dfa, grammar.context().words);
        // Prediction makes costs upper bounds (see `predict`): never where a cheapest witness
        // is wanted.
        self.predicting = predict
            && !witness
            && !self.bottom_up_only
            && nonterminals.div_ceil(64).saturating_mul(states) <= predict::MAX_WORDS;
        if self.predicting {
            self.predicted.reset(nonterminals, states);
        }
        self.from_start.clear();
        self.from_start.extend(
            (0..states as StateId)
                .filter(|&p| p != dfa.start() && self.filter.at_start[p as usize]),
        );
        match (&mut self.backs, witness) {
            (Some(b), true) => b.clear(),
            (b, true) => *b = Some(HashMap::new()),
            (b, false) => *b = None,
        }
        self.queue.clear();
        self.goal = None;
        self.stats = SearchStats::default();
        self.budget = budget;
    }

    /// Items given directly by `A → a` (one per edge), and the empty word's.
    fn seed(&mut self, grammar: &NormalGrammar, dfa: &LexemeDfa) -> Result<(), OutOfBudget> {
        let mut f = Frontier {
            items: &mut self.items,
            backs: &mut self.backs,
            queue: &mut self.queue,
            work: &mut self.stats.work,
            budget: self.budget,
            deadline: &self.deadline,
            filter: &self.filter,
            context: grammar.context(),
            predicted: self.predicting.then_some(&mut self.predicted),
            predict_stack: &mut self.predict_stack,
            floor: 0,
        };
        if f.predicted.is_some() {
            // The terminal items come with the predictions of their nonterminals.
            let reads = Reads {
                grammar,
                dfa,
                by_start: &self.by_start,
                from_start: &self.from_start,
            };
            f.predict(&reads, dfa.start(), grammar.start())?;
        } else {
            for (i, e) in dfa.edges().iter().enumerate() {
                for &a in grammar.lhs_of_terminal(e.terminal) {
                    f.relax(key(e.from, a, e.to), e.cost, Back::Terminal(i as u32))?;
                }
            }
        }
        // Empty spans need no items: a production with a nullable child is used through
        // `nullable_sibling_parents`. Only the empty word needs one, the start symbol's.
        let start = grammar.start();
        if grammar.is_nullable(start) {
            f.relax(key(dfa.start(), start, dfa.start()), 0, Back::Epsilon)?;
        }
        Ok(())
    }

    /// Records the settled item `(p, X, q)` of `cost`, popped at `priority`, and derives every
    /// item it completes.
    fn extend(
        &mut self,
        grammar: &NormalGrammar,
        dfa: &LexemeDfa,
        (p, x, q): (StateId, NonterminalId, StateId),
        cost: u32,
        priority: u32,
    ) -> Result<(), OutOfBudget> {
        let k = key(p, x, q);
        // Index before combining, so that `A → X X` can join the item with itself.
        self.by_start.push(x, p, q, cost);
        self.by_end.push(x, q, p, cost);
        let Searcher {
            items,
            backs,
            by_start,
            by_end,
            queue,
            stats,
            budget,
            deadline,
            filter,
            predicted,
            predicting,
            predict_stack,
            from_start,
            ..
        } = self;
        let mut f = Frontier {
            items,
            backs,
            queue,
            work: &mut stats.work,
            budget: *budget,
            deadline,
            filter,
            context: grammar.context(),
            predicted: predicting.then_some(predicted),
            predict_stack,
            floor: priority,
        };
        if f.predicted.is_some() {
            // `(p, X, q)` derived: a parent `A → X C` predicted at `p` predicts `C` at `q`.
            let reads = Reads {
                grammar,
                dfa,
                by_start,
                from_start,
            };
            for &(a, c) in grammar.as_left_child(x) {
                if f.predicted.as_deref().is_some_and(|t| t.contains(p, a)) {
                    f.predict(&reads, q, c)?;
                }
            }
        }
        for &a in grammar.unit_parents(x) {
            f.relax(key(p, a, q), cost, Back::Unit(k))?;
        }
        for &a in grammar.nullable_sibling_parents(x) {
            f.relax(key(p, a, q), cost, Back::Unit(k))?;
        }
        for &(a, c) in grammar.as_left_child(x) {
            for (r, rc) in by_start.list(c, q) {
                f.relax(
                    key(p, a, r),
                    cost.saturating_add(rc),
                    Back::Binary(k, key(q, c, r)),
                )?;
            }
        }
        for &(a, b) in grammar.as_right_child(x) {
            for (o, lc) in by_end.list(b, p) {
                f.relax(
                    key(o, a, q),
                    lc.saturating_add(cost),
                    Back::Binary(key(o, b, p), k),
                )?;
            }
        }
        for &q2 in dfa.epsilon_successors(q) {
            f.relax(key(p, x, q2), cost, Back::Unit(k))?;
        }
        if p != dfa.start() && f.filter.at_start[p as usize] {
            f.relax(key(dfa.start(), x, q), cost, Back::Unit(k))?;
        }
        Ok(())
    }

    /// The witness of the last search, if it answered [`Verdict::NonEmpty`].
    pub fn witness(&self) -> Option<Witness> {
        let goal = self.goal?;
        let backs = self.backs.as_ref()?;
        let (p, a, q) = unkey(goal);
        let cost = self.items.cost(p, a, q)? as u64;
        let mut edges = Vec::new();
        let mut stack = vec![goal];
        while let Some(k) = stack.pop() {
            match backs[&k] {
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
}

/// The work budget ran out.
struct OutOfBudget;
