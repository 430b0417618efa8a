//! What the Lark front end accepts: grammars, EBNF, terminals, imports, directives.

use std::collections::BTreeSet;

use super::{parse, parse_with_start};
use crate::grammar::earley::recognizes;
use crate::grammar::{Grammar, GrammarError, Pattern, Symbol, TerminalId};

pub(super) fn grammar(src: &str) -> Grammar {
    parse(src, "t.lark").unwrap_or_else(|e| panic!("{e}\n--- grammar:\n{src}"))
}

fn tid(g: &Grammar, name: &str) -> TerminalId {
    g.terminal_by_name(name)
        .unwrap_or_else(|| panic!("no terminal `{name}` in\n{g}"))
}

fn pattern<'g>(g: &'g Grammar, name: &str) -> &'g Pattern {
    &g.terminal(tid(g, name)).pattern
}

/// Whether `p` matches all of `s`.
fn full_match(p: &Pattern, s: &str) -> bool {
    let re = regex_automata::meta::Regex::new(&format!(r"\A(?:{})\z", p.to_regex()))
        .unwrap_or_else(|e| panic!("{p:?}: {e}"));
    re.is_match(s)
}

fn accepts(g: &Grammar, names: &[&str]) -> bool {
    let word: Vec<TerminalId> = names.iter().map(|n| tid(g, n)).collect();
    recognizes(g, &word)
}

/// The words of up to `max` lexemes, for grammars whose terminals are all literals.
fn language(g: &Grammar, max: usize) -> BTreeSet<String> {
    let alphabet: Vec<(TerminalId, String)> = g
        .terminals()
        .iter()
        .enumerate()
        .map(|(i, t)| match &t.pattern {
            Pattern::Literal(s) => (TerminalId(i as u32), s.clone()),
            p => panic!("terminal {} is not a literal: {p:?}", t.name),
        })
        .collect();
    let mut out = BTreeSet::new();
    let mut layer: Vec<(Vec<TerminalId>, String)> = vec![(vec![], String::new())];
    for _ in 0..=max {
        let mut next = Vec::new();
        for (word, text) in &layer {
            if recognizes(g, word) {
                out.insert(text.clone());
            }
            for (t, s) in &alphabet {
                let mut w = word.clone();
                w.push(*t);
                next.push((w, format!("{text}{s}")));
            }
        }
        layer = next;
    }
    out
}

fn set(words: &[&str]) -> BTreeSet<String> {
    words.iter().map(|w| w.to_string()).collect()
}

