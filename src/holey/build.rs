//! From text with holes to one deterministic automaton over lexemes.
//!
//! The nondeterministic automaton underneath has a state per (place, configuration): a place is
//! a byte offset in a chunk or one of the holes. Bytes move between places without emitting
//! anything (chunk bytes are fixed; a hole takes any bytes, summarized by its hole set), and a
//! configuration whose token can end emits a lexeme without moving. So the subset construction
//! treats bytes as ε-moves and lexemes as the alphabet.
//!
//! A subset is identified by its *kernel*: the hole sets it holds, the members that can emit a
//! terminal (a chunk place with a configuration that has winners) and whether it accepts.
//! Members that only pass bytes along are left out, and so are members *implied* by a hole set:
//! once a subset may still be inside hole k with set h, it also holds everything h reaches in
//! the chunk after the hole (its *flow*). Flows, their moves, and walks from a member through
//! its chunk are memoized per check, so each kernel costs work in proportion to its explicit
//! part, not to the text it spans.

use hashbrown::HashMap;
use smallvec::SmallVec;

use super::config::{ConfigId, ConfigTable, HoleSetId, TooLarge, DEAD_CONFIG};
use crate::canvas::HoleyText;
use crate::grammar::TerminalId;
use crate::lexicon::{Lexeme, Lexicon};

/// A subset state: hole members `(hole, set)` (a hole may hold several sets: their union is
/// meant), explicit chunk members `(place, config)` not implied by a hole member's flow, and
/// whether the subset accepts.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
struct Kernel {
    holes: SmallVec<[(u32, HoleSetId); 2]>,
    chunk: SmallVec<[(u32, ConfigId); 4]>,
    accepting: bool,
}

/// The deterministic automaton before minimization: `edges[s]` lists `(terminal, cost, target)`.
pub struct RawDfa {
    pub accepting: Vec<bool>,
    pub edges: Vec<Vec<(TerminalId, u32, u32)>>,
}

/// Places of the text: chunk `k` spans `base[k] ..= base[k] + len(k)`.
struct Places<'t> {
    text: &'t HoleyText,
    base: Vec<u32>,
}

impl<'t> Places<'t> {
    fn new(text: &'t HoleyText) -> Self {
        let mut base = Vec::with_capacity(text.chunks.len());
        let mut next = 0u32;
        for c in &text.chunks {
            base.push(next);
            next += c.len() as u32 + 1;
        }
        Places { text, base }
    }

    /// The chunk a place lies in.
    fn chunk_of(&self, place: u32) -> usize {
        self.base.partition_point(|&b| b <= place) - 1
    }
}

/// Determinizes the lexeme automaton of `text`, exploring at most `max_states` subsets.
pub fn determinize(
    lx: &Lexicon,
    table: &mut ConfigTable,
    text: &HoleyText,
    min_cost: &[u32],
    max_states: usize,
    cache: &mut FlowCache,
) -> Result<RawDfa, TooLarge> {
    let places = Places::new(text);
    let mut builder = Builder {
        lx,
        table,
        places: &places,
        walks: HashMap::new(),
        flows: HashMap::new(),
        cache,
        flow_moves: HashMap::new(),
        targets: (0..min_cost.len()).map(|_| Targets::default()).collect(),
        touched: Vec::new(),
    };
    let first = builder.closure(&[(0, builder.table.start())], &[])?;
    let mut ids: HashMap<Kernel, u32> = HashMap::new();
    let mut by_seeds: HashMap<Seeds, u32> = HashMap::new();
    let mut kernels = vec![first.clone()];
    ids.insert(first, 0);
    let mut out = RawDfa {
        accepting: Vec::new(),
        edges: Vec::new(),
    };
    let mut i = 0;
    while i < kernels.len() {
        let kernel = kernels[i].clone();
        out.accepting.push(kernel.accepting);
        let mut edges = Vec::new();
        builder.moves(&kernel)?;
        let touched = std::mem::take(&mut builder.touched);
        for &t in &touched {
            let targets = &mut builder.targets[t.index()];
            targets.seeds.normalize();
            let hole_only = !targets.from_chunk;
            // Many moves share their seeds (every kernel inside a hole carries the same chain
            // of later holes), so the closure is computed once per distinct seeds.
            let id = match by_seeds.get(&targets.seeds) {
                Some(&id) => id,
                None => {
                    let seeds = targets.seeds.clone();
                    let target = builder.closure_of(&seeds)?;
                    let id = match ids.get(&target) {
                        Some(&id) => id,
                        None => {
                            if kernels.len() >= max_states {
                                return Err(TooLarge);
                            }
                            let id = kernels.len() as u32;
                            ids.insert(target.clone(), id);
                            kernels.push(target);
                            id
                        }
                    };
                    by_seeds.insert(seeds, id);
                    id
                }
            };
            builder.targets[t.index()].clear();
            let cost = if hole_only { min_cost[t.index()] } else { 0 };
            edges.push((t, cost, id));
        }
        builder.touched = touched;
        builder.touched.clear();
        out.edges.push(edges);
        i += 1;
    }
    Ok(out)
}

