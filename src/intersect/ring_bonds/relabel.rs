//! Labelling a completion's witness: the product of a completion counts the loose group's
//! open labels without naming them, so the word it finds has lexemes of the group whose
//! labels must be chosen, here, so that they pair up as the constraint says.

use hashbrown::{HashMap, HashSet};

use super::labels::MAX_TRACKED;
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
        let skeleton = self.skeleton(lexemes);
        let mut ops: Vec<(usize, u128, OpKind)> = Vec::new();
        let mut fixed: Vec<(usize, usize)> = Vec::new();
        for (i, &t) in lexemes.iter().enumerate() {
            let Some(&x) = self.label_of.get(&t) else {
                continue;
            };
            if !self.loose.contains(&t) {
                fixed.push((i, x));
                continue;
            }
            let e = self.dfa.edge(edges[i]);
            let (from, to) = (self.origin[e.from as usize], self.origin[e.to as usize]);
            let mut allowed = self.labels_between.get(&(from, to)).copied().unwrap_or(0);
            let (a, b) = (
                self.loose_states[e.from as usize],
                self.loose_states[e.to as usize],
            );
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
            ops.push((i, allowed & group_bits, kind));
        }
        // Labels allowed on the same lexemes are alike: one of each kind is tried.
        let mut kinds: HashMap<Vec<bool>, usize> = HashMap::new();
        let mut kind_of = [usize::MAX; MAX_TRACKED];
        for &t in &self.loose {
            let l = self.label_of[&t];
            let column: Vec<bool> = ops.iter().map(|&(_, a, _)| a >> l & 1 == 1).collect();
            let next = kinds.len();
            kind_of[l] = *kinds.entry(column).or_insert(next);
        }
        if ops.len() > RELABEL_BUDGET {
            return false;
        }
        let mut search = LabelSearch {
            ops: &ops,
            fixed: &fixed,
            skeleton: &skeleton,
            kind_of: &kind_of,
            chosen: vec![0; ops.len()],
            budget: RELABEL_BUDGET,
        };
        if !search.assign(0, 0, SearchState::default()) {
            return false;
        }
        for (&(i, _, _), &l) in ops.iter().zip(&search.chosen) {
            lexemes[i] = self.labels[l];
        }
        true
    }
}

impl RingProduct {
    /// Whether the ring labels of `lexemes`, a word's terminals, pair up as the constraint
    /// says, every label and branch followed: the exact check of a word a product spells,
    /// where the product may have let a ring close across branches it did not follow, or
    /// double a ring bond ([`super::twins`] keeps tracked labels only).
    pub fn pairs_up(&self, lexemes: &[TerminalId]) -> bool {
        let skeleton = self.skeleton(lexemes);
        let mut state = SearchState::default();
        for (i, &t) in lexemes.iter().enumerate() {
            let Some(&l) = self.label_of.get(&t) else {
                continue;
            };
            if !state.read(l, skeleton.atom_at[i], &skeleton) {
                return false;
            }
        }
        state.all_closed()
    }

