//! Token canvas lines and tokenizers.

use super::{err, input, line_case, lines, usage, Battery};
use crate::{Expect, MANIFEST, SLOW};

pub(super) fn token_cases(b: &mut Battery) {
    let small = input("tokenizer/small.json");
    let args = ["check", "--grammar", "json", "--tokenizer", small.as_str()];
    b.add(
        "token line",
        "mixed bad token lines keep their ids and the run goes on",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            &input("tokens/mixed.jsonl"),
        ],
        "",
        lines(
            1,
            &[
                &["\"line\":1", "JSON", "column 2"],
                &["\"line\":2", "object"],
                &["\"id\":\"c\"", "\"line\":3", "leave out --tokenizer"],
                &["\"id\":4", "tokens"],
                &["\"id\":5", "tokens[1]"],
                &["\"id\":6", "tokens[1]"],
                &["\"id\":7", "tokens[1]"],
                &["\"id\":8", "tokens[1]"],
                &["\"id\":9", "tokens[1]"],
                &["\"id\":10", "tokens[1]", "999999"],
                &["\"id\":11", "grammar"],
                &["\"id\":12", "nosuchgrammar"],
                &["\"id\":13", "\"verdict\":\"completable\""],
                &["\"id\":14", "\"verdict\":\"not_completable\""],
                &["\"id\":15", "\"verdict\":\"not_completable\""],
                &["\"id\":16", "\"verdict\":\"not_completable\""],
                &["\"id\":\"last\"", "\"verdict\":\"completable\""],
            ],
        ),
    );
    line_case(
        b,
        "token line: invalid UTF-8 keeps the id",
        &args,
        b"{\"id\": 7, \"x\": \"\xff\", \"tokens\": [0]}",
        &["\"id\":7", "UTF-8"],
    );
    line_case(
        b,
        "token line: nested arrays 100,000 deep",
        &args,
        format!(
            "{{\"id\": 8, \"tokens\": {}{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        )
        .as_bytes(),
        &["JSON", "column"],
    );
    line_case(
        b,
        "token line: id past the vocabulary (u32::MAX)",
        &args,
        b"{\"id\": 9, \"tokens\": [0, 4294967295]}",
        &["\"id\":9", "tokens[1]", "4294967295"],
    );
    let mut long = String::from("{\"id\": 10, \"tokens\": [0");
    for _ in 0..131_072 {
        long.push_str(",null");
    }
    long.push_str("]}");
    line_case(
        b,
        "token line: more positions than --max-positions",
        &args,
        long.as_bytes(),
        &["\"id\":10", "131073", "--max-positions"],
    );
    let mut many = String::from("{\"id\": \"m\", \"tokens\": [0");
    for _ in 0..1_000_000 {
        many.push_str(",null");
    }
    many.push_str("]}\n");
    b.add(
        "token line",
        "1,000,000 masked positions with --max-positions unbounded",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--max-positions",
            "18446744073709551615",
        ],
        many,
        lines(0, &[&["\"id\":\"m\"", "\"verdict\""]]),
    )
    .timeout(SLOW);
    let mut eos = String::from("{\"id\": \"e\", \"tokens\": [0, 2, 1");
    for _ in 0..100_000 {
        eos.push_str(", 10");
    }
    eos.push_str("]}\n");
    b.add(
        "token line",
        "100,000 EOS ids",
        &args,
        eos,
        lines(0, &[&["\"id\":\"e\"", "\"verdict\":\"completable\""]]),
    );
    b.add(
        "token line",
        "--max-positions 0 and an empty canvas",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--max-positions",
            "0",
        ],
        "{\"id\": 1, \"tokens\": []}\n{\"id\": 2, \"tokens\": [0]}\n",
        lines(
            1,
            &[
                &["\"id\":1", "\"verdict\""],
                &["\"id\":2", "--max-positions"],
            ],
        ),
    );
    b.add(
        "token line",
        "gap id (no bytes) between brackets is refused",
        &args,
        "{\"id\": 1, \"tokens\": [0, 12, 1, 10]}\n",
        lines(0, &[&["\"id\":1", "not_completable"]]),
    );
    b.add(
        "token line",
        "empty token (\"\" in vocab) between brackets is refused",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &input("tokenizer/empty_token.json"),
        ],
        "{\"id\": 1, \"tokens\": [1, 0, 2, 3]}\n",
        lines(0, &[&["\"id\":1", "not_completable"]]),
    );

    // mask
    let m = ["mask", "--grammar", "json", "--tokenizer", small.as_str()];
    b.add(
        "mask",
        "mask: bad lines and positions, the run goes on",
        &m,
        concat!(
            "{\"id\": 1, \"tokens\": [0, null, 1]}\n",
            "{\"id\": 2, \"tokens\": [0, -3]}\n",
            "not json\n",
            "{\"id\": 4, \"tokens\": [0, null, 1, 10]}\n",
        ),
        lines(
            1,
            &[
                &["\"id\":1", "\"masks\""],
                &["\"id\":2", "tokens[1]"],
                &["\"line\":3", "JSON"],
                &["\"id\":4", "\"masks\""],
            ],
        ),
    );
    b.add(
        "mask",
        "--positions out of range, then not masked",
        &["mask", "--grammar", "json", "--tokenizer", &small, "--positions", "5"],
        "{\"id\": 1, \"tokens\": [0, null, 1]}\n{\"id\": 2, \"tokens\": [0, 1, 1, 1, 1, 1, 1]}\n{\"id\": 3, \"tokens\": [0, 2, 2, 2, 2, null, 1]}\n",
        lines(1, &[&["\"id\":1", "5"], &["\"id\":2", "5"], &["\"id\":3", "\"masks\""]]),
    );
    b.add(
        "mask",
        "--positions u64::MAX",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--positions",
            "18446744073709551615",
        ],
        "{\"id\": 1, \"tokens\": [0, null, 1]}\n",
        lines(1, &[&["\"id\":1", "18446744073709551615"]]),
    );
    b.add(
        "mask",
        "--positions past u64",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--positions",
            "99999999999999999999999",
        ],
        "",
        usage(&["--positions"]),
    );
    b.add(
        "mask",
        "--positions abc",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--positions",
            "abc",
        ],
        "",
        usage(&["--positions", "abc"]),
    );
    b.add(
        "mask",
        "--positions empty",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--positions",
            "",
        ],
        "",
        usage(&["--positions"]),
    );
    b.add(
        "mask",
        "--positions -1",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--positions=-1",
        ],
        "",
        usage(&["--positions", "-1"]),
    );
    let dup = vec!["1"; 50_000].join(",");
    b.add(
        "mask",
        "--positions listing one position 50,000 times",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--count-only",
            "--positions",
            &dup,
        ],
        "{\"id\": 1, \"tokens\": [0, null, 1]}\n",
        Expect::OkOrErr(vec![]),
    )
    .timeout(SLOW);
    let mut nulls = String::from("{\"id\": \"n\", \"tokens\": [4");
    for _ in 0..2_000 {
        nulls.push_str(",null");
    }
    nulls.push_str(",5]}\n");
    b.add(
        "mask",
        "mask every position of a 2,000-position canvas",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--count-only",
        ],
        nulls,
        lines(0, &[&["\"id\":\"n\"", "\"masks\""]]),
    )
    .timeout(SLOW);
    b.add(
        "mask",
        "mask with a grammar that fails on every line",
        &[
            "mask",
            "--grammar",
            &input("lark/nested_repeat.lark"),
            "--tokenizer",
            &small,
        ],
        "{\"id\": 1, \"tokens\": [0, null]}\n{\"id\": 2, \"tokens\": [0, null]}\n",
        lines(
            1,
            &[
                &["\"id\":1", "nested_repeat.lark:2:"],
                &["\"id\":2", "nested_repeat.lark:2:"],
            ],
        ),
    );
    b.add(
        "mask",
        "mask with the Qwen tokenizer on 200 lines",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &format!("{MANIFEST}/tests/data/qwen-bpe/tokenizer.json"),
            "--count-only",
        ],
        "{\"id\": 1, \"tokens\": [58, null, 60]}\n".repeat(200),
        Expect::Lines {
            code: 0,
            lines: vec![vec!["\"id\":1".to_string(), "count".to_string()]; 200],
        },
    )
    .timeout(SLOW);

    // Tokenizers.
    for (file, needles) in [
        ("not_json.json", &["not_json.json", "column"][..]),
        ("empty.json", &["empty.json", "column"][..]),
        ("no_model.json", &["no_model.json", "model"][..]),
        (
            "vocab_not_ids.json",
            &["vocab_not_ids.json", "model.vocab"][..],
        ),
        (
            "vocab_negative_id.json",
            &["vocab_negative_id.json", "model.vocab"][..],
        ),
        ("too_large.json", &["too_large.json", "16777217"][..]),
        ("u64_id.json", &["u64_id.json", "ids"][..]),
        ("added_u32_max.json", &["added_u32_max.json", "ids"][..]),
        ("duplicate_ids.json", &["duplicate_ids.json", "twice"][..]),
        ("no_eos.json", &["no_eos.json", "--eos"][..]),
        ("added_bad.json", &["added_bad.json", "added_tokens[0]"][..]),
        (
            "unigram_bad.json",
            &["unigram_bad.json", "model.vocab[0]"][..],
        ),
        (
            "vocab_array_of_junk.json",
            &["vocab_array_of_junk.json", "model.vocab[0]"][..],
        ),
        ("invalid_utf8.json", &["invalid_utf8.json", "column"][..]),
        ("nul.json", &["nul.json", "column"][..]),
    ] {
        b.add(
            "tokenizer",
            &format!("check --tokenizer {file}"),
            &[
                "check",
                "--grammar",
                "json",
                "--tokenizer",
                &input(&format!("tokenizer/{file}")),
            ],
            "{\"id\": 1, \"tokens\": [0]}\n",
            err(needles),
        );
    }
    b.add(
        "tokenizer",
        "check --tokenizer unigram_ok.json",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &input("tokenizer/unigram_ok.json"),
        ],
        "{\"id\": 1, \"tokens\": [0, 2, 1, 3]}\n",
        lines(0, &[&["\"id\":1", "\"verdict\":\"completable\""]]),
    );
    b.add(
        "tokenizer",
        "check --tokenizer largest_id.json (16,777,216 ids)",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &input("tokenizer/largest_id.json"),
        ],
        "{\"id\": 1, \"tokens\": [0, null, 1]}\n",
        lines(0, &[&["\"id\":1", "\"verdict\""]]),
    )
    .timeout(SLOW);
    b.add(
        "tokenizer",
        "mask --tokenizer largest_id.json (16,777,216 ids)",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            &input("tokenizer/largest_id.json"),
            "--count-only",
        ],
        "{\"id\": 1, \"tokens\": [0, null, 1]}\n",
        lines(0, &[&["\"id\":1", "\"masks\""]]),
    )
    .timeout(SLOW);
    b.add(
        "tokenizer",
        "--tokenizer is a directory",
        &["check", "--grammar", "json", "--tokenizer", "/"],
        "",
        err(&["tokenizer", "/", "directory"]),
    );
    b.add(
        "tokenizer",
        "--tokenizer missing",
        &[
            "mask",
            "--grammar",
            "json",
            "--tokenizer",
            "/nonexistent/tok.json",
        ],
        "",
        err(&["/nonexistent/tok.json"]),
    );
    b.add(
        "tokenizer",
        "--tokenizer that never ends (/dev/zero)",
        &["check", "--grammar", "json", "--tokenizer", "/dev/zero"],
        "",
        err(&["/dev/zero"]),
    )
    .timeout(SLOW)
    .max_rss(256);
    b.add(
        "tokenizer",
        "--eos names no token",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--eos",
            "<nope>",
        ],
        "",
        err(&["small.json", "<nope>"]),
    );
    b.add(
        "tokenizer",
        "--eos empty string",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--eos",
            "",
        ],
        "",
        err(&["small.json", "--eos"]),
    );
    b.add(
        "tokenizer",
        "--eos without --tokenizer",
        &["check", "--grammar", "json", "--eos", "x"],
        "",
        usage(&["--tokenizer"]),
    );
    b.add(
        "tokenizer",
        "check --tokenizer with --complete",
        &[
            "check",
            "--grammar",
            "json",
            "--tokenizer",
            &small,
            "--complete",
        ],
        "",
        usage(&["--complete"]),
    );
}
