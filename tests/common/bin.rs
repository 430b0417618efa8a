//! The `lacuna` binary run as a user runs it, for the CLI tests.

#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

/// Runs the binary; returns stdout, stderr and the exit code.
pub fn lacuna(args: &[&str], stdin: &str) -> (String, String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lacuna"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin_pipe = child.stdin.take().unwrap();
    let input = stdin.to_string();
    // Written from a thread: a large input must not block while the child fills stdout. A
    // child that stops early (a bad tokenizer) closes its end: that write error is expected.
    let writer = std::thread::spawn(move || stdin_pipe.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    let _ = writer.join().expect("the writer thread ends");
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code().expect("exited"),
    )
}

pub fn lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
