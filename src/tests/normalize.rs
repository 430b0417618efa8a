//! The normalizer preserves the language: each pass alone and the whole pipeline, on random
//! grammars, compared word by word (up to length 6) with an Earley recognizer on the raw
//! grammar. Plus one hand-made example per rewrite showing what it does.

use super::oracles::*;
use crate::grammar::normalize::{shrink, to_c2f, WorkGrammar};
use crate::grammar::{
    Grammar, GrammarBuilder, NonterminalId, NormalGrammar, NormalizeOptions, Symbol,
};
use proptest::prelude::*;

const LEN: usize = 6;

fn same_language_after(g: &Grammar, pass: impl Fn(&mut WorkGrammar)) -> Result<(), TestCaseError> {
    let mut w = WorkGrammar::from_grammar(g);
    pass(&mut w);
    let g2 = w.to_grammar(g);
    prop_assert_eq!(
        language(g, LEN),
        language(&g2, LEN),
        "grammar before:\n{}\nafter:\n{}",
        g,
        g2
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn remove_useless_preserves_language(g in arb_grammar(5)) {
        same_language_after(&g, |w| w.remove_useless())?;
    }

    #[test]
    fn aliases_preserve_language(g in arb_grammar(5)) {
        same_language_after(&g, |w| w.substitute_aliases())?;
    }

    #[test]
    fn inlining_preserves_language(g in arb_grammar(5)) {
        same_language_after(&g, |w| w.inline_single_use())?;
    }

    #[test]
    fn left_factoring_preserves_language(g in arb_grammar(5)) {
        same_language_after(&g, |w| w.left_factor())?;
    }

    #[test]
    fn bigram_sharing_preserves_language(g in arb_grammar(5)) {
        same_language_after(&g, |w| w.share_bigrams())?;
    }

    #[test]
    fn binarization_preserves_language(g in arb_grammar(5)) {
        same_language_after(&g, |w| { w.binarize(); w.lift_terminals(); })?;
    }

    #[test]
    fn pipeline_preserves_language(g in arb_grammar(5)) {
        let n = NormalGrammar::from_grammar(&g);
        let g2 = normal_to_grammar(&n, &g);
        prop_assert_eq!(language(&g, LEN), language(&g2, LEN), "grammar:\n{}\nnormalized:\n{}", g, g2);
    }

    /// Rules a front end marks normal are held aside while the others are rewritten
    /// (`WorkGrammar::hold`): every nonterminal is marked, the odd ones have only rules of
    /// at most two nonterminals (held), the even ones any rules (kept with the others, or
    /// held when they happen to be normal too). The passes must neither rewrite a held rule
    /// nor remove a nonterminal one names.
    #[test]
    fn pipeline_with_held_rules_preserves_language(rules in arb_rules_half_normal(6)) {
        let Some(g) = build_grammar(&rules) else { return Ok(()) };
        let mut b = GrammarBuilder::from_grammar(&g);
        for i in 0..g.nonterminals().len() {
            b.mark_normal(NonterminalId(i as u32));
        }
        let held = b.build(g.start()).unwrap();
        let n = NormalGrammar::from_grammar(&held);
        let g2 = normal_to_grammar(&n, &held);
        prop_assert_eq!(language(&g, LEN), language(&g2, LEN), "grammar:\n{}\nnormalized:\n{}", g, g2);
    }

    #[test]
    fn pipeline_without_heuristics_preserves_language(g in arb_grammar(4)) {
        let opts = NormalizeOptions { inline: false, left_factor: false, share_bigrams: false };
        let n = NormalGrammar::with_options(&g, &opts);
        prop_assert_eq!(language(&g, LEN), language(&normal_to_grammar(&n, &g), LEN));
    }
}

/// Random rules over up to `max_nts` nonterminals where the odd ones have only rules of at
/// most two nonterminals (normal, so a marked one is held) and the even ones any rules.
fn arb_rules_half_normal(max_nts: usize) -> impl Strategy<Value = RawRules> {
    let any_symbol = prop_oneof![(0u8..3).prop_map(Ok), (0u8..max_nts as u8).prop_map(Err)];
    let any_alt = prop::collection::vec(any_symbol, 0..=4);
    let normal_alt = prop::collection::vec((0u8..max_nts as u8).prop_map(Err), 0..=2);
    let any_alts = prop::collection::vec(any_alt, 1..=3);
    let normal_alts = prop::collection::vec(normal_alt, 1..=3);
    (
        prop::collection::vec(any_alts, max_nts.div_ceil(2)),
        prop::collection::vec(normal_alts, max_nts / 2),
    )
        .prop_map(|(even, odd)| {
            let mut rules = vec![];
            for i in 0..even.len() + odd.len() {
                rules.push(if i % 2 == 0 {
                    even[i / 2].clone()
                } else {
                    odd[i / 2].clone()
                });
            }
            rules
        })
}

/// Parses `"n0: a n1 | b ; n1: ..."`-style descriptions: alternatives separated by `|`,
/// rules by `;`, lowercase a/b/c are terminals, `nK` nonterminals, `e` is ε.
fn grammar(text: &str) -> Grammar {
    let mut rules: RawRules = Vec::new();
    for rule in text.split(';') {
        let (_, body) = rule.split_once(':').unwrap();
        let alts = body
            .split('|')
            .map(|alt| {
                alt.split_whitespace()
                    .filter(|s| *s != "e")
                    .map(|s| match s {
                        "a" => Ok(0),
                        "b" => Ok(1),
                        "c" => Ok(2),
                        n => Err(n[1..].parse().unwrap()),
                    })
                    .collect()
            })
            .collect();
        rules.push(alts);
    }
    build_grammar(&rules).unwrap()
}

fn shapes(w: &WorkGrammar) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = w
        .rules
        .iter()
        .map(|r| {
            let mut v = vec![w.names[r.lhs.index()].clone()];
            v.extend(r.rhs.iter().map(|s| match s {
                Symbol::T(t) => ["a", "b", "c"][t.index()].to_string(),
                Symbol::N(n) => w.names[n.index()].clone(),
            }));
            v
        })
        .collect();
    out.sort();
    out
}

