//! JSON Schema text → schema compiler (strict, lenient, and strict for generation) → checker;
//! the completion of the empty canvas must be JSON that the checker accepts, and the
//! generation grammar's completion must be accepted by the strict grammar too (a subset).
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
    let options = [
        SchemaOptions::lenient(false),
        SchemaOptions::lenient(true),
        SchemaOptions::for_generation(),
    ];
    let mut strict: Option<Checker> = None;
    for (i, options) in options.iter().enumerate() {
        let Ok(compiled) = compile_str(text, options) else {
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
            if let (2, Some(whole)) = (i, strict.as_mut()) {
                assert_ne!(
                    whole.check_text(&HoleyText::solid(&out)).verdict,
                    CheckVerdict::NotCompletable,
                    "the generation grammar's completion {out:?} is refused by the strict one"
                );
            }
        }
        if i == 0 {
            checker.set_deadline(Deadline::never());
            strict = Some(checker);
        }
    }
});
