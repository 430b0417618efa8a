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

/// One label's state after an atom (what [`Labels::after_atom`] does to every tracked label
/// at once with bit operations).
fn after_atom(v: u8) -> u8 {
    match v {
        OPEN_HERE => OPEN_BONDED,
        OPEN_BONDED => OPEN_BEFORE,
        v => v,
    }
}

/// One label's state after a break.
fn after_break(v: u8) -> u8 {
    match v {
        CLOSED => CLOSED,
        _ => OPEN_BEFORE,
    }
}

/// The most labels tracked (two bits each in a [`Labels`]).
const MAX_TRACKED: usize = 128;

/// The most loose labels a strict or closing product (a completion's) counts open at once;
/// more are refused, so that every word it accepts can be labelled. A loose product (checks
/// and masks) keeps the group's parity only ([`LooseCount::EVEN`], [`LooseCount::ODD`]):
/// counting even one open label there (3 counts and 2 parities, against 2 parities) made a
/// SMILES mask in the middle of 40 masked positions of the embedded model's vocabulary run
/// into its 2 s limit (21 ms with parity only).
const MAX_COUNTED_OPEN: u8 = 1;

/// The loose group's open labels, counted by state: the labels of the group are alike to
/// the canvas's chunks (none mentions them), so which ones are open matters less than how
/// many are open on the last atom, on the atom bonded to it, and further back (only those
/// may close); or, uncounted, only the parity of its lexemes (each label occurs an even
/// number of times): necessary, not sufficient.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
struct LooseCount {
    here: u8,
    bonded: u8,
    before: u8,
}

impl LooseCount {
    /// An even number of the group's lexemes so far, uncounted.
    const EVEN: LooseCount = LooseCount {
        here: u8::MAX,
        bonded: u8::MAX,
        before: 0,
    };
    /// An odd number, uncounted.
    const ODD: LooseCount = LooseCount {
        here: u8::MAX,
        bonded: u8::MAX,
        before: 1,
    };

    fn is_parity(&self) -> bool {
        self.here == u8::MAX
    }

    /// With `n` more lexemes (parity only).
    fn flipped(&self, n: u8) -> LooseCount {
        if (self.before + n).is_multiple_of(2) {
            LooseCount::EVEN
        } else {
            LooseCount::ODD
        }
    }

    fn open(&self) -> u8 {
        self.here + self.bonded + self.before
    }
}

/// The most labels of the loose group a product tells apart by their text at once (see
/// [`Labels::slots`]); past it they are counted with the group.
const MAX_SLOTS: usize = 4;

/// An unused slot.
const NO_SLOT: u8 = u8::MAX;

/// The states of the tracked labels (two bits each), of the loose group's labels told apart
/// for now, and the loose group's count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Labels {
    tracked: [u64; MAX_TRACKED * 2 / 64],
    /// Labels of the loose group a chunk's text forces (`%` ending a hole, then `51`), each
    /// with its state, in a completion's products; sorted by label, unused ones last.
    slots: [(u8, u8); MAX_SLOTS],
    loose: LooseCount,
}

impl Default for Labels {
    fn default() -> Labels {
        Labels {
            tracked: Default::default(),
            slots: [(NO_SLOT, CLOSED); MAX_SLOTS],
            loose: LooseCount::default(),
        }
    }
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
    /// (11 → `OPEN_BEFORE` 10); the loose group's counts move alike.
    fn after_atom(&self) -> Labels {
        let mut out = *self;
        for w in &mut out.tracked {
            let (low, high) = (*w & LOW_BITS, (*w >> 1) & LOW_BITS);
            let (here, bonded) = (low & !high, low & high);
            *w = (*w | (here << 1)) & !bonded;
        }
        out.slots.iter_mut().for_each(|s| s.1 = after_atom(s.1));
        let l = self.loose;
        if !l.is_parity() {
            out.loose = LooseCount {
                here: 0,
                bonded: l.here,
                before: l.before + l.bonded,
            };
        }
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
        out.slots.iter_mut().for_each(|s| s.1 = after_break(s.1));
        let l = self.loose;
        if !l.is_parity() {
            out.loose = LooseCount {
                here: 0,
                bonded: 0,
                before: l.open(),
            };
        }
        out
    }

