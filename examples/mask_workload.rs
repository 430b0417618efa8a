//! Valid-token masks on the shared workload over the 151k-token Qwen vocabulary: the time of
//! one position's mask by family, and (with `--verify N`) agreement with one check per id on
//! N positions.
//!
//! `cargo run --release --example mask_workload -- [--family F] [--limit N] [--verify N]`

use std::collections::HashMap;
use std::path::Path;

use lacuna::checker::{CheckVerdict, Checker};

#[path = "../tests/common/token_workload.rs"]
mod token_workload;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let family = opt("--family");
    let limit: usize = opt("--limit").map_or(usize::MAX, |s| s.parse().unwrap());
    let verify: usize = opt("--verify").map_or(0, |s| s.parse().unwrap());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let t0 = std::time::Instant::now();
    let (vocab, tok) = token_workload::qwen(root);
    eprintln!("vocabulary: {} ids in {:?}", vocab.len(), t0.elapsed());
    let cases = token_workload::workload(root, &vocab, &tok);
    let mut checkers: HashMap<String, Checker> = HashMap::new();
    let mut times: HashMap<String, Vec<u64>> = HashMap::new();
    let mut verified = 0;
    let mut empty_on_completable = 0;
    for case in cases
        .iter()
        .filter(|c| family.as_deref().is_none_or(|f| f == c.family))
        .take(limit)
    {
        let checker = checkers.entry(case.spec.clone()).or_insert_with(|| {
            let t = std::time::Instant::now();
            let g = lacuna::grammar::spec::load(&case.spec).unwrap();
            let c = Checker::with_vocabulary(g, vocab.clone()).unwrap();
            eprintln!("checker {} in {:?}", case.spec, t.elapsed());
            c
        });
        let verdict = checker.check_tokens(&case.canvas).unwrap().verdict;
        for p in case.canvas.masked_positions() {
            let a = checker.allowed(&case.canvas, p).unwrap();
            times.entry(case.family.clone()).or_default().push(a.micros);
            if verdict == CheckVerdict::Completable && a.mask.is_empty() {
                empty_on_completable += 1;
                eprintln!("{}: empty mask at {p}", case.id);
            }
            println!(
                "{} {} pos {p} count {} effects {} checks {} unknown {} micros {} verdict {:?}",
                case.id,
                case.family,
                a.mask.count(),
                a.effects,
                a.checks,
                a.unknown,
                a.micros,
                verdict
            );
            if verified < verify {
                verified += 1;
                let mut bad = 0;
                for id in 0..vocab.len() as u32 {
                    let one = case.canvas.with(p, id);
                    let ok =
                        checker.check_tokens(&one).unwrap().verdict == CheckVerdict::Completable;
                    if ok != a.mask.contains(id) {
                        bad += 1;
                    }
                }
                println!("  verified {}: {bad} disagreements", case.id);
            }
        }
    }
    for (f, mut t) in times {
        t.sort_unstable();
        let n = t.len();
        println!(
            "{f}: {n} masks, median {} us, p90 {} us, max {} us",
            t[n / 2],
            t[n * 9 / 10],
            t[n - 1]
        );
    }
    println!("empty masks on completable canvases: {empty_on_completable}");
}
