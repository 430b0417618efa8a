//! A lexeme automaton intersected with a grammar's ring-bond constraint
//! ([`crate::grammar::RingBonds`]), so that the emptiness search, which knows only the
//! grammar, answers for the constrained language.
//!
//! The product pairs each automaton state with the state of the labels: for each tracked
//! label, whether it is closed, open on the last atom (closing now would ring
//! an atom to itself, `C11`), open on the atom before it with no break between (closing now
//! would double their bond, `C1C1`), or open from further back. Only the pairs
//! reachable from the start are built, so a text without holes gives one pair per state, and a
//! canvas's holes multiply states only by the label states they can reach.
//!
//! Inside a hole every label can be written, and 100 labels would make 4¹⁰⁰ label states. So
//! only the labels the canvas's chunks mention are tracked one by one; the others form one
//! *loose group*, of which the product keeps only the parity of its label lexemes (each label
//! occurs an even number of times, so their total is even). That is necessary, not
//! sufficient (`C12` alone has two), so where a completion needs a ring whose label no chunk
//! mentions the product may accept a word no labelling makes valid: the check can say
//! *completable* where it is not, never the reverse. Text without holes mentions every label it
//! holds: there the check is exact, and so is the check of a canvas for the labels of its
//! placed tokens; a mask judges a token that writes an unmentioned label by its parity (see
//! DESIGN.md, *Ring bonds*). A completion searches a *strict* product first, where the loose
//! group holds at most one open label at a time and every word can be labelled
//! ([`RingProduct::relabel`]).
//!
//! Labels are told apart by text rather than by the automaton's structure on purpose: a token
//! hole's automaton tells the digits apart (the lexer's state after `1` is not its state after
//! `2`), so every label would look mentioned.

use hashbrown::HashMap;

use super::dfa::{Edge, LexemeDfa, StateId};
use crate::grammar::{RingBonds, TerminalId};

/// A label's state in the product: closed; open on the last atom; open further back (it may
/// close); open on the atom before the last, which is bonded to it. Two bits: the low one says
/// the label may not close now.
const CLOSED: u8 = 0;
const OPEN_HERE: u8 = 1;
const OPEN_BEFORE: u8 = 2;
const OPEN_BONDED: u8 = 3;
const LOW_BITS: u64 = 0x5555_5555_5555_5555;

/// The most labels tracked (two bits each in a [`Labels`]).
const MAX_TRACKED: usize = 128;

/// The loose group's state where only the parity of its lexemes is kept: odd (even is 0).
const LOOSE_ODD: u8 = 4;

/// The states of the tracked labels (two bits each) and of the loose group (in a strict
/// product one open label's state as a tracked label's; else [`LOOSE_ODD`] or 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
struct Labels {
    tracked: [u64; MAX_TRACKED * 2 / 64],
    loose: u8,
}

impl Labels {
    fn get(&self, i: usize) -> u8 {
        ((self.tracked[i / 32] >> ((i % 32) * 2)) & 3) as u8
    }

    fn set(&mut self, i: usize, v: u8) {
        let w = &mut self.tracked[i / 32];
        *w = (*w & !(3 << ((i % 32) * 2))) | ((v as u64) << ((i % 32) * 2));
    }

    /// After an atom: a label open on the last atom is open on the one bonded to it
    /// (`OPEN_HERE` 01 → `OPEN_BONDED` 11), and one open on that atom is now further back
    /// (11 → `OPEN_BEFORE` 10); the loose group's one open label moves alike.
    fn after_atom(&self) -> Labels {
        let mut out = *self;
        for w in &mut out.tracked {
            let (low, high) = (*w & LOW_BITS, (*w >> 1) & LOW_BITS);
            let (here, bonded) = (low & !high, low & high);
            *w = (*w | (here << 1)) & !bonded;
        }
        out.loose = match out.loose {
            OPEN_HERE => OPEN_BONDED,
            OPEN_BONDED => OPEN_BEFORE,
            v => v,
        };
        out
    }

    /// After a break (the next atom bonds elsewhere): every open label may close on it
    /// (01 and 11 → 10).
    fn after_break(&self) -> Labels {
        let mut out = *self;
        for w in &mut out.tracked {
            let low = *w & LOW_BITS;
            *w = (*w & !low) | (low << 1);
        }
        if matches!(out.loose, OPEN_HERE | OPEN_BONDED) {
            out.loose = OPEN_BEFORE;
        }
        out
    }

