//! Masks of one 32-position block on the 256-token canvases of `benches/masks.rs`, position by
//! position, with what each cost: a quick look at where mask time goes.
//!
//! `cargo run --release --example mask_block -- FAMILY [infill|semi_ar] [POSITIONS]`
//! - FAMILY: `json`, `json_schema`, `smiles` or `cpp`;
//! - `infill` (the default): the document's text on both sides of the block, as in the
//!   benchmarks; `semi_ar`: every position after the block masked too, as a semi-autoregressive
//!   sampler's canvas is;
//! - POSITIONS: `all` (the default), `first`, `middle`, or offsets in the block (`0,5,16`).

use std::path::Path;
use std::time::Instant;

use lacuna::canvas::parse_canvas_line;
use lacuna::canvas::tokens::TokenCanvas;
use lacuna::checker::Checker;
use lacuna::vocab::TokenId;

#[path = "../tests/common/token_workload.rs"]
mod token_workload;

const LEN: usize = 256;
const BLOCK: usize = 32;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let family = args.first().map(String::as_str).unwrap_or("json");
    let scenario = args.get(1).map(String::as_str).unwrap_or("infill");
    let which = args.get(2).map(String::as_str).unwrap_or("all");
    let spec_end = match family {
        "json" => "json+fence",
        "json_schema" => "user_review.json+fence",
        "smiles" => "smiles+fence",
        "cpp" => "cpp+fence",
        other => {
            eprintln!("unknown family {other:?}: json, json_schema, smiles or cpp");
            std::process::exit(2);
        }
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (vocab, tok) = token_workload::qwen(root);
    let text = std::fs::read_to_string(root.join(token_workload::WORKLOAD)).unwrap();
    let line = text
        .lines()
        .find(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["corrupted"] == false && v["grammar"].as_str().unwrap().ends_with(spec_end)
        })
        .unwrap();
    let parsed = parse_canvas_line(line).unwrap();
    let spec = parsed.grammar.unwrap();
    let mut text_checker = Checker::from_spec(&spec).unwrap();
    let document = text_checker.complete(&parsed.canvas).unwrap().unwrap();
    let document = String::from_utf8(document).unwrap();
    let eos = vocab.eos_ids().next().unwrap();
    let mut ids: Vec<TokenId> = tok.encode(document, false).unwrap().get_ids().to_vec();
    let text_len = ids.len().min(LEN);
    ids.resize(LEN, eos);
    let start = (text_len / 2).saturating_sub(BLOCK / 2);
    let mut cells: Vec<Option<TokenId>> = ids.into_iter().map(Some).collect();
    match scenario {
        "semi_ar" => cells[start..].fill(None),
        _ => cells[start..start + BLOCK].fill(None),
    }
    let canvas = TokenCanvas::new(cells);
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
    // Two passes: the first fills the checker's caches (the paths of tokens from each entry
    // set), the second is what a sampler sees on its next step over the same neighbourhoods.
    for pass in ["cold", "warm"] {
        let t0 = Instant::now();
        for &o in &offsets {
            let p = start + o;
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
