//! Which automaton states lie on some accepted derivation: the search run to exhaustion, then
//! an outside pass.
//!
//! A valid-token mask asks, for each way a token can cross one position, whether some word of
//! the grammar passes that way. The canvas's automaton holds every way at once (each told
//! apart by its last state and its ε-edges out of the position), so one search answers for
//! all of them: the inside pass settles every derivable item (it does not stop at the first
//! goal), and the outside pass walks down from the goal items through the productions whose
//! children are both derivable, marking the items that take part in some complete derivation.
//! A state is *useful* when a marked item starts or ends in it: some accepted word's run passes
//! through it; an ε-edge is useful when some accepted word's run takes it.
//!
//! Every rule the inside pass applies is undone here: unit and nullable-sibling productions,
//! binary productions (the left child's end is enumerated from the settled items' start
//! lists), ε-edges on the right, and items moved to the start from a state the start reaches
//! by ε-edges (the states on the ε-paths from the start to where such an item begins are
//! useful too, though no item ends in them). Work is counted against the same budget, and the
//! deadline is read as often as in the inside pass.

use hashbrown::HashSet;

use super::{key, unkey, ItemKey, Searcher, Verdict};
use crate::grammar::NormalGrammar;
use crate::intersect::dfa::{LexemeDfa, StateId};

/// The parts of an automaton that some word of the grammar it accepts passes through.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Useful {
    /// For each state, whether some accepted word's run passes through it.
    pub states: Vec<bool>,
    /// The ε-edges `(from, to)` some accepted word's run takes.
    pub epsilons: HashSet<(StateId, StateId)>,
}

impl Searcher {
    /// The states and ε-edges of `dfa` that some word of `grammar` that `dfa` accepts passes
    /// through; `None` when `budget` runs out (the inside and outside passes together). (The
    /// oracle of [`Searcher::useful_epsilons`] in the tests; masks ask that instead.)
    #[cfg(test)]
    pub fn useful_states(
        &mut self,
        grammar: &NormalGrammar,
        dfa: &LexemeDfa,
        budget: u64,
    ) -> Option<Useful> {
        self.useful_where(grammar, dfa, budget, |_, _| true)
    }

    /// Which of the ε-edges `wanted` some word of `grammar` that `dfa` accepts takes; `None`
    /// when `budget` runs out.
    ///
    /// The answer [`Searcher::useful_states`] gives for those edges, with an outside pass that
    /// walks down only through items whose span can hold one of them: an item `(p, A, q)`
    /// whose run takes the edge `f → t` has `p` reaching `f` and `t` reaching `q`, and so do
    /// the items above it, so an item failing that test has no descendant that takes a wanted
    /// edge. A mask wants the edges out of its open position, a narrow waist between the text
    /// on its left and on its right: most items (those left of the position, or right of it)
    /// fail the test, and the outside pass, two thirds of a mask's search in the middle of a
    /// long run, shrinks with them.
    pub fn useful_epsilons(
        &mut self,
        grammar: &NormalGrammar,
        dfa: &LexemeDfa,
        budget: u64,
        wanted: &[(StateId, StateId)],
    ) -> Option<HashSet<(StateId, StateId)>> {
        let n = dfa.num_states();
        // Forward from the edges' ends, and backward from their starts, over every edge.
        let mut after = vec![false; n];
        let mut stack: Vec<StateId> = wanted.iter().map(|&(_, t)| t).collect();
        while let Some(q) = stack.pop() {
            if std::mem::replace(&mut after[q as usize], true) {
                continue;
            }
            let by_terminal = dfa.out_edges(q).iter().map(|&e| dfa.edge(e).to);
            stack.extend(by_terminal.chain(dfa.epsilon_successors(q).iter().copied()));
        }
        let mut preds: Vec<Vec<StateId>> = vec![Vec::new(); n];
        for e in dfa.edges() {
            preds[e.to as usize].push(e.from);
        }
        for p in 0..n as StateId {
            for &q in dfa.epsilon_successors(p) {
                preds[q as usize].push(p);
            }
        }
        let mut before = vec![false; n];
        let mut stack: Vec<StateId> = wanted.iter().map(|&(f, _)| f).collect();
        while let Some(q) = stack.pop() {
            if std::mem::replace(&mut before[q as usize], true) {
                continue;
            }
            stack.extend(preds[q as usize].iter().copied());
        }
        let relevant = |p: StateId, q: StateId| before[p as usize] && after[q as usize];
        let useful = self.useful_where(grammar, dfa, budget, relevant)?;
        Some(
            wanted
                .iter()
                .copied()
                .filter(|e| useful.epsilons.contains(e))
                .collect(),
        )
    }

