//! Tracked labels opened on one atom (*twins*), which a ring-bond product keeps so that two
//! of them do not close on one atom: that would bond their opener to it twice (`C12CC12`,
//! `C12CCC21`), which RDKit refuses. A label's state says only where its opener stands to the
//! current atom; twins share an opener, so once one closes on an atom, the others' opener is
//! bonded to it, and they read as open on an atom bonded to it (`OPEN_BONDED`) until the next
//! atom, which is what [`super::labels`] already refuses to close.
//!
//! A group is the set of tracked labels open on an atom when the product leaves it (by an
//! atom, a break or a branch's end), if it holds two or more; a label leaves its group when it
//! closes. The groups of a state are stored once and named by an index (0: none), as the
//! branch stacks are, so a canvas whose labels never open two on an atom pays nothing.
//!
//! Labels of the loose group are not kept here: checks and masks keep their parity only,
//! and a completion's witness is checked label by label ([`super::RingProduct::pairs_up`]).

use super::branches::Move;
use super::interner::Interner;
use super::labels::{Labels, Who};

/// Groups of twins (bits by tracked index), each stored once.
pub(super) struct TwinGroups {
    groups: Interner<Vec<u128>>,
    keep: bool,
}

impl TwinGroups {
    /// Groups of twins, if `keep` (if not, none is ever made).
    pub(super) fn new(keep: bool) -> TwinGroups {
        TwinGroups {
            groups: Interner::new(Vec::new()),
            keep,
        }
    }

    /// The labels and the groups after a lexeme that does `m`, from groups `id`: `before` are
    /// the labels before the lexeme, `after` what [`super::labels`] makes of them. An atom, a
    /// break or a branch's end leaves the current atom; a tracked label's closing bonds its
    /// twins' opener to this atom.
    pub(super) fn after(
        &mut self,
        id: u32,
        before: &Labels,
        after: Labels,
        m: Move,
    ) -> (Labels, u32) {
        match m {
            Move::Atom | Move::Break | Move::Close => {
                (after, self.left_atom(id, before.open_here()))
            }
            Move::Closed(Who::Tracked(k)) => {
                let (bonded, id) = self.closed(id, k);
                (after.with_bonded(bonded), id)
            }
            _ => (after, id),
        }
    }

    /// The groups `id` after the current atom is left with the tracked labels `here` open on
    /// it: they are twins if two or more (a label in an older group is there because the
    /// product came back to its atom, after a branch, so it moves to the new one).
    fn left_atom(&mut self, id: u32, here: u128) -> u32 {
        if !self.keep || here.count_ones() < 2 {
            return id;
        }
        let mut groups: Vec<u128> = self
            .groups
            .get(id)
            .iter()
            .map(|g| g & !here)
            .filter(|g| g.count_ones() >= 2)
            .collect();
        groups.push(here);
        groups.sort_unstable();
        self.groups.intern(groups)
    }

    /// Label `k` (tracked index) closed, from groups `id`: its twins still open, and the
    /// groups without it.
    fn closed(&mut self, id: u32, k: usize) -> (u128, u32) {
        let bit = 1u128 << k;
        let current = self.groups.get(id);
        let Some(&group) = current.iter().find(|&&g| g & bit != 0) else {
            return (0, id);
        };
        let twins = group & !bit;
        let mut groups: Vec<u128> = current
            .iter()
            .map(|&g| if g == group { twins } else { g })
            .filter(|g| g.count_ones() >= 2)
            .collect();
        groups.sort_unstable();
        (twins, self.groups.intern(groups))
    }
}
