//! Lowering: a schema (after `$ref`/`allOf` flattening) becomes grammar rules, one nonterminal
//! per schema location. `$ref` targets get a nonterminal of their own, created before their
//! body, so recursive schemas become recursive rules. `anyOf`/`oneOf` become alternatives (each
//! merged with the sibling keywords); types become alternatives of JSON values built from
//! shared lexemes (punctuation, keywords, string and number regexes).
//!
//! Objects list their declared properties in schema order (optional ones may be skipped), then
//! any additional properties; arrays expand `prefixItems`/`minItems`/`maxItems` position by
//! position (bounded), then repeat `items`.

use hashbrown::HashMap;
use serde_json::{Map, Value};

use super::error::{push_pointer, SchemaError, SchemaWarning};
use super::multiples::Step;
use super::refs::{flatten, kind_name, resolve, Expansions, UNSUPPORTED};
pub use super::sites::StringSite;
use super::strings::ANY_STRING;
use super::SchemaOptions;
use crate::grammar::{GrammarBuilder, NonterminalId, Pattern, Symbol, TerminalId};

/// Deepest nesting of subschemas lowered.
pub const MAX_DEPTH: usize = 128;
/// Most array positions expanded for `prefixItems`/`minItems`/`maxItems`.
pub const MAX_ARRAY_POSITIONS: u64 = 1024;
/// Most grammar rules a schema may produce. The largest MaskBench schema that compiles has
/// some 82,000 in its grammar (a Kubernetes schema: 0.3 s with its checker); one that needs more
/// (`theme.json`, whose `allOf`s are merged anew at each use) was refused only after 1.2–1.6 s
/// at 200,000, and is at 120,000 after 0.34 s.
pub const MAX_RULES: usize = 120_000;

const TYPES: [&str; 7] = [
    "null", "boolean", "object", "array", "number", "string", "integer",
];

/// The state of one compilation.
pub struct Lowerer<'a> {
    pub(super) root: &'a Value,
    pub(super) options: &'a SchemaOptions,
    pub b: GrammarBuilder,
    pub warnings: Vec<SchemaWarning>,
    terms: HashMap<String, TerminalId>,
    names: hashbrown::HashSet<String>,
    refs: HashMap<String, NonterminalId>,
    any: Option<NonterminalId>,
    rules: usize,
    /// Subschemas expanded so far (see [`super::refs::MAX_EXPANSIONS`]).
    pub(super) expansions: Expansions,
    /// Property-name literals: decoded name → terminal.
    pub(super) keys: Vec<(String, TerminalId)>,
    /// The same, by name.
    pub(super) key_ids: HashMap<String, TerminalId>,
    /// Places where a string lexeme may stand (see [`StringSite`]).
    pub(super) sites: Vec<(NonterminalId, StringSite)>,
    pub(super) site_ids: HashMap<(Symbol, super::sites::StringSite), NonterminalId>,
    /// Nonterminals deriving a range of `keys` (by index), shared by the string sites that
    /// admit those names (see `finish_sites`).
    pub(super) key_ranges: HashMap<(usize, usize), NonterminalId>,
    /// Keys lexed with their colon (see [`KeyMode`]).
    pub(super) key_mode: KeyMode,
    /// In [`KeyMode::WithColon`], the pattern-key terminals, with their patterns and the JSON
    /// pointer of (one of) their `patternProperties` entries.
    pub(super) pattern_keys: Vec<(String, TerminalId, String)>,
    /// Set when an object needs the names its patterns leave out, which only
    /// [`KeyMode::WithColon`] can express; the schema is then compiled again in that mode.
    pub(super) needs_colon_keys: bool,
}

/// How member names are lexed.
///
/// `Plain`: a name is a string lexeme, then `:` (the usual JSON lexing). `WithColon`: a name is
/// one lexeme with its colon (`"a" :`), so names never share a lexeme with string values, and
/// lexer priorities can rank names among themselves: a declared name (2) beats a
/// `patternProperties` pattern (1), which beats any other name (0). The name of an additional
/// member is then any name that neither a declared name nor a pattern takes — the complement
/// of the patterns, which a grammar cannot otherwise write. Used only for schemas that need it,
/// so every other schema's grammar is unchanged.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum KeyMode {
    Plain,
    WithColon,
}

/// What follows a name in [`KeyMode::WithColon`]: JSON white space, then the colon.
pub(super) const COLON_SUFFIX: &str = "[ \\t\\n\\r]*:";

