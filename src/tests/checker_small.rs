//! The infilling checker on a small expression grammar, against brute force: every filling of
//! the holes (up to a length, over a small alphabet) that lexes and parses with the independent
//! lexer + Earley route must make the checker say `completable`; every completion the checker
//! returns must contain the chunks in order and parse by that route.

use crate::canvas::HoleyText;
use crate::checker::{CheckVerdict, Checker};
use crate::grammar::earley::Recognizer;
use crate::grammar::{Grammar, GrammarBuilder, Pattern, Symbol, TerminalId};
use crate::holey::{HoleyLexer, LexLimits};
use crate::lexicon::{Lexeme, Lexicon};
use crate::tests::holey;
use proptest::prelude::*;

/// expr: term | expr "+" term
/// term: NUM | ID | "(" expr ")" | "while" "(" expr ")" | "[" NUM NUM "]"
fn expr_grammar() -> Grammar {
    let mut b = GrammarBuilder::new();
    let num = b.terminal("NUM", Pattern::Regex("[0-9]+".into()), 0);
    let id = b.terminal("ID", Pattern::Regex("[a-z]+".into()), 0);
    let plus = b.terminal("\"+\"", Pattern::Literal("+".into()), 0);
    let lp = b.terminal("\"(\"", Pattern::Literal("(".into()), 0);
    let rp = b.terminal("\")\"", Pattern::Literal(")".into()), 0);
    let kw = b.terminal("\"while\"", Pattern::Literal("while".into()), 0);
    let lb = b.terminal("\"[\"", Pattern::Literal("[".into()), 0);
    let rb = b.terminal("\"]\"", Pattern::Literal("]".into()), 0);
    let ws = b.terminal("WS", Pattern::Regex(" +".into()), 0);
    b.ignore(ws);
    // A comment: a skipped lexeme that nothing can extend, like C's `/* */`. After one, the
    // lexer watches no earlier token, which is what lets hole sets drop configurations.
    let comment = b.terminal("COMMENT", Pattern::Regex(r"\{[a-z]*\}".into()), 0);
    b.ignore(comment);
    let expr = b.nonterminal("expr");
    let term = b.nonterminal("term");
    b.rule(expr, vec![Symbol::N(term)]);
    b.rule(expr, vec![expr.into(), plus.into(), term.into()]);
    b.rule(term, vec![num.into()]);
    b.rule(term, vec![id.into()]);
    b.rule(term, vec![lp.into(), expr.into(), rp.into()]);
    b.rule(term, vec![kw.into(), lp.into(), expr.into(), rp.into()]);
    b.rule(term, vec![lb.into(), num.into(), num.into(), rb.into()]);
    b.build(expr).unwrap()
}

/// The independent route: longest-match lexing, then Earley on the raw grammar, trying every
/// choice where a token is ambiguous.
pub(super) fn parses(g: &Grammar, lx: &Lexicon, text: &[u8]) -> bool {
    let Ok(tokens) = lx.lex(text) else {
        return false;
    };
    let r = Recognizer::new(g);
    let mut words: Vec<Vec<crate::grammar::TerminalId>> = vec![vec![]];
    for alts in tokens {
        let mut next = Vec::new();
        for w in &words {
            for l in &alts {
                match *l {
                    Lexeme::Terminal(t) => {
                        let mut w2 = w.clone();
                        w2.push(t);
                        next.push(w2);
                    }
                    Lexeme::Skip => next.push(w.clone()),
                }
            }
        }
        words = next;
    }
    words.iter().any(|w| r.recognizes(w))
}

const ALPHABET: &[u8] = b"1a+( ){}";

fn fillers(max_len: usize) -> Vec<Vec<u8>> {
    let mut out = vec![vec![]];
    let mut frontier = vec![vec![]];
    for _ in 0..max_len {
        let mut next = Vec::new();
        for f in &frontier {
            for &c in ALPHABET {
                let mut f2: Vec<u8> = f.clone();
                f2.push(c);
                next.push(f2);
            }
        }
        out.extend(next.iter().cloned());
        frontier = next;
    }
    out
}

