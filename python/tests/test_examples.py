"""The examples run, and what the model writes under the masks is valid to the real tools
(Python's `json`), with every position written by the model (no completion)."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

EXAMPLE = os.path.join(ROOT, "python", "examples", "generate.py")


@pytest.mark.parametrize("style", ["llada", "dream", "ar"])
@pytest.mark.parametrize("seed", [0, 1])
def test_generate_loops_write_valid_json(style, seed):
    out = subprocess.run(
        [sys.executable, EXAMPLE, "--style", style, "--grammar", "json", "--length", "12",
         "--steps", "6", "--block", "6", "--seed", str(seed)],
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr + out.stdout
    report = json.loads(out.stdout)
    assert report["positions_filled_by_model"] == report["length"] == 12
    json.loads(report["output"])  # the real parser accepts what the model wrote


def test_the_loop_on_torch_tensors():
    """The LLaDA loop with torch logits and a torch bitmask, where torch is installed."""
    pytest.importorskip("torch")
    out = subprocess.run(
        [sys.executable, EXAMPLE, "--style", "llada", "--grammar", "json", "--length", "12",
         "--steps", "6", "--block", "6", "--torch"],
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr + out.stdout
    report = json.loads(out.stdout)
    assert report["positions_filled_by_model"] == 12
    json.loads(report["output"])
