//! What the Lark front end refuses, and how it says so; and that no input makes it panic.

use proptest::prelude::*;

use super::parse;
use crate::grammar::GrammarError;

fn err(src: &str) -> GrammarError {
    match parse(src, "e.lark") {
        Ok(g) => {
            let shown: String = g.to_string().chars().take(2000).collect();
            let src: String = src.chars().take(2000).collect();
            panic!("accepted:\n{src}\n--- as:\n{shown}")
        }
        Err(e) => e,
    }
}

/// Asserts a syntax error at `line:column` whose message contains `needle`.
fn syntax_at(src: &str, line: usize, column: usize, needle: &str) {
    match err(src) {
        GrammarError::Syntax {
            origin,
            line: l,
            column: c,
            message,
        } => {
            assert_eq!(origin, "e.lark");
            assert_eq!((l, c), (line, column), "{src:?}: {message}");
            assert!(
                message.contains(needle),
                "{src:?}: {message:?} lacks {needle:?}"
            );
        }
        e => panic!("{src:?}: expected a syntax error, got {e}"),
    }
}

/// Asserts an `Unsupported` error at `line:column` whose feature contains `needle`.
fn unsupported_at(src: &str, line: usize, column: usize, needle: &str) {
    match err(src) {
        GrammarError::Unsupported {
            origin,
            line: l,
            column: c,
            feature,
        } => {
            assert_eq!(origin, "e.lark");
            assert_eq!((l, c), (line, column), "{src:?}: {feature}");
            assert!(
                feature.contains(needle),
                "{src:?}: {feature:?} lacks {needle:?}"
            );
        }
        e => panic!("{src:?}: expected an unsupported-feature error, got {e}"),
    }
}

/// Asserts an invalid-pattern error for `terminal` whose message contains every needle (the
/// errors of whole terminals come placed at the terminal's definition).
fn invalid_pattern(src: &str, terminal: &str, needles: &[&str]) {
    match err(src).unplaced().clone() {
        GrammarError::InvalidPattern {
            terminal: t,
            message,
        } => {
            assert_eq!(t, terminal, "{src:?}: {message}");
            for n in needles {
                assert!(message.contains(n), "{src:?}: {message:?} lacks {n:?}");
            }
        }
        e => panic!("{src:?}: expected an invalid-pattern error, got {e}"),
    }
}

#[test]
fn refused_features_name_themselves() {
    unsupported_at(
        "start: a\n_sep{x, sep}: x (sep x)*\na: \"a\"",
        2,
        5,
        "template",
    );
    unsupported_at("start: _sep{a, \",\"}\n", 1, 8, "template");
    unsupported_at("start: A\n%declare A\n", 2, 1, "%declare");
    unsupported_at("start: \"a\"\n\n%override start: \"b\"", 3, 1, "%override");
    unsupported_at("start: \"a\"\n%extend start: \"b\"", 2, 1, "%extend");
    unsupported_at("start: NAME\n%import python.NAME", 2, 1, "module `python`");
    unsupported_at(
        "%import .other.x\nstart: \"a\"",
        1,
        1,
        "file-relative `%import .other.x`",
    );
    unsupported_at("%import common.something\n", 1, 16, "rule `something`");
    unsupported_at(
        "start: \"a\"\n%import common (WS, value)",
        2,
        21,
        "rule `value`",
    );
    unsupported_at("start: /a/l", 1, 11, "flag `l`");
    unsupported_at("start: \"a\" ~ 20000", 1, 14, "repetition");
    // A budget on what all `~` of a grammar expand to.
    let many = format!("start: {}", "(\"a\" \"b\" \"c\") ~ 10000 ".repeat(17));
    unsupported_at(&many, 1, 8 + 16 * 22, "repetition");
    unsupported_at("start: \"a\"i..\"z\"", 1, 8, "`i` flag");
    let deep = format!("start: {}\"a\"{}", "(".repeat(100), ")".repeat(100));
    unsupported_at(&deep, 1, 8 + super::parser::MAX_DEPTH, "nested");
}

