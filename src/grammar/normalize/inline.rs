//! [`WorkGrammar::inline_single_use`] without sweeps.
//!
//! The pass is defined by a sweep: find the first rule (in the rule list's order) with an
//! eligible site — a nonterminal `B` ≠ start, ≠ the rule's own left side, used exactly once in
//! the whole grammar, and with a single rule or standing alone in a unit rule — inline `B` at
//! the first such site, and start over. Inlining removes the host rule with `swap_remove` (the
//! last rule takes its place) and appends the rewritten rules. Which site comes first matters
//! (inlining a unit rule `A → B` gives `A` all of `B`'s rules, which can make `A`'s own use
//! ineligible), so this module keeps exactly that order while doing each step in time
//! independent of the grammar's size:
//!
//! - the rule list's order is a rank per rule (`swap_remove` hands the host's rank to the rule
//!   of highest rank; an appended rule gets a rank above all others), and the rules that may
//!   have an eligible site are a set ordered by rank;
//! - right-hand sides are linked lists, so inlining a body splices it in, in O(1), instead of
//!   copying the host (a chain of 100,000 rules inlined into one would copy O(n²) symbols);
//! - each rule lists its candidate sites in order, spliced along with the symbols. A candidate
//!   found ineligible is dropped: eligibility only shrinks (use counts never change, a
//!   nonterminal's rule count only grows) except when a rule shrinks to one symbol, and a rule
//!   that does gets its candidate list anew.
//!
//! The caller guarantees that every nonterminal used on a right-hand side has a rule (true
//! once useless symbols are removed); otherwise a site's rule could vanish with nothing
//! inlined, which can make other sites eligible again.

use std::collections::{BTreeMap, BTreeSet};

use super::work::{Rhs, Rule};
use super::WorkGrammar;
use crate::grammar::{NonterminalId, Symbol};

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Link {
    /// A symbol (in the symbol list) or the index of a symbol node (in a candidate list).
    item: u32,
    prev: u32,
    next: u32,
}

/// A doubly linked list in an arena of [`Link`]s.
#[derive(Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
}

impl List {
    const EMPTY: List = List {
        head: NIL,
        tail: NIL,
    };
}

struct LRule {
    lhs: NonterminalId,
    symbols: List,
    len: usize,
    candidates: List,
    rank: u64,
    alive: bool,
}

struct State {
    /// Symbol nodes; `item` is the symbol, encoded by [`encode`].
    nodes: Vec<Link>,
    /// Candidate nodes; `item` is the index of a symbol node.
    cands: Vec<Link>,
    rules: Vec<LRule>,
    /// Rank → rule, for every live rule: the rule list's order.
    order: BTreeMap<u64, u32>,
    /// Ranks of the live rules whose candidate list is not empty.
    active: BTreeSet<u64>,
    /// The rules of each nonterminal (dead ones included; filtered by `alive` and `lhs`).
    rules_of: Vec<Vec<u32>>,
    counts: Vec<usize>,
    occ: Vec<usize>,
    /// Nonterminals the held rules name ([`WorkGrammar::held`]): never inlined.
    pinned: Vec<bool>,
    start: NonterminalId,
    next_rank: u64,
}

fn encode(s: Symbol) -> u32 {
    match s {
        Symbol::T(t) => t.0 << 1,
        Symbol::N(n) => (n.0 << 1) | 1,
    }
}

fn decode(x: u32) -> Symbol {
    if x & 1 == 1 {
        Symbol::N(NonterminalId(x >> 1))
    } else {
        Symbol::T(crate::grammar::TerminalId(x >> 1))
    }
}

fn push(arena: &mut Vec<Link>, list: &mut List, item: u32) -> u32 {
    let id = arena.len() as u32;
    arena.push(Link {
        item,
        prev: list.tail,
        next: NIL,
    });
    if list.tail == NIL {
        list.head = id;
    } else {
        arena[list.tail as usize].next = id;
    }
    list.tail = id;
    id
}

/// Replaces `at` (a link of `list`) by the whole of `with` (possibly empty).
fn splice(arena: &mut [Link], list: &mut List, at: u32, with: List) {
    let Link { prev, next, .. } = arena[at as usize];
    let (first, last) = if with.head == NIL {
        (next, prev)
    } else {
        (with.head, with.tail)
    };
    if with.head != NIL {
        arena[with.head as usize].prev = prev;
        arena[with.tail as usize].next = next;
    }
    if prev == NIL {
        list.head = first;
    } else {
        arena[prev as usize].next = first;
    }
    if next == NIL {
        list.tail = last;
    } else {
        arena[next as usize].prev = last;
    }
}

impl State {
    fn new(w: &WorkGrammar, counts: Vec<usize>) -> State {
        // Uses in held rules count (such a nonterminal is never used once here only), and a
        // nonterminal the held rules name is never inlined away.
        let occ = w.occurrences();
        let pinned = w.pinned();
        let mut st = State {
            nodes: Vec::with_capacity(w.rules.iter().map(|r| r.rhs.len()).sum()),
            cands: Vec::new(),
            rules: Vec::with_capacity(w.rules.len()),
            order: BTreeMap::new(),
            active: BTreeSet::new(),
            rules_of: vec![Vec::new(); w.names.len()],
            counts,
            occ,
            pinned,
            start: w.start,
            next_rank: w.rules.len() as u64,
        };
        let mut active = Vec::new();
        for (i, r) in w.rules.iter().enumerate() {
            let mut symbols = List::EMPTY;
            let mut candidates = List::EMPTY;
            for &s in &r.rhs {
                let node = push(&mut st.nodes, &mut symbols, encode(s));
                if let Symbol::N(b) = s {
                    if st.occ[b.index()] == 1 && !st.pinned[b.index()] && b != w.start && b != r.lhs
                    {
                        push(&mut st.cands, &mut candidates, node);
                    }
                }
            }
            st.rules_of[r.lhs.index()].push(i as u32);
            st.rules.push(LRule {
                lhs: r.lhs,
                symbols,
                len: r.rhs.len(),
                candidates,
                rank: i as u64,
                alive: true,
            });
            if candidates.head != NIL {
                active.push(i as u64);
            }
        }
        // Built from keys in order, the trees are filled in bulk, not by one search each.
        st.order = (0..w.rules.len()).map(|i| (i as u64, i as u32)).collect();
        st.active = active.into_iter().collect();
        st
    }

