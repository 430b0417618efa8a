"""The example's PyTorch LLaDA and Dream (`examples/models.py`) against the reference logits
of the tiny checkpoints (computed by `transformers`' blocks under full attention, and
cross-checked with NumPy: `tests/data/*-tiny/expected.safetensors`), and the generate loops
run on them through lacuna's masks. Skipped where torch or safetensors is not installed."""

import json
import os
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

import lacuna  # noqa: E402
from conftest import ROOT  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "python", "examples"))
import generate  # noqa: E402
import models  # noqa: E402

FAMILIES = ["llada-tiny", "dream-tiny"]


def fixture(name):
    return os.path.join(ROOT, "tests", "data", name)


@pytest.mark.parametrize("name", FAMILIES)
def test_logits_equal_the_reference(name):
    from safetensors.torch import load_file

    model = models.load(fixture(name))
    expected = load_file(os.path.join(fixture(name), "expected.safetensors"))
    logits = model(expected["input_ids"])
    assert logits.shape == expected["logits"].shape
    diff = (logits - expected["logits"]).abs().max().item()
    assert diff < 1e-4, diff


def byte_tokenizer(model):
    """A vocabulary the width of the tiny model's: ids 0..255 the bytes, a few JSON words,
    its end-of-output id, everything else (the mask id among them) never in an output."""
    words = [bytes([b]) for b in range(256)] + [b"true", b"false", b"null", b'": ', b", "]
    tokens = words + [b""] * (model.vocab_size - len(words))
    forbidden = [i for i in range(len(words), model.vocab_size) if i != model.eos_id]
    return lacuna.Tokenizer.from_tokens(tokens, [model.eos_id], forbidden)


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("style", ["llada", "dream"])
def test_the_loops_on_a_real_architecture_write_valid_json(name, style):
    model = models.load(fixture(name))
    tokenizer = byte_tokenizer(model)
    prompt = list(b"JSON: ")
    wrapped = generate.CheckpointModel(model, prompt)
    matcher = lacuna.CanvasMatcher(lacuna.Grammar.from_spec("json"), tokenizer, 10,
                                   vocab_size=model.vocab_size)
    if style == "llada":
        generate.llada_generate(matcher, wrapped, steps=5, block=5, use_torch=True)
    else:
        generate.dream_generate(matcher, wrapped, steps=5, use_torch=True)
    assert matcher.masked_positions() == [], "the model wrote every position"
    json.loads(generate.output_bytes(matcher, tokenizer))
    assert wrapped.calls > 0


def test_a_folder_that_is_not_a_checkpoint_is_named(tmp_path):
    with pytest.raises(models.ConfigError, match="config.json"):
        models.load(str(tmp_path))
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(models.ConfigError, match="`model_type` 'bert'"):
        models.load(str(tmp_path))
    cfg = json.load(open(os.path.join(fixture("llada-tiny"), "config.json")))
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(models.ConfigError, match="no model.safetensors"):
        models.load(str(tmp_path))
    cfg["n_layers"] = 3  # one block more than the weights hold
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    os.symlink(os.path.join(fixture("llada-tiny"), "model.safetensors"),
               tmp_path / "model.safetensors")
    with pytest.raises(models.ConfigError, match="blocks.2.attn_norm.weight"):
        models.load(str(tmp_path))


def byte_level_tokenizer_json(path, size, names=None):
    """A byte-level BPE `tokenizer.json` of `size` ids (the 256 bytes, a few JSON words, then
    special tokens: `names` by id, by default the tiny diffusion models' end of output at 300
    and mask tokens), made with `tokenizers`."""
    from tokenizers import AddedToken, Tokenizer, decoders, models as bpe, pre_tokenizers

    vocab = {ch: i for i, ch in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    for word in ["true", "false", "null", '":', ",Ġ"]:
        vocab[word] = len(vocab)
    first_special = len(vocab)
    names = names or {300: "<|endoftext|>", 310: "<|mdm_mask|>", 311: "<|mask|>"}
    for i in range(first_special, size):
        vocab[names.get(i, f"<|reserved_{i}|>")] = i
    tok = Tokenizer(bpe.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(k, special=True) for k, v in vocab.items() if v >= first_special])
    tok.save(str(path))


@pytest.mark.parametrize("name", FAMILIES)
def test_the_example_runs_a_checkpoint_folder(tmp_path, name):
    """`generate.py --model DIR`, as a user runs it on a downloaded checkpoint (here the tiny
    one, with a byte-level tokenizer.json beside it)."""
    pytest.importorskip("tokenizers")
    import subprocess

    for f in ["config.json", "model.safetensors"]:
        os.symlink(os.path.join(fixture(name), f), tmp_path / f)
    byte_level_tokenizer_json(tmp_path / "tokenizer.json", 320)
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "python", "examples", "generate.py"),
         "--model", str(tmp_path), "--prompt", "JSON: ", "--length", "12", "--steps", "6",
         "--style", name.split("-")[0]],
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr + out.stdout
    report = json.loads(out.stdout)
    assert report["positions_filled_by_model"] == 12 and report["completable"] is True
    json.loads(report["output"])
