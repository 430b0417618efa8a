//! Exact token bytes on a production-size byte-level BPE vocabulary (Qwen, with Dream's mask
//! token): the bytes of an encoding concatenate to the original UTF-8, and tokens may hold
//! partial UTF-8 sequences.

use std::path::{Path, PathBuf};

use lacuna::diffusion::{ChatTemplate, Tokens};

fn qwen() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/qwen-bpe/tokenizer.json")
}

#[test]
fn token_bytes_reassemble_the_text_exactly() {
    let tok = Tokens::load(&qwen()).unwrap();
    assert_eq!(tok.mask_id(), 151_666);
    assert!(tok.len() >= 151_667);
    let text = "Grüße, 世界! Ελληνικά — ok 👩‍💻🎉 naïve café\n\tx = [1, 2];  ´`\u{7f}\r\n";
    let ids = tok.encode(text).unwrap();
    assert_eq!(tok.decode_bytes(&ids), text.as_bytes());
    // Some token of the encoding is a partial UTF-8 sequence (the emoji are split).
    let partial = ids
        .iter()
        .filter(|&&id| std::str::from_utf8(tok.bytes(id)).is_err())
        .count();
    assert!(partial > 0, "no partial UTF-8 token in {ids:?}");
    // A single byte of the vocabulary stands for itself.
    let nl = tok.encode("\n").unwrap();
    assert_eq!(tok.bytes(nl[0]), b"\n");
}

#[test]
fn special_tokens_are_their_content() {
    let tok = Tokens::load(&qwen()).unwrap();
    assert_eq!(tok.bytes(151_666), b"<|mask|>");
    let eot = tok.token_id("<|im_end|>").unwrap();
    assert_eq!(tok.bytes(eot), b"<|im_end|>");
    assert!(tok.is_special(eot));
    let prompt = ChatTemplate::Dream.render(None, "List two numbers.", "```json\n");
    let ids = tok.encode(&prompt).unwrap();
    assert!(ids.contains(&eot));
    assert_eq!(tok.decode_bytes(&ids), prompt.as_bytes());
}

#[test]
fn tokenizer_errors_name_the_file() {
    let e = Tokens::load(Path::new("/nonexistent/tokenizer.json"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("/nonexistent/tokenizer.json"), "{e}");
    let e = Tokens::load_with_mask(&qwen(), Some("<|no_such_mask|>"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("mask") && e.contains("tokenizer.json"), "{e}");
    let dir = std::env::temp_dir().join(format!("lacuna-tok-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("tokenizer.json");
    std::fs::write(&bad, "{not json").unwrap();
    let e = Tokens::load(&bad).err().unwrap().to_string();
    assert!(e.contains("tokenizer.json"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}
