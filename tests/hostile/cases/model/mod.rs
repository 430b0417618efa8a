//! Model folders: copies of the embedded model's folder with one thing broken.

mod config;
mod tokenizer;
mod weights;

use std::path::Path;

use super::{err, ok, Battery};
use crate::{Expect, MANIFEST};

/// Copies the embedded model's folder into the scratch folder (the weights linked, not
/// copied, unless `weights` replaces them); returns its path.
pub(super) fn model_dir(b: &Battery, name: &str, edit: impl Fn(&Path)) -> String {
    let src = Path::new(MANIFEST).join("models/default");
    let dir = b.scratch.join("models").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["config.json", "tokenizer.json", "lacuna.json"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    std::os::unix::fs::symlink(src.join("model.safetensors"), dir.join("model.safetensors"))
        .unwrap();
    edit(&dir);
    dir.to_str().unwrap().to_string()
}

/// Replaces `from` by `to` in the text file `path` (which must contain it).
pub(super) fn edit_text(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} lacks {from}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// `generate` with a model folder, a short SMILES run.
pub(super) fn run(b: &mut Battery, name: &str, dir: &str, expect: Expect) {
    b.add(
        "model folder",
        name,
        &[
            "generate",
            "--model",
            dir,
            "--grammar",
            "smiles",
            "--length",
            "16",
            "--steps",
            "8",
        ],
        "",
        expect,
    );
}

pub(super) fn model_cases(b: &mut Battery) {
    let good = model_dir(b, "good", |_| {});
    run(b, "a good copy of the embedded model", &good, ok(&[]));
    run(
        b,
        "folder missing",
        "/nonexistent/model",
        err(&["/nonexistent/model"]),
    );
    let f = b.file("models/a_file", "x");
    run(b, "folder is a file", &f, err(&["a_file"]));
    config::config_cases(b);
    weights::weight_cases(b);
    tokenizer::tokenizer_cases(b, &good);
}