pub(super) type Lowered = Result<Option<NonterminalId>, SchemaError>;

impl<'a> Lowerer<'a> {
    pub fn new(root: &'a Value, options: &'a SchemaOptions) -> Self {
        let mut b = GrammarBuilder::new();
        let ws = b.terminal("WS", Pattern::Regex("[ \\t\\n\\r]+".into()), 0);
        b.ignore(ws);
        Lowerer {
            root,
            options,
            b,
            warnings: vec![],
            terms: HashMap::new(),
            names: hashbrown::HashSet::new(),
            refs: HashMap::new(),
            any: None,
            rules: 0,
            expansions: Expansions::default(),
            keys: vec![],
            key_ids: HashMap::new(),
            sites: vec![],
            site_ids: HashMap::new(),
            key_ranges: HashMap::new(),
            key_mode: KeyMode::Plain,
            pattern_keys: vec![],
            needs_colon_keys: false,
        }
    }

    /// The symbols of a member `name: value` whose name lexeme is `key`.
    pub(super) fn member(&mut self, key: Symbol, value: Symbol) -> Vec<Symbol> {
        match self.key_mode {
            KeyMode::Plain => vec![key, self.lit(":"), value],
            KeyMode::WithColon => vec![key, value],
        }
    }

    /// The lexeme of the names a key regex (a JSON string regex) matches: the regex itself, or
    /// with its colon at `priority` in [`KeyMode::WithColon`].
    pub(super) fn key_lexeme(&mut self, base: &str, re: String, priority: i32) -> Symbol {
        match self.key_mode {
            KeyMode::Plain => self.regex(base, re),
            KeyMode::WithColon => self.regex_at(base, format!("(?:{re}){COLON_SUFFIX}"), priority),
        }
    }

    pub(super) fn rule(
        &mut self,
        lhs: NonterminalId,
        rhs: Vec<Symbol>,
        ptr: &str,
    ) -> Result<(), SchemaError> {
        self.rules += 1;
        if self.rules > MAX_RULES {
            return Err(SchemaError::Budget {
                pointer: ptr.into(),
                what: "the grammar's number of rules".into(),
                limit: MAX_RULES,
            });
        }
        self.b.rule(lhs, rhs);
        Ok(())
    }

    pub(super) fn lit(&mut self, text: &str) -> Symbol {
        let key = format!("L{text}");
        if let Some(&t) = self.terms.get(&key) {
            return Symbol::T(t);
        }
        let t = self
            .b
            .terminal(&format!("\"{text}\""), Pattern::Literal(text.into()), 0);
        self.terms.insert(key, t);
        Symbol::T(t)
    }

    /// A regex terminal, shared by every use of the same regex. Regex terminals have priority
    /// 0 (a text two of them match equally far is lexed as either) but for the names of
    /// [`KeyMode::WithColon`] ([`Self::key_lexeme`]).
    pub(super) fn regex(&mut self, base: &str, re: String) -> Symbol {
        self.regex_at(base, re, 0)
    }

    /// A regex terminal of lexer priority `priority`, shared by every use of the same regex
    /// and priority.
    fn regex_at(&mut self, base: &str, re: String, priority: i32) -> Symbol {
        let key = format!("R{priority}:{re}");
        self.shared_terminal(base, key, Pattern::Regex(re), priority)
    }

    /// The terminal of a string schema's pattern ([`super::strings::string_pattern`]): a regex
    /// terminal, or a counted string shared by every use of the same bounds.
    pub(super) fn string_terminal(&mut self, p: Pattern) -> Symbol {
        match p {
            Pattern::JsonString {
                min,
                max,
                ref regex,
            } => {
                let key = format!("C:{min}:{max:?}:{regex:?}");
                self.shared_terminal("STRING", key, p, 0)
            }
            Pattern::Regex(re) => self.regex("STRING", re),
            Pattern::Literal(_) | Pattern::Literals(_) => {
                unreachable!("string schemas make regexes or counted strings")
            }
        }
    }

    /// The terminal stored under `key`, or a new one named after `base`.
    fn shared_terminal(&mut self, base: &str, key: String, p: Pattern, priority: i32) -> Symbol {
        if let Some(&t) = self.terms.get(&key) {
            return Symbol::T(t);
        }
        let name = if self.names.insert(base.to_string()) {
            base.to_string()
        } else {
            format!("{base}_{}", self.terms.len())
        };
        let t = self.b.terminal(&name, p, priority);
        self.terms.insert(key, t);
        Symbol::T(t)
    }