    /// What a lexeme of the loose group (`group` labels in all) may leave: uncounted, the
    /// other parity (every word some labelling makes valid is accepted); counted, one more
    /// open on this atom (up to [`MAX_COUNTED_OPEN`]) or one fewer open from further back
    /// (every word accepted has a labelling, [`RingProduct::relabel`]).
    fn loose_successors(&self, group: usize) -> [Option<Labels>; 2] {
        let l = self.loose;
        let with = |loose| Some(Labels { loose, ..*self });
        if l.is_parity() {
            return [with(l.flipped(1)), None];
        }
        let opened = match l.open() {
            n if n < MAX_COUNTED_OPEN && (n as usize) < group => with(LooseCount {
                here: l.here + 1,
                ..l
            }),
            _ => None,
        };
        let closed = match l.before {
            0 => None,
            n => with(LooseCount { before: n - 1, ..l }),
        };
        [opened, closed]
    }

    /// What a lexeme of the loose group whose label `x` has no slot may leave where its text
    /// is known (in a counted product): `x` opened in a new slot (counted where none is
    /// free), or one of the counted labels closed (it was `x`).
    fn first_met(&self, x: u8, group: usize) -> [Option<Labels>; 2] {
        let opened = self
            .with_slot(x, OPEN_HERE)
            .or_else(|| self.loose_successors(group)[0]);
        let closed = self.loose_successors(group)[1];
        [opened, closed]
    }

    /// Whether the labels may all be closed: every tracked one and every slot closed, and
    /// the loose group empty (or even).
    fn all_closed(&self) -> bool {
        (self.loose == LooseCount::default() || self.loose == LooseCount::EVEN)
            && self.tracked.iter().all(|&w| w == 0)
            && self.slots.iter().all(|&(_, v)| v == CLOSED)
    }

    /// The state of label `x`'s slot, if it has one.
    fn slot(&self, x: u8) -> Option<u8> {
        self.slots.iter().find(|s| s.0 == x).map(|s| s.1)
    }

