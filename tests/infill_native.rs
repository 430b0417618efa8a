//! Native diffusion infilling (`lacuna::infill::fill_native`): the embedded model fills every
//! hole of a file at once, each hole a span of masks on one canvas with the file's text. The
//! filled files are judged by oracles written without the grammars (serde_json, purr), and
//! each hole's text is read back from the positions it owned, however the finisher moved them.

use std::sync::Arc;

use candle_core::{DType, Device};
use lacuna::checker::Checker;
use lacuna::diffusion::default_model::{load_default, LoadedModel};
use lacuna::diffusion::{tasks, MaskConstraint};
use lacuna::grammar::{lark, spec};

#[path = "common/smiles_rings.rs"]
mod smiles_rings;
use lacuna::infill::{fill_native, HoleyFile, NativeFill, NativeOptions};
use smiles_rings::rings_pair_up;

fn model() -> LoadedModel {
    load_default(DType::F32, &Device::Cpu).unwrap()
}

/// A checker of `grammar` reading the model's token canvases.
fn checker(m: &LoadedModel, grammar: lacuna::grammar::Grammar) -> Checker {
    let eos = [m.model.eos_token_id()];
    let vocab = m.tokens.vocabulary(&eos, m.model.vocab_size());
    Checker::with_vocabulary(grammar, Arc::new(vocab)).unwrap()
}

/// The embedded model's prompt for a task of its card (`json`, `smiles`).
fn prompt(m: &LoadedModel, spec_text: &str) -> Vec<u32> {
    let (_, text) = tasks::task_for_spec(spec_text).unwrap().unwrap();
    m.tokens.encode(&text).unwrap()
}

fn options(span: usize, seed: u64) -> NativeOptions {
    NativeOptions {
        span,
        seed,
        temperature: 1.0,
        lazy: true,
        max_extra_positions: 64,
        constrained: true,
    }
}

/// The filled file is the template's pieces with the middles in its holes, and each middle
/// holds the tokens its hole's positions hold.
fn assert_read_back(file: &HoleyFile, filled: &NativeFill, m: &LoadedModel, what: &str) {
    assert_eq!(
        filled.text,
        file.with_middles(&filled.middles),
        "{what}: text against pieces and middles"
    );
    if !filled.stats.fallback {
        for (middle, ids) in filled.middles.iter().zip(&filled.ids) {
            assert_eq!(
                *middle,
                m.tokens.decode_bytes(ids),
                "{what}: middle and ids"
            );
        }
        let placed: usize = filled.ids.iter().map(Vec::len).sum();
        assert!(placed > 0, "{what}: the model placed tokens");
    }
}

/// `template` filled natively under the grammar `spec_text`, after the model's prompt for
/// that task, once for each of seeds 0 to 3.
fn fills(
    m: &LoadedModel,
    spec_text: &str,
    template: &str,
    span: usize,
) -> (HoleyFile, Vec<NativeFill>) {
    let mut c = checker(m, spec::load(spec_text).unwrap());
    let p = prompt(m, spec_text);
    let file = HoleyFile::parse(template, "<FILL>").unwrap();
    let filled = (0..4)
        .map(|seed| {
            let o = options(span, seed);
            fill_native(m.model.as_ref(), &m.tokens, &mut c, &p, &file, &o).unwrap()
        })
        .collect();
    (file, filled)
}

#[test]
fn json_holes_filled_at_once_parse_and_are_the_models() {
    let m = model();
    let span = 6;
    let template = r#"{"name": <FILL>, "tags": [<FILL>], "age": <FILL>}"#;
    let (file, filled) = fills(&m, "json", template, span);
    let mut by_model = 0;
    for (seed, filled) in filled.iter().enumerate() {
        let what = format!("seed {seed}: {:?}", String::from_utf8_lossy(&filled.text));
        assert_read_back(&file, filled, &m, &what);
        // Valid JSON; not necessarily the shape the pieces suggest: a hole may open a string
        // that the next piece's text stands inside.
        serde_json::from_slice::<serde_json::Value>(&filled.text)
            .unwrap_or_else(|e| panic!("{what}: serde_json refuses it: {e}"));
        if !filled.stats.fallback {
            by_model += 1;
            // Holes before fixed text hold exactly their span, less what the finisher took
            // out, plus what it added.
            let placed: usize = filled.ids.iter().map(Vec::len).sum();
            assert_eq!(
                placed + filled.stats.removed_positions,
                3 * span + filled.stats.extra_positions,
                "{what}"
            );
        }
    }
    assert!(by_model >= 3, "the model wrote {by_model} of 4 files alone");
}

#[test]
fn smiles_holes_filled_at_once_are_read_by_purr() {
    let m = model();
    // A ring opened before the first hole and closed after the second.
    let (file, filled) = fills(&m, "smiles", "c1ccc<FILL>C(=O)N<FILL>c1", 4);
    for (seed, filled) in filled.iter().enumerate() {
        let text = String::from_utf8(filled.text.clone()).unwrap();
        assert_read_back(&file, filled, &m, &format!("seed {seed}: {text:?}"));
        let mut builder = purr::graph::Builder::new();
        let read = purr::read::read(&text, &mut builder, None);
        assert!(read.is_ok(), "seed {seed}: purr refuses {text:?}");
        assert!(
            rings_pair_up(&text),
            "seed {seed}: rings do not pair up in {text:?}"
        );
    }
}

