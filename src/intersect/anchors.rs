//! The settled items of a search, listed by anchor: a nonterminal and the state where the
//! item starts (or ends). Combining an item with its neighbours looks these lists up once per
//! production, so the lookup is kept cheap: heads in a dense array where nonterminals × states
//! is small (the common case: a few hundred of each), in a hash map otherwise, and the lists
//! themselves linked through one pool that is reused from search to search.

use hashbrown::HashMap;

use super::dfa::StateId;
use crate::grammar::NonterminalId;

/// The end of a list.
const NIL: u32 = u32::MAX;

/// Anchors up to which the heads are a dense array (4 MiB of heads).
const DENSE_LIMIT: usize = 1 << 20;

#[derive(Default)]
pub(super) struct AnchoredLists {
    dense: Vec<u32>,
    touched: Vec<u32>,
    sparse: HashMap<u64, u32>,
    use_dense: bool,
    states: usize,
    /// `(state, cost, next, length of the list from here)`.
    pool: Vec<(StateId, u32, u32, u32)>,
}

impl AnchoredLists {
    /// Empties the lists for a search over `nonterminals` × `states` anchors.
    pub fn reset(&mut self, nonterminals: usize, states: usize) {
        for &i in &self.touched {
            self.dense[i as usize] = NIL;
        }
        self.touched.clear();
        self.sparse.clear();
        self.pool.clear();
        let size = nonterminals.saturating_mul(states);
        self.use_dense = size <= DENSE_LIMIT;
        if self.use_dense && self.dense.len() < size {
            self.dense.resize(size, NIL);
        }
        self.states = states;
    }

    /// Adds `(state, cost)` to the list of anchor `(a, s)`.
    #[inline]
    pub fn push(&mut self, a: NonterminalId, s: StateId, state: StateId, cost: u32) {
        let entry = self.pool.len() as u32;
        let head = if self.use_dense {
            let i = a.index() * self.states + s as usize;
            if self.dense[i] == NIL {
                self.touched.push(i as u32);
            }
            &mut self.dense[i]
        } else {
            self.sparse
                .entry(((a.0 as u64) << 32) | s as u64)
                .or_insert(NIL)
        };
        let len = match *head {
            NIL => 1,
            h => self.pool[h as usize].3 + 1,
        };
        self.pool.push((state, cost, *head, len));
        *head = entry;
    }

    /// The list of anchor `(a, s)`, newest first.
    #[inline]
    pub fn list(&self, a: NonterminalId, s: StateId) -> ListIter<'_> {
        ListIter {
            pool: &self.pool,
            next: self.head(a, s),
        }
    }

    /// The length of the list of anchor `(a, s)`.
    #[inline]
    pub fn len(&self, a: NonterminalId, s: StateId) -> usize {
        match self.head(a, s) {
            NIL => 0,
            h => self.pool[h as usize].3 as usize,
        }
    }

    #[inline]
    fn head(&self, a: NonterminalId, s: StateId) -> u32 {
        if self.use_dense {
            self.dense[a.index() * self.states + s as usize]
        } else {
            self.sparse
                .get(&(((a.0 as u64) << 32) | s as u64))
                .copied()
                .unwrap_or(NIL)
        }
    }
}

pub(super) struct ListIter<'a> {
    pool: &'a [(StateId, u32, u32, u32)],
    next: u32,
}

impl Iterator for ListIter<'_> {
    type Item = (StateId, u32);

    #[inline]
    fn next(&mut self) -> Option<(StateId, u32)> {
        if self.next == NIL {
            return None;
        }
        let (state, cost, next, _) = self.pool[self.next as usize];
        self.next = next;
        Some((state, cost))
    }
}
