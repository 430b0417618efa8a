//! A checker that lives long: a stream of distinct canvases must neither grow its memory
//! without bound nor latch it into `unknown` once its tables fill; a caller's deadline and
//! cancellation stop a call that would take long.

mod corpus;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use corpus::{cut, jsonschemabench, Rng};
use lacuna::canvas::HoleyText;
use lacuna::checker::{Budgets, CheckVerdict, Checker, LexLimits};
use lacuna::deadline::Deadline;
use lacuna::grammar::spec;

/// Canvases of real JSON documents (JSONSchemaBench instances) with 1–4 random holes, a third
/// of them with one byte changed, so some are not completable.
fn json_canvases(n: usize) -> Vec<HoleyText> {
    let mut rng = Rng(7);
    jsonschemabench()
        .into_iter()
        .flat_map(|s| s.instances.into_iter().map(|i| i.text.into_bytes()))
        .filter(|t| !t.is_empty())
        .take(n)
        .map(|mut text| {
            if rng.below(3) == 0 {
                let i = rng.below(text.len());
                text[i] = b"{}[],:\"0x "[rng.below(10)];
            }
            let mut cuts: Vec<usize> = (0..2 * (1 + rng.below(4)))
                .map(|_| rng.below(text.len() + 1))
                .collect();
            cuts.sort_unstable();
            cut(&text, &cuts)
        })
        .collect()
}

#[test]
fn a_crowded_checker_empties_its_tables_and_keeps_answering() {
    let canvases = json_canvases(3000);
    let grammar = || spec::load("json").unwrap();
    let mut reference = Checker::new(grammar()).unwrap();
    // Tables so small that this stream fills them many times over (JSON has 56 configurations;
    // hole sets grow with the canvases); before eviction existed, every check after the table
    // filled answered `unknown`.
    let max_configs = 64;
    let budgets = Budgets {
        lexing: LexLimits {
            max_configs,
            ..LexLimits::default()
        },
        ..Budgets::default()
    };
    let mut small = Checker::with_budgets(grammar(), budgets).unwrap();
    let mut unknown = 0;
    let mut completable = 0;
    for (i, text) in canvases.iter().enumerate() {
        let want = reference.check_text(text).verdict;
        let got = small.check_text(text).verdict;
        assert_ne!(want, CheckVerdict::Unknown, "canvas {i}: {text:?}");
        if got == CheckVerdict::Unknown {
            unknown += 1;
        } else {
            assert_eq!(got, want, "canvas {i}: {text:?}");
        }
        completable += (want == CheckVerdict::Completable) as usize;
        let stats = small.cache_stats();
        assert!(
            stats.configs <= max_configs && stats.hole_sets <= max_configs,
            "{stats:?}"
        );
    }
    let stats = small.cache_stats();
    eprintln!("{stats:?}; reference: {:?}", reference.cache_stats());
    assert!(stats.evictions >= 5, "{stats:?}");
    // A canvas that needs more than the whole table alone may still be unknown: a budget.
    assert!(unknown * 100 <= canvases.len(), "{unknown} unknown");
    assert!(
        completable > 1000 && completable < canvases.len(),
        "{completable}"
    );
}

/// A JSON canvas whose search takes far more than one poll interval: many holes in a long
/// document.
fn long_json_canvas() -> HoleyText {
    let doc: String = (0..60)
        .map(|i| format!("{{\"key{i}\": [{i}, \"v{i}\", true, null]}}"))
        .collect::<Vec<_>>()
        .join(", ");
    let text = format!("[{doc}]").into_bytes();
    let cuts: Vec<usize> = (1..30).map(|k| k * text.len() / 31).collect();
    let cuts: Vec<usize> = cuts.iter().flat_map(|&c| [c, c + 2]).collect();
    cut(&text, &cuts)
}

#[test]
fn a_deadline_or_a_cancelled_flag_makes_a_check_unknown_and_a_later_one_definite() {
    let mut checker = Checker::from_spec("json").unwrap();
    let text = long_json_canvas();
    checker.set_deadline(Deadline::at(Instant::now()));
    assert_eq!(checker.check_text(&text).verdict, CheckVerdict::Unknown);
    assert!(checker.complete_text(&text).is_err());

    // Cancelled from another thread: the flag is raised before the call, as a server's
    // watchdog would on a hung-up client.
    let flag = Arc::new(AtomicBool::new(false));
    checker.set_deadline(Deadline::after(Duration::from_secs(3600)).with_cancel(flag.clone()));
    std::thread::scope(|s| {
        s.spawn(|| flag.store(true, Ordering::Relaxed));
    });
    assert_eq!(checker.check_text(&text).verdict, CheckVerdict::Unknown);

    checker.set_deadline(Deadline::never());
    assert_eq!(checker.check_text(&text).verdict, CheckVerdict::Completable);
    let out = checker.complete_text(&text).unwrap().unwrap();
    assert!(serde_json::from_slice::<serde_json::Value>(&out).is_ok());
}

#[test]
fn the_core_types_can_move_to_and_be_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Checker>();
    send_sync::<lacuna::grammar::Grammar>();
    send_sync::<lacuna::vocab::Vocabulary>();
    send_sync::<lacuna::canvas::Canvas>();
    send_sync::<lacuna::canvas::tokens::TokenCanvas>();
    send_sync::<Deadline>();
    send_sync::<lacuna::checker::Allowed>();
    // A checker works on a worker thread, as a server or a Python binding with the GIL
    // released would use it.
    let mut checker = Checker::from_spec("json").unwrap();
    let verdict = std::thread::spawn(move || checker.accepts(b"[1, 2]"))
        .join()
        .unwrap();
    assert!(verdict);
}
