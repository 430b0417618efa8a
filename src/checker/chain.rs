//! The automaton of a text lexed left to right, for the checks that do not go through the
//! holey lexer: a text too long for its tables, and the re-check of a completion.

use crate::grammar::TerminalId;
use crate::intersect::{Edge, LexemeDfa};
use crate::lexicon::Lexeme;

/// The automaton of a lexed text: state i is "before token i"; a token with several possible
/// lexemes has an edge for each, and a token that may also be skipped lets its state take the
/// next state's edges as well (copied, so no ε-edges are needed).
pub(super) fn chain_dfa(tokens: &[smallvec::SmallVec<[Lexeme; 2]>]) -> LexemeDfa {
    let n = tokens.len();
    let mut out_edges: Vec<Vec<(TerminalId, u32)>> = vec![Vec::new(); n + 1];
    let mut accepting = vec![n as u32];
    for i in (0..n).rev() {
        let mut e: Vec<(TerminalId, u32)> = tokens[i]
            .iter()
            .filter_map(|l| match *l {
                Lexeme::Terminal(t) => Some((t, i as u32 + 1)),
                Lexeme::Skip => None,
            })
            .collect();
        if tokens[i].contains(&Lexeme::Skip) {
            e.extend(out_edges[i + 1].clone());
            if accepting.contains(&(i as u32 + 1)) {
                accepting.push(i as u32);
            }
        }
        out_edges[i] = e;
    }
    let edges = out_edges
        .iter()
        .enumerate()
        .flat_map(|(from, es)| {
            es.iter().map(move |&(terminal, to)| Edge {
                from: from as u32,
                terminal,
                to,
                cost: 0,
            })
        })
        .collect();
    LexemeDfa::new(n + 1, 0, &accepting, edges).expect("chain states are in range")
}
