//! Valid-token masks over real vocabularies: the 151k-token Qwen vocabulary
//! (`tests/data/qwen-bpe`) and the default model's own.
//!
//! Two oracles, neither of which shares the mask's code path:
//! - **per-token checks**: a position's mask must be exactly the ids `t` for which
//!   [`Checker::check_tokens`] calls the canvas with `t` placed completable. With 151k ids a full
//!   sweep costs seconds per position, so each position is verified on every id of the mask
//!   (up to a sample), on "near misses" (ids outside the mask that share their first byte with
//!   an allowed id, where a wrong answer is most likely), and on random ids. The example
//!   `mask_workload --verify N` sweeps all ids. Where a mask left ids `unknown` (over budget),
//!   only its own ids are held to the oracle; ids whose check is itself `unknown` are skipped.
//! - **the real tools**: generation walks that place, at a random masked position, a random id
//!   of its mask until no mask is left must end in an output that serde_json, the `jsonschema`
//!   crate, purr (SMILES syntax) or tree-sitter-cpp accept. Walks that stop at an empty mask
//!   on a completable canvas (the loose reading of long runs) are counted and printed.

use std::path::Path;
use std::sync::Arc;

use lacuna::canvas::tokens::TokenCanvas;
use lacuna::checker::{Budgets, CheckVerdict, Checker};
use lacuna::vocab::{TokenId, TokenKind, Vocabulary};

#[path = "corpus/mod.rs"]
mod corpus;
#[path = "common/purr_syntax.rs"]
mod purr_syntax;
#[path = "common/token_workload.rs"]
mod token_workload;
use corpus::Rng;

