//! The normalizer's passes as they were first written: each a sweep over all rules per step,
//! quadratic on large grammars. The tests check that the passes of `work` give exactly the same
//! grammars, rule for rule and name for name.

use hashbrown::HashMap;

use crate::grammar::analysis::generating_rules;
use crate::grammar::{NonterminalId, Rule, Symbol};

/// A grammar under rewriting: rules with arbitrary right-hand sides over nonterminal ids that
/// need not be dense.
#[derive(Clone, Debug)]
pub struct RefGrammar {
    pub names: Vec<String>,
    pub rules: Vec<Rule>,
    pub start: NonterminalId,
}

impl RefGrammar {
    pub fn fresh(&mut self, base: &str) -> NonterminalId {
        let id = NonterminalId(self.names.len() as u32);
        let base = base.split("__").next().unwrap_or(base);
        self.names.push(format!("{base}__{}", id.0));
        id
    }

    /// Number of rules whose left-hand side is each nonterminal.
    fn rule_counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.names.len()];
        for r in &self.rules {
            counts[r.lhs.index()] += 1;
        }
        counts
    }

    /// Occurrences of each nonterminal on right-hand sides.
    fn occurrences(&self) -> Vec<usize> {
        let mut occ = vec![0; self.names.len()];
        for r in &self.rules {
            for s in &r.rhs {
                if let Symbol::N(n) = s {
                    occ[n.index()] += 1;
                }
            }
        }
        occ
    }

    /// Sorts the rules and drops duplicates and trivial self-loops `A → A`.
    pub fn dedupe(&mut self) {
        self.rules
            .retain(|r| !(r.rhs.len() == 1 && r.rhs[0] == Symbol::N(r.lhs)));
        self.rules.sort();
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
        let mut by_lhs: Vec<Vec<usize>> = vec![Vec::new(); self.names.len()];
        for (i, r) in self.rules.iter().enumerate() {
            by_lhs[r.lhs.index()].push(i);
        }
        while let Some(a) = stack.pop() {
            for &ri in &by_lhs[a.index()] {
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
    pub fn substitute_aliases(&mut self) {
        loop {
            let counts = self.rule_counts();
            let alias = self.rules.iter().find(|r| {
                r.lhs != self.start
                    && counts[r.lhs.index()] == 1
                    && r.rhs.len() == 1
                    && r.rhs[0] != Symbol::N(r.lhs)
            });
            let Some(alias) = alias.cloned() else { return };
            let from = Symbol::N(alias.lhs);
            let to = alias.rhs[0];
            self.rules.retain(|r| r.lhs != alias.lhs);
            for r in &mut self.rules {
                for s in &mut r.rhs {
                    if *s == from {
                        *s = to;
                    }
                }
            }
        }
    }

    /// Inlines a nonterminal used exactly once when that cannot grow the binarized grammar:
    /// it has a single rule, or its one use is a unit rule `A → B`.
    pub fn inline_single_use(&mut self) {
        loop {
            let counts = self.rule_counts();
            let occ = self.occurrences();
            let site = self.rules.iter().enumerate().find_map(|(ri, r)| {
                r.rhs.iter().enumerate().find_map(|(pos, s)| match *s {
                    Symbol::N(b)
                        if b != self.start
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
            let bodies: Vec<Vec<Symbol>> = self
                .rules
                .iter()
                .filter(|r| r.lhs == b)
                .map(|r| r.rhs.clone())
                .collect();
            self.rules.retain(|r| r.lhs != b);
            for body in bodies {
                let mut rhs = host.rhs[..pos].to_vec();
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
        let mut work: Vec<NonterminalId> =
            (0..self.names.len() as u32).map(NonterminalId).collect();
        while let Some(a) = work.pop() {
            let mut by_first: HashMap<Symbol, Vec<usize>> = HashMap::new();
            for (i, r) in self.rules.iter().enumerate() {
                if r.lhs == a && !r.rhs.is_empty() {
                    by_first.entry(r.rhs[0]).or_default().push(i);
                }
            }
            let mut groups: Vec<Vec<usize>> =
                by_first.into_values().filter(|g| g.len() > 1).collect();
            if groups.is_empty() {
                continue;
            }
            groups.sort();
            let mut remove = Vec::new();
            let mut added = Vec::new();
            for group in groups {
                let prefix_len = common_prefix_len(group.iter().map(|&i| &self.rules[i].rhs[..]));
                let prefix = self.rules[group[0]].rhs[..prefix_len].to_vec();
                let rest = self.fresh(&self.names[a.index()].clone());
                for &i in &group {
                    added.push(Rule {
                        lhs: rest,
                        rhs: self.rules[i].rhs[prefix_len..].to_vec(),
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
                self.rules.swap_remove(i);
            }
            self.rules.extend(added);
        }
    }

    /// Shared 2-gram elimination: while some pair `B C` occurs at least twice inside
    /// right-hand sides longer than two, name it once (`N → B C`) and use `N` instead.
    pub fn share_bigrams(&mut self) {
        loop {
            let mut counts: HashMap<(Symbol, Symbol), (usize, usize)> = HashMap::new();
            let mut order = 0usize;
            for r in self.rules.iter().filter(|r| r.rhs.len() > 2) {
                let mut i = 0;
                while i + 1 < r.rhs.len() {
                    let e = counts.entry((r.rhs[i], r.rhs[i + 1])).or_insert_with(|| {
                        order += 1;
                        (0, order)
                    });
                    e.0 += 1;
                    // Count non-overlapping occurrences, as the replacement below does.
                    i += if r.rhs[i] == r.rhs[i + 1] { 2 } else { 1 };
                }
            }
            let best = counts
                .into_iter()
                .filter(|(_, (c, _))| *c >= 2)
                .max_by_key(|(_, (c, first))| (*c, std::cmp::Reverse(*first)));
            let Some(((b, c), _)) = best else { return };
            let pair = self.pair_nonterminal(b, c);
            for r in self.rules.iter_mut().filter(|r| r.rhs.len() > 2) {
                r.rhs = replace_pair(&r.rhs, (b, c), Symbol::N(pair));
            }
        }
    }

    /// A nonterminal deriving exactly `b c`: an existing one whose only rule is that, or new.
    fn pair_nonterminal(&mut self, b: Symbol, c: Symbol) -> NonterminalId {
        let counts = self.rule_counts();
        if let Some(r) = self
            .rules
            .iter()
            .find(|r| r.lhs != self.start && counts[r.lhs.index()] == 1 && r.rhs[..] == [b, c])
        {
            return r.lhs;
        }
        let n = self.fresh("pair");
        self.rules.push(Rule {
            lhs: n,
            rhs: vec![b, c],
        });
        n
    }

    /// Splits right-hand sides longer than two into right-branching chains; equal suffixes
    /// share one chain.
    pub fn binarize(&mut self) {
        let mut suffixes: HashMap<Vec<Symbol>, NonterminalId> = HashMap::new();
        let mut out = Vec::with_capacity(self.rules.len());
        let mut pending: Vec<Rule> = std::mem::take(&mut self.rules);
        while let Some(r) = pending.pop() {
            if r.rhs.len() <= 2 {
                out.push(r);
                continue;
            }
            let tail = r.rhs[1..].to_vec();
            let n = match suffixes.get(&tail) {
                Some(&n) => n,
                None => {
                    let n = self.fresh(&self.names[r.lhs.index()].clone());
                    suffixes.insert(tail.clone(), n);
                    pending.push(Rule { lhs: n, rhs: tail });
                    n
                }
            };
            out.push(Rule {
                lhs: r.lhs,
                rhs: vec![r.rhs[0], Symbol::N(n)],
            });
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
                                rhs: vec![s],
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
        let mut names = Vec::new();
        let mut assign = |n: NonterminalId, names: &mut Vec<String>| {
            if map[n.index()] == u32::MAX {
                map[n.index()] = names.len() as u32;
                names.push(self.names[n.index()].clone());
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

fn common_prefix_len<'a>(mut seqs: impl Iterator<Item = &'a [Symbol]>) -> usize {
    let Some(first) = seqs.next() else { return 0 };
    let mut len = first.len();
    for s in seqs {
        len = len.min(first.iter().zip(s).take_while(|(a, b)| a == b).count());
    }
    len
}

fn replace_pair(rhs: &[Symbol], pair: (Symbol, Symbol), with: Symbol) -> Vec<Symbol> {
    let mut out = Vec::with_capacity(rhs.len());
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
