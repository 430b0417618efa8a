//! A bound on the automaton a terminal's pattern compiles to.
//!
//! A regex is small as text but its automaton need not be: the NFA compiler writes counted
//! repetitions out, so `((a{1000}){1000}){1000}` (or the Lark terminal
//! `(("a" ~ 1000) ~ 1000) ~ 1000`) stands for 10⁹ states and would exhaust memory while the
//! lexer is built, long before the lexer's DFA size limit acts. Every pattern is therefore
//! measured where it is parsed, so the error names the terminal (and, from the Lark front end,
//! its file position; from the JSON Schema compiler, its JSON pointer).
//!
//! Measuring means compiling the Thompson NFA under [`MAX_PATTERN_NFA_BYTES`], which fails as
//! soon as the limit is passed, so the check itself uses bounded memory and time. Patterns whose
//! written-out size is obviously small (almost all) are not compiled twice.

use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_syntax::hir::{Class, Hir, HirKind};

/// The most heap memory, in bytes, the Thompson NFA of one pattern may take (16 MiB: about
/// 10⁶ states; a lexer DFA built from more would exceed its own size limit anyway).
pub const MAX_PATTERN_NFA_BYTES: usize = 16 << 20;

/// Patterns whose [`written_out_size`] is at most this are accepted without building their NFA:
/// at about 40 bytes per NFA state they are far below [`MAX_PATTERN_NFA_BYTES`].
const SMALL_PATTERN: u64 = 1 << 14;

/// Refuses a pattern whose Thompson NFA would take more than [`MAX_PATTERN_NFA_BYTES`]; the
/// message says why in words a grammar author can act on.
pub fn check_automaton_size(hir: &Hir) -> Result<(), String> {
    if written_out_size(hir) <= SMALL_PATTERN {
        return Ok(());
    }
    let config = thompson::Config::new()
        .nfa_size_limit(Some(MAX_PATTERN_NFA_BYTES))
        .which_captures(WhichCaptures::None)
        .shrink(false);
    match thompson::Compiler::new()
        .configure(config)
        .build_from_hir(hir)
    {
        Ok(_) => Ok(()),
        Err(e) if e.size_limit().is_some() => Err(format!(
            "the pattern's automaton exceeds the limit of {} MiB once its counted repetitions \
             are written out (nested `{{n}}` or `~ n` multiply)",
            MAX_PATTERN_NFA_BYTES >> 20
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// An estimate of a pattern's size with counted repetitions written out: bytes of literals, four
/// per range of a Unicode class, one per range of a byte class (saturating).
fn written_out_size(h: &Hir) -> u64 {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => 1,
        HirKind::Literal(l) => l.0.len() as u64,
        HirKind::Class(Class::Unicode(c)) => 4 * c.ranges().len() as u64,
        HirKind::Class(Class::Bytes(c)) => c.ranges().len() as u64,
        HirKind::Capture(c) => written_out_size(&c.sub),
        HirKind::Repetition(r) => {
            // `x{n,m}` is m copies of x; `x{n,}` is n copies and a loop.
            let copies = r.max.unwrap_or(r.min.saturating_add(1)).max(1);
            written_out_size(&r.sub).saturating_mul(u64::from(copies))
        }
        HirKind::Concat(subs) | HirKind::Alternation(subs) => {
            subs.iter().fold(subs.len() as u64, |n, s| {
                n.saturating_add(written_out_size(s))
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check_automaton_size;

    fn check(re: &str) -> Result<(), String> {
        check_automaton_size(&regex_syntax::parse(re).expect("the test regexes parse"))
    }

    #[test]
    fn nested_counted_repetitions_are_refused_without_building_them() {
        for re in [
            "((a{1000}){1000}){1000}",
            "(?:(?:a{1000}){1000}){1000}",
            "[a-z]{1000000}",
        ] {
            let e = check(re).unwrap_err();
            assert!(e.contains("MiB") && e.contains("written out"), "{re}: {e}");
        }
    }

    #[test]
    fn ordinary_patterns_pass() {
        for re in [
            r"[a-zA-Z_][a-zA-Z0-9_]*",
            r"\w{1,200}",
            r"(a{100}){100}",
            r#""([^"\\]|\\.)*""#,
            r"\p{L}+",
        ] {
            assert_eq!(check(re), Ok(()), "{re}");
        }
    }
}