    pub(super) fn fresh(&mut self, base: &str) -> NonterminalId {
        self.b.fresh_nonterminal(base)
    }

    /// Reports a keyword that cannot be enforced: an error, or in lenient mode a warning.
    pub(super) fn unsupported(
        &mut self,
        ptr: &str,
        keyword: &str,
        reason: &str,
    ) -> Result<(), SchemaError> {
        if self.options.lenient {
            self.warnings.push(SchemaWarning {
                pointer: ptr.into(),
                keyword: keyword.into(),
                message: reason.into(),
            });
            Ok(())
        } else {
            Err(SchemaError::Unsupported {
                pointer: ptr.into(),
                keyword: keyword.into(),
                reason: reason.into(),
            })
        }
    }
}

/// The JSON types a flattened schema may admit (`integer` folded into `number`).
pub(super) fn possible_types(o: &Map<String, Value>) -> Vec<&'static str> {
    if let Some(vals) = o.get("enum").and_then(Value::as_array) {
        let mut t: Vec<&'static str> = vals.iter().map(type_of).collect();
        t.sort_unstable();
        t.dedup();
        return t;
    }
    if let Some(c) = o.get("const") {
        return vec![type_of(c)];
    }
    let mut t: Vec<&'static str> = match o.get("type") {
        Some(Value::String(s)) => vec![fold_type(s)],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(fold_type).collect(),
        _ => vec!["null", "boolean", "object", "array", "number", "string"],
    };
    if o.get("nullable") == Some(&Value::Bool(true)) {
        t.push("null");
    }
    t.sort_unstable();
    t.dedup();
    t
}

fn fold_type(s: &str) -> &'static str {
    match s {
        "integer" | "number" => "number",
        "null" => "null",
        "boolean" => "boolean",
        "object" => "object",
        "array" => "array",
        _ => "string",
    }
}

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The keywords that constrain only values of one type (an inert keyword is not reported).
fn applies_to(keyword: &str) -> Option<&'static str> {
    Some(match keyword {
        "multipleOf" => "number",
        "uniqueItems" | "contains" | "minContains" | "maxContains" | "unevaluatedItems" => "array",
        "minProperties"
        | "maxProperties"
        | "propertyNames"
        | "dependentRequired"
        | "dependentSchemas"
        | "dependencies"
        | "unevaluatedProperties" => "object",
        _ => return None,
    })
}

fn as_count(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0)
            .map(|f| f as u64)
    })
}

impl<'a> Lowerer<'a> {
    /// The nonterminal of any JSON value (the `true` schema), built once.
    pub fn any_value(&mut self) -> Result<NonterminalId, SchemaError> {
        if let Some(a) = self.any {
            return Ok(a);
        }
        let v = self.fresh("any");
        self.any = Some(v);
        let (obj, members, arr, elems) = (
            self.fresh("any_object"),
            self.fresh("any_members"),
            self.fresh("any_array"),
            self.fresh("any_elements"),
        );
        let (lb, rb, ls, rs) = (self.lit("{"), self.lit("}"), self.lit("["), self.lit("]"));
        let comma = self.lit(",");
        let lexeme = self.regex("STRING", ANY_STRING.into());
        let any_string = StringSite::Spec {
            min_length: 0,
            max_length: None,
            pattern: None,
            format: None,
        };
        let string = self.string_site(lexeme, any_string, "")?;
        let name = self.key_lexeme("KEY", ANY_STRING.into(), 0);
        let any_name = StringSite::Key {
            excluded: vec![],
            pattern: None,
            siblings: vec![],
        };
        let name = self.string_site(name, any_name, "")?;
        let number = if self.options.finite_numbers {
            super::numbers::FINITE_NUMBER
        } else {
            super::numbers::ANY_NUMBER
        };
        let number = self.regex("NUMBER", number.into());
        for s in [
            string,
            number,
            self.lit("true"),
            self.lit("false"),
            self.lit("null"),
        ] {
            self.rule(v, vec![s], "")?;
        }
        self.rule(v, vec![Symbol::N(obj)], "")?;
        self.rule(v, vec![Symbol::N(arr)], "")?;
        self.rule(obj, vec![lb, rb], "")?;
        self.rule(obj, vec![lb, Symbol::N(members), rb], "")?;
        let member = self.member(name, Symbol::N(v));
        self.rule(members, member.clone(), "")?;
        let mut more = member;
        more.extend([comma, Symbol::N(members)]);
        self.rule(members, more, "")?;
        self.rule(arr, vec![ls, rs], "")?;
        self.rule(arr, vec![ls, Symbol::N(elems), rs], "")?;
        self.rule(elems, vec![Symbol::N(v)], "")?;
        self.rule(elems, vec![Symbol::N(v), comma, Symbol::N(elems)], "")?;
        Ok(v)
    }

