//! The fixture checkpoints of `tests/data` as the model tests read them: their folders, the
//! reference logits beside them, scratch folders, and a checkpoint rewritten as two shards.
//! Shared by `tests/diffusion_parity.rs` and `tests/infill_parity.rs`.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};

/// The fixture folder `tests/data/NAME`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The fixture's `expected.safetensors`: `input_ids` and the reference `logits`.
pub fn expected(name: &str) -> (Tensor, Tensor) {
    let t = candle_core::safetensors::load(data(name).join("expected.safetensors"), &Device::Cpu)
        .unwrap();
    (t["input_ids"].clone(), t["logits"].clone())
}

/// The largest absolute difference of two tensors of one shape.
pub fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.dims(), b.dims());
    (a - b)
        .unwrap()
        .abs()
        .unwrap()
        .flatten_all()
        .unwrap()
        .max(0)
        .unwrap()
        .to_scalar::<f32>()
        .unwrap()
}

/// A scratch folder unique to this test process.
pub fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lacuna-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The fixture's weights.
pub fn tensors(name: &str) -> HashMap<String, Tensor> {
    candle_core::safetensors::load(data(name).join("model.safetensors"), &Device::Cpu).unwrap()
}

/// Writes the fixture into `dir` as the released checkpoints ship: its config, and its
/// weights in `dtype` split into two shards named by `model.safetensors.index.json`.
pub fn write_sharded(name: &str, dir: &Path, dtype: DType) {
    std::fs::copy(data(name).join("config.json"), dir.join("config.json")).unwrap();
    let mut all: Vec<(String, Tensor)> = tensors(name).into_iter().collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    let half = all.len() / 2;
    let mut map = serde_json::Map::new();
    for (i, part) in [&all[..half], &all[half..]].into_iter().enumerate() {
        let file = format!("model-{:05}-of-00002.safetensors", i + 1);
        let ts: HashMap<String, Tensor> = part
            .iter()
            .map(|(k, v)| (k.clone(), v.to_dtype(dtype).unwrap()))
            .collect();
        candle_core::safetensors::save(&ts, dir.join(&file)).unwrap();
        for (k, _) in part {
            map.insert(k.clone(), file.clone().into());
        }
    }
    let index = serde_json::json!({"metadata": {}, "weight_map": map});
    std::fs::write(dir.join("model.safetensors.index.json"), index.to_string()).unwrap();
}
