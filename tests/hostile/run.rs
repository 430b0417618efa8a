//! Running a case: the child under its deadline and address-space cap, its streams and peak memory.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::{Case, BIN, KEEP_BYTES, MEM_KIB};

pub(crate) struct Run {
    pub(crate) code: Option<i32>,
    pub(crate) signal: Option<i32>,
    pub(crate) timed_out: bool,
    pub(crate) secs: f64,
    pub(crate) peak_kib: u64,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stdout_lines: usize,
    pub(crate) stderr: Vec<u8>,
}

/// Reads a stream to its end, keeping its first [`KEEP_BYTES`] and counting its lines.
fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<(Vec<u8>, usize)> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut lines = 0;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    lines += buf[..n].iter().filter(|&&c| c == b'\n').count();
                    let room = KEEP_BYTES.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
        (kept, lines)
    })
}

/// Peak resident set of a live process, KiB.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

pub(crate) fn run_case(case: &Case, cwd: &Path, scale: f64) -> Run {
    use std::os::unix::process::ExitStatusExt;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {MEM_KIB}; exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(&case.args)
        .current_dir(cwd)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    let t0 = Instant::now();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let input = case.stdin.clone();
    // A child that stops reading early closes its end: that write error is expected.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = drain(child.stdout.take().unwrap());
    let errs = drain(child.stderr.take().unwrap());
    let deadline = Duration::from_secs_f64(case.timeout * scale);
    let mut peak = 0;
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Some(kib) = peak_kib(pid) {
            peak = peak.max(kib);
        }
        if t0.elapsed() > deadline {
            timed_out = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(if t0.elapsed().as_millis() < 200 {
            2
        } else {
            20
        }));
    };
    let secs = t0.elapsed().as_secs_f64();
    let _ = writer.join();
    let (stdout, stdout_lines) = out.join().unwrap();
    let (stderr, _) = errs.join().unwrap();
    Run {
        code: status.code(),
        signal: status.signal(),
        timed_out,
        secs,
        peak_kib: peak,
        stdout,
        stdout_lines,
        stderr,
    }
}
