//! What one vocabulary token does to the lexer: the walk of every token at once, over a trie.
//!
//! A masked position holds exactly one token of the vocabulary. Seen from the lexer, a token
//! entering with configuration `c` either dies, or leaves along one or more *paths*: the
//! terminals it completes inside itself, in order, and the configuration it leaves with (its
//! last lexeme may go on into the text after it). Two tokens with the same paths from a set of
//! entry configurations are interchangeable for every question about a position entered from
//! that set, so the vocabulary's 150k ids collapse into a few hundred to a few thousand
//! *groups* ([`TokenGroup`]).
//!
//! The walk reads a trie of the vocabulary's text tokens over the lexicon's byte classes
//! ([`ClassTrie`], built once per grammar and vocabulary: bytes in one class move every lexer
//! state alike, so tokens that differ only within classes share a trie path). Nodes are laid
//! out in preorder with a skip pointer past each subtree, so the walk is a loop over an array
//! that jumps past a subtree as soon as every path through it is dead (llguidance walks its
//! token trie the same way). The state at depth `d` is the set of paths after the first `d`
//! bytes; the set at a node that ends tokens is their effect.
//!
//! Emissions: a configuration that can end its token may emit between two bytes of the token.
//! An emission at the token's very start belongs to the text before it, and one at its very end
//! to the text after it (the canvas walk makes both), so only emissions strictly inside the
//! token are part of its paths.

use std::sync::Arc;

use hashbrown::HashMap;
use smallvec::SmallVec;

use super::config::{ConfigId, ConfigTable, TooLarge, DEAD_CONFIG};
use crate::grammar::TerminalId;
use crate::lexicon::{Lexeme, Lexicon};
use crate::vocab::{TokenId, Vocabulary};

/// The vocabulary's text tokens as a trie over byte classes, in preorder. See the
/// [module docs](self).
#[derive(Debug)]
pub struct ClassTrie {
    /// The class on the edge into node `i` (node 0 is the root).
    class: Vec<u16>,
    depth: Vec<u16>,
    /// The first node after node `i`'s subtree.
    next: Vec<u32>,
    /// Tokens ending at node `i`: `ids[ends[i]..ends[i + 1]]` (so every subtree's tokens are
    /// one range of `ids`, and a group's tokens a few runs of it).
    ends: Vec<u32>,
    ids: Arc<[TokenId]>,
}

impl ClassTrie {
    /// The trie of `vocab`'s text tokens under `lx`'s byte classes.
    pub fn new(lx: &Lexicon, vocab: &Vocabulary) -> ClassTrie {
        let mut keyed: Vec<(Vec<u16>, TokenId)> = vocab
            .text_ids()
            .map(|id| {
                let classes = vocab
                    .bytes(id)
                    .iter()
                    .map(|&b| lx.class_of(b) as u16)
                    .collect();
                (classes, id)
            })
            .collect();
        keyed.sort_unstable();
        let mut t = ClassTrie {
            class: vec![0],
            depth: vec![0],
            next: vec![0],
            ends: Vec::new(),
            ids: Arc::from(Vec::new()),
        };
        let mut ids: Vec<TokenId> = Vec::with_capacity(keyed.len());
        // `ends_at[i]`: tokens ending at node i, filled in id order below.
        let mut ends_at: Vec<Vec<TokenId>> = vec![Vec::new()];
        // The open path: node ids from the root.
        let mut path: Vec<u32> = vec![0];
        let mut prev: &[u16] = &[];
        for (seq, id) in &keyed {
            let common = seq.iter().zip(prev).take_while(|(a, b)| a == b).count();
            while path.len() > common + 1 {
                let done = path.pop().expect("deeper than the root");
                t.next[done as usize] = t.class.len() as u32;
            }
            for &c in &seq[common..] {
                let node = t.class.len() as u32;
                t.class.push(c);
                t.depth.push(path.len() as u16);
                t.next.push(0);
                ends_at.push(Vec::new());
                path.push(node);
            }
            ends_at[*path.last().expect("the root at least") as usize].push(*id);
            prev = seq;
        }
        let n = t.class.len() as u32;
        for done in path {
            t.next[done as usize] = n;
        }
        for at in ends_at {
            t.ends.push(ids.len() as u32);
            ids.extend(at);
        }
        t.ends.push(ids.len() as u32);
        t.ids = ids.into();
        t
    }