/// What walking from some members through their chunks found.
#[derive(Default, Clone)]
struct Walk {
    /// Emitting members met, sorted.
    members: Vec<(u32, ConfigId)>,
    /// Configurations reaching the end of a chunk followed by a hole: `(hole, config)`.
    entries: Vec<(u32, ConfigId)>,
    /// Some configuration reached the end of the text at a token boundary.
    accepting: bool,
}

/// A hole set's flow into the following chunk: what its members reach there, and the hole
/// set they enter in the next hole.
#[derive(Clone)]
struct Flow {
    members: Vec<(u32, ConfigId)>,
    accepting: bool,
    next: Option<(u32, HoleSetId)>,
}

/// A hole set's flow through a chunk, by chunk text, kept across checks: a sampler changes one
/// position at a time, so most chunks of a canvas were seen in the previous check.
#[derive(Default)]
pub struct FlowCache {
    flows: HashMap<(HoleSetId, bool, Vec<u8>), ChunkFlow>,
}

/// [`Flow`] with places as offsets into the chunk and the next hole set without its hole.
struct ChunkFlow {
    members: Vec<(u32, ConfigId)>,
    accepting: bool,
    next: Option<HoleSetId>,
}

impl FlowCache {
    /// Entries kept before the cache is emptied (a cheap bound on its memory).
    const CAPACITY: usize = 1 << 14;

    fn get(&self, h: HoleSetId, last: bool, chunk: &[u8]) -> Option<&ChunkFlow> {
        // Borrowed lookup: hashbrown's Equivalent lets a (h, last, &[u8]) find the key.
        self.flows.get(&FlowKey(h, last, chunk))
    }

    fn insert(&mut self, h: HoleSetId, last: bool, chunk: Vec<u8>, flow: ChunkFlow) {
        if self.flows.len() >= Self::CAPACITY {
            self.flows.clear();
        }
        self.flows.insert((h, last, chunk), flow);
    }
}

/// A borrowed form of the cache key.
#[derive(Hash)]
struct FlowKey<'a>(HoleSetId, bool, &'a [u8]);

impl hashbrown::Equivalent<(HoleSetId, bool, Vec<u8>)> for FlowKey<'_> {
    fn equivalent(&self, key: &(HoleSetId, bool, Vec<u8>)) -> bool {
        self.0 == key.0 && self.1 == key.1 && self.2 == &key.2[..]
    }
}

/// The targets of terminal `t`, noting `t` as touched on first use.
fn touch<'a>(
    targets: &'a mut [Targets],
    touched: &mut Vec<TerminalId>,
    t: TerminalId,
) -> &'a mut Targets {
    let e = &mut targets[t.index()];
    if !e.touched {
        e.touched = true;
        touched.push(t);
        e.seeds.terminal = t;
    }
    e
}

/// The emission targets of a set of members, by terminal.
type MovesByTerminal = Vec<FlowMove>;

/// What a hole set's flow emits for one terminal: the targets, and whether some of those
/// lexemes end past the chunk's first place. A lexeme that ends right where the chunk begins
/// lies wholly in the hole, so it costs what a lexeme emitted in the hole costs.
struct FlowMove {
    terminal: TerminalId,
    in_chunk: bool,
    targets: Vec<(u32, ConfigId)>,
}

struct Builder<'a, 't> {
    lx: &'a Lexicon,
    table: &'a mut ConfigTable,
    places: &'a Places<'t>,
    walks: HashMap<(u32, ConfigId), Walk>,
    flows: HashMap<(u32, HoleSetId), Flow>,
    cache: &'a mut FlowCache,
    flow_moves: HashMap<(u32, HoleSetId), std::rc::Rc<MovesByTerminal>>,
    /// The targets of the kernel being expanded, by terminal, and the terminals that have any
    /// (sorted by [`Builder::moves`]); buffers reused from kernel to kernel.
    targets: Vec<Targets>,
    touched: Vec<TerminalId>,
}

