//! Tokens of Lark grammar text.
//!
//! Newlines are tokens (a definition ends at the end of its line unless the next line starts
//! with `|`); spaces, tabs, `//` and `#` comments and backslash line continuations are skipped.
//! String literals are decoded here with Lark's escape rules, so later stages see their values;
//! regex literals keep their body as written (minus the delimiters) for [`super::pyregex`].

use super::{syntax, unsupported, GrammarError, Pos};

/// One token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Tok {
    /// A rule name: lowercase, optionally with one leading `_`.
    Rule(String),
    /// A terminal name: uppercase, optionally with one leading `_`.
    Term(String),
    /// A string literal, decoded; `insensitive` is the `i` flag.
    Str {
        value: String,
        insensitive: bool,
    },
    /// A regex literal: its body as written and its flags (from `imsxu`).
    Regex {
        body: String,
        flags: String,
    },
    Number(i64),
    /// `%name`.
    Directive(String),
    Colon,
    Pipe,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Star,
    Plus,
    Question,
    Bang,
    Tilde,
    Dot,
    DotDot,
    Arrow,
    Newline,
    Eof,
}

impl Tok {
    /// How the token is named in error messages.
    pub(super) fn describe(&self) -> String {
        let punct = |s: &str| format!("`{s}`");
        match self {
            Tok::Rule(n) => format!("rule name `{n}`"),
            Tok::Term(n) => format!("terminal name `{n}`"),
            Tok::Str { value, .. } => format!("string {value:?}"),
            Tok::Regex { body, flags } => format!("regex `/{body}/{flags}`"),
            Tok::Number(n) => format!("number `{n}`"),
            Tok::Directive(d) => format!("directive `%{d}`"),
            Tok::Colon => punct(":"),
            Tok::Pipe => punct("|"),
            Tok::LParen => punct("("),
            Tok::RParen => punct(")"),
            Tok::LBracket => punct("["),
            Tok::RBracket => punct("]"),
            Tok::LBrace => punct("{"),
            Tok::RBrace => punct("}"),
            Tok::Comma => punct(","),
            Tok::Star => punct("*"),
            Tok::Plus => punct("+"),
            Tok::Question => punct("?"),
            Tok::Bang => punct("!"),
            Tok::Tilde => punct("~"),
            Tok::Dot => punct("."),
            Tok::DotDot => punct(".."),
            Tok::Arrow => punct("->"),
            Tok::Newline => "end of line".to_string(),
            Tok::Eof => "end of file".to_string(),
        }
    }
}

/// A token and where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Token {
    pub tok: Tok,
    pub pos: Pos,
}

/// Splits `src` into tokens; the last one is always [`Tok::Eof`].
pub(super) fn tokenize(src: &str, origin: &str) -> Result<Vec<Token>, GrammarError> {
    let mut lx = Lexer {
        chars: src.chars().collect(),
        i: 0,
        line: 1,
        column: 1,
        origin,
        out: Vec::new(),
    };
    lx.run()?;
    Ok(lx.out)
}