/// Some filling up to `max_len` bytes per hole that parses, by brute force.
fn brute_force(g: &Grammar, lx: &Lexicon, text: &HoleyText, max_len: usize) -> Option<Vec<u8>> {
    let fs = fillers(max_len);
    let mut partial: Vec<Vec<u8>> = vec![text.chunks[0].clone()];
    for chunk in &text.chunks[1..] {
        let mut next = Vec::new();
        for p in &partial {
            for f in &fs {
                let mut t = p.clone();
                t.extend_from_slice(f);
                t.extend_from_slice(chunk);
                next.push(t);
            }
        }
        partial = next;
    }
    partial.into_iter().find(|t| parses(g, lx, t))
}

/// `text` starts with the first chunk, ends with the last, and holds the others in order
/// between them (greedy leftmost matching).
fn contains_chunks_in_order(text: &[u8], chunks: &[Vec<u8>]) -> bool {
    let (first, last) = (&chunks[0], &chunks[chunks.len() - 1]);
    if chunks.len() == 1 {
        return text == &first[..];
    }
    if !text.starts_with(first) || !text.ends_with(last) || text.len() < first.len() + last.len() {
        return false;
    }
    let middle = &text[first.len()..text.len() - last.len()];
    let mut pos = 0;
    for c in &chunks[1..chunks.len() - 1] {
        if c.is_empty() {
            continue;
        }
        match middle[pos..].windows(c.len()).position(|w| w == &c[..]) {
            Some(p) => pos += p + c.len(),
            None => return false,
        }
    }
    true
}

fn verify(parts: &[&str]) -> CheckVerdict {
    let g = expr_grammar();
    let lx = Lexicon::new(&g).unwrap();
    let mut checker = Checker::new(g.clone()).unwrap();
    let text = holey(parts);
    let verdict = checker.check_text(&text).verdict;
    if let Some(w) = brute_force(&g, &lx, &text, 2) {
        assert_eq!(
            verdict,
            CheckVerdict::Completable,
            "{parts:?} completes to {:?}",
            String::from_utf8_lossy(&w)
        );
    }
    if verdict == CheckVerdict::Completable {
        let c = checker
            .complete_text(&text)
            .unwrap()
            .expect("completable canvases complete");
        assert!(
            parses(&g, &lx, &c),
            "{parts:?} completion {:?} does not parse",
            String::from_utf8_lossy(&c)
        );
        assert!(
            contains_chunks_in_order(&c, &text.chunks),
            "{parts:?} → {:?}",
            String::from_utf8_lossy(&c)
        );
    }
    verdict
}

#[test]
fn numbers_across_a_hole() {
    assert_eq!(verify(&["123", "789"]), CheckVerdict::Completable);
    assert_eq!(verify(&["(123", "789"]), CheckVerdict::Completable);
}

#[test]
fn keywords_do_not_span_incompatible_chunks() {
    // `whil□hile` cannot be one `while`, but as identifiers `whil + hile` works.
    assert_eq!(verify(&["whil", "hile"]), CheckVerdict::Completable);
    // `while` needs `(`: `while □` completes, `while)` alone does not.
    assert_eq!(verify(&["while", ""]), CheckVerdict::Completable);
    assert_eq!(verify(&["while)"]), CheckVerdict::NotCompletable);
    assert_eq!(verify(&["while(1"]), CheckVerdict::NotCompletable);
    // A hole makes room for a lot: `whil□e)` becomes `whil+(e)`.
    assert_eq!(verify(&["whil", "e)"]), CheckVerdict::Completable);
}

