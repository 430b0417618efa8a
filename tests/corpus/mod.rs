//! Shared test support: the real corpora in `tests/data` (JSONSchemaBench and the JSON Schema
//! Test Suite, read with every instance's original spelling; MOSES SMILES), hole cutting, and
//! a seeded generator.

#![allow(dead_code)]

pub mod cpp_functions;

use std::io::{BufRead, BufReader, Read};

use flate2::read::GzDecoder;
use lacuna::canvas::HoleyText;
use serde::Deserialize;
use serde_json::value::RawValue;

/// One instance of a schema: its exact text and whether the source says it is valid.
#[derive(Debug, Clone)]
pub struct Instance {
    pub text: String,
    pub valid: bool,
}

/// A schema with its instances, named after its source file (and group, for the test suite).
#[derive(Debug, Clone)]
pub struct SchemaCase {
    pub name: String,
    pub schema: String,
    pub instances: Vec<Instance>,
}

#[derive(Deserialize)]
struct Line<'a> {
    name: String,
    #[serde(borrow)]
    content: &'a RawValue,
}

#[derive(Deserialize)]
struct RawTest<'a> {
    #[serde(borrow)]
    data: &'a RawValue,
    valid: bool,
}

#[derive(Deserialize)]
struct RawCase<'a> {
    #[serde(default)]
    description: String,
    #[serde(borrow)]
    schema: &'a RawValue,
    #[serde(borrow)]
    tests: Vec<RawTest<'a>>,
}

fn lines(gz: &[u8]) -> Vec<String> {
    BufReader::new(GzDecoder::new(gz))
        .lines()
        .map(|l| l.expect("test data decompresses"))
        .collect()
}

fn case(name: String, raw: RawCase) -> SchemaCase {
    SchemaCase {
        name,
        schema: raw.schema.get().to_string(),
        instances: raw
            .tests
            .iter()
            .map(|t| Instance {
                text: t.data.get().to_string(),
                valid: t.valid,
            })
            .collect(),
    }
}

/// The first 200,000 SMILES of MOSES (the file's header line dropped).
pub fn moses() -> Vec<String> {
    let mut all = lines(include_bytes!("../data/moses_train_head200k.csv.gz"));
    assert_eq!(all.first().map(String::as_str), Some("SMILES"));
    all.remove(0);
    all
}

/// The 2,367 schemas of JSONSchemaBench (`maskbench/data`), in file-name order.
pub fn jsonschemabench() -> Vec<SchemaCase> {
    lines(include_bytes!("../data/jsonschemabench.jsonl.gz"))
        .iter()
        .map(|l| {
            let line: Line = serde_json::from_str(l).expect("a packed file");
            let raw: RawCase = serde_json::from_str(line.content.get()).expect("a bench case");
            case(line.name, raw)
        })
        .collect()
}

/// The test groups of the JSON Schema Test Suite, draft 2020-12 (`optional/` included), named
/// `FILE#INDEX: DESCRIPTION`.
pub fn test_suite() -> Vec<SchemaCase> {
    let mut out = vec![];
    for l in lines(include_bytes!(
        "../data/json-schema-test-suite-draft2020-12.jsonl.gz"
    )) {
        let line: Line = serde_json::from_str(&l).expect("a packed file");
        let groups: Vec<RawCase> = serde_json::from_str(line.content.get()).expect("groups");
        for (i, g) in groups.into_iter().enumerate() {
            let name = format!("{}#{i}: {}", line.name, g.description);
            out.push(case(name, g));
        }
    }
    out
}

/// Cuts holes into `text` at byte cut points: with the cuts sorted, the bytes between cut 2i
/// and cut 2i+1 are masked (an odd count masks through the end).
pub fn cut(text: &[u8], cuts: &[usize]) -> HoleyText {
    let mut cuts = cuts.to_vec();
    cuts.sort_unstable();
    if cuts.len() % 2 == 1 {
        cuts.push(text.len());
    }
    let mut chunks = vec![];
    let mut pos = 0;
    for pair in cuts.chunks(2) {
        chunks.push(text[pos..pair[0]].to_vec());
        pos = pair[1];
    }
    chunks.push(text[pos..].to_vec());
    HoleyText { chunks }
}

/// Whether `text` contains `chunks` in order, without overlap.
pub fn contains_in_order(text: &[u8], chunks: &[Vec<u8>]) -> bool {
    let mut pos = 0;
    for c in chunks.iter().filter(|c| !c.is_empty()) {
        match text[pos..].windows(c.len()).position(|w| w == &c[..]) {
            Some(i) => pos += i + c.len(),
            None => return false,
        }
    }
    true
}

/// A small deterministic generator (SplitMix64), so corpus tests draw the same cases on every
/// run without a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// One HumanEval-X C++ task (`tests/data/humaneval_cpp.jsonl.gz`), with the fields the tests
/// use.
pub struct Task {
    pub id: String,
    pub prompt: String,
    pub declaration: String,
    pub solution: String,
    pub test: String,
}

/// The 164 HumanEval-X C++ tasks, in order.
pub fn humaneval_cpp() -> Vec<Task> {
    let gz = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/humaneval_cpp.jsonl.gz"
    ))
    .unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .unwrap();
    text.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let field = |k: &str| v[k].as_str().unwrap().to_string();
            Task {
                id: field("task_id"),
                prompt: field("prompt"),
                declaration: field("declaration"),
                solution: field("canonical_solution"),
                test: field("test"),
            }
        })
        .collect()
}

/// Whether `g++ -std=c++17 -fsyntax-only` accepts `src` as a C++17 translation unit (syntax
/// and semantics, no linking); an error when g++ cannot be run. The one way the tests, the
/// corpus builder and the evaluation ask g++.
pub fn gpp_accepts(src: &str) -> std::io::Result<bool> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("g++")
        .args(["-std=c++17", "-fsyntax-only", "-x", "c++", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    // Written, then closed (dropped) before the wait, or g++ would wait for more.
    let wrote = child.stdin.take().map(|mut i| i.write_all(src.as_bytes()));
    let status = child.wait()?;
    Ok(matches!(wrote, Some(Ok(()))) && status.success())
}

/// [`gpp_accepts`] for each source, in order, on as many threads as there are cores; an error
/// when g++ cannot be run.
pub fn gpp_verdicts(sources: &[String]) -> std::io::Result<Vec<bool>> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunk = sources.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let parts: Vec<_> = sources
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(|p| gpp_accepts(p)).collect::<Vec<_>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().expect("a g++ thread"))
            .collect()
    })
}
