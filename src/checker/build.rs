//! Building a checker's two halves: the normalized grammar, which the search reads, and the
//! lexer's DFA, which every canvas is lexed with.
//!
//! They are independent until the first check, so a larger grammar builds them on two
//! threads. The normalization is the longer half for most grammars (a Kubernetes schema: ~5.5
//! ms against ~3.5 ms for the lexer), so the lexer's thread fills its idle time with a
//! [`warm_up`] that stops, unfinished or not, when the normal form's productions are final:
//! their indices and lexical context are then built side by side on two threads
//! (`NormalGrammar::from_grammar_then`), which a third would slow. The warm-up never lengthens
//! the build, and a generation's first check finds part or all of its hole sets built.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::canvas::HoleyText;
use crate::deadline::Deadline;
use crate::grammar::{Grammar, NormalGrammar};
use crate::holey::{HoleyLexer, LexLimits};
use crate::lexicon::LexiconError;

/// Grammars of at least this many rules build their checker on two threads
/// ([`Checker::with_budgets`](super::Checker::with_budgets)); smaller ones build in well under
/// a millisecond, where a thread's start is not worth it. On the 969 MaskBench schemas whose
/// build took 1.5–12 ms (`eval/maskbench.rs`), thresholds from 100 to 800 rules measured
/// alike, all 15–20% faster than one thread.
pub const PARALLEL_BUILD_RULES: usize = 400;

/// The normalized grammar and the lexer of `grammar`.
pub(super) fn normal_and_lexer(
    grammar: &Grammar,
    limits: LexLimits,
) -> Result<(NormalGrammar, HoleyLexer), LexiconError> {
    if grammar.rules().len() < PARALLEL_BUILD_RULES {
        let normal = NormalGrammar::from_grammar(grammar);
        return Ok((normal, HoleyLexer::new(grammar, limits)?));
    }
    std::thread::scope(|scope| {
        let stop_warm_up = Arc::new(AtomicBool::new(false));
        let stop = stop_warm_up.clone();
        let lexing = scope.spawn(move || {
            let mut lexer = HoleyLexer::new(grammar, limits)?;
            warm_up(&mut lexer, stop);
            Ok(lexer)
        });
        // The warm-up stops when the normal form's productions are final: its indices and
        // lexical context are then built on two threads, which a third would slow down.
        let normal = NormalGrammar::from_grammar_then(grammar, || {
            stop_warm_up.store(true, Ordering::Relaxed)
        });
        let lexer = lexing
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        Ok((normal, lexer))
    })
}

