//! Lowering of arrays and objects.
//!
//! Arrays: `[` R₀ `]`, where Rᵢ is "the elements from position i on": it may stop once
//! `minItems` elements are there, and position i takes `prefixItems[i]` or else `items`.
//! Positions up to `max(prefixItems, minItems)` — or up to `maxItems` when given — are expanded
//! one nonterminal each (at most [`MAX_ARRAY_POSITIONS`]); beyond, `items` repeats.
//!
//! Objects: the declared properties in schema order (`properties` order, then required names
//! that only `additionalProperties`/`patternProperties` describe), each optional one
//! skippable, then any additional members. Aᵢ ("members from declared property i on, after at
//! least one member") and Bᵢ ("... before any member") place the commas; the grammar is linear
//! in the number of properties. Additional members are keyed by any string that is not a
//! declared name, or by `patternProperties` patterns.

use serde_json::{Map, Value};

use super::error::{push_pointer, SchemaError};
use super::lower::{Lowered, Lowerer, StringSite, MAX_ARRAY_POSITIONS};
use super::strings::{pattern_matches, string_regex, StringSpec, ANY_STRING};
use crate::grammar::{NonterminalId, Symbol};

fn count(o: &Map<String, Value>, k: &str) -> Option<u64> {
    o.get(k).and_then(|v| {
        v.as_u64().or_else(|| {
            v.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| f as u64)
        })
    })
}

impl<'a> Lowerer<'a> {
    pub(super) fn array(&mut self, o: &Map<String, Value>, ptr: &str, depth: usize) -> Lowered {
        let prefix: Vec<Value> = o
            .get("prefixItems")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let items = o.get("items").cloned().unwrap_or(Value::Bool(true));
        let min = count(o, "minItems").unwrap_or(0);
        let mut max = count(o, "maxItems");
        let p = prefix.len() as u64;
        if items == Value::Bool(false) {
            max = Some(max.map_or(p, |m| m.min(p)));
        }
        if max.is_some_and(|m| m < min) {
            return Ok(None);
        }
        let k = p.max(min);
        let limit = max.unwrap_or(k);
        if limit > MAX_ARRAY_POSITIONS || k > MAX_ARRAY_POSITIONS {
            return Err(SchemaError::Budget {
                pointer: ptr.into(),
                what: format!(
                    "expanding {} array positions (`prefixItems`/`minItems`/`maxItems`)",
                    limit.max(k)
                ),
                limit: MAX_ARRAY_POSITIONS as usize,
            });
        }
        let mut item_nt: Option<Option<NonterminalId>> = None;
        let mut elem = |this: &mut Self, i: u64| -> Lowered {
            if i < p {
                let iptr = push_pointer(&push_pointer(ptr, "prefixItems"), &i.to_string());
                return this.schema(&prefix[i as usize], &iptr, depth + 1);
            }
            if let Some(e) = item_nt {
                return Ok(e);
            }
            let e = this.schema(&items, &push_pointer(ptr, "items"), depth + 1)?;
            item_nt = Some(e);
            Ok(e)
        };
        let comma = self.lit(",");
        let sep = |i: u64| if i > 0 { vec![comma] } else { vec![] };
        // rest[i]: the elements from position i on (None: no completion from there).
        let mut next: Option<NonterminalId> = None;
        for i in (0..=limit).rev() {
            let r = self.fresh("elements");
            let mut has_rule = false;
            if i >= min {
                self.rule(r, vec![], ptr)?;
                has_rule = true;
            }
            if i < limit {
                if let (Some(e), Some(n)) = (elem(self, i)?, next) {
                    let mut rhs = sep(i);
                    rhs.extend([Symbol::N(e), Symbol::N(n)]);
                    self.rule(r, rhs, ptr)?;
                    has_rule = true;
                }
            } else if max.is_none() {
                if let Some(e) = elem(self, i)? {
                    // The unbounded tail: T → ε | "," E T.
                    let t = self.fresh("more_elements");
                    self.rule(t, vec![], ptr)?;
                    self.rule(t, vec![comma, Symbol::N(e), Symbol::N(t)], ptr)?;
                    let mut rhs = sep(i);
                    rhs.extend([Symbol::N(e), Symbol::N(t)]);
                    self.rule(r, rhs, ptr)?;
                }
            }
            if !has_rule {
                self.rule(r, vec![Symbol::N(r)], ptr)?;
                next = None;
            } else {
                next = Some(r);
            }
        }
        let Some(r0) = next else { return Ok(None) };
        let nt = self.fresh("array");
        let (l, rb) = (self.lit("["), self.lit("]"));
        self.rule(nt, vec![l, Symbol::N(r0), rb], ptr)?;
        Ok(Some(nt))
    }

