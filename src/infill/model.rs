//! One causal transformer for the four families of [`CausalConfig`], with a key/value cache, so
//! a left-to-right loop pays for each new token only (the frontier mask, not the model, is
//! what a constrained infilling step should spend its time on).
//!
//! Written here rather than taken from candle-transformers because three of its four models
//! do not fit: its Llama cannot read or apply DeepSeek-Coder's linear rotary scaling, its
//! Starcoder2 always ties the head, and each keeps its cache inside the model (`&mut self`)
//! and returns the last position's logits only, where parity and canvases need every
//! position's. The blocks are the diffusion models' arithmetic ([`crate::diffusion`]), under a
//! causal mask.

use std::path::Path;

use candle_core::{DType, Device, Module, Tensor, D};

use super::config::{CausalConfig, Mlp, Norm};
use crate::diffusion::checkpoint::{Linear, Weights};
use crate::diffusion::layers::repeat_kv;
use crate::diffusion::Result;

/// A block's or the final norm.
#[derive(Clone, Debug)]
enum NormLayer {
    Rms { weight: Tensor, eps: f64 },
    Layer(candle_nn::LayerNorm),
}

impl NormLayer {
    fn new(cfg: &CausalConfig, w: &Weights, name: &str) -> Result<NormLayer> {
        let w = w.pp(name);
        Ok(match cfg.norm {
            Norm::Rms { eps, plus_one } => {
                let weight = w.get(cfg.hidden, "weight")?;
                let weight = if plus_one {
                    (weight + 1.0).map_err(candle)?
                } else {
                    weight
                };
                NormLayer::Rms { weight, eps }
            }
            // Computed in f32 whatever the weights' dtype (as the RMSNorm's mean is).
            Norm::Layer { eps } => NormLayer::Layer(candle_nn::LayerNorm::new(
                w.get(cfg.hidden, "weight")?
                    .to_dtype(DType::F32)
                    .map_err(candle)?,
                w.get(cfg.hidden, "bias")?
                    .to_dtype(DType::F32)
                    .map_err(candle)?,
                eps,
            )),
        })
    }

    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        match self {
            NormLayer::Rms { weight, eps } => {
                let dtype = x.dtype();
                let xf = x.to_dtype(DType::F32)?;
                let var = xf.sqr()?.mean_keepdim(D::Minus1)?;
                xf.broadcast_div(&(var + *eps)?.sqrt()?)?
                    .to_dtype(dtype)?
                    .broadcast_mul(weight)
            }
            NormLayer::Layer(n) => {
                let dtype = x.dtype();
                n.forward(&x.to_dtype(DType::F32)?)?.to_dtype(dtype)
            }
        }
    }
}

fn candle(e: candle_core::Error) -> crate::diffusion::DiffusionError {
    crate::diffusion::DiffusionError::Candle(e)
}

#[derive(Clone, Debug)]
struct Block {
    input_norm: NormLayer,
    q: Linear,
    k: Linear,
    v: Linear,
    o: Linear,
    post_norm: NormLayer,
    /// Gated: (gate, up, down); not gated: (c_fc, -, c_proj).
    up_in: Linear,
    gate: Option<Linear>,
    down: Linear,
}

/// The keys and values of the positions seen so far, per block; `len` positions.
#[derive(Clone, Debug, Default)]
pub struct KvCache {
    layers: Vec<Option<(Tensor, Tensor)>>,
    len: usize,
}

impl KvCache {
    /// An empty cache.
    pub fn new() -> KvCache {
        KvCache::default()
    }

    /// Positions cached.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Drops every position from `len` on (a loop that backs up).
    pub fn truncate(&mut self, len: usize) -> candle_core::Result<()> {
        if len >= self.len {
            return Ok(());
        }
        for (k, v) in self.layers.iter_mut().flatten() {
            *k = k.narrow(2, 0, len)?;
            *v = v.narrow(2, 0, len)?;
        }
        self.len = len;
        Ok(())
    }
}

/// A causal language model of one of the four families.
#[derive(Clone, Debug)]
pub struct CausalLm {
    cfg: CausalConfig,
    embed: Tensor,
    blocks: Vec<Block>,
    norm: NormLayer,
    head: Tensor,
    device: Device,
}

