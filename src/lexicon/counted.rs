//! Counted JSON strings ([`Pattern::JsonString`](crate::grammar::Pattern::JsonString)): the
//! lexer counts a string's characters instead of unrolling a counted repetition.
//!
//! `maxLength: 65535` unrolled is `"UNIT{0,65535}"`, a DFA of some 10⁶ states whose every
//! state the checker's hole closures would visit. Instead every counted terminal shares one
//! pattern in the lexer's NFA, the *family* `"UNIT*"`, and a lexer configuration carries the
//! number of units read since the opening quote (a [`Count`]). The family's units are a prefix
//! code, so the count is a function of the text, and it changes exactly where the family's
//! part of a DFA state enters a unit boundary. When the closing quote is read, the terminals
//! whose bounds admit the count compete with the state's other winners by rank, as every
//! pattern does (see [`crate::lexicon`]).
//!
//! All of this is read off the DFA after its construction:
//! - *closed* states are those where the family matches (the closing quote was just read);
//! - *in-body* states are those from which a closed state is still reachable (the family is
//!   between the quotes), but for the start state;
//! - an in-body state is at a *boundary* when the quote leads it to a closed state; a step into
//!   a boundary from an in-body state completes one unit;
//! - an in-body state is *pumpable* when it lies on a cycle of in-body states that completes
//!   exactly one unit. Where a hole (any bytes) reaches a pumpable state with `n` units, it
//!   also reaches it with every count above `n`, so the hole's closure may hold it as
//!   "at least `n`" ([`Count::at_least`]) and stay finite; elsewhere counts stay exact.
//!
//! The construction needs that no other lexeme ends inside a string's body (a watch on such a
//! token would have to count too); the lexer refuses a grammar where one does. JSON grammars
//! have none: every string-like lexeme ends with its closing quote.

use smallvec::SmallVec;

use super::table::{StateId, DEAD};
use super::Lexeme;

/// A lexer pattern's rank: priority, then literal over regex.
pub(super) type Rank = (i32, bool);

/// The characters a counted string has read so far: exactly `n`, or (in a hole's closure) any
/// number from `n` up. Meaningful only in the family's in-body and closed states; zero
/// elsewhere.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Count(u32);

const OPEN: u32 = 1 << 31;

impl Count {
    /// Outside a counted string.
    pub const NONE: Count = Count(0);

    pub fn exact(n: u32) -> Count {
        Count(n & !OPEN)
    }

    pub fn at_least(n: u32) -> Count {
        Count((n & !OPEN) | OPEN)
    }

    /// The least count it stands for.
    pub fn value(self) -> u32 {
        self.0 & !OPEN
    }

    /// Whether it stands for every count from [`Count::value`] up.
    pub fn is_open(self) -> bool {
        self.0 & OPEN != 0
    }

    /// Whether every count `other` stands for, `self` stands for too.
    pub fn covers(self, other: Count) -> bool {
        if self.is_open() {
            other.value() >= self.value()
        } else {
            self == other
        }
    }
}

/// A counted terminal.
#[derive(Clone, Debug)]
pub(super) struct CountedTerm {
    pub lexeme: Lexeme,
    pub rank: Rank,
    pub min: u32,
    pub max: Option<u32>,
    /// Its family: 0 for any string of units, else the family of its own regex.
    pub family: u32,
}

const IN_BODY: u8 = 1;
const BOUNDARY: u8 = 2;
const CLOSED: u8 = 4;
const PUMPABLE: u8 = 8;

/// The lexer's DFA as the analysis reads it.
pub(super) struct DfaTable<'a> {
    /// `trans[s * num_classes + c]`.
    pub trans: &'a [StateId],
    pub num_classes: usize,
    pub start: StateId,
    /// The class of `"`.
    pub quote: usize,
}

/// The counted terminals of a lexicon and how each of its states stands towards them.
#[derive(Clone, Debug)]
pub(super) struct CountedStrings {
    terms: Vec<CountedTerm>,
    /// Per state: `IN_BODY`, `BOUNDARY`, `CLOSED`, `PUMPABLE`.
    flags: Vec<u8>,
    /// Per state: the rank of its other winners, if it has any.
    winner_rank: Vec<Option<Rank>>,
    /// Per state: the families that match there, ascending.
    families: Vec<SmallVec<[u32; 2]>>,
    /// Counts from here on behave alike: above every bound.
    cap: u32,
    /// From this count on, a smaller count at a state admits every continuation a larger one
    /// does ([`Self::dominance_floor`]); `None` where ranks make that false.
    dominance_floor: Option<u32>,
}

