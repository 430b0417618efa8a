//! Dream (also DreamCoder and DiffuCoder): a Qwen2 transformer (q/k/v biases, grouped
//! key/value heads, RMSNorm, rotate-half RoPE, SwiGLU) under full bidirectional attention, in
//! Qwen2's config field names and tensor names. Its logits are shifted right by one: position i
//! gets the prediction made at position i - 1, and the first position repeats its own.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use serde::Deserialize;

use super::checkpoint::{field_error, read_json, Weights, CONFIG_FILE};
use super::error::Result;
use super::layers::{Attention, Kernels, RmsNorm, Rotary, SwiGlu};
use super::{Family, Model};

fn default_eps() -> f64 {
    1e-6
}
fn default_theta() -> f64 {
    10_000.0
}
fn default_mask() -> u32 {
    151_666
}
fn default_eos() -> u32 {
    151_643
}
fn default_max_len() -> usize {
    32_768
}

/// Dream's `config.json`, in Qwen2's field names.
#[derive(Clone, Debug, Deserialize)]
pub struct Config {
    /// Width of the residual stream (the model dimension).
    pub hidden_size: usize,
    /// Width of the SwiGLU feed-forward layer.
    pub intermediate_size: usize,
    /// Number of transformer layers.
    pub num_hidden_layers: usize,
    /// Number of query heads; must divide `hidden_size` into an even head dimension.
    pub num_attention_heads: usize,
    /// Number of key/value heads (grouped-query attention); `None` means one per query head.
    #[serde(default)]
    pub num_key_value_heads: Option<usize>,
    /// Epsilon of every RMSNorm (default 1e-6).
    #[serde(default = "default_eps")]
    pub rms_norm_eps: f64,
    /// Base of the rotary position embedding's frequencies (default 10 000).
    #[serde(default = "default_theta")]
    pub rope_theta: f64,
    /// Qwen2's RoPE scaling; only `None` or `null` is accepted.
    #[serde(default)]
    pub rope_scaling: Option<serde_json::Value>,
    /// Longest sequence the checkpoint was trained for, in tokens (default 32 768); the model
    /// reports at most 4096 as [`Model::max_positions`].
    #[serde(default = "default_max_len")]
    pub max_position_embeddings: usize,
    /// Rows of the embedding and output matrices: the width of the logits.
    pub vocab_size: usize,
    /// Whether the output head reuses the embedding matrix (used only when the checkpoint has
    /// no `lm_head.weight`).
    #[serde(default)]
    pub tie_word_embeddings: bool,
    /// The mask token's id (default Dream's 151 666).
    #[serde(default = "default_mask")]
    pub mask_token_id: u32,
    /// The end-of-sequence id (default Dream's 151 643).
    #[serde(default = "default_eos")]
    pub eos_token_id: u32,
    /// The feed-forward activation; only `silu` (or absent) is accepted.
    #[serde(default)]
    pub hidden_act: Option<String>,
}

impl Config {
    /// Reads and validates `dir/config.json`.
    pub fn from_dir(dir: &Path) -> Result<Config> {
        let cfg: Config = read_json(&dir.join(CONFIG_FILE))?;
        cfg.validate(dir)?;
        Ok(cfg)
    }

    fn validate(&self, dir: &Path) -> Result<()> {
        let bad = |f: &str, r: &str| Err(field_error(dir, f, r));
        let (d, h) = (self.hidden_size, self.num_attention_heads);
        if d == 0 || h == 0 || d % h != 0 {
            return bad(
                "num_attention_heads",
                "must be positive and divide hidden_size",
            );
        }
        if self.kv_heads() == 0 || h % self.kv_heads() != 0 {
            return bad(
                "num_key_value_heads",
                "must be positive and divide num_attention_heads",
            );
        }
        if !self.head_dim().is_multiple_of(2) {
            return bad(
                "hidden_size",
                "head dimension must be even for rotary embeddings",
            );
        }
        if self.rope_scaling.as_ref().is_some_and(|v| !v.is_null()) {
            return bad("rope_scaling", "scaled rotary embeddings are not supported");
        }
        if let Some(a) = self.hidden_act.as_deref() {
            if a != "silu" {
                return bad("hidden_act", "only silu is supported");
            }
        }
        for (field, id) in [
            ("mask_token_id", self.mask_token_id),
            ("eos_token_id", self.eos_token_id),
        ] {
            if id as usize >= self.vocab_size {
                return Err(field_error(
                    dir,
                    field,
                    format!("{id} is outside the vocabulary of {} ids", self.vocab_size),
                ));
            }
        }
        super::llada::check_floats(dir, self.rope_theta, self.rms_norm_eps)
    }

    /// Number of key/value heads, defaulted.
    pub fn kv_heads(&self) -> usize {
        self.num_key_value_heads.unwrap_or(self.num_attention_heads)
    }

    /// Width of one attention head: `hidden_size / num_attention_heads`.
    pub fn head_dim(&self) -> usize {
        self.hidden_size / self.num_attention_heads
    }
}

#[derive(Clone, Debug)]
struct Layer {
    input_norm: RmsNorm,
    attn: Attention,
    post_norm: RmsNorm,
    mlp: SwiGlu,
}

