//! From text with holes to one deterministic automaton over lexemes.
//!
//! The nondeterministic automaton underneath has a state per (place, configuration): a place is
//! a byte offset in a chunk or one of the holes. Bytes move between places without emitting
//! anything (chunk bytes are fixed; a hole takes any bytes, summarized by its hole set), and a
//! configuration whose token can end emits a lexeme without moving. So the subset construction
//! treats bytes as ε-moves and lexemes as the alphabet.
//!
//! A subset is identified by its *kernel*: the members that can emit a terminal (chunk members
//! with winners, and hole sets) plus whether it accepts. Members that only pass bytes along
//! are left out: they have no moves of their own, and keeping them would make every subset as
//! long as the chunk it crosses.

use hashbrown::HashMap;
use smallvec::SmallVec;

use super::config::{ConfigId, ConfigTable, HoleSetId, TooLarge, DEAD_CONFIG};
use crate::canvas::HoleyText;
use crate::grammar::TerminalId;
use crate::lexicon::{Lexeme, Lexicon};

/// A subset state: emitting chunk members `(place, config)`, hole members `(hole, set)` (a
/// hole may hold several sets: their union is meant).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
struct Kernel {
    chunk: SmallVec<[(u32, ConfigId); 4]>,
    holes: SmallVec<[(u32, HoleSetId); 2]>,
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
) -> Result<RawDfa, TooLarge> {
    let places = Places::new(text);
    let mut builder = Builder {
        lx,
        table,
        places: &places,
        flows: HashMap::new(),
    };
    let first = builder.closure(vec![(0, builder.table.start())], Vec::new())?;
    let mut ids: HashMap<Kernel, u32> = HashMap::new();
    let mut kernels = vec![first.clone()];
    ids.insert(first, 0);
    let mut out = RawDfa {
        accepting: Vec::new(),
        edges: Vec::new(),
    };
    let mut i = 0;
    while i < kernels.len() {
        let kernel = kernels[i].clone();
        if std::env::var("LACUNA_DEBUG").is_ok() {
            eprintln!(
                "kernel {i}: {} chunk members, holes {:?}",
                kernel.chunk.len(),
                kernel
                    .holes
                    .iter()
                    .map(|&(k, h)| (k, h, builder.table.hole_set(h).len()))
                    .collect::<Vec<_>>()
            );
        }
        out.accepting.push(kernel.accepting);
        let mut edges = Vec::new();
        for (t, hole_involved, target) in builder.moves(&kernel)? {
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
            let cost = if hole_involved {
                min_cost[t.index()]
            } else {
                0
            };
            edges.push((t, cost, id));
        }
        out.edges.push(edges);
        i += 1;
    }
    Ok(out)
}

/// The targets of one terminal's move: whether a hole emitted it, chunk and hole members.
type Targets = (bool, Vec<(u32, ConfigId)>, Vec<(u32, HoleSetId)>);

struct Builder<'a, 't> {
    lx: &'a Lexicon,
    table: &'a mut ConfigTable,
    places: &'a Places<'t>,
    flows: HashMap<(u32, HoleSetId), Flow>,
}

impl Builder<'_, '_> {
    /// The labelled moves of a kernel: for each terminal, whether a hole set emitted it, and the
    /// closure of the targets.
    fn moves(&mut self, k: &Kernel) -> Result<Vec<(TerminalId, bool, Kernel)>, TooLarge> {
        let mut by_terminal: HashMap<TerminalId, Targets> = HashMap::new();
        for &(place, c) in &k.chunk {
            for &(l, n) in self.table.emits(self.lx, c)? {
                if let Lexeme::Terminal(t) = l {
                    by_terminal.entry(t).or_default().1.push((place, n));
                }
            }
        }
        for &(hole, h) in &k.holes {
            for &(t, h2) in self.table.hole_moves(self.lx, h)? {
                let e = by_terminal.entry(t).or_default();
                e.0 = true;
                e.2.push((hole, h2));
            }
        }
        let mut out = Vec::with_capacity(by_terminal.len());
        for (t, (hole, chunk, holes)) in by_terminal {
            let chunk_only = !chunk.is_empty();
            out.push((t, hole && !chunk_only, self.closure(chunk, holes)?));
        }
        out.sort_unstable_by_key(|(t, _, _)| *t);
        Ok(out)
    }