    /// Lowers the schema at `ptr`; `None` when it admits no value.
    pub fn schema(&mut self, schema: &Value, ptr: &str, depth: usize) -> Lowered {
        if depth > MAX_DEPTH {
            return Err(SchemaError::Budget {
                pointer: ptr.into(),
                what: "the nesting of subschemas".into(),
                limit: MAX_DEPTH,
            });
        }
        let schema = &*super::refs::effective(self.root, schema);
        match schema {
            Value::Bool(true) => return Ok(Some(self.any_value()?)),
            Value::Bool(false) => return Ok(None),
            Value::Object(o) => {
                if let Some(Value::String(r)) = o.get("$ref") {
                    if o.keys()
                        .all(|k| k == "$ref" || super::refs::is_annotation(k))
                    {
                        return self.reference(r, ptr, depth).map(Some);
                    }
                }
            }
            other => {
                return Err(SchemaError::NotASchema {
                    pointer: ptr.into(),
                    found: kind_name(other).into(),
                })
            }
        }
        let flat = flatten(self.root, schema, ptr, 0, &mut self.expansions)?;
        self.flat(&flat, ptr, depth)
    }

    /// The nonterminal of a `$ref` target, created once per target so recursion terminates.
    pub(super) fn reference(
        &mut self,
        r: &str,
        ptr: &str,
        depth: usize,
    ) -> Result<NonterminalId, SchemaError> {
        let (target, tptr) = resolve(self.root, r, &push_pointer(ptr, "$ref"))?;
        if let Some(&nt) = self.refs.get(&tptr) {
            return Ok(nt);
        }
        let nt = self.fresh("ref");
        self.refs.insert(tptr.clone(), nt);
        match self.schema(target, &tptr, depth + 1) {
            Ok(Some(inner)) => self.rule(nt, vec![Symbol::N(inner)], ptr)?,
            // A target that admits nothing: a rule that derives no word keeps the grammar valid.
            Ok(None) => self.rule(nt, vec![Symbol::N(nt)], ptr)?,
            Err(e) => {
                // A caller may recover (a contradiction drops an object member), and rules the
                // failed lowering left behind may use `nt`: give it a rule that derives nothing,
                // and let a later use lower the target again.
                // (Past the rule budget that rule is not added; the budget error goes on.)
                self.refs.remove(&tptr);
                let _ = self.rule(nt, vec![Symbol::N(nt)], ptr);
                return Err(e);
            }
        }
        Ok(nt)
    }

    /// Lowers `rewritten`, a schema equivalent to the one at `ptr`, when it flattens: `None`
    /// when it is `None` or its merge is not exact (the schema is then lowered, or refused, as
    /// written).
    fn lower_rewritten(
        &mut self,
        rewritten: Option<Value>,
        ptr: &str,
        depth: usize,
    ) -> Option<Lowered> {
        match flatten(self.root, &rewritten?, ptr, 0, &mut self.expansions) {
            Ok(f) => Some(self.flat(&f, ptr, depth + 1)),
            Err(e) if super::refs::is_contradiction(&e) => Some(Ok(None)),
            Err(_) => None,
        }
    }

