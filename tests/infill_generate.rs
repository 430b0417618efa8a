//! Fill-in-the-middle under the grammar: the frontier mask against an independent oracle, and
//! the infilling loop with a real causal architecture (the tiny Qwen2 FIM checkpoint).
//!
//! The oracle is the text checker with a hole of any string: a token `t` may come next iff
//! `prefix · middle · t` + any text + `suffix` is completable, which `check_text` answers on
//! its own code path (no vocabulary, no token canvas). With the 151k Qwen vocabulary every
//! byte is a token, so the two must agree exactly.

use std::path::Path;
use std::sync::Arc;

use candle_core::{DType, Device};
use lacuna::canvas::HoleyText;
use lacuna::checker::{CheckVerdict, Checker};
use lacuna::diffusion::Rng as ModelRng;
use lacuna::infill::{
    fill_middle, frontier_mask, CausalLm, CausalWriter, FimFormat, InfillError, InfillOptions,
    Piece, Surroundings,
};
use lacuna::vocab::{TokenId, TokenKind, Vocabulary};

#[path = "corpus/mod.rs"]
mod corpus;
#[path = "common/token_workload.rs"]
mod token_workload;
use corpus::Rng;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Checks the frontier after `prefix · middle` with `suffix` to come against the oracle, on
/// every id of the mask (up to `sample`), near misses (ids outside it sharing a first byte
/// with one inside) and random ids; and the true next token is in the mask. Returns the ids
/// checked.
#[allow(clippy::too_many_arguments)]
fn verify(
    checker: &mut Checker,
    oracle: &mut Checker,
    vocab: &Vocabulary,
    prefix: &[TokenId],
    middle: &[TokenId],
    suffix: &[TokenId],
    truth: Option<TokenId>,
    sample: usize,
    rng: &mut Rng,
) -> usize {
    let bytes = |ids: &[TokenId]| -> Vec<u8> {
        ids.iter().flat_map(|&t| vocab.bytes(t).to_vec()).collect()
    };
    let before = [Piece::Text(bytes(prefix)), Piece::Text(bytes(middle))];
    let after = [Piece::Text(bytes(suffix))];
    let f = frontier_mask(checker, &before, &after).unwrap();
    assert_eq!(f.unknown, 0, "no budget runs out on these");
    let head = [bytes(prefix), bytes(middle)].concat();
    let tail = bytes(suffix);
    let solid = [head.clone(), tail.clone()].concat();
    assert_eq!(
        f.may_end,
        oracle.check_text(&HoleyText::solid(&solid)).verdict,
        "may the middle end after {:?}?",
        String::from_utf8_lossy(&head)
    );
    if let Some(t) = truth {
        assert!(f.mask.contains(t), "the true next token {t} is refused");
    }
    let allowed: Vec<TokenId> = f.mask.ids().collect();
    let mut ids: Vec<TokenId> = Vec::new();
    for _ in 0..sample.min(allowed.len()) {
        ids.push(allowed[rng.below(allowed.len())]);
    }
    let firsts: std::collections::HashSet<u8> = allowed
        .iter()
        .filter_map(|&t| vocab.bytes(t).first().copied())
        .collect();
    let text_ids: Vec<TokenId> = vocab.text_ids().collect();
    let mut near = 0;
    for _ in 0..20 * sample {
        let t = text_ids[rng.below(text_ids.len())];
        if near < sample
            && !f.mask.contains(t)
            && vocab.bytes(t).first().is_some_and(|b| firsts.contains(b))
        {
            ids.push(t);
            near += 1;
        }
    }
    for _ in 0..sample {
        ids.push(text_ids[rng.below(text_ids.len())]);
    }
    for &t in &ids {
        let chunks = vec![[head.as_slice(), vocab.bytes(t)].concat(), tail.clone()];
        let verdict = oracle.check_text(&HoleyText { chunks }).verdict;
        if verdict == CheckVerdict::Unknown {
            continue;
        }
        assert_eq!(
            f.mask.contains(t),
            verdict == CheckVerdict::Completable,
            "token {t} {:?} after {:?}, before {:?}",
            String::from_utf8_lossy(vocab.bytes(t)),
            String::from_utf8_lossy(&head),
            String::from_utf8_lossy(&tail)
        );
    }
    ids.len()
}

