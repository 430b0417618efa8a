//! A masked diffusion model (LLaDA, Dream, the embedded default model) as a writer of middles:
//! it sees the whole file at once, the prefix and the middle so far as tokens, the rest of the
//! hole as a span of masks, then the suffix (later holes as spans of masks too), and proposes
//! the token at the first masked position of the hole. So a diffusion model fills a hole the
//! way its semi-autoregressive samplers fill a block (left to right at block granularity 1),
//! with the suffix in view, and each token is drawn under the exact frontier mask; the middle
//! ends where the grammar allows it to and the model puts its end of text there, or starts
//! writing the suffix.
//!
//! The span is what the model is shown, not a limit on the middle: a middle longer than its
//! span keeps one masked position ahead of it. Its length is bounded by the token budget.

use candle_core::Tensor;

use super::generate::{InfillError, MiddleWriter};
use crate::diffusion::{Model, Tokens};
use crate::vocab::TokenId;

/// A diffusion model writing one middle.
pub struct DiffusionWriter<'a> {
    model: &'a dyn Model,
    head: Vec<TokenId>,
    tail: Vec<TokenId>,
    span: usize,
    ends: Vec<TokenId>,
    suffix: Vec<u8>,
}

impl<'a> DiffusionWriter<'a> {
    /// The writer of the middle after `prompt` and `prefix` (text), before `later` (the fixed
    /// pieces after the hole; the holes between them are shown as `span` masks, as this one
    /// is). `ends`: the ids that end a middle (the model's end of text).
    pub fn new(
        model: &'a dyn Model,
        tokens: &Tokens,
        prompt: &[TokenId],
        prefix: &str,
        later: &[String],
        span: usize,
        ends: Vec<TokenId>,
    ) -> Result<DiffusionWriter<'a>, InfillError> {
        let mut head = prompt.to_vec();
        head.extend(tokens.encode(prefix)?);
        let mut tail = Vec::new();
        for (i, piece) in later.iter().enumerate() {
            if i > 0 {
                tail.extend(std::iter::repeat_n(model.mask_token_id(), span));
            }
            tail.extend(tokens.encode(piece)?);
        }
        Ok(DiffusionWriter {
            model,
            head,
            tail,
            span: span.max(1),
            ends,
            suffix: later
                .first()
                .map(|p| p.as_bytes().to_vec())
                .unwrap_or_default(),
        })
    }
}

impl MiddleWriter for DiffusionWriter<'_> {
    fn next_logits(&mut self, written: &[TokenId]) -> Result<Vec<f32>, InfillError> {
        let masks = self.span.saturating_sub(written.len()).max(1);
        let mut ids = self.head.clone();
        ids.extend_from_slice(written);
        let at = ids.len();
        ids.extend(std::iter::repeat_n(self.model.mask_token_id(), masks));
        ids.extend_from_slice(&self.tail);
        if let Some(room) = self.model.max_positions() {
            if ids.len() > room {
                return Err(InfillError::Context {
                    what: "the prompt, the file and its holes (as masked spans)",
                    positions: ids.len(),
                    room,
                });
            }
        }
        let input = Tensor::new(ids.as_slice(), self.model.device())?.unsqueeze(0)?;
        let logits = self.model.forward(&input)?;
        Ok(logits.narrow(1, at, 1)?.flatten_all()?.to_vec1::<f32>()?)
    }

    fn ends(&self) -> &[TokenId] {
        &self.ends
    }

    /// A diffusion model has no token for "the middle ends here" (its end of text ends the
    /// whole output): starting to write the suffix where the middle may end is the model
    /// bridging to it.
    fn suffix(&self) -> Option<&[u8]> {
        Some(&self.suffix)
    }
}
