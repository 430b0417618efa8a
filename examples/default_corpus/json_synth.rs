//! Synthetic instances of real JSON schemas, for the default model's `json` task.
//!
//! MaskBench ships valid instances for only some of its schemas (3,668 usable ones), too few
//! for a small model to learn JSON syntax and to copy property names from an unseen schema.
//! This module writes more: for a schema, a random instance built by walking it (required
//! properties always, optional ones at random; enums, consts, bounds, formats and item counts
//! honoured), with values drawn from the real instances' values under the same property name
//! where there are any, so the text reads like data rather than noise.
//!
//! It only proposes: the corpus builder keeps an instance when the `jsonschema` crate
//! validates it and lacuna's strict grammar accepts it, as it does for the real instances.
//! Schemas it cannot walk (remote `$ref`s, deep nesting) simply yield nothing.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

/// The deepest nesting walked.
const MAX_DEPTH: usize = 8;

/// A small seeded generator (SplitMix64): the corpus must be the same on every build.
pub struct Draw(u64);

impl Draw {
    pub fn new(seed: u64) -> Draw {
        Draw(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        (!items.is_empty()).then(|| &items[self.below(items.len())])
    }
}

/// Values seen in real instances, by the property name they stood under.
#[derive(Default)]
pub struct ValuePools {
    strings: HashMap<String, Vec<String>>,
    numbers: HashMap<String, Vec<Value>>,
    /// Short strings of any property, for names never seen.
    any_string: Vec<String>,
}

impl ValuePools {
    /// Collects the scalar values of `instance` under their property names.
    pub fn add(&mut self, instance: &Value) {
        self.add_under("", instance);
    }

    fn add_under(&mut self, key: &str, value: &Value) {
        match value {
            Value::Object(map) => map.iter().for_each(|(k, v)| self.add_under(k, v)),
            Value::Array(items) => items.iter().for_each(|v| self.add_under(key, v)),
            Value::String(s) if s.len() <= 40 && !s.contains('\n') => {
                self.strings
                    .entry(key.to_string())
                    .or_default()
                    .push(s.clone());
                if s.len() <= 24 {
                    self.any_string.push(s.clone());
                }
            }
            Value::Number(_) => self
                .numbers
                .entry(key.to_string())
                .or_default()
                .push(value.clone()),
            _ => {}
        }
    }

    /// Removes repeats, so a common value does not crowd out the rest.
    pub fn dedup(&mut self) {
        for v in self.strings.values_mut() {
            v.sort();
            v.dedup();
        }
        self.any_string.sort();
        self.any_string.dedup();
    }
}

/// Walks a schema into random instances.
pub struct Synthesizer<'a> {
    root: &'a Value,
    pools: &'a ValuePools,
}

