//! The shipped JSON grammar (`grammars/json.lark`) on real documents no one here wrote:
//! every instance (valid for its schema or not: all are JSON) and every schema of
//! JSONSchemaBench and of the JSON Schema Test Suite (draft 2020-12), with its original
//! spelling.
//!
//! - every document is accepted;
//! - on mutated documents (characters deleted, inserted, replaced, swapped) the checker agrees
//!   with serde_json, the independent oracle, except where serde_json refuses what RFC 8259's
//!   grammar allows (numbers beyond f64, lone UTF-16 surrogates in `\u` escapes, nesting deeper
//!   than 128): those cases are counted and must be accepted by the grammar;
//! - documents with holes cut anywhere are completable, and the completion is JSON that
//!   serde_json reads and that holds every chunk in order.

mod corpus;

use corpus::{contains_in_order, cut, Rng};
use lacuna::checker::{CheckVerdict, Checker};

fn documents() -> Vec<String> {
    let mut docs = vec![];
    for case in corpus::jsonschemabench()
        .into_iter()
        .chain(corpus::test_suite())
    {
        docs.push(case.schema);
        docs.extend(case.instances.into_iter().map(|i| i.text));
    }
    docs.sort();
    docs.dedup();
    docs
}

/// serde_json's verdict, or `None` where it refuses for a reason outside the JSON grammar.
/// JSON text is UTF-8 (RFC 8259 §8.1); serde_json does not check that inside strings it skips,
/// so the oracle checks it first.
fn serde_verdict(text: &[u8]) -> Option<bool> {
    let Ok(text) = std::str::from_utf8(text) else {
        return Some(false);
    };
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Ok(_) => Some(true),
        Err(e) => {
            let m = e.to_string();
            let beyond_grammar = m.contains("number out of range")
                || m.contains("surrogate")
                || m.contains("recursion limit");
            (!beyond_grammar).then_some(false)
        }
    }
}

#[test]
fn every_corpus_document_is_accepted() {
    let mut checker = Checker::from_spec("json").unwrap();
    let docs = documents();
    assert!(
        docs.len() > 5_000,
        "the corpora hold {} documents",
        docs.len()
    );
    eprintln!("{} distinct documents", docs.len());
    let rejected: Vec<&String> = docs
        .iter()
        .filter(|d| !checker.accepts(d.as_bytes()))
        .collect();
    assert!(
        rejected.is_empty(),
        "{} of {} documents rejected, e.g. {:?}",
        rejected.len(),
        docs.len(),
        rejected.first()
    );
    // Pretty-printed forms too (other whitespace between lexemes).
    for d in docs.iter().step_by(7) {
        let v: serde_json::Value = serde_json::from_str(d).unwrap();
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        assert!(checker.accepts(pretty.as_bytes()), "{pretty}");
    }
}

/// Applies one random edit: delete, insert, replace or swap, with bytes that matter to JSON.
fn mutate(rng: &mut Rng, text: &mut Vec<u8>) {
    const ALPHABET: &[u8] = b"{}[],:\"\\ \n0123456789.eE+-tfnulrabx/";
    let pick = |rng: &mut Rng| ALPHABET[rng.below(ALPHABET.len())];
    let n = text.len();
    match rng.below(4) {
        0 if n > 0 => {
            text.remove(rng.below(n));
        }
        1 => {
            let b = pick(rng);
            text.insert(rng.below(n + 1), b);
        }
        2 if n > 0 => {
            let i = rng.below(n);
            text[i] = pick(rng);
        }
        _ if n > 1 => {
            let i = rng.below(n - 1);
            text.swap(i, i + 1);
        }
        _ => text.push(pick(rng)),
    }
}

#[test]
fn mutated_documents_are_judged_like_serde_json() {
    let mut checker = Checker::from_spec("json").unwrap();
    let docs: Vec<String> = documents().into_iter().filter(|d| d.len() < 600).collect();
    let mut rng = Rng(0x6a73_6f6e);
    let (mut agree, mut beyond, mut valid) = (0, 0, 0);
    for _ in 0..6000 {
        let mut text = docs[rng.below(docs.len())].as_bytes().to_vec();
        for _ in 0..1 + rng.below(3) {
            mutate(&mut rng, &mut text);
        }
        let ours = checker.accepts(&text);
        match serde_verdict(&text) {
            Some(theirs) => {
                assert_eq!(
                    ours,
                    theirs,
                    "lacuna and serde_json disagree on {:?}",
                    String::from_utf8_lossy(&text)
                );
                agree += 1;
                valid += theirs as usize;
            }
            None => {
                assert!(ours, "{:?}", String::from_utf8_lossy(&text));
                beyond += 1;
            }
        }
    }
    eprintln!("{agree} mutants agreed ({valid} still JSON), {beyond} beyond serde_json's limits");
    assert!(valid > 200 && agree - valid > 200, "mutants of both kinds");
}

#[test]
fn corpus_documents_with_holes_complete_to_json() {
    let mut checker = Checker::from_spec("json").unwrap();
    let docs: Vec<String> = documents().into_iter().filter(|d| d.len() < 2000).collect();
    let mut rng = Rng(0x686f_6c65);
    for _ in 0..400 {
        let doc = docs[rng.below(docs.len())].as_bytes();
        let cuts: Vec<usize> = (0..1 + rng.below(16))
            .map(|_| rng.below(doc.len() + 1))
            .collect();
        let text = cut(doc, &cuts);
        let shown = || {
            text.chunks
                .iter()
                .map(|c| String::from_utf8_lossy(c).into_owned())
                .collect::<Vec<_>>()
                .join("□")
        };
        assert_eq!(
            checker.check_text(&text).verdict,
            CheckVerdict::Completable,
            "{}",
            shown()
        );
        let done = checker
            .complete_text(&text)
            .unwrap_or_else(|e| panic!("{e}: {}", shown()))
            .expect("completable");
        assert!(
            serde_verdict(&done) != Some(false),
            "completion {:?} of {} is not JSON",
            String::from_utf8_lossy(&done),
            shown()
        );
        assert!(contains_in_order(&done, &text.chunks), "{}", shown());
    }
}