/// A cut of `text` at char boundaries: `[..a]`, `[a..b]` (not empty), `[b..]`.
fn cut(text: &str, rng: &mut Rng, max_middle: usize) -> (String, String, String) {
    loop {
        let a = rng.below(text.len());
        let b = (a + 1 + rng.below(max_middle)).min(text.len());
        if text.is_char_boundary(a) && text.is_char_boundary(b) && a < b {
            return (text[..a].into(), text[a..b].into(), text[b..].into());
        }
    }
}

fn encode(tok: &tokenizers::Tokenizer, text: &str) -> Vec<TokenId> {
    tok.encode(text, false).unwrap().get_ids().to_vec()
}

#[test]
fn json_frontiers_agree_with_the_text_checker() {
    let (vocab, tok) = token_workload::qwen(root());
    let grammar = lacuna::grammar::spec::load("json").unwrap();
    let mut checker = Checker::with_vocabulary(grammar, Arc::clone(&vocab)).unwrap();
    let mut oracle = Checker::from_spec("json").unwrap();
    let mut rng = Rng(7);
    let cases = corpus::jsonschemabench();
    let mut checked = 0;
    for n in 0..16 {
        let case = &cases[rng.below(cases.len())];
        let Some(inst) = case.instances.iter().find(|i| i.valid && i.text.len() > 8) else {
            continue;
        };
        let (prefix, middle, suffix) = cut(&inst.text, &mut rng, 24);
        let (p, m, s) = (
            encode(&tok, &prefix),
            encode(&tok, &middle),
            encode(&tok, &suffix),
        );
        for j in [0, m.len() / 2, m.len()] {
            let truth = m.get(j).copied();
            checked += verify(
                &mut checker,
                &mut oracle,
                &vocab,
                &p,
                &m[..j],
                &s,
                truth,
                40,
                &mut rng,
            );
        }
        eprintln!("case {n}: {}", case.name);
    }
    assert!(checked > 3000, "{checked}");
}

#[test]
fn cpp_frontiers_agree_with_the_text_checker() {
    let (vocab, tok) = token_workload::qwen(root());
    let grammar = lacuna::grammar::spec::load("cpp").unwrap();
    let mut checker = Checker::with_vocabulary(grammar, Arc::clone(&vocab)).unwrap();
    let mut oracle = Checker::from_spec("cpp").unwrap();
    let mut rng = Rng(11);
    let tasks = corpus::humaneval_cpp();
    let mut checked = 0;
    for _ in 0..6 {
        let task = &tasks[rng.below(tasks.len())];
        // A 1-MRI region as the paper cuts them (5-100 characters of the solution), the file
        // as HumanEval-X compiles it.
        let body = &task.solution;
        let (a, m, b) = loop {
            let (a, m, b) = cut(body, &mut rng, 100);
            if m.len() >= 5 {
                break (a, m, b);
            }
        };
        let prefix = format!("{}{a}", task.declaration);
        let (p, m, s) = (encode(&tok, &prefix), encode(&tok, &m), encode(&tok, &b));
        for j in [0, m.len() / 2, m.len() - 1] {
            checked += verify(
                &mut checker,
                &mut oracle,
                &vocab,
                &p,
                &m[..j],
                &s,
                m.get(j).copied(),
                8,
                &mut rng,
            );
        }
    }
    assert!(checked > 300, "{checked}");
}

