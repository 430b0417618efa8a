#!/usr/bin/env python3
"""A second, independent scorer: checks the verdicts `lacuna eval score` wrote, item by item.

`lacuna eval score` judges every result record with the independent tools (g++, a JSON Schema
validator, RDKit), but through lacuna's own Rust code. This script recomputes those verdicts
with its own code — Python's `json`, the `jsonschema` package, RDKit, g++ — for both texts of
each scored record, Con.- (`raw_text`) and Con. (`text`), and compares them with the record's
`con_minus` and `con` fields:

- `extracted`: the text up to the first ``` fence, whitespace (Unicode White_Space, as Rust's
  `trim`) stripped from both ends;
- `syntax_oracle`: C++ `g++ -std=c++17 -fsyntax-only`; JSON `json.loads` and then the item's
  schema by `jsonschema` with format checking; SMILES `Chem.MolFromSmiles` is not None (an empty
  string is no molecule);
- `functional`: C++ (`tests`) the answer, a blank line and the item's tests compiled with
  `g++ -std=c++17` and run, passing iff it exits 0; JSON `json-equal` the paper's printed
  comparison, `json.dumps(json.loads(x), indent=4)` of answer and gold equal (key order counts),
  `schema-valid` as `syntax_oracle`; SMILES (`smiles-equal`) both parse and their canonical
  isomeric SMILES are equal.

A record whose generation failed (`error` not null) is expected to score "" and false
everywhere. A null check counts as false. `syntax_grammar` (lacuna's own grammar) is not
recomputed. Infilling tasks (`mri-K`, `mril-K`) are C++ items judged by their `test`.

Disagreements the tools themselves can cause, reported like any other: the Rust side uses
`serde_json` (which refuses NaN and Infinity and nests at most 128 deep; Python's `json` accepts
the first two) and the `jsonschema` crate (its format checkers and regex dialect are not
Python's), and may run another RDKit. A format Python's `jsonschema` cannot check passes here;
the script names such formats (`bash eval/setup-tools.sh` installs the checkers).

    python3 eval/score_independent.py --tasks TASKS_DIR RESULTS/*.scored.jsonl

Exit status: 0 when every field of every record agrees; 1 when any disagrees (each printed:
file, task, id, seed, mode, field, lacuna's value, this script's value); 2 on bad input (a
missing file or field, named) or a missing tool (g++, RDKit, jsonschema).

Only the standard library, RDKit and jsonschema are used.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

INFILLING = ("mri-", "mril-")
FIELDS = ("extracted", "syntax_oracle", "functional")
RECORD_FIELDS = ("task", "id", "seed", "mode", "raw_text", "text", "error", "con_minus", "con")
# Unicode's White_Space property: what Rust's `str::trim` strips. (Python's `str.strip()` also
# strips U+001C..U+001F.)
WHITESPACE = ("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
              "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
SETUP = "run `bash eval/setup-tools.sh` and use the interpreter it prints"


def fail(message):
    """Bad input or a missing tool: say which, exit 2."""
    print(f"score_independent: {message}", file=sys.stderr)
    sys.exit(2)


def extract(text):
    """The text scored: up to the first ``` fence, whitespace stripped."""
    cut = text.find("```")
    return (text if cut < 0 else text[:cut]).strip(WHITESPACE)


def read_jsonl(path):
    """(line number, object) of each non-blank line; a bad line is named."""
    if not os.path.isfile(path):
        fail(f"{path}: no such file")
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except UnicodeDecodeError as e:
        fail(f"{path}: not UTF-8 ({e})")
    rows = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as e:
            fail(f"{path}:{n}: not JSON ({e})")
        if not isinstance(row, dict):
            fail(f"{path}:{n}: not a JSON object")
        rows.append((n, row))
    return rows


def require(row, fields, where):
    for field in fields:
        if field not in row:
            fail(f"{where}: missing field `{field}`")


