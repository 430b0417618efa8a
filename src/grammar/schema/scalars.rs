//! Lowering of scalar constraints and exact values: numbers with bounds, strings with length,
//! `pattern` and `format`, and `enum`/`const` values (each value a small grammar of its own:
//! any whitespace, canonical string escapes, `1` also as `1.0`, object members in the order
//! written).

use serde_json::{Map, Value};

use super::error::{push_pointer, SchemaError};
use super::lower::{Lowerer, StringSite};
use super::multiples::{multiple_regex, Step, MAX_DIGITS};
use super::numbers::{number_regex, Bound};
use super::refs::json_eq;
use super::strings::{
    format_matcher, is_standard_format, literal_regex, pattern_matches, string_pattern,
    StringIssue, StringSpec,
};
use crate::grammar::Symbol;

/// Bounds written as floats (`1e20`, `2.5e15`) from this magnitude on are not expanded into
/// digit ranges: numbers that large are commonly written with an exponent, which bounded number
/// lexemes do not admit. Bounds written as JSON integers are exact at any magnitude.
const MAX_BOUND: f64 = 1e15;

impl<'a> Lowerer<'a> {
    /// The number lexeme of a schema (`integer`: integers only), or `None` if no number fits.
    pub(super) fn number(
        &mut self,
        o: &Map<String, Value>,
        integer: bool,
        ptr: &str,
    ) -> Result<Option<Symbol>, SchemaError> {
        let num = |k: &str| o.get(k).filter(|v| v.is_number());
        let draft4 = |k: &str| o.get(k) == Some(&Value::Bool(true));
        // (value, exclusive) candidates for each side; the tightest wins.
        let mut lows = vec![];
        let mut highs = vec![];
        if let Some(v) = num("minimum") {
            lows.push(("minimum", v, draft4("exclusiveMinimum")));
        }
        if let Some(v) = num("exclusiveMinimum") {
            lows.push(("exclusiveMinimum", v, true));
        }
        if let Some(v) = num("maximum") {
            highs.push(("maximum", v, draft4("exclusiveMaximum")));
        }
        if let Some(v) = num("exclusiveMaximum") {
            highs.push(("exclusiveMaximum", v, true));
        }
        let mut lo: Option<Bound> = None;
        let mut hi: Option<Bound> = None;
        for (side, list) in [(0, lows), (1, highs)] {
            for (kw, v, excl) in list {
                let Some(b) =
                    self.bound(v, excl, side == 0, integer, &push_pointer(ptr, kw), kw)?
                else {
                    continue;
                };
                let slot = if side == 0 { &mut lo } else { &mut hi };
                let tighter = match *slot {
                    None => true,
                    Some(c) if side == 0 => {
                        b.value > c.value || (b.value == c.value && b.exclusive)
                    }
                    Some(c) => b.value < c.value || (b.value == c.value && b.exclusive),
                };
                if tighter {
                    *slot = Some(b);
                }
            }
        }
        let name = if integer { "INTEGER" } else { "NUMBER" };
        let step = o.get("multipleOf").and_then(Value::as_number);
        let re = match step.map(|n| (n, Step::from_json(n))) {
            None => number_regex(lo, hi, integer, self.options.finite_numbers),
            Some((_, Some(step))) => match multiple_regex(lo, hi, integer, step) {
                Ok(re) => re,
                Err(why) => {
                    self.unsupported(&push_pointer(ptr, "multipleOf"), "multipleOf", &why)?;
                    number_regex(lo, hi, integer, self.options.finite_numbers)
                }
            },
            Some((n, None)) => {
                self.unsupported(
                    &push_pointer(ptr, "multipleOf"),
                    "multipleOf",
                    &format!("{n} is not a positive decimal of at most {MAX_DIGITS} digits"),
                )?;
                number_regex(lo, hi, integer, self.options.finite_numbers)
            }
        };
        Ok(re.map(|re| self.regex(name, re)))
    }

    /// One bound as an integral [`Bound`]. Integer schemas round non-integral bounds inward
    /// (exact); number schemas cannot take them (unsupported; lenient widens them outward).
    /// A bound written as a JSON integer is exact at any magnitude (the validator compares
    /// integers exactly); the number lexemes admit no fraction from 2⁵³ on, where a decimal
    /// fraction and its float value can fall on different sides of the bound.
    fn bound(
        &mut self,
        value: &Value,
        exclusive: bool,
        lower: bool,
        integer: bool,
        ptr: &str,
        kw: &str,
    ) -> Result<Option<Bound>, SchemaError> {
        let exact = value
            .as_i64()
            .map(i128::from)
            .or(value.as_u64().map(i128::from));
        if let Some(value) = exact {
            return Ok(Some(Bound { value, exclusive }));
        }
        let v = value.as_f64().unwrap_or(f64::NAN);
        if !v.is_finite() || v.abs() >= MAX_BOUND {
            self.unsupported(ptr, kw, "bounds of magnitude 1e15 or more are not expanded")?;
            return Ok(None);
        }
        if v.fract() == 0.0 {
            return Ok(Some(Bound {
                value: v as i128,
                exclusive,
            }));
        }
        if integer {
            let value = if lower { v.ceil() } else { v.floor() } as i128;
            return Ok(Some(Bound {
                value,
                exclusive: false,
            }));
        }
        self.unsupported(ptr, kw, "non-integer bounds on numbers are not enforced")?;
        let value = if lower { v.floor() } else { v.ceil() } as i128;
        Ok(Some(Bound {
            value,
            exclusive: false,
        }))
    }

