//! Arguments: `generate` and the other commands given bad or extreme options.

use std::ffi::OsString;

use super::{err, input, ok, ok_or_err, strs, usage, Battery};
use crate::{Expect, SLOW};

pub(super) fn cli_cases(b: &mut Battery) {
    let gen = |extra: &[&str]| -> Vec<String> {
        let mut v = strs(&["generate", "--grammar", "smiles"]);
        v.extend(strs(extra));
        v
    };
    let add = |b: &mut Battery, name: &str, extra: &[&str], expect: Expect| {
        let args = gen(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        b.add("arguments", name, &args, "", expect);
    };
    add(
        b,
        "generate --length 18446744073709551615",
        &["--length", "18446744073709551615"],
        err(&["--length", "context"]),
    );
    add(
        b,
        "generate --length 100000",
        &["--length", "100000"],
        err(&["--length 100000", "context"]),
    );
    add(
        b,
        "generate --length 0",
        &["--length", "0"],
        err(&["--length"]),
    );
    add(
        b,
        "generate --length -1",
        &["--length", "-1"],
        usage(&["-1"]),
    );
    add(
        b,
        "generate --length=-1",
        &["--length=-1"],
        usage(&["--length", "-1"]),
    );
    add(
        b,
        "generate --length 1e3",
        &["--length", "1e3"],
        usage(&["--length", "1e3"]),
    );
    add(b, "generate -n 0", &["-n", "0"], ok_or_err(&["-n"]));
    b.add(
        "arguments",
        "generate -n 18446744073709551615 streams",
        &[
            "generate",
            "--grammar",
            "smiles",
            "-n",
            "18446744073709551615",
        ],
        "",
        Expect::Streams,
    )
    .timeout(5.0)
    .max_rss(1000);
    add(
        b,
        "generate --steps 0",
        &["--steps", "0"],
        err(&["steps 0"]),
    );
    add(
        b,
        "generate --steps 18446744073709551615",
        &["--steps", "18446744073709551615"],
        ok_or_err(&["--steps"]),
    );
    add(
        b,
        "generate --steps 100000",
        &["--steps", "100000"],
        ok_or_err(&["--steps"]),
    );
    add(
        b,
        "generate --block 8 --steps 1 (fewer than the blocks)",
        &["--block", "8", "--steps", "1"],
        err(&["steps 1"]),
    );
    add(
        b,
        "generate --steps 0 -n 3 (one message, not one per output)",
        &["--steps", "0", "-n", "3"],
        err(&["steps 0"]),
    );
    add(
        b,
        "generate --block 0",
        &["--block", "0"],
        err(&["block_length 0"]),
    );
    add(
        b,
        "generate --block 7 (does not divide 40)",
        &["--block", "7"],
        err(&["block"]),
    );
    add(
        b,
        "generate --block 18446744073709551615",
        &["--block", "18446744073709551615"],
        err(&["block"]),
    );
    add(
        b,
        "generate --temperature=-1",
        &["--temperature=-1"],
        err(&["temperature -1"]),
    );
    add(
        b,
        "generate --temperature NaN",
        &["--temperature", "NaN"],
        err(&["temperature NaN"]),
    );
    add(
        b,
        "generate --temperature inf",
        &["--temperature", "inf"],
        err(&["temperature inf"]),
    );
    add(
        b,
        "generate --temperature 1e308",
        &["--temperature", "1e308"],
        ok_or_err(&["--temperature"]),
    );
    add(
        b,
        "generate --cfg-scale NaN",
        &["--cfg-scale", "NaN"],
        err(&["cfg_scale NaN"]),
    );
    add(
        b,
        "generate --cfg-scale 1e308",
        &["--cfg-scale", "1e308"],
        ok_or_err(&["--cfg-scale"]),
    );
    add(
        b,
        "generate --top-p 2 (LLaDA ignores it)",
        &["--top-p", "2"],
        ok_or_err(&["--top-p"]),
    );
    add(
        b,
        "generate --alg nope",
        &["--alg", "nope"],
        err(&["--alg nope"]),
    );
    add(
        b,
        "generate --dtype f64",
        &["--dtype", "f64"],
        err(&["--dtype f64"]),
    );
    add(
        b,
        "generate --cuda without CUDA",
        &["--cuda"],
        err(&["--cuda"]),
    );
    add(
        b,
        "generate --constraint nope",
        &["--constraint", "nope"],
        usage(&["--constraint", "nope"]),
    );
    add(
        b,
        "generate --seed u64::MAX -n 2",
        &["--seed", "18446744073709551615", "-n", "2"],
        ok(&[]),
    );
    add(
        b,
        "generate --max-resamples 0 --constraint reject",
        &["--max-resamples", "0", "--constraint", "reject"],
        ok(&[]),
    );
    add(
        b,
        "generate --max-rejections-per-position 0 --constraint reject",
        &[
            "--max-rejections-per-position",
            "0",
            "--constraint",
            "reject",
        ],
        ok(&[]),
    );
    add(
        b,
        "generate --eps 0",
        &["--eps", "0"],
        ok_or_err(&["--eps"]),
    );
    // The prompt `SMILES:\n` is 3 tokens of the 384-position context.
    add(
        b,
        "generate --length 381 --steps 8 (exactly the context)",
        &["--length", "381", "--steps", "8"],
        ok(&[]),
    );
    b.cases.last_mut().unwrap().timeout(SLOW);
    add(
        b,
        "generate --length 382 (one past the context)",
        &["--length", "382"],
        err(&["--length 382", "context"]),
    );
    let prompt = "x".repeat(100_000);
    add(
        b,
        "generate --prompt of 100,000 characters",
        &["--prompt", &prompt],
        err(&["context"]),
    );
    let prompt = "é🦀\u{1}\u{202e}".repeat(10_000);
    add(
        b,
        "generate --prompt of 40,000 odd characters",
        &["--prompt", &prompt],
        err(&["context"]),
    );
    add(
        b,
        "generate --prefill of 100,000 characters",
        &["--prefill", &"(".repeat(100_000)],
        err(&["context"]),
    );
    add(
        b,
        "generate --chat --system of 100,000 characters",
        &["--chat", "--system", &"s".repeat(100_000)],
        err(&["context"]),
    );
    b.add(
        "arguments",
        "generate --grammar nosuch",
        &["generate", "--grammar", "nosuch"],
        "",
        err(&["nosuch"]),
    );
    b.add(
        "arguments",
        "generate --grammar with a bad Lark file",
        &[
            "generate",
            "--grammar",
            &input("lark/nested_repeat.lark"),
            "--prompt",
            "x",
        ],
        "",
        err(&["nested_repeat.lark:2:"]),
    );
    b.add(
        "arguments",
        "generate --grammar with a schema of an empty language",
        &[
            "generate",
            "--grammar",
            &format!("schema:{}", input("schema/false.json")),
            "--prompt",
            "x",
        ],
        "",
        err(&["false.json"]),
    );
    b.add(
        "arguments",
        "generate --grammar json --unconstrained --json",
        &["generate", "--grammar", "json", "--unconstrained", "--json"],
        "",
        ok(&["\"valid\""]),
    );
    for sub in ["check", "mask"] {
        b.add(
            "arguments",
            &format!("{sub} --timeout-ms 0"),
            &[
                sub,
                "--grammar",
                "json",
                "--tokenizer",
                "x.json",
                "--timeout-ms",
                "0",
            ],
            "",
            usage(&["--timeout-ms", "0"]),
        );
    }
    b.add("arguments", "no arguments", &[], "", usage(&["Usage"]));
    b.add(
        "arguments",
        "unknown subcommand",
        &["frobnicate"],
        "",
        usage(&["frobnicate"]),
    );
    b.add(
        "arguments",
        "check --max-positions=-1",
        &["check", "--max-positions=-1"],
        "",
        usage(&["--max-positions", "-1"]),
    );
    b.add(
        "arguments",
        "check --max-positions 1e9",
        &["check", "--max-positions", "1e9"],
        "",
        usage(&["--max-positions"]),
    );
    b.add(
        "arguments",
        "grammar stats with no spec",
        &["grammar", "stats"],
        "",
        usage(&["SPEC"]),
    );
    b.add(
        "arguments",
        "grammar stats of an unknown spec",
        &["grammar", "stats", "nope"],
        "",
        err(&["nope"]),
    );
    {
        use std::os::unix::ffi::OsStringExt;
        let case = b.add(
            "arguments",
            "grammar spec that is not UTF-8",
            &["grammar", "stats"],
            "",
            usage(&["UTF-8"]),
        );
        case.args.push(OsString::from_vec(b"g\xff.lark".to_vec()));
        let case = b.add(
            "arguments",
            "--prompt that is not UTF-8",
            &["generate", "--grammar", "smiles", "--prompt"],
            "",
            usage(&["--prompt", "UTF-8"]),
        );
        case.args.push(OsString::from_vec(b"\xff\xfe".to_vec()));
    }
    b.add(
        "arguments",
        "grammar spec of 10,000 characters",
        &["grammar", "stats", &format!("{}.lark", "a".repeat(10_000))],
        "",
        err(&["cannot read grammar file", "aaaa.lark"]),
    );
}
