//! LLaDA: a Llama-style transformer without biases (RMSNorm, rotate-half RoPE, SwiGLU) under
//! full bidirectional attention, in LLaDA's own config field names (`d_model`, `n_layers`, ...)
//! and tensor names (`model.transformer.blocks.N.{q,k,v}_proj`, `attn_out`, `ff_proj` (gate),
//! `up_proj`, `ff_out`, `wte`, `ln_f`).

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use serde::{Deserialize, Serialize};

use super::checkpoint::{field_error, parse_json, read_json, Linear, Weights, CONFIG_FILE};
use super::error::Result;
use super::layers::{Attention, Kernels, RmsNorm, Rotary, SwiGlu};
use super::{Family, Model};

fn default_eps() -> f64 {
    1e-5
}
fn default_theta() -> f64 {
    10_000.0
}
fn default_mask() -> u32 {
    126_336
}
fn default_eos() -> u32 {
    126_081
}
fn default_ratio() -> usize {
    4
}
fn default_max_len() -> usize {
    4096
}

/// LLaDA's `config.json`, in LLaDA's field names.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Config {
    /// Width of the residual stream (the model dimension).
    pub d_model: usize,
    /// Number of transformer blocks.
    pub n_layers: usize,
    /// Number of query heads; must divide `d_model` into an even head dimension.
    pub n_heads: usize,
    /// Number of key/value heads (grouped-query attention); `None` means one per query head.
    #[serde(default)]
    pub n_kv_heads: Option<usize>,
    /// Width of the SwiGLU feed-forward layer; `None` means `mlp_ratio * d_model`.
    #[serde(default)]
    pub mlp_hidden_size: Option<usize>,
    /// Feed-forward width as a multiple of `d_model`, when `mlp_hidden_size` is absent
    /// (default 4).
    #[serde(default = "default_ratio")]
    pub mlp_ratio: usize,
    /// Epsilon of every RMSNorm (default 1e-5).
    #[serde(default = "default_eps")]
    pub rms_norm_eps: f64,
    /// Base of the rotary position embedding's frequencies (default 10 000).
    #[serde(default = "default_theta")]
    pub rope_theta: f64,
    /// Longest sequence the checkpoint was trained for, in tokens (default 4096); the model
    /// reports at most 8192 as [`Model::max_positions`].
    #[serde(default = "default_max_len")]
    pub max_sequence_length: usize,
    /// The vocabulary size: rows of the embedding and output matrices unless `embedding_size`
    /// pads them.
    pub vocab_size: usize,
    /// Rows of the embedding and output matrices when padded past `vocab_size` (see
    /// [`Config::logits_size`]); `None` means `vocab_size`.
    #[serde(default)]
    pub embedding_size: Option<usize>,
    /// Whether the output head reuses the embedding matrix.
    #[serde(default)]
    pub weight_tying: bool,
    /// The mask token's id (default LLaDA's 126 336).
    #[serde(default = "default_mask")]
    pub mask_token_id: u32,
    /// The end-of-sequence id (default LLaDA's 126 081).
    #[serde(default = "default_eos")]
    pub eos_token_id: u32,
    /// Biases outside q/k/v; must be `false` (LLaDA has none).
    #[serde(default)]
    pub include_bias: bool,
    /// Whether the q/k/v projections have biases (`None` means no).
    #[serde(default)]
    pub include_qkv_bias: Option<bool>,
    /// The block architecture; only `llama` (or absent) is accepted.
    #[serde(default)]
    pub block_type: Option<String>,
    /// The normalization; only `rms` (or absent) is accepted.
    #[serde(default)]
    pub layer_norm_type: Option<String>,
    /// The feed-forward activation; only `silu`/`swiglu` (or absent) is accepted.
    #[serde(default)]
    pub activation_type: Option<String>,
    /// ALiBi position biases; must be `false` (only rotary embeddings are supported).
    #[serde(default)]
    pub alibi: bool,
    /// Rotary embeddings; `Some(false)` is refused, `None` means on.
    #[serde(default)]
    pub rope: Option<bool>,
    /// Whether logits are divided by `sqrt(d_model)`.
    #[serde(default)]
    pub scale_logits: bool,
}

