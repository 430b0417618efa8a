//! Times the JSON Schema compiler and the checker construction on schema files:
//! `cargo run --release --example schema_compile -- FILE...` (a maskbench file's `schema`
//! member is used when the file has one). Each is the mean of 20 runs (`REPS=N` in the
//! environment for another count: `REPS=1` to time one large schema).
use std::time::Instant;

use lacuna::checker::Checker;
use lacuna::grammar::schema::{compile, SchemaOptions};
use lacuna::grammar::GrammarSize;
use lacuna::grammar::NormalGrammar;

fn main() {
    let lenient = std::env::args().any(|a| a == "--lenient");
    for path in std::env::args().skip(1).filter(|a| a != "--lenient") {
        let text = std::fs::read_to_string(&path).unwrap();
        let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
        if let Some(s) = value.get("schema") {
            value = s.clone();
        }
        let reps: usize =
            std::env::var("REPS").map_or(20, |v| v.parse().expect("REPS is a number"));
        let t = Instant::now();
        let mut compiled = None;
        for _ in 0..reps {
            compiled = Some(compile(&value, &SchemaOptions::lenient(lenient)));
        }
        let compile_us = t.elapsed().as_micros() as f64 / reps as f64;
        match compiled.unwrap() {
            Err(e) => println!("{path}: error {e}"),
            Ok(c) => {
                let size = GrammarSize::of_grammar(&c.grammar);
                let nsize = GrammarSize::of_normal(&NormalGrammar::from_grammar(&c.grammar));
                let t = Instant::now();
                for _ in 0..reps {
                    Checker::new(c.grammar.clone()).unwrap();
                }
                let checker_us = t.elapsed().as_micros() as f64 / reps as f64;
                println!(
                    "{path}: compile {compile_us:.0} us, checker {checker_us:.0} us, raw {} nt {} rules {} terminals, normalized {} nt {} rules, warnings {}",
                    size.nonterminals, size.productions, size.terminals, nsize.nonterminals, nsize.productions, c.warnings.len()
                );
            }
        }
    }
}
