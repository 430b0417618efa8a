//! Lexer configurations and the per-grammar caches of their moves.
//!
//! A configuration is what a longest-match lexer must remember at a byte position: the
//! [`Lexicon`] state of the token in progress, and the *watches* — states of tokens already
//! emitted that a longer match could still overtake. Emitting a token at a state from which the
//! lexer could go on matching is only right if the text that follows never completes a longer
//! match; the watch follows that text and kills the configuration if it does. Watches die out
//! after a byte or two in real grammars, so configurations stay few.
//!
//! Configurations are interned and their byte steps and emissions cached, lazily, for the
//! lifetime of a checker: every canvas of one grammar walks the same small graph. Holes are
//! summarized as *hole sets* — every configuration reachable from some entry configurations by
//! arbitrary bytes — which are interned and cached too, with their moves on each lexeme.

use hashbrown::HashMap;
use smallvec::SmallVec;

use crate::deadline::Deadline;
use crate::grammar::TerminalId;
use crate::lexicon::{Count, Lexeme, Lexicon, StateId, DEAD};

/// An interned configuration.
pub type ConfigId = u32;

/// The step result for a configuration that cannot continue.
pub const DEAD_CONFIG: ConfigId = u32::MAX;
const UNKNOWN: ConfigId = u32::MAX - 1;

/// An interned hole set.
pub type HoleSetId = u32;

/// The token in progress (with its count, inside a counted string) and the watches on tokens
/// already emitted.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    pub token: StateId,
    pub count: Count,
    pub watches: SmallVec<[StateId; 2]>,
}

/// The emissions of one configuration: each lexeme with the configuration after it.
type Emits = SmallVec<[(Lexeme, ConfigId); 2]>;

/// Too many configurations or hole sets: the check answers `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge;

/// The interned configurations of one lexicon, with cached moves.
pub struct ConfigTable {
    configs: Vec<Config>,
    ids: HashMap<Config, ConfigId>,
    steps: Vec<ConfigId>,
    emits: Vec<Option<Emits>>,
    /// Each configuration's [`ConfigTable::widen`]ed id, once asked for ([`UNKNOWN`] before):
    /// closures widen every configuration they reach, most of them many times.
    widened: Vec<ConfigId>,
    num_classes: usize,
    hole_sets: Vec<Vec<ConfigId>>,
    hole_set_ids: HashMap<Vec<ConfigId>, HoleSetId>,
    hole_moves: Vec<Option<Vec<(TerminalId, HoleSetId)>>>,
    closures: HashMap<Vec<ConfigId>, HoleSetId>,
    /// Configuration ids held by `hole_sets` and the keys of `closures`.
    members: usize,
    /// `visited[c] == visit`: configuration `c` is in the closure being built (a mark per
    /// configuration id: the closures' hot loop, where a hash set took a fifth of the time).
    visited: Vec<u32>,
    visit: u32,
    limit: usize,
    /// Polled while a hole's closure grows: one closure may visit every configuration, and a
    /// canvas may need as many closures as the table has hole sets.
    deadline: Deadline,
}

impl ConfigTable {
    /// A table for `lexicon`; at most `limit` configurations and as many hole sets.
    pub fn new(lexicon: &Lexicon, limit: usize) -> Self {
        let mut t = ConfigTable {
            configs: Vec::new(),
            ids: HashMap::new(),
            steps: Vec::new(),
            emits: Vec::new(),
            widened: Vec::new(),
            num_classes: lexicon.num_classes(),
            hole_sets: Vec::new(),
            hole_set_ids: HashMap::new(),
            hole_moves: Vec::new(),
            closures: HashMap::new(),
            members: 0,
            visited: Vec::new(),
            visit: 0,
            limit,
            deadline: Deadline::never(),
        };
        let start = Config {
            token: lexicon.start(),
            count: Count::NONE,
            watches: SmallVec::new(),
        };
        t.intern(start).expect("the first configuration fits");
        t
    }

