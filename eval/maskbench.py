#!/usr/bin/env python3
"""lacuna and llguidance side by side on every MaskBench schema we hold (issue 18).

    pip install llguidance==1.9.1 tokenizers
    python3 eval/maskbench.py [--limit N] [--out DIR]

Both engines get the same schemas and the same instance texts (each MaskBench instance
serialized compactly, `json.dumps(..., separators=(",", ":"), ensure_ascii=False)`), in one run
on this machine. lacuna runs in-process in `cargo run --release --example maskbench`
(eval/maskbench.rs); llguidance in this process, on the Qwen tokenizer in tests/data/qwen-bpe.

The labels are MaskBench's, confirmed by the `jsonschema` crate with formats asserted (the
oracle, run by the lacuna half); an instance the oracle disputes or cannot judge is not scored.

Per engine and subset (the name's prefix: `Glaiveai2K---x.json` is Glaiveai2K, `BFCL_java_3.json`
is BFCL):
- compiled: schemas compiled in strict mode (llguidance: `LLMatcher` built without error);
- passing: compiled, and every scored instance judged as the oracle judges it;
- wrong: scored instances of compiled schemas judged otherwise (lacuna's `unknown` counts as
  wrong and is also counted apart);
- order: valid instances rejected as given but accepted once their object members are put in
  schema order as lacuna reads it (not in `wrong`; they still fail `passing`);
- compile median / p99 in milliseconds: lacuna's schema compilation plus its checker; llguidance's
  grammar_from_json_schema plus its matcher. Then, for all schemas, the same plus what a
  generation's first step adds (lacuna: a check of a canvas that is one hole; llguidance: its
  first token mask), each measured after the instances.

Data: tests/data/jsonschemabench.jsonl.gz (2,367 schemas) and tests/data/maskbench_more.jsonl.gz
(3,171), both from github.com/guidance-ai/jsonschemabench (see tests/data/README.md). MaskBench's
5,767 `Github_*` schemas are not held here.
"""
import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKS = ["tests/data/jsonschemabench.jsonl.gz", "tests/data/maskbench_more.jsonl.gz"]


def deref(root, s):
    for _ in range(16):
        r = s.get("$ref") if isinstance(s, dict) else None
        if not isinstance(r, str) or not r.startswith("#"):
            break
        cur = root
        for tok in r[1:].split("/")[1:]:
            tok = tok.replace("~1", "/").replace("~0", "~")
            if isinstance(cur, dict) and tok in cur:
                cur = cur[tok]
            else:
                return s
        s = cur
    return s


def declared(root, s, out, depth=0):
    """The property order a schema declares, as lacuna reads it: its own `properties`, then its
    parts' (first where the schema writes `allOf` before `properties`)."""
    s = deref(root, s)
    if depth > 8 or not isinstance(s, dict):
        return
    keys = list(s)
    own = s.get("properties") if isinstance(s.get("properties"), dict) else None
    parts_first = own is not None and "allOf" in s and keys.index("allOf") < keys.index("properties")
    if own is not None and not parts_first:
        out.extend(own.items())
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in s.get(key) or []:
            declared(root, sub, out, depth + 1)
    if parts_first:
        out.extend(own.items())


def schema_order(root, s, v):
    """The instance with every object's members in schema order (undeclared ones last, and
    ordered by `additionalProperties` inside)."""
    s = deref(root, s)
    if isinstance(v, dict):
        decl = []
        declared(root, s, decl)
        out = {}
        for k, sub in decl:
            if k in v and k not in out:
                out[k] = schema_order(root, sub, v[k])
        extra = s.get("additionalProperties") if isinstance(s, dict) else None
        for k, x in v.items():
            if k not in out:
                out[k] = schema_order(root, extra, x) if isinstance(extra, dict) else x
        return out
    if isinstance(v, list):
        items = s.get("items", True) if isinstance(s, dict) else True
        return [schema_order(root, items, x) for x in v]
    return v


