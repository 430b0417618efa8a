//! Canvas lines: `check`, `mask` and their kin fed bad or huge canvas lines.

use std::fmt::Write as _;

use super::{err, input, line_case, lines, Battery};
use crate::{Expect, SLOW};

pub(super) fn canvas_cases(b: &mut Battery) {
    let json = ["check", "--grammar", "json"];
    b.add(
        "canvas line",
        "mixed bad lines keep their ids and the run goes on",
        &["check", "--grammar", "json", &input("canvas/mixed.jsonl")],
        "",
        lines(
            1,
            &[
                &["\"line\":1", "JSON", "column 2"],
                &["\"line\":2", "object"],
                &["\"line\":3", "object"],
                &["\"id\":\"t\"", "\"line\":4", "--tokenizer"],
                &["\"id\":5", "\"line\":5", "canvas"],
                &["\"id\":6", "\"line\":6", "canvas", "must be an array"],
                &["\"id\":7", "\"line\":7", "canvas[1]"],
                &["\"id\":8", "\"line\":8", "canvas[0]"],
                &["\"id\":9", "\"line\":9", "canvas[0]", "256"],
                &["\"id\":10", "\"line\":10", "canvas[0]", "-1"],
                &["\"id\":11", "\"line\":11", "canvas[0]"],
                &["\"id\":12", "\"line\":12", "canvas[0]"],
                &["\"id\":13", "\"line\":13", "grammar"],
                &["\"id\":14", "\"line\":14", "nosuchgrammar"],
                &["\"id\":15", "\"line\":15", "missing_file.lark"],
                &["\"id\":16", "\"line\":16", "missing.json"],
                &["\"id\":17", "\"verdict\":\"completable\""],
                &["\"id\":{\"nested\":[1,2]}", "\"verdict\""],
                &["\"id\":20", "\"line\":21", "canvas[0]"],
                &["\"id\":21", "\"line\":22", "canvas"],
                &["\"id\":\"last\"", "\"verdict\":\"completable\""],
            ],
        ),
    );
    line_case(
        b,
        "invalid UTF-8 inside a string keeps the id",
        &json,
        b"{\"id\": 7, \"canvas\": [\"\xff\"]}",
        &["\"id\":7", "UTF-8"],
    );
    line_case(
        b,
        "invalid UTF-8 before the id",
        &json,
        b"{\"x\": \"\xc3\", \"id\": 8, \"canvas\": [\"1\"]}",
        &["\"id\":8", "UTF-8"],
    );
    line_case(
        b,
        "raw NUL byte in a line",
        &json,
        b"{\"id\": 9, \"canvas\": [\"1\x00\"]}",
        &["JSON", "column"],
    );
    line_case(
        b,
        "canvas is a string",
        &json,
        b"{\"id\": 10, \"canvas\": \"[1]\"}",
        &["\"id\":10", "canvas", "must be an array"],
    );
    line_case(
        b,
        "id out of f64 range",
        &json,
        b"{\"id\": 1e400, \"canvas\": [\"1\"]}",
        &["JSON", "column"],
    );
    line_case(
        b,
        "canvas is an object",
        &json,
        b"{\"id\": 12, \"canvas\": {\"a\": 1}}",
        &["\"id\":12", "canvas", "must be an array"],
    );
    line_case(
        b,
        "grammar field is an array",
        &json,
        b"{\"id\": 13, \"grammar\": [\"json\"], \"canvas\": [\"1\"]}",
        &["\"id\":13", "grammar"],
    );
    line_case(
        b,
        "grammar field names a directory",
        &json,
        b"{\"id\": 14, \"grammar\": \"/.lark\", \"canvas\": [\"1\"]}",
        &["\"id\":14", "/.lark"],
    );
    line_case(
        b,
        "grammar field is empty",
        &json,
        b"{\"id\": 15, \"grammar\": \"\", \"canvas\": [\"1\"]}",
        &["\"id\":15", "grammar"],
    );
    line_case(
        b,
        "grammar field +fence+fence",
        &json,
        b"{\"id\": 16, \"grammar\": \"json+fence+fence\", \"canvas\": [\"1\"]}",
        &["\"id\":16", "json+fence+fence"],
    );
    line_case(b, "a line that is JSON null", &json, b"null", &["object"]);
    line_case(
        b,
        "canvas nested 100,000 arrays deep in the line",
        &json,
        format!(
            "{{\"id\": 17, \"canvas\": {}{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        )
        .as_bytes(),
        &["JSON", "column"],
    );
    line_case(
        b,
        "truncated line",
        &json,
        b"{\"id\": 18, \"canvas\": [\"[1\", nu",
        &["JSON", "column"],
    );

    b.add(
        "canvas line",
        "bytes cells that are not UTF-8, EOS then text",
        &["check", "--grammar", "json", "--complete"],
        "{\"id\": 1, \"canvas\": [\"\\\"\", {\"bytes\": [255, 254]}, null]}\n{\"id\": 2, \"canvas\": [\"[1\", {\"eos\": true}, \"]\"]}\n",
        lines(0, &[&["\"id\":1", "not_completable"], &["\"id\":2", "not_completable"]]),
    );
    let mut eos = String::from("{\"id\": \"e\", \"canvas\": [\"[1]\"");
    for _ in 0..100_000 {
        eos.push_str(", {\"eos\": true}");
    }
    eos.push_str("]}\n");
    b.add(
        "canvas line",
        "100,000 EOS cells",
        &["check", "--grammar", "json", "--complete"],
        eos,
        lines(0, &[&["\"id\":\"e\"", "\"verdict\":\"completable\""]]),
    );

    // A C++ canvas whose check runs to its search budget, about 0.55 s warm or not: three
    // hundred holes, each before an identifier (1,501 automaton states). Forty of them finish in the case's 10 s only if
    // `--timeout-ms` bounds each line. (The canvases used before stopped being slow: one had
    // its holes separated by empty cells, and adjacent holes are one hole now; the next,
    // found by fuzzing, checks in 10 ms since checks try top-down prediction.)
    let mut slow = String::from("{\"id\": \"slow\", \"canvas\": [\"int main() {\"");
    for _ in 0..300 {
        slow.push_str(", null, \"x\"");
    }
    slow.push_str("]}");
    let mut slow_lines = String::new();
    for i in 0..40 {
        slow_lines.push_str(&slow.replacen("\"slow\"", &i.to_string(), 1));
        slow_lines.push('\n');
    }
    let unknown: Vec<[&str; 1]> = vec![["\"verdict\":\"unknown\""]; 40];
    let unknown: Vec<&[&str]> = unknown.iter().map(|l| &l[..]).collect();
    b.add(
        "canvas line",
        "--timeout-ms 100 on forty slow C++ canvases",
        &[
            "check",
            "--grammar",
            "cpp",
            "--complete",
            "--timeout-ms",
            "100",
        ],
        slow_lines,
        lines(0, &unknown),
    );

    // No grammar at all.
    b.add(
        "canvas line",
        "no grammar anywhere",
        &["check"],
        "{\"id\": 1, \"canvas\": [\"1\"]}\n",
        lines(1, &[&["\"id\":1", "--grammar"]]),
    );
    // Empty input, blank input, no trailing newline, CRLF.
    b.add("canvas line", "empty input", &json, "", lines(0, &[]));
    b.add(
        "canvas line",
        "only blank lines",
        &json,
        "\n\n \t\n\r\n",
        lines(0, &[]),
    );
    b.add(
        "canvas line",
        "CRLF line endings and no final newline",
        &json,
        "{\"id\": 1, \"canvas\": [\"[1\", null]}\r\n{\"id\": 2, \"canvas\": [\"[1]\"]}",
        lines(
            0,
            &[&["\"id\":1", "completable"], &["\"id\":2", "completable"]],
        ),
    );
    b.add(
        "canvas line",
        "--stats with no lines",
        &["check", "--grammar", "json", "--stats"],
        "",
        Expect::Ok(vec![]),
    );

    // Deep nesting in the canvas text.
    let deep = format!(
        "{{\"id\": \"deep\", \"canvas\": [\"{}\", null]}}\n",
        "[".repeat(100_000)
    );
    b.add(
        "canvas line",
        "100,000 open brackets in canvas text",
        &json,
        deep.clone(),
        lines(0, &[&["\"id\":\"deep\"", "\"verdict\""]]),
    )
    .timeout(SLOW);
    b.add(
        "canvas line",
        "100,000 open brackets in canvas text, --complete",
        &["check", "--grammar", "json", "--complete"],
        deep,
        lines(0, &[&["\"id\":\"deep\"", "\"verdict\""]]),
    )
    .timeout(SLOW);
    let deep_smiles = format!(
        "{{\"id\": \"s\", \"canvas\": [\"C{}\", null]}}\n",
        "(C".repeat(50_000)
    );
    b.add(
        "canvas line",
        "50,000 open SMILES branches, --complete",
        &["check", "--grammar", "smiles", "--complete"],
        deep_smiles,
        lines(0, &[&["\"id\":\"s\"", "\"verdict\""]]),
    )
    .timeout(SLOW);
    let deep_cpp = format!(
        "{{\"id\": \"c\", \"canvas\": [\"int main() {{ return {}\", null]}}\n",
        "(".repeat(20_000)
    );
    b.add(
        "canvas line",
        "20,000 open C++ parentheses, --complete",
        &["check", "--grammar", "cpp", "--complete"],
        deep_cpp,
        lines(0, &[&["\"id\":\"c\"", "\"verdict\""]]),
    )
    .timeout(SLOW);

    // Many cells, many holes, huge cells.
    let mut nulls = String::from("{\"id\": \"n\", \"canvas\": [\"[\"");
    for _ in 0..1_000_000 {
        nulls.push_str(",null");
    }
    nulls.push_str("]}\n");
    b.add(
        "canvas line",
        "1,000,000 masked cells",
        &json,
        nulls,
        lines(0, &[&["\"id\":\"n\"", "\"verdict\""]]),
    )
    .timeout(SLOW);
    let mut holes = String::from("{\"id\": \"h\", \"canvas\": [\"[\"");
    for _ in 0..100_000 {
        holes.push_str(",null,\"1\"");
    }
    holes.push_str("]}\n");
    b.add(
        "canvas line",
        "100,000 holes between text",
        &json,
        holes,
        lines(0, &[&["\"id\":\"h\"", "\"verdict\""]]),
    )
    .timeout(SLOW);
    let mut holes = String::from("{\"id\": \"h\", \"canvas\": [\"int main() {\"");
    for _ in 0..2_000 {
        holes.push_str(",null,\"x\"");
    }
    holes.push_str("]}\n");
    b.add(
        "canvas line",
        "2,000 holes in C++",
        &["check", "--grammar", "cpp"],
        holes,
        lines(0, &[&["\"id\":\"h\"", "\"verdict\""]]),
    )
    .timeout(SLOW);
    let big = format!(
        "{{\"id\": \"big\", \"canvas\": [\"\\\"{}\", null]}}\n",
        "a".repeat(10 << 20)
    );
    b.add(
        "canvas line",
        "10 MB text cell",
        &json,
        big,
        lines(0, &[&["\"id\":\"big\"", "completable"]]),
    )
    .timeout(SLOW);
    let big_id = format!(
        "{{\"id\": \"{}\", \"canvas\": [\"[1]\"]}}\n",
        "i".repeat(1 << 20)
    );
    b.add(
        "canvas line",
        "1 MB id",
        &json,
        big_id,
        lines(0, &[&["iiii", "completable"]]),
    );
    let no_newline = "[".repeat(50 << 20);
    b.add(
        "canvas line",
        "50 MB line that is not JSON",
        &json,
        no_newline,
        lines(1, &[&["\"line\":1", "JSON"]]),
    )
    .timeout(SLOW);

    // Many lines.
    let mut many = String::new();
    for i in 0..20_000 {
        writeln!(
            many,
            "{{\"id\": {i}, \"canvas\": [\"[{i}, \", null, \"]\"]}}"
        )
        .unwrap();
    }
    let mut expect: Vec<Vec<String>> = Vec::new();
    for i in 0..20_000 {
        expect.push(vec![format!("\"id\":{i},"), "completable".into()]);
    }
    b.add(
        "canvas line",
        "20,000 distinct canvases",
        &json,
        many,
        Expect::Lines {
            code: 0,
            lines: expect,
        },
    )
    .timeout(SLOW)
    .max_rss(500);

    // 20,000 spellings of one grammar path.
    b.file(
        "spell/g.lark",
        "start: \"[\" [D (\",\" D)*] \"]\"\nD: /[0-9]+/\n",
    );
    let root = b.path("spell");
    let mut spellings = String::new();
    let mut expect: Vec<Vec<String>> = Vec::new();
    let mut n = 0;
    'outer: for i in 0..200 {
        for j in 0..100 {
            let spec = format!("{root}{}{}g.lark", "/.".repeat(i), "/".repeat(j + 1));
            writeln!(
                spellings,
                "{{\"id\": {n}, \"grammar\": \"{spec}\", \"canvas\": [\"[1\", null]}}"
            )
            .unwrap();
            expect.push(vec![format!("\"id\":{n},"), "completable".into()]);
            n += 1;
            if n == 20_000 {
                break 'outer;
            }
        }
    }
    b.add(
        "canvas line",
        "20,000 spellings of one grammar path",
        &["check"],
        spellings,
        Expect::Lines {
            code: 0,
            lines: expect,
        },
    )
    .timeout(SLOW)
    .max_rss(150);

    // A grammar that fails slowly, named by 300 lines: it must not be rebuilt per line.
    let mut slow = String::from("start: r0\n");
    for i in 0..30_000 {
        writeln!(slow, "r{i}: r{} \"a\" | \"b\" r{}", i + 1, i + 1).unwrap();
    }
    slow.push_str("r30000: undefined_at_the_end\n");
    let spec = b.file("slow_failing.lark", &slow);
    let mut stdin = String::new();
    let mut expect: Vec<Vec<String>> = Vec::new();
    for i in 0..300 {
        writeln!(
            stdin,
            "{{\"id\": {i}, \"grammar\": \"{spec}\", \"canvas\": [\"a\"]}}"
        )
        .unwrap();
        expect.push(vec![format!("\"id\":{i},"), "undefined_at_the_end".into()]);
    }
    b.add(
        "canvas line",
        "a failing grammar named by 300 lines (loaded once?)",
        &["check"],
        stdin,
        Expect::Lines {
            code: 1,
            lines: expect,
        },
    )
    .timeout(SLOW);

    // 2,000 distinct failing grammar names.
    let mut stdin = String::new();
    let mut expect: Vec<Vec<String>> = Vec::new();
    for i in 0..2_000 {
        writeln!(
            stdin,
            "{{\"id\": {i}, \"grammar\": \"/nonexistent/{i}.lark\", \"canvas\": [\"a\"]}}"
        )
        .unwrap();
        expect.push(vec![format!("\"id\":{i},"), format!("{i}.lark")]);
    }
    b.add(
        "canvas line",
        "2,000 distinct missing grammars",
        &["check"],
        stdin,
        Expect::Lines {
            code: 1,
            lines: expect,
        },
    );

    // Inputs that are not files.
    b.add(
        "canvas line",
        "input file is a directory",
        &["check", "--grammar", "json", "/"],
        "",
        err(&["/", "directory"]),
    );
    b.add(
        "canvas line",
        "input file missing",
        &["check", "--grammar", "json", "/nonexistent/in.jsonl"],
        "",
        err(&["/nonexistent/in.jsonl"]),
    );
    b.add(
        "canvas line",
        "input that never ends (/dev/zero)",
        &["check", "--grammar", "json", "/dev/zero"],
        "",
        err(&["/dev/zero", "line 1"]),
    )
    .timeout(SLOW)
    .max_rss(256);
    let binary: Vec<u8> = (0..=255u8).cycle().take(1 << 16).collect();
    b.add(
        "canvas line",
        "64 KB of binary garbage on stdin",
        &json,
        binary,
        Expect::OkOrErr(vec![]),
    )
    .timeout(SLOW);
    let long = b.file("long_forced.lark", "start: \"a\" ~ 10000\n");
    b.add(
        "canvas line",
        "--complete of a 10,000-symbol forced completion",
        &["check", "--grammar", &long, "--complete"],
        "{\"id\": 1, \"canvas\": [\"a\", null]}\n",
        lines(0, &[&["\"id\":1", "completable", "aaaaaaaa"]]),
    )
    .timeout(SLOW);
}
