//! The diffusion runtime: masked diffusion language models on candle (one module per family:
//! [`llada`], [`dream`]), tokenizer glue ([`Tokens`], [`ChatTemplate`]), the authors' samplers
//! ([`sampler`]) and grammar-constrained generation ([`generate()`] with a [`Constraint`];
//! [`generate_masked`] with a [`MaskConstraint`]).
//!
//! Every model implements [`Model`], so samplers never care which family they drive. This
//! module sees the [`Checker`](crate::checker::Checker) only through its public face.

pub(crate) mod checkpoint;
mod constraint;
#[cfg(feature = "embedded-model")]
pub mod default_model;
pub mod dream;
mod error;
mod generate;
pub(crate) mod layers;
pub mod llada;
mod masked;
pub(crate) mod rng;
pub mod sampler;
pub mod tasks;
mod tokens;

use std::path::Path;

use candle_core::{DType, Device, Tensor};

pub use checkpoint::Weights;
pub use constraint::{Constraint, ConstraintStats, TokenTable};
pub use dream::Dream;
pub use error::{DiffusionError, Result};
pub use generate::{
    generate, generate_around, GenerateOptions, Generation, GenerationStats, MAX_EXTRA_POSITIONS,
};
pub use llada::LLaDA;
pub use masked::{
    generate_masked, MaskConstraint, MaskStats, PositionMask, CHECKS_PAST_INEXACT_MASK,
    FIXED_REGION, LAZY_CHECKS,
};
pub use rng::Rng;
pub use sampler::{DreamAlg, DreamSampler, LLaDASampler, Remasking, Sampler};
pub use tokens::{byte_to_char, ChatTemplate, Tokens, MASK_TOKEN_NAMES};

/// The model families.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Family {
    /// LLaDA and models trained by `lacuna train` (the default model among them).
    LLaDA,
    /// Dream, DreamCoder, DiffuCoder.
    Dream,
}

/// A mask predictor: given token ids with masks, logits for every position.
pub trait Model {
    /// `input_ids` `[batch, seq]` (u32 or i64) → logits `[batch, seq, vocab]` in f32, where
    /// position i holds the model's prediction for position i (Dream's shift already applied).
    fn forward(&self, input_ids: &Tensor) -> candle_core::Result<Tensor>;
    /// The id of the mask token.
    fn mask_token_id(&self) -> u32;
    /// The width of the logits.
    fn vocab_size(&self) -> usize;
    /// The end-of-sequence id from the config.
    fn eos_token_id(&self) -> u32;
    /// The family, which picks the chat template and the authors' sampler.
    fn family(&self) -> Family;
    /// The device the weights live on; inputs are built there.
    fn device(&self) -> &Device;
    /// The longest sequence (prompt and generated positions) the model's position encoding
    /// covers, if it has a limit.
    fn max_positions(&self) -> Option<usize> {
        None
    }
}

/// Loads a checkpoint folder of either family, chosen by `model_type` in `config.json`
/// (`llada`; `Dream` for Dream, DreamCoder and DiffuCoder).
pub fn load(dir: &Path, dtype: DType, device: &Device) -> Result<Box<dyn Model>> {
    let model_type = checkpoint::model_type(dir)?;
    match model_type.to_ascii_lowercase().as_str() {
        "llada" => Ok(Box::new(LLaDA::load(dir, dtype, device)?)),
        "dream" => Ok(Box::new(Dream::load(dir, dtype, device)?)),
        _ => Err(DiffusionError::UnknownModelType {
            path: dir.join(checkpoint::CONFIG_FILE),
            model_type,
        }),
    }
}
