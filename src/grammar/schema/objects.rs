//! Lowering of objects.
//!
//! Objects: the declared properties in schema order (`properties` order, with the members of
//! a `$ref` or `allOf` written before `properties` first, see `refs::flatten`; then required
//! names that only `additionalProperties`/`patternProperties` describe), each optional one
//! skippable, with any additional members before, between and after them. Aᵢ ("members from
//! declared property i on, after at least one member") and Bᵢ ("... before any member") place
//! the commas; the grammar is linear in the number of properties. Additional members are keyed
//! by any string that is not a declared name, or by `patternProperties` patterns. Objects of up
//! to [`SchemaOptions::any_order_up_to`](super::SchemaOptions::any_order_up_to) declared
//! properties take them in any order instead: A(U) is "after at least one member, with the
//! declared members U used", which also makes `dependentRequired`/`dependencies` and
//! `minProperties`/`maxProperties` exact there (a condition on U where the object may close).

use serde_json::{Map, Value};

use super::containers::{bad, count};
use super::error::{push_pointer, SchemaError};
use super::key_patterns;
use super::lower::{KeyMode, Lowered, Lowerer, StringSite};
use super::refs::is_contradiction;
use super::sites::PATTERN_PRIORITY;
use super::strings::{pattern_matches, string_regex, StringSpec, ANY_STRING};
use crate::grammar::{NonterminalId, Symbol};

/// What an object enforces beyond its members' schemas: property counts and dependencies
/// (`dependentRequired`, and `dependencies` in array form or as a schema that only requires).
#[derive(Debug, Default)]
pub(super) struct PropertyRules {
    min: u64,
    max: Option<u64>,
    /// (trigger, the names it requires)
    dependencies: Vec<(String, Vec<String>)>,
}

/// Reads `o`'s property rules; the pointers of dependencies given as a schema that does more
/// than require names are returned apart, to be refused.
fn property_rules(o: &Map<String, Value>, ptr: &str) -> (PropertyRules, Vec<String>) {
    let mut rules = PropertyRules {
        min: count(o, "minProperties").unwrap_or(0),
        max: count(o, "maxProperties"),
        dependencies: vec![],
    };
    let mut refused = vec![];
    for key in ["dependentRequired", "dependencies"] {
        let Some(Value::Object(m)) = o.get(key) else {
            continue;
        };
        for (trigger, v) in m {
            let names = |a: &Vec<Value>| -> Vec<String> {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            };
            let required_only = v.as_object().filter(|s| {
                s.keys()
                    .all(|k| k == "required" || super::refs::is_annotation(k))
            });
            match (v, required_only) {
                (Value::Array(a), _) => rules.dependencies.push((trigger.clone(), names(a))),
                (_, Some(s)) => {
                    let req = s.get("required").and_then(Value::as_array);
                    rules
                        .dependencies
                        .push((trigger.clone(), req.map(names).unwrap_or_default()));
                }
                (Value::Bool(true), _) => {}
                _ => refused.push(push_pointer(&push_pointer(ptr, key), trigger)),
            }
        }
    }
    (rules, refused)
}

