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
    # `[□,□` cannot be closed in four tokens: that matcher, and only it, is in error.
    assert [m.is_error() for m in matchers] == [False, False, False, True, False]
    alone = lacuna.allocate_token_bitmask(rows, tok.vocab_size)
    for m, positions, row0 in items:
        m.set_canvas(m.canvas())  # clears the error
        m.fill_bitmask(alone, positions, row0)
    assert (together == alone).all()
    assert together.any()


def test_a_hugging_face_tokenizer_object_reads_as_its_file(qwen):
    """`tokenizer_from_huggingface` on a real `tokenizers.Tokenizer` gives the vocabulary
    `Tokenizer.from_file` reads from the same `tokenizer.json`."""
    import tokenizers

    from conftest import QWEN

    hf = tokenizers.Tokenizer.from_file(QWEN)
    tok = lacuna.tokenizer_from_huggingface(hf)
    assert tok.vocab_size == qwen.vocab_size
    assert tok.eos_ids == qwen.eos_ids
    for i in range(0, qwen.vocab_size, 997):
        assert tok.token_bytes(i) == qwen.token_bytes(i)
        assert tok.token_kind(i) == qwen.token_kind(i)
    # Bytes agree with the tokenizer's own decoding where a token is whole UTF-8.
    ids = hf.encode('{"naïve": [1, 2]}', add_special_tokens=False).ids
    assert b"".join(tok.token_bytes(i) for i in ids) == '{"naïve": [1, 2]}'.encode()
    # An end-of-output name given explicitly is the only one.
    only = lacuna.tokenizer_from_huggingface(hf, eos=["<|im_end|>"])
    assert only.eos_ids == [hf.token_to_id("<|im_end|>")]


def test_torch_tensors_work_as_numpy_arrays_do():
    """The torch paths: a CPU int32 tensor as the bitmask, torch logits masked in place
    (on the CPU here; the code moves the bitmask to the logits' device)."""
    torch = __import__("pytest").importorskip("torch")
    grammar, tok = small()
    m = lacuna.CanvasMatcher(grammar, tok, 3, vocab_size=70)
    m.set_canvas([0, None, None])
    as_numpy = lacuna.allocate_token_bitmask(2, 70)
    m.fill_bitmask(as_numpy, [1, 2])
    as_torch = torch.zeros((2, 3), dtype=torch.int32)
    m.fill_bitmask(as_torch, [1, 2])
    assert (as_torch.numpy() == as_numpy).all()
    assert (lacuna.bitmask_to_bool(as_torch, 70).numpy() == lacuna.bitmask_to_bool(as_numpy, 70)).all()
    logits = torch.randn(2, 70)
    expected = logits.numpy().copy()
    lacuna.apply_token_bitmask_inplace(logits, as_torch)
    lacuna.apply_token_bitmask_inplace(expected, as_numpy)
    assert (torch.isfinite(logits).numpy() == np.isfinite(expected)).all()
    assert (logits.numpy()[np.isfinite(expected)] == expected[np.isfinite(expected)]).all()
    # A NumPy bitmask on torch logits, and one row.
    row = torch.zeros(70)
    lacuna.apply_token_bitmask_inplace(row, as_numpy[0])
    assert torch.isfinite(row).nonzero().flatten().tolist() == m.allowed_tokens(1)


def test_a_schema_compiled_for_generation_allows_a_subset():
    # `{"a": □}` over a vocabulary of whole values: the schema lets any key in and takes
    # integers written with any exponent; compiled for generation, `"b"` and `1e400` are out.
    schema = {"properties": {"a": {"type": "integer"}}}
    words = [b'{"a":', b'{"b":', b"1", b"1e400", b"}", b""]
    tok = lacuna.Tokenizer.from_tokens(words, eos_ids=[5])
    allowed = {}
    for generation in (False, True):
        grammar = lacuna.Grammar.from_json_schema(schema, for_generation=generation)
        m = lacuna.CanvasMatcher(grammar, tok, 3)
        m.set_canvas([None, None, 4])
        first = m.allowed_tokens(0)
        m.set_canvas([0, None, 4])
        allowed[generation] = (first, m.allowed_tokens(1))
    assert allowed[False] == ([0, 1], [2, 3])
    assert allowed[True] == ([0], [2])
