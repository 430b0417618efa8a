//! Memory of one long-lived checker under a stream of distinct canvases: 10⁶ checks by default,
//! with the resident set size (from /proc/self/status) and the checker's cache sizes printed
//! every 10% of the run. JSON canvases are real JSONSchemaBench documents with 1–4 random
//! holes, a third with one byte changed; C++ canvases are HumanEval-X solutions cut the same
//! way.
//!
//! `cargo run --release --example long_running -- [json|cpp] [CHECKS]`

#[path = "../tests/corpus/mod.rs"]
mod corpus;

use std::time::Instant;

use corpus::{cut, Rng};
use lacuna::checker::{CheckVerdict, Checker};

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let spec = args.get(1).map_or("json", String::as_str);
    let checks: usize = args
        .get(2)
        .map_or(1_000_000, |s| s.parse().expect("CHECKS"));
    let texts: Vec<Vec<u8>> = match spec {
        "cpp" => corpus::humaneval_cpp()
            .into_iter()
            .map(|t| format!("{}{}", t.declaration, t.solution).into_bytes())
            .collect(),
        _ => corpus::jsonschemabench()
            .into_iter()
            .flat_map(|s| s.instances.into_iter().map(|i| i.text.into_bytes()))
            .filter(|t| !t.is_empty())
            .collect(),
    };
    let mut checker = Checker::from_spec(spec).expect("shipped grammar");
    let mut rng = Rng(11);
    let mut counts = [0usize; 3];
    let t0 = Instant::now();
    println!("start: rss {} KiB", rss_kib());
    for i in 0..checks {
        let mut text = texts[rng.below(texts.len())].clone();
        if rng.below(3) == 0 {
            let k = rng.below(text.len());
            text[k] = b"{}[],:\"0x ;()"[rng.below(13)];
        }
        let mut cuts: Vec<usize> = (0..2 * (1 + rng.below(4)))
            .map(|_| rng.below(text.len() + 1))
            .collect();
        cuts.sort_unstable();
        let verdict = checker.check_text(&cut(&text, &cuts)).verdict;
        counts[match verdict {
            CheckVerdict::Completable => 0,
            CheckVerdict::NotCompletable => 1,
            CheckVerdict::Unknown => 2,
        }] += 1;
        if (i + 1) % (checks / 10).max(1) == 0 {
            println!(
                "{:>8} checks, {:>6.1} s: rss {} KiB, {:?}, completable/not/unknown {:?}",
                i + 1,
                t0.elapsed().as_secs_f64(),
                rss_kib(),
                checker.cache_stats(),
                counts
            );
        }
    }
}
