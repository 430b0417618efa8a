//! Sampler logic on hand-made logits: schedules, block boundaries, remasking order, guidance
//! arithmetic, rejection and EOS handling, and seeded reproducibility.

use candle_core::{Device, Tensor};
use lacuna::diffusion::sampler::StepPlan;
use lacuna::diffusion::Rng;
use lacuna::diffusion::{
    generate, DreamAlg, DreamSampler, Family, GenerateOptions, LLaDASampler, Model, Remasking,
    Sampler, TokenTable,
};

const V: usize = 8;
const MASK: u32 = 7;
const EOS: u32 = 6;

/// A model whose logits at each position come from a function of (position, ids).
struct Fake<F: Fn(usize, &[u32]) -> [f32; V]>(F);

impl<F: Fn(usize, &[u32]) -> [f32; V]> Model for Fake<F> {
    fn forward(&self, input_ids: &Tensor) -> candle_core::Result<Tensor> {
        let rows = input_ids.to_vec2::<u32>()?;
        let (b, t) = (rows.len(), rows[0].len());
        let mut out = Vec::with_capacity(b * t * V);
        for ids in &rows {
            for i in 0..t {
                out.extend_from_slice(&(self.0)(i, ids));
            }
        }
        Tensor::from_vec(out, (b, t, V), &Device::Cpu)
    }
    fn mask_token_id(&self) -> u32 {
        MASK
    }
    fn vocab_size(&self) -> usize {
        V
    }
    fn eos_token_id(&self) -> u32 {
        EOS
    }
    fn family(&self) -> Family {
        Family::LLaDA
    }
    fn device(&self) -> &Device {
        &Device::Cpu
    }
}

fn table() -> TokenTable {
    let bytes = (0..V as u8).map(|b| vec![b'a' + b]).collect();
    TokenTable::new(bytes, &[EOS])
}

/// Logits that put `tok` at `conf` and everything else at 0.
fn one_hot(tok: usize, conf: f32) -> [f32; V] {
    let mut l = [0.0; V];
    l[tok] = conf;
    l
}

/// Runs a sampler by hand on `ids`, returning the positions filled at each step.
fn trace(
    s: &mut dyn Sampler,
    prompt: usize,
    ids: &mut [u32],
    logits: impl Fn(usize) -> Vec<f32>,
    seed: u64,
) -> Vec<Vec<usize>> {
    s.begin(prompt, ids.len() - prompt).unwrap();
    let mut rng = Rng::new(seed);
    let mut steps = Vec::new();
    while let Some(plan) = s.plan(ids, MASK, &mut rng) {
        let rows = plan.candidates.iter().map(|&p| logits(p)).collect();
        let banned = vec![vec![MASK]; plan.candidates.len()];
        let mut props = s.proposals(&plan, rows, &banned, &mut rng);
        let mut filled: Vec<usize> = props
            .top_k(plan.k)
            .into_iter()
            .map(|(p, t)| {
                ids[p] = t;
                p
            })
            .collect();
        filled.sort();
        steps.push(filled);
    }
    steps
}

#[test]
fn llada_blocks_fill_in_order_of_confidence() {
    // Prompt of 2, 8 generated, blocks of 4, 4 steps: 2 steps per block, 2 tokens per step.
    let mut s = LLaDASampler::new(4, 4);
    let mut ids = vec![0, 1];
    ids.extend([MASK; 8]);
    // Confidence grows with the position: within a block, right to left.
    let steps = trace(
        &mut s,
        2,
        &mut ids,
        |p| one_hot(p % 5, p as f32).to_vec(),
        0,
    );
    assert_eq!(steps, vec![vec![4, 5], vec![2, 3], vec![8, 9], vec![6, 7]]);
    assert!(ids.iter().all(|&t| t != MASK));
}

#[test]
fn llada_schedule_gives_the_remainder_to_the_first_steps() {
    let mut s = LLaDASampler::new(4, 10);
    let mut ids = vec![MASK; 10];
    let steps = trace(&mut s, 0, &mut ids, |p| one_hot(1, p as f32).to_vec(), 0);
    let sizes: Vec<usize> = steps.iter().map(Vec::len).collect();
    assert_eq!(sizes, vec![3, 3, 2, 2]);
    assert_eq!(steps[0], vec![7, 8, 9]);
}