#[test]
fn syntax_errors_point_at_the_problem() {
    syntax_at("start \"a\"", 1, 7, "expected `:` after rule name `start`");
    syntax_at(
        "start: a\nA \"x\"\na: A",
        2,
        3,
        "expected `:` after terminal name `A`",
    );
    syntax_at("start: \"abc\n", 1, 8, "unterminated string");
    syntax_at("start: \"a\"\nB: /abc\n", 2, 4, "unterminated regex");
    syntax_at(
        "start: (\"a\"\n",
        1,
        12,
        "expected `)` to close the `(` at 1:8",
    );
    syntax_at(
        "start: [\"a\")",
        1,
        12,
        "expected `]` to close the `[` at 1:8",
    );
    syntax_at("start: \"a\")", 1, 11, "unmatched `)`");
    syntax_at("start: \"a\"**", 1, 12, "misplaced operator");
    syntax_at("start: *", 1, 8, "misplaced operator");
    syntax_at("start: \"a\"\n%foo bar", 2, 1, "unknown directive `%foo`");
    syntax_at("start: \"ab\"..\"z\"", 1, 8, "single characters");
    syntax_at("start: \"z\"..\"a\"", 1, 8, "start is after its end");
    syntax_at("start: \"a\"..B", 1, 13, "expected a string after `..`");
    syntax_at("Start: \"a\"", 1, 1, "illegal name `Start`");
    syntax_at("start: __x\n", 1, 8, "reserved");
    syntax_at("start: \"a\" @", 1, 12, "unexpected character '@'");
    syntax_at("start: \"\\x4\"", 1, 9, "invalid escape");
    syntax_at("start: \"\\ud800\"", 1, 9, "not a Unicode scalar value");
    syntax_at(
        "start: \"a\"\n\nstart: \"b\"",
        3,
        1,
        "defined more than once (first at 1:1)",
    );
    syntax_at(
        "start: A\nA: \"a\"\nA: \"b\"",
        3,
        1,
        "terminal `A` is defined more than once",
    );
    syntax_at(
        "start: WS\nWS: \" \"\n%import common.WS",
        3,
        16,
        "more than once",
    );
    syntax_at("start: A\nA: \"a\" -> x", 2, 11, "aliases");
    syntax_at("start: (\"a\" -> x)", 1, 16, "alias");
    syntax_at("%import common\n", 1, 1, "imports nothing");
    syntax_at("%import common.NOPE\n", 1, 16, "no terminal `NOPE`");
    syntax_at("%import common.WS -> ws\n", 1, 22, "must stay uppercase");
    syntax_at("start: A\nA.x: \"a\"", 2, 3, "priority number");
    syntax_at("start: \"a\" -> \n", 1, 15, "a name after `->`");
    syntax_at("start: \"\"", 1, 8, "empty string literal");
    syntax_at("start: x\n%ignore x\nx: \"a\"", 2, 9, "`x` is a rule");
    syntax_at("start: \"a\" ~ 3..1", 1, 12, "maximum is below the minimum");
    syntax_at("start: \"a\" ~ x", 1, 14, "a count after `~`");
    syntax_at("start: /a/q", 1, 11, "unknown regex flag `q`");
    syntax_at("start: \"a\" \\ \"b\"", 1, 12, "backslash");
    syntax_at("\"a\"\n", 1, 1, "expected a rule definition");
    syntax_at("?A: \"a\"", 1, 2, "expected a rule name");
    syntax_at(
        "start: a\na: \"a\" : b",
        2,
        8,
        "expected `|` or the end of the line",
    );
}

