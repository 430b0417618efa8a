//! Constraints whose output continues a fixed prefix the model did not generate
//! ([`MaskConstraint::with_prefix`], [`Constraint::with_prefix`]): the grammar judges the prefix
//! and the output together, positions and texts are the output's alone.
//!
//! Oracles: a hand-written recognizer of a tiny grammar, with every filling of the other
//! positions enumerated (masks are exact for three positions: see `canvas::tokens`); and, end to
//! end on the fixture model, `Checker::from_spec("cpp")` and tree-sitter-cpp on the declaration
//! followed by the output.
#![cfg(feature = "models")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use candle_core::{DType, Device};
use lacuna::canvas::Cell;
use lacuna::checker::Checker;
use lacuna::diffusion::{
    self, generate, generate_masked, Constraint, GenerateOptions, LLaDASampler, MaskConstraint,
    Model, TokenTable,
};
use lacuna::grammar::lark;
use lacuna::vocab::Vocabulary;

/// Lists of numbers: `[]`, `[7]`, `[12,0,5]`.
const LIST: &str = "start: \"[\" [D (\",\" D)*] \"]\"\nD: /[0-9]+/\n";

/// An oracle for [`LIST`] written without the grammar: brackets around comma-separated
/// non-empty digit runs.
fn is_list(text: &[u8]) -> bool {
    let Some(inner) = text.strip_prefix(b"[").and_then(|t| t.strip_suffix(b"]")) else {
        return false;
    };
    inner.is_empty()
        || inner
            .split(|&b| b == b',')
            .all(|d| !d.is_empty() && d.iter().all(u8::is_ascii_digit))
}

/// A tiny vocabulary for [`LIST`]: multi-byte tokens that cross its lexemes, one that is
/// never valid, then the EOS (id [`EOS`]) and a forbidden id (no bytes).
const WORDS: [&str; 11] = ["[", "]", "1", "2", ",", "12", "],", ",3", "[]", "x", "1]"];
const EOS: u32 = WORDS.len() as u32;

fn tiny_bytes() -> Vec<Vec<u8>> {
    let mut bytes: Vec<Vec<u8>> = WORDS.iter().map(|w| w.as_bytes().to_vec()).collect();
    bytes.push(b"</s>".to_vec());
    bytes.push(Vec::new());
    bytes
}

fn tiny_vocab() -> Arc<Vocabulary> {
    Arc::new(Vocabulary::new(tiny_bytes(), &[EOS], &[EOS + 1]))
}

fn list_checker(vocab: Option<&Arc<Vocabulary>>) -> Checker {
    let grammar = lark::parse(LIST, "list.lark").unwrap();
    match vocab {
        Some(v) => Checker::with_vocabulary(grammar, v.clone()).unwrap(),
        None => Checker::new(grammar).unwrap(),
    }
}

fn id(word: &str) -> u32 {
    WORDS.iter().position(|w| *w == word).unwrap() as u32
}

/// Prefixes as tokens of [`WORDS`]; the last two start no list.
const PREFIXES: [&[&str]; 7] = [
    &[],
    &["["],
    &["[", "1"],
    &["[", "12", ","],
    &["[]"],
    &["[", ","],
    &["x"],
];

/// Short strings over the bytes lists are made of: enough to close any list prefix.
fn fillers() -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new()];
    let mut last = vec![Vec::new()];
    for _ in 0..3 {
        let mut next = Vec::new();
        for s in &last {
            for &b in b"[]1," {
                let mut t: Vec<u8> = s.clone();
                t.push(b);
                next.push(t);
            }
        }
        out.extend(next.iter().cloned());
        last = next;
    }
    out
}

