//! A `lacuna mask` input line → token canvas line parser → ids checked against the default
//! model's vocabulary → a check and a mask of the first masked position (JSON grammar).
#![no_main]

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use lacuna::canvas::token_lines::parse_token_canvas_line;
use lacuna::checker::Checker;
use lacuna::deadline::Deadline;
use lacuna::vocab::Vocabulary;
use libfuzzer_sys::fuzz_target;

thread_local! {
    /// One checker for every input, as `lacuna mask` keeps one per run: building it (the
    /// vocabulary's trie) costs far more than an input.
    static CHECKER: RefCell<Checker> = RefCell::new({
        let json = include_bytes!("../../models/default/tokenizer.json");
        let vocab = Vocabulary::from_tokenizer_json(json, &[], "default").unwrap();
        Checker::with_vocabulary(lacuna::grammar::spec::load("json").unwrap(), Arc::new(vocab))
            .unwrap()
    });
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(line) = parse_token_canvas_line(text) else {
        return;
    };
    CHECKER.with(|checker| {
        let mut checker = checker.borrow_mut();
        let vocab = checker.vocabulary().unwrap().clone();
        if line.check_ids(&vocab).is_err() || line.canvas.len() > 24 {
            return;
        }
        checker.set_deadline(Deadline::after(Duration::from_secs(2)));
        let _ = checker.check_tokens(&line.canvas);
        if let Some(position) = line.canvas.cells.iter().position(Option::is_none) {
            let _ = checker.allowed(&line.canvas, position);
        }
    });
});
