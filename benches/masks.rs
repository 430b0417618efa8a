//! Valid-token masks over the 151k-token Qwen vocabulary on 256-token canvases.
//!
//! Each family's canvas is a real document: the first uncorrupted workload canvas of that
//! grammar (`benches/data/workload`), its holes completed by the text checker, encoded with
//! the Qwen tokenizer, cut or padded with `<|endoftext|>` to 256 positions; a block of 32
//! positions in the middle of its text is masked, as a semi-autoregressive sampler's current
//! block. Benchmarks:
//! - `one_mask/{family}/first` and `/middle`: the mask of the block's first position (exact
//!   left context) and of its middle one (16 masks on each side), with a warm checker whose
//!   memo of mask answers is emptied before each (what a mask costs where the canvas's reading
//!   is new, as after a sampler's step);
//! - `block/{family}/memo`: the masks of all 32 positions of the block (`allowed_many`), the
//!   memo emptied before each block, so positions read alike (deep inside the run) share one
//!   search; `block/{family}/each`: the same 32 masks, the memo emptied before every position
//!   (every mask computed, as before the memo; not for C++, where computing the middle
//!   reading takes about a second and one position still runs into its deadline, so every
//!   position computed is half a minute an iteration);
//! - `prepare/…`: reading the vocabulary from `tokenizer.json`, and a grammar's trie over it.
//!
//! Masks use the default budgets (one of which is a 2 s wall-clock deadline per position), so
//! a figure near 2 s means positions ran into it. Run with `cargo bench --bench masks`.

use std::path::Path;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use lacuna::canvas::tokens::TokenCanvas;
use lacuna::checker::Checker;
use lacuna::vocab::Vocabulary;

#[path = "../tests/common/token_workload.rs"]
mod token_workload;

use token_workload::{block_canvas, BLOCK, BLOCK_FAMILIES};

/// A family's canvas with its block masked, the block's start, and its checker.
fn canvas(
    root: &Path,
    vocab: &Arc<Vocabulary>,
    tok: &tokenizers::Tokenizer,
    spec_end: &str,
) -> (TokenCanvas, usize, Checker) {
    let (canvas, start, spec) = block_canvas(root, vocab, tok, spec_end, false);
    let g = lacuna::grammar::spec::load(&spec).unwrap();
    let checker = Checker::with_vocabulary(g, vocab.clone()).unwrap();
    (canvas, start, checker)
}

fn masks(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (vocab, tok) = token_workload::qwen(root);
    for (family, spec_end) in BLOCK_FAMILIES {
        let (canvas, start, mut checker) = canvas(root, &vocab, &tok, spec_end);
        let block: Vec<usize> = (start..start + BLOCK).collect();
        // Warm the checker's caches, and say what the masks hold.
        for a in checker.allowed_many(&canvas, &block).unwrap() {
            eprintln!(
                "{family} position {}: {} allowed, {} unknown, {} effects, {} checks, {} us",
                a.position,
                a.mask.count(),
                a.unknown,
                a.effects,
                a.checks,
                a.micros
            );
        }
        let mut g = c.benchmark_group(format!("one_mask/{family}"));
        g.sample_size(10);
        for (name, p) in [("first", start), ("middle", start + BLOCK / 2)] {
            g.bench_function(name, |b| {
                b.iter(|| {
                    checker.forget_masks();
                    checker.allowed(&canvas, p).unwrap().mask.count()
                })
            });
        }
        g.finish();
        let mut g = c.benchmark_group(format!("block/{family}"));
        g.sample_size(10);
        g.bench_function("memo", |b| {
            b.iter(|| {
                checker.forget_masks();
                checker.allowed_many(&canvas, &block).unwrap().len()
            })
        });
        // C++: the middle reading takes about a second (shared by 26 positions through the
        // memo) and one position still runs into its 2 s deadline: computing every position
        // would be half a minute an iteration.
        if family == "cpp" {
            g.finish();
            continue;
        }
        g.bench_function("each", |b| {
            b.iter(|| {
                let mut n = 0;
                for &p in &block {
                    checker.forget_masks();
                    n += checker.allowed(&canvas, p).unwrap().mask.count();
                }
                n
            })
        });
        g.finish();
    }
}

fn prepare(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let json = std::fs::read(root.join(token_workload::QWEN)).unwrap();
    let mut g = c.benchmark_group("prepare");
    g.sample_size(10);
    g.bench_function("qwen_vocabulary", |b| {
        b.iter(|| {
            Vocabulary::from_tokenizer_json(&json, &[], "qwen")
                .unwrap()
                .len()
        })
    });
    let vocab = Arc::new(Vocabulary::from_tokenizer_json(&json, &[], "qwen").unwrap());
    for spec in ["json", "cpp"] {
        let mut checker = Checker::from_spec(spec).unwrap();
        g.bench_function(format!("trie_{spec}"), |b| {
            b.iter(|| checker.set_vocabulary(vocab.clone()))
        });
    }
    g.finish();
}

criterion_group!(benches, prepare, masks);
criterion_main!(benches);
