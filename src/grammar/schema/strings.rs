//! JSON string lexemes for string schemas: the regex of the *encoded* string (quotes, escapes)
//! whose *decoded* value satisfies `minLength`/`maxLength`, `pattern` or `format`, and of
//! exact strings (`const`/`enum` values).
//!
//! Escapes. A decoded character has several encodings (`é`, `\u00e9`, `\u00E9`). Without a
//! constraint every encoding is accepted (the `json.lark` string lexeme). Under a length bound
//! the string is a sequence of *units* (a raw character, a short escape, a non-surrogate `\uXXXX`
//! or a surrogate pair), each decoding to one code point, so the count is exact. Under `pattern`,
//! `format` and for exact strings, each decoded character is accepted in its canonical
//! encodings only: raw where JSON allows it, and `\"`, `\\`, `\/` or `/`, a short escape
//! (`\n`, ...) or `\u00XX` for control characters. This is what serializers write (serde_json,
//! Python's `json` with `ensure_ascii=False`); `\u` escapes of other characters are not
//! accepted there (an under-approximation, documented in grammars/README.md). The unanchored
//! padding around a `pattern` accepts every encoding.
//!
//! Patterns are ECMA-262 regexes matched anywhere in the decoded string: `\d`, `\w`, `\s` and
//! `.` get their ECMA meaning, `^`/`$` anchor at the ends of the string, and a pattern the
//! regex engine cannot compile (look-around, backreferences) is an error.

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Look, Repetition};

use crate::grammar::{Pattern, MAX_JSON_STRING_BOUND};

/// The string lexeme of `json.lark`: any JSON string.
pub const ANY_STRING: &str = r#""([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*""#;

/// One encoded unit that decodes to exactly one code point.
const UNIT: &str = crate::grammar::JSON_UNIT;

/// Why a string constraint could not be turned into a regex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StringIssue {
    /// The pattern does not compile (message from the parser, or the construct refused).
    BadPattern(String),
    /// A keyword that cannot be enforced together with the others.
    Unsupported { keyword: String, reason: String },
}

/// The constraints of one string schema.
#[derive(Debug, Default, Clone)]
pub struct StringSpec<'a> {
    pub min_length: u64,
    pub max_length: Option<u64>,
    pub pattern: Option<&'a str>,
    pub format: Option<&'a str>,
}

/// Formats enforced by a regex of ASCII text (the same decoded and encoded). `json-pointer` and
/// `relative-json-pointer`, whose text is any character, are enforced too ([`format_regex`]).
pub const FORMATS: &[(&str, &str)] = &[
    ("date", DATE),
    ("time", TIME),
    ("date-time", DATE_TIME),
    ("email", EMAIL),
    ("uuid", UUID),
    ("uri", URI),
    ("uri-reference", URI_REFERENCE),
    ("ipv4", IPV4),
    ("ipv6", IPV6),
    ("hostname", HOSTNAME),
    ("duration", DURATION),
];

/// Formats whose regex is over decoded text (any character), encoded like a `pattern`.
const DECODED_FORMATS: &[(&str, &str)] = &[
    ("json-pointer", JSON_POINTER),
    ("relative-json-pointer", RELATIVE_JSON_POINTER),
    ("uri-template", URI_TEMPLATE),
];

// Leap years (for 02-29): `YY(0[48]|[2468][048]|[13579][26])` or `(0[48]|...)00`.
const DATE: &str = "(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)-02-29)";
const TIME: &str =
    "(?:(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?(?:[zZ]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9]))|23:59:60(?:\\.[0-9]+)?(?:[zZ]|[+-]00:00))";
const DATE_TIME: &str = "(?:(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)-02-29)[tT](?:(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?(?:[zZ]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9]))|23:59:60(?:\\.[0-9]+)?(?:[zZ]|[+-]00:00)))";
const EMAIL: &str = "(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*)";
const UUID: &str =
    "(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})";
