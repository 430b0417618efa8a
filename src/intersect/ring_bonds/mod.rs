//! A lexeme automaton intersected with a grammar's ring-bond constraint
//! ([`crate::grammar::RingBonds`]), so that the emptiness search, which knows only the
//! grammar, answers for the constrained language.
//!
//! The product pairs each automaton state with the state of the labels ([`labels`]): for each
//! tracked label, whether it is closed, open on the last atom (closing now would ring an atom
//! to itself, `C11`), open on an atom bonded to it (closing now would double their bond,
//! `C1C1`), or open from further back; with the stack of open branches ([`branches`]),
//! which says what a branch's end restores (`C1(C)C1`); and with the groups of tracked labels
//! opened on one atom ([`twins`]), so that two of them do not close on one atom (`C12CC12`).
//! What the states cannot tell (a ring doubled through a branch's anchor, `C2(CC21)1`) a word
//! is checked for bond by bond ([`RingProduct::pairs_up`]). Only the pairs reachable from the
//! start are built, so a text without holes gives one pair per state, and a canvas's holes
//! multiply states only by the label states and stacks they can reach.
//!
//! Inside a hole every label can be written, and 100 labels would make 4¹⁰⁰ label states. So
//! only the labels the canvas's chunks mention are tracked one by one; the others form one
//! *loose group*, alike to each other as far as the chunks go. A completion's products count
//! the group's open labels by state (on the last atom, on the atom bonded to it, further back);
//! checks and masks keep only the parity of its lexemes (each label occurs an even number of
//! times: necessary, not sufficient, `C12` alone is even; see [`MAX_COUNTED_OPEN`] for why):
//! they may say *completable* where no labelling pairs the rings, never
//! the reverse. Text without holes mentions every label it holds: there the check is exact, and
//! so is the check of a canvas for the labels of its placed tokens; a mask judges a token that
//! writes an unmentioned label by its parity (see DESIGN.md, *Ring bonds*).
//!
//! A completion must label its witness ([`RingProduct::relabel`]), so it searches a *closing*
//! product first, then a *strict* one (at most one loose label open, counted), then the parity
//! one; in the first two, a label a chunk forces (`%` ending a hole, then `51`) is told apart
//! in a *slot*, as a tracked label is, since no other label of the group may stand there.
//!
//! Labels are told apart by text rather than by the automaton's structure on purpose: a token
//! hole's automaton tells the digits apart (the lexer's state after `1` is not its state after
//! `2`), so every label would look mentioned.

mod branches;
mod interner;
mod labels;
mod relabel;
mod twins;

use hashbrown::HashMap;

pub(crate) use branches::MAX_HOLEY_DEPTH;
use branches::{BranchStacks, Move};
use labels::{Labels, LooseCount, Who, CLOSED, MAX_SLOTS, OPEN_BEFORE, OPEN_HERE};
use twins::TwinGroups;

use super::dfa::{Edge, LexemeDfa, StateId};
use crate::grammar::{RingBonds, TerminalId};

/// The most stacks of open branches (the empty one aside) a product of a text with holes
/// pairs one state of its automaton with (see [`RingProduct::new`] for what it does past
/// them). A hole can nest and interleave branches in many ways, each a stack, and every
/// stack multiplies the states the search visits (DESIGN.md, *Ring bonds*, has what one and
/// two cost). A text's own branches are followed as long as the holes before them leave
/// their states one stack.
const MAX_STACKS_PER_STATE: usize = 1;

/// As [`MAX_STACKS_PER_STATE`], in a completion's product, which refuses a lexeme past it
/// rather than forget a branch: one stack a state left most branches a hole must write
/// untaken (a hole inside a branch reaches its states with the branch before and after its
/// first atom).
const COMPLETION_STACKS_PER_STATE: usize = 8;

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
    /// As `Loose`, without twins ([`twins`]): a completion's last resort, whose word is read
    /// bond by bond before it is written ([`RingProduct::pairs_up`]). Twins grew such a
    /// product by a quarter and put its witness search past the budget on a canvas of the
    /// shared workload whose loose search had found one (`w0254`: seven holes, two labels).
    LooseUntwinned,
    /// Only words with at most one unmentioned label open at a time, each of which
    /// [`RingProduct::relabel`] labels.
    Strict,
    /// As `Strict`, and a lexeme a hole writes (an edge that costs) may close a label but not
    /// open one, nor write an unmentioned one: the few states a completion that only closes
    /// rings needs (most do), where `Strict` multiplies a canvas of several holes and labels
    /// by every combination of open labels.
    Closing,
}

