//! The `lacuna` binary as a user runs it: `check` over canvas JSON lines (verdicts, completions,
//! per-line errors, stats) and `grammar stats`.

#[path = "common/bin.rs"]
mod bin;
use bin::lines;

/// Runs the binary; returns stdout, stderr and whether it succeeded.
fn lacuna(args: &[&str], stdin: &str) -> (String, String, bool) {
    let (stdout, stderr, code) = bin::lacuna(args, stdin);
    (stdout, stderr, code == 0)
}

#[test]
fn check_reads_canvases_and_writes_verdicts() {
    let input = concat!(
        r#"{"id": "a1", "canvas": ["{\"na", "me\": ", null, null, ", \"age\": 3", null, {"eos": true}, {"eos": true}]}"#,
        "\n",
        r#"{"id": "a2", "canvas": ["{\"a\": ", "}", {"eos": true}]}"#,
        "\n",
        r#"{"id": 3, "canvas": ["[1, ", null, "]"]}"#,
        "\n",
    );
    let (stdout, _, ok) = lacuna(&["check", "--grammar", "json", "--complete"], input);
    assert!(ok);
    let v = lines(&stdout);
    assert_eq!(v.len(), 3);
    assert_eq!(v[0]["id"], "a1");
    assert_eq!(v[0]["verdict"], "completable");
    let completion = v[0]["completion"].as_str().unwrap();
    assert!(completion.starts_with("{\"name\": ") && completion.contains(", \"age\": 3"));
    serde_json::from_str::<serde_json::Value>(completion).expect("the completion is JSON");
    assert_eq!(v[1]["verdict"], "not_completable");
    assert!(v[1].get("completion").is_none());
    assert_eq!(v[2]["id"], 3);
    assert_eq!(v[2]["verdict"], "completable");
    assert!(v[2]["dfa_states"].as_u64().unwrap() > 0);
}

#[test]
fn bad_lines_get_errors_and_the_run_goes_on() {
    let input = concat!(
        "{not json\n",
        r#"{"id": "x", "grammar": "nosuchgrammar", "canvas": ["1"]}"#,
        "\n",
        r#"{"id": "y", "canvas": ["1", 5]}"#,
        "\n",
        r#"{"id": "z", "canvas": ["[1]"]}"#,
        "\n",
    );
    let (stdout, _, ok) = lacuna(&["check", "--grammar", "json"], input);
    assert!(!ok, "errors make the exit status non-zero");
    let v = lines(&stdout);
    assert_eq!(v.len(), 4);
    assert_eq!(v[0]["line"], 1);
    assert!(v[0]["error"].as_str().unwrap().contains("JSON"));
    assert!(v[1]["error"].as_str().unwrap().contains("nosuchgrammar"));
    assert!(v[2]["error"].as_str().unwrap().contains("canvas[1]"));
    assert_eq!(v[3]["verdict"], "completable");
}

#[test]
fn stats_summarize_the_run() {
    let input = r#"{"id": 1, "canvas": ["[", null, "]"]}"#.to_string() + "\n";
    let (_, stderr, ok) = lacuna(&["check", "--grammar", "json", "--stats"], &input);
    assert!(ok);
    assert!(stderr.contains("median"), "{stderr}");
    assert!(stderr.contains("completable 1"), "{stderr}");
}

#[test]
fn grammar_stats_reports_sizes_as_json() {
    let (stdout, _, ok) = lacuna(&["grammar", "stats", "json", "--json"], "");
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert!(v["raw"]["productions"].as_u64().unwrap() > 5);
    assert!(v["normalized"]["nonterminals"].as_u64().unwrap() > 0);
    let (_, stderr, ok) = lacuna(&["grammar", "stats", "nosuch"], "");
    assert!(!ok);
    assert!(stderr.contains("unknown grammar spec"), "{stderr}");
}

#[test]
fn schema_specs_and_lenient() {
    let dir = std::env::temp_dir().join(format!("lacuna-cli-schema-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let strict = dir.join("person.json");
    std::fs::write(
        &strict,
        r#"{"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}}, "required": ["name"]}"#,
    )
    .unwrap();
    let loose = dir.join("tags.json");
    std::fs::write(
        &loose,
        r#"{"type": "array", "items": {"type": "string"}, "uniqueItems": true}"#,
    )
    .unwrap();
    let spec = format!("schema:{}", strict.display());
    let input = concat!(
        r#"{"id": 1, "canvas": ["{\"name\": \"A", null, ", \"age\": 3}"]}"#,
        "\n",
        r#"{"id": 2, "canvas": ["{\"name\": \"A", null, ", \"age\": -3}"]}"#,
        "\n",
        r#"{"id": 3, "canvas": ["{\"age\": 3}", {"eos": true}]}"#,
        "\n",
    );
    let (out, _, ok) = lacuna(&["check", "--grammar", &spec, "--complete"], input);
    assert!(ok);
    let v = lines(&out);
    assert_eq!(v[0]["verdict"], "completable");
    let completion: serde_json::Value =
        serde_json::from_str(v[0]["completion"].as_str().unwrap()).unwrap();
    assert_eq!(completion["age"], 3);
    assert_eq!(v[1]["verdict"], "not_completable");
    assert_eq!(v[2]["verdict"], "not_completable");
    // +fence works on schemas too.
    let fenced = format!("{spec}+fence");
    let (out, _, ok) = lacuna(
        &["check", "--grammar", &fenced],
        "{\"id\": 4, \"canvas\": [\"{\\\"name\\\": \\\"x\\\"}\\n```\"]}\n",
    );
    assert!(ok);
    assert_eq!(lines(&out)[0]["verdict"], "completable");
    // A schema with a keyword lacuna cannot enforce: an error line in strict mode, a warning
    // (and verdicts) in lenient mode.
    let loose_spec = format!("schema:{}", loose.display());
    let line = "{\"id\": 5, \"canvas\": [\"[\\\"a\\\", \\\"a\\\"]\"]}\n";
    let (out, _, ok) = lacuna(&["check", "--grammar", &loose_spec], line);
    assert!(!ok);
    let v = lines(&out);
    assert!(
        v[0]["error"].as_str().unwrap().contains("uniqueItems"),
        "{out}"
    );
    let (out, err, ok) = lacuna(&["check", "--lenient", "--grammar", &loose_spec], line);
    assert!(ok);
    assert_eq!(lines(&out)[0]["verdict"], "completable");
    assert!(
        err.contains("warning") && err.contains("/uniqueItems"),
        "{err}"
    );
    // grammar stats / show take --lenient too.
    let (_, err, ok) = lacuna(&["grammar", "stats", &loose_spec], "");
    assert!(!ok && err.contains("uniqueItems"), "{err}");
    let (out, err, ok) = lacuna(&["grammar", "stats", "--lenient", &loose_spec], "");
    assert!(ok && out.contains("productions") && err.contains("/uniqueItems"));
    let (out, _, ok) = lacuna(&["grammar", "show", &spec], "");
    assert!(ok && out.contains("KEY"));
    std::fs::remove_dir_all(&dir).unwrap();
}
