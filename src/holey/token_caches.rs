//! What a checker keeps per vocabulary: the trie of its tokens, and for each entry set of a
//! hole of one token the union of the tokens' paths from it, the tokens grouped by the paths
//! they take, and the set's *representative*.
//!
//! Every lexeme automaton with a hole of one token needs the paths from that hole's entry
//! sets, and every mask the groups of the open position's sets: one walk of the whole
//! vocabulary each ([`super::tokens`]), so they are kept across canvases, bounded, and
//! emptied when full (emptying costs only time). The representatives let the automaton
//! enter interchangeable sets as one (see [`TokenCaches::representative`]).

use std::sync::Arc;

use hashbrown::HashMap;

use super::config::{ConfigTable, TooLarge};
use super::path_graph::TokenPaths;
use super::tokens::{union_paths, ClassTrie, TokenGroup, TokenPath};
use crate::lexicon::Lexicon;
use crate::vocab::Vocabulary;

/// What the checker keeps per vocabulary: the trie, and the union of paths by entry set.
pub struct TokenCaches {
    pub vocab: Arc<Vocabulary>,
    pub trie: ClassTrie,
    unions: HashMap<u32, Arc<TokenPaths>>,
    /// The 256 one-byte strings as a trie, for holes of one byte, and their paths by set.
    byte_trie: ClassTrie,
    byte_unions: HashMap<u32, Arc<TokenPaths>>,
    /// Token groups by entry set, for the sets open positions were entered from, and the runs
    /// they hold together.
    groups: HashMap<u32, Arc<[TokenGroup]>>,
    group_runs: usize,
    /// Each walked entry set's representative: the first set walked whose text tokens take
    /// exactly the same paths (see [`TokenCaches::representative`]).
    class: HashMap<u32, u32>,
    /// The representatives by what their walk found, and the paths and runs those keys hold.
    by_walk: HashMap<WalkKey, u32>,
    walk_entries: usize,
}

/// What one walk of the vocabulary from an entry set found, in canonical form: the paths in
/// sorted order, and each group's paths (indices into them) and runs of the trie's order, in
/// the order the walk met them. Two sets with the same key give every text token the same
/// paths: the walk meets the tokens in the trie's order, so the same map from tokens to paths
/// makes the same groups, numbered alike.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct WalkKey {
    paths: Vec<TokenPath>,
    groups: Vec<GroupKey>,
}

/// A group's paths and runs, as a [`WalkKey`] holds them.
type GroupKey = (Vec<u32>, Vec<(u32, u32)>);

impl WalkKey {
    fn new(paths: &[TokenPath], groups: &[TokenGroup]) -> Self {
        WalkKey {
            paths: paths.to_vec(),
            groups: groups
                .iter()
                .map(|g| (g.paths.clone(), g.runs().to_vec()))
                .collect(),
        }
    }

    /// What keeping the key costs, in paths and runs.
    fn entries(&self) -> usize {
        self.paths.len()
            + self
                .groups
                .iter()
                .map(|(p, r)| p.len() + r.len())
                .sum::<usize>()
    }
}

impl TokenCaches {
    /// Entry sets whose paths are kept before the cache is emptied.
    const CAPACITY: usize = 1 << 12;
    /// Runs of tokens ([`TokenGroup`]) kept in the groups by entry set before that cache is
    /// emptied (32 MiB of runs). A set's groups hold a few hundred to a few thousand runs, so
    /// this keeps the sets of a block's masks (a JSON Schema block opens some 100 sets, each a
    /// walk of the whole vocabulary, 3 ms for 151k ids); when groups were lists of ids, 64 sets
    /// were kept, and a block's masks walked the vocabulary 35 times a position.
    const GROUPS_RUNS: usize = 1 << 22;
    /// Paths and runs held by the keys of the representatives ([`WalkKey`]) before they are
    /// forgotten (a C++ entry set's key holds some ten thousand).
    const WALK_ENTRIES: usize = 1 << 22;

    pub fn new(lx: &Lexicon, vocab: Arc<Vocabulary>) -> Self {
        let trie = ClassTrie::new(lx, &vocab);
        let bytes = Vocabulary::new((0..=255u8).map(|b| vec![b]).collect(), &[], &[]);
        TokenCaches {
            vocab,
            trie,
            unions: HashMap::new(),
            byte_trie: ClassTrie::new(lx, &bytes),
            byte_unions: HashMap::new(),
            groups: HashMap::new(),
            group_runs: 0,
            class: HashMap::new(),
            by_walk: HashMap::new(),
            walk_entries: 0,
        }
    }

    /// Forgets the paths and groups kept by hole set (when the sets' table is emptied).
    pub fn forget_sets(&mut self) {
        self.unions = HashMap::new();
        self.byte_unions = HashMap::new();
        self.groups = HashMap::new();
        self.group_runs = 0;
        self.class = HashMap::new();
        self.by_walk = HashMap::new();
        self.walk_entries = 0;
    }

    /// The union of paths from the interned configuration set `set`, with its graphs.
    pub fn union(
        &mut self,
        lx: &Lexicon,
        table: &mut ConfigTable,
        set: u32,
    ) -> Result<Arc<TokenPaths>, TooLarge> {
        if let Some(p) = self.unions.get(&self.cache_key(set)) {
            return Ok(p.clone());
        }
        Ok(self.walk_set(lx, table, set, false)?.0)
    }

