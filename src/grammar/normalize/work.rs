//! The mutable grammar the normalizer rewrites, and the rewrites themselves.
//!
//! Every pass takes a [`WorkGrammar`] and leaves one that generates the same language. The
//! passes never renumber terminals; nonterminal ids only grow (fresh helpers are appended) until
//! [`WorkGrammar::compact`] renumbers them densely at the very end.

use hashbrown::HashMap;

use super::inline;

use crate::grammar::analysis::generating_rules;
#[cfg(test)]
use crate::grammar::GrammarBuilder;
use smallvec::{smallvec, SmallVec};

use crate::grammar::{Grammar, NonterminalId, Symbol};

/// A right-hand side under rewriting. Most have at most three symbols (a schema's object
/// members, every binarized rule), kept inline: the passes create, copy and drop rules by the
/// thousand, each an allocation with a `Vec`.
pub type Rhs = SmallVec<[Symbol; 3]>;

/// A production under rewriting: `lhs → rhs`, ordered as [`crate::grammar::Rule`] is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rule {
    pub lhs: NonterminalId,
    pub rhs: Rhs,
}

/// Steps [`WorkGrammar::inline_single_use`] may take (sites inlined, candidates looked at,
/// rules moved); real grammars need a few thousand.
pub const MAX_INLINE_WORK: u64 = 1 << 22;

/// Symbols [`WorkGrammar::share_bigrams`] may count, over all its rounds; real grammars need
/// under a million.
pub const MAX_BIGRAM_WORK: usize = 1 << 25;

/// `r`'s place in `Rule`'s order as far as its left-hand side and first two symbols tell it:
/// 32 bits of left-hand side, then 34 bits a symbol (0 for none, so a shorter right-hand side
/// comes first; terminals before nonterminals, as `Symbol`'s order has them). Rules with equal
/// keys differ only after their second symbol, or in length when one has at most two.
fn sort_key(r: &Rule) -> u128 {
    let code = |s: Option<&Symbol>| -> u128 {
        match s {
            None => 0,
            Some(Symbol::T(t)) => 1 + u128::from(t.0),
            Some(Symbol::N(n)) => (1 << 32) + 1 + u128::from(n.0),
        }
    };
    (u128::from(r.lhs.0) << 68) | (code(r.rhs.first()) << 34) | code(r.rhs.get(1))
}

/// A grammar under rewriting: rules with arbitrary right-hand sides over nonterminal ids that
/// need not be dense.
#[derive(Clone, Debug)]
pub struct WorkGrammar {
    pub names: Vec<String>,
    pub rules: Vec<Rule>,
    pub start: NonterminalId,
    /// Rules already normal, set aside while the passes rewrite `rules` ([`Self::hold`]):
    /// the passes count them (a nonterminal they use is used, one they define is defined)
    /// but never rewrite them, never inline or substitute away a nonterminal they name, and
    /// [`Self::release`] puts them back before the grammar is cleaned and numbered.
    pub held: Vec<Rule>,
}

impl WorkGrammar {
    pub fn from_grammar(g: &Grammar) -> Self {
        WorkGrammar {
            names: g.nonterminals().to_vec(),
            rules: g
                .rules()
                .iter()
                .map(|r| Rule {
                    lhs: r.lhs,
                    rhs: Rhs::from_slice(&r.rhs),
                })
                .collect(),
            start: g.start(),
            held: vec![],
        }
    }

    /// Sets aside the rules of `normal` (nonterminals a front end wrote in normal form, see
    /// [`crate::grammar::GrammarBuilder::mark_normal`]) that are normal indeed: every rule of
    /// such a nonterminal is `A → B C`, `A → B` or `A → ε` over nonterminals. The start symbol,
    /// and a nonterminal with a rule of another shape, stay with the others.
    pub fn hold(&mut self, normal: &[NonterminalId]) {
        if normal.is_empty() {
            return;
        }
        let mut held = vec![false; self.names.len()];
        for &a in normal {
            held[a.index()] = a != self.start;
        }
        for r in &self.rules {
            if held[r.lhs.index()] && !is_normal_over_nonterminals(&r.rhs) {
                held[r.lhs.index()] = false;
            }
        }
        self.held = self.rules.extract_if(.., |r| held[r.lhs.index()]).collect();
    }