/// Token-exact masks after a prefix, against brute force: with three generated positions
/// (read exactly), `t` is in the mask of position `i` iff some filling of the other positions
/// (text tokens, then EOS to the end) makes the prefix and the output a list; a prefix that
/// starts no list is an error at construction.
#[test]
fn masks_after_a_prefix_match_brute_force() {
    let vocab = tiny_vocab();
    let bytes = tiny_bytes();
    let ids: Vec<u32> = (0..=EOS).collect();
    for words in PREFIXES {
        let prefix: Vec<u32> = words.iter().map(|w| id(w)).collect();
        let prefix_bytes: Vec<u8> = words.concat().into_bytes();
        // Every output of three positions: text tokens, then EOS to the end.
        let mut expected = vec![Vec::new(); 3];
        for a in &ids {
            for b in &ids {
                for c in &ids {
                    let out = [*a, *b, *c];
                    let first_eos = out.iter().position(|&t| t == EOS).unwrap_or(3);
                    if out[first_eos..].iter().any(|&t| t != EOS) {
                        continue;
                    }
                    let mut text = prefix_bytes.clone();
                    for &t in &out[..first_eos] {
                        text.extend_from_slice(&bytes[t as usize]);
                    }
                    if is_list(&text) {
                        for (i, &t) in out.iter().enumerate() {
                            expected[i].push(t);
                        }
                    }
                }
            }
        }
        let starts_a_list = fillers()
            .iter()
            .any(|f| is_list(&[&prefix_bytes[..], f].concat()));
        let mut checker = list_checker(Some(&vocab));
        let made = MaskConstraint::with_prefix(&mut checker, &prefix, 3);
        if !starts_a_list {
            let err = made.expect_err("a prefix that starts no list is refused");
            assert!(err.to_string().contains("prefix"), "{words:?}: {err}");
            continue;
        }
        let mut c = made.unwrap();
        assert_eq!(c.prefix(), &prefix_bytes[..]);
        assert_eq!(c.cells(), &[None, None, None]);
        assert_eq!(c.canvas().len(), prefix.len() + 3);
        for (i, exp) in expected.iter_mut().enumerate() {
            exp.sort_unstable();
            exp.dedup();
            let got: Vec<u32> = c.allowed(i).unwrap().ids().collect();
            assert_eq!(&got, exp, "prefix {words:?}, position {i}");
            for &t in &ids {
                assert_eq!(
                    c.check(i, t),
                    exp.contains(&t),
                    "{words:?}: check({i}, {t})"
                );
            }
        }
        // An EOS placed at generated position 1 fills position 2 (positions are the output's).
        if expected[1].contains(&EOS) {
            assert_eq!(c.accept(1, EOS), [2]);
            assert_eq!(c.cells(), &[None, Some(EOS), Some(EOS)]);
            assert_eq!(
                &c.canvas().cells[..prefix.len()],
                &prefix.iter().map(|&t| Some(t)).collect::<Vec<_>>()[..]
            );
            assert!(!c.is_complete());
            assert_eq!(c.text(), b"");
            // The completion leaves the prefix out: what it writes, after it, is a list.
            let done = c.completion().unwrap();
            assert!(
                is_list(&[&prefix_bytes[..], &done].concat()),
                "{words:?}: {done:?}"
            );
        }
    }
}

/// The text constraint after a prefix, against brute force: a token at a generated position
/// with the others masked (any string, the empty one too) is accepted iff some short strings
/// around it make the prefix and the output a list; EOS iff the prefix and a string before it
/// are one.
#[test]
fn checks_after_a_prefix_match_brute_force() {
    let bytes = tiny_bytes();
    let table = TokenTable::new(bytes.clone(), &[EOS]);
    let fill = fillers();
    for words in PREFIXES {
        let prefix: Vec<u8> = words.concat().into_bytes();
        let list = |parts: &[&[u8]]| is_list(&[&prefix[..], &parts.concat()].concat());
        let mut checker = list_checker(None);
        let mut c = Constraint::with_prefix(&mut checker, &table, &prefix, 3);
        assert_eq!(c.cells(), &[Cell::Mask, Cell::Mask, Cell::Mask]);
        assert_eq!(c.prefix(), &prefix[..]);
        for t in 0..=EOS {
            let at0 = if t == EOS {
                list(&[])
            } else {
                fill.iter().any(|s| list(&[&bytes[t as usize], s]))
            };
            assert_eq!(c.check(0, t), at0, "prefix {words:?}: check(0, {t})");
            let at1 = if t == EOS {
                fill.iter().any(|s| list(&[s]))
            } else {
                fill.iter()
                    .any(|s| fill.iter().any(|u| list(&[s, &bytes[t as usize], u])))
            };
            assert_eq!(c.check(1, t), at1, "prefix {words:?}: check(1, {t})");
        }
        if c.check(1, EOS) {
            assert_eq!(c.accept(1, EOS), [2]);
            assert_eq!(c.cells(), &[Cell::Mask, Cell::Eos, Cell::Eos]);
            let done = c.completion().unwrap();
            assert!(list(&[&done]), "{words:?}: {done:?}");
        }
    }
}