/// RFC 3986 `URI`, as the `jsonschema` crate checks it: a scheme, then `//` and an authority
/// (`userinfo@`, a host of unreserved characters, sub-delimiters and `%XX`, `:` and digits), or
/// a path not starting with `//`; then `?query` and `#fragment`. ASCII only. Bracketed IP
/// literals (`http://[::1]/`) are not admitted (the crate checks those with another parser).
const URI: &str = "(?:[A-Za-z][A-Za-z0-9+.-]*:(?://(?:(?:[A-Za-z0-9._~!$&'()*+,;=-]|:|%[0-9A-Fa-f]{2})*@)?(?:[A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*(?::[0-9]*)?(?:/(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@/]|%[0-9A-Fa-f]{2})*)?|/(?:(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@]|%[0-9A-Fa-f]{2})(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@/]|%[0-9A-Fa-f]{2})*)?|(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@]|%[0-9A-Fa-f]{2})(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@/]|%[0-9A-Fa-f]{2})*)?(?:\\?(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@/?]|%[0-9A-Fa-f]{2})*)?(?:#(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@/?]|%[0-9A-Fa-f]{2})*)?)";
/// RFC 3986 `URI-reference`: a URI, or a relative reference (`//authority…`, `/path`, or a
/// path whose first segment has no `:`, which would read as a scheme), with query and fragment.
const URI_REFERENCE: &str = "(?:(?:[A-Za-z][A-Za-z0-9+.-]*:(?://(?:(?:[A-Za-z0-9._~!$&'()*+,;=-]|:|%[0-9A-Fa-f]{2})*@)?(?:[A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*(?::[0-9]*)?(?:/(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@/]|%[0-9A-Fa-f]{2})*)?|/(?:(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@]|%[0-9A-Fa-f]{2})(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@/]|%[0-9A-Fa-f]{2})*)?|(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@]|%[0-9A-Fa-f]{2})(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@/]|%[0-9A-Fa-f]{2})*)?(?:\\?(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@/?]|%[0-9A-Fa-f]{2})*)?(?:#(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@/?]|%[0-9A-Fa-f]{2})*)?)|(?://(?:(?:[A-Za-z0-9._~!$&'()*+,;=-]|:|%[0-9A-Fa-f]{2})*@)?(?:[A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*(?::[0-9]*)?(?:/(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@/]|%[0-9A-Fa-f]{2})*)?|/(?:(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@]|%[0-9A-Fa-f]{2})(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@/]|%[0-9A-Fa-f]{2})*)?|(?:[A-Za-z0-9._~!$&'()*+,;=-]|@|%[0-9A-Fa-f]{2})+(?:/(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@/]|%[0-9A-Fa-f]{2})*)?)?(?:\\?(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@/?]|%[0-9A-Fa-f]{2})*)?(?:#(?:[A-Za-z0-9._~!$&'()*+,;=-]|[:@/?]|%[0-9A-Fa-f]{2})*)?)";
const IPV4: &str = "(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";