    /// Makes every later closure give up (as too large) once `deadline` expires.
    pub fn set_deadline(&mut self, deadline: Deadline) {
        self.deadline = deadline;
    }

    /// The configuration at the start of the text: no token, no watches.
    pub fn start(&self) -> ConfigId {
        0
    }

    pub fn num_configs(&self) -> usize {
        self.configs.len()
    }

    pub fn num_hole_sets(&self) -> usize {
        self.hole_sets.len()
    }

    /// Whether the table is near its limit: more than 7/8 of it in configurations, half of it
    /// in hole sets, or 32 times it in hole-set members (25 MiB of ids at the default limit).
    /// A checker empties a crowded table before its next canvas: a long stream of distinct
    /// canvases would otherwise fill it (hole sets grow with the canvases seen; a grammar's
    /// configurations are mostly interned when its checker is built), and every check after
    /// that would be `unknown`. (At 8 times, a C++ block's masks emptied it twice a pass: its
    /// thousands of hole sets after a run of any text hold some 500 configurations each, and
    /// every mask after an emptying walked the vocabulary anew: a mask one position into the
    /// block 640 ms instead of 160.)
    pub fn crowded(&self) -> bool {
        self.configs.len() > self.limit / 8 * 7
            || self.hole_sets.len() > self.limit / 2
            || self.members > self.limit * 32
    }

    /// Whether `c` is between tokens (the text may end here).
    pub fn at_boundary(&self, lexicon: &Lexicon, c: ConfigId) -> bool {
        self.configs[c as usize].token == lexicon.start()
    }

    fn intern(&mut self, c: Config) -> Result<ConfigId, TooLarge> {
        if let Some(&id) = self.ids.get(&c) {
            return Ok(id);
        }
        if self.configs.len() >= self.limit {
            return Err(TooLarge);
        }
        let id = self.configs.len() as ConfigId;
        self.ids.insert(c.clone(), id);
        self.configs.push(c);
        self.steps
            .extend(std::iter::repeat_n(UNKNOWN, self.num_classes));
        self.emits.push(None);
        self.widened.push(UNKNOWN);
        Ok(id)
    }

    /// The configuration after one more byte of class `class`, or [`DEAD_CONFIG`].
    #[inline]
    pub fn step(&mut self, lx: &Lexicon, c: ConfigId, class: usize) -> Result<ConfigId, TooLarge> {
        let slot = c as usize * self.num_classes + class;
        let cached = self.steps[slot];
        if cached != UNKNOWN {
            return Ok(cached);
        }
        let next = match step_config(lx, &self.configs[c as usize], class) {
            Some(cfg) => self.intern(cfg)?,
            None => DEAD_CONFIG,
        };
        self.steps[slot] = next;
        Ok(next)
    }

    /// The lexemes `c` can emit here (the token ends), each with the configuration after it.
    pub fn emits(&mut self, lx: &Lexicon, c: ConfigId) -> Result<&[(Lexeme, ConfigId)], TooLarge> {
        if self.emits[c as usize].is_none() {
            let cfg = self.configs[c as usize].clone();
            let mut out = SmallVec::new();
            let winners = if lx.may_match(cfg.token) {
                lx.winners_counted(cfg.token, cfg.count)
            } else {
                SmallVec::new()
            };
            if !winners.is_empty() {
                let mut watches = cfg.watches.clone();
                if lx.extendable(cfg.token) {
                    watches.push(cfg.token);
                    watches.sort_unstable();
                    watches.dedup();
                }
                let next = self.intern(Config {
                    token: lx.start(),
                    count: Count::NONE,
                    watches,
                })?;
                out.extend(winners.iter().map(|&l| (l, next)));
            }
            self.emits[c as usize] = Some(out);
        }
        Ok(self.emits[c as usize].as_deref().expect("just filled"))
    }

