//! A model folder whose `model.safetensors` is the input (with the tiny LLaDA fixture's
//! `config.json`) → the checkpoint loader: header, tensor table, names, shapes, dtypes.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use lacuna::diffusion;
use libfuzzer_sys::fuzz_target;

fn folder() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir =
            std::env::temp_dir().join(format!("lacuna-fuzz-checkpoint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/data/llada-tiny/config.json"
        );
        std::fs::copy(config, dir.join("config.json")).unwrap();
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let dir = folder();
    std::fs::write(dir.join("model.safetensors"), data).unwrap();
    let _ = diffusion::load(dir, candle_core::DType::F32, &candle_core::Device::Cpu);
});