/// Eight groups of 1-4 hex digits; or `X::Y`, `::` standing for at least one zero group, with
/// at most seven groups in `X` and `Y` together; or either form with a dotted IPv4 address as
/// its last two groups (RFC 4291 2.2, as `std::net::Ipv6Addr` parses it: no zone index).
const IPV6: &str = "(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,7}:|(?:[0-9A-Fa-f]{1,4}:){1,6}:[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,5}(?::[0-9A-Fa-f]{1,4}){1,2}|(?:[0-9A-Fa-f]{1,4}:){1,4}(?::[0-9A-Fa-f]{1,4}){1,3}|(?:[0-9A-Fa-f]{1,4}:){1,3}(?::[0-9A-Fa-f]{1,4}){1,4}|(?:[0-9A-Fa-f]{1,4}:){1,2}(?::[0-9A-Fa-f]{1,4}){1,5}|[0-9A-Fa-f]{1,4}:(?::[0-9A-Fa-f]{1,4}){1,6}|:(?:(?::[0-9A-Fa-f]{1,4}){1,7}|:)|(?:(?:[0-9A-Fa-f]{1,4}:){6}|::(?:[0-9A-Fa-f]{1,4}:){0,5}|(?:[0-9A-Fa-f]{1,4}:){1}:(?:[0-9A-Fa-f]{1,4}:){0,4}|(?:[0-9A-Fa-f]{1,4}:){2}:(?:[0-9A-Fa-f]{1,4}:){0,3}|(?:[0-9A-Fa-f]{1,4}:){3}:(?:[0-9A-Fa-f]{1,4}:){0,2}|(?:[0-9A-Fa-f]{1,4}:){4}:(?:[0-9A-Fa-f]{1,4}:){0,1}|(?:[0-9A-Fa-f]{1,4}:){5}:)(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9]))";
/// Dot-separated labels of 1-63 letters, digits and hyphens, no label starting or ending with a
/// hyphen (RFC 1123), and none with hyphens as its 3rd and 4th characters: validators decode
/// those as IDNA A-labels (`xn--…`, Punycode, RFC 5891), which this regex does not admit. The
/// whole name has at most [`HOSTNAME_MAX_LEN`] characters, counted by the lexer.
const HOSTNAME: &str = "(?:[A-Za-z0-9](?:[A-Za-z0-9-]?[A-Za-z0-9]|[A-Za-z0-9-][A-Za-z0-9-][A-Za-z0-9]|[A-Za-z0-9-](?:[A-Za-z0-9][A-Za-z0-9-]|-[A-Za-z0-9])[A-Za-z0-9-]{0,58}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]?[A-Za-z0-9]|[A-Za-z0-9-][A-Za-z0-9-][A-Za-z0-9]|[A-Za-z0-9-](?:[A-Za-z0-9][A-Za-z0-9-]|-[A-Za-z0-9])[A-Za-z0-9-]{0,58}[A-Za-z0-9])?)*)";
/// RFC 3339 Appendix A: `P`, then years, months, days in that order (any of them, but not years
/// and days without months), or weeks alone; then `T` and hours, minutes, seconds likewise.
const DURATION: &str = "P(?:(?:[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?|[0-9]+M(?:[0-9]+D)?|[0-9]+D)(?:T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S))?|T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)|[0-9]+W)";
/// RFC 6901: reference tokens after `/`, `~` only as `~0` or `~1`.
const JSON_POINTER: &str = "(?:/(?:[^/~]|~[01])*)*";
/// A non-negative integer without leading zeros, then `#` or a JSON pointer (draft
/// `relative-json-pointer-01`).
const RELATIVE_JSON_POINTER: &str = "(?:0|[1-9][0-9]*)(?:#|(?:/(?:[^/~]|~[01])*)+)?";
/// RFC 6570 (level 4, with errata 6937's apostrophe): literal characters (any but controls,
/// space, quote, angle brackets, percent, backslash, caret, backtick, braces and bar) and `%XX`,
/// and expressions `{op? varspec,…}`, a varspec being a dotted name of `[A-Za-z0-9_]` and `%XX`
/// with a prefix length `:1`–`:9999` or `*`.
const URI_TEMPLATE: &str = "(?:[^\\x00-\\x20\"<>%\\\\^`{|}\\x7F]|%[0-9A-Fa-f]{2}|\\{[+#./;?&=,!@|]?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*(?::[1-9][0-9]{0,3}|\\*)?(?:,(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*(?::[1-9][0-9]{0,3}|\\*)?)*\\})*";
/// The longest host name (RFC 1123 2.1, without a trailing dot).
const HOSTNAME_MAX_LEN: u64 = 253;

/// The formats of the JSON Schema vocabularies (drafts 4 to 2020-12). Any other `format` is
/// an annotation: the specification asks validators not to fail on a format they do not know
/// (OpenAPI's `byte`, `int32`, `password`, ...), and the `jsonschema` crate ignores them, so
/// lacuna does too. A standard format lacuna cannot enforce is refused instead.
pub const STANDARD_FORMATS: &[&str] = &[
    "date",
    "date-time",
    "duration",
    "email",
    "hostname",
    "idn-email",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "iri",
    "iri-reference",
    "json-pointer",
    "regex",
    "relative-json-pointer",
    "time",
    "uri",
    "uri-reference",
    "uri-template",
    "uuid",
];

/// The most state pairs [`regexes_intersect`] visits before it answers "maybe".
const MAX_INTERSECTION_PAIRS: usize = 1 << 16;

/// Whether some text matches both regexes in full: a walk of the product of their DFAs.
/// Answers `true` ("may intersect") where a DFA cannot be built within the limits of one
/// pattern or the walk passes [`MAX_INTERSECTION_PAIRS`], so `false` is always exact.
pub fn regexes_intersect(a: &str, b: &str) -> bool {
    use regex_automata::dfa::{dense, Automaton};
    use regex_automata::util::start;
    use regex_automata::Anchored;
    let build = |re: &str| {
        dense::Builder::new()
            .configure(crate::grammar::automaton_size::pattern_dfa_config())
            .thompson(crate::grammar::automaton_size::pattern_nfa_config())
            .build(re)
            .ok()
    };
    let (Some(da), Some(db)) = (build(a), build(b)) else {
        return true;
    };
    let anchored = start::Config::new().anchored(Anchored::Yes);
    let (Ok(sa), Ok(sb)) = (da.start_state(&anchored), db.start_state(&anchored)) else {
        return true;
    };
    let mut seen: hashbrown::HashSet<_> = [(sa, sb)].into_iter().collect();
    let mut stack = vec![(sa, sb)];
    while let Some((x, y)) = stack.pop() {
        if da.is_match_state(da.next_eoi_state(x)) && db.is_match_state(db.next_eoi_state(y)) {
            return true;
        }
        for byte in 0..=255u8 {
            let (nx, ny) = (da.next_state(x, byte), db.next_state(y, byte));
            if da.is_dead_state(nx) || db.is_dead_state(ny) || da.is_quit_state(nx) {
                continue;
            }
            if seen.insert((nx, ny)) {
                if seen.len() > MAX_INTERSECTION_PAIRS {
                    return true;
                }
                stack.push((nx, ny));
            }
        }
    }
    false
}