    /// The hole set of everything reachable from `entry` by arbitrary bytes and skipped tokens.
    pub fn hole_closure(
        &mut self,
        lx: &Lexicon,
        entry: &[ConfigId],
    ) -> Result<HoleSetId, TooLarge> {
        let mut key = entry.to_vec();
        key.sort_unstable();
        key.dedup();
        if let Some(&h) = self.closures.get(&key) {
            return Ok(h);
        }
        self.visit = match self.visit.checked_add(1) {
            Some(v) => v,
            None => {
                self.visited.iter_mut().for_each(|v| *v = 0);
                1
            }
        };
        let mut members: Vec<ConfigId> = Vec::new();
        let mut counts = ClosureCounts::new(lx);
        let mut stack = Vec::with_capacity(key.len());
        for &c in &key {
            let c = self.widen(lx, c)?;
            if counts.admit(&self.configs[c as usize]) && self.mark(c, &mut members) {
                stack.push(c);
            }
        }
        let mut popped = 0u32;
        while let Some(c) = stack.pop() {
            popped = popped.wrapping_add(1);
            if popped.is_multiple_of(64) && self.deadline.expired() {
                return Err(TooLarge);
            }
            // Neighbouring byte classes mostly move a configuration alike (the bytes of a
            // string's body, of an identifier): where the token and every watch move the same
            // as under the class before, so does the configuration, and nothing is interned.
            let (token, watches) = {
                let cfg = &self.configs[c as usize];
                (cfg.token, cfg.watches.clone())
            };
            let mut previous = DEAD_CONFIG;
            for class in 0..self.num_classes {
                let alike = class > 0
                    && lx.next_class(token, class) == lx.next_class(token, class - 1)
                    && watches
                        .iter()
                        .all(|&w| lx.next_class(w, class) == lx.next_class(w, class - 1));
                let n = if alike {
                    self.steps[c as usize * self.num_classes + class] = previous;
                    previous
                } else {
                    self.step(lx, c, class)?
                };
                if n != DEAD_CONFIG && n != previous {
                    let w = self.widen(lx, n)?;
                    if counts.admit(&self.configs[w as usize]) && self.mark(w, &mut members) {
                        stack.push(w);
                    }
                }
                previous = n;
            }
            let skips: SmallVec<[ConfigId; 2]> = self
                .emits(lx, c)?
                .iter()
                .filter(|(l, _)| *l == Lexeme::Skip)
                .map(|&(_, n)| n)
                .collect();
            for n in skips {
                if self.mark(n, &mut members) {
                    stack.push(n);
                }
            }
        }
        if counts.on {
            members.retain(|&c| !counts.subsumed(&self.configs[c as usize]));
        }
        self.drop_simulated(&mut members);
        let h = self.intern_hole_set(members)?;
        self.members += key.len();
        self.closures.insert(key, h);
        Ok(h)
    }

    /// `c` as a member of a hole's closure: at a pumpable state an exact count `n` becomes
    /// "at least `n`" (the hole reaches that state with every larger count too), which keeps
    /// closures finite; anything else stays as it is.
    fn widen(&mut self, lx: &Lexicon, c: ConfigId) -> Result<ConfigId, TooLarge> {
        let known = self.widened[c as usize];
        if known != UNKNOWN {
            return Ok(known);
        }
        let cfg = &self.configs[c as usize];
        let wide = if cfg.count.is_open() || !lx.pumpable(cfg.token) {
            c
        } else {
            let open = Config {
                count: Count::at_least(cfg.count.value()),
                ..cfg.clone()
            };
            self.intern(open)?
        };
        self.widened[c as usize] = wide;
        Ok(wide)
    }

    /// Adds `c` to the closure being built (and to `members`) unless it is there already.
    #[inline]
    fn mark(&mut self, c: ConfigId, members: &mut Vec<ConfigId>) -> bool {
        let i = c as usize;
        if i >= self.visited.len() {
            self.visited.resize(self.configs.len().max(i + 1), 0);
        }
        if self.visited[i] == self.visit {
            return false;
        }
        self.visited[i] = self.visit;
        members.push(c);
        true
    }