    pub(super) fn object(&mut self, o: &Map<String, Value>, ptr: &str, depth: usize) -> Lowered {
        let empty = Map::new();
        let props = match o.get("properties") {
            None => &empty,
            Some(Value::Object(m)) => m,
            Some(_) => return Err(bad(ptr, "properties", "not an object")),
        };
        let pats = match o.get("patternProperties") {
            None => &empty,
            Some(Value::Object(m)) => m,
            Some(_) => return Err(bad(ptr, "patternProperties", "not an object")),
        };
        let mut required: Vec<String> = vec![];
        let mut required_set: hashbrown::HashSet<String> = hashbrown::HashSet::new();
        match o.get("required") {
            None => {}
            Some(Value::Array(a)) => {
                for r in a {
                    let r = r
                        .as_str()
                        .ok_or_else(|| bad(ptr, "required", "not a list of strings"))?;
                    if required_set.insert(r.to_string()) {
                        required.push(r.to_string());
                    }
                }
            }
            Some(_) => return Err(bad(ptr, "required", "not an array")),
        }
        let addl = o
            .get("additionalProperties")
            .cloned()
            .unwrap_or(Value::Bool(true));
        let pptr = push_pointer(ptr, "patternProperties");
        // Which patterns a name matches (a pattern that does not compile is reported here).
        let matching = |this: &mut Self, name: &str| -> Result<Vec<Value>, SchemaError> {
            let mut out = vec![];
            for (pat, s) in pats {
                match pattern_matches(pat, name) {
                    Ok(true) => out.push(s.clone()),
                    Ok(false) => {}
                    Err(e) => {
                        if !this.options.lenient {
                            return Err(bad_pattern(&pptr, pat, &e));
                        }
                    }
                }
            }
            Ok(out)
        };
        // Declared members, in schema order.
        let mut declared: Vec<(String, Value, String)> = vec![];
        let mut any_name_matches = false;
        for (name, s) in props {
            let m = matching(self, name)?;
            any_name_matches |= !m.is_empty();
            let mut schema = s.clone();
            for extra in m {
                schema = serde_json::json!({ "allOf": [schema, extra] });
            }
            declared.push((
                name.clone(),
                schema,
                push_pointer(&push_pointer(ptr, "properties"), name),
            ));
        }
        for name in &required {
            if props.contains_key(name) {
                continue;
            }
            let m = matching(self, name)?;
            any_name_matches |= !m.is_empty();
            let schema = if m.is_empty() {
                addl.clone()
            } else {
                serde_json::json!({ "allOf": m })
            };
            declared.push((name.clone(), schema, push_pointer(ptr, "required")));
        }
        let colon = self.lit(":");
        let mut members: Vec<(Symbol, bool)> = vec![];
        for (name, schema, sptr) in &declared {
            // Every declared name gets its literal, so it never lexes as an additional name.
            self.key(name);
            let is_required = required_set.contains(name);
            match self.schema(schema, sptr, depth + 1)? {
                None if is_required => return Ok(None),
                None => {}
                Some(v) => {
                    let key = self.key(name);
                    let m = self.fresh("member");
                    self.rule(m, vec![key, colon, Symbol::N(v)], ptr)?;
                    members.push((Symbol::N(m), !is_required));
                }
            }
        }
        // Additional members.
        // Keyed by any string: a declared name lexes as its literal only (literals beat
        // regexes), never as this lexeme, so it cannot come back as an additional member.
        let mut extras: Vec<(String, Value, String)> = vec![];
        let other_key = ANY_STRING.to_string();
        let trivial = |v: &Value| {
            v == &Value::Bool(true)
                || v.as_object()
                    .is_some_and(|m| m.keys().all(|k| super::refs::is_annotation(k)))
        };
        if pats.is_empty() || (pats.values().all(trivial) && addl != Value::Bool(false)) {
            if pats.is_empty() && addl != Value::Bool(false) {
                extras.push((
                    other_key,
                    addl.clone(),
                    push_pointer(ptr, "additionalProperties"),
                ));
            } else if !pats.is_empty() {
                // Patterns that impose nothing: a key that matches one is as free as any other,
                // provided additionalProperties is free too.
                let v = if trivial(&addl) {
                    Value::Bool(true)
                } else {
                    addl.clone()
                };
                if !trivial(&addl) {
                    self.unsupported(&pptr, "patternProperties", "keys matching a pattern escape `additionalProperties`, which the grammar cannot express")?;
                }
                extras.push((other_key, v, push_pointer(ptr, "additionalProperties")));
            }
        } else {
            let distinct = {
                let mut v: Vec<&Value> = pats.values().collect();
                v.dedup();
                v.len() == 1
            };
            if addl != Value::Bool(false) {
                self.unsupported(&pptr, "patternProperties", "`patternProperties` beside additional properties that match no pattern cannot be expressed exactly")?;
                extras.push((
                    other_key,
                    addl.clone(),
                    push_pointer(ptr, "additionalProperties"),
                ));
            } else if !distinct {
                self.unsupported(&pptr, "patternProperties", "a key matching several patterns must satisfy all their schemas, which is not enforced")?;
            }
            let _ = any_name_matches;
            for (pat, s) in pats {
                let spec = StringSpec {
                    pattern: Some(pat),
                    ..Default::default()
                };
                match string_regex(&spec) {
                    Ok(Some(re)) => extras.push((re, s.clone(), push_pointer(&pptr, pat))),
                    Ok(None) => {}
                    Err(e) => {
                        if !self.options.lenient {
                            return Err(bad_pattern(&pptr, pat, &e));
                        }
                        self.unsupported(
                            &push_pointer(&pptr, pat),
                            "patternProperties",
                            &format!("{e:?}"),
                        )?;
                    }
                }
            }
        }
        let mut extra_nt: Option<NonterminalId> = None;
        for (key_re, schema, sptr) in extras {
            if let Some(v) = self.schema(&schema, &sptr, depth + 1)? {
                // The pattern of a `patternProperties` key (None: any undeclared name).
                let pattern = sptr
                    .rsplit_once("/patternProperties/")
                    .map(|(_, p)| p.replace("~1", "/").replace("~0", "~"));
                let lexeme = if key_re == ANY_STRING {
                    self.regex("STRING", key_re)
                } else {
                    self.regex("KEY_PATTERN", key_re)
                };
                let site = StringSite::Key {
                    excluded: declared.iter().map(|d| d.0.clone()).collect(),
                    pattern,
                };
                let key = self.string_site(lexeme, site, ptr)?;
                let x = *extra_nt.get_or_insert_with(|| self.fresh_nt("extra_member"));
                self.rule(x, vec![key, colon, Symbol::N(v)], ptr)?;
            }
        }
        self.members(&members, extra_nt, ptr)
    }