#[test]
fn undefined_symbols_are_named_with_their_position() {
    syntax_at("start: a b\na: \"x\"", 1, 10, "undefined rule `b`");
    syntax_at("start: \"a\" A", 1, 12, "undefined terminal `A`");
    syntax_at("start: A\nA: \"a\" B", 2, 8, "undefined terminal `B`");
    syntax_at(
        "start: A\n%ignore B\nA: \"a\"",
        2,
        9,
        "undefined terminal `B`",
    );
    syntax_at(
        "start: A\nA: \"a\" b\nb: \"b\"",
        2,
        8,
        "rules are not allowed inside terminals",
    );
}

#[test]
fn terminal_cycles_are_named() {
    syntax_at(
        "start: A\nA: \"a\" B\nB: \"b\" (C | A)?\nC: \"c\"",
        2,
        1,
        "`A` -> `B` -> `A`",
    );
    syntax_at("start: X\nX: \"x\" X?", 2, 1, "`X` -> `X`");
    // Unused terminals are checked too.
    syntax_at(
        "start: \"s\"\nP: Q\nQ: R\nR: P",
        2,
        1,
        "`P` -> `Q` -> `R` -> `P`",
    );
}

#[test]
fn bad_regexes_name_their_terminal() {
    invalid_pattern("start: A\nA: /a(?=b)/", "A", &["e.lark:2:4", "lookahead"]);
    invalid_pattern(
        "start: A\nA: \"x\" /(?<!a)b/",
        "A",
        &["e.lark:2:8", "lookbehind"],
    );
    invalid_pattern(
        r"start: /(a)\1/",
        r"/(a)\1/",
        &["e.lark:1:8", "backreference"],
    );
    invalid_pattern("start: A\nA: /a[/", "A", &["unterminated character class"]);
    // Anchors and word boundaries mean nothing inside one lexeme.
    invalid_pattern("start: A\nA: /a$/m", "A", &["look-around"]);
    invalid_pattern("start: A\nA: /\\bword/", "A", &["look-around"]);
    invalid_pattern("start: A\nA: /a)(b/ \"c\"", "A", &["e.lark:2:4"]);
    invalid_pattern(
        "start: \"a\"\n%ignore /(?=x)/",
        "__IGNORE_0",
        &["lookahead"],
    );
    let mut blowup = String::from("start: A21\nA0: \"ab\"\n");
    for k in 1..=21 {
        blowup.push_str(&format!("A{k}: A{} A{}\n", k - 1, k - 1));
    }
    // Terminal names may contain digits; the error names the first one too large.
    match err(&blowup) {
        GrammarError::InvalidPattern { terminal, message } => {
            assert!(terminal.starts_with('A'), "{terminal}");
            assert!(message.contains("grows beyond"), "{message}");
        }
        e => panic!("{e}"),
    }
    let e = err("start: A\nA: \"a\"?");
    assert_eq!(e.unplaced(), &GrammarError::EmptyMatch("A".into()));
    assert!(e.to_string().starts_with("e.lark:2:1: "), "{e}");
}

/// Issue 19: Python regex syntax that regex-syntax would accept with another meaning is refused,
/// naming the terminal, the literal's position and the character in the regex.
#[test]
fn possessive_quantifiers_and_late_global_flags_are_refused() {
    invalid_pattern(
        "start: A\nA: /a++/",
        "A",
        &["e.lark:2:4", "possessive", "character 3"],
    );
    invalid_pattern("start: A\nA: /[ab]*+c/", "A", &["e.lark:2:4", "possessive"]);
    invalid_pattern("start: /x{2}+/", "/x{2}+/", &["e.lark:1:8", "possessive"]);
    invalid_pattern("start: A\nA: /a**/", "A", &["multiple repeat"]);
    invalid_pattern(
        "start: A\nA: \"x\" /a(?i)b/",
        "A",
        &["e.lark:2:8", "global flags `(?i)`", "character 2"],
    );
    // Flags at the start, scoped flags and lazy quantifiers keep their meaning.
    let g = super::tests::grammar("start: A B\nA: /(?i)ab+?/\nB: /c(?s:.)*?d/");
    assert!(g.terminal_by_name("A").is_some());
}