/// The targets of one terminal's move: whether only a hole set emitted it, chunk and hole
/// members.
#[derive(Default)]
struct Targets {
    touched: bool,
    from_chunk: bool,
    seeds: Seeds,
}

/// Where a move lands before its closure: chunk members and hole members, each sorted and
/// deduplicated.
///
/// A hole member whose flow emits the terminal contributes its flow's targets; those are many
/// (a hole set holds hundreds of configurations), so the seeds name the hole member instead
/// (`flows`), and the targets are looked up only when the closure is computed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Seeds {
    terminal: TerminalId,
    chunk: Vec<(u32, ConfigId)>,
    holes: Vec<(u32, HoleSetId)>,
    flows: Vec<(u32, HoleSetId)>,
}

impl Seeds {
    fn normalize(&mut self) {
        self.chunk.sort_unstable();
        self.chunk.dedup();
        self.holes.sort_unstable();
        self.holes.dedup();
        self.flows.sort_unstable();
        self.flows.dedup();
    }
}

impl Targets {
    /// Empties the targets, keeping their buffers for the next kernel.
    fn clear(&mut self) {
        self.touched = false;
        self.from_chunk = false;
        self.seeds.chunk.clear();
        self.seeds.holes.clear();
        self.seeds.flows.clear();
    }
}

impl Builder<'_, '_> {
    /// The labelled moves of a kernel: for each terminal (listed in `touched`, sorted), the
    /// seeds of its target in `targets`, and whether only a hole set emitted it.
    fn moves(&mut self, k: &Kernel) -> Result<(), TooLarge> {
        for &(place, c) in &k.chunk {
            for &(l, n) in self.table.emits(self.lx, c)? {
                if let Lexeme::Terminal(t) = l {
                    let e = touch(&mut self.targets, &mut self.touched, t);
                    e.from_chunk = true;
                    e.seeds.chunk.push((place, n));
                }
            }
        }
        for &(hole, h) in &k.holes {
            for &(t, h2) in self.table.hole_moves(self.lx, h)? {
                touch(&mut self.targets, &mut self.touched, t)
                    .seeds
                    .holes
                    .push((hole, h2));
            }
            let flow_moves = self.flow_moves(hole, h)?;
            for m in flow_moves.iter() {
                let e = touch(&mut self.targets, &mut self.touched, m.terminal);
                e.from_chunk |= m.in_chunk;
                e.seeds.flows.push((hole, h));
            }
        }
        self.touched.sort_unstable();
        Ok(())
    }

    /// The closure of a move's seeds, with flow references replaced by their targets.
    fn closure_of(&mut self, seeds: &Seeds) -> Result<Kernel, TooLarge> {
        if seeds.flows.is_empty() {
            return self.closure(&seeds.chunk, &seeds.holes);
        }
        let mut chunk = seeds.chunk.clone();
        for &(hole, h) in &seeds.flows {
            let moves = self.flow_moves(hole, h)?;
            if let Ok(i) = moves.binary_search_by_key(&seeds.terminal, |m| m.terminal) {
                chunk.extend_from_slice(&moves[i].targets);
            }
        }
        chunk.sort_unstable();
        chunk.dedup();
        self.closure(&chunk, &seeds.holes)
    }

    /// The ε-closure (bytes and skipped tokens) of chunk members and hole members, as a kernel.
    fn closure(
        &mut self,
        chunk_seeds: &[(u32, ConfigId)],
        hole_seeds: &[(u32, HoleSetId)],
    ) -> Result<Kernel, TooLarge> {
        let mut members: Vec<(u32, ConfigId)> = Vec::new();
        let mut entries: Vec<(u32, ConfigId)> = Vec::new();
        let mut accepting = false;
        for &(p, c) in chunk_seeds {
            let w = self.walk(p, c)?;
            members.extend_from_slice(&w.members);
            entries.extend_from_slice(&w.entries);
            accepting |= w.accepting;
        }
        let mut holes = hole_seeds.to_vec();
        entries.sort_unstable();
        entries.dedup();
        for group in entries.chunk_by(|a, b| a.0 == b.0) {
            let configs: Vec<ConfigId> = group.iter().map(|&(_, c)| c).collect();
            holes.push((group[0].0, self.table.hole_closure(self.lx, &configs)?));
        }
        // Follow every hole member's flow, transitively.
        let mut i = 0;
        while i < holes.len() {
            let (k, h) = holes[i];
            let flow = self.flow(k, h)?;
            accepting |= flow.accepting;
            if let Some(next) = flow.next {
                if !holes.contains(&next) {
                    holes.push(next);
                }
            }
            i += 1;
        }
        holes.sort_unstable();
        holes.dedup();
        members.sort_unstable();
        members.dedup();
        // A flow of hole k holds places of chunk k + 1 only, so a member in chunk c can only be
        // implied by the sets of hole c - 1 (a run of `holes`, which is sorted).
        let places = self.places;
        let flows = &self.flows;
        let implied = |m: &(u32, ConfigId)| {
            let c = places.chunk_of(m.0) as u32;
            if c == 0 {
                return false;
            }
            let from = holes.partition_point(|&(k, _)| k < c - 1);
            holes[from..]
                .iter()
                .take_while(|&&(k, _)| k == c - 1)
                .any(|kh| flows[kh].members.binary_search(m).is_ok())
        };
        let chunk = members.into_iter().filter(|m| !implied(m)).collect();
        Ok(Kernel {
            holes: holes.into_iter().collect(),
            chunk,
            accepting,
        })
    }

