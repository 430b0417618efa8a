//! `multipleOf` as regular languages: the number lexemes whose value is a multiple of a decimal
//! step `c·10⁻ᵈ`, within integer bounds.
//!
//! The step is read as the validators read it: the shortest decimal that round-trips its
//! `f64` (`0.01` is one hundredth, not the binary fraction near it), and an instance numeral is
//! a multiple when its decimal value divided by the step is an integer. Both are exact for the
//! numerals admitted here, which have at most [`MAX_DIGITS`] significant digits (their `f64`
//! prints back as the same decimal) and no exponent, as bounded numbers are written (see
//! [`super::numbers`]).
//!
//! Divisibility by `c` of a decimal numeral needs a counter modulo `c`, whose regex grows
//! exponentially with `c` (by state elimination: 441 characters for 3, 99 KB for 7, 1.4 MB for
//! 9). Two shapes stay small, and are the ones built:
//! - **few multiples**: between the bounds lie at most [`MAX_LISTED`] multiples, each written
//!   as a literal (`16`, `32`, … or `2.5`, `5`, `7.5`, …) — any step;
//! - **a step whose multiples end alike**: `c = 2ᵃ5ᵇ`, so `c` divides `10ᵏ` (`k = max(a, b)`)
//!   and whether the scaled value `x·10ᵈ` is a multiple depends only on its last `k` digits.
//!   When `k ≤ d` those digits are all in the fraction (`0.01`, `0.25`, `0.5`): the integer
//!   part keeps the bounds' digit ranges and only the fraction is restricted. Otherwise (`10`,
//!   `16`, `2.5`) the integer part must end in one of a few digit strings, each cut out of the
//!   bounds' ranges by residue.
//!
//! Other steps over wide ranges (`7`, `11`, `1.5` unbounded) are refused with the reason.

use super::numbers::{segments, unsigned_range, Bound};

/// The most significant digits of an admitted numeral: every decimal of at most 15 digits is
/// the shortest decimal of its nearest `f64`, so a validator that reads the numeral as a float
/// still divides the decimal written.
pub const MAX_DIGITS: u32 = 15;

/// The most multiples written out one by one between two bounds.
pub const MAX_LISTED: i128 = 512;

/// The most `k`-digit endings of the multiples of a step `c` with `c | 10ᵏ` (`10ᵏ / c` of them).
pub const MAX_ENDINGS: u128 = 32;

/// A `multipleOf` value as an exact decimal `c·10⁻ᵈ` (`c > 0`, `d ≤ MAX_DIGITS`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The digits of the step, as an integer.
    pub c: u64,
    /// How many of them are after the decimal point.
    pub d: u32,
}

impl Step {
    /// The step a schema's `multipleOf` number denotes, or `None` if it is not positive or
    /// needs more than [`MAX_DIGITS`] digits (digits or fraction places).
    pub fn from_json(n: &serde_json::Number) -> Option<Step> {
        if let Some(u) = n.as_u64() {
            return (u > 0 && u < 10u64.pow(MAX_DIGITS)).then_some(Step { c: u, d: 0 });
        }
        let f = n.as_f64()?;
        if !(f.is_finite() && f > 0.0) {
            return None;
        }
        let (digits, exp) = scientific(f);
        let places = digits.len() as i32 - 1 - exp;
        let c: u64 = digits.parse().ok()?;
        let (c, d) = if places >= 0 {
            (c, places as u32)
        } else {
            (c.checked_mul(10u64.checked_pow((-places) as u32)?)?, 0)
        };
        (d <= MAX_DIGITS && c < 10u64.pow(MAX_DIGITS)).then_some(Step { c, d })
    }

    /// The step of the integers that are multiples of `self`: `c / gcd(c, 10ᵈ)` (an integer
    /// `x` has `x·10ᵈ ≡ 0 (mod c)` exactly when that divides it).
    pub fn for_integers(self) -> Step {
        let p = 10u128.pow(self.d);
        let g = gcd(self.c as u128, p);
        Step {
            c: (self.c as u128 / g) as u64,
            d: 0,
        }
    }

