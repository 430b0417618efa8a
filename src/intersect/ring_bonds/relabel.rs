//! Labelling a completion's witness: the product of a completion counts the loose group's
//! open labels without naming them, so the word it finds has lexemes of the group whose
//! labels must be chosen, here, so that they pair up as the constraint says.

use hashbrown::HashMap;

use super::branches::{FIRST_ATOM, NO_ATOM, PAST};
use super::labels::{
    after_atom, after_break, CLOSED, MAX_TRACKED, OPEN_BEFORE, OPEN_BONDED, OPEN_HERE,
};
use super::RingProduct;
use crate::grammar::TerminalId;

impl RingProduct {
    /// Gives each loose label lexeme of a word of the product (`edges`, its edges, and
    /// `lexemes`, their terminals) a label of its group that the original automaton has
    /// between the same states, so that the labels pair up as the constraint says (each
    /// closes on a later atom not bonded to its opener, branches followed without a limit on
    /// their depth); `false` if no labelling is found within [`RELABEL_BUDGET`] choices.
    ///
    /// The product's counts say which lexemes open a label and which close one (both are
    /// tried where the group was past its count); which label each one is, is searched depth
    /// first, trying one label of each kind (labels the same edges allow are alike).
    pub fn relabel(&self, edges: &[u32], lexemes: &mut [TerminalId]) -> bool {
        let group_bits: u128 = self.loose.iter().fold(0, |b, t| b | 1 << self.label_of[t]);
        let mut steps: Vec<Step> = Vec::new();
        let mut ops: Vec<(usize, u128)> = Vec::new();
        for (i, &t) in lexemes.iter().enumerate() {
            if let Some(step) = self.structural_step(t) {
                steps.push(step);
            } else if self.loose.contains(&t) {
                let e = self.dfa.edge(edges[i]);
                let (from, to) = (self.origin[e.from as usize], self.origin[e.to as usize]);
                let mut allowed = self.labels_between.get(&(from, to)).copied().unwrap_or(0);
                let (a, b) = (
                    self.loose_states[e.from as usize],
                    self.loose_states[e.to as usize],
                );
                let x = self.label_of[&t];
                let kind = if a.0 != b.0 || a.0.iter().any(|s| s.0 as usize == x) {
                    // A slot's label: its text is the lexeme's.
                    allowed &= 1 << x;
                    OpKind::Either
                } else if a.1.is_parity() || b.1.is_parity() {
                    OpKind::Either
                } else if b.1.here > a.1.here {
                    OpKind::Open
                } else {
                    OpKind::Close
                };
                steps.push(Step::Label(ops.len(), kind));
                ops.push((i, allowed & group_bits));
            }
        }
        // Labels allowed on the same lexemes are alike: one of each kind is tried.
        let mut kinds: HashMap<Vec<bool>, usize> = HashMap::new();
        let mut kind_of = [usize::MAX; MAX_TRACKED];
        for &t in &self.loose {
            let l = self.label_of[&t];
            let column: Vec<bool> = ops.iter().map(|&(_, a)| a >> l & 1 == 1).collect();
            let next = kinds.len();
            kind_of[l] = *kinds.entry(column).or_insert(next);
        }
        if ops.len() > RELABEL_BUDGET {
            return false;
        }
        let mut search = LabelSearch {
            steps: &steps,
            ops: &ops,
            kind_of: &kind_of,
            chosen: vec![0; ops.len()],
            budget: RELABEL_BUDGET,
        };
        if !search.assign(0, SearchState::default()) {
            return false;
        }
        for (&(i, _), &l) in ops.iter().zip(&search.chosen) {
            lexemes[i] = self.labels[l];
        }
        true
    }
}

impl RingProduct {
    /// Whether the ring labels of `lexemes`, a word's terminals, pair up as the constraint
    /// says, every label and branch followed: the check of a word a product's witness spells,
    /// where the product may have let a ring close across branches it did not follow.
    pub fn pairs_up(&self, lexemes: &[TerminalId]) -> bool {
        let mut state = SearchState::default();
        for &t in lexemes {
            if let Some(step) = self.structural_step(t) {
                state.step(step);
            } else if let Some(&l) = self.label_of.get(&t) {
                match state.now[l] {
                    CLOSED => state.open(l),
                    OPEN_BEFORE => state.close(l),
                    _ => return false,
                }
            }
        }
        state.now.iter().all(|&s| s == CLOSED)
    }

    /// What terminal `t` does to the labels' states if it is an atom, a break or a branch's
    /// start or end (`None`: a label, or a terminal that does nothing to them).
    fn structural_step(&self, t: TerminalId) -> Option<Step> {
        if self.atoms.contains(&t) {
            Some(Step::Atom)
        } else if self.breaks.contains(&t) {
            Some(Step::Break)
        } else if self.branches.is_some_and(|(open, _)| open == t) {
            Some(Step::BranchOpen)
        } else if self.branches.is_some_and(|(_, close)| close == t) {
            Some(Step::BranchClose)
        } else {
            None
        }
    }
}

