//! A `lacuna mask` input line → token canvas line parser → ids checked against the default
//! model's vocabulary → a check and a mask of the first masked position (JSON grammar).
#![no_main]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use lacuna::canvas::token_lines::parse_token_canvas_line;
use lacuna::checker::Checker;
use lacuna::deadline::Deadline;
use lacuna::vocab::Vocabulary;
use libfuzzer_sys::fuzz_target;

fn vocab() -> Arc<Vocabulary> {
    static VOCAB: OnceLock<Arc<Vocabulary>> = OnceLock::new();
    VOCAB
        .get_or_init(|| {
            let json = include_bytes!("../../models/default/tokenizer.json");
            Arc::new(Vocabulary::from_tokenizer_json(json, &[], "default").unwrap())
        })
        .clone()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(line) = parse_token_canvas_line(text) else {
        return;
    };
    let vocab = vocab();
    if line.check_ids(&vocab).is_err() || line.canvas.len() > 64 {
        return;
    }
    let mut checker = Checker::with_vocabulary(lacuna::grammar::spec::load("json").unwrap(), vocab)
        .unwrap();
    checker.set_deadline(Deadline::after(Duration::from_secs(2)));
    let _ = checker.check_tokens(&line.canvas);
    if let Some(position) = line.canvas.cells.iter().position(Option::is_none) {
        let _ = checker.allowed(&line.canvas, position);
    }
});