/// Lexes a canvas that is one hole until `stop` is set (or from the start, if it is). That builds the hole set of
/// everything the lexer can reach and its moves on each lexeme, which the first check of a
/// canvas with a hole needs (up to 4–6 ms on the slowest MaskBench schemas: `eval/maskbench.rs`'s
/// `hole_check_us` with no warm-up). What it finishes stays in the lexer's tables; a
/// construction that `stop` interrupts caches only what it completed, as under any deadline,
/// and the check that needs the rest builds it.
fn warm_up(lexer: &mut HoleyLexer, stop: Arc<AtomicBool>) {
    lexer.set_deadline(Deadline::never().with_cancel(stop));
    let _ = lexer.automaton(&HoleyText::one_hole());
    lexer.set_deadline(Deadline::never());
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::checker::{Budgets, Check, Checker};
    use crate::grammar::spec;
    use crate::tests::holey;

    fn verdicts(checker: &mut Checker, canvases: &[HoleyText]) -> Vec<(String, usize)> {
        canvases
            .iter()
            .map(|t| {
                let Check {
                    verdict,
                    dfa_states,
                    ..
                } = checker.check_text(t);
                (format!("{verdict:?}"), dfa_states)
            })
            .collect()
    }

    /// A checker whose lexer's warm-up was stopped after `after` (never started for `None`).
    fn interrupted(grammar: &Grammar, after: Option<Duration>) -> Checker {
        let budgets = Budgets::default();
        let mut lexer = HoleyLexer::new(grammar, budgets.lexing).expect("a lexer");
        let stop = Arc::new(AtomicBool::new(after.is_none()));
        std::thread::scope(|scope| {
            if let Some(after) = after {
                let stop = stop.clone();
                scope.spawn(move || {
                    std::thread::sleep(after);
                    stop.store(true, Ordering::Relaxed);
                });
            }
            warm_up(&mut lexer, stop.clone());
        });
        let normal = NormalGrammar::from_grammar(grammar);
        Checker::from_parts(grammar.clone(), normal, lexer, budgets)
    }

    /// Wherever the warm-up is stopped (before it starts, in the middle of a hole's closure,
    /// after it ends), every later check answers as a checker built with no warm-up at all:
    /// the same verdicts over automata of the same size. JSON's warm-up takes ~75 µs, C++'s
    /// ~65 ms, so the stops land before, inside and after it.
    #[test]
    fn a_stopped_warm_up_leaves_the_checks_as_they_were() {
        let cases: [(&str, Vec<HoleyText>); 2] = [
            (
                "json",
                vec![
                    HoleyText::one_hole(),
                    holey(&["{\"a\": ", "}"]),
                    holey(&["[1, ", "2]"]),
                    holey(&["\"ab", "\""]),
                    holey(&["{", ",}"]),
                    holey(&["[", "]]"]),
                    holey(&["{\"a\": 1}"]),
                    holey(&["{\"a\" 1}"]),
                ],
            ),
            (
                "cpp",
                vec![
                    HoleyText::one_hole(),
                    holey(&["int main() {", "}"]),
                    holey(&["/* ", ""]),
                    holey(&["int f(int x) { return \"", "; }"]),
                    holey(&["#include <", ">\nint x;"]),
                    holey(&["int x = 1", "2;", ""]),
                    holey(&["int main() { return 0; }"]),
                    holey(&["int main() { return 0; "]),
                ],
            ),
        ];
        for (name, canvases) in cases {
            let grammar = spec::load(name).expect("a shipped grammar");
            let expected = verdicts(&mut interrupted(&grammar, None), &canvases);
            assert!(
                expected.iter().any(|(v, _)| v == "Completable")
                    && expected.iter().any(|(v, _)| v == "NotCompletable"),
                "{name}: the canvases should get both answers: {expected:?}"
            );
            for micros in [0, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 1_000_000] {
                let after = Some(Duration::from_micros(micros));
                let got = verdicts(&mut interrupted(&grammar, after), &canvases);
                assert_eq!(got, expected, "{name}, warm-up stopped after {micros} µs");
            }
        }
    }

    /// A grammar past [`PARALLEL_BUILD_RULES`] builds on two threads, its lexer warmed up
    /// while the normalization runs; its checker answers as one built with no warm-up.
    #[test]
    fn two_thread_builds_answer_as_unwarmed_builds() {
        // Forty objects of three members: past the threshold, with strings, numbers and keys.
        let properties: serde_json::Map<String, serde_json::Value> = (0..40)
            .map(|i| {
                let member = serde_json::json!({"type": "object", "properties": {
                    "name": {"type": "string", "maxLength": 5},
                    "n": {"type": "integer", "minimum": i},
                    "tag": {"enum": [format!("t{i}"), null]},
                }});
                (format!("p{i}"), member)
            })
            .collect();
        let schema = serde_json::json!({"type": "object", "properties": properties});
        let grammar = crate::grammar::schema::compile(&schema, &Default::default())
            .expect("a schema that compiles")
            .grammar;
        assert!(grammar.rules().len() >= PARALLEL_BUILD_RULES);
        let canvases = [
            HoleyText::one_hole(),
            holey(&["{\"p3\": {\"n\": ", "}}"]),
            holey(&["{\"p3\": {\"n\": 2", "}}"]),
            holey(&["{\"p7\": {\"tag\": \"t", "\"}}"]),
            holey(&["{\"p7\": {\"tag\": \"t8", "\"}}"]),
            holey(&["{\"p9\": {\"name\": \"", "\", \"n\": 9}}"]),
            holey(&["{\"p9\": {\"name\": \"abcdef", "\"}}"]),
        ];
        let expected = verdicts(&mut interrupted(&grammar, None), &canvases);
        assert!(
            expected.iter().any(|(v, _)| v == "NotCompletable"),
            "{expected:?}"
        );
        let mut built = Checker::new(grammar).expect("a checker");
        assert_eq!(verdicts(&mut built, &canvases), expected);
    }
}
