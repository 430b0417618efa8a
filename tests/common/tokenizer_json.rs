//! Byte-level BPE `tokenizer.json` files written for the tiny fixture models (whose
//! vocabularies are too small for a real tokenizer). Shared by `tests/cli_generate.rs`,
//! `tests/cli_infill.rs` and `tests/cli_eval.rs`.

#![allow(dead_code)]

/// A byte-level BPE `tokenizer.json` with no merges: `vocab` maps regular tokens (byte-level
/// strings) to ids, and each `(id, content)` of `specials` is an added special token (also
/// in the vocabulary, as added tokens take the id of their content there).
pub fn byte_level_tokenizer_json(
    mut vocab: serde_json::Map<String, serde_json::Value>,
    specials: &[(u32, String)],
) -> String {
    let mut added = Vec::new();
    for (id, content) in specials {
        vocab.insert(content.clone(), (*id).into());
        added.push(
            serde_json::json!({"id": id, "content": content, "single_word": false,
            "lstrip": false, "rstrip": false, "normalized": false, "special": true}),
        );
    }
    let byte_level = serde_json::json!({"type": "ByteLevel", "add_prefix_space": false,
        "trim_offsets": true, "use_regex": true});
    serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": added,
        "normalizer": null, "pre_tokenizer": byte_level, "post_processor": null,
        "decoder": byte_level,
        "model": {"type": "BPE", "dropout": null, "unk_token": null,
            "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": false,
            "byte_fallback": false, "vocab": vocab, "merges": []}
    })
    .to_string()
}

/// The tiny Qwen2 FIM checkpoint's sentinels, at the ids its `fim.json` gives them.
pub const QWEN_FIM_SENTINELS: [(u32, &str); 5] = [
    (360, "<|endoftext|>"),
    (376, "<|fim_prefix|>"),
    (377, "<|fim_middle|>"),
    (378, "<|fim_suffix|>"),
    (379, "<|fim_pad|>"),
];

/// A byte-level BPE tokenizer.json for the tiny FIM models' 384 ids: ids < 256 are bytes,
/// the others special tokens named as the family's sentinels where `fim.json` puts them.
pub fn fim_tokenizer_json(sentinels: &[(u32, &str)]) -> String {
    let alphabet = lacuna::diffusion::byte_to_char();
    let mut vocab = serde_json::Map::new();
    for (id, c) in alphabet.iter().enumerate() {
        vocab.insert(c.to_string(), id.into());
    }
    let specials: Vec<(u32, String)> = (256..384u32)
        .map(|id| {
            let name = sentinels
                .iter()
                .find(|(i, _)| *i == id)
                .map_or_else(|| format!("<|unused_{id}|>"), |(_, n)| n.to_string());
            (id, name)
        })
        .collect();
    byte_level_tokenizer_json(vocab, &specials)
}

/// Writes the tiny Qwen2 FIM checkpoint into `dir` (created): its config and weights from
/// `tests/data/qwen2-fim-tiny`, and [`fim_tokenizer_json`] with these sentinels.
pub fn write_qwen2_fim_checkpoint(dir: &std::path::Path, sentinels: &[(u32, &str)]) {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/qwen2-fim-tiny");
    std::fs::create_dir_all(dir).unwrap();
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    std::fs::write(dir.join("tokenizer.json"), fim_tokenizer_json(sentinels)).unwrap();
}
