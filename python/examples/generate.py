"""Diffusion-style generate loops constrained by lacuna's exact canvas masks.

Three samplers over one canvas of masked positions, each asking lacuna for the exact set of
valid tokens at the positions it considers and masking the model's logits with it *before*
computing confidences, so the unmasking order and the tokens come from the constrained
distributions and nothing needs repair afterwards:

- ``llada``: LLaDA's loop: semi-autoregressive blocks; in each step every masked position of
  the current block is predicted and the most confident ones are committed (low-confidence
  remasking);
- ``dream``: Dream's loop: every masked position of the canvas competes each step, ordered by
  the entropy of its (constrained) distribution;
- ``ar``: left to right, one position a step: the mask of the first masked position after a
  filled prefix is the classic next-token mask, a special case of the canvas mask.

Committing k tokens in one step is joint: ``commit`` re-checks each pair after the earlier
ones; a refused pair stays masked and is re-drawn from its recomputed mask next step.

By default the model is a stand-in with random weights (NumPy), so the example runs anywhere
in seconds; every output is still valid, because validity comes from the masks. With
``--model DIR`` it is a real LLaDA or Dream checkpoint folder (``GSAI-ML/LLaDA-8B-Instruct``,
``Dream-org/Dream-v0-Instruct-7B``, as downloaded), run in PyTorch by ``models.py`` (torch,
safetensors and tokenizers needed; no ``transformers``): the prompt (in the family's chat
template with ``--chat``) comes first, then the canvas, masks as the model's mask id; the loop
is the same, only ``logits`` comes from the model::

    ids = prompt_ids + [model.mask_id if t is None else t for t in matcher.canvas()]
    logits = model(torch.tensor([ids], device="cuda"))[0, len(prompt_ids):]   # [length, V]
    lacuna.apply_token_bitmask_inplace(logits[positions], bitmask)  # bitmask moved to cuda

Run:  python examples/generate.py --style llada --grammar json --length 24
      python examples/generate.py --model ~/LLaDA-8B-Instruct --chat --device cuda \
          --dtype bfloat16 --prompt "A JSON object describing a cat:" --length 64 --steps 64
"""

import argparse
import json
import os
import sys
import time

import numpy as np

import lacuna

HERE = os.path.dirname(os.path.abspath(__file__))
QWEN = os.path.join(HERE, "..", "..", "tests", "data", "qwen-bpe", "tokenizer.json")


class RandomModel:
    """A stand-in for a masked diffusion model: logits for every position from the canvas
    (embeddings of the filled tokens, mixed with position embeddings), random weights."""

    def __init__(self, vocab_size, length, dim=32, seed=0):
        rng = np.random.default_rng(seed)
        self.embed = rng.normal(size=(vocab_size + 1, dim)).astype(np.float32)  # last: [MASK]
        self.position = rng.normal(size=(length, dim)).astype(np.float32)
        self.out = rng.normal(size=(dim, vocab_size)).astype(np.float32) * 2.0
        self.mask_id = vocab_size

    def __call__(self, canvas):
        ids = np.array([self.mask_id if t is None else t for t in canvas])
        h = self.embed[ids] + self.position[: len(ids)]
        h = h + h.mean(axis=0, keepdims=True)
        return h @ self.out  # [length, V]


def torch_model(numpy_model):
    """The same stand-in as a PyTorch module (same weights), for a loop run on torch tensors
    end to end: its logits come out as a torch tensor, as a real checkpoint's do."""
    import torch

    class RandomTorchModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding.from_pretrained(torch.from_numpy(numpy_model.embed))
            self.position = torch.nn.Parameter(torch.from_numpy(numpy_model.position))
            self.out = torch.nn.Parameter(torch.from_numpy(numpy_model.out))
            self.mask_id = numpy_model.mask_id

        @torch.no_grad()
        def forward(self, canvas):
            ids = torch.tensor([self.mask_id if t is None else t for t in canvas])
            h = self.embed(ids) + self.position[: len(ids)]
            h = h + h.mean(dim=0, keepdim=True)
            return h @ self.out

    return RandomTorchModel()


