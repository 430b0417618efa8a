//! Lark grammars: the files under `tests/hostile/lark/` and generated large grammars.

use std::fmt::Write as _;
use std::path::Path;

use super::{grammar_case, input, lark_case, ok, Battery, EITHER};
use crate::SLOW;

pub(super) fn lark_cases(b: &mut Battery) {
    lark_case(b, "empty.lark", &["empty.lark", "start"]);
    lark_case(b, "comments_only.lark", &["comments_only.lark", "start"]);
    lark_case(b, "no_start.lark", &["no_start.lark", "start"]);
    lark_case(
        b,
        "undefined_rule.lark",
        &["undefined_rule.lark", "missing_rule"],
    );
    lark_case(
        b,
        "undefined_terminal.lark",
        &["undefined_terminal.lark", "MISSING_TERM"],
    );
    lark_case(b, "syntax_error.lark", &["syntax_error.lark:3:"]);
    lark_case(
        b,
        "unterminated_string.lark",
        &["unterminated_string.lark:1:"],
    );
    lark_case(
        b,
        "unterminated_regex.lark",
        &["unterminated_regex.lark:1:"],
    );
    lark_case(b, "bad_regex.lark", &["bad_regex.lark:2:", "`A`"]);
    lark_case(
        b,
        "empty_match.lark",
        &["empty_match.lark:2:", "`A`", "empty"],
    );
    lark_case(b, "empty_literal.lark", &["empty_literal.lark:1:"]);
    lark_case(b, "lookahead.lark", &["lookahead.lark:2:", "`A`"]);
    lark_case(b, "lookbehind.lark", &["lookbehind.lark:2:", "`A`"]);
    lark_case(b, "backref.lark", &["backref.lark:2:", "`A`"]);
    lark_case(
        b,
        "possessive_plus.lark",
        &["possessive_plus.lark:2:", "possessive"],
    );
    lark_case(
        b,
        "possessive_star.lark",
        &["possessive_star.lark:2:", "possessive"],
    );
    lark_case(
        b,
        "possessive_counted.lark",
        &["possessive_counted.lark:2:", "possessive"],
    );
    lark_case(
        b,
        "inline_flag_mid.lark",
        &["inline_flag_mid.lark:2:", "(?i)"],
    );
    lark_case(
        b,
        "quantifier_quantifier.lark",
        &["quantifier_quantifier.lark:2:", "`A`"],
    );
    lark_case(b, "unknown_flag.lark", &["unknown_flag.lark:2:", "q"]);
    lark_case(b, "bad_flag_group.lark", &["bad_flag_group.lark:2:", "`A`"]);
    lark_case(b, "terminal_cycle.lark", &["terminal_cycle.lark:", "cycle"]);
    lark_case(
        b,
        "nested_repeat.lark",
        &["nested_repeat.lark:2:", "16 MiB"],
    );
    lark_case(
        b,
        "nested_repeat_rule.lark",
        &["nested_repeat_rule.lark:1:"],
    );
    lark_case(
        b,
        "nested_regex_repeat.lark",
        &["nested_regex_repeat.lark:2:", "`A`"],
    );
    lark_case(
        b,
        "repeat_over_limit.lark",
        &["repeat_over_limit.lark:1:", "10000"],
    );
    lark_case(b, "repeat_reversed.lark", &["repeat_reversed.lark:1:"]);
    lark_case(b, "repeat_negative.lark", &["repeat_negative.lark:1:"]);
    lark_case(b, "repeat_overflow.lark", &["repeat_overflow.lark:1:"]);
    // 10,000 optional copies are a chain of 10,000 helper rules: milliseconds of work.
    lark_case(b, "repeat_range_one.lark", &[]);
    b.cases.last_mut().unwrap().timeout(3.0);
    lark_case(b, "repeat_range_fifty.lark", &[]);
    b.cases.last_mut().unwrap().timeout(3.0);
    lark_case(
        b,
        "repeat_range_fifty_distinct.lark",
        &[EITHER, "repeat_range_fifty_distinct.lark:"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);
    lark_case(
        b,
        "huge_repeat_terminal_range.lark",
        &["huge_repeat_terminal_range.lark:2:"],
    );
    lark_case(b, "import_other.lark", &["import_other.lark:2:", "python"]);
    lark_case(
        b,
        "import_unknown_common.lark",
        &["import_unknown_common.lark:2:", "NOPE"],
    );
    lark_case(b, "declare.lark", &["declare.lark:2:", "%declare"]);
    lark_case(b, "template.lark", &["template.lark:"]);
    lark_case(b, "override.lark", &["override.lark:2:", "%override"]);
    lark_case(b, "ignore_empty.lark", &["ignore_empty.lark", "empty"]);
    // Python keeps unknown escapes: the literal is `\q`.
    lark_case(b, "bad_escape.lark", &[]);
    lark_case(
        b,
        "bad_unicode_escape.lark",
        &["bad_unicode_escape.lark:1:"],
    );
    lark_case(b, "bad_hex_escape.lark", &["bad_hex_escape.lark:1:"]);
    lark_case(b, "reversed_range.lark", &["reversed_range.lark:2:"]);
    lark_case(b, "multichar_range.lark", &["multichar_range.lark:2:"]);
    lark_case(
        b,
        "empty_language.lark",
        &["empty_language.lark", "start", "empty"],
    );
    lark_case(b, "priority_overflow.lark", &["priority_overflow.lark:2:"]);
    lark_case(b, "priority_negative.lark", &[]);
    // Lark names are ASCII.
    lark_case(b, "unicode_names.lark", &["unicode_names.lark:1:"]);
    lark_case(b, "dfa_blowup.lark", &[EITHER, "dfa_blowup.lark:2:", "`A`"]);
    // Found by fuzzing (lark_grammar): a Unicode class repeated, 2 s to build here.
    lark_case(
        b,
        "word_class_300.lark",
        &[EITHER, "word_class_300.lark:2:", "`A`"],
    );
    lark_case(b, "unicode_class_repeat.lark", &[]);
    lark_case(b, "any_char_repeat.lark", &[]);
    lark_case(b, "terminal_fanout.lark", &["terminal_fanout.lark:", "T"]);
    lark_case(b, "crlf.lark", &[]);
    lark_case(b, "bom.lark", &["bom.lark:1:1"]);
    lark_case(
        b,
        "deep_parens_terminal.lark",
        &["deep_parens_terminal.lark:2:", "nested"],
    );
    lark_case(
        b,
        "deep_regex_groups.lark",
        &["deep_regex_groups.lark:2:", "`A`"],
    );
    lark_case(
        b,
        "deep_optional.lark",
        &["deep_optional.lark:1:", "nested"],
    );
    lark_case(
        b,
        "duplicate_rule.lark",
        &["duplicate_rule.lark:2:", "start"],
    );
    lark_case(b, "invalid_utf8.lark", &["invalid_utf8.lark", "UTF-8"]);
    lark_case(b, "nul_bytes.lark", &["nul_bytes.lark:1:"]);
    lark_case(b, "nul_in_literal.lark", &[]);
    lark_case(b, "regex_nul_class.lark", &[]);
    lark_case(b, "alias_and_shaping.lark", &[]);
    lark_case(b, "huge_priority_many_terms.lark", &[]);
    lark_case(b, "ambiguous_deep.lark", &[]);
    lark_case(b, "left_recursive.lark", &[]);
    lark_case(b, "regex_newline_flag_x.lark", &[]);
    lark_case(b, "string_escapes.lark", &[]);
    lark_case(b, "priority_rule.lark", &[]);
    lark_case(b, "only_ignore.lark", &["only_ignore.lark", "start"]);

    // Generated: large grammars (issue 19's examples).
    let mut chain = String::from("start: r0\n");
    for i in 0..100_000 {
        writeln!(chain, "r{i}: r{} \"a\"", i + 1).unwrap();
    }
    chain.push_str("r100000: \"a\"\n");
    let p = b.file("chain_100k.lark", &chain);
    grammar_case(
        b,
        "lark",
        "chain of 100,000 rules",
        &p,
        &[EITHER, "chain_100k.lark"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);
    let p2 = p.clone();
    b.add(
        "lark",
        "chain of 100,000 rules: grammar stats",
        &["grammar", "stats", &p2, "--json"],
        "",
        ok(&["\"raw\""]),
    )
    .timeout(SLOW);

    let mut alt = String::from("start: \"w0\"");
    for i in 1..100_000 {
        write!(alt, " | \"w{i}\"").unwrap();
    }
    alt.push('\n');
    let p = b.file("alternation_100k.lark", &alt);
    grammar_case(
        b,
        "lark",
        "alternation of 100,000 literals",
        &p,
        &[EITHER, "alternation_100k.lark"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let mut terms = String::from("start: ");
    for i in 0..20_000 {
        if i > 0 {
            terms.push_str(" | ");
        }
        write!(terms, "T{i}").unwrap();
    }
    terms.push('\n');
    for i in 0..20_000 {
        writeln!(terms, "T{i}: /x{i}[a-z]*/").unwrap();
    }
    let p = b.file("regex_terminals_20k.lark", &terms);
    grammar_case(
        b,
        "lark",
        "20,000 regex terminals",
        &p,
        &[EITHER, "regex_terminals_20k.lark"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let deep = format!(
        "start: {}\"a\"{}\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let p = b.file("deep_parens_rule.lark", &deep);
    grammar_case(
        b,
        "lark",
        "100,000 nested parentheses in a rule",
        &p,
        &["deep_parens_rule.lark:1:", "nested"],
    );

    let lit = format!("start: \"{}\"\n", "abcdefghij".repeat(100_000));
    let p = b.file("literal_1mb.lark", &lit);
    grammar_case(
        b,
        "lark",
        "1 MB literal",
        &p,
        &[EITHER, "literal_1mb.lark:1:"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let lit = format!("start: A\nA: /{}/\n", "abcdefghij".repeat(110_000));
    let p = b.file("regex_1mb.lark", &lit);
    grammar_case(
        b,
        "lark",
        "1.1 MB regex (over the regex length limit)",
        &p,
        &["regex_1mb.lark:2:", "`A`"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let p = b.file("dir.lark/keep", "");
    let dir = Path::new(&p)
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    grammar_case(b, "lark", "a directory named *.lark", &dir, &["dir.lark"]);
    let missing = b.path("missing.lark");
    grammar_case(b, "lark", "missing .lark file", &missing, &["missing.lark"]);
    std::os::unix::fs::symlink("/dev/zero", b.scratch.join("zero.lark")).unwrap();
    let zero = b.path("zero.lark");
    grammar_case(
        b,
        "lark",
        "a .lark file that never ends (/dev/zero)",
        &zero,
        &["zero.lark"],
    );
    b.cases.last_mut().unwrap().max_rss(256);
    b.add(
        "lark",
        "grammar show of 100,000-literal alternation",
        &["grammar", "show", &b.path("alternation_100k.lark")],
        "",
        ok(&["start"]),
    )
    .timeout(SLOW);
    b.add(
        "lark",
        "grammar show --normalized: nested parentheses rule",
        &[
            "grammar",
            "show",
            "--normalized",
            &input("lark/ambiguous_deep.lark"),
        ],
        "",
        ok(&["start"]),
    );
}