    /// Number of nodes, the root included.
    pub fn num_nodes(&self) -> usize {
        self.class.len()
    }

    #[cfg(test)]
    fn tokens_at(&self, node: usize) -> &[TokenId] {
        &self.ids[self.ends[node] as usize..self.ends[node + 1] as usize]
    }
}

/// One way through a token: the terminals it completes inside itself, and the configuration
/// it leaves with.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TokenPath {
    pub lexemes: SmallVec<[TerminalId; 2]>,
    pub exit: ConfigId,
}

/// A path in progress: `(lexeme sequence, configuration)`. Paths do not remember the entry
/// configuration they came from: paths that differ only there merge, which keeps the walk from
/// a large entry set (after a hole of any text) about as cheap as from one configuration.
type Partial = (u32, ConfigId);

/// Lexeme sequences as a trie: sequence 0 is empty, `nodes[s] = (parent, terminal)`.
#[derive(Default)]
struct Sequences {
    nodes: Vec<(u32, TerminalId)>,
    ids: HashMap<(u32, TerminalId), u32>,
}

impl Sequences {
    fn new() -> Self {
        Sequences {
            nodes: vec![(0, TerminalId(0))],
            ids: HashMap::new(),
        }
    }

    fn push(&mut self, s: u32, t: TerminalId) -> u32 {
        let n = self.nodes.len() as u32;
        *self.ids.entry((s, t)).or_insert_with(|| {
            self.nodes.push((s, t));
            n
        })
    }

    fn lexemes(&self, mut s: u32) -> SmallVec<[TerminalId; 2]> {
        let mut out = SmallVec::new();
        while s != 0 {
            let (parent, t) = self.nodes[s as usize];
            out.push(t);
            s = parent;
        }
        out.reverse();
        out
    }
}

/// The most partial paths one trie node may hold; more makes the walk `TooLarge`.
const MAX_PARTIALS: usize = 1 << 14;

/// Walks every token of `trie` from the configurations `entries`, calling `visit(partials,
/// start, end)` at each node that ends tokens (`trie.ids[start..end]`) and where some path is
/// still alive, with the node's partial paths sorted. Returns the lexeme sequences the paths
/// refer to.
fn walk<F>(
    lx: &Lexicon,
    table: &mut ConfigTable,
    trie: &ClassTrie,
    entries: &[ConfigId],
    mut visit: F,
) -> Result<Sequences, TooLarge>
where
    F: FnMut(&[Partial], u32, u32),
{
    let mut seqs = Sequences::new();
    let max_depth = trie.depth.iter().copied().max().unwrap_or(0) as usize;
    // closed[d]: the partial paths after d bytes with emissions made (for d = 0: the entries,
    // which emit nothing at the token's start).
    let mut closed: Vec<Vec<Partial>> = vec![Vec::new(); max_depth + 1];
    closed[0] = entries.iter().map(|&c| (0, c)).collect();
    closed[0].sort_unstable();
    closed[0].dedup();
    let mut here: Vec<Partial> = Vec::new();
    let mut node = 1;
    while node < trie.num_nodes() {
        let d = trie.depth[node] as usize;
        let class = trie.class[node] as usize;
        here.clear();
        for &(s, c) in &closed[d - 1] {
            let n = table.step(lx, c, class)?;
            if n != DEAD_CONFIG {
                here.push((s, n));
            }
        }
        if here.is_empty() {
            node = trie.next[node] as usize;
            continue;
        }
        here.sort_unstable();
        here.dedup();
        let (start, end) = (trie.ends[node], trie.ends[node + 1]);
        if start < end {
            visit(&here, start, end);
        }
        if trie.next[node] as usize > node + 1 {
            let out = &mut closed[d];
            out.clear();
            for &(s, c) in &here {
                out.push((s, c));
                for &(l, n) in table.emits(lx, c)? {
                    match l {
                        Lexeme::Terminal(t) => out.push((seqs.push(s, t), n)),
                        Lexeme::Skip => out.push((s, n)),
                    }
                }
            }
            out.sort_unstable();
            out.dedup();
            if out.len() > MAX_PARTIALS {
                return Err(TooLarge);
            }
        }
        node += 1;
    }
    Ok(seqs)
}

