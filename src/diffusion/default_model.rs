//! lacuna's default model, embedded in the binary: a small LLaDA trained by `lacuna train` on
//! SMILES, schema-conditioned JSON and C++ (see `models/README.md`), so that generation works
//! on a fresh clone with no download. [`load_folder`] opens any checkpoint folder, giving the
//! same [`LoadedModel`] either way.

use std::fmt;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device};

use super::checkpoint::{parse_json, Weights};
use super::error::Result;
use super::llada::{Config, LLaDA};
use super::tasks::ModelCard;
use super::{Model, Tokens};

const CONFIG: &str = include_str!("../../models/default/config.json");
const WEIGHTS: &[u8] = include_bytes!("../../models/default/model.safetensors");
const TOKENIZER: &[u8] = include_bytes!("../../models/default/tokenizer.json");
const CARD: &str = include_str!("../../models/default/lacuna.json");

/// A model ready to generate: weights, tokenizer, and the task card if it has one.
///
/// `Debug` shows the model's family and sizes, not its weights.
pub struct LoadedModel {
    /// The mask predictor.
    pub model: Box<dyn Model>,
    /// Its tokenizer; its mask id agrees with the model's.
    pub tokens: Tokens,
    /// The tasks it was trained for (`lacuna.json` in the folder); `None` for a checkpoint
    /// without one.
    pub card: Option<ModelCard>,
    /// Where it came from, for messages.
    pub source: PathBuf,
}

impl fmt::Debug for LoadedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedModel")
            .field("family", &self.model.family())
            .field("vocab_size", &self.model.vocab_size())
            .field("tokens", &self.tokens)
            .field("card", &self.card)
            .field("source", &self.source)
            .finish()
    }
}

/// The label of the embedded model in messages.
pub const EMBEDDED: &str = "<embedded default model>";

/// Loads the embedded default model.
pub fn load_default(dtype: DType, device: &Device) -> Result<LoadedModel> {
    let label = Path::new(EMBEDDED);
    let cfg = Config::from_json(CONFIG, label)?;
    let weights = Weights::from_bytes(WEIGHTS, dtype, device, label)?;
    let model = LLaDA::new(&cfg, &weights)?;
    let tokens = Tokens::from_bytes(TOKENIZER, None, label)?;
    let card: ModelCard = parse_json(&label.join(ModelCard::FILE), CARD)?;
    Ok(LoadedModel {
        model: Box::new(model),
        tokens,
        card: Some(card),
        source: label.to_path_buf(),
    })
}

/// Loads a checkpoint folder (LLaDA or Dream) with `tokenizer` (default: the folder's).
pub fn load_folder(
    dir: &Path,
    tokenizer: Option<&Path>,
    dtype: DType,
    device: &Device,
) -> Result<LoadedModel> {
    let model = super::load(dir, dtype, device)?;
    let tok_path = tokenizer.map_or_else(|| dir.join("tokenizer.json"), Path::to_path_buf);
    let tokens = Tokens::load_with_mask(&tok_path, None)?;
    if tokens.mask_id() != model.mask_token_id() {
        return Err(super::DiffusionError::Tokenizer {
            path: tok_path,
            reason: format!(
                "mask token id {} differs from the model's mask_token_id {}",
                tokens.mask_id(),
                model.mask_token_id()
            ),
        });
    }
    Ok(LoadedModel {
        model,
        tokens,
        card: ModelCard::read(dir)?,
        source: dir.to_path_buf(),
    })
}
