//! `infill`: files with holes, as a careless or malicious user writes them, and bad options.

use super::{err, ok_or_err, usage, Battery};
use crate::{Case, Expect, SLOW};

/// Seconds for a run the model's context bounds (see the `--max-tokens` cases).
const CONTEXT_BOUND: f64 = 180.0;

/// `infill --grammar json FILE EXTRA...`.
fn case<'b>(
    b: &'b mut Battery,
    name: &str,
    file: &str,
    extra: &[&str],
    expect: Expect,
) -> &'b mut Case {
    let mut args = vec!["infill", "--grammar", "json", file];
    args.extend_from_slice(extra);
    b.add("infill", name, &args, "", expect)
}

pub(super) fn infill_cases(b: &mut Battery) {
    let none = b.file("infill/none.json", "[1, 2]");
    case(
        b,
        "a file without a hole marker",
        &none,
        &[],
        err(&["none.json", "no hole marker"]),
    );
    case(
        b,
        "an empty --marker",
        &none,
        &["--marker", ""],
        err(&["no hole marker \"\""]),
    );
    let one = b.file("infill/one.json", "<FILL>");
    case(
        b,
        "a file that is one hole",
        &one,
        &["--max-tokens", "64"],
        ok_or_err(&["one.json", "did not end"]),
    );
    let stuck = b.file("infill/stuck.json", "[1]\n<FILL>]");
    case(
        b,
        "a suffix no middle completes",
        &stuck,
        &[],
        err(&["stuck.json", "line 2, column 7"]),
    );
    let bad_end = b.file("infill/end.json", "[<FILL>] 1");
    case(
        b,
        "a file whose end cannot be reached",
        &bad_end,
        &[],
        err(&["end.json", "cannot end"]),
    );
    case(
        b,
        "a file that does not exist",
        "/nonexistent/f.json",
        &[],
        err(&["/nonexistent/f.json"]),
    );
    case(b, "a directory as the file", "/tmp", &[], err(&["/tmp"]));
    case(
        b,
        "/dev/zero as the file",
        "/dev/zero",
        &[],
        err(&["/dev/zero"]),
    )
    .max_rss(200);
    let big = b.file("infill/big.json", vec![b' '; 17 << 20]);
    case(b, "a 17 MiB file", &big, &[], err(&["big.json"])).max_rss(300);
    let latin1 = b.file("infill/latin1.json", b"[\"caf\xe9\", <FILL>]");
    case(
        b,
        "a file that is not UTF-8",
        &latin1,
        &[],
        err(&["latin1.json", "not UTF-8"]),
    );
    // Many holes: the file and its holes outgrow the model's context, named at the first.
    let many = format!("[{}1]", "<FILL>,".repeat(100_000));
    let many = b.file("infill/many.json", many);
    case(
        b,
        "100,000 holes",
        &many,
        &[],
        err(&["many.json", "context"]),
    )
    .timeout(SLOW)
    .max_rss(1500);
    let deep = format!("{}<FILL>{}", "[".repeat(50_000), "]".repeat(50_000));
    let deep = b.file("infill/deep.json", deep);
    case(
        b,
        "a hole 50,000 arrays deep",
        &deep,
        &[],
        ok_or_err(&["deep.json"]),
    )
    .timeout(SLOW)
    .max_rss(1500);
    let pair = b.file("infill/pair.json", "{\"a\": <FILL>}");
    case(
        b,
        "--max-tokens 0",
        &pair,
        &["--max-tokens", "0"],
        err(&["--max-tokens"]),
    );
    // Where the model never ends the hole, the model's context bounds it: one forward pass a
    // position up to 384 (30-50 s on 2 cores with the stage-5 model, which writes on).
    case(
        b,
        "--max-tokens 18446744073709551615",
        &pair,
        &["--max-tokens", "18446744073709551615"],
        ok_or_err(&["pair.json"]),
    )
    .timeout(CONTEXT_BOUND);
    case(
        b,
        "--max-tokens -1",
        &pair,
        &["--max-tokens", "-1"],
        usage(&["-1"]),
    );
    case(
        b,
        "--temperature NaN",
        &pair,
        &["--temperature", "NaN"],
        err(&["--temperature NaN"]),
    );
    case(
        b,
        "--temperature -1",
        &pair,
        &["--temperature=-1"],
        err(&["--temperature -1"]),
    );
    case(
        b,
        "--span 0",
        &pair,
        &["--span", "0", "--max-tokens", "32"],
        ok_or_err(&["did not end"]),
    );
    case(
        b,
        "--span 1000000",
        &pair,
        &["--span", "1000000"],
        err(&["pair.json", "context"]),
    );
    case(
        b,
        "--native --span 0",
        &pair,
        &["--native", "--span", "0"],
        err(&["pair.json", "at least one position"]),
    );
    case(
        b,
        "--native --span past any context",
        &pair,
        &["--native", "--span", "18446744073709551615"],
        err(&["pair.json", "context"]),
    );
    let touching = b.file("infill/touching.json", "[<FILL><FILL>]");
    case(
        b,
        "--native with two holes that touch",
        &touching,
        &["--native"],
        err(&["touching.json", "holes 0 and 1 touch at line 1, column 8"]),
    );
    case(
        b,
        "--native on a good file",
        &pair,
        &["--native", "--span", "8"],
        ok_or_err(&["pair.json"]),
    );
    case(
        b,
        "--model a missing folder",
        &pair,
        &["--model", "/nonexistent/m"],
        err(&["/nonexistent/m"]),
    );
    let bert = b.file("infill/bert/config.json", "{\"model_type\": \"bert\"}");
    let bert = bert.trim_end_matches("/config.json").to_string();
    case(
        b,
        "--model of another kind",
        &pair,
        &["--model", &bert],
        err(&["`model_type`", "bert"]),
    );
    let qwen = b.file(
        "infill/qwen2/config.json",
        "{\"model_type\": \"qwen2\", \"hidden_size\": 8, \"intermediate_size\": 8, \
         \"num_hidden_layers\": 1, \"num_attention_heads\": 2, \"vocab_size\": 8}",
    );
    let qwen = qwen.trim_end_matches("/config.json").to_string();
    case(
        b,
        "--model without weights",
        &pair,
        &["--model", &qwen],
        err(&["qwen2", "model.safetensors"]),
    );
    // Whether the embedded model ends its hole within 64 tokens is the model's doing (the
    // stage-4 model did here, the stage-5 one writes on): either way, a clean answer.
    case(
        b,
        "a good file",
        &pair,
        &["--max-tokens", "64"],
        ok_or_err(&["pair.json", "did not end within --max-tokens 64"]),
    );
}