    /// Puts the held rules back with the others.
    pub fn release(&mut self) {
        let held = std::mem::take(&mut self.held);
        self.rules.extend(held);
    }

    /// The nonterminals the held rules name (on either side), which no pass may remove.
    pub(super) fn pinned(&self) -> Vec<bool> {
        let mut pinned = vec![false; self.names.len()];
        for r in &self.held {
            pinned[r.lhs.index()] = true;
            for s in &r.rhs {
                if let Symbol::N(n) = s {
                    pinned[n.index()] = true;
                }
            }
        }
        pinned
    }

    /// Rebuilds a [`Grammar`] with the given grammar's terminals (for the tests).
    #[cfg(test)]
    pub fn to_grammar(&self, terminals_of: &Grammar) -> Grammar {
        let mut b = GrammarBuilder::new();
        for t in terminals_of.terminals() {
            b.terminal(&t.name, t.pattern.clone(), t.priority);
        }
        let ids: Vec<NonterminalId> = self.names.iter().map(|n| b.nonterminal(n)).collect();
        for r in &self.rules {
            let rhs = r
                .rhs
                .iter()
                .map(|&s| match s {
                    Symbol::N(n) => Symbol::N(ids[n.index()]),
                    t => t,
                })
                .collect();
            b.rule(ids[r.lhs.index()], rhs);
        }
        // A pass may leave nonterminals without rules (removed as useless); give them one
        // that is itself useless so the builder accepts the grammar.
        let mut has_rule = vec![false; self.names.len()];
        for r in &self.rules {
            has_rule[r.lhs.index()] = true;
        }
        for (i, has) in has_rule.iter().enumerate() {
            if !has {
                b.rule(ids[i], vec![Symbol::N(ids[i])]);
            }
        }
        b.build(ids[self.start.index()])
            .expect("a rewritten grammar keeps a generating start symbol")
    }

    pub fn fresh(&mut self, base: &str) -> NonterminalId {
        let id = NonterminalId(self.names.len() as u32);
        let base = base.split("__").next().unwrap_or(base);
        self.names.push(format!("{base}__{}", id.0));
        id
    }