/// Whether a `format` is one of the [`STANDARD_FORMATS`] (others are annotations).
pub fn is_standard_format(name: &str) -> bool {
    STANDARD_FORMATS.contains(&name)
}

/// The format regex of a format name (over decoded text), if it is enforced.
pub fn format_regex(name: &str) -> Option<&'static str> {
    FORMATS
        .iter()
        .chain(DECODED_FORMATS)
        .find(|(n, _)| *n == name)
        .map(|(_, r)| *r)
}

/// The regex of the JSON strings (quotes included) satisfying `spec`, or `None` if no string
/// does (`minLength > maxLength`); an error where only counting can enforce its lengths (see
/// [`string_pattern`]).
pub fn string_regex(spec: &StringSpec) -> Result<Option<String>, StringIssue> {
    match string_pattern(spec)? {
        None => Ok(None),
        Some(Pattern::Regex(r)) => Ok(Some(r)),
        Some(_) => Err(StringIssue::Unsupported {
            keyword: if spec.max_length.is_some() {
                "maxLength"
            } else {
                "minLength"
            }
            .into(),
            reason: "this length bound is counted by the lexer, which this place cannot use".into(),
        }),
    }
}

/// The lexer pattern of the JSON strings (quotes included) satisfying `spec`, or `None` if no
/// string does (`minLength > maxLength`): a regex where one says everything (no length
/// bound, or one the `pattern` or `format` implies), else a counted [`Pattern::JsonString`]
/// (the lexer counts the characters of what the regex matches).
///
/// Length bounds are counted, not unrolled into `"UNIT{min,max}"`: an unrolled bound is a
/// chain of DFA states that every hole closure of the checker visits, ~40 µs of checker build
/// per unit (`maxLength: 256`: 9 ms, 0.35 ms counted; MaskBench's Snowplow schemas, p99 72 ms
/// with bounds up to 256 unrolled, 19 ms all counted: `python3 eval/maskbench.py`).
pub fn string_pattern(spec: &StringSpec) -> Result<Option<Pattern>, StringIssue> {
    let max = match spec.format {
        // A length limit no regex of labels can say: counted with the others.
        Some("hostname") => Some(
            spec.max_length
                .map_or(HOSTNAME_MAX_LEN, |m| m.min(HOSTNAME_MAX_LEN)),
        ),
        _ => spec.max_length,
    };
    if max.is_some_and(|m| m < spec.min_length) {
        return Ok(None);
    }
    let length_set = spec.min_length > 0 || max.is_some();
    let counted = |regex: Option<String>| {
        let bound = u64::from(MAX_JSON_STRING_BOUND);
        for (kw, v) in [("minLength", Some(spec.min_length)), ("maxLength", max)] {
            if v.is_some_and(|v| v > bound) {
                return Err(StringIssue::Unsupported {
                    keyword: kw.into(),
                    reason: format!("lengths above {bound} are not enforced"),
                });
            }
        }
        Ok(Some(Pattern::JsonString {
            min: spec.min_length as u32,
            max: max.map(|m| m as u32),
            regex,
        }))
    };
    let body = match (spec.pattern, spec.format) {
        (Some(_), Some(_)) => {
            return Err(StringIssue::Unsupported {
                keyword: "format".into(),
                reason: "`pattern` and `format` on one string cannot be combined".into(),
            })
        }
        (Some(p), None) => Some(pattern_hir(p)?),
        (None, Some(f)) => {
            let re = format_regex(f).ok_or_else(|| StringIssue::Unsupported {
                keyword: "format".into(),
                reason: format!("format {f:?} is not one of the enforced formats"),
            })?;
            let hir = parse(re).expect("format regexes parse");
            Some(Decoded {
                char_len: char_len(&hir),
                hir,
                // ASCII formats read the same encoded; the others are encoded like patterns.
                encoded: FORMATS.iter().any(|(n, _)| *n == f),
            })
        }
        (None, None) => None,
    };
    let Some(body) = body else {
        return if length_set {
            counted(None)
        } else {
            Ok(Some(Pattern::Regex(ANY_STRING.to_string())))
        };
    };
    let regex = format!("\"{}\"", body.to_encoded()?);
    let (lo, hi) = body.char_len;
    let implied = lo >= spec.min_length && max.is_none_or(|m| hi.is_some_and(|h| h <= m));
    if length_set && !implied {
        return counted(Some(regex));
    }
    Ok(Some(Pattern::Regex(regex)))
}

