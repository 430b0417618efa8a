//! Judging a run: the class it ends in, and why.

use crate::run::Run;
use crate::{Case, Expect};

/// How a case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Class {
    Ok,
    CleanError,
    Panic,
    StackOverflow,
    Oom,
    Signal,
    Hang,
    Memory,
    WrongAnswer,
    UnclearError,
    StopsLines,
}

impl Class {
    pub(crate) fn bad(self) -> bool {
        !matches!(self, Class::Ok | Class::CleanError)
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Class::Ok => "ok",
            Class::CleanError => "clean error",
            Class::Panic => "BAD: panic",
            Class::StackOverflow => "BAD: stack overflow",
            Class::Oom => "BAD: out of memory",
            Class::Signal => "BAD: killed by a signal",
            Class::Hang => "BAD: hang (timeout)",
            Class::Memory => "BAD: memory over bound",
            Class::WrongAnswer => "BAD: wrong answer",
            Class::UnclearError => "BAD: unclear error",
            Class::StopsLines => "BAD: stops after a bad line",
        }
    }
}

fn missing<'a>(text: &str, needles: &'a [String]) -> Vec<&'a str> {
    needles
        .iter()
        .filter(|n| !text.contains(n.as_str()))
        .map(String::as_str)
        .collect()
}

/// The first line of a text, cut short.
fn gist(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut s: String = line.chars().take(220).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    s
}

/// The longest error message that still reads as one (an error that echoes a megabyte of
/// input does not).
const MAX_MESSAGE: usize = 16 << 10;

pub(crate) fn judge(case: &Case, run: &Run) -> (Class, String) {
    let (class, detail) = judge_run(case, run);
    if class == Class::CleanError {
        let stderr = String::from_utf8_lossy(&run.stderr);
        let stdout = String::from_utf8_lossy(&run.stdout);
        let longest = stderr
            .lines()
            .chain(stdout.lines().filter(|l| l.contains("\"error\"")))
            .map(str::len)
            .max()
            .unwrap_or(0);
        if longest > MAX_MESSAGE {
            return (
                Class::UnclearError,
                format!("an error message of {longest} bytes: {detail}"),
            );
        }
    }
    (class, detail)
}