/// The most choices [`RingProduct::relabel`] makes before it gives up.
const RELABEL_BUDGET: usize = 20_000;

/// What a loose lexeme of a word does to its group, by the product's counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OpKind {
    Open,
    Close,
    /// The group was past its count: either.
    Either,
}

/// A lexeme of a word that matters to the loose group's labels.
#[derive(Clone, Copy, Debug)]
enum Step {
    Atom,
    Break,
    BranchOpen,
    BranchClose,
    /// The `n`th loose label lexeme.
    Label(usize, OpKind),
}

/// The depth-first search of [`RingProduct::relabel`].
struct LabelSearch<'a> {
    steps: &'a [Step],
    /// Each loose lexeme's position in the word and the labels allowed there.
    ops: &'a [(usize, u128)],
    kind_of: &'a [usize; MAX_TRACKED],
    /// The label (index into the constraint's labels) given to each loose lexeme.
    chosen: Vec<usize>,
    budget: usize,
}

/// The loose labels' states in [`LabelSearch`], as a product's [`super::labels::Labels`]
/// and [`super::branches`] keep them, one label at a time and with every branch followed.
#[derive(Clone)]
struct SearchState {
    /// Each label's state.
    now: [u8; MAX_TRACKED],
    /// Each open branch, innermost last: the labels open near its anchor (`OPEN_HERE` or
    /// `OPEN_BONDED`, every other label `CLOSED`), and where its current atom stands.
    branches: Vec<([u8; MAX_TRACKED], u8)>,
}

impl Default for SearchState {
    /// Every label closed, no branch open.
    fn default() -> SearchState {
        SearchState {
            now: [CLOSED; MAX_TRACKED],
            branches: Vec::new(),
        }
    }
}

impl SearchState {
    fn step(&mut self, step: Step) {
        match step {
            Step::Atom => {
                self.now.iter_mut().for_each(|s| *s = after_atom(*s));
                if let Some(top) = self.branches.last_mut() {
                    top.1 = if top.1 == NO_ATOM { FIRST_ATOM } else { PAST };
                }
            }
            Step::Break => {
                self.now.iter_mut().for_each(|s| *s = after_break(*s));
                if let Some(top) = self.branches.last_mut() {
                    top.1 = PAST;
                }
            }
            Step::BranchOpen => {
                let near = self.now.map(|s| if s & 1 == 1 { s } else { CLOSED });
                self.branches.push((near, NO_ATOM));
            }
            Step::BranchClose => {
                let near = self.branches.pop().map(|b| b.0);
                for (l, s) in self.now.iter_mut().enumerate() {
                    *s = match near {
                        Some(near) if near[l] != CLOSED => near[l],
                        _ => after_break(*s),
                    };
                }
            }
            Step::Label(..) => {}
        }
    }

    /// With label `l` opened on the current atom.
    fn open(&mut self, l: usize) {
        self.now[l] = OPEN_HERE;
        if let Some(top) = self.branches.last_mut() {
            if top.1 == FIRST_ATOM {
                top.0[l] = OPEN_BONDED;
            }
        }
    }

    /// With label `l` closed.
    fn close(&mut self, l: usize) {
        self.now[l] = CLOSED;
        self.branches.iter_mut().for_each(|b| b.0[l] = CLOSED);
    }
}

impl LabelSearch<'_> {
    /// Whether the steps from `at` on can be labelled from label states `states`.
    fn assign(&mut self, mut at: usize, mut states: SearchState) -> bool {
        loop {
            let Some(&step) = self.steps.get(at) else {
                return states.now.iter().all(|&s| s == CLOSED);
            };
            at += 1;
            let Step::Label(n, kind) = step else {
                states.step(step);
                continue;
            };
            let allowed = self.ops[n].1;
            let mut tried_kinds: Vec<usize> = Vec::new();
            for l in 0..MAX_TRACKED {
                if allowed >> l & 1 == 0 {
                    continue;
                }
                let opens = match states.now[l] {
                    OPEN_BEFORE if kind != OpKind::Open => false,
                    CLOSED if kind != OpKind::Close => {
                        // A closed label is alike to others of its kind.
                        if tried_kinds.contains(&self.kind_of[l]) {
                            continue;
                        }
                        tried_kinds.push(self.kind_of[l]);
                        true
                    }
                    _ => continue,
                };
                if self.budget == 0 {
                    return false;
                }
                self.budget -= 1;
                let mut after = states.clone();
                if opens {
                    after.open(l);
                } else {
                    after.close(l);
                }
                self.chosen[n] = l;
                if self.assign(at, after) {
                    return true;
                }
            }
            return false;
        }
    }
}
