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

/// A grammar of `n` rules `start: w0 | ... ; wi: "k" "i"`, or `wi: ` (the empty word) when
/// `empty`.
fn many_rules(n: usize, empty: bool) -> String {
    let alternatives: Vec<String> = (0..n).map(|i| format!("w{i}")).collect();
    let mut src = format!("start: {}\n", alternatives.join(" | "));
    for i in 0..n {
        if empty {
            src.push_str(&format!("w{i}: \n"));
        } else {
            src.push_str(&format!("w{i}: \"k\" \"{i}\"\n"));
        }
    }
    src
}

#[test]
fn large_grammars_report_lexer_errors_like_small_ones() {
    use lacuna::checker::{CheckerError, PARALLEL_BUILD_RULES};
    // A grammar without terminals has no lexer, whether its checker is built on one thread
    // (small) or its lexer on a second one (large).
    for n in [2, PARALLEL_BUILD_RULES + 10] {
        let g = lark::parse(&many_rules(n, true), "empty.lark").unwrap();
        assert!(g.rules().len() >= n, "{} rules", g.rules().len());
        match Checker::new(g) {
            Err(e @ CheckerError::Lexicon(_)) => {
                assert!(e.to_string().contains("no terminals"), "{n} rules: {e}")
            }
            Err(e) => panic!("{n} rules: another error: {e}"),
            Ok(_) => panic!("{n} rules: a lexer without terminals"),
        }
    }
    // A large grammar with terminals answers as a small one does.
    let n = PARALLEL_BUILD_RULES + 10;
    let mut checker =
        Checker::new(lark::parse(&many_rules(n, false), "big.lark").unwrap()).unwrap();
    assert!(checker.accepts(format!("k{}", n - 1).as_bytes()));
    assert!(!checker.accepts(format!("k{n}").as_bytes()));
    assert!(!checker.accepts(b"kk"));
}
