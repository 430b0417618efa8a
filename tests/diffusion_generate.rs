//! End to end: the fixture models (random weights, 320-token vocabulary read as bytes below
//! 256) generate under a tiny Lark grammar; constrained output is always a word of the
//! grammar, unconstrained output with the same seed is not.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device};
use lacuna::checker::Checker;
use lacuna::diffusion::{
    self, generate, Constraint, DreamAlg, DreamSampler, GenerateOptions, LLaDASampler, Model,
    Sampler, TokenTable,
};
use lacuna::grammar::lark;

const LIST: &str = "start: \"[\" [D (\",\" D)*] \"]\"\nD: /[0-9]+/\n";

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// ids < 256 are bytes; the model's EOS ends the output; other ids are special tokens.
fn byte_table(model: &dyn Model) -> TokenTable {
    let bytes = (0..model.vocab_size() as u32)
        .map(|id| match u8::try_from(id) {
            Ok(b) => vec![b],
            Err(_) => format!("<|{id}|>").into_bytes(),
        })
        .collect();
    TokenTable::new(bytes, &[model.eos_token_id()])
}

fn checker() -> Checker {
    Checker::new(lark::parse(LIST, "list.lark").unwrap()).unwrap()
}

struct Outcome {
    constrained_ok: usize,
    unconstrained_ok: usize,
    fallbacks: usize,
    gave_up: usize,
    runs: usize,
}

fn run(name: &str, sampler: &dyn Fn() -> Box<dyn Sampler>, max_resamples: u64) -> Outcome {
    let model = diffusion::load(&data(name), DType::F32, &Device::Cpu).unwrap();
    let table = byte_table(model.as_ref());
    let prompt: Vec<u32> = b"numbers: ".iter().map(|&b| b as u32).collect();
    let mut out = Outcome {
        constrained_ok: 0,
        unconstrained_ok: 0,
        fallbacks: 0,
        gave_up: 0,
        runs: 0,
    };
    let mut check = checker();
    for seed in 0..6 {
        let mut opts = GenerateOptions::new(16, seed);
        opts.max_resamples = max_resamples;
        // With a large budget, no position is retired early either: the model's own
        // (filtered) tokens make the output.
        opts.max_rejections_per_position = max_resamples as usize;
        let mut s = sampler();
        let free = generate(model.as_ref(), s.as_mut(), &table, &prompt, &opts, None).unwrap();
        let mut ck = checker();
        let mut c = Constraint::new(&mut ck, &table, 16);
        let mut s = sampler();
        let g = generate(
            model.as_ref(),
            s.as_mut(),
            &table,
            &prompt,
            &opts,
            Some(&mut c),
        )
        .unwrap();
        let st = g.stats;
        eprintln!(
            "{name} seed {seed}: {:?} (fallback {}, gave up {}, unfilled {}, {} passes, {} checks, {} rejections, \
             model {:?}, checker {:?}); unconstrained {:?}",
            String::from_utf8_lossy(&g.text),
            st.fallback,
            st.gave_up,
            st.unfilled,
            st.forward_passes,
            st.checks,
            st.rejections,
            st.model_time,
            st.checker_time,
            String::from_utf8_lossy(&free.text),
        );
        assert!(
            check.accepts(&g.text),
            "{:?}",
            String::from_utf8_lossy(&g.text)
        );
        assert!(st.forward_passes > 0 && st.checks > 0);
        out.runs += 1;
        out.constrained_ok += 1;
        out.fallbacks += usize::from(st.fallback);
        out.gave_up += usize::from(st.gave_up);
        out.unconstrained_ok += usize::from(check.accepts(&free.text));
    }
    out
}

#[test]
fn llada_fixture_generates_grammar_words() {
    let o = run("llada-tiny", &|| Box::new(LLaDASampler::new(16, 8)), 100);
    assert_eq!(o.constrained_ok, o.runs);
    assert_eq!(o.unconstrained_ok, 0);
}

#[test]
fn llada_sampled_with_a_large_budget_never_gives_up() {
    // With a large resample budget the model's own (filtered) tokens make the output; the
    // completion only closes holes of positions no token could fill (e.g. before a placed
    // `[`: a hole may be empty, a position cannot).
    let o = run(
        "llada-tiny",
        &|| Box::new(LLaDASampler::new(16, 16).temperature(0.5)),
        100_000,
    );
    assert_eq!(o.constrained_ok, o.runs);
    assert_eq!(o.gave_up, 0);
    eprintln!(
        "llada sampled: {}/{} needed the completion",
        o.fallbacks, o.runs
    );
}

#[test]
fn dream_fixture_generates_grammar_words() {
    let o = run(
        "dream-tiny",
        &|| Box::new(DreamSampler::new(8).alg(DreamAlg::Entropy)),
        100_000,
    );
    assert_eq!(o.constrained_ok, o.runs);
    assert_eq!(o.unconstrained_ok, 0);
    assert_eq!(o.fallbacks, 0);
    assert_eq!(o.gave_up, 0);
}

#[test]
fn constraint_length_must_match() {
    let model = diffusion::load(&data("llada-tiny"), DType::F32, &Device::Cpu).unwrap();
    let table = byte_table(model.as_ref());
    let mut ck = checker();
    let mut c = Constraint::new(&mut ck, &table, 3);
    let mut s = LLaDASampler::new(4, 4);
    let e = generate(
        model.as_ref(),
        &mut s,
        &table,
        &[1],
        &GenerateOptions::new(4, 0),
        Some(&mut c),
    )
    .unwrap_err();
    assert!(e.to_string().contains("gen_length is 4"), "{e}");
}