#[test]
fn shipped_json_grammar() {
    let g = parse(
        include_str!("../../../grammars/json.lark"),
        "grammars/json.lark",
    )
    .unwrap();
    for n in ["start", "value", "object", "pair", "array"] {
        assert!(g.nonterminal_by_name(n).is_some(), "missing rule {n}");
    }
    for t in [
        r#""{""#,
        r#""}""#,
        r#""[""#,
        r#""]""#,
        r#"",""#,
        r#"":""#,
        r#""true""#,
        r#""false""#,
        r#""null""#,
        "STRING",
        "NUMBER",
        "WS",
    ] {
        tid(&g, t);
    }
    assert_eq!(pattern(&g, r#""{""#), &Pattern::Literal("{".into()));
    assert_eq!(g.ignored(), &[tid(&g, "WS")]);
    assert_eq!(g.terminals().len(), 12);
    assert_eq!(g.nonterminal_name(g.start()), "start");
    let s = r#""{""#;
    let e = r#""}""#;
    assert!(accepts(&g, &[s, "STRING", r#"":""#, "NUMBER", e]));
    assert!(accepts(
        &g,
        &[
            s,
            "STRING",
            r#"":""#,
            "NUMBER",
            r#"",""#,
            "STRING",
            r#"":""#,
            r#""null""#,
            e
        ]
    ));
    assert!(accepts(&g, &[r#""[""#, r#""]""#]));
    assert!(!accepts(&g, &[s, r#"",""#, e]));
    assert!(!accepts(&g, &[s, "STRING", e]));
    assert!(full_match(pattern(&g, "STRING"), r#""a\"b\u00e9""#));
    assert!(full_match(pattern(&g, "NUMBER"), "-1.5e10"));
}

#[test]
fn json_with_imports_aliases_and_modifiers() {
    let src = r#"
// JSON, as Lark's tutorial writes it
?start: value

?value: object
      | array
      | string
      | SIGNED_NUMBER      -> number
      | "true"             -> true
      | "false"            -> false
      | "null"             -> null

array  : "[" [value ("," value)*] "]"
object : "{" [pair ("," pair)*] "}"
pair   : string ":" value

string : ESCAPED_STRING

%import common.ESCAPED_STRING
%import common.SIGNED_NUMBER
%import common.WS
%ignore WS
"#;
    let g = grammar(src);
    assert!(g.nonterminal_by_name("string").is_some());
    assert!(
        g.terminal_by_name("INT").is_none(),
        "dependencies are inlined"
    );
    assert!(g.terminal_by_name("DIGIT").is_none());
    assert!(full_match(pattern(&g, "SIGNED_NUMBER"), "-12.5E+3"));
    assert!(full_match(pattern(&g, "ESCAPED_STRING"), r#""say \"hi\"""#));
    assert!(accepts(
        &g,
        &[r#""[""#, "SIGNED_NUMBER", r#"",""#, r#""true""#, r#""]""#]
    ));
    assert!(!accepts(&g, &[r#""[""#, r#"",""#, r#""]""#]));
}

#[test]
fn star_plus_optional_maybe() {
    let cases: &[(&str, &[&str])] = &[
        (r#"start: "a"*"#, &["", "a", "aa", "aaa", "aaaa"]),
        (r#"start: "a"+"#, &["a", "aa", "aaa", "aaaa"]),
        (r#"start: "a"?"#, &["", "a"]),
        (r#"start: ["a"]"#, &["", "a"]),
        (r#"start: "b" ["a" | "c"]"#, &["b", "ba", "bc"]),
        (r#"start: ("a" "b")*"#, &["", "ab", "abab"]),
        (r#"start: ("a" "b")+ "c""#, &["abc"]),
        (r#"start: ("a" | "b") "c""#, &["ac", "bc"]),
        (
            r#"start: ("a" | "b"+)?"#,
            &["", "a", "b", "bb", "bbb", "bbbb"],
        ),
        (r#"start: "a" ~ 2"#, &["aa"]),
        (r#"start: "a" ~ 1..3"#, &["a", "aa", "aaa"]),
        (r#"start: "a" ~ 0..2 "b""#, &["b", "ab", "aab"]),
        (r#"start: ("a" "b") ~ 2"#, &["abab"]),
        (r#"start: ("a" | "b") ~ 2"#, &["aa", "ab", "ba", "bb"]),
        (r#"start: "a" ~ 0"#, &[""]),
        (r#"start: "a" ~ 1..4 "b""#, &["ab", "aab", "aaab"]),
        (r#"start: "a" ~ 0..3 "b""#, &["b", "ab", "aab", "aaab"]),
        ("start: | \"a\"", &["", "a"]),
        ("start:", &[""]),
    ];
    for (src, want) in cases {
        let g = grammar(src);
        assert_eq!(language(&g, 4), set(want), "{src}\n{g}");
    }
    // A range takes logarithmically many helpers (the halves of its count) and means every
    // count in it.
    let g = grammar(r#"start: "a" ~ 3..10000 "b""#);
    assert!(g.nonterminals().len() < 40, "{}", g.nonterminals().len());
    let g = grammar(r#"start: "a" ~ 3..77 "b""#);
    for n in [0, 2, 3, 4, 31, 64, 76, 77, 78] {
        let mut word = vec!["\"a\""; n];
        word.push("\"b\"");
        assert_eq!(accepts(&g, &word), (3..=77).contains(&n), "{n}");
    }
    // Nested repetitions: every word over {a, b} that ends with `b`.
    let g = grammar(r#"start: ("a"* "b")+"#);
    let mut want = BTreeSet::new();
    for len in 1..=4 {
        for bits in 0..(1u32 << len) {
            let w: String = (0..len)
                .map(|k| if bits >> k & 1 == 1 { 'b' } else { 'a' })
                .collect();
            if w.ends_with('b') {
                want.insert(w);
            }
        }
    }
    assert_eq!(language(&g, 4), want);
}

#[test]
fn star_and_plus_are_right_recursive() {
    let g = grammar("start: \"a\"* \"b\"+");
    let a = Symbol::T(tid(&g, r#""a""#));
    let b = Symbol::T(tid(&g, r#""b""#));
    let start = g.start();
    let rhs = &g.rules().iter().find(|r| r.lhs == start).unwrap().rhs;
    let [Symbol::N(star), Symbol::N(plus)] = rhs[..] else {
        panic!("{g}")
    };
    let rules_of = |n| {
        let mut v: Vec<Vec<Symbol>> = g
            .rules()
            .iter()
            .filter(|r| r.lhs == n)
            .map(|r| r.rhs.clone())
            .collect();
        v.sort();
        v
    };
    assert_eq!(rules_of(star), vec![vec![], vec![a, Symbol::N(star)]]);
    assert_eq!(rules_of(plus), vec![vec![b], vec![b, Symbol::N(plus)]]);
    assert!(g.nonterminal_name(star).starts_with("start_star"));
}

#[test]
fn equal_subexpressions_share_helpers() {
    let g = grammar("start: (\"a\" \"b\")* \"c\" (\"a\" \"b\")* x\nx: (\"a\" \"b\")* | \"d\"");
    // start, x, and one helper for ("a" "b")*.
    assert_eq!(g.nonterminals().len(), 3, "{g}");
}

#[test]
fn continuation_lines_comments_and_layout() {
    let src = "start: a\n\n     // a comment\n     | b   # another\n\n     | c \\\n       \"d\"\n\
               a: \"a\"\nb: \"b\"\nc: \"c\"\r\n";
    let g = grammar(src);
    assert_eq!(language(&g, 2), set(&["a", "b", "cd"]));
    // Inside brackets a newline continues only before `|`.
    let g2 = grammar("start: (\"a\"\n  | \"b\"\n  | \"c\")");
    assert_eq!(language(&g2, 2), set(&["a", "b", "c"]));
}

#[test]
fn modifiers_aliases_and_priorities_on_rules() {
    let g = grammar("?start: x -> one\n    | _y -> two\n!x.2: \"a\"\n_y: \"b\"\n!?z: \"c\"");
    assert_eq!(language(&g, 1), set(&["a", "b"]));
    assert!(g.nonterminal_by_name("z").is_some());
}

#[test]
fn terminal_definitions_compile_to_one_regex() {
    let g = grammar(
        r#"
start: A B C D E F SEQ
A: "a".."c"+ "x"?
B: DIGIT+ ("." DIGIT+)?
DIGIT: "0".."9"
C: ("x" | "y") ~ 2..3
D: ["-"] "1"
E: "e" ~ 2
F: /[a-z]/ (/[0-9]/ | "_")*
SEQ: "a" "b" "c"
"#,
    );
    assert!(
        g.terminal_by_name("DIGIT").is_none(),
        "unused helper terminals are dropped"
    );
    let yes_no: &[(&str, &[&str], &[&str])] = &[
        ("A", &["a", "abcx", "ccc"], &["", "x", "ad"]),
        ("B", &["1", "12.50"], &["1.", ".5", "a"]),
        ("C", &["xy", "yyx"], &["x", "xyxy"]),
        ("D", &["1", "-1"], &["-", "--1"]),
        ("E", &["ee"], &["e", "eee"]),
        ("F", &["a", "a1_2"], &["1", "a-"]),
    ];
    for (t, yes, no) in yes_no {
        let p = pattern(&g, t);
        assert!(matches!(p, Pattern::Regex(_)), "{t}: {p:?}");
        for s in *yes {
            assert!(full_match(p, s), "{t} should match {s:?}: {p:?}");
        }
        for s in *no {
            assert!(!full_match(p, s), "{t} should not match {s:?}: {p:?}");
        }
    }
    assert_eq!(pattern(&g, "SEQ"), &Pattern::Literal("abc".into()));
}

#[test]
fn string_escapes_follow_lark() {
    let g = grammar(
        r#"
start: Q BS NL TAB U X UU KEEP CR FF
Q: "\""
BS: "\\"
NL: "\n"
TAB: "\t"
U: "\u00e9"
X: "\x41"
UU: "\U0001F600"
KEEP: "\d\'"
CR: "\r"
FF: "\f"
"#,
    );
    let lit = |n: &str| match pattern(&g, n) {
        Pattern::Literal(s) => s.clone(),
        p => panic!("{n}: {p:?}"),
    };
    assert_eq!(lit("Q"), "\"");
    assert_eq!(lit("BS"), "\\");
    assert_eq!(lit("NL"), "\n");
    assert_eq!(lit("TAB"), "\t");
    assert_eq!(lit("U"), "é");
    assert_eq!(lit("X"), "A");
    assert_eq!(lit("UU"), "😀");
    assert_eq!(lit("KEEP"), "\\d\\'");
    assert_eq!(lit("CR"), "\r");
    assert_eq!(lit("FF"), "\x0c");
}

#[test]
fn case_insensitive_literals() {
    let g = grammar("start: \"select\"i NAME \"from\"i\nNAME: /[a-z]+/");
    let p = pattern(&g, r#""select"i"#);
    for s in ["select", "SELECT", "SeLeCt"] {
        assert!(full_match(p, s), "{s}");
    }
    assert!(!full_match(p, "selec"));
    // A defined terminal with the same pattern is reused.
    let g = grammar("start: \"select\"i\nSELECT: \"select\"i");
    assert_eq!(g.terminals().len(), 1);
    assert_eq!(g.terminals()[0].name, "SELECT");
    // In a terminal definition, next to other pieces.
    let g = grammar("start: KW\nKW: (\"end\"i | \"stop\") \"!\"");
    let p = pattern(&g, "KW");
    assert!(full_match(p, "END!") && full_match(p, "stop!") && !full_match(p, "STOP!"));
}

#[test]
fn regex_literals_flags_and_translation() {
    let g = grammar(
        r#"
start: I S X SL PY BR FL
FL: /(?i)a/ | /b/
I: /ab+c/i
S: /a.b/s
X: /a  b   # spaces and comments are ignored
   c/x
SL: /a\/b/
PY: /x{,2}y/
BR: /\{[0-9]\}/
"#,
    );
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("I", &["ABBC", "abc"], &["ac"]),
        ("S", &["a\nb", "a-b"], &["ab"]),
        ("X", &["abc"], &["a b c"]),
        ("SL", &["a/b"], &["a\\/b"]),
        ("PY", &["y", "xxy"], &["xxxy"]),
        ("BR", &["{5}"], &["5"]),
        ("FL", &["A", "b"], &["B"]),
    ];
    for (t, yes, no) in cases {
        let p = pattern(&g, t);
        for s in *yes {
            assert!(full_match(p, s), "{t} should match {s:?}: {p:?}");
        }
        for s in *no {
            assert!(!full_match(p, s), "{t} should not match {s:?}: {p:?}");
        }
    }
}

#[test]
fn anonymous_terminals() {
    let g = grammar("start: \"{\" \"a\" /[0-9]+/ \"{\" /[0-9]+/ /x/ \"a\"..\"c\"");
    let names: Vec<&str> = g.terminals().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [r#""{""#, r#""a""#, "__ANON_0", "__ANON_1", "__ANON_2"]
    );
    assert_eq!(pattern(&g, "__ANON_0"), &Pattern::Regex("[0-9]+".into()));
    // Defined terminals with the same pattern are reused, by literal or by regex.
    let g = grammar("start: \"{\" /[0-9]+/ LBRACE\nLBRACE: \"{\"\nNUM: /[0-9]+/");
    let names: Vec<&str> = g.terminals().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["LBRACE", "NUM"]);
    let lb = Symbol::T(tid(&g, "LBRACE"));
    assert_eq!(g.rules()[0].rhs[0], lb);
    assert_eq!(g.rules()[0].rhs[2], lb);
}

#[test]
fn imports_from_common() {
    let g = grammar(
        r#"
start: NUMBER NUM I W _WS
%import common.NUMBER
%import common.SIGNED_NUMBER -> NUM
%import common (INT, WORD)
%import common.WS_INLINE -> _WS
%import common.NUMBER
%import common.WORD -> W
I: INT
"#,
    );
    assert!(full_match(pattern(&g, "NUMBER"), "1.5e3"));
    assert!(full_match(pattern(&g, "NUM"), "-.5"));
    assert!(full_match(pattern(&g, "I"), "007"));
    assert!(full_match(pattern(&g, "W"), "Hello"));
    assert!(full_match(pattern(&g, "_WS"), " \t "));
    assert!(g.terminal_by_name("INT").is_none() && g.terminal_by_name("WORD").is_none());
    // The importing grammar's own names do not leak into `common`'s definitions.
    let g = grammar("start: NUMBER\nINT: \"zero\"\n%import common.NUMBER");
    assert!(full_match(pattern(&g, "NUMBER"), "12"));
    assert!(!full_match(pattern(&g, "NUMBER"), "zero"));
}

#[test]
fn every_common_terminal() {
    let all = "DIGIT HEXDIGIT INT SIGNED_INT DECIMAL _EXP FLOAT SIGNED_FLOAT NUMBER \
               SIGNED_NUMBER ESCAPED_STRING LETTER LCASE_LETTER UCASE_LETTER WORD CNAME \
               WS_INLINE WS CR LF NEWLINE SH_COMMENT CPP_COMMENT C_COMMENT SQL_COMMENT";
    let names: Vec<&str> = all.split_whitespace().collect();
    let src = format!(
        "start: {}\n%import common ({})",
        names.join(" | "),
        names.join(", ")
    );
    let g = grammar(&src);
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("DIGIT", &["7"], &["a", "12"]),
        ("HEXDIGIT", &["f", "F", "9"], &["g"]),
        ("INT", &["0", "0123"], &["", "-1", "1.0"]),
        ("SIGNED_INT", &["-5", "+5", "5"], &["--5"]),
        ("DECIMAL", &["1.", ".5", "1.25"], &["1", "."]),
        ("_EXP", &["e5", "E-10", "e+1"], &["e", "5"]),
        ("FLOAT", &["1e5", "1.5", ".5e-3", "2."], &["1", "e5"]),
        ("SIGNED_FLOAT", &["-1.5", "+2e3"], &["-1"]),
        ("NUMBER", &["1", "1.5", "1e9"], &["-1", "a"]),
        ("SIGNED_NUMBER", &["-1", "+1.5e-2", "3"], &["1-"]),
        (
            "ESCAPED_STRING",
            &[r#""""#, r#""a\"b""#, r#""\\""#],
            &[r#""a"#, r#""a"b""#, "\"a\nb\"", r#""\""#],
        ),
        ("LETTER", &["a", "Z"], &["1", "ab"]),
        ("LCASE_LETTER", &["q"], &["Q"]),
        ("UCASE_LETTER", &["Q"], &["q"]),
        ("WORD", &["Hello"], &["hi5", ""]),
        ("CNAME", &["_x1", "abc", "A_B"], &["1x", "a-b"]),
        ("WS_INLINE", &[" \t "], &["\n"]),
        ("WS", &[" \n\r\t\x0c"], &[""]),
        ("CR", &["\r"], &["\n"]),
        ("LF", &["\n"], &["\r"]),
        ("NEWLINE", &["\n", "\r\n\n"], &["\r", ""]),
        ("SH_COMMENT", &["# hi", "#"], &["# a\nb"]),
        ("CPP_COMMENT", &["// hi"], &["/ hi"]),
        (
            "C_COMMENT",
            &["/**/", "/* a * b **/", "/* \n */"],
            &["/* a */ b */", "/* a"],
        ),
        ("SQL_COMMENT", &["-- x"], &["- x"]),
    ];
    assert_eq!(cases.len(), names.len());
    for (t, yes, no) in cases {
        let p = pattern(&g, t);
        for s in *yes {
            assert!(full_match(p, s), "{t} should match {s:?}: {p:?}");
        }
        for s in *no {
            assert!(!full_match(p, s), "{t} should not match {s:?}: {p:?}");
        }
    }
}

#[test]
fn terminal_priorities() {
    let g = grammar("start: A B C D\nA.2: \"a\"\nB.-1: \"b\"\nC: \"c\"\nD.+3: \"d\"\nr.5: A");
    let prio = |n: &str| g.terminal(tid(&g, n)).priority;
    assert_eq!((prio("A"), prio("B"), prio("C"), prio("D")), (2, -1, 0, 3));
}

#[test]
fn ignore_directives() {
    let g = grammar("start: \"a\"+\nWS: \" \"\n%ignore WS\n%ignore \"\\t\"\n%ignore /#[^\\n]*/ | \"//\" /[^\\n]*/");
    let ignored: Vec<&str> = g
        .ignored()
        .iter()
        .map(|&t| g.terminal(t).name.as_str())
        .collect();
    assert_eq!(ignored, ["WS", "__IGNORE_0", "__IGNORE_1"]);
    assert_eq!(pattern(&g, "__IGNORE_0"), &Pattern::Literal("\t".into()));
    assert!(full_match(pattern(&g, "__IGNORE_1"), "// c"));
    assert!(full_match(pattern(&g, "__IGNORE_1"), "# c"));
}

#[test]
fn start_rule_choice() {
    let src = "start: \"a\"\nother: \"b\" \"b\"";
    let g = parse_with_start(src, "t.lark", "other").unwrap();
    assert_eq!(g.nonterminal_name(g.start()), "other");
    assert_eq!(language(&g, 2), set(&["bb"]));
    assert_eq!(
        parse("a: \"x\"", "t.lark").unwrap_err(),
        GrammarError::MissingStart {
            origin: "t.lark".into(),
            name: "start".into()
        }
    );
    assert_eq!(
        parse_with_start(src, "t.lark", "nope").unwrap_err(),
        GrammarError::MissingStart {
            origin: "t.lark".into(),
            name: "nope".into()
        }
    );
}