#[test]
fn llada_settings_that_do_not_divide_are_errors() {
    let e = LLaDASampler::new(4, 3).begin(0, 8).unwrap_err().to_string();
    assert!(
        e.contains("block_length 3") && e.contains("gen_length 8"),
        "{e}"
    );
    let e = LLaDASampler::new(3, 4).begin(0, 8).unwrap_err().to_string();
    assert!(e.contains("steps 3") && e.contains("blocks 2"), "{e}");
    assert!(LLaDASampler::new(4, 4)
        .temperature(-1.0)
        .begin(0, 8)
        .is_err());
}

#[test]
fn llada_random_remasking_is_seeded() {
    let run = |seed| {
        let mut s = LLaDASampler::new(8, 8).remasking(Remasking::Random);
        let mut ids = vec![MASK; 8];
        trace(&mut s, 0, &mut ids, |p| one_hot(1, p as f32).to_vec(), seed)
    };
    assert_eq!(run(1), run(1));
    let differs = (2..10).any(|seed| run(seed) != run(1));
    assert!(differs);
    // Not the confidence order (which would be 7, 6, 5, ...) for every seed.
    let conf_order: Vec<Vec<usize>> = (0..8).rev().map(|p| vec![p]).collect();
    assert!((1..10).any(|seed| run(seed) != conf_order));
}

#[test]
fn llada_gumbel_sampling_follows_the_softmax() {
    // logits [0, ln 3]: token 1 with probability 3/4 at temperature 1.
    let mut hits = 0;
    let n = 4000;
    for seed in 0..n {
        let mut s = LLaDASampler::new(1, 1).temperature(1.0);
        let mut ids = vec![MASK];
        let mut l = vec![f32::NEG_INFINITY; V];
        l[0] = 0.0;
        l[1] = 3f32.ln();
        trace(&mut s, 0, &mut ids, |_| l.clone(), seed);
        hits += usize::from(ids[0] == 1);
    }
    let rate = hits as f64 / n as f64;
    assert!((rate - 0.75).abs() < 0.03, "{rate}");
}

#[test]
fn rejection_proposes_the_next_best_token() {
    let s = LLaDASampler::new(1, 2);
    let plan = StepPlan {
        candidates: vec![0, 1],
        k: 1,
    };
    let rows = vec![
        vec![3.0, 2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 3.5],
        vec![0.0, 0.0, 0.0, 0.0, 2.5, 0.0, 0.0, 0.0],
    ];
    let mut rng = Rng::new(0);
    let mut p = s.proposals(&plan, rows, &[vec![MASK], vec![MASK]], &mut rng);
    // Softmax probabilities: row 0 [.30, .11, .04, ..., mask .49], row 1 [.05, ..., .64, ...].
    assert_eq!(p.next_best(), Some((1, 4)));
    p.reject(1, 4);
    // Position 1 now proposes its next token with its original probability (.05).
    assert_eq!(p.next_best(), Some((0, 0)));
    p.reject(0, 0);
    // The mask token is never proposed, though it is the argmax of row 0.
    assert_eq!(p.next_best(), Some((0, 1)));
    p.accept(0);
    assert_eq!(p.next_best(), Some((1, 0)));
    assert_eq!(p.open(), 1);
}

#[test]
fn guidance_combines_conditional_and_unconditional_logits() {
    // Conditional (prompt visible): token 0 slightly ahead; unconditional: token 0 far ahead.
    // un + (s + 1)(cond - un) with s = 1: [2 + 2(1 - 2), 0 + 2(0.9 - 0)] = [0, 1.8].
    let model = Fake(|_, ids: &[u32]| {
        if ids[0] == MASK {
            one_hot(0, 2.0)
        } else {
            let mut l = one_hot(0, 1.0);
            l[1] = 0.9;
            l
        }
    });
    let gen = |cfg| {
        let mut s = LLaDASampler::new(1, 1).cfg_scale(cfg);
        let opts = GenerateOptions::new(1, 0);
        generate(&model, &mut s, &table(), &[3], &opts, None).unwrap()
    };
    assert_eq!(gen(0.0).ids, vec![0]);
    let g = gen(1.0);
    assert_eq!(g.ids, vec![1]);
    assert_eq!(g.stats.forward_passes, 1);
}

