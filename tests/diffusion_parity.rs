//! Parity of the candle models with the reference logits of the tiny fixture checkpoints
//! (`tests/data/*-tiny/expected.safetensors`), plus the checkpoint variants: f16/bf16 weights,
//! sharded weights, and bad input that must be reported, not panic.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use lacuna::diffusion::{self, DiffusionError, Dream, LLaDA, Model};

#[path = "common/checkpoints.rs"]
mod checkpoints;
use checkpoints::{data, expected, max_abs_diff, scratch, tensors, write_sharded};

fn diff_for(model: &dyn Model, name: &str) -> f32 {
    let (ids, want) = expected(name);
    let got = model.forward(&ids).unwrap();
    max_abs_diff(&got, &want)
}

#[test]
fn llada_matches_reference_logits() {
    let m = LLaDA::load(&data("llada-tiny"), DType::F32, &Device::Cpu).unwrap();
    let d = diff_for(&m, "llada-tiny");
    eprintln!("llada-tiny max abs diff {d:e}");
    assert!(d < 1e-4, "max abs diff {d}");
    assert_eq!(m.mask_token_id(), 310);
    assert_eq!(m.vocab_size(), 320);
}

#[test]
fn dream_matches_reference_logits() {
    let m = Dream::load(&data("dream-tiny"), DType::F32, &Device::Cpu).unwrap();
    let d = diff_for(&m, "dream-tiny");
    eprintln!("dream-tiny max abs diff {d:e}");
    assert!(d < 1e-4, "max abs diff {d}");
    assert_eq!(m.mask_token_id(), 311);
}

#[test]
fn load_dispatches_on_model_type() {
    for name in ["llada-tiny", "dream-tiny"] {
        let m = diffusion::load(&data(name), DType::F32, &Device::Cpu).unwrap();
        assert!(diff_for(m.as_ref(), name) < 1e-4);
    }
}

/// Copies the fixture's config and writes its weights as `dtype`.
fn converted(name: &str, dtype: DType) -> PathBuf {
    let dir = scratch(&format!("{name}-{dtype:?}"));
    std::fs::copy(data(name).join("config.json"), dir.join("config.json")).unwrap();
    let ts: HashMap<String, Tensor> = tensors(name)
        .into_iter()
        .map(|(k, v)| (k, v.to_dtype(dtype).unwrap()))
        .collect();
    candle_core::safetensors::save(&ts, dir.join("model.safetensors")).unwrap();
    dir
}

#[test]
fn half_precision_weights_load_into_f32() {
    for name in ["llada-tiny", "dream-tiny"] {
        for dtype in [DType::F16, DType::BF16] {
            let dir = converted(name, dtype);
            let m = diffusion::load(&dir, DType::F32, &Device::Cpu).unwrap();
            let d = diff_for(m.as_ref(), name);
            assert!(d < 0.05, "{name} {dtype:?}: {d}");
            std::fs::remove_dir_all(dir).unwrap();
        }
    }
}

#[test]
fn computes_in_bf16() {
    let m = diffusion::load(&data("llada-tiny"), DType::BF16, &Device::Cpu).unwrap();
    let d = diff_for(m.as_ref(), "llada-tiny");
    assert!(d.is_finite() && d < 0.5, "{d}");
}

#[test]
fn sharded_checkpoints_load() {
    for name in ["llada-tiny", "dream-tiny"] {
        let dir = scratch(&format!("{name}-sharded"));
        write_sharded(name, &dir, DType::F32);
        let m = diffusion::load(&dir, DType::F32, &Device::Cpu).unwrap();
        assert!(diff_for(m.as_ref(), name) < 1e-4);
        std::fs::remove_dir_all(dir).unwrap();
    }
}

/// A copy of a fixture with its config edited.
fn with_config(name: &str, tag: &str, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let dir = scratch(&format!("{name}-{tag}"));
    std::fs::copy(
        data(name).join("model.safetensors"),
        dir.join("model.safetensors"),
    )
    .unwrap();
    let text = std::fs::read_to_string(data(name).join("config.json")).unwrap();
    let mut cfg: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut cfg);
    std::fs::write(dir.join("config.json"), cfg.to_string()).unwrap();
    dir
}

fn load_err(dir: &Path) -> String {
    match diffusion::load(dir, DType::F32, &Device::Cpu) {
        Ok(_) => panic!("{} loaded", dir.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_checkpoints_are_reported() {
    // Missing config.
    let dir = scratch("empty");
    let e = load_err(&dir);
    assert!(e.contains("config.json"), "{e}");
    // Malformed JSON.
    std::fs::write(dir.join("config.json"), "{\"model_type\": ").unwrap();
    let e = load_err(&dir);
    assert!(e.contains("config.json") && e.contains("malformed"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();

    // A missing field is named.
    let dir = with_config("llada-tiny", "nofield", |c| {
        c.as_object_mut().unwrap().remove("d_model");
    });
    let e = load_err(&dir);
    assert!(e.contains("config.json") && e.contains("d_model"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();

    // A mistyped field is named.
    let dir = with_config("dream-tiny", "badtype", |c| {
        c["num_attention_heads"] = "four".into();
    });
    let e = load_err(&dir);
    assert!(e.contains("num_attention_heads"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();

    // Unknown model type.
    let dir = with_config("dream-tiny", "unknown", |c| c["model_type"] = "gpt2".into());
    let e = load_err(&dir);
    assert!(e.contains("gpt2") && e.contains("model_type"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();

    // A config that disagrees with the weights: the tensor is named.
    let dir = with_config("llada-tiny", "shape", |c| c["mlp_hidden_size"] = 128.into());
    let e = load_err(&dir);
    assert!(
        e.contains("model.transformer.blocks.0.ff_proj.weight"),
        "{e}"
    );
    assert!(e.contains("shape"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();

    // Inconsistent head counts.
    let dir = with_config("dream-tiny", "heads", |c| {
        c["num_key_value_heads"] = 3.into()
    });
    let e = load_err(&dir);
    assert!(e.contains("num_key_value_heads"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();

    // No weights.
    let dir = scratch("noweights");
    std::fs::copy(
        data("dream-tiny").join("config.json"),
        dir.join("config.json"),
    )
    .unwrap();
    let e = load_err(&dir);
    assert!(e.contains("model.safetensors"), "{e}");
    // Not a safetensors file.
    std::fs::write(dir.join("model.safetensors"), "garbage").unwrap();
    let e = load_err(&dir);
    assert!(
        e.contains("model.safetensors") && e.contains("safetensors"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let _ = DiffusionError::Sampler(String::new());
}

/// The same parity on the first CUDA GPU (built with `--features cuda`, run where a GPU is).
#[cfg(feature = "cuda")]
#[test]
fn models_match_reference_logits_on_cuda() {
    let gpu = Device::new_cuda(0).expect("a CUDA GPU");
    for name in ["llada-tiny", "dream-tiny"] {
        let m = diffusion::load(&data(name), DType::F32, &gpu).unwrap();
        let (ids, want) = expected(name);
        let got = m
            .forward(&ids.to_device(&gpu).unwrap())
            .unwrap()
            .to_device(&Device::Cpu)
            .unwrap();
        let d = max_abs_diff(&got, &want);
        eprintln!("{name} on CUDA: max abs diff {d:e}");
        assert!(d < 1e-4, "{name}: max abs diff {d}");
    }
}