    /// The string lexeme of a schema, or `None` if no string fits.
    pub(super) fn string(
        &mut self,
        o: &Map<String, Value>,
        ptr: &str,
    ) -> Result<Option<Symbol>, SchemaError> {
        let mut spec = StringSpec {
            min_length: o.get("minLength").and_then(Value::as_u64).unwrap_or(0),
            max_length: o.get("maxLength").and_then(Value::as_u64),
            pattern: o.get("pattern").and_then(Value::as_str),
            format: o
                .get("format")
                .and_then(Value::as_str)
                .filter(|f| is_standard_format(f)),
        };
        if let Some(v) = o.get("maxLength") {
            if v.as_f64().is_some_and(|f| f.fract() == 0.0 && f >= 0.0) && spec.max_length.is_none()
            {
                spec.max_length = v.as_f64().map(|f| f as u64);
            }
        }
        if let Some(v) = o.get("minLength") {
            if spec.min_length == 0 {
                spec.min_length = v
                    .as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                    .map_or(0, |f| f as u64);
            }
        }
        loop {
            match string_pattern(&spec) {
                Ok(None) => return Ok(None),
                Ok(Some(p)) => {
                    let lexeme = self.string_terminal(p);
                    if let (Symbol::T(t), Some(_)) = (lexeme, spec.pattern) {
                        self.b
                            .set_terminal_source(t, push_pointer(ptr, "pattern").to_string());
                    }
                    let site = StringSite::Spec {
                        min_length: spec.min_length,
                        max_length: spec.max_length,
                        pattern: spec.pattern.map(String::from),
                        format: spec.format.map(String::from),
                    };
                    return self.string_site(lexeme, site, ptr).map(Some);
                }
                Err(StringIssue::BadPattern(reason)) => {
                    let pattern = spec.pattern.unwrap_or_default().to_string();
                    if !self.options.lenient {
                        return Err(SchemaError::BadPattern {
                            pointer: push_pointer(ptr, "pattern"),
                            pattern,
                            reason,
                        });
                    }
                    self.unsupported(&push_pointer(ptr, "pattern"), "pattern", &reason)?;
                    spec.pattern = None;
                }
                Err(StringIssue::Unsupported { keyword, reason }) => {
                    self.unsupported(&push_pointer(ptr, &keyword), &keyword, &reason)?;
                    match keyword.as_str() {
                        "format" => spec.format = None,
                        "minLength" => spec.min_length = 0,
                        _ => spec.max_length = None,
                    }
                    if keyword != "format" && (spec.pattern.is_some() || spec.format.is_some()) {
                        spec.min_length = 0;
                        spec.max_length = None;
                    }
                }
            }
        }
    }

