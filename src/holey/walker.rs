//! Walking text with holes: what the lexer configurations do between emissions.
//!
//! Both automata built from a canvas ([`super::subset`], [`super::nfa`]) share one view of it.
//! A *place* is a byte offset in a chunk; a hole is summarized by a hole set (every
//! configuration reachable inside it). Bytes move between places without emitting anything, and
//! skipped tokens (whitespace, comments) are followed too, so a *walk* from a configuration
//! through its chunk finds the members `(place, config)` that can emit a terminal next, the
//! configurations that enter the hole after the chunk, and whether the text can end there. A
//! hole set's *flow* is the same for all of its configurations at once, into the chunk after
//! the hole.
//!
//! Walks and flows are memoized per check; flows are also kept across checks by chunk text
//! ([`FlowCache`]), since a sampler changes one position at a time.

use hashbrown::HashMap;
use smallvec::SmallVec;

use super::chunk_cache::ChunkCache;
use super::config::{ConfigId, ConfigTable, HoleSetId, TooLarge, DEAD_CONFIG};
use crate::canvas::{HoleKind, HoleyText};
use crate::grammar::TerminalId;
use crate::lexicon::{Lexeme, Lexicon};

/// Places of the text: chunk `k` spans `base[k] ..= base[k] + len(k)`.
pub(super) struct Places<'t> {
    pub text: &'t HoleyText,
    /// What fills each hole; empty when every hole is [`HoleKind::Any`].
    pub kinds: &'t [HoleKind],
    pub base: Vec<u32>,
}

/// What follows a chunk, as caches by chunk text must know it: the end of the text, a hole
/// of any text (its hole set is closed), or a hole of one token (its set is the entry set).
pub(super) fn follow_code(last: bool, kind: HoleKind) -> u8 {
    match (last, kind) {
        (true, _) => 0,
        (false, HoleKind::Any) => 1,
        (false, _) => 2,
    }
}

impl<'t> Places<'t> {
    pub fn new(text: &'t HoleyText, kinds: &'t [HoleKind]) -> Self {
        let mut base = Vec::with_capacity(text.chunks.len());
        let mut next = 0u32;
        for c in &text.chunks {
            base.push(next);
            next += c.len() as u32 + 1;
        }
        Places { text, kinds, base }
    }

    /// What fills hole `k`.
    pub fn kind(&self, k: u32) -> HoleKind {
        self.kinds.get(k as usize).copied().unwrap_or_default()
    }

    /// What follows chunk `k` (see [`follow_code`]).
    pub fn follow(&self, k: usize) -> u8 {
        follow_code(k + 1 == self.text.chunks.len(), self.kind(k as u32))
    }

    /// The chunk a place lies in.
    pub fn chunk_of(&self, place: u32) -> usize {
        self.base.partition_point(|&b| b <= place) - 1
    }

    /// Whether `place` is the first place of a chunk that follows a hole: a lexeme emitted
    /// there lies wholly in the hole.
    pub fn is_entry(&self, place: u32) -> bool {
        place != 0 && self.base.binary_search(&place).is_ok()
    }
}

/// What walking from some members through their chunks found.
#[derive(Default, Clone)]
pub(super) struct Walk {
    /// Emitting members met, sorted.
    pub members: Vec<(u32, ConfigId)>,
    /// Configurations reaching the end of a chunk followed by a hole: `(hole, config)`.
    pub entries: Vec<(u32, ConfigId)>,
    /// Some configuration reached the end of the text at a token boundary.
    pub accepting: bool,
}

/// A hole set's flow into the following chunk: what its members reach there, and the hole
/// set they enter in the next hole.
#[derive(Clone)]
pub(super) struct Flow {
    pub members: Vec<(u32, ConfigId)>,
    pub accepting: bool,
    pub next: Option<(u32, HoleSetId)>,
}

/// A hole set's flow through a chunk, by chunk text, kept across checks: a sampler changes one
/// position at a time, so most chunks of a canvas were seen in the previous check.
pub struct FlowCache {
    flows: ChunkCache<ChunkFlow>,
}

impl Default for FlowCache {
    fn default() -> Self {
        FlowCache {
            flows: ChunkCache::new(Self::CAPACITY, Self::KEY_BYTES),
        }
    }
}

/// [`Flow`] with places as offsets into the chunk and the next hole set without its hole.
struct ChunkFlow {
    members: Vec<(u32, ConfigId)>,
    accepting: bool,
    next: Option<HoleSetId>,
}

impl FlowCache {
    /// Entries kept before the cache is emptied, and bytes of chunk text their keys may hold.
    const CAPACITY: usize = 1 << 14;
    const KEY_BYTES: usize = 32 << 20;

    fn get(&self, h: HoleSetId, last: u8, chunk: &[u8]) -> Option<&ChunkFlow> {
        self.flows.get(h, last, chunk)
    }

    fn insert(&mut self, h: HoleSetId, last: u8, chunk: Vec<u8>, flow: ChunkFlow) {
        self.flows.insert(h, last, chunk, flow);
    }