/// A regex over decoded text with the range of its lengths in characters.
struct Decoded {
    hir: Hir,
    /// The regex is already in encoded form (format regexes: ASCII, no characters to escape).
    encoded: bool,
    char_len: (u64, Option<u64>),
}

impl Decoded {
    /// The encoded regex, refused if its automaton would be too large to build.
    fn to_encoded(&self) -> Result<String, StringIssue> {
        if self.encoded {
            return Ok(self.hir.to_string());
        }
        let hir = encode(&self.hir)?;
        crate::grammar::check_automaton_size(&hir).map_err(StringIssue::BadPattern)?;
        crate::grammar::check_dfa_size(&hir).map_err(StringIssue::BadPattern)?;
        Ok(hir.to_string())
    }
}

/// The minimum and maximum number of characters a decoded regex matches.
fn char_len(h: &Hir) -> (u64, Option<u64>) {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => (0, Some(0)),
        HirKind::Literal(l) => {
            let n = String::from_utf8_lossy(&l.0).chars().count() as u64;
            (n, Some(n))
        }
        HirKind::Class(_) => (1, Some(1)),
        HirKind::Capture(c) => char_len(&c.sub),
        HirKind::Repetition(r) => {
            let (lo, hi) = char_len(&r.sub);
            let max = match (r.max, hi) {
                (_, Some(0)) => Some(0),
                (Some(m), Some(h)) => Some(h.saturating_mul(m as u64)),
                _ => None,
            };
            (lo.saturating_mul(r.min as u64), max)
        }
        HirKind::Concat(subs) => subs.iter().fold((0, Some(0)), |(a, b), s| {
            let (lo, hi) = char_len(s);
            (a + lo, b.zip(hi).map(|(x, y)| x + y))
        }),
        HirKind::Alternation(subs) => {
            let all: Vec<_> = subs.iter().map(char_len).collect();
            let lo = all.iter().map(|p| p.0).min().unwrap_or(0);
            let hi = all
                .iter()
                .map(|p| p.1)
                .try_fold(0, |m, h| h.map(|h| m.max(h)));
            (lo, hi)
        }
    }
}

fn parse(re: &str) -> Result<Hir, String> {
    crate::grammar::parse_regex(re)
}

/// An ECMA pattern's top-level branches over decoded text, each with whether it is anchored at
/// its start and at its end; a branch with an anchor or word boundary elsewhere is refused.
pub(super) fn pattern_branches(pattern: &str) -> Result<Vec<(bool, Hir, bool)>, StringIssue> {
    let translated = ecma_to_rust(pattern);
    let hir = parse(&translated).map_err(StringIssue::BadPattern)?;
    let branches = split_anchors(hir);
    if branches
        .iter()
        .any(|(_, body, _)| !body.properties().look_set().is_empty())
    {
        return Err(StringIssue::BadPattern(
            "anchors or word boundaries inside the pattern are not supported".into(),
        ));
    }
    Ok(branches)
}

/// Parses an ECMA pattern into a decoded regex with its anchoring resolved: each top-level
/// branch is padded with `.*`-like text at the ends that are not anchored.
fn pattern_hir(pattern: &str) -> Result<Decoded, StringIssue> {
    let mut branches = vec![];
    for (start, body, end) in pattern_branches(pattern)? {
        let mut parts = vec![];
        if !start {
            parts.push(any_text());
        }
        parts.push(body);
        if !end {
            parts.push(any_text());
        }
        branches.push(Hir::concat(parts));
    }
    let hir = Hir::alternation(branches);
    Ok(Decoded {
        char_len: char_len(&hir),
        hir,
        encoded: false,
    })
}