/// A vocabulary for the tiny Qwen2 FIM model (384 ids): the 256 bytes, some JSON words, the
/// end token (360) ends the output; the other sentinels and unused ids never stand in it.
fn tiny_vocab() -> Arc<Vocabulary> {
    let mut bytes: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for w in [
        "true", "false", "null", "\": ", ", \"", "\"name\"", "{\"", "\"}",
    ] {
        bytes.push(w.as_bytes().to_vec());
    }
    let words = bytes.len() as TokenId;
    bytes.resize(384, Vec::new());
    let forbidden: Vec<TokenId> = (words..384).filter(|&i| i != 360).collect();
    Arc::new(Vocabulary::new(bytes, &[360], &forbidden))
}

fn qwen2_tiny() -> (CausalLm, FimFormat) {
    let dir = root().join("tests/data/qwen2-fim-tiny");
    let model = CausalLm::load(&dir, DType::F32, &Device::Cpu).unwrap();
    let format = FimFormat {
        bos: None,
        prefix: 376,
        suffix: 378,
        middle: 377,
        ends: vec![360],
    };
    (model, format)
}

fn ids(text: &str) -> Vec<TokenId> {
    text.bytes().map(TokenId::from).collect()
}

#[test]
fn the_tiny_model_writes_middles_the_json_parser_reads() {
    let (model, format) = qwen2_tiny();
    let vocab = tiny_vocab();
    let grammar = lacuna::grammar::spec::load("json").unwrap();
    let mut checker = Checker::with_vocabulary(grammar, Arc::clone(&vocab)).unwrap();
    let cases = [
        ("{\"name\": ", "}"),
        ("[1, ", ", 3]"),
        ("{\"a\": [", "], \"b\": null}"),
        ("", ""),
    ];
    let mut ended = 0;
    for (i, (prefix, suffix)) in cases.iter().enumerate() {
        for (seed, temperature) in [(0, 0.0), (1, 1.0), (2, 1.5)] {
            let before = [Piece::Text(prefix.as_bytes().to_vec())];
            let after = [Piece::Text(suffix.as_bytes().to_vec())];
            let around = Surroundings {
                hole: i,
                before: &before,
                after: &after,
            };
            let (p, s) = (ids(prefix), ids(suffix));
            let mut writer = CausalWriter::new(&model, &format, &p, &s);
            let options = InfillOptions {
                max_tokens: 40,
                temperature,
                constrained: true,
                lazy: seed % 2 == 0,
            };
            let mut rng = ModelRng::new(seed);
            let middle =
                fill_middle(&mut writer, &mut checker, &around, &options, &mut rng).unwrap();
            // Every token came from a mask or a checked proposal.
            assert!(middle.masks + middle.checks - middle.refused >= middle.ids.len());
            assert!(middle
                .ids
                .iter()
                .all(|&t| vocab.kind(t) == Some(TokenKind::Text)));
            let text: Vec<u8> = middle
                .ids
                .iter()
                .flat_map(|&t| vocab.bytes(t).to_vec())
                .collect();
            let file = [prefix.as_bytes(), &text, suffix.as_bytes()].concat();
            if middle.ended {
                ended += 1;
                serde_json::from_slice::<serde_json::Value>(&file)
                    .unwrap_or_else(|e| panic!("{:?}: {e}", String::from_utf8_lossy(&file)));
            } else {
                // Out of tokens: still a prefix of some JSON with the suffix after it.
                let holey = HoleyText {
                    chunks: vec![
                        [prefix.as_bytes(), &text].concat(),
                        suffix.as_bytes().to_vec(),
                    ],
                };
                assert_eq!(
                    checker.check_text(&holey).verdict,
                    CheckVerdict::Completable
                );
            }
        }
    }
    assert!(ended >= 4, "{ended} of 12 middles ended within 40 tokens");
}

