//! From text with holes to a nondeterministic automaton over lexemes: the one the search reads.
//!
//! The minimal DFA ([`super::subset`], [`super::minimize`]) is the wrong shape for the search.
//! After a hole, chunk text `w` makes the language look like `Σ*·lex(w)`, and a DFA for that
//! must remember which prefix of `lex(w)` the last lexemes matched (as in string matching): a
//! state per lexeme of `w`, each with an edge for every terminal. On a C++ canvas with one hole
//! (73 terminals) that is about 4,500 edges, and the search's items grow with them. The search
//! does not need determinism, and the NFA underneath has a few hundred edges.
//!
//! States: a start, an accepting end, *members* `(place, config)` whose token can end there, and
//! *hole members* `(hole, hole set)`. Bytes and skipped tokens are ε-moves. Most are removed:
//! - a lexeme leads to the walk closure of the configuration after it (the members and hole
//!   members that the walk through the chunk reaches, and the end where the text may end);
//! - a hole member's ε-moves into the chunk after it (its flow: many configurations, few
//!   distinct lexemes) are folded into its own edges and acceptance.
//!
//! The start folds in the edges of the start configuration's closure. One kind of ε-move stays
//! an ε-edge, which the search follows: from a hole member to the hole member its flow enters
//! in the next hole (the hole opened a comment or a string that runs through the chunk).
//! Folding it would copy every later hole's edges into every earlier one: quadratic in the
//! holes.
//!
//! Edge costs are those of the DFA: a lexeme emitted in a hole, or at the first place of the
//! chunk after one (so it lies wholly in the hole), costs its shortest length; a lexeme that
//! ends in chunk text is free.
//!
//! A hole member's edges depend only on its hole set and the chunk after the hole, so they are
//! kept across checks ([`NfaCaches`]): a sampler changes one position at a time, and the
//! chunks around the other holes stay as they were.
//!
//! A hole of exactly one token ([`HoleKind::Token`]) has *token members* `(hole, entry set)`:
//! the configurations entering the hole, unclosed. Their edges are the union of the paths of
//! every vocabulary token from those configurations ([`super::tokens`]): a path's terminals
//! form a chain (through *path members*, one per terminal after the first) into the walk
//! closure of its exit configuration at the first place of the next chunk; a path that
//! completes no terminal is an ε-edge there. A hole that may also stay empty
//! ([`HoleKind::TokenOrNone`]) adds ε-edges for its entry configurations unchanged.
//!
//! For a position's mask one hole is *marked* ([`OpenHole::Marked`]): its paths form a trie
//! (one state per terminal sequence), and each path is listed with its last state and the
//! ε-edges from there into the closure after the token. A path is taken by some accepted word
//! iff one of those ε-edges is ([`crate::intersect::Searcher::useful_states`]): two paths with
//! the same terminals that reach the same state are the same to the grammar. (A private end
//! state per path told them apart too, but every item ending before the hole was copied into
//! each: most of the search's work in the middle of a run.)

use std::sync::Arc;

use hashbrown::HashMap;

use super::chunk_cache::ChunkCache;
use super::config::{ConfigId, ConfigTable, HoleSetId, TooLarge};
use super::path_graph::TokenPaths;
use super::token_caches::TokenCaches;
use super::walker::{FlowCache, Places, WalkMemo, Walker};
use crate::canvas::{HoleKind, HoleyText};
use crate::deadline::Deadline;
use crate::grammar::TerminalId;
use crate::intersect::{Edge, LexemeDfa};
use crate::lexicon::{Lexeme, Lexicon};

/// A state of the automaton before numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Node {
    Start,
    End,
    Member(u32, ConfigId),
    Hole(u32, HoleSetId),
    /// A hole of one token with its entry set: the root of its path graph.
    Token(u32, HoleSetId),
    /// Another state of the path graph of `Token(hole, set)`.
    PathStep {
        hole: u32,
        set: HoleSetId,
        node: u32,
    },
}

