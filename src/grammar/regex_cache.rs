//! Parsed regexes, kept for the life of the process.
//!
//! Every grammar a process builds parses its terminals' regexes twice (once when the grammar
//! is checked, once when its lexer is built), and the grammars a process builds share most of
//! them: every JSON Schema's grammar has JSON's string, number and whitespace terminals and
//! the same few `format` regexes. Parsing (regex-syntax's parser and its Unicode classes) was
//! a tenth of building a typical schema's checker, all of it repeated work. So a parse is
//! looked up here first, by the regex's text.
//!
//! The cache is bounded — regexes of at most [`MAX_CACHED_REGEX_BYTES`] bytes, at most
//! [`MAX_CACHED_REGEXES`] of them holding at most [`MAX_CACHED_HIR_BYTES`] in all (a short
//! regex of Unicode classes parses to many ranges), emptied when full — so a stream of
//! distinct grammars cannot grow it without bound. It only ever holds what parsing would
//! return, so a hit and a miss give the same [`Hir`]; errors are not kept (they are rare, and
//! their message depends on nothing else).

use std::sync::{Mutex, OnceLock};

use hashbrown::HashMap;
use regex_syntax::hir::Hir;

/// Longer regexes (an enumeration of thousands of words) are parsed every time: their text
/// alone would crowd the cache, and few grammars share them.
pub const MAX_CACHED_REGEX_BYTES: usize = 4096;

/// Entries kept before the cache is emptied.
pub const MAX_CACHED_REGEXES: usize = 4096;

/// The parsed regexes' estimated size ([`hir_bytes`]) kept before the cache is emptied.
pub const MAX_CACHED_HIR_BYTES: usize = 32 << 20;

/// One parsed regex, and whether its automaton was found small enough
/// ([`super::check_automaton_size`]), which is as costly as the parse and as repeatable.
#[derive(Clone)]
struct Parsed {
    hir: Hir,
    size_checked: bool,
}

#[derive(Default)]
struct Cache {
    map: HashMap<String, Parsed>,
    /// The entries' [`hir_bytes`], summed.
    bytes: usize,
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Cache::default()))
}

/// A parsed regex's heap size, roughly: its nodes, class ranges and literal bytes.
fn hir_bytes(hir: &Hir) -> usize {
    use regex_syntax::hir::{Class, HirKind};
    let mut bytes = 0;
    let mut stack = vec![hir];
    while let Some(h) = stack.pop() {
        bytes += std::mem::size_of::<Hir>() + 16;
        match h.kind() {
            HirKind::Literal(l) => bytes += l.0.len(),
            HirKind::Class(Class::Unicode(c)) => bytes += 8 * c.ranges().len(),
            HirKind::Class(Class::Bytes(c)) => bytes += 2 * c.ranges().len(),
            HirKind::Repetition(r) => stack.push(&r.sub),
            HirKind::Capture(c) => stack.push(&c.sub),
            HirKind::Concat(subs) | HirKind::Alternation(subs) => stack.extend(subs.iter()),
            HirKind::Empty | HirKind::Look(_) => {}
        }
    }
    bytes
}

fn lookup(re: &str) -> Option<Parsed> {
    if re.len() > MAX_CACHED_REGEX_BYTES {
        return None;
    }
    // A poisoned lock only means another thread panicked between two statements that leave
    // the map consistent; its entries are still right.
    let cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    cache.map.get(re).cloned()
}

fn store(re: &str, parsed: Parsed) {
    if re.len() > MAX_CACHED_REGEX_BYTES {
        return;
    }
    let bytes = hir_bytes(&parsed.hir);
    if bytes > MAX_CACHED_HIR_BYTES / 16 {
        return;
    }
    let mut cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    let cache = &mut *cache;
    if let Some(old) = cache.map.get_mut(re) {
        *old = parsed;
        return;
    }
    if cache.map.len() >= MAX_CACHED_REGEXES || cache.bytes + bytes > MAX_CACHED_HIR_BYTES {
        cache.map.clear();
        cache.bytes = 0;
    }
    cache.bytes += bytes;
    cache.map.insert(re.to_string(), parsed);
}

