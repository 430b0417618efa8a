//! Core benchmarks: loading and normalizing the shipped grammars, and the emptiness search on
//! lexeme automata of 10–200 states built from real JSON documents (JSONSchemaBench instances).
//!
//! The automata mimic what the checker builds for a diffusion canvas: a chain of lexemes for the
//! filled text, and hole states that loop on every lexeme where positions are still masked.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use lacuna::grammar::{lark, spec, Grammar, NormalGrammar, Pattern, TerminalId};
use lacuna::internals::{Edge, LexemeDfa, Searcher, Verdict, DEFAULT_BUDGET};

fn grammar_benches(c: &mut Criterion) {
    for &(name, text) in spec::SHIPPED {
        let origin = format!("grammars/{name}.lark");
        c.bench_function(&format!("grammar_parse/{name}"), |b| {
            b.iter(|| lark::parse(black_box(text), &origin).unwrap())
        });
        let g = lark::parse(text, &origin).unwrap();
        c.bench_function(&format!("normalize/{name}"), |b| {
            b.iter(|| NormalGrammar::from_grammar(black_box(&g)))
        });
    }
}

/// Lexes JSON text into the JSON grammar's terminal ids (whitespace skipped).
fn json_lexemes(g: &Grammar, text: &str) -> Vec<TerminalId> {
    let literal = |s: &str| {
        let i = g
            .terminals()
            .iter()
            .position(|t| t.pattern == Pattern::Literal(s.into()))
            .unwrap_or_else(|| panic!("no terminal for {s}"));
        TerminalId(i as u32)
    };
    let named = |s: &str| {
        g.terminal_by_name(s)
            .unwrap_or_else(|| panic!("no terminal {s}"))
    };
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b' ' | b'\n' | b'\t' | b'\r' => i += 1,
            b'{' | b'}' | b'[' | b']' | b':' | b',' => {
                out.push(literal(&text[i..i + 1]));
                i += 1;
            }
            b'"' => {
                i += 1;
                while bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                out.push(named("STRING"));
            }
            b't' | b'n' => {
                out.push(literal(&text[i..i + 4]));
                i += 4;
            }
            b'f' => {
                out.push(literal("false"));
                i += 5;
            }
            _ => {
                while i < bytes.len() && b"-+.eE0123456789".contains(&bytes[i]) {
                    i += 1;
                }
                out.push(named("NUMBER"));
            }
        }
    }
    out
}

/// A chain over `lexemes` where each index in `holes` is replaced by a state looping on every
/// terminal in `alphabet` (cost 1 per lexeme, as a stand-in for filler length).
fn canvas_dfa(lexemes: &[TerminalId], holes: &[usize], alphabet: &[TerminalId]) -> LexemeDfa {
    let mut edges = Vec::new();
    let mut s = 0u32;
    for (i, &t) in lexemes.iter().enumerate() {
        if holes.contains(&i) {
            for &a in alphabet {
                edges.push(Edge {
                    from: s,
                    terminal: a,
                    to: s,
                    cost: 1,
                });
            }
        } else {
            edges.push(Edge {
                from: s,
                terminal: t,
                to: s + 1,
                cost: 0,
            });
            s += 1;
        }
    }
    LexemeDfa::new(s as usize + 1, 0, &[s], edges).unwrap()
}

fn emptiness_benches(c: &mut Criterion) {
    let g = spec::load("json").unwrap();
    let n = NormalGrammar::from_grammar(&g);
    let docs = include_str!("data/jme_documents.json");
    let all = json_lexemes(&g, docs);
    let alphabet: Vec<TerminalId> = (0..g.terminals().len() as u32)
        .map(TerminalId)
        .filter(|t| !g.ignored().contains(t))
        .collect();
    let mut searcher = Searcher::new();
    let mut group = c.benchmark_group("emptiness_json");
    for states in [10usize, 25, 50, 100, 200] {
        // The first `states - 1` lexemes, then a trailing hole: a left-to-right canvas.
        let mut prefix = all[..states - 1].to_vec();
        prefix.push(all[0]);
        let dfa = canvas_dfa(&prefix, &[states - 1], &alphabet);
        assert_eq!(searcher.search(&n, &dfa, DEFAULT_BUDGET), Verdict::NonEmpty);
        group.bench_with_input(BenchmarkId::new("prefix_hole", states), &dfa, |b, dfa| {
            b.iter(|| searcher.search(&n, black_box(dfa), DEFAULT_BUDGET))
        });
        // Three holes inside and one at the end: a diffusion canvas.
        let k = states - 1;
        let holes = [k / 4, k / 2, 3 * k / 4, k];
        let dfa = canvas_dfa(&prefix, &holes, &alphabet);
        assert_eq!(searcher.search(&n, &dfa, DEFAULT_BUDGET), Verdict::NonEmpty);
        group.bench_with_input(BenchmarkId::new("four_holes", states), &dfa, |b, dfa| {
            b.iter(|| searcher.search(&n, black_box(dfa), DEFAULT_BUDGET))
        });
        // The same with a `,` turned into `:` early on: not completable, the search must
        // exhaust every item to prove it.
        let mut broken = prefix.clone();
        let comma = broken
            .iter()
            .position(|&t| g.terminal(t).pattern == Pattern::Literal(",".into()));
        if let Some(i) = comma.filter(|&i| i < k / 4) {
            let colon = (0..g.terminals().len() as u32)
                .map(TerminalId)
                .find(|&t| g.terminal(t).pattern == Pattern::Literal(":".into()))
                .unwrap();
            broken[i] = colon;
            let dfa = canvas_dfa(&broken, &holes, &alphabet);
            assert_eq!(searcher.search(&n, &dfa, DEFAULT_BUDGET), Verdict::Empty);
            group.bench_with_input(
                BenchmarkId::new("four_holes_broken", states),
                &dfa,
                |b, dfa| b.iter(|| searcher.search(&n, black_box(dfa), DEFAULT_BUDGET)),
            );
        }
    }
    group.finish();
}

criterion_group!(benches, grammar_benches, emptiness_benches);
criterion_main!(benches);
