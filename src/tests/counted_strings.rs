//! Counted strings ([`Pattern::JsonString`]) against their unrolled regexes: a grammar whose
//! strings the lexer counts must lex every text, and judge every canvas, exactly as the same
//! grammar with each counted string written as its regex (`"UNIT{min,max}"`, the established
//! route), and completions must parse by the independent lexer + Earley route. The grammar
//! makes the counting meet what can go wrong: bounds that overlap and differ in priority, a
//! literal and a regex matching the same strings, and a regex whose states alternate with the
//! string's units (`"(ab)*"`: the hole closures cannot treat its counts as open).

use super::checker_small::parses;
use std::sync::Arc;

use crate::canvas::tokens::TokenCanvas;
use crate::canvas::HoleyText;
use crate::checker::{CheckVerdict, Checker};
use crate::grammar::{Grammar, GrammarBuilder, Pattern, Symbol};
use crate::lexicon::Lexicon;
use crate::vocab::{TokenId, Vocabulary};
use proptest::prelude::*;

/// start: "[" seq "]"; seq: elem | seq "," elem;
/// elem: S13 | S01 S01 | S22 "!" | PAIRS "!" "!" | LIT "1" | S0 "1" "1" | SP "!" "1"
fn grammar(counted: bool) -> Grammar {
    grammar_with(counted, false)
}

