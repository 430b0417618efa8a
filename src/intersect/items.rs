//! The best cost found so far for each item `(p, A, q)` of a search, and whether it is final.
//!
//! Every candidate the search considers is looked up here, so this table is the search's hot
//! spot. Where the automaton is small (the usual case: a canvas gives tens to a few hundred
//! states) an item's slot is an array cell: rows `(A, p)` of one cost per state `q`, allocated
//! on first use and reused from search to search. Where it has thousands of states (a mask's
//! automaton, with every path of the open position: 3,500–7,000 states for JSON in the middle
//! of a block) a row of every state would be tens of kilobytes for the handful of items it
//! holds, so rows are split into pages of [`PAGE`] states allocated on first use, the items
//! of one row clustering in a few pages (states are numbered along the canvas); a hash map
//! there made every lookup of the mask's search a probe, half its time. Past
//! [`PAGED_STATES`] states or [`PAGED_ROWS`] row heads a hash map holds the items, and a paged
//! table moves its items there once its pages pass [`PAGED_WORDS`].

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

/// States in one page of a row, in automata past [`DENSE_STATES`]; the most states a paged
/// table serves (a row's directory is then at most 1 KiB); the most rows (nonterminals ×
/// states) whose heads are an array there (16 MiB of heads); and the most words its
/// directories and pages may take (64 MiB) before its items move to a hash map: items spread
/// one to a row cost a directory and a page each, where a map costs some 20 bytes (a hole
/// 50,000 arrays deep, 100,000 states, took 1.7 GB paged).
const PAGE: usize = 64;
const PAGED_STATES: usize = 1 << 14;
const PAGED_ROWS: usize = 1 << 22;
const PAGED_WORDS: usize = 1 << 24;
const NO_PAGE: u32 = u32::MAX;

/// Where the items' cost words live.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
enum Layout {
    /// A row of every state for each `(A, p)` used.
    #[default]
    Dense,
    /// For each `(A, p)` used, a directory of pages of [`PAGE`] states.
    Paged,
    /// A hash map of items.
    Sparse,
}

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
    layout: Layout,
    states: usize,
    /// Row of `(A, p)`, or [`NO_ROW`]: in `cells` (in units of `states`) when dense, in
    /// `pages` (in units of `pages_per_row`) when paged.
    rows: Vec<u32>,
    touched: Vec<u32>,
    cells: Vec<u32>,
    /// Paged: each row's directory, the index in `cells` (in units of [`PAGE`]) of the page
    /// of states `PAGE * i ..` or [`NO_PAGE`].
    pages: Vec<u32>,
    pages_per_row: usize,
    /// The most words of `pages` and `cells` in the paged layout before a spill to the map.
    paged_words: usize,
    sparse: HashMap<ItemKey, u32>,
}

impl ItemTable {
    /// Empties the table for a search over `nonterminals` and `states`.
    pub fn reset(&mut self, nonterminals: usize, states: usize) {
        let rows = nonterminals.saturating_mul(states);
        let layout = if states <= DENSE_STATES && rows <= DENSE_ROWS {
            Layout::Dense
        } else if states <= PAGED_STATES && rows <= PAGED_ROWS {
            Layout::Paged
        } else {
            Layout::Sparse
        };
        self.reset_as(nonterminals, states, layout);
        self.paged_words = PAGED_WORDS;
    }

    /// [`ItemTable::reset`] with the layout given.
    fn reset_as(&mut self, nonterminals: usize, states: usize, layout: Layout) {
        for &r in &self.touched {
            self.rows[r as usize] = NO_ROW;
        }
        self.touched.clear();
        self.cells.clear();
        self.pages.clear();
        self.sparse.clear();
        let rows = nonterminals.saturating_mul(states);
        self.layout = layout;
        if self.layout != Layout::Sparse && self.rows.len() < rows {
            self.rows.resize(rows, NO_ROW);
        }
        self.states = states;
        self.pages_per_row = states.div_ceil(PAGE);
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
        let word = match self.layout {
            Layout::Dense => {
                let row = self.rows[a.index() * self.states + p as usize];
                if row == NO_ROW {
                    return None;
                }
                self.cells[row as usize * self.states + q as usize]
            }
            Layout::Paged => {
                let row = self.rows[a.index() * self.states + p as usize];
                if row == NO_ROW {
                    return None;
                }
                let q = q as usize;
                let page = self.pages[row as usize * self.pages_per_row + q / PAGE];
                if page == NO_PAGE {
                    return None;
                }
                self.cells[page as usize * PAGE + q % PAGE]
            }
            Layout::Sparse => *self.sparse.get(&key(p, a, q))?,
        };
        (word != ABSENT).then_some(word & !SETTLED)
    }

