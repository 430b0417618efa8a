"""`InfillMatcher`: the next token of a middle between a prefix and a suffix, against Python's
own `json` parser as the oracle, and a real left-to-right model (`transformers`' Qwen2 on the
tiny FIM checkpoint) constrained through it, where transformers is installed."""

import itertools
import json
import os
import random

import numpy as np
import pytest

import lacuna
from conftest import ROOT

WORDS = ["{", "}", "[", "]", '"', '"a"', ":", ",", "1", "2", " ", "tr", "ue", "null"]
EOS = len(WORDS)
TOKENS = [w.encode() for w in WORDS] + [b""]


def is_json(text):
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@pytest.fixture(scope="module")
def small():
    tok = lacuna.Tokenizer.from_tokens(TOKENS, [EOS])
    return lacuna.Grammar.from_spec("json"), tok


CASES = [("[1, ", "]"), ('{"a": ', "}"), ("", ""), ('{"a": [', '], "a": null}'), ("[", ", 2]")]


def reachable(prefix, middle, t, suffix, depth=2):
    """Whether some continuation of at most `depth` vocabulary words after `t` makes JSON."""
    for n in range(depth + 1):
        for w in itertools.product(WORDS, repeat=n):
            if is_json(prefix + middle + WORDS[t] + "".join(w) + suffix):
                return True
    return False


@pytest.mark.parametrize("prefix,suffix", CASES)
def test_masks_hold_every_reachable_token_and_end_exactly(small, prefix, suffix):
    grammar, tok = small
    m = lacuna.InfillMatcher(grammar, tok, prefix, suffix)
    rng = random.Random(hash((prefix, suffix)) & 0xFFFF)
    middle = ""
    for _ in range(6):
        allowed = set(m.allowed_tokens())
        for t in range(len(WORDS)):
            if reachable(prefix, middle, t, suffix):
                assert t in allowed, (prefix, middle, WORDS[t], suffix)
        # The end is exact: the oracle can judge it outright.
        assert (EOS in allowed) == is_json(prefix + middle + suffix), (prefix, middle, suffix)
        assert m.may_end() == is_json(prefix + middle + suffix)
        text = [t for t in allowed if t != EOS]
        if not text:
            break
        t = rng.choice(sorted(text))
        assert m.consume_token(t)
        middle += WORDS[t]
    assert m.middle() == middle.encode()


@pytest.mark.parametrize("seed", range(8))
def test_walks_under_the_masks_end_in_json(small, seed):
    """Every token drawn from the mask, the end taken when allowed (or at random), until the
    middle ends: the real parser reads the file, and no walk gets stuck."""
    grammar, tok = small
    rng = random.Random(seed)
    for prefix, suffix in CASES:
        m = lacuna.InfillMatcher(grammar, tok, prefix, suffix)
        bitmask = lacuna.allocate_token_bitmask(1, tok.vocab_size)
        for step in range(40):
            m.fill_next_token_bitmask(bitmask)
            allowed = np.flatnonzero(lacuna.bitmask_to_bool(bitmask, tok.vocab_size)[0])
            assert len(allowed) > 0 and not m.is_error(), (prefix, m.middle(), suffix)
            if EOS in allowed and (step > 12 or rng.random() < 0.3):
                t = EOS
            else:
                text = [t for t in allowed if t != EOS]
                t = int(rng.choice(text)) if text else EOS
            assert m.consume_token(t)
            if m.is_finished():
                break
        if m.is_finished():
            assert is_json(prefix + m.middle().decode() + suffix), m.middle()


def test_later_holes_and_refusals(small):
    grammar, tok = small
    one, comma, close = WORDS.index("1"), WORDS.index(","), WORDS.index("]")
    # `[ □ , □ ]`: the middle, then the suffix with a later hole.
    m = lacuna.InfillMatcher(grammar, tok, b"[", [b",", b"]"])
    assert m.may_end() is False  # `[,□]` needs a value before the comma
    assert m.validate_tokens([one, EOS]) == 2
    assert m.middle_ids() == [], "validate leaves the middle"
    assert m.consume_token(one) and m.may_end() is True
    assert m.consume_token(EOS) and m.is_finished()
    assert m.allowed_tokens() == [EOS]
    # A token the mask refused: the matcher is in error, as llguidance's are.
    m = lacuna.InfillMatcher(grammar, tok, "[1", "]")
    # `[1□]`: more digits, a comma, a space, or the end (`[1]`); never a second `]`.
    assert m.allowed_tokens() == [comma, one, WORDS.index("2"), WORDS.index(" "), EOS]
    assert close not in m.allowed_tokens()
    assert not m.consume_token(WORDS.index(":"))
    assert m.is_error() and "cannot come next" in m.get_error()
    with pytest.raises(lacuna.LacunaError, match="call reset"):
        m.allowed_tokens()
    m.reset()
    assert not m.is_error() and m.consume_token(comma)
    # A suffix no middle completes: said at once.
    m = lacuna.InfillMatcher(grammar, tok, "[1]", "]")
    assert m.is_error() and "no middle" in m.get_error()
    with pytest.raises(TypeError, match="suffix"):
        lacuna.InfillMatcher(grammar, tok, "[", 5)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        lacuna.InfillMatcher(grammar, tok, "[", "]").consume_token(10_000)


def test_a_transformers_fim_model_constrained_through_the_matcher(tmp_path):
    """The real library's Qwen2 (the tiny FIM checkpoint, random weights) in its FIM prompt,
    its logits masked by the matcher at every step, greedy: the middle makes the file JSON."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from test_models import byte_level_tokenizer_json

    fixture = os.path.join(ROOT, "tests", "data", "qwen2-fim-tiny")
    model = transformers.AutoModelForCausalLM.from_pretrained(fixture)
    byte_level_tokenizer_json(tmp_path / "tokenizer.json", 384, names={
        360: "<|endoftext|>", 376: "<|fim_prefix|>", 377: "<|fim_middle|>",
        378: "<|fim_suffix|>"})
    from tokenizers import Tokenizer

    hf_tok = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    hf = lacuna.tokenizer_from_huggingface(hf_tok, eos=["<|endoftext|>"])
    encode = lambda text: hf_tok.encode(text, add_special_tokens=False).ids  # noqa: E731
    ended = 0
    for prefix, suffix in [('{"a": ', "}"), ("[1, ", "]"), ("", "")]:
        m = lacuna.InfillMatcher(lacuna.Grammar.from_spec("json"), hf, prefix, suffix,
                                 vocab_size=model.config.vocab_size)
        ids = [376] + encode(prefix) + [378] + encode(suffix) + [377]
        bitmask = lacuna.allocate_token_bitmask(1, m.vocab_size)
        for _ in range(48):
            with torch.no_grad():
                logits = model(torch.tensor([ids])).logits[0, -1:].clone()
            m.fill_next_token_bitmask(bitmask)
            lacuna.apply_token_bitmask_inplace(logits, torch.from_numpy(bitmask))
            t = int(logits.argmax())
            assert m.consume_token(t), t
            if m.is_finished():
                break
            ids.append(t)
        if m.is_finished():
            ended += 1
            assert is_json(prefix + m.middle().decode() + suffix), m.middle()
    assert ended >= 1
