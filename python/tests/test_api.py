"""The sampler-facing helpers: bitmask layout, applying a bitmask to logits, many canvases at
once on threads."""

import numpy as np

import lacuna


def small():
    words = [b"[", b"]", b"1", b",", b" ", b"2", b"", b""]
    tok = lacuna.Tokenizer.from_tokens(words, eos_ids=[6], forbidden_ids=[7])
    return lacuna.Grammar.from_spec("json"), tok


def test_layout_and_apply():
    grammar, tok = small()
    m = lacuna.CanvasMatcher(grammar, tok, 3, vocab_size=70)
    m.set_canvas([0, None, None])
    bitmask = lacuna.allocate_token_bitmask(2, 70)
    assert bitmask.shape == (2, 3) and bitmask.dtype == np.int32
    m.fill_bitmask(bitmask, [1, 2])
    # `[ □ □`: `1`, `2`, ` ` or `]` next; then `]` or the end (or more).
    for row, p in zip(bitmask, [1, 2]):
        ids = [i for i in range(70) if (int(row[i // 32]) >> (i % 32)) & 1]
        assert ids == m.allowed_tokens(p)
    logits = np.zeros((2, 70), dtype=np.float32)
    lacuna.apply_token_bitmask_inplace(logits, bitmask)
    allowed = np.isfinite(logits)
    assert (allowed == lacuna.bitmask_to_bool(bitmask, 70)).all()
    assert np.flatnonzero(allowed[0]).tolist() == m.allowed_tokens(1)
    one = np.zeros(70, dtype=np.float32)
    lacuna.apply_token_bitmask_inplace(one, bitmask[0])
    assert (np.isfinite(one) == allowed[0]).all()


def test_many_canvases_on_threads_equal_one_by_one():
    grammar, tok = small()
    canvases = [
        [0, None, None, None],
        [0, 2, None, None],
        [None, None, 5, 1],
        [0, None, 3, None],
        [None, None, None, None],
    ]
    matchers, items, rows = [], [], 0
    for c in canvases:
        m = lacuna.CanvasMatcher(grammar, tok, len(c))
        m.set_canvas(c)
        matchers.append(m)
        items.append((m, m.masked_positions(), rows))
        rows += len(m.masked_positions())
    together = lacuna.allocate_token_bitmask(rows, tok.vocab_size)
    lacuna.fill_bitmasks(items, together, threads=3)
    alone = lacuna.allocate_token_bitmask(rows, tok.vocab_size)
    for m, positions, row0 in items:
        m.fill_bitmask(alone, positions, row0)
    assert (together == alone).all()
    assert together.any()
