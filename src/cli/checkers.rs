//! What `check` and `mask` share: the input, the vocabulary of a run, and its checkers.
//!
//! A run builds one checker per grammar spec on first use and keeps it (its caches serve every
//! later line); a spec that fails to load is remembered with its message, so later lines naming
//! it fail at once instead of compiling it again. At most [`MAX_CHECKERS`] specs are kept, the
//! least recently used dropped first, so a stream of lines naming ever new specs (or one file by
//! ever new spellings) runs in bounded memory. The vocabulary is read once per run and shared by
//! every checker.

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::Arc;
use std::time::Duration;

use hashbrown::HashMap;
use serde::Serialize;
use serde_json::Value;

use crate::checker::Checker;
use crate::deadline::Deadline;
use crate::grammar::schema::SchemaOptions;
use crate::grammar::spec;
use crate::vocab::{VocabError, Vocabulary};

/// The longest token canvas read by default (`--max-positions`).
pub const DEFAULT_MAX_POSITIONS: usize = 131_072;

/// The longest input line read, in bytes: far above any canvas (a token canvas of
/// `DEFAULT_MAX_POSITIONS` ids is about 1 MB), far below what would strain memory.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// The lines a command reads: a name for messages, and the stream.
pub struct Input {
    name: String,
    reader: Box<dyn Read>,
}

/// The input: standard input for `None` or `-`, else the named file (not a directory).
pub fn open_input(file: Option<&str>) -> Result<Input, String> {
    Ok(match file {
        None | Some("-") => Input {
            name: "standard input".into(),
            reader: Box::new(std::io::stdin()),
        },
        Some(path) => {
            let f = std::fs::File::open(path).map_err(|e| format!("cannot open {path}: {e}"))?;
            if f.metadata().is_ok_and(|m| m.is_dir()) {
                return Err(format!("cannot read {path}: it is a directory"));
            }
            Input {
                name: path.to_string(),
                reader: Box::new(f),
            }
        }
    })
}

/// Reads the vocabulary of a `tokenizer.json`; `eos` names its end-of-output tokens (the usual
/// names when empty).
pub fn load_vocabulary(path: &str, eos: &[String]) -> Result<Arc<Vocabulary>, String> {
    let names: Vec<&str> = eos.iter().map(String::as_str).collect();
    match Vocabulary::from_tokenizer_file(std::path::Path::new(path), &names) {
        Ok(v) => Ok(Arc::new(v)),
        Err(e @ VocabError::NoEos { .. }) => Err(format!("{e} with --eos NAME")),
        Err(e) => Err(e.to_string()),
    }
}

/// Grammar specs whose checker (or failure) a run keeps.
pub const MAX_CHECKERS: usize = 16;

/// The checkers of one run, by grammar spec. See the [module docs](self).
pub struct Checkers {
    options: SchemaOptions,
    vocab: Option<Arc<Vocabulary>>,
    /// Each spec's checker or failure, with when it was last used (a count of lookups).
    by_spec: HashMap<String, (Result<Checker, String>, u64)>,
    lookups: u64,
    /// The wall-clock time one line's work may take once its checker is built.
    line_timeout: Option<Duration>,
}

impl Checkers {
    /// Checkers that compile JSON Schemas leniently or not, and read token canvases of `vocab`
    /// if one is given.
    pub fn new(lenient: bool, vocab: Option<Arc<Vocabulary>>) -> Checkers {
        Checkers {
            options: SchemaOptions::lenient(lenient),
            vocab,
            by_spec: HashMap::new(),
            lookups: 0,
            line_timeout: None,
        }
    }

    /// Gives each line's work (checks, completion, masks) `timeout` from when [`Checkers::get`]
    /// hands its checker out; past it the answers are `unknown`. Building a grammar's checker
    /// is not counted: its own limits bound it.
    pub fn with_line_timeout(mut self, timeout: Option<Duration>) -> Checkers {
        self.line_timeout = timeout;
        self
    }

    /// The checker of `spec`, built on first use; the error it failed with, every time (while
    /// the spec is kept).
    pub fn get(&mut self, spec: &str) -> Result<&mut Checker, String> {
        self.lookups += 1;
        if !self.by_spec.contains_key(spec) {
            if self.by_spec.len() >= MAX_CHECKERS {
                let oldest = self
                    .by_spec
                    .iter()
                    .min_by_key(|(_, (_, used))| *used)
                    .map(|(k, _)| k.clone())
                    .expect("the map is full");
                self.by_spec.remove(&oldest);
            }
            let built = self.build(spec);
            self.by_spec.insert(spec.to_string(), (built, 0));
        }
        let (built, used) = self.by_spec.get_mut(spec).expect("inserted above");
        *used = self.lookups;
        match built {
            Ok(checker) => {
                checker.set_deadline(match self.line_timeout {
                    Some(t) => Deadline::after(t),
                    None => Deadline::never(),
                });
                Ok(checker)
            }
            Err(e) => Err(e.clone()),
        }
    }

    /// How many specs are kept now.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.by_spec.len()
    }

    fn build(&self, spec_text: &str) -> Result<Checker, String> {
        let (grammar, warnings) =
            spec::load_with(spec_text, &self.options).map_err(|e| e.to_string())?;
        for w in warnings {
            eprintln!("lacuna: warning: {spec_text}: {w}");
        }
        match &self.vocab {
            Some(vocab) => Checker::with_vocabulary(grammar, vocab.clone()),
            None => Checker::new(grammar),
        }
        .map_err(|e| e.to_string())
    }
}