    pub fn len(&self) -> usize {
        self.flows.len()
    }

    pub fn key_bytes(&self) -> usize {
        self.flows.key_bytes()
    }
}

/// The emission targets of a set of members, by terminal.
pub(super) type MovesByTerminal = Vec<FlowMove>;

/// What a hole set's flow emits for one terminal: the targets, and whether some of those
/// lexemes end past the chunk's first place. A lexeme that ends right where the chunk begins
/// lies wholly in the hole, so it costs what a lexeme emitted in the hole costs.
pub(super) struct FlowMove {
    pub terminal: TerminalId,
    #[cfg_attr(not(test), allow(dead_code))] // read by the subset construction
    pub in_chunk: bool,
    pub targets: Vec<(u32, ConfigId)>,
}

/// The walks and flows of one check, by place; emptied and reused from check to check, so
/// their tables are allocated once.
#[derive(Default)]
pub(super) struct WalkMemo {
    walks: HashMap<(u32, ConfigId), Walk>,
    flows: HashMap<(u32, HoleSetId), Flow>,
    flow_moves: HashMap<(u32, HoleSetId), std::sync::Arc<MovesByTerminal>>,
}

impl WalkMemo {
    fn clear(&mut self) {
        self.walks.clear();
        self.flows.clear();
        self.flow_moves.clear();
    }
}

/// Walks and flows through one canvas's text, memoized.
pub(super) struct Walker<'a, 't> {
    pub lx: &'a Lexicon,
    pub table: &'a mut ConfigTable,
    pub places: &'a Places<'t>,
    memo: &'a mut WalkMemo,
    cache: &'a mut FlowCache,
}

impl<'a, 't> Walker<'a, 't> {
    /// A walker over `places`; `memo` is emptied first.
    pub fn new(
        lx: &'a Lexicon,
        table: &'a mut ConfigTable,
        places: &'a Places<'t>,
        memo: &'a mut WalkMemo,
        cache: &'a mut FlowCache,
    ) -> Self {
        memo.clear();
        Walker {
            lx,
            table,
            places,
            memo,
            cache,
        }
    }

    /// The flow of `(k, h)` if it was computed in this check.
    pub fn known_flow(&self, k: u32, h: HoleSetId) -> &Flow {
        &self.memo.flows[&(k, h)]
    }

    /// The hole members that configurations entering holes (`(hole, config)`) start: one hole
    /// set per hole, of all the configurations entering it (closed for a hole of any text, as
    /// they are for a hole of one token).
    pub fn hole_members(
        &mut self,
        mut entries: Vec<(u32, ConfigId)>,
    ) -> Result<Vec<(u32, HoleSetId)>, TooLarge> {
        entries.sort_unstable();
        entries.dedup();
        let mut holes = Vec::new();
        for group in entries.chunk_by(|a, b| a.0 == b.0) {
            let configs: Vec<ConfigId> = group.iter().map(|&(_, c)| c).collect();
            holes.push((group[0].0, self.hole_set(group[0].0, configs)?));
        }
        Ok(holes)
    }

    /// The set of `configs` entering hole `k`: their closure for a hole of any text, the
    /// configurations themselves for a hole of one token.
    fn hole_set(&mut self, k: u32, configs: Vec<ConfigId>) -> Result<HoleSetId, TooLarge> {
        match self.places.kind(k) {
            HoleKind::Any => self.table.hole_closure(self.lx, &configs),
            HoleKind::Token | HoleKind::TokenOrNone | HoleKind::Byte => {
                self.table.intern_set(configs)
            }
        }
    }

    /// What the members of hole set `h` in hole `k` reach in chunk `k + 1`.
    pub fn flow(&mut self, k: u32, h: HoleSetId) -> Result<&Flow, TooLarge> {
        if !self.memo.flows.contains_key(&(k, h)) {
            let chunk = k as usize + 1;
            let base = self.places.base[chunk];
            let last = self.places.follow(chunk);
            let bytes = &self.places.text.chunks[chunk];
            if let Some(cached) = self.cache.get(h, last, bytes) {
                let flow = Flow {
                    members: cached.members.iter().map(|&(o, c)| (base + o, c)).collect(),
                    accepting: cached.accepting,
                    next: cached.next.map(|h2| (chunk as u32, h2)),
                };
                self.memo.flows.insert((k, h), flow);
                return Ok(&self.memo.flows[&(k, h)]);
            }
            let mut walk = Walk::default();
            let set = self.table.hole_set(h).to_vec();
            self.walk_chunk(chunk, base, &set, &mut walk)?;
            walk.members.sort_unstable();
            walk.members.dedup();
            let configs: Vec<ConfigId> = walk.entries.iter().map(|&(_, c)| c).collect();
            let next = if configs.is_empty() {
                None
            } else {
                Some((chunk as u32, self.hole_set(chunk as u32, configs)?))
            };
            let flow = Flow {
                members: walk.members,
                accepting: walk.accepting,
                next,
            };
            self.cache.insert(
                h,
                last,
                bytes.clone(),
                ChunkFlow {
                    members: flow.members.iter().map(|&(p, c)| (p - base, c)).collect(),
                    accepting: flow.accepting,
                    next: flow.next.map(|(_, h2)| h2),
                },
            );
            self.memo.flows.insert((k, h), flow);
        }
        Ok(&self.memo.flows[&(k, h)])
    }