#[test]
fn identifier_boundaries_are_exact() {
    // `a b` is two identifiers: not an expression. `ab` is one.
    assert_eq!(verify(&["a b"]), CheckVerdict::NotCompletable);
    assert_eq!(verify(&["ab"]), CheckVerdict::Completable);
    // An empty hole between two identifiers would merge them into one; a `+` separates them.
    assert_eq!(verify(&["a", "b"]), CheckVerdict::Completable);
    assert_eq!(verify(&["a ", " b"]), CheckVerdict::Completable);
    // `whilex` is an identifier, not the keyword followed by `x`.
    assert_eq!(verify(&["whilex"]), CheckVerdict::Completable);
    assert_eq!(verify(&["whilex("]), CheckVerdict::NotCompletable);
}

#[test]
fn longest_match_is_enforced_across_holes() {
    // `12` is one number, never two: `[12]` is not `[ NUM NUM ]`.
    assert_eq!(verify(&["[12]"]), CheckVerdict::NotCompletable);
    assert_eq!(verify(&["[1 2]"]), CheckVerdict::Completable);
    // A hole between them must hold a separator, and an empty filling merges them.
    assert_eq!(verify(&["[1", "2]"]), CheckVerdict::Completable);
    assert_eq!(verify(&["[1", "]"]), CheckVerdict::Completable);
    assert_eq!(verify(&["[", "12]"]), CheckVerdict::Completable);
    assert_eq!(verify(&["[12", "]"]), CheckVerdict::Completable);
}

#[test]
fn holes_at_both_ends_and_eos_after_partial_lexeme() {
    assert_eq!(verify(&["", "+", ""]), CheckVerdict::Completable);
    assert_eq!(verify(&["", ")"]), CheckVerdict::Completable);
    assert_eq!(verify(&["(1+"]), CheckVerdict::NotCompletable);
    assert_eq!(verify(&["(1+", ""]), CheckVerdict::Completable);
    assert_eq!(verify(&["whi"]), CheckVerdict::Completable); // an identifier
    assert_eq!(verify(&["1+"]), CheckVerdict::NotCompletable);
}

#[test]
fn comments_in_holes() {
    // Only a comment opened in the hole can hold the `}`.
    assert_eq!(verify(&["1", "}", "+1"]), CheckVerdict::Completable);
    assert_eq!(verify(&["1", "a}+", ""]), CheckVerdict::Completable);
    // A comment holds letters only.
    assert_eq!(verify(&["1", "+}", ""]), CheckVerdict::NotCompletable);
    // A comment ends a token: `1{}2` is two numbers, which only `[` NUM NUM `]` allows side by
    // side; a hole before the `}` may also hold `+{`.
    assert_eq!(verify(&["1{}2"]), CheckVerdict::NotCompletable);
    assert_eq!(verify(&["[1{", "}2]"]), CheckVerdict::Completable);
    assert_eq!(verify(&["1", "}2"]), CheckVerdict::Completable);
}

/// A comment that a hole opens may run through the next chunk into the next hole: the search
/// automaton has an ε-edge from one hole to the next, and the checker follows it.
#[test]
fn a_comment_may_run_from_hole_to_hole() {
    let g = expr_grammar();
    let mut lexer = HoleyLexer::new(&g, LexLimits::default()).unwrap();
    // `1+{ab}2`: the comment opens in the first hole and closes in the second.
    let text = holey(&["1+", "ab", "2"]);
    assert!(lexer.automaton(&text).unwrap().has_epsilons());
    assert_eq!(verify(&["1+", "ab", "2"]), CheckVerdict::Completable);
    // A third hole, empty or not, changes nothing.
    assert_eq!(verify(&["1+", "ab", "", "2"]), CheckVerdict::Completable);
    // Chunk text a comment cannot hold (`(`) gives no ε-edge.
    assert!(!lexer
        .automaton(&holey(&["1+", "a(", "2"]))
        .unwrap()
        .has_epsilons());
}