def compact(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def load_cases(limit):
    cases = []
    for pack in PACKS:
        with gzip.open(os.path.join(ROOT, pack), "rt", encoding="utf-8") as f:
            for line in f:
                entry = json.loads(line)
                content = entry["content"]
                if isinstance(content, str):
                    content = json.loads(content)
                tests = content.get("tests") or []
                cases.append(
                    {
                        "name": entry["name"],
                        "schema": content["schema"],
                        "texts": [compact(t["data"]) for t in tests],
                        "reordered": [
                            compact(schema_order(content["schema"], content["schema"], t["data"]))
                            for t in tests
                        ],
                        "labels": [bool(t["valid"]) for t in tests],
                    }
                )
    cases.sort(key=lambda c: c["name"])
    return cases[:limit] if limit else cases


def subset(name):
    head = name.split("---")[0]
    return head.split("_")[0] if "---" not in name else head


def run_lacuna(cases, out_dir):
    path = os.path.join(out_dir, "cases.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--example", "maskbench"], cwd=ROOT, check=True
    )
    exe = os.path.join(ROOT, "target", "release", "examples", "maskbench")
    with open(path, "rb") as f:
        done = subprocess.run([exe, path], cwd=ROOT, check=True, capture_output=True)
    records = [json.loads(l) for l in done.stdout.decode().splitlines()]
    with open(os.path.join(out_dir, "lacuna.jsonl"), "w", encoding="utf-8") as f:
        f.write(done.stdout.decode())
    return {r["name"]: r for r in records}


def run_llguidance(cases):
    import llguidance

    tok = llguidance.LLTokenizer(os.path.join(ROOT, "tests/data/qwen-bpe/tokenizer.json"))
    records = {}
    for c in cases:
        t0 = time.perf_counter()
        error = None
        try:
            grammar = llguidance.LLMatcher.grammar_from_json_schema(c["schema"])
            matcher = llguidance.LLMatcher(tok, grammar, log_level=0)
            if matcher.is_error():
                error = matcher.get_error()
        except Exception as e:  # a schema llguidance refuses before the matcher
            error = str(e)
        compile_us = (time.perf_counter() - t0) * 1e6
        if error is not None:
            records[c["name"]] = {"compiled": False, "error": error, "compile_us": compile_us}
            continue
        def verdicts(texts):
            out = []
            for text in texts:
                # A copy per instance: a refused token leaves a matcher in an error state
                # that `reset` does not clear.
                m = matcher.deep_copy()
                ok = m.consume_tokens(tok.tokenize_str(text))
                out.append("accept" if ok and m.is_accepting() and not m.is_error() else "reject")
            return out

        texts, reordered = verdicts(c["texts"]), verdicts(c["reordered"])
        # What a generation's first step adds: the first token mask, after the instances.
        t0 = time.perf_counter()
        matcher.compute_bitmask()
        first_mask_us = (time.perf_counter() - t0) * 1e6
        records[c["name"]] = {"compiled": True, "compile_us": compile_us,
                              "first_mask_us": first_mask_us,
                              "verdicts": texts, "reordered_verdicts": reordered}
    return records


def score(case, oracle, record):
    """(compiled, passing, wrong, order, unknown) of one engine on one schema: `order` counts
    valid instances rejected as given but accepted with their members in schema order."""
    if not record.get("compiled"):
        return False, False, 0, 0, 0
    wrong = order = unknown = 0
    for label, truth, verdict, again in zip(
        case["labels"], oracle, record["verdicts"], record["reordered_verdicts"]
    ):
        if truth is None or truth != label:
            continue
        unknown += verdict == "unknown"
        if (verdict == "accept") != truth:
            if truth and again == "accept":
                order += 1
            else:
                wrong += 1
    return True, wrong + order == 0, wrong, order, unknown