/// Issue 19: a terminal whose automaton would exhaust memory once its counted repetitions are
/// written out is refused where the grammar is read, naming the terminal and its position.
#[test]
fn terminals_with_huge_automata_are_named() {
    invalid_pattern(
        "start: A\nA: ((\"a\" ~ 1000) ~ 1000) ~ 1000",
        "A",
        &["e.lark:2:", "MiB", "written out"],
    );
    invalid_pattern(
        "start: B\nB: /((a{1000}){1000}){1000}/",
        "B",
        &["e.lark:2:4", "MiB"],
    );
    invalid_pattern(
        "start: \"x\" /[a-z]{1000000}/",
        "/[a-z]{1000000}/",
        &["e.lark:1:12", "MiB"],
    );
    // In a rule, `~` writes symbols out and is bounded by its own budget.
    unsupported_at(
        "start: ((\"a\" ~ 1000) ~ 1000) ~ 1000",
        1,
        9,
        "repetitions `~`",
    );
}

/// A grammar using most of the syntax, for the mutation tests below.
const SAMPLE: &str = r#"// sample
?start: value
?value: object | array | STRING | NUMBER -> num | "true"i | /nul+/
      | ("a" | "b")+ "c"? [d] d ~ 2 d ~ 1..3
object: "{" [pair ("," pair)*] "}"
pair: STRING ":" value
array: "[" [value ("," value)*] "]"
!d.2: "d"
STRING: "\"" /[^"\\]*/ "\""
NUMBER.2: DIGIT+ ("." DIGIT+)? | "x" HEX ~ 2
DIGIT: "0".."9"
HEX: DIGIT | "a".."f"
%import common.WS
%import common (INT, CNAME)
%import common.ESCAPED_STRING -> ESC
%ignore WS
%ignore / \# [^\n]* /x
"#;

#[test]
fn sample_parses() {
    let g = super::tests::grammar(SAMPLE);
    assert!(g.terminal_by_name("NUMBER").is_some());
}

#[test]
fn truncated_and_mutated_inputs_never_panic() {
    let chars: Vec<char> = SAMPLE.chars().collect();
    for end in 0..=chars.len() {
        let prefix: String = chars[..end].iter().collect();
        let _ = parse(&prefix, "p.lark");
        let without: String = chars
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != end)
            .map(|(_, c)| c)
            .collect();
        let _ = parse(&without, "p.lark");
    }
}

const VOCABULARY: &[&str] = &[
    "start",
    ":",
    "a",
    "A",
    "_b",
    "B.2",
    "r.1",
    "|",
    "\n",
    "\n  |",
    "(",
    ")",
    "[",
    "]",
    "*",
    "+",
    "?",
    "!",
    "~",
    "2",
    "..",
    "3",
    "->",
    "\"x\"",
    "\"y\"i",
    "\"\\",
    "/[a-z]+/",
    "/(?=a)/",
    "/a/s",
    "\"a\"..\"z\"",
    "%ignore",
    "%import",
    "common",
    ".",
    "WS",
    "INT",
    ",",
    "{",
    "}",
    "%declare",
    "//c\n",
    "#",
    "\\\n",
    "/",
    "\"",
    "-",
    "0",
];

proptest! {
    #[test]
    fn random_text_never_panics(s in "[a-zA-Z_?!:|()\\[\\]{}\"/\\\\*+~.,%# \n0-9-]{0,80}") {
        let _ = parse(&s, "p.lark");
    }

    #[test]
    fn random_token_soup_never_panics(
        words in prop::collection::vec(prop::sample::select(VOCABULARY), 0..40)
    ) {
        let _ = parse(&words.join(" "), "p.lark");
        let _ = parse(&words.concat(), "p.lark");
    }
}