    /// The outside pass of [`Searcher::useful_states`] through the items `(p, A, q)` for
    /// which `relevant(p, q)` holds (and the goal items that do): the states and ε-edges of
    /// those items, which are all of them when `relevant` always holds.
    fn useful_where(
        &mut self,
        grammar: &NormalGrammar,
        dfa: &LexemeDfa,
        budget: u64,
        relevant: impl Fn(StateId, StateId) -> bool,
    ) -> Option<Useful> {
        // Exhaustive: the order does not matter, and prediction only leaves items out.
        self.reset(grammar, dfa, budget, false, true);
        let mut goals: Vec<ItemKey> = Vec::new();
        if self.settle_all(grammar, dfa, Some(&mut goals)) == Verdict::Unknown {
            return None;
        }
        let n = dfa.num_states();
        let mut eps_pred: Vec<Vec<StateId>> = vec![Vec::new(); n];
        for p in 0..n as StateId {
            for &q in dfa.epsilon_successors(p) {
                eps_pred[q as usize].push(p);
            }
        }
        let items = &self.items;
        let derived = |p, a, q| items.cost(p, a, q).is_some();
        // States an item was moved to the start from: the ε-paths from the start to them are
        // part of the run, though no item ends there.
        let mut moved: Vec<StateId> = Vec::new();
        let mut epsilons: HashSet<(StateId, StateId)> = HashSet::new();
        goals.retain(|&k| {
            let (p, _, q) = unkey(k);
            relevant(p, q)
        });
        let mut useful: HashSet<ItemKey> = goals.iter().copied().collect();
        let mut stack = goals;
        let mut work = self.stats.work;
        let mut next_clock = work;
        // The children of the item popped, refilled for each.
        let mut found: Vec<ItemKey> = Vec::new();
        while let Some(k) = stack.pop() {
            let (p, a, q) = unkey(k);
            found.clear();
            for &b in grammar
                .unit_children(a)
                .iter()
                .chain(grammar.nullable_sibling_children(a))
            {
                if derived(p, b, q) {
                    found.push(key(p, b, q));
                }
            }
            // The split point `r` of `a → b c`: walk the shorter of the two lists that meet
            // there (inside an any-string hole both can be long).
            for &(b, c) in grammar.binary_children(a) {
                let (lefts, rights) = (self.by_start.len(b, p), self.by_end.len(c, q));
                if lefts <= rights {
                    for (r, _) in self.by_start.list(b, p) {
                        work += 1;
                        if derived(r, c, q) {
                            found.push(key(p, b, r));
                            found.push(key(r, c, q));
                        }
                    }
                } else {
                    for (r, _) in self.by_end.list(c, q) {
                        work += 1;
                        if derived(p, b, r) {
                            found.push(key(p, b, r));
                            found.push(key(r, c, q));
                        }
                    }
                }
            }
            // The ε-edge `q0 → q` an item `(p, a, q0)` took: walk the shorter of `q`'s
            // ε-predecessors and the items `(p, a, ·)` (in a mask's automaton with merged
            // states, thousands of path ends lead into one state).
            let preds = &eps_pred[q as usize];
            if self.by_start.len(a, p) < preds.len() {
                for (q0, _) in self.by_start.list(a, p) {
                    work += 1;
                    if dfa.epsilon_successors(q0).contains(&q) {
                        found.push(key(p, a, q0));
                        epsilons.insert((q0, q));
                    }
                }
            } else {
                for &q0 in preds {
                    work += 1;
                    if derived(p, a, q0) {
                        found.push(key(p, a, q0));
                        epsilons.insert((q0, q));
                    }
                }
            }
            if p == dfa.start() {
                for &p0 in &self.from_start {
                    if derived(p0, a, q) {
                        found.push(key(p0, a, q));
                        moved.push(p0);
                    }
                }
            }
            work += found.len() as u64 + 1;
            if work > budget {
                return None;
            }
            // The clock is read once every 4,096 units or so, as in the inside pass.
            if work >= next_clock {
                if self.deadline.expired() {
                    return None;
                }
                next_clock = work + 0x1000;
            }
            for &k2 in &found {
                let (p2, _, q2) = unkey(k2);
                if relevant(p2, q2) && useful.insert(k2) {
                    stack.push(k2);
                }
            }
        }
        let mut states = vec![false; n];
        for k in useful {
            let (p, _, q) = unkey(k);
            states[p as usize] = true;
            states[q as usize] = true;
        }
        // Back from each such state along ε-edges, through states the start reaches.
        let mut seen = vec![false; n];
        while let Some(s) = moved.pop() {
            for &r in &eps_pred[s as usize] {
                if self.filter.at_start[r as usize] {
                    epsilons.insert((r, s));
                    if !seen[r as usize] {
                        seen[r as usize] = true;
                        states[r as usize] = true;
                        moved.push(r);
                    }
                }
            }
        }
        Some(Useful { states, epsilons })
    }
}
