"""Tests of eval/score_independent.py, with the real g++, jsonschema and RDKit (no mocks).

Each test writes small task and scored files by hand into a temporary folder, runs the script
on them and reads its exit status and report: it must agree where a hand-written record is
right, name every field of a record that is deliberately wrong, and refuse bad input or a
missing tool with exit status 2.

    PY=$(bash eval/setup-tools.sh)
    "$PY" -m pip install pytest
    "$PY" -m pytest -q eval/test_score_independent.py
"""
import json
import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "score_independent.py")


def dlm_item(task, id, grammar, functional, gold=None, tests=None, schema=None):
    return {"task": task, "id": id, "source": "hand-written", "system": "", "user": "",
            "prefill": "", "fixed_prefix": "", "grammar": grammar, "schema": schema,
            "gold": gold, "tests": tests, "functional": functional, "held_out": True}


DECLARATION = "#include<stdio.h>\nusing namespace std;\n"
TESTS = ("#undef NDEBUG\n#include<assert.h>\nint main(){\n    assert (add(2,3)==5);\n"
         "    assert (add(-1,1)==0);\n}\n")
CPP = dlm_item("dlm-cpp", "CPP/0", "cpp", "tests", gold="    return x+y;\n}\n", tests=TESTS)
MRI = {"task": "mri-1", "id": "CPP/0", "source": "hand-written", "prompt": DECLARATION,
       "declaration": DECLARATION, "splits": ["int add(int x,int y){\n    return ", ";\n}\n"],
       "removed": ["x+y"], "test": TESTS, "held_out": True}