    /// The atoms of a word and its bonds that are not ring bonds, which its labels do not
    /// change: atoms are numbered in order; an atom bonds to the current one unless a break
    /// comes between; a branch's start keeps the current atom (its anchor), and its end makes
    /// the anchor current again.
    fn skeleton(&self, lexemes: &[TerminalId]) -> Skeleton {
        let mut atom_at = Vec::with_capacity(lexemes.len());
        let mut bonds = HashSet::new();
        let (mut current, mut bonded, mut atoms) = (None, true, 0u32);
        let mut anchors: Vec<Option<u32>> = Vec::new();
        for &t in lexemes {
            if self.atoms.contains(&t) {
                if let (Some(c), true) = (current, bonded) {
                    bonds.insert((c, atoms));
                }
                current = Some(atoms);
                atoms += 1;
                bonded = true;
            } else if self.breaks.contains(&t) {
                bonded = false;
            } else if self.branches.is_some_and(|(open, _)| open == t) {
                anchors.push(current);
            } else if self.branches.is_some_and(|(_, close)| close == t) {
                current = anchors.pop().unwrap_or(current);
                bonded = true;
            }
            atom_at.push(current);
        }
        Skeleton { atom_at, bonds }
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

/// The atoms of a word and the bonds between them that are not ring bonds
/// ([`RingProduct::skeleton`]).
struct Skeleton {
    /// The current atom at each lexeme (`None` before the first): a label there stands on it.
    atom_at: Vec<Option<u32>>,
    /// Bonds by atom number, the earlier atom first.
    bonds: HashSet<(u32, u32)>,
}

/// The depth-first search of [`RingProduct::relabel`].
struct LabelSearch<'a> {
    /// Each loose lexeme's position in the word, the labels allowed there, and what the
    /// product's counts say it does.
    ops: &'a [(usize, u128, OpKind)],
    /// The word's labels that are not loose, each with its position and label.
    fixed: &'a [(usize, usize)],
    skeleton: &'a Skeleton,
    kind_of: &'a [usize; MAX_TRACKED],
    /// The label (index into the constraint's labels) given to each loose lexeme.
    chosen: Vec<usize>,
    budget: usize,
}

/// No label is open: [`SearchState::open`]'s mark.
const NOT_OPEN: u32 = u32::MAX;

/// The labels' states in a word read exactly: the atom each open label opened on, and the
/// ring bonds made so far.
#[derive(Clone)]
struct SearchState {
    open: [u32; MAX_TRACKED],
    rings: Vec<(u32, u32)>,
}

impl Default for SearchState {
    /// Every label closed, no ring bond.
    fn default() -> SearchState {
        SearchState {
            open: [NOT_OPEN; MAX_TRACKED],
            rings: Vec::new(),
        }
    }
}

impl SearchState {
    /// The ring bond open label `l` makes if it closes on `atom`, if that is a new bond: not
    /// to its own atom, not doubling a bond of the skeleton or a ring bond.
    fn ring_to(&self, l: usize, atom: u32, skeleton: &Skeleton) -> Option<(u32, u32)> {
        let from = self.open[l];
        let bond = (from.min(atom), from.max(atom));
        let doubles = skeleton.bonds.contains(&bond) || self.rings.contains(&bond);
        (from != atom && !doubles).then_some(bond)
    }

    /// Reads label `l` on `atom` (`None`: before any atom): it opens if closed, and closes if
    /// that makes a new bond; `false` if it cannot.
    fn read(&mut self, l: usize, atom: Option<u32>, skeleton: &Skeleton) -> bool {
        let Some(atom) = atom else {
            return false;
        };
        if self.open[l] == NOT_OPEN {
            self.open[l] = atom;
            return true;
        }
        let Some(bond) = self.ring_to(l, atom, skeleton) else {
            return false;
        };
        self.open[l] = NOT_OPEN;
        self.rings.push(bond);
        true
    }

    fn all_closed(&self) -> bool {
        self.open.iter().all(|&a| a == NOT_OPEN)
    }
}

impl LabelSearch<'_> {
    /// Whether the word's labels from the `n`th loose one and the `f`th fixed one on can be
    /// labelled from `state`.
    fn assign(&mut self, n: usize, mut f: usize, mut state: SearchState) -> bool {
        loop {
            // The next label lexeme in the word: a fixed one is read as it is.
            let next_op = self.ops.get(n).map_or(usize::MAX, |op| op.0);
            match self.fixed.get(f) {
                Some(&(i, l)) if i < next_op => {
                    f += 1;
                    if !state.read(l, self.skeleton.atom_at[i], self.skeleton) {
                        return false;
                    }
                    continue;
                }
                _ => {}
            }
            let Some(&(i, allowed, kind)) = self.ops.get(n) else {
                return state.all_closed();
            };
            let Some(atom) = self.skeleton.atom_at[i] else {
                return false;
            };
            let mut tried_kinds: Vec<usize> = Vec::new();
            for l in 0..MAX_TRACKED {
                if allowed >> l & 1 == 0 {
                    continue;
                }
                if state.open[l] == NOT_OPEN {
                    // A closed label is alike to others of its kind.
                    if kind == OpKind::Close || tried_kinds.contains(&self.kind_of[l]) {
                        continue;
                    }
                    tried_kinds.push(self.kind_of[l]);
                } else if kind == OpKind::Open || state.ring_to(l, atom, self.skeleton).is_none() {
                    continue;
                }
                if self.budget == 0 {
                    return false;
                }
                self.budget -= 1;
                let mut after = state.clone();
                let read = after.read(l, Some(atom), self.skeleton);
                debug_assert!(read, "checked above");
                self.chosen[n] = l;
                if self.assign(n + 1, f, after) {
                    return true;
                }
            }
            return false;
        }
    }
}