#[test]
fn useless_rules_are_dropped() {
    // n1 generates nothing; n2 is unreachable.
    let g = grammar("n0: a | a n1 ; n1: n1 b ; n2: c");
    let mut w = WorkGrammar::from_grammar(&g);
    w.remove_useless();
    assert_eq!(shapes(&w), vec![vec!["n0", "a"]]);
}

#[test]
fn left_factoring_names_the_shared_prefix_once() {
    let g = grammar("n0: a b c | a b | a c");
    let mut w = WorkGrammar::from_grammar(&g);
    w.left_factor();
    // n0 → a R; R → b R' | c; R' → c | ε
    let s = shapes(&w);
    assert_eq!(s.iter().filter(|r| r[0] == "n0").count(), 1, "{s:?}");
    assert_eq!(s.len(), 5, "{s:?}");
    assert!(
        s.iter().any(|r| r.len() == 1),
        "an ε-rule for the bare prefix: {s:?}"
    );
}

#[test]
fn bigram_sharing_names_a_repeated_pair_once() {
    let g = grammar("n0: a b c a | c a b b");
    let mut w = WorkGrammar::from_grammar(&g);
    w.share_bigrams();
    let s = shapes(&w);
    // `a b` occurs in both rules and becomes one nonterminal; nothing else repeats.
    let pair_rules: Vec<_> = s.iter().filter(|r| r[0].starts_with("pair")).collect();
    assert_eq!(pair_rules.len(), 1, "{s:?}");
    assert_eq!(pair_rules[0][1..], ["a", "b"], "{s:?}");
    assert!(
        s.iter().filter(|r| r[0] == "n0").all(|r| r.len() == 4),
        "{s:?}"
    );
}

#[test]
fn binarization_shares_equal_suffixes() {
    let g = grammar("n0: a b c b | c b c b");
    let mut w = WorkGrammar::from_grammar(&g);
    w.binarize();
    assert!(w.rules.iter().all(|r| r.rhs.len() <= 2));
    // suffixes `b c b` and `c b` are built once: 2 rules for n0, 2 chain rules total.
    assert_eq!(w.rules.len(), 4, "{:?}", shapes(&w));
}

#[test]
fn inlining_removes_single_use_nonterminals() {
    let g = grammar("n0: a n1 | n2 ; n1: b c ; n2: c | a");
    let mut w = WorkGrammar::from_grammar(&g);
    w.inline_single_use();
    let s = shapes(&w);
    assert!(s.iter().all(|r| r[0] == "n0"), "{s:?}");
    assert_eq!(s.len(), 3);
}

#[test]
fn aliases_are_substituted() {
    let g = grammar("n0: n1 n1 a ; n1: n2 ; n2: b | c");
    let mut w = WorkGrammar::from_grammar(&g);
    w.substitute_aliases();
    assert!(shapes(&w).iter().all(|r| r[0] != "n1"));
}

#[test]
fn normal_form_has_only_c2f_shapes_and_reaches_a_fixpoint_size() {
    let g = grammar("n0: n1 a n1 b | n1 ; n1: a n1 b | e | c c c");
    let mut w = WorkGrammar::from_grammar(&g);
    shrink(&mut w, &NormalizeOptions::default());
    to_c2f(&mut w);
    for r in &w.rules {
        match r.rhs[..] {
            [] | [Symbol::T(_)] | [Symbol::N(_)] | [Symbol::N(_), Symbol::N(_)] => {}
            _ => panic!("not C2F+ε: {:?}", r),
        }
    }
}
