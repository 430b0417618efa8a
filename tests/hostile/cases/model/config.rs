//! `config.json` of a model folder.

use super::{edit_text, model_dir, run, Battery};
use crate::cases::{err, ok_or_err};
use crate::SLOW;

pub(super) fn config_cases(b: &mut Battery) {
    let d = model_dir(b, "no_config", |d| {
        std::fs::remove_file(d.join("config.json")).unwrap()
    });
    run(b, "no config.json", &d, err(&["no_config", "config.json"]));
    let d = model_dir(b, "config_garbage", |d| {
        std::fs::write(d.join("config.json"), "{\"model_type\": ").unwrap()
    });
    run(
        b,
        "config.json garbage",
        &d,
        err(&["config_garbage", "config.json", "column"]),
    );
    let d = model_dir(b, "config_empty", |d| {
        std::fs::write(d.join("config.json"), "").unwrap()
    });
    run(
        b,
        "config.json empty",
        &d,
        err(&["config_empty", "config.json"]),
    );
    let d = model_dir(b, "config_invalid_utf8", |d| {
        std::fs::write(d.join("config.json"), b"{\"model_type\": \"\xff\"}").unwrap()
    });
    run(
        b,
        "config.json invalid UTF-8",
        &d,
        err(&["config_invalid_utf8", "config.json"]),
    );
    let d = model_dir(b, "config_dir", |d| {
        std::fs::remove_file(d.join("config.json")).unwrap();
        std::fs::create_dir(d.join("config.json")).unwrap();
    });
    run(
        b,
        "config.json is a directory",
        &d,
        err(&["config_dir", "config.json"]),
    );
    let d = model_dir(b, "config_zero", |d| {
        std::fs::remove_file(d.join("config.json")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.join("config.json")).unwrap();
    });
    run(
        b,
        "config.json never ends (/dev/zero)",
        &d,
        err(&["config_zero", "config.json"]),
    );
    b.cases.last_mut().unwrap().timeout(SLOW).max_rss(256);
    let d = model_dir(b, "no_d_model", |d| {
        edit_text(&d.join("config.json"), "\"d_model\": 320,", "")
    });
    run(
        b,
        "config.json without d_model",
        &d,
        err(&["no_d_model", "config.json", "d_model"]),
    );
    let d = model_dir(b, "d_model_string", |d| {
        edit_text(
            &d.join("config.json"),
            "\"d_model\": 320",
            "\"d_model\": \"320\"",
        )
    });
    run(
        b,
        "config.json d_model a string",
        &d,
        err(&["d_model_string", "config.json", "d_model"]),
    );
    let d = model_dir(b, "d_model_zero", |d| {
        edit_text(&d.join("config.json"), "\"d_model\": 320", "\"d_model\": 0")
    });
    run(
        b,
        "config.json d_model 0",
        &d,
        err(&["d_model_zero", "d_model"]),
    );
    let d = model_dir(b, "heads_zero", |d| {
        edit_text(&d.join("config.json"), "\"n_heads\": 5", "\"n_heads\": 0");
        edit_text(
            &d.join("config.json"),
            "\"n_kv_heads\": 5",
            "\"n_kv_heads\": 0",
        );
    });
    run(
        b,
        "config.json n_heads 0",
        &d,
        err(&["heads_zero", "n_heads"]),
    );
    let d = model_dir(b, "heads_not_dividing", |d| {
        edit_text(&d.join("config.json"), "\"n_heads\": 5", "\"n_heads\": 3")
    });
    run(
        b,
        "config.json n_heads 3 (does not divide d_model)",
        &d,
        err(&["heads_not_dividing", "n_heads"]),
    );
    let d = model_dir(b, "kv_heads_not_dividing", |d| {
        edit_text(
            &d.join("config.json"),
            "\"n_kv_heads\": 5",
            "\"n_kv_heads\": 3",
        )
    });
    run(
        b,
        "config.json n_kv_heads 3",
        &d,
        err(&["kv_heads_not_dividing", "n_kv_heads"]),
    );
    let d = model_dir(b, "layers_huge", |d| {
        edit_text(
            &d.join("config.json"),
            "\"n_layers\": 6",
            "\"n_layers\": 1000000000",
        )
    });
    run(
        b,
        "config.json n_layers 10^9",
        &d,
        err(&["layers_huge", "blocks.6"]),
    );
    let d = model_dir(b, "wrong_shape", |d| {
        edit_text(
            &d.join("config.json"),
            "\"mlp_hidden_size\": 896",
            "\"mlp_hidden_size\": 700",
        )
    });
    run(
        b,
        "config.json mlp_hidden_size 700 (wrong tensor shapes)",
        &d,
        err(&["wrong_shape", "ff_"]),
    );
    let d = model_dir(b, "vocab_huge", |d| {
        edit_text(
            &d.join("config.json"),
            "\"vocab_size\": 4096",
            "\"vocab_size\": 1000000000000",
        );
        edit_text(
            &d.join("config.json"),
            "\"embedding_size\": 4096",
            "\"embedding_size\": 1000000000000",
        );
    });
    run(
        b,
        "config.json vocab_size 10^12",
        &d,
        err(&["vocab_huge", "wte"]),
    );
    let d = model_dir(b, "context_zero", |d| {
        edit_text(
            &d.join("config.json"),
            "\"max_sequence_length\": 384",
            "\"max_sequence_length\": 0",
        )
    });
    run(
        b,
        "config.json max_sequence_length 0",
        &d,
        err(&["context_zero"]),
    );
    let d = model_dir(b, "context_huge", |d| {
        edit_text(
            &d.join("config.json"),
            "\"max_sequence_length\": 384",
            "\"max_sequence_length\": 18446744073709551615",
        )
    });
    b.add(
        "model folder",
        "config.json max_sequence_length u64::MAX and --length 10^7",
        &[
            "generate",
            "--model",
            &d,
            "--grammar",
            "smiles",
            "--length",
            "10000000",
        ],
        "",
        err(&["--length"]),
    );
    let d = model_dir(b, "mask_out_of_vocab", |d| {
        edit_text(
            &d.join("config.json"),
            "\"mask_token_id\": 1",
            "\"mask_token_id\": 999999",
        )
    });
    run(
        b,
        "config.json mask_token_id outside the vocabulary",
        &d,
        err(&["mask_out_of_vocab", "mask"]),
    );
    let d = model_dir(b, "eos_out_of_vocab", |d| {
        edit_text(
            &d.join("config.json"),
            "\"eos_token_id\": 0",
            "\"eos_token_id\": 4294967295",
        )
    });
    run(
        b,
        "config.json eos_token_id u32::MAX",
        &d,
        err(&["eos_out_of_vocab", "eos"]),
    );
    let d = model_dir(b, "model_type_unknown", |d| {
        edit_text(
            &d.join("config.json"),
            "\"model_type\": \"llada\"",
            "\"model_type\": \"gpt9\"",
        )
    });
    run(
        b,
        "config.json unknown model_type",
        &d,
        err(&["model_type_unknown", "gpt9"]),
    );
    let d = model_dir(b, "rope_nan", |d| {
        edit_text(
            &d.join("config.json"),
            "\"rope_theta\": 10000.0",
            "\"rope_theta\": -1.0",
        )
    });
    run(
        b,
        "config.json rope_theta -1",
        &d,
        err(&["rope_nan", "rope_theta"]),
    );
    let d = model_dir(b, "eps_negative", |d| {
        edit_text(
            &d.join("config.json"),
            "\"rms_norm_eps\": 0.00001",
            "\"rms_norm_eps\": -1e30",
        )
    });
    run(
        b,
        "config.json rms_norm_eps -1e30",
        &d,
        ok_or_err(&["eps_negative", "rms_norm_eps"]),
    );
}