def pct(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=0, help="only the first N schemas (by name)")
    ap.add_argument("--out", default=os.path.join(ROOT, "target", "maskbench"))
    args = ap.parse_args()
    try:
        import llguidance  # noqa: F401  (checked before the lacuna half's minutes)
    except ImportError:
        sys.exit("maskbench.py: llguidance is not installed in this Python "
                 f"({sys.executable}): pip install llguidance==1.9.1 tokenizers")
    os.makedirs(args.out, exist_ok=True)
    cases = load_cases(args.limit)
    print(f"{len(cases)} schemas, {sum(len(c['texts']) for c in cases)} instances", file=sys.stderr)
    t = time.time()
    lac = run_lacuna(cases, args.out)
    print(f"lacuna half: {time.time() - t:.0f} s", file=sys.stderr)
    t = time.time()
    llg = run_llguidance(cases)
    print(f"llguidance half: {time.time() - t:.0f} s", file=sys.stderr)
    with open(os.path.join(args.out, "llguidance.jsonl"), "w", encoding="utf-8") as f:
        for name, r in llg.items():
            f.write(json.dumps({"name": name, **r}) + "\n")

    rows = defaultdict(lambda: {"n": 0, "lacuna": Counter(), "llguidance": Counter(),
                                "lacuna_ms": [], "llguidance_ms": []})
    disputed = 0
    refusals = Counter()
    only = Counter()
    wrong_lines = []
    for c in cases:
        lr = lac[c["name"]]
        oracle = lr["oracle"]
        disputed += sum(1 for l, o in zip(c["labels"], oracle) if o is None or o != l)
        for key in (subset(c["name"]), "all"):
            row = rows[key]
            row["n"] += 1
            for engine, rec in (("lacuna", lr), ("llguidance", llg[c["name"]])):
                compiled, passing, wrong, order, unknown = score(c, oracle, rec)
                row[engine]["compiled"] += compiled
                row[engine]["passing"] += passing
                row[engine]["wrong"] += wrong
                row[engine]["order"] += order
                row[engine]["unknown"] += unknown
                if compiled:
                    ms = (rec["compile_us"] + rec.get("checker_us", 0)) / 1000
                    row[engine + "_ms"].append(ms)
        lp = score(c, oracle, lr)[1]
        gp = score(c, oracle, llg[c["name"]])[1]
        only[("both" if lp and gp else "only lacuna" if lp else "only llguidance" if gp
              else "neither")] += 1
        if not lr["compiled"]:
            refusals[lr["keyword"]] += 1
        elif not score(c, oracle, lr)[1]:
            for text, label, truth, v, again in zip(
                c["texts"], c["labels"], oracle, lr["verdicts"], lr["reordered_verdicts"]
            ):
                if truth is not None and truth == label and (v == "accept") != truth:
                    kind = "ORDER" if truth and again == "accept" else "WRONG"
                    wrong_lines.append(f"{kind} {c['name']}: valid={truth} lacuna={v}: {text[:200]}")

    print(f"instances not scored (the oracle disputes MaskBench's label or cannot judge): {disputed}")
    head = ("| subset | schemas | engine | compiled | passing | wrong | order | unknown "
            "| compile median / p99 ms |")
    print(head)
    print("|" + " --- |" * 9)
    for key in sorted(rows, key=lambda k: (k == "all", k)):
        row = rows[key]
        for engine in ("lacuna", "llguidance"):
            s = row[engine]
            ms = row[engine + "_ms"]
            print(f"| {key} | {row['n']} | {engine} | {s['compiled']} | {s['passing']} "
                  f"| {s['wrong']} | {s['order']} | {s['unknown']} "
                  f"| {statistics.median(ms) if ms else float('nan'):.2f} / {pct(ms, 0.99):.1f} |")
    # The build alone leaves work to the first step of a generation (lacuna: the hole sets of
    # a canvas that is one hole, unless the build's idle thread finished them; llguidance: the
    # lexer states of the first mask): both sides with it.
    for engine, key in (("lacuna", "hole_check_us"), ("llguidance", "first_mask_us")):
        ms = [(r["compile_us"] + r.get("checker_us", 0) + r[key]) / 1000
              for r in (lac if engine == "lacuna" else llg).values() if r.get("compiled")]
        what = "a one-hole check" if engine == "lacuna" else "its first token mask"
        print(f"{engine} build + {what}: median {statistics.median(ms):.2f} / p99 "
              f"{pct(ms, 0.99):.1f} ms")
    print("passing:", dict(only))
    print("lacuna's refusals by keyword:", refusals.most_common())
    slow = sorted(((r.get("compile_us", 0) + r.get("checker_us", 0)) / 1e6, n)
                  for n, r in lac.items())[-5:]
    print("lacuna's slowest compiles (s):", [(round(s, 2), n) for s, n in reversed(slow)])
    for line in wrong_lines:
        print(line)


if __name__ == "__main__":
    main()