    /// Where the paths and groups of `set` are kept: under its representative once it has
    /// one (interchangeable sets have the same paths and groups, so one copy serves them all).
    fn cache_key(&self, set: u32) -> u32 {
        self.class.get(&set).copied().unwrap_or(set)
    }

    /// The entry set that stands for `set` at a hole of one token: the first set walked
    /// whose every text token takes the same paths (the same terminals completed, the same
    /// configuration left with) as from `set`. The two are interchangeable there, for the
    /// language (the union of the paths is the same) and for a mask (each token is allowed
    /// through the same paths). After a run of any text a position is entered from hundreds
    /// of sets, one for each way the run can end (the lexeme just emitted, the configurations
    /// and watches it leaves), and most give every token the same paths (C++ in the middle of
    /// a run: 344 sets, 34 distinct, one standing for 299); each distinct set then brings its
    /// paths into the automaton once.
    pub fn representative(
        &mut self,
        lx: &Lexicon,
        table: &mut ConfigTable,
        set: u32,
    ) -> Result<u32, TooLarge> {
        if let Some(&rep) = self.class.get(&set) {
            return Ok(rep);
        }
        self.walk_set(lx, table, set, false)?;
        Ok(self.class.get(&set).copied().unwrap_or(set))
    }

    /// The union of the paths of every byte from `set`: one configuration after each byte,
    /// nothing completed inside it (a lexeme a byte ends belongs to the text after it).
    pub fn byte_union(
        &mut self,
        lx: &Lexicon,
        table: &mut ConfigTable,
        set: u32,
    ) -> Result<Arc<TokenPaths>, TooLarge> {
        if let Some(p) = self.byte_unions.get(&set) {
            return Ok(p.clone());
        }
        let (paths, _) = walk(lx, table, &self.byte_trie, set)?;
        let paths = Arc::new(TokenPaths::new(paths));
        Ok(keep(&mut self.byte_unions, Self::CAPACITY, set, paths))
    }

    /// [`TokenCaches::union`], and the text tokens grouped by the paths they take from `set`.
    pub fn grouped(
        &mut self,
        lx: &Lexicon,
        table: &mut ConfigTable,
        set: u32,
    ) -> Result<(Arc<TokenPaths>, Arc<[TokenGroup]>), TooLarge> {
        let key = self.cache_key(set);
        if let (Some(p), Some(g)) = (self.unions.get(&key), self.groups.get(&key)) {
            return Ok((p.clone(), g.clone()));
        }
        let (paths, groups) = self.walk_set(lx, table, set, true)?;
        Ok((paths, groups.expect("kept when asked for")))
    }

    /// One walk of the trie from `set`, which classifies it: its paths (kept), and its groups
    /// (kept if `keep_groups`), both under its representative, whose copy is reused where
    /// kept already.
    #[allow(clippy::type_complexity)]
    fn walk_set(
        &mut self,
        lx: &Lexicon,
        table: &mut ConfigTable,
        set: u32,
        keep_groups: bool,
    ) -> Result<(Arc<TokenPaths>, Option<Arc<[TokenGroup]>>), TooLarge> {
        let (paths, groups) = walk(lx, table, &self.trie, set)?;
        self.classify(set, WalkKey::new(&paths, &groups));
        let key = self.cache_key(set);
        let paths = match self.unions.get(&key) {
            Some(kept) => kept.clone(),
            None => keep(
                &mut self.unions,
                Self::CAPACITY,
                key,
                Arc::new(TokenPaths::new(paths)),
            ),
        };
        if !keep_groups {
            return Ok((paths, None));
        }
        let runs: usize = groups.iter().map(TokenGroup::num_runs).sum();
        if self.group_runs + runs > Self::GROUPS_RUNS || self.groups.len() >= Self::CAPACITY {
            self.groups.clear();
            self.group_runs = 0;
        }
        self.group_runs += runs;
        let groups: Arc<[TokenGroup]> = groups.into();
        self.groups.insert(key, groups.clone());
        Ok((paths, Some(groups)))
    }

    /// Records the representative of `set`, whose walk found `key`.
    fn classify(&mut self, set: u32, key: WalkKey) {
        if let Some(&rep) = self.by_walk.get(&key) {
            self.class.insert(set, rep);
            return;
        }
        let entries = key.entries();
        if self.walk_entries + entries > Self::WALK_ENTRIES || self.by_walk.len() >= Self::CAPACITY
        {
            // The sets classified keep their representatives (a few bytes each); a set walked
            // from now on that matches a forgotten key stands for itself, which is as exact,
            // only shared less.
            self.by_walk.clear();
            self.walk_entries = 0;
        }
        self.walk_entries += entries;
        self.by_walk.insert(key, set);
        self.class.insert(set, set);
    }
}

/// One walk of `trie` from the configurations of hole set `set`: the union of their paths,
/// in sorted order, and the tokens grouped by the paths they take.
fn walk(
    lx: &Lexicon,
    table: &mut ConfigTable,
    trie: &ClassTrie,
    set: u32,
) -> Result<(Vec<TokenPath>, Vec<TokenGroup>), TooLarge> {
    let entries = table.hole_set(set).to_vec();
    union_paths(lx, table, trie, &entries)
}

/// Keeps `value` for `set` in `cache` (emptied first when it holds `capacity` entries), and
/// gives it back.
fn keep<V: Clone>(cache: &mut HashMap<u32, V>, capacity: usize, set: u32, value: V) -> V {
    if cache.len() >= capacity {
        cache.clear();
    }
    cache.insert(set, value.clone());
    value
}