/// An edge before its target is numbered: `(terminal, cost, target)`.
type Pending = (TerminalId, u32, Node);

/// A state as seen from a hole: a member of the chunk after the hole (by offset), a member of
/// the same hole or of the next one (by hole set), or the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Near {
    Member(u32, ConfigId),
    SameHole(HoleSetId),
    NextHole(HoleSetId),
    End,
}

/// A hole member's edges (its flow's folded in), whether it accepts, and the hole set its flow
/// enters in the next hole: the same wherever the same chunk follows the hole.
struct HoleOut {
    edges: Vec<(TerminalId, u32, Near)>,
    accepting: bool,
    next: Option<HoleSetId>,
}

/// What the NFA builder keeps between checks: hole members' edges by hole set and the chunk
/// after the hole, and its per-check tables (emptied, not freed, so they are allocated once).
pub struct NfaCaches {
    outs: ChunkCache<Arc<HoleOut>>,
    walks: WalkMemo,
    ids: HashMap<Node, u32>,
    nodes: Vec<Node>,
    reach: HashMap<(u32, ConfigId), Arc<[Node]>>,
}

impl Default for NfaCaches {
    fn default() -> Self {
        NfaCaches {
            outs: ChunkCache::new(Self::CAPACITY, Self::KEY_BYTES),
            walks: WalkMemo::default(),
            ids: HashMap::new(),
            nodes: Vec::new(),
            reach: HashMap::new(),
        }
    }
}

impl NfaCaches {
    /// Hole edges kept before that cache is emptied, and bytes of chunk text their keys may
    /// hold (bounds on its memory).
    const CAPACITY: usize = 1 << 13;
    const KEY_BYTES: usize = 32 << 20;

    /// Forgets the hole edges kept by chunk text.
    pub fn forget_chunks(&mut self) {
        self.outs.clear();
    }

    pub fn chunk_entries(&self) -> usize {
        self.outs.len()
    }

    pub fn chunk_bytes(&self) -> usize {
        self.outs.key_bytes()
    }
}

/// Where one path through the marked hole leaves it: path `path` of the union of token paths
/// from entry set `set` ends at trie state `from`, and its ε-edges go from there into the
/// states `to` after the token. A path is taken by some accepted word iff one of those
/// ε-edges is ([`crate::intersect::Useful::epsilons`]); trimming may drop `from` (`None`) or
/// some of `to` (no accepted word goes there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathMark {
    pub set: HoleSetId,
    pub path: u32,
    pub from: Option<u32>,
    pub to: Vec<u32>,
}

/// What to do with one hole of one token (the open position of a mask).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OpenHole {
    /// No hole is open.
    None,
    /// Every path of a token through the hole is told apart by its last state (a state of the
    /// trie of the paths' terminals) and its ε-edges after the token, listed as a
    /// [`PathMark`].
    Marked(u32),
    /// The exploration stops at the hole: only its entry sets that the start reaches are
    /// found, without building its token paths or anything after it (what a position's
    /// tokens are grouped by when the automaton with its paths would be too large).
    Probed(u32),
}

/// What [`build`] returns.
pub struct Built {
    pub dfa: LexemeDfa,
    /// Where the marked hole's paths leave it ([`OpenHole::Marked`]).
    pub marks: Vec<PathMark>,
    /// The open hole's entry sets met ([`OpenHole::Marked`] and [`OpenHole::Probed`]).
    pub entry_sets: Vec<HoleSetId>,
}