/// The grammar spec of a line: its own, else the command's.
pub fn spec_of<'a>(own: Option<&'a str>, default: Option<&'a str>) -> Result<&'a str, String> {
    own.or(default)
        .ok_or_else(|| "no grammar: give --grammar or a \"grammar\" field".to_string())
}

/// The answer for a line that could not be checked: its `id` (`null` if it could not be read),
/// its line number, and what was wrong.
#[derive(Serialize)]
pub struct ErrorLine<'a> {
    pub id: &'a Value,
    pub line: usize,
    pub error: String,
}

/// What a command answers for one input line: its JSON answer, or the line's `id` (`null` if
/// it could not be read) and what was wrong.
pub type LineAnswer = Result<serde_json::Result<String>, (Value, String)>;

/// Reads `input` line by line (blank lines skipped) and writes one JSON line to standard output
/// for each: `answer(line)`, or an [`ErrorLine`] where it failed, after which the run goes on.
/// Returns the number of lines that failed. A line longer than [`MAX_LINE_BYTES`] ends the
/// run with an error naming it: no canvas is that long, and a stream without line breaks
/// (`/dev/zero`) must not be buffered whole.
pub fn answer_lines(
    input: Input,
    mut answer: impl FnMut(&[u8]) -> LineAnswer,
) -> Result<usize, String> {
    answer_lines_limited(input, MAX_LINE_BYTES, &mut answer)
}

fn answer_lines_limited(
    input: Input,
    max_line: usize,
    answer: &mut impl FnMut(&[u8]) -> LineAnswer,
) -> Result<usize, String> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut errors = 0;
    let name = input.name;
    let mut reader = BufReader::new(input.reader);
    let mut line = Vec::new();
    for n in 0.. {
        line.clear();
        match read_line(&mut reader, &mut line, max_line)
            .map_err(|e| format!("cannot read {name} at line {}: {e}", n + 1))?
        {
            LineRead::End => break,
            LineRead::TooLong => {
                return Err(format!(
                    "{name}: line {} is longer than {max_line} bytes (no canvas is); stopped",
                    n + 1
                ))
            }
            LineRead::Line => {}
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let json = match answer(&line) {
            Ok(json) => json,
            Err((id, error)) => {
                errors += 1;
                serde_json::to_string(&ErrorLine {
                    id: &id,
                    line: n + 1,
                    error,
                })
            }
        }
        .expect("answer lines serialize");
        writeln!(out, "{json}").map_err(|e| format!("cannot write output: {e}"))?;
    }
    Ok(errors)
}

enum LineRead {
    Line,
    End,
    TooLong,
}

/// Reads one line (without its `\n`) into `buf`, holding at most `max` bytes of it.
fn read_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<LineRead> {
    let mut any = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(if any { LineRead::Line } else { LineRead::End });
        }
        any = true;
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if buf.len() + take > max {
            return Ok(LineRead::TooLong);
        }
        buf.extend_from_slice(&chunk[..take]);
        reader.consume(take + done as usize);
        if done {
            return Ok(LineRead::Line);
        }
    }
}

/// A line as text. A line that is not UTF-8 gets an error naming the byte, with the line's `id`
/// where the rest of the line still reads as a JSON object.
pub fn utf8(line: &[u8]) -> Result<&str, (Value, String)> {
    std::str::from_utf8(line).map_err(|e| {
        let id = id_of(&String::from_utf8_lossy(line));
        (id, format!("invalid UTF-8 at byte {}", e.valid_up_to()))
    })
}

/// The `id` of a line that reads as a JSON object; `null` otherwise.
pub fn id_of(text: &str) -> Value {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_keeps_at_most_max_checkers_specs_the_most_recent_ones() {
        let dir = std::env::temp_dir().join(format!("lacuna-checkers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("g.lark");
        std::fs::write(&file, "start: \"a\"+\n").unwrap();
        let mut checkers = Checkers::new(false, None);
        // One file by ever new spellings: `dir/./g.lark`, `dir/././g.lark`, ...
        let spelling = |k: usize| format!("{}/{}g.lark", dir.display(), "./".repeat(k));
        for k in 0..3 * MAX_CHECKERS {
            assert!(checkers.get(&spelling(k)).unwrap().accepts(b"aaa"));
            assert!(checkers.get("json").is_ok());
            assert!(checkers.len() <= MAX_CHECKERS);
        }
        // `json`, used on every line, was never the least recently used.
        assert!(checkers.by_spec.contains_key("json"));
        let missing = format!("{}/missing.lark", dir.display());
        let first = checkers.get(&missing).unwrap_err();
        assert!(first.contains("missing.lark"), "{first}");
        assert_eq!(checkers.get(&missing).unwrap_err(), first);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
mod line_tests {
    use super::*;

    #[test]
    fn lines_are_read_whole_up_to_the_limit_and_no_further() {
        let text = b"ab\n\ncde\nfghij";
        let mut r = BufReader::with_capacity(2, &text[..]);
        let mut lines = Vec::new();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match read_line(&mut r, &mut buf, 4).unwrap() {
                LineRead::Line => lines.push(String::from_utf8(buf.clone()).unwrap()),
                LineRead::End => break,
                LineRead::TooLong => {
                    lines.push("<too long>".into());
                    break;
                }
            }
        }
        assert_eq!(lines, ["ab", "", "cde", "<too long>"]);
    }

    #[test]
    fn a_line_that_is_not_utf8_keeps_its_id() {
        let (id, e) = utf8(b"{\"id\": 7, \"canvas\": [\"\xff\"]}").unwrap_err();
        assert_eq!(id, serde_json::json!(7));
        assert!(e.contains("byte 22"), "{e}");
    }
}