    /// What a lexeme of the loose group may leave. In a `strict` product the group holds at
    /// most one open label, in the tracked labels' states, so every word it accepts can be
    /// labelled. Otherwise only the parity of the group's lexemes is kept: every word that
    /// some labelling makes valid is accepted (and more). (A `Closing` product writes no loose
    /// label in a hole: see `RingProduct::new`.)
    fn loose_successor(&self, strict: bool) -> Option<Labels> {
        let loose = match (self.loose, strict) {
            (CLOSED, true) => OPEN_HERE,
            (OPEN_BEFORE, true) => CLOSED,
            (_, true) => return None,
            (LOOSE_ODD, false) => CLOSED,
            (_, false) => LOOSE_ODD,
        };
        Some(Labels { loose, ..*self })
    }

    fn all_closed(&self) -> bool {
        self.loose == 0 && self.tracked.iter().all(|&w| w == 0)
    }
}

/// What a label terminal means on one automaton.
#[derive(Clone, Copy, Debug)]
enum LabelRole {
    /// A label told apart from the others: index into [`Labels::tracked`].
    Tracked(usize),
    /// A label of the loose group.
    Loose,
}

/// What the product accepts (see [`RingProduct::new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProductMode {
    /// Every word some labelling makes valid, and maybe more: labels no chunk mentions are
    /// kept by their parity only. What checks and masks search.
    Loose,
    /// Only words with at most one unmentioned label open at a time, each of which
    /// [`RingProduct::relabel`] labels.
    Strict,
    /// As `Strict`, and a lexeme a hole writes (an edge that costs) may close a label but not
    /// open one, nor write an unmentioned one: the few states a completion that only closes
    /// rings needs (most do), where `Strict` multiplies a canvas of several holes and labels
    /// by every combination of open labels.
    Closing,
}

/// The automaton built would have more states than allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProductTooLarge;

/// A lexeme automaton intersected with a ring-bond constraint.
pub struct RingProduct {
    /// The product automaton.
    pub dfa: LexemeDfa,
    /// The ε-edges of the product, each with the ε-edge of the original it copies.
    epsilons: Vec<((StateId, StateId), (StateId, StateId))>,
    /// The loose group's labels.
    loose: Vec<TerminalId>,
    /// The original state of each product state.
    origin: Vec<StateId>,
    /// The labels (bits by index into the constraint's labels) on the original's edges
    /// between two states.
    labels_between: HashMap<(StateId, StateId), u128>,
    label_of: HashMap<TerminalId, usize>,
    atoms: Vec<TerminalId>,
    breaks: Vec<TerminalId>,
}

