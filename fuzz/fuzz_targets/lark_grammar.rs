//! Lark grammar text → parser, normalizer, lexicon, checker; then one check and one
//! completion of the empty canvas, whose output must be a word of the grammar.
#![no_main]

use std::time::Duration;

use lacuna::canvas::HoleyText;
use lacuna::checker::{CheckVerdict, Checker};
use lacuna::deadline::Deadline;
use lacuna::grammar::lark;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(grammar) = lark::parse(text, "fuzz.lark") else {
        return;
    };
    let Ok(mut checker) = Checker::new(grammar) else {
        return;
    };
    checker.set_deadline(Deadline::after(Duration::from_secs(2)));
    let hole = HoleyText {
        chunks: vec![Vec::new(), Vec::new()],
    };
    checker.check_text(&hole);
    if let Ok(Some(out)) = checker.complete_text(&hole) {
        checker.set_deadline(Deadline::never());
        let again = checker.check_text(&HoleyText::solid(&out)).verdict;
        assert_ne!(
            again,
            CheckVerdict::NotCompletable,
            "completion {out:?} is refused"
        );
    }
});
