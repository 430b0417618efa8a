//! Check latency on canvas JSON lines, per hole count (the `holes` field):
//! `cargo run --release --example schema_workload -- FILE [REPS] [--family json]`.
//! Each canvas is checked REPS times after a first (cold) check; per canvas the median and the
//! minimum of the warm times are kept (the minimum is robust to a busy machine). Prints, per
//! hole count, median / p90 / p99 / max over canvases, and verifies that every canvas marked
//! `"corrupted": false` is judged completable.
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use lacuna::canvas::parse_canvas_line;
use lacuna::checker::{CheckVerdict, Checker};

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let family = args
        .iter()
        .position(|a| a == "--family")
        .map(|i| args[i + 1].clone());
    let text = std::fs::read_to_string(path).unwrap();
    let mut checkers: HashMap<String, Checker> = HashMap::new();
    // Per hole count: warm medians, warm minimums, cold times (µs).
    type Times = (Vec<f64>, Vec<f64>, Vec<f64>);
    let mut by_holes: BTreeMap<u64, Times> = BTreeMap::new();
    let (mut uncorrupted, mut bad) = (0, vec![]);
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if family.as_ref().is_some_and(|f| v["family"] != f.as_str()) {
            continue;
        }
        let p = parse_canvas_line(line).unwrap();
        let spec = p.grammar.clone().unwrap();
        let ch = checkers
            .entry(spec.clone())
            .or_insert_with(|| Checker::from_spec(&spec).unwrap());
        let first = ch.check(&p.canvas);
        let mut times = vec![];
        for _ in 0..reps {
            let t = Instant::now();
            ch.check(&p.canvas);
            times.push(t.elapsed().as_secs_f64() * 1e6);
        }
        let min = times.iter().cloned().fold(f64::MAX, f64::min);
        let med = pct(&mut times, 0.5);
        let e = by_holes
            .entry(v["holes"].as_u64().unwrap_or(0))
            .or_default();
        e.0.push(med);
        e.1.push(min);
        e.2.push(first.micros as f64);
        if v["corrupted"] == false {
            uncorrupted += 1;
            if first.verdict != CheckVerdict::Completable {
                bad.push(v["id"].to_string());
            }
        }
    }
    println!("holes  n   warm median-of-medians / p90 / p99 / max (µs)   |  min-of-reps median / p90 / p99 / max  |  cold median / max");
    let mut all = (vec![], vec![]);
    for (h, (med, min, cold)) in &mut by_holes {
        all.0.extend(med.iter().cloned());
        all.1.extend(min.iter().cloned());
        println!(
            "{h:>5} {:>3}   {:>8.0} {:>8.0} {:>8.0} {:>8.0}   |  {:>8.0} {:>8.0} {:>8.0} {:>8.0}  |  {:>8.0} {:>8.0}",
            med.len(),
            pct(med, 0.5), pct(med, 0.9), pct(med, 0.99), pct(med, 1.0),
            pct(min, 0.5), pct(min, 0.9), pct(min, 0.99), pct(min, 1.0),
            pct(cold, 0.5), pct(cold, 1.0)
        );
    }
    println!(
        "  all {:>3}   {:>8.0} {:>8.0} {:>8.0} {:>8.0}   |  {:>8.0} {:>8.0} {:>8.0} {:>8.0}",
        all.0.len(),
        pct(&mut all.0, 0.5),
        pct(&mut all.0, 0.9),
        pct(&mut all.0, 0.99),
        pct(&mut all.0, 1.0),
        pct(&mut all.1, 0.5),
        pct(&mut all.1, 0.9),
        pct(&mut all.1, 0.99),
        pct(&mut all.1, 1.0)
    );
    println!("uncorrupted canvases: {uncorrupted}, not judged completable: {bad:?}");
}