impl<'a> Synthesizer<'a> {
    pub fn new(root: &'a Value, pools: &'a ValuePools) -> Synthesizer<'a> {
        Synthesizer { root, pools }
    }

    /// One instance of the root schema, or `None` where the walk meets what it cannot do.
    pub fn instance(&self, draw: &mut Draw) -> Option<Value> {
        self.value(self.root, "", draw, 0)
    }

    fn value(&self, schema: &Value, key: &str, draw: &mut Draw, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        let s = match schema {
            Value::Bool(true) => return Some(self.string(&Map::new(), key, draw)),
            Value::Object(s) => s,
            _ => return None,
        };
        if let Some(r) = s.get("$ref").and_then(Value::as_str) {
            // A local reference's fragment is a JSON pointer (`~1` and `~0` escapes and all).
            let target = r.strip_prefix('#').and_then(|p| self.root.pointer(p))?;
            return self.value(target, key, draw, depth + 1);
        }
        if let Some(c) = s.get("const") {
            return Some(c.clone());
        }
        if let Some(e) = s.get("enum").and_then(Value::as_array) {
            return draw.pick(e).cloned();
        }
        if let Some(all) = s.get("allOf").and_then(Value::as_array) {
            return self.value(&merged(s, all, self.root), key, draw, depth + 1);
        }
        for k in ["anyOf", "oneOf"] {
            if let Some(options) = s.get(k).and_then(Value::as_array) {
                // The keywords beside the alternatives apply to the chosen one as well.
                let mut chosen = draw.pick(options)?.as_object()?.clone();
                for (k2, v) in s.iter().filter(|(k2, _)| *k2 != k) {
                    chosen.entry(k2.clone()).or_insert_with(|| v.clone());
                }
                return self.value(&Value::Object(chosen), key, draw, depth + 1);
            }
        }
        let ty = match s.get("type") {
            Some(Value::String(t)) => t.clone(),
            Some(Value::Array(ts)) => {
                let non_null: Vec<&Value> = ts.iter().filter(|t| *t != "null").collect();
                match (non_null.is_empty(), draw.chance(0.9)) {
                    (false, true) => draw.pick(&non_null)?.as_str()?.to_string(),
                    _ => draw.pick(ts)?.as_str()?.to_string(),
                }
            }
            _ if s.contains_key("properties") || s.contains_key("required") => "object".into(),
            _ if s.contains_key("items") => "array".into(),
            _ => "string".into(),
        };
        match ty.as_str() {
            "object" => self.object(s, draw, depth),
            "array" => self.array(s, key, draw, depth),
            "string" => Some(self.string(s, key, draw)),
            "integer" => Some(self.number(s, key, draw, true)),
            "number" => Some(self.number(s, key, draw, false)),
            "boolean" => Some(Value::Bool(draw.chance(0.5))),
            "null" => Some(Value::Null),
            _ => None,
        }
    }

    fn object(&self, s: &Map<String, Value>, draw: &mut Draw, depth: usize) -> Option<Value> {
        let empty = Map::new();
        let props = s
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let min = s.get("minProperties").and_then(Value::as_u64).unwrap_or(0) as usize;
        let mut out = Map::new();
        for (name, sub) in props {
            let wanted = required.contains(&name.as_str()) || draw.chance(0.6);
            if wanted {
                out.insert(name.clone(), self.value(sub, name, draw, depth + 1)?);
            }
        }
        for name in required {
            if !out.contains_key(name) {
                // Required but not declared: any value.
                out.insert(name.to_string(), self.string(&Map::new(), name, draw));
            }
        }
        for (name, sub) in props {
            if out.len() >= min {
                break;
            }
            if !out.contains_key(name) {
                out.insert(name.clone(), self.value(sub, name, draw, depth + 1)?);
            }
        }
        Some(Value::Object(out))
    }

    fn array(
        &self,
        s: &Map<String, Value>,
        key: &str,
        draw: &mut Draw,
        depth: usize,
    ) -> Option<Value> {
        let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = s
            .get("maxItems")
            .and_then(Value::as_u64)
            .map_or(min + 3, |m| (m as usize).min(min + 3));
        // At least one item where the bounds allow it, at most `max`.
        let count = if max <= min {
            min
        } else {
            min.max(1) + draw.below(max - min.max(1) + 1)
        };
        let prefix = s
            .get("prefixItems")
            .or_else(|| s.get("items").filter(|i| i.is_array()))
            .and_then(Value::as_array);
        let items = s.get("items").filter(|i| i.is_object() || i.is_boolean());
        let mut out = Vec::new();
        for i in 0..count {
            let sub = match prefix.and_then(|p| p.get(i)) {
                Some(sub) => sub,
                None => match items {
                    Some(sub) => sub,
                    None if prefix.is_some() => break,
                    None => &Value::Bool(true),
                },
            };
            out.push(self.value(sub, key, draw, depth + 1)?);
        }
        Some(Value::Array(out))
    }

    fn string(&self, s: &Map<String, Value>, key: &str, draw: &mut Draw) -> Value {
        let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = s
            .get("maxLength")
            .and_then(Value::as_u64)
            .map(|m| m as usize);
        let fits = |t: &String| {
            let n = t.chars().count();
            n >= min && max.is_none_or(|m| n <= m)
        };
        if let Some(f) = s.get("format").and_then(Value::as_str) {
            if let Some(v) = formatted(f, key, draw, self.pools) {
                return Value::String(v);
            }
        }
        let own: Vec<&String> = self
            .pools
            .strings
            .get(key)
            .map(|v| v.iter().filter(|t| fits(t)).collect())
            .unwrap_or_default();
        if let Some(v) = draw.pick(&own) {
            return Value::String((*v).clone());
        }
        let any: Vec<&String> = if draw.chance(0.5) || key.is_empty() {
            self.pools.any_string.iter().filter(|t| fits(t)).collect()
        } else {
            Vec::new()
        };
        match draw.pick(&any) {
            Some(v) => Value::String((*v).clone()),
            // A readable word made of the property's name.
            None => {
                let base = if key.is_empty() { "value" } else { key };
                let mut t: String = base.chars().take(max.unwrap_or(usize::MAX)).collect();
                while t.chars().count() < min {
                    t.push('x');
                }
                Value::String(t)
            }
        }
    }

    fn number(&self, s: &Map<String, Value>, key: &str, draw: &mut Draw, integer: bool) -> Value {
        let bound = |k: &str| s.get(k).and_then(Value::as_f64);
        let mut lo = bound("minimum").unwrap_or(f64::NEG_INFINITY);
        let mut hi = bound("maximum").unwrap_or(f64::INFINITY);
        if let Some(x) = bound("exclusiveMinimum") {
            lo = lo.max(x + if integer { 1.0 } else { 0.01 });
        }
        if let Some(x) = bound("exclusiveMaximum") {
            hi = hi.min(x - if integer { 1.0 } else { 0.01 });
        }
        let seen: Vec<&Value> = self
            .pools
            .numbers
            .get(key)
            .map(|v| {
                v.iter()
                    .filter(|n| {
                        let x = n.as_f64().unwrap_or(f64::NAN);
                        x >= lo && x <= hi && (!integer || n.is_i64() || n.is_u64())
                    })
                    .collect()
            })
            .unwrap_or_default();
        if s.get("multipleOf").is_none() {
            if let Some(v) = draw.pick(&seen) {
                return (*v).clone();
            }
        }
        let (a, b) = match (lo.is_finite(), hi.is_finite()) {
            (true, true) => (lo, hi),
            (true, false) => (lo, lo + 100.0),
            (false, true) => (hi - 100.0, hi),
            (false, false) => (0.0, 100.0),
        };
        let x = a + (b - a) * draw.below(1001) as f64 / 1000.0;
        let step = s.get("multipleOf").and_then(Value::as_f64);
        match (integer, step) {
            (_, Some(m)) if m > 0.0 => {
                let k = (x / m).ceil() * m;
                if integer || m.fract() == 0.0 {
                    json!(k as i64)
                } else {
                    json!(k)
                }
            }
            (true, _) => json!(x.clamp(a, b).ceil().min(b.floor()) as i64),
            (false, _) => json!((x * 100.0).round() / 100.0),
        }
    }
}

