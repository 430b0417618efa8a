"""The cost of the Python layer: `CanvasMatcher.fill_bitmask` for one position, timed from
Python, beside the time the Rust mask itself reports (`stats["mask_micros"]`, measured inside
`Checker::allowed`), on the same calls, over the 151k-token Qwen vocabulary.

    python python/benches/masks.py [--repeat N]

Canvases: a JSON document and a SMILES string encoded id by id (longest match over the
vocabulary's bytes), with a run of masks in the middle; the mask of the run's first
position, with a warm matcher (its caches hold the canvas's chunks, as in a sampler's loop).
"""

import argparse
import os
import statistics
import sys
import time

import lacuna

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
from greedy import greedy_encoder  # noqa: E402
QWEN = os.path.join(ROOT, "tests", "data", "qwen-bpe", "tokenizer.json")

DOCS = {
    "json": '{"name": "Alice Smith", "age": 31, "tags": ["admin", "dev"], "active": true}',
    "smiles": "CC(=O)Nc1ccc(O)cc1C(=O)OCC",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    tok = lacuna.Tokenizer.from_file(QWEN)
    encode = greedy_encoder(tok)
    print("| canvas | calls | Python wall median µs | Rust mask median µs | overhead |")
    print("| --- | --- | --- | --- | --- |")
    for name, doc in DOCS.items():
        ids = encode(doc.encode())
        mid = len(ids) // 2
        canvas = ids[:mid] + [None] * 4 + ids[mid + 4 :]
        m = lacuna.CanvasMatcher(lacuna.Grammar.from_spec(name), tok, len(canvas))
        m.set_canvas(canvas)
        bitmask = lacuna.allocate_token_bitmask(1, m.vocab_size)
        m.fill_bitmask(bitmask, [mid])  # warm
        wall, inner = [], []
        for _ in range(args.repeat):
            before = m.stats["mask_micros"]
            t = time.perf_counter()
            m.fill_bitmask(bitmask, [mid])
            wall.append((time.perf_counter() - t) * 1e6)
            inner.append(m.stats["mask_micros"] - before)
        w, r = statistics.median(wall), statistics.median(inner)
        print(f"| {name} | {args.repeat} | {w:.0f} | {r:.0f} | {100 * (w - r) / r:+.1f}% |")


if __name__ == "__main__":
    main()