    /// The least common multiple of two steps, or `None` past [`MAX_DIGITS`] digits.
    pub fn lcm(self, other: Step) -> Option<Step> {
        let d = self.d.max(other.d);
        let a = self.c as u128 * 10u128.pow(d - self.d);
        let b = other.c as u128 * 10u128.pow(d - other.d);
        let l = (a / gcd(a, b)).checked_mul(b)?;
        let mut s = Step {
            c: u64::try_from(l).ok()?,
            d,
        };
        while s.d > 0 && s.c.is_multiple_of(10) {
            s.c /= 10;
            s.d -= 1;
        }
        (s.c < 10u64.pow(MAX_DIGITS)).then_some(s)
    }

    /// Whether the JSON number `n` is a multiple of the step, reading `n` as the shortest
    /// decimal of its `f64` (integers exactly), as validators do.
    pub fn divides(self, n: &serde_json::Number) -> bool {
        let (m, e): (u128, i32) = if let Some(u) = n.as_u64() {
            (u as u128, 0)
        } else if let Some(i) = n.as_i64() {
            (i.unsigned_abs() as u128, 0)
        } else {
            let f = n.as_f64().unwrap_or(f64::NAN).abs();
            if !f.is_finite() {
                return false;
            }
            let (digits, exp) = scientific(f);
            let m = digits.parse().unwrap_or(0);
            (m, exp - (digits.len() as i32 - 1))
        };
        if m == 0 {
            return true;
        }
        // x / step = m·10^(e + d) / c.
        let c = self.c as u128;
        let shift = e + self.d as i32;
        if shift >= 0 {
            let mut r = m % c;
            for _ in 0..shift.min(64) {
                r = r * 10 % c;
            }
            r == 0
        } else {
            10u128
                .checked_pow((-shift) as u32)
                .and_then(|p| p.checked_mul(c))
                .is_some_and(|q| m % q == 0)
        }
    }

    /// The least `k` with `c | 10ᵏ`, if `c = 2ᵃ5ᵇ`.
    fn ending_digits(self) -> Option<u32> {
        let (mut c, mut twos, mut fives) = (self.c, 0, 0);
        while c % 2 == 0 {
            c /= 2;
            twos += 1;
        }
        while c % 5 == 0 {
            c /= 5;
            fives += 1;
        }
        (c == 1).then_some(twos.max(fives))
    }
}

impl std::fmt::Display for Step {
    /// The step as a JSON number (`0.01`, `16`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&decimal(1, *self))
    }
}

/// The regex of the numbers (`integer`: integers) within the bounds that are multiples of
/// `step`, `Ok(None)` when there are none, or `Err` with the reason the language is not built.
pub fn multiple_regex(
    lo: Option<Bound>,
    hi: Option<Bound>,
    integer: bool,
    step: Step,
) -> Result<Option<String>, String> {
    let step = if integer { step.for_integers() } else { step };
    // Numerals of at most MAX_DIGITS significant digits: |x| < 10^(MAX_DIGITS - d).
    let cap = 10i128.pow(MAX_DIGITS - step.d);
    let lo = tighter(
        lo,
        Bound {
            value: -cap,
            exclusive: true,
        },
        true,
    );
    let hi = tighter(
        hi,
        Bound {
            value: cap,
            exclusive: true,
        },
        false,
    );
    let (first, last) = (first_multiple(lo, step), last_multiple(hi, step));
    if first > last {
        return Ok(None);
    }
    if last - first < MAX_LISTED {
        return Ok(Some(listed(first, last, step)));
    }
    let too_wide = |why: &str| {
        format!(
            "the multiples of {} between the bounds are more than {MAX_LISTED}, and {why}",
            step
        )
    };
    let k = step.ending_digits().ok_or_else(|| {
        too_wide(
            "divisibility by it has no short regular form (only steps c·10⁻ᵈ with c = 2ᵃ5ᵇ have)",
        )
    })?;
    if 10u128.pow(k) / step.c as u128 > MAX_ENDINGS {
        return Err(too_wide(&format!(
            "they end in more than {MAX_ENDINGS} different {k}-digit strings"
        )));
    }
    // x ≥ 0 and -x ≥ 0 as in `numbers::number_regex`.
    let neg = |b: Bound| Bound {
        value: -b.value,
        exclusive: b.exclusive,
    };
    let mut alts = vec![];
    for (sign, lo, hi) in [("", lo, hi), ("-", hi.map(neg), lo.map(neg))] {
        let body = if k <= step.d {
            by_fraction(lo, hi, step, k)
        } else {
            by_ending(lo, hi, step, k)
        };
        alts.extend(body.map(|b| format!("{sign}({b})")));
    }
    Ok((!alts.is_empty()).then(|| format!("({})", alts.join("|"))))
}

