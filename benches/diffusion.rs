//! The diffusion runtime on CPU: one forward pass of each fixture model and of a random-weight
//! LLaDA of about 4M parameters over 256 positions, and one check of a proposal on a 256-token
//! JSON canvas (Qwen tokens) with 1, 9 and 41 holes — its time against a forward pass is the
//! checker's share of a step. And one SMILES generation of the embedded default model in each
//! mode, side by side: unconstrained, the paper's rejection loop, and mask-guided (lazy and
//! full masks). The machine's load matters: compare runs on the same machine.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use criterion::{criterion_group, criterion_main, Criterion};
use lacuna::checker::Checker;
use lacuna::diffusion::default_model::load_default;
use lacuna::diffusion::{
    self, generate, generate_masked, llada, tasks, Constraint, GenerateOptions, LLaDASampler,
    MaskConstraint, Model, TokenTable, Tokens,
};

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A LLaDA config of about 4M parameters with random weights.
fn small_llada() -> diffusion::LLaDA {
    let cfg: llada::Config = serde_json::from_value(serde_json::json!({
        "d_model": 256, "n_layers": 4, "n_heads": 8, "mlp_hidden_size": 704,
        "vocab_size": 2048, "rope_theta": 500000.0, "mask_token_id": 2047,
        "eos_token_id": 2046, "max_sequence_length": 512
    }))
    .unwrap();
    let dev = Device::Cpu;
    let (d, h, v) = (256, 704, 2048);
    let mut t = HashMap::new();
    let mut put = |name: String, shape: (usize, usize)| {
        t.insert(name, Tensor::randn(0f32, 0.05, shape, &dev).unwrap());
    };
    put("model.transformer.wte.weight".into(), (v, d));
    put("model.transformer.ff_out.weight".into(), (v, d));
    for i in 0..4 {
        let b = format!("model.transformer.blocks.{i}");
        for n in ["q_proj", "k_proj", "v_proj", "attn_out"] {
            put(format!("{b}.{n}.weight"), (d, d));
        }
        put(format!("{b}.ff_proj.weight"), (h, d));
        put(format!("{b}.up_proj.weight"), (h, d));
        put(format!("{b}.ff_out.weight"), (d, h));
    }
    let mut t: HashMap<String, Tensor> = t;
    for n in ["model.transformer.ln_f.weight".to_string()]
        .into_iter()
        .chain((0..4).flat_map(|i| {
            ["attn_norm", "ff_norm"].map(|n| format!("model.transformer.blocks.{i}.{n}.weight"))
        }))
    {
        t.insert(n, Tensor::ones(d, DType::F32, &dev).unwrap());
    }
    let params: usize = t.values().map(|x| x.elem_count()).sum();
    eprintln!("small LLaDA: {params} parameters");
    let w = diffusion::Weights::from_tensors(t, DType::F32, &dev, Path::new("small"));
    diffusion::LLaDA::new(&cfg, &w).unwrap()
}

fn forward(c: &mut Criterion) {
    let mut g = c.benchmark_group("forward");
    g.sample_size(20);
    for name in ["llada-tiny", "dream-tiny"] {
        let m = diffusion::load(&data(name), DType::F32, &Device::Cpu).unwrap();
        for len in [12usize, 256] {
            let ids = Tensor::zeros((1, len), DType::U32, &Device::Cpu).unwrap();
            g.bench_function(format!("{name}/seq{len}"), |b| {
                b.iter(|| m.forward(&ids).unwrap())
            });
        }
    }
    let m = small_llada();
    let ids = Tensor::zeros((1, 256), DType::U32, &Device::Cpu).unwrap();
    g.bench_function("llada-4M/seq256", |b| b.iter(|| m.forward(&ids).unwrap()));
    g.finish();
}

fn json_check(c: &mut Criterion) {
    let tokens = Tokens::load(&data("qwen-bpe/tokenizer.json")).unwrap();
    let mut doc = String::from("[");
    for i in 0..40 {
        doc.push_str(&format!(
            "{{\"id\": {i}, \"name\": \"item {i}\", \"tags\": [\"a\", \"b\"], \"price\": {}.5}}, ",
            i * 3
        ));
    }
    let ids: Vec<u32> = tokens.encode(&doc).unwrap().into_iter().take(256).collect();
    assert_eq!(ids.len(), 256);
    let eos = tokens.token_id("<|endoftext|>").unwrap();
    let table = TokenTable::from_tokens(&tokens, &[eos]);
    let mut g = c.benchmark_group("check");
    g.sample_size(10);
    // The last 56 positions stay masked (one trailing hole), and every `every`-th position
    // before them (a hole each).
    for every in [0usize, 25, 5] {
        let masked = |i: usize| i >= 200 || (every > 0 && i % every == 2);
        let holes = 1 + (0..200).filter(|&i| masked(i)).count();
        let mut checker = Checker::from_spec("json").unwrap();
        let mut con = Constraint::new(&mut checker, &table, 256);
        for (i, &id) in ids.iter().enumerate() {
            if !masked(i) {
                con.accept(i, id);
            }
        }
        assert!(con.check(200, ids[200]));
        g.bench_function(format!("json-256-tokens/{holes}-holes"), |b| {
            b.iter(|| assert!(con.check(200, ids[200])))
        });
    }
    g.finish();
}

/// One SMILES output of the default model (seed 3, its task's length and schedule, as
/// `lacuna generate` runs it) in each mode.
fn generate_smiles(c: &mut Criterion) {
    let m = load_default(DType::F32, &Device::Cpu).unwrap();
    let eos = [m.model.eos_token_id()];
    let table = TokenTable::from_tokens(&m.tokens, &eos);
    let vocab = std::sync::Arc::new(m.tokens.vocabulary(&eos, m.model.vocab_size()));
    let length = m.card.as_ref().unwrap().tasks[tasks::SMILES].length;
    let prompt = m.tokens.encode(&tasks::smiles_prompt()).unwrap();
    let sampler = || LLaDASampler::new(length, tasks::default_block(length)).temperature(1.0);
    let mut options = GenerateOptions::new(length, 3);
    options.stop_when_settled = true;
    let model = m.model.as_ref();
    let mut g = c.benchmark_group("generate_smiles");
    g.sample_size(10);
    g.bench_function("unconstrained", |b| {
        b.iter(|| generate(model, &mut sampler(), &table, &prompt, &options, None).unwrap())
    });
    let mut checker = Checker::from_spec("smiles").unwrap();
    g.bench_function("reject", |b| {
        b.iter(|| {
            let mut con = Constraint::new(&mut checker, &table, length);
            generate(
                model,
                &mut sampler(),
                &table,
                &prompt,
                &options,
                Some(&mut con),
            )
            .unwrap()
        })
    });
    checker.set_vocabulary(vocab);
    for lazy in [true, false] {
        let name = if lazy { "mask_lazy" } else { "mask" };
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut con = MaskConstraint::new(&mut checker, length).unwrap();
                if lazy {
                    con = con.lazy();
                }
                generate_masked(model, &mut sampler(), &prompt, &options, &mut con).unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, forward, json_check, generate_smiles);
criterion_main!(benches);