/// The marker for "any decoded text" in a pattern's padding; [`encode`] turns it into any
/// sequence of units in every encoding.
fn any_text() -> Hir {
    Hir::capture(regex_syntax::hir::Capture {
        index: u32::MAX,
        name: Some("__any".into()),
        sub: Box::new(Hir::repetition(Repetition {
            min: 0,
            max: None,
            greedy: true,
            sub: Box::new(Hir::class(Class::Unicode(ClassUnicode::new([
                ClassUnicodeRange::new('\0', char::MAX),
            ])))),
        })),
    })
}

/// Splits a pattern into top-level branches with whether each is anchored at its start / end.
fn split_anchors(h: Hir) -> Vec<(bool, Hir, bool)> {
    match h.into_kind() {
        HirKind::Alternation(subs) => subs.into_iter().flat_map(split_anchors).collect(),
        HirKind::Capture(c)
            if c.sub.properties().look_set().contains(Look::Start)
                || c.sub.properties().look_set().contains(Look::End) =>
        {
            split_anchors(*c.sub)
        }
        HirKind::Concat(mut subs) => {
            let start = matches!(
                subs.first().map(Hir::kind),
                Some(HirKind::Look(Look::Start))
            );
            if start {
                subs.remove(0);
            }
            let end = matches!(subs.last().map(Hir::kind), Some(HirKind::Look(Look::End)));
            if end {
                subs.pop();
            }
            // regex-syntax lifts a prefix that every branch shares out of an alternation
            // (`^in$|^out$` is parsed as `^(?:in$|out$)`): what is left is one group of
            // branches that carry the rest of the anchors, each anchored at the shared ends.
            if subs.len() == 1 && !subs[0].properties().look_set().is_empty() {
                let inner = subs.pop().expect("one part");
                if matches!(inner.kind(), HirKind::Alternation(_) | HirKind::Capture(_)) {
                    return split_anchors(inner)
                        .into_iter()
                        .map(|(s, body, e)| (s || start, body, e || end))
                        .collect();
                }
                subs.push(inner);
            }
            vec![(start, Hir::concat(subs), end)]
        }
        HirKind::Look(Look::Start) => vec![(true, Hir::empty(), false)],
        HirKind::Look(Look::End) => vec![(false, Hir::empty(), true)],
        kind => vec![(false, rebuild(kind), false)],
    }
}

fn rebuild(kind: HirKind) -> Hir {
    match kind {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(l) => Hir::literal(l.0),
        HirKind::Class(c) => Hir::class(c),
        HirKind::Look(l) => Hir::look(l),
        HirKind::Repetition(r) => Hir::repetition(r),
        HirKind::Capture(c) => Hir::capture(c),
        HirKind::Concat(s) => Hir::concat(s),
        HirKind::Alternation(s) => Hir::alternation(s),
    }
}

/// Rewrites the ECMA-262 escapes whose meaning differs in `regex-syntax` (`\d`, `\w`, `\s` are
/// ASCII / ECMA white space, `.` excludes all line terminators).
fn ecma_to_rust(p: &str) -> String {
    const S: &str = "\\t\\n\\x0B\\x0C\\r \\xA0\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}";
    let mut out = String::new();
    let mut in_class = false;
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let (pos, neg) = match n {
                    'd' | 'D' => ("0-9", n == 'D'),
                    'w' | 'W' => ("A-Za-z0-9_", n == 'W'),
                    's' | 'S' => (S, n == 'S'),
                    _ => {
                        out.push('\\');
                        out.push(n);
                        continue;
                    }
                };
                match (in_class, neg) {
                    (true, false) => out.push_str(pos),
                    (_, true) => out.push_str(&format!("[^{pos}]")),
                    (false, false) => out.push_str(&format!("[{pos}]")),
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                // A leading `]` is literal in regex-syntax but closes the class in ECMA; keep
                // the text (rare) as it is.
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '.' if !in_class => out.push_str("[^\\n\\r\\x{2028}\\x{2029}]"),
            _ => out.push(c),
        }
    }
    out
}

