//! Writes a copy of a safetensors file with every f32 tensor stored as f16: how the default
//! model's weights are shipped at half the size (the loader converts them back to the dtype
//! it runs in). Other dtypes are copied as they are.
//!
//! `cargo run --release --example half_weights -- IN.safetensors OUT.safetensors`

use candle_core::{DType, Device};

fn main() -> candle_core::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, input, output] = &args[..] else {
        eprintln!("usage: half_weights IN.safetensors OUT.safetensors");
        std::process::exit(2);
    };
    let mut tensors = candle_core::safetensors::load(input, &Device::Cpu)?;
    for t in tensors.values_mut() {
        if t.dtype() == DType::F32 {
            *t = t.to_dtype(DType::F16)?;
        }
    }
    candle_core::safetensors::save(&tensors, output)?;
    eprintln!("{} tensors written to {output}", tensors.len());
    Ok(())
}