impl CausalLm {
    /// Builds the model from weights named as in the family's Hugging Face checkpoints.
    pub fn new(cfg: &CausalConfig, w: &Weights) -> Result<CausalLm> {
        let m = w.pp("model");
        let (d, i, n) = (cfg.hidden, cfg.intermediate, cfg.vocab);
        let (q_out, kv_out) = (cfg.heads * cfg.head_dim, cfg.kv_heads * cfg.head_dim);
        let embed = m.pp("embed_tokens").get((n, d), "weight")?;
        // Not `with_capacity(layers)`: the count is the config's word (see `LLaDA::new`).
        let mut blocks = Vec::new();
        for l in 0..cfg.layers {
            let b = m.pp(format!("layers.{l}"));
            let a = b.pp("self_attn");
            let f = b.pp("mlp");
            let (up_in, gate, down) = match cfg.mlp {
                Mlp::SwiGlu | Mlp::GeluTanhGated => (
                    f.linear(d, i, false, "up_proj")?,
                    Some(f.linear(d, i, false, "gate_proj")?),
                    f.linear(i, d, false, "down_proj")?,
                ),
                Mlp::GeluTanh => (
                    f.linear(d, i, true, "c_fc")?,
                    None,
                    f.linear(i, d, true, "c_proj")?,
                ),
            };
            blocks.push(Block {
                input_norm: NormLayer::new(cfg, &b, "input_layernorm")?,
                q: a.linear(d, q_out, cfg.qkv_bias, "q_proj")?,
                k: a.linear(d, kv_out, cfg.qkv_bias, "k_proj")?,
                v: a.linear(d, kv_out, cfg.qkv_bias, "v_proj")?,
                o: a.linear(q_out, d, cfg.o_bias, "o_proj")?,
                post_norm: NormLayer::new(cfg, &b, "post_attention_layernorm")?,
                up_in,
                gate,
                down,
            });
        }
        let norm = NormLayer::new(cfg, &m, "norm")?;
        let head = if w.contains("lm_head.weight") || !cfg.tie_word_embeddings {
            w.pp("lm_head").get((n, d), "weight")?
        } else {
            embed.clone()
        };
        Ok(CausalLm {
            cfg: cfg.clone(),
            embed,
            blocks,
            norm,
            head,
            device: w.device().clone(),
        })
    }

    /// Loads `dir/config.json` and the weights of `dir` in the compute dtype.
    pub fn load(dir: &Path, dtype: DType, device: &Device) -> Result<CausalLm> {
        let cfg = CausalConfig::from_dir(dir)?;
        CausalLm::new(&cfg, &Weights::open(dir, dtype, device)?)
    }

    /// The config the model was built from.
    pub fn config(&self) -> &CausalConfig {
        &self.cfg
    }

    /// The device the weights live on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Logits `[batch, seq, vocab]` (f32) for `input_ids` `[batch, seq]` coming after the
    /// `cache.len()` positions already cached: `logits[b, i]` is the next-token distribution
    /// after position i. The new positions are added to the cache.
    pub fn forward(&self, input_ids: &Tensor, cache: &mut KvCache) -> candle_core::Result<Tensor> {
        let (b, t) = input_ids.dims2()?;
        let offset = cache.len;
        if cache.layers.len() != self.blocks.len() {
            cache.layers = vec![None; self.blocks.len()];
        }
        let ids = input_ids.to_dtype(DType::U32)?.flatten_all()?;
        let mut x = self
            .embed
            .embedding(&ids)?
            .reshape((b, t, self.cfg.hidden))?;
        if self.cfg.scale_embeddings {
            x = (x * (self.cfg.hidden as f64).sqrt())?;
        }
        let (cos, sin) = self.rotary(offset, t)?;
        let mask = causal_mask(t, offset, &self.device)?;
        for (block, kv) in self.blocks.iter().zip(cache.layers.iter_mut()) {
            let h = block.input_norm.forward(&x)?;
            x = (&x + self.attention(block, &h, &cos, &sin, mask.as_ref(), kv)?)?;
            let h = block.post_norm.forward(&x)?;
            let y = match &block.gate {
                Some(gate) => {
                    let g = gate.forward(&h)?;
                    let g = match self.cfg.mlp {
                        Mlp::SwiGlu => candle_nn::ops::silu(&g)?,
                        _ => g.gelu()?,
                    };
                    block.down.forward(&(g * block.up_in.forward(&h)?)?)?
                }
                None => block.down.forward(&block.up_in.forward(&h)?.gelu()?)?,
            };
            x = (&x + y)?;
        }
        cache.len = offset + t;
        let x = self.norm.forward(&x)?;
        x.broadcast_matmul(&self.head.t()?)?.to_dtype(DType::F32)
    }