#[test]
fn dream_schedule_follows_the_timesteps() {
    let mut s = DreamSampler::new(4).alg(DreamAlg::MaskgitPlus);
    let mut ids = vec![MASK; 10];
    let steps = trace(&mut s, 0, &mut ids, |p| one_hot(1, p as f32).to_vec(), 0);
    // t = linspace(1, 1e-3, 5); k = int(masks * (1 - s/t)), all at the last step.
    let t: Vec<f32> = (0..5)
        .map(|i| 1.0 - i as f32 * (1.0 - 1e-3) / 4.0)
        .collect();
    let mut masks = 10usize;
    let mut want = Vec::new();
    for i in 0..4 {
        let k = if i == 3 {
            masks
        } else {
            (masks as f32 * (1.0 - t[i + 1] / t[i])) as usize
        };
        want.push(k);
        masks -= k;
    }
    let sizes: Vec<usize> = steps.iter().map(Vec::len).collect();
    assert_eq!(
        sizes,
        want.into_iter().filter(|&k| k > 0).collect::<Vec<_>>()
    );
    assert_eq!(steps[0], vec![8, 9]);
}

/// Two rows where the three confidences disagree: row 0 has probabilities [.5, .5, 0...],
/// row 1 [.55, .15, .15, .15]. Highest probability: row 1; margin: row 1; entropy: row 0.
fn first_pick(alg: DreamAlg) -> usize {
    let ln = |p: f64| if p > 0.0 { p.ln() as f32 } else { -1e9 };
    let row0: Vec<f32> = (0..V).map(|i| ln(if i < 2 { 0.5 } else { 0.0 })).collect();
    let row1: Vec<f32> = (0..V)
        .map(|i| {
            ln(match i {
                0 => 0.55,
                1..=3 => 0.15,
                _ => 0.0,
            })
        })
        .collect();
    let s = DreamSampler::new(2).alg(alg);
    let plan = StepPlan {
        candidates: vec![0, 1],
        k: 1,
    };
    let mut rng = Rng::new(0);
    s.proposals(&plan, vec![row0, row1], &[vec![MASK], vec![MASK]], &mut rng)
        .next_best()
        .unwrap()
        .0
}

#[test]
fn dream_algorithms_rank_by_their_confidence() {
    assert_eq!(first_pick(DreamAlg::MaskgitPlus), 1);
    assert_eq!(first_pick(DreamAlg::TopkMargin), 1);
    assert_eq!(first_pick(DreamAlg::Entropy), 0);
}

#[test]
fn dream_origin_and_alg_temp_are_seeded_and_fill_everything() {
    for s in [
        DreamSampler::new(5).alg(DreamAlg::Origin).temperature(0.7),
        DreamSampler::new(5)
            .alg_temp(0.5)
            .temperature(1.0)
            .top_p(0.9)
            .top_k(3),
    ] {
        let run = |seed| {
            let mut s = s.clone();
            let mut ids = vec![MASK; 12];
            let steps = trace(
                &mut s,
                0,
                &mut ids,
                |p| one_hot(p % 4, 1.0 + p as f32 * 0.1).to_vec(),
                seed,
            );
            (steps, ids)
        };
        let (steps, ids) = run(3);
        assert_eq!((steps.clone(), ids.clone()), run(3));
        assert!(ids.iter().all(|&t| t != MASK));
        assert_eq!(steps.iter().map(Vec::len).sum::<usize>(), 12);
        assert!((4..20).any(|seed| run(seed) != (steps.clone(), ids.clone())));
    }
    assert!("nope".parse::<DreamAlg>().is_err());
    assert!(DreamSampler::new(0).begin(0, 4).is_err());
}

