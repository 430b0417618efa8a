//! Shared support for the JSON Schema tests: the corpora in `tests/data` (the packed JSON
//! Schema Test Suite and JSONSchemaBench's maskbench data, see tests/data/README.md), read as
//! `serde_json::Value`s; `tests/corpus` reads the same files keeping every instance's spelling.

#![allow(dead_code)]

use std::io::Read;

use serde_json::Value;

fn gunzip(bytes: &[u8]) -> String {
    let mut s = String::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_string(&mut s)
        .expect("the corpus is gzipped UTF-8");
    s
}

/// The optional files of the suite that the compiler's tests read: regexes, big numbers, and
/// the formats lacuna enforces.
const OPTIONAL: &[&str] = &[
    "optional/ecmascript-regex.json",
    "optional/non-bmp-regex.json",
    "optional/bignum.json",
    "optional/float-overflow.json",
    "optional/format/date-time.json",
    "optional/format/date.json",
    "optional/format/duration.json",
    "optional/format/email.json",
    "optional/format/hostname.json",
    "optional/format/ipv4.json",
    "optional/format/ipv6.json",
    "optional/format/json-pointer.json",
    "optional/format/relative-json-pointer.json",
    "optional/format/time.json",
    "optional/format/uri.json",
    "optional/format/uri-reference.json",
    "optional/format/uri-template.json",
    "optional/format/uuid.json",
];

/// The lines of a packed corpus (see tests/data/README.md): `{"name": FILE, "content": JSON}`.
fn packed(gz: &[u8]) -> Vec<(String, Value)> {
    gunzip(gz)
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("a packed line is JSON");
            let name = v["name"].as_str().expect("a file name").to_string();
            (name, v["content"].take())
        })
        .collect()
}

/// The draft 2020-12 test suite: file name → list of groups (`schema`, `tests`), for the main
/// files and the optional ones in [`OPTIONAL`].
pub fn test_suite() -> serde_json::Map<String, Value> {
    packed(include_bytes!(
        "../data/json-schema-test-suite-draft2020-12.jsonl.gz"
    ))
    .into_iter()
    .filter(|(name, _)| !name.starts_with("optional/") || OPTIONAL.contains(&name.as_str()))
    .collect()
}

/// One maskbench entry: file name, schema, and its instances with their expected validity.
pub struct MaskbenchEntry {
    pub name: String,
    pub schema: Value,
    pub tests: Vec<(Value, bool)>,
}

/// The 2,367 schemas of JSONSchemaBench's maskbench data, in file-name order.
pub fn maskbench() -> Vec<MaskbenchEntry> {
    packed(include_bytes!("../data/jsonschemabench.jsonl.gz"))
        .into_iter()
        .map(|(name, content)| MaskbenchEntry {
            name,
            schema: content["schema"].clone(),
            tests: content["tests"]
                .as_array()
                .expect("a bench case has tests")
                .iter()
                .map(|t| (t["data"].clone(), t["valid"].as_bool().unwrap()))
                .collect(),
        })
        .collect()
}

/// The `jsonschema` crate as the oracle, with `format` asserted (draft 2020-12 makes it an
/// annotation by default; lacuna enforces the formats it supports).
pub fn oracle(schema: &Value) -> Option<jsonschema::Validator> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .ok()
}
