//! The finite automaton over lexemes that the emptiness search intersects with the grammar.
//!
//! Its alphabet is the grammar's terminal ids. Each edge carries a cost, the price of using it
//! in a witness (for a canvas: how much text the lexeme adds), so the search can prefer cheap
//! witnesses. The search does not need determinism, so none is required here, and ε-edges are
//! allowed: the automaton the checker builds is nondeterministic (see [`crate::holey`]), with
//! ε-edges where a hole's content may run on into the next hole (inside a comment, say).

use thiserror::Error;

use crate::grammar::TerminalId;

/// A state of a [`LexemeDfa`].
pub type StateId = u32;

/// The largest number of states the search can address (item keys pack two state ids).
pub const MAX_STATES: usize = 1 << 20;

/// One transition `from --terminal--> to`, priced `cost`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Edge {
    /// The state the edge leaves.
    pub from: StateId,
    /// The lexeme it reads.
    pub terminal: TerminalId,
    /// The state it enters.
    pub to: StateId,
    /// What taking it costs (bytes a completion writes).
    pub cost: u32,
}

/// What is wrong with an automaton handed to [`LexemeDfa::new`].
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum DfaError {
    #[error("the automaton has {0} states; at most {MAX_STATES} are supported")]
    TooManyStates(usize),
    #[error("state {state} is out of range (the automaton has {num_states} states)")]
    StateOutOfRange { state: StateId, num_states: usize },
    #[error("the automaton has no states")]
    NoStates,
}

/// An automaton over lexemes: states `0..num_states`, a start state, accepting states, and
/// edges indexed by terminal.
#[derive(Clone, Debug)]
pub struct LexemeDfa {
    num_states: usize,
    start: StateId,
    accepting: Vec<bool>,
    edges: Vec<Edge>,
    /// ε-successors of state q: `eps_targets[eps_offsets[q]..eps_offsets[q + 1]]`.
    eps_offsets: Vec<u32>,
    eps_targets: Vec<StateId>,
    /// Edges leaving state q (indices into `edges`): `out_edges[out_offsets[q]..out_offsets[q + 1]]`.
    out_offsets: Vec<u32>,
    out_edges: Vec<u32>,
}

impl LexemeDfa {
    /// Builds the automaton, checking every state id.
    pub fn new(
        num_states: usize,
        start: StateId,
        accepting: &[StateId],
        edges: Vec<Edge>,
    ) -> Result<Self, DfaError> {
        Self::with_epsilons(num_states, start, accepting, edges, &[])
    }

    /// Builds the automaton with ε-edges `(from, to)` as well.
    pub fn with_epsilons(
        num_states: usize,
        start: StateId,
        accepting: &[StateId],
        edges: Vec<Edge>,
        epsilons: &[(StateId, StateId)],
    ) -> Result<Self, DfaError> {
        if num_states == 0 {
            return Err(DfaError::NoStates);
        }
        if num_states > MAX_STATES {
            return Err(DfaError::TooManyStates(num_states));
        }
        let check = |state: StateId| {
            if (state as usize) < num_states {
                Ok(())
            } else {
                Err(DfaError::StateOutOfRange { state, num_states })
            }
        };
        check(start)?;
        let mut acc = vec![false; num_states];
        for &f in accepting {
            check(f)?;
            acc[f as usize] = true;
        }
        for e in &edges {
            check(e.from)?;
            check(e.to)?;
        }
        for &(from, to) in epsilons {
            check(from)?;
            check(to)?;
        }
        let (eps_offsets, eps_targets) = group_by_key(
            num_states,
            epsilons.iter().map(|&(from, to)| (from as usize, to)),
        );
        let (out_offsets, out_edges) = group_by_key(
            num_states,
            edges
                .iter()
                .enumerate()
                .map(|(i, e)| (e.from as usize, i as u32)),
        );
        Ok(LexemeDfa {
            num_states,
            start,
            accepting: acc,
            edges,
            eps_offsets,
            eps_targets,
            out_offsets,
            out_edges,
        })
    }

    /// The states one ε-edge leads to from `q`.
    pub fn epsilon_successors(&self, q: StateId) -> &[StateId] {
        let (a, b) = (
            self.eps_offsets[q as usize],
            self.eps_offsets[q as usize + 1],
        );
        &self.eps_targets[a as usize..b as usize]
    }

    /// The edges leaving `q`, as indices into [`LexemeDfa::edges`].
    pub fn out_edges(&self, q: StateId) -> &[u32] {
        let (a, b) = (
            self.out_offsets[q as usize],
            self.out_offsets[q as usize + 1],
        );
        &self.out_edges[a as usize..b as usize]
    }

    /// Whether the automaton spells one word at most: no ε-edge, and no state with two
    /// edges out.
    pub fn is_one_path(&self) -> bool {
        !self.has_epsilons()
            && (0..self.num_states as StateId).all(|q| self.out_edges(q).len() <= 1)
    }

    /// Whether the automaton has ε-edges.
    pub fn has_epsilons(&self) -> bool {
        !self.eps_targets.is_empty()
    }

    /// Adds to `set` every state its members reach by ε-edges.
    #[cfg(test)]
    fn close(&self, set: &mut [bool]) {
        let mut stack: Vec<StateId> = (0..self.num_states as StateId)
            .filter(|&q| set[q as usize])
            .collect();
        while let Some(q) = stack.pop() {
            for &r in self.epsilon_successors(q) {
                if !set[r as usize] {
                    set[r as usize] = true;
                    stack.push(r);
                }
            }
        }
    }

    /// Number of states (ids are `0..n`).
    pub fn num_states(&self) -> usize {
        self.num_states
    }

    /// The start state.
    pub fn start(&self) -> StateId {
        self.start
    }

    /// Whether `q` accepts.
    pub fn is_accepting(&self, q: StateId) -> bool {
        self.accepting[q as usize]
    }

    /// Every edge.
    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    /// Edge `i`.
    pub fn edge(&self, i: u32) -> &Edge {
        &self.edges[i as usize]
    }

    /// Whether the automaton accepts the lexeme sequence (by subset simulation, so it is
    /// exact for nondeterministic automata too); for the tests' oracles.
    #[cfg(test)]
    pub fn accepts(&self, word: &[TerminalId]) -> bool {
        let mut current = vec![false; self.num_states];
        current[self.start as usize] = true;
        self.close(&mut current);
        for &t in word {
            let mut next = vec![false; self.num_states];
            for e in self.edges.iter().filter(|e| e.terminal == t) {
                if current[e.from as usize] {
                    next[e.to as usize] = true;
                }
            }
            self.close(&mut next);
            current = next;
        }
        (0..self.num_states).any(|q| current[q] && self.accepting[q])
    }
}

/// Values grouped by key in `0..n`, in order: `values[offsets[k]..offsets[k + 1]]` are key k's.
fn group_by_key(
    n: usize,
    pairs: impl Iterator<Item = (usize, u32)> + Clone,
) -> (Vec<u32>, Vec<u32>) {
    let mut offsets = vec![0u32; n + 1];
    for (k, _) in pairs.clone() {
        offsets[k + 1] += 1;
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    let mut fill = offsets.clone();
    let mut values = vec![0u32; offsets[n] as usize];
    for (k, v) in pairs {
        values[fill[k] as usize] = v;
        fill[k] += 1;
    }
    (offsets, values)
}
