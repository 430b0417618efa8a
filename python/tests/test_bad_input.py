"""Bad input raises a Python exception with lacuna's message (what and where), never a crash
of the interpreter; a matcher stays usable after an error."""

import numpy as np
import pytest

import lacuna


@pytest.fixture(scope="module")
def small():
    words = [b"[", b"]", b"1", b",", b"", b""]
    tok = lacuna.Tokenizer.from_tokens(words, eos_ids=[4], forbidden_ids=[5])
    return lacuna.Grammar.from_spec("json"), tok


def test_bad_grammars_name_what_and_where():
    with pytest.raises(lacuna.LacunaError, match="nosuch"):
        lacuna.Grammar.from_spec("nosuch")
    with pytest.raises(lacuna.LacunaError, match=r"g.lark:2"):
        lacuna.Grammar.from_lark('start: a\na: "x" (\n', name="g.lark")
    with pytest.raises(lacuna.LacunaError, match=r"/properties/a/maxLength"):
        lacuna.Grammar.from_json_schema('{"properties": {"a": {"maxLength": "2"}}}')
    with pytest.raises(lacuna.LacunaError, match="JSON"):
        lacuna.Grammar.from_json_schema("{not json")
    with pytest.raises(TypeError, match="JSON-serializable"):
        lacuna.Grammar.from_json_schema({"type": object()})
    # A schema as Python objects is the schema its JSON text is.
    tok = lacuna.Tokenizer.from_tokens([b"[", b"]", b"1", b",", b""], eos_ids=[4])
    for schema, allowed in [({"type": "array"}, [1, 2, 3]), ({"type": "array", "maxItems": 1}, [1, 2])]:
        m = lacuna.CanvasMatcher(lacuna.Grammar.from_json_schema(schema), tok, 5)
        m.set_canvas([0, 2, None, None, None])
        # `[1 □ □ □`: `]`, more digits, or (without maxItems) `,` for `[1,1]`.
        assert m.allowed_tokens(2) == allowed, schema
    # Lenient mode records what it did not enforce.
    g = lacuna.Grammar.from_json_schema('{"type": "array", "uniqueItems": true}', lenient=True)
    assert any("uniqueItems" in w for w in g.warnings)
    with pytest.raises(lacuna.LacunaError):
        lacuna.Grammar.from_json_schema('{"type": "array", "uniqueItems": true}')