    /// Moves the items of a paged table into the hash map, which holds them from now on.
    #[cold]
    fn spill(&mut self) {
        for &r in &self.touched {
            let (a, p) = (r as usize / self.states, r as usize % self.states);
            let dir = self.rows[r as usize] as usize * self.pages_per_row;
            for (i, &page) in self.pages[dir..dir + self.pages_per_row].iter().enumerate() {
                if page == NO_PAGE {
                    continue;
                }
                let cells = &self.cells[page as usize * PAGE..(page as usize + 1) * PAGE];
                for (j, &word) in cells.iter().enumerate() {
                    if word != ABSENT {
                        let q = (i * PAGE + j) as StateId;
                        let k = key(p as StateId, NonterminalId(a as u32), q);
                        self.sparse.insert(k, word);
                    }
                }
            }
            self.rows[r as usize] = NO_ROW;
        }
        self.touched.clear();
        self.pages = Vec::new();
        self.cells = Vec::new();
        self.layout = Layout::Sparse;
    }

    #[inline]
    fn cell_mut(&mut self, p: StateId, a: NonterminalId, q: StateId) -> &mut u32 {
        let r = a.index() * self.states + p as usize;
        match self.layout {
            Layout::Dense => {
                if self.rows[r] == NO_ROW {
                    self.rows[r] = (self.cells.len() / self.states) as u32;
                    self.touched.push(r as u32);
                    self.cells.resize(self.cells.len() + self.states, ABSENT);
                }
                &mut self.cells[self.rows[r] as usize * self.states + q as usize]
            }
            Layout::Paged => {
                if self.pages.len() + self.cells.len() + self.pages_per_row + PAGE
                    > self.paged_words
                {
                    self.spill();
                    return self.sparse.entry(key(p, a, q)).or_insert(ABSENT);
                }
                if self.rows[r] == NO_ROW {
                    self.rows[r] = (self.pages.len() / self.pages_per_row) as u32;
                    self.touched.push(r as u32);
                    self.pages
                        .resize(self.pages.len() + self.pages_per_row, NO_PAGE);
                }
                let q = q as usize;
                let d = self.rows[r] as usize * self.pages_per_row + q / PAGE;
                if self.pages[d] == NO_PAGE {
                    self.pages[d] = (self.cells.len() / PAGE) as u32;
                    self.cells.resize(self.cells.len() + PAGE, ABSENT);
                }
                &mut self.cells[self.pages[d] as usize * PAGE + q % PAGE]
            }
            Layout::Sparse => self.sparse.entry(key(p, a, q)).or_insert(ABSENT),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The three layouts against a hash map of the same operations: random offers and
    /// settlements over small and large automata (rows of several pages, states at page
    /// boundaries), each table reused for a second search as the searcher reuses it.
    #[test]
    fn layouts_agree_with_a_map() {
        let mut next = crate::tests::draws(0x2545_f491_4f6c_dd1d_u64);
        for (nonterminals, states) in [(3, 5), (7, 130), (40, 700), (2, 2_000)] {
            // The fourth table is paged with room for a few pages only, so it spills its
            // items into the map partway through each search.
            let mut tables: Vec<(Layout, ItemTable)> =
                [Layout::Dense, Layout::Paged, Layout::Sparse, Layout::Paged]
                    .into_iter()
                    .map(|l| (l, ItemTable::default()))
                    .collect();
            for _search in 0..2 {
                for (i, (layout, t)) in tables.iter_mut().enumerate() {
                    t.reset_as(nonterminals, states, *layout);
                    t.paged_words = if i == 3 { 40 * PAGE } else { PAGED_WORDS };
                }
                let mut model: HashMap<(u32, u32, u32), (u32, bool)> = HashMap::new();
                for _ in 0..20_000 {
                    let (p, a, q) = (
                        next(states as u64) as u32,
                        next(nonterminals as u64) as u32,
                        next(states as u64) as u32,
                    );
                    let cost = next(50) as u32;
                    if next(3) == 0 {
                        let want = matches!(model.get(&(p, a, q)), Some(&(c, false)) if c == cost);
                        if want {
                            model.insert((p, a, q), (cost, true));
                        }
                        for (layout, t) in &mut tables {
                            let got = t.settle(p, NonterminalId(a), q, cost);
                            assert_eq!(got, want, "{layout:?} settle ({p}, {a}, {q})");
                        }
                    } else {
                        let want = match model.get(&(p, a, q)) {
                            Some(&(c, settled)) if settled || c <= cost => Offer::Refused,
                            _ => Offer::Taken,
                        };
                        if want == Offer::Taken {
                            model.insert((p, a, q), (cost, false));
                        }
                        for (layout, t) in &mut tables {
                            let got = t.offer(p, NonterminalId(a), q, cost);
                            assert_eq!(got, want, "{layout:?} offer ({p}, {a}, {q})");
                        }
                    }
                }
                for p in 0..states as u32 {
                    for a in 0..nonterminals as u32 {
                        for q in (0..states as u32).step_by(7) {
                            let want = model.get(&(p, a, q)).map(|&(c, _)| c);
                            for (layout, t) in &tables {
                                assert_eq!(t.cost(p, NonterminalId(a), q), want, "{layout:?}");
                            }
                        }
                    }
                }
            }
        }
    }
}
