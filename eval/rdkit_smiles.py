#!/usr/bin/env python3
"""RDKit's verdict on the SMILES outputs of `eval_default` (target/eval_default.jsonl).

For each mode: how many outputs RDKit parses (MolFromSmiles with sanitize=False: the syntax,
ring bonds paired, bracket atoms read) and how many it also sanitizes (valences, aromaticity:
chemistry beyond any context-free grammar), and how many of each the model wrote alone (no
byte from the grammar's completion, the paper's Con.-). Of the sanitized molecules: how many
are novel (their canonical SMILES is not that of any molecule in the default model's training
set, the 200,000 MOSES rows of tests/data/moses_train_head200k.csv.gz) and unique.

    pip install rdkit
    python3 eval/rdkit_smiles.py target/eval_default.jsonl
"""
import gzip
import json
import os
import sys
from collections import defaultdict

from rdkit import Chem, RDLogger

RDLogger.DisableLog("rdApp.*")


TRAINING = os.path.join(os.path.dirname(__file__), "..", "tests", "data",
                        "moses_train_head200k.csv.gz")


def training_set():
    """Canonical SMILES of the training molecules (MOSES rows are already canonical, but are
    canonicalized here by the same RDKit as the outputs)."""
    seen = set()
    with gzip.open(TRAINING, "rt") as f:
        next(f)
        for line in f:
            mol = Chem.MolFromSmiles(line.split(",")[0].strip())
            if mol is not None:
                seen.add(Chem.MolToSmiles(mol))
    return seen


def main(path):
    train = training_set()
    rows = defaultdict(lambda: defaultdict(int))
    distinct = defaultdict(set)
    for line in open(path):
        rec = json.loads(line)
        if rec.get("task") != "smiles":
            continue
        r = rows[rec["mode"]]
        text = rec["text"]
        model_wrote = rec.get("completion_bytes", 0) == 0
        mol = Chem.MolFromSmiles(text, sanitize=False) if text else None
        parsed = mol is not None
        sanitized = False
        if parsed:
            try:
                Chem.SanitizeMol(mol)
                sanitized = True
            except Exception:
                pass
        r["n"] += 1
        r["parsed"] += parsed
        r["sanitized"] += sanitized
        r["parsed_by_model"] += parsed and model_wrote
        r["sanitized_by_model"] += sanitized and model_wrote
        if sanitized:
            canonical = Chem.MolToSmiles(mol)
            r["novel"] += canonical not in train
            distinct[rec["mode"]].add(canonical)
    print("| mode | n | RDKit parses | sanitizes | parses, model only | sanitizes, model only "
          "| novel (of sanitized) | unique (of sanitized) |")
    print("|---|---|---|---|---|---|---|---|")
    for mode, r in rows.items():
        n = max(r["n"], 1)
        pct = lambda k: f"{100 * r[k] / n:.0f}%"
        print(f"| {mode} | {r['n']} | {pct('parsed')} | {pct('sanitized')} | "
              f"{pct('parsed_by_model')} | {pct('sanitized_by_model')} | "
              f"{100 * r['novel'] / max(r['sanitized'], 1):.0f}% | "
              f"{100 * len(distinct[mode]) / max(r['sanitized'], 1):.0f}% |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "target/eval_default.jsonl")
