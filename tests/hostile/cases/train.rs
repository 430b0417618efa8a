//! Training files: `train` given bad data, options and checkpoints.

use std::path::Path;

use super::{err, input, ok, ok_or_err, usage, Battery};
use crate::{Expect, MANIFEST, SLOW};

pub(super) fn train_cases(b: &mut Battery) {
    let out = |b: &Battery, tag: &str| b.path(&format!("train/{tag}"));
    // A model small enough to train a step in milliseconds; `extra` overrides these.
    let small = [
        ("--steps", "1"),
        ("--d-model", "16"),
        ("--heads", "2"),
        ("--layers", "1"),
        ("--mlp-hidden", "16"),
        ("--vocab-size", "300"),
        ("--max-len", "64"),
        ("--batch-tokens", "64"),
    ];
    let run = |b: &mut Battery, name: &str, corpus: &str, extra: &[&str], expect: Expect| {
        let o = out(b, &name.replace(|c: char| !c.is_ascii_alphanumeric(), "_"));
        let mut args = vec!["train", "--corpus", corpus, "--out", &o, "--quiet"];
        for (flag, value) in small {
            if !extra.iter().any(|e| e.split('=').next() == Some(flag)) {
                args.extend_from_slice(&[flag, value]);
            }
        }
        args.extend_from_slice(extra);
        b.add("train", name, &args, "", expect).timeout(SLOW);
    };
    let ok_corpus = input("corpus/ok.jsonl");
    run(b, "a small good run", &ok_corpus, &[], ok(&["\"steps\":1"]));
    run(
        b,
        "corpus missing",
        "/nonexistent/corpus.jsonl",
        &[],
        err(&["/nonexistent/corpus.jsonl"]),
    );
    run(
        b,
        "corpus is a directory",
        "/",
        &[],
        err(&["/", "directory"]),
    );
    run(
        b,
        "corpus never ends (/dev/zero)",
        "/dev/zero",
        &[],
        err(&["/dev/zero"]),
    );
    b.cases.last_mut().unwrap().max_rss(256);
    run(
        b,
        "corpus empty",
        &input("corpus/empty.jsonl"),
        &[],
        err(&["empty.jsonl", "no examples"]),
    );
    run(
        b,
        "corpus of blank lines",
        &input("corpus/blank_lines.jsonl"),
        &[],
        err(&["blank_lines.jsonl", "no examples"]),
    );
    run(
        b,
        "corpus with garbage on line 3",
        &input("corpus/garbage_line3.jsonl"),
        &[],
        err(&["garbage_line3.jsonl:3"]),
    );
    run(
        b,
        "corpus line without answer",
        &input("corpus/missing_answer.jsonl"),
        &[],
        err(&["missing_answer.jsonl:2", "answer"]),
    );
    run(
        b,
        "corpus line with an empty answer",
        &input("corpus/empty_answer.jsonl"),
        &[],
        err(&["empty_answer.jsonl:2", "answer"]),
    );
    run(
        b,
        "corpus answer is a number",
        &input("corpus/answer_number.jsonl"),
        &[],
        err(&["answer_number.jsonl:2", "answer"]),
    );
    run(
        b,
        "corpus line not an object",
        &input("corpus/not_object.jsonl"),
        &[],
        err(&["not_object.jsonl:1"]),
    );
    run(
        b,
        "corpus invalid UTF-8 on line 2",
        &input("corpus/invalid_utf8.jsonl"),
        &[],
        err(&["invalid_utf8.jsonl:2", "UTF-8"]),
    );
    run(
        b,
        "corpus NUL bytes on line 2",
        &input("corpus/nul_bytes.jsonl"),
        &[],
        err(&["nul_bytes.jsonl:2"]),
    );
    run(
        b,
        "corpus CRLF line endings",
        &input("corpus/crlf.jsonl"),
        &[],
        ok(&["\"steps\":1"]),
    );
    run(
        b,
        "every example longer than --max-len",
        &input("corpus/all_too_long.jsonl"),
        &["--max-len", "8"],
        err(&["smiles", "8 tokens"]),
    );
    let huge = format!(
        "{{\"task\": \"smiles\", \"prompt\": \"SMILES:\\n\", \"answer\": \"{}\"}}\n{{\"task\": \"smiles\", \"prompt\": \"SMILES:\\n\", \"answer\": \"CCO\"}}\n",
        "C".repeat(10 << 20)
    );
    let p = b.file("corpus_huge_line.jsonl", huge);
    run(
        b,
        "corpus with a 10 MB answer",
        &p,
        &[],
        ok_or_err(&["corpus_huge_line.jsonl"]),
    );
    run(
        b,
        "--steps 0",
        &ok_corpus,
        &["--steps", "0"],
        err(&["--steps"]),
    );
    run(b, "--lr NaN", &ok_corpus, &["--lr", "NaN"], err(&["--lr"]));
    run(b, "--lr=-1", &ok_corpus, &["--lr=-1"], err(&["--lr"]));
    run(
        b,
        "--lr 1e308",
        &ok_corpus,
        &["--lr", "1e308"],
        ok_or_err(&["--lr"]),
    );
    run(
        b,
        "--heads 0",
        &ok_corpus,
        &["--heads", "0"],
        err(&["--heads"]),
    );
    run(
        b,
        "--d-model 3",
        &ok_corpus,
        &["--d-model", "3"],
        err(&["--heads", "--d-model"]),
    );
    run(
        b,
        "--max-len 0",
        &ok_corpus,
        &["--max-len", "0"],
        err(&["--max-len"]),
    );
    run(
        b,
        "--vocab-size 0",
        &ok_corpus,
        &["--vocab-size", "0"],
        err(&["vocabulary size 0"]),
    );
    run(
        b,
        "--vocab-size 1",
        &ok_corpus,
        &["--vocab-size", "1"],
        err(&["vocabulary size 1"]),
    );
    run(
        b,
        "--vocab-size 18446744073709551615",
        &ok_corpus,
        &["--vocab-size", "18446744073709551615"],
        ok_or_err(&["--vocab-size"]),
    );
    run(
        b,
        "--d-model 100000000 (400 GB of weights)",
        &ok_corpus,
        &["--d-model", "100000000"],
        err(&["--d-model"]),
    );
    run(
        b,
        "--layers 100000000",
        &ok_corpus,
        &["--layers", "100000000"],
        err(&["--layers"]),
    );
    run(
        b,
        "--mlp-hidden 18446744073709551615",
        &ok_corpus,
        &["--mlp-hidden", "18446744073709551615"],
        err(&["--mlp-hidden"]),
    );
    run(
        b,
        "--batch-tokens 18446744073709551615",
        &ok_corpus,
        &["--batch-tokens", "18446744073709551615"],
        err(&["--batch-tokens"]),
    );
    run(
        b,
        "--max-len 18446744073709551615",
        &ok_corpus,
        &["--max-len", "18446744073709551615"],
        ok_or_err(&["--max-len"]),
    );
    run(
        b,
        "--minutes=-1",
        &ok_corpus,
        &["--minutes=-1"],
        err(&["--minutes"]),
    );
    run(
        b,
        "--minutes NaN",
        &ok_corpus,
        &["--minutes", "NaN"],
        err(&["--minutes"]),
    );
    run(
        b,
        "--minutes 1e300",
        &ok_corpus,
        &["--minutes", "1e300"],
        ok_or_err(&["--minutes"]),
    );
    run(
        b,
        "--checkpoint-every 0",
        &ok_corpus,
        &["--checkpoint-every", "0"],
        err(&["--checkpoint-every"]),
    );
    let f = b.file("train/out_is_a_file", "x");
    let args = [
        "train", "--corpus", &ok_corpus, "--out", &f, "--steps", "1", "--quiet",
    ];
    b.add(
        "train",
        "--out is a file",
        &args,
        "",
        err(&["cannot write", "out_is_a_file"]),
    )
    .timeout(SLOW);
    let o = out(b, "garbage_state");
    std::fs::create_dir_all(&o).unwrap();
    std::fs::write(Path::new(&o).join("train_state.json"), "{\"step\": ").unwrap();
    let args = [
        "train", "--corpus", &ok_corpus, "--out", &o, "--steps", "1", "--quiet",
    ];
    b.add(
        "train",
        "resume from a garbage train_state.json",
        &args,
        "",
        err(&["train_state.json"]),
    )
    .timeout(SLOW);
    let o = out(b, "state_without_weights");
    std::fs::create_dir_all(&o).unwrap();
    std::fs::write(
        Path::new(&o).join("train_state.json"),
        "{\"step\": 1, \"seconds\": 0, \"losses\": [], \"options\": 5}",
    )
    .unwrap();
    let args = [
        "train", "--corpus", &ok_corpus, "--out", &o, "--steps", "2", "--quiet",
    ];
    b.add(
        "train",
        "resume from a state with bad options",
        &args,
        "",
        err(&["train_state.json", "options"]),
    )
    .timeout(SLOW);
    // Starting from another model folder, and weighting tasks.
    let missing = "/nonexistent/model".to_string();
    run(
        b,
        "--init-from a folder that does not exist",
        &ok_corpus,
        &["--init-from", &missing],
        err(&["--init-from /nonexistent/model: not a folder"]),
    );
    let shipped = format!("{MANIFEST}/models/default");
    run(
        b,
        "--init-from a model of another shape",
        &ok_corpus,
        &["--init-from", &shipped],
        err(&["--init-from", "`d_model` is 320 there, 16 here"]),
    );
    let llada_tiny = format!("{MANIFEST}/tests/data/llada-tiny");
    run(
        b,
        "--init-from a folder without tokenizer.json",
        &ok_corpus,
        &["--init-from", &llada_tiny],
        err(&["llada-tiny/tokenizer.json"]),
    );
    run(
        b,
        "--task-weights without =",
        &ok_corpus,
        &["--task-weights", "smiles"],
        usage(&["expected TASK=WEIGHT"]),
    );
    run(
        b,
        "--task-weights naming no task of the corpus",
        &ok_corpus,
        &["--task-weights", "rust=2"],
        err(&["no task `rust`", "smiles"]),
    );
    run(
        b,
        "--task-weights all zero",
        &ok_corpus,
        &["--task-weights", "smiles=0"],
        err(&["every task has weight 0"]),
    );
    run(
        b,
        "--task-weights NaN",
        &ok_corpus,
        &["--task-weights", "smiles=NaN"],
        err(&["not a number ≥ 0"]),
    );
}
