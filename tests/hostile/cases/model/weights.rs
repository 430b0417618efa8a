//! `model.safetensors` and its index, of a model folder.

use std::path::Path;

use super::{model_dir, run, Battery};
use crate::cases::{err, ok_or_err};
use crate::MANIFEST;

/// The embedded model's safetensors: header (JSON text) and data.
fn weights() -> (String, Vec<u8>) {
    let bytes =
        std::fs::read(Path::new(MANIFEST).join("models/default/model.safetensors")).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    (
        String::from_utf8(bytes[8..8 + n].to_vec()).unwrap(),
        bytes[8 + n..].to_vec(),
    )
}

fn write_weights(dir: &Path, header: &str, data: &[u8]) {
    let path = dir.join("model.safetensors");
    let _ = std::fs::remove_file(&path);
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).unwrap();
}

fn replace_weights(dir: &Path, bytes: &[u8]) {
    let path = dir.join("model.safetensors");
    let _ = std::fs::remove_file(&path);
    std::fs::write(path, bytes).unwrap();
}

pub(super) fn weight_cases(b: &mut Battery) {
    let d = model_dir(b, "no_weights", |d| {
        std::fs::remove_file(d.join("model.safetensors")).unwrap()
    });
    run(
        b,
        "no model.safetensors",
        &d,
        err(&["no_weights", "model.safetensors"]),
    );
    let (header, data) = weights();
    let all: Vec<u8> =
        std::fs::read(Path::new(MANIFEST).join("models/default/model.safetensors")).unwrap();
    let d = model_dir(b, "truncated", |d| {
        replace_weights(d, &all[..all.len() / 2])
    });
    run(
        b,
        "model.safetensors truncated to half",
        &d,
        err(&["truncated", "model.safetensors"]),
    );
    let d = model_dir(b, "truncated_header", |d| replace_weights(d, &all[..100]));
    run(
        b,
        "model.safetensors cut inside its header",
        &d,
        err(&["truncated_header", "model.safetensors"]),
    );
    let d = model_dir(b, "empty_weights", |d| replace_weights(d, b""));
    run(
        b,
        "model.safetensors empty",
        &d,
        err(&["empty_weights", "model.safetensors"]),
    );
    let garbage: Vec<u8> = (0..100_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let d = model_dir(b, "garbage_weights", |d| replace_weights(d, &garbage));
    run(
        b,
        "model.safetensors random bytes",
        &d,
        err(&["garbage_weights", "model.safetensors"]),
    );
    for (tag, n) in [
        ("u64max", u64::MAX),
        ("u64max_minus_7", u64::MAX - 7),
        ("u64max_minus_8", u64::MAX - 8),
    ] {
        let mut bytes = n.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{}      ");
        let d = model_dir(b, &format!("header_{tag}"), |d| replace_weights(d, &bytes));
        run(
            b,
            &format!("safetensors header length {tag}"),
            &d,
            err(&[&format!("header_{tag}"), "header length"]),
        );
    }
    let d = model_dir(b, "header_not_json", |d| {
        write_weights(d, &"x".repeat(64), &data)
    });
    run(
        b,
        "safetensors header not JSON",
        &d,
        err(&["header_not_json", "model.safetensors"]),
    );
    let d = model_dir(b, "header_invalid_utf8", |d| {
        let mut bytes = 8u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{\"\xff\": 1}");
        replace_weights(d, &bytes);
    });
    run(
        b,
        "safetensors header invalid UTF-8",
        &d,
        err(&["header_invalid_utf8", "model.safetensors"]),
    );
    let first = "\"data_offsets\":[0,640]";
    assert!(header.contains(first), "unexpected header layout");
    let d = model_dir(b, "offsets_past_end", |d| {
        write_weights(
            d,
            &header.replacen(first, "\"data_offsets\":[0,99999999999]", 1),
            &data,
        )
    });
    run(
        b,
        "safetensors data offsets past the end",
        &d,
        err(&["offsets_past_end", "model.safetensors"]),
    );
    let d = model_dir(b, "offsets_reversed", |d| {
        write_weights(
            d,
            &header.replacen(first, "\"data_offsets\":[640,0]", 1),
            &data,
        )
    });
    run(
        b,
        "safetensors data offsets reversed",
        &d,
        err(&["offsets_reversed", "model.safetensors"]),
    );
    let d = model_dir(b, "dtype_i32", |d| {
        write_weights(
            d,
            &header.replacen("\"dtype\":\"F16\"", "\"dtype\":\"I32\"", 1),
            &data,
        )
    });
    run(
        b,
        "safetensors tensor of dtype I32",
        &d,
        ok_or_err(&["dtype_i32", "attn_norm"]),
    );
    let d = model_dir(b, "dtype_u8", |d| {
        write_weights(
            d,
            &header.replacen(
                "\"dtype\":\"F16\",\"shape\":[320]",
                "\"dtype\":\"U8\",\"shape\":[640]",
                1,
            ),
            &data,
        )
    });
    run(
        b,
        "safetensors tensor of dtype U8 and the wrong shape",
        &d,
        err(&["dtype_u8", "attn_norm"]),
    );
    let name = "model.transformer.blocks.0.attn_norm.weight";
    let d = model_dir(b, "missing_tensor", |d| {
        write_weights(
            d,
            &header.replacen(name, "model.transformer.blocks.0.attn_norm.weighx", 1),
            &data,
        )
    });
    run(
        b,
        "safetensors without a tensor",
        &d,
        err(&["missing_tensor", name]),
    );
    let d = model_dir(b, "shape_huge", |d| {
        write_weights(
            d,
            &header.replacen("\"shape\":[320]", "\"shape\":[4294967296,4294967296]", 1),
            &data,
        )
    });
    run(
        b,
        "safetensors shape whose size overflows",
        &d,
        err(&["shape_huge", "model.safetensors"]),
    );
    let mut nan = data.clone();
    nan.iter_mut().for_each(|x| *x = 0xff);
    let d = model_dir(b, "nan_weights", |d| write_weights(d, &header, &nan));
    run(b, "all weights NaN", &d, ok_or_err(&["nan_weights", "NaN"]));
    let d = model_dir(b, "weights_dir", |d| {
        std::fs::remove_file(d.join("model.safetensors")).unwrap();
        std::fs::create_dir(d.join("model.safetensors")).unwrap();
    });
    run(
        b,
        "model.safetensors is a directory",
        &d,
        err(&["weights_dir", "model.safetensors"]),
    );
    let d = model_dir(b, "weights_loop", |d| {
        std::fs::remove_file(d.join("model.safetensors")).unwrap();
        std::os::unix::fs::symlink("model.safetensors", d.join("model.safetensors")).unwrap();
    });
    run(
        b,
        "model.safetensors is a symlink loop",
        &d,
        err(&["weights_loop", "model.safetensors"]),
    );
    let d = model_dir(b, "index_garbage", |d| {
        std::fs::remove_file(d.join("model.safetensors")).unwrap();
        std::fs::write(d.join("model.safetensors.index.json"), "{\"weight_map\": [").unwrap();
    });
    run(
        b,
        "model.safetensors.index.json garbage",
        &d,
        err(&["index_garbage", "model.safetensors.index.json"]),
    );
    let d = model_dir(b, "index_missing_shard", |d| {
        std::fs::remove_file(d.join("model.safetensors")).unwrap();
        std::fs::write(
            d.join("model.safetensors.index.json"),
            "{\"weight_map\": {\"a\": \"shard-1.safetensors\"}}",
        )
        .unwrap();
    });
    run(
        b,
        "index names a missing shard",
        &d,
        err(&["index_missing_shard", "shard-1.safetensors"]),
    );
    let d = model_dir(b, "index_traversal", |d| {
        std::fs::remove_file(d.join("model.safetensors")).unwrap();
        std::fs::write(
            d.join("model.safetensors.index.json"),
            "{\"weight_map\": {\"a\": \"../../../../../../../../etc/passwd\"}}",
        )
        .unwrap();
    });
    run(
        b,
        "index names ../../etc/passwd",
        &d,
        err(&["index_traversal", "passwd"]),
    );
    let d = model_dir(b, "index_empty", |d| {
        std::fs::remove_file(d.join("model.safetensors")).unwrap();
        std::fs::write(
            d.join("model.safetensors.index.json"),
            "{\"weight_map\": {}}",
        )
        .unwrap();
    });
    run(
        b,
        "index with an empty weight_map",
        &d,
        err(&["index_empty", "weight_map"]),
    );
}