def load_items(tasks_dir, task):
    """The task file's items by id, each as {grammar, functional, schema, gold, tests}."""
    path = os.path.join(tasks_dir, f"{task}.jsonl")
    items = {}
    for n, row in read_jsonl(path):
        where = f"{path}:{n}"
        if task.startswith(INFILLING):
            # An infilling item is a C++ program (declaration and filled solution) with tests.
            require(row, ("id", "test"), where)
            item = {"grammar": "cpp", "functional": "tests", "schema": None, "gold": None,
                    "tests": row["test"]}
        else:
            require(row, ("id", "grammar", "functional", "gold", "tests"), where)
            item = {key: row.get(key) for key in ("grammar", "functional", "schema", "gold",
                                                  "tests")}
        check_item(item, f"{where} (item {row['id']})")
        if row["id"] in items:
            fail(f"{where}: item {row['id']} appears twice")
        items[row["id"]] = item
    return items


def check_item(item, where):
    """What each kind of item needs to be judged."""
    grammar, functional = item["grammar"], item["functional"]
    allowed = {"cpp": ("tests",), "schema": ("json-equal", "schema-valid"),
               "smiles": ("smiles-equal",)}
    if grammar not in allowed:
        fail(f"{where}: unknown grammar {grammar!r}")
    if functional not in allowed[grammar]:
        fail(f"{where}: functional {functional!r} does not go with grammar {grammar!r}")
    if functional == "tests" and not isinstance(item["tests"], str):
        fail(f"{where}: functional `tests` but no `tests`")
    if grammar == "schema" and not isinstance(item["schema"], (dict, bool)):
        fail(f"{where}: grammar `schema` but no `schema`")
    if functional in ("json-equal", "smiles-equal") and not isinstance(item["gold"], str):
        fail(f"{where}: functional `{functional}` but no `gold`")
    if functional == "json-equal":
        try:
            json.loads(item["gold"])
        except ValueError as e:
            fail(f"{where}: the gold answer is not JSON ({e})")


def formats_in(schema):
    """Every `format` named anywhere in a schema."""
    found = set()
    if isinstance(schema, dict):
        if isinstance(schema.get("format"), str):
            found.add(schema["format"])
        for value in schema.values():
            found |= formats_in(value)
    elif isinstance(schema, list):
        for value in schema:
            found |= formats_in(value)
    return found


