//! The shared workload (`benches/data/workload`: 432 canvases of JSON Schema extraction, SMILES
//! and C++ with 1 to 8 holes, a quarter corrupted), and walks from each canvas that change one
//! position at a time, as a sampler does.
//!
//! Two routes must agree on every canvas:
//! - the checker, one per grammar and reused from canvas to canvas, so its caches by chunk text
//!   (hole flows, hole members' edges) carry over between checks;
//! - the minimal DFA of the subset construction (a second lexer of the same grammar, without the
//!   checker's caches of hole edges) searched for a derivation.
//!
//! Canvases not marked corrupted must be completable.

use std::collections::HashMap;

use crate::canvas::{parse_canvas_line, Canvas, Cell};
use crate::checker::{CheckVerdict, Checker};
use crate::grammar::{spec, NormalGrammar};
use crate::holey::{HoleyLexer, LexLimits};
use crate::intersect::{Searcher, Verdict, DEFAULT_BUDGET};

#[path = "../../tests/common/walks.rs"]
mod walks;
use walks::{change_one_position, Rng};

struct Routes {
    checker: Checker,
    lexer: HoleyLexer,
    normal: NormalGrammar,
    searcher: Searcher,
}

impl Routes {
    fn new(spec_text: &str) -> Routes {
        let g = spec::load(spec_text).unwrap();
        Routes {
            checker: Checker::new(g.clone()).unwrap(),
            lexer: HoleyLexer::new(&g, LexLimits::default()).unwrap(),
            normal: NormalGrammar::from_grammar(&g),
            searcher: Searcher::new(),
        }
    }

    /// The checker's verdict, after asserting that the DFA route gives the same.
    fn verdict(&mut self, canvas: &Canvas, what: &str) -> CheckVerdict {
        let verdict = self.checker.check(canvas).verdict;
        let dfa = self.lexer.dfa(&canvas.holey_text()).unwrap();
        let expected = match self.searcher.decide(&self.normal, &dfa, DEFAULT_BUDGET) {
            Verdict::NonEmpty => CheckVerdict::Completable,
            Verdict::Empty => CheckVerdict::NotCompletable,
            Verdict::Unknown => CheckVerdict::Unknown,
        };
        assert_eq!(verdict, expected, "{what}");
        verdict
    }
}

#[test]
fn workload_verdicts_agree_across_routes_and_along_one_position_changes() {
    let root = env!("CARGO_MANIFEST_DIR");
    let text =
        std::fs::read_to_string(format!("{root}/benches/data/workload/canvases.jsonl")).unwrap();
    let mut routes: HashMap<String, Routes> = HashMap::new();
    let mut rng = Rng(0x5EED_0003);
    let (mut canvases, mut steps) = (0, 0);
    let mut changed_verdicts: HashMap<CheckVerdict, usize> = HashMap::new();
    for line in text.lines() {
        let meta: serde_json::Value = serde_json::from_str(line).unwrap();
        let parsed = parse_canvas_line(line).unwrap();
        let spec_text = parsed.grammar.clone().unwrap();
        // Schema paths in the workload are relative to the repository root.
        let full = match spec_text.strip_prefix("schema:") {
            Some(path) => format!("schema:{root}/{path}"),
            None => spec_text.clone(),
        };
        let r = routes
            .entry(spec_text)
            .or_insert_with(|| Routes::new(&full));
        let id = meta["id"].as_str().unwrap();
        let verdict = r.verdict(&parsed.canvas, id);
        if meta["corrupted"] == false {
            assert_eq!(verdict, CheckVerdict::Completable, "{id}");
        }
        canvases += 1;
        // Every fourth canvas: a walk of six one-position changes.
        if canvases % 4 == 0 {
            let mut canvas = parsed.canvas.clone();
            for step in 0..6 {
                canvas = change_one_position(&canvas, &mut rng);
                let v = r.verdict(&canvas, &format!("{id} after {} changes", step + 1));
                *changed_verdicts.entry(v).or_default() += 1;
                steps += 1;
            }
        }
    }
    eprintln!("{canvases} canvases, {steps} changed canvases: {changed_verdicts:?}");
    assert_eq!(canvases, 432);
    // The walks reach both answers, so both are compared.
    assert!(changed_verdicts[&CheckVerdict::Completable] > 50);
    assert!(changed_verdicts[&CheckVerdict::NotCompletable] > 50);
}