    /// Number of rules whose left-hand side is each nonterminal.
    fn rule_counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.names.len()];
        for r in self.rules.iter().chain(&self.held) {
            counts[r.lhs.index()] += 1;
        }
        counts
    }

    /// Occurrences of each nonterminal on right-hand sides.
    pub(super) fn occurrences(&self) -> Vec<usize> {
        let mut occ = vec![0; self.names.len()];
        for r in self.rules.iter().chain(&self.held) {
            for s in &r.rhs {
                if let Symbol::N(n) = s {
                    occ[n.index()] += 1;
                }
            }
        }
        occ
    }

    /// Sorts the rules and drops duplicates and trivial self-loops `A → A`.
    ///
    /// The order is exactly `Rule`'s, reached by a counting sort on the left-hand side and
    /// then a sort of each nonterminal's few rules by [`sort_key`], which reads a right-hand
    /// side only past its second symbol; a grammar already in order is only read. Sorting
    /// all rules by `Rule`'s `Ord` took twice as long on a Kubernetes schema's 15,000 rules
    /// (0.63 against 0.32 ms, `examples/phase_times.rs`).
    pub fn dedupe(&mut self) {
        self.rules
            .retain(|r| !(r.rhs.len() == 1 && r.rhs[0] == Symbol::N(r.lhs)));
        let rules = &self.rules;
        let keys: Vec<u128> = rules.iter().map(sort_key).collect();
        if keys.windows(2).all(|w| w[0] < w[1]) {
            return; // sorted, and no two rules alike
        }
        // By left-hand side first (a counting sort), then each nonterminal's few rules by
        // key: the rules of one nonterminal are a handful where all of them are thousands.
        let mut start = vec![0u32; self.names.len() + 1];
        for r in rules {
            start[r.lhs.index() + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut order = vec![0u32; rules.len()];
        let mut next = start.clone();
        for (i, r) in rules.iter().enumerate() {
            order[next[r.lhs.index()] as usize] = i as u32;
            next[r.lhs.index()] += 1;
        }
        for w in start.windows(2) {
            let group = &mut order[w[0] as usize..w[1] as usize];
            if group.len() < 2 {
                continue;
            }
            // Equal rules are indistinguishable, so an unstable sort leaves the same list.
            group.sort_unstable_by(|&a, &b| {
                let (a, b) = (a as usize, b as usize);
                keys[a].cmp(&keys[b]).then_with(|| {
                    let (x, y) = (&rules[a].rhs, &rules[b].rhs);
                    if x.len() > 2 && y.len() > 2 {
                        x[2..].cmp(&y[2..])
                    } else {
                        x.len().cmp(&y.len())
                    }
                })
            });
        }
        // Move each rule to its place: `dest[i]` is where the rule now at i goes.
        let mut dest = vec![0u32; order.len()];
        for (place, &i) in order.iter().enumerate() {
            dest[i as usize] = place as u32;
        }
        for i in 0..dest.len() {
            while dest[i] as usize != i {
                let d = dest[i] as usize;
                self.rules.swap(i, d);
                dest.swap(i, d);
            }
        }
        self.rules.dedup();
    }

    /// Drops rules that mention a nonterminal deriving no word, then rules unreachable from
    /// the start symbol.
    pub fn remove_useless(&mut self) {
        let gen = generating_rules(
            self.names.len(),
            self.rules.iter().map(|r| (r.lhs, &r.rhs[..])),
        );
        self.rules.retain(|r| {
            gen[r.lhs.index()]
                && r.rhs
                    .iter()
                    .all(|s| !matches!(s, Symbol::N(n) if !gen[n.index()]))
        });
        let mut reach = vec![false; self.names.len()];
        reach[self.start.index()] = true;
        let mut stack = vec![self.start];
        let by_lhs = super::normal::Csr::build(
            self.names.len(),
            self.rules
                .iter()
                .enumerate()
                .map(|(i, r)| (r.lhs.index(), i as u32)),
        );
        while let Some(a) = stack.pop() {
            for &ri in by_lhs.get(a.index()) {
                let ri = ri as usize;
                for s in &self.rules[ri].rhs {
                    if let Symbol::N(b) = *s {
                        if !reach[b.index()] {
                            reach[b.index()] = true;
                            stack.push(b);
                        }
                    }
                }
            }
        }
        self.rules.retain(|r| reach[r.lhs.index()]);
    }

    /// Replaces nonterminals that have a single one-symbol rule (`B → x`) by that symbol
    /// everywhere. The start symbol is kept.
    ///
    /// One pass: each alias is resolved to the end of its chain (`A → B`, `B → x`: A is x);
    /// the aliases of a cycle (which only a grammar with useless symbols has) resolve to the
    /// member whose rule comes last, which keeps its rule, as substituting them one at a time
    /// in rule order would leave it.
    pub fn substitute_aliases(&mut self) {
        let n = self.names.len();
        let counts = self.rule_counts();
        let pinned = self.pinned();
        // alias[a]: a's one rule is `a → target`, at this position.
        let mut alias: Vec<Option<(Symbol, usize)>> = vec![None; n];
        for (i, r) in self.rules.iter().enumerate() {
            if r.lhs != self.start
                && !pinned[r.lhs.index()]
                && counts[r.lhs.index()] == 1
                && r.rhs.len() == 1
                && r.rhs[0] != Symbol::N(r.lhs)
            {
                alias[r.lhs.index()] = Some((r.rhs[0], i));
            }
        }
        if alias.iter().all(Option::is_none) {
            return;
        }
        let mut resolved: Vec<Option<Symbol>> = vec![None; n];
        let mut survivor = vec![false; n];
        let mut on_path = vec![false; n];
        let mut path: Vec<usize> = Vec::new();
        for a in 0..n {
            if alias[a].is_none() || resolved[a].is_some() || survivor[a] {
                continue;
            }
            path.clear();
            let mut cur = Symbol::N(NonterminalId(a as u32));
            let target = loop {
                let Symbol::N(x) = cur else { break cur };
                let x = x.index();
                let Some((next, _)) = alias[x].filter(|_| !survivor[x]) else {
                    break cur;
                };
                if let Some(t) = resolved[x] {
                    break t;
                }
                if on_path[x] {
                    let from = path.iter().position(|&p| p == x).expect("x is on the path");
                    let last = *path[from..]
                        .iter()
                        .max_by_key(|&&m| alias[m].map(|(_, i)| i))
                        .expect("a cycle has members");
                    survivor[last] = true;
                    break Symbol::N(NonterminalId(last as u32));
                }
                on_path[x] = true;
                path.push(x);
                cur = next;
            };
            for &x in &path {
                on_path[x] = false;
                if !survivor[x] {
                    resolved[x] = Some(target);
                }
            }
        }
        self.rules
            .retain(|r| alias[r.lhs.index()].is_none() || survivor[r.lhs.index()]);
        for r in &mut self.rules {
            for s in &mut r.rhs {
                if let Symbol::N(x) = *s {
                    if let Some(t) = resolved[x.index()] {
                        *s = t;
                    }
                }
            }
        }
    }

    /// Inlines a nonterminal used exactly once when that cannot grow the binarized grammar:
    /// it has a single rule, or its one use is a unit rule `A → B`.
    ///
    /// The sites are taken in the order a sweep over the rules would find them (the first
    /// eligible site of the first rule that has one, a rewritten rule moving to the end), so the
    /// result does not depend on how the work is organized; see [`inline`] for how that order
    /// is kept without sweeping. At most [`MAX_INLINE_WORK`] steps: past them the grammar is
    /// left as far as it got (inlining only makes it smaller).
    pub fn inline_single_use(&mut self) {
        let counts = self.rule_counts();
        let defined = self.rules.iter().all(|r| {
            r.rhs
                .iter()
                .all(|s| !matches!(s, Symbol::N(b) if counts[b.index()] == 0))
        });
        if defined {
            inline::run(self, counts, MAX_INLINE_WORK);
        } else {
            // Only a grammar with useless symbols uses a nonterminal without rules (the
            // pipeline removes them first); such a site vanishes with its rule, which can make
            // other sites eligible again: the plain sweep handles that.
            self.inline_single_use_by_sweeps(MAX_INLINE_WORK);
        }
    }

    /// [`WorkGrammar::inline_single_use`] by a sweep over all rules per inlined site
    /// (quadratic: for grammars that use nonterminals without rules, which are small).
    fn inline_single_use_by_sweeps(&mut self, max_steps: u64) {
        // The held rules never change here, so neither does what they name.
        let pinned = self.pinned();
        for _ in 0..max_steps {
            let counts = self.rule_counts();
            let occ = self.occurrences();
            let site = self.rules.iter().enumerate().find_map(|(ri, r)| {
                r.rhs.iter().enumerate().find_map(|(pos, s)| match *s {
                    Symbol::N(b)
                        if b != self.start
                            && !pinned[b.index()]
                            && b != r.lhs
                            && occ[b.index()] == 1
                            && (counts[b.index()] == 1 || r.rhs.len() == 1) =>
                    {
                        Some((ri, pos, b))
                    }
                    _ => None,
                })
            });
            let Some((ri, pos, b)) = site else { return };
            let host = self.rules.swap_remove(ri);
            let bodies: Vec<Rhs> = self
                .rules
                .iter()
                .filter(|r| r.lhs == b)
                .map(|r| r.rhs.clone())
                .collect();
            self.rules.retain(|r| r.lhs != b);
            for body in bodies {
                let mut rhs = Rhs::from_slice(&host.rhs[..pos]);
                rhs.extend_from_slice(&body);
                rhs.extend_from_slice(&host.rhs[pos + 1..]);
                self.rules.push(Rule { lhs: host.lhs, rhs });
            }
        }
    }

    /// Left factoring: alternatives of one nonterminal that share a prefix `α` become
    /// `A → α A'` with `A'` deriving the distinct remainders.
    pub fn left_factor(&mut self) {
        self.dedupe();
        // by_lhs[a]: the positions of a's rules (in no order); slot[i]: where rule i is listed.
        let mut by_lhs: Vec<Vec<usize>> = vec![Vec::new(); self.names.len()];
        let mut slot: Vec<usize> = Vec::with_capacity(self.rules.len());
        for (i, r) in self.rules.iter().enumerate() {
            slot.push(by_lhs[r.lhs.index()].len());
            by_lhs[r.lhs.index()].push(i);
        }
        let mut work: Vec<NonterminalId> =
            (0..self.names.len() as u32).map(NonterminalId).collect();
        while let Some(a) = work.pop() {
            let list = &by_lhs[a.index()];
            if list.len() < 2 {
                continue;
            }
            // The rules grouped by first symbol (each group in rule order), the groups of
            // two or more in the order of their first rules.
            let mut mine: Vec<(Symbol, usize)> = list
                .iter()
                .filter_map(|&i| Some((*self.rules[i].rhs.first()?, i)))
                .collect();
            mine.sort_unstable();
            let mut groups: Vec<Vec<usize>> = mine
                .chunk_by(|x, y| x.0 == y.0)
                .filter(|g| g.len() > 1)
                .map(|g| g.iter().map(|&(_, i)| i).collect())
                .collect();
            if groups.is_empty() {
                continue;
            }
            groups.sort_unstable();
            let mut remove = Vec::new();
            let mut added = Vec::new();
            for group in groups {
                let prefix_len = common_prefix_len(group.iter().map(|&i| &self.rules[i].rhs[..]));
                let prefix = Rhs::from_slice(&self.rules[group[0]].rhs[..prefix_len]);
                let rest = self.fresh(&self.names[a.index()].clone());
                for &i in &group {
                    added.push(Rule {
                        lhs: rest,
                        rhs: Rhs::from_slice(&self.rules[i].rhs[prefix_len..]),
                    });
                }
                let mut rhs = prefix;
                rhs.push(Symbol::N(rest));
                added.push(Rule { lhs: a, rhs });
                remove.extend(group);
                work.push(rest);
            }
            remove.sort_unstable();
            for i in remove.into_iter().rev() {
                // Unlist rule i, then move the last rule into its place, as swap_remove does.
                let list = &mut by_lhs[self.rules[i].lhs.index()];
                list.swap_remove(slot[i]);
                if let Some(&moved) = list.get(slot[i]) {
                    slot[moved] = slot[i];
                }
                let last = self.rules.len() - 1;
                self.rules.swap_remove(i);
                slot.swap_remove(i);
                if i != last {
                    by_lhs[self.rules[i].lhs.index()][slot[i]] = i;
                }
            }
            by_lhs.resize(self.names.len(), Vec::new());
            for r in added {
                let list = &mut by_lhs[r.lhs.index()];
                slot.push(list.len());
                list.push(self.rules.len());
                self.rules.push(r);
            }
        }
    }

    /// Shared 2-gram elimination: while some pair `B C` occurs at least twice inside
    /// right-hand sides longer than two, name it once (`N → B C`) and use `N` instead. The
    /// most frequent pair goes first; among equals, the one met first reading the long rules
    /// in order (as the reference sweep does: `reference.rs`).
    ///
    /// The pairs' counts are kept up to date as rules change ([`BigramCounts`]) instead of
    /// recounted each round: a Kubernetes schema takes some 80 rounds over 1,600 symbols, and
    /// a recount per round was a sixth of its checker's build. The work is still charged as if
    /// each round read every long rule, so [`MAX_BIGRAM_WORK`] stops the pass where it stopped
    /// before (sharing only makes the grammar smaller).
    pub fn share_bigrams(&mut self) {
        let mut counts = self.rule_counts();
        let mut pairs = PairRules::default();
        for (i, r) in self.rules.iter().enumerate() {
            pairs.note(r, i, self.start, &counts);
        }
        let mut long: Vec<usize> = (0..self.rules.len())
            .filter(|&i| self.rules[i].rhs.len() > 2)
            .collect();
        let mut bigrams = BigramCounts::default();
        let mut long_len = 0usize;
        for &ri in &long {
            bigrams.add(&self.rules[ri].rhs);
            long_len += self.rules[ri].rhs.len();
        }
        let mut work = 0usize;
        loop {
            work += long_len;
            if work > MAX_BIGRAM_WORK {
                return;
            }
            let Some(highest) = bigrams.highest() else {
                return;
            };
            let (b, c) = long
                .iter()
                .flat_map(|&ri| counted_pairs(&self.rules[ri].rhs))
                .find(|p| bigrams.count[p] == highest)
                .expect("the pairs counted occur in the long rules");
            let pair = match pairs.by_pair.get(&(b, c)) {
                Some(&(_, n)) => n,
                None => {
                    let n = self.fresh("pair");
                    counts.push(1);
                    let rule = Rule {
                        lhs: n,
                        rhs: smallvec![b, c],
                    };
                    pairs.note(&rule, self.rules.len(), self.start, &counts);
                    self.rules.push(rule);
                    n
                }
            };
            for &ri in &long {
                let r = &mut self.rules[ri];
                if !r.rhs.windows(2).any(|w| (w[0], w[1]) == (b, c)) {
                    continue;
                }
                bigrams.remove(&r.rhs);
                long_len -= r.rhs.len();
                r.rhs = replace_pair(&r.rhs, (b, c), Symbol::N(pair));
                if r.rhs.len() > 2 {
                    bigrams.add(&r.rhs);
                    long_len += r.rhs.len();
                }
                pairs.note(r, ri, self.start, &counts);
            }
            long.retain(|&ri| self.rules[ri].rhs.len() > 2);
        }
    }

    /// Splits right-hand sides longer than two into right-branching chains; equal suffixes
    /// share one chain.
    ///
    /// Suffixes are compared by ids hash-consed from the right (`(symbol, id of the rest)`),
    /// so a rule of length L costs O(L), not the O(L²) of hashing each suffix whole.
    pub fn binarize(&mut self) {
        // Suffix ids: (first symbol, id of the rest; u32::MAX for none) → id.
        let mut ids: HashMap<(Symbol, u32), u32> = HashMap::new();
        let mut named: HashMap<u32, NonterminalId> = HashMap::new();
        let mut out = Vec::with_capacity(self.rules.len());
        let mut pending: Vec<Rule> = std::mem::take(&mut self.rules);
        let mut suffix = Vec::new();
        while let Some(r) = pending.pop() {
            let len = r.rhs.len();
            if len <= 2 {
                out.push(r);
                continue;
            }
            suffix.clear();
            suffix.resize(len, u32::MAX);
            let mut rest = u32::MAX;
            for i in (1..len).rev() {
                let next = ids.len() as u32;
                rest = *ids.entry((r.rhs[i], rest)).or_insert(next);
                suffix[i] = rest;
            }
            // The rule `lhs → rhs[i..]`, longer than two: `lhs → rhs[i] N` with N naming the
            // rest, new (and then split in turn) or shared.
            let (mut lhs, mut i) = (r.lhs, 0);
            loop {
                let (n, fresh) = match named.get(&suffix[i + 1]) {
                    Some(&n) => (n, false),
                    None => {
                        let n = self.fresh(&self.names[lhs.index()].clone());
                        named.insert(suffix[i + 1], n);
                        (n, true)
                    }
                };
                out.push(Rule {
                    lhs,
                    rhs: smallvec![r.rhs[i], Symbol::N(n)],
                });
                if !fresh {
                    break;
                }
                lhs = n;
                i += 1;
                if len - i <= 2 {
                    out.push(Rule {
                        lhs,
                        rhs: Rhs::from_slice(&r.rhs[i..]),
                    });
                    break;
                }
            }
        }
        self.rules = out;
    }

    /// In two-symbol rules, replaces each terminal `a` by a nonterminal whose only rule is
    /// `T → a` (reusing one that exists).
    pub fn lift_terminals(&mut self) {
        let counts = self.rule_counts();
        let mut wrapper: HashMap<Symbol, NonterminalId> = HashMap::new();
        for r in &self.rules {
            if r.lhs != self.start
                && counts[r.lhs.index()] == 1
                && r.rhs.len() == 1
                && matches!(r.rhs[0], Symbol::T(_))
            {
                wrapper.entry(r.rhs[0]).or_insert(r.lhs);
            }
        }
        let mut added = Vec::new();
        for i in 0..self.rules.len() {
            if self.rules[i].rhs.len() != 2 {
                continue;
            }
            for k in 0..2 {
                let s = self.rules[i].rhs[k];
                if let Symbol::T(t) = s {
                    let n = match wrapper.get(&s) {
                        Some(&n) => n,
                        None => {
                            let n = self.fresh(&format!("t{}", t.0));
                            wrapper.insert(s, n);
                            added.push(Rule {
                                lhs: n,
                                rhs: smallvec![s],
                            });
                            n
                        }
                    };
                    self.rules[i].rhs[k] = Symbol::N(n);
                }
            }
        }
        self.rules.extend(added);
    }

    /// Renumbers the nonterminals that still have rules densely, start first.
    pub fn compact(&mut self) {
        let mut map = vec![u32::MAX; self.names.len()];
        let mut old_names = std::mem::take(&mut self.names);
        let mut names = Vec::new();
        let mut assign = |n: NonterminalId, names: &mut Vec<String>| {
            if map[n.index()] == u32::MAX {
                map[n.index()] = names.len() as u32;
                names.push(std::mem::take(&mut old_names[n.index()]));
            }
        };
        assign(self.start, &mut names);
        for r in &self.rules {
            assign(r.lhs, &mut names);
            for s in &r.rhs {
                if let Symbol::N(n) = *s {
                    assign(n, &mut names);
                }
            }
        }
        for r in &mut self.rules {
            r.lhs = NonterminalId(map[r.lhs.index()]);
            for s in &mut r.rhs {
                if let Symbol::N(n) = s {
                    *n = NonterminalId(map[n.index()]);
                }
            }
        }
        self.start = NonterminalId(0);
        self.names = names;
    }
}

/// The pairs a right-hand side counts, left to right: non-overlapping occurrences, as
/// [`replace_pair`] replaces them (`a a a` counts `a a` once).
fn counted_pairs(rhs: &[Symbol]) -> impl Iterator<Item = (Symbol, Symbol)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        if i + 1 >= rhs.len() {
            return None;
        }
        let pair = (rhs[i], rhs[i + 1]);
        i += if pair.0 == pair.1 { 2 } else { 1 };
        Some(pair)
    })
}