    fn eligible(&self, rule: u32, cand: u32) -> Option<NonterminalId> {
        let r = &self.rules[rule as usize];
        let node = self.cands[cand as usize].item;
        let Symbol::N(b) = decode(self.nodes[node as usize].item) else {
            return None;
        };
        let ok = b != self.start
            && b != r.lhs
            && !self.pinned[b.index()]
            && self.occ[b.index()] == 1
            && (self.counts[b.index()] == 1 || r.len == 1);
        ok.then_some(b)
    }

    /// Removes a live rule from the order (its rank is about to change, or it dies).
    fn unrank(&mut self, rule: u32) {
        let rank = self.rules[rule as usize].rank;
        self.order.remove(&rank);
        self.active.remove(&rank);
    }

    fn rank(&mut self, rule: u32, rank: u64) {
        let r = &mut self.rules[rule as usize];
        r.rank = rank;
        self.order.insert(rank, rule);
        if r.candidates.head != NIL {
            self.active.insert(rank);
        }
    }

    /// Appends a rewritten rule at the end of the order; a unit rule's candidates are found
    /// anew (its one symbol may have become eligible by standing alone).
    fn append(&mut self, rule: u32) {
        let r = &self.rules[rule as usize];
        if r.len == 1 {
            let node = r.symbols.head;
            let mut candidates = List::EMPTY;
            if let Symbol::N(_) = decode(self.nodes[node as usize].item) {
                push(&mut self.cands, &mut candidates, node);
            }
            self.rules[rule as usize].candidates = candidates;
        }
        let rank = self.next_rank;
        self.next_rank += 1;
        self.rank(rule, rank);
    }

    /// Inlines `b` at candidate `cand` of rule `host`; returns the rules moved.
    fn inline(&mut self, host: u32, cand: u32, b: NonterminalId) -> u64 {
        let a = self.rules[host as usize].lhs;
        // swap_remove: the last rule of the order takes the host's place.
        let host_rank = self.rules[host as usize].rank;
        self.unrank(host);
        if let Some((_, &last)) = self.order.last_key_value() {
            if self.rules[last as usize].rank > host_rank {
                self.unrank(last);
                self.rank(last, host_rank);
            }
        }
        let mut bodies: Vec<u32> = self.rules_of[b.index()]
            .iter()
            .copied()
            .filter(|&r| self.rules[r as usize].alive && self.rules[r as usize].lhs == b)
            .collect();
        bodies.sort_unstable_by_key(|&r| self.rules[r as usize].rank);
        for &r in &bodies {
            self.unrank(r);
        }
        let k = bodies.len();
        self.counts[a.index()] = self.counts[a.index()] + k - 1;
        self.counts[b.index()] = 0;
        self.occ[b.index()] = 0;
        if k == 1 {
            let body = bodies[0];
            let (symbols, len, candidates) = {
                let r = &mut self.rules[body as usize];
                r.alive = false;
                (r.symbols, r.len, r.candidates)
            };
            let node = self.cands[cand as usize].item;
            let h = &mut self.rules[host as usize];
            splice(&mut self.nodes, &mut h.symbols, node, symbols);
            splice(&mut self.cands, &mut h.candidates, cand, candidates);
            h.len = h.len - 1 + len;
            self.append(host);
        } else {
            // The host is `A → B` (k ≥ 2 makes a longer host ineligible): B's rules become A's.
            self.rules[host as usize].alive = false;
            for &r in &bodies {
                self.rules[r as usize].lhs = a;
                self.rules_of[a.index()].push(r);
                self.append(r);
            }
        }
        k as u64
    }
}

/// Runs the pass on `w` (see the module docs); `counts` are its rules per nonterminal.
/// Stops after `max_work` steps, leaving the grammar as far as it got.
pub(super) fn run(w: &mut WorkGrammar, counts: Vec<usize>, max_work: u64) {
    let mut st = State::new(w, counts);
    let mut work = 0u64;
    while let Some(&rank) = st.active.first() {
        if work > max_work {
            break;
        }
        let rule = st.order[&rank];
        let mut found = None;
        loop {
            work += 1;
            let cand = st.rules[rule as usize].candidates.head;
            if cand == NIL {
                break;
            }
            if let Some(b) = st.eligible(rule, cand) {
                found = Some((cand, b));
                break;
            }
            let r = &mut st.rules[rule as usize];
            splice(&mut st.cands, &mut r.candidates, cand, List::EMPTY);
        }
        match found {
            None => {
                st.active.remove(&rank);
            }
            Some((cand, b)) => work += st.inline(rule, cand, b),
        }
    }
    w.rules = st
        .order
        .values()
        .map(|&r| {
            let lr = &st.rules[r as usize];
            let mut rhs = Rhs::with_capacity(lr.len);
            let mut at = lr.symbols.head;
            while at != NIL {
                rhs.push(decode(st.nodes[at as usize].item));
                at = st.nodes[at as usize].next;
            }
            Rule { lhs: lr.lhs, rhs }
        })
        .collect();
}
