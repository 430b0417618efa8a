//! Fill-in-the-middle: a file with holes, each filled by a model's tokens under the exact
//! frontier mask (which tokens may come next so that prefix · middle · suffix can still be a
//! word of the grammar), so every filled file the grammar accepts is the model's own text.
//!
//! The frontier mask is in the core; everything that runs a model needs the `models` feature.
//!
//! - [`CausalLm`] over a [`CausalConfig`]: the causal families FIM code models ship in (Qwen2
//!   for Qwen2.5-Coder, Starcoder2, Llama for DeepSeek-Coder, Gemma for CodeGemma), with a
//!   key/value cache; [`FimFormat`]: each family's prompt (its sentinels in
//!   prefix-suffix-middle order) and the tokens that end a middle.
//! - [`frontier_mask`]: the exact mask at a middle's frontier ([`Checker::allowed_in_text`]
//!   on the text with a hole of one token, then a hole of any text).
//! - [`fill_middle`]: one middle, from a [`MiddleWriter`] ([`CausalWriter`]: a FIM model in its
//!   prompt; [`DiffusionWriter`]: a masked diffusion model seeing the rest of the hole as
//!   masks); [`fill_file`]: every hole of a [`HoleyFile`], one after another, as the paper's
//!   autoregressive baseline does; [`fill_native`]: every hole at once by a masked diffusion
//!   model, each hole a span of masks on one canvas with the file's text.
//!
//! [`Checker::allowed_in_text`]: crate::checker::Checker::allowed_in_text

#[cfg(feature = "models")]
mod config;
#[cfg(feature = "models")]
mod diffusion;
#[cfg(feature = "models")]
mod file;
#[cfg(feature = "models")]
mod fim;
mod frontier;
#[cfg(feature = "models")]
mod generate;
#[cfg(feature = "models")]
mod model;
#[cfg(feature = "models")]
mod native;

#[cfg(feature = "models")]
pub use config::{CausalConfig, CausalFamily, Mlp, Norm};
#[cfg(feature = "models")]
pub use diffusion::DiffusionWriter;
#[cfg(feature = "models")]
pub use file::{check_fillable, fill_file, HoleyFile, WriterFor};
#[cfg(feature = "models")]
pub use fim::FimFormat;
pub use frontier::{frontier_mask, may_end, may_follow, FrontierMask, Piece};
#[cfg(feature = "models")]
pub use generate::{
    fill_middle, CausalWriter, InfillError, InfillOptions, Middle, MiddleWriter, Surroundings,
};
#[cfg(feature = "models")]
pub use model::{CausalLm, KvCache};
#[cfg(feature = "models")]
pub use native::{fill_native, NativeFill, NativeOptions};
