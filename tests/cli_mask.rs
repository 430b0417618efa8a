//! The `lacuna` binary on token canvases: `mask` (valid-token masks) and `check --tokenizer`,
//! over a tiny hand-written tokenizer and the real Qwen vocabulary. Masks are held to an
//! independent oracle (one `check --tokenizer` per candidate id) and to hand-reasoned cases.

use std::path::PathBuf;

use serde_json::{json, Value};

const QWEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/qwen-bpe/tokenizer.json"
);

#[path = "common/bin.rs"]
mod bin;
use bin::{lacuna, lines};

fn input(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

// The tiny vocabulary: byte-level BPE (`Ġ` is a space), an EOS and a forbidden special token.
const LBRACE: u32 = 0;
const RBRACE: u32 = 1;
const STR_A: u32 = 2; // "a" with its quotes
const COLON: u32 = 3;
const ONE: u32 = 4;
const LBRACKET: u32 = 5;
const RBRACKET: u32 = 6;
const COMMA: u32 = 7;
const SPACE: u32 = 8;
const QUOTE: u32 = 9; // 10 is `a`
const ELEVEN: u32 = 11;
const EOS: u32 = 12;
const PAD: u32 = 13;
const TINY_LEN: u32 = 14;

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A scratch directory with the tiny tokenizer, one without EOS, a file that is not a
/// tokenizer, and a small Lark grammar.
fn scratch(tag: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("lacuna-cli-mask-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let vocab = json!({"{": 0, "}": 1, "\"a\"": 2, ":": 3, "1": 4, "[": 5, "]": 6, ",": 7,
                       "Ġ": 8, "\"": 9, "a": 10, "11": 11});
    let tiny = json!({"model": {"type": "BPE", "vocab": vocab, "merges": []},
        "added_tokens": [{"id": 12, "content": "<|endoftext|>", "special": true},
                         {"id": 13, "content": "<|pad|>", "special": true}]});
    std::fs::write(dir.join("tiny.json"), tiny.to_string()).unwrap();
    let no_eos = json!({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}});
    std::fs::write(dir.join("no_eos.json"), no_eos.to_string()).unwrap();
    std::fs::write(dir.join("notes.txt"), "hello\n").unwrap();
    std::fs::write(dir.join("ones.lark"), "start: \"[\" NUM \"]\"\nNUM: /1+/\n").unwrap();
    Scratch(dir)
}