fn judge_run(case: &Case, run: &Run) -> (Class, String) {
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    if run.timed_out {
        if matches!(case.expect, Expect::Streams) && run.stdout_lines > 0 {
            if let Some(limit) = case.max_rss_mib {
                if run.peak_kib > limit * 1024 {
                    return (
                        Class::Memory,
                        format!("peak {} MiB > {limit} MiB", run.peak_kib / 1024),
                    );
                }
            }
            return (
                Class::Ok,
                format!("{} outputs before the deadline", run.stdout_lines),
            );
        }
        return (
            Class::Hang,
            format!(
                "killed after {:.0} s; {} output lines; stderr: {}",
                run.secs,
                run.stdout_lines,
                gist(&stderr)
            ),
        );
    }
    if stderr.contains("has overflowed its stack") {
        return (Class::StackOverflow, gist(&stderr));
    }
    if stderr.contains("memory allocation of") || run.signal == Some(9) {
        return (
            Class::Oom,
            format!("{} (signal {:?})", gist(&stderr), run.signal),
        );
    }
    if stderr.contains("panicked at") || run.code == Some(101) {
        let msg: Vec<&str> = stderr
            .lines()
            .filter(|l| !l.contains("RUST_BACKTRACE"))
            .take(2)
            .collect();
        return (Class::Panic, msg.join(" / "));
    }
    if let Some(sig) = run.signal {
        return (Class::Signal, format!("signal {sig}: {}", gist(&stderr)));
    }
    if let Some(limit) = case.max_rss_mib {
        if run.peak_kib > limit * 1024 {
            return (
                Class::Memory,
                format!("peak {} MiB > {limit} MiB", run.peak_kib / 1024),
            );
        }
    }
    let code = run.code.unwrap_or(-1);
    let error_text = format!("{stderr}\n{stdout}");
    match &case.expect {
        Expect::Ok(needles) => {
            if code != 0 {
                return (
                    Class::WrongAnswer,
                    format!("exit {code}, expected success: {}", gist(&error_text)),
                );
            }
            let m = missing(&stdout, needles);
            if m.is_empty() {
                (Class::Ok, gist(&stdout))
            } else {
                (
                    Class::WrongAnswer,
                    format!("output lacks {m:?}: {}", gist(&stdout)),
                )
            }
        }
        Expect::Err(needles) | Expect::OkOrErr(needles) => {
            if code == 0 {
                if matches!(case.expect, Expect::OkOrErr(_)) {
                    return (Class::Ok, gist(&stdout));
                }
                return (
                    Class::WrongAnswer,
                    format!("accepted (exit 0): {}", gist(&stdout)),
                );
            }
            if code != 1 {
                return (
                    Class::WrongAnswer,
                    format!("exit {code}: {}", gist(&error_text)),
                );
            }
            let m = missing(&stderr, needles);
            if m.is_empty() {
                (Class::CleanError, gist(&stderr))
            } else {
                (
                    Class::UnclearError,
                    format!("message lacks {m:?}: {}", gist(&error_text)),
                )
            }
        }
        Expect::Usage(needles) => {
            if code != 2 {
                return (
                    Class::WrongAnswer,
                    format!("exit {code}, expected a usage error: {}", gist(&error_text)),
                );
            }
            let m = missing(&stderr, needles);
            if m.is_empty() {
                (Class::CleanError, gist(&stderr))
            } else {
                (
                    Class::UnclearError,
                    format!("message lacks {m:?}: {}", gist(&stderr)),
                )
            }
        }
        Expect::EitherLine(needles) => {
            let line = stdout.lines().next().unwrap_or("");
            if run.stdout_lines != 1 {
                return (
                    Class::WrongAnswer,
                    format!(
                        "{} output lines for 1: {}",
                        run.stdout_lines,
                        gist(&error_text)
                    ),
                );
            }
            if line.contains("\"verdict\"") && code == 0 {
                return (Class::Ok, gist(line));
            }
            if !line.contains("\"error\"") || code != 1 {
                return (Class::WrongAnswer, format!("exit {code}: {}", gist(line)));
            }
            let m = missing(line, needles);
            if m.is_empty() {
                (Class::CleanError, gist(line))
            } else {
                (
                    Class::UnclearError,
                    format!("output line 1 lacks {m:?}: {}", gist(line)),
                )
            }
        }
        Expect::Streams => {
            if code == 0 && run.stdout_lines > 0 {
                (Class::Ok, gist(&stdout))
            } else {
                (
                    Class::WrongAnswer,
                    format!("exit {code}: {}", gist(&error_text)),
                )
            }
        }
        Expect::Lines { code: want, lines } => {
            if run.stdout_lines < lines.len() {
                return (
                    Class::StopsLines,
                    format!(
                        "{} of {} lines answered (exit {code}): {}",
                        run.stdout_lines,
                        lines.len(),
                        gist(&error_text)
                    ),
                );
            }
            if run.stdout_lines > lines.len() {
                return (
                    Class::WrongAnswer,
                    format!(
                        "{} lines for {} expected: {}",
                        run.stdout_lines,
                        lines.len(),
                        gist(&stdout)
                    ),
                );
            }
            for (i, (got, needles)) in stdout.lines().zip(lines).enumerate() {
                let m = missing(got, needles);
                if !m.is_empty() {
                    let class = if got.contains("\"error\"")
                        && needles
                            .iter()
                            .any(|n| !n.contains("verdict") && !n.contains("masks"))
                    {
                        if needles.iter().any(|n| {
                            n.contains("verdict") || n.contains("masks") || n.contains("count")
                        }) {
                            Class::WrongAnswer
                        } else {
                            Class::UnclearError
                        }
                    } else {
                        Class::WrongAnswer
                    };
                    let mut shown: String = got.chars().take(260).collect();
                    if shown.len() < got.len() {
                        shown.push('…');
                    }
                    return (class, format!("output line {} lacks {m:?}: {shown}", i + 1));
                }
            }
            if code != *want {
                return (
                    Class::WrongAnswer,
                    format!("exit {code}, expected {want}: {}", gist(&stderr)),
                );
            }
            let first = stdout.lines().next().unwrap_or("");
            let class = if *want == 0 {
                Class::Ok
            } else {
                Class::CleanError
            };
            (class, gist(first))
        }
    }
}