    /// The ε-closure (bytes and skipped tokens) of chunk members and hole members, as a kernel.
    /// Chunk members walk forward through their chunk; whatever reaches the chunk's end enters
    /// the next hole; a hole member's flow through the chunks after it is memoized per check.
    fn closure(
        &mut self,
        chunk_seeds: Vec<(u32, ConfigId)>,
        hole_seeds: Vec<(u32, HoleSetId)>,
    ) -> Result<Kernel, TooLarge> {
        let mut kernel = Kernel::default();
        let mut walk = Walk::default();
        for (p, c) in chunk_seeds {
            self.walk_chunk(self.places.chunk_of(p), p, c, &mut walk)?;
        }
        let mut holes = hole_seeds;
        for (k, entry) in walk.entries.drain() {
            holes.push((k, self.table.hole_closure(self.lx, &entry)?));
        }
        kernel.chunk = walk.members;
        kernel.accepting = walk.accepting;
        // Follow every hole member's flow, transitively; each flow is computed once per check.
        let mut i = 0;
        while i < holes.len() {
            let (k, h) = holes[i];
            let flow = self.flow(k, h)?;
            kernel.chunk.extend_from_slice(&flow.members);
            kernel.accepting |= flow.accepting;
            if let Some(next) = flow.next {
                if !holes.contains(&next) {
                    holes.push(next);
                }
            }
            i += 1;
        }
        holes.sort_unstable();
        holes.dedup();
        kernel.holes = holes.into_iter().collect();
        kernel.chunk.sort_unstable();
        kernel.chunk.dedup();
        Ok(kernel)
    }

    /// What the members of hole set `h` in hole `k` reach in chunk `k + 1`: its emitting
    /// members, acceptance, and the hole set they enter in hole `k + 1`.
    fn flow(&mut self, k: u32, h: HoleSetId) -> Result<Flow, TooLarge> {
        if let Some(f) = self.flows.get(&(k, h)) {
            return Ok(f.clone());
        }
        let chunk = k as usize + 1;
        let base = self.places.base[chunk];
        let mut walk = Walk::default();
        for i in 0..self.table.hole_set(h).len() {
            let c = self.table.hole_set(h)[i];
            self.walk_chunk(chunk, base, c, &mut walk)?;
        }
        let next = match walk.entries.remove(&(chunk as u32)) {
            Some(entry) => Some((chunk as u32, self.table.hole_closure(self.lx, &entry)?)),
            None => None,
        };
        let flow = Flow {
            members: walk.members,
            accepting: walk.accepting,
            next,
        };
        self.flows.insert((k, h), flow.clone());
        Ok(flow)
    }

    /// Walks configuration `c` from place `p` to the end of chunk `k` (or its death), recording
    /// emitting members, configurations entering hole `k`, and acceptance at the text's end.
    fn walk_chunk(
        &mut self,
        k: usize,
        p: u32,
        c: ConfigId,
        walk: &mut Walk,
    ) -> Result<(), TooLarge> {
        let text = self.places.text;
        let end = self.places.base[k] + text.chunks[k].len() as u32;
        let mut stack = vec![(p, c)];
        while let Some((p, c)) = stack.pop() {
            if !walk.seen.insert((p, c)) {
                continue;
            }
            let mut emits_terminal = false;
            for &(l, next) in self.table.emits(self.lx, c)? {
                match l {
                    Lexeme::Skip => stack.push((p, next)),
                    Lexeme::Terminal(_) => emits_terminal = true,
                }
            }
            if emits_terminal {
                walk.members.push((p, c));
            }
            if p < end {
                let byte = text.chunks[k][(p - self.places.base[k]) as usize];
                let next = self.table.step(self.lx, c, self.lx.class_of(byte))?;
                if next != DEAD_CONFIG {
                    stack.push((p + 1, next));
                }
            } else if k + 1 < text.chunks.len() {
                walk.entries.entry(k as u32).or_default().push(c);
            } else if self.table.at_boundary(self.lx, c) {
                walk.accepting = true;
            }
        }
        Ok(())
    }
}

/// What a set of walks through chunks found.
#[derive(Default)]
struct Walk {
    seen: hashbrown::HashSet<(u32, ConfigId)>,
    members: SmallVec<[(u32, ConfigId); 4]>,
    /// Per hole: configurations entering it.
    entries: HashMap<u32, Vec<ConfigId>>,
    accepting: bool,
}

/// A hole set's flow into the following chunk.
#[derive(Clone)]
struct Flow {
    members: SmallVec<[(u32, ConfigId); 4]>,
    accepting: bool,
    next: Option<(u32, HoleSetId)>,
}