    /// Lowers a flattened schema (no top-level `$ref`/`allOf`).
    pub(super) fn flat(&mut self, schema: &Value, ptr: &str, depth: usize) -> Lowered {
        let o = match schema {
            Value::Object(o) => o,
            _ => return self.schema(schema, ptr, depth),
        };
        // Dependencies the object lowering cannot track become alternatives, and so does
        // `if`/`then`/`else` whose condition has a complement lacuna can write, when merging
        // them is exact (else they are refused below, as before).
        let dependencies = super::dependencies::as_alternatives(o, |n| self.any_order(n));
        if let Some(lowered) = self.lower_rewritten(dependencies, ptr, depth) {
            return lowered;
        }
        let conditional = super::conditionals::as_alternatives(self.root, o);
        if let Some(lowered) = self.lower_rewritten(conditional, ptr, depth) {
            return lowered;
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(alts) = o.get(key) {
                return self.alternatives(o, key, alts, ptr, depth);
            }
        }
        self.check_unsupported(o, ptr)?;
        let mut types: Vec<&str> = match o.get("type") {
            None => TYPES.to_vec(),
            Some(t) => {
                let list: Vec<&str> = match t {
                    Value::String(s) => vec![s.as_str()],
                    Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                    _ => vec![],
                };
                if list.is_empty() || list.iter().any(|t| !TYPES.contains(t)) {
                    return Err(SchemaError::BadKeyword {
                        pointer: ptr.into(),
                        keyword: "type".into(),
                        reason: format!("{t} is not a type name or a list of type names"),
                    });
                }
                list
            }
        };
        if o.get("nullable") == Some(&Value::Bool(true)) && !types.contains(&"null") {
            types.push("null");
        }
        if o.get("multipleOf").and_then(Value::as_f64) == Some(1.0) && types.contains(&"number") {
            types.retain(|t| *t != "number");
            if !types.contains(&"integer") {
                types.push("integer");
            }
        }
        if o.contains_key("enum") || o.contains_key("const") {
            return self.enumeration(o, &types, ptr);
        }
        let mut alts: Vec<Vec<Symbol>> = vec![];
        if types.contains(&"null") {
            alts.push(vec![self.lit("null")]);
        }
        if types.contains(&"boolean") {
            alts.push(vec![self.lit("true")]);
            alts.push(vec![self.lit("false")]);
        }
        if types.contains(&"number") || types.contains(&"integer") {
            if let Some(s) = self.number(o, !types.contains(&"number"), ptr)? {
                alts.push(vec![s]);
            }
        }
        if types.contains(&"string") {
            if let Some(s) = self.string(o, ptr)? {
                alts.push(vec![s]);
            }
        }
        if types.contains(&"array") {
            if let Some(a) = self.array(o, ptr, depth)? {
                alts.push(vec![Symbol::N(a)]);
            }
        }
        if types.contains(&"object") {
            if let Some(a) = self.object(o, ptr, depth)? {
                alts.push(vec![Symbol::N(a)]);
            }
        }
        if alts.is_empty() {
            return Ok(None);
        }
        let nt = self.fresh("value");
        for a in alts {
            self.rule(nt, a, ptr)?;
        }
        Ok(Some(nt))
    }

    /// Reports the keywords of `o` that cannot be enforced (exactly handled cases aside).
    fn check_unsupported(&mut self, o: &Map<String, Value>, ptr: &str) -> Result<(), SchemaError> {
        let types = possible_types(o);
        for (k, v) in o {
            if !UNSUPPORTED.contains(&k.as_str()) {
                continue;
            }
            if let Some(t) = applies_to(k) {
                if !types.contains(&t) {
                    continue;
                }
            }
            // Counts and dependencies of properties are the object lowering's to enforce or
            // refuse (`object`), except beside `enum`/`const`, whose values are not filtered
            // by them.
            let by_object = !o.contains_key("enum") && !o.contains_key("const");
            let exact = match k.as_str() {
                "minProperties" | "maxProperties" | "dependentRequired" | "dependencies"
                    if by_object =>
                {
                    true
                }
                "uniqueItems" => {
                    v == &Value::Bool(false)
                        || o.get("maxItems").and_then(as_count).is_some_and(|m| m <= 1)
                }
                // Enforced by the number lexeme (or refused there, with the reason) and by the
                // filter of `enum` values.
                "multipleOf" => v.as_number().and_then(Step::from_json).is_some(),
                "minContains" | "maxContains" => !o.contains_key("contains"),
                "then" | "else" => !o.contains_key("if"),
                "if" => !o.contains_key("then") && !o.contains_key("else"),
                "dependentRequired" | "dependentSchemas" | "dependencies" => {
                    v.as_object().is_some_and(|m| m.is_empty())
                }
                "minProperties" => {
                    let req = o
                        .get("required")
                        .and_then(Value::as_array)
                        .map_or(0, |r| r.len());
                    as_count(v).is_some_and(|n| n as usize <= req)
                }
                "maxProperties" => {
                    let closed = o.get("additionalProperties") == Some(&Value::Bool(false))
                        && !o.contains_key("patternProperties");
                    let declared = o
                        .get("properties")
                        .and_then(Value::as_object)
                        .map_or(0, |p| p.len());
                    closed && as_count(v).is_some_and(|n| declared as u64 <= n)
                }
                _ => false,
            };
            if !exact {
                self.unsupported(
                    &push_pointer(ptr, k),
                    k,
                    "lacuna does not enforce this keyword",
                )?;
            }
        }
        Ok(())
    }
}