/// For [`WorkGrammar::share_bigrams`]: how often each pair is counted in the long rules, and
/// the pairs by count (a heap whose entries are stale once their pair's count moved on).
#[derive(Default)]
struct BigramCounts {
    count: HashMap<(Symbol, Symbol), usize>,
    by_count: std::collections::BinaryHeap<(usize, (Symbol, Symbol))>,
}

impl BigramCounts {
    fn add(&mut self, rhs: &[Symbol]) {
        for p in counted_pairs(rhs) {
            let n = self.count.entry(p).or_insert(0);
            *n += 1;
            if *n >= 2 {
                self.by_count.push((*n, p));
            }
        }
    }

    fn remove(&mut self, rhs: &[Symbol]) {
        for p in counted_pairs(rhs) {
            let n = self.count.get_mut(&p).expect("a pair counted before");
            *n -= 1;
            if *n >= 2 {
                self.by_count.push((*n, p));
            }
        }
    }

    /// The highest count of a pair counted at least twice.
    fn highest(&mut self) -> Option<usize> {
        while let Some(&(n, p)) = self.by_count.peek() {
            if self.count[&p] == n {
                return Some(n);
            }
            self.by_count.pop();
        }
        None
    }
}

/// For [`WorkGrammar::share_bigrams`]: each pair's first rule `N → B C` (by position) whose
/// left side is not the start and has no other rule; such an N can stand for the pair.
#[derive(Default)]
struct PairRules {
    by_pair: HashMap<(Symbol, Symbol), (usize, NonterminalId)>,
}

