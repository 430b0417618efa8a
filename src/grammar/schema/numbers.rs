//! Numbers as regular languages: JSON number lexemes whose value lies within integer bounds.
//!
//! The construction is exact on the forms it admits. A bounded number is written without an
//! exponent (`-?(0|[1-9][0-9]*)(\.[0-9]+)?`); its value is compared with the bounds through its
//! integer part `I` and whether its fraction `F` is zero: for `x ≥ 0`, `x ≥ L ⟺ I ≥ L`,
//! `x > L ⟺ I > L ∨ (I = L ∧ F ≠ 0)`, `x ≤ U ⟺ I < U ∨ (I = U ∧ F = 0)`, `x < U ⟺ I < U`;
//! negative numbers mirror this. The set of admitted `I` is then a union of integer intervals,
//! each written as a digit-range regex (split by length, then digit by digit).
//! Bounded integers admit the forms `5` and `5.0`; unbounded integers also take an exponent
//! (`1e3`, `1.5e1`; see [`any_integer`]). Where a bound reaches 2⁵³, numbers from 2⁵³ on are
//! admitted whole only (`9007199254740993`, not `9007199254740993.0`): a validator reads a
//! fraction as a float, which may round it across the bound.

/// 2⁵³: from here on not every integer is a float.
const EXACT_IN_F64: i128 = 1 << 53;

/// What a number's fraction may be, as a bit set.
const ZERO: u8 = 1;
const NONZERO: u8 = 2;
const BOTH: u8 = ZERO | NONZERO;

/// A bound on a number: its (integral) value and whether it is exclusive.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    pub value: i128,
    pub exclusive: bool,
}

/// Any JSON number (the lexeme of `json.lark`).
pub const ANY_NUMBER: &str = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?";
/// [`ANY_NUMBER`] with exponents of at most two digits (leading zeros aside), for generation
/// (`SchemaOptions::finite_numbers`): `1e400` is a JSON number, but parsers read it as
/// infinity (which is no integer) or refuse it. Past 1e308 a number now needs some 200 digits.
pub const FINITE_NUMBER: &str = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?0*[0-9]{1,2})?";
/// Any JSON number whose value is an integer, in the forms lacuna admits for integers: an
/// integral mantissa (`5`, `5.00`) with an optional non-negative exponent, or a mantissa with
/// at most 16 fraction digits and an exponent of at least 16 (`1.2345678910111214e+52`, how
/// serializers write integral floats from 1e16 on). Other exponent forms of integers (`1.5e1`)
/// are not admitted.
/// With `finite`, exponents have at most two digits past leading zeros (see
/// [`FINITE_NUMBER`]).
pub fn any_integer(finite: bool) -> String {
    // The exponent of an integral mantissa, and the exponents of at least 16.
    let (exponent, from_16) = if finite {
        (r"0*[0-9]{1,2}", r"1[6-9]|[2-9][0-9]")
    } else {
        (r"[0-9]+", r"1[6-9]|[2-9][0-9]|[1-9][0-9]{2,}")
    };
    format!(r"-?(0|[1-9][0-9]*)((\.0+)?([eE]\+?{exponent})?|\.[0-9]{{1,16}}[eE]\+?0*({from_16}))")
}

/// The regex of numbers (`integer` false) or integers within the bounds, or `None` when no
/// number satisfies them. Without bounds this is [`ANY_NUMBER`] or [`any_integer`] (with
/// `finite`, [`FINITE_NUMBER`] or its integers); bounded numbers take no exponent.
pub fn number_regex(
    lo: Option<Bound>,
    hi: Option<Bound>,
    integer: bool,
    finite: bool,
) -> Option<String> {
    if lo.is_none() && hi.is_none() {
        return Some(match (integer, finite) {
            (true, _) => any_integer(finite),
            (false, false) => ANY_NUMBER.to_string(),
            (false, true) => FINITE_NUMBER.to_string(),
        });
    }
    let mut alts = vec![];
    if let Some(r) = side(lo, hi, integer) {
        alts.push(r);
    }
    // Negative numbers: x = -y, so x ≥ L ⟺ y ≤ -L and x ≤ U ⟺ y ≥ -U.
    let neg = |b: Bound| Bound {
        value: -b.value,
        exclusive: b.exclusive,
    };
    if let Some(r) = side(hi.map(neg), lo.map(neg), integer) {
        alts.push(format!("-{r}"));
    }
    if alts.is_empty() {
        None
    } else {
        Some(format!("({})", alts.join("|")))
    }
}

