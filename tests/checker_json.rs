//! The checker on the shipped JSON grammar and real documents (JSONSchemaBench instances):
//! (a) completeness — every document with random holes cut into it (inside lexemes, across
//! several lexemes, at either end) is judged completable, and its completion is JSON that
//! serde_json reads; (b) exactness on complete texts — on mutated documents the checker agrees
//! with serde_json.

mod corpus;

use std::cell::RefCell;

use lacuna::canvas::HoleyText;
use lacuna::checker::{CheckVerdict, Checker};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

fn documents() -> Vec<String> {
    let all: serde_json::Value =
        serde_json::from_str(include_str!("../benches/data/jme_documents.json")).unwrap();
    let mut out = vec![];
    for d in all.as_array().unwrap() {
        out.push(serde_json::to_string(d).unwrap());
        out.push(serde_json::to_string_pretty(d).unwrap());
    }
    out.push(include_str!("../benches/data/jme_documents.json").to_string());
    out.push(r#"["\u00e9\"\\\/", -0.5e+10, 1E-2, 0, true, false, null, {}, [], ""]"#.to_string());
    out
}

#[test]
fn documents_with_holes_are_completable_and_complete_to_json() {
    let checker = RefCell::new(Checker::from_spec("json").unwrap());
    let docs = documents();
    let mut runner = TestRunner::new(ProptestConfig::with_cases(400));
    let strategy = (0..docs.len(), prop::collection::vec(0.0f64..1.0, 1..=8));
    runner
        .run(&strategy, |(d, fractions)| {
            let doc = &docs[d];
            let mut cuts: Vec<usize> = fractions
                .iter()
                .map(|f| (f * doc.len() as f64) as usize)
                .collect();
            cuts.sort_unstable();
            if cuts.len() % 2 == 1 {
                cuts.push(doc.len());
            }
            let text = corpus::cut(doc.as_bytes(), &cuts);
            let check = checker.borrow_mut().check_text(&text);
            prop_assert_eq!(
                check.verdict,
                CheckVerdict::Completable,
                "cuts {:?} of {}",
                cuts,
                doc
            );
            let completion = checker.borrow_mut().complete_text(&text).unwrap().unwrap();
            let s = String::from_utf8(completion).unwrap();
            prop_assert!(
                serde_json::from_str::<serde_json::Value>(&s).is_ok(),
                "completion {:?}",
                s
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn complete_texts_are_judged_like_serde_json() {
    let checker = RefCell::new(Checker::from_spec("json").unwrap());
    let docs = documents();
    let mut runner = TestRunner::new(ProptestConfig::with_cases(2000));
    let edit = (
        0usize..3,
        0.0f64..1.0,
        prop::sample::select(b"{}[],:\"\\ 0123456789.eE+-tfnul".to_vec()),
    );
    let strategy = (0..docs.len(), prop::collection::vec(edit, 1..=3));
    runner
        .run(&strategy, |(d, edits)| {
            let mut bytes = docs[d].as_bytes().to_vec();
            for (kind, at, c) in edits {
                let i = ((at * bytes.len() as f64) as usize).min(bytes.len().saturating_sub(1));
                match kind {
                    0 => {
                        bytes.remove(i);
                    }
                    1 => bytes.insert(i, c),
                    _ => bytes[i] = c,
                }
            }
            let Ok(text) = String::from_utf8(bytes) else {
                return Ok(());
            };
            let serde_ok = match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(_) => true,
                // serde_json stops at numbers beyond f64 (`1e400`, which RFC 8259 allows)
                // before it reads the rest: no verdict to compare with.
                Err(e) if e.to_string().contains("number out of range") => return Ok(()),
                Err(_) => false,
            };
            let verdict = checker
                .borrow_mut()
                .check_text(&HoleyText::solid(text.as_bytes()))
                .verdict;
            prop_assert_eq!(
                verdict == CheckVerdict::Completable,
                serde_ok,
                "text {:?}",
                text
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn tricky_json_canvases() {
    let mut checker = Checker::from_spec("json").unwrap();
    let mut verdict = |parts: &[&str]| {
        let text = HoleyText {
            chunks: parts.iter().map(|p| p.as_bytes().to_vec()).collect(),
        };
        checker.check_text(&text).verdict
    };
    use CheckVerdict::*;
    // One string across a hole.
    assert_eq!(verdict(&["\"hiii", "ello\""]), Completable);
    // `123□789` as one number or two (two need a separator inside an array).
    assert_eq!(verdict(&["123", "789"]), Completable);
    assert_eq!(verdict(&["[123", "789]"]), Completable);
    // `nul□ull`: never one `null`; at top level nothing can follow `null`...
    assert_eq!(verdict(&["nul", "ull"]), NotCompletable);
    assert_eq!(verdict(&["[nul", "ull"]), NotCompletable);
    // ...but in an array the filler `l,n` makes two: `[null,null]`.
    assert_eq!(verdict(&["[nul", "ull]"]), Completable);
    assert_eq!(verdict(&["[\"nul", "ull\"]"]), Completable);
    // A hole right after a keyword.
    assert_eq!(verdict(&["[true", "]"]), Completable);
    assert_eq!(verdict(&["true", ""]), Completable);
    assert_eq!(verdict(&["truex", ""]), NotCompletable);
    // EOS right after a partial lexeme.
    assert_eq!(verdict(&["[1, tru"]), NotCompletable);
    assert_eq!(verdict(&["\"abc"]), NotCompletable);
    assert_eq!(verdict(&["\"abc", ""]), Completable);
    // Holes at both ends.
    assert_eq!(verdict(&["", ": 1", ""]), Completable);
    assert_eq!(verdict(&["", "}"]), Completable);
    // Escapes: an escaped quote does not end the string.
    assert_eq!(verdict(&["\"a\\\"b\""]), Completable);
    assert_eq!(verdict(&["\"a\\\"", "b", ""]), Completable);
    assert_eq!(verdict(&["\"a\\\"", "b"]), NotCompletable);
    assert_eq!(verdict(&["\"a\\x\""]), NotCompletable);
}

#[test]
fn completions_prefer_short_fillers() {
    // A lexeme that ends where a chunk begins lies wholly in the hole and must cost its length:
    // otherwise every lexeme is free inside a hole and completions grow arbitrary fillers.
    let mut json = Checker::from_spec("json").unwrap();
    let complete = |c: &mut Checker, parts: &[&str]| {
        let text = HoleyText {
            chunks: parts.iter().map(|p| p.as_bytes().to_vec()).collect(),
        };
        String::from_utf8(c.complete_text(&text).unwrap().unwrap()).unwrap()
    };
    // Where several fillers are equally short, any of them will do: compare lengths.
    assert_eq!(
        complete(&mut json, &["[1, ", ", 3]"]).len(),
        "[1, 0, 3]".len()
    );
    // A chunk's first lexeme may also stand for one emitted in the hole (both are one edge of
    // the deterministic automaton), so `{}` ties with `0` here.
    assert!(complete(&mut json, &["{\"a\": ", "}"]).len() <= "{\"a\": {}}".len());
    assert_eq!(complete(&mut json, &["[1", "]"]), "[1]");
    let mut smiles = Checker::from_spec("smiles").unwrap();
    assert_eq!(complete(&mut smiles, &["CC", "CC"]), "CCCC");
    assert_eq!(complete(&mut smiles, &["C(", "C"]).len(), "C(C)C".len());
}
