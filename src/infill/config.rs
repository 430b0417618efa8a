//! The configs of the four causal families fill-in-the-middle code models ship in, each read in
//! its own field names (as `config.json` carries them) and brought to one [`CausalConfig`]:
//! what differs between the families is data (norms, activations, biases, rotary scaling,
//! embedding scale, head width), not structure.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::diffusion::checkpoint::{field_error, read_json, CONFIG_FILE};
use crate::diffusion::{DiffusionError, Result};

/// The families, by `model_type`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CausalFamily {
    /// Qwen2 (Qwen2.5-Coder).
    Qwen2,
    /// Starcoder2 (StarCoder2).
    Starcoder2,
    /// Llama (DeepSeek-Coder).
    Llama,
    /// Gemma (CodeGemma).
    Gemma,
}

/// How each block normalizes.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Norm {
    /// RMSNorm scaling by `w` (`plus_one`: by `1 + w`, Gemma's).
    Rms {
        /// Epsilon inside the square root.
        eps: f64,
        /// Whether the stored weight is offset by one.
        plus_one: bool,
    },
    /// LayerNorm with a bias (Starcoder2's).
    Layer {
        /// Epsilon inside the square root.
        eps: f64,
    },
}

/// The feed-forward layer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mlp {
    /// `down(silu(gate(x)) * up(x))`.
    SwiGlu,
    /// `down(gelu_tanh(gate(x)) * up(x))` (Gemma).
    GeluTanhGated,
    /// `c_proj(gelu_tanh(c_fc(x)))`, with biases (Starcoder2).
    GeluTanh,
}

/// One causal transformer's shape, whatever its family.
#[derive(Clone, Debug, PartialEq)]
pub struct CausalConfig {
    /// The family it was read as.
    pub family: CausalFamily,
    /// Width of the residual stream.
    pub hidden: usize,
    /// Width of the feed-forward layer.
    pub intermediate: usize,
    /// Number of blocks.
    pub layers: usize,
    /// Query heads.
    pub heads: usize,
    /// Key/value heads (dividing `heads`).
    pub kv_heads: usize,
    /// Width of one head (Gemma's need not be `hidden / heads`).
    pub head_dim: usize,
    /// Rows of the embedding and of the head.
    pub vocab: usize,
    /// The norm of every block and the final one.
    pub norm: Norm,
    /// The feed-forward layer.
    pub mlp: Mlp,
    /// Biases on q, k, v.
    pub qkv_bias: bool,
    /// A bias on the attention's output projection.
    pub o_bias: bool,
    /// Base of the rotary frequencies.
    pub rope_theta: f64,
    /// Linear rotary scaling: positions are divided by it (1 for none).
    pub rope_linear_factor: f64,
    /// Embeddings are multiplied by `sqrt(hidden)` (Gemma).
    pub scale_embeddings: bool,
    /// The head is the embedding matrix when the checkpoint has no `lm_head.weight`.
    pub tie_word_embeddings: bool,
    /// Longest sequence (prompt and middle) the checkpoint was trained for, in tokens
    /// (`max_position_embeddings`, default 4096); longer ones are refused, not run.
    pub max_positions: usize,
}

/// The fields the four families share, in their own names (Starcoder2 calls its epsilon
/// `norm_epsilon`; Gemma has `head_dim` and `hidden_activation`).
#[derive(Debug, Deserialize)]
struct RawConfig {
    model_type: String,
    hidden_size: usize,
    intermediate_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    #[serde(default)]
    num_key_value_heads: Option<usize>,
    #[serde(default)]
    head_dim: Option<usize>,
    vocab_size: usize,
    #[serde(default)]
    rms_norm_eps: Option<f64>,
    #[serde(default)]
    norm_epsilon: Option<f64>,
    #[serde(default)]
    rope_theta: Option<f64>,
    #[serde(default)]
    rope_scaling: Option<Value>,
    #[serde(default)]
    hidden_act: Option<String>,
    #[serde(default)]
    hidden_activation: Option<String>,
    #[serde(default)]
    attention_bias: Option<bool>,
    #[serde(default)]
    mlp_bias: Option<bool>,
    #[serde(default)]
    use_bias: Option<bool>,
    #[serde(default)]
    tie_word_embeddings: Option<bool>,
    #[serde(default)]
    max_position_embeddings: Option<usize>,
}

impl CausalConfig {
    /// Reads and checks `dir/config.json`.
    pub fn from_dir(dir: &Path) -> Result<CausalConfig> {
        let path = dir.join(CONFIG_FILE);
        let value: Value = read_json(&path)?;
        // The family first: a config of another kind of model is named as such, not by the
        // first field it lacks.
        family_of(value.get("model_type").and_then(Value::as_str), dir)?;
        let raw: RawConfig = serde_json::from_value(value)
            .map_err(|source| DiffusionError::Json { path, source })?;
        CausalConfig::from_raw(raw, dir)
    }

