//! `tokenizer.json` and `lacuna.json` of a model folder, and `--tokenizer` beside one.

use super::{edit_text, model_dir, run, Battery};
use crate::cases::{err, input, ok_or_err};
use crate::{MANIFEST, SLOW};

pub(super) fn tokenizer_cases(b: &mut Battery, good: &str) {
    let d = model_dir(b, "no_tokenizer", |d| {
        std::fs::remove_file(d.join("tokenizer.json")).unwrap()
    });
    run(
        b,
        "no tokenizer.json",
        &d,
        err(&["no_tokenizer", "tokenizer.json"]),
    );
    let d = model_dir(b, "tokenizer_garbage", |d| {
        std::fs::write(d.join("tokenizer.json"), "{\"model\": 5").unwrap()
    });
    run(
        b,
        "tokenizer.json garbage",
        &d,
        err(&["tokenizer_garbage", "tokenizer.json"]),
    );
    let d = model_dir(b, "tokenizer_empty", |d| {
        std::fs::write(d.join("tokenizer.json"), "").unwrap()
    });
    run(
        b,
        "tokenizer.json empty",
        &d,
        err(&["tokenizer_empty", "tokenizer.json"]),
    );
    let d = model_dir(b, "tokenizer_no_mask", |d| {
        let path = d.join("tokenizer.json");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("<|mask|>", "<|nomask|>")).unwrap();
    });
    run(
        b,
        "tokenizer.json without a mask token",
        &d,
        err(&["tokenizer_no_mask", "mask"]),
    );
    let d = model_dir(b, "tokenizer_added_u32_max", |d| {
        edit_text(
            &d.join("tokenizer.json"),
            "\"added_tokens\":[",
            "\"added_tokens\":[{\"id\":4294967294,\"content\":\"<|evil|>\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true},",
        )
    });
    run(
        b,
        "tokenizer.json added token id 4294967294",
        &d,
        ok_or_err(&["tokenizer_added_u32_max", "tokenizer.json"]),
    );
    b.cases.last_mut().unwrap().timeout(SLOW);
    let d = model_dir(b, "tokenizer_zero", |d| {
        std::fs::remove_file(d.join("tokenizer.json")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.join("tokenizer.json")).unwrap();
    });
    run(
        b,
        "tokenizer.json never ends (/dev/zero)",
        &d,
        err(&["tokenizer_zero", "tokenizer.json"]),
    );
    b.cases.last_mut().unwrap().timeout(SLOW);
    let d = model_dir(b, "card_garbage", |d| {
        std::fs::write(d.join("lacuna.json"), "{\"tasks\": 5}").unwrap()
    });
    run(
        b,
        "lacuna.json garbage",
        &d,
        err(&["card_garbage", "lacuna.json", "tasks"]),
    );
    let d = model_dir(b, "card_length_huge", |d| {
        edit_text(
            &d.join("lacuna.json"),
            "\"length\": 40",
            "\"length\": 18446744073709551615",
        )
    });
    b.add(
        "model folder",
        "lacuna.json task length u64::MAX",
        &["generate", "--model", &d, "--grammar", "smiles"],
        "",
        err(&["card_length_huge", "context"]),
    );
    let d = model_dir(b, "card_length_zero", |d| {
        edit_text(&d.join("lacuna.json"), "\"length\": 40", "\"length\": 0")
    });
    b.add(
        "model folder",
        "lacuna.json task length 0",
        &["generate", "--model", &d, "--grammar", "smiles"],
        "",
        err(&["length"]),
    );
    b.add(
        "model folder",
        "--tokenizer garbage beside a good folder",
        &[
            "generate",
            "--model",
            good,
            "--tokenizer",
            &input("tokenizer/not_json.json"),
            "--grammar",
            "smiles",
            "--length",
            "16",
        ],
        "",
        err(&["not_json.json"]),
    );
    b.add(
        "model folder",
        "--tokenizer with a different mask id",
        &[
            "generate",
            "--model",
            good,
            "--tokenizer",
            &format!("{MANIFEST}/tests/data/qwen-bpe/tokenizer.json"),
            "--grammar",
            "smiles",
            "--length",
            "16",
            "--prompt",
            "x",
        ],
        "",
        err(&["tokenizer", "mask"]),
    );
    b.add(
        "model folder",
        "LLaDA test checkpoint without a tokenizer",
        &[
            "generate",
            "--model",
            &format!("{MANIFEST}/tests/data/llada-tiny"),
            "--prompt",
            "x",
            "--length",
            "8",
        ],
        "",
        err(&["llada-tiny", "tokenizer.json"]),
    );
}
