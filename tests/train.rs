//! `lacuna train` on a small corpus of real SMILES and JSON: the loss falls, a run resumed
//! from a checkpoint follows the uninterrupted run, the output folder is a LLaDA
//! checkpoint that `lacuna generate` runs, and bad input is named.

mod corpus;

use std::path::{Path, PathBuf};
use std::process::Command;

use lacuna::train::{train, TrainOptions};

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lacuna-train-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// 300 MOSES SMILES and a few JSON answers, as a corpus file in `dir`.
fn small_corpus(dir: &Path) -> PathBuf {
    let mut lines = Vec::new();
    for s in corpus::moses().into_iter().take(300) {
        lines.push(serde_json::json!({"task": "smiles", "prompt": "SMILES:\n", "answer": s}));
    }
    for (i, name) in ["ann", "bob", "cy", "dee", "eve"].iter().enumerate() {
        let answer = format!("{{\"name\":\"{name}\",\"age\":{}}}", 20 + i);
        lines.push(serde_json::json!({"task": "json", "prompt": "JSON:\n", "answer": answer}));
    }
    let path = dir.join("corpus.jsonl");
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&path, text.join("\n")).unwrap();
    path
}

fn tiny(corpus: PathBuf, out: PathBuf, steps: usize) -> TrainOptions {
    let mut o = TrainOptions::new(corpus, out);
    o.steps = steps;
    o.batch_tokens = 512;
    o.vocab_size = 320;
    o.d_model = 32;
    o.n_layers = 1;
    o.n_heads = 2;
    o.mlp_hidden = 64;
    o.max_len = 64;
    o.warmup = 5;
    o.lr = 1e-2;
    o.checkpoint_every = 10;
    o.progress = false;
    o
}

