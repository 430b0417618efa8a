//! The lexer table as regex-automata's dense determinizer builds it: the fallback for
//! look-around and for tables past the lexicon's own construction's limit
//! (`determinize.rs`), and the oracle the tests and benchmarks hold that construction to.

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson::NFA;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};

use super::determinize::Determinized;
use super::table::{finish, too_large, Lexicon, LexiconError, Patterns, DEAD};
use crate::grammar::Grammar;

/// The lexicon of `nfa` determinized by regex-automata, under `size_limit` bytes of DFA and of
/// determinization memory where one is given.
pub(super) fn with_regex_automata(
    g: &Grammar,
    patterns: Patterns,
    nfa: &NFA,
    size_limit: Option<usize>,
) -> Result<Lexicon, LexiconError> {
    let entries = &patterns.entries;
    let dfa = dense::Builder::new()
        .configure(
            dense::DFA::config()
                .match_kind(MatchKind::All)
                .start_kind(StartKind::Anchored)
                .dfa_size_limit(size_limit)
                .determinize_size_limit(size_limit),
        )
        .build_from_nfa(nfa)
        .map_err(|e| {
            if e.is_size_limit_exceeded() {
                too_large(g, entries)
            } else {
                LexiconError::Build(e.to_string())
            }
        })?;
    let start = dfa
        .start_state(&start::Config::new().anchored(Anchored::Yes))
        .map_err(|e| LexiconError::Build(e.to_string()))?;
    finish(g, tabulate(&dfa, start), patterns)
}

/// Explores the regex-automata DFA from `start` and copies it into a dense table over its
/// byte classes, with state 0 as the dead state.
fn tabulate(dfa: &dense::DFA<Vec<u32>>, start: StateID) -> Determinized {
    let bc = dfa.byte_classes();
    let mut classes = [0u8; 256];
    let mut representatives = Vec::new();
    for b in 0..=255u8 {
        let c = bc.get(b);
        classes[b as usize] = c;
        if c as usize == representatives.len() {
            representatives.push(b);
        }
    }
    let num_classes = representatives.len();
    let mut ids = hashbrown::HashMap::new();
    let mut order = vec![None, Some(start)];
    ids.insert(start, 1u32);
    let mut trans = vec![DEAD; 2 * num_classes];
    let mut i = 1;
    while i < order.len() {
        let s = order[i].expect("only the dead slot is None");
        for (c, &b) in representatives.iter().enumerate() {
            let n = dfa.next_state(s, b);
            let id = if dfa.is_dead_state(n) || dfa.is_quit_state(n) {
                DEAD
            } else {
                *ids.entry(n).or_insert_with(|| {
                    order.push(Some(n));
                    trans.extend(std::iter::repeat_n(DEAD, num_classes));
                    order.len() as u32 - 1
                })
            };
            trans[i * num_classes + c] = id;
        }
        i += 1;
    }
    let matches = order
        .iter()
        .map(|s| match s {
            None => Vec::new(),
            Some(s) => matches_at(dfa, *s),
        })
        .collect();
    Determinized {
        classes,
        num_classes,
        trans,
        matches,
    }
}

/// The patterns matching if the token ends at `s`, ascending.
fn matches_at(dfa: &dense::DFA<Vec<u32>>, s: StateID) -> Vec<u32> {
    let eoi = dfa.next_eoi_state(s);
    if !dfa.is_match_state(eoi) {
        return Vec::new();
    }
    let mut m: Vec<u32> = (0..dfa.match_len(eoi))
        .map(|i| dfa.match_pattern(eoi, i).as_u32())
        .collect();
    m.sort_unstable();
    m
}
