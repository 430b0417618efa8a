//! The shared workload as token canvases over the real 151k-token Qwen vocabulary: each text
//! cell is encoded by the Qwen tokenizer (one or more positions), each mask is one masked
//! position, each EOS the `<|endoftext|>` id. Shared by `tests/token_masks.rs`,
//! `benches/masks.rs` and `examples/mask_workload.rs`.

#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use lacuna::canvas::tokens::TokenCanvas;
use lacuna::canvas::{parse_canvas_line, Cell};
use lacuna::vocab::{TokenId, Vocabulary};

pub const QWEN: &str = "tests/data/qwen-bpe/tokenizer.json";
pub const WORKLOAD: &str = "benches/data/workload/canvases.jsonl";

/// The Qwen vocabulary (EOS: `<|endoftext|>`, `<|im_end|>`) and its tokenizer.
pub fn qwen(root: &Path) -> (Arc<Vocabulary>, tokenizers::Tokenizer) {
    let path = root.join(QWEN);
    let json = std::fs::read(&path).expect("the Qwen tokenizer is in tests/data");
    let vocab = Vocabulary::from_tokenizer_json(&json, &[], QWEN).expect("a tokenizer");
    let tok = tokenizers::Tokenizer::from_bytes(&json).expect("a tokenizer");
    (Arc::new(vocab), tok)
}

/// One workload canvas as tokens.
pub struct TokenCase {
    pub id: String,
    pub family: String,
    pub spec: String,
    pub corrupted: bool,
    pub canvas: TokenCanvas,
}

/// Every workload canvas, encoded with `tok`.
pub fn workload(root: &Path, vocab: &Vocabulary, tok: &tokenizers::Tokenizer) -> Vec<TokenCase> {
    let eos = vocab.eos_ids().next().expect("Qwen has an EOS");
    let text = std::fs::read_to_string(root.join(WORKLOAD)).expect("the workload");
    text.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let parsed = parse_canvas_line(line).unwrap();
            let mut cells: Vec<Option<TokenId>> = Vec::new();
            for cell in &parsed.canvas.cells {
                match cell {
                    Cell::Mask => cells.push(None),
                    Cell::Eos => cells.push(Some(eos)),
                    Cell::Token(bytes) => {
                        let s = String::from_utf8_lossy(bytes);
                        let enc = tok.encode(s.as_ref(), false).unwrap();
                        cells.extend(enc.get_ids().iter().map(|&i| Some(i)));
                    }
                }
            }
            TokenCase {
                id: v["id"].as_str().unwrap().to_string(),
                family: v["family"].as_str().unwrap().to_string(),
                spec: parsed.grammar.unwrap(),
                corrupted: v["corrupted"].as_bool().unwrap(),
                canvas: TokenCanvas::new(cells),
            }
        })
        .collect()
}