fn losses(dir: &Path) -> Vec<f64> {
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("train_state.json")).unwrap())
            .unwrap();
    state["losses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

#[test]
fn loss_falls_and_resuming_repeats_the_run() {
    let dir = scratch("resume");
    let corpus = small_corpus(&dir);
    let straight = tiny(corpus.clone(), dir.join("straight"), 60);
    let report = train(&straight).unwrap();
    assert_eq!(report.steps, 60);
    let l = losses(&straight.out);
    let head: f64 = l[..10].iter().sum::<f64>() / 10.0;
    let tail: f64 = l[50..].iter().sum::<f64>() / 10.0;
    assert!(tail < 0.7 * head, "loss {head:.3} → {tail:.3}");

    // Stop at step 30, then go on to 60: the same batches, masks and updates.
    let mut split = tiny(corpus, dir.join("split"), 60);
    split.stop_at = Some(30);
    assert_eq!(train(&split).unwrap().steps, 30);
    // Asked for other batches and task weights, the resume keeps the first run's.
    let resumed = TrainOptions {
        stop_at: None,
        batch_tokens: 64,
        task_weights: [("json".to_string(), 0.0)].into(),
        ..split
    };
    assert_eq!(train(&resumed).unwrap().steps, 60);
    let r = losses(&resumed.out);
    assert_eq!(r.len(), 60);
    // Not bit for bit: candle's backward pass sums gradients in an order that varies from
    // run to run. A resume that lost the weights would restart near the first loss.
    for (i, (a, b)) in l.iter().zip(&r).enumerate() {
        assert!((a - b).abs() < 0.05 * a.abs(), "step {i}: {a} vs {b}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_resumed_run_keeps_its_first_shape_across_resumes() {
    let dir = scratch("shape");
    let corpus = small_corpus(&dir);
    let mut first = tiny(corpus, dir.join("model"), 12);
    first.stop_at = Some(4);
    assert_eq!(train(&first).unwrap().steps, 4);
    // Later runs ask for another shape and seed: the checkpoint's own are kept, every time.
    let mut other = TrainOptions {
        d_model: 64,
        n_heads: 4,
        seed: 9,
        stop_at: Some(8),
        ..first.clone()
    };
    assert_eq!(train(&other).unwrap().steps, 8);
    other.stop_at = None;
    let report = train(&other).unwrap();
    assert_eq!(report.steps, 12);
    assert_eq!(report.parameters, {
        let straight = TrainOptions {
            out: dir.join("straight"),
            stop_at: Some(1),
            ..first
        };
        train(&straight).unwrap().parameters
    });
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_resume_on_another_corpus_is_named_and_line_endings_do_not_count() {
    let dir = scratch("other-corpus");
    let corpus = small_corpus(&dir);
    let mut first = tiny(corpus.clone(), dir.join("model"), 6);
    first.stop_at = Some(2);
    assert_eq!(train(&first).unwrap().steps, 2);

    // One answer changed: the resume is refused, naming both corpora and the way out.
    let text = std::fs::read_to_string(&corpus).unwrap();
    let other = dir.join("other.jsonl");
    let changed = text.replacen("ann", "anne", 1);
    assert_ne!(changed, text);
    std::fs::write(&other, changed).unwrap();
    let resumed = TrainOptions {
        corpus: other.clone(),
        stop_at: Some(4),
        ..first.clone()
    };
    let e = train(&resumed).unwrap_err().to_string();
    assert!(
        e.contains("other.jsonl") && e.contains("not the corpus") && e.contains("--init-from"),
        "{e}"
    );
    assert_eq!(losses(&first.out).len(), 2, "the refused resume trained");

    // The same lines with CRLF endings and a blank line are the same corpus.
    let crlf = dir.join("crlf.jsonl");
    std::fs::write(&crlf, format!("{}\r\n\r\n", text.replace('\n', "\r\n"))).unwrap();
    let resumed = TrainOptions {
        corpus: crlf,
        stop_at: None,
        ..first
    };
    assert_eq!(train(&resumed).unwrap().steps, 6);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_run_started_from_a_model_folder_goes_on_from_its_weights() {
    let dir = scratch("init");
    let corpus = small_corpus(&dir);
    let source = tiny(corpus.clone(), dir.join("source"), 60);
    train(&source).unwrap();
    let trained = losses(&source.out);
    let fresh = trained[..5].iter().sum::<f64>() / 5.0;
    let end = trained[50..].iter().sum::<f64>() / 10.0;

    // A new run (new optimizer, new schedule) from the trained weights: its first losses are
    // those of the trained model, not of fresh weights.
    let mut next = tiny(corpus.clone(), dir.join("next"), 5);
    next.init_from = Some(source.out.clone());
    next.lr = 1e-6;
    next.warmup = 1;
    train(&next).unwrap();
    let started = losses(&next.out).iter().sum::<f64>() / 5.0;
    assert!(
        (started - end).abs() < 0.5 * (fresh - end),
        "fresh {fresh:.3}, trained {end:.3}, continued from {started:.3}"
    );
    // The starting model's tokenizer is kept byte for byte (its ids are what the weights know).
    assert_eq!(
        std::fs::read(source.out.join("tokenizer.json")).unwrap(),
        std::fs::read(next.out.join("tokenizer.json")).unwrap()
    );

    // Another shape is named field by field.
    let mut wider = tiny(corpus, dir.join("wider"), 5);
    wider.init_from = Some(source.out.clone());
    wider.d_model = 64;
    let e = train(&wider).unwrap_err().to_string();
    assert!(
        e.contains("--init-from") && e.contains("`d_model` is 32 there, 64 here"),
        "{e}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn task_weights_that_cannot_train_are_named() {
    let dir = scratch("weights");
    let corpus = small_corpus(&dir);
    for (weights, why) in [
        (vec![("rust", 1.0)], "no task `rust`"),
        (vec![("json", -1.0)], "not a number ≥ 0"),
        (vec![("json", f64::NAN)], "not a number ≥ 0"),
        (
            vec![("json", 0.0), ("smiles", 0.0)],
            "every task has weight 0",
        ),
    ] {
        let mut o = tiny(corpus.clone(), dir.join("bad"), 2);
        o.task_weights = weights.iter().map(|(k, w)| (k.to_string(), *w)).collect();
        let e = train(&o).unwrap_err().to_string();
        assert!(e.starts_with("--task-weights") && e.contains(why), "{e}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_trained_folder_is_a_llada_checkpoint_that_generates() {
    let dir = scratch("generate");
    let corpus = small_corpus(&dir);
    let out = dir.join("model");
    train(&tiny(corpus, out.clone(), 20)).unwrap();
    let model =
        lacuna::diffusion::load(&out, candle_core::DType::F32, &candle_core::Device::Cpu).unwrap();
    assert_eq!(model.family(), lacuna::diffusion::Family::LLaDA);
    let run = Command::new(env!("CARGO_BIN_EXE_lacuna"))
        .args([
            "generate",
            "--model",
            out.to_str().unwrap(),
            "--grammar",
            "smiles",
        ])
        .args(["-n", "3", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let stdout = String::from_utf8(run.stdout).unwrap();
    let outputs: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(outputs.len(), 3);
    for o in &outputs {
        let text = o["text"].as_str().unwrap();
        assert_eq!(o["valid"], true, "{text}");
        // purr's reader is the syntax oracle (ring-bond pairing, which no context-free
        // grammar checks, is the graph builder's business and not asserted here).
        let mut builder = purr::graph::Builder::new();
        assert!(
            purr::read::read(text, &mut builder, None).is_ok(),
            "purr refuses {text:?}"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_input_is_named() {
    let dir = scratch("bad");
    let corpus = dir.join("bad.jsonl");
    std::fs::write(&corpus, "{\"task\":\"a\",\"answer\":\"x\"}\nnot json\n").unwrap();
    let err = train(&tiny(corpus.clone(), dir.join("m"), 5))
        .unwrap_err()
        .to_string();
    assert!(err.contains("bad.jsonl:2"), "{err}");
    std::fs::write(&corpus, "{\"task\":\"a\",\"answer\":\"\"}\n").unwrap();
    let err = train(&tiny(corpus.clone(), dir.join("m"), 5))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad.jsonl:1") && err.contains("empty"),
        "{err}"
    );
    let mut o = tiny(dir.join("missing.jsonl"), dir.join("m"), 5);
    let err = train(&o).unwrap_err().to_string();
    assert!(err.contains("missing.jsonl"), "{err}");
    o.corpus = small_corpus(&dir);
    o.n_heads = 3;
    let err = train(&o).unwrap_err().to_string();
    assert!(err.contains("--heads"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}