#[test]
fn unconstrained_eos_does_not_fill_the_rest() {
    // EOS is most confident at position 1; the rest keep their own tokens (authors' sampler).
    let model = Fake(|p, _: &[u32]| {
        if p == 1 {
            one_hot(EOS as usize, 9.0)
        } else {
            one_hot(2, 1.0)
        }
    });
    let mut s = LLaDASampler::new(4, 4);
    let g = generate(
        &model,
        &mut s,
        &table(),
        &[],
        &GenerateOptions::new(4, 0),
        None,
    )
    .unwrap();
    assert_eq!(g.ids, vec![2, EOS, 2, 2]);
    assert_eq!(g.text, b"c");
    assert_eq!(g.stats.forward_passes, 4);
}

#[test]
fn constrained_eos_fills_the_rest_and_rejections_move_on() {
    use lacuna::checker::Checker;
    use lacuna::diffusion::Constraint;
    // Bytes: token 0 is `[`, 1 is `]`, 2 is `x`; 6 is EOS.
    let mut bytes: Vec<Vec<u8>> = (0..V as u8).map(|b| vec![b'a' + b]).collect();
    bytes[0] = b"[".to_vec();
    bytes[1] = b"]".to_vec();
    bytes[2] = b"x".to_vec();
    let table = TokenTable::new(bytes, &[EOS]);
    let grammar = lacuna::grammar::lark::parse("start: \"[\" \"]\"\n", "t.lark").unwrap();
    let mut checker = Checker::new(grammar).unwrap();
    // Most confident: EOS at 2; then `x` at 0 (rejected: the next best there is `[`); `]` at 1.
    let model = Fake(|p, _: &[u32]| match p {
        0 => {
            let mut l = one_hot(2, 5.0);
            l[0] = 4.0;
            l
        }
        1 => one_hot(1, 3.0),
        2 => one_hot(EOS as usize, 9.0),
        _ => one_hot(2, 1.0),
    });
    let mut c = Constraint::new(&mut checker, &table, 4);
    let mut s = LLaDASampler::new(4, 4);
    let g = generate(
        &model,
        &mut s,
        &table,
        &[],
        &GenerateOptions::new(4, 0),
        Some(&mut c),
    )
    .unwrap();
    assert_eq!(g.ids, vec![0, 1, EOS, EOS]);
    assert_eq!(g.text, b"[]");
    assert!(!g.stats.fallback);
    assert_eq!(g.stats.rejections, 1);
    // Step 1 places EOS (and fills position 3), steps 2 and 3 the brackets; step 4 has nothing
    // left to fill and runs no forward pass.
    assert_eq!(g.stats.forward_passes, 3);
}

#[test]
fn resample_limit_falls_back_to_the_completion() {
    use lacuna::checker::Checker;
    use lacuna::diffusion::Constraint;
    let grammar = lacuna::grammar::lark::parse("start: \"bb\"\n", "t.lark").unwrap();
    let mut checker = Checker::new(grammar).unwrap();
    // The model insists on `a` (token 0) everywhere; `b` is token 1.
    let model = Fake(|_, _: &[u32]| one_hot(0, 5.0));
    let t = table();
    let mut c = Constraint::new(&mut checker, &t, 4);
    let mut s = LLaDASampler::new(4, 4);
    let mut opts = GenerateOptions::new(4, 0);
    opts.max_resamples = 3;
    let g = generate(&model, &mut s, &t, &[], &opts, Some(&mut c)).unwrap();
    assert!(g.stats.fallback && g.stats.gave_up);
    assert_eq!(g.stats.rejections, 3);
    assert_eq!(g.text, b"bb");
}

#[test]
fn settled_unconstrained_outputs_stop_early_with_the_same_text() {
    // EOS is most confident at position 1, then position 0 fills: the text is final after two
    // steps, and the other two forward passes change nothing in it.
    let model = Fake(|p, _: &[u32]| {
        if p == 1 {
            one_hot(EOS as usize, 9.0)
        } else {
            one_hot(2, 1.0)
        }
    });
    let mut options = GenerateOptions::new(4, 0);
    options.stop_when_settled = true;
    let mut s = LLaDASampler::new(4, 4);
    let g = generate(&model, &mut s, &table(), &[], &options, None).unwrap();
    assert_eq!(g.text, b"c");
    assert_eq!(g.stats.forward_passes, 2);
    assert_eq!(&g.ids[..2], &[2, EOS]);
}
