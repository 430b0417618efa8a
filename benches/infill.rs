//! Fill-in-the-middle frontier masks over the 151k-token Qwen vocabulary, beside the check of
//! one proposal (what lazy masks, and a rejection sampler, pay per token tried).
//!
//! Regions are cut as the paper's 1-MRI tasks are: a span of 5-100 characters removed from a
//! HumanEval-X C++ canonical solution (the file: the declaration and the solution), seeded.
//! One iteration walks a region's true middle, encoded with the Qwen tokenizer, token by
//! token, as the infilling loop does:
//! - `walk/{task}/frontier`: the exact frontier mask before each token ([`frontier_mask`]);
//! - `walk/{task}/lazy_accepted`: what the loop's lazy masks pay for a token the model
//!   proposes and the grammar accepts: one check ([`may_follow`]: the token, any text, then
//!   the suffix). A refused proposal costs that check and a frontier mask.
//!
//! The per-token figure is an iteration's time divided by the tokens walked (printed).
//! Run with `cargo bench --bench infill`.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use lacuna::checker::Checker;
use lacuna::infill::{frontier_mask, may_follow, Piece};
use lacuna::vocab::Vocabulary;

#[path = "../tests/common/token_workload.rs"]
mod token_workload;

/// A region: prefix, the middle's ids, suffix.
struct Region {
    name: String,
    prefix: Vec<u8>,
    middle: Vec<u32>,
    suffix: Vec<u8>,
}

fn regions(root: &Path, tok: &tokenizers::Tokenizer, n: usize) -> Vec<Region> {
    let gz = std::fs::read(root.join("tests/data/humaneval_cpp.jsonl.gz")).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .unwrap();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |below: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % below.max(1) as u64) as usize
    };
    let mut out = Vec::new();
    for line in text.lines().step_by(23).take(n) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let (decl, sol) = (
            v["declaration"].as_str().unwrap(),
            v["canonical_solution"].as_str().unwrap(),
        );
        let len = 5 + next(96.min(sol.len() - 5));
        let mut start = next(sol.len() - len);
        while !sol.is_char_boundary(start) || !sol.is_char_boundary(start + len) {
            start -= 1;
        }
        let middle = &sol[start..start + len];
        out.push(Region {
            name: v["task_id"].as_str().unwrap().replace('/', "_"),
            prefix: format!("{decl}{}", &sol[..start]).into_bytes(),
            middle: tok.encode(middle, false).unwrap().get_ids().to_vec(),
            suffix: sol.as_bytes()[start + len..].to_vec(),
        });
    }
    out
}

fn walk_frontier(checker: &mut Checker, vocab: &Vocabulary, r: &Region) {
    let mut written = Vec::new();
    for &t in &r.middle {
        let before = [Piece::Text(r.prefix.clone()), Piece::Text(written.clone())];
        let after = [Piece::Text(r.suffix.clone())];
        let f = frontier_mask(checker, &before, &after).unwrap();
        assert!(f.mask.contains(t) || f.unknown > 0);
        written.extend_from_slice(vocab.bytes(t));
    }
}

fn walk_lazy(checker: &mut Checker, vocab: &Vocabulary, r: &Region) {
    let mut written = Vec::new();
    for &t in &r.middle {
        let before = [Piece::Text(r.prefix.clone()), Piece::Text(written.clone())];
        let after = [Piece::Text(r.suffix.clone())];
        let v = may_follow(checker, &before, vocab.bytes(t), &after);
        assert_ne!(v, lacuna::checker::CheckVerdict::NotCompletable);
        written.extend_from_slice(vocab.bytes(t));
    }
}

fn infill(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (vocab, tok) = token_workload::qwen(root);
    let grammar = lacuna::grammar::spec::load("cpp").unwrap();
    let mut checker = Checker::with_vocabulary(grammar, Arc::clone(&vocab)).unwrap();
    let mut group = c.benchmark_group("walk");
    group.sample_size(10);
    for r in regions(root, &tok, 4) {
        let t0 = std::time::Instant::now();
        walk_frontier(&mut checker, &vocab, &r);
        eprintln!(
            "{}: {} tokens; first walk {:.2} ms a token",
            r.name,
            r.middle.len(),
            t0.elapsed().as_secs_f64() * 1e3 / r.middle.len() as f64
        );
        group.bench_function(format!("{}/frontier", r.name), |b| {
            b.iter(|| walk_frontier(&mut checker, &vocab, &r))
        });
        group.bench_function(format!("{}/lazy_accepted", r.name), |b| {
            b.iter(|| walk_lazy(&mut checker, &vocab, &r))
        });
    }
    group.finish();
}

criterion_group!(benches, infill);
criterion_main!(benches);