class Tools:
    """g++, jsonschema and RDKit, each looked for once, before anything is scored."""

    def __init__(self, grammars, timeout, scratch):
        self.timeout = timeout
        self.scratch = scratch
        if "cpp" in grammars and shutil.which("g++") is None:
            fail("g++ not found on PATH: scoring C++ needs it (apt-get install g++; "
                 "eval/setup-tools.sh sets up the other tools)")
        if "schema" in grammars:
            try:
                import jsonschema
            except ImportError:
                fail(f"jsonschema is not importable by {sys.executable}: scoring JSON needs it "
                     f"({SETUP})")
            self.jsonschema = jsonschema
        if "smiles" in grammars:
            try:
                from rdkit import Chem, RDLogger
            except ImportError:
                fail(f"RDKit is not importable by {sys.executable}: scoring SMILES needs it "
                     f"({SETUP})")
            RDLogger.DisableLog("rdApp.*")
            self.chem = Chem

    # Each verdict is (passed, reason): the reason says why a check failed.

    def run(self, args, what):
        """Runs a program under the time limit (killed with its children past it)."""
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return False, f"{what}: timed out after {self.timeout:g} s"
        if proc.returncode == 0:
            return True, None
        lines = err.decode("utf-8", "replace").splitlines()
        head = next((l for l in lines if "error" in l), lines[0] if lines else "")
        return False, f"{what}: exit {proc.returncode} {head.strip()}".strip()

    def cpp_syntax(self, text):
        folder = tempfile.mkdtemp(dir=self.scratch)
        source = os.path.join(folder, "answer.cpp")
        with open(source, "w", encoding="utf-8") as f:
            f.write(text)
        return self.run(["g++", "-std=c++17", "-fsyntax-only", source], "g++ -fsyntax-only")

    def cpp_tests(self, text, tests):
        folder = tempfile.mkdtemp(dir=self.scratch)
        source = os.path.join(folder, "test.cpp")
        exe = os.path.join(folder, "test.exe")
        with open(source, "w", encoding="utf-8") as f:
            f.write(text + "\n\n" + tests)
        compiled = self.run(["g++", "-std=c++17", source, "-o", exe], "g++")
        if not compiled[0]:
            return compiled
        return self.run([exe], "tests")

    def json_valid(self, text, schema):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError) as e:
            return False, f"not JSON: {e}"
        cls = self.jsonschema.validators.validator_for(schema)
        try:
            cls.check_schema(schema)
        except self.jsonschema.SchemaError as e:
            return False, f"not a valid schema: {e.message}"
        validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
        try:
            error = self.jsonschema.exceptions.best_match(validator.iter_errors(value))
        except Exception as e:  # e.g. a `pattern` Python's re cannot compile
            return False, f"jsonschema failed: {type(e).__name__}: {e}"
        return (True, None) if error is None else (False, f"schema: {error.message}")

    def canonical(self, smiles):
        """RDKit's canonical isomeric SMILES, or None where it cannot read and sanitize it."""
        mol = self.chem.MolFromSmiles(smiles) if smiles else None
        return None if mol is None else self.chem.MolToSmiles(mol, isomericSmiles=True)

    def judge(self, item, extracted):
        """{field: (value, reason)} for one extracted text of one item."""
        grammar = item["grammar"]
        if grammar == "cpp":
            oracle = self.cpp_syntax(extracted)
            functional = self.cpp_tests(extracted, item["tests"])
        elif grammar == "schema":
            oracle = self.json_valid(extracted, item["schema"])
            if item["functional"] == "json-equal":
                functional = json_equal(extracted, item["gold"])
            else:
                functional = oracle
        else:
            out = self.canonical(extracted)
            gold = self.canonical(item["gold"])
            oracle = (True, None) if out is not None else (False, "RDKit cannot read it")
            if out is None:
                functional = (False, "RDKit cannot read it")
            elif gold is None:
                functional = (False, "RDKit cannot read the gold")
            elif out != gold:
                functional = (False, f"another molecule: {out} is not {gold}")
            else:
                functional = (True, None)
        return {"extracted": (extracted, None), "syntax_oracle": oracle,
                "functional": functional}


def json_equal(text, gold):
    """The paper's comparison: both parse and print the same (key order counts)."""
    try:
        out = json.loads(text)
    except (ValueError, RecursionError) as e:
        return False, f"not JSON: {e}"
    if json.dumps(out, indent=4) == json.dumps(json.loads(gold), indent=4):
        return True, None
    return False, "differs from the gold answer"


FAILED = {"extracted": ("", None), "syntax_oracle": (False, "generation failed"),
          "functional": (False, "generation failed")}


def lacuna_value(verdicts, field, where):
    value = verdicts[field]
    if field == "extracted":
        return value
    if value is not None and not isinstance(value, bool):
        fail(f"{where}: `{field}` is {value!r}, not a boolean")
    return bool(value)


def show(value, limit=100):
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f"... ({len(value)} chars)"