    /// Drops from `set` every configuration that another member simulates, and sorts it.
    ///
    /// `(T, W)` is simulated by `(T, W')` when `W' ⊊ W`: the token in progress moves the same
    /// way in both, a watch can only kill a run, and an emission carries the watches over, so
    /// every run of `(T, W)` is a run of `(T, W')` with the same emissions and the same end.
    /// Dropping `(T, W)` leaves the set's language unchanged, and makes sets that differ only
    /// in such members equal: a hole set after lexeme `t` differs from one after `t'` mostly
    /// in the configurations that still watch `t`, which a comment or a non-extendable lexeme
    /// in the hole makes redundant. Without this, every lexeme a hole can emit leads to a
    /// subset state of its own.
    fn drop_simulated(&self, set: &mut Vec<ConfigId>) {
        drop_simulated_among(&self.configs, set);
    }

    /// Interns a set of configurations as it is, not closed: the entry set of a position that
    /// holds exactly one token. It shares ids (and [`ConfigTable::hole_set`]) with hole sets.
    pub fn intern_set(&mut self, mut configs: Vec<ConfigId>) -> Result<HoleSetId, TooLarge> {
        configs.sort_unstable();
        configs.dedup();
        self.intern_hole_set(configs)
    }

    fn intern_hole_set(&mut self, members: Vec<ConfigId>) -> Result<HoleSetId, TooLarge> {
        if let Some(&h) = self.hole_set_ids.get(&members) {
            return Ok(h);
        }
        if self.hole_sets.len() >= self.limit {
            return Err(TooLarge);
        }
        let h = self.hole_sets.len() as HoleSetId;
        self.members += 2 * members.len();
        self.hole_set_ids.insert(members.clone(), h);
        self.hole_sets.push(members);
        self.hole_moves.push(None);
        Ok(h)
    }

    pub fn hole_set(&self, h: HoleSetId) -> &[ConfigId] {
        &self.hole_sets[h as usize]
    }

    /// For each terminal some member of `h` can emit, the hole set after emitting it.
    pub fn hole_moves(
        &mut self,
        lx: &Lexicon,
        h: HoleSetId,
    ) -> Result<&[(TerminalId, HoleSetId)], TooLarge> {
        if self.hole_moves[h as usize].is_none() {
            let mut targets: HashMap<TerminalId, Vec<ConfigId>> = HashMap::new();
            for i in 0..self.hole_sets[h as usize].len() {
                let c = self.hole_sets[h as usize][i];
                for &(l, n) in self.emits(lx, c)? {
                    if let Lexeme::Terminal(t) = l {
                        targets.entry(t).or_default().push(n);
                    }
                }
            }
            let mut moves = Vec::with_capacity(targets.len());
            for (t, entry) in targets {
                moves.push((t, self.hole_closure(lx, &entry)?));
            }
            moves.sort_unstable();
            self.hole_moves[h as usize] = Some(moves);
        }
        Ok(self.hole_moves[h as usize].as_deref().expect("just filled"))
    }
}

/// [`ConfigTable::drop_simulated`] over the configurations `configs` (indexed by id).
fn drop_simulated_among(configs: &[Config], set: &mut Vec<ConfigId>) {
    let cfg = |c: ConfigId| &configs[c as usize];
    set.sort_unstable_by_key(|&c| (cfg(c).token, cfg(c).watches.len(), c));
    // Within one token's group, every configuration with fewer watches comes first; a
    // configuration is dropped when one of its watch set's proper subsets was met with a
    // count that covers its own. Simulation is transitive, so the earlier ones need not
    // have been kept themselves. The subsets are looked up, not scanned for: a group can
    // hold thousands of counts of one token (a scan was half of a counted lexicon's build).
    let mut kept: Vec<ConfigId> = Vec::with_capacity(set.len());
    let mut seen = SeenCounts::default();
    let mut token = None;
    for &c in set.iter() {
        let this = cfg(c);
        if token != Some(this.token) {
            token = Some(this.token);
            seen.clear();
        }
        if !seen.simulates(&this.watches, this.count) {
            kept.push(c);
        }
        seen.insert(&this.watches, this.count);
    }
    kept.sort_unstable();
    *set = kept;
}