/// JSON after `{"a": `: the first generated position may open a value, never close the
/// object, which the same position may open without the prefix; in both constraints.
#[test]
fn a_json_prefix_decides_the_first_position() {
    let mut bytes: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    bytes.push(b"</s>".to_vec());
    let vocab = Arc::new(Vocabulary::new(bytes.clone(), &[256], &[]));
    let table = TokenTable::new(bytes, &[256]);
    let prefix = b"{\"a\": ";
    let prefix_ids: Vec<u32> = prefix.iter().map(|&b| b as u32).collect();

    let mut checker = Checker::from_spec("json").unwrap();
    checker.set_vocabulary(vocab.clone());
    let mut after = MaskConstraint::with_prefix(&mut checker, &prefix_ids, 4).unwrap();
    let mask = after.allowed(0).unwrap();
    for b in b"0123456789\"[{-tfn" {
        assert!(
            mask.contains(*b as u32),
            "{:?} after the prefix",
            *b as char
        );
    }
    for b in b"}],:x" {
        assert!(
            !mask.contains(*b as u32),
            "{:?} after the prefix",
            *b as char
        );
    }
    assert!(!mask.contains(256), "EOS after the prefix");
    let mut checker = Checker::from_spec("json").unwrap();
    checker.set_vocabulary(vocab.clone());
    let mut alone = MaskConstraint::new(&mut checker, 4).unwrap();
    let mask = alone.allowed(0).unwrap();
    assert!(mask.contains(b'{' as u32) && !mask.contains(b'}' as u32));
    assert_eq!(alone.prefix(), b"");

    let mut checker = Checker::from_spec("json").unwrap();
    let mut after = Constraint::with_prefix(&mut checker, &table, prefix, 4);
    assert!(after.check(0, b'7' as u32));
    assert!(after.check(0, b'"' as u32));
    assert!(!after.check(0, b'}' as u32));
    assert!(!after.check(0, 256));
    after.accept(0, b'7' as u32);
    assert!(after.check(1, b'}' as u32));
    after.accept(1, b'}' as u32);
    assert_eq!(after.accept(2, 256), [3]);
    assert!(after.is_complete());
    // The completion is the output alone; the prefix and it make the object.
    assert_eq!(after.completion().unwrap(), b"7}");
    let mut checker = Checker::from_spec("json").unwrap();
    let mut alone = Constraint::new(&mut checker, &table, 4);
    assert!(alone.check(0, b'{' as u32));
    assert!(!alone.check(0, b'}' as u32));
}

/// A prefix id that is not a text token is a named error.
#[test]
fn prefix_ids_must_be_text() {
    let vocab = tiny_vocab();
    for bad in [EOS, EOS + 1, 99] {
        let mut checker = list_checker(Some(&vocab));
        let err = MaskConstraint::with_prefix(&mut checker, &[id("["), bad], 4)
            .err()
            .unwrap();
        assert!(err.to_string().contains("prefix position 1"), "{err}");
    }
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// ids < 256 are bytes; the model's EOS ends the output; the others are special tokens.
fn byte_vocab(model: &dyn Model) -> (Arc<Vocabulary>, TokenTable) {
    let bytes: Vec<Vec<u8>> = (0..model.vocab_size() as u32)
        .map(|id| match u8::try_from(id) {
            Ok(b) => vec![b],
            Err(_) => format!("<|{id}|>").into_bytes(),
        })
        .collect();
    let eos = [model.eos_token_id()];
    let specials: Vec<u32> = (256..model.vocab_size() as u32).collect();
    (
        Arc::new(Vocabulary::new(bytes.clone(), &eos, &specials)),
        TokenTable::new(bytes, &eos),
    )
}

fn byte_ids(text: &[u8]) -> Vec<u32> {
    text.iter().map(|&b| b as u32).collect()
}

/// Mask-guided generation after a prefix finishes in added positions, then by completion:
/// the grammar's only word is `[12345]`, the prefix `[12`, the output has 2 positions (fewer
/// than the prefix's, so a position added in the wrong place lands in the prefix).
#[test]
fn the_model_finishes_after_a_prefix() {
    let model = diffusion::load(&data("llada-tiny"), DType::F32, &Device::Cpu).unwrap();
    let (vocab, _) = byte_vocab(model.as_ref());
    let grammar = lark::parse("start: \"[12\" D \"45]\"\nD: \"3\"\n", "word.lark").unwrap();
    let mask = model.mask_token_id();
    let run = |seed: u64, max_extra: usize| {
        let mut checker = Checker::with_vocabulary(grammar.clone(), vocab.clone()).unwrap();
        let mut c = MaskConstraint::with_prefix(&mut checker, &byte_ids(b"[12"), 2).unwrap();
        let mut opts = GenerateOptions::new(2, seed);
        opts.max_extra_positions = max_extra;
        let g = generate_masked(
            model.as_ref(),
            &mut LLaDASampler::new(2, 2),
            &byte_ids(b"w: [12"),
            &opts,
            &mut c,
        )
        .unwrap();
        // The constraint's cells are the generated ids (positions added in the same places).
        let cells: Vec<u32> = c.cells().iter().map(|t| t.unwrap_or(mask)).collect();
        assert_eq!(cells, g.ids);
        // The prefix's cells stay as they were, in front.
        let prefix: Vec<Option<u32>> = byte_ids(b"[12").into_iter().map(Some).collect();
        assert_eq!(&c.canvas().cells[..3], &prefix[..]);
        g
    };
    for seed in 0..3 {
        let g = run(seed, 64);
        let st = &g.stats;
        assert_eq!(g.text, b"345]", "seed {seed}: {st:?}");
        assert!(!st.fallback && st.completion_bytes == 0, "{st:?}");
        assert!((2..=8).contains(&st.extra_positions), "{st:?}");
        assert_eq!(g.ids.len(), 2 + st.extra_positions);
    }
    let g = run(0, 0);
    assert_eq!(g.text, b"345]");
    assert!(
        g.stats.fallback && (2..=4).contains(&g.stats.completion_bytes),
        "{:?}",
        g.stats
    );
}

/// Whether tree-sitter-cpp parses `text` without an error.
fn tree_sitter_reads(text: &[u8]) -> bool {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_cpp::LANGUAGE.into())
        .unwrap();
    !parser.parse(text, None).unwrap().root_node().has_error()
}

