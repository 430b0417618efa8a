//! Merging the states of a lexeme automaton that accept the same words from there on.
//!
//! A mask's automaton holds, after the open position, a graph of token paths for every
//! configuration a token can leave the lexer in: an exact hole of one token is entered from
//! each of them, and its paths end in the few configurations the text after it starts from.
//! Many of those states differ only in how they were reached: from there on they read the same
//! lexemes into the same places. The search settles items `(p, A, q)` for every such `q`
//! alike, so a JSON mask two positions before a block's end had 7,150 states and settled
//! 100,000 items, most of them spanning the open position into those copies.
//!
//! Two states with the same acceptance and the same labelled edges (terminal, cost, target)
//! and ε-edges accept the same words, so one can stand for both; repeating that with edges
//! read up to the classes of the round before merges what reads alike for longer. Each round
//! only merges further (states alike under the finer classes are alike under the coarser
//! ones), and every round's classes accept the same words as their members, so stopping early
//! is exact too; the rounds stop when a round merges less than 1/32 of the classes. States in
//! cycles that are alike only as wholes stay apart (the classes grow from single states, not
//! down from one class), which is coarse enough for the copies above and never wrong.
//!
//! Protected states keep a class of their own: the start, and the ends of the open position's
//! paths, which tell its tokens apart (see [`super::nfa::PathMark`]).

use hashbrown::HashMap;

use crate::intersect::Edge;

/// The most rounds of merging: each costs a pass over the edges (ten rounds reached every
/// fixpoint measured).
const MAX_ROUNDS: usize = 16;