/// Builds the lexeme NFA of `text`, whose holes are filled as `kinds` says (all
/// [`HoleKind::Any`] when empty; the others need `tokens`), with at most `max_states` states
/// before trimming; `open` says what to do with the open hole.
#[allow(clippy::too_many_arguments)]
pub fn build(
    lx: &Lexicon,
    table: &mut ConfigTable,
    text: &HoleyText,
    kinds: &[HoleKind],
    tokens: Option<&mut TokenCaches>,
    open: OpenHole,
    min_cost: &[u32],
    max_states: usize,
    flows: &mut FlowCache,
    caches: &mut NfaCaches,
    deadline: &Deadline,
) -> Result<Built, TooLarge> {
    let (marked, probe) = match open {
        OpenHole::None => (None, false),
        OpenHole::Marked(k) => (Some(k), false),
        OpenHole::Probed(k) => (Some(k), true),
    };
    let places = Places::new(text, kinds);
    let NfaCaches {
        outs,
        walks,
        ids,
        nodes,
        reach,
    } = caches;
    ids.clear();
    nodes.clear();
    reach.clear();
    let mut b = NfaBuilder {
        w: Walker::new(lx, table, &places, walks, flows),
        min_cost,
        ids,
        nodes,
        reach,
        outs,
        tokens,
        max_states,
        marked,
        probe,
        entry_sets: Vec::new(),
        marks: Vec::new(),
    };
    b.id(Node::Start)?;
    let mut edges = Vec::new();
    let mut epsilons = Vec::new();
    let mut accepting = Vec::new();
    let mut out = Vec::new();
    let mut eps = Vec::new();
    let mut i = 0;
    while i < b.nodes.len() {
        if i & 0xff == 0 && deadline.expired() {
            return Err(TooLarge);
        }
        out.clear();
        eps.clear();
        if b.out_edges(b.nodes[i], i as u32, &mut out, &mut eps)? {
            accepting.push(i as u32);
        }
        for &target in &eps {
            epsilons.push((i as u32, b.id(target)?));
        }
        for &(terminal, cost, target) in &out {
            let to = b.id(target)?;
            edges.push(Edge {
                from: i as u32,
                terminal,
                to,
                cost,
            });
        }
        i += 1;
    }
    let marks = std::mem::take(&mut b.marks);
    let entry_sets = std::mem::take(&mut b.entry_sets);
    // A mask's automaton: its states that read alike from there on are merged, the ends of
    // the open position's paths (which tell its tokens apart) and the start kept apart.
    let protected = marked.map(|_| {
        let mut protected = vec![false; b.nodes.len()];
        protected[0] = true;
        marks.iter().for_each(|m| protected[m.2 as usize] = true);
        protected
    });
    let (dfa, new_id) = trim(
        b.nodes.len(),
        &accepting,
        edges,
        epsilons,
        protected.as_deref(),
    );
    let live = |s: u32| Some(new_id[s as usize]).filter(|&s| s != u32::MAX);
    let marks = marks
        .into_iter()
        .map(|(set, path, from, to)| PathMark {
            set,
            path,
            from: live(from),
            to: to.into_iter().filter_map(live).collect(),
        })
        .collect();
    Ok(Built {
        dfa,
        marks,
        entry_sets,
    })
}

struct NfaBuilder<'a, 't> {
    w: Walker<'a, 't>,
    min_cost: &'a [u32],
    ids: &'a mut HashMap<Node, u32>,
    nodes: &'a mut Vec<Node>,
    /// The walk closure after an emission at `(place, config)`.
    reach: &'a mut HashMap<(u32, ConfigId), Arc<[Node]>>,
    outs: &'a mut ChunkCache<Arc<HoleOut>>,
    tokens: Option<&'a mut TokenCaches>,
    max_states: usize,
    /// The hole whose paths are listed, and where each leaves it: `(set, path, from, to)`.
    marked: Option<u32>,
    /// Whether to stop at the marked hole ([`OpenHole::Probed`]).
    probe: bool,
    /// The marked hole's entry sets met so far.
    entry_sets: Vec<HoleSetId>,
    marks: Vec<(HoleSetId, u32, u32, Vec<u32>)>,
}

impl NfaBuilder<'_, '_> {
    fn id(&mut self, node: Node) -> Result<u32, TooLarge> {
        let node = self.canonical(node)?;
        if let Some(&id) = self.ids.get(&node) {
            return Ok(id);
        }
        if self.nodes.len() >= self.max_states {
            return Err(TooLarge);
        }
        let id = self.nodes.len() as u32;
        self.ids.insert(node, id);
        self.nodes.push(node);
        Ok(id)
    }

