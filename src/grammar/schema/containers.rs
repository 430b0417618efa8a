//! Lowering of arrays (objects are in [`super::objects`]).
//!
//! Arrays: `[` R₀ `]`, where Rᵢ is "the elements from position i on": it may stop once
//! `minItems` elements are there, and position i takes `prefixItems[i]` or else `items`.
//! Positions up to `max(prefixItems, minItems)` — or up to `maxItems` when given — are expanded
//! one nonterminal each (at most [`MAX_ARRAY_POSITIONS`]); beyond, `items` repeats.

use serde_json::{Map, Value};

use super::error::{push_pointer, SchemaError};
use super::lower::{Lowered, Lowerer, MAX_ARRAY_POSITIONS};
use crate::grammar::{NonterminalId, Symbol};

pub(super) fn count(o: &Map<String, Value>, k: &str) -> Option<u64> {
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
}

pub(super) fn bad(ptr: &str, keyword: &str, reason: &str) -> SchemaError {
    SchemaError::BadKeyword {
        pointer: ptr.into(),
        keyword: keyword.into(),
        reason: reason.into(),
    }
}