struct Lexer<'a> {
    chars: Vec<char>,
    i: usize,
    line: usize,
    column: usize,
    origin: &'a str,
    out: Vec<Token>,
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl Lexer<'_> {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column,
        }
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn push(&mut self, tok: Tok, pos: Pos) {
        self.out.push(Token { tok, pos });
    }

    fn err(&self, pos: Pos, message: impl Into<String>) -> GrammarError {
        syntax(self.origin, pos, message)
    }

    fn run(&mut self) -> Result<(), GrammarError> {
        while let Some(c) = self.peek(0) {
            let pos = self.pos();
            match c {
                '\n' => {
                    self.bump();
                    if !matches!(
                        self.out.last(),
                        Some(Token {
                            tok: Tok::Newline,
                            ..
                        })
                    ) {
                        self.push(Tok::Newline, pos);
                    }
                }
                '/' if self.peek(1) == Some('/') => self.skip_line(),
                '#' => self.skip_line(),
                '\\' => self.continuation(pos)?,
                c if c.is_whitespace() => {
                    self.bump();
                }
                '"' => self.string(pos)?,
                '/' => self.regex(pos)?,
                '%' => self.directive(pos)?,
                '-' => {
                    if self.peek(1) == Some('>') {
                        self.bump();
                        self.bump();
                        self.push(Tok::Arrow, pos);
                    } else if self.peek(1).is_some_and(|d| d.is_ascii_digit()) {
                        self.bump();
                        let n = self.number(pos)?;
                        self.push(Tok::Number(-n), pos);
                    } else {
                        return Err(self.err(pos, "unexpected `-` (expected `->`)"));
                    }
                }
                '.' => {
                    self.bump();
                    if self.peek(0) == Some('.') {
                        self.bump();
                        self.push(Tok::DotDot, pos);
                    } else {
                        self.push(Tok::Dot, pos);
                    }
                }
                c if c.is_ascii_digit() => {
                    let n = self.number(pos)?;
                    self.push(Tok::Number(n), pos);
                }
                c if c.is_ascii_alphabetic() || c == '_' => self.name(pos)?,
                _ => {
                    let tok = match c {
                        ':' => Tok::Colon,
                        '|' => Tok::Pipe,
                        '(' => Tok::LParen,
                        ')' => Tok::RParen,
                        '[' => Tok::LBracket,
                        ']' => Tok::RBracket,
                        '{' => Tok::LBrace,
                        '}' => Tok::RBrace,
                        ',' => Tok::Comma,
                        '*' => Tok::Star,
                        '+' => Tok::Plus,
                        '?' => Tok::Question,
                        '!' => Tok::Bang,
                        '~' => Tok::Tilde,
                        _ => return Err(self.err(pos, format!("unexpected character {c:?}"))),
                    };
                    self.bump();
                    self.push(tok, pos);
                }
            }
        }
        let pos = self.pos();
        self.push(Tok::Eof, pos);
        Ok(())
    }

    /// Skips a comment up to (not including) the end of the line.
    fn skip_line(&mut self) {
        while self.peek(0).is_some_and(|c| c != '\n') {
            self.bump();
        }
    }

    /// A backslash followed by spaces and a newline joins two lines.
    fn continuation(&mut self, pos: Pos) -> Result<(), GrammarError> {
        let mut k = 1;
        while matches!(self.peek(k), Some(' ' | '\t' | '\r')) {
            k += 1;
        }
        if self.peek(k) != Some('\n') {
            return Err(self.err(
                pos,
                "unexpected `\\` (a backslash outside a literal must end the line)",
            ));
        }
        for _ in 0..=k {
            self.bump();
        }
        Ok(())
    }

    fn number(&mut self, pos: Pos) -> Result<i64, GrammarError> {
        let mut n: i64 = 0;
        while let Some(d) = self.peek(0).and_then(|c| c.to_digit(10)) {
            self.bump();
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(i64::from(d)))
                .ok_or_else(|| self.err(pos, "number too large"))?;
        }
        Ok(n)
    }

    fn name(&mut self, pos: Pos) -> Result<(), GrammarError> {
        let mut name = String::new();
        while let Some(c) = self.peek(0).filter(|&c| is_name_char(c)) {
            self.bump();
            name.push(c);
        }
        if name.starts_with("__") {
            return Err(self.err(
                pos,
                format!("names starting with `__` are reserved (found `{name}`)"),
            ));
        }
        let body = name.strip_prefix('_').unwrap_or(&name);
        let starts_with_letter = body.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
        let has_lower = body.chars().any(|c| c.is_ascii_lowercase());
        let has_upper = body.chars().any(|c| c.is_ascii_uppercase());
        let tok = match (starts_with_letter, has_lower, has_upper) {
            (true, true, false) => Tok::Rule(name),
            (true, false, true) => Tok::Term(name),
            _ => {
                return Err(self.err(
                    pos,
                    format!(
                        "illegal name `{name}`: rule names are lowercase and terminal names \
                         uppercase, both starting with a letter (after an optional `_`)"
                    ),
                ))
            }
        };
        self.push(tok, pos);
        Ok(())
    }

    fn directive(&mut self, pos: Pos) -> Result<(), GrammarError> {
        self.bump();
        let mut name = String::new();
        while let Some(c) = self.peek(0).filter(|&c| is_name_char(c)) {
            self.bump();
            name.push(c);
        }
        if name.is_empty() {
            return Err(self.err(pos, "expected a directive name after `%`"));
        }
        self.push(Tok::Directive(name), pos);
        Ok(())
    }

    /// A string literal, decoded as Lark decodes it: `\\` and `\"` stand for the character,
    /// `\n \t \r \f \xHH \uHHHH \UHHHHHHHH` for what they name, and any other escape is kept
    /// as written (backslash included).
    fn string(&mut self, pos: Pos) -> Result<(), GrammarError> {
        self.bump();
        let mut value = String::new();
        loop {
            let esc_pos = self.pos();
            match self.bump() {
                None | Some('\n') => return Err(self.err(pos, "unterminated string literal")),
                Some('"') => break,
                Some('\\') => match self.bump() {
                    None | Some('\n') => return Err(self.err(pos, "unterminated string literal")),
                    Some('\\') => value.push('\\'),
                    Some('"') => value.push('"'),
                    Some('n') => value.push('\n'),
                    Some('t') => value.push('\t'),
                    Some('r') => value.push('\r'),
                    Some('f') => value.push('\x0c'),
                    Some(k @ ('x' | 'u' | 'U')) => {
                        let digits = match k {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        value.push(self.hex_escape(k, digits, esc_pos)?);
                    }
                    Some(other) => {
                        value.push('\\');
                        value.push(other);
                    }
                },
                Some(c) => value.push(c),
            }
        }
        let insensitive = self.peek(0) == Some('i') && !self.peek(1).is_some_and(is_name_char);
        if insensitive {
            self.bump();
        }
        self.push(Tok::Str { value, insensitive }, pos);
        Ok(())
    }

    fn hex_escape(&mut self, kind: char, digits: usize, pos: Pos) -> Result<char, GrammarError> {
        let mut code: u32 = 0;
        for _ in 0..digits {
            let d = self.peek(0).and_then(|c| c.to_digit(16)).ok_or_else(|| {
                self.err(
                    pos,
                    format!("invalid escape `\\{kind}`: expected {digits} hex digits"),
                )
            })?;
            self.bump();
            code = code * 16 + d;
        }
        char::from_u32(code).ok_or_else(|| {
            self.err(
                pos,
                format!("escape `\\{kind}{code:0digits$x}` is not a Unicode scalar value"),
            )
        })
    }

    /// A regex literal `/.../flags`. Its body may span lines only with the `x` flag.
    fn regex(&mut self, pos: Pos) -> Result<(), GrammarError> {
        self.bump();
        let mut body = String::new();
        loop {
            match self.bump() {
                None => return Err(self.err(pos, "unterminated regex literal")),
                Some('/') => break,
                Some('\\') => {
                    body.push('\\');
                    match self.bump() {
                        Some(c) => body.push(c),
                        None => return Err(self.err(pos, "unterminated regex literal")),
                    }
                }
                Some(c) => body.push(c),
            }
        }
        let mut flags = String::new();
        while let Some(c) = self.peek(0).filter(|&c| is_name_char(c)) {
            let flag_pos = self.pos();
            match c {
                'i' | 'm' | 's' | 'x' | 'u' => flags.push(c),
                'l' => {
                    return Err(unsupported(
                        self.origin,
                        flag_pos,
                        "regex flag `l` (locale-dependent matching)",
                    ))
                }
                _ => {
                    return Err(self.err(
                        flag_pos,
                        format!("unknown regex flag `{c}` (expected i, m, s, x or u)"),
                    ))
                }
            }
            self.bump();
        }
        if body.contains('\n') && !flags.contains('x') {
            return Err(self.err(
                pos,
                "unterminated regex literal (a regex may span lines only with the `x` flag)",
            ));
        }
        self.push(Tok::Regex { body, flags }, pos);
        Ok(())
    }
}
