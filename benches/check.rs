//! The checker on the shared workload: 432 real canvases (JSON Schema extraction, JSON, SMILES,
//! C++; 1, 2, 3 and 8 holes; a quarter corrupted). One benchmark per family and hole count; an
//! iteration checks every canvas of the group once with a warm checker (caches filled, as in a
//! sampler's loop), so time per check is the iteration time divided by the group size, printed
//! before the group runs.
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

struct Group {
    spec: String,
    canvases: Vec<Canvas>,
}

fn load_workload() -> Vec<(String, Group)> {
    let text = include_str!("data/workload/canvases.jsonl");
    let mut groups: HashMap<String, Group> = HashMap::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let key = format!("{}_{}holes", v["family"].as_str().unwrap(), v["holes"]);
        let parsed = parse_canvas_line(line).unwrap();
        let spec = parsed.grammar.unwrap();
        let g = groups.entry(key).or_insert_with(|| Group {
            spec: spec.clone(),
            canvases: vec![],
        });
        if g.spec == spec {
            g.canvases.push(parsed.canvas);
        }
    }
    let mut out: Vec<_> = groups.into_iter().collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn workload(c: &mut Criterion) {
    let mut checkers: HashMap<String, Checker> = HashMap::new();
    let mut group = c.benchmark_group("check_workload");
    for (name, g) in load_workload() {
        let checker = match checkers.entry(g.spec.clone()) {
            hashbrown::hash_map::Entry::Occupied(o) => o.into_mut(),
            hashbrown::hash_map::Entry::Vacant(v) => match Checker::from_spec(&g.spec) {
                Ok(ch) => v.insert(ch),
                Err(e) => {
                    eprintln!("skipping {name}: {e}");
                    continue;
                }
            },
        };
        eprintln!(
            "{name}: {} canvases per iteration ({})",
            g.canvases.len(),
            g.spec
        );
        group.bench_function(&name, |b| {
            b.iter(|| {
                for canvas in &g.canvases {
                    criterion::black_box(checker.check(canvas));
                }
            })
        });
    }
    group.finish();
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Masks a filled position, or fills a masked one with a token from elsewhere in the canvas.
fn change_one_position(canvas: &Canvas, rng: &mut Rng) -> Canvas {
    let mut canvas = canvas.clone();
    let end = canvas
        .cells
        .iter()
        .position(|c| *c == Cell::Eos)
        .unwrap_or(canvas.cells.len());
    let tokens: Vec<Vec<u8>> = canvas.cells[..end]
        .iter()
        .filter_map(|c| match c {
            Cell::Token(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    if end > 0 {
        let i = rng.below(end);
        canvas.cells[i] = match &canvas.cells[i] {
            Cell::Mask if !tokens.is_empty() => {
                Cell::Token(tokens[rng.below(tokens.len())].clone())
            }
            _ => Cell::Mask,
        };
    }
    canvas
}

fn one_position_changes(c: &mut Criterion) {
    let mut group = c.benchmark_group("one_position_changes");
    let mut by_family: HashMap<&str, (String, Vec<Canvas>)> = HashMap::new();
    for (name, g) in load_workload() {
        let family = ["json", "smiles", "cpp"]
            .into_iter()
            .find(|f| name.starts_with(&format!("{f}_")));
        if let Some(f) = family {
            let e = by_family
                .entry(f)
                .or_insert_with(|| (g.spec.clone(), Vec::new()));
            if e.0 == g.spec {
                e.1.extend(g.canvases);
            }
        }
    }
    let mut families: Vec<_> = by_family.into_iter().collect();
    families.sort_by_key(|(f, _)| *f);
    for (family, (spec, canvases)) in families {
        let mut rng = Rng(0x5EED_0005);
        let mut steps = Vec::new();
        for start in canvases
            .iter()
            .step_by((canvases.len() / 12).max(1))
            .take(12)
        {
            let mut canvas = start.clone();
            for _ in 0..8 {
                canvas = change_one_position(&canvas, &mut rng);
                steps.push(canvas.clone());
            }
        }
        eprintln!(
            "{family}: {} changed canvases per iteration ({spec})",
            steps.len()
        );
        let mut checker = Checker::from_spec(&spec).unwrap();
        for canvas in &canvases {
            checker.check(canvas);
        }
        group.bench_function(family, |b| {
            // Each iteration forgets what the checker keeps by chunk text (its grammar's
            // configurations stay), so each step is checked for the first time, after the
            // step before it.
            b.iter_custom(|iters| {
                let mut total = std::time::Duration::ZERO;
                for _ in 0..iters {
                    checker.forget_chunks();
                    let t = std::time::Instant::now();
                    for canvas in &steps {
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