/// Every path of every token from any of `entries` (the union, for a position that may hold
/// any token), sorted, and the tokens grouped by the paths they take (indices into the list):
/// tokens of one group are interchangeable for every question about a position entered from
/// `entries`. Tokens that die from every entry are in no group.
pub fn union_paths(
    lx: &Lexicon,
    table: &mut ConfigTable,
    trie: &ClassTrie,
    entries: &[ConfigId],
) -> Result<(Vec<TokenPath>, Vec<TokenGroup>), TooLarge> {
    // Partial paths by (sequence, exit); groups by their sorted partials.
    let mut ids: HashMap<(u32, ConfigId), u32> = HashMap::new();
    let mut by_paths: HashMap<Vec<u32>, usize> = HashMap::new();
    let mut groups: Vec<TokenGroup> = Vec::new();
    let mut last: Vec<Partial> = Vec::new();
    let mut last_group = usize::MAX;
    let seqs = walk(lx, table, trie, entries, |partials, start, end| {
        // Neighbouring nodes often hold the same paths (every letter inside a string).
        if partials != last.as_slice() {
            let mut paths: Vec<u32> = partials
                .iter()
                .map(|&(s, c)| {
                    let n = ids.len() as u32;
                    *ids.entry((s, c)).or_insert(n)
                })
                .collect();
            paths.sort_unstable();
            paths.dedup();
            last_group = *by_paths.entry(paths.clone()).or_insert_with(|| {
                groups.push(TokenGroup {
                    paths,
                    runs: Vec::new(),
                    order: trie.ids.clone(),
                });
                groups.len() - 1
            });
            last.clear();
            last.extend_from_slice(partials);
        }
        groups[last_group].push_run(start, end);
    })?;
    // Number the paths in sorted order, and renumber the groups' references.
    let mut found: Vec<((u32, ConfigId), u32)> = ids.into_iter().collect();
    let mut out: Vec<(TokenPath, u32)> = found
        .drain(..)
        .map(|((s, exit), old)| {
            let path = TokenPath {
                lexemes: seqs.lexemes(s),
                exit,
            };
            (path, old)
        })
        .collect();
    out.sort_unstable();
    let mut renumber = vec![0u32; out.len()];
    for (new, (_, old)) in out.iter().enumerate() {
        renumber[*old as usize] = new as u32;
    }
    for g in &mut groups {
        for p in &mut g.paths {
            *p = renumber[*p as usize];
        }
        g.paths.sort_unstable();
    }
    Ok((out.into_iter().map(|(p, _)| p).collect(), groups))
}

/// Tokens that take the same paths (indices into [`TokenPaths::paths`]) from one entry set.
///
/// The tokens are kept as runs of the trie's token order, not as ids: neighbours in the trie
/// mostly share a group (every token inside a string), so a set's groups take a few thousand
/// runs where a list of ids is the whole vocabulary, 600 KB for 151k ids. That is what lets
/// the checker keep the groups of the hundreds of entry sets a block's masks meet instead of
/// walking the vocabulary again for each (see [`super::token_caches::TokenCaches`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenGroup {
    pub paths: Vec<u32>,
    /// `order[start..end]` for each `(start, end)`, ascending and apart.
    runs: Vec<(u32, u32)>,
    order: Arc<[TokenId]>,
}

impl TokenGroup {
    /// Adds `order[start..end]`, which lies after every run so far.
    fn push_run(&mut self, start: u32, end: u32) {
        match self.runs.last_mut() {
            Some(last) if last.1 == start => last.1 = end,
            _ => self.runs.push((start, end)),
        }
    }