    fn fresh_nt(&mut self, base: &str) -> NonterminalId {
        self.fresh(base)
    }

    /// `{` members `}`: in any order when there are at most
    /// [`SchemaOptions::any_order_up_to`](super::SchemaOptions::any_order_up_to) declared
    /// members, else in schema order.
    pub(super) fn members(
        &mut self,
        members: &[(Symbol, bool)],
        extra: Option<NonterminalId>,
        ptr: &str,
    ) -> Lowered {
        if members.len() <= self.options.any_order_up_to {
            self.members_any_order(members, extra, ptr)
        } else {
            self.members_chain(members, extra, ptr)
        }
    }

    /// Members in any order, each declared one at most once: A(U) is "after at least one
    /// member, with the declared members U used"; 2ⁿ states for n declared members.
    fn members_any_order(
        &mut self,
        members: &[(Symbol, bool)],
        extra: Option<NonterminalId>,
        ptr: &str,
    ) -> Lowered {
        let comma = self.lit(",");
        let n = members.len();
        let required: u32 = members
            .iter()
            .enumerate()
            .filter(|(_, m)| !m.1)
            .fold(0, |acc, (i, _)| acc | (1 << i));
        let states: Vec<NonterminalId> = (0..1u32 << n).map(|_| self.fresh("after")).collect();
        for used in 0..1u32 << n {
            let a = states[used as usize];
            if used & required == required {
                self.rule(a, vec![], ptr)?;
            }
            for (k, &(m, _)) in members.iter().enumerate() {
                if used & (1 << k) == 0 {
                    self.rule(
                        a,
                        vec![comma, m, Symbol::N(states[(used | 1 << k) as usize])],
                        ptr,
                    )?;
                }
            }
            if let Some(x) = extra {
                self.rule(a, vec![comma, Symbol::N(x), Symbol::N(a)], ptr)?;
            }
        }
        let b = self.fresh("before");
        if required == 0 {
            self.rule(b, vec![], ptr)?;
        }
        for (k, &(m, _)) in members.iter().enumerate() {
            self.rule(b, vec![m, Symbol::N(states[1 << k])], ptr)?;
        }
        if let Some(x) = extra {
            self.rule(b, vec![Symbol::N(x), Symbol::N(states[0])], ptr)?;
        }
        let nt = self.fresh("object");
        let (l, r) = (self.lit("{"), self.lit("}"));
        self.rule(nt, vec![l, Symbol::N(b), r], ptr)?;
        Ok(Some(nt))
    }