/// A checker of `spec` over `vocab` whose masks have no wall-clock deadline, so what is
/// `unknown` does not depend on the machine's speed, and at most 64 checks per mask on the
/// fallback route, so the tests stay fast.
fn checker(spec: &str, vocab: &Arc<Vocabulary>) -> Checker {
    let g = lacuna::grammar::spec::load(spec).unwrap();
    let budgets = Budgets {
        mask_deadline: None,
        mask_checks: 64,
        ..Budgets::default()
    };
    let mut c = Checker::with_budgets(g, budgets).unwrap();
    c.set_vocabulary(vocab.clone());
    c
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Ids sorted by their first byte, to draw near misses.
struct ByFirstByte(Vec<Vec<TokenId>>);

impl ByFirstByte {
    fn new(vocab: &Vocabulary) -> Self {
        let mut by = vec![Vec::new(); 256];
        for id in vocab.text_ids() {
            by[vocab.bytes(id)[0] as usize].push(id);
        }
        ByFirstByte(by)
    }
}

/// Draws up to `n` of `ids` at random (all of them if there are at most `n`).
fn sample<T: Copy>(ids: &[T], n: usize, rng: &mut Rng) -> Vec<T> {
    if ids.len() <= n {
        return ids.to_vec();
    }
    (0..n).map(|_| ids[rng.below(ids.len())]).collect()
}

/// Verifies the mask of `position` against per-token checks on a sample of ids; returns the
/// number of ids verified.
fn verify_position(
    checker: &mut Checker,
    canvas: &TokenCanvas,
    position: usize,
    by_first: &ByFirstByte,
    rng: &mut Rng,
    what: &str,
    undecided: &mut usize,
) -> usize {
    let vocab = checker.vocabulary().unwrap().clone();
    let allowed = checker.allowed(canvas, position).unwrap();
    // Ids left unknown (over budget) are in neither the mask nor its complement: a check of
    // one of them may say anything; every other id must agree.
    let inside: Vec<TokenId> = allowed.mask.ids().collect();
    let mut near = Vec::new();
    for id in sample(&inside, 8, rng) {
        if let Some(first) = vocab.bytes(id).first() {
            let ids = &by_first.0[*first as usize];
            near.extend(
                sample(ids, 40, rng)
                    .into_iter()
                    .filter(|&t| !allowed.mask.contains(t)),
            );
        }
    }
    let random: Vec<TokenId> = (0..150)
        .map(|_| rng.below(vocab.len()) as TokenId)
        .collect();
    let mut ids = sample(&inside, 150, rng);
    ids.extend(near);
    ids.extend(random);
    ids.extend(vocab.eos_ids());
    for &id in &ids {
        let verdict = checker
            .check_tokens(&canvas.with(position, id))
            .unwrap()
            .verdict;
        if verdict == CheckVerdict::Unknown {
            // The check itself ran out of budget (C++ after long runs): no oracle here.
            continue;
        }
        let in_mask = allowed.mask.contains(id);
        // With ids unknown, only the mask's own ids are certain.
        if allowed.unknown > 0 && !in_mask {
            continue;
        }
        assert_eq!(
            in_mask,
            verdict == CheckVerdict::Completable,
            "{what}: position {position}, id {id} {:?}: mask says {in_mask}, check says \
             {verdict:?}",
            String::from_utf8_lossy(vocab.bytes(id)),
        );
    }
    *undecided += (allowed.unknown > 0) as usize;
    ids.len()
}

/// The workload canvases over the Qwen vocabulary, and walks of one-position changes from them
/// (a filled position masked, or a masked one filled with an id of its mask or any id): every
/// sampled mask agrees with per-token checks.
#[test]
fn qwen_masks_agree_with_per_token_checks() {
    let (vocab, tok) = token_workload::qwen(root());
    let by_first = ByFirstByte::new(&vocab);
    let cases = token_workload::workload(root(), &vocab, &tok);
    let mut checkers: std::collections::HashMap<String, Checker> = Default::default();
    let mut rng = Rng(12);
    let (mut positions, mut ids, mut undecided) = (0, 0, 0);
    for family in ["json", "smiles"] {
        // Two uncorrupted and one corrupted canvas per family, with one and with several holes.
        let picked: Vec<_> = cases
            .iter()
            .filter(|c| c.family == family && c.canvas.len() <= 256)
            .filter(|c| !c.corrupted)
            .step_by(37)
            .take(2)
            .chain(
                cases
                    .iter()
                    .filter(|c| c.family == family && c.corrupted)
                    .take(1),
            )
            .collect();
        assert_eq!(picked.len(), 3, "{family}");
        for case in picked {
            let checker = checkers
                .entry(case.spec.clone())
                .or_insert_with(|| checker(&case.spec, &vocab));
            let mut canvas = case.canvas.clone();
            for step in 0..3 {
                let masked = canvas.masked_positions();
                let what = format!("{} step {step}", case.id);
                for &p in sample(&masked, 2, &mut rng).iter() {
                    ids += verify_position(
                        checker,
                        &canvas,
                        p,
                        &by_first,
                        &mut rng,
                        &what,
                        &mut undecided,
                    );
                    positions += 1;
                }
                // One position changes, as a sampler changes it.
                let p = rng.below(canvas.len());
                match canvas.cells[p] {
                    Some(_) => canvas.retract(&[p]),
                    None => {
                        let mask = checker.allowed(&canvas, p).unwrap().mask;
                        let allowed: Vec<TokenId> = mask.ids().collect();
                        canvas.cells[p] = Some(if allowed.is_empty() || rng.below(3) == 0 {
                            rng.below(vocab.len()) as TokenId
                        } else {
                            allowed[rng.below(allowed.len())]
                        });
                    }
                }
            }
        }
    }
    assert!(
        positions >= 20 && ids > 5_000,
        "{positions} positions, {ids} ids"
    );
    eprintln!("{positions} positions, {ids} ids verified, {undecided} with ids unknown");
    assert!(
        undecided * 2 <= positions,
        "{undecided} of {positions} positions undecided"
    );
}

/// What a walk's finished output must satisfy, judged by a tool that is not lacuna.
enum Judge {
    Json,
    Schema(jsonschema::Validator),
    Smiles,
    Cpp,
}

impl Judge {
    fn accepts(&self, text: &str) -> Result<(), String> {
        match self {
            Judge::Json => serde_json::from_str::<serde_json::Value>(text)
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Judge::Schema(v) => {
                let value: serde_json::Value =
                    serde_json::from_str(text).map_err(|e| e.to_string())?;
                v.validate(&value).map_err(|e| e.to_string())
            }
            Judge::Smiles => purr_syntax::read_syntax(text).map_err(|e| format!("{e:?}")),
            Judge::Cpp => {
                let mut parser = tree_sitter::Parser::new();
                parser
                    .set_language(&tree_sitter_cpp::LANGUAGE.into())
                    .unwrap();
                let tree = parser.parse(text, None).unwrap();
                match tree.root_node().has_error() {
                    false => Ok(()),
                    true => Err("tree-sitter-cpp finds an error".into()),
                }
            }
        }
    }
}

/// How a walk ended.
#[derive(Debug, PartialEq)]
enum WalkEnd {
    /// Every position filled: the output (the bytes before the first EOS).
    Output(String),
    /// A completable canvas had a masked position whose mask was empty with nothing unknown.
    EmptyMask,
    /// Every masked position had an empty mask with some ids unknown (over budget).
    Undecided,
}

/// Fills every masked position of `canvas`, one random position at a time, with a random id of
/// its mask (only ids the mask says are allowed, never unknown ones); also returns the ids
/// that were unknown along the way.
fn walk(checker: &mut Checker, mut canvas: TokenCanvas, rng: &mut Rng) -> (WalkEnd, usize) {
    let vocab = checker.vocabulary().unwrap().clone();
    let mut unknown = 0;
    let mut stuck: Vec<usize> = Vec::new();
    loop {
        let masked: Vec<usize> = canvas
            .masked_positions()
            .into_iter()
            .filter(|p| !stuck.contains(p))
            .collect();
        if masked.is_empty() {
            if !stuck.is_empty() {
                return (WalkEnd::Undecided, unknown);
            }
            break;
        }
        let p = masked[rng.below(masked.len())];
        let allowed = checker.allowed(&canvas, p).unwrap();
        unknown += allowed.unknown;
        let ids: Vec<TokenId> = allowed.mask.ids().collect();
        if ids.is_empty() {
            if allowed.unknown == 0 {
                // The canvas is completable (its last step came from a mask), so this is
                // the looseness of long runs.
                return (WalkEnd::EmptyMask, unknown);
            }
            stuck.push(p);
            continue;
        }
        stuck.clear();
        // Prefer text over EOS three times in four, so outputs are not all short.
        let text: Vec<TokenId> = ids
            .iter()
            .copied()
            .filter(|&i| vocab.kind(i) == Some(TokenKind::Text))
            .collect();
        let id = if !text.is_empty() && (rng.below(4) > 0 || text.len() == ids.len()) {
            text[rng.below(text.len())]
        } else {
            ids[rng.below(ids.len())]
        };
        canvas.cells[p] = Some(id);
        // An id of the mask keeps the canvas completable (the check may run out of budget
        // on C++ after long runs, but must never say the opposite).
        assert_ne!(
            checker.check_tokens(&canvas).unwrap().verdict,
            CheckVerdict::NotCompletable,
            "placing id {id} ({:?}) of the mask at {p} keeps the canvas completable: {}",
            String::from_utf8_lossy(vocab.bytes(id)),
            shown(&canvas, &vocab)
        );
    }
    let mut out = Vec::new();
    for id in canvas.cells.iter().flatten() {
        if vocab.kind(*id) != Some(TokenKind::Text) {
            break;
        }
        out.extend_from_slice(vocab.bytes(*id));
    }
    (
        WalkEnd::Output(String::from_utf8_lossy(&out).into_owned()),
        unknown,
    )
}

/// `canvas` as text, `□` for a masked position and `|` between tokens.
fn shown(canvas: &TokenCanvas, vocab: &Vocabulary) -> String {
    let cells: Vec<String> = canvas
        .cells
        .iter()
        .map(|c| {
            c.map_or("□".into(), |id| {
                String::from_utf8_lossy(vocab.bytes(id)).into()
            })
        })
        .collect();
    cells.join("|")
}

/// Runs `n` walks over canvases of `len` masked positions after `prefix` (ids of `vocab`):
/// every finished output must satisfy `judge`, and at least `min_finished` walks must finish
/// (masks over budget leave ids unknown, which a walk never places, and the loose reading of
/// long runs can leave a position with an empty mask).
fn walks_end_in_valid_outputs(
    spec: &str,
    vocab: &Arc<Vocabulary>,
    prefix: &[TokenId],
    (len, n, min_finished): (usize, usize, usize),
    judge: Judge,
) {
    let mut checker = checker(spec, vocab);
    let mut rng = Rng(len as u64 * 31 + n as u64);
    let (mut finished, mut unknown, mut empty) = (0, 0, 0);
    for i in 0..n {
        let mut cells: Vec<Option<TokenId>> = prefix.iter().map(|&t| Some(t)).collect();
        cells.resize(prefix.len() + len, None);
        let (end, u) = walk(&mut checker, TokenCanvas::new(cells), &mut rng);
        unknown += u;
        match end {
            WalkEnd::Output(out) => {
                finished += 1;
                judge
                    .accepts(&out)
                    .unwrap_or_else(|why| panic!("{spec} walk {i}: {out:?}: {why}"));
            }
            WalkEnd::EmptyMask => empty += 1,
            WalkEnd::Undecided => {}
        }
    }
    // Empty masks on completable canvases come from the loose reading of long runs (no
    // length bound yet): counted and reported, not yet an error.
    eprintln!(
        "{spec}: {finished} of {n} walks finished, {empty} stopped at an empty mask, {unknown} \
         ids unknown along the way"
    );
    assert!(
        finished >= min_finished,
        "{spec}: {finished} of {n} walks finished"
    );
}

#[test]
fn qwen_walks_end_in_json_that_serde_reads() {
    let (vocab, _) = token_workload::qwen(root());
    walks_end_in_valid_outputs("json", &vocab, &[], (12, 6, 4), Judge::Json);
}

#[test]
#[ignore = "issue 12: a trailing run of k masks is read as any text, with no bound of k tokens, \
            so random walks write more than fits and stop at empty masks (3 of 3 measured at \
            24 and at 48 tokens); run with --ignored to measure"]
fn qwen_walks_end_in_schema_instances() {
    let (vocab, tok) = token_workload::qwen(root());
    let path = "benches/data/workload/schemas/user_review.json";
    let schema: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root().join(path)).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    // The model has written the start of the object; the walk writes the rest.
    let prefix = tok.encode("{\"", false).unwrap().get_ids().to_vec();
    let spec = format!("schema:{}", root().join(path).display());
    walks_end_in_valid_outputs(&spec, &vocab, &prefix, (24, 3, 1), Judge::Schema(validator));
}

