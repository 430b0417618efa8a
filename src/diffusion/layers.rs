//! Building blocks shared by the model families: RMSNorm, rotate-half rotary embeddings,
//! full (bidirectional) multi-head attention with grouped key/value heads written as plain
//! matmul + softmax (no mask, no fused causal kernel), and the SwiGLU feed-forward.
//!
//! Inference uses candle's fused softmax and rotary kernels. They have no backward pass, so
//! training ([`crate::train`]) asks for [`Kernels::Differentiable`]: the same arithmetic from
//! composable ops, which autograd can differentiate.

use candle_core::{DType, Device, Module, Result, Tensor, D};

use super::checkpoint::{Linear, Weights};
use super::error::Result as DResult;

/// Which implementation of softmax and rotary embeddings a forward pass uses.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Kernels {
    /// candle's fused kernels: fastest, inference only.
    #[default]
    Fused,
    /// Composable ops with a backward pass, for training.
    Differentiable,
}

/// Root-mean-square layer norm with a learned scale.
#[derive(Clone, Debug)]
pub struct RmsNorm {
    weight: Tensor,
    eps: f64,
}

impl RmsNorm {
    pub fn new(w: &Weights, dim: usize, eps: f64, name: &str) -> DResult<RmsNorm> {
        Ok(RmsNorm {
            weight: w.pp(name).get(dim, "weight")?,
            eps,
        })
    }

    /// `x / sqrt(mean(x²) + eps) * weight`, the mean taken in f32.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let dtype = x.dtype();
        let xf = x.to_dtype(DType::F32)?;
        let var = xf.sqr()?.mean_keepdim(D::Minus1)?;
        let normed = xf.broadcast_div(&(var + self.eps)?.sqrt()?)?;
        normed
            .to_dtype(dtype)?
            .broadcast_mul(&self.weight.to_dtype(dtype)?)
    }
}

/// Cos/sin tables of rotate-half rotary embeddings, computed in f32.
#[derive(Clone, Debug)]
pub struct Rotary {
    cos: Tensor,
    sin: Tensor,
}

impl Rotary {
    pub fn new(head_dim: usize, max_len: usize, theta: f64, device: &Device) -> Result<Rotary> {
        let half = head_dim / 2;
        let inv: Vec<f32> = (0..half)
            .map(|i| (1.0 / theta.powf(2.0 * i as f64 / head_dim as f64)) as f32)
            .collect();
        let inv = Tensor::from_vec(inv, (1, half), device)?;
        let t = Tensor::arange(0u32, max_len as u32, device)?
            .to_dtype(DType::F32)?
            .reshape((max_len, 1))?;
        let freqs = t.broadcast_mul(&inv)?;
        Ok(Rotary {
            cos: freqs.cos()?,
            sin: freqs.sin()?,
        })
    }

    /// Rotates `x` `[batch, heads, seq, head_dim]`; the rotation is done in f32.
    pub fn apply(&self, x: &Tensor, kernels: Kernels) -> Result<Tensor> {
        let (_, _, seq, _) = x.dims4()?;
        let cos = self.cos.narrow(0, 0, seq)?;
        let sin = self.sin.narrow(0, 0, seq)?;
        let dtype = x.dtype();
        let xf = x.to_dtype(DType::F32)?.contiguous()?;
        match kernels {
            Kernels::Fused => candle_nn::rotary_emb::rope(&xf, &cos, &sin)?.to_dtype(dtype),
            Kernels::Differentiable => {
                candle_nn::rotary_emb::rope_slow(&xf, &cos, &sin)?.to_dtype(dtype)
            }
        }
    }

    pub fn max_len(&self) -> usize {
        self.cos.dim(0).unwrap_or(0)
    }
}

/// Full self-attention: every position attends to every position.
#[derive(Clone, Debug)]
pub struct Attention {
    pub q: Linear,
    pub k: Linear,
    pub v: Linear,
    pub o: Linear,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
}

impl Attention {
    pub fn forward(&self, x: &Tensor, rotary: &Rotary, kernels: Kernels) -> Result<Tensor> {
        let (b, t, _) = x.dims3()?;
        let split = |y: Tensor, h: usize| -> Result<Tensor> {
            y.reshape((b, t, h, self.head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = rotary.apply(&split(self.q.forward(x)?, self.heads)?, kernels)?;
        let k = rotary.apply(&split(self.k.forward(x)?, self.kv_heads)?, kernels)?;
        let v = split(self.v.forward(x)?, self.kv_heads)?;
        let group = self.heads / self.kv_heads;
        let k = repeat_kv(k, group)?;
        let v = repeat_kv(v, group)?;
        let dtype = q.dtype();
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        let scores = (q.matmul(&k.t()?)? * scale)?;
        let scores = scores.to_dtype(DType::F32)?;
        let probs = match kernels {
            Kernels::Fused => candle_nn::ops::softmax_last_dim(&scores)?,
            Kernels::Differentiable => candle_nn::ops::softmax(&scores, D::Minus1)?,
        };
        let y = probs.to_dtype(dtype)?.matmul(&v)?;
        let y = y
            .transpose(1, 2)?
            .reshape((b, t, self.heads * self.head_dim))?;
        self.o.forward(&y)
    }
}

/// Repeats each key/value head `n` times: `[b, kv, t, d]` → `[b, kv * n, t, d]`.
pub(crate) fn repeat_kv(x: Tensor, n: usize) -> Result<Tensor> {
    if n == 1 {
        return Ok(x);
    }
    let (b, kv, t, d) = x.dims4()?;
    x.unsqueeze(2)?
        .expand((b, kv, n, t, d))?
        .reshape((b, kv * n, t, d))
}

/// SwiGLU feed-forward: `down(silu(gate(x)) * up(x))`.
#[derive(Clone, Debug)]
pub struct SwiGlu {
    pub gate: Linear,
    pub up: Linear,
    pub down: Linear,
}

impl SwiGlu {
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let g = candle_nn::Activation::Silu.forward(&self.gate.forward(x)?)?;
        self.down.forward(&(g * self.up.forward(x)?)?)
    }
}
