//! The checker on the shared workload: 432 real canvases (JSON Schema extraction, JSON, SMILES,
//! C++; 1, 2, 3 and 8 holes; a quarter corrupted). One benchmark per family and hole count; an
//! iteration checks every canvas of the group once with a warm checker (caches filled, as in a
//! sampler's loop), so time per check is the iteration time divided by the group size, printed
//! before the group runs.

use criterion::{criterion_group, criterion_main, Criterion};
use hashbrown::HashMap;
use lacuna::canvas::{parse_canvas_line, Canvas};
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

criterion_group!(benches, workload);
criterion_main!(benches);