fn path(dir: &Scratch, name: &str) -> String {
    dir.0.join(name).to_str().unwrap().to_string()
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .expect("an id list")
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

/// For every mask in `masks` (the output of `mask` on `canvases`), the ids `check --tokenizer`
/// calls completable when placed there, among `candidates`: one `check` run for them all.
fn oracle(
    tokenizer: &str,
    canvases: &[Value],
    masks: &[Value],
    candidates: &dyn Fn(usize, usize) -> Vec<u32>,
) -> Vec<Vec<Vec<u32>>> {
    let mut queries = Vec::new();
    let mut keys = Vec::new();
    for (c, (canvas, answer)) in canvases.iter().zip(masks).enumerate() {
        for (m, mask) in answer["masks"].as_array().unwrap().iter().enumerate() {
            let p = mask["position"].as_u64().unwrap() as usize;
            for t in candidates(c, m) {
                let mut tokens = canvas["tokens"].clone();
                tokens[p] = json!(t);
                queries.push(json!({"id": queries.len(), "tokens": tokens}));
                keys.push((c, m, t));
            }
        }
    }
    let (stdout, stderr, code) = lacuna(
        &["check", "--grammar", "json", "--tokenizer", tokenizer],
        &input(&queries),
    );
    assert_eq!(code, 0, "{stderr}");
    let verdicts = lines(&stdout);
    assert_eq!(verdicts.len(), keys.len());
    let mut out: Vec<Vec<Vec<u32>>> = masks
        .iter()
        .map(|a| vec![Vec::new(); a["masks"].as_array().unwrap().len()])
        .collect();
    for ((c, m, t), v) in keys.into_iter().zip(&verdicts) {
        assert_ne!(v["verdict"], "unknown", "{v}");
        if v["verdict"] == "completable" {
            out[c][m].push(t);
        }
    }
    out
}

#[test]
fn tiny_masks_match_the_check_oracle_and_hand_reasoning() {
    let dir = scratch("oracle");
    let tiny = path(&dir, "tiny.json");
    let canvases: Vec<Value> = [
        json!([LBRACKET, null, RBRACKET]),
        json!([LBRACE, null, null]),
        json!([null]),
        json!([LBRACE, STR_A, null, ONE, RBRACE]),
        json!([LBRACKET, null, EOS, null]),
        json!([LBRACKET, PAD, null]),
        json!([LBRACE, null, null, null, RBRACE]),
        json!([LBRACKET, ONE, null, null, EOS, EOS]),
        json!([null, null, COMMA, null]),
        json!([QUOTE, null, null]),
        json!([null, null, null, null]),
        json!([EOS, null]),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, tokens)| json!({"id": i, "tokens": tokens}))
    .collect();
    let (stdout, stderr, code) = lacuna(
        &["mask", "--grammar", "json", "--tokenizer", &tiny],
        &input(&canvases),
    );
    assert_eq!(code, 0, "{stderr}");
    let answers = lines(&stdout);
    assert_eq!(answers.len(), canvases.len());
    let all = |_: usize, _: usize| (0..TINY_LEN).collect::<Vec<u32>>();
    let expected = oracle(&tiny, &canvases, &answers, &all);
    let mut got = Vec::new();
    for (i, (canvas, answer)) in canvases.iter().zip(&answers).enumerate() {
        assert_eq!(answer["id"], i);
        let masked: Vec<u64> = (0..canvas["tokens"].as_array().unwrap().len() as u64)
            .filter(|&p| canvas["tokens"][p as usize].is_null())
            .collect();
        let masks = answer["masks"].as_array().unwrap();
        let positions: Vec<u64> = masks
            .iter()
            .map(|m| m["position"].as_u64().unwrap())
            .collect();
        assert_eq!(positions, masked, "every masked position, in order");
        got.push(Vec::new());
        for (m, mask) in masks.iter().enumerate() {
            let allowed = ids(&mask["allowed"]);
            assert_eq!(mask["count"], allowed.len());
            assert_eq!(mask["unknown"], 0);
            assert_eq!(allowed, expected[i][m], "canvas {canvas}, mask {mask}");
            got[i].push(allowed);
        }
    }
    // By hand, under token-exact semantics (one text token per masked position; a trailing run
    // of k masks holds at most k tokens, then the output ends):
    // `[ ? ]`: one whole value or a space; never `]` (`[]]`) or the end of output.
    assert_eq!(got[0][0], [STR_A, ONE, SPACE, ELEVEN]);
    // `{ ? ?`: `}` or a space, and at the end `}`, a space, or nothing more.
    assert_eq!(got[1][0], [RBRACE, SPACE]);
    assert_eq!(got[1][1], [RBRACE, SPACE, EOS]);
    // `?` alone: a complete value in one token.
    assert_eq!(got[2][0], [STR_A, ONE, ELEVEN]);
    // `{"a" ? 1}`: only the colon.
    assert_eq!(got[3][0], [COLON]);
    // `[ ? EOS ?`: `]` closes the array; after the EOS only EOS.
    assert_eq!(got[4], [vec![RBRACKET], vec![EOS]]);
    // A forbidden token on the canvas: nothing can help.
    assert_eq!(got[5], [Vec::<u32>::new()]);
    // `EOS ?`: the output is empty, which is no JSON value.
    assert_eq!(got[11], [Vec::<u32>::new()]);
}