impl ProductMode {
    fn is_loose(self) -> bool {
        matches!(self, ProductMode::Loose | ProductMode::LooseUntwinned)
    }
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
    /// The loose group's slots and count in each product state.
    loose_states: Vec<([(u8, u8); MAX_SLOTS], LooseCount)>,
    /// The constraint's labels.
    labels: Vec<TerminalId>,
    /// The labels (bits by index into the constraint's labels) on the original's edges
    /// between two states.
    labels_between: HashMap<(StateId, StateId), u128>,
    label_of: HashMap<TerminalId, usize>,
    atoms: Vec<TerminalId>,
    branches: Option<(TerminalId, TerminalId)>,
    breaks: Vec<TerminalId>,
}

impl RingProduct {
    /// `dfa` intersected with `rb`, the labels `mentioned` (bits by index into its labels)
    /// tracked one by one, accepting as `mode` says, with at most `max_states` states and
    /// `max_depth` open branches followed at once (see [`branches`]); `None` when `dfa` has no
    /// label edge (the product would be `dfa` itself).
    pub fn new(
        dfa: &LexemeDfa,
        rb: &RingBonds,
        mentioned: u128,
        max_states: usize,
        max_depth: usize,
        mode: ProductMode,
    ) -> Result<Option<RingProduct>, ProductTooLarge> {
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
        // A lexeme between two states where the automaton writes one label of the loose
        // group only: its text is known (a chunk forces it: `%` in a hole, then `51`). Told
        // apart in completions, which must label their words.
        let loose_bits: u128 = rb
            .labels()
            .iter()
            .enumerate()
            .filter(|&(l, _)| mentioned >> l & 1 == 0)
            .fold(0, |b, (l, _)| b | 1 << l);
        // (Only where the holes are text: a token hole's automaton tells every digit apart,
        // so every label there would look forced.)
        let forced = |q: StateId, r: StateId| {
            !mode.is_loose()
                && labels_between
                    .get(&(q, r))
                    .is_some_and(|&b| (b & loose_bits).count_ones() == 1)
        };
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

        // Branches matter to tracked labels and slots, and to the loose group where it is
        // counted; a parity-only group with nothing tracked is blind to them.
        let follow = rb.branches().is_some() && (!mode.is_loose() || tracked > 0);
        let mut stacks = BranchStacks::new(follow);
        let max_stacks_per_state = match mode {
            _ if max_depth == usize::MAX => usize::MAX,
            ProductMode::Loose | ProductMode::LooseUntwinned => MAX_STACKS_PER_STATE,
            ProductMode::Strict | ProductMode::Closing => COMPLETION_STACKS_PER_STATE,
        };
        // The stacks each state of `dfa` has been paired with (the empty one aside).
        let mut stacks_at: HashMap<StateId, Vec<u32>> = HashMap::new();
        let (branch_open, branch_close) = match rb.branches() {
            Some((o, c)) => (Some(o), Some(c)),
            None => (None, None),
        };

        // Twins: tracked labels opened on one atom ([`twins`]).
        let mut twins = TwinGroups::new(mode != ProductMode::LooseUntwinned);
        type Key = (StateId, Labels, u32, u32);
        let mut ids: HashMap<Key, StateId> = HashMap::new();
        let mut states: Vec<Key> = Vec::new();
        let mut intern = |key: Key, states: &mut Vec<Key>| {
            *ids.entry(key).or_insert_with(|| {
                states.push(key);
                (states.len() - 1) as StateId
            })
        };
        // A state of `dfa` pairs with a few stacks at most, of `max_depth` branches at most.
        // Past either, a loose product (checks, masks) drops a new stack's bottom branches
        // until it fits (their ends then read as breaks: it may accept a ring closed across
        // them, never refuse one); a completion's product does not take the lexeme, so that
        // every word it accepts pairs its rings.
        let over_approximate = mode.is_loose();
        let mut admit = |q: StateId, mut stack: u32, stacks: &mut BranchStacks| -> Option<u32> {
            let seen = stacks_at.entry(q).or_default();
            loop {
                if stack == 0 || seen.contains(&stack) {
                    return Some(stack);
                }
                if stacks.depth(stack) <= max_depth && seen.len() < max_stacks_per_state {
                    seen.push(stack);
                    return Some(stack);
                }
                if !over_approximate {
                    return None;
                }
                stack = stacks.without_bottom(stack);
            }
        };
        let mut first = Labels::default();
        if mode.is_loose() {
            // Not counted: the group's parity from the start.
            first.loose = LooseCount::EVEN;
        }
        let start = intern((dfa.start(), first, 0, 0), &mut states);
        let mut edges: Vec<Edge> = Vec::new();
        let mut epsilons = Vec::new();
        let mut accepting = Vec::new();
        // The loose group's edges between the same two states are one edge of the product, the
        // cheapest (a completion writes `1` rather than `%10`).
        let mut loose_edges: Vec<Edge> = Vec::new();
        // Where one edge of the original leads: the labels after it, and what it does.
        let mut moves: Vec<(Labels, Move)> = Vec::new();
        let mut next = 0usize;
        while next < states.len() {
            if states.len() > max_states {
                return Err(ProductTooLarge);
            }
            let from = next as StateId;
            let (q, labels, stack, tw) = states[next];
            next += 1;
            if dfa.is_accepting(q) && labels.all_closed() {
                accepting.push(from);
            }
            for &r in dfa.epsilon_successors(q) {
                let Some(stack) = admit(r, stack, &mut stacks) else {
                    continue;
                };
                let to = intern((r, labels, stack, tw), &mut states);
                epsilons.push(((from, to), (q, r)));
            }
            loose_edges.clear();
            for &i in dfa.out_edges(q) {
                let e = *dfa.edge(i);
                moves.clear();
                match role.get(&e.terminal) {
                    Some(&LabelRole::Tracked(k)) => match labels.get(k) {
                        CLOSED if closing && e.cost > 0 => continue,
                        CLOSED => moves.push((
                            labels.with(Who::Tracked(k), OPEN_HERE),
                            Move::Opened(Who::Tracked(k)),
                        )),
                        OPEN_BEFORE => moves.push((
                            labels.with(Who::Tracked(k), CLOSED),
                            Move::Closed(Who::Tracked(k)),
                        )),
                        _ => continue,
                    },
                    Some(LabelRole::Loose) => {
                        let x = label_of[&e.terminal] as u8;
                        let in_hole = closing && e.cost > 0;
                        if let Some(v) = labels.slot(x) {
                            // Its text is known: as a tracked label's.
                            let (next, m) = match v {
                                CLOSED if !in_hole => (OPEN_HERE, Move::Opened(Who::Slot(x))),
                                OPEN_BEFORE => (CLOSED, Move::Closed(Who::Slot(x))),
                                _ => continue,
                            };
                            match labels.with_slot(x, next) {
                                Some(after) => moves.push((after, m)),
                                None => continue,
                            }
                        } else if in_hole {
                            continue;
                        } else if forced(q, e.to) {
                            let [opened, closed] = labels.first_met(x, loose.len());
                            if let Some(after) = opened {
                                let who = match after.slot(x) {
                                    Some(_) => Who::Slot(x),
                                    None => Who::Loose,
                                };
                                moves.push((after, Move::Opened(who)));
                            }
                            if let Some(after) = closed {
                                moves.push((after, Move::Closed(Who::Loose)));
                            }
                        } else {
                            match loose_edges.iter_mut().find(|f| f.to == e.to) {
                                Some(f) if f.cost <= e.cost => {}
                                Some(f) => *f = e,
                                None => loose_edges.push(e),
                            }
                            continue;
                        }
                    }
                    None if is_atom(e.terminal) => moves.push((labels.after_atom(), Move::Atom)),
                    None if is_break(e.terminal) => moves.push((labels.after_break(), Move::Break)),
                    None if Some(e.terminal) == branch_open => moves.push((labels, Move::Open)),
                    None if Some(e.terminal) == branch_close => moves.push((labels, Move::Close)),
                    None => moves.push((labels, Move::Other)),
                };
                for &(after, m) in &moves {
                    let (after, tw) = twins.after(tw, &labels, after, m);
                    let (after, stack) = stacks.after(stack, after, m);
                    let Some(stack) = admit(e.to, stack, &mut stacks) else {
                        continue;
                    };
                    let to = intern((e.to, after, stack, tw), &mut states);
                    edges.push(Edge { from, to, ..e });
                }
            }
            for &e in &loose_edges {
                let [opened, closed] = labels.loose_successors(loose.len());
                // A parity-only group's lexeme is neither, as far as branches go.
                let counted = !labels.loose.is_parity();
                let opened = opened.map(|l| (l, Move::Opened(Who::Loose)));
                let closed = closed.map(|l| (l, Move::Closed(Who::Loose)));
                for (after, m) in [opened, closed].into_iter().flatten() {
                    let m = if counted { m } else { Move::Other };
                    let (after, stack) = stacks.after(stack, after, m);
                    let Some(stack) = admit(e.to, stack, &mut stacks) else {
                        continue;
                    };
                    let to = intern((e.to, after, stack, tw), &mut states);
                    edges.push(Edge { from, to, ..e });
                }
            }
        }
        let eps: Vec<(StateId, StateId)> = epsilons.iter().map(|&(p, _)| p).collect();
        let origin = states.iter().map(|&(q, ..)| q).collect();
        let loose_states = states
            .iter()
            .map(|&(_, l, ..)| (l.slots, l.loose))
            .collect();
        let dfa = LexemeDfa::with_epsilons(states.len(), start, &accepting, edges, &eps)
            .map_err(|_| ProductTooLarge)?;
        Ok(Some(RingProduct {
            dfa,
            epsilons,
            loose,
            origin,
            loose_states,
            labels: rb.labels().to_vec(),
            labels_between,
            label_of,
            atoms: rb.atoms().to_vec(),
            branches: rb.branches(),
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
}
