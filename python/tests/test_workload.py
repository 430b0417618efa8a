"""The bindings against the Rust command-line tool on real documents over the real 151k-token
Qwen vocabulary: the shared workload's canvases (JSON Schema extraction, JSON, SMILES, C++),
each text cell encoded into ids, masks as masked positions; the masks of several positions
from `CanvasMatcher.fill_bitmask` must equal `lacuna mask`'s, id for id.

A mask has a time limit (2 s), so where a position's mask leaves ids undecided what it
decided depends on the machine's speed: such positions are only required to agree on what
both decided (both sets of allowed ids hold only valid ids), and at least half the positions
asked here must be decided in full."""

import json
import random

import numpy as np

import lacuna

from conftest import ROOT, QWEN, run_cli
from greedy import greedy_encoder

PER_FAMILY = 2


def workload_cases(tok):
    encode = greedy_encoder(tok)
    eos = tok.eos_ids[0]
    seen = {}
    with open(f"{ROOT}/benches/data/workload/canvases.jsonl", encoding="utf-8") as f:
        for line in f:
            case = json.loads(line)
            if seen.get(case["family"], 0) >= PER_FAMILY:
                continue
            ids = []
            for cell in case["canvas"]:
                if cell is None:
                    ids.append(None)
                elif isinstance(cell, dict) and cell.get("eos"):
                    ids.append(eos)
                elif isinstance(cell, dict):
                    ids.extend(encode(bytes(cell["bytes"])))
                else:
                    ids.extend(encode(cell.encode()))
            if None not in ids:
                continue
            seen[case["family"]] = seen.get(case["family"], 0) + 1
            yield case["id"], case["grammar"], ids


def test_masks_equal_the_cli(qwen, lacuna_cli):
    import os

    cases = list(workload_cases(qwen))
    assert len({c[1].split(":")[0] for c in cases}) >= 3
    lines, asked = [], []
    for cid, spec, ids in cases:
        masked = [p for p, i in enumerate(ids) if i is None]
        positions = sorted({masked[0], masked[len(masked) // 2], masked[-1]})
        asked.append(positions)
        lines.append(json.dumps({"id": cid, "grammar": spec, "tokens": ids}))
    out = []
    for line, positions in zip(lines, asked):
        text = run_cli(
            lacuna_cli,
            ["mask", "--tokenizer", QWEN, "--positions", ",".join(map(str, positions))],
            line + "\n",
        )
        out.append(json.loads(text))
    compared = exact = 0
    cwd = os.getcwd()
    os.chdir(ROOT)  # the workload's schema specs are relative to the repository
    try:
        for (cid, spec, ids), positions, cli in zip(cases, asked, out):
            assert "error" not in cli, cli
            m = lacuna.CanvasMatcher(lacuna.Grammar.from_spec(spec), qwen, len(ids))
            m.set_canvas(ids)
            bitmask = lacuna.allocate_token_bitmask(len(positions), qwen.vocab_size)
            undecided = []
            for r, p in enumerate(positions):
                before = m.stats["unknown_ids"]
                m.fill_bitmask(bitmask, [p], row0=r)
                undecided.append(m.stats["unknown_ids"] > before)
            rows = lacuna.bitmask_to_bool(bitmask, qwen.vocab_size)
            for r, (p, mask) in enumerate(zip(positions, cli["masks"])):
                assert mask["position"] == p
                got = np.flatnonzero(rows[r]).tolist()
                compared += 1
                if not undecided[r] and mask["unknown"] == 0:
                    exact += 1
                    assert got == mask["allowed"], f"{cid} position {p}"
                else:
                    # Each route's allowed ids are exact; only how far each got may differ.
                    differ = sorted(set(got) ^ set(mask["allowed"]))
                    for i in random.Random(p).sample(differ, min(20, len(differ))):
                        assert m.validate([(p, i)]) == 1, f"{cid} position {p} id {i}"
    finally:
        os.chdir(cwd)
    # Here 12 of 17 are (C++ positions in the middle of a run are not, issue 12); the bound
    # leaves room for a slower machine.
    assert exact >= compared // 2, f"only {exact} of {compared} positions decided in full"
