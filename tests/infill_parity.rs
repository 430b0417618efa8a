//! Parity of the causal models of `lacuna::infill` with the reference logits of the tiny
//! fill-in-the-middle checkpoints (`tests/data/*-fim-tiny`: transformers under causal
//! attention, cross-checked by NumPy), the key/value cache against a full pass, each family's
//! prompt against the fixtures' rows, and bad configs named.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, IndexOp, Tensor};
use lacuna::infill::{CausalFamily, CausalLm, FimFormat, KvCache};

#[path = "common/checkpoints.rs"]
mod checkpoints;
use checkpoints::{data, expected, max_abs_diff, scratch, write_sharded};

const FAMILIES: [(&str, CausalFamily); 4] = [
    ("qwen2-fim-tiny", CausalFamily::Qwen2),
    ("starcoder2-fim-tiny", CausalFamily::Starcoder2),
    ("llama-fim-tiny", CausalFamily::Llama),
    ("gemma-fim-tiny", CausalFamily::Gemma),
];

#[test]
fn every_family_matches_the_reference_logits() {
    for (name, family) in FAMILIES {
        let model = CausalLm::load(&data(name), DType::F32, &Device::Cpu).unwrap();
        assert_eq!(model.config().family, family);
        let (ids, want) = expected(name);
        let got = model.forward(&ids, &mut KvCache::new()).unwrap();
        let d = max_abs_diff(&got, &want);
        eprintln!("{name}: max abs diff {d:e}");
        assert!(d < 1e-4, "{name}: max abs diff {d}");
    }
}

#[test]
fn the_cache_gives_what_a_full_pass_gives() {
    // A prompt at once, then one token at a time, as a left-to-right loop runs.
    for (name, _) in FAMILIES {
        let model = CausalLm::load(&data(name), DType::F32, &Device::Cpu).unwrap();
        let (ids, want) = expected(name);
        for row in 0..2 {
            let ids = ids.i(row..row + 1).unwrap();
            let want = want.i(row..row + 1).unwrap();
            let mut cache = KvCache::new();
            let mut parts = vec![model
                .forward(&ids.narrow(1, 0, 9).unwrap(), &mut cache)
                .unwrap()];
            for p in 9..16 {
                parts.push(
                    model
                        .forward(&ids.narrow(1, p, 1).unwrap(), &mut cache)
                        .unwrap(),
                );
            }
            assert_eq!(cache.len(), 16);
            let got = Tensor::cat(&parts, 1).unwrap();
            let d = max_abs_diff(&got, &want);
            assert!(d < 1e-4, "{name} row {row}: cached max abs diff {d}");
            // Backing up and going another way is a fresh pass over the kept positions.
            cache.truncate(12).unwrap();
            let again = model
                .forward(&ids.narrow(1, 12, 4).unwrap(), &mut cache)
                .unwrap();
            let d = max_abs_diff(&again, &want.narrow(1, 12, 4).unwrap());
            assert!(
                d < 1e-4,
                "{name} row {row}: after truncate, max abs diff {d}"
            );
        }
    }
}

/// The fixture's sentinel ids by the real tokens' strings (`fim.json`), as a real tokenizer's
/// token-to-id answers.
fn sentinel_ids(name: &str) -> HashMap<String, u32> {
    let text = std::fs::read_to_string(data(name).join("fim.json")).unwrap();
    let fim: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut out = HashMap::new();
    for (role, real) in fim["real_tokens"].as_object().unwrap() {
        let id = fim["tiny_ids"][role].as_u64().unwrap() as u32;
        out.insert(real["string"].as_str().unwrap().to_string(), id);
    }
    out
}

#[test]
fn each_family_builds_the_prompt_of_the_fixture_rows() {
    for (name, family) in FAMILIES {
        let ids = sentinel_ids(name);
        let format = FimFormat::for_family(family, &data(name), |s| ids.get(s).copied()).unwrap();
        let (rows, _) = expected(name);
        for row in rows.to_dtype(DType::U32).unwrap().to_vec2::<u32>().unwrap() {
            // The row: the prompt, a middle, and the end of the middle.
            let at = |id: u32| row.iter().position(|&t| t == id).unwrap();
            let (p, s, m) = (at(format.prefix), at(format.suffix), at(format.middle));
            let prompt = format.prompt(&row[p + 1..s], &row[s + 1..m]);
            assert_eq!(prompt, row[..=m], "{name}: {row:?}");
            assert!(format.is_end(*row.last().unwrap()), "{name}: {row:?}");
            assert!(row[m + 1..row.len() - 1].iter().all(|&t| !format.is_end(t)));
        }
    }
}

#[test]
fn a_model_without_fim_tokens_and_bad_configs_are_named() {
    let e = FimFormat::for_family(CausalFamily::Qwen2, Path::new("m"), |_| None).unwrap_err();
    assert!(e.to_string().contains("<|fim_prefix|>"), "{e}");
    let dir = std::env::temp_dir().join(format!("lacuna-infill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = std::fs::read_to_string(data("llama-fim-tiny").join("config.json")).unwrap();
    for (from, to, field) in [
        (
            "\"model_type\": \"llama\"",
            "\"model_type\": \"gpt2\"",
            "model_type",
        ),
        ("\"type\": \"linear\"", "\"type\": \"yarn\"", "rope_scaling"),
        (
            "\"num_key_value_heads\": 2",
            "\"num_key_value_heads\": 3",
            "num_key_value_heads",
        ),
        (
            "\"rope_theta\": 100000.0",
            "\"rope_theta\": -1.0",
            "rope_theta",
        ),
        (
            "\"hidden_act\": \"silu\"",
            "\"hidden_act\": \"relu\"",
            "hidden_act",
        ),
    ] {
        assert!(config.contains(from), "{from}");
        let text = config.replace(from, to);
        let text = if field == "rope_scaling" {
            text.replace("\"rope_type\": \"linear\",", "")
        } else {
            text
        };
        std::fs::write(dir.join("config.json"), text).unwrap();
        let e = lacuna::infill::CausalConfig::from_dir(&dir)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("`{field}`")) && e.contains("config.json"),
            "{e}"
        );
    }
    // A layer count past the checkpoint names the first missing tensor.
    std::fs::write(
        dir.join("config.json"),
        config.replace("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3"),
    )
    .unwrap();
    std::fs::copy(
        data("llama-fim-tiny").join("model.safetensors"),
        dir.join("model.safetensors"),
    )
    .unwrap();
    let e = CausalLm::load(&dir, DType::F32, &Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(e.contains("model.layers.2."), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn full_pass_diff(dir: &Path, name: &str, dtype: DType) -> f32 {
    let model = CausalLm::load(dir, dtype, &Device::Cpu).unwrap();
    let (ids, want) = expected(name);
    let got = model.forward(&ids, &mut KvCache::new()).unwrap();
    max_abs_diff(&got, &want)
}

#[test]
fn half_precision_sharded_checkpoints_load() {
    for (name, _) in FAMILIES {
        // Two shards named by an index, in bf16, as the released checkpoints ship.
        let dir = scratch(name);
        write_sharded(name, &dir, DType::BF16);
        // bf16 weights computed in f32: off by the weights' rounding only.
        let d = full_pass_diff(&dir, name, DType::F32);
        assert!(d < 0.1, "{name}: bf16 weights in f32: {d}");
        // Computed in bf16 too: finite, near.
        let d = full_pass_diff(&dir, name, DType::BF16);
        assert!(d.is_finite() && d < 0.5, "{name}: computed in bf16: {d}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