    /// `{` B₀ `}` with Aᵢ/Bᵢ as in the module docs.
    fn members_chain(
        &mut self,
        members: &[(Symbol, bool)],
        extra: Option<NonterminalId>,
        ptr: &str,
    ) -> Lowered {
        let comma = self.lit(",");
        let n = members.len();
        let a_n = self.fresh("after");
        let b_n = self.fresh("before");
        self.rule(a_n, vec![], ptr)?;
        self.rule(b_n, vec![], ptr)?;
        if let Some(x) = extra {
            self.rule(a_n, vec![comma, Symbol::N(x), Symbol::N(a_n)], ptr)?;
            self.rule(b_n, vec![Symbol::N(x), Symbol::N(a_n)], ptr)?;
        }
        let (mut a_next, mut b_next) = (a_n, b_n);
        for i in (0..n).rev() {
            let (m, optional) = members[i];
            let (a, b) = (self.fresh("after"), self.fresh("before"));
            self.rule(a, vec![comma, m, Symbol::N(a_next)], ptr)?;
            self.rule(b, vec![m, Symbol::N(a_next)], ptr)?;
            if optional {
                self.rule(a, vec![Symbol::N(a_next)], ptr)?;
                self.rule(b, vec![Symbol::N(b_next)], ptr)?;
            }
            a_next = a;
            b_next = b;
        }
        let nt = self.fresh("object");
        let (l, r) = (self.lit("{"), self.lit("}"));
        self.rule(nt, vec![l, Symbol::N(b_next), r], ptr)?;
        Ok(Some(nt))
    }
}

fn bad(ptr: &str, keyword: &str, reason: &str) -> SchemaError {
    SchemaError::BadKeyword {
        pointer: ptr.into(),
        keyword: keyword.into(),
        reason: reason.into(),
    }
}

/// A `patternProperties` key that is not a regex lacuna can compile.
fn bad_pattern(pptr: &str, pat: &str, e: &impl std::fmt::Debug) -> SchemaError {
    SchemaError::BadPattern {
        pointer: push_pointer(pptr, pat),
        pattern: pat.to_string(),
        reason: format!("{e:?}"),
    }
}
