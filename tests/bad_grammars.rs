//! Bad grammars get clear errors, never panics: from the library and from the command line.

use std::process::Command;

use lacuna::checker::Checker;
use lacuna::grammar::{lark, GrammarError};

fn err(src: &str) -> String {
    match lark::parse(src, "bad.lark") {
        Ok(g) => panic!("accepted:\n{g}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn grammar_errors_name_what_and_where() {
    // A start symbol that derives no word (left recursion with no way out).
    assert!(err("start: start \"a\"").contains("derives no word"));
    assert!(err("start: a\na: a").contains("derives no word"));
    // Undefined symbols, with their position.
    let e = err("start: item\n");
    assert!(e.contains("item") && e.contains("bad.lark:1:"), "{e}");
    let e = err("start: \"a\" NUM\n");
    assert!(e.contains("NUM"), "{e}");
    // Invalid regexes name the terminal.
    let e = err("start: A\nA: /a(/\n");
    assert!(e.contains("`A`"), "{e}");
    // Empty lexemes are refused.
    let e = err("start: A\nA: /a*/\n");
    assert!(e.contains("empty string"), "{e}");
    // Unsupported Lark features are refused by name.
    let e = err("%declare FOO\nstart: \"a\"\n");
    assert!(e.contains("unsupported") && e.contains("%declare"), "{e}");
    // Syntax errors name line and column.
    let e = err("start: \"a\"\nb \"c\"\n");
    assert!(e.contains("bad.lark:2:"), "{e}");
}

#[test]
fn grammars_with_unreachable_or_useless_parts_still_work() {
    // `junk` is unreachable and `dead` derives nothing: both are dropped, the rest works.
    let g = lark::parse(
        "start: \"a\" | \"b\" dead\ndead: dead \"c\"\njunk: \"d\"\n",
        "ok.lark",
    )
    .unwrap();
    let mut checker = Checker::new(g).unwrap();
    assert!(checker.accepts(b"a"));
    assert!(!checker.accepts(b"b"));
    assert!(!checker.accepts(b"d"));
}

#[test]
fn missing_grammar_files_are_reported() {
    let e = lacuna::grammar::spec::load("no/such/file.lark").unwrap_err();
    assert!(matches!(e, GrammarError::Io { .. }));
    assert!(e.to_string().contains("no/such/file.lark"));
    let out = Command::new(env!("CARGO_BIN_EXE_lacuna"))
        .args(["grammar", "stats", "no/such/file.lark"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("no/such/file.lark"), "{stderr}");
    assert!(!stderr.contains("panicked"));
}
