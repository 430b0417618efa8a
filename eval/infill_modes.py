#!/usr/bin/env python3
"""`lacuna infill` on one file with holes, hole by hole and natively, over many seeds.

For each mode (`holes`: one hole after another, left to right, each under its frontier mask;
`native`: every hole at once, each a span of `--span` masks, `lacuna infill --native`;
`native-van`: the same canvas without the grammar, `--native --unconstrained`) it
runs `lacuna infill --json` once per seed and reports how many filled files lacuna's grammar
accepts, how many an independent oracle accepts (Python's `json` for `-g json`, RDKit for
`-g smiles` when it is installed: `bash eval/setup-tools.sh`), how many the model wrote alone
(every hole ended within `--max-tokens`; natively, no byte from the grammar's completion), and
the seconds a file. The embedded model unless `--model DIR`.

    cargo build --release
    python3 eval/infill_modes.py -g json FILE [--seeds 20] [--span 6] [--temperature 1]
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def oracle(grammar):
    if grammar == "json":
        def accepts(text):
            try:
                json.loads(text)
                return True
            except ValueError:
                return False
        return accepts
    if grammar == "smiles":
        try:
            from rdkit import Chem, RDLogger
        except ImportError:
            return None
        RDLogger.DisableLog("rdApp.*")
        return lambda text: Chem.MolFromSmiles(text, sanitize=False) is not None
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-g", "--grammar", required=True)
    ap.add_argument("file")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--span", type=int, default=6)
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--model")
    ap.add_argument("--modes", default="holes,native")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "lacuna"))
    args = ap.parse_args()
    accepts = oracle(args.grammar)
    for mode in args.modes.split(","):
        grammar = independent = alone = 0
        seconds = 0.0
        for seed in range(args.seeds):
            cmd = [args.bin, "infill", "-g", args.grammar, args.file, "--json",
                   "--seed", str(seed), "--temperature", str(args.temperature),
                   "--max-tokens", str(args.max_tokens), "--span", str(args.span)]
            if args.model:
                cmd += ["--model", args.model]
            if mode.startswith("native"):
                cmd.append("--native")
            if mode == "native-van":
                cmd.append("--unconstrained")
            t0 = time.time()
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            seconds += time.time() - t0
            if not r.stdout.strip():
                print(f"seed {seed}: {r.stderr.strip()}", file=sys.stderr)
                continue
            record = json.loads(r.stdout)
            if mode.startswith("native"):
                ended = record["completion_bytes"] == 0
            else:
                ended = all(h["ended"] for h in record["holes"])
            alone += ended
            grammar += record["valid"]
            if accepts is not None:
                independent += ended and accepts(record["text"])
        print(json.dumps({
            "mode": mode, "grammar": args.grammar, "seeds": args.seeds,
            "span": args.span if mode.startswith("native") else None,
            "model_wrote_all": alone, "grammar_accepts": grammar,
            "oracle_accepts": independent if accepts is not None else None,
            "seconds_per_file": round(seconds / max(1, args.seeds), 2),
        }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
