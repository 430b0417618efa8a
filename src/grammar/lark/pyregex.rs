//! Python `re` syntax (what Lark regex literals are written in) → `regex-syntax` syntax.
//!
//! The two dialects agree on almost everything a grammar uses. This pass rewrites the few
//! spellings they disagree on and refuses, with a message naming the construct, what a finite
//! automaton cannot do (lookaround, backreferences, atomic groups, conditionals):
//!
//! | Python                       | regex-syntax        |
//! | ---------------------------- | ------------------- |
//! | `\Z`                         | `\z`                |
//! | `\0`, `\012`, `[\1]` (octal) | `\x{..}`            |
//! | `{,n}`                       | `{0,n}`             |
//! | `{` not starting a counter   | `\{`                |
//! | `\<`, `\"`, `\/`, ... (escaped punctuation that is no metacharacter) | the character |
//! | `[` inside a class, `&`, `~` | escaped (regex-syntax would read nested classes, set operations) |
//! | `[\b]`                       | `\x{8}`             |
//! | whitespace and `#` in a class under `x` | escaped (regex-syntax would skip them) |
//! | `(?#comment)`                | removed             |
//!
//! Anything else passes through unchanged, so `regex-syntax` extensions such as `\p{L}` (which
//! Lark accepts with its `regex` option) work too. The result is validated by the caller.

/// Translates one regex literal body; `verbose` is whether the `x` flag applies.
pub(super) fn translate(body: &str, verbose: bool) -> Result<String, String> {
    let chars: Vec<char> = body.chars().collect();
    let mut out = String::with_capacity(body.len() + 8);
    let mut verbose = verbose;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i = match c {
            '\\' => escape(&chars, i, false, &mut out)?,
            '[' => class(&chars, i, verbose, &mut out)?,
            '(' => group(&chars, i, &mut verbose, &mut out)?,
            '{' => brace(&chars, i, &mut out),
            '}' => {
                out.push_str("\\}");
                i + 1
            }
            '#' if verbose => {
                // A comment runs to the end of the line; copy it, regex-syntax skips it too.
                let mut j = i;
                while let Some(&d) = chars.get(j) {
                    out.push(d);
                    j += 1;
                    if d == '\n' {
                        break;
                    }
                }
                j
            }
            _ => {
                out.push(c);
                i + 1
            }
        };
    }
    Ok(out)
}

fn push_code(out: &mut String, code: u32) {
    out.push_str(&format!("\\x{{{code:X}}}"));
}

/// The escape starting at `chars[i] == '\\'`; returns the index after it.
fn escape(chars: &[char], i: usize, in_class: bool, out: &mut String) -> Result<usize, String> {
    let Some(&c) = chars.get(i + 1) else {
        return Err("the regex ends with a lone backslash".into());
    };
    let octal = |k: usize| chars.get(k).and_then(|d| d.to_digit(8));
    match c {
        '0'..='7' if c == '0' || in_class || (octal(i + 2).is_some() && octal(i + 3).is_some()) => {
            // An octal escape: `\0`, `\0o`, `\0oo`, or three octal digits (any digit in a class).
            let mut code = 0;
            let mut j = i + 1;
            while j < i + 4 {
                match octal(j) {
                    Some(d) => code = code * 8 + d,
                    None => break,
                }
                j += 1;
            }
            if code > 0o377 {
                return Err(format!("octal escape value {code:o} is above 0o377"));
            }
            push_code(out, code);
            Ok(j)
        }
        '1'..='9' => Err(format!(
            "backreference `\\{c}` is not supported: a terminal must be a regular language"
        )),
        'N' => Err("named character escapes `\\N{...}` are not supported".into()),
        'Z' if !in_class => {
            out.push_str("\\z");
            Ok(i + 2)
        }
        'b' if in_class => {
            push_code(out, 8);
            Ok(i + 2)
        }
        'p' | 'P' | 'x' | 'u' | 'U' if chars.get(i + 2) == Some(&'{') => {
            // regex-syntax's `\p{Class}` and `\x{HEX}`: copied through the closing brace.
            let Some(len) = chars
                .get(i + 3..)
                .and_then(|r| r.iter().position(|&d| d == '}'))
            else {
                return Err(format!("unterminated `\\{c}{{`"));
            };
            out.extend(chars.get(i..i + 4 + len).unwrap_or_default());
            Ok(i + 4 + len)
        }
        c if c.is_ascii_alphanumeric() => {
            out.push('\\');
            out.push(c);
            Ok(i + 2)
        }
        c if regex_syntax::is_meta_character(c) => {
            out.push('\\');
            out.push(c);
            Ok(i + 2)
        }
        c if c.is_whitespace() => {
            push_code(out, u32::from(c));
            Ok(i + 2)
        }
        c => {
            // Escaped punctuation that is no metacharacter (`\<`, `\"`, `\/`, ...) is the
            // character itself in Python; regex-syntax gives some of these other meanings.
            out.push(c);
            Ok(i + 2)
        }
    }
}

/// A character class starting at `chars[i] == '['`; returns the index after its `]`.
fn class(chars: &[char], i: usize, verbose: bool, out: &mut String) -> Result<usize, String> {
    out.push('[');
    let mut j = i + 1;
    if chars.get(j) == Some(&'^') {
        out.push('^');
        j += 1;
    }
    let first = j;
    loop {
        let Some(&c) = chars.get(j) else {
            return Err("unterminated character class `[`".into());
        };
        match c {
            ']' if j > first => {
                out.push(']');
                return Ok(j + 1);
            }
            '\\' => {
                j = escape(chars, j, true, out)?;
                continue;
            }
            ']' | '[' | '&' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '#' if verbose => out.push_str("\\#"),
            c if verbose && c.is_whitespace() => push_code(out, u32::from(c)),
            _ => out.push(c),
        }
        j += 1;
    }
}

