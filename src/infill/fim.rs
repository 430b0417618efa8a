//! Each family's fill-in-the-middle prompt: its sentinel tokens in prefix-suffix-middle order,
//! and the tokens that end a middle.

use std::path::Path;

use super::config::CausalFamily;
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