/// `re` parsed by `parse`, from the cache when it was parsed before.
pub(crate) fn parsed<E>(re: &str, parse: impl FnOnce(&str) -> Result<Hir, E>) -> Result<Hir, E> {
    if let Some(p) = lookup(re) {
        return Ok(p.hir);
    }
    let hir = parse(re)?;
    store(
        re,
        Parsed {
            hir: hir.clone(),
            size_checked: false,
        },
    );
    Ok(hir)
}

/// `re` parsed by `parse` and its automaton checked by `check`, from the cache when both
/// were done before.
pub(crate) fn parsed_and_checked<E>(
    re: &str,
    parse: impl FnOnce(&str) -> Result<Hir, E>,
    check: impl FnOnce(&Hir) -> Result<(), E>,
) -> Result<Hir, E> {
    if let Some(p) = lookup(re) {
        if p.size_checked {
            return Ok(p.hir);
        }
        check(&p.hir)?;
        store(
            re,
            Parsed {
                hir: p.hir.clone(),
                size_checked: true,
            },
        );
        return Ok(p.hir);
    }
    let hir = parse(re)?;
    check(&hir)?;
    store(
        re,
        Parsed {
            hir: hir.clone(),
            size_checked: true,
        },
    );
    Ok(hir)
}

#[cfg(test)]
mod tests {
    use super::{parsed, parsed_and_checked};
    use crate::grammar::{check_automaton_size, parse_regex};

    fn fresh(re: &str) -> regex_syntax::hir::Hir {
        regex_syntax::parse(re).expect("the test regexes parse")
    }

    #[test]
    fn a_cached_parse_is_the_parse() {
        for re in [
            r#""([^"\\]|\\.)*""#,
            r"\p{L}+",
            r"-?(0|[1-9][0-9]*)",
            r"[a-z]{3}",
        ] {
            let first = parse_regex(re).unwrap();
            let again = parse_regex(re).unwrap();
            assert_eq!(first, fresh(re), "{re}");
            assert_eq!(again, fresh(re), "{re}");
        }
        assert!(parse_regex("(unclosed").is_err());
        assert!(
            parse_regex("(unclosed").is_err(),
            "errors are not cached as successes"
        );
    }

    /// A regex parsed (and cached) unchecked is still checked when a checked parse asks for
    /// it, and refused each time.
    #[test]
    fn a_parse_cached_unchecked_is_checked_before_use() {
        let re = "(?:(?:b{1000}){1000}){1000}";
        let parse = |re: &str| parse_regex(re);
        assert!(parsed(re, parse).is_ok());
        for _ in 0..2 {
            let e = parsed_and_checked(re, parse, check_automaton_size).unwrap_err();
            assert!(e.contains("written out"), "{e}");
        }
        let fine = r"[0-9]{1,5}x";
        assert_eq!(
            parsed_and_checked(fine, parse, check_automaton_size),
            Ok(fresh(fine))
        );
        assert_eq!(parsed(fine, parse), Ok(fresh(fine)));
    }

    #[test]
    fn large_parses_are_not_kept() {
        // 4,000 bytes of text, some 2 MiB of Unicode class ranges once parsed.
        let wide = r"\w".repeat(1300);
        assert!(wide.len() <= super::MAX_CACHED_REGEX_BYTES);
        let hir = parse_regex(&wide).unwrap();
        assert!(super::hir_bytes(&hir) > super::MAX_CACHED_HIR_BYTES / 16);
        assert!(super::lookup(&wide).is_none());
    }

    #[test]
    fn long_regexes_are_parsed_but_not_kept() {
        let long = format!("(?:{})", vec!["word"; 2000].join("|"));
        assert!(long.len() > super::MAX_CACHED_REGEX_BYTES);
        assert_eq!(parse_regex(&long).unwrap(), fresh(&long));
        assert!(super::lookup(&long).is_none());
    }
}
