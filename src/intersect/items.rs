//! The best cost found so far for each item `(p, A, q)` of a search, and whether it is final.
//!
//! Every candidate the search considers is looked up here, so this table is the search's hot
//! spot. Where the automaton is small (the usual case: a canvas gives tens to a few hundred
//! states) an item's slot is an array cell: rows `(A, p)` of one cost per state `q`, allocated
//! on first use and reused from search to search. Otherwise a hash map holds the items.

use hashbrown::HashMap;

use super::dfa::StateId;
use crate::grammar::NonterminalId;

/// A cost word: the cost, with [`SETTLED`] set once it is final. [`ABSENT`]: never offered.
const SETTLED: u32 = 1 << 31;
const ABSENT: u32 = u32::MAX;
const NO_ROW: u32 = u32::MAX;

/// The highest cost an item can carry; higher sums are clamped (they only order the search).
/// One below `SETTLED - 1`: a settled item at `SETTLED - 1` would read as [`ABSENT`], be
/// offered and settled again, without end.
pub(super) const MAX_COST: u32 = SETTLED - 2;

/// The largest automaton whose rows are arrays, and the most rows (nonterminals × states)
/// whose row index is an array.
const DENSE_STATES: usize = 512;
const DENSE_ROWS: usize = 1 << 20;

/// What an offer of a cost did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Offer {
    /// The item is new or the cost is lower than its best so far: it must be (re)queued.
    Taken,
    /// The item is settled, or has a cost as low already.
    Refused,
}

#[derive(Default)]
pub(super) struct ItemTable {
    dense: bool,
    states: usize,
    /// Row of `(A, p)` in `cells` (in units of `states`), or [`NO_ROW`].
    rows: Vec<u32>,
    touched: Vec<u32>,
    cells: Vec<u32>,
    sparse: HashMap<ItemKey, u32>,
}

impl ItemTable {
    /// Empties the table for a search over `nonterminals` and `states`.
    pub fn reset(&mut self, nonterminals: usize, states: usize) {
        for &r in &self.touched {
            self.rows[r as usize] = NO_ROW;
        }
        self.touched.clear();
        self.cells.clear();
        self.sparse.clear();
        let rows = nonterminals.saturating_mul(states);
        self.dense = states <= DENSE_STATES && rows <= DENSE_ROWS;
        if self.dense && self.rows.len() < rows {
            self.rows.resize(rows, NO_ROW);
        }
        self.states = states;
    }

    /// Offers item `(p, a, q)` at `cost` (below 2³¹).
    #[inline]
    pub fn offer(&mut self, p: StateId, a: NonterminalId, q: StateId, cost: u32) -> Offer {
        let cell = self.cell_mut(p, a, q);
        if *cell != ABSENT && (*cell & SETTLED != 0 || *cell <= cost) {
            return Offer::Refused;
        }
        *cell = cost;
        Offer::Taken
    }

    /// Marks the item settled if `cost` is its current best and it is not settled yet.
    #[inline]
    pub fn settle(&mut self, p: StateId, a: NonterminalId, q: StateId, cost: u32) -> bool {
        let cell = self.cell_mut(p, a, q);
        if *cell != cost {
            return false;
        }
        *cell |= SETTLED;
        true
    }

    /// The best cost of an item offered in this search.
    pub fn cost(&self, p: StateId, a: NonterminalId, q: StateId) -> Option<u32> {
        let word = if self.dense {
            let row = self.rows[a.index() * self.states + p as usize];
            if row == NO_ROW {
                return None;
            }
            self.cells[row as usize * self.states + q as usize]
        } else {
            *self.sparse.get(&key(p, a, q))?
        };
        (word != ABSENT).then_some(word & !SETTLED)
    }

    #[inline]
    fn cell_mut(&mut self, p: StateId, a: NonterminalId, q: StateId) -> &mut u32 {
        if !self.dense {
            return self.sparse.entry(key(p, a, q)).or_insert(ABSENT);
        }
        let r = a.index() * self.states + p as usize;
        if self.rows[r] == NO_ROW {
            self.rows[r] = (self.cells.len() / self.states) as u32;
            self.touched.push(r as u32);
            self.cells.resize(self.cells.len() + self.states, ABSENT);
        }
        &mut self.cells[self.rows[r] as usize * self.states + q as usize]
    }
}

/// An item `(p, A, q)` packed into 64 bits: A (24 bits), p (20 bits), q (20 bits).
pub(super) type ItemKey = u64;

#[inline]
pub(super) fn key(p: StateId, a: NonterminalId, q: StateId) -> ItemKey {
    ((a.0 as u64) << 40) | ((p as u64) << 20) | q as u64
}

#[inline]
pub(super) fn unkey(k: ItemKey) -> (StateId, NonterminalId, StateId) {
    (
        ((k >> 20) & 0xF_FFFF) as StateId,
        NonterminalId((k >> 40) as u32),
        (k & 0xF_FFFF) as StateId,
    )
}