/// The Dream mask predictor.
#[derive(Clone, Debug)]
pub struct Dream {
    cfg: Config,
    embed: Tensor,
    layers: Vec<Layer>,
    norm: RmsNorm,
    head: Tensor,
    rotary: Rotary,
    device: Device,
}

impl Dream {
    /// Builds the model from weights named as in Qwen2 / Dream checkpoints.
    pub fn new(cfg: &Config, w: &Weights) -> Result<Dream> {
        let m = w.pp("model");
        let (d, h, n) = (cfg.hidden_size, cfg.intermediate_size, cfg.vocab_size);
        let kv = cfg.kv_heads() * cfg.head_dim();
        let embed = m.pp("embed_tokens").get((n, d), "weight")?;
        // Not `with_capacity(num_hidden_layers)`: see `LLaDA::new`.
        let mut layers = Vec::new();
        for i in 0..cfg.num_hidden_layers {
            let l = m.pp(format!("layers.{i}"));
            let a = l.pp("self_attn");
            let f = l.pp("mlp");
            layers.push(Layer {
                input_norm: RmsNorm::new(&l, d, cfg.rms_norm_eps, "input_layernorm")?,
                attn: Attention {
                    q: a.linear(d, d, true, "q_proj")?,
                    k: a.linear(d, kv, true, "k_proj")?,
                    v: a.linear(d, kv, true, "v_proj")?,
                    o: a.linear(d, d, false, "o_proj")?,
                    heads: cfg.num_attention_heads,
                    kv_heads: cfg.kv_heads(),
                    head_dim: cfg.head_dim(),
                },
                post_norm: RmsNorm::new(&l, d, cfg.rms_norm_eps, "post_attention_layernorm")?,
                mlp: SwiGlu {
                    gate: f.linear(d, h, false, "gate_proj")?,
                    up: f.linear(d, h, false, "up_proj")?,
                    down: f.linear(h, d, false, "down_proj")?,
                },
            });
        }
        let norm = RmsNorm::new(&m, d, cfg.rms_norm_eps, "norm")?;
        let head = if cfg.tie_word_embeddings && !w.contains("lm_head.weight") {
            embed.clone()
        } else {
            w.pp("lm_head").get((n, d), "weight")?
        };
        let max_len = cfg.max_position_embeddings.clamp(1, 4096);
        let rotary = Rotary::new(cfg.head_dim(), max_len, cfg.rope_theta, w.device())?;
        Ok(Dream {
            cfg: cfg.clone(),
            embed,
            layers,
            norm,
            head,
            rotary,
            device: w.device().clone(),
        })
    }

    /// Loads `dir/config.json` and the weights of `dir` in the compute dtype.
    pub fn load(dir: &Path, dtype: DType, device: &Device) -> Result<Dream> {
        let cfg = Config::from_dir(dir)?;
        Dream::new(&cfg, &Weights::open(dir, dtype, device)?)
    }

    /// The config the model was built from.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Logits as the network computes them, before Dream's shift (f32).
    pub fn forward_unshifted(&self, input_ids: &Tensor) -> candle_core::Result<Tensor> {
        let (b, seq) = input_ids.dims2()?;
        let fresh;
        let rotary = if seq > self.rotary.max_len() {
            fresh = Rotary::new(self.cfg.head_dim(), seq, self.cfg.rope_theta, &self.device)?;
            &fresh
        } else {
            &self.rotary
        };
        let ids = input_ids.to_dtype(DType::U32)?.flatten_all()?;
        let mut x = self
            .embed
            .embedding(&ids)?
            .reshape((b, seq, self.cfg.hidden_size))?;
        for l in &self.layers {
            x = (&x
                + l.attn
                    .forward(&l.input_norm.forward(&x)?, rotary, Kernels::Fused)?)?;
            x = (&x + l.mlp.forward(&l.post_norm.forward(&x)?)?)?;
        }
        let x = self.norm.forward(&x)?;
        x.broadcast_matmul(&self.head.t()?)?.to_dtype(DType::F32)
    }
}

impl Model for Dream {
    fn max_positions(&self) -> Option<usize> {
        Some(self.cfg.max_position_embeddings.clamp(1, 4096))
    }

    /// Shifted logits: `[l0, l0, l1, …, l(n-2)]` along the sequence.
    fn forward(&self, input_ids: &Tensor) -> candle_core::Result<Tensor> {
        let logits = self.forward_unshifted(input_ids)?;
        let seq = logits.dim(1)?;
        if seq < 2 {
            return Ok(logits);
        }
        Tensor::cat(&[logits.narrow(1, 0, 1)?, logits.narrow(1, 0, seq - 1)?], 1)
    }

    fn mask_token_id(&self) -> u32 {
        self.cfg.mask_token_id
    }

    fn vocab_size(&self) -> usize {
        self.cfg.vocab_size
    }

    fn eos_token_id(&self) -> u32 {
        self.cfg.eos_token_id
    }

    fn family(&self) -> Family {
        Family::Dream
    }

    fn device(&self) -> &Device {
        &self.device
    }
}