    /// The group's tokens, in the trie's order.
    pub fn tokens(&self) -> impl Iterator<Item = TokenId> + '_ {
        self.runs
            .iter()
            .flat_map(|&(start, end)| self.order[start as usize..end as usize].iter().copied())
    }

    /// How many tokens the group holds.
    #[cfg(test)]
    fn count(&self) -> usize {
        self.runs.iter().map(|&(s, e)| (e - s) as usize).sum()
    }

    /// How many runs the group's tokens take (what keeping it costs).
    pub fn num_runs(&self) -> usize {
        self.runs.len()
    }

    /// The group's runs: `(start, end)` ranges of the trie's token order.
    pub fn runs(&self) -> &[(u32, u32)] {
        &self.runs
    }
}

/// A union of groups' tokens, gathered in the trie's order: a group's runs set whole words
/// of bits at a time, and the ids are read out once at the end. A mask in the middle of a
/// block unites the allowed groups of dozens of entry sets, each covering nearly the whole
/// vocabulary: inserting their ids one by one was millions of scattered bit writes, 4–7 ms of
/// a JSON Schema mask.
#[derive(Default)]
pub struct GroupUnion {
    bits: Vec<u64>,
    order: Option<Arc<[TokenId]>>,
}

impl GroupUnion {
    /// Adds the tokens of `group`.
    pub fn add(&mut self, group: &TokenGroup) {
        if self.order.is_none() {
            self.bits = vec![0; group.order.len().div_ceil(64)];
            self.order = Some(group.order.clone());
        }
        for &(start, end) in &group.runs {
            set_range(&mut self.bits, start as usize, end as usize);
        }
    }

    /// The ids added so far, in the trie's order.
    pub fn ids(&self) -> impl Iterator<Item = TokenId> + '_ {
        let order = self.order.as_deref().unwrap_or(&[]);
        self.bits.iter().enumerate().flat_map(move |(w, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    order[w * 64 + bit]
                })
            })
        })
    }
}