impl Config {
    /// Reads and validates `dir/config.json`.
    pub fn from_dir(dir: &Path) -> Result<Config> {
        let cfg: Config = read_json(&dir.join(CONFIG_FILE))?;
        cfg.validate(dir)?;
        Ok(cfg)
    }

    /// Parses and validates config JSON held in memory; `dir` names it in errors.
    pub fn from_json(json: &str, dir: &Path) -> Result<Config> {
        let cfg: Config = parse_json(&dir.join(CONFIG_FILE), json)?;
        cfg.validate(dir)?;
        Ok(cfg)
    }

    fn validate(&self, dir: &Path) -> Result<()> {
        let bad = |f: &str, r: &str| Err(field_error(dir, f, r));
        if self.d_model == 0 || self.n_heads == 0 || !self.d_model.is_multiple_of(self.n_heads) {
            return bad("n_heads", "must be positive and divide d_model");
        }
        if self.kv_heads() == 0 || !self.n_heads.is_multiple_of(self.kv_heads()) {
            return bad("n_kv_heads", "must be positive and divide n_heads");
        }
        if !(self.d_model / self.n_heads).is_multiple_of(2) {
            return bad(
                "d_model",
                "head dimension must be even for rotary embeddings",
            );
        }
        if let Some(b) = self.block_type.as_deref() {
            if b != "llama" {
                return bad("block_type", "only \"llama\" blocks are supported");
            }
        }
        if let Some(n) = self.layer_norm_type.as_deref() {
            if n != "rms" {
                return bad("layer_norm_type", "only \"rms\" is supported");
            }
        }
        if let Some(a) = self.activation_type.as_deref() {
            if a != "silu" && a != "swiglu" {
                return bad("activation_type", "only silu (SwiGLU) is supported");
            }
        }
        if self.include_bias {
            return bad("include_bias", "biases outside q/k/v are not supported");
        }
        if self.alibi || self.rope == Some(false) {
            return bad("rope", "only rotary position embeddings are supported");
        }
        if self.mlp_hidden_size.is_none() && self.mlp_ratio.checked_mul(self.d_model).is_none() {
            return bad("mlp_ratio", "mlp_ratio × d_model overflows");
        }
        let vocab = self.logits_size();
        for (field, id) in [
            ("mask_token_id", self.mask_token_id),
            ("eos_token_id", self.eos_token_id),
        ] {
            if id as usize >= vocab {
                return Err(field_error(
                    dir,
                    field,
                    format!("{id} is outside the vocabulary of {vocab} ids"),
                ));
            }
        }
        check_floats(dir, self.rope_theta, self.rms_norm_eps)
    }

    /// Number of key/value heads, defaulted.
    pub fn kv_heads(&self) -> usize {
        self.n_kv_heads.unwrap_or(self.n_heads)
    }

    /// Width of one attention head: `d_model / n_heads`.
    pub fn head_dim(&self) -> usize {
        self.d_model / self.n_heads
    }

    /// Width of the feed-forward layer, defaulted (`mlp_ratio × d_model`, which a validated
    /// config keeps from overflowing).
    pub fn hidden(&self) -> usize {
        self.mlp_hidden_size
            .unwrap_or(self.mlp_ratio.saturating_mul(self.d_model))
    }

    /// Rows of the embedding and output matrices (`embedding_size`, else `vocab_size`).
    pub fn logits_size(&self) -> usize {
        self.embedding_size.unwrap_or(self.vocab_size)
    }
}

/// Checks the float fields both families share: `rope_theta` finite and positive (a base of
/// 0, a negative one or NaN gives NaN rotations), `rms_norm_eps` finite and not negative (a
/// negative one makes the norm of a small vector NaN).
pub(crate) fn check_floats(dir: &Path, rope_theta: f64, rms_norm_eps: f64) -> Result<()> {
    if !(rope_theta.is_finite() && rope_theta > 0.0) {
        return Err(field_error(
            dir,
            "rope_theta",
            format!("{rope_theta}: must be a finite number above 0"),
        ));
    }
    if !(rms_norm_eps.is_finite() && rms_norm_eps >= 0.0) {
        return Err(field_error(
            dir,
            "rms_norm_eps",
            format!("{rms_norm_eps}: must be a finite number, 0 or more"),
        ));
    }
    Ok(())
}

