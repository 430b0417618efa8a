//! Top-down prediction for the bottom-up search: which nonterminals may begin at which state,
//! given what has been derived to the left (Earley's predictor, over an automaton).
//!
//! The bottom-up search alone derives every item the automaton and the grammar allow, wanted
//! or not. Grammars with many nonterminals that derive the same words suffer most: a JSON
//! Schema object whose members may come in any order has a nonterminal per set of members
//! used, and over a complete instance the search derived the tail of an object for every set,
//! some 750 items a lexeme (JsonSchemaStore's `detekt-1.22.0.json`: 15.7M units of work for
//! one 17 KB check). With prediction, an item `(p, A, q)` is admitted only when `A` is
//! *predicted* at `p`:
//! - the start symbol is predicted at the start;
//! - a predicted `A` predicts its left corners at the same state: `B` of `A → B C`, the child
//!   of a unit production, the child beside a nullable sibling;
//! - a derived `(p, B, r)` with `A → B C` and `A` predicted at `p` predicts `C` at `r`;
//! - a prediction at `p` holds at every state an ε-edge leads to from `p`.
//!
//! Every item of an accepted derivation is predicted (by induction over the derivation, left
//! to right), so the filter never loses a word. Predictions arrive while the search runs, so a
//! new one re-derives what the filter turned away before it: the terminal items of the
//! nonterminal's edges, and its unit and binary derivations from items already settled. Those
//! items may be cheaper than the search's current priority; they are queued at that priority
//! instead (the `floor`) and keep their cost for their parents' sums, which keeps the queue
//! monotone: verdicts stay exact, but an item may settle before a cheaper derivation of it is
//! found, so costs are upper bounds. Hence the searches that need cheapest witnesses
//! (completions) do not predict, and checks predict only on their second try
//! ([`Searcher::decide`](super::Searcher::decide)): where holes are many, prediction finds cheap
//! items late and the goal after more work than the cost order would (a C++ canvas of 40
//! holes: 7.4M units of work against 0.7M bottom-up). The masks' exhaustive search
//! (`useful_states`) does not depend on the order and always predicts.

use super::{key, Back, Frontier, OutOfBudget};
use crate::grammar::{NonterminalId, NormalGrammar};
use crate::intersect::anchors::AnchoredLists;
use crate::intersect::dfa::{LexemeDfa, StateId};

const NO_ROW: u32 = u32::MAX;

/// The most `u64` words the table may hold (states × nonterminals / 64): 64 MiB. A search
/// over a larger product does not predict.
pub(super) const MAX_WORDS: usize = 1 << 23;

/// The predicted nonterminals of each state, a bit set per state allocated on first use.
#[derive(Default)]
pub(super) struct Predicted {
    words: usize,
    rows: Vec<u32>,
    touched: Vec<u32>,
    bits: Vec<u64>,
}

impl Predicted {
    /// Empties the table for a search over `nonterminals` and `states`.
    pub fn reset(&mut self, nonterminals: usize, states: usize) {
        for &s in &self.touched {
            self.rows[s as usize] = NO_ROW;
        }
        self.touched.clear();
        self.bits.clear();
        self.words = nonterminals.div_ceil(64);
        if self.rows.len() < states {
            self.rows.resize(states, NO_ROW);
        }
    }

    /// Whether `a` is predicted at `p`.
    #[inline]
    pub fn contains(&self, p: StateId, a: NonterminalId) -> bool {
        let row = self.rows[p as usize];
        row != NO_ROW
            && self.bits[row as usize * self.words + a.index() / 64] & (1 << (a.index() % 64)) != 0
    }

    /// Predicts `a` at `p`; whether it is new.
    #[inline]
    fn insert(&mut self, p: StateId, a: NonterminalId) -> bool {
        let mut row = self.rows[p as usize];
        if row == NO_ROW {
            row = (self.bits.len() / self.words) as u32;
            self.rows[p as usize] = row;
            self.touched.push(p);
            self.bits.resize(self.bits.len() + self.words, 0);
        }
        let word = &mut self.bits[row as usize * self.words + a.index() / 64];
        let bit = 1 << (a.index() % 64);
        let new = *word & bit == 0;
        *word |= bit;
        new
    }
}

