//! Training small masked diffusion models: the one that ships as lacuna's default, or any
//! other a user trains on their own corpus.
//!
//! The model is a LLaDA ([`crate::diffusion::llada`]), so the loader that serves an 8B LLaDA
//! checkpoint serves the trained one too; training only switches its kernels to differentiable
//! ones. The data flow is one way:
//!
//! 1. `corpus` reads prompt/answer pairs (JSON lines) and groups them by task;
//! 2. `bpe` trains a byte-level BPE tokenizer on them, with EOS and mask tokens;
//! 3. `trainer` runs the masked-diffusion objective with `adamw` ([`train`]), writing
//!    checkpoints that are complete model folders and that a later run resumes exactly.
//!
//! The objective (LLaDA's SFT loss): per sequence draw t ~ U(0, 1), mask each answer position
//! (the answer padded with EOS to the task's length) with probability t, and take the
//! cross-entropy on masked positions weighted by 1/t. The prompt is never masked.

mod adamw;
mod bpe;
mod corpus;
mod trainer;

use std::path::PathBuf;

pub use corpus::{MAX_CORPUS_BYTES, MAX_LINE_BYTES, MAX_TEXT_BYTES};
pub use trainer::{
    train, TrainDevice, TrainOptions, TrainReport, MAX_BATCH_TOKENS, MAX_LEN, MAX_PARAMETERS,
    MIN_VOCAB,
};

/// What went wrong while training, naming the file or line at fault.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file or folder could not be written or created.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A corpus line is malformed, or the corpus has no examples.
    #[error("{path}:{line}: {reason}")]
    Corpus {
        /// The corpus file.
        path: PathBuf,
        /// 1-based line; 0 when the fault is the whole file's.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// Options that cannot train (a zero size, heads that do not divide the width), a corpus
    /// whose examples do not fit, or a loss that diverged (given in words).
    #[error("{0}")]
    Invalid(String),
    /// The tokenizer could not be trained, loaded, saved or used.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// Building, loading or saving the model failed.
    #[error(transparent)]
    Model(#[from] crate::diffusion::DiffusionError),
    /// A tensor operation failed in candle.
    #[error("tensor: {0}")]
    Candle(#[from] candle_core::Error),
}

/// Results of training.
pub type Result<T> = std::result::Result<T, TrainError>;

/// The file in a model folder that tells `lacuna generate` how to prompt the model per task.
pub const TASKS_FILE: &str = "lacuna.json";