    fn attention(
        &self,
        block: &Block,
        x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        mask: Option<&Tensor>,
        kv: &mut Option<(Tensor, Tensor)>,
    ) -> candle_core::Result<Tensor> {
        let (b, t, _) = x.dims3()?;
        let hd = self.cfg.head_dim;
        let split = |y: Tensor, h: usize| -> candle_core::Result<Tensor> {
            y.reshape((b, t, h, hd))?.transpose(1, 2)?.contiguous()
        };
        let rope = |y: Tensor| -> candle_core::Result<Tensor> {
            let dtype = y.dtype();
            candle_nn::rotary_emb::rope(&y.to_dtype(DType::F32)?, cos, sin)?.to_dtype(dtype)
        };
        let q = rope(split(block.q.forward(x)?, self.cfg.heads)?)?;
        let mut k = rope(split(block.k.forward(x)?, self.cfg.kv_heads)?)?;
        let mut v = split(block.v.forward(x)?, self.cfg.kv_heads)?;
        if let Some((k0, v0)) = kv.as_ref() {
            k = Tensor::cat(&[k0, &k], 2)?;
            v = Tensor::cat(&[v0, &v], 2)?;
        }
        *kv = Some((k.clone(), v.clone()));
        let group = self.cfg.heads / self.cfg.kv_heads;
        let (k, v) = (repeat_kv(k, group)?, repeat_kv(v, group)?);
        let scores = (q.matmul(&k.t()?)? * (1.0 / (hd as f64).sqrt()))?.to_dtype(DType::F32)?;
        let scores = match mask {
            Some(m) => scores.broadcast_add(m)?,
            None => scores,
        };
        let probs = candle_nn::ops::softmax_last_dim(&scores)?.to_dtype(v.dtype())?;
        let y = probs
            .matmul(&v)?
            .transpose(1, 2)?
            .reshape((b, t, self.cfg.heads * hd))?;
        block.o.forward(&y)
    }

    /// Cos/sin tables `[t, head_dim / 2]` for positions `offset..offset + t`, each divided
    /// by the linear scaling factor.
    fn rotary(&self, offset: usize, t: usize) -> candle_core::Result<(Tensor, Tensor)> {
        let hd = self.cfg.head_dim;
        let inv: Vec<f32> = (0..hd / 2)
            .map(|i| (1.0 / self.cfg.rope_theta.powf(2.0 * i as f64 / hd as f64)) as f32)
            .collect();
        let inv = Tensor::from_vec(inv, (1, hd / 2), &self.device)?;
        let scale = 1.0 / self.cfg.rope_linear_factor;
        let pos: Vec<f32> = (offset..offset + t)
            .map(|p| (p as f64 * scale) as f32)
            .collect();
        let pos = Tensor::from_vec(pos, (t, 1), &self.device)?;
        let freqs = pos.broadcast_mul(&inv)?;
        Ok((freqs.cos()?, freqs.sin()?))
    }
}

/// `[t, offset + t]`: 0 where query `i` (at `offset + i`) may see key `j`, -inf after it;
/// `None` for one new position (it sees everything cached).
fn causal_mask(t: usize, offset: usize, device: &Device) -> candle_core::Result<Option<Tensor>> {
    if t == 1 {
        return Ok(None);
    }
    let mask: Vec<f32> = (0..t)
        .flat_map(|i| {
            (0..offset + t).map(move |j| {
                if j > offset + i {
                    f32::NEG_INFINITY
                } else {
                    0.0
                }
            })
        })
        .collect();
    Tensor::from_vec(mask, (t, offset + t), device).map(Some)
}
