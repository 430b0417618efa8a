//! Random canvases of the shipped grammars: the first byte picks the grammar, the rest is text
//! whose 0xFF bytes are holes. A completion must hold every chunk in order and never be called
//! not completable (the deadline bounds the check and the completion; the verification runs
//! without one, so a slow input is not mistaken for a wrong one); a completion never comes
//! from a canvas the checker calls not completable.
#![no_main]

use std::cell::RefCell;
use std::time::Duration;

use lacuna::canvas::HoleyText;
use lacuna::checker::{CheckVerdict, Checker};
use lacuna::deadline::Deadline;
use lacuna::grammar::spec;
use libfuzzer_sys::fuzz_target;

thread_local! {
    static CHECKERS: RefCell<Vec<Checker>> = RefCell::new(
        spec::SHIPPED
            .iter()
            .map(|(name, _)| Checker::from_spec(name).unwrap())
            .collect(),
    );
}

fn contains_in_order(text: &[u8], chunks: &[Vec<u8>]) -> bool {
    let mut rest = text;
    for c in chunks {
        match rest
            .windows(c.len().max(1))
            .position(|w| c.is_empty() || w == &c[..])
        {
            Some(i) => rest = &rest[i + c.len()..],
            None => return c.is_empty(),
        }
    }
    true
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    CHECKERS.with(|checkers| {
        let mut checkers = checkers.borrow_mut();
        let n = checkers.len();
        let checker = &mut checkers[pick as usize % n];
        checker.set_deadline(Deadline::after(Duration::from_secs(2)));
        let chunks: Vec<Vec<u8>> = text.split(|&b| b == 0xff).map(<[u8]>::to_vec).collect();
        let holey = HoleyText { chunks };
        let verdict = checker.check_text(&holey).verdict;
        let completed = checker.complete_text(&holey);
        checker.set_deadline(Deadline::never());
        match completed {
            Ok(Some(out)) => {
                assert_ne!(verdict, CheckVerdict::NotCompletable, "{holey:?} → {out:?}");
                let again = checker.check_text(&HoleyText::solid(&out)).verdict;
                assert_ne!(again, CheckVerdict::NotCompletable, "{holey:?} → {out:?}");
                assert!(
                    contains_in_order(&out, &holey.chunks),
                    "{holey:?} → {out:?}"
                );
            }
            Ok(None) => assert_ne!(verdict, CheckVerdict::Completable, "{holey:?}"),
            Err(_) => {}
        }
    });
});