/// HumanEval-style C++: the fixture model continues a declaration it did not write (the
/// prompt, as it would end a real one), under both constraints; the declaration followed by the
/// output is a program that the C++ grammar and tree-sitter accept, while the output alone (a
/// body and its closing brace) is not one. (C++ masks over 256 byte tokens take about 0.3 s
/// each, so the mask route runs one short generation per mode.)
#[test]
fn generation_continues_a_cpp_declaration() {
    let model = diffusion::load(&data("llada-tiny"), DType::F32, &Device::Cpu).unwrap();
    let (vocab, table) = byte_vocab(model.as_ref());
    let declarations: [&[u8]; 2] = [
        b"#include<stdio.h>\nusing namespace std;\nint add(int x,int y){\n",
        b"#include<stdio.h>\n#include<math.h>\nusing namespace std;\nfloat truncate_number(float number){\n",
    ];
    let mut judge = Checker::from_spec("cpp").unwrap();
    let mut judge_program = |decl: &[u8], text: &[u8], what: &str| {
        let program = [decl, text].concat();
        let what = format!("{what}: {:?}", String::from_utf8_lossy(&program));
        assert!(judge.accepts(&program), "{what}");
        assert!(tree_sitter_reads(&program), "{what}");
        assert!(!judge.accepts(text), "{what}");
    };
    let decl = declarations[0];
    let prompt = byte_ids(decl);
    let n = 16;
    for lazy in [false, true] {
        let mut checker = Checker::from_spec("cpp").unwrap();
        checker.set_vocabulary(vocab.clone());
        let mut c = MaskConstraint::with_prefix(&mut checker, &prompt, n).unwrap();
        if lazy {
            c = c.lazy();
        }
        let opts = GenerateOptions::new(n, 0);
        let mut sampler = LLaDASampler::new(n, 8);
        let g = generate_masked(model.as_ref(), &mut sampler, &prompt, &opts, &mut c).unwrap();
        let what = format!("masks, lazy {lazy}, {:?}", g.stats);
        judge_program(decl, &g.text, &what);
        if !g.stats.fallback {
            assert_eq!(g.text, table.text(&g.ids, model.mask_token_id()), "{what}");
        }
    }
    let n = 24;
    for decl in declarations {
        let prompt = byte_ids(decl);
        for seed in 0..2 {
            let mut checker = Checker::from_spec("cpp").unwrap();
            let mut c = Constraint::with_prefix(&mut checker, &table, decl, n);
            let g = generate(
                model.as_ref(),
                &mut LLaDASampler::new(n, 8),
                &table,
                &prompt,
                &GenerateOptions::new(n, seed),
                Some(&mut c),
            )
            .unwrap();
            let what = format!("rejection, seed {seed}, {:?}", g.stats);
            judge_program(decl, &g.text, &what);
            // What the completion wrote is counted without the prefix: the output's bytes
            // less those of the placed ids.
            let mask = model.mask_token_id();
            let placed: usize = g
                .ids
                .iter()
                .filter(|&&t| t != mask && !table.is_eos(t))
                .map(|&t| table.bytes(t).len())
                .sum();
            if g.stats.fallback {
                assert_eq!(g.stats.completion_bytes, g.text.len() - placed, "{what}");
            } else {
                assert_eq!(g.text, table.text(&g.ids, mask), "{what}");
            }
        }
    }
}