CHAT = {
    "llada": "<|startoftext|><|start_header_id|>user<|end_header_id|>\n\n{}<|eot_id|>"
             "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "dream": "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
             "<|im_start|>user\n{}<|im_end|>\n<|im_start|>assistant\n",
}


class CheckpointModel:
    """A LLaDA or Dream model (``models.DiffusionModel``) as the loops call a model: the
    prompt's ids, then the canvas with masks as the model's mask id; the logits of the canvas's
    positions (a torch tensor on the model's device)."""

    def __init__(self, model, prompt_ids):
        self.model = model
        self.prompt = list(prompt_ids)
        self.device = next(iter(model.w.values())).device
        self.calls = 0

    def __call__(self, canvas):
        import torch

        ids = self.prompt + [self.model.mask_id if t is None else t for t in canvas]
        self.calls += 1
        return self.model(torch.tensor([ids], device=self.device))[0, len(self.prompt):]


def load_checkpoint(args):
    """The model, lacuna tokenizer and prompt ids of ``--model``."""
    import torch
    from tokenizers import Tokenizer as HFTokenizer

    sys.path.insert(0, HERE)
    import models

    model = models.load(args.model, device=args.device, dtype=getattr(torch, args.dtype))
    path = args.tokenizer or os.path.join(args.model, "tokenizer.json")
    hf = HFTokenizer.from_file(path)
    # The config's end of output, and the end-of-turn tokens instruct models end with.
    eos = [hf.id_to_token(model.eos_id)] + args.eos + ["<|eot_id|>", "<|im_end|>", "<|endoftext|>"]
    eos = list(dict.fromkeys(e for e in eos if e and hf.token_to_id(e) is not None))
    tokenizer = lacuna.Tokenizer.from_file(path, eos)
    text = CHAT[model.family.name].format(args.prompt) if args.chat else args.prompt
    prompt_ids = hf.encode(text, add_special_tokens=False).ids
    return CheckpointModel(model, prompt_ids), tokenizer, model.vocab_size


def softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def constrained(matcher, model, positions, use_torch=False):
    """The model's logits at `positions`, masked by lacuna to the tokens that keep the canvas
    completable there; rows with no allowed token are dropped (a budget ran out there).
    With `use_torch`, logits and bitmask are torch tensors, as in a PyTorch sampler."""
    logits = model(matcher.canvas())[positions]
    if use_torch:
        import torch

        words = (matcher.vocab_size + 31) // 32
        bitmask = torch.zeros((len(positions), words), dtype=torch.int32)
        matcher.fill_bitmask(bitmask, positions)
        lacuna.apply_token_bitmask_inplace(logits, bitmask)
        logits = logits.float().cpu().numpy()
    else:
        bitmask = lacuna.allocate_token_bitmask(len(positions), matcher.vocab_size)
        matcher.fill_bitmask(bitmask, positions)
        lacuna.apply_token_bitmask_inplace(logits, bitmask)
    keep = np.isfinite(logits).any(axis=-1)
    return [p for p, k in zip(positions, keep) if k], logits[keep]


def commit_best(matcher, positions, logits, k, score):
    """Commits the `k` best-scored (position, token) choices jointly; returns how many held."""
    probs = softmax(logits)
    tokens = probs.argmax(axis=-1)
    order = np.argsort(-score(probs))
    pairs = [(positions[i], int(tokens[i])) for i in order[:k]]
    return matcher.commit(pairs)


def confidence(probs):
    return probs.max(axis=-1)


def negative_entropy(probs):
    return (probs * np.log(np.clip(probs, 1e-30, None))).sum(axis=-1)


