//! `lacuna infill` as a user runs it: the embedded diffusion model on files with holes (the
//! filled file read by serde_json), a causal FIM checkpoint (the tiny Qwen2 one, with a
//! byte-level tokenizer made for its 384 ids and its sentinels), and bad input named before
//! any model is loaded.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "common/tokenizer_json.rs"]
mod tokenizer_json;
use tokenizer_json::{write_qwen2_fim_checkpoint, QWEN_FIM_SENTINELS};

fn lacuna(args: &[&str]) -> (String, String, bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_lacuna"))
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lacuna-infill-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// The pieces of `template` around its `<FILL>` markers appear in `filled` in order, with the
/// holes' texts between them.
fn holes_filled(template: &str, filled: &str, texts: &[&str]) -> bool {
    let pieces: Vec<&str> = template.split("<FILL>").collect();
    let mut expected = String::new();
    for (i, p) in pieces.iter().enumerate() {
        expected.push_str(p);
        if let Some(t) = texts.get(i) {
            expected.push_str(t);
        }
    }
    expected == filled
}

#[test]
fn the_embedded_model_fills_json_holes() {
    let dir = scratch("json");
    let templates = [
        r#"{"name": "Edinburgh", "size": <FILL>, "tags": [<FILL>]}"#,
        r#"{"id": <FILL>, "price": 12.5}"#,
        "[<FILL>]",
    ];
    for (i, template) in templates.iter().enumerate() {
        let file = write(&dir, &format!("{i}.json"), template);
        let (out, err, ok) = lacuna(&["infill", "-g", "json", &file, "--json"]);
        let record: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| {
            panic!("{template}: {e}: {out} {err}");
        });
        let text = record["text"].as_str().unwrap();
        let holes = record["holes"].as_array().unwrap();
        let texts: Vec<&str> = holes.iter().map(|h| h["text"].as_str().unwrap()).collect();
        if ok {
            // Every hole ended and the file parses: the model wrote every byte of the holes.
            assert_eq!(record["valid"], true);
            assert_eq!(holes.len(), template.matches("<FILL>").count());
            assert!(holes_filled(template, text, &texts), "{text}");
            serde_json::from_str::<serde_json::Value>(text)
                .unwrap_or_else(|e| panic!("{text:?}: {e}"));
        } else {
            assert!(err.contains("did not end within --max-tokens"), "{err}");
        }
    }
    // Plain output is the filled file itself.
    let file = write(&dir, "plain.json", "[<FILL>]");
    let (out, _, ok) = lacuna(&["infill", "-g", "json", &file]);
    if ok {
        serde_json::from_str::<serde_json::Value>(&out).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--native`: every hole at once on one canvas; the record tells each hole's text, and the
/// filled file parses (`--unconstrained`: whether it parses is reported, not promised).
#[test]
fn the_embedded_model_fills_json_holes_natively() {
    let dir = scratch("native");
    let template = r#"{"name": <FILL>, "tags": [<FILL>], "size": <FILL>}"#;
    let file = write(&dir, "n.json", template);
    for seed in ["0", "1"] {
        let args = [
            "infill", "-g", "json", &file, "--native", "--span", "6", "--json",
        ];
        let (out, err, ok) = lacuna(&[&args[..], &["--seed", seed, "--temperature", "1"]].concat());
        assert!(ok, "{out} {err}");
        let record: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(record["native"], true);
        assert_eq!(record["valid"], true);
        let text = record["text"].as_str().unwrap();
        let holes = record["holes"].as_array().unwrap();
        let texts: Vec<&str> = holes.iter().map(|h| h["text"].as_str().unwrap()).collect();
        assert_eq!(texts.len(), 3);
        assert!(holes_filled(template, text, &texts), "{text}");
        serde_json::from_str::<serde_json::Value>(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    }
    // Without the grammar: the same spans, the fixed text kept, no mask computed, and
    // "valid" is what serde_json says of the file.
    for seed in ["0", "1"] {
        let args = [
            "infill",
            "-g",
            "json",
            &file,
            "--native",
            "--unconstrained",
            "--span",
            "6",
            "--json",
        ];
        let (out, err, _) = lacuna(&[&args[..], &["--seed", seed, "--temperature", "1"]].concat());
        let record: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{out} {err}: {e}"));
        assert_eq!(record["constrained"], false, "{record}");
        assert_eq!(record["masks"], 0, "{record}");
        let text = record["text"].as_str().unwrap();
        let holes = record["holes"].as_array().unwrap();
        let texts: Vec<&str> = holes.iter().map(|h| h["text"].as_str().unwrap()).collect();
        assert!(holes_filled(template, text, &texts), "{text}");
        let parses = serde_json::from_str::<serde_json::Value>(text).is_ok();
        assert_eq!(record["valid"], parses, "{text:?}");
    }
    let (_, err, ok) = lacuna(&["infill", "-g", "json", &file, "--native", "--span", "0"]);
    assert!(!ok && err.contains("at least one position"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_named_before_a_model_is_loaded() {
    let dir = scratch("bad");
    let no_marker = write(&dir, "none.json", "[1, 2]");
    let (_, err, ok) = lacuna(&["infill", "-g", "json", &no_marker]);
    assert!(!ok);
    assert!(
        err.contains("none.json") && err.contains("no hole marker \"<FILL>\""),
        "{err}"
    );
    let (_, err, ok) = lacuna(&["infill", "-g", "json", &no_marker, "--marker", "2"]);
    assert!(ok || err.contains("did not end"), "{err}");
    // `[1]` then anything then `]`: no filling makes JSON; the second line is named.
    let stuck = write(&dir, "stuck.json", "[1]\n  <FILL>\n]");
    let (_, err, ok) = lacuna(&["infill", "-g", "json", &stuck]);
    assert!(!ok);
    assert!(
        err.contains("stuck.json") && err.contains("line 2, column 9"),
        "{err}"
    );
    let (_, err, ok) = lacuna(&["infill", "-g", "json", "/nonexistent/f.json"]);
    assert!(!ok && err.contains("/nonexistent/f.json"), "{err}");
    let latin1 = dir.join("latin1.json");
    std::fs::write(&latin1, b"[\"caf\xe9\", <FILL>]").unwrap();
    let (_, err, ok) = lacuna(&["infill", "-g", "json", latin1.to_str().unwrap()]);
    assert!(!ok && err.contains("not UTF-8 (at byte 5)"), "{err}");
    let (_, err, ok) = lacuna(&["infill", "-g", "nosuch", &stuck]);
    assert!(!ok && err.contains("--grammar nosuch"), "{err}");
    let (_, err, ok) = lacuna(&["infill", "-g", "json", &stuck, "--max-tokens", "0"]);
    assert!(!ok && err.contains("--max-tokens"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn qwen2_checkpoint(tag: &str, sentinels: &[(u32, &str)]) -> PathBuf {
    let dir = scratch(tag);
    write_qwen2_fim_checkpoint(&dir, sentinels);
    dir
}

#[test]
fn a_causal_fim_checkpoint_fills_holes() {
    let dir = qwen2_checkpoint("qwen2", &QWEN_FIM_SENTINELS);
    let model = dir.to_str().unwrap();
    let template = r#"{"a": <FILL>, "b": [<FILL>]}"#;
    let file = write(&dir, "in.json", template);
    let mut valid = 0;
    for seed in 0..4 {
        let seed = seed.to_string();
        let (out, err, ok) = lacuna(&[
            "infill",
            "-g",
            "json",
            &file,
            "--model",
            model,
            "--json",
            "--temperature",
            "1",
            "--seed",
            &seed,
            "--max-tokens",
            "64",
        ]);
        let record: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
        let text = record["text"].as_str().unwrap();
        if ok {
            valid += 1;
            serde_json::from_str::<serde_json::Value>(text)
                .unwrap_or_else(|e| panic!("{text:?}: {e}"));
        } else {
            assert!(err.contains("did not end within --max-tokens 64"), "{err}");
        }
    }
    eprintln!("{valid} of 4 seeds ended every hole");
    // A tokenizer without the family's FIM sentinels: the model cannot fill in the middle.
    let plain = qwen2_checkpoint("plain", &[(360, "<|endoftext|>")]);
    let (_, err, ok) = lacuna(&[
        "infill",
        "-g",
        "json",
        &file,
        "--model",
        plain.to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("<|fim_prefix|>"), "{err}");
    // A folder of another kind of model.
    let bert = scratch("bert");
    std::fs::write(bert.join("config.json"), r#"{"model_type": "bert"}"#).unwrap();
    let (_, err, ok) = lacuna(&[
        "infill",
        "-g",
        "json",
        &file,
        "--model",
        bert.to_str().unwrap(),
    ]);
    assert!(
        !ok && err.contains("`model_type`") && err.contains("bert"),
        "{err}"
    );
    for d in [dir, plain, bert] {
        std::fs::remove_dir_all(d).unwrap();
    }
}