    /// With label `x`'s slot in state `v` (made if it has none, freed if closed); `None` if
    /// every slot is used.
    fn with_slot(&self, x: u8, v: u8) -> Option<Labels> {
        let mut out = *self;
        match out.slots.iter().position(|s| s.0 == x) {
            Some(i) => out.slots[i].1 = v,
            None => {
                let free = out.slots.iter().position(|s| s.0 == NO_SLOT)?;
                out.slots[free] = (x, v);
            }
        }
        if v == CLOSED {
            for s in &mut out.slots {
                if s.0 == x {
                    *s = (NO_SLOT, CLOSED);
                }
            }
        }
        out.slots.sort_unstable();
        Some(out)
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
    /// The loose group's slots and count in each product state.
    loose_states: Vec<([(u8, u8); MAX_SLOTS], LooseCount)>,
    /// The constraint's labels.
    labels: Vec<TerminalId>,
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
            mode != ProductMode::Loose
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

        let mut ids: HashMap<(StateId, Labels), StateId> = HashMap::new();
        let mut states: Vec<(StateId, Labels)> = Vec::new();
        let mut intern = |q: StateId, l: Labels, states: &mut Vec<(StateId, Labels)>| {
            *ids.entry((q, l)).or_insert_with(|| {
                states.push((q, l));
                (states.len() - 1) as StateId
            })
        };
        let mut first = Labels::default();
        if mode == ProductMode::Loose {
            // Not counted: the group's parity from the start.
            first.loose = LooseCount::EVEN;
        }
        let start = intern(dfa.start(), first, &mut states);
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
                    Some(LabelRole::Loose) => {
                        let x = label_of[&e.terminal] as u8;
                        let in_hole = closing && e.cost > 0;
                        if let Some(v) = labels.slot(x) {
                            // Its text is known: as a tracked label's.
                            let next = match v {
                                CLOSED if !in_hole => OPEN_HERE,
                                OPEN_BEFORE => CLOSED,
                                _ => continue,
                            };
                            match labels.with_slot(x, next) {
                                Some(after) => after,
                                None => continue,
                            }
                        } else if in_hole {
                            continue;
                        } else if forced(q, e.to) {
                            for after in labels.first_met(x, loose.len()).into_iter().flatten() {
                                let to = intern(e.to, after, &mut states);
                                edges.push(Edge { from, to, ..e });
                            }
                            continue;
                        } else {
                            match loose_edges.iter_mut().find(|f| f.to == e.to) {
                                Some(f) if f.cost <= e.cost => {}
                                Some(f) => *f = e,
                                None => loose_edges.push(e),
                            }
                            continue;
                        }
                    }
                    None if is_atom(e.terminal) => labels.after_atom(),
                    None if is_break(e.terminal) => labels.after_break(),
                    None => labels,
                };
                let to = intern(e.to, after, &mut states);
                edges.push(Edge { from, to, ..e });
            }
            for &e in &loose_edges {
                for after in labels.loose_successors(loose.len()).into_iter().flatten() {
                    let to = intern(e.to, after, &mut states);
                    edges.push(Edge { from, to, ..e });
                }
            }
        }
        let eps: Vec<(StateId, StateId)> = epsilons.iter().map(|&(p, _)| p).collect();
        let origin = states.iter().map(|&(q, _)| q).collect();
        let loose_states = states.iter().map(|&(_, l)| (l.slots, l.loose)).collect();
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
    /// closes on a later atom, not the next one unless a break came between); `false` if no
    /// labelling is found within [`RELABEL_BUDGET`] choices.
    ///
    /// The product's counts say which lexemes open a label and which close one (both are
    /// tried where the group was past its count); which label each one is, is searched depth
    /// first, trying one label of each kind (labels the same edges allow are alike).
    pub fn relabel(&self, edges: &[u32], lexemes: &mut [TerminalId]) -> bool {
        let group_bits: u128 = self.loose.iter().fold(0, |b, t| b | 1 << self.label_of[t]);
        let mut steps: Vec<Step> = Vec::new();
        let mut ops: Vec<(usize, u128)> = Vec::new();
        for (i, &t) in lexemes.iter().enumerate() {
            if self.atoms.contains(&t) {
                steps.push(Step::Atom);
            } else if self.breaks.contains(&t) {
                steps.push(Step::Break);
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
        if !search.assign(0, [CLOSED; MAX_TRACKED]) {
            return false;
        }
        for (&(i, _), &l) in ops.iter().zip(&search.chosen) {
            lexemes[i] = self.labels[l];
        }
        true
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

impl LabelSearch<'_> {
    /// Whether the steps from `at` on can be labelled from label states `states`.
    fn assign(&mut self, mut at: usize, mut states: [u8; MAX_TRACKED]) -> bool {
        loop {
            let Some(&step) = self.steps.get(at) else {
                return states.iter().all(|&s| s == CLOSED);
            };
            at += 1;
            let (n, kind) = match step {
                Step::Atom => {
                    states.iter_mut().for_each(|s| *s = after_atom(*s));
                    continue;
                }
                Step::Break => {
                    states.iter_mut().for_each(|s| *s = after_break(*s));
                    continue;
                }
                Step::Label(n, kind) => (n, kind),
            };
            let allowed = self.ops[n].1;
            let mut tried_kinds: Vec<usize> = Vec::new();
            for l in 0..MAX_TRACKED {
                if allowed >> l & 1 == 0 {
                    continue;
                }
                let next = match states[l] {
                    OPEN_BEFORE if kind != OpKind::Open => CLOSED,
                    CLOSED if kind != OpKind::Close => {
                        // A closed label is alike to others of its kind.
                        if tried_kinds.contains(&self.kind_of[l]) {
                            continue;
                        }
                        tried_kinds.push(self.kind_of[l]);
                        OPEN_HERE
                    }
                    _ => continue,
                };
                if self.budget == 0 {
                    return false;
                }
                self.budget -= 1;
                let mut after = states;
                after[l] = next;
                self.chosen[n] = l;
                if self.assign(at, after) {
                    return true;
                }
            }
            return false;
        }
    }
}
