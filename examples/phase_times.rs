//! Where a JSON Schema checker's build goes, phase by phase (issue 18's compile time):
//!
//! ```sh
//! cargo run --release --example phase_times --features internals -- SCHEMA.json
//! cargo run --release --example phase_times --features internals -- CASES.jsonl
//! ```
//!
//! For one schema file (a maskbench file's `schema` member is used when it has one): the
//! schema's compilation, each normalization pass ([`lacuna::grammar::pass_times`]), the
//! lexer and the automaton of a canvas that is one hole, each the minimum and median of `REPS`
//! runs (30 by default); `ONLY=compile` runs the compilation alone, `ONLY=normalize` the
//! normalization alone (for a profiler); `ANY_ORDER=n` compiles with objects of up to `n`
//! declared properties in any order (the default 8), and `SCHEMA_ORDER=1` larger ones in
//! schema order as for generation (by default: any order, a name may repeat);
//! `ONLY=build` times compilation and [`Checker::new`](lacuna::checker::Checker::new)
//! together, as a user waits for them (with a cases file: `name build`, the minimum of 5).
//! [`Checker::new`](lacuna::checker::Checker::new) runs the normalization on one thread and
//! the lexer on another, so the build's critical path is the compilation, then the longer of
//! the two; the automaton is what the first check of a canvas with a hole builds (the lexer's
//! thread starts on it while the normalization runs).
//!
//! For a maskbench cases file (`eval/maskbench.py` writes one): one line per compiled schema,
//! `name compile normalization lexer automaton`, in microseconds, the minimum of 5 runs each.
use std::time::{Duration, Instant};

use lacuna::canvas::HoleyText;
use lacuna::checker::Checker;
use lacuna::grammar::schema::{compile, SchemaOptions};
use lacuna::grammar::NormalGrammar;
use lacuna::internals::{HoleyLexer, LexLimits};
use serde_json::Value;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: phase_times SCHEMA.json | CASES.jsonl");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("cannot read {path}: {e}");
        std::process::exit(2);
    });
    if path.ends_with(".jsonl") {
        per_case(&text);
    } else {
        let mut value: Value = serde_json::from_str(&text).expect("a JSON schema");
        if let Some(s) = value.get("schema") {
            value = s.clone();
        }
        by_phase(&value);
    }
}

fn by_phase(schema: &Value) {
    let reps: usize = std::env::var("REPS").map_or(30, |v| v.parse().expect("REPS is a number"));
    let only = std::env::var("ONLY").unwrap_or_default();
    // `ONLY=compile` repeats the compilation alone, for a profiler.
    let only_compile = only == "compile";
    // `ONLY=build` repeats what the checker's user waits for: compilation and `Checker::new`.
    if only == "build" {
        let mut times: Vec<Duration> = (0..reps).map(|_| build_time(schema)).collect();
        times.sort();
        let (min, median) = (times[0].as_micros(), times[reps / 2].as_micros());
        println!("           build  min {min:6} µs  median {median:6} µs");
        return;
    }
    // `ONLY=normalize` compiles once and repeats the normalization alone.
    if only == "normalize" {
        let g = compile(schema, &opts())
            .expect("a schema that compiles")
            .grammar;
        let mut best = Duration::MAX;
        for _ in 0..reps {
            let t = Instant::now();
            drop(NormalGrammar::from_grammar(&g));
            best = best.min(t.elapsed());
        }
        println!("   normalization  min {:6} µs", best.as_micros());
        return;
    }
    let mut phases: Vec<(&'static str, Vec<Duration>)> = vec![];
    let mut record = |i: usize, name: &'static str, d: Duration| {
        if phases.len() <= i {
            phases.push((name, vec![]));
        }
        phases[i].1.push(d);
    };
    for _ in 0..reps {
        let t = Instant::now();
        let g = compile(schema, &opts())
            .expect("a schema that compiles")
            .grammar;
        record(0, "compile", t.elapsed());
        if only_compile {
            continue;
        }
        let passes = lacuna::grammar::pass_times(&g);
        let n = passes.len();
        for (i, (name, d)) in passes.into_iter().enumerate() {
            record(i + 1, name, d);
        }
        let t = Instant::now();
        let mut lexer = HoleyLexer::new(&g, LexLimits::default()).expect("a lexer");
        record(n + 1, "lexer", t.elapsed());
        let t = Instant::now();
        let _ = lexer.automaton(&HoleyText::one_hole());
        record(n + 2, "automaton", t.elapsed());
    }
    if only_compile {
        phases.truncate(1);
    }
    let last = phases.len().saturating_sub(2);
    let (mut normalization_min, mut normalization_median) = (0, 0);
    for (i, (name, mut d)) in phases.into_iter().enumerate() {
        d.sort();
        let (min, median) = (d[0].as_micros(), d[d.len() / 2].as_micros());
        if (1..last).contains(&i) {
            normalization_min += min;
            normalization_median += median;
        }
        println!("{name:>16}  min {min:6} µs  median {median:6} µs");
    }
    if !only_compile {
        println!(
            "   normalization  min {normalization_min:6} µs  median {normalization_median:6} µs"
        );
    }
}

/// Compilation and `Checker::new`, as `eval/maskbench.rs` times a build.
fn build_time(schema: &Value) -> Duration {
    let t = Instant::now();
    let g = compile(schema, &opts())
        .expect("a schema that compiles")
        .grammar;
    let checker = Checker::new(g).expect("a checker");
    let elapsed = t.elapsed();
    drop(checker);
    elapsed
}

fn per_case(text: &str) {
    let only_build = std::env::var("ONLY").is_ok_and(|o| o == "build");
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).expect("a JSON line");
        let schema = &case["schema"];
        if only_build {
            if compile(schema, &opts()).is_ok_and(|c| Checker::new(c.grammar).is_ok()) {
                let best = (0..5).map(|_| build_time(schema)).min().expect("five runs");
                let name = case["name"].as_str().unwrap_or("?");
                println!("{name} {}", best.as_micros());
            }
            continue;
        }
        let Ok(compiled) = compile(schema, &opts()) else {
            continue;
        };
        let g = compiled.grammar;
        let mut best = [u128::MAX; 4];
        for _ in 0..5 {
            let t = Instant::now();
            let _ = compile(schema, &opts());
            best[0] = best[0].min(t.elapsed().as_micros());
            let t = Instant::now();
            let _ = NormalGrammar::from_grammar(&g);
            best[1] = best[1].min(t.elapsed().as_micros());
            let t = Instant::now();
            let Ok(mut lexer) = HoleyLexer::new(&g, LexLimits::default()) else {
                break;
            };
            best[2] = best[2].min(t.elapsed().as_micros());
            let t = Instant::now();
            let _ = lexer.automaton(&HoleyText::one_hole());
            best[3] = best[3].min(t.elapsed().as_micros());
        }
        let name = case["name"].as_str().unwrap_or("?");
        println!("{name} {} {} {} {}", best[0], best[1], best[2], best[3]);
    }
}

/// The compiler's options: the defaults, but `ANY_ORDER=n` takes members in any order in
/// objects of up to `n` declared properties, and `SCHEMA_ORDER=1` larger objects in schema
/// order, to measure what each encoding costs.
fn opts() -> SchemaOptions {
    let mut o = SchemaOptions {
        large_objects_in_schema_order: std::env::var_os("SCHEMA_ORDER").is_some(),
        ..SchemaOptions::default()
    };
    if let Ok(v) = std::env::var("ANY_ORDER") {
        o.any_order_up_to = v.parse().expect("ANY_ORDER is a number");
    }
    o
}