def first_difference(a, b):
    a, b = a or "", b or ""
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def main():
    parser = argparse.ArgumentParser(
        description="Recompute the independent verdicts of `lacuna eval score` and compare.")
    parser.add_argument("--tasks", required=True, help="the folder of the task files")
    parser.add_argument("--timeout", type=float, default=20.0,
                        help="seconds each g++ compile and each test run may take (20)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="C++ programs judged at once (default: the number of CPUs)")
    parser.add_argument("scored", nargs="+", help="scored records (*.scored.jsonl)")
    args = parser.parse_args()
    if not args.timeout > 0:
        fail(f"--timeout {args.timeout}: must be positive")
    if not os.path.isdir(args.tasks):
        fail(f"{args.tasks}: no such folder of task files")

    # Read everything first: bad input is named before any tool runs.
    records = []  # (path, line, record)
    for path in args.scored:
        for n, r in read_jsonl(path):
            where = f"{path}:{n}"
            require(r, RECORD_FIELDS, where + " (is it a *.scored.jsonl file?)")
            for which in ("con_minus", "con"):
                if not isinstance(r[which], dict):
                    fail(f"{where}: `{which}` is not an object")
                require(r[which], FIELDS, f"{where}: `{which}`")
            records.append((path, n, r))
    items = {}
    for path, n, r in records:
        if r["task"] not in items:
            items[r["task"]] = load_items(args.tasks, r["task"])
        if r["id"] not in items[r["task"]]:
            fail(f"{path}:{n}: item {r['id']} is not in "
                 f"{os.path.join(args.tasks, r['task'] + '.jsonl')}")

    # Every distinct (task, id, extracted text) is judged once.
    todo = {}
    for _, _, r in records:
        if r["error"] is None:
            for text in (r["raw_text"], r["text"]):
                key = (r["task"], r["id"], extract(text))
                todo[key] = items[r["task"]][r["id"]]
    used = {todo[key]["grammar"] for key in todo}
    with tempfile.TemporaryDirectory(prefix="score-independent-") as scratch:
        tools = Tools(used, args.timeout, scratch)
        if "schema" in used:
            warn_unchecked_formats(tools, [i["schema"] for i in todo.values()
                                           if i["grammar"] == "schema"])
        verdicts = {}
        cpp = [key for key, item in todo.items() if item["grammar"] == "cpp"]
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for key, v in zip(cpp, pool.map(lambda k: tools.judge(todo[k], k[2]), cpp)):
                verdicts[key] = v
        for key, item in todo.items():
            if key not in verdicts:
                verdicts[key] = tools.judge(item, key[2])

    agree = {field: 0 for field in FIELDS}
    compared = 0
    disagreements = 0
    for path, n, r in records:
        for which, text in (("con_minus", r["raw_text"]), ("con", r["text"])):
            if r["error"] is None:
                mine = verdicts[(r["task"], r["id"], extract(text))]
            else:
                mine = FAILED
            theirs = r[which]
            compared += 1
            for field in FIELDS:
                value = lacuna_value(theirs, field, f"{path}:{n}: `{which}`")
                ours, reason = mine[field]
                if value == ours:
                    agree[field] += 1
                    continue
                disagreements += 1
                line = (f"DISAGREE {path} task {r['task']} id {r['id']} seed {r['seed']} "
                        f"mode {r['mode']}: {which}.{field} lacuna {show(value)}, "
                        f"independent {show(ours)}")
                if field == "extracted":
                    line += f" (first difference at char {first_difference(value, ours)})"
                else:
                    reasons = [f"lacuna: {theirs['reason']}" if theirs.get("reason") else "",
                               f"independent: {reason}" if reason else ""]
                    if any(reasons):
                        line += f" ({'; '.join(r for r in reasons if r)})"
                print(line)
    summary = ", ".join(f"{field} {agree[field]}/{compared}" for field in FIELDS)
    print(f"{compared} texts compared ({len(records)} records in {len(args.scored)} files); "
          f"agreeing: {summary}; {disagreements} disagreements")
    sys.exit(1 if disagreements else 0)


def warn_unchecked_formats(tools, schemas):
    """Names the formats the schemas use that this jsonschema cannot check (they pass here)."""
    unchecked = set()
    for schema in schemas:
        checkers = tools.jsonschema.validators.validator_for(schema).FORMAT_CHECKER.checkers
        unchecked |= formats_in(schema) - set(checkers)
    if unchecked:
        print(f"score_independent: note: this jsonschema cannot check the format(s) "
              f"{', '.join(sorted(unchecked))}: they pass unchecked here; the Rust scorer "
              f"asserts them ({SETUP})", file=sys.stderr)


if __name__ == "__main__":
    main()