/// The encoded form of a decoded regex: every character class is replaced by the canonical
/// encodings of its characters; the padding marker by any units.
fn encode(h: &Hir) -> Result<Hir, StringIssue> {
    Ok(match h.kind() {
        HirKind::Empty => Hir::empty(),
        HirKind::Look(_) => {
            return Err(StringIssue::BadPattern(
                "anchors or word boundaries inside the pattern are not supported".into(),
            ))
        }
        HirKind::Literal(l) => {
            let s = String::from_utf8_lossy(&l.0).into_owned();
            Hir::concat(
                s.chars()
                    .map(|c| encode_class(&ClassUnicode::new([ClassUnicodeRange::new(c, c)])))
                    .collect(),
            )
        }
        HirKind::Class(Class::Unicode(c)) => encode_class(c),
        HirKind::Class(Class::Bytes(_)) => {
            return Err(StringIssue::BadPattern(
                "byte classes are not supported".into(),
            ))
        }
        HirKind::Capture(c) if c.name.as_deref() == Some("__any") => {
            let unit = parse(UNIT).expect("UNIT parses");
            Hir::repetition(Repetition {
                min: 0,
                max: None,
                greedy: true,
                sub: Box::new(unit),
            })
        }
        HirKind::Capture(c) => encode(&c.sub)?,
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            min: r.min,
            max: r.max,
            greedy: true,
            sub: Box::new(printable_repeated(encode(&r.sub)?)),
        }),
        HirKind::Concat(s) => Hir::concat(s.iter().map(encode).collect::<Result<_, _>>()?),
        HirKind::Alternation(s) => {
            Hir::alternation(s.iter().map(encode).collect::<Result<_, _>>()?)
        }
    })
}

/// `sub`, grouped when it is itself a repetition. The encoded regex travels as text, and
/// regex-syntax prints a repetition of a repetition without a group: `(?:x+)?` (captures are
/// dropped by [`encode`]) would come out as `x+?`, which reads back as a lazy `x+` and loses
/// the empty match (issue 18: `^([a-z]+)?:c$` refused `":c"`).
fn printable_repeated(sub: Hir) -> Hir {
    if matches!(sub.kind(), HirKind::Repetition(_)) {
        Hir::capture(regex_syntax::hir::Capture {
            index: 1,
            name: None,
            sub: Box::new(sub),
        })
    } else {
        sub
    }
}

/// The canonical encodings of a set of decoded characters (see the module docs).
fn encode_class(c: &ClassUnicode) -> Hir {
    let mut specials = ClassUnicode::new([
        ClassUnicodeRange::new('\0', '\x1f'),
        ClassUnicodeRange::new('"', '"'),
        ClassUnicodeRange::new('\\', '\\'),
    ]);
    let mut raw = c.clone();
    raw.difference(&specials);
    specials.intersect(c);
    let has = |ch: char| c.ranges().iter().any(|r| r.start() <= ch && ch <= r.end());
    let mut alts = vec![];
    if !raw.ranges().is_empty() {
        alts.push(Hir::class(Class::Unicode(raw)));
    }
    for (ch, esc) in [
        ('"', "\\\""),
        ('\\', "\\\\"),
        ('/', "\\/"),
        ('\u{8}', "\\b"),
        ('\u{c}', "\\f"),
        ('\n', "\\n"),
        ('\r', "\\r"),
        ('\t', "\\t"),
    ] {
        if has(ch) {
            alts.push(Hir::literal(esc.as_bytes()));
        }
    }
    for hi in 0..2u32 {
        let mut lo_digits = ClassUnicode::empty();
        for lo in 0..16u32 {
            let ch = char::from_u32(hi * 16 + lo).expect("control char");
            if has(ch) {
                for d in format!("{lo:x}{lo:X}").chars() {
                    lo_digits.push(ClassUnicodeRange::new(d, d));
                }
            }
        }
        if !lo_digits.ranges().is_empty() {
            alts.push(Hir::concat(vec![
                Hir::literal(format!("\\u00{hi}").into_bytes()),
                Hir::class(Class::Unicode(lo_digits)),
            ]));
        }
    }
    Hir::alternation(alts)
}

/// The regex of the JSON strings (quotes included) whose decoded value is exactly `s`.
pub fn literal_regex(s: &str) -> String {
    let lit = Hir::literal(s.as_bytes());
    format!("\"{}\"", encode(&lit).expect("literals encode"))
}

/// Whole decoded strings of an enforced format: its regex, and its length limit if it has one
/// (`hostname`).
pub struct FormatMatcher {
    regex: regex_automata::meta::Regex,
    max_len: Option<u64>,
}

impl FormatMatcher {
    /// Whether `s` is a string of the format.
    pub fn is_match(&self, s: &str) -> bool {
        self.max_len.is_none_or(|m| s.chars().count() as u64 <= m) && self.regex.is_match(s)
    }
}