impl CountedStrings {
    /// Analyzes the DFA: `families[s]` are the families matching at state `s` (family 0, any
    /// string of units, is the one that counts), and `winners`/`winner_rank` its other
    /// winners. The error is a lexeme that can end inside a counted string's body, where
    /// counting cannot work (a watch on it would have to count).
    pub fn new(
        terms: Vec<CountedTerm>,
        dfa: DfaTable,
        families: Vec<SmallVec<[u32; 2]>>,
        winners: &[SmallVec<[Lexeme; 2]>],
        winner_rank: Vec<Option<Rank>>,
    ) -> Result<CountedStrings, Lexeme> {
        let DfaTable {
            trans,
            num_classes: k,
            start,
            quote,
        } = dfa;
        let closed: Vec<bool> = families.iter().map(|f| f.first() == Some(&0)).collect();
        let n = closed.len();
        // The family is alive where its match (a closed state) is still reachable.
        let alive = super::table::reaching(trans, k, &closed);
        let mut flags = vec![0u8; n];
        for s in 1..n {
            if closed[s] {
                flags[s] |= CLOSED;
            } else if alive[s] && s != start as usize {
                flags[s] |= IN_BODY;
                if let Some(&w) = winners[s].first() {
                    return Err(w);
                }
            }
        }
        for s in 1..n {
            if flags[s] & IN_BODY != 0 && closed[trans[s * k + quote] as usize] {
                flags[s] |= BOUNDARY;
            }
        }
        mark_pumpable(&mut flags, trans, k);
        let cap = terms
            .iter()
            .map(|t| t.min.max(t.max.unwrap_or(0)))
            .max()
            .unwrap_or(0)
            + 1;
        let rank = terms.first().map(|t| t.rank);
        let alike = terms.iter().all(|t| Some(t.rank) == rank)
            && winner_rank
                .iter()
                .flatten()
                .all(|&r| rank.is_none_or(|c| r >= c));
        let dominance_floor = alike.then(|| terms.iter().map(|t| t.min).max().unwrap_or(0));
        Ok(CountedStrings {
            terms,
            flags,
            winner_rank,
            families,
            cap,
            dominance_floor,
        })
    }

    /// The count from which a smaller count dominates a larger one at the same state: every
    /// counted terminal's `min` is met there, so a larger count admits fewer terminals (only
    /// their `max` can fail), and the winners at a closing quote (above) shrink with them. That
    /// holds where every counted terminal has one rank and no other lexeme ranks below it: a
    /// counted terminal of a higher rank, admitted at the smaller count only, would suppress
    /// what wins at the larger one. `None` otherwise.
    pub fn dominance_floor(&self) -> Option<u32> {
        self.dominance_floor
    }

    pub fn terms(&self) -> &[CountedTerm] {
        &self.terms
    }

    pub fn closed(&self, s: StateId) -> bool {
        self.flags[s as usize] & CLOSED != 0
    }

    pub fn pumpable(&self, s: StateId) -> bool {
        self.flags[s as usize] & PUMPABLE != 0
    }

    /// The count after the step `from` → `to` that started with `count`.
    #[inline]
    pub fn step(&self, from: StateId, to: StateId, count: Count) -> Count {
        let f = self.flags[to as usize];
        if f & IN_BODY != 0 {
            if self.flags[from as usize] & IN_BODY == 0 {
                return Count::exact(0);
            }
            let n = count.value() + u32::from(f & BOUNDARY != 0);
            if n >= self.cap {
                Count::exact(self.cap)
            } else if count.is_open() {
                Count::at_least(n)
            } else {
                Count::exact(n)
            }
        } else if f & CLOSED != 0 {
            count
        } else {
            Count::NONE
        }
    }

