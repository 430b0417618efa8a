//! Errors of the diffusion runtime: each names the file, field or tensor at fault.

use std::path::PathBuf;

use thiserror::Error;

/// Why a checkpoint, tokenizer or generation request could not be used.
#[derive(Debug, Error)]
pub enum DiffusionError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A JSON file (config, index, model card, schema) does not parse, or lacks a field or
    /// has one of the wrong type.
    #[error("{path}: malformed JSON: {source}")]
    Json {
        /// The file (or the label of JSON held in memory).
        path: PathBuf,
        /// The parser's error, with line and column.
        source: serde_json::Error,
    },
    /// A config field parses but its value is not supported (a check serde cannot express).
    #[error("{path}: field `{field}`: {reason}")]
    Field {
        /// The config file.
        path: PathBuf,
        /// The field's name.
        field: String,
        /// What is wrong with its value.
        reason: String,
    },
    /// `config.json`'s `model_type` names neither family.
    #[error("{path}: unknown model_type {model_type:?} (known: llada, Dream)")]
    UnknownModelType {
        /// The config file.
        path: PathBuf,
        /// The `model_type` found.
        model_type: String,
    },
    /// A checkpoint folder has no weight files.
    #[error("{dir}: no model.safetensors and no model.safetensors.index.json")]
    NoWeights {
        /// The checkpoint folder.
        dir: PathBuf,
    },
    /// A tensor is missing, has the wrong shape, or the weights cannot be read at all.
    #[error("{path}: tensor `{tensor}`: {reason}")]
    Tensor {
        /// The checkpoint folder (or the label of weights held in memory).
        path: PathBuf,
        /// The tensor's full name; `*` when the weights as a whole are unreadable.
        tensor: String,
        /// What is wrong.
        reason: String,
    },
    /// A tokenizer could not be loaded, lacks a mask token, disagrees with its model, or
    /// failed to encode.
    #[error("tokenizer {path}: {reason}")]
    Tokenizer {
        /// The `tokenizer.json` (or the label of one held in memory).
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The checker could not complete a constrained output (given in words).
    #[error("completion failed: {0}")]
    Completion(String),
    /// Sampler settings that do not fit the generation, or a generation request that cannot
    /// run (given in words).
    #[error("sampler: {0}")]
    Sampler(String),
    /// A tensor operation failed in candle.
    #[error("model: {0}")]
    Candle(#[from] candle_core::Error),
}

/// Results of the diffusion runtime.
pub type Result<T> = std::result::Result<T, DiffusionError>;