    /// `node`, with the entry set of a token member replaced by its representative (a set
    /// from which every text token takes the same paths: [`TokenCaches::representative`]), so
    /// that the members entered from interchangeable sets are one state with one graph of
    /// paths. Not for a hole that may stay empty, whose entry configurations are edges too.
    fn canonical(&mut self, node: Node) -> Result<Node, TooLarge> {
        match node {
            Node::Token(k, set) if self.w.places.kind(k) == HoleKind::Token => {
                let tokens = self.tokens.as_deref_mut().ok_or(TooLarge)?;
                let rep = tokens.representative(self.w.lx, self.w.table, set)?;
                Ok(Node::Token(k, rep))
            }
            other => Ok(other),
        }
    }

    /// Appends the edges of `node` (numbered `id`) to `out` and its ε-edges to `eps`; returns
    /// whether it accepts.
    fn out_edges(
        &mut self,
        node: Node,
        id: u32,
        out: &mut Vec<Pending>,
        eps: &mut Vec<Node>,
    ) -> Result<bool, TooLarge> {
        match node {
            Node::End => Ok(true),
            Node::Member(place, c) => {
                self.member_edges(place, c, out)?;
                Ok(false)
            }
            Node::Hole(k, h) => {
                let hole = self.hole_out(k, h)?;
                let base = self.w.places.base[k as usize + 1];
                let next_kind = self.w.places.kind(k + 1);
                let node = |near| match near {
                    Near::Member(offset, c) => Node::Member(base + offset, c),
                    Near::SameHole(h2) => Node::Hole(k, h2),
                    Near::NextHole(h2) => hole_node(next_kind, k + 1, h2),
                    Near::End => Node::End,
                };
                out.extend(hole.edges.iter().map(|&(t, cost, n)| (t, cost, node(n))));
                eps.extend(hole.next.map(|h2| hole_node(next_kind, k + 1, h2)));
                Ok(hole.accepting)
            }
            Node::Token(k, set) => {
                if self.marked == Some(k) {
                    self.entry_sets.push(set);
                    if self.probe {
                        return Ok(false);
                    }
                }
                let place = self.w.places.base[k as usize + 1];
                if self.w.places.kind(k) == HoleKind::TokenOrNone {
                    for c in self.w.table.hole_set(set).to_vec() {
                        eps.extend(self.closure(place, c)?.iter().copied());
                    }
                }
                self.path_node_edges(k, set, None, id, out, eps)?;
                Ok(false)
            }
            Node::PathStep { hole, set, node } => {
                self.path_node_edges(hole, set, Some(node), id, out, eps)?;
                Ok(false)
            }
            // The start folds in the edges of its closure, and keeps the ε-edges of its hole
            // members.
            Node::Start => {
                let start = self.w.table.start();
                let mut accepting = false;
                for &n in self.closure(0, start)?.iter() {
                    accepting |= self.out_edges(n, id, out, eps)?;
                }
                Ok(accepting)
            }
        }
    }

    /// The union of the paths of every token (every byte, in a hole of one byte) from the
    /// configurations of `set` entering hole `k`.
    fn paths(&mut self, k: u32, set: HoleSetId) -> Result<Arc<TokenPaths>, TooLarge> {
        // A hole of one token without a vocabulary cannot be built: the checker never asks.
        let tokens = self.tokens.as_deref_mut().ok_or(TooLarge)?;
        if self.w.places.kind(k) == HoleKind::Byte {
            return tokens.byte_union(self.w.lx, self.w.table, set);
        }
        tokens.union(self.w.lx, self.w.table, set)
    }