/// Sets bits `start..end` of `bits`.
fn set_range(bits: &mut [u64], start: usize, end: usize) {
    if start >= end {
        return;
    }
    let (first, last) = (start / 64, (end - 1) / 64);
    let head = !0u64 << (start % 64);
    let tail = !0u64 >> (63 - (end - 1) % 64);
    if first == last {
        bits[first] |= head & tail;
        return;
    }
    bits[first] |= head;
    bits[first + 1..last].iter_mut().for_each(|w| *w = !0);
    bits[last] |= tail;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `set_range` against setting each bit, over every range of a 200-bit set.
    #[test]
    fn ranges_of_bits_are_set_exactly() {
        for start in 0..200 {
            for end in start..=200 {
                let mut bits = vec![0u64; 4];
                set_range(&mut bits, start, end);
                let mut want = vec![0u64; 4];
                (start..end).for_each(|i| want[i / 64] |= 1 << (i % 64));
                assert_eq!(bits, want, "{start}..{end}");
            }
        }
    }
    use crate::grammar::spec;

    fn lexicon(spec_text: &str) -> Lexicon {
        Lexicon::new(&spec::load(spec_text).unwrap()).unwrap()
    }

    #[test]
    fn the_trie_holds_every_text_token_once_in_preorder() {
        let lx = lexicon("json");
        let words = ["a", "ab", "b", "\"", "\"a", "1", "12", "", "ab"];
        let bytes: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
        let v = Vocabulary::new(bytes, &[], &[]);
        let t = ClassTrie::new(&lx, &v);
        let mut all: Vec<TokenId> = t.ids.to_vec();
        all.sort_unstable();
        assert_eq!(all, [0, 1, 2, 3, 4, 5, 6, 8], "id 7 has no bytes");
        for node in 1..t.num_nodes() {
            assert!(t.next[node] as usize > node);
            for child in node + 1..t.next[node] as usize {
                assert!(t.depth[child] > t.depth[node]);
            }
        }
        for id in all {
            let node = (0..t.num_nodes())
                .find(|&n| t.tokens_at(n).contains(&id))
                .unwrap();
            assert_eq!(t.depth[node] as usize, v.bytes(id).len());
        }
    }

    /// The paths of one token from `entries`, by stepping its bytes one at a time (no trie, no
    /// sharing): emissions strictly inside the token only.
    fn direct_paths(
        lx: &Lexicon,
        table: &mut ConfigTable,
        entries: &[ConfigId],
        bytes: &[u8],
    ) -> Vec<TokenPath> {
        let mut partials: Vec<(Vec<TerminalId>, ConfigId)> =
            entries.iter().map(|&c| (Vec::new(), c)).collect();
        for (i, &b) in bytes.iter().enumerate() {
            let mut next = Vec::new();
            for (seq, c) in &partials {
                let n = table.step(lx, *c, lx.class_of(b)).unwrap();
                if n != DEAD_CONFIG {
                    next.push((seq.clone(), n));
                }
            }
            if i + 1 < bytes.len() {
                let mut with_emissions = next.clone();
                for (seq, c) in &next {
                    for &(l, n) in table.emits(lx, *c).unwrap() {
                        let mut s = seq.clone();
                        if let Lexeme::Terminal(t) = l {
                            s.push(t);
                        }
                        with_emissions.push((s, n));
                    }
                }
                next = with_emissions;
            }
            next.sort_unstable();
            next.dedup();
            partials = next;
        }
        let mut out: Vec<TokenPath> = partials
            .into_iter()
            .map(|(seq, exit)| TokenPath {
                lexemes: seq.into_iter().collect(),
                exit,
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    #[test]
    fn groups_hold_the_tokens_that_take_the_same_paths() {
        let (mut shared, mut emitting) = (false, false);
        for (spec_text, words, prefixes) in [
            (
                "json",
                &[
                    "\"", "\"a", "a\"", "1", "12", "1,", "],", "\":", "true", "tr", " {", "\\",
                ][..],
                &["", "\"", "\"ab", "1", "tr", "[1"][..],
            ),
            (
                "smiles",
                &["C", "CC", "c1", "(", ")", "=O", "[N", "H]", "Cl", "1", "%1"][..],
                &["", "C", "[", "[N", "C(", "c1"][..],
            ),
        ] {
            let lx = lexicon(spec_text);
            let mut table = ConfigTable::new(&lx, 100_000);
            let bytes: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
            let vocab = Vocabulary::new(bytes, &[], &[]);
            let trie = ClassTrie::new(&lx, &vocab);
            // Entry sets: the configurations after each prefix, alone and all together.
            let mut all: Vec<ConfigId> = Vec::new();
            let mut sets: Vec<Vec<ConfigId>> = Vec::new();
            for prefix in prefixes {
                let mut c = table.start();
                for &b in prefix.as_bytes() {
                    c = table.step(&lx, c, lx.class_of(b)).unwrap();
                }
                if c != DEAD_CONFIG {
                    sets.push(vec![c]);
                    all.push(c);
                }
            }
            all.sort_unstable();
            all.dedup();
            sets.push(all);
            for entries in &sets {
                let (paths, groups) = union_paths(&lx, &mut table, &trie, entries).unwrap();
                let mut union: Vec<TokenPath> = Vec::new();
                let mut grouped: Vec<TokenId> = Vec::new();
                for id in 0..vocab.len() as TokenId {
                    let direct = direct_paths(&lx, &mut table, entries, vocab.bytes(id));
                    union.extend(direct.iter().cloned());
                    let group = groups.iter().find(|g| g.tokens().any(|t| t == id));
                    match group {
                        None => assert!(direct.is_empty(), "{spec_text} {:?}", words[id as usize]),
                        Some(g) => {
                            let by_group: Vec<TokenPath> =
                                g.paths.iter().map(|&p| paths[p as usize].clone()).collect();
                            assert_eq!(by_group, direct, "{spec_text} {:?}", words[id as usize]);
                            grouped.push(id);
                        }
                    }
                }
                union.sort_unstable();
                union.dedup();
                assert_eq!(paths, union, "{spec_text} from {entries:?}");
                let in_groups: usize = groups.iter().map(|g| g.count()).sum();
                assert_eq!(in_groups, grouped.len(), "each token in one group at most");
                shared |= groups.iter().any(|g| g.count() > 1);
                emitting |= paths.iter().any(|p| !p.lexemes.is_empty());
            }
        }
        // The cases exercise what the trie shares: tokens grouped together, and terminals
        // completed inside tokens.
        assert!(shared && emitting);
    }

    /// Entry sets share a representative exactly when every token takes the same paths from
    /// both (the per-token paths stepped byte by byte, [`direct_paths`], are the oracle): over
    /// every set of up to three of the configurations after some prefixes, and their closures
    /// under any text (what a hole of any text enters the next position with).
    #[test]
    fn sets_share_a_representative_iff_every_token_takes_the_same_paths() {
        let (mut merged, mut told_apart) = (0, 0);
        for (spec_text, words, prefixes) in [
            (
                "json",
                &[
                    "\"", "\"a", "a\"", "1", "12", "1,", "],", "\":", "true", "tr", " {", "\\",
                    "e", "1e", "a",
                ][..],
                &["", "\"", "\"ab", "1", "tr", "[1", "12", "1e", "\"\\"][..],
            ),
            (
                "smiles",
                &[
                    "C", "CC", "c1", "(", ")", "=O", "[N", "H]", "Cl", "1", "%1", "l", "c",
                ][..],
                &["", "C", "[", "[N", "C(", "c1", "Cl", "C1"][..],
            ),
        ] {
            let lx = lexicon(spec_text);
            let mut table = ConfigTable::new(&lx, 100_000);
            let bytes: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
            let vocab = Arc::new(Vocabulary::new(bytes, &[], &[]));
            let mut caches = super::super::token_caches::TokenCaches::new(&lx, vocab.clone());
            let mut configs: Vec<ConfigId> = Vec::new();
            for prefix in prefixes {
                let mut c = table.start();
                for &b in prefix.as_bytes() {
                    c = table.step(&lx, c, lx.class_of(b)).unwrap();
                }
                if c != DEAD_CONFIG && !configs.contains(&c) {
                    configs.push(c);
                }
            }
            let mut sets: Vec<u32> = Vec::new();
            for (i, &a) in configs.iter().enumerate() {
                for (j, &b) in configs.iter().enumerate().skip(i) {
                    for &c in &configs[j..] {
                        let members = vec![a, b, c];
                        sets.push(table.intern_set(members.clone()).unwrap());
                        sets.push(table.hole_closure(&lx, &members).unwrap());
                    }
                }
            }
            sets.sort_unstable();
            sets.dedup();
            let per_token: Vec<Vec<Vec<TokenPath>>> = sets
                .iter()
                .map(|&s| {
                    let entries = table.hole_set(s).to_vec();
                    (0..vocab.len() as TokenId)
                        .map(|id| direct_paths(&lx, &mut table, &entries, vocab.bytes(id)))
                        .collect()
                })
                .collect();
            let reps: Vec<u32> = sets
                .iter()
                .map(|&s| caches.representative(&lx, &mut table, s).unwrap())
                .collect();
            for i in 0..sets.len() {
                // A representative is one of the sets and stands for itself.
                let r = sets.iter().position(|&s| s == reps[i]).unwrap();
                assert_eq!(reps[r], reps[i]);
                for j in 0..i {
                    let same = per_token[i] == per_token[j];
                    assert_eq!(reps[i] == reps[j], same, "{spec_text}: sets {i} and {j}");
                    if same {
                        merged += 1;
                    } else if table.hole_set(sets[i]).len() == table.hole_set(sets[j]).len() {
                        told_apart += 1;
                    }
                }
            }
        }
        // Both ways happen: different sets merged, and sets of the same size kept apart.
        assert!(merged > 0 && told_apart > 0, "{merged} {told_apart}");
    }
}