#[derive(Clone, Debug)]
struct Block {
    attn_norm: RmsNorm,
    attn: Attention,
    ff_norm: RmsNorm,
    ff: SwiGlu,
}

/// The LLaDA mask predictor.
#[derive(Clone, Debug)]
pub struct LLaDA {
    cfg: Config,
    wte: Tensor,
    blocks: Vec<Block>,
    ln_f: RmsNorm,
    head: Tensor,
    rotary: Rotary,
    kernels: Kernels,
    device: Device,
}

impl LLaDA {
    /// Builds the model from weights named as in LLaDA checkpoints.
    pub fn new(cfg: &Config, w: &Weights) -> Result<LLaDA> {
        let t = w.pp("model.transformer");
        let (d, h, n) = (cfg.d_model, cfg.hidden(), cfg.logits_size());
        let kv = cfg.kv_heads() * cfg.head_dim();
        let qkv_bias = cfg.include_qkv_bias.unwrap_or(false);
        let wte = t.pp("wte").get((n, d), "weight")?;
        // Not `with_capacity(n_layers)`: the count is the config's word, and a block whose
        // tensors the checkpoint lacks ends the loop with an error naming the first of them
        // before anything is allocated for it.
        let mut blocks = Vec::new();
        for i in 0..cfg.n_layers {
            let b = t.pp(format!("blocks.{i}"));
            let lin =
                |din, dout, bias, name: &str| -> Result<Linear> { b.linear(din, dout, bias, name) };
            blocks.push(Block {
                attn_norm: RmsNorm::new(&b, d, cfg.rms_norm_eps, "attn_norm")?,
                attn: Attention {
                    q: lin(d, d, qkv_bias, "q_proj")?,
                    k: lin(d, kv, qkv_bias, "k_proj")?,
                    v: lin(d, kv, qkv_bias, "v_proj")?,
                    o: lin(d, d, false, "attn_out")?,
                    heads: cfg.n_heads,
                    kv_heads: cfg.kv_heads(),
                    head_dim: cfg.head_dim(),
                },
                ff_norm: RmsNorm::new(&b, d, cfg.rms_norm_eps, "ff_norm")?,
                ff: SwiGlu {
                    gate: lin(d, h, false, "ff_proj")?,
                    up: lin(d, h, false, "up_proj")?,
                    down: lin(h, d, false, "ff_out")?,
                },
            });
        }
        let ln_f = RmsNorm::new(&t, d, cfg.rms_norm_eps, "ln_f")?;
        let head = if cfg.weight_tying {
            wte.clone()
        } else {
            t.pp("ff_out").get((n, d), "weight")?
        };
        let max_len = cfg.max_sequence_length.clamp(1, 8192);
        let rotary = Rotary::new(cfg.head_dim(), max_len, cfg.rope_theta, w.device())?;
        Ok(LLaDA {
            cfg: cfg.clone(),
            wte,
            blocks,
            ln_f,
            head,
            rotary,
            kernels: Kernels::Fused,
            device: w.device().clone(),
        })
    }

    /// Loads `dir/config.json` and the weights of `dir` in the compute dtype.
    pub fn load(dir: &Path, dtype: DType, device: &Device) -> Result<LLaDA> {
        let cfg = Config::from_dir(dir)?;
        LLaDA::new(&cfg, &Weights::open(dir, dtype, device)?)
    }

    /// The config the model was built from.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Chooses fused kernels (inference) or differentiable ones (training).
    pub(crate) fn set_kernels(&mut self, kernels: Kernels) {
        self.kernels = kernels;
    }

    /// The final normalized hidden states `[batch, seq, d_model]`, before the output head.
    pub fn hidden_states(&self, input_ids: &Tensor) -> candle_core::Result<Tensor> {
        let (_, seq) = input_ids.dims2()?;
        let fresh;
        let rotary = if seq > self.rotary.max_len() {
            fresh = Rotary::new(self.cfg.head_dim(), seq, self.cfg.rope_theta, &self.device)?;
            &fresh
        } else {
            &self.rotary
        };
        let ids = input_ids.to_dtype(DType::U32)?;
        let mut x = self.wte.embedding(&ids.flatten_all()?)?.reshape((
            ids.dim(0)?,
            seq,
            self.cfg.d_model,
        ))?;
        for b in &self.blocks {
            let attn = b
                .attn
                .forward(&b.attn_norm.forward(&x)?, rotary, self.kernels)?;
            x = (&x + attn)?;
            x = (&x + b.ff.forward(&b.ff_norm.forward(&x)?)?)?;
        }
        self.ln_f.forward(&x)
    }

