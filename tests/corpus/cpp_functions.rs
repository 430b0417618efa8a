//! Small C++ programs cut from TheAlgorithms/C-Plus-Plus (`tests/data/cpp_algorithms.jsonl.gz`,
//! MIT): each namespace-level function of a file, with the file's system `#include`s, as a
//! program of its own. The default model's corpus teaches them (those g++ accepts alone), and
//! `tests/cpp_gpp.rs` holds the C++ grammar to every one g++ accepts.
//!
//! Found with a brace scan over the text with comments, literals and directives blanked, not a
//! parser: a function is a `{ ... }` at namespace level whose head looks like a signature.

/// The files' texts, in the data set's order.
pub fn algorithms_files() -> Vec<String> {
    super::lines(include_bytes!("../data/cpp_algorithms.jsonl.gz"))
        .iter()
        .map(|line| {
            let file: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            file["text"].as_str().expect("text").to_string()
        })
        .collect()
}

/// The shortest function taken (bytes).
const MIN_FUNCTION: usize = 60;

/// The namespace-level functions of a C++ file, each as a small program: the file's system
/// `#include`s (and `using namespace std;` where the file has it), then the function,
/// comments removed and dedented.
pub fn standalone_functions(text: &str) -> Vec<String> {
    let (code, shape) = strip_comments(text);
    let mut header = String::new();
    for line in code.lines() {
        let line = line.trim();
        if line.starts_with("#include <") {
            header.push_str(line);
            header.push('\n');
        }
    }
    if code.lines().any(|l| l.trim() == "using namespace std;") {
        header.push_str("using namespace std;\n");
    }
    let mut programs = Vec::new();
    for (start, end) in function_spans(&shape) {
        let line_start = code[..start].rfind('\n').map_or(0, |i| i + 1);
        let function = dedent(&code[line_start..=end]);
        if function.len() >= MIN_FUNCTION {
            programs.push(format!("{header}\n{function}\n"));
        }
    }
    programs
}

/// The text without comments (a block comment becomes a space, a line comment nothing; lines
/// left blank are dropped), and the same text with the insides of string and character
/// literals and whole preprocessor lines blanked, for finding braces.
fn strip_comments(text: &str) -> (String, String) {
    let b = text.as_bytes();
    let (mut code, mut shape) = (Vec::with_capacity(b.len()), Vec::with_capacity(b.len()));
    let mut i = 0;
    let mut line_start = true;
    let mut preprocessor = false;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i = (i + 2).min(b.len());
            code.push(b' ');
            shape.push(b' ');
            continue;
        }
        if c == b'"' || c == b'\'' {
            code.push(c);
            shape.push(c);
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                let step = if b[i] == b'\\' { 2 } else { 1 };
                for k in 0..step {
                    if let Some(&x) = b.get(i + k) {
                        code.push(x);
                        shape.push(b'x');
                    }
                }
                i += step;
            }
            if i < b.len() && b[i] == c {
                code.push(c);
                shape.push(c);
                i += 1;
            }
            continue;
        }
        if line_start && c == b'#' {
            preprocessor = true;
        }
        if c == b'\n' {
            preprocessor = false;
            line_start = true;
        } else if !c.is_ascii_whitespace() {
            line_start = false;
        }
        code.push(c);
        shape.push(if preprocessor && c != b'\n' { b' ' } else { c });
        i += 1;
    }
    // Drop the lines comments left blank, in both texts alike (they have equal lengths and
    // the same line breaks).
    let code = String::from_utf8_lossy(&code).into_owned();
    let shape = String::from_utf8_lossy(&shape).into_owned();
    let (mut kept_code, mut kept_shape) = (String::new(), String::new());
    for (c, s) in code.split('\n').zip(shape.split('\n')) {
        if c.trim().is_empty() {
            continue;
        }
        kept_code.push_str(c.trim_end());
        kept_code.push('\n');
        kept_shape.push_str(&s[..c.trim_end().len().min(s.len())]);
        kept_shape.push('\n');
    }
    (kept_code, kept_shape)
}

/// Byte spans (header start, closing brace) of function definitions whose enclosing braces
/// are all namespaces (not classes or other functions), found on the blanked text.
fn function_spans(shape: &str) -> Vec<(usize, usize)> {
    #[derive(PartialEq)]
    enum Brace {
        Namespace,
        Function(usize),
        Other,
    }
    let b = shape.as_bytes();
    let mut stack: Vec<Brace> = Vec::new();
    let mut boundary = 0;
    let mut spans = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b';' => boundary = i + 1,
            b'{' => {
                let head = shape[boundary..i].trim();
                let head_start = i - shape[boundary..i].trim_start().len();
                let at_namespace_level = stack.iter().all(|s| *s == Brace::Namespace);
                let kind = if head.starts_with("namespace") || head.starts_with("extern \"C\"") {
                    Brace::Namespace
                } else if at_namespace_level && looks_like_function(head) {
                    Brace::Function(head_start)
                } else {
                    Brace::Other
                };
                stack.push(kind);
                boundary = i + 1;
            }
            b'}' => {
                if let Some(Brace::Function(start)) = stack.pop() {
                    spans.push((start, i));
                }
                boundary = i + 1;
            }
            _ => {}
        }
    }
    spans
}

/// Whether the text before a `{` is a function's head: a parameter list closed before any
/// trailing qualifiers, not a control statement, class, initializer or lambda.
fn looks_like_function(head: &str) -> bool {
    let Some(open) = head.find('(') else {
        return false;
    };
    let first = head.split_whitespace().next().unwrap_or("");
    let control = [
        "if", "for", "while", "switch", "catch", "do", "else", "return", "struct", "class",
        "union", "enum", "typedef", "using",
    ];
    let tail = head[head.rfind(')').unwrap_or(0) + 1..].trim();
    let tail_ok = tail.is_empty()
        || tail
            .split_whitespace()
            .all(|w| ["const", "noexcept", "override", "final"].contains(&w))
        || tail.starts_with("->");
    !control.contains(&first)
        && !head[..open].contains('=')
        && !head.contains("[]")
        && head.contains(')')
        && tail_ok
}

/// Removes the indentation every non-empty line shares.
fn dedent(text: &str) -> String {
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for line in text.lines() {
        out.push_str(line.get(indent..).unwrap_or(line.trim_start()));
        out.push('\n');
    }
    out.trim_end().to_string()
}