fn arb_canvas() -> impl Strategy<Value = Vec<String>> {
    let chunk = prop::collection::vec(prop::sample::select(b"1a+( )w[]{}".to_vec()), 0..5)
        .prop_map(|v| String::from_utf8(v).unwrap());
    prop::collection::vec(chunk, 1..=3)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn solid_texts_are_judged_exactly(text in "[1a+( \\[\\]w{}]{0,8}") {
        let g = expr_grammar();
        let lx = Lexicon::new(&g).unwrap();
        let mut checker = Checker::new(g.clone()).unwrap();
        let expected = if parses(&g, &lx, text.as_bytes()) {
            CheckVerdict::Completable
        } else {
            CheckVerdict::NotCompletable
        };
        prop_assert_eq!(checker.check_text(&HoleyText::solid(text.as_bytes())).verdict, expected);
    }

    #[test]
    fn checker_agrees_with_brute_force(parts in arb_canvas()) {
        let refs: Vec<&str> = parts.iter().map(|s| s.as_str()).collect();
        verify(&refs);
    }

    /// Two constructions of a canvas's lexeme language: the automaton the checker searches
    /// (nondeterministic, with ε-edges) and the minimal DFA of the subset construction. They
    /// must accept the same lexeme sequences.
    #[test]
    fn search_automaton_and_minimal_dfa_agree(
        chunks in prop::collection::vec(
            prop::collection::vec(prop::sample::select(b"1a+( )w[]{}".to_vec()), 0..4),
            1..=4,
        )
    ) {
        let g = expr_grammar();
        let mut lexer = HoleyLexer::new(&g, LexLimits::default()).unwrap();
        let text = HoleyText { chunks };
        let nfa = lexer.automaton(&text).unwrap();
        let dfa = lexer.dfa(&text).unwrap();
        let terminals: Vec<TerminalId> =
            (0..g.terminals().len() as u32).map(TerminalId).collect();
        let mut words: Vec<Vec<TerminalId>> = vec![vec![]];
        for _ in 0..4 {
            for w in words.clone() {
                for &t in &terminals {
                    let mut longer = w.clone();
                    longer.push(t);
                    words.push(longer);
                }
            }
            words.sort();
            words.dedup();
        }
        for w in &words {
            prop_assert_eq!(nfa.accepts(w), dfa.accepts(w), "{:?} on {:?}", w, text);
        }
    }
}

/// Adjacent holes (only empty chunks between them) are one hole: a text a caller builds by
/// hand with 100 of them is judged as the merged one is. Before holes were merged, each was a
/// copy of the hole states in the automaton (833 states for this text) and the search ran out
/// of budget: `unknown` for a canvas that `{"a": true, "":true}` completes.
#[test]
fn adjacent_holes_are_one_hole() {
    let mut chunks = vec![b"{  \"a\": true".to_vec()];
    chunks.extend(std::iter::repeat_n(Vec::new(), 99));
    chunks.push(b",  ".to_vec());
    chunks.push(b"true }".to_vec());
    let text = HoleyText { chunks };
    assert_eq!(text.num_holes(), 101);
    let merged = text.with_holes_merged();
    assert_eq!(merged.num_holes(), 2);
    assert_eq!(merged.chunks[1], b",  ");
    let mut checker = Checker::from_spec("json").unwrap();
    let check = checker.check_text(&text);
    assert_eq!(check.verdict, CheckVerdict::Completable);
    assert_eq!(check.dfa_states, checker.check_text(&merged).dfa_states);
    let out = checker.complete_text(&text).unwrap().unwrap();
    assert!(checker.accepts(&out));
    assert!(contains_chunks_in_order(&out, &text.chunks));
    // Holes at the ends stay where they are; a text with no interior empty chunk is borrowed.
    let ends = holey(&["", "1", ""]);
    assert!(matches!(
        ends.with_holes_merged(),
        std::borrow::Cow::Borrowed(_)
    ));
    assert_eq!(holey(&["", "", ""]).with_holes_merged().chunks.len(), 2);
}