    /// Logits in f32 for hidden states of any leading shape `[..., d_model]`.
    pub fn logits(&self, hidden: &Tensor) -> candle_core::Result<Tensor> {
        let mut logits = hidden.broadcast_matmul(&self.head.t()?)?;
        if self.cfg.scale_logits {
            logits = (logits * (1.0 / (self.cfg.d_model as f64).sqrt()))?;
        }
        logits.to_dtype(DType::F32)
    }
}

impl Model for LLaDA {
    fn max_positions(&self) -> Option<usize> {
        Some(self.cfg.max_sequence_length.clamp(1, 8192))
    }

    fn forward(&self, input_ids: &Tensor) -> candle_core::Result<Tensor> {
        self.logits(&self.hidden_states(input_ids)?)
    }

    fn mask_token_id(&self) -> u32 {
        self.cfg.mask_token_id
    }

    fn vocab_size(&self) -> usize {
        self.cfg.logits_size()
    }

    fn eos_token_id(&self) -> u32 {
        self.cfg.eos_token_id
    }

    fn family(&self) -> Family {
        Family::LLaDA
    }

    fn device(&self) -> &Device {
        &self.device
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = include_str!("../../models/default/config.json");

    fn refused(from: &str, to: &str) -> String {
        assert!(CONFIG.contains(from), "{from}");
        let json = CONFIG.replacen(from, to, 1);
        match Config::from_json(&json, Path::new("m")) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{to} accepted"),
        }
    }

    #[test]
    fn a_layer_count_past_the_checkpoint_names_the_first_missing_block() {
        // 10^9 blocks: nothing is allocated by the count; the block after the checkpoint's
        // last is the first missing.
        const WEIGHTS: &[u8] = include_bytes!("../../models/default/model.safetensors");
        let layers = Config::from_json(CONFIG, Path::new("m")).unwrap().n_layers;
        let from = format!("\"n_layers\": {layers}");
        assert!(CONFIG.contains(&from), "{from}");
        let json = CONFIG.replacen(&from, "\"n_layers\": 1000000000", 1);
        let cfg = Config::from_json(&json, Path::new("m")).unwrap();
        let w = Weights::from_bytes(WEIGHTS, DType::F32, &Device::Cpu, Path::new("m")).unwrap();
        let e = LLaDA::new(&cfg, &w).unwrap_err().to_string();
        assert!(
            e.contains(&format!("model.transformer.blocks.{layers}.")),
            "{e}"
        );
    }

    #[test]
    fn ids_and_floats_outside_their_range_name_the_field() {
        let vocab = Config::from_json(CONFIG, Path::new("m"))
            .unwrap()
            .vocab_size;
        let e = refused("\"eos_token_id\": 0", "\"eos_token_id\": 4294967295");
        assert!(
            e.contains("m/config.json") && e.contains("`eos_token_id`"),
            "{e}"
        );
        assert!(e.contains(&format!("vocabulary of {vocab} ids")), "{e}");
        let e = refused(
            "\"mask_token_id\": 1",
            &format!("\"mask_token_id\": {vocab}"),
        );
        assert!(e.contains("`mask_token_id`"), "{e}");
        for theta in ["-1.0", "0.0"] {
            let e = refused(
                "\"rope_theta\": 10000.0",
                &format!("\"rope_theta\": {theta}"),
            );
            assert!(e.contains("`rope_theta`"), "{e}");
        }
        let e = refused("\"rms_norm_eps\": 0.00001", "\"rms_norm_eps\": -1e30");
        assert!(e.contains("`rms_norm_eps`"), "{e}");
        let hidden = Config::from_json(CONFIG, Path::new("m"))
            .unwrap()
            .mlp_hidden_size
            .unwrap();
        let e = refused(
            &format!("\"mlp_hidden_size\": {hidden},"),
            "\"mlp_ratio\": 18446744073709551615,",
        );
        assert!(e.contains("`mlp_ratio`"), "{e}");
    }
}
