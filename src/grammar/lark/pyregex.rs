//! Python `re` syntax (what Lark regex literals are written in) → `regex-syntax` syntax.
//!
//! The two dialects agree on almost everything a grammar uses. This pass rewrites the few
//! spellings they disagree on and refuses, with a message naming the construct, what a finite
//! automaton cannot do (lookaround, backreferences, atomic groups, conditionals), and what
//! regex-syntax would accept with another meaning: a quantifier after a quantifier (`a++` is
//! possessive in Python 3.11 and an error before; `a**` an error), and global flags after the
//! start of the regex (`a(?i)b`: Python applies them to the whole regex before 3.11 and
//! rejects them from 3.11 on; regex-syntax applies them from there on):
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

/// What the last token read was, for Python's rules on what may follow it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Prev {
    /// Nothing yet but global flag groups `(?i)` and comments: global flags may still come.
    Start,
    /// A quantifier (`*`, `+`, `?`, `{m,n}`): `?` makes it lazy, `+` possessive.
    Quantifier,
    /// A lazy quantifier (`*?`): no further quantifier may follow.
    Lazy,
    /// Anything else.
    Atom,
}

/// Translates one regex literal body; `verbose` is whether the `x` flag applies.
pub(super) fn translate(body: &str, verbose: bool) -> Result<String, String> {
    let chars: Vec<char> = body.chars().collect();
    let mut out = String::with_capacity(body.len() + 8);
    let mut verbose = verbose;
    let mut prev = Prev::Start;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        (i, prev) = match c {
            '\\' => (escape(&chars, i, false, &mut out)?, Prev::Atom),
            '[' => (class(&chars, i, verbose, &mut out)?, Prev::Atom),
            '(' => {
                let (next, kind) = group(&chars, i, &mut verbose, &mut out)?;
                match kind {
                    Group::GlobalFlags if prev != Prev::Start => {
                        return Err(format!(
                            "global flags `{}` at character {} are not supported: Python \
                             applies them to the whole regex (before 3.11) or rejects them \
                             (3.11 on) unless they start it; use a scoped group `(?flags:...)`",
                            chars[i..next].iter().collect::<String>(),
                            i + 1
                        ))
                    }
                    Group::GlobalFlags | Group::Comment => (next, prev),
                    Group::Open => (next, Prev::Atom),
                }
            }
            '{' => match brace(&chars, i, &mut out) {
                (next, true) => (next, quantifier(prev, &chars, i, next)?),
                (next, false) => (next, Prev::Atom),
            },
            '*' | '+' | '?' => {
                let next = quantifier(prev, &chars, i, i + 1)?;
                out.push(c);
                (i + 1, next)
            }
            '}' => {
                out.push_str("\\}");
                (i + 1, Prev::Atom)
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
                (j, prev)
            }
            c if verbose && c.is_whitespace() => {
                out.push(c);
                (i + 1, prev)
            }
            _ => {
                out.push(c);
                (i + 1, Prev::Atom)
            }
        };
    }
    Ok(out)
}

/// The state after the quantifier `chars[i..end]`, which follows `prev`. Python reads `+`
/// after a quantifier as possessive (3.11 on; an error before) and any other quantifier there
/// as an error; regex-syntax would silently read both as a repetition of the repetition.
fn quantifier(prev: Prev, chars: &[char], i: usize, end: usize) -> Result<Prev, String> {
    let text = || chars[i..end].iter().collect::<String>();
    match (prev, chars[i]) {
        (Prev::Quantifier, '?') => Ok(Prev::Lazy),
        (Prev::Quantifier, '+') => Err(format!(
            "possessive quantifier `+` at character {} is not supported (Python before 3.11 \
             rejects it)",
            i + 1
        )),
        (Prev::Quantifier | Prev::Lazy, _) => Err(format!(
            "multiple repeat: quantifier `{}` at character {} follows another quantifier",
            text(),
            i + 1
        )),
        _ => Ok(Prev::Quantifier),
    }
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

/// What a `(` opened.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Group {
    /// A group whose body follows (capturing, named, non-capturing, scoped flags).
    Open,
    /// Global flags `(?imsx)`, copied whole.
    GlobalFlags,
    /// A comment `(?#...)`, dropped.
    Comment,
}

/// A group opening at `chars[i] == '('`; returns the index after what was consumed.
fn group(
    chars: &[char],
    i: usize,
    verbose: &mut bool,
    out: &mut String,
) -> Result<(usize, Group), String> {
    let at = |k: usize| chars.get(i + k).copied();
    if at(1) != Some('?') {
        out.push('(');
        return Ok((i + 1, Group::Open));
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
                    Some(')') => return Ok((j + 1, Group::Comment)),
                    Some(_) => j += 1,
                    None => return Err("unterminated comment group `(?#`".into()),
                }
            }
        }
        (Some('P' | '<'), _) => {
            out.push_str("(?");
            Ok((i + 2, Group::Open))
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
            if chars.get(j) == Some(&')') {
                out.push(')');
                return Ok((j + 1, Group::GlobalFlags));
            }
            Ok((j, Group::Open))
        }
    }
}

/// A `{` at `chars[i]`: a counted repetition if it reads as one in Python, else a literal.
/// Returns the index after what was consumed and whether it was a counted repetition.
fn brace(chars: &[char], i: usize, out: &mut String) -> (usize, bool) {
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
        return (i + 1, false);
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
    (j + 1, true)
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
    fn quantifier_suffixes_and_leading_flags_keep_their_meaning() {
        assert_eq!(t("a+?b*?c??d{2,3}?"), "a+?b*?c??d{2,3}?");
        assert_eq!(t(r"\++[+]+(a+)+"), r"\++[+]+(a+)+");
        assert_eq!(t("a{x}+"), r"a\{x\}+");
        assert_eq!(t("(?i)(?#c)(?s)ab"), "(?i)(?s)ab");
        assert_eq!(t("(?i:a)(?s:b)"), "(?i:a)(?s:b)");
        assert_eq!(translate(" (?i) a", true).unwrap(), " (?i) a");
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
            ("a++", "possessive quantifier `+` at character 3"),
            ("a*+", "possessive"),
            ("a{2}+", "possessive"),
            ("a?+", "possessive"),
            ("a**", "multiple repeat"),
            ("a*?+", "multiple repeat"),
            ("a+{2}", "multiple repeat"),
            ("a(?i)b", "global flags `(?i)` at character 2"),
            ("(a(?s))", "global flags"),
            ("(?#c)a|(?m)b", "global flags"),
        ] {
            let e = translate(re, false).unwrap_err();
            assert!(e.contains(word), "{re}: {e}");
        }
    }
}
