"""lacuna: exact valid-token masks at every masked position of a diffusion model's canvas.

A diffusion language model fills the positions of its output in any order. At each step a
sampler asks lacuna, for any masked position of its canvas, which tokens may stand there so
that the output can still be completed to a word of a context-free grammar (JSON, a JSON
Schema, SMILES, C++, any Lark grammar), and masks its logits with the answer before it
computes confidences or samples::

    import lacuna, numpy as np
    grammar = lacuna.Grammar.from_spec("json")
    tok = lacuna.Tokenizer.from_file("tokenizer.json")
    m = lacuna.CanvasMatcher(grammar, tok, length=64, vocab_size=logits.shape[-1])
    bitmask = lacuna.allocate_token_bitmask(len(positions), m.vocab_size)
    m.fill_bitmask(bitmask, positions)
    lacuna.apply_token_bitmask_inplace(logits[positions], bitmask)

The bitmask layout is llguidance's and XGrammar's: int32 words, id ``i`` allowed iff bit
``i % 32`` of word ``i // 32`` is set.
"""

from ._lacuna import CanvasMatcher, Grammar, InfillMatcher, LacunaError, Tokenizer, fill_bitmasks

__all__ = [
    "CanvasMatcher",
    "Grammar",
    "InfillMatcher",
    "LacunaError",
    "Tokenizer",
    "allocate_token_bitmask",
    "apply_token_bitmask_inplace",
    "bitmask_to_bool",
    "fill_bitmasks",
    "tokenizer_from_huggingface",
]


def allocate_token_bitmask(rows, vocab_size):
    """A zeroed int32 NumPy array ``[rows, ceil(vocab_size / 32)]`` for ``fill_bitmask``."""
    import numpy as np

    if rows < 0 or vocab_size < 0:
        raise ValueError(f"rows and vocab_size must be non-negative; got {rows}, {vocab_size}")
    return np.zeros((rows, (vocab_size + 31) // 32), dtype=np.int32)


def bitmask_to_bool(bitmask, vocab_size):
    """The bitmask as booleans ``[rows, vocab_size]``, True where an id is allowed (NumPy in,
    NumPy out; a torch tensor in, a torch tensor out on its device)."""
    if _is_torch(bitmask):
        import torch

        shifts = torch.arange(32, device=bitmask.device, dtype=torch.int32)
        bits = (bitmask.to(torch.int32).unsqueeze(-1) >> shifts) & 1
        return bits.flatten(-2)[..., :vocab_size].bool()
    import numpy as np

    words = np.ascontiguousarray(bitmask, dtype=np.int32)
    if words.ndim == 1:
        words = words[None, :]
    bits = np.unpackbits(words.view(np.uint8), axis=-1, bitorder="little")
    return bits[..., :vocab_size].astype(bool)


def apply_token_bitmask_inplace(logits, bitmask):
    """Sets ``logits[r, i]`` to -inf where id ``i`` is not allowed by row ``r`` of
    ``bitmask``. ``logits``: ``[rows, V]`` or ``[V]`` (one row), NumPy or torch (any device;
    the bitmask is moved to it). Ids past ``32 * bitmask.shape[-1]`` are masked too."""
    vocab = logits.shape[-1]
    if bitmask.shape[-1] * 32 < vocab:
        width = bitmask.shape[-1] * 32
        logits[..., width:] = float("-inf")
        vocab = width
    rows = 1 if len(logits.shape) == 1 else logits.shape[0]
    brows = 1 if len(bitmask.shape) == 1 else bitmask.shape[0]
    if rows != brows:
        raise ValueError(f"logits have {rows} rows and the bitmask {brows}")
    if _is_torch(logits):
        import torch

        if not _is_torch(bitmask):
            bitmask = torch.from_numpy(bitmask)
        allowed = bitmask_to_bool(bitmask.to(logits.device), vocab)
        allowed = allowed.reshape(logits[..., :vocab].shape)
        logits[..., :vocab].masked_fill_(~allowed, float("-inf"))
    else:
        allowed = bitmask_to_bool(bitmask, vocab).reshape(logits[..., :vocab].shape)
        view = logits[..., :vocab]
        view[~allowed] = float("-inf")


def tokenizer_from_huggingface(tokenizer, eos=None):
    """A ``Tokenizer`` from a Hugging Face tokenizer object: a ``tokenizers.Tokenizer`` or a
    fast ``transformers`` tokenizer (through its ``backend_tokenizer``)."""
    backend = getattr(tokenizer, "backend_tokenizer", tokenizer)
    if not hasattr(backend, "to_str"):
        raise TypeError(
            "expected a tokenizers.Tokenizer or a fast transformers tokenizer; "
            f"got {type(tokenizer).__name__}"
        )
    if eos is None:
        special = getattr(tokenizer, "eos_token", None)
        eos = [special] if isinstance(special, str) else None
    return Tokenizer.from_json(backend.to_str(), eos)


def _is_torch(x):
    return type(x).__module__.startswith("torch")
