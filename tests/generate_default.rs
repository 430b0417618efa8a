//! `lacuna generate` with the embedded default model, as a user runs it on a fresh clone:
//! every constrained output is accepted by an independent oracle — purr for SMILES,
//! serde_json and the `jsonschema` crate for schema-conditioned JSON, tree-sitter-cpp for C++.

mod schema_support;

use std::process::Command;

use lacuna::diffusion::tasks;
use lacuna::grammar::schema::{compile, SchemaOptions};
use serde_json::Value;

/// Runs `lacuna generate ARGS --json` and returns its outputs.
fn generate(args: &[&str]) -> Vec<Value> {
    let run = Command::new(env!("CARGO_BIN_EXE_lacuna"))
        .arg("generate")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn text(v: &Value) -> &str {
    v["text"].as_str().unwrap()
}

#[test]
fn smiles_outputs_are_read_by_purr() {
    let outputs = generate(&["--grammar", "smiles", "-n", "8", "--seed", "11"]);
    assert_eq!(outputs.len(), 8);
    for o in &outputs {
        assert_eq!(o["constrained"], true);
        assert_eq!(o["valid"], true, "{o}");
        let mut builder = purr::graph::Builder::new();
        let read = purr::read::read(text(o), &mut builder, None);
        assert!(read.is_ok(), "purr refuses {:?}: {read:?}", text(o));
    }
}

#[test]
fn schema_outputs_follow_their_schema() {
    // The first three JSONSchemaBench schemas of the kind the model was trained on.
    let chosen: Vec<Value> = schema_support::maskbench()
        .into_iter()
        .map(|e| e.schema)
        .filter(|s| {
            tasks::json_prompt(s).len() <= tasks::MAX_JSON_PROMPT
                && compile(s, &SchemaOptions::default()).is_ok()
        })
        .take(3)
        .collect();
    assert_eq!(chosen.len(), 3);
    let dir = std::env::temp_dir().join(format!("lacuna-gen-default-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, schema) in chosen.iter().enumerate() {
        let path = dir.join(format!("schema{i}.json"));
        std::fs::write(&path, schema.to_string()).unwrap();
        let spec = format!("schema:{}", path.display());
        let validator = schema_support::oracle(schema).expect("the oracle compiles the schema");
        for o in generate(&["--grammar", &spec, "-n", "2"]) {
            let value: Value = serde_json::from_str(text(&o)).expect("serde_json parses it");
            assert!(validator.is_valid(&value), "{} breaks {schema}", text(&o));
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn cpp_output_parses_with_tree_sitter() {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_cpp::LANGUAGE.into())
        .unwrap();
    // The model's task: a function's body after its declaration, which the grammar reads too.
    let declaration = "#include <vector>\nusing namespace std;\nint count_even(vector<int> v) {\n";
    for o in generate(&[
        "--grammar",
        "cpp",
        "--prefix",
        declaration,
        "-n",
        "1",
        "--seed",
        "3",
    ]) {
        assert!(text(&o).starts_with(declaration), "{}", text(&o));
        assert_eq!(o["valid"], true, "{o}");
        let tree = parser.parse(text(&o), None).unwrap();
        assert!(!tree.root_node().has_error(), "{}", text(&o));
    }
}

#[test]
fn a_prefix_starts_every_output_in_every_mode() {
    for mode in ["mask-lazy", "mask", "reject"] {
        for o in generate(&[
            "--grammar",
            "smiles",
            "--prefix",
            "CC(",
            "--constraint",
            mode,
            "-n",
            "2",
        ]) {
            assert!(text(&o).starts_with("CC("), "{mode}: {o}");
            assert_eq!(o["valid"], true, "{mode}: {o}");
            let mut builder = purr::graph::Builder::new();
            let read = purr::read::read(text(&o), &mut builder, None);
            assert!(
                read.is_ok(),
                "{mode}: purr refuses {:?}: {read:?}",
                text(&o)
            );
        }
    }
}

#[test]
fn a_prefix_no_program_starts_with_is_named() {
    let run = Command::new(env!("CARGO_BIN_EXE_lacuna"))
        .args(["generate", "--grammar", "cpp", "--prefix", "int f() }"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(
        stderr.contains("--prefix") && stderr.contains("int f() }"),
        "{stderr}"
    );
}

#[test]
fn unconstrained_outputs_are_judged_not_forced() {
    let outputs = generate(&["--grammar", "smiles", "-n", "4", "--unconstrained"]);
    assert_eq!(outputs.len(), 4);
    for o in &outputs {
        assert_eq!(o["constrained"], false);
        assert_eq!(o["stats"]["checks"], 0);
        // The grammar still judges the output: `valid` says whether it is a SMILES.
        let mut checker = lacuna::checker::Checker::from_spec("smiles").unwrap();
        assert_eq!(o["valid"], checker.accepts(text(o).as_bytes()));
    }
}

#[test]
fn missing_prompt_or_model_is_named() {
    let dir = std::env::temp_dir().join(format!("lacuna-gen-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lark = dir.join("list.lark");
    std::fs::write(&lark, "start: \"[\" [D (\",\" D)*] \"]\"\nD: /[0-9]+/\n").unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_lacuna"))
            .arg("generate")
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8(out.stderr).unwrap()
    };
    // A user's grammar is no task of the default model: it needs a prompt.
    let err = run(&["--grammar", lark.to_str().unwrap()]);
    assert!(err.contains("--prompt is needed"), "{err}");
    let missing = dir.join("no-such-model");
    let err = run(&["--model", missing.to_str().unwrap(), "--prompt", "x"]);
    assert!(err.contains("no-such-model"), "{err}");
    let err = run(&["--grammar", "schema:/no/such/schema.json"]);
    assert!(err.contains("/no/such/schema.json"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn lengths_past_the_context_are_named_not_allocated() {
    for length in ["100000", "18446744073709551615"] {
        let out = Command::new(env!("CARGO_BIN_EXE_lacuna"))
            .args(["generate", "--grammar", "smiles", "--length", length])
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("context of 384 positions"), "{err}");
        assert!(err.contains(&format!("--length {length}")), "{err}");
    }
}

#[test]
fn records_say_how_the_output_was_made() {
    for mode in ["mask", "mask-lazy", "reject"] {
        for o in generate(&["--grammar", "smiles", "-n", "2", "--constraint", mode]) {
            assert_eq!(o["mode"], mode, "{o}");
            let st = &o["stats"];
            let (masks, checks) = (
                st["masks"].as_u64().unwrap(),
                st["checks"].as_u64().unwrap(),
            );
            let refused = st["rejections"].as_u64().unwrap();
            match mode {
                // Every position's token is drawn from its mask.
                "mask" => assert!(masks > 0, "{o}"),
                // The model's first choices are checked; a refused one is drawn again from
                // its position's mask (a good model may never be refused).
                "mask-lazy" => assert!(checks > 0 && (refused == 0 || masks > 0), "{o}"),
                // Proposals are checked; no mask is computed.
                _ => assert!(checks > 0 && masks == 0, "{o}"),
            }
            if mode != "reject" {
                // Under masks the model writes every byte.
                assert_eq!(st["fallback"], false, "{o}");
                assert_eq!(st["completion_bytes"], 0, "{o}");
            }
        }
    }
    for o in generate(&["--grammar", "smiles", "-n", "1", "--unconstrained"]) {
        assert_eq!(o["mode"], "unconstrained", "{o}");
    }
}