/// The counts met so far in one token's group of [`ConfigTable::drop_simulated`], by watch set:
/// the least open count, and the exact ones.
#[derive(Default)]
struct SeenCounts {
    least_open: HashMap<SmallVec<[StateId; 2]>, u32>,
    exact: hashbrown::HashSet<(SmallVec<[StateId; 2]>, Count)>,
}

/// Watch sets longer than this are compared with every watch set met instead of having their
/// 2^n subsets looked up (no grammar measured has more than two watches at once).
const MAX_SUBSET_LOOKUP: usize = 8;

impl SeenCounts {
    fn clear(&mut self) {
        self.least_open.clear();
        self.exact.clear();
    }

    fn insert(&mut self, watches: &SmallVec<[StateId; 2]>, count: Count) {
        if count.is_open() {
            let least = self.least_open.entry(watches.clone()).or_insert(u32::MAX);
            *least = (*least).min(count.value());
        } else {
            self.exact.insert((watches.clone(), count));
        }
    }

    /// Whether a watch set met before, a proper subset of `watches` (sorted, distinct), came
    /// with a count that covers `count`.
    fn simulates(&self, watches: &SmallVec<[StateId; 2]>, count: Count) -> bool {
        let covered = |subset: &SmallVec<[StateId; 2]>| {
            self.least_open
                .get(subset)
                .is_some_and(|&least| Count::at_least(least).covers(count))
                || (!count.is_open() && self.exact.contains(&(subset.clone(), count)))
        };
        let n = watches.len();
        if n == 0 {
            return false;
        }
        if n > MAX_SUBSET_LOOKUP {
            let proper =
                |w: &SmallVec<[StateId; 2]>| w.len() < n && w.iter().all(|x| watches.contains(x));
            return self
                .least_open
                .iter()
                .any(|(w, &least)| proper(w) && Count::at_least(least).covers(count))
                || self.exact.iter().any(|(w, c)| proper(w) && *c == count);
        }
        (0u32..(1 << n) - 1).any(|mask| {
            let subset: SmallVec<[StateId; 2]> = (0..n)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| watches[i])
                .collect();
            covered(&subset)
        })
    }
}

/// The counts of one hole's closure, by token state and watches:
/// - the least open count `n` ("at least `n`"), which makes any count from `n` up redundant
///   there;
/// - the least exact count from `floor` on (the largest `min` of the counted terminals, where
///   their ranks allow: [`crate::lexicon::Lexicon::counted_dominance_floor`]): where every
///   lower bound is met, a smaller count admits every continuation a larger one does (each
///   step adds the same units to both, and only upper bounds remain to fail), so a larger
///   count, exact or open, adds nothing there. A host name's 253 characters would otherwise
///   keep every count at every label position (~32,000 configurations).
///
/// Off (and free) for lexicons without counted strings.
struct ClosureCounts {
    on: bool,
    floor: Option<u32>,
    least: HashMap<(StateId, SmallVec<[StateId; 2]>), u32>,
    least_exact: HashMap<(StateId, SmallVec<[StateId; 2]>), u32>,
}

impl ClosureCounts {
    fn new(lx: &Lexicon) -> Self {
        ClosureCounts {
            on: lx.counts_strings(),
            floor: lx.counted_dominance_floor(),
            least: HashMap::new(),
            least_exact: HashMap::new(),
        }
    }

    /// Whether `cfg` adds to the closure (and records its count).
    fn admit(&mut self, cfg: &Config) -> bool {
        if !self.on || cfg.count == Count::NONE {
            return true;
        }
        let key = (cfg.token, cfg.watches.clone());
        let n = cfg.count.value();
        let least = self.least.get(&key).copied();
        let least_exact = self.least_exact.get(&key).copied();
        if least.is_some_and(|l| l <= n) || least_exact.is_some_and(|l| l <= n) {
            return false;
        }
        if cfg.count.is_open() {
            self.least.insert(key, n);
        } else if self.floor.is_some_and(|f| n >= f) {
            self.least_exact.insert(key, n);
        }
        true
    }