/// [`grammar`], or with `alike` ranks: `S22` of the others' priority (so that a smaller count
/// dominates a larger one in hole closures: `Lexicon::counted_dominance_floor`), and a counted
/// string whose regex alternates with the units, `P46: "(ab)*"` of 4 to 6 characters
/// (elem: P46 "1" "!"), whose counts stay exact and differ at one state.
fn grammar_with(counted: bool, alike: bool) -> Grammar {
    let mut b = GrammarBuilder::new();
    let string = |b: &mut GrammarBuilder, name: &str, min: u32, max: Option<u32>, pr| {
        let p = Pattern::JsonString {
            min,
            max,
            regex: None,
        };
        let p = if counted {
            p
        } else {
            Pattern::Regex(p.to_regex())
        };
        b.terminal(name, p, pr)
    };
    let s13 = string(&mut b, "S13", 1, Some(3), 0);
    let s01 = string(&mut b, "S01", 0, Some(1), 0);
    let s22 = string(&mut b, "S22", 2, Some(2), if alike { 0 } else { 1 });
    let s0 = string(&mut b, "S0", 4, None, 0);
    // A counted string with its own regex; unrolled, the intersection written by hand (the
    // regex's matches are strings of units, as a schema's are: no lone backslash).
    let sp = b.terminal(
        "SP",
        if counted {
            Pattern::JsonString {
                min: 1,
                max: Some(2),
                regex: Some(r#""[ab]*""#.into()),
            }
        } else {
            Pattern::Regex(r#""[ab]{1,2}""#.into())
        },
        0,
    );
    let pairs = b.terminal("PAIRS", Pattern::Regex(r#""(ab)*""#.into()), 0);
    let ab = b.terminal("LIT", Pattern::Literal("\"ab\"".into()), 0);
    let lit = |b: &mut GrammarBuilder, s: &str| b.terminal(s, Pattern::Literal(s.into()), 0);
    let (lb, rb, comma, bang, one) = (
        lit(&mut b, "["),
        lit(&mut b, "]"),
        lit(&mut b, ","),
        lit(&mut b, "!"),
        lit(&mut b, "1"),
    );
    let ws = b.terminal("WS", Pattern::Regex(" +".into()), 0);
    b.ignore(ws);
    let start = b.nonterminal("start");
    let seq = b.nonterminal("seq");
    let elem = b.nonterminal("elem");
    b.rule(start, vec![lb.into(), seq.into(), rb.into()]);
    b.rule(seq, vec![elem.into()]);
    b.rule(seq, vec![seq.into(), comma.into(), elem.into()]);
    b.rule(elem, vec![s13.into()]);
    b.rule(elem, vec![s01.into(), s01.into()]);
    b.rule(elem, vec![s22.into(), bang.into()]);
    b.rule(elem, vec![pairs.into(), bang.into(), bang.into()]);
    b.rule(elem, vec![Symbol::T(ab), one.into()]);
    b.rule(elem, vec![s0.into(), one.into(), one.into()]);
    b.rule(elem, vec![sp.into(), bang.into(), one.into()]);
    if alike {
        let p46 = b.terminal(
            "P46",
            if counted {
                Pattern::JsonString {
                    min: 4,
                    max: Some(6),
                    regex: Some(r#""(ab)*""#.into()),
                }
            } else {
                Pattern::Regex(r#""(ab){2,3}""#.into())
            },
            0,
        );
        b.rule(elem, vec![p46.into(), one.into(), bang.into()]);
    }
    b.build(start).unwrap()
}

/// Bytes of texts and canvases: the strings' own (quote, escapes, a surrogate's digits) and
/// the grammar's punctuation.
const ALPHABET: &[u8] = b"\"ab\\nu[],!1 ";

fn text() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(ALPHABET.to_vec()), 0..14)
}

/// Chunks of canvases: short, so that holes meet strings' insides often.
fn chunk() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(ALPHABET.to_vec()), 0..6)
}

/// Whether the counted grammar judges `parts` as the unrolled one does, and what that is.
fn judged_alike(parts: &[&[u8]]) -> CheckVerdict {
    judged_alike_in(grammar, parts)
}

/// [`judged_alike`] for the grammar `make(counted)`, counted or written out.
fn judged_alike_in(make: impl Fn(bool) -> Grammar, parts: &[&[u8]]) -> CheckVerdict {
    let text = HoleyText {
        chunks: parts.iter().map(|p| p.to_vec()).collect(),
    };
    judged_alike_on(make, &text)
}

/// [`judged_alike_in`] on a canvas already made.
fn judged_alike_on(make: impl Fn(bool) -> Grammar, text: &HoleyText) -> CheckVerdict {
    let verdict = Checker::new(make(true)).unwrap().check_text(text).verdict;
    let written_out = Checker::new(make(false)).unwrap().check_text(text).verdict;
    assert_eq!(verdict, written_out, "{text:?}");
    verdict
}

/// A hole that opens a string ending in the chunk after it: `"ab"` is only `S22` (priority 1),
/// never the literal, so `[□"1]` does not complete. A hole's closure that took the count after
/// `"ab` for "2 or more" (though the `"(ab)*"` part of that state needs an even count) would
/// let the literal win at 3 and call it completable.
#[test]
fn counts_stay_exact_where_a_parallel_pattern_has_a_period() {
    use CheckVerdict::{Completable, NotCompletable};
    assert_eq!(judged_alike(&[b"[", b"\"1]"]), NotCompletable);
    assert_eq!(judged_alike(&[b"[", b"\"!]"]), Completable);
    assert_eq!(judged_alike(&[b"[", b"\"!!]"]), Completable);
    assert_eq!(judged_alike(&[b"[", b"\"11]"]), Completable);
    assert_eq!(judged_alike(&[b"[\"a", b"b\"1]"]), NotCompletable);
    // The hole must reach `"ab` with 4 characters: at 2 `S22` (priority 1) beats `PAIRS`, so
    // the smaller count does not stand for the larger one here.
    assert_eq!(judged_alike(&[b"[\"a", b"\"!!]"]), Completable);
}

/// With alike ranks a smaller count stands for a larger one only past every minimum: the hole
/// must reach `"abab` (4, `P46`'s minimum), which `"ab` (2) does not stand for.
#[test]
fn smaller_counts_stand_for_larger_ones_only_past_the_minimums() {
    use CheckVerdict::{Completable, NotCompletable};
    let judge = |parts: &[&[u8]]| judged_alike_in(|c| grammar_with(c, true), parts);
    assert_eq!(judge(&[b"[\"a", b"\"1!]"]), Completable);
    assert_eq!(judge(&[b"[\"", b"\"1!]"]), Completable);
    assert_eq!(judge(&[b"[\"abababa\"1!]"]), NotCompletable);
}

/// Tokens that cross the strings' quotes, escapes and units, then EOS.
const WORDS: [&str; 17] = [
    "\"", "a", "b", "ab", "\"a", "b\"", "\\", "n", "\\n", "u", "\"ab\"", "[", "]", ",", "!", "1",
    " ",
];

fn vocab() -> Arc<Vocabulary> {
    let mut bytes: Vec<Vec<u8>> = WORDS.iter().map(|w| w.as_bytes().to_vec()).collect();
    bytes.push(b"</s>".to_vec());
    let eos = WORDS.len() as TokenId;
    Arc::new(Vocabulary::new(bytes, &[eos], &[]))
}

/// Token canvases of up to 6 cells over [`vocab`], most of them masked.
fn cells() -> impl Strategy<Value = Vec<Option<TokenId>>> {
    prop::collection::vec(
        prop::option::weighted(0.6, 0..WORDS.len() as TokenId + 1),
        1..7,
    )
}

/// Asserts that every masked position of `cells` has the same mask under the grammar
/// `make(counted)`, counted or written out.
fn assert_masks_alike(make: impl Fn(bool) -> Grammar, cells: &[Option<TokenId>]) {
    let v = vocab();
    let mut counted = Checker::with_vocabulary(make(true), v.clone()).unwrap();
    let mut unrolled = Checker::with_vocabulary(make(false), v).unwrap();
    let canvas = TokenCanvas::new(cells.to_vec());
    for p in (0..cells.len()).filter(|&p| cells[p].is_none()) {
        let a = counted.allowed(&canvas, p).unwrap();
        let b = unrolled.allowed(&canvas, p).unwrap();
        assert_eq!(
            a.mask.ids().collect::<Vec<_>>(),
            b.mask.ids().collect::<Vec<_>>(),
            "{cells:?} at {p}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Valid-token masks at every masked position of token canvases.
    #[test]
    fn masks_are_those_of_the_regex(cells in cells()) {
        assert_masks_alike(grammar, &cells);
    }

    #[test]
    fn lexing_counts_as_the_regex_does(text in text()) {
        let counted = Lexicon::new(&grammar(true)).unwrap();
        let unrolled = Lexicon::new(&grammar(false)).unwrap();
        prop_assert_eq!(counted.lex(&text), unrolled.lex(&text));
    }

    /// With alike ranks, hole closures keep the least count past the terminals' minimums
    /// (`holey::config`'s `ClosureCounts`): judged as the unrolled regexes judge.
    #[test]
    fn canvases_with_alike_ranks_are_judged_as_with_the_regex(
        chunks in prop::collection::vec(chunk(), 1..=3)
    ) {
        judged_alike_on(|c| grammar_with(c, true), &HoleyText { chunks });
    }

    #[test]
    fn masks_with_alike_ranks_are_those_of_the_regex(cells in cells()) {
        assert_masks_alike(|c| grammar_with(c, true), &cells);
    }

    #[test]
    fn canvases_are_judged_as_with_the_regex(chunks in prop::collection::vec(chunk(), 1..=3)) {
        let text = HoleyText { chunks };
        let mut counted = Checker::new(grammar(true)).unwrap();
        let mut unrolled = Checker::new(grammar(false)).unwrap();
        let verdict = counted.check_text(&text).verdict;
        prop_assert_eq!(verdict, unrolled.check_text(&text).verdict, "{:?}", text);
        if verdict == CheckVerdict::Completable {
            let g = grammar(false);
            let lx = Lexicon::new(&g).unwrap();
            let c = counted.complete_text(&text).unwrap().expect("completable canvases complete");
            prop_assert!(parses(&g, &lx, &c), "{:?} → {:?}", text, String::from_utf8_lossy(&c));
        }
    }
}

/// The checker on one counted string.
fn one_string(min: u32, max: Option<u32>) -> Checker {
    let mut b = GrammarBuilder::new();
    let s = b.terminal(
        "S",
        Pattern::JsonString {
            min,
            max,
            regex: None,
        },
        0,
    );
    let start = b.nonterminal("start");
    b.rule(start, vec![s.into()]);
    let g = b.build(start).unwrap();
    let lx = Lexicon::new(&g).unwrap();
    assert!(lx.num_states() < 64, "{} states", lx.num_states());
    Checker::new(g).unwrap()
}

fn judge(checker: &mut Checker, parts: &[&[u8]]) -> CheckVerdict {
    let text = HoleyText {
        chunks: parts.iter().map(|p| p.to_vec()).collect(),
    };
    checker.check_text(&text).verdict
}

fn quoted(n: usize) -> Vec<u8> {
    [b"\"".to_vec(), vec![b'x'; n], b"\"".to_vec()].concat()
}

/// Long strings: a bound of 10⁶ costs the lexer nothing (a few dozen states), and holes inside
/// a string are judged by what the chunks around them already hold.
#[test]
fn large_bounds_are_counted_exactly() {
    use CheckVerdict::{Completable, NotCompletable};
    let mut huge = one_string(3, Some(1_000_000));
    assert_eq!(judge(&mut huge, &[&quoted(2)]), NotCompletable);
    assert_eq!(judge(&mut huge, &[&quoted(3000)]), Completable);
    assert_eq!(judge(&mut huge, &[b"\"x", b"\""]), Completable);
    let mut checker = one_string(3, Some(5000));
    for (n, expected) in [(2, NotCompletable), (3, Completable), (5000, Completable)] {
        assert_eq!(
            judge(&mut checker, &[&quoted(n)]),
            expected,
            "{n} characters"
        );
    }
    assert_eq!(judge(&mut checker, &[&quoted(5001)]), NotCompletable);
    // Escapes are one character each; an escaped surrogate pair is one too.
    let mut three = one_string(3, Some(3));
    assert_eq!(
        judge(&mut three, &[b"\"\\n\\u00e9\\ud83d\\ude00\""]),
        Completable
    );
    assert_eq!(
        judge(&mut three, &[b"\"\\n\\ud83d\\ude00\""]),
        NotCompletable
    );
    // A hole inside: the chunks around it hold 4,999 characters, so the hole may add one; with
    // 5,001 around it, nothing helps.
    let open = [b"\"".to_vec(), vec![b'x'; 2500]].concat();
    let close = |n: usize| [vec![b'y'; n], b"\"".to_vec()].concat();
    assert_eq!(judge(&mut checker, &[&open, &close(2499)]), Completable);
    assert_eq!(judge(&mut checker, &[&open, &close(2500)]), Completable);
    assert_eq!(judge(&mut checker, &[&open, &close(2501)]), NotCompletable);
    // Two holes, the second after a surrogate's first half: the hole must finish the pair.
    assert_eq!(judge(&mut three, &[b"\"a", b"\\ud83d", b"\""]), Completable);
    assert_eq!(
        judge(&mut three, &[b"\"ab", b"c\\ud83d", b"\""]),
        NotCompletable
    );
}

/// A lexeme that ends inside a counted string's body (here `"a`, a prefix of strings) is a
/// grammar the lexer cannot count in: a named error, not a wrong answer.
#[test]
fn a_lexeme_ending_inside_a_counted_string_is_refused_by_name() {
    let mut b = GrammarBuilder::new();
    let s = b.terminal(
        "S",
        Pattern::JsonString {
            min: 0,
            max: Some(9),
            regex: None,
        },
        0,
    );
    let prefix = b.terminal("OPEN_A", Pattern::Literal("\"a".into()), 0);
    let start = b.nonterminal("start");
    b.rule(start, vec![s.into()]);
    b.rule(start, vec![prefix.into()]);
    let g = b.build(start).unwrap();
    let e = Lexicon::new(&g).unwrap_err().to_string();
    assert!(e.contains("OPEN_A") && e.contains("length"), "{e}");
}

/// start: "[" LABELS "]", `LABELS` a string of dot-separated runs of one or two `a`, of 3 to 7
/// characters (counted: the regex beside the bounds; unrolled: every such string listed). The
/// states inside a run are on no one-unit cycle, so hole closures reach each with many exact
/// counts, where the least one past the minimum stands for the larger ones (a host name's
/// shape, `format: hostname` under its 253 characters).
fn labels(counted: bool) -> Grammar {
    let mut b = GrammarBuilder::new();
    let re = r#""(a{1,2}\.)*a{1,2}""#;
    let pattern = if counted {
        Pattern::JsonString {
            min: 3,
            max: Some(7),
            regex: Some(re.into()),
        }
    } else {
        let full = regex_automata::meta::Regex::new(&format!("^{re}$")).unwrap();
        let mut words = vec![String::new()];
        let mut all = vec![];
        for _ in 0..7 {
            words = words
                .iter()
                .flat_map(|w| [format!("{w}a"), format!("{w}.")])
                .collect();
            all.extend(
                words
                    .iter()
                    .map(|w| format!("\"{w}\""))
                    .filter(|q| q.len() >= 5 && full.is_match(q)),
            );
        }
        Pattern::Literals(all)
    };
    let t = b.terminal("LABELS", pattern, 0);
    let lit = |b: &mut GrammarBuilder, s: &str| b.terminal(s, Pattern::Literal(s.into()), 0);
    let (lb, rb) = (lit(&mut b, "["), lit(&mut b, "]"));
    let start = b.nonterminal("start");
    b.rule(start, vec![lb.into(), t.into(), rb.into()]);
    b.build(start).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn label_strings_are_judged_as_listed(
        chunks in prop::collection::vec(
            prop::collection::vec(prop::sample::select(b"\"a.[]".to_vec()), 0..5),
            1..=3,
        )
    ) {
        judged_alike_on(labels, &HoleyText { chunks });
    }
}

/// The counts a hole's closure keeps at one state: `"a.` then a hole must reach 3 characters
/// or more and at most 7, with the text after the hole adding to them.
#[test]
fn label_strings_with_holes_count_exactly() {
    use CheckVerdict::{Completable, NotCompletable};
    let judge = |parts: &[&[u8]]| judged_alike_in(labels, parts);
    assert_eq!(judge(&[b"[\"a.", b"\"]"]), Completable);
    assert_eq!(judge(&[b"[\"", b"a.aa\"]"]), Completable);
    assert_eq!(judge(&[b"[\"", b".aa.aa\"]"]), Completable);
    assert_eq!(judge(&[b"[\"aa", b".aa.aa\"]"]), NotCompletable);
    assert_eq!(judge(&[b"[\"", b"aa.aa.a\"]"]), Completable);
    assert_eq!(judge(&[b"[\"a", b"aa.aa.a\"]"]), NotCompletable);
}
