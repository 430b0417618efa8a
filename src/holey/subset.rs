//! From text with holes to one deterministic automaton over lexemes (the subset construction).
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
//!
//! Checks take the NFA route (`nfa`); this construction stays as the second route the tests
//! compare it with (`HoleyLexer::dfa`).
#![cfg_attr(not(test), allow(dead_code))]

use hashbrown::HashMap;
use smallvec::SmallVec;

use super::config::{ConfigId, ConfigTable, HoleSetId, TooLarge};
use super::walker::{FlowCache, Places, WalkMemo, Walker};
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

/// Determinizes the lexeme automaton of `text`, exploring at most `max_states` subsets.
pub fn determinize(
    lx: &Lexicon,
    table: &mut ConfigTable,
    text: &HoleyText,
    min_cost: &[u32],
    max_states: usize,
    cache: &mut FlowCache,
) -> Result<RawDfa, TooLarge> {
    let places = Places::new(text, &[]);
    let mut memo = WalkMemo::default();
    let mut builder = Subsets {
        w: Walker::new(lx, table, &places, &mut memo, cache),
        targets: (0..min_cost.len()).map(|_| Targets::default()).collect(),
        touched: Vec::new(),
    };
    let start = builder.w.table.start();
    let first = builder.closure(&[(0, start)], &[])?;
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

/// The subset construction's state: the walker, and the targets of the kernel being expanded, by
/// terminal, with the terminals that have any (sorted by [`Subsets::moves`]); buffers reused
/// from kernel to kernel.
struct Subsets<'a, 't> {
    w: Walker<'a, 't>,
    targets: Vec<Targets>,
    touched: Vec<TerminalId>,
}

impl Subsets<'_, '_> {
    /// The labelled moves of a kernel: for each terminal (listed in `touched`, sorted), the
    /// seeds of its target in `targets`, and whether only a hole set emitted it.
    fn moves(&mut self, k: &Kernel) -> Result<(), TooLarge> {
        for &(place, c) in &k.chunk {
            for &(l, n) in self.w.table.emits(self.w.lx, c)? {
                if let Lexeme::Terminal(t) = l {
                    let e = touch(&mut self.targets, &mut self.touched, t);
                    e.from_chunk = true;
                    e.seeds.chunk.push((place, n));
                }
            }
        }
        for &(hole, h) in &k.holes {
            for &(t, h2) in self.w.table.hole_moves(self.w.lx, h)? {
                touch(&mut self.targets, &mut self.touched, t)
                    .seeds
                    .holes
                    .push((hole, h2));
            }
            let flow_moves = self.w.flow_moves(hole, h)?;
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
            let moves = self.w.flow_moves(hole, h)?;
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
            let w = self.w.walk(p, c)?;
            members.extend_from_slice(&w.members);
            entries.extend_from_slice(&w.entries);
            accepting |= w.accepting;
        }
        let mut holes = hole_seeds.to_vec();
        holes.extend(self.w.hole_members(entries)?);
        // Follow every hole member's flow, transitively.
        let mut i = 0;
        while i < holes.len() {
            let (k, h) = holes[i];
            let flow = self.w.flow(k, h)?;
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
        let places = self.w.places;
        let walker = &self.w;
        let implied = |m: &(u32, ConfigId)| {
            let c = places.chunk_of(m.0) as u32;
            if c == 0 {
                return false;
            }
            let from = holes.partition_point(|&(k, _)| k < c - 1);
            holes[from..]
                .iter()
                .take_while(|&&(k, _)| k == c - 1)
                .any(|&(k, h)| walker.known_flow(k, h).members.binary_search(m).is_ok())
        };
        let chunk = members.into_iter().filter(|m| !implied(m)).collect();
        Ok(Kernel {
            holes: holes.into_iter().collect(),
            chunk,
            accepting,
        })
    }
}
