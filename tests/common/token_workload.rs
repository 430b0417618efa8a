//! The shared workload as token canvases over the real 151k-token Qwen vocabulary: each text
//! cell is encoded by the Qwen tokenizer (one or more positions), each mask is one masked
//! position, each EOS the `<|endoftext|>` id. Shared by `tests/token_masks.rs`,
//! `benches/masks.rs` and `examples/mask_workload.rs`.

#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use lacuna::canvas::tokens::TokenCanvas;
use lacuna::canvas::{parse_canvas_line, Cell};
use lacuna::checker::Checker;
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

/// Canvas length and block size of the mask benchmarks (`benches/masks.rs`,
/// `examples/mask_block.rs`).
pub const BLOCK_CANVAS_LEN: usize = 256;
pub const BLOCK: usize = 32;

/// The mask benchmarks' families, and the end of the grammar spec of the workload canvas each
/// one starts from.
pub const BLOCK_FAMILIES: [(&str, &str); 4] = [
    ("json", "json+fence"),
    ("json_schema", "user_review.json+fence"),
    ("smiles", "smiles+fence"),
    ("cpp", "cpp+fence"),
];

/// A family's 256-token canvas with a 32-position block masked, the block's start, and the
/// grammar spec: the first uncorrupted workload canvas whose spec ends with `spec_end`, its
/// holes completed by the text checker, encoded with `tok`, cut or padded with EOS; the block
/// sits in the middle of its text. With `masked_after`, every position after the block is
/// masked too (a semi-autoregressive sampler's canvas).
pub fn block_canvas(
    root: &Path,
    vocab: &Vocabulary,
    tok: &tokenizers::Tokenizer,
    spec_end: &str,
    masked_after: bool,
) -> (TokenCanvas, usize, String) {
    let text = std::fs::read_to_string(root.join(WORKLOAD)).unwrap();
    let line = text
        .lines()
        .find(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["corrupted"] == false && v["grammar"].as_str().unwrap().ends_with(spec_end)
        })
        .unwrap();
    let parsed = parse_canvas_line(line).unwrap();
    let spec = parsed.grammar.unwrap();
    let mut text_checker = Checker::from_spec(&spec).unwrap();
    let document = text_checker.complete(&parsed.canvas).unwrap().unwrap();
    let document = String::from_utf8(document).unwrap();
    let eos = vocab.eos_ids().next().unwrap();
    let mut ids: Vec<TokenId> = tok.encode(document, false).unwrap().get_ids().to_vec();
    let text_len = ids.len().min(BLOCK_CANVAS_LEN);
    ids.resize(BLOCK_CANVAS_LEN, eos);
    let start = (text_len / 2).saturating_sub(BLOCK / 2);
    let mut cells: Vec<Option<TokenId>> = ids.into_iter().map(Some).collect();
    let end = if masked_after {
        cells.len()
    } else {
        start + BLOCK
    };
    cells[start..end].fill(None);
    (TokenCanvas::new(cells), start, spec)
}
