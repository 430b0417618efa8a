//! Core benchmarks: loading and normalizing the shipped grammars, and the emptiness search on
//! lexeme automata of 10–200 states built from real JSON documents (JSONSchemaBench instances).
//!
//! The automata mimic what the checker builds for a diffusion canvas: a chain of lexemes for the
//! filled text, and hole states that loop on every lexeme where positions are still masked.
//!
//! `lexicon/…`: the lexer's DFA built by the lexicon's own subset construction and by
//! regex-automata's, side by side.
//!
//! `counted_strings/…`: a JSON string of at most N characters written out as a counted
//! repetition (`"UNIT{0,N}"`) against the lexer's counting (`Pattern::JsonString`): building
//! the checker, and checking a canvas whose hole is inside the string.
//!
//! `decide/…`: the checks' search (`checks`: bottom-up, then with top-down prediction, then
//! bottom-up again), prediction alone and the plain bottom-up search, on the same automata: the JSON ones above and JsonSchemaStore's `detekt-1.22.0.json` schema
//! (24,708 nonterminals, most of them objects whose members come in any order) on its
//! instances, whole and with their middle third a hole.

use std::io::Read;

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use lacuna::canvas::HoleyText;
use lacuna::checker::Checker;
use lacuna::grammar::schema::{compile, SchemaOptions};
use lacuna::grammar::{
    lark, spec, Grammar, GrammarBuilder, NormalGrammar, Pattern, Symbol, TerminalId,
};
use lacuna::internals::{
    Edge, HoleyLexer, LexLimits, LexemeDfa, Lexicon, Searcher, Verdict, DEFAULT_BUDGET,
};

/// The lexer's DFA: the lexicon's own subset construction against regex-automata's dense
/// determinizer on the same NFA's patterns, for the shipped grammars and two JSON Schemas (a
/// BFCL function call of a dozen terminals, JsonSchemaStore's `bower.json` of 41).
fn lexicon_benches(c: &mut Criterion) {
    let mut grammars: Vec<(String, Grammar)> = spec::SHIPPED
        .iter()
        .map(|&(name, _)| (name.to_string(), spec::load(name).unwrap()))
        .collect();
    for (name, schema) in [
        ("schema_bfcl", BFCL_SCHEMA),
        ("schema_bower", include_str!("data/bower.schema.json")),
    ] {
        let value: serde_json::Value = serde_json::from_str(schema).unwrap();
        let compiled = compile(&value, &SchemaOptions::default()).unwrap();
        grammars.push((name.to_string(), compiled.grammar));
    }
    let mut group = c.benchmark_group("lexicon");
    for (name, g) in &grammars {
        group.bench_with_input(BenchmarkId::new("lacuna", name), g, |b, g| {
            b.iter(|| Lexicon::new(black_box(g)).unwrap())
        });
        group.bench_with_input(BenchmarkId::new("regex_automata", name), g, |b, g| {
            b.iter(|| Lexicon::new_with_regex_automata(black_box(g)))
        });
    }
    group.finish();
}

/// `{"a": S, "b": ANY}` in JSON's lexing, where S is a string of at most `max` characters,
/// counted or unrolled into a regex.
fn bounded_string_grammar(max: u32, counted: bool) -> Grammar {
    let mut b = GrammarBuilder::new();
    let ws = b.terminal("WS", Pattern::Regex("[ \\t\\n\\r]+".into()), 0);
    b.ignore(ws);
    let counted_string = Pattern::JsonString {
        min: 0,
        max: Some(max),
        regex: None,
    };
    let bounded = if counted {
        counted_string
    } else {
        Pattern::Regex(counted_string.to_regex())
    };
    let s = b.terminal("S", bounded, 0);
    let any = b.terminal(
        "ANY",
        Pattern::Regex(r#""([^"\\\x00-\x1f]|\\.)*""#.into()),
        0,
    );
    let lit =
        |b: &mut GrammarBuilder, t: &str| Symbol::T(b.terminal(t, Pattern::Literal(t.into()), 0));
    let (open, close, comma, colon) = (
        lit(&mut b, "{"),
        lit(&mut b, "}"),
        lit(&mut b, ","),
        lit(&mut b, ":"),
    );
    let (ka, kb) = (lit(&mut b, "\"a\""), lit(&mut b, "\"b\""));
    let start = b.nonterminal("start");
    b.rule(
        start,
        vec![
            open,
            ka,
            colon,
            Symbol::T(s),
            comma,
            kb,
            colon,
            Symbol::T(any),
            close,
        ],
    );
    b.build(start).unwrap()
}

fn counted_strings_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("counted_strings");
    group.sample_size(20);
    let canvas = HoleyText {
        chunks: vec![
            b"{\"a\": \"xxxx".to_vec(),
            b"yyyy\", \"b\": \"z\"}".to_vec(),
        ],
    };
    for max in [64, 256, 1024] {
        for (name, counted) in [("unrolled", false), ("counted", true)] {
            let g = bounded_string_grammar(max, counted);
            group.bench_with_input(
                BenchmarkId::new(format!("build_{name}"), max),
                &g,
                |b, g| b.iter(|| Checker::new(black_box(g.clone())).unwrap()),
            );
            let mut checker = Checker::new(g.clone()).unwrap();
            assert!(
                checker.check_text(&canvas).verdict == lacuna::checker::CheckVerdict::Completable
            );
            group.bench_function(
                BenchmarkId::new(format!("hole_in_string_{name}"), max),
                |b| {
                    b.iter(|| {
                        checker.forget_chunks();
                        checker.check_text(black_box(&canvas))
                    })
                },
            );
        }
    }
    group.finish();
}

