//! How the patterns of a `patternProperties` relate to each other and to all names: which
//! pattern matches every name, and which two patterns no name can match both.
//!
//! An object's member name is checked against every pattern, and its value must satisfy the
//! schema of each pattern it matches, or `additionalProperties` when it matches none. A grammar
//! gives each key one lexeme, so it can express that only where the set of patterns a name
//! matches follows from the name's lexeme: when the patterns are pairwise disjoint (a name
//! matches at most one), and when one pattern matches every name (no name is additional). Both
//! are decided on the decoded strings, exactly: universality from the pattern's shape (a branch
//! not anchored at its end whose body matches the empty string matches a prefix of every
//! string), disjointness by walking the product of the two patterns' DFAs. A question whose
//! answer costs more than [`MAX_PRODUCT_STATES`] is answered "not proven", which keeps the
//! object refused rather than guessed.

use regex_automata::dfa::{dense, Automaton};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::Anchored;

use super::strings::{pattern_branches, pattern_full_match, StringIssue};

/// The most pairs of DFA states a disjointness proof may visit.
pub const MAX_PRODUCT_STATES: usize = 100_000;

/// Whether the ECMA pattern matches (somewhere in) every string. `false` also where that is
/// true but not recognized: patterns anchored at their end (`^.*$` is not universal, since
/// `.` stops at line terminators).
pub fn matches_every_name(pattern: &str) -> Result<bool, StringIssue> {
    Ok(pattern_branches(pattern)?
        .iter()
        .any(|(_, body, end)| !end && body.properties().minimum_len() == Some(0)))
}

/// Whether no string matches both patterns: `Ok(false)` when one does, or when the proof
/// would visit more than [`MAX_PRODUCT_STATES`] pairs of states.
pub fn disjoint(a: &str, b: &str) -> Result<bool, StringIssue> {
    let (Some(da), Some(db)) = (full_match_dfa(a)?, full_match_dfa(b)?) else {
        return Ok(false);
    };
    let anchored = start::Config::new().anchored(Anchored::Yes);
    let sa = da.start_state(&anchored).map_err(bad)?;
    let sb = db.start_state(&anchored).map_err(bad)?;
    let mut seen: hashbrown::HashSet<(StateID, StateID)> = hashbrown::HashSet::new();
    let mut stack = vec![(sa, sb)];
    seen.insert((sa, sb));
    while let Some((p, q)) = stack.pop() {
        if da.is_match_state(da.next_eoi_state(p)) && db.is_match_state(db.next_eoi_state(q)) {
            return Ok(false);
        }
        for byte in 0..=255u8 {
            let (np, nq) = (da.next_state(p, byte), db.next_state(q, byte));
            if da.is_dead_state(np) || db.is_dead_state(nq) || !seen.insert((np, nq)) {
                continue;
            }
            if seen.len() > MAX_PRODUCT_STATES {
                return Ok(false);
            }
            stack.push((np, nq));
        }
    }
    Ok(true)
}

/// The DFA of the decoded strings a pattern matches, anchored at both ends; `None` when it is
/// too large to build (the caller then proves nothing).
fn full_match_dfa(pattern: &str) -> Result<Option<dense::DFA<Vec<u32>>>, StringIssue> {
    let hir = pattern_full_match(pattern)?;
    let nfa = thompson::Compiler::new()
        .configure(crate::grammar::automaton_size::pattern_nfa_config())
        .build_from_hir(&hir)
        .map_err(bad)?;
    match dense::Builder::new()
        .configure(
            crate::grammar::automaton_size::pattern_dfa_config()
                .start_kind(regex_automata::dfa::StartKind::Anchored),
        )
        .build_from_nfa(&nfa)
    {
        Ok(dfa) => Ok(Some(dfa)),
        Err(e) if e.is_size_limit_exceeded() => Ok(None),
        Err(e) => Err(bad(e)),
    }
}

fn bad(e: impl std::fmt::Display) -> StringIssue {
    StringIssue::BadPattern(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn universal_patterns_are_end_free_branches_that_match_the_empty_string() {
        for p in [".*", "^.*", "", "a*", "^", "x?|y", "(?:)"] {
            assert!(matches_every_name(p).unwrap(), "{p}");
        }
        for p in ["^.*$", ".+", "^a*$", "a", "^.+$", "[a-z]"] {
            assert!(!matches_every_name(p).unwrap(), "{p}");
        }
    }

    /// Against brute force: every string of up to 4 characters over a small alphabet, and the
    /// longer names the prefix patterns need.
    #[test]
    fn disjointness_agrees_with_brute_force() {
        let patterns = [
            "^contexts_.*",
            "^unstruct_event_.*",
            "^a",
            "b$",
            "^a.*b$",
            "^[0-9]+$",
            "^x[0-9]",
            "^$",
            "_",
            "^[a-z]+$",
            "^ab|^ba",
        ];
        let alphabet = ['a', 'b', 'x', '1', '_', '\n'];
        let mut strings = vec![String::new()];
        let mut layer = vec![String::new()];
        for _ in 0..4 {
            layer = layer
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            strings.extend(layer.iter().cloned());
        }
        for long in [
            "contexts_",
            "contexts_b",
            "unstruct_event_",
            "unstruct_event_b",
        ] {
            strings.push(long.into());
        }
        for a in patterns {
            let ma = super::super::strings::pattern_matcher(a).unwrap();
            for b in patterns {
                let mb = super::super::strings::pattern_matcher(b).unwrap();
                let proven = disjoint(a, b).unwrap();
                let common = strings.iter().find(|s| ma.is_match(s) && mb.is_match(s));
                assert_eq!(proven, common.is_none(), "{a} and {b}: {common:?}");
            }
        }
        assert!(disjoint("^contexts_.*", "^unstruct_event_.*").unwrap());
        assert!(disjoint("^[0-9]+$", "^[a-z]+$").unwrap());
        assert!(!disjoint("^a", "b$").unwrap());
        assert!(!disjoint("_", "^x[0-9]").unwrap());
    }
}
