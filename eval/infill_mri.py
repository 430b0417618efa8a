#!/usr/bin/env python3
"""`lacuna infill` on k-MRI HumanEval-X C++ items, judged by g++.

Instances follow the paper's description (shared/eval/PROTOCOL.md, section 1.5): k spans of
5-100 characters removed from each task's canonical solution, not overlapping or touching,
drawn with Python's `random` seeded once; the five tasks the paper excludes are skipped. The
file given to `lacuna infill` is the task's declaration (includes and signature) followed by
the solution with `<FILL>` where the spans were; no stub main is added (g++ -fsyntax-only does
not need one).

For each mode (constrained under the `cpp` grammar, hole by hole; `--unconstrained`;
`native`: a diffusion model filling every hole at once, each a span of `--span` masks,
`lacuna infill --native`; and `native-van`, the same without the grammar) it reports how many files had every hole ended by the model
(within `--max-tokens` hole by hole; natively, with no byte from the grammar's completion),
how many lacuna's grammar accepts, how many `g++ -std=c++17 -fsyntax-only` accepts, and the
seconds a file. Hole by hole every byte of a hole is the model's (there is no completion),
so these are the paper's Con.- figures.

    cargo build --release
    python3 eval/infill_mri.py --k 1 --n 20 [--model DIR] [--max-tokens 128] \
        [--modes constrained,unconstrained,native,native-van] [--span 16] [--out FILE.jsonl]
"""
import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
EXCLUDED = {"CPP/10", "CPP/32", "CPP/38", "CPP/50", "CPP/94"}


def spans(text, k, rng, attempts=1000):
    """k spans (start, end) of 5-100 characters, not overlapping or touching; None if not found."""
    found = []
    for _ in range(attempts):
        if len(found) == k:
            break
        length = rng.randint(5, min(100, len(text)))
        start = rng.randint(0, len(text) - length)
        end = start + length
        if all(end < s or start > e for s, e in found):
            found.append((start, end))
    return sorted(found) if len(found) == k else None


def instances(k, n, seed):
    rng = random.Random(seed)
    path = os.path.join(ROOT, "tests", "data", "humaneval_cpp.jsonl.gz")
    out = []
    with gzip.open(path, "rt") as f:
        for line in f:
            task = json.loads(line)
            found = spans(task["canonical_solution"], k, rng)
            if task["task_id"] in EXCLUDED or found is None:
                continue
            sol, pieces, last = task["canonical_solution"], [], 0
            for s, e in found:
                pieces.append(sol[last:s])
                last = e
            pieces.append(sol[last:])
            out.append((task["task_id"], task["declaration"] + "<FILL>".join(pieces)))
            if len(out) == n:
                break
    return out


def gpp_accepts(src):
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write(src)
    try:
        r = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", f.name],
                           capture_output=True, timeout=60)
        return r.returncode == 0
    finally:
        os.unlink(f.name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--k", type=int, default=1)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "lacuna"))
    ap.add_argument("--modes", default="constrained,unconstrained")
    ap.add_argument("--span", type=int, default=16)
    ap.add_argument("--out", help="write each file's record (mode, task, text, holes, g++) here")
    args = ap.parse_args()
    out = open(args.out, "w") if args.out else None
    items = instances(args.k, args.n, args.seed)
    tmp = tempfile.mkdtemp()
    for mode in args.modes.split(","):
        ended = grammar = gpp = refused = 0
        seconds = 0.0
        for task_id, text in items:
            path = os.path.join(tmp, task_id.replace("/", "_") + ".cpp")
            with open(path, "w") as f:
                f.write(text)
            cmd = [args.bin, "infill", "-g", "cpp", path, "--json",
                   "--max-tokens", str(args.max_tokens)]
            if args.model:
                cmd += ["--model", args.model]
            if mode in ("unconstrained", "native-van"):
                cmd.append("--unconstrained")
            if mode.startswith("native"):
                cmd += ["--native", "--span", str(args.span)]
            t0 = time.time()
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            seconds += time.time() - t0
            if not r.stdout.strip():
                refused += 1  # an error before any hole (the file too long for the model, say)
                continue
            record = json.loads(r.stdout)
            if mode.startswith("native"):
                all_ended = record["completion_bytes"] == 0
            else:
                all_ended = all(h["ended"] for h in record["holes"]) and \
                    len(record["holes"]) == text.count("<FILL>")
            ended += all_ended
            grammar += record["valid"]
            accepted = all_ended and gpp_accepts(record["text"])
            gpp += accepted
            if out:
                out.write(json.dumps({"mode": mode, "task": task_id, "text": record["text"],
                                      "holes": [h["text"] for h in record["holes"]],
                                      "gpp": bool(accepted)}) + "\n")
        print(json.dumps({"mode": mode, "k": args.k, "items": len(items), "errors": refused,
                          "every_hole_ended": ended, "grammar_accepts": grammar,
                          "gpp_accepts": gpp,
                          "seconds_per_file": round(seconds / max(1, len(items)), 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
