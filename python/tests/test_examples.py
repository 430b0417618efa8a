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


@pytest.mark.parametrize("style", ["llada", "dream"])
def test_the_loops_on_torch_tensors_write_what_numpy_writes(style):
    """The loops with the model as a torch module and torch logits and bitmasks (where torch
    is installed): the same weights, so the same output as the NumPy run, token for token."""
    pytest.importorskip("torch")
    reports = []
    for backend in ([], ["--torch"]):
        out = subprocess.run(
            [sys.executable, EXAMPLE, "--style", style, "--grammar", "json", "--length", "12",
             "--steps", "6", "--block", "6", *backend],
            capture_output=True, text=True, timeout=600,
        )
        assert out.returncode == 0, out.stderr + out.stdout
        reports.append(json.loads(out.stdout))
    numpy_run, torch_run = reports
    assert torch_run["positions_filled_by_model"] == 12
    json.loads(torch_run["output"])
    assert torch_run["output"] == numpy_run["output"]
