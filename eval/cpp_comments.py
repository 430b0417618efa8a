#!/usr/bin/env python3
"""How much of the C++ outputs of `eval_default` (target/eval_default.jsonl) sits inside comments.

A grammar that accepts comments anywhere lets a constrained sampler close whatever it cannot
continue by opening one (`/*`): the output stays valid to the grammar and to tree-sitter, but
the code is gone. For each mode: outputs, their bytes (the generated body, the fixed prefix
left out), bytes inside `//` and `/* */` comments, and outputs that open at least one comment.
String and character literals are skipped, so `"/*"` is not a comment.

    python3 eval/cpp_comments.py target/eval_default.jsonl [MORE.jsonl ...]

Records of `eval/infill_mri.py --out FILE` count each hole's text as one output.
"""
import json
import sys
from collections import defaultdict


def comment_bytes(text):
    """(bytes inside comments, number of comments) of C++ `text`, lexed left to right."""
    inside = count = i = 0
    n = len(text)
    while i < n:
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            inside, count, i = inside + end - i, count + 1, end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            inside, count, i = inside + end - i, count + 1, end
        elif text[i] in "\"'":
            quote, i = text[i], i + 1
            while i < n and text[i] != quote and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
            i += 1
        else:
            i += 1
    return inside, count


def main(paths):
    rows = defaultdict(lambda: [0, 0, 0, 0])  # outputs, bytes, in comments, with a comment
    for path in paths:
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                # `eval/infill_mri.py --out` records: each hole's text is an output.
                texts = r["holes"] if "holes" in r else [r["text"]]
                if "holes" not in r and r.get("task") != "cpp":
                    continue
                for text in texts:
                    inside, count = comment_bytes(text)
                    row = rows[(path, r["mode"])]
                    row[0] += 1
                    row[1] += len(text.encode())
                    row[2] += inside
                    row[3] += count > 0
    print("| file | mode | outputs | bytes | in comments | outputs with a comment |")
    print("|---|---|---|---|---|---|")
    for (path, mode), (n, total, inside, commented) in sorted(rows.items()):
        share = 100.0 * inside / total if total else 0.0
        print(f"| {path} | {mode} | {n} | {total} | {inside} ({share:.0f}%) | {commented} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