def unmask(matcher, model, among, steps, score, use_torch):
    """Fills the masked positions of `among` in about `steps` steps: each step predicts all
    of them under their masks and commits the best-scored share (a refused commit stays
    masked and is re-drawn, so a few more steps are allowed)."""
    for step in range(steps * 4):
        canvas = matcher.canvas()
        masked = [p for p in among if canvas[p] is None]
        if not masked:
            break
        positions, logits = constrained(matcher, model, masked, use_torch)
        if not positions:
            break
        k = max(1, -(-len(masked) // max(1, steps - step)))
        commit_best(matcher, positions, logits, k, score)


def llada_generate(matcher, model, steps, block, use_torch=False):
    """LLaDA: blocks left to right, each unmasked by confidence."""
    length = matcher.length
    blocks = [range(s, min(s + block, length)) for s in range(0, length, block)]
    per_block = max(1, steps // len(blocks))
    for b in blocks:
        unmask(matcher, model, b, per_block, confidence, use_torch)


def dream_generate(matcher, model, steps, use_torch=False):
    """Dream: the whole canvas at once, unmasked by entropy."""
    unmask(matcher, model, range(matcher.length), steps, negative_entropy, use_torch)


def left_to_right(matcher, model, use_torch=False):
    while matcher.masked_positions():
        first = matcher.masked_positions()[0]
        positions, logits = constrained(matcher, model, [first], use_torch)
        if not positions:
            break
        commit_best(matcher, positions, logits, 1, confidence)


def output_bytes(matcher, tokenizer):
    """The output: the placed tokens' bytes up to the first end of output."""
    out = b""
    for t in matcher.canvas():
        if t is None or tokenizer.token_kind(t) == "eos":
            break
        out += tokenizer.token_bytes(t)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--style", choices=["llada", "dream", "ar"], default="llada")
    ap.add_argument("--grammar", default="json", help="a lacuna grammar spec (json, smiles, ...)")
    ap.add_argument("--schema", help="a JSON Schema file instead of --grammar")
    ap.add_argument("--tokenizer", help="a tokenizer.json (default: the model's, else Qwen's)")
    ap.add_argument("--model", help="a LLaDA or Dream checkpoint folder (needs torch)")
    ap.add_argument("--prompt", default="", help="with --model: the text before the canvas")
    ap.add_argument("--chat", action="store_true", help="with --model: the family's chat template")
    ap.add_argument("--eos", action="append", default=[], help="with --model: more end tokens")
    ap.add_argument("--device", default="cpu", help="with --model: cpu, cuda, ...")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    ap.add_argument("--length", type=int, default=24)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--block", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--torch", action="store_true",
                    help="run the model and the masking on torch tensors (CPU)")
    args = ap.parse_args(argv)

    if args.schema:
        with open(args.schema, encoding="utf-8") as f:
            grammar = lacuna.Grammar.from_json_schema(f.read())
    else:
        grammar = lacuna.Grammar.from_spec(args.grammar)
    if args.model:
        model, tokenizer, width = load_checkpoint(args)
        args.torch = True
    else:
        tokenizer = lacuna.Tokenizer.from_file(args.tokenizer or QWEN)
        width = tokenizer.vocab_size
        model = RandomModel(width, args.length, seed=args.seed)
        if args.torch:
            model = torch_model(model)
    matcher = lacuna.CanvasMatcher(grammar, tokenizer, args.length, vocab_size=width)
    t0 = time.time()
    if args.style == "llada":
        llada_generate(matcher, model, args.steps, args.block, args.torch)
    elif args.style == "dream":
        dream_generate(matcher, model, args.steps, args.torch)
    else:
        left_to_right(matcher, model, args.torch)
    out = output_bytes(matcher, tokenizer)
    filled = sum(t is not None for t in matcher.canvas())
    stats = matcher.stats
    print(json.dumps({
        "style": args.style,
        "output": out.decode("utf-8", "replace"),
        "positions_filled_by_model": filled,
        "length": args.length,
        "completable": matcher.is_completable(),
        "masks": stats["masks"],
        "mask_ms_mean": round(stats["mask_micros"] / max(1, stats["masks"]) / 1000, 2),
        "unknown_ids": stats["unknown_ids"],
        "seconds": round(time.time() - t0, 2),
    }, ensure_ascii=False))
    return 0 if filled == args.length else 1


if __name__ == "__main__":
    sys.exit(main())
