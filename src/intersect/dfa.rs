//! The finite automaton over lexemes that the emptiness search intersects with the grammar.
//!
//! Its alphabet is the grammar's terminal ids. Each edge carries a cost, the price of using it
//! in a witness (for a hole DFA: how much text the lexeme adds), so the search can prefer
//! cheap witnesses. The search does not need determinism, so none is required here; the hole
//! DFA that the checker builds happens to be deterministic and minimal.

use thiserror::Error;

use crate::grammar::TerminalId;

/// A state of a [`LexemeDfa`].
pub type StateId = u32;

/// The largest number of states the search can address (item keys pack two state ids).
pub const MAX_STATES: usize = 1 << 20;

/// One transition `from --terminal--> to`, priced `cost`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Edge {
    pub from: StateId,
    pub terminal: TerminalId,
    pub to: StateId,
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
    /// Edge indices sorted by terminal, with `terminal_offsets[t]..terminal_offsets[t+1]`.
    edges_by_terminal: Vec<u32>,
    terminal_offsets: Vec<u32>,
}

impl LexemeDfa {
    /// Builds the automaton, checking every state id.
    pub fn new(
        num_states: usize,
        start: StateId,
        accepting: &[StateId],
        edges: Vec<Edge>,
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
        let num_terminals = edges
            .iter()
            .map(|e| e.terminal.index() + 1)
            .max()
            .unwrap_or(0);
        let mut terminal_offsets = vec![0u32; num_terminals + 1];
        for e in &edges {
            terminal_offsets[e.terminal.index() + 1] += 1;
        }
        for i in 0..num_terminals {
            terminal_offsets[i + 1] += terminal_offsets[i];
        }
        let mut fill = terminal_offsets.clone();
        let mut edges_by_terminal = vec![0u32; edges.len()];
        for (i, e) in edges.iter().enumerate() {
            edges_by_terminal[fill[e.terminal.index()] as usize] = i as u32;
            fill[e.terminal.index()] += 1;
        }
        Ok(LexemeDfa {
            num_states,
            start,
            accepting: acc,
            edges,
            edges_by_terminal,
            terminal_offsets,
        })
    }

    pub fn num_states(&self) -> usize {
        self.num_states
    }

    pub fn start(&self) -> StateId {
        self.start
    }

    pub fn is_accepting(&self, q: StateId) -> bool {
        self.accepting[q as usize]
    }

    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    pub fn edge(&self, i: u32) -> &Edge {
        &self.edges[i as usize]
    }

    /// Indices of the edges labelled `t`.
    pub fn edges_of_terminal(&self, t: TerminalId) -> &[u32] {
        if t.index() + 1 >= self.terminal_offsets.len() {
            return &[];
        }
        let (a, b) = (
            self.terminal_offsets[t.index()],
            self.terminal_offsets[t.index() + 1],
        );
        &self.edges_by_terminal[a as usize..b as usize]
    }

    /// Whether the automaton accepts the lexeme sequence (by subset simulation, so it is
    /// exact for nondeterministic automata too).
    pub fn accepts(&self, word: &[TerminalId]) -> bool {
        let mut current = vec![false; self.num_states];
        current[self.start as usize] = true;
        for &t in word {
            let mut next = vec![false; self.num_states];
            for &i in self.edges_of_terminal(t) {
                let e = &self.edges[i as usize];
                if current[e.from as usize] {
                    next[e.to as usize] = true;
                }
            }
            current = next;
        }
        (0..self.num_states).any(|q| current[q] && self.accepting[q])
    }
}
