//! The checker on the shared workload: 432 real canvases (JSON Schema extraction, JSON, SMILES,
//! C++; 1, 2, 3 and 8 holes; a quarter corrupted). One benchmark per family and hole count; an
//! iteration checks every canvas of the group once with warm checkers (one per grammar, caches
//! filled, as in a sampler's loop), so time per check is the iteration time divided by the
//! group size, printed before the group runs. Per-canvas medians and p99s:
//! `cargo run --release --example schema_workload -- benches/data/workload/canvases.jsonl`.
//!
//! `one_position_changes`: per family, walks from 12 canvases of 8 steps, each step masking a
//! position or filling a masked one with a token from elsewhere in the canvas (as a sampler
//! changes one position per step). An iteration checks every step of every walk in order, each
//! for the first time (the checker forgets its chunk caches between iterations): what carries
//! over from step to step is what the checker keeps by chunk text.

use criterion::{criterion_group, criterion_main, Criterion};
use hashbrown::HashMap;
use lacuna::canvas::{parse_canvas_line, Canvas, Cell};
use lacuna::checker::Checker;

#[path = "../tests/common/walks.rs"]
mod walks;
use walks::{change_one_position, Rng};

/// The workload's canvases by `{family}_{holes}holes`, each with its grammar spec.
type Groups = Vec<(String, Vec<(String, Canvas)>)>;

fn load_workload() -> Groups {
    let text = include_str!("data/workload/canvases.jsonl");
    let mut groups: HashMap<String, Vec<(String, Canvas)>> = HashMap::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let key = format!("{}_{}holes", v["family"].as_str().unwrap(), v["holes"]);
        let parsed = parse_canvas_line(line).unwrap();
        let spec = parsed.grammar.unwrap();
        groups.entry(key).or_default().push((spec, parsed.canvas));
    }
    let mut out: Vec<_> = groups.into_iter().collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// One checker per grammar spec, each warmed on its canvases.
fn checkers_for(canvases: &[(String, Canvas)]) -> HashMap<String, Checker> {
    let mut checkers: HashMap<String, Checker> = HashMap::new();
    for (spec, canvas) in canvases {
        checkers
            .entry(spec.clone())
            .or_insert_with(|| Checker::from_spec(spec).expect("workload grammars load"))
            .check(canvas);
    }
    checkers
}

fn workload(c: &mut Criterion) {
    let mut group = c.benchmark_group("check_workload");
    for (name, canvases) in load_workload() {
        let mut checkers = checkers_for(&canvases);
        eprintln!(
            "{name}: {} canvases per iteration, {} grammars",
            canvases.len(),
            checkers.len()
        );
        group.bench_function(&name, |b| {
            b.iter(|| {
                for (spec, canvas) in &canvases {
                    let checker = checkers.get_mut(spec).expect("a checker per spec");
                    criterion::black_box(checker.check(canvas));
                }
            })
        });
    }
    group.finish();
}

fn one_position_changes(c: &mut Criterion) {
    let mut group = c.benchmark_group("one_position_changes");
    let mut by_family: HashMap<String, Vec<(String, Canvas)>> = HashMap::new();
    for (name, canvases) in load_workload() {
        let family = name.split('_').next().unwrap_or_default().to_string();
        by_family.entry(family).or_default().extend(canvases);
    }
    let mut families: Vec<_> = by_family.into_iter().collect();
    families.sort_by(|a, b| a.0.cmp(&b.0));
    for (family, canvases) in families {
        let mut rng = Rng(0x5EED_0005);
        let mut steps = Vec::new();
        for (spec, start) in canvases
            .iter()
            .step_by((canvases.len() / 12).max(1))
            .take(12)
        {
            let mut canvas = start.clone();
            for _ in 0..8 {
                canvas = change_one_position(&canvas, &mut rng);
                steps.push((spec.clone(), canvas.clone()));
            }
        }
        let mut checkers = checkers_for(&canvases);
        eprintln!("{family}: {} changed canvases per iteration", steps.len());
        group.bench_function(&family, |b| {
            // Each iteration forgets what the checkers keep by chunk text (their grammars'
            // configurations stay), so each step is checked for the first time, after the
            // step before it.
            b.iter_custom(|iters| {
                let mut total = std::time::Duration::ZERO;
                for _ in 0..iters {
                    for checker in checkers.values_mut() {
                        checker.forget_chunks();
                    }
                    let t = std::time::Instant::now();
                    for (spec, canvas) in &steps {
                        let checker = checkers.get_mut(spec).expect("a checker per spec");
                        criterion::black_box(checker.check(canvas));
                    }
                    total += t.elapsed();
                }
                total
            })
        });
    }
    group.finish();
}

criterion_group!(benches, workload, one_position_changes);
criterion_main!(benches);
