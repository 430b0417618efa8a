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

use regex_automata::dfa::{dense, StartKind};
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::MatchKind;
use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind};

/// The most heap memory, in bytes, the Thompson NFA of one pattern may take (16 MiB: about
/// 10⁶ states; a lexer DFA built from more would exceed its own size limit anyway).
pub const MAX_PATTERN_NFA_BYTES: usize = 16 << 20;

/// The most memory, in bytes, the determinization of one pattern may use (regex-automata's
/// bookkeeping of the NFA state sets it has seen, which grows with the DFA's states and the
/// size of their sets): 4 MiB. Determinizing takes time in proportion, so this also bounds
/// the time: a pattern whose DFA has exponentially many states, like `(a|b)*a(a|b){24}`
/// (2²⁵ states), or a long periodic literal searched anywhere in a string, like
/// `((d24100)0d4600}){1000}` (14,000 states, each remembering up to 1,000 partial matches,
/// 8 s to build), is refused in under a second. Real patterns need little: the shipped
/// grammars' and the JSON Schema corpora's take at most 1.2 MiB, and patterns of large
/// Unicode classes are measured over their character classes (see `check_dfa_size`).
pub const MAX_PATTERN_DETERMINIZE_BYTES: usize = 4 << 20;

/// The most memory, in bytes, a lexer DFA may take: that of all terminals together, and so
/// also that of each pattern alone (256 MiB).
pub const MAX_DFA_BYTES: usize = 256 << 20;

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
        Err(e) if e.size_limit().is_some() && has_counted_repetition(hir) => Err(format!(
            "the pattern's automaton (its Thompson NFA) exceeds the limit of {} MiB once its \
             counted repetitions are written out (nested `{{n}}` or `~ n` multiply)",
            MAX_PATTERN_NFA_BYTES >> 20
        )),
        Err(e) if e.size_limit().is_some() => Err(format!(
            "the pattern is too long: its automaton (its Thompson NFA) exceeds the limit of {} \
             MiB",
            MAX_PATTERN_NFA_BYTES >> 20
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// The Thompson NFA of one pattern under [`MAX_PATTERN_NFA_BYTES`], without captures.
pub(crate) fn pattern_nfa_config() -> thompson::Config {
    thompson::Config::new()
        .nfa_size_limit(Some(MAX_PATTERN_NFA_BYTES))
        .which_captures(WhichCaptures::None)
}

/// The DFA of one pattern, unminimized, under [`MAX_DFA_BYTES`] and
/// [`MAX_PATTERN_DETERMINIZE_BYTES`]: what [`check_dfa_size`] builds, and what the lexicon
/// builds per terminal to name the largest.
pub(crate) fn pattern_dfa_config() -> dense::Config {
    dense::DFA::config()
        .match_kind(MatchKind::All)
        .start_kind(StartKind::Anchored)
        .minimize(false)
        .dfa_size_limit(Some(MAX_DFA_BYTES))
        .determinize_size_limit(Some(MAX_PATTERN_DETERMINIZE_BYTES))
}

/// Refuses a pattern whose DFA needs more than [`MAX_PATTERN_DETERMINIZE_BYTES`] to
/// determinize or more than [`MAX_DFA_BYTES`] to hold (the lexer would have to build it, with
/// the others'). Costs one DFA construction, bounded by the limits.
///
/// The DFA built is that of the pattern over its *character classes* (see [`over_classes`]):
/// it has exactly the states of the character-level DFA, whose number is what explodes in a
/// pattern like `(a|b)*a(a|b){24}`, but not the states and byte classes the UTF-8 encoding of
/// large Unicode classes adds, which make the lexer's DFA of `\w{300}` take a second to build
/// and are no blow-up. Patterns with look-around are left to the checks that refuse them.
pub fn check_dfa_size(hir: &Hir) -> Result<(), String> {
    // A pattern of p positions (characters and classes, counted by `written_out_size`) has a
    // character-level DFA of at most 2^(p+1) states: small patterns need no construction.
    if !hir.properties().look_set().is_empty() || written_out_size(hir) <= SMALL_FOR_DFA {
        return Ok(());
    }
    let classes = over_classes(hir);
    let hir = classes.as_ref().unwrap_or(hir);
    let nfa = thompson::Compiler::new()
        .configure(pattern_nfa_config())
        .build_from_hir(hir)
        .map_err(|e| e.to_string())?;
    let built = dense::Builder::new()
        .configure(pattern_dfa_config())
        .build_from_nfa(&nfa);
    match built {
        Ok(_) => Ok(()),
        Err(e) if e.is_size_limit_exceeded() => Err(format!(
            "the pattern's DFA is too large to build: it exceeds the limit of {} MiB of \
             determinization memory or {} MiB of DFA (its states multiply: after \
             `(a|b)*a(a|b){{n}}` a DFA must remember the last n+1 characters, 2ⁿ⁺¹ states; \
             a long repeated literal searched anywhere keeps every partial match in each state)",
            MAX_PATTERN_DETERMINIZE_BYTES >> 20,
            MAX_DFA_BYTES >> 20
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// Patterns whose [`written_out_size`] is at most this are not determinized by
/// [`check_dfa_size`]: their DFA has at most 2¹⁷ character-level states.
const SMALL_FOR_DFA: u64 = 16;

/// The most character classes [`over_classes`] maps to single ASCII characters.
const MAX_CLASSES: usize = 128;

/// `hir` with each character replaced by the class of characters it cannot be told apart
/// from (those that every class and literal of the pattern contains or excludes alike), each
/// class written as one ASCII character: a language over at most [`MAX_CLASSES`] symbols
/// whose DFA has the character-level DFA's states. `None` for byte-oriented patterns, or when
/// there are too many classes (the caller then measures the pattern itself).
fn over_classes(hir: &Hir) -> Option<Hir> {
    // The atoms: each class and each literal character, as sorted ranges of code points.
    let mut atoms: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut stack = vec![hir];
    while let Some(h) = stack.pop() {
        match h.kind() {
            HirKind::Empty | HirKind::Look(_) => {}
            HirKind::Literal(l) => {
                for c in std::str::from_utf8(&l.0).ok()?.chars() {
                    atoms.push(vec![(c as u32, c as u32)]);
                }
            }
            HirKind::Class(Class::Unicode(c)) => atoms.push(
                c.ranges()
                    .iter()
                    .map(|r| (r.start() as u32, r.end() as u32))
                    .collect(),
            ),
            HirKind::Class(Class::Bytes(_)) => return None,
            HirKind::Repetition(r) => stack.push(&r.sub),
            HirKind::Capture(c) => stack.push(&c.sub),
            HirKind::Concat(subs) | HirKind::Alternation(subs) => stack.extend(subs),
        }
    }
    atoms.sort_unstable();
    atoms.dedup();
    // Elementary intervals: between consecutive boundaries of any atom's ranges.
    let mut bounds: Vec<u32> = vec![0, 0x11_0000];
    for a in &atoms {
        for &(lo, hi) in a {
            bounds.push(lo);
            bounds.push(hi + 1);
        }
    }
    bounds.sort_unstable();
    bounds.dedup();
    let intervals = bounds.len() - 1;
    if atoms.len().saturating_mul(intervals) > 1 << 24 {
        return None;
    }
    // Refine: intervals in the same class so far and in the same atom stay together.
    let mut class = vec![0u32; intervals];
    let mut inside = vec![false; intervals];
    for a in &atoms {
        inside.iter_mut().for_each(|x| *x = false);
        for &(lo, hi) in a {
            let from = bounds.partition_point(|&b| b < lo);
            let to = bounds.partition_point(|&b| b <= hi);
            inside[from..to].iter_mut().for_each(|x| *x = true);
        }
        let mut renumber = hashbrown::HashMap::new();
        for (c, &i) in class.iter_mut().zip(&inside) {
            let next = renumber.len() as u32;
            *c = *renumber.entry((*c, i)).or_insert(next);
        }
        if renumber.len() > MAX_CLASSES {
            return None;
        }
    }
    // Each atom as the set of classes it covers.
    let symbols = |ranges: &[(u32, u32)]| -> Vec<u8> {
        let mut out: Vec<u8> = Vec::new();
        for &(lo, hi) in ranges {
            let from = bounds.partition_point(|&b| b < lo);
            let to = bounds.partition_point(|&b| b <= hi);
            out.extend(class[from..to].iter().map(|&c| c as u8));
        }
        out.sort_unstable();
        out.dedup();
        out
    };
    Some(rewrite(hir, &symbols))
}

/// The classes (as ASCII symbols) an atom's code point ranges cover.
type Symbols<'a> = dyn Fn(&[(u32, u32)]) -> Vec<u8> + 'a;

/// [`over_classes`]'s rewriting of the pattern, atom by atom.
fn rewrite(h: &Hir, symbols: &Symbols) -> Hir {
    let class_of = |syms: Vec<u8>| {
        Hir::class(Class::Unicode(ClassUnicode::new(
            syms.into_iter()
                .map(|s| ClassUnicodeRange::new(char::from(s), char::from(s))),
        )))
    };
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => h.clone(),
        HirKind::Literal(l) => Hir::concat(
            String::from_utf8_lossy(&l.0)
                .chars()
                .map(|c| class_of(symbols(&[(c as u32, c as u32)])))
                .collect(),
        ),
        HirKind::Class(Class::Unicode(c)) => {
            let ranges: Vec<(u32, u32)> = c
                .ranges()
                .iter()
                .map(|r| (r.start() as u32, r.end() as u32))
                .collect();
            class_of(symbols(&ranges))
        }
        HirKind::Class(Class::Bytes(_)) => h.clone(),
        HirKind::Repetition(r) => Hir::repetition(regex_syntax::hir::Repetition {
            min: r.min,
            max: r.max,
            greedy: r.greedy,
            sub: Box::new(rewrite(&r.sub, symbols)),
        }),
        HirKind::Capture(c) => rewrite(&c.sub, symbols),
        HirKind::Concat(subs) => Hir::concat(subs.iter().map(|s| rewrite(s, symbols)).collect()),
        HirKind::Alternation(subs) => {
            Hir::alternation(subs.iter().map(|s| rewrite(s, symbols)).collect())
        }
    }
}

/// Whether the pattern repeats something a counted number of times (`x{n}`, `x{n,m}`).
fn has_counted_repetition(h: &Hir) -> bool {
    let mut stack = vec![h];
    while let Some(h) = stack.pop() {
        match h.kind() {
            HirKind::Repetition(r) => {
                if r.min > 1 || r.max.is_some_and(|m| m > 1) {
                    return true;
                }
                stack.push(&r.sub);
            }
            HirKind::Capture(c) => stack.push(&c.sub),
            HirKind::Concat(subs) | HirKind::Alternation(subs) => stack.extend(subs),
            _ => {}
        }
    }
    false
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

#[cfg(test)]
mod dfa_tests {
    use super::check_dfa_size;

    fn check(re: &str) -> Result<(), String> {
        check_dfa_size(&regex_syntax::parse(re).expect("the test regexes parse"))
    }

    #[test]
    fn exponential_dfas_are_refused() {
        // How fast is a benchmark's question (about a second each in release, see DESIGN.md);
        // here, that the 2ⁿ-state DFAs are refused by name rather than built.
        for re in ["(a|b)*a(a|b){24}", r"[\s\S]*a[\s\S]{22}", r"\w*x\w{22}"] {
            let e = check(re).unwrap_err();
            assert!(e.contains("DFA") && e.contains("MiB"), "{re}: {e}");
        }
    }

    #[test]
    fn long_periodic_literals_searched_anywhere_are_refused() {
        // 14,000 states whose NFA sets hold up to 1,000 partial matches each: under the NFA
        // limit, and once 8 s of determinization (found by fuzzing the schema compiler).
        let e = check(r"[\s\S]*((d24100)0d4600}){1000}").unwrap_err();
        assert!(e.contains("partial match"), "{e}");
        // Shorter, it is an ordinary pattern.
        assert_eq!(check(r"[\s\S]*((d24100)0d4600}){20}"), Ok(()));
    }

    #[test]
    fn large_unicode_classes_are_measured_by_their_character_states() {
        for re in [
            r"\w{300}",
            r"\p{L}{1,100}",
            r"(\w|[.-]){1,64}@\w{1,255}",
            r"(?s).{0,5000}",
            r"(a|b)*a(a|b){10}",
            r"[a-zA-Z_][a-zA-Z0-9_]*",
            r#""([^"\\]|\\.)*""#,
            "日本語|日本|x",
        ] {
            assert_eq!(check(re), Ok(()), "{re}");
        }
        // Byte-oriented patterns are measured as they are.
        assert_eq!(check(r"(?-u:[a-z\x00])+"), Ok(()));
    }
}