    /// The edges of one state of a token member's path graph (`None`: its root), numbered
    /// `id`: the minimal graph's, whose exits are ε-edges into the closure after the token; in
    /// the marked hole the trie's, where one state is one terminal sequence, so a path is its
    /// state and its ε-edges (listed in the marks).
    fn path_node_edges(
        &mut self,
        k: u32,
        set: HoleSetId,
        node: Option<u32>,
        id: u32,
        out: &mut Vec<Pending>,
        eps: &mut Vec<Node>,
    ) -> Result<(), TooLarge> {
        let paths = self.paths(k, set)?;
        let marked = self.marked == Some(k);
        let graph = if marked { &paths.trie } else { &paths.dag };
        let n = node.unwrap_or(graph.root);
        let here = &graph.nodes[n as usize];
        for &(t, child) in &here.edges {
            let child = Node::PathStep {
                hole: k,
                set,
                node: child,
            };
            out.push((t, 0, child));
        }
        let place = self.w.places.base[k as usize + 1];
        for &(exit, path) in &here.exits {
            let after = self.closure(place, exit)?;
            if marked {
                let to = after
                    .iter()
                    .map(|&n| self.id(n))
                    .collect::<Result<_, _>>()?;
                self.marks.push((set, path, id, to));
            }
            eps.extend(after.iter().copied());
        }
        Ok(())
    }

    /// The price of a lexeme that ends at `place`: free in chunk text, its shortest length
    /// where it lies wholly in a hole.
    fn cost(&self, place: u32, t: TerminalId) -> u32 {
        if self.w.places.is_entry(place) {
            self.min_cost[t.index()]
        } else {
            0
        }
    }

    fn member_edges(
        &mut self,
        place: u32,
        c: ConfigId,
        out: &mut Vec<Pending>,
    ) -> Result<(), TooLarge> {
        let emits: Vec<(Lexeme, ConfigId)> = self.w.table.emits(self.w.lx, c)?.to_vec();
        for (l, next) in emits {
            if let Lexeme::Terminal(t) = l {
                let cost = self.cost(place, t);
                for &n in self.closure(place, next)?.iter() {
                    out.push((t, cost, n));
                }
            }
        }
        Ok(())
    }

    /// A hole member's edges: its lexemes inside the hole and its flow's lexemes in the chunk
    /// after it; its acceptance, and the next hole's set its flow enters.
    fn hole_out(&mut self, k: u32, h: HoleSetId) -> Result<Arc<HoleOut>, TooLarge> {
        let chunk = k as usize + 1;
        let text = self.w.places.text;
        let last = self.w.places.follow(chunk);
        if let Some(hole) = self.outs.get(h, last, &text.chunks[chunk]) {
            return Ok(hole.clone());
        }
        let base = self.w.places.base[chunk];
        let near = |n: Node| match n {
            Node::Member(place, c) => Near::Member(place - base, c),
            Node::Hole(k2, h2) if k2 == k => Near::SameHole(h2),
            Node::Hole(_, h2) | Node::Token(_, h2) => Near::NextHole(h2),
            Node::End | Node::Start | Node::PathStep { .. } => Near::End,
        };
        let mut edges = Vec::new();
        for &(t, h2) in self.w.table.hole_moves(self.w.lx, h)? {
            edges.push((t, self.min_cost[t.index()], Near::SameHole(h2)));
        }
        let moves = self.w.flow_moves(k, h)?;
        for m in moves.iter() {
            for &(place, next) in &m.targets {
                let cost = self.cost(place, m.terminal);
                for &n in self.closure(place, next)?.iter() {
                    edges.push((m.terminal, cost, near(n)));
                }
            }
        }
        let flow = self.w.flow(k, h)?;
        let accepting = flow.accepting;
        let next = flow.next.map(|(_, h2)| h2);
        edges.sort_unstable_by_key(|&(t, cost, n)| (t, n, cost));
        edges.dedup_by_key(|&mut (t, _, n)| (t, n));
        let hole = Arc::new(HoleOut {
            edges,
            accepting,
            next,
        });
        self.outs
            .insert(h, last, text.chunks[chunk].clone(), hole.clone());
        Ok(hole)
    }