/// The shortest decimal of `f` (positive, finite) as its digits and decimal exponent:
/// `0.0125` is `("125", -2)`.
fn scientific(f: f64) -> (String, i32) {
    let s = format!("{f:e}");
    let (mantissa, exp) = s.split_once('e').expect("`{:e}` writes an exponent");
    (
        mantissa.replace('.', ""),
        exp.parse().expect("an integer exponent"),
    )
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The tighter of a bound and a cap on the same side.
fn tighter(b: Option<Bound>, cap: Bound, lower: bool) -> Option<Bound> {
    Some(match b {
        Some(b) if lower && b.value > cap.value => b,
        Some(b) if !lower && b.value < cap.value => b,
        _ => cap,
    })
}

/// Index `j` of the least multiple `j·step` at or above the lower bound.
fn first_multiple(lo: Option<Bound>, step: Step) -> i128 {
    let b = lo.expect("capped");
    let scaled = b.value * 10i128.pow(step.d);
    let c = step.c as i128;
    let j = scaled.div_euclid(c) + i128::from(scaled.rem_euclid(c) != 0);
    if b.exclusive && j * c == scaled {
        j + 1
    } else {
        j
    }
}

/// Index `j` of the greatest multiple `j·step` at or below the upper bound.
fn last_multiple(hi: Option<Bound>, step: Step) -> i128 {
    let b = hi.expect("capped");
    let scaled = b.value * 10i128.pow(step.d);
    let c = step.c as i128;
    let j = scaled.div_euclid(c);
    if b.exclusive && j * c == scaled {
        j - 1
    } else {
        j
    }
}

/// `j·step` as a plain decimal without trailing fraction zeros (`-2.5`, `16`).
fn decimal(j: i128, step: Step) -> String {
    let scaled = j * step.c as i128;
    let p = 10i128.pow(step.d);
    let int = scaled.unsigned_abs() / p as u128;
    let frac = scaled.unsigned_abs() % p as u128;
    let sign = if scaled < 0 { "-" } else { "" };
    if frac == 0 {
        return format!("{sign}{int}");
    }
    let f = format!("{frac:0width$}", width = step.d as usize);
    format!("{sign}{int}.{}", f.trim_end_matches('0'))
}

/// The multiples `first·step ..= last·step`, each as a literal: an integral one with an
/// optional zero fraction (`16`, `16.0`), another with optional trailing zeros (`2.5`, `2.50`).
fn listed(first: i128, last: i128, step: Step) -> String {
    let alts: Vec<String> = (first..=last)
        .map(|j| {
            let s = decimal(j, step);
            if j == 0 {
                r"-?0(\.0+)?".to_string()
            } else if s.contains('.') {
                format!("{}0*", regex_syntax::escape(&s))
            } else {
                format!(r"{}(\.0+)?", regex_syntax::escape(&s))
            }
        })
        .collect();
    format!("({})", alts.join("|"))
}

/// The `k`-digit strings (leading zeros kept) whose value is a multiple of `c`.
fn endings(c: u64, k: u32) -> Vec<String> {
    let c = c as u128;
    (0..10u128.pow(k) / c)
        .map(|i| format!("{:0width$}", i * c, width = k as usize))
        .collect()
}

/// Unsigned lexemes within the bounds whose fraction makes them multiples of `step`, for a
/// step that divides `10⁻ᵈ⁺ᵏ` with `k ≤ d`: the integer part is free, and the fraction's
/// first `d` digits (zero-padded) end in a multiple of `c` among the `k`-digit strings, the
/// digits after them zero.
fn by_fraction(lo: Option<Bound>, hi: Option<Bound>, step: Step, k: u32) -> Option<String> {
    let free = step.d - k;
    // Each ending without its trailing zeros (shorter fractions are zero-padded), once.
    let mut tails: Vec<String> = endings(step.c, k)
        .iter()
        .map(|e| e.trim_end_matches('0').to_string())
        .filter(|t| !t.is_empty())
        .collect();
    tails.sort();
    tails.dedup();
    // A nonzero fraction: free digits then a nonzero ending, or nonzero free digits and a
    // zero ending (then the fraction stops at the free digits' last nonzero one).
    let mut nonzero = vec![];
    if !tails.is_empty() {
        nonzero.push(format!("[0-9]{{{free}}}({})0*", tails.join("|")));
    }
    if free > 0 {
        nonzero.push(format!("[0-9]{{0,{}}}[1-9]0*", free - 1));
    }
    let nonzero = nonzero.join("|");
    let alts: Vec<String> = segments(lo, hi, false)
        .into_iter()
        .filter_map(|s| {
            let digits = unsigned_range(s.lo as u128, s.hi.map(|h| h as u128));
            let frac = match (s.zero, s.nonzero && !nonzero.is_empty()) {
                _ if s.whole_only && s.zero => String::new(),
                _ if s.whole_only => return None,
                (true, true) => format!(r"(\.(0+|{nonzero}))?"),
                (true, false) => r"(\.0+)?".to_string(),
                (false, true) => format!(r"\.({nonzero})"),
                (false, false) => return None,
            };
            Some(format!("({digits}){frac}"))
        })
        .collect();
    (!alts.is_empty()).then(|| alts.join("|"))
}

/// Unsigned lexemes within the bounds that are multiples of `step`, for a step with `c | 10ᵏ`
/// and `k > d`: the scaled value's last `k` digits — the integer part's last `k - d`, then the
/// fraction's `d` — form a multiple of `c`. Each such ending fixes the integer part's residue
/// modulo `10ᵏ⁻ᵈ`, which cuts the bounds' ranges into ranges of the digits before it.
fn by_ending(lo: Option<Bound>, hi: Option<Bound>, step: Step, k: u32) -> Option<String> {
    let j = k - step.d;
    let modulus = 10i128.pow(j);
    let segs = segments(lo, hi, false);
    let mut alts = vec![];
    for e in endings(step.c, k) {
        let (int_end, frac) = e.split_at(j as usize);
        let r: i128 = int_end.parse().expect("digits");
        let frac = frac.trim_end_matches('0');
        for s in &segs {
            let suffix = if frac.is_empty() {
                if !s.zero {
                    continue;
                }
                if s.whole_only {
                    String::new()
                } else {
                    r"(\.0+)?".to_string()
                }
            } else {
                if !s.nonzero || s.whole_only {
                    continue;
                }
                format!(r"\.{frac}0*")
            };
            // Integer parts I = q·10^j + r in [s.lo, s.hi].
            let q_lo = (s.lo - r + modulus - 1).div_euclid(modulus).max(0);
            let q_hi = s.hi.map(|h| (h - r).div_euclid(modulus));
            if q_hi.is_some_and(|q| q < q_lo) {
                continue;
            }
            let mut ints = vec![];
            if q_lo == 0 {
                ints.push(r.to_string());
            }
            let from = q_lo.max(1);
            if q_hi.is_none_or(|q| q >= from) {
                let prefix = unsigned_range(from as u128, q_hi.map(|q| q as u128));
                ints.push(format!("({prefix}){int_end}"));
            }
            alts.push(format!("({}){suffix}", ints.join("|")));
        }
    }
    (!alts.is_empty()).then(|| alts.join("|"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex_automata::meta::Regex;

    fn full(re: &str) -> Regex {
        Regex::new(&format!("^(?:{re})$")).unwrap()
    }

    fn step(s: &str) -> Step {
        let v: serde_json::Value = serde_json::from_str(s).unwrap();
        Step::from_json(v.as_number().unwrap()).unwrap()
    }

    /// Exact decimal arithmetic on numerals without exponent: `(digits, places)`.
    fn decimal_of(s: &str) -> (i128, u32) {
        let neg = s.starts_with('-');
        let s = s.trim_start_matches('-');
        let (i, f) = s.split_once('.').unwrap_or((s, ""));
        let v: i128 = format!("{i}{f}").parse().unwrap();
        (if neg { -v } else { v }, f.len() as u32)
    }

    /// Whether numeral `s` is a multiple of `step` within the bounds, by exact arithmetic.
    fn oracle(s: &str, st: Step, lo: Option<Bound>, hi: Option<Bound>, integer: bool) -> bool {
        let (v, p) = decimal_of(s);
        let scale = p.max(st.d);
        let v = v * 10i128.pow(scale - p);
        let c = st.c as i128 * 10i128.pow(scale - st.d);
        let one = 10i128.pow(scale);
        let in_lo = lo.is_none_or(|b| {
            let b = b.value * one;
            if lo.unwrap().exclusive {
                v > b
            } else {
                v >= b
            }
        });
        let in_hi = hi.is_none_or(|b| {
            let b = b.value * one;
            if hi.unwrap().exclusive {
                v < b
            } else {
                v <= b
            }
        });
        v % c == 0 && in_lo && in_hi && (!integer || v % one == 0)
    }

    /// Signed numerals without exponent: a sample of integer parts up to 3 digits and of
    /// fractions up to 4 digits, and the edge cases of the steps tested.
    fn numerals() -> Vec<String> {
        let mut ints: Vec<String> = (0..1000).step_by(7).map(|i: i32| i.to_string()).collect();
        ints.extend(["1", "2", "10", "16", "20", "100", "998"].map(String::from));
        let mut fracs = vec![String::new()];
        for len in 1..=3 {
            for f in (0..10u32.pow(len)).step_by(13) {
                fracs.push(format!(".{f:0width$}", width = len as usize));
            }
        }
        fracs.extend(
            [
                ".5", ".25", ".75", ".01", ".05", ".1", ".0", ".50", ".0000", ".2500", ".0001",
            ]
            .map(String::from),
        );
        let mut out = vec![];
        for i in &ints {
            for f in &fracs {
                out.push(format!("{i}{f}"));
                out.push(format!("-{i}{f}"));
            }
        }
        out
    }

    #[test]
    fn steps_read_as_their_shortest_decimals() {
        assert_eq!(step("0.01"), Step { c: 1, d: 2 });
        assert_eq!(step("2.5"), Step { c: 25, d: 1 });
        assert_eq!(step("16"), Step { c: 16, d: 0 });
        assert_eq!(step("1e2"), Step { c: 100, d: 0 });
        assert_eq!(step("0.123456789"), Step { c: 123456789, d: 9 });
        assert_eq!(step("2.5").for_integers(), Step { c: 5, d: 0 });
        assert_eq!(step("0.01").lcm(step("0.25")), Some(Step { c: 25, d: 2 }));
        assert_eq!(step("4").lcm(step("6")), Some(Step { c: 12, d: 0 }));
        assert_eq!(step("1.5").lcm(step("0.2")), Some(Step { c: 3, d: 0 }));
        let n = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
        for (s, m, want) in [
            ("19.99", "0.01", true),
            ("0.07", "0.01", true),
            ("1070468.145", "0.01", false),
            ("7.5", "2.5", true),
            ("-7.5", "2.5", true),
            ("8", "2.5", false),
            ("0", "7", true),
            ("1e3", "8", true),
            ("1.5e1", "5", true),
        ] {
            assert_eq!(
                step(m).divides(n(s).as_number().unwrap()),
                want,
                "{s} / {m}"
            );
        }
        assert!(Step::from_json(n("0").as_number().unwrap()).is_none());
        assert!(Step::from_json(n("-2").as_number().unwrap()).is_none());
        assert!(Step::from_json(n("1e-20").as_number().unwrap()).is_none());
    }

    /// Against exact arithmetic on every sample numeral, for steps of each shape, with and
    /// without bounds.
    #[test]
    fn multiples_match_exactly_their_numerals() {
        let b = |v, e| {
            Some(Bound {
                value: v,
                exclusive: e,
            })
        };
        let nums = numerals();
        for m in [
            "0.01", "0.25", "0.5", "0.05", "0.0001", "10", "2", "16", "2.5", "0.2", "7", "1.5",
            "20",
        ] {
            let st = step(m);
            for (lo, hi) in [
                (None, None),
                (b(0, false), None),
                (b(0, true), None),
                (None, b(0, true)),
                (b(-3, false), b(12, true)),
                (b(-2032, false), b(2031, false)),
                (b(5, true), b(700, false)),
            ] {
                for integer in [false, true] {
                    let re = match multiple_regex(lo, hi, integer, st) {
                        Ok(Some(re)) => full(&re),
                        Ok(None) => {
                            assert!(nums.iter().all(|s| !oracle(s, st, lo, hi, integer)));
                            continue;
                        }
                        Err(e) => {
                            // Only wide ranges of steps not of the form 2ᵃ5ᵇ, or with too many
                            // endings, are refused.
                            let s = if integer { st.for_integers() } else { st };
                            let short = s
                                .ending_digits()
                                .is_some_and(|k| 10u128.pow(k) / s.c as u128 <= MAX_ENDINGS);
                            assert!(!short, "{m} {lo:?} {hi:?}: {e}");
                            continue;
                        }
                    };
                    for s in &nums {
                        assert_eq!(
                            re.is_match(s),
                            oracle(s, st, lo, hi, integer),
                            "{m} {lo:?} {hi:?} {integer} {s}"
                        );
                    }
                    for bad in ["01", "1.", ".5", "1e2", "--1", "00.5"] {
                        assert!(!re.is_match(bad), "{m} {bad}");
                    }
                }
            }
        }
    }

    proptest::proptest! {
        /// Random steps `c·10⁻ᵈ` and bounds: the regex (when built) holds exactly the sample
        /// numerals exact arithmetic calls multiples within the bounds, and a refusal comes only
        /// from a wide range of a step that is not `2ᵃ5ᵇ` with few endings.
        #[test]
        fn random_steps_and_bounds_agree_with_arithmetic(
            c in 1u64..60,
            d in 0u32..4,
            lo in proptest::option::of((-60i128..60, proptest::bool::ANY)),
            hi in proptest::option::of((-60i128..60, proptest::bool::ANY)),
            integer in proptest::bool::ANY,
        ) {
            let st = Step { c, d };
            let bound = |b: Option<(i128, bool)>| b.map(|(value, exclusive)| Bound { value, exclusive });
            let (lo, hi) = (bound(lo), bound(hi));
            match multiple_regex(lo, hi, integer, st) {
                Ok(Some(re)) => {
                    let re = full(&re);
                    for s in &numerals() {
                        proptest::prop_assert_eq!(
                            re.is_match(s),
                            oracle(s, st, lo, hi, integer),
                            "{:?} {:?} {:?} {} {}", st, lo, hi, integer, s
                        );
                    }
                }
                Ok(None) => {
                    for s in &numerals() {
                        proptest::prop_assert!(!oracle(s, st, lo, hi, integer), "{}", s);
                    }
                }
                Err(_) => {
                    let s = if integer { st.for_integers() } else { st };
                    let short = s
                        .ending_digits()
                        .is_some_and(|k| 10u128.pow(k) / s.c as u128 <= MAX_ENDINGS);
                    proptest::prop_assert!(!short);
                }
            }
        }
    }
}