/// The class of each of the `n` states (`u32::MAX` where `live` is false), numbered from 0 in
/// order of their first state, merging states that accept the same words as described in the
/// [module docs](self). `edges` and `epsilons` may name dead states; those edges are ignored.
pub fn classes(
    n: usize,
    live: &[bool],
    accepting: &[bool],
    protected: &[bool],
    edges: &[Edge],
    epsilons: &[(u32, u32)],
) -> Vec<u32> {
    // Edges by source, live ends only: (terminal, cost, to), with ε-edges as terminal MAX.
    const EPSILON: u32 = u32::MAX;
    let mut start = vec![0u32; n + 1];
    let arcs = edges
        .iter()
        .map(|e| (e.from, e.terminal.0, e.cost, e.to))
        .chain(epsilons.iter().map(|&(f, t)| (f, EPSILON, 0, t)))
        .filter(|&(f, _, _, t)| live[f as usize] && live[t as usize]);
    for (f, ..) in arcs.clone() {
        start[f as usize + 1] += 1;
    }
    for q in 0..n {
        start[q + 1] += start[q];
    }
    let mut fill = start.clone();
    let mut out = vec![(0u32, 0u32, 0u32); start[n] as usize];
    for (f, t, c, to) in arcs {
        out[fill[f as usize] as usize] = (t, c, to);
        fill[f as usize] += 1;
    }
    let mut class: Vec<u32> = (0..n as u32).collect();
    let mut count = live.iter().filter(|&&l| l).count();
    let mut signatures: Vec<u32> = Vec::new();
    let mut bounds: Vec<(usize, usize)> = vec![(0, 0); n];
    let mut row: Vec<(u32, u32, u32)> = Vec::new();
    for _ in 0..MAX_ROUNDS {
        signatures.clear();
        for q in 0..n {
            if !live[q] {
                continue;
            }
            let begin = signatures.len();
            if protected[q] {
                // A class of its own: a signature no other state writes.
                signatures.extend([2, q as u32]);
            } else {
                signatures.push(accepting[q] as u32);
                row.clear();
                let arcs = &out[start[q] as usize..start[q + 1] as usize];
                row.extend(arcs.iter().map(|&(t, c, to)| (t, c, class[to as usize])));
                row.sort_unstable();
                row.dedup();
                signatures.extend(row.iter().flat_map(|&(t, c, to)| [t, c, to]));
            }
            bounds[q] = (begin, signatures.len());
        }
        let mut ids: HashMap<&[u32], u32> = HashMap::with_capacity(count);
        let mut next = vec![u32::MAX; n];
        for q in 0..n {
            if live[q] {
                let (b, e) = bounds[q];
                let fresh = ids.len() as u32;
                next[q] = *ids.entry(&signatures[b..e]).or_insert(fresh);
            }
        }
        let merged = ids.len();
        class = next;
        // Stop where a round merges little: a round costs about as much as the first, and
        // an automaton with little to merge (a run of any text after the open position)
        // would pay for rounds that save nothing.
        if merged + count / 32 >= count {
            break;
        }
        count = merged;
    }
    class
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::TerminalId;

    fn edge(from: u32, terminal: u32, to: u32) -> Edge {
        Edge {
            from,
            terminal: TerminalId(terminal),
            to,
            cost: 0,
        }
    }

    /// Two copies of a chain `a b` into one accepting state merge, state by state; a chain
    /// reading `a c` does not; the protected start and a protected copy stay apart.
    #[test]
    fn copies_merge_and_protected_states_stay() {
        // 0 -ε-> 1 -a-> 2 -b-> 7; 0 -ε-> 3 -a-> 4 -b-> 7; 0 -ε-> 5 -a-> 6 -c-> 7; 7 accepts.
        let edges = [
            edge(1, 0, 2),
            edge(2, 1, 7),
            edge(3, 0, 4),
            edge(4, 1, 7),
            edge(5, 0, 6),
            edge(6, 2, 7),
        ];
        let eps = [(0, 1), (0, 3), (0, 5)];
        let live = [true; 8];
        let mut accepting = [false; 8];
        accepting[7] = true;
        let mut protected = [false; 8];
        protected[0] = true;
        let c = classes(8, &live, &accepting, &protected, &edges, &eps);
        assert_eq!((c[1] == c[3], c[2] == c[4]), (true, true));
        assert_ne!(c[1], c[5]);
        assert_ne!(c[2], c[6]);
        assert_ne!(c[0], c[1]);
        protected[3] = true;
        let c = classes(8, &live, &accepting, &protected, &edges, &eps);
        assert_ne!(c[1], c[3]);
        assert_eq!(c[2], c[4], "below a protected state, copies still merge");
    }

    /// The words of at most `len` lexemes accepted from `q` (ε-edges followed anywhere).
    fn words(
        q: u32,
        len: usize,
        accepting: &[bool],
        edges: &[Edge],
        eps: &[(u32, u32)],
    ) -> Vec<Vec<u32>> {
        let closure = |set: Vec<u32>| {
            let mut set = set;
            let mut i = 0;
            while i < set.len() {
                for &(f, t) in eps {
                    if f == set[i] && !set.contains(&t) {
                        set.push(t);
                    }
                }
                i += 1;
            }
            set.sort_unstable();
            set
        };
        let mut out = Vec::new();
        let mut frontier = vec![(Vec::new(), closure(vec![q]))];
        for depth in 0..=len {
            let mut next = Vec::new();
            for (word, set) in frontier {
                if set.iter().any(|&s| accepting[s as usize]) {
                    out.push(word.clone());
                }
                if depth == len {
                    continue;
                }
                for t in 0..3 {
                    let to: Vec<u32> = edges
                        .iter()
                        .filter(|e| e.terminal.0 == t && set.contains(&e.from))
                        .map(|e| e.to)
                        .collect();
                    if !to.is_empty() {
                        let mut w = word.clone();
                        w.push(t);
                        next.push((w, closure(to)));
                    }
                }
            }
            frontier = next;
        }
        out.sort();
        out
    }

    /// On random automata of up to 9 states (cycles and ε-edges included), states of one
    /// class accept the same words of up to 5 lexemes, and protected states are alone.
    #[test]
    fn merged_states_accept_the_same_words() {
        let mut next = crate::tests::draws(0x9e37_79b9_7f4a_7c15_u64);
        let mut merged_somewhere = false;
        for _ in 0..400 {
            let n = 2 + next(8) as usize;
            let edges: Vec<Edge> = (0..next(14))
                .map(|_| edge(next(n as u64) as u32, next(3) as u32, next(n as u64) as u32))
                .collect();
            let eps: Vec<(u32, u32)> = (0..next(4))
                .map(|_| (next(n as u64) as u32, next(n as u64) as u32))
                .filter(|(f, t)| f != t)
                .collect();
            let accepting: Vec<bool> = (0..n).map(|_| next(3) == 0).collect();
            let protected: Vec<bool> = (0..n).map(|q| q == 0 || next(5) == 0).collect();
            let live = vec![true; n];
            let c = classes(n, &live, &accepting, &protected, &edges, &eps);
            for a in 0..n {
                for b in a + 1..n {
                    if c[a] != c[b] {
                        continue;
                    }
                    merged_somewhere = true;
                    assert!(
                        !protected[a] && !protected[b],
                        "protected {a} or {b} merged"
                    );
                    assert_eq!(
                        words(a as u32, 5, &accepting, &edges, &eps),
                        words(b as u32, 5, &accepting, &edges, &eps),
                        "states {a} and {b} of {edges:?} {eps:?} {accepting:?}"
                    );
                }
            }
        }
        assert!(merged_somewhere);
    }
}