#[test]
fn qwen_walks_end_in_smiles_that_purr_reads() {
    let (vocab, _) = token_workload::qwen(root());
    walks_end_in_valid_outputs("smiles", &vocab, &[], (10, 8, 6), Judge::Smiles);
}

#[test]
#[ignore = "issue 12: C++ masks after long runs take the per-effect route (minutes for this \
            test); run with --ignored to measure"]
fn qwen_walks_end_in_cpp_that_tree_sitter_reads() {
    let (vocab, tok) = token_workload::qwen(root());
    let prefix = tok
        .encode("int f(int x) {", false)
        .unwrap()
        .get_ids()
        .to_vec();
    walks_end_in_valid_outputs("cpp", &vocab, &prefix, (5, 3, 2), Judge::Cpp);
}

/// The default model's own vocabulary (a small byte-level BPE with `<|eos|>`).
fn default_model_vocabulary() -> Arc<Vocabulary> {
    let path = root().join("models/default/tokenizer.json");
    let json = std::fs::read(&path).unwrap();
    Arc::new(Vocabulary::from_tokenizer_json(&json, &[], "default").unwrap())
}

#[test]
fn default_model_vocabulary_walks_end_in_valid_json() {
    let vocab = default_model_vocabulary();
    walks_end_in_valid_outputs("json", &vocab, &[], (16, 6, 4), Judge::Json);
}