    /// The states that configuration `c` at `place` reaches without emitting a terminal.
    fn closure(&mut self, place: u32, c: ConfigId) -> Result<Arc<[Node]>, TooLarge> {
        if let Some(nodes) = self.reach.get(&(place, c)) {
            return Ok(nodes.clone());
        }
        let walk = self.w.walk(place, c)?;
        let mut nodes: Vec<Node> = walk
            .members
            .iter()
            .map(|&(p, c)| Node::Member(p, c))
            .collect();
        let accepting = walk.accepting;
        let entries = walk.entries.clone();
        let holes = self.w.hole_members(entries)?;
        let places = self.w.places;
        nodes.extend(
            holes
                .into_iter()
                .map(|(k, h)| hole_node(places.kind(k), k, h)),
        );
        if accepting {
            nodes.push(Node::End);
        }
        let nodes: Arc<[Node]> = nodes.into();
        self.reach.insert((place, c), nodes.clone());
        Ok(nodes)
    }
}

/// The member of hole `k` for set `h`: a hole member, or a token member for a hole of one
/// token.
fn hole_node(kind: HoleKind, k: u32, h: HoleSetId) -> Node {
    match kind {
        HoleKind::Any => Node::Hole(k, h),
        HoleKind::Token | HoleKind::TokenOrNone | HoleKind::Byte => Node::Token(k, h),
    }
}

/// Drops the states that reach no accepting state (and the edges into them), renumbers the
/// rest with the start first, and removes duplicate edges (keeping the cheapest). With
/// `protected` (a flag per state, the start's set), also merges the states that accept the
/// same words from there on, the protected ones apart ([`super::merge`]). Also returns each
/// old state's new number (`u32::MAX` if dropped).
fn trim(
    n: usize,
    accepting: &[u32],
    mut edges: Vec<Edge>,
    mut epsilons: Vec<(u32, u32)>,
    protected: Option<&[bool]>,
) -> (LexemeDfa, Vec<u32>) {
    let mut marked = vec![false; n];
    for &q in accepting {
        marked[q as usize] = true;
    }
    let arcs = edges
        .iter()
        .map(|e| (e.from, e.to))
        .chain(epsilons.iter().copied());
    let live = super::minimize::coreachable(marked, arcs);
    if !live[0] {
        let empty = LexemeDfa::new(1, 0, &[], Vec::new()).expect("one state is valid");
        return (empty, vec![u32::MAX; n]);
    }
    let mut new_id = vec![u32::MAX; n];
    let mut count = 0u32;
    if let Some(protected) = protected {
        let mut accepts = vec![false; n];
        accepting.iter().for_each(|&q| accepts[q as usize] = true);
        new_id = super::merge::classes(n, &live, &accepts, protected, &edges, &epsilons);
        count = new_id
            .iter()
            .filter(|&&c| c != u32::MAX)
            .max()
            .map_or(0, |&c| c + 1);
    } else {
        for q in 0..n {
            if live[q] {
                new_id[q] = count;
                count += 1;
            }
        }
    }
    edges.retain(|e| live[e.from as usize] && live[e.to as usize]);
    for e in &mut edges {
        e.from = new_id[e.from as usize];
        e.to = new_id[e.to as usize];
    }
    edges.sort_unstable_by_key(|e| (e.from, e.terminal, e.to, e.cost));
    edges.dedup_by_key(|e| (e.from, e.terminal, e.to));
    epsilons.retain(|&(from, to)| live[from as usize] && live[to as usize]);
    for (from, to) in &mut epsilons {
        *from = new_id[*from as usize];
        *to = new_id[*to as usize];
    }
    // Merged states make ε-loops, which say nothing.
    epsilons.retain(|&(from, to)| from != to);
    epsilons.sort_unstable();
    epsilons.dedup();
    let mut accepting: Vec<u32> = accepting.iter().map(|&q| new_id[q as usize]).collect();
    accepting.sort_unstable();
    accepting.dedup();
    let dfa = LexemeDfa::with_epsilons(count as usize, 0, &accepting, edges, &epsilons)
        .expect("states are in range by construction");
    (dfa, new_id)
}
