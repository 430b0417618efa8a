//! Masks of one 32-position block on the 256-token canvases of `benches/masks.rs`, position by
//! position, with what each cost: a quick look at where mask time goes.
//!
//! `cargo run --release --example mask_block -- FAMILY [infill|semi_ar] [POSITIONS]`
//! - FAMILY: `json`, `json_schema`, `smiles` or `cpp`;
//! - `infill` (the default): the document's text on both sides of the block, as in the
//!   benchmarks; `semi_ar`: every position after the block masked too, as a semi-autoregressive
//!   sampler's canvas is;
//! - POSITIONS: `all` (the default), `first`, `middle`, or offsets in the block (`0,5,16`);
//! - `WARM=N` in the environment repeats the warm pass N times (for a profiler:
//!   `WARM=300 perf record -g target/release/examples/mask_block json infill 3`).

use std::path::Path;
use std::time::Instant;

use lacuna::checker::Checker;

#[path = "../tests/common/token_workload.rs"]
mod token_workload;

use token_workload::{block_canvas, BLOCK, BLOCK_FAMILIES};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let family = args.first().map(String::as_str).unwrap_or("json");
    let scenario = args.get(1).map(String::as_str).unwrap_or("infill");
    let which = args.get(2).map(String::as_str).unwrap_or("all");
    let Some(&(_, spec_end)) = BLOCK_FAMILIES.iter().find(|(f, _)| *f == family) else {
        eprintln!("unknown family {family:?}: json, json_schema, smiles or cpp");
        std::process::exit(2);
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (vocab, tok) = token_workload::qwen(root);
    let (canvas, start, spec) = block_canvas(root, &vocab, &tok, spec_end, scenario == "semi_ar");
    let g = lacuna::grammar::spec::load(&spec).unwrap();
    let t0 = Instant::now();
    let mut checker = Checker::with_vocabulary(g, vocab.clone()).unwrap();
    eprintln!("checker with vocabulary: {} ms", t0.elapsed().as_millis());
    let offsets: Vec<usize> = match which {
        "all" => (0..BLOCK).collect(),
        "first" => vec![0],
        "middle" => vec![BLOCK / 2],
        list => list.split(',').map(|s| s.parse().unwrap()).collect(),
    };
    let check = checker.check_tokens(&canvas).unwrap();
    eprintln!(
        "{family} {scenario}: block at {start}; canvas check {:?} in {} us ({} states)",
        check.verdict, check.micros, check.dfa_states
    );
    // Three passes: the first fills the checker's caches (the paths of tokens from each entry
    // set); `warm` computes every position's mask over those caches, the memo of mask answers
    // emptied before each (what a sampler pays per position where the reading is new);
    // `block` empties the memo once, so positions read alike share one search (what a sampler
    // pays for a step's block).
    // `WARM=N` repeats the warm pass N times, so a profiler's samples come from warm masks.
    let warm: usize = std::env::var("WARM").map_or(1, |v| v.parse().expect("WARM is a number"));
    let passes = std::iter::once("cold")
        .chain(std::iter::repeat_n("warm", warm))
        .chain(["block"]);
    for pass in passes {
        if pass == "block" {
            checker.forget_masks();
        }
        let t0 = Instant::now();
        for &o in &offsets {
            let p = start + o;
            if pass == "warm" {
                checker.forget_masks();
            }
            let a = checker.allowed(&canvas, p).unwrap();
            println!(
                "{pass} position {p} (+{o}): {} allowed, {} unknown, {} groups, {} checks{}, {} us",
                a.mask.count(),
                a.unknown,
                a.effects,
                a.checks,
                if a.by_checks { " (by checks)" } else { "" },
                a.micros
            );
        }
        println!("{pass} total {} ms", t0.elapsed().as_millis());
    }
}
