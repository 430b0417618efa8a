//! Errors of the diffusion runtime: each names the file, field or tensor at fault.

use std::path::PathBuf;

use thiserror::Error;

/// Why a checkpoint, tokenizer or generation request could not be used.
#[derive(Debug, Error)]
pub enum DiffusionError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: malformed JSON: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path}: field `{field}`: {reason}")]
    Field {
        path: PathBuf,
        field: String,
        reason: String,
    },
    #[error("{path}: unknown model_type {model_type:?} (known: llada, Dream)")]
    UnknownModelType { path: PathBuf, model_type: String },
    #[error("{dir}: no model.safetensors and no model.safetensors.index.json")]
    NoWeights { dir: PathBuf },
    #[error("{path}: tensor `{tensor}`: {reason}")]
    Tensor {
        path: PathBuf,
        tensor: String,
        reason: String,
    },
    #[error("tokenizer {path}: {reason}")]
    Tokenizer { path: PathBuf, reason: String },
    #[error("completion failed: {0}")]
    Completion(String),
    #[error("sampler: {0}")]
    Sampler(String),
    #[error("model: {0}")]
    Candle(#[from] candle_core::Error),
}

/// Results of the diffusion runtime.
pub type Result<T> = std::result::Result<T, DiffusionError>;
