//! Writes the fuzz targets' seed corpora (`fuzz/run.sh` calls it) from the repository's own
//! test inputs: the shipped grammars and the hostile battery's files, JSONSchemaBench and test
//! suite schemas, canvas lines cut from real documents, token canvas lines of the default
//! model's ids, the default tokenizer, and the tiny checkpoints.
//!
//! `cargo run --release --example fuzz_seeds -- DIR [--without-hostile]`: the hostile
//! battery's files include inputs that are slow by design (refused after seconds); CI's short
//! pass leaves them out.

#[path = "../tests/corpus/mod.rs"]
mod corpus;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

fn write(dir: &Path, target: &str, name: &str, bytes: &[u8]) {
    let d = dir.join(target);
    std::fs::create_dir_all(&d).expect("corpus folder");
    std::fs::write(d.join(name), bytes).expect("seed file");
}

/// Every file under `root` (recursively).
fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn main() {
    let dir = PathBuf::from(std::env::args().nth(1).expect("usage: fuzz_seeds DIR"));
    let hostile_files = !std::env::args().any(|a| a == "--without-hostile");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let hostile = |sub: &str| {
        if hostile_files {
            files(&root.join("tests/hostile").join(sub))
        } else {
            Vec::new()
        }
    };
    let mut rng = corpus::Rng(5);

    for (i, p) in files(&root.join("grammars"))
        .into_iter()
        .chain(hostile("lark"))
        .filter(|p| p.extension().is_some_and(|e| e == "lark"))
        .enumerate()
    {
        let text = std::fs::read(&p).expect("grammar file");
        if text.len() <= 64 << 10 {
            write(&dir, "lark_grammar", &format!("g{i}"), &text);
        }
    }

    let schemas = corpus::jsonschemabench();
    let suite = corpus::test_suite();
    for (i, case) in schemas
        .iter()
        .step_by(8)
        .chain(suite.iter().step_by(4))
        .enumerate()
    {
        if case.schema.len() <= 16 << 10 {
            write(
                &dir,
                "json_schema",
                &format!("s{i}"),
                case.schema.as_bytes(),
            );
        }
    }
    for (i, p) in hostile("schema")
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .enumerate()
    {
        let text = std::fs::read(&p).expect("schema file");
        if text.len() <= 64 << 10 {
            write(&dir, "json_schema", &format!("h{i}"), &text);
        }
    }

    // Canvas lines and checker canvases: documents cut at random places.
    let documents: Vec<(u8, Vec<u8>)> = schemas
        .iter()
        .flat_map(|s| {
            s.instances
                .iter()
                .map(|i| (0u8, i.text.clone().into_bytes()))
        })
        .step_by(20)
        .take(150)
        .chain(
            corpus::humaneval_cpp()
                .into_iter()
                .step_by(8)
                .map(|t| (1u8, format!("{}{}", t.declaration, t.solution).into_bytes())),
        )
        .chain(
            corpus::moses()
                .into_iter()
                .step_by(5000)
                .take(40)
                .map(|s| (2u8, s.into_bytes())),
        )
        .collect();
    let shipped: Vec<&str> = lacuna::grammar::spec::SHIPPED
        .iter()
        .map(|(n, _)| *n)
        .collect();
    for (i, (kind, text)) in documents.iter().enumerate() {
        if text.is_empty() {
            continue;
        }
        let mut cuts: Vec<usize> = (0..2 * (1 + rng.below(3)))
            .map(|_| rng.below(text.len() + 1))
            .collect();
        cuts.sort_unstable();
        let holey = corpus::cut(text, &cuts);
        let mut cells: Vec<Value> = Vec::new();
        for (k, chunk) in holey.chunks.iter().enumerate() {
            if k > 0 {
                cells.push(Value::Null);
            }
            cells.push(json!(String::from_utf8_lossy(chunk)));
        }
        let line = json!({"id": i, "canvas": cells});
        write(
            &dir,
            "canvas_line",
            &format!("c{i}"),
            line.to_string().as_bytes(),
        );
        let name = ["json", "cpp", "smiles"][*kind as usize];
        let pick = shipped.iter().position(|n| *n == name).unwrap_or(0) as u8;
        let mut bytes = vec![pick];
        bytes.extend(holey.chunks.join(&0xffu8));
        write(&dir, "checker_canvas", &format!("c{i}"), &bytes);
    }

    // Token canvas lines over the default tokenizer's ids; the tokenizer itself.
    let tokenizer = std::fs::read(root.join("models/default/tokenizer.json")).expect("tokenizer");
    let vocab =
        lacuna::vocab::Vocabulary::from_tokenizer_json(&tokenizer, &[], "default").expect("vocab");
    for i in 0..60 {
        let len = 1 + rng.below(24);
        let tokens: Vec<Value> = (0..len)
            .map(|_| match rng.below(3) {
                0 => Value::Null,
                _ => json!(rng.below(vocab.len())),
            })
            .collect();
        let line = json!({"id": i, "tokens": tokens});
        write(
            &dir,
            "token_canvas_line",
            &format!("t{i}"),
            line.to_string().as_bytes(),
        );
    }
    write(&dir, "tokenizer_json", "default", &tokenizer);
    for (i, p) in hostile("tokenizer").into_iter().enumerate() {
        write(
            &dir,
            "tokenizer_json",
            &format!("h{i}"),
            &std::fs::read(&p).expect("file"),
        );
    }

    // The tiny checkpoints' headers with the first bytes of their data: the loader's header,
    // names, dtypes and shapes are what is fuzzed, and short inputs keep executions fast.
    for name in ["llada-tiny", "dream-tiny"] {
        let bytes = std::fs::read(root.join("tests/data").join(name).join("model.safetensors"))
            .expect("fixture");
        let n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) as usize;
        write(
            &dir,
            "checkpoint",
            name,
            &bytes[..(8 + n + 256).min(bytes.len())],
        );
    }
    eprintln!("seed corpora written to {}", dir.display());
}
