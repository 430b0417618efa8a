//! `lacuna generate` on the fixture LLaDA checkpoint with a byte-level tokenizer made for its
//! 320-token vocabulary: constrained output follows the grammar; bad input names the file.

use std::path::{Path, PathBuf};
use std::process::Command;

use lacuna::diffusion::byte_to_char;

#[path = "common/tokenizer_json.rs"]
mod tokenizer_json;
use tokenizer_json::byte_level_tokenizer_json;

/// A byte-level BPE tokenizer.json: ids < 256 are bytes, 300 `<|endoftext|>`, 310
/// `<|mdm_mask|>`, other ids two-byte tokens.
fn tokenizer_json() -> String {
    let alphabet = byte_to_char();
    let mut vocab = serde_json::Map::new();
    for id in (0..320usize).filter(|&id| id != 300 && id != 310) {
        let text = if id < 256 {
            alphabet[id].to_string()
        } else {
            format!("{}{}", alphabet[b'~' as usize], alphabet[id - 256])
        };
        vocab.insert(text, id.into());
    }
    byte_level_tokenizer_json(
        vocab,
        &[(300, "<|endoftext|>".into()), (310, "<|mdm_mask|>".into())],
    )
}

fn checkpoint(tag: &str, with_tokenizer: bool) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/llada-tiny");
    let dir = std::env::temp_dir().join(format!("lacuna-cli-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    if with_tokenizer {
        std::fs::write(dir.join("tokenizer.json"), tokenizer_json()).unwrap();
    }
    dir
}

fn lacuna(args: &[&str]) -> (String, String, bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_lacuna"))
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.success(),
    )
}

#[test]
fn generate_follows_the_grammar() {
    let dir = checkpoint("ok", true);
    let grammar = dir.join("list.lark");
    std::fs::write(&grammar, "start: \"[\" [D (\",\" D)*] \"]\"\nD: /[0-9]+/\n").unwrap();
    let (out, err, ok) = lacuna(&[
        "generate",
        "--model",
        dir.to_str().unwrap(),
        "--grammar",
        grammar.to_str().unwrap(),
        "--prompt",
        "numbers: ",
        "--length",
        "16",
        "--steps",
        "16",
        "--block",
        "8",
        "--max-resamples",
        "100000",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let text = v["text"].as_str().unwrap();
    assert!(text.starts_with('[') && text.ends_with(']'), "{text}");
    assert!(v["stats"]["forward_passes"].as_u64().unwrap() > 0);
    assert_eq!(v["ids"].as_array().unwrap().len(), 16);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn generate_reports_bad_input() {
    let dir = checkpoint("bad", false);
    let d = dir.to_str().unwrap();
    let (_, err, ok) = lacuna(&["generate", "--model", d, "--prompt", "x"]);
    assert!(!ok);
    assert!(err.contains("tokenizer.json"), "{err}");
    std::fs::write(dir.join("tokenizer.json"), tokenizer_json()).unwrap();
    let (_, err, ok) = lacuna(&[
        "generate",
        "--model",
        d,
        "--prompt",
        "x",
        "--gen-length",
        "10",
        "--block-length",
        "4",
    ]);
    assert!(!ok);
    assert!(err.contains("block_length 4"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// A JSON Schema steers by its generation subset unless `--whole-schema`: objects that name
/// their members take no others (the fixture model, random weights, writes keys of its own
/// when it may), and every output is valid either way.
#[test]
fn generate_keeps_to_the_keys_a_schema_names() {
    let dir = checkpoint("schema", true);
    let schema = dir.join("point.json");
    std::fs::write(
        &schema,
        r#"{"type": "object", "properties": {"x": {"type": "integer"}}}"#,
    )
    .unwrap();
    let spec = format!("schema:{}", schema.display());
    let run = |extra: &[&str]| -> Vec<serde_json::Value> {
        let mut args = vec![
            "generate",
            "--model",
            dir.to_str().unwrap(),
            "--grammar",
            &spec,
            "--prompt",
            "point: ",
            "--length",
            "24",
            "--block",
            "8",
            "-n",
            "6",
            "--temperature",
            "1",
            "--json",
        ];
        args.extend_from_slice(extra);
        let (out, err, ok) = lacuna(&args);
        assert!(ok, "{err}");
        out.lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                assert_eq!(v["valid"], true, "{l}");
                serde_json::from_str(v["text"].as_str().unwrap()).unwrap()
            })
            .collect()
    };
    let other_keys = |outputs: &[serde_json::Value]| {
        outputs
            .iter()
            .flat_map(|v| v.as_object().unwrap().keys())
            .filter(|k| *k != "x")
            .count()
    };
    assert_eq!(other_keys(&run(&[])), 0);
    assert!(other_keys(&run(&["--whole-schema"])) > 0);
    std::fs::remove_dir_all(dir).unwrap();
}