/// Unsigned lexemes `I(.F)?` whose value y satisfies `lo ≤ y ≤ hi` (each bound optional,
/// inclusive or exclusive; `integer`: integral y only).
fn side(lo: Option<Bound>, hi: Option<Bound>, integer: bool) -> Option<String> {
    let alts: Vec<String> = segments(lo, hi, integer)
        .into_iter()
        .map(|s| {
            let digits = unsigned_range(s.lo as u128, s.hi.map(|b| b as u128));
            let frac = match (s.zero, s.nonzero) {
                _ if s.whole_only => "",
                (true, true) => r"(\.[0-9]+)?",
                (true, false) => r"(\.0+)?",
                _ => r"\.[0-9]*[1-9][0-9]*",
            };
            format!("({digits}){frac}")
        })
        .collect();
    if alts.is_empty() {
        None
    } else {
        Some(format!("({})", alts.join("|")))
    }
}

/// A range of integer parts `lo..=hi` (`hi = None`: unbounded) of unsigned numbers within
/// bounds, and the fractions numbers with those integer parts may have.
#[derive(Copy, Clone, Debug)]
pub struct Segment {
    pub lo: i128,
    pub hi: Option<i128>,
    /// A zero fraction (or none) is within the bounds.
    pub zero: bool,
    /// A nonzero fraction is within the bounds.
    pub nonzero: bool,
    /// From 2⁵³ on: the number is written without any fraction.
    pub whole_only: bool,
}

/// The integer parts of the unsigned numbers `lo ≤ y ≤ hi` (each bound optional, inclusive or
/// exclusive; `integer`: integral `y` only), cut where the admitted fractions change, in
/// increasing order, none empty.
pub fn segments(lo: Option<Bound>, hi: Option<Bound>, integer: bool) -> Vec<Segment> {
    let allowed = if integer { ZERO } else { BOTH };
    let fracs = |i: i128| -> u8 {
        let low = match lo {
            None => BOTH,
            Some(b) if i > b.value => BOTH,
            Some(b) if i == b.value => {
                if b.exclusive {
                    NONZERO
                } else {
                    BOTH
                }
            }
            Some(_) => 0,
        };
        let up = match hi {
            None => BOTH,
            Some(b) if i < b.value => BOTH,
            Some(b) if i == b.value && !b.exclusive => ZERO,
            Some(_) => 0,
        };
        low & up & allowed
    };
    // The admitted fractions change only at the bounds: cut [0, ∞) there.
    let mut points: Vec<i128> = [lo, hi]
        .iter()
        .flatten()
        .map(|b| b.value)
        .filter(|&v| v >= 0)
        .collect();
    // From 2⁵³ on a float cannot hold every integer: a numeral with a fraction there may
    // round to the other side of a bound that large, so such numbers are written whole.
    let beyond_floats = [lo, hi].iter().flatten().any(|b| b.value >= EXACT_IN_F64);
    if beyond_floats {
        points.push(EXACT_IN_F64);
    }
    points.sort_unstable();
    points.dedup();
    let mut cuts: Vec<(i128, Option<i128>)> = vec![];
    let mut start = 0i128;
    for &p in &points {
        if p > start {
            cuts.push((start, Some(p - 1)));
        }
        cuts.push((p, Some(p)));
        start = p + 1;
    }
    cuts.push((start, None));
    let mut out = vec![];
    for (a, b) in cuts {
        let f = fracs(a);
        let whole_only = beyond_floats && a >= EXACT_IN_F64;
        if f == 0 || (whole_only && f & ZERO == 0) {
            continue;
        }
        out.push(Segment {
            lo: a,
            hi: b,
            zero: f & ZERO != 0,
            nonzero: f & NONZERO != 0,
            whole_only,
        });
    }
    out
}

/// Regex of the decimal numerals (no leading zeros) of the integers in `[a, b]` (`b = None`:
/// unbounded above).
pub fn unsigned_range(a: u128, b: Option<u128>) -> String {
    let la = a.to_string().len();
    let mut alts = vec![];
    match b {
        None => {
            alts.push(fixed(&a.to_string(), &"9".repeat(la)));
            alts.push(format!("[1-9][0-9]{{{la},}}"));
        }
        Some(b) => {
            let lb = b.to_string().len();
            for len in la..=lb {
                let lo = if len == la {
                    a
                } else {
                    10u128.pow(len as u32 - 1)
                };
                let hi = if len == lb {
                    b
                } else {
                    10u128.pow(len as u32) - 1
                };
                if lo <= hi {
                    alts.push(fixed(&lo.to_string(), &hi.to_string()));
                }
            }
        }
    }
    alts.join("|")
}