def test_bad_tokenizers(tmp_path):
    with pytest.raises(lacuna.LacunaError, match="missing.json"):
        lacuna.Tokenizer.from_file(tmp_path / "missing.json")
    # A file that never ends is read no further than the limit; a directory is named.
    with pytest.raises(lacuna.LacunaError, match="/dev/zero.*larger than"):
        lacuna.Tokenizer.from_file("/dev/zero")
    with pytest.raises(lacuna.LacunaError, match="cannot read tokenizer"):
        lacuna.Tokenizer.from_file(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text('{"model": 3}')
    with pytest.raises(lacuna.LacunaError, match="not a tokenizer.json"):
        lacuna.Tokenizer.from_file(str(bad))
    with pytest.raises(ValueError, match="eos_ids: id 9"):
        lacuna.Tokenizer.from_tokens([b"a"], eos_ids=[9])
    with pytest.raises(ValueError, match="at least one"):
        lacuna.Tokenizer.from_tokens([b"a"], eos_ids=[])
    with pytest.raises(TypeError):
        lacuna.tokenizer_from_huggingface(object())


def test_bad_canvases_and_positions(small):
    grammar, tok = small
    with pytest.raises(ValueError, match="smaller than the tokenizer"):
        lacuna.CanvasMatcher(grammar, tok, 4, vocab_size=3)
    m = lacuna.CanvasMatcher(grammar, tok, 4)
    with pytest.raises(ValueError, match="4 positions; got 3"):
        m.set_canvas([0, None, None])
    with pytest.raises(ValueError, match="position 1: token id 99"):
        m.set_canvas([0, 99, None, None])
    with pytest.raises(ValueError, match="position 1: token id -1"):
        m.set_canvas([0, -1, None, None])
    m.set_canvas([0, None, None, None])
    with pytest.raises(IndexError, match="position 7 is outside"):
        m.allowed_tokens(7)
    with pytest.raises(ValueError, match="position 0 is not masked"):
        m.allowed_tokens(0)
    with pytest.raises(IndexError, match="position -2"):
        m.retract([-2])
    with pytest.raises(ValueError, match="token id 6"):
        m.commit([(1, 6)])
    with pytest.raises(ValueError, match="position 0 is not masked"):
        m.validate([(0, 1)])
    # A bad pair after good ones: nothing is placed.
    with pytest.raises(ValueError, match="position 0 is not masked"):
        m.commit([(1, 2), (0, 1)])
    with pytest.raises(ValueError, match="position 1 appears twice"):
        m.commit([(1, 2), (1, 1)])
    # The matcher is still usable, and the canvas unchanged by the failed calls.
    assert m.canvas() == [0, None, None, None]
    assert m.allowed_tokens(1) == [0, 1, 2]


def test_bad_bitmasks(small):
    grammar, tok = small
    m = lacuna.CanvasMatcher(grammar, tok, 3, vocab_size=40)
    m.set_canvas([0, None, None])
    with pytest.raises(TypeError, match="item type"):
        m.fill_bitmask(np.zeros((1, 2), dtype=np.int64), [1])
    with pytest.raises(TypeError, match="int32 array"):
        m.fill_bitmask([[0, 0]], [1])
    with pytest.raises(ValueError, match="needs 2"):
        m.fill_bitmask(np.zeros((1, 1), dtype=np.int32), [1])
    with pytest.raises(ValueError, match="2 dimensions"):
        m.fill_bitmask(np.zeros(2, dtype=np.int32), [1])
    with pytest.raises(IndexError, match="rows 1..3"):
        m.fill_bitmask(np.zeros((2, 2), dtype=np.int32), [1, 2], row0=1)
    ro = np.zeros((1, 2), dtype=np.int32)
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        m.fill_bitmask(ro, [1])
    with pytest.raises(ValueError, match="C-contiguous"):
        m.fill_bitmask(np.zeros((2, 4), dtype=np.int32)[:, ::2], [1])
    # A row wider than needed is zeroed past the mask; ids past the tokenizer never allowed.
    wide = np.full((1, 3), -1, dtype=np.int32)
    m.fill_bitmask(wide, [1])
    assert wide[0, 1] == 0 and wide[0, 2] == 0
    assert np.flatnonzero(lacuna.bitmask_to_bool(wide, 40)[0]).tolist() == m.allowed_tokens(1)
    with pytest.raises(ValueError, match="more than once"):
        lacuna.fill_bitmasks([(m, [1], 0), (m, [2], 1)], np.zeros((2, 2), dtype=np.int32))


def test_a_canvas_that_cannot_be_completed_is_kept_in_state(small):
    """Found mid-loop, it is answered truthfully and recorded, not raised; the calls after it
    raise with the reason until the canvas changes."""
    grammar, tok = small
    m = lacuna.CanvasMatcher(grammar, tok, 4)
    other = lacuna.CanvasMatcher(grammar, tok, 4)
    m.set_canvas([1, None, None, None])  # `]` first: no JSON document starts so
    assert not m.is_error() and m.get_error() is None
    bitmask = lacuna.allocate_token_bitmask(3, tok.vocab_size)
    bitmask[:] = -1
    m.fill_bitmask(bitmask, [1, 2, 3])
    assert not bitmask.any(), "the truthful answer: no id at any position"
    assert m.is_error()
    assert m.get_error() == "no token is valid at position 1"
    assert "in error" in repr(m)
    for call in [
        lambda: m.fill_bitmask(bitmask, [1]),
        lambda: m.allowed_tokens(2),
        lambda: m.validate([(1, 0)]),
        lambda: m.commit([(1, 0)]),
        lambda: m.is_completable(),
        lambda: m.completion(),
        lambda: lacuna.fill_bitmasks([(other, [0], 0), (m, [1], 1)], bitmask),
    ]:
        with pytest.raises(lacuna.LacunaError, match=r"cannot be completed \(no token is valid at position 1\); call set_canvas"):
            call()
    with pytest.raises(lacuna.LacunaError, match="item 1"):
        lacuna.fill_bitmasks([(other, [0], 0), (m, [1], 1)], bitmask)
    # What does not compute still answers.
    assert m.canvas() == [1, None, None, None] and m.masked_positions() == [1, 2, 3]
    # Changing the canvas clears the state, each way.
    m.retract([0])
    assert not m.is_error() and m.allowed_tokens(0) == [0, 2]
    m.set_canvas([1, None, None, None])
    assert m.is_completable() is False and m.is_error()
    m.reset()
    assert not m.is_error() and m.is_completable() is True


def test_an_undecided_mask_is_not_an_error(small):
    grammar, tok = small
    m = lacuna.CanvasMatcher(grammar, tok, 4)
    m.set_timeout_ms(0)  # every id runs out of time: left out of the mask, counted
    assert m.allowed_tokens(0) == []
    assert m.stats["unknown_ids"] > 0
    assert not m.is_error()
    assert m.is_completable() is None and not m.is_error()