/// A value in a string format, readable: dates in recent years, addresses at example.com.
fn formatted(format: &str, key: &str, draw: &mut Draw, pools: &ValuePools) -> Option<String> {
    let (y, m, d) = (
        2015 + draw.below(11),
        1 + draw.below(12),
        1 + draw.below(28),
    );
    let (hh, mm, ss) = (draw.below(24), draw.below(60), draw.below(60));
    let word = || {
        let k: String = key
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_lowercase();
        if k.is_empty() {
            "item".to_string()
        } else {
            k
        }
    };
    Some(match format {
        "date" => format!("{y:04}-{m:02}-{d:02}"),
        "date-time" => format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z"),
        "time" => format!("{hh:02}:{mm:02}:{ss:02}Z"),
        "email" => {
            let names = ["jane.doe", "john.smith", "alex", "maria.garcia", "li.wei"];
            format!("{}@example.com", draw.pick(&names)?)
        }
        "uri" | "url" | "uri-reference" | "iri" => format!("https://example.com/{}", word()),
        "hostname" => "example.com".to_string(),
        "ipv4" => format!("192.168.{}.{}", draw.below(256), draw.below(256)),
        "ipv6" => "2001:db8::1".to_string(),
        "uuid" => {
            let h = |n: usize, draw: &mut Draw| -> String {
                (0..n)
                    .map(|_| char::from_digit(draw.below(16) as u32, 16).unwrap())
                    .collect()
            };
            format!(
                "{}-{}-4{}-a{}-{}",
                h(8, draw),
                h(4, draw),
                h(3, draw),
                h(3, draw),
                h(12, draw)
            )
        }
        _ => return pools.strings.get(key).and_then(|v| draw.pick(v)).cloned(),
    })
}

/// `allOf` folded into one schema: properties and required names united, other keywords
/// taken from the first member that has them (the validator judges the result).
fn merged(outer: &Map<String, Value>, all: &[Value], root: &Value) -> Value {
    let mut out: Map<String, Value> = outer
        .iter()
        .filter(|(k, _)| *k != "allOf")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for member in all {
        let member = match member.get("$ref").and_then(Value::as_str) {
            Some(r) => r
                .strip_prefix('#')
                .and_then(|p| root.pointer(p))
                .unwrap_or(member),
            None => member,
        };
        let Some(m) = member.as_object() else {
            continue;
        };
        for (k, v) in m {
            match (k.as_str(), out.get_mut(k)) {
                ("properties", Some(Value::Object(p))) => {
                    for (name, sub) in v.as_object().into_iter().flatten() {
                        p.entry(name.clone()).or_insert_with(|| sub.clone());
                    }
                }
                ("required", Some(Value::Array(r))) => {
                    for name in v.as_array().into_iter().flatten() {
                        if !r.contains(name) {
                            r.push(name.clone());
                        }
                    }
                }
                (_, Some(_)) => {}
                (_, None) => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
    }
    Value::Object(out)
}