#[test]
fn count_only_positions_and_grammar_override() {
    let dir = scratch("flags");
    let tiny = path(&dir, "tiny.json");
    let lark = path(&dir, "ones.lark");
    let lines_in = [
        json!({"id": "a", "tokens": [LBRACE, null, null]}),
        json!({"id": "b", "tokens": [LBRACE, null, null], "grammar": lark}),
    ];
    let (stdout, stderr, code) = lacuna(
        &["mask", "-g", "json", "--tokenizer", &tiny, "--count-only"],
        &input(&lines_in),
    );
    assert_eq!(code, 0, "{stderr}");
    let v = lines(&stdout);
    let masks = v[0]["masks"].as_array().unwrap();
    assert_eq!(masks.len(), 2);
    assert!(masks.iter().all(|m| m.get("allowed").is_none()), "{}", v[0]);
    assert_eq!(
        (masks[0]["count"].clone(), masks[1]["count"].clone()),
        (json!(2), json!(3))
    );
    assert!(v[0]["micros"].is_u64());
    // The line's own grammar wins: `{` never starts `[1...]`.
    assert_eq!(v[1]["masks"][0]["count"], 0);

    let lines_in = [
        json!({"id": "p", "tokens": [LBRACKET, null, null, RBRACKET]}),
        json!({"id": "q", "tokens": [LBRACKET, ONE, null, RBRACKET]}),
        json!({"id": "r", "tokens": [LBRACKET, null, null], "grammar": lark}),
    ];
    let (stdout, _, code) = lacuna(
        &[
            "mask",
            "-g",
            "json",
            "--tokenizer",
            &tiny,
            "--positions",
            "2,1",
        ],
        &input(&lines_in),
    );
    assert_eq!(code, 1, "a line failed");
    let v = lines(&stdout);
    assert_eq!(v.len(), 3);
    let positions: Vec<&Value> = v[0]["masks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["position"])
        .collect();
    assert_eq!(positions, [&json!(2), &json!(1)], "the order asked for");
    // `[ ? ? ]`, exactly two tokens inside: a value and a space either way round, or a pair
    // that makes one value: `{}`, `[]`, `""`.
    let first = [LBRACE, STR_A, ONE, LBRACKET, SPACE, QUOTE, ELEVEN];
    let second = [RBRACE, STR_A, ONE, RBRACKET, SPACE, QUOTE, ELEVEN];
    assert_eq!(ids(&v[0]["masks"][1]["allowed"]), first);
    assert_eq!(ids(&v[0]["masks"][0]["allowed"]), second);
    assert_eq!(v[1]["id"], "q");
    assert_eq!(v[1]["line"], 2);
    let e = v[1]["error"].as_str().unwrap();
    assert!(e.contains("position 1") && e.contains("token 4"), "{e}");
    // The Lark grammar `[` NUM `]` (NUM = 1+, no whitespace), `[ ? ?` then the end: a number
    // then `]`.
    assert_eq!(ids(&v[2]["masks"][0]["allowed"]), [RBRACKET]);
    assert_eq!(ids(&v[2]["masks"][1]["allowed"]), [ONE, ELEVEN]);

    let (stdout, _, code) = lacuna(
        &[
            "mask",
            "-g",
            "json",
            "--tokenizer",
            &tiny,
            "--positions",
            "7",
        ],
        &input(&[json!({"id": 9, "tokens": [LBRACKET, null]})]),
    );
    assert_eq!(code, 1);
    let v = lines(&stdout);
    assert_eq!(v[0]["id"], 9);
    assert!(
        v[0]["error"].as_str().unwrap().contains("position 7"),
        "{}",
        v[0]
    );
}

#[test]
fn bad_lines_get_errors_and_the_run_goes_on() {
    let dir = scratch("bad");
    let tiny = path(&dir, "tiny.json");
    let text = [
        json!({"id": "ok1", "tokens": [LBRACKET, null, RBRACKET]}).to_string(),
        "{not json".to_string(),
        json!({"id": "big", "tokens": [LBRACKET, 99, RBRACKET]}).to_string(),
        json!({"id": "neg", "tokens": [LBRACKET, -3]}).to_string(),
        json!({"id": "str", "tokens": [LBRACKET, "]"]}).to_string(),
        json!({"id": "long", "tokens": [LBRACKET, null, null, null, null, RBRACKET]}).to_string(),
        json!({"id": "none", "canvas": ["[", null]}).to_string(),
        json!({"id": "g1", "tokens": [null], "grammar": "nosuchgrammar"}).to_string(),
        json!({"id": "g2", "tokens": [null], "grammar": "nosuchgrammar"}).to_string(),
        json!({"id": "ok2", "tokens": [null]}).to_string(),
    ]
    .join("\n");
    for command in ["mask", "check"] {
        let args = [
            command,
            "-g",
            "json",
            "--tokenizer",
            &tiny,
            "--max-positions",
            "5",
        ];
        let (stdout, stderr, code) = lacuna(&args, &text);
        assert_eq!(
            code, 1,
            "{command}: errors make the exit status 1; {stderr}"
        );
        let v = lines(&stdout);
        assert_eq!(v.len(), 10, "{command}: one line per input line");
        let error = |i: usize| v[i]["error"].as_str().unwrap_or_else(|| panic!("{}", v[i]));
        assert!(v[0].get("error").is_none() && v[9].get("error").is_none());
        assert_eq!(
            (v[1]["id"].clone(), v[1]["line"].clone()),
            (Value::Null, json!(2))
        );
        assert!(error(1).contains("JSON"));
        assert_eq!(v[2]["id"], "big");
        assert!(
            error(2).contains("tokens[1]") && error(2).contains("99"),
            "{}",
            error(2)
        );
        assert!(error(2).contains("14 ids"), "{}", error(2));
        assert!(
            error(3).contains("tokens[1]") && error(3).contains("-3"),
            "{}",
            error(3)
        );
        assert!(error(4).contains("tokens[1]"), "{}", error(4));
        assert_eq!(v[5]["id"], "long");
        assert!(
            error(5).contains('6') && error(5).contains('5'),
            "{}",
            error(5)
        );
        assert!(error(6).contains("tokens"), "{}", error(6));
        assert_eq!(v[7]["id"], "g1");
        assert!(error(7).contains("nosuchgrammar") && error(8).contains("nosuchgrammar"));
    }
    let (stdout, _, code) = lacuna(
        &["mask", "--tokenizer", &tiny],
        &input(&[json!({"id": "ng", "tokens": [null]})]),
    );
    assert_eq!(code, 1);
    assert!(lines(&stdout)[0]["error"]
        .as_str()
        .unwrap()
        .contains("no grammar"));
}

#[test]
fn bad_tokenizers_end_the_run() {
    let dir = scratch("tok");
    let line = input(&[json!({"id": 1, "tokens": [null]})]);
    for command in ["mask", "check"] {
        let notes = path(&dir, "notes.txt");
        let (stdout, stderr, code) = lacuna(&[command, "-g", "json", "--tokenizer", &notes], &line);
        assert_eq!(code, 1);
        assert!(stdout.is_empty());
        assert!(
            stderr.contains(&notes) && stderr.contains("not a tokenizer"),
            "{stderr}"
        );
        let missing = path(&dir, "missing.json");
        let (_, stderr, code) = lacuna(&[command, "-g", "json", "--tokenizer", &missing], &line);
        assert_eq!(code, 1);
        assert!(stderr.contains(&missing), "{stderr}");
        let no_eos = path(&dir, "no_eos.json");
        let (_, stderr, code) = lacuna(&[command, "-g", "json", "--tokenizer", &no_eos], &line);
        assert_eq!(code, 1);
        assert!(
            stderr.contains(&no_eos) && stderr.contains("--eos"),
            "{stderr}"
        );
        // Naming one works.
        let args = [command, "-g", "json", "--tokenizer", &no_eos, "--eos", "b"];
        let (stdout, stderr, code) = lacuna(&args, &line);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(lines(&stdout).len(), 1);
    }
    let tiny = path(&dir, "tiny.json");
    let (_, stderr, code) = lacuna(
        &["check", "-g", "json", "--tokenizer", &tiny, "--complete"],
        &line,
    );
    assert_eq!(code, 2, "a usage error");
    assert!(
        stderr.contains("--complete") && stderr.contains("--tokenizer"),
        "{stderr}"
    );
}

#[test]
fn qwen_masks_and_checks() {
    // Qwen ids: `[` 58, `]` 60, `1` 16, `{` 90, `}` 92, `,` 11, `<|endoftext|>` 151643,
    // `<|im_start|>` 151644 (special: forbidden).
    let (lb, rb, one, comma, eos, im_start) = (58u32, 60u32, 16u32, 11u32, 151643u32, 151644u32);
    let checks = [
        json!({"id": "one", "tokens": [lb, one, rb]}),
        json!({"id": "close", "tokens": [lb, rb, rb]}),
        json!({"id": "after-eos", "tokens": [lb, eos, rb]}),
        json!({"id": "eos-pad", "tokens": [lb, one, rb, eos, null, eos]}),
        json!({"id": "special", "tokens": [lb, im_start, rb]}),
        json!({"id": "comma", "tokens": [lb, one, comma, null, rb]}),
    ];
    let (stdout, stderr, code) = lacuna(
        &["check", "--grammar", "json", "--tokenizer", QWEN],
        &input(&checks),
    );
    assert_eq!(code, 0, "{stderr}");
    let verdicts: Vec<String> = lines(&stdout)
        .iter()
        .map(|v| v["verdict"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        verdicts,
        [
            "completable",
            "not_completable",
            "not_completable",
            "completable",
            "not_completable",
            "completable"
        ]
    );

    let canvases = [
        json!({"id": "arr", "tokens": [lb, null, rb]}),
        json!({"id": "tail", "tokens": [lb, one, comma, null, null]}),
    ];
    let (stdout, stderr, code) = lacuna(
        &["mask", "--grammar", "json", "--tokenizer", QWEN],
        &input(&canvases),
    );
    assert_eq!(code, 0, "{stderr}");
    let answers = lines(&stdout);
    let arr = ids(&answers[0]["masks"][0]["allowed"]);
    assert!(arr.contains(&one) && !arr.contains(&rb) && !arr.contains(&eos));
    assert!(arr.len() > 100 && arr.len() < 10_000, "{}", arr.len());
    // The oracle on a spread of the ids, allowed and not (a full sweep is 151k checks each).
    let sample = |c: usize, m: usize| {
        let allowed = ids(&answers[c]["masks"][m]["allowed"]);
        let mut s: Vec<u32> = (0..151_668u32).step_by(97).collect();
        s.extend([lb, rb, one, comma, eos, im_start, 151_645]);
        s.extend(allowed.iter().step_by(allowed.len() / 500 + 1));
        s.sort_unstable();
        s.dedup();
        s
    };
    let expected = oracle(QWEN, &canvases, &answers, &sample);
    for (c, answer) in answers.iter().enumerate() {
        for (m, mask) in answer["masks"].as_array().unwrap().iter().enumerate() {
            let allowed: Vec<u32> = ids(&mask["allowed"]);
            let in_sample: Vec<u32> = sample(c, m)
                .into_iter()
                .filter(|t| allowed.binary_search(t).is_ok())
                .collect();
            assert_eq!(in_sample, expected[c][m], "{}", canvases[c]);
        }
    }
}

#[test]
fn lines_of_the_other_kind_are_named() {
    let dir = scratch("kind");
    let tiny = path(&dir, "tiny.json");
    let token_line = input(&[json!({"id": "t", "tokens": [LBRACKET, null]})]);
    let (stdout, _, code) = lacuna(&["check", "-g", "json"], &token_line);
    assert_eq!(code, 1);
    let v = lines(&stdout);
    assert_eq!(v[0]["id"], "t");
    assert!(
        v[0]["error"].as_str().unwrap().contains("give --tokenizer"),
        "{}",
        v[0]
    );
    let text_line = input(&[json!({"id": "c", "canvas": ["[", null]})]);
    let (stdout, _, code) = lacuna(&["check", "-g", "json", "--tokenizer", &tiny], &text_line);
    assert_eq!(code, 1);
    let v = lines(&stdout);
    assert_eq!(v[0]["id"], "c");
    assert!(
        v[0]["error"]
            .as_str()
            .unwrap()
            .contains("leave out --tokenizer"),
        "{}",
        v[0]
    );
}