/// MaskBench's `BFCL_simple_44.json`.
const BFCL_SCHEMA: &str = r#"{"type": "object", "properties": {"calculate_electric_field_strength": {"type": "object", "properties": {"charge": {"type": "number"}, "distance": {"type": "integer"}, "medium": {"type": "string"}}, "required": ["charge", "distance"], "additionalProperties": false}}, "required": ["calculate_electric_field_strength"], "additionalProperties": false}"#;

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

/// The three searches on one automaton, under the checker's budget; they must agree.
fn decide_three_ways(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    n: &NormalGrammar,
    dfa: &LexemeDfa,
) {
    let mut checks = Searcher::new();
    let mut predicting = Searcher::new();
    let mut bottom_up = Searcher::without_prediction();
    let u = checks.decide(n, dfa, DEFAULT_BUDGET);
    let v = predicting.decide_predicting(n, dfa, DEFAULT_BUDGET);
    let w = bottom_up.decide(n, dfa, DEFAULT_BUDGET);
    eprintln!(
        "{name}: checks' tries {u:?}, work {}; predicted {v:?}, work {}; bottom-up {w:?}, work {}",
        checks.stats().work,
        predicting.stats().work,
        bottom_up.stats().work
    );
    for (x, y) in [(u, v), (u, w), (v, w)] {
        let known = x != Verdict::Unknown && y != Verdict::Unknown;
        assert!(!known || x == y, "the searches disagree on {name}");
    }
    group.bench_with_input(BenchmarkId::new("checks", name), dfa, |b, dfa| {
        b.iter(|| checks.decide(n, black_box(dfa), DEFAULT_BUDGET))
    });
    group.bench_with_input(BenchmarkId::new("predicted", name), dfa, |b, dfa| {
        b.iter(|| predicting.decide_predicting(n, black_box(dfa), DEFAULT_BUDGET))
    });
    group.bench_with_input(BenchmarkId::new("bottom_up", name), dfa, |b, dfa| {
        b.iter(|| bottom_up.decide(n, black_box(dfa), DEFAULT_BUDGET))
    });
}

fn decide_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("decide");
    group.sample_size(10);
    let g = spec::load("json").unwrap();
    let n = NormalGrammar::from_grammar(&g);
    let all = json_lexemes(&g, include_str!("data/jme_documents.json"));
    let alphabet: Vec<TerminalId> = (0..g.terminals().len() as u32)
        .map(TerminalId)
        .filter(|t| !g.ignored().contains(t))
        .collect();
    for states in [50usize, 200] {
        let k = states - 1;
        let dfa = canvas_dfa(&all[..k], &[k / 4, k / 2, 3 * k / 4, k], &alphabet);
        decide_three_ways(&mut group, &format!("json_four_holes_{states}"), &n, &dfa);
    }
    // JsonSchemaStore's detekt schema and its MaskBench instances.
    let mut text = String::new();
    flate2::read::GzDecoder::new(&include_bytes!("../tests/data/maskbench_more.jsonl.gz")[..])
        .read_to_string(&mut text)
        .unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("detekt-1.22.0.json"))
        .unwrap();
    let entry: serde_json::Value = serde_json::from_str(line).unwrap();
    let content: serde_json::Value =
        serde_json::from_str(entry["content"].as_str().unwrap()).unwrap();
    let g = compile(&content["schema"], &SchemaOptions::default())
        .unwrap()
        .grammar;
    let n = NormalGrammar::from_grammar(&g);
    let mut lexer = HoleyLexer::new(&g, LexLimits::default()).unwrap();
    for (i, test) in content["tests"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .take(2)
    {
        let text = serde_json::to_string(&test["data"]).unwrap().into_bytes();
        let third = text.len() / 3;
        for (kind, holey) in [
            ("whole", HoleyText::solid(&text)),
            (
                "middle_hole",
                HoleyText {
                    chunks: vec![text[..third].to_vec(), text[2 * third..].to_vec()],
                },
            ),
        ] {
            let dfa = lexer.automaton(&holey).unwrap();
            decide_three_ways(&mut group, &format!("detekt_{i}_{kind}"), &n, &dfa);
        }
    }
    group.finish();
}

criterion_group!(
    benches,
    lexicon_benches,
    counted_strings_benches,
    grammar_benches,
    emptiness_benches,
    decide_benches
);
criterion_main!(benches);