/// A group opening at `chars[i] == '('`; returns the index after what was consumed.
fn group(chars: &[char], i: usize, verbose: &mut bool, out: &mut String) -> Result<usize, String> {
    let at = |k: usize| chars.get(i + k).copied();
    if at(1) != Some('?') {
        out.push('(');
        return Ok(i + 1);
    }
    match (at(2), at(3)) {
        (Some('='), _) => Err("lookahead `(?=...)` is not supported".into()),
        (Some('!'), _) => Err("negative lookahead `(?!...)` is not supported".into()),
        (Some('<'), Some('=')) => Err("lookbehind `(?<=...)` is not supported".into()),
        (Some('<'), Some('!')) => Err("negative lookbehind `(?<!...)` is not supported".into()),
        (Some('P'), Some('=')) => Err("backreference `(?P=name)` is not supported".into()),
        (Some('>'), _) => Err("atomic groups `(?>...)` are not supported".into()),
        (Some('('), _) => Err("conditional groups `(?(...)...)` are not supported".into()),
        (Some('#'), _) => {
            // A comment group: dropped.
            let mut j = i + 3;
            loop {
                match chars.get(j) {
                    Some(')') => return Ok(j + 1),
                    Some(_) => j += 1,
                    None => return Err("unterminated comment group `(?#`".into()),
                }
            }
        }
        (Some('P' | '<'), _) => {
            out.push_str("(?");
            Ok(i + 2)
        }
        _ => {
            // Inline flags `(?imsx-imsx)` or `(?imsx-imsx:...)`.
            let mut j = i + 2;
            let mut negated = false;
            let mut flags = String::new();
            while let Some(&c) = chars.get(j) {
                match c {
                    ':' | ')' => break,
                    '-' => negated = true,
                    'a' => return Err("the ASCII-only flag `a` is not supported".into()),
                    'L' => return Err("the locale flag `L` is not supported".into()),
                    'x' if !negated => *verbose = true,
                    _ => {}
                }
                flags.push(c);
                j += 1;
            }
            out.push_str("(?");
            out.push_str(&flags);
            Ok(j)
        }
    }
}

/// A `{` at `chars[i]`: a counted repetition if it reads as one in Python, else a literal.
fn brace(chars: &[char], i: usize, out: &mut String) -> usize {
    let digits = |mut j: usize| {
        let start = j;
        while chars.get(j).is_some_and(|c| c.is_ascii_digit()) {
            j += 1;
        }
        (chars.get(start..j).unwrap_or_default(), j)
    };
    let (lo, mut j) = digits(i + 1);
    let mut hi: Option<&[char]> = None;
    if chars.get(j) == Some(&',') {
        let (h, k) = digits(j + 1);
        hi = Some(h);
        j = k;
    }
    let closed = chars.get(j) == Some(&'}');
    if !closed || (lo.is_empty() && hi.is_none()) {
        out.push_str("\\{");
        return i + 1;
    }
    let lo: String = if lo.is_empty() {
        "0".into()
    } else {
        lo.iter().collect()
    };
    match hi {
        None => out.push_str(&format!("{{{lo}}}")),
        Some(h) => out.push_str(&format!("{{{lo},{}}}", h.iter().collect::<String>())),
    }
    j + 1
}

#[cfg(test)]
mod tests {
    use super::translate;

    fn t(s: &str) -> String {
        translate(s, false).unwrap_or_else(|e| format!("ERR {e}"))
    }

    #[test]
    fn rewrites() {
        assert_eq!(t(r"a\Z"), r"a\z");
        assert_eq!(t(r"a{,3}"), "a{0,3}");
        assert_eq!(t(r"a{2,}b{3}c{1,2}"), "a{2,}b{3}c{1,2}");
        assert_eq!(t(r"{x}"), r"\{x\}");
        assert_eq!(t(r"a{}"), r"a\{\}");
        assert_eq!(t(r#"\<\/\"\-"#), r#"</"\-"#);
        assert_eq!(t(r"[[]"), r"[\[]");
        assert_eq!(t(r"[]a]"), r"[\]a]");
        assert_eq!(t(r"[^]a]"), r"[^\]a]");
        assert_eq!(t(r"[a&&b~~]"), r"[a\&\&b\~\~]");
        assert_eq!(t(r"[\b]"), r"[\x{8}]");
        assert_eq!(t(r"\0\012[\1]"), r"\x{0}\x{A}[\x{1}]");
        assert_eq!(t(r"\101"), r"\x{41}");
        assert_eq!(t(r"a(?#note)b"), "ab");
        assert_eq!(t(r"(?P<n>a)(?i:b)"), r"(?P<n>a)(?i:b)");
        assert_eq!(t(r"\d+\.\w\p{L}"), r"\d+\.\w\p{L}");
        assert_eq!(translate("[ #]a # c", true).unwrap(), r"[\x{20}\#]a # c");
    }

    #[test]
    fn refusals() {
        for (re, word) in [
            ("a(?=b)", "lookahead"),
            ("a(?!b)", "lookahead"),
            ("(?<=a)b", "lookbehind"),
            ("(?<!a)b", "lookbehind"),
            (r"(a)\1", "backreference"),
            ("(?P<x>a)(?P=x)", "backreference"),
            ("(?>a)", "atomic"),
            ("(?(1)a|b)", "conditional"),
            ("(?a)x", "ASCII"),
            (r"\N{DIGIT ONE}", "named"),
            ("[abc", "unterminated"),
        ] {
            let e = translate(re, false).unwrap_err();
            assert!(e.contains(word), "{re}: {e}");
        }
    }
}