impl PairRules {
    fn note(&mut self, r: &Rule, at: usize, start: NonterminalId, counts: &[usize]) {
        if r.rhs.len() != 2 || r.lhs == start || counts[r.lhs.index()] != 1 {
            return;
        }
        let e = self
            .by_pair
            .entry((r.rhs[0], r.rhs[1]))
            .or_insert((at, r.lhs));
        if at < e.0 {
            *e = (at, r.lhs);
        }
    }
}

/// `A → B C`, `A → B` or `A → ε` over nonterminals: a rule the passes could not make smaller.
fn is_normal_over_nonterminals(rhs: &[Symbol]) -> bool {
    rhs.len() <= 2 && rhs.iter().all(|s| matches!(s, Symbol::N(_)))
}

fn common_prefix_len<'a>(mut seqs: impl Iterator<Item = &'a [Symbol]>) -> usize {
    let Some(first) = seqs.next() else { return 0 };
    let mut len = first.len();
    for s in seqs {
        len = len.min(first.iter().zip(s).take_while(|(a, b)| a == b).count());
    }
    len
}

fn replace_pair(rhs: &[Symbol], pair: (Symbol, Symbol), with: Symbol) -> Rhs {
    let mut out = Rhs::with_capacity(rhs.len());
    let mut i = 0;
    while i < rhs.len() {
        if i + 1 < rhs.len() && (rhs[i], rhs[i + 1]) == pair {
            out.push(with);
            i += 2;
        } else {
            out.push(rhs[i]);
            i += 1;
        }
    }
    out
}
