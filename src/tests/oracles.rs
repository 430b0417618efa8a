//! Shared test support: random small grammars and automata, and brute-force oracles that
//! share no code with the normalizer or the search.

#![allow(dead_code)]

use crate::grammar::{
    earley::Recognizer, Grammar, GrammarBuilder, NonterminalId, NormalGrammar, Pattern, Symbol,
    TerminalId,
};
use crate::intersect::{Edge, LexemeDfa, StateId};
use proptest::prelude::*;

pub const TERMINALS: [&str; 3] = ["a", "b", "c"];

/// A grammar description: `rules[i]` lists the alternatives of nonterminal i; a symbol is
/// `Ok(t)` for terminal t or `Err(n)` for nonterminal n.
pub type RawRules = Vec<Vec<Vec<Result<u8, u8>>>>;

pub fn build_grammar(rules: &RawRules) -> Option<Grammar> {
    let mut b = GrammarBuilder::new();
    let ts: Vec<TerminalId> = TERMINALS
        .iter()
        .map(|t| b.terminal(t, Pattern::Literal(t.to_string()), 0))
        .collect();
    let ns: Vec<NonterminalId> = (0..rules.len())
        .map(|i| b.nonterminal(&format!("n{i}")))
        .collect();
    for (i, alts) in rules.iter().enumerate() {
        for alt in alts {
            let rhs = alt
                .iter()
                .map(|s| match *s {
                    Ok(t) => Symbol::T(ts[t as usize % ts.len()]),
                    Err(n) => Symbol::N(ns[n as usize % ns.len()]),
                })
                .collect();
            b.rule(ns[i], rhs);
        }
    }
    b.build(ns[0]).ok()
}

/// Random grammars over a, b, c with up to `max_nts` nonterminals whose start symbol
/// generates some word.
pub fn arb_grammar(max_nts: usize) -> impl Strategy<Value = Grammar> {
    let symbol = prop_oneof![(0u8..3).prop_map(Ok), (0u8..max_nts as u8).prop_map(Err),];
    let alt = prop::collection::vec(symbol, 0..=4);
    let alts = prop::collection::vec(alt, 1..=3);
    prop::collection::vec(alts, 1..=max_nts)
        .prop_filter_map("start derives nothing", |rules| build_grammar(&rules))
}

/// Random automata over a, b, c (nondeterministic ones too) with up to `max_states` states,
/// edge costs 0..=3, and a few ε-edges.
pub fn arb_dfa(max_states: usize) -> impl Strategy<Value = LexemeDfa> {
    (1..=max_states).prop_flat_map(|n| {
        let edge =
            (0..n as u32, 0u32..3, 0..n as u32, 0u32..=3).prop_map(|(from, t, to, cost)| Edge {
                from,
                terminal: TerminalId(t),
                to,
                cost,
            });
        (
            prop::collection::vec(edge, 0..=3 * n + 2),
            prop::collection::vec(0..n as u32, 0..=n),
            0..n as u32,
            prop::collection::vec((0..n as u32, 0..n as u32), 0..=n / 2 + 1),
        )
            .prop_map(move |(edges, accepting, start, epsilons)| {
                LexemeDfa::with_epsilons(n, start, &accepting, edges, &epsilons)
                    .expect("valid by construction")
            })
    })
}

/// The states `from` reaches by ε-edges (itself included).
pub fn epsilon_closure(d: &LexemeDfa, from: u32) -> Vec<u32> {
    let mut seen = vec![from];
    let mut i = 0;
    while i < seen.len() {
        for &r in d.epsilon_successors(seen[i]) {
            if !seen.contains(&r) {
                seen.push(r);
            }
        }
        i += 1;
    }
    seen
}

/// The same language without ε-edges, by the textbook construction: a state takes the edges
/// and the acceptance of every state its ε-closure holds.
pub fn without_epsilons(d: &LexemeDfa) -> LexemeDfa {
    let n = d.num_states();
    let mut edges = Vec::new();
    let mut accepting = Vec::new();
    for p in 0..n as u32 {
        for r in epsilon_closure(d, p) {
            if d.is_accepting(r) && !accepting.contains(&p) {
                accepting.push(p);
            }
            for e in d.edges().iter().filter(|e| e.from == r) {
                edges.push(Edge { from: p, ..*e });
            }
        }
    }
    LexemeDfa::new(n, d.start(), &accepting, edges).expect("same states")
}