/// Regex of the numerals of one length between `lo` and `hi` (as strings, `lo ≤ hi`).
fn fixed(lo: &str, hi: &str) -> String {
    let (lo, hi) = (lo.as_bytes(), hi.as_bytes());
    if lo.is_empty() {
        return String::new();
    }
    if lo == hi {
        return String::from_utf8(lo.to_vec()).expect("digits");
    }
    if lo[0] == hi[0] {
        let rest = fixed(
            std::str::from_utf8(&lo[1..]).expect("digits"),
            std::str::from_utf8(&hi[1..]).expect("digits"),
        );
        return format!("{}({rest})", lo[0] as char);
    }
    let n = lo.len() - 1;
    let tail = |k: usize| {
        if k == 0 {
            String::new()
        } else {
            format!("[0-9]{{{k}}}")
        }
    };
    let lo_rest = std::str::from_utf8(&lo[1..]).expect("digits");
    let hi_rest = std::str::from_utf8(&hi[1..]).expect("digits");
    let mut alts = vec![];
    let mut first_full = lo[0];
    if !lo_rest.bytes().all(|c| c == b'0') {
        alts.push(format!(
            "{}({})",
            lo[0] as char,
            fixed(lo_rest, &"9".repeat(n))
        ));
        first_full += 1;
    }
    let mut last_full = hi[0];
    let hi_part = if !hi_rest.bytes().all(|c| c == b'9') {
        last_full -= 1;
        Some(format!(
            "{}({})",
            hi[0] as char,
            fixed(&"0".repeat(n), hi_rest)
        ))
    } else {
        None
    };
    if first_full <= last_full {
        alts.push(format!(
            "[{}-{}]{}",
            first_full as char,
            last_full as char,
            tail(n)
        ));
    }
    alts.extend(hi_part);
    alts.join("|")
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex_automata::meta::Regex;

    fn full(re: &str) -> Regex {
        Regex::new(&format!("^(?:{re})$")).unwrap()
    }

    #[test]
    fn unsigned_ranges_match_exactly_their_integers() {
        for (a, b) in [
            (0, 0),
            (0, 9),
            (3, 7),
            (5, 123),
            (17, 1000),
            (99, 101),
            (1, 1),
        ] {
            let re = full(&unsigned_range(a, Some(b)));
            for x in 0..1500u128 {
                assert_eq!(
                    re.is_match(&x.to_string()),
                    a <= x && x <= b,
                    "{a}..{b} {x}"
                );
            }
            assert!(!re.is_match("007"));
        }
        let re = full(&unsigned_range(42, None));
        for x in 0..2000u128 {
            assert_eq!(re.is_match(&x.to_string()), x >= 42);
        }
    }

    #[test]
    fn bounded_numbers_compare_like_their_values() {
        let b = |v, e| {
            Some(Bound {
                value: v,
                exclusive: e,
            })
        };
        let cases = [
            (b(-3, false), b(12, true)),
            (b(0, true), None),
            (None, b(-2, false)),
            (b(1, false), b(1, false)),
            (b(-10, true), b(-1, true)),
        ];
        let samples = [
            "0", "-0", "0.0", "0.5", "-0.5", "1", "1.0", "1.25", "-1", "-1.5", "-2", "-2.0",
            "-2.01", "-3", "-3.0", "-3.5", "11.999", "12", "12.0", "12.5", "-10", "-9.99", "100",
        ];
        for (lo, hi) in cases {
            for integer in [false, true] {
                let re = full(&number_regex(lo, hi, integer, false).unwrap());
                for s in samples {
                    let v: f64 = s.parse().unwrap();
                    let ok_lo = lo.is_none_or(|b| {
                        if b.exclusive {
                            v > b.value as f64
                        } else {
                            v >= b.value as f64
                        }
                    });
                    let ok_hi = hi.is_none_or(|b| {
                        if b.exclusive {
                            v < b.value as f64
                        } else {
                            v <= b.value as f64
                        }
                    });
                    let ok_int = !integer || v.fract() == 0.0;
                    assert_eq!(
                        re.is_match(s),
                        ok_lo && ok_hi && ok_int,
                        "{lo:?} {hi:?} {integer} {s}"
                    );
                }
            }
        }
        assert!(number_regex(b(3, false), b(2, false), true, false).is_none());
    }

    /// Generation's numbers: every numeral of exponent up to 5 digits, mantissa up to 30: the
    /// finite forms are the unrestricted ones whose exponent has at most two digits past its
    /// leading zeros, so each parses as a finite double.
    #[test]
    fn finite_numbers_are_the_short_exponent_ones() {
        for integer in [false, true] {
            let open = full(&number_regex(None, None, integer, false).unwrap());
            let finite = full(&number_regex(None, None, integer, true).unwrap());
            for mantissa in [
                "0",
                "7",
                "-12",
                "1.5",
                "120.000",
                "-3.25",
                "1.2345678901234567",
            ] {
                for exp in [
                    "", "e5", "E+16", "e-3", "e099", "e0099", "e100", "e308", "e400", "E00400",
                ] {
                    let s = format!("{mantissa}{exp}");
                    let digits = exp
                        .trim_start_matches(['e', 'E', '+', '-'])
                        .trim_start_matches('0');
                    assert_eq!(
                        finite.is_match(&s),
                        open.is_match(&s) && digits.len() <= 2,
                        "{integer} {s}"
                    );
                    if finite.is_match(&s) {
                        assert!(s.parse::<f64>().unwrap().is_finite(), "{s}");
                    }
                }
            }
            assert!(open.is_match("1e400") && !finite.is_match("1e400"));
        }
    }
}