impl RingProduct {
    /// `dfa` intersected with `rb`, the labels `mentioned` (bits by index into its labels)
    /// tracked one by one, accepting as `mode` says, with at most `max_states` states; `None`
    /// when `dfa` has no label edge (the product would be `dfa` itself).
    pub fn new(
        dfa: &LexemeDfa,
        rb: &RingBonds,
        mentioned: u128,
        max_states: usize,
        mode: ProductMode,
    ) -> Result<Option<RingProduct>, ProductTooLarge> {
        let strict = mode != ProductMode::Loose;
        let closing = mode == ProductMode::Closing;
        let label_of: HashMap<TerminalId, usize> = rb
            .labels()
            .iter()
            .enumerate()
            .map(|(i, &t)| (t, i))
            .collect();
        let is_atom = |t: TerminalId| rb.atoms().contains(&t);
        let is_break = |t: TerminalId| rb.breaks().contains(&t);
        if !dfa
            .edges()
            .iter()
            .any(|e| label_of.contains_key(&e.terminal))
        {
            // No label can be written: nothing to pair.
            return Ok(None);
        }

        let mut labels_between: HashMap<(StateId, StateId), u128> = HashMap::new();
        for e in dfa.edges() {
            if let Some(&l) = label_of.get(&e.terminal) {
                *labels_between.entry((e.from, e.to)).or_default() |= 1 << l;
            }
        }
        // The mentioned labels are tracked; the others form the loose group.
        let mut role: HashMap<TerminalId, LabelRole> = HashMap::new();
        let mut loose: Vec<TerminalId> = Vec::new();
        let mut tracked = 0usize;
        for (l, &t) in rb.labels().iter().enumerate() {
            if mentioned >> l & 1 == 1 {
                role.insert(t, LabelRole::Tracked(tracked));
                tracked += 1;
            } else {
                role.insert(t, LabelRole::Loose);
                loose.push(t);
            }
        }

        let mut ids: HashMap<(StateId, Labels), StateId> = HashMap::new();
        let mut states: Vec<(StateId, Labels)> = Vec::new();
        let mut intern = |q: StateId, l: Labels, states: &mut Vec<(StateId, Labels)>| {
            *ids.entry((q, l)).or_insert_with(|| {
                states.push((q, l));
                (states.len() - 1) as StateId
            })
        };
        let start = intern(dfa.start(), Labels::default(), &mut states);
        let mut edges: Vec<Edge> = Vec::new();
        let mut epsilons = Vec::new();
        let mut accepting = Vec::new();
        // The loose group's edges between the same two states are one edge of the product, the
        // cheapest (a completion writes `1` rather than `%10`).
        let mut loose_edges: Vec<Edge> = Vec::new();
        let mut next = 0usize;
        while next < states.len() {
            if states.len() > max_states {
                return Err(ProductTooLarge);
            }
            let from = next as StateId;
            let (q, labels) = states[next];
            next += 1;
            if dfa.is_accepting(q) && labels.all_closed() {
                accepting.push(from);
            }
            for &r in dfa.epsilon_successors(q) {
                let to = intern(r, labels, &mut states);
                epsilons.push(((from, to), (q, r)));
            }
            loose_edges.clear();
            for &i in dfa.out_edges(q) {
                let e = *dfa.edge(i);
                let after = match role.get(&e.terminal) {
                    Some(&LabelRole::Tracked(k)) => match labels.get(k) {
                        CLOSED if closing && e.cost > 0 => continue,
                        CLOSED => {
                            let mut l = labels;
                            l.set(k, OPEN_HERE);
                            l
                        }
                        OPEN_BEFORE => {
                            let mut l = labels;
                            l.set(k, CLOSED);
                            l
                        }
                        _ => continue,
                    },
                    Some(LabelRole::Loose) if closing && e.cost > 0 => continue,
                    Some(LabelRole::Loose) => {
                        match loose_edges.iter_mut().find(|f| f.to == e.to) {
                            Some(f) if f.cost <= e.cost => {}
                            Some(f) => *f = e,
                            None => loose_edges.push(e),
                        }
                        continue;
                    }
                    None if is_atom(e.terminal) => labels.after_atom(),
                    None if is_break(e.terminal) => labels.after_break(),
                    None => labels,
                };
                let to = intern(e.to, after, &mut states);
                edges.push(Edge { from, to, ..e });
            }
            for &e in &loose_edges {
                if let Some(after) = labels.loose_successor(strict) {
                    let to = intern(e.to, after, &mut states);
                    edges.push(Edge { from, to, ..e });
                }
            }
        }
        let eps: Vec<(StateId, StateId)> = epsilons.iter().map(|&(p, _)| p).collect();
        let origin = states.iter().map(|&(q, _)| q).collect();
        let dfa = LexemeDfa::with_epsilons(states.len(), start, &accepting, edges, &eps)
            .map_err(|_| ProductTooLarge)?;
        Ok(Some(RingProduct {
            dfa,
            epsilons,
            loose,
            origin,
            labels_between,
            label_of,
            atoms: rb.atoms().to_vec(),
            breaks: rb.breaks().to_vec(),
        }))
    }

    /// The product's ε-edges that copy one of `wanted` (ε-edges of the original).
    pub fn epsilons_copying(&self, wanted: &[(StateId, StateId)]) -> Vec<(StateId, StateId)> {
        let wanted: hashbrown::HashSet<_> = wanted.iter().copied().collect();
        self.epsilons
            .iter()
            .filter(|(_, orig)| wanted.contains(orig))
            .map(|&(p, _)| p)
            .collect()
    }

    /// The original ε-edges that the product's ε-edges `used` copy.
    pub fn original_epsilons(
        &self,
        used: &hashbrown::HashSet<(StateId, StateId)>,
    ) -> hashbrown::HashSet<(StateId, StateId)> {
        self.epsilons
            .iter()
            .filter(|(p, _)| used.contains(p))
            .map(|&(_, orig)| orig)
            .collect()
    }

