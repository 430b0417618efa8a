#!/usr/bin/env bash
# Sets up the Python tools the evaluation harness calls besides g++: RDKit (SMILES, for
# `lacuna eval score` and eval/score_independent.py) and jsonschema with its format checkers
# (the second scorer's JSON oracle), in a virtual environment of their own.
#
#   bash eval/setup-tools.sh [VENV]    # VENV defaults to target/eval-venv in the repository
#
# Prints the environment's interpreter on stdout (the versions go to stderr), so
#   PY=$(bash eval/setup-tools.sh)
#   "$PY" eval/score_independent.py --tasks tasks results/*.scored.jsonl
# works. `lacuna eval score` finds target/eval-venv by itself (or give it --python or
# $LACUNA_PYTHON). Idempotent: an environment that already has both packages is reused as it
# is; an existing one missing either gets them installed. A relative VENV is taken from the
# current directory. g++ (C++ scoring) is not installed here, only looked for.
set -euo pipefail

say() { echo "setup-tools: $*" >&2; }
die() { say "$*"; exit 1; }

repo="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-$repo/target/eval-venv}"

command -v python3 >/dev/null 2>&1 ||
    die "python3 not found: install Python 3.9 or later (Debian/Ubuntu: apt-get install python3 python3-venv)"

if [ ! -x "$venv/bin/python" ]; then
    say "creating $venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv" ||
        die "python3 -m venv $venv failed (Debian/Ubuntu: apt-get install python3-venv)"
fi
python="$(cd "$venv" && pwd)/bin/python"

if ! "$python" -c "import rdkit, jsonschema" 2>/dev/null; then
    "$python" -m pip --version >/dev/null 2>&1 ||
        die "pip is missing in $venv (Debian/Ubuntu: apt-get install python3-venv python3-pip, then remove $venv and rerun)"
    say "installing rdkit and jsonschema into $venv"
    # format-nongpl: the checkers of date-time, uri, hostname, ... which plain jsonschema skips.
    "$python" -m pip install --quiet --disable-pip-version-check rdkit 'jsonschema[format-nongpl]' ||
        die "pip install rdkit jsonschema failed (is PyPI reachable?)"
fi

"$python" - >&2 <<'EOF'
from importlib.metadata import version
print(f"setup-tools: rdkit {version('rdkit')}, jsonschema {version('jsonschema')}")
EOF
command -v g++ >/dev/null 2>&1 || say "note: g++ not found; scoring C++ needs it (apt-get install g++)"
echo "$python"