JSON_EQUAL = dlm_item(
    "dlm-json", "json/equal", "schema", "json-equal", gold='{"a": 1, "b": "x"}',
    schema={"type": "object", "required": ["a"],
            "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}})
JSON_VALID = dlm_item(
    "dlm-json", "json/date", "schema", "schema-valid",
    schema={"type": "object", "required": ["day"],
            "properties": {"day": {"type": "string", "format": "date"}}})
SMILES = dlm_item("dlm-smiles", "chebi20/1", "smiles", "smiles-equal", gold="c1ccccc1O")
ITEMS = [CPP, MRI, JSON_EQUAL, JSON_VALID, SMILES]


def verdicts(extracted, oracle, functional):
    return {"extracted": extracted, "syntax_grammar": True, "syntax_oracle": oracle,
            "functional": functional}


def record(item, raw_text, oracle, functional, text=None, con=None, error=None):
    """A scored record as `lacuna eval score` writes it; Con. is Con.- unless given."""
    r = {"task": item["task"], "id": item["id"], "model": "hand", "seed": 0, "mode": "van",
         "raw_text": raw_text, "text": raw_text if text is None else text,
         "completed": text is not None, "completion_bytes": 0, "error": error,
         "timed_out": False, "gave_up": False}
    r["con_minus"] = verdicts(raw_text.split("```")[0].strip(), oracle, functional)
    r["con"] = dict(r["con_minus"]) if con is None else con
    return r


ADD = "int add(int x,int y){\n    return x+y;\n}"


def right_records():
    """Records whose every verdict is right; each gets its own seed to be told apart."""
    records = [
        # C++: passes its tests; fails them; a syntax error (a null check counts as false);
        # a name g++ cannot resolve; an answer followed by a fence and prose.
        record(CPP, DECLARATION + ADD, True, True),
        record(CPP, DECLARATION + ADD.replace("x+y", "x-y"), True, False),
        record(CPP, DECLARATION + ADD.replace("x+y", "x+"), False, None),
        record(CPP, DECLARATION + ADD.replace("x+y", "x+z"), False, False),
        record(CPP, DECLARATION + ADD + "\n```\nThis adds two numbers.", True, True),
        # Infilling: the model left the hole empty (Con.-), the grammar's completion filled it.
        record(MRI, DECLARATION + "int add(int x,int y){\n    return ;\n}\n", False, False,
               text=DECLARATION + "int add(int x,int y){\n    return x+y;\n}\n",
               con=verdicts(DECLARATION + "int add(int x,int y){\n    return x+y;\n}",
                            True, True)),
        # JSON, equal to the gold: other whitespace; a string escape; a fence after it.
        record(JSON_EQUAL, '{"a":1,"b":"x"}', True, True),
        record(JSON_EQUAL, '{"a": 1, "b": "\\u0078"}', True, True),
        record(JSON_EQUAL, ' {"a": 1, "b": "x"}\n```\n', True, True),
        # ...not equal: key order counts; another value; the schema refuses it; not JSON.
        record(JSON_EQUAL, '{"b": "x", "a": 1}', True, False),
        record(JSON_EQUAL, '{"a": 2, "b": "x"}', True, False),
        record(JSON_EQUAL, '{"b": "x"}', False, False),
        record(JSON_EQUAL, '{"a": 1, "b": "x"', False, False),
        # JSON judged by its schema, formats asserted: 2023 has no 29 February.
        record(JSON_VALID, '{"day": "2024-02-29"}', True, True),
        record(JSON_VALID, '{"day": "2023-02-29"}', False, False),
        record(JSON_VALID, '[]', False, False),
        # SMILES: the gold as written, another spelling of it (two), another molecule, an
        # aromatic ring RDKit cannot kekulize, an unclosed ring, nothing.
        record(SMILES, "c1ccccc1O", True, True),
        record(SMILES, "Oc1ccccc1", True, True),
        record(SMILES, "OC1=CC=CC=C1", True, True),
        record(SMILES, "CCO", True, False),
        record(SMILES, "c1cccc1", False, False),
        record(SMILES, "C1CC", False, False),
        record(SMILES, "", False, False),
        # A failed generation scores "" and false everywhere (null counts as false).
        record(SMILES, "CCO", None, None, error="prompt too long"),
        record(CPP, DECLARATION + ADD, False, False, error="prompt too long"),
    ]
    for seed, r in enumerate(records):
        r["seed"] = seed
    for r in records[-2:]:
        for which in ("con_minus", "con"):
            r[which]["extracted"] = ""
    return records


def write(tmp_path, records, items=ITEMS):
    tasks = tmp_path / "tasks"
    tasks.mkdir(exist_ok=True)
    by_task = {}
    for item in items:
        by_task.setdefault(item["task"], []).append(item)
    for task, rows in by_task.items():
        (tasks / f"{task}.jsonl").write_text("".join(json.dumps(i) + "\n" for i in rows))
    scored = tmp_path / "r__hand__s0__van.scored.jsonl"
    scored.write_text("".join(json.dumps(r) + "\n" for r in records))
    return tasks, scored


def score(tmp_path, records, *extra, python=(sys.executable,), env=None, items=ITEMS):
    tasks, scored = write(tmp_path, records, items)
    return subprocess.run([*python, SCRIPT, "--tasks", str(tasks), *extra, str(scored)],
                          capture_output=True, text=True, env=env)


def test_it_agrees_with_right_verdicts(tmp_path):
    records = right_records()
    out = score(tmp_path, records)
    assert out.returncode == 0, out.stdout + out.stderr
    n = 2 * len(records)
    assert f"{n} texts compared ({len(records)} records in 1 files)" in out.stdout
    for field in ("extracted", "syntax_oracle", "functional"):
        assert f"{field} {n}/{n}" in out.stdout
    assert "0 disagreements" in out.stdout and "DISAGREE" not in out.stdout


def test_it_names_every_wrong_verdict(tmp_path):
    records = right_records()

    def index(item, raw_text):
        return next(i for i, r in enumerate(records)
                    if r["id"] == item["id"] and r["raw_text"] == raw_text and not r["error"])

    wrong = [  # (record, con_minus or con, field, the wrong value)
        (index(CPP, DECLARATION + ADD), "con", "functional", False),
        (index(CPP, DECLARATION + ADD.replace("x+y", "x+")), "con_minus", "syntax_oracle", True),
        (index(MRI, DECLARATION + "int add(int x,int y){\n    return ;\n}\n"), "con",
         "functional", False),
        (index(JSON_EQUAL, '{"b": "x", "a": 1}'), "con", "functional", True),
        (index(JSON_VALID, '{"day": "2023-02-29"}'), "con_minus", "syntax_oracle", True),
        (index(SMILES, "Oc1ccccc1"), "con_minus", "functional", False),
        (index(SMILES, "c1cccc1"), "con", "syntax_oracle", True),
        (index(JSON_EQUAL, ' {"a": 1, "b": "x"}\n```\n'), "con", "extracted",
         ' {"a": 1, "b": "x"}'),
        (len(records) - 2, "con", "functional", True),  # a failed generation
    ]
    for i, which, field, value in wrong:
        records[i][which][field] = value
    out = score(tmp_path, records)
    assert out.returncode == 1, out.stdout + out.stderr
    lines = [l for l in out.stdout.splitlines() if l.startswith("DISAGREE")]
    assert len(lines) == len(wrong), out.stdout
    for i, which, field, value in wrong:
        r = records[i]
        said = json.dumps(value)
        match = [l for l in lines if f"id {r['id']} seed {r['seed']} mode van: "
                 f"{which}.{field} lacuna {said}" in l]
        assert len(match) == 1, (r["id"], which, field, out.stdout)
        assert r["task"] in match[0] and "r__hand__s0__van.scored.jsonl" in match[0]
    assert f"{len(wrong)} disagreements" in out.stdout


def test_a_hanging_test_program_fails_after_the_timeout(tmp_path):
    loops = DECLARATION + "int add(int x,int y){\n    volatile int i=0;\n    while(true) i++;\n}"
    records = [record(CPP, loops, True, False)]
    out = score(tmp_path, records, "--timeout", "2")
    assert out.returncode == 0, out.stdout + out.stderr
    records[0]["con"]["functional"] = True
    out = score(tmp_path, records, "--timeout", "2")
    assert out.returncode == 1 and "timed out after 2 s" in out.stdout, out.stdout


def test_a_format_it_cannot_check_is_named(tmp_path):
    item = dlm_item("dlm-json", "json/made-up", "schema", "schema-valid",
                    schema={"type": "string", "format": "x-lacuna-made-up"})
    out = score(tmp_path, [record(item, '"anything"', True, True)], items=[item])
    assert out.returncode == 0, out.stdout + out.stderr
    assert "x-lacuna-made-up" in out.stderr


def test_bad_input_is_named(tmp_path):
    def refused(records, *extra, items=ITEMS):
        out = score(tmp_path, records, *extra, items=items)
        assert out.returncode == 2, out.stdout + out.stderr
        assert "DISAGREE" not in out.stdout
        return out.stderr

    records = right_records()
    del records[3]["con"]
    assert "missing field `con`" in refused(records)
    records = right_records()
    del records[3]["con_minus"]["functional"]
    assert "`con_minus`: missing field `functional`" in refused(records)
    records = right_records()
    records[3]["id"] = "CPP/none"
    assert "item CPP/none is not in" in refused(records)
    records = right_records()
    records[3]["task"] = "dlm-none"
    assert "dlm-none.jsonl: no such file" in refused(records)
    records = right_records()
    records[3]["con"]["syntax_oracle"] = "yes"
    assert "`syntax_oracle` is 'yes', not a boolean" in refused(records)
    no_gold = dict(JSON_EQUAL, gold=None)
    assert "functional `json-equal` but no `gold`" in refused(
        right_records(), items=[CPP, MRI, no_gold, JSON_VALID, SMILES])
    assert "no-such.jsonl: no such file" in refused(right_records(), str(tmp_path / "no-such.jsonl"))
    tasks, scored = write(tmp_path, right_records())
    scored.write_text(scored.read_text() + "{not json\n")
    out = subprocess.run([sys.executable, SCRIPT, "--tasks", str(tasks), str(scored)],
                         capture_output=True, text=True)
    assert out.returncode == 2 and f"{scored}:{len(right_records()) + 1}: not JSON" in out.stderr


def test_a_missing_tool_is_named(tmp_path):
    # No g++ on PATH.
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    cpp = [r for r in right_records() if r["task"] == "dlm-cpp" and not r["error"]]
    out = score(tmp_path, cpp, env={**os.environ, "PATH": str(empty)})
    assert out.returncode == 2 and "g++ not found" in out.stderr, out.stderr
    # No RDKit: the same interpreter without its site-packages (python -S).
    smiles = [r for r in right_records() if r["task"] == "dlm-smiles" and not r["error"]]
    out = score(tmp_path, smiles, python=(sys.executable, "-S"))
    assert out.returncode == 2, out.stdout + out.stderr
    assert "RDKit is not importable" in out.stderr and "eval/setup-tools.sh" in out.stderr
