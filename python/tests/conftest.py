"""Shared fixtures: the repository's files and the `lacuna` command built by `cargo`."""

import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QWEN = os.path.join(ROOT, "tests", "data", "qwen-bpe", "tokenizer.json")


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def qwen():
    import lacuna

    return lacuna.Tokenizer.from_file(QWEN)


@pytest.fixture(scope="session")
def lacuna_cli():
    """The Rust command-line tool, the independent route the bindings are compared with:
    `$LACUNA_BIN`, else the repository's release build (`cargo build --release`)."""
    path = os.environ.get("LACUNA_BIN") or os.path.join(ROOT, "target", "release", "lacuna")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        found = shutil.which("lacuna")
        if not found:
            pytest.fail(f"no lacuna command at {path}: run `cargo build --release` first")
        path = found
    return path


def run_cli(cli, args, stdin):
    out = subprocess.run(
        [cli, *args], input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    if out.returncode != 0:
        raise AssertionError(f"{cli} {' '.join(args)} failed: {out.stderr}")
    return out.stdout
