//! `lacuna grammar stats SPEC` and `lacuna grammar show SPEC`.

use std::time::Instant;

use clap::Subcommand;
use serde::Serialize;

use crate::grammar::normalize::GrammarSize;
use crate::grammar::schema::SchemaOptions;
use crate::grammar::{spec, Grammar, GrammarError, NormalGrammar};

#[derive(Subcommand, Debug)]
pub enum GrammarCommand {
    /// Print the grammar's size raw and in C2F+ε, and how long loading and normalizing took.
    Stats {
        /// json, smiles, cpp, a .lark file, or schema:PATH (suffix +fence allowed).
        spec: String,
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
        /// Compile a JSON Schema leniently (unenforceable keywords become warnings on stderr).
        #[arg(long)]
        lenient: bool,
    },
    /// Print the grammar's rules, raw or normalized.
    Show {
        spec: String,
        /// Print the C2F+ε form instead of the rules as written.
        #[arg(long)]
        normalized: bool,
        /// Compile a JSON Schema leniently (unenforceable keywords become warnings on stderr).
        #[arg(long)]
        lenient: bool,
    },
}

#[derive(Serialize)]
struct Stats<'a> {
    spec: &'a str,
    raw: GrammarSize,
    normalized: GrammarSize,
    load_micros: u128,
    normalize_micros: u128,
}

pub fn run(cmd: GrammarCommand) -> Result<(), GrammarError> {
    match cmd {
        GrammarCommand::Stats {
            spec,
            json,
            lenient,
        } => stats(&spec, json, lenient),
        GrammarCommand::Show {
            spec,
            normalized,
            lenient,
        } => show(&spec, normalized, lenient),
    }
}

/// Loads a spec, printing the schema compiler's warnings (lenient mode) on stderr.
fn load(spec_text: &str, lenient: bool) -> Result<Grammar, GrammarError> {
    let (grammar, warnings) = spec::load_with(spec_text, &SchemaOptions::lenient(lenient))?;
    for w in warnings {
        eprintln!("lacuna: warning: {spec_text}: {w}");
    }
    Ok(grammar)
}

fn stats(spec_text: &str, json: bool, lenient: bool) -> Result<(), GrammarError> {
    let t0 = Instant::now();
    let grammar = load(spec_text, lenient)?;
    let t1 = Instant::now();
    let normal = NormalGrammar::from_grammar(&grammar);
    let t2 = Instant::now();
    let stats = Stats {
        spec: spec_text,
        raw: GrammarSize::of_grammar(&grammar),
        normalized: GrammarSize::of_normal(&normal),
        load_micros: (t1 - t0).as_micros(),
        normalize_micros: (t2 - t1).as_micros(),
    };
    if json {
        println!(
            "{}",
            serde_json::to_string(&stats).expect("stats serialize")
        );
        return Ok(());
    }
    println!("grammar {spec_text}");
    println!("{:<14}{:>10}{:>12}", "", "raw", "normalized");
    let rows = [
        (
            "nonterminals",
            stats.raw.nonterminals,
            stats.normalized.nonterminals,
        ),
        (
            "productions",
            stats.raw.productions,
            stats.normalized.productions,
        ),
        ("terminals", stats.raw.terminals, stats.normalized.terminals),
        (
            "rhs symbols",
            stats.raw.rhs_symbols,
            stats.normalized.rhs_symbols,
        ),
    ];
    for (name, raw, norm) in rows {
        println!("{name:<14}{raw:>10}{norm:>12}");
    }
    println!(
        "load {} µs, normalize {} µs",
        stats.load_micros, stats.normalize_micros
    );
    Ok(())
}

fn show(spec_text: &str, normalized: bool, lenient: bool) -> Result<(), GrammarError> {
    let grammar = load(spec_text, lenient)?;
    if !normalized {
        print!("{grammar}");
        return Ok(());
    }
    let n = NormalGrammar::from_grammar(&grammar);
    let name = |t: crate::grammar::TerminalId| grammar.terminal(t).name.as_str();
    for &a in n.epsilon_rules() {
        println!("{}: ε", n.name(a));
    }
    for &(a, t) in n.terminal_rules() {
        println!("{}: {}", n.name(a), name(t));
    }
    for &(a, b) in n.unit_rules() {
        println!("{}: {}", n.name(a), n.name(b));
    }
    for &(a, b, c) in n.binary_rules() {
        println!("{}: {} {}", n.name(a), n.name(b), n.name(c));
    }
    Ok(())
}
