//! Fill-in-the-middle: a file with holes, each filled by a model's tokens under the exact
//! frontier mask (which tokens may come next so that prefix · middle · suffix can still be a
//! word of the grammar), so every filled file the grammar accepts is the model's own text.
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
//!   autoregressive baseline does.
//!
//! [`Checker::allowed_in_text`]: crate::checker::Checker::allowed_in_text

mod config;
mod diffusion;
mod file;
mod frontier;
mod generate;
mod model;

use std::path::Path;

pub use config::{CausalConfig, CausalFamily, Mlp, Norm};
pub use diffusion::DiffusionWriter;
pub use file::{check_fillable, fill_file, HoleyFile, WriterFor};
pub use frontier::{frontier_mask, FrontierMask, Piece};
pub use generate::{
    fill_middle, CausalWriter, InfillError, InfillOptions, Middle, MiddleWriter, Surroundings,
};
pub use model::{CausalLm, KvCache};

use crate::diffusion::checkpoint::field_error;
use crate::diffusion::Result;

/// A family's fill-in-the-middle prompt: `[bos] prefix_tok · prefix · suffix_tok · suffix ·
/// middle_tok`, after which the model writes the middle and ends it with one of `ends`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FimFormat {
    /// The id that opens the prompt, if the family's tokenizer adds one.
    pub bos: Option<u32>,
    /// The id before the prefix.
    pub prefix: u32,
    /// The id before the suffix.
    pub suffix: u32,
    /// The id after which the middle is written.
    pub middle: u32,
    /// Ids that end the middle (the family's end of text, and the sentinels its own examples
    /// stop on).
    pub ends: Vec<u32>,
}

/// Each family's sentinel strings: (bos, prefix, suffix, middle, ends). From the families' own
/// documentation (see `tests/data/README.md`, fill-in-the-middle fixtures).
fn sentinels(
    family: CausalFamily,
) -> (
    Option<&'static str>,
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
) {
    match family {
        CausalFamily::Qwen2 => (
            None,
            "<|fim_prefix|>",
            "<|fim_suffix|>",
            "<|fim_middle|>",
            &[
                "<|endoftext|>",
                "<|file_sep|>",
                "<|fim_pad|>",
                "<|fim_prefix|>",
                "<|fim_middle|>",
                "<|fim_suffix|>",
                "<|repo_name|>",
                "<|im_end|>",
            ],
        ),
        CausalFamily::Starcoder2 => (
            None,
            "<fim_prefix>",
            "<fim_suffix>",
            "<fim_middle>",
            &["<|endoftext|>", "<fim_pad>"],
        ),
        CausalFamily::Llama => (
            Some("<｜begin▁of▁sentence｜>"),
            "<｜fim▁begin｜>",
            "<｜fim▁hole｜>",
            "<｜fim▁end｜>",
            &["<｜end▁of▁sentence｜>", "<|EOT|>"],
        ),
        CausalFamily::Gemma => (
            Some("<bos>"),
            "<|fim_prefix|>",
            "<|fim_suffix|>",
            "<|fim_middle|>",
            &["<|file_separator|>", "<eos>", "<end_of_turn>"],
        ),
    }
}

impl FimFormat {
    /// The family's format, its sentinels looked up by name (`id_of`: a tokenizer's
    /// token-to-id). A missing prefix, suffix or middle sentinel is named, with `dir`: that
    /// model was not trained to fill in the middle. End tokens the vocabulary lacks are
    /// skipped, but at least one must exist.
    pub fn for_family(
        family: CausalFamily,
        dir: &Path,
        id_of: impl Fn(&str) -> Option<u32>,
    ) -> Result<FimFormat> {
        let (bos, prefix, suffix, middle, ends) = sentinels(family);
        let need = |name: &str| {
            id_of(name).ok_or_else(|| {
                field_error(
                    dir,
                    "model_type",
                    format!(
                        "{family:?}: the tokenizer has no {name} token, so the model cannot \
                         fill in the middle"
                    ),
                )
            })
        };
        let format = FimFormat {
            bos: bos.and_then(&id_of),
            prefix: need(prefix)?,
            suffix: need(suffix)?,
            middle: need(middle)?,
            ends: ends.iter().filter_map(|e| id_of(e)).collect(),
        };
        if format.ends.is_empty() {
            return Err(field_error(
                dir,
                "model_type",
                format!("{family:?}: the tokenizer has none of the end tokens {ends:?}"),
            ));
        }
        Ok(format)
    }

    /// The prompt ids for `prefix` and `suffix` (their token ids), ending where the middle
    /// begins.
    pub fn prompt(&self, prefix: &[u32], suffix: &[u32]) -> Vec<u32> {
        let mut ids = Vec::with_capacity(prefix.len() + suffix.len() + 4);
        ids.extend(self.bos);
        ids.push(self.prefix);
        ids.extend_from_slice(prefix);
        ids.push(self.suffix);
        ids.extend_from_slice(suffix);
        ids.push(self.middle);
        ids
    }

    /// Whether `id` ends the middle.
    pub fn is_end(&self, id: u32) -> bool {
        self.ends.contains(&id)
    }
}

/// The family of a checkpoint folder, from its `config.json`.
pub fn family(dir: &Path) -> Result<CausalFamily> {
    Ok(CausalConfig::from_dir(dir)?.family)
}
