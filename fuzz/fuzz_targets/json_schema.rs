//! JSON Schema text → schema compiler (strict and lenient) → checker; the completion of the
//! empty canvas must be JSON that the checker accepts.
#![no_main]

use std::time::Duration;

use lacuna::canvas::HoleyText;
use lacuna::checker::{CheckVerdict, Checker};
use lacuna::deadline::Deadline;
use lacuna::grammar::schema::{compile_str, SchemaOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for lenient in [false, true] {
        let Ok(compiled) = compile_str(text, &SchemaOptions::lenient(lenient)) else {
            continue;
        };
        let Ok(mut checker) = Checker::new(compiled.grammar) else {
            continue;
        };
        checker.set_deadline(Deadline::after(Duration::from_secs(2)));
        let hole = HoleyText {
            chunks: vec![Vec::new(), Vec::new()],
        };
        if let Ok(Some(out)) = checker.complete_text(&hole) {
            checker.set_deadline(Deadline::never());
            let again = checker.check_text(&HoleyText::solid(&out)).verdict;
            assert_ne!(
                again,
                CheckVerdict::NotCompletable,
                "completion {out:?} is refused"
            );
            assert!(
                serde_json::from_slice::<serde_json::Value>(&out).is_ok(),
                "completion {out:?} is not JSON"
            );
        }
    }
});