    /// Gives each loose label lexeme of a word of the product (`edges`, its edges, and
    /// `lexemes`, their terminals) a label of its group that the original automaton has
    /// between the same states, so that the labels pair up as the constraint says (each
    /// closes on a later atom, not the next one unless a break came between); `false` if this
    /// finds no such labelling (the product keeps only the group's parity).
    pub fn relabel(&self, edges: &[u32], lexemes: &mut [TerminalId]) -> bool {
        let group = &self.loose;
        // The group's lexemes on each atom, and whether a break came before the atom.
        let mut atoms: Vec<AtomOps> = vec![AtomOps::default()];
        for (i, &t) in lexemes.iter().enumerate() {
            if self.atoms.contains(&t) {
                atoms.push(AtomOps::default());
            } else if self.breaks.contains(&t) {
                // The next atom is not bonded to this one.
                atoms.push(AtomOps {
                    ops: Vec::new(),
                    broken: true,
                });
            } else if group.contains(&t) {
                atoms.last_mut().expect("one at least").ops.push(i);
            }
        }
        let Some(closes) = pairing(&atoms, group.len()) else {
            return false;
        };
        // The labels the original automaton allows at position i (in the group).
        let allowed = |i: usize| -> u128 {
            let e = self.dfa.edge(edges[i]);
            let (from, to) = (self.origin[e.from as usize], self.origin[e.to as usize]);
            self.labels_between.get(&(from, to)).copied().unwrap_or(0)
        };
        let index = |t: TerminalId| self.label_of[&t];
        // Labels that may close now; those opened on the last atom (bonded to this one
        // unless a break came between); the closed ones.
        let (mut closable, mut last): (Vec<TerminalId>, Vec<TerminalId>) = Default::default();
        let mut free: Vec<TerminalId> = group.clone();
        for (atom, &x) in atoms.iter().zip(&closes) {
            if atom.broken {
                closable.append(&mut last);
            }
            let mut opened = Vec::new();
            for (k, &i) in atom.ops.iter().enumerate() {
                let ok = allowed(i);
                let pool = if k < x { &mut closable } else { &mut free };
                let Some(at) = pool.iter().position(|&t| ok >> index(t) & 1 == 1) else {
                    return false;
                };
                let label = pool.remove(at);
                if k < x {
                    free.push(label);
                } else {
                    opened.push(label);
                }
                lexemes[i] = label;
            }
            closable.append(&mut last);
            last = opened;
        }
        true
    }
}

/// One atom's lexemes of a loose group (positions in the word), or a break.
#[derive(Default)]
struct AtomOps {
    ops: Vec<usize>,
    /// A break, not an atom: what was opened before it may close on the next atom.
    broken: bool,
}

/// How many labels each atom closes (the rest of its lexemes open labels), so that each label
/// closes on a later atom that is not the next one unless a break came between, all close in
/// the end, and at most `labels` are open at once; `None` if no choice does.
fn pairing(atoms: &[AtomOps], labels: usize) -> Option<Vec<usize>> {
    // A state is (closable, last): the open labels that may close on the next atom, and those
    // opened on the last atom. Each state reached keeps the state before it and how many the
    // atom closed.
    type State = (usize, usize);
    let mut reach: Vec<HashMap<State, (State, usize)>> = vec![HashMap::new(); atoms.len() + 1];
    reach[0].insert((0, 0), ((0, 0), 0));
    for (i, atom) in atoms.iter().enumerate() {
        let states: Vec<State> = reach[i].keys().copied().collect();
        for before in states {
            let (closable, last) = if atom.broken {
                (before.0 + before.1, 0)
            } else {
                before
            };
            let m = atom.ops.len();
            for x in 0..=closable.min(m) {
                let next = (closable - x + last, m - x);
                if next.0 + next.1 <= labels {
                    reach[i + 1].entry(next).or_insert((before, x));
                }
            }
        }
    }
    let mut state = (0, 0);
    if !reach[atoms.len()].contains_key(&state) {
        return None;
    }
    let mut closes = vec![0; atoms.len()];
    for i in (1..=atoms.len()).rev() {
        let (before, x) = reach[i][&state];
        closes[i - 1] = x;
        state = before;
    }
    Some(closes)
}