#[test]
fn a_suffix_no_middle_completes_is_named_at_once() {
    let (model, format) = qwen2_tiny();
    let grammar = lacuna::grammar::spec::load("json").unwrap();
    let mut checker = Checker::with_vocabulary(grammar, tiny_vocab()).unwrap();
    let before = [Piece::Text(b"[1]".to_vec())];
    let after = [Piece::Text(b"]".to_vec())];
    let around = Surroundings {
        hole: 3,
        before: &before,
        after: &after,
    };
    let (p, s) = (ids("[1]"), ids("]"));
    let e = fill_middle(
        &mut CausalWriter::new(&model, &format, &p, &s),
        &mut checker,
        &around,
        &InfillOptions::default(),
        &mut ModelRng::new(0),
    )
    .unwrap_err();
    assert!(matches!(e, InfillError::NoMiddle { hole: 3 }), "{e}");
    assert!(e.to_string().starts_with("hole 3:"), "{e}");
}

#[test]
fn lazy_masks_write_what_eager_masks_write() {
    // Greedy: the model's best token is kept when allowed, else its next best, checked, and
    // after LAZY_CHECKS refusals the best allowed one: the best allowed token either way; so
    // the middles agree token for token.
    let mut masks_eager_lazy = (0, 0);
    let (model, format) = qwen2_tiny();
    let grammar = lacuna::grammar::spec::load("json").unwrap();
    let mut checker = Checker::with_vocabulary(grammar, tiny_vocab()).unwrap();
    for (prefix, suffix) in [("{\"name\": ", "}"), ("[1, ", ", 3]"), ("", "")] {
        let before = [Piece::Text(prefix.as_bytes().to_vec())];
        let after = [Piece::Text(suffix.as_bytes().to_vec())];
        let around = Surroundings {
            hole: 0,
            before: &before,
            after: &after,
        };
        let (p, s) = (ids(prefix), ids(suffix));
        let mut middles = Vec::new();
        for lazy in [false, true] {
            let options = InfillOptions {
                max_tokens: 24,
                temperature: 0.0,
                constrained: true,
                lazy,
            };
            let mut writer = CausalWriter::new(&model, &format, &p, &s);
            let m = fill_middle(
                &mut writer,
                &mut checker,
                &around,
                &options,
                &mut ModelRng::new(0),
            )
            .unwrap();
            middles.push(m);
        }
        assert_eq!(middles[0].ids, middles[1].ids, "{prefix} □ {suffix}");
        assert_eq!(middles[0].ended, middles[1].ended);
        assert_eq!(
            middles[0].masks,
            middles[0].ids.len() + usize::from(middles[0].ended)
        );
        // A refused draw is drawn again without it before any mask: at most a mask a refusal.
        assert!(
            middles[1].masks <= middles[1].refused,
            "{prefix} □ {suffix}"
        );
        masks_eager_lazy.0 += middles[0].masks;
        masks_eager_lazy.1 += middles[1].masks;
        eprintln!(
            "{prefix} □ {suffix}: {} tokens; eager {} masks; lazy {} checks, {} masks",
            middles[0].ids.len(),
            middles[0].masks,
            middles[1].checks,
            middles[1].masks
        );
    }
    // The redraws answered most refusals without a mask (on this random model: 5 masks
    // against 50).
    assert!(
        masks_eager_lazy.1 * 2 < masks_eager_lazy.0,
        "{masks_eager_lazy:?}"
    );
}

#[test]
fn a_text_mask_that_fails_leaves_the_callers_deadline_alone() {
    // A checker without a vocabulary refuses the mask; the mask's 2 s limit must not stay
    // armed, or every later check of this checker gives up once it passes.
    use lacuna::canvas::HoleKind;
    let mut checker = Checker::from_spec("json").unwrap();
    let text = HoleyText {
        chunks: vec![b"[".to_vec(), Vec::new(), b"]".to_vec()],
    };
    assert!(checker
        .allowed_in_text(&text, &[HoleKind::Token, HoleKind::Any], 0)
        .is_err());
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let holey = HoleyText {
        chunks: vec![b"[1, ".to_vec(), b", 2]".to_vec()],
    };
    assert_eq!(
        checker.check_text(&holey).verdict,
        CheckVerdict::Completable
    );
}