/// A matcher for whole decoded strings of an enforced format.
pub fn format_matcher(format: &str) -> Option<FormatMatcher> {
    format_regex(format).map(|re| FormatMatcher {
        regex: regex_automata::meta::Regex::new(&format!("^(?:{re})$"))
            .expect("format regexes compile"),
        max_len: (format == "hostname").then_some(HOSTNAME_MAX_LEN),
    })
}

/// The regex of the whole decoded strings that a JSON-Schema pattern matches (anchored at
/// both ends, its unanchored ends padded).
pub(super) fn pattern_full_match(pattern: &str) -> Result<Hir, StringIssue> {
    let d = pattern_hir(pattern)?;
    Ok(Hir::concat(vec![
        Hir::look(Look::Start),
        strip_markers(&d.hir),
        Hir::look(Look::End),
    ]))
}

/// A matcher for decoded strings that a JSON-Schema pattern matches.
///
/// Matchers are kept per thread by pattern text (at most [`MATCHERS_KEPT`], then all are
/// dropped): a schema asks for one pattern's matcher once per property name and per string
/// site, and building one (a DFA) costs far more than matching — a 540 KB JsonSchemaStore
/// schema spent 2.5 s rebuilding them.
pub fn pattern_matcher(pattern: &str) -> Result<regex_automata::meta::Regex, StringIssue> {
    thread_local! {
        static MATCHERS: std::cell::RefCell<
            hashbrown::HashMap<String, Result<regex_automata::meta::Regex, StringIssue>>,
        > = std::cell::RefCell::new(hashbrown::HashMap::new());
    }
    MATCHERS.with(|kept| {
        if let Some(m) = kept.borrow().get(pattern) {
            return m.clone();
        }
        let built = pattern_full_match(pattern).and_then(|hir| {
            regex_automata::meta::Regex::builder()
                .build_from_hir(&hir)
                .map_err(|e| StringIssue::BadPattern(e.to_string()))
        });
        let mut kept = kept.borrow_mut();
        if kept.len() >= MATCHERS_KEPT {
            kept.clear();
        }
        kept.insert(pattern.to_string(), built.clone());
        built
    })
}

/// The most pattern matchers [`pattern_matcher`] keeps per thread.
pub const MATCHERS_KEPT: usize = 256;

/// Whether a decoded string matches a JSON-Schema pattern (used to check property names and
/// enum values against patterns while compiling).
pub fn pattern_matches(pattern: &str, s: &str) -> Result<bool, StringIssue> {
    Ok(pattern_matcher(pattern)?.is_match(s))
}

fn strip_markers(h: &Hir) -> Hir {
    match h.kind() {
        HirKind::Capture(c) => strip_markers(&c.sub),
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            min: r.min,
            max: r.max,
            greedy: r.greedy,
            sub: Box::new(strip_markers(&r.sub)),
        }),
        HirKind::Concat(s) => Hir::concat(s.iter().map(strip_markers).collect()),
        HirKind::Alternation(s) => Hir::alternation(s.iter().map(strip_markers).collect()),
        _ => h.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::regexes_intersect;
    use proptest::prelude::*;

    /// Small regexes over `ab`, from pieces that make intersections empty and not.
    fn regex() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "a", "b", "a*", "b*", "(ab)*", "(a|b)", "(a|b)*", "aa", "(bb)*b",
        ]);
        prop::collection::vec(piece, 1..4).prop_map(|p| p.concat())
    }

    fn full(re: &str) -> regex_automata::meta::Regex {
        regex_automata::meta::Regex::new(&format!("^(?:{re})$")).unwrap()
    }

    proptest! {
        /// Against brute force: no text up to 10 bytes matches both when the walk says none,
        /// and one does when it says some (every such pair has a witness that short here).
        #[test]
        fn intersection_agrees_with_brute_force(a in regex(), b in regex()) {
            let mut texts = vec![String::new()];
            let mut layer = vec![String::new()];
            for _ in 0..10 {
                layer = layer
                    .iter()
                    .flat_map(|t| [format!("{t}a"), format!("{t}b")])
                    .collect();
                texts.extend(layer.iter().cloned());
            }
            let (ra, rb) = (full(&a), full(&b));
            let witness = texts.iter().any(|t| ra.is_match(t) && rb.is_match(t));
            prop_assert_eq!(regexes_intersect(&a, &b), witness, "{} & {}", a, b);
        }
    }
}