    /// `enum`/`const`: the listed values that satisfy the sibling keywords, each as an exact
    /// value grammar.
    pub(super) fn enumeration(
        &mut self,
        o: &Map<String, Value>,
        types: &[&str],
        ptr: &str,
    ) -> super::lower::Lowered {
        let mut values: Vec<Value> = match o.get("enum") {
            Some(Value::Array(a)) => a.clone(),
            Some(_) => {
                return Err(SchemaError::BadKeyword {
                    pointer: ptr.into(),
                    keyword: "enum".into(),
                    reason: "not an array".into(),
                })
            }
            None => vec![],
        };
        if let Some(c) = o.get("const") {
            if o.contains_key("enum") {
                values.retain(|v| json_eq(v, c));
            } else {
                values = vec![c.clone()];
            }
        }
        let structural = [
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "items",
            "prefixItems",
            "minItems",
            "maxItems",
        ];
        let mut kept = vec![];
        for v in values {
            let ok_type = match &v {
                Value::Null => types.contains(&"null"),
                Value::Bool(_) => types.contains(&"boolean"),
                Value::Number(n) => {
                    types.contains(&"number")
                        || (types.contains(&"integer")
                            && n.as_f64().is_some_and(|f| f.fract() == 0.0))
                }
                Value::String(_) => types.contains(&"string"),
                Value::Array(_) => types.contains(&"array"),
                Value::Object(_) => types.contains(&"object"),
            };
            if !ok_type {
                continue;
            }
            match &v {
                Value::String(s) => {
                    let n = s.chars().count() as u64;
                    if o.get("minLength")
                        .and_then(Value::as_u64)
                        .is_some_and(|m| n < m)
                        || o.get("maxLength")
                            .and_then(Value::as_u64)
                            .is_some_and(|m| n > m)
                    {
                        continue;
                    }
                    if let Some(p) = o.get("pattern").and_then(Value::as_str) {
                        match pattern_matches(p, s) {
                            Ok(false) => continue,
                            Ok(true) => {}
                            Err(_) => self.unsupported(
                                &push_pointer(ptr, "pattern"),
                                "pattern",
                                "the pattern cannot be compiled",
                            )?,
                        }
                    }
                    let format = o.get("format").and_then(Value::as_str);
                    if let Some(f) = format.filter(|f| is_standard_format(f)) {
                        match format_matcher(f) {
                            Some(m) => {
                                if !m.is_match(s) {
                                    continue;
                                }
                            }
                            None => self.unsupported(
                                &push_pointer(ptr, "format"),
                                "format",
                                &format!("format {f:?} is not enforced"),
                            )?,
                        }
                    }
                }
                Value::Number(n) => {
                    let f = n.as_f64().unwrap_or(f64::NAN);
                    let num = |k: &str| o.get(k).and_then(Value::as_f64);
                    let draft4 = |k: &str| o.get(k) == Some(&Value::Bool(true));
                    let bad = num("minimum").is_some_and(|m| {
                        if draft4("exclusiveMinimum") {
                            f <= m
                        } else {
                            f < m
                        }
                    }) || num("maximum").is_some_and(|m| {
                        if draft4("exclusiveMaximum") {
                            f >= m
                        } else {
                            f > m
                        }
                    }) || num("exclusiveMinimum").is_some_and(|m| f <= m)
                        || num("exclusiveMaximum").is_some_and(|m| f >= m)
                        || o.get("multipleOf")
                            .and_then(Value::as_number)
                            .and_then(Step::from_json)
                            .is_some_and(|step| !step.divides(n));
                    if bad {
                        continue;
                    }
                }
                Value::Array(_) | Value::Object(_) => {
                    if let Some(k) = structural.iter().find(|k| o.contains_key(**k)) {
                        self.unsupported(&push_pointer(ptr, k), k, "structural keywords beside `enum`/`const` are not checked against the values")?;
                    }
                }
                _ => {}
            }
            kept.push(v);
        }
        if kept.is_empty() {
            return Ok(None);
        }
        let nt = self.fresh("enum");
        for v in &kept {
            let s = self.literal(v, ptr)?;
            self.rule(nt, vec![s], ptr)?;
        }
        Ok(Some(nt))
    }

    /// The grammar of one exact JSON value.
    pub(super) fn literal(&mut self, v: &Value, ptr: &str) -> Result<Symbol, SchemaError> {
        Ok(match v {
            Value::Null => self.lit("null"),
            Value::Bool(true) => self.lit("true"),
            Value::Bool(false) => self.lit("false"),
            Value::Number(n) => {
                let re = number_literal_regex(n);
                self.regex("NUMBER_VALUE", re)
            }
            Value::String(s) => {
                let lexeme = self.regex("STRING_VALUE", literal_regex(s));
                self.string_site(lexeme, StringSite::Exact(s.clone()), ptr)?
            }
            Value::Array(items) => {
                let nt = self.fresh("array_value");
                let mut rhs = vec![self.lit("[")];
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        rhs.push(self.lit(","));
                    }
                    rhs.push(self.literal(item, ptr)?);
                }
                rhs.push(self.lit("]"));
                self.rule(nt, rhs, ptr)?;
                Symbol::N(nt)
            }
            Value::Object(members) => {
                let mut list = vec![];
                for (k, item) in members {
                    let m = self.fresh("member_value");
                    let key = self.key(k);
                    let value = self.literal(item, ptr)?;
                    let member = self.member(key, value);
                    self.rule(m, member, ptr)?;
                    list.push((Symbol::N(m), false));
                }
                Symbol::N(
                    self.members(&list, None, ptr)?
                        .expect("an object value is a word"),
                )
            }
        })
    }
}

/// The lexemes of one number value: integers also with a zero fraction (`3`, `3.0`, `-0`),
/// others as serde_json writes them, trailing zeros allowed.
fn number_literal_regex(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        let body = regex_syntax::escape(&i.to_string());
        return if i == 0 {
            r"-?0(\.0+)?".into()
        } else {
            format!(r"{body}(\.0+)?")
        };
    }
    if let Some(u) = n.as_u64() {
        return format!(r"{u}(\.0+)?");
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f.fract() == 0.0 && f.abs() < 1e15 {
        let i = f as i64;
        return if i == 0 {
            r"-?0(\.0+)?".into()
        } else {
            format!(r"{}(\.0+)?", regex_syntax::escape(&i.to_string()))
        };
    }
    let s = n.to_string();
    if s.contains('.') && !s.contains(['e', 'E']) {
        format!("{}0*", regex_syntax::escape(&s))
    } else {
        regex_syntax::escape(&s)
    }
}
