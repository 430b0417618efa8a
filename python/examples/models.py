"""LLaDA and Dream in PyTorch, read from their own checkpoint folders, for the generate loops.

The two families lacuna's samplers target are both Llama-style blocks (RMSNorm, rotate-half
rotary embeddings, grouped key/value heads, SwiGLU) with full bidirectional attention; they
differ in tensor names, in q/k/v biases, and in Dream's shift (position i holds the prediction
made at position i - 1). This file reads a folder as the families ship it (`config.json` with
the family's own field names; `model.safetensors`, or shards listed by
`model.safetensors.index.json`) without `transformers` and without the checkpoints' remote
code, so the example needs only torch and safetensors; it mirrors lacuna's Rust models
(`src/diffusion/{llada,dream,layers}.rs`), which are tested against the reference logits of the
same tiny checkpoints (`python/tests/test_models.py` does the same for this file).

    model = models.load("path/to/LLaDA-8B-Instruct", device="cuda", dtype=torch.bfloat16)
    logits = model(input_ids)          # [batch, seq, vocab] float32, Dream's already shifted
"""

import json
import os

import torch


class ConfigError(ValueError):
    """A checkpoint folder this file cannot read: the message names the file and field."""


def _read_config(folder):
    path = os.path.join(folder, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    except OSError as e:
        raise ConfigError(f"{path}: {e.strerror}") from None
    except ValueError as e:
        raise ConfigError(f"{path}: not JSON ({e})") from None
    if not isinstance(cfg, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    return path, cfg


def _field(path, cfg, *names, default=None):
    for name in names:
        if name in cfg and cfg[name] is not None:
            return cfg[name]
    if default is not None:
        return default
    raise ConfigError(f"{path}: `{names[0]}` is missing")


class _Family:
    """Tensor names and shape fields of one family."""

    def __init__(self, path, cfg):
        kind = str(cfg.get("model_type", "")).lower()
        arch = " ".join(cfg.get("architectures") or [])
        if kind == "llada" or "LLaDA" in arch:
            self.name = "llada"
            self.d = _field(path, cfg, "d_model")
            self.layers = _field(path, cfg, "n_layers")
            self.heads = _field(path, cfg, "n_heads")
            self.kv_heads = _field(path, cfg, "n_kv_heads", default=self.heads)
            self.vocab = _field(path, cfg, "embedding_size", "vocab_size")
            self.tied = bool(cfg.get("weight_tying", False))
            self.qkv_bias = bool(cfg.get("include_qkv_bias", False))
            self.theta = _field(path, cfg, "rope_theta", default=10000.0)
            self.eps = _field(path, cfg, "rms_norm_eps", default=1e-5)
            self.scale_logits = bool(cfg.get("scale_logits", False))
            self.shift = False
            p = "model.transformer."
            self.embed, self.final_norm = p + "wte.weight", p + "ln_f.weight"
            self.head = p + ("wte.weight" if self.tied else "ff_out.weight")
            self.block = p + "blocks.{i}."
            self.names = dict(attn_norm="attn_norm", q="q_proj", k="k_proj", v="v_proj",
                              o="attn_out", ff_norm="ff_norm", gate="ff_proj", up="up_proj",
                              down="ff_out")
        elif kind == "dream" or "Dream" in arch:
            self.name = "dream"
            self.d = _field(path, cfg, "hidden_size")
            self.layers = _field(path, cfg, "num_hidden_layers")
            self.heads = _field(path, cfg, "num_attention_heads")
            self.kv_heads = _field(path, cfg, "num_key_value_heads", default=self.heads)
            self.vocab = _field(path, cfg, "vocab_size")
            self.tied = bool(cfg.get("tie_word_embeddings", False))
            self.qkv_bias = True
            self.theta = _field(path, cfg, "rope_theta", default=10000.0)
            self.eps = _field(path, cfg, "rms_norm_eps", default=1e-6)
            self.scale_logits = False
            self.shift = True
            if cfg.get("rope_scaling"):
                raise ConfigError(f"{path}: `rope_scaling`: scaled rotary embeddings are not supported")
            self.embed, self.final_norm = "model.embed_tokens.weight", "model.norm.weight"
            self.head = "lm_head.weight"
            self.block = "model.layers.{i}."
            self.names = dict(attn_norm="input_layernorm", q="self_attn.q_proj",
                              k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.o_proj",
                              ff_norm="post_attention_layernorm", gate="mlp.gate_proj",
                              up="mlp.up_proj", down="mlp.down_proj")
        else:
            raise ConfigError(
                f"{path}: `model_type` {cfg.get('model_type')!r}: expected a LLaDA or Dream checkpoint"
            )
        if self.heads <= 0 or self.d % self.heads or self.heads % self.kv_heads:
            raise ConfigError(f"{path}: heads {self.heads}, key/value heads {self.kv_heads} "
                              f"do not divide width {self.d}")
        self.head_dim = self.d // self.heads
        self.mask_id = _field(path, cfg, "mask_token_id")
        self.eos_id = _field(path, cfg, "eos_token_id")


def _weight_files(folder):
    index = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index, encoding="utf-8") as f:
            shards = sorted(set(json.load(f)["weight_map"].values()))
        return [os.path.join(folder, s) for s in shards]
    single = os.path.join(folder, "model.safetensors")
    if os.path.exists(single):
        return [single]
    raise ConfigError(f"{folder}: no model.safetensors and no model.safetensors.index.json")


def _rms_norm(x, weight, eps):
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return xf.to(x.dtype) * weight


def _rotate(x, cos, sin):
    half = x.shape[-1] // 2
    xf = x.float()
    rotated = torch.cat([-xf[..., half:], xf[..., :half]], dim=-1)
    return (xf * cos + rotated * sin).to(x.dtype)


class DiffusionModel(torch.nn.Module):
    """A LLaDA or Dream mask predictor: `forward(input_ids [b, t]) -> logits [b, t, vocab]`
    in float32, with full attention; Dream's logits are shifted as its own code shifts them."""

    def __init__(self, family, weights):
        super().__init__()
        self.family = family
        self.w = weights

    @property
    def mask_id(self):
        return self.family.mask_id

    @property
    def eos_id(self):
        return self.family.eos_id

    @property
    def vocab_size(self):
        return self.family.vocab

    def _linear(self, prefix, x, bias):
        y = x @ self.w[prefix + ".weight"].T
        if bias:
            y = y + self.w[prefix + ".bias"]
        return y

    @torch.no_grad()
    def forward(self, input_ids):
        f, w = self.family, self.w
        b, t = input_ids.shape
        x = w[f.embed][input_ids]
        inv = 1.0 / f.theta ** (torch.arange(0, f.head_dim // 2, device=x.device).float() * 2 / f.head_dim)
        freqs = torch.arange(t, device=x.device).float()[:, None] * inv[None, :]
        cos = torch.cat([freqs.cos()] * 2, dim=-1)
        sin = torch.cat([freqs.sin()] * 2, dim=-1)
        group = f.heads // f.kv_heads
        for i in range(f.layers):
            p = f.block.format(i=i)
            n = {k: p + v for k, v in f.names.items()}
            h = _rms_norm(x, w[n["attn_norm"] + ".weight"], f.eps)
            q = self._linear(n["q"], h, f.qkv_bias).view(b, t, f.heads, f.head_dim).transpose(1, 2)
            k = self._linear(n["k"], h, f.qkv_bias).view(b, t, f.kv_heads, f.head_dim).transpose(1, 2)
            v = self._linear(n["v"], h, f.qkv_bias).view(b, t, f.kv_heads, f.head_dim).transpose(1, 2)
            q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
            k = k.repeat_interleave(group, dim=1)
            v = v.repeat_interleave(group, dim=1)
            a = torch.nn.functional.scaled_dot_product_attention(q, k, v)  # no mask: full
            x = x + self._linear(n["o"], a.transpose(1, 2).reshape(b, t, f.d), False)
            h = _rms_norm(x, w[n["ff_norm"] + ".weight"], f.eps)
            g = torch.nn.functional.silu(self._linear(n["gate"], h, False))
            x = x + self._linear(n["down"], g * self._linear(n["up"], h, False), False)
        x = _rms_norm(x, w[f.final_norm], f.eps)
        head = w[f.head] if f.head in w else w[f.embed]
        logits = (x @ head.T).float()
        if f.scale_logits:
            logits = logits / f.d ** 0.5
        if f.shift and t > 1:
            logits = torch.cat([logits[:, :1], logits[:, :-1]], dim=1)
        return logits


def load(folder, device="cpu", dtype=torch.float32):
    """The LLaDA or Dream model of a checkpoint folder, its weights in `dtype` on `device`."""
    from safetensors.torch import load_file

    path, cfg = _read_config(folder)
    family = _Family(path, cfg)
    weights = {}
    for file in _weight_files(folder):
        for name, tensor in load_file(file, device=str(device)).items():
            weights[name] = tensor.to(dtype)
    needed = [family.embed, family.final_norm]
    if not family.tied:
        needed.append(family.head)
    needed += [family.block.format(i=i) + v + ".weight"
               for i in range(family.layers) for v in family.names.values()]
    missing = [n for n in needed if n not in weights]
    if missing:
        raise ConfigError(f"{folder}: the checkpoint has no tensor `{missing[0]}` "
                          f"({len(missing)} missing)")
    return DiffusionModel(family, weights)