/// Exact cheapest-witness cost of L(G) ∩ L(D), by a naive fixpoint over the *raw* grammar:
/// `cost[(p, A, q)]` relaxed through every rule's right-hand side, state pair by state pair,
/// until nothing improves. `None` when the intersection is empty.
pub fn oracle_cost(g: &Grammar, d: &LexemeDfa) -> Option<u64> {
    let d = &without_epsilons(d);
    let n = d.num_states();
    let v = g.nonterminals().len();
    let idx = |p: usize, a: usize, q: usize| (a * n + p) * n + q;
    let mut cost = vec![u64::MAX; v * n * n];
    loop {
        let mut changed = false;
        for r in g.rules() {
            // reach[p][q]: cheapest way for the rule's prefix to go from p to q.
            let mut reach = vec![u64::MAX; n * n];
            for p in 0..n {
                reach[p * n + p] = 0;
            }
            for s in &r.rhs {
                let mut next = vec![u64::MAX; n * n];
                for p in 0..n {
                    for mid in 0..n {
                        let c0 = reach[p * n + mid];
                        if c0 == u64::MAX {
                            continue;
                        }
                        match *s {
                            Symbol::T(t) => {
                                for e in d
                                    .edges()
                                    .iter()
                                    .filter(|e| e.terminal == t && e.from as usize == mid)
                                {
                                    let c = c0 + e.cost as u64;
                                    let slot = &mut next[p * n + e.to as usize];
                                    *slot = (*slot).min(c);
                                }
                            }
                            Symbol::N(b) => {
                                for q in 0..n {
                                    let cb = cost[idx(mid, b.index(), q)];
                                    if cb != u64::MAX {
                                        let slot = &mut next[p * n + q];
                                        *slot = (*slot).min(c0 + cb);
                                    }
                                }
                            }
                        }
                    }
                }
                reach = next;
            }
            for p in 0..n {
                for q in 0..n {
                    let c = reach[p * n + q];
                    if c < cost[idx(p, r.lhs.index(), q)] {
                        cost[idx(p, r.lhs.index(), q)] = c;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    (0..n)
        .filter(|&f| d.is_accepting(f as StateId))
        .map(|f| cost[idx(d.start() as usize, g.start().index(), f)])
        .filter(|&c| c != u64::MAX)
        .min()
}

/// All words over the grammar's first three terminals up to length `max_len`.
pub fn all_words(max_len: usize) -> Vec<Vec<TerminalId>> {
    let mut out = vec![vec![]];
    let mut frontier = vec![vec![]];
    for _ in 0..max_len {
        let mut next = Vec::new();
        for w in &frontier {
            for t in 0..3 {
                let mut w2: Vec<TerminalId> = w.clone();
                w2.push(TerminalId(t));
                next.push(w2);
            }
        }
        out.extend(next.iter().cloned());
        frontier = next;
    }
    out
}

/// The words up to `max_len` that `g` derives.
pub fn language(g: &Grammar, max_len: usize) -> Vec<Vec<TerminalId>> {
    let r = Recognizer::new(g);
    all_words(max_len)
        .into_iter()
        .filter(|w| r.recognizes(w))
        .collect()
}

/// The normalized grammar as an ordinary [`Grammar`], to run the Earley oracle on it.
pub fn normal_to_grammar(n: &NormalGrammar, terminals_of: &Grammar) -> Grammar {
    let mut b = GrammarBuilder::new();
    for t in terminals_of.terminals() {
        b.terminal(&t.name, t.pattern.clone(), t.priority);
    }
    let ids: Vec<NonterminalId> = (0..n.num_nonterminals())
        .map(|i| b.nonterminal(&format!("{}#{i}", n.name(NonterminalId(i as u32)))))
        .collect();
    for &(a, t) in n.terminal_rules() {
        b.rule(ids[a.index()], vec![Symbol::T(t)]);
    }
    for &a in n.epsilon_rules() {
        b.rule(ids[a.index()], vec![]);
    }
    for &(a, c) in n.unit_rules() {
        b.rule(ids[a.index()], vec![Symbol::N(ids[c.index()])]);
    }
    for &(a, l, r) in n.binary_rules() {
        b.rule(
            ids[a.index()],
            vec![Symbol::N(ids[l.index()]), Symbol::N(ids[r.index()])],
        );
    }
    b.build(ids[n.start().index()])
        .expect("a normalized grammar is valid")
}