    /// The emission targets of the members of `flow(k, h)`, by terminal.
    pub fn flow_moves(
        &mut self,
        k: u32,
        h: HoleSetId,
    ) -> Result<std::sync::Arc<MovesByTerminal>, TooLarge> {
        if let Some(m) = self.memo.flow_moves.get(&(k, h)) {
            return Ok(m.clone());
        }
        let members = self.flow(k, h)?.members.clone();
        let mut by_terminal: HashMap<TerminalId, Vec<(u32, ConfigId)>> = HashMap::new();
        for (place, c) in members {
            for &(l, n) in self.table.emits(self.lx, c)? {
                if let Lexeme::Terminal(t) = l {
                    by_terminal.entry(t).or_default().push((place, n));
                }
            }
        }
        let entry = self.places.base[k as usize + 1];
        let mut moves: MovesByTerminal = by_terminal
            .into_iter()
            .map(|(terminal, mut targets)| {
                // Many members emit into the same configuration (a hole set holds
                // configurations that differ only in the token in progress): keep each once.
                targets.sort_unstable();
                targets.dedup();
                FlowMove {
                    terminal,
                    in_chunk: targets.iter().any(|&(place, _)| place > entry),
                    targets,
                }
            })
            .collect();
        moves.sort_unstable_by_key(|m| m.terminal);
        let moves = std::sync::Arc::new(moves);
        self.memo.flow_moves.insert((k, h), moves.clone());
        Ok(moves)
    }

    /// The walk from one member through its chunk, memoized.
    pub fn walk(&mut self, p: u32, c: ConfigId) -> Result<&Walk, TooLarge> {
        if !self.memo.walks.contains_key(&(p, c)) {
            let mut walk = Walk::default();
            self.walk_chunk(self.places.chunk_of(p), p, &[c], &mut walk)?;
            walk.members.sort_unstable();
            walk.members.dedup();
            self.memo.walks.insert((p, c), walk);
        }
        Ok(&self.memo.walks[&(p, c)])
    }

    /// Walks configuration `c` from place `p` to the end of chunk `k` (or its death), recording
    /// emitting members, configurations entering hole `k`, and acceptance at the text's end.
    /// The walk advances a frontier of configurations (from all of `start` at once) place by
    /// place, so paths that meet again are merged.
    fn walk_chunk(
        &mut self,
        k: usize,
        p: u32,
        start: &[ConfigId],
        walk: &mut Walk,
    ) -> Result<(), TooLarge> {
        let text = self.places.text;
        let base = self.places.base[k];
        let end = base + text.chunks[k].len() as u32;
        let mut frontier: SmallVec<[ConfigId; 4]> = SmallVec::from_slice(start);
        let mut place = p;
        loop {
            // Skipped tokens end at this place: their boundary configurations join the frontier.
            let mut i = 0;
            while i < frontier.len() {
                let c = frontier[i];
                let mut emits_terminal = false;
                for &(l, next) in self.table.emits(self.lx, c)? {
                    match l {
                        Lexeme::Skip if !contains(&frontier, next) => frontier.push(next),
                        Lexeme::Skip => {}
                        Lexeme::Terminal(_) => emits_terminal = true,
                    }
                }
                if emits_terminal {
                    walk.members.push((place, c));
                }
                i += 1;
            }
            if place == end {
                for &c in &frontier {
                    if k + 1 < text.chunks.len() {
                        walk.entries.push((k as u32, c));
                    } else if self.table.at_boundary(self.lx, c) {
                        walk.accepting = true;
                    }
                }
                return Ok(());
            }
            let class = self.lx.class_of(text.chunks[k][(place - base) as usize]);
            let mut next: SmallVec<[ConfigId; 4]> = SmallVec::new();
            for &c in &frontier {
                let n = self.table.step(self.lx, c, class)?;
                if n != DEAD_CONFIG && !contains(&next, n) {
                    next.push(n);
                }
            }
            // A hole set's thousands of configurations mostly step into the same few.
            if next.spilled() {
                next.sort_unstable();
                next.dedup();
            }
            if next.is_empty() {
                return Ok(());
            }
            frontier = next;
            place += 1;
        }
    }
}

/// Whether a frontier is known to hold `c` already. A large frontier is not searched: a
/// duplicate only costs a second look at it (a skipped token's successor is a boundary
/// configuration, which skips nothing, so duplicates cannot pile up).
fn contains(frontier: &[ConfigId], c: ConfigId) -> bool {
    frontier.len() <= 16 && frontier.contains(&c)
}
