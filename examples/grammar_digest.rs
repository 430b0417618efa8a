//! One line per schema of a maskbench cases file: a digest of its compiled grammar, strict and
//! lenient (`err:` and the message where it does not compile), to show that a change to the
//! compiler leaves every grammar as it was (or to list the schemas whose grammar it changed):
//!
//! ```sh
//! cargo run --release --example grammar_digest -- target/maskbench/cases.jsonl > before.txt
//! # change the compiler, run again into after.txt, then: diff before.txt after.txt
//! ```
//!
//! `DUMP=NAME` prints that schema's strict grammar on standard error.
use std::hash::{DefaultHasher, Hash, Hasher};

use lacuna::grammar::schema::{compile, SchemaOptions};
use serde_json::Value;

fn main() {
    let path = std::env::args().nth(1).expect("CASES.jsonl");
    let text = std::fs::read_to_string(path).expect("readable");
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).expect("a JSON line");
        let name = case["name"].as_str().unwrap_or("?");
        let mut out = vec![];
        for lenient in [false, true] {
            let options = SchemaOptions {
                lenient,
                ..SchemaOptions::default()
            };
            out.push(match compile(&case["schema"], &options) {
                Ok(c) => {
                    if std::env::var("DUMP").is_ok_and(|d| d == name) && !lenient {
                        eprintln!("{}", c.grammar);
                    }
                    let mut h = DefaultHasher::new();
                    c.grammar.to_string().hash(&mut h);
                    format!("{:016x}/{}", h.finish(), c.warnings.len())
                }
                Err(e) => format!("err:{e}"),
            });
        }
        println!("{name}\t{}", out.join("\t"));
    }
}
