//! Normalization to C2F+ε (in progress).

#[derive(Debug, Clone)]
pub struct NormalGrammar;

#[derive(Debug, Clone, Default)]
pub struct NormalizeOptions;
