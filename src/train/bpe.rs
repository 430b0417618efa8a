//! A byte-level BPE tokenizer trained on the corpus with the `tokenizers` crate, GPT-2 style:
//! every byte is in the initial alphabet, so any text (and any byte a grammar's completion
//! needs) is encodable, and [`crate::diffusion::Tokens`] recovers the exact bytes of each id.
//! The special tokens come first: `<|eos|>` (id 0) and `<|mask|>` (id 1).

use std::path::Path;

use tokenizers::models::bpe::{BpeTrainerBuilder, BPE};
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::{AddedToken, Tokenizer, TokenizerBuilder};

use super::{Result, TrainError};

/// The end-of-sequence token; it also pads answers.
pub const EOS_TOKEN: &str = "<|eos|>";
/// The mask token, one of the names [`crate::diffusion::Tokens`] looks for.
pub const MASK_TOKEN: &str = "<|mask|>";
/// Id of [`EOS_TOKEN`].
pub const EOS_ID: u32 = 0;
/// Id of [`MASK_TOKEN`].
pub const MASK_ID: u32 = 1;

/// Trains a tokenizer of at most `vocab_size` ids on `texts` and saves it as `path`.
pub fn train_tokenizer<'a>(
    texts: impl Iterator<Item = &'a str> + Send,
    vocab_size: usize,
    path: &Path,
) -> Result<Tokenizer> {
    let err = |e: tokenizers::Error| TrainError::Tokenizer(e.to_string());
    if vocab_size < 258 + 2 {
        return Err(TrainError::Invalid(format!(
            "vocabulary size {vocab_size}: must be at least 260 (256 bytes, EOS, mask, merges)"
        )));
    }
    let mut trainer = BpeTrainerBuilder::new()
        .vocab_size(vocab_size)
        .min_frequency(2)
        .show_progress(false)
        .special_tokens(vec![
            AddedToken::from(EOS_TOKEN, true),
            AddedToken::from(MASK_TOKEN, true),
        ])
        .initial_alphabet(ByteLevel::alphabet().into_iter().collect())
        .build();
    let byte_level = ByteLevel::new(false, false, true);
    let mut tokenizer =
        TokenizerBuilder::<BPE, NormalizerWrapper, ByteLevel, ByteLevel, ByteLevel>::new()
            .with_model(BPE::default())
            .with_pre_tokenizer(Some(byte_level))
            .with_decoder(Some(byte_level))
            .build()
            .map_err(err)?;
    tokenizer.train(&mut trainer, texts).map_err(err)?;
    let tokenizer: Tokenizer = tokenizer.into();
    check_specials(&tokenizer)?;
    tokenizer.save(path, false).map_err(err)?;
    Ok(tokenizer)
}

fn check_specials(t: &Tokenizer) -> Result<()> {
    for (name, id) in [(EOS_TOKEN, EOS_ID), (MASK_TOKEN, MASK_ID)] {
        if t.token_to_id(name) != Some(id) {
            return Err(TrainError::Tokenizer(format!(
                "{name} should have id {id}, has {:?}",
                t.token_to_id(name)
            )));
        }
    }
    Ok(())
}