    /// What the members of hole set `h` in hole `k` reach in chunk `k + 1`.
    fn flow(&mut self, k: u32, h: HoleSetId) -> Result<&Flow, TooLarge> {
        if !self.flows.contains_key(&(k, h)) {
            let chunk = k as usize + 1;
            let base = self.places.base[chunk];
            let last = chunk + 1 == self.places.text.chunks.len();
            let bytes = &self.places.text.chunks[chunk];
            if let Some(cached) = self.cache.get(h, last, bytes) {
                let flow = Flow {
                    members: cached.members.iter().map(|&(o, c)| (base + o, c)).collect(),
                    accepting: cached.accepting,
                    next: cached.next.map(|h2| (chunk as u32, h2)),
                };
                self.flows.insert((k, h), flow);
                return Ok(&self.flows[&(k, h)]);
            }
            let mut walk = Walk::default();
            for i in 0..self.table.hole_set(h).len() {
                let c = self.table.hole_set(h)[i];
                self.walk_chunk(chunk, base, c, &mut walk)?;
            }
            walk.members.sort_unstable();
            walk.members.dedup();
            let configs: Vec<ConfigId> = walk.entries.iter().map(|&(_, c)| c).collect();
            let next = if configs.is_empty() {
                None
            } else {
                Some((chunk as u32, self.table.hole_closure(self.lx, &configs)?))
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
            self.flows.insert((k, h), flow);
        }
        Ok(&self.flows[&(k, h)])
    }

    /// The emission targets of the members of `flow(k, h)`, by terminal.
    fn flow_moves(
        &mut self,
        k: u32,
        h: HoleSetId,
    ) -> Result<std::rc::Rc<MovesByTerminal>, TooLarge> {
        if let Some(m) = self.flow_moves.get(&(k, h)) {
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
        let moves = std::rc::Rc::new(moves);
        self.flow_moves.insert((k, h), moves.clone());
        Ok(moves)
    }

    /// The walk from one member through its chunk, memoized.
    fn walk(&mut self, p: u32, c: ConfigId) -> Result<&Walk, TooLarge> {
        if !self.walks.contains_key(&(p, c)) {
            let mut walk = Walk::default();
            self.walk_chunk(self.places.chunk_of(p), p, c, &mut walk)?;
            walk.members.sort_unstable();
            walk.members.dedup();
            self.walks.insert((p, c), walk);
        }
        Ok(&self.walks[&(p, c)])
    }

    /// Walks configuration `c` from place `p` to the end of chunk `k` (or its death), recording
    /// emitting members, configurations entering hole `k`, and acceptance at the text's end.
    /// The walk advances a frontier of configurations place by place, so paths that meet again
    /// are merged.
    fn walk_chunk(
        &mut self,
        k: usize,
        p: u32,
        c: ConfigId,
        walk: &mut Walk,
    ) -> Result<(), TooLarge> {
        let text = self.places.text;
        let base = self.places.base[k];
        let end = base + text.chunks[k].len() as u32;
        let mut frontier: SmallVec<[ConfigId; 4]> = SmallVec::new();
        frontier.push(c);
        let mut place = p;
        loop {
            // Skipped tokens end at this place: their boundary configurations join the frontier.
            let mut i = 0;
            while i < frontier.len() {
                let c = frontier[i];
                let mut emits_terminal = false;
                for &(l, next) in self.table.emits(self.lx, c)? {
                    match l {
                        Lexeme::Skip if !frontier.contains(&next) => frontier.push(next),
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
                if n != DEAD_CONFIG && !next.contains(&n) {
                    next.push(n);
                }
            }
            if next.is_empty() {
                return Ok(());
            }
            frontier = next;
            place += 1;
        }
    }
}