impl<'a> Lowerer<'a> {
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
        let addl_given = o.get("additionalProperties").is_some();
        let mut addl = o
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
        // Declared names whose schema is joined with their patterns' schemas: a contradiction
        // there means the member cannot appear, not that the schema is wrong.
        let mut joined: hashbrown::HashSet<String> = hashbrown::HashSet::new();
        for (name, s) in props {
            let m = matching(self, name)?;
            if !m.is_empty() {
                joined.insert(name.clone());
            }
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
        // A name tracked but not in `properties`: its patterns' schemas, or else
        // `additionalProperties`.
        let undeclared = |this: &mut Self, name: &str| -> Result<Value, SchemaError> {
            let m = matching(this, name)?;
            Ok(if m.is_empty() {
                addl.clone()
            } else {
                serde_json::json!({ "allOf": m })
            })
        };
        for name in &required {
            if props.contains_key(name) {
                continue;
            }
            let schema = undeclared(self, name)?;
            declared.push((name.clone(), schema, push_pointer(ptr, "required")));
        }
        let (rules, refused) = property_rules(o, ptr);
        for dptr in refused {
            self.unsupported(
                &dptr,
                "dependencies",
                "a dependency on a schema that does more than require names is not enforced",
            )?;
        }
        // Names a dependency mentions are tracked like declared ones (as names only
        // `required` are): their presence is what the rule is about.
        for (trigger, needs) in &rules.dependencies {
            for name in std::iter::once(trigger).chain(needs) {
                if declared.iter().any(|d| &d.0 == name) {
                    continue;
                }
                let schema = undeclared(self, name)?;
                declared.push((name.clone(), schema, push_pointer(ptr, "dependencies")));
            }
        }
        let mut members: Vec<(Symbol, bool)> = vec![];
        // The member index of each declared name that can appear.
        let mut member_of: hashbrown::HashMap<String, usize> = hashbrown::HashMap::new();
        for (name, schema, sptr) in &declared {
            // Every declared name gets its literal, so it never lexes as an additional name.
            self.key(name);
            let is_required = required_set.contains(name);
            let lowered = match self.schema(schema, sptr, depth + 1) {
                Err(e) if joined.contains(name) && is_contradiction(&e) => None,
                lowered => lowered?,
            };
            match lowered {
                None if is_required => return Ok(None),
                None => {}
                Some(v) => {
                    let key = self.key(name);
                    let m = self.fresh("member");
                    let member = self.member(key, Symbol::N(v));
                    self.rule(m, member, ptr)?;
                    member_of.insert(name.clone(), members.len());
                    members.push((Symbol::N(m), !is_required));
                }
            }
        }
        // Generation's closed objects (`SchemaOptions::close_objects`): decided after the
        // names an object tracks took their schemas from the open `additionalProperties`, so
        // a name only `required` stays possible.
        let names_something = !props.is_empty() || !pats.is_empty() || !required.is_empty();
        if self.options.close_objects
            && !addl_given
            && names_something
            && (!pats.is_empty() || rules.min <= members.len() as u64)
        {
            addl = Value::Bool(false);
        }
        // Additional members.
        // Keyed by any string: a declared name lexes as its literal only (literals beat
        // regexes), never as this lexeme, so it cannot come back as an additional member.
        // (key regex, value schema, pointer, the `patternProperties` pattern if any)
        let mut extras: Vec<(String, Value, String, Option<String>)> = vec![];
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
                    None,
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
                extras.push((
                    other_key,
                    v,
                    push_pointer(ptr, "additionalProperties"),
                    None,
                ));
            }
        } else {
            // A pattern that matches every name leaves none to `additionalProperties`.
            if pats
                .keys()
                .any(|p| key_patterns::matches_every_name(p).unwrap_or(false))
            {
                addl = Value::Bool(false);
            }
            let each_name_one_schema = {
                let mut v: Vec<&Value> = pats.values().collect();
                v.dedup();
                v.len() == 1
            } || pairwise_disjoint(pats.keys());
            if addl != Value::Bool(false) {
                if self.key_mode == KeyMode::Plain {
                    // Names lexed with their colon can express the names no pattern takes
                    // (`KeyMode`): the schema is compiled again so.
                    self.needs_colon_keys = true;
                    self.unsupported(&pptr, "patternProperties", "`patternProperties` beside additional properties that match no pattern cannot be expressed exactly")?;
                }
                extras.push((
                    other_key,
                    addl.clone(),
                    push_pointer(ptr, "additionalProperties"),
                    None,
                ));
            }
            if !each_name_one_schema {
                self.unsupported(&pptr, "patternProperties", "a key matching several patterns must satisfy all their schemas, which is not enforced")?;
            }
            for (pat, s) in pats {
                let spec = StringSpec {
                    pattern: Some(pat),
                    ..Default::default()
                };
                match string_regex(&spec) {
                    Ok(Some(re)) => {
                        extras.push((re, s.clone(), push_pointer(&pptr, pat), Some(pat.clone())))
                    }
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
        // The patterns that get key lexemes of their own: the names they take are not
        // additional (patterns whose schemas are all free get none).
        let keyed: Vec<String> = extras.iter().filter_map(|e| e.3.clone()).collect();
        let mut extra_nt: Option<NonterminalId> = None;
        for (key_re, schema, sptr, pattern) in extras {
            if let Some(v) = self.schema(&schema, &sptr, depth + 1)? {
                // `pattern` is carried, not read back from `sptr`: the pointer of an
                // `additionalProperties` nested in a pattern property's schema holds that
                // ancestor's `/patternProperties/` too (issue 18: a nested object then refused
                // its additional names that are declared elsewhere).
                let lexeme = if key_re == ANY_STRING {
                    self.key_lexeme("STRING", key_re, 0)
                } else {
                    let lexeme = self.key_lexeme("KEY_PATTERN", key_re, PATTERN_PRIORITY);
                    if let (KeyMode::WithColon, Symbol::T(t), Some(p)) =
                        (self.key_mode, lexeme, &pattern)
                    {
                        self.pattern_keys.push((p.clone(), t, sptr.clone()));
                    }
                    lexeme
                };
                let site = StringSite::Key {
                    excluded: declared.iter().map(|d| d.0.clone()).collect(),
                    pattern,
                    siblings: keyed.clone(),
                };
                let key = self.string_site(lexeme, site, ptr)?;
                let x = *extra_nt.get_or_insert_with(|| self.fresh_nt("extra_member"));
                let member = self.member(key, Symbol::N(v));
                self.rule(x, member, ptr)?;
            }
        }
        let closed = extra_nt.is_none();
        let shape = ObjectShape {
            required: members.iter().filter(|m| !m.1).count(),
            declared: members.len(),
            closed,
        };
        let close = self
            .closing_rule(&rules, &member_of, shape, ptr)?
            .unwrap_or_default();
        self.members_with(&members, extra_nt, &close, ptr)
    }

    /// Whether an object of `n` declared members takes them in any order: up to
    /// `any_order_up_to`, and never past 20 (2ⁿ states; member sets are `u32` bit sets).
    pub(super) fn any_order(&self, n: usize) -> bool {
        n <= self.options.any_order_up_to.min(20)
    }

    /// When an object may close, from its property rules: `None` when the rules hold of
    /// every object the members allow. A rule that cannot be enforced is refused here.
    fn closing_rule(
        &mut self,
        rules: &PropertyRules,
        member_of: &hashbrown::HashMap<String, usize>,
        shape: ObjectShape,
        ptr: &str,
    ) -> Result<Option<CloseWhen>, SchemaError> {
        // Implied counts: every object has at least its required members, and a closed one at
        // most its declared ones.
        let min_implied = rules.min as usize <= shape.required;
        let max_implied = rules
            .max
            .is_none_or(|m| shape.closed && shape.declared as u64 <= m);
        if min_implied && max_implied && rules.dependencies.is_empty() {
            return Ok(None);
        }
        let any_order = self.any_order(shape.declared);
        let mut close = CloseWhen {
            non_empty: rules.min >= 1,
            ..CloseWhen::default()
        };
        if !rules.dependencies.is_empty() {
            if !any_order {
                self.unsupported(
                    &push_pointer(ptr, "dependencies"),
                    "dependencies",
                    "dependencies among more properties than objects take in any order are \
                     not enforced",
                )?;
            } else {
                for (trigger, needs) in &rules.dependencies {
                    let Some(&t) = member_of.get(trigger) else {
                        continue; // the trigger can never appear
                    };
                    // A required name that can never appear forbids the trigger: bit 31 is
                    // never set (at most 20 members, see `any_order`).
                    let mask = needs.iter().fold(0u32, |m, n| {
                        m | member_of.get(n).map_or(1 << 31, |&i| 1 << i)
                    });
                    close.dependencies.push((1 << t, mask));
                }
            }
        }
        let counted = (!min_implied && rules.min > 1) || !max_implied;
        if counted {
            if any_order && shape.closed {
                close.count = Some((rules.min, rules.max.unwrap_or(u64::MAX)));
            } else if rules.max == Some(0) && shape.required == 0 {
                close.only_empty = true;
            } else {
                let keyword = if max_implied {
                    "minProperties"
                } else {
                    "maxProperties"
                };
                self.unsupported(
                    &push_pointer(ptr, keyword),
                    keyword,
                    "a count of properties is enforced only on closed objects whose \
                     properties may come in any order",
                )?;
            }
        }
        Ok(Some(close))
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
        self.members_with(members, extra, &CloseWhen::default(), ptr)
    }

    /// [`Self::members`] closing only where `close` allows.
    fn members_with(
        &mut self,
        members: &[(Symbol, bool)],
        extra: Option<NonterminalId>,
        close: &CloseWhen,
        ptr: &str,
    ) -> Lowered {
        if close.only_empty {
            return self.braced(&[], ptr);
        }
        if self.any_order(members.len()) {
            self.members_any_order(members, extra, close, ptr)
        } else if self.repeatable(members) {
            self.members_repeatable(members, extra, close.non_empty, ptr)
        } else {
            self.members_chain(members, extra, close.non_empty, ptr)
        }
    }

    /// Whether an object past the any-order budget takes its members in any order with
    /// repeatable names ([`SchemaOptions::large_objects_in_schema_order`](super::SchemaOptions::large_objects_in_schema_order)).
    /// Its closing rule is then at most "not empty": the dependencies and counts of objects
    /// past the budget are refused in [`Self::closing_rule`].
    fn repeatable(&self, members: &[(Symbol, bool)]) -> bool {
        let required = members.iter().filter(|m| !m.1).count();
        !self.options.large_objects_in_schema_order
            && required <= super::REPEATABLE_REQUIRED_UP_TO
            && (members.len() + 1) << required <= super::REPEATABLE_RULES_UP_TO
    }

    /// Members in any order, a name allowed to repeat: A(S) is "after at least one member,
    /// with the required members S seen", 2ʳ states for r required members, each with a
    /// loop through every optional member and every required one in S. On instances that
    /// name each member once this is exact (members in any order, the required ones
    /// present); an instance that repeats a name has each occurrence valid, so whichever a
    /// JSON parser keeps (the last, for `serde_json` and Python's `json`) is valid too. The
    /// size is linear in the members for each state, where at most once would need 2ⁿ
    /// states: MaskBench's objects of 10 to 43 optional members (Kubernetes' `ObjectMeta`,
    /// `stryker-core.json`) were rejected when written out of schema order.
    fn members_repeatable(
        &mut self,
        members: &[(Symbol, bool)],
        extra: Option<NonterminalId>,
        non_empty: bool,
        ptr: &str,
    ) -> Lowered {
        // The state bit of each member: its place among the required ones, 0 if optional.
        let mut required = 0;
        let bit: Vec<u32> = members
            .iter()
            .map(|&(_, optional)| {
                if optional {
                    0
                } else {
                    required += 1;
                    1 << (required - 1)
                }
            })
            .collect();
        let all: u32 = (1 << required) - 1;
        let with_comma =
            self.after_commas(members.iter().map(|m| m.0).chain(extra.map(Symbol::N)), ptr)?;
        let states: Vec<NonterminalId> = (0..=all).map(|_| self.fresh("after")).collect();
        for seen in 0..=all {
            let a = states[seen as usize];
            // `A → ε` and `A → C A'`: already normal, as in `members_any_order`.
            self.b.mark_normal(a);
            if seen == all {
                self.rule(a, vec![], ptr)?;
            }
            for (k, &c) in with_comma.iter().enumerate() {
                // The additional members (the last `C`) leave the state as it is.
                let next = seen | bit.get(k).copied().unwrap_or(0);
                self.rule(a, vec![c, Symbol::N(states[next as usize])], ptr)?;
            }
        }
        let b = self.fresh("before");
        if required == 0 && !non_empty {
            self.rule(b, vec![], ptr)?;
        }
        for (k, &(m, _)) in members.iter().enumerate() {
            self.rule(b, vec![m, Symbol::N(states[bit[k] as usize])], ptr)?;
        }
        if let Some(x) = extra {
            self.rule(b, vec![Symbol::N(x), Symbol::N(states[0])], ptr)?;
        }
        self.braced(&[Symbol::N(b)], ptr)
    }

    /// Members in any order, each declared one at most once: A(U) is "after at least one
    /// member, with the declared members U used"; 2ⁿ states for n declared members.
    fn members_any_order(
        &mut self,
        members: &[(Symbol, bool)],
        extra: Option<NonterminalId>,
        close: &CloseWhen,
        ptr: &str,
    ) -> Lowered {
        let n = members.len();
        let required: u32 = members
            .iter()
            .enumerate()
            .filter(|(_, m)| !m.1)
            .fold(0, |acc, (i, _)| acc | (1 << i));
        // `C → "," m` once per member (and once for the additional members), shared by every
        // state: `A(U) → C_k A(U ∪ {k})` for each k not in U. A state's alternatives differ in
        // their first symbol, so the normalizer has nothing to factor, and a state is one
        // nonterminal, not two (`A(U) → "," R(U)` with R(U) choosing the member: 2ⁿ
        // nonterminals and rules more; a Kubernetes schema's normalization spent ~4 of its
        // ~9.5 ms on these objects, `examples/phase_times.rs`).
        let mut with_comma =
            self.after_commas(members.iter().map(|m| m.0).chain(extra.map(Symbol::N)), ptr)?;
        let extra_with_comma = extra.and_then(|_| with_comma.pop());
        let states: Vec<NonterminalId> = (0..1u32 << n).map(|_| self.fresh("after")).collect();
        for used in 0..1u32 << n {
            let a = states[used as usize];
            // Its rules are `A → ε`, `A → A` and `A → C A'`: already normal, which the
            // normalizer then leaves as they are (two thirds of a Kubernetes schema's rules).
            self.b.mark_normal(a);
            let can_close = used & required == required && close.allows(used);
            if can_close {
                self.rule(a, vec![], ptr)?;
            }
            if !can_close && extra.is_none() && used == (1u32 << n) - 1 {
                // Every member used and the object may not close: a rule that derives no
                // word keeps the grammar well formed.
                self.rule(a, vec![Symbol::N(a)], ptr)?;
            }
            for (k, &c) in with_comma.iter().enumerate() {
                if used & (1 << k) == 0 {
                    let next = Symbol::N(states[(used | 1 << k) as usize]);
                    self.rule(a, vec![c, next], ptr)?;
                }
            }
            if let Some(c) = extra_with_comma {
                self.rule(a, vec![c, Symbol::N(a)], ptr)?;
            }
        }
        let b = self.fresh("before");
        if required == 0 && !close.non_empty && close.allows(0) {
            self.rule(b, vec![], ptr)?;
        } else if n == 0 && extra.is_none() {
            return Ok(None); // no member to write and `{}` not allowed
        }
        for (k, &(m, _)) in members.iter().enumerate() {
            self.rule(b, vec![m, Symbol::N(states[1 << k])], ptr)?;
        }
        if let Some(x) = extra {
            self.rule(b, vec![Symbol::N(x), Symbol::N(states[0])], ptr)?;
        }
        self.braced(&[Symbol::N(b)], ptr)
    }

    /// `{` B₀ `}` with Aᵢ/Bᵢ as in the module docs; `non_empty` drops the empty object (Bₙ,
    /// reached only when no member was written, cannot close).
    fn members_chain(
        &mut self,
        members: &[(Symbol, bool)],
        extra: Option<NonterminalId>,
        non_empty: bool,
        ptr: &str,
    ) -> Lowered {
        let comma = self.lit(",");
        let n = members.len();
        let a_n = self.fresh("after");
        self.rule(a_n, vec![], ptr)?;
        if let Some(x) = extra {
            self.rule(a_n, vec![comma, Symbol::N(x), Symbol::N(a_n)], ptr)?;
        }
        // Bₙ derives nothing when the object may neither be empty nor hold additional
        // members: then it is not made at all (a nonterminal without rules is an invalid
        // grammar), and the last optional member has no "skip it" alternative in B.
        let mut b_next = None;
        if !non_empty || extra.is_some() {
            let b_n = self.fresh("before");
            if !non_empty {
                self.rule(b_n, vec![], ptr)?;
            }
            if let Some(x) = extra {
                self.rule(b_n, vec![Symbol::N(x), Symbol::N(a_n)], ptr)?;
            }
            b_next = Some(b_n);
        }
        let mut a_next = a_n;
        for i in (0..n).rev() {
            let (m, optional) = members[i];
            let (a, b) = (self.fresh("after"), self.fresh("before"));
            self.rule(a, vec![comma, m, Symbol::N(a_next)], ptr)?;
            self.rule(b, vec![m, Symbol::N(a_next)], ptr)?;
            // Additional members may come before, between and after the declared ones, which
            // keep their order (`{"$schema": …, "a": …}`): a loop on each state.
            if let Some(x) = extra {
                self.rule(a, vec![comma, Symbol::N(x), Symbol::N(a)], ptr)?;
                self.rule(b, vec![Symbol::N(x), Symbol::N(a)], ptr)?;
            }
            if optional {
                self.rule(a, vec![Symbol::N(a_next)], ptr)?;
                if let Some(b_next) = b_next {
                    self.rule(b, vec![Symbol::N(b_next)], ptr)?;
                }
            }
            a_next = a;
            b_next = Some(b);
        }
        let Some(b_0) = b_next else {
            return Ok(None); // no member to write and `{}` not allowed
        };
        self.braced(&[Symbol::N(b_0)], ptr)
    }

    /// `C → "," s` for each of `symbols`, in order: a member after its comma, one nonterminal
    /// each, which every state of an object in any order shares.
    fn after_commas(
        &mut self,
        symbols: impl IntoIterator<Item = Symbol>,
        ptr: &str,
    ) -> Result<Vec<Symbol>, SchemaError> {
        let comma = self.lit(",");
        let mut with_comma = vec![];
        for s in symbols {
            let c = self.fresh("next");
            self.rule(c, vec![comma, s], ptr)?;
            with_comma.push(Symbol::N(c));
        }
        Ok(with_comma)
    }

    /// The object `{` inner `}`.
    fn braced(&mut self, inner: &[Symbol], ptr: &str) -> Lowered {
        let nt = self.fresh("object");
        let (l, r) = (self.lit("{"), self.lit("}"));
        let mut rhs = vec![l];
        rhs.extend_from_slice(inner);
        rhs.push(r);
        self.rule(nt, rhs, ptr)?;
        Ok(Some(nt))
    }
}

/// The counts an object's closing rule depends on.
#[derive(Clone, Copy, Debug)]
struct ObjectShape {
    /// Members that must appear, and members that may (declared names that can appear).
    required: usize,
    declared: usize,
    /// No additional members.
    closed: bool,
}

/// Where an object may close (`}`), as a condition on the set U of declared members used.
#[derive(Debug, Default)]
struct CloseWhen {
    /// Not with no member at all (`minProperties` ≥ 1).
    non_empty: bool,
    /// Only `{}` (`maxProperties: 0` beside additional members).
    only_empty: bool,
    /// (trigger bit, bits it needs): if the trigger is in U, so are those.
    dependencies: Vec<(u32, u32)>,
    /// The number of members, on closed objects (U is every member there).
    count: Option<(u64, u64)>,
}

impl CloseWhen {
    fn allows(&self, used: u32) -> bool {
        let n = u64::from(used.count_ones());
        self.dependencies
            .iter()
            .all(|&(t, needs)| used & t == 0 || used & needs == needs)
            && self.count.is_none_or(|(lo, hi)| lo <= n && n <= hi)
    }
}

/// Whether no name matches two of the patterns (proven on their automata; at most
/// [`MAX_DISJOINT_PATTERNS`] patterns are compared, pair by pair).
fn pairwise_disjoint<'p>(patterns: impl ExactSizeIterator<Item = &'p String> + Clone) -> bool {
    if patterns.len() > MAX_DISJOINT_PATTERNS {
        return false;
    }
    let all: Vec<&String> = patterns.collect();
    all.iter().enumerate().all(|(i, a)| {
        all[i + 1..]
            .iter()
            .all(|b| key_patterns::disjoint(a, b).unwrap_or(false))
    })
}

/// The most `patternProperties` patterns whose pairwise disjointness is proven.
const MAX_DISJOINT_PATTERNS: usize = 16;

/// A `patternProperties` key that is not a regex lacuna can compile.
fn bad_pattern(pptr: &str, pat: &str, e: &impl std::fmt::Debug) -> SchemaError {
    SchemaError::BadPattern {
        pointer: push_pointer(pptr, pat),
        pattern: pat.to_string(),
        reason: format!("{e:?}"),
    }
}
