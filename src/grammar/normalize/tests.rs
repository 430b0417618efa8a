//! The passes of `work` (linear or near it) against their first, sweeping versions in
//! `reference`: on random grammars each pass, and the whole pipeline, must give exactly the same
//! rules in the same order with the same names, so normalizing a grammar gives the same
//! normal form as before the passes were made fast. (That the passes preserve the language is
//! tested in `crate::tests::normalize`.)

use proptest::prelude::*;

use super::reference::RefGrammar;
use super::{work, WorkGrammar};
use crate::grammar::{NonterminalId, Rule, Symbol, TerminalId};

/// A random rule list over `nts` nonterminals and three terminals; rules tend to reuse
/// nonterminals so that aliases, single uses, shared prefixes and pairs all occur.
fn arb_rules(nts: u32) -> impl Strategy<Value = Vec<Rule>> {
    let symbol = prop_oneof![
        (0..3u32).prop_map(|t| Symbol::T(TerminalId(t))),
        (0..nts).prop_map(|n| Symbol::N(NonterminalId(n))),
    ];
    let rule = (0..nts, prop::collection::vec(symbol, 0..6)).prop_map(|(lhs, rhs)| Rule {
        lhs: NonterminalId(lhs),
        rhs,
    });
    prop::collection::vec(rule, 1..(3 * nts as usize))
}

fn pair(nts: u32, rules: Vec<Rule>) -> (WorkGrammar, RefGrammar) {
    let names: Vec<String> = (0..nts).map(|i| format!("n{i}")).collect();
    let start = NonterminalId(0);
    (
        WorkGrammar {
            names: names.clone(),
            rules: rules
                .iter()
                .map(|r| work::Rule {
                    lhs: r.lhs,
                    rhs: r.rhs.iter().copied().collect(),
                })
                .collect(),
            start,
            held: vec![],
        },
        RefGrammar {
            names,
            rules,
            start,
        },
    )
}

fn same(w: &WorkGrammar, r: &RefGrammar) -> Result<(), TestCaseError> {
    let work_rules: Vec<(NonterminalId, &[Symbol])> =
        w.rules.iter().map(|r| (r.lhs, &r.rhs[..])).collect();
    let ref_rules: Vec<(NonterminalId, &[Symbol])> =
        r.rules.iter().map(|r| (r.lhs, &r.rhs[..])).collect();
    prop_assert_eq!(work_rules, ref_rules);
    prop_assert_eq!(&w.names, &r.names);
    Ok(())
}

/// Both grammars cleaned as the pipeline cleans them before the heuristics.
fn cleaned(nts: u32, rules: Vec<Rule>) -> (WorkGrammar, RefGrammar) {
    let (mut w, mut r) = pair(nts, rules);
    w.remove_useless();
    w.dedupe();
    r.remove_useless();
    r.dedupe();
    (w, r)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn aliases_match_the_sweeps(rules in arb_rules(8), clean in any::<bool>()) {
        let (mut w, mut r) = if clean { cleaned(8, rules) } else { pair(8, rules) };
        w.substitute_aliases();
        r.substitute_aliases();
        same(&w, &r)?;
    }

    #[test]
    fn inlining_matches_the_sweeps(rules in arb_rules(8), clean in any::<bool>()) {
        let (mut w, mut r) = if clean { cleaned(8, rules) } else { pair(8, rules) };
        w.inline_single_use();
        r.inline_single_use();
        same(&w, &r)?;
    }

    #[test]
    fn inlining_after_aliases_matches_the_sweeps(rules in arb_rules(10)) {
        let (mut w, mut r) = cleaned(10, rules);
        w.substitute_aliases();
        r.substitute_aliases();
        w.inline_single_use();
        r.inline_single_use();
        same(&w, &r)?;
    }

    #[test]
    fn left_factoring_matches_the_sweeps(rules in arb_rules(8), clean in any::<bool>()) {
        let (mut w, mut r) = if clean { cleaned(8, rules) } else { pair(8, rules) };
        w.left_factor();
        r.left_factor();
        same(&w, &r)?;
    }

    #[test]
    fn bigram_sharing_matches_the_sweeps(rules in arb_rules(6)) {
        let (mut w, mut r) = pair(6, rules);
        w.share_bigrams();
        r.share_bigrams();
        same(&w, &r)?;
    }

    #[test]
    fn binarizing_matches_the_sweeps(rules in arb_rules(6)) {
        let (mut w, mut r) = pair(6, rules);
        w.binarize();
        r.binarize();
        same(&w, &r)?;
    }

    #[test]
    fn the_pipeline_matches_the_sweeps(rules in arb_rules(10)) {
        let (mut w, mut r) = pair(10, rules);
        super::shrink(&mut w, &super::NormalizeOptions::default());
        super::to_c2f(&mut w);
        w.compact();
        r.remove_useless();
        r.dedupe();
        r.substitute_aliases();
        r.inline_single_use();
        r.dedupe();
        r.left_factor();
        r.share_bigrams();
        r.binarize();
        r.lift_terminals();
        r.dedupe();
        r.remove_useless();
        r.compact();
        same(&w, &r)?;
    }
}

/// Long chains and wide rules normalize to a few rules. (That each pass is near-linear, which
/// the quadratic sweeps were not, the hostile battery's chain of 100,000 rules shows by time.)
#[test]
fn long_chains_normalize_to_a_few_rules() {
    let n = 200_000u32;
    let a = Symbol::T(TerminalId(0));
    let mut rules = Vec::new();
    // r_i → r_{i+1} a (left), r_i → a r_{i+1} a (middle) and one long rule.
    for i in 0..n {
        rules.push(Rule {
            lhs: NonterminalId(i),
            rhs: if i % 2 == 0 {
                vec![Symbol::N(NonterminalId(i + 1)), a]
            } else {
                vec![a, Symbol::N(NonterminalId(i + 1)), a]
            },
        });
    }
    rules.push(Rule {
        lhs: NonterminalId(n),
        rhs: vec![a; 50_000],
    });
    let (mut w, _) = pair(n + 1, rules);
    super::shrink(&mut w, &super::NormalizeOptions::default());
    super::to_c2f(&mut w);
    w.compact();
    assert!(w.rules.len() < 200, "{} rules", w.rules.len());
}