    /// The winners at closed state `s` for `count` (every count it stands for): the state's
    /// other winners and the counted terminals admitting the count, the best-ranked of them.
    pub fn winners(&self, s: StateId, count: Count, others: &[Lexeme]) -> SmallVec<[Lexeme; 2]> {
        let mut out: SmallVec<[Lexeme; 2]> = SmallVec::new();
        let m = count.value();
        if !count.is_open() {
            self.winners_at(s, m, others, &mut out);
        } else {
            // Which terminals admit a count changes only at their bounds.
            let mut points: Vec<u32> = vec![m];
            for t in &self.terms {
                points.push(t.min);
                if let Some(max) = t.max {
                    points.push(max);
                    points.push(max.saturating_add(1));
                }
            }
            points.push(self.cap);
            points.retain(|&p| p >= m);
            points.sort_unstable();
            points.dedup();
            for p in points {
                self.winners_at(s, p, others, &mut out);
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn winners_at(&self, s: StateId, n: u32, others: &[Lexeme], out: &mut SmallVec<[Lexeme; 2]>) {
        let families = &self.families[s as usize];
        let admits = |t: &CountedTerm| {
            t.min <= n && t.max.is_none_or(|max| n <= max) && families.contains(&t.family)
        };
        let best = self
            .terms
            .iter()
            .filter(|t| admits(t))
            .map(|t| t.rank)
            .chain(self.winner_rank[s as usize])
            .max();
        let Some(best) = best else { return };
        if self.winner_rank[s as usize] == Some(best) {
            out.extend(others.iter().copied());
        }
        out.extend(
            self.terms
                .iter()
                .filter(|t| admits(t) && t.rank == best)
                .map(|t| t.lexeme),
        );
    }
}

/// Marks the in-body states on a cycle of in-body states that completes exactly one unit:
/// `s` reaches, without completing a unit, a state with a step into a boundary `b`, from which
/// `s` is reached again without completing a unit.
fn mark_pumpable(flags: &mut [u8], trans: &[StateId], k: usize) {
    let n = flags.len();
    let body = |f: &[u8], s: StateId| s != DEAD && f[s as usize] & IN_BODY != 0;
    let boundary = |f: &[u8], s: StateId| f[s as usize] & BOUNDARY != 0;
    let mut within: Vec<u32> = vec![u32::MAX; n];
    let mut pumpable: Vec<bool> = vec![false; n];
    // Each state's distinct successors inside a unit (in the body, not a boundary), listed
    // once: the walks below start from every boundary, and scanning every class at every step
    // was most of a lexer's build on long counted strings (neighbouring classes mostly lead to
    // one state).
    let mut inner_start: Vec<u32> = Vec::with_capacity(n + 1);
    let mut inner: Vec<u32> = vec![];
    let mut listed_for: Vec<u32> = vec![u32::MAX; n];
    inner_start.push(0);
    for s in 0..n {
        for &t in &trans[s * k..(s + 1) * k] {
            if body(flags, t) && !boundary(flags, t) && listed_for[t as usize] != s as u32 {
                listed_for[t as usize] = s as u32;
                inner.push(t);
            }
        }
        inner_start.push(inner.len() as u32);
    }
    let inner_of = |s: usize| &inner[inner_start[s] as usize..inner_start[s + 1] as usize];
    for b in 0..n as u32 {
        if !body(flags, b) || !boundary(flags, b) {
            continue;
        }
        // The states after `b` within its unit (no unit completed), `b` included.
        let mut unit = vec![b];
        within[b as usize] = b;
        let mut i = 0;
        while i < unit.len() {
            for &t in inner_of(unit[i] as usize) {
                if within[t as usize] != b {
                    within[t as usize] = b;
                    unit.push(t);
                }
            }
            i += 1;
        }
        // Back from the states that complete a unit into `b`, without completing one.
        let mut back: Vec<u32> = unit
            .iter()
            .copied()
            .filter(|&a| (0..k).any(|c| trans[a as usize * k + c] == b))
            .collect();
        let mut seen: hashbrown::HashSet<u32> = back.iter().copied().collect();
        while let Some(a) = back.pop() {
            pumpable[a as usize] = true;
            if a == b {
                continue;
            }
            for &p in &unit {
                if !seen.contains(&p) && (0..k).any(|c| trans[p as usize * k + c] == a) {
                    seen.insert(p);
                    back.push(p);
                }
            }
        }
    }
    for s in 0..n {
        if pumpable[s] {
            flags[s] |= PUMPABLE;
        }
    }
}
