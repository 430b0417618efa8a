"""Masks against an independent oracle: on a small vocabulary, every filling of a canvas's
masks is tried and the output judged by Python's own `json` parser. An id is in a position's
mask iff some filling with that id there is a JSON document."""

import itertools
import json
import random

import numpy as np
import pytest

import lacuna

# Ids 0..: text tokens chosen to make JSON in several ways (and not: `tr`, `ue` only join),
# then the end of output, then a forbidden special token.
WORDS = ["{", "}", "[", "]", '"', '"a"', ":", ",", "1", "2", " ", "tr", "ue", "null", "-", ".5", "e"]
EOS = len(WORDS)
FORBIDDEN = EOS + 1
TOKENS = [w.encode() for w in WORDS] + [b"", b""]


def oracle_text(ids):
    """The output of a fully filled canvas, or None if the canvas is malformed (a text token
    after the first end of output, or a forbidden id)."""
    out = []
    ended = False
    for i in ids:
        if i == FORBIDDEN:
            return None
        if i == EOS:
            ended = True
        elif ended:
            return None
        else:
            out.append(WORDS[i])
    return "".join(out)


def is_json(text):
    if text is None:
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def brute_force_masks(canvas):
    """For each masked position, the ids some completion allows there."""
    masked = [p for p, c in enumerate(canvas) if c is None]
    allowed = {p: set() for p in masked}
    for filling in itertools.product(range(len(TOKENS)), repeat=len(masked)):
        ids = list(canvas)
        for p, t in zip(masked, filling):
            ids[p] = t
        if is_json(oracle_text(ids)):
            for p, t in zip(masked, filling):
                allowed[p].add(t)
    return allowed


def random_canvases(n, seed):
    """Canvases cut from JSON documents made of the vocabulary's words, with up to three
    positions masked, and a few with a random id swapped in."""
    docs = [
        ["{", '"a"', ":", "1", "}"],
        ["[", "1", ",", "2", "]"],
        ["{", '"a"', ":", "[", "tr", "ue", "]", "}"],
        ["[", "-", "1", ".5", "e", "2", "]"],
        ["null"],
        ["[", " ", "{", "}", ",", "null", "]"],
        ['"a"'],
    ]
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        doc = [WORDS.index(w) for w in rng.choice(docs)]
        length = len(doc) + rng.randint(0, 2)
        ids = doc + [EOS] * (length - len(doc))
        if rng.random() < 0.3:
            ids[rng.randrange(length)] = rng.randrange(len(WORDS))
        k = min(length, rng.randint(1, 3))
        for p in rng.sample(range(length), k):
            ids[p] = None
        out.append(ids)
    return out


@pytest.fixture(scope="module")
def small():
    tok = lacuna.Tokenizer.from_tokens(TOKENS, [EOS], [FORBIDDEN])
    return lacuna.Grammar.from_spec("json"), tok


@pytest.mark.parametrize("seed", range(4))
def test_masks_equal_brute_force(small, seed):
    grammar, tok = small
    for canvas in random_canvases(40, seed):
        m = lacuna.CanvasMatcher(grammar, tok, len(canvas))
        m.set_canvas(canvas)
        expected = brute_force_masks(canvas)
        masked = m.masked_positions()
        assert masked == sorted(expected)
        bitmask = lacuna.allocate_token_bitmask(len(masked) + 1, tok.vocab_size)
        bitmask[:] = -1  # every row written must be overwritten whole
        m.fill_bitmask(bitmask, masked, row0=1)
        rows = lacuna.bitmask_to_bool(bitmask, tok.vocab_size)
        assert rows[0].all(), "row 0 was not asked for and stays as it was"
        for r, p in enumerate(masked, start=1):
            got = set(np.flatnonzero(rows[r]).tolist())
            assert got == expected[p], (canvas, p, got, expected[p])
        assert m.stats["unknown_ids"] == 0
        # A canvas no filling completes puts the matcher in its error state, and only then.
        completable = any(expected[p] for p in masked)
        assert m.is_error() == (not completable), (canvas, m.get_error())
        if completable:
            for p in masked:
                assert m.allowed_tokens(p) == sorted(expected[p])
            assert m.is_completable() is True
        else:
            with pytest.raises(lacuna.LacunaError, match="no token is valid at position"):
                m.allowed_tokens(masked[0])
            m.set_canvas(canvas)
            assert not m.is_error()
            assert m.is_completable() is False
            assert m.is_error()


def test_commit_places_what_validate_accepts(small):
    grammar, tok = small
    ids = lambda *ws: [WORDS.index(w) if w in WORDS else None for w in ws]  # noqa: E731
    m = lacuna.CanvasMatcher(grammar, tok, 5)
    m.set_canvas(ids("[", None, None, None, "]"))
    one, comma, colon = WORDS.index("1"), WORDS.index(","), WORDS.index(":")
    # `[1,□]` can still become `[1,2]`; `[1,:` cannot.
    assert m.validate([(1, one), (2, comma), (3, colon)]) == 2
    assert m.canvas() == ids("[", None, None, None, "]"), "validate leaves the canvas"
    assert m.commit([(1, one), (2, comma), (3, colon)]) == 2
    assert m.canvas()[:3] == ids("[", "1", ",")
    assert m.canvas()[3] is None
    assert m.is_completable() is True
    text = m.completion()
    assert json.loads(text) is not None and text.startswith(b"[1,")
    m.retract([1, 2])
    assert m.canvas() == ids("[", None, None, None, "]")
    m.set_canvas(ids("[", ":", None, None, "]"))
    assert m.is_completable() is False
    assert "is_completable" in m.get_error()
    with pytest.raises(lacuna.LacunaError, match="cannot be completed"):
        m.completion()
    m.set_canvas(ids("[", ":", None, None, "]"))
    assert m.completion() is None
    assert m.is_error()
