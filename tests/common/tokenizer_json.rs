//! Byte-level BPE `tokenizer.json` files written for the tiny fixture models (whose
//! vocabularies are too small for a real tokenizer). Shared by `tests/cli_generate.rs` and
//! `tests/cli_infill.rs`.

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
