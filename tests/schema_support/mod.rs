//! Shared support for the JSON Schema tests: the corpora in `tests/data` (gzipped copies of the
//! JSON Schema Test Suite and of JSONSchemaBench's maskbench data, see tests/data/README.md).

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

/// The draft 2020-12 test suite: file name → list of groups (`schema`, `tests`).
pub fn test_suite() -> serde_json::Map<String, Value> {
    let text = gunzip(include_bytes!(
        "../data/json-schema-test-suite-draft2020-12.json.gz"
    ));
    match serde_json::from_str(&text).expect("the suite is JSON") {
        Value::Object(m) => m,
        _ => panic!("the suite is an object"),
    }
}

/// One maskbench entry: file name, schema, and its instances with their expected validity.
pub struct MaskbenchEntry {
    pub name: String,
    pub schema: Value,
    pub tests: Vec<(Value, bool)>,
}

pub fn maskbench() -> Vec<MaskbenchEntry> {
    let text = gunzip(include_bytes!("../data/maskbench.jsonl.gz"));
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("a maskbench line is JSON");
            MaskbenchEntry {
                name: v["name"].as_str().unwrap().to_string(),
                schema: v["schema"].clone(),
                tests: v["tests"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| (t["data"].clone(), t["valid"].as_bool().unwrap()))
                    .collect(),
            }
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

/// A small deterministic generator (SplitMix64) for sampling and cutting holes.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