    fn from_raw(raw: RawConfig, dir: &Path) -> Result<CausalConfig> {
        let bad = |field: &str, reason: String| Err(field_error(dir, field, reason));
        let family = family_of(Some(&raw.model_type), dir)?;
        let (hidden, heads) = (raw.hidden_size, raw.num_attention_heads);
        if hidden == 0 || heads == 0 {
            return bad(
                "num_attention_heads",
                "hidden_size and num_attention_heads must be positive".into(),
            );
        }
        let kv_heads = raw.num_key_value_heads.unwrap_or(heads);
        if kv_heads == 0 || !heads.is_multiple_of(kv_heads) {
            return bad(
                "num_key_value_heads",
                format!("{kv_heads} must be positive and divide num_attention_heads ({heads})"),
            );
        }
        let head_dim = match (family, raw.head_dim) {
            (CausalFamily::Gemma, Some(d)) => d,
            _ if hidden.is_multiple_of(heads) => hidden / heads,
            _ => {
                return bad(
                    "num_attention_heads",
                    format!("{heads} does not divide hidden_size ({hidden})"),
                )
            }
        };
        if head_dim == 0 || !head_dim.is_multiple_of(2) {
            return bad(
                "head_dim",
                format!("{head_dim}: rotary embeddings need an even head width"),
            );
        }
        let eps = raw.rms_norm_eps.or(raw.norm_epsilon).unwrap_or(1e-6);
        let rope_theta = raw.rope_theta.unwrap_or(10_000.0);
        if !(rope_theta.is_finite() && rope_theta > 0.0) {
            return bad(
                "rope_theta",
                format!("{rope_theta}: must be finite and above 0"),
            );
        }
        if !(eps.is_finite() && eps >= 0.0) {
            return bad("rms_norm_eps", format!("{eps}: must be finite, 0 or more"));
        }
        let rope_linear_factor = match linear_rope_factor(raw.rope_scaling.as_ref()) {
            Ok(f) => f,
            Err(why) => return bad("rope_scaling", why),
        };
        // Gemma: `hidden_activation` wins where both are given (the reference runs GELU-tanh;
        // some Gemma-1 configs still carry a legacy `hidden_act: gelu`).
        let act = match family {
            CausalFamily::Gemma => raw.hidden_activation.or(raw.hidden_act),
            _ => raw.hidden_act,
        };
        let act = act.unwrap_or_else(|| "silu".into());
        let (mlp, norm, qkv_bias, o_bias) = match family {
            CausalFamily::Qwen2 => (
                Mlp::SwiGlu,
                Norm::Rms {
                    eps,
                    plus_one: false,
                },
                true,
                false,
            ),
            CausalFamily::Llama => {
                let b = raw.attention_bias.unwrap_or(false);
                if raw.mlp_bias.unwrap_or(false) {
                    return bad(
                        "mlp_bias",
                        "biases in the feed-forward layer are not supported".into(),
                    );
                }
                (
                    Mlp::SwiGlu,
                    Norm::Rms {
                        eps,
                        plus_one: false,
                    },
                    b,
                    b,
                )
            }
            CausalFamily::Gemma => {
                let b = raw.attention_bias.unwrap_or(false);
                (
                    Mlp::GeluTanhGated,
                    Norm::Rms {
                        eps,
                        plus_one: true,
                    },
                    b,
                    b,
                )
            }
            CausalFamily::Starcoder2 => {
                if raw.use_bias == Some(false) {
                    return bad(
                        "use_bias",
                        "Starcoder2 without biases is not supported".into(),
                    );
                }
                (Mlp::GeluTanh, Norm::Layer { eps }, true, true)
            }
        };
        let expected_act = match mlp {
            Mlp::SwiGlu => &["silu"][..],
            _ => &["gelu_pytorch_tanh", "gelu_tanh", "gelu"][..],
        };
        if !expected_act.contains(&act.as_str()) {
            return bad(
                "hidden_act",
                format!("{act:?}: this family's layer runs {}", expected_act[0]),
            );
        }
        Ok(CausalConfig {
            family,
            hidden,
            intermediate: raw.intermediate_size,
            layers: raw.num_hidden_layers,
            heads,
            kv_heads,
            head_dim,
            vocab: raw.vocab_size,
            norm,
            mlp,
            qkv_bias,
            o_bias,
            rope_theta,
            rope_linear_factor,
            scale_embeddings: family == CausalFamily::Gemma,
            tie_word_embeddings: raw.tie_word_embeddings.unwrap_or(true),
            max_positions: raw.max_position_embeddings.unwrap_or(4096).max(1),
        })
    }
}

/// The family a `model_type` names.
fn family_of(model_type: Option<&str>, dir: &Path) -> Result<CausalFamily> {
    Ok(match model_type.map(str::to_ascii_lowercase).as_deref() {
        Some("qwen2") => CausalFamily::Qwen2,
        Some("starcoder2") => CausalFamily::Starcoder2,
        Some("llama") => CausalFamily::Llama,
        Some("gemma") => CausalFamily::Gemma,
        _ => {
            return Err(DiffusionError::Field {
                path: dir.join(CONFIG_FILE),
                field: "model_type".into(),
                reason: match model_type {
                    Some(t) => format!(
                        "{t:?}: not a causal family lacuna reads (qwen2, starcoder2, llama, \
                         gemma)"
                    ),
                    None => "missing: a causal family is needed (qwen2, starcoder2, llama, \
                             gemma)"
                        .into(),
                },
            })
        }
    })
}

/// The factor of a linear `rope_scaling` (`{"type": "linear", "factor": 4.0}`, or with
/// `rope_type`), 1 for none; another kind is refused by name.
fn linear_rope_factor(scaling: Option<&Value>) -> std::result::Result<f64, String> {
    let Some(s) = scaling.filter(|s| !s.is_null()) else {
        return Ok(1.0);
    };
    let kind = s
        .get("rope_type")
        .or_else(|| s.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if kind != "linear" {
        return Err(format!("{kind:?}: only linear scaling is supported"));
    }
    match s.get("factor").and_then(Value::as_f64) {
        Some(f) if f.is_finite() && f > 0.0 => Ok(f),
        _ => Err("a linear scaling needs a positive `factor`".into()),
    }
}