#[test]
#[ignore = "issue 13: under ring bonds a mask judges a ring label no chunk mentions by its \
            parity, so a random walk over this vocabulary's multi-digit tokens (`122`, `2000`) \
            can place an id after which no completion pairs the rings (generation confirms a \
            mask's word by the check of the placed token: tests/masked_generate.rs); run with \
            --ignored"]
fn default_model_vocabulary_walks_end_in_valid_smiles() {
    let vocab = default_model_vocabulary();
    walks_end_in_valid_outputs("smiles", &vocab, &[], (16, 10, 8), Judge::Smiles);
}

/// A checker is `Send` and a vocabulary is shared by `Arc` across threads: masks for the
/// positions of one canvas computed on worker threads (one checker each, moved in) equal those
/// computed on one thread, and every masked position has some allowed token.
#[test]
fn masks_on_worker_threads_equal_masks_on_one() {
    let (vocab, tok) = token_workload::qwen(root());
    let ids = tok.encode("{\"a\": [1, 2], \"b\": \"xy\"}", false).unwrap();
    let mut cells: Vec<Option<TokenId>> = ids.get_ids().iter().map(|&t| Some(t)).collect();
    // Mask the value of "a" and the closing brace, and leave room to end.
    let n = cells.len();
    for p in [3, 4, 5, n - 1] {
        cells[p] = None;
    }
    cells.push(None);
    let canvas = TokenCanvas::new(cells);
    let positions = canvas.masked_positions();
    let one: Vec<_> = checker("json", &vocab)
        .allowed_many(&canvas, &positions)
        .unwrap();
    let halves: Vec<Vec<usize>> = positions
        .chunks(positions.len().div_ceil(2))
        .map(<[usize]>::to_vec)
        .collect();
    let threaded: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = halves
            .iter()
            .map(|half| {
                let mut c = checker("json", &vocab);
                let canvas = &canvas;
                s.spawn(move || c.allowed_many(canvas, half).unwrap())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(one.len(), threaded.len());
    for (a, b) in one.iter().zip(&threaded) {
        assert_eq!(a.position, b.position);
        assert_eq!(a.mask, b.mask, "position {}", a.position);
        assert_eq!(a.unknown, 0, "position {}", a.position);
        assert!(
            !a.mask.is_empty(),
            "position {} has no allowed token",
            a.position
        );
    }
}

/// A mask's time limit bounds all of its work. In the middle of a C++ run of masks the one
/// search over every path of the position is long, and it ran past the limit, which only the
/// per-effect checks after it obeyed: 14-37 s a mask under the default 2 s. Now the mask
/// answers near its limit, the undecided ids counted as unknown (never guessed).
#[test]
fn a_mask_stays_within_its_time_limit() {
    let (vocab, tok) = token_workload::qwen(root());
    let case = token_workload::workload(root(), &vocab, &tok)
        .into_iter()
        .find(|c| c.id == "w0288")
        .expect("the workload's C++ canvas w0288");
    let limit = std::time::Duration::from_millis(300);
    let g = lacuna::grammar::spec::load(&case.spec).unwrap();
    let budgets = Budgets {
        mask_deadline: Some(limit),
        ..Budgets::default()
    };
    let mut c = Checker::with_budgets(g, budgets).unwrap();
    c.set_vocabulary(vocab.clone());
    let masked = case.canvas.masked_positions();
    let position = masked[masked.len() / 2];
    let t0 = std::time::Instant::now();
    let allowed = c.allowed(&case.canvas, position).unwrap();
    let took = t0.elapsed();
    // Generous: the limit is polled every few thousand steps, and this machine may be busy.
    assert!(
        took < limit * 10,
        "the mask of position {position} took {took:?} under a limit of {limit:?}"
    );
    // Every id is decided or counted as unknown.
    let decided_or_unknown = allowed.mask.count() + allowed.unknown;
    assert!(
        allowed.unknown > 0 || allowed.mask.count() > 0,
        "{decided_or_unknown}"
    );
    // The limit is the mask's own: a later call is not cut short by it.
    assert!(c.check_tokens(&case.canvas).is_ok());
}

/// The limit also bounds what follows the one search: its outside pass and the walks of the
/// token groups. Once top-down prediction let the inside pass finish on the C++ block canvas
/// (text after the block), those ran the first position's mask to 7.2 s under the default
/// 2 s limit, and the second position's of the semi-autoregressive canvas to 15–19 s (warm).
#[test]
fn a_mask_stays_within_its_time_limit_after_its_search() {
    let (vocab, tok) = token_workload::qwen(root());
    let limit = Budgets::default()
        .mask_deadline
        .expect("masks have a default limit");
    for (masked_after, offset) in [(false, 0), (true, 1)] {
        let (canvas, start, spec) =
            token_workload::block_canvas(root(), &vocab, &tok, "cpp+fence", masked_after);
        let g = lacuna::grammar::spec::load(&spec).unwrap();
        let mut c = Checker::with_vocabulary(g, vocab.clone()).unwrap();
        // Warm: the first call spends its time building token paths, before the search ends.
        c.allowed(&canvas, start + offset).unwrap();
        let t0 = std::time::Instant::now();
        let allowed = c.allowed(&canvas, start + offset).unwrap();
        let took = t0.elapsed();
        assert!(
            took < limit * 3,
            "the mask at block offset {offset} took {took:?} under a limit of {limit:?}"
        );
        assert!(allowed.mask.count() + allowed.unknown > 0);
    }
}

/// Masks answered from the checker's memo (kept by canvas reading) equal masks computed anew,
/// along walks that fill the block of the benchmarks' canvases one position at a time: the
/// memo serves the positions deep inside the run, and never an answer of an earlier canvas
/// whose reading differs.
#[test]
fn memo_answers_equal_computed_masks_along_walks() {
    let (vocab, tok) = token_workload::qwen(root());
    let mut rng = Rng(31);
    for (family, spec_end) in [("json", "json+fence"), ("smiles", "smiles+fence")] {
        for semi_ar in [false, true] {
            let (mut canvas, start, spec) =
                token_workload::block_canvas(root(), &vocab, &tok, spec_end, semi_ar);
            let mut memo = checker(&spec, &vocab);
            let mut fresh = checker(&spec, &vocab);
            let what = format!("{family} semi_ar={semi_ar}");
            for step in 0..4 {
                let block: Vec<usize> = (start..start + token_workload::BLOCK)
                    .filter(|&p| canvas.cells[p].is_none())
                    .collect();
                let answers = memo.allowed_many(&canvas, &block).unwrap();
                let served = answers.iter().filter(|a| a.checks == 0).count();
                if step == 0 {
                    // 26 of the 32 positions are read alike (at least 3 masks on each side).
                    assert!(served >= 20, "{what}: {served} masks from the memo");
                }
                let mut picked = vec![0, 1, 2, block.len() / 2, block.len() - 1];
                picked.push(rng.below(block.len()));
                for i in picked {
                    fresh.forget_masks();
                    let computed = fresh.allowed(&canvas, block[i]).unwrap();
                    let kept = &answers[i];
                    assert!(computed.checks > 0, "{what}: computed, not served");
                    assert_eq!(
                        (kept.mask.count(), kept.unknown),
                        (computed.mask.count(), computed.unknown),
                        "{what} step {step}: position {}",
                        block[i]
                    );
                    assert_eq!(kept.mask, computed.mask, "{what} step {step}: {}", block[i]);
                }
                // A sampler's step: a random position of the block gets an id of its mask.
                let i = rng.below(block.len());
                let ids: Vec<TokenId> = answers[i].mask.ids().collect();
                assert!(!ids.is_empty(), "{what}: empty mask at {}", block[i]);
                canvas.cells[block[i]] = Some(ids[rng.below(ids.len())]);
            }
            assert!(memo.cache_stats().mask_answers > 0, "{what}");
        }
    }
}
