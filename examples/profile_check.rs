//! Per-canvas timing of the checker, split into lexing (text with holes → lexeme automaton)
//! and the emptiness search, to see where a check's time goes. `warm` is the fastest of REPS
//! checks with a warm checker (the least disturbed by other work on the machine); `lex` and
//! `search` are means.
//!
//! `cargo run --release --example profile_check -- CANVASES.jsonl [REPS]`
//!
//! `PROFILE_BUDGET=N` sets the search's work budget for `search` (default: the checker's);
//! `PROFILE_BOTTOM_UP=1` times the search without top-down prediction (the checker's own
//! verdict, `cold` and `warm` keep it).

use std::time::Instant;

use lacuna::canvas::parse_canvas_line;
use lacuna::checker::Checker;
use lacuna::grammar::{spec, NormalGrammar};
use lacuna::internals::{HoleyLexer, LexLimits};
use lacuna::internals::{Searcher, DEFAULT_BUDGET};

struct Parts {
    checker: Checker,
    lexer: HoleyLexer,
    normal: NormalGrammar,
    searcher: Searcher,
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: profile_check FILE [REPS]");
    let reps: u32 = std::env::args()
        .nth(2)
        .map(|s| s.parse().expect("REPS is a number"))
        .unwrap_or(20);
    let budget: u64 = std::env::var("PROFILE_BUDGET").map_or(DEFAULT_BUDGET, |s| {
        s.parse().expect("PROFILE_BUDGET is a number")
    });
    let text = std::fs::read_to_string(path).expect("readable canvas file");
    let mut parts = std::collections::HashMap::new();
    for line in text.lines() {
        let p = parse_canvas_line(line).expect("a canvas line");
        let spec_text = p.grammar.clone().expect("a grammar on every line");
        let pt = parts.entry(spec_text.clone()).or_insert_with(|| {
            let g = spec::load(&spec_text).expect("grammar loads");
            Parts {
                checker: Checker::new(g.clone()).unwrap(),
                lexer: HoleyLexer::new(&g, LexLimits::default()).unwrap(),
                normal: NormalGrammar::from_grammar(&g),
                searcher: if std::env::var_os("PROFILE_BOTTOM_UP").is_some() {
                    Searcher::without_prediction()
                } else {
                    Searcher::new()
                },
            }
        });
        let first = pt.checker.check(&p.canvas);
        let holey = p.canvas.holey_text();
        // The fastest of the repetitions: the least disturbed by other work on the machine.
        let mut warm = f64::MAX;
        for _ in 0..reps {
            let t = Instant::now();
            pt.checker.check(&p.canvas);
            warm = warm.min(t.elapsed().as_secs_f64() * 1e6);
        }
        let t = Instant::now();
        let mut dfa = None;
        for _ in 0..reps {
            dfa = pt.lexer.automaton(&holey).ok();
        }
        let lex = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
        let mut search = 0.0;
        let mut verdict = None;
        if let Some(dfa) = dfa {
            let t = Instant::now();
            for _ in 0..reps {
                verdict = Some(pt.searcher.decide(&pt.normal, &dfa, budget));
            }
            search = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
        }
        // `none`: the canvas could not be lexed, or REPS is 0.
        let verdict = verdict.map_or_else(|| "none".to_string(), |v| format!("{v:?}"));
        println!(
            "{} {:?} search {verdict} cold {}us warm {:.0}us (lex {:.0}us, search {:.0}us) states {} items {} work {}",
            p.id,
            first.verdict,
            first.micros,
            warm,
            lex,
            search,
            first.dfa_states,
            first.items,
            pt.searcher.stats().work
        );
    }
}