/// A middle that must be one exact word: a span of one position is lengthened by the
/// finisher, a span of twenty shortened, and either way the hole's text is read back from
/// the positions it owns.
#[test]
fn a_hole_keeps_its_positions_when_the_finisher_moves_them() {
    let m = model();
    let g = lark::parse(
        "start: \"x\" WORD \"y\" WORD \"z\"\nWORD: \"abcdefghij\"\n",
        "test",
    )
    .unwrap();
    let mut c = checker(&m, g);
    let file = HoleyFile::parse("x<FILL>y<FILL>z", "<FILL>").unwrap();
    for span in [1, 20] {
        let filled = fill_native(
            m.model.as_ref(),
            &m.tokens,
            &mut c,
            &[],
            &file,
            &options(span, 0),
        )
        .unwrap();
        let what = format!("span {span}: {:?}", String::from_utf8_lossy(&filled.text));
        assert_eq!(filled.middles, vec![b"abcdefghij".to_vec(); 2], "{what}");
        assert_eq!(filled.text, b"xabcdefghijyabcdefghijz", "{what}");
        assert_read_back(&file, &filled, &m, &what);
        // The model wrote it all, in moved positions.
        assert!(!filled.stats.fallback, "{what}");
        if span == 1 {
            assert!(filled.stats.extra_positions > 0, "{what}");
        } else {
            assert!(filled.stats.removed_positions > 0, "{what}");
        }
    }
}

/// The error `fill_native` names for `file` (holes of `span` positions) under JSON.
fn refusal(m: &LoadedModel, c: &mut Checker, file: &str, span: usize) -> String {
    let file = HoleyFile::parse(file, "<FILL>").unwrap();
    fill_native(
        m.model.as_ref(),
        &m.tokens,
        c,
        &[],
        &file,
        &options(span, 0),
    )
    .unwrap_err()
    .to_string()
}

#[test]
fn templates_no_filling_completes_are_named() {
    let m = model();
    let mut c = checker(&m, spec::load("json").unwrap());
    // `]` cannot close an object, whatever fills the hole.
    let err = refusal(&m, &mut c, r#"{"a": <FILL>]"#, 4);
    assert!(err.contains("no filling of the template"), "{err}");
    let err = refusal(&m, &mut c, "[<FILL>]", 0);
    assert!(err.contains("at least one position"), "{err}");
    let err = refusal(&m, &mut c, "[<FILL><FILL>]", 2);
    assert!(
        err.contains("holes 0 and 1 touch at line 1, column 8"),
        "{err}"
    );
    // Spans past the model's context, before anything is laid out.
    let err = refusal(&m, &mut c, "[<FILL>]", usize::MAX);
    assert!(err.contains("more than the model's context"), "{err}");
    // A fixed id that is not a text token.
    let eos = m.model.eos_token_id();
    let err = MaskConstraint::with_template(&mut c, &[], &[None, Some(eos)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a text token"), "{err}");
}

/// Without the grammar the model fills the same spans as it likes: nothing moves, no mask is
/// computed, each hole holds at most its span's tokens, and a single masked position takes
/// the model's own most likely token there (its logits computed here, with the model alone).
#[test]
fn unconstrained_native_fills_take_the_models_own_tokens() {
    let m = model();
    let mut c = checker(&m, spec::load("json").unwrap());
    let p = prompt(&m, "json");
    let span = 6;
    let file = HoleyFile::parse(
        r#"{"name": <FILL>, "tags": [<FILL>], "age": <FILL>}"#,
        "<FILL>",
    )
    .unwrap();
    for seed in 0..4 {
        let o = NativeOptions {
            constrained: false,
            ..options(span, seed)
        };
        let filled = fill_native(m.model.as_ref(), &m.tokens, &mut c, &p, &file, &o).unwrap();
        let what = format!("seed {seed}: {:?}", String::from_utf8_lossy(&filled.text));
        assert_read_back(&file, &filled, &m, &what);
        let st = &filled.stats;
        assert_eq!((st.masks, st.checks), (0, 0), "{what}");
        assert_eq!(st.extra_positions + st.removed_positions, 0, "{what}");
        assert!(!st.fallback, "{what}");
        assert!(filled.ids.iter().all(|ids| ids.len() <= span), "{what}");
    }

    // One masked position between fixed text, greedy: the model's argmax there.
    let file = HoleyFile::parse("[1, <FILL>, 3]", "<FILL>").unwrap();
    let o = NativeOptions {
        constrained: false,
        temperature: 0.0,
        ..options(1, 0)
    };
    let filled = fill_native(m.model.as_ref(), &m.tokens, &mut c, &p, &file, &o).unwrap();
    let mask = m.model.mask_token_id();
    let mut canvas = p.clone();
    canvas.extend(m.tokens.encode("[1, ").unwrap());
    let at = canvas.len();
    canvas.push(mask);
    canvas.extend(m.tokens.encode(", 3]").unwrap());
    let input = candle_core::Tensor::new(canvas.as_slice(), &Device::Cpu)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let logits: Vec<f32> = m
        .model
        .forward(&input)
        .unwrap()
        .squeeze(0)
        .unwrap()
        .get(at)
        .unwrap()
        .to_vec1()
        .unwrap();
    let best = (0..logits.len() as u32)
        .filter(|&t| t != mask)
        .max_by(|&a, &b| logits[a as usize].total_cmp(&logits[b as usize]))
        .unwrap();
    let placed: Vec<u32> = filled.ids.concat();
    let is_text = m
        .tokens
        .vocabulary(&[m.model.eos_token_id()], m.model.vocab_size());
    if is_text.kind(best) == Some(lacuna::vocab::TokenKind::Text) {
        assert_eq!(
            placed,
            vec![best],
            "{:?}",
            String::from_utf8_lossy(&filled.text)
        );
    } else {
        // An end of output or a special id writes nothing into the file.
        assert!(placed.is_empty(), "{placed:?}");
    }
}