    /// Whether a count admitted later stands for `cfg`'s: an open one, or a smaller exact
    /// one from the floor on.
    fn subsumed(&self, cfg: &Config) -> bool {
        if cfg.count == Count::NONE {
            return false;
        }
        let key = (cfg.token, cfg.watches.clone());
        let n = cfg.count.value();
        if self.least_exact.get(&key).is_some_and(|&l| l < n) {
            return true;
        }
        let Some(&l) = self.least.get(&key) else {
            return false;
        };
        if cfg.count.is_open() {
            l < n
        } else {
            l <= n
        }
    }
}

/// One byte step of a configuration; `None` if the token in progress can no longer match or
/// a watch completes a longer token (the earlier emission was not longest-match).
fn step_config(lx: &Lexicon, cfg: &Config, class: usize) -> Option<Config> {
    let token = lx.next_class(cfg.token, class);
    if token == DEAD || (!lx.may_match(token) && !lx.extendable(token)) {
        return None;
    }
    let mut watches = SmallVec::new();
    for &w in &cfg.watches {
        let w2 = lx.next_class(w, class);
        if w2 == DEAD {
            continue;
        }
        if !lx.winners(w2).is_empty() {
            return None;
        }
        if lx.extendable(w2) {
            watches.push(w2);
        }
    }
    watches.sort_unstable();
    watches.dedup();
    let count = lx.step_count(cfg.token, token, cfg.count);
    Some(Config {
        token,
        count,
        watches,
    })
}

#[cfg(test)]
mod tests {
    use super::{drop_simulated_among, Config, ConfigId};
    use crate::lexicon::Count;
    use proptest::prelude::*;
    use smallvec::SmallVec;

    /// The definition: `c` goes when a kept configuration of its token has a proper subset of
    /// its watches and a count that covers its own (fewer watches first, as the table sorts).
    fn drop_simulated_by_scan(configs: &[Config], set: &mut Vec<ConfigId>) {
        let cfg = |c: ConfigId| &configs[c as usize];
        set.sort_unstable_by_key(|&c| (cfg(c).token, cfg(c).watches.len(), c));
        let mut kept: Vec<ConfigId> = Vec::new();
        for &c in set.iter() {
            let this = cfg(c);
            let simulated = kept.iter().any(|&k| {
                let k = cfg(k);
                k.token == this.token
                    && k.watches.len() < this.watches.len()
                    && k.watches.iter().all(|x| this.watches.contains(x))
                    && k.count.covers(this.count)
            });
            if !simulated {
                kept.push(c);
            }
        }
        kept.sort_unstable();
        *set = kept;
    }

    fn config((token, watches, count, open): (u32, Vec<u32>, u32, bool)) -> Config {
        let mut watches: SmallVec<[u32; 2]> = watches.into_iter().collect();
        watches.sort_unstable();
        watches.dedup();
        let count = match (count, open) {
            (0, _) => Count::NONE,
            (n, true) => Count::at_least(n),
            (n, false) => Count::exact(n),
        };
        Config {
            token,
            count,
            watches,
        }
    }

    proptest! {
        /// Few tokens, watch states and counts, so that subsets and covering counts abound;
        /// up to 11 watches, past the subset lookup's limit.
        #[test]
        fn subset_lookup_drops_what_the_scan_drops(
            raw in proptest::collection::vec(
                (0u32..3, proptest::collection::vec(0u32..6, 0..4), 0u32..4, any::<bool>()),
                1..60,
            ),
            wide in proptest::collection::vec(0u32..12, 9..12),
        ) {
            let mut configs: Vec<Config> = raw.into_iter().map(config).collect();
            configs.push(config((0, wide, 0, false)));
            let mut want: Vec<ConfigId> = (0..configs.len() as ConfigId).collect();
            let mut got = want.clone();
            drop_simulated_by_scan(&configs, &mut want);
            drop_simulated_among(&configs, &mut got);
            prop_assert_eq!(got, want);
        }
    }
}
