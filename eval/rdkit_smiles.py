#!/usr/bin/env python3
"""RDKit's verdict on the SMILES outputs of `eval_default` (target/eval_default.jsonl).

For each mode: how many outputs RDKit parses (MolFromSmiles with sanitize=False: the syntax,
ring bonds paired, bracket atoms read) and how many it also sanitizes (valences, aromaticity:
chemistry beyond any context-free grammar), and how many of each the model wrote alone (no
byte from the grammar's completion, the paper's Con.-).

    pip install rdkit
    python3 eval/rdkit_smiles.py target/eval_default.jsonl
"""
import json
import sys
from collections import defaultdict

from rdkit import Chem, RDLogger

RDLogger.DisableLog("rdApp.*")


def main(path):
    rows = defaultdict(lambda: defaultdict(int))
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
    print("| mode | n | RDKit parses | sanitizes | parses, model only | sanitizes, model only |")
    print("|---|---|---|---|---|---|")
    for mode, r in rows.items():
        n = max(r["n"], 1)
        pct = lambda k: f"{100 * r[k] / n:.0f}%"
        print(f"| {mode} | {r['n']} | {pct('parsed')} | {pct('sanitized')} | "
              f"{pct('parsed_by_model')} | {pct('sanitized_by_model')} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "target/eval_default.jsonl")