/// What a prediction reads besides the frontier: the grammar, the automaton, the settled
/// items by start, and the states the start reaches by ε-edges.
pub(super) struct Reads<'a> {
    pub grammar: &'a NormalGrammar,
    pub dfa: &'a LexemeDfa,
    pub by_start: &'a AnchoredLists,
    pub from_start: &'a [StateId],
}

impl Frontier<'_> {
    /// Predicts `a` at `p` with everything it implies (see the [module docs](self)), and offers
    /// the items the new predictions admit from what is derived already. One unit of work per
    /// new (state, nonterminal) pair.
    pub(super) fn predict(
        &mut self,
        reads: &Reads<'_>,
        p: StateId,
        a: NonterminalId,
    ) -> Result<(), OutOfBudget> {
        let (grammar, dfa) = (reads.grammar, reads.dfa);
        let mut stack = std::mem::take(self.predict_stack);
        stack.clear();
        stack.push((p, a));
        let mut result = Ok(());
        while let Some((p, y)) = stack.pop() {
            let Some(predicted) = self.predicted.as_deref_mut() else {
                break;
            };
            if !predicted.insert(p, y) {
                continue;
            }
            if let Err(e) = self.charge() {
                result = Err(e);
                break;
            }
            for &(b, _) in grammar.binary_children(y) {
                stack.push((p, b));
            }
            for &u in grammar
                .unit_children(y)
                .iter()
                .chain(grammar.nullable_sibling_children(y))
            {
                stack.push((p, u));
            }
            for &p2 in dfa.epsilon_successors(p) {
                stack.push((p2, y));
            }
            // What the filter may have turned away before: `y`'s items from here.
            let r = self.rederive(reads, p, y, &mut stack);
            if let Err(e) = r {
                result = Err(e);
                break;
            }
        }
        *self.predict_stack = stack;
        result
    }

    /// Offers the items `(p, y, ·)` derivable now: `y`'s terminal edges from `p`, and its unit
    /// and binary derivations from settled items; pushes the predictions those binary
    /// derivations' left children make.
    fn rederive(
        &mut self,
        reads: &Reads<'_>,
        p: StateId,
        y: NonterminalId,
        stack: &mut Vec<(StateId, NonterminalId)>,
    ) -> Result<(), OutOfBudget> {
        let Reads {
            grammar,
            dfa,
            by_start,
            from_start,
        } = *reads;
        let terminals = grammar.terminals_of(y);
        if !terminals.is_empty() {
            for &e in dfa.out_edges(p) {
                let edge = dfa.edge(e);
                if terminals.contains(&edge.terminal) {
                    self.relax(key(p, y, edge.to), edge.cost, Back::Terminal(e))?;
                }
            }
        }
        for &u in grammar
            .unit_children(y)
            .iter()
            .chain(grammar.nullable_sibling_children(y))
        {
            for (q, c) in by_start.list(u, p) {
                self.relax(key(p, y, q), c, Back::Unit(key(p, u, q)))?;
            }
        }
        for &(b, c) in grammar.binary_children(y) {
            for (r, bc) in by_start.list(b, p) {
                stack.push((r, c));
                for (q, cc) in by_start.list(c, r) {
                    self.relax(
                        key(p, y, q),
                        bc.saturating_add(cc),
                        Back::Binary(key(p, b, r), key(r, c, q)),
                    )?;
                }
            }
        }
        if p == dfa.start() {
            for &s in from_start {
                for (q, c) in by_start.list(y, s) {
                    self.relax(key(p, y, q), c, Back::Unit(key(s, y, q)))?;
                }
            }
        }
        Ok(())
    }
}
