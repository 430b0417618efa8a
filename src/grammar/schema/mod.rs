//! JSON Schema → [`Grammar`]: the grammar of the JSON texts that a schema accepts.
//!
//! ```
//! use lacuna::grammar::schema::{compile, SchemaOptions};
//! let schema = serde_json::json!({
//!     "type": "object",
//!     "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
//!     "required": ["name"]
//! });
//! let compiled = compile(&schema, &SchemaOptions::default()).unwrap();
//! assert!(compiled.warnings.is_empty());
//! let mut checker = lacuna::checker::Checker::new(compiled.grammar).unwrap();
//! assert!(checker.accepts(br#"{"name": "Ada", "age": 36}"#));
//! assert!(!checker.accepts(br#"{"name": "Ada", "age": -1}"#));
//! ```
//!
//! Data flow: the schema document ([`serde_json::Value`]) → `refs` (resolve `$ref`, fold
//! `allOf` into one schema object where exact, with `keywords` checking the shape of each
//! keyword's value) → `lower` (one nonterminal per schema location,
//! `anyOf`/`oneOf` as alternatives) with `scalars` (numbers, strings, `enum`/`const`) and
//! `containers` (arrays, objects), and `sites` (property names as literal lexemes, admitted at
//! every string place that accepts them) → [`GrammarBuilder`](crate::grammar::GrammarBuilder) →
//! [`Grammar`]. Lexeme regexes come from `strings` (JSON string encoding, `pattern`, `format`)
//! and `numbers` (digit-range regexes for integer bounds).
//!
//! Member names are string lexemes followed by `:`, except in schemas with `patternProperties`
//! beside free additional names: those are compiled again with every name lexed together with
//! its colon and ranked by lexer priority (`lower::KeyMode`), which expresses "a name no
//! pattern takes" without a complement regex.
//!
//! The grammar is built with the builder directly rather than through Lark text: no second
//! escaping layer for regexes and property names, no re-parse, and terminals are shared by
//! their regex (so a schema with many equal string properties has one string lexeme).
//!
//! What is exact, approximated or refused is listed in `grammars/README.md` (section JSON
//! Schema). In short: every keyword is either enforced exactly, or refused with an error naming
//! it and its JSON pointer; [`SchemaOptions::lenient`] turns refusals into warnings (the
//! keyword is then not enforced). Two documented rules restrict the *form* of accepted texts,
//! never the set of values: objects with many required members follow schema order
//! ([`SchemaOptions::large_objects_in_schema_order`]), and strings under `pattern`,
//! `format`, `enum`/`const` and property names use canonical escapes.
//!
//! For generation, [`SchemaOptions::for_generation`] accepts a subset of the valid instances
//! that a model should write: objects that name their members take no others unless
//! `additionalProperties` says so ([`SchemaOptions::close_objects`]), objects of many declared
//! members follow schema order, a name written once
//! ([`SchemaOptions::large_objects_in_schema_order`]), and number exponents have at most two
//! digits ([`SchemaOptions::finite_numbers`]). Checking keeps the default.

mod alternatives;
mod conditionals;
mod containers;
mod dependencies;
mod error;
mod key_patterns;
mod keywords;
mod lower;
mod multiples;
mod negation;
mod numbers;
mod objects;
mod refs;
mod scalars;
mod sites;
mod strings;

use serde_json::Value;

pub use error::{SchemaError, SchemaWarning};
pub use strings::FORMATS;

use crate::grammar::{Grammar, GrammarError, Symbol};
use lower::KeyMode;

/// How to compile a schema.
#[derive(Clone, Debug)]
pub struct SchemaOptions {
    /// Turn keywords that cannot be enforced into warnings instead of errors.
    pub lenient: bool,
    /// Objects with at most this many declared properties accept their members in any order,
    /// each at most once (the grammar has 2ⁿ states for n properties); larger ones see
    /// [`SchemaOptions::large_objects_in_schema_order`].
    pub any_order_up_to: usize,
    /// Objects of more declared properties than [`SchemaOptions::any_order_up_to`]: in schema
    /// order, each member at most once (on, for generation: one order, no name written twice),
    /// or in any order with a name allowed to repeat (off, the default: every valid instance
    /// is accepted, and of an instance that repeats a name every occurrence is valid, so the
    /// one a JSON parser keeps is). Off, the grammar has a state per set of required members
    /// seen, so objects of more than [`REPEATABLE_REQUIRED_UP_TO`] required members, or of
    /// more than [`REPEATABLE_RULES_UP_TO`] rules so, follow schema order either way.
    pub large_objects_in_schema_order: bool,
    /// Objects that name members (`properties`, `patternProperties` or `required`) and leave
    /// `additionalProperties` unspecified take no members they do not name, as if it were
    /// `false`: a subset of the schema's instances, for generation, so that a model cannot
    /// fill an object with keys the schema never mentions. Off for checking (the default),
    /// where every valid instance must be accepted. Objects that name nothing, or need more
    /// members than they name (`minProperties`), stay open.
    pub close_objects: bool,
    /// Number exponents of at most two digits (leading zeros aside), for generation: `1e400`
    /// is a JSON number, but JSON parsers read it as infinity (no integer) or refuse it, so a
    /// model must not be led to write one. A subset of the valid instances (a number past
    /// 1e308 now needs some 200 digits); off for checking.
    pub finite_numbers: bool,
}

/// The default of [`SchemaOptions::any_order_up_to`].
pub const ANY_ORDER_UP_TO: usize = 8;

/// The most required members of an object in any order with repeatable names
/// ([`SchemaOptions::large_objects_in_schema_order`] off): 2ʳ states for r of them.
pub const REPEATABLE_REQUIRED_UP_TO: usize = 8;

/// The most rules of such an object: 2ʳ states of n + 1 rules each, for n declared members.
pub const REPEATABLE_RULES_UP_TO: usize = 1 << 13;

impl Default for SchemaOptions {
    fn default() -> Self {
        SchemaOptions {
            lenient: false,
            any_order_up_to: ANY_ORDER_UP_TO,
            large_objects_in_schema_order: false,
            close_objects: false,
            finite_numbers: false,
        }
    }
}

impl SchemaOptions {
    /// Strict (the default) or lenient compilation with the default property-order rule.
    pub fn lenient(lenient: bool) -> Self {
        SchemaOptions {
            lenient,
            ..Self::default()
        }
    }

    /// The options for generating instances: strict, with [`SchemaOptions::close_objects`],
    /// [`SchemaOptions::finite_numbers`] and
    /// [`SchemaOptions::large_objects_in_schema_order`].
    pub fn for_generation() -> Self {
        SchemaOptions {
            large_objects_in_schema_order: true,
            close_objects: true,
            finite_numbers: true,
            ..Self::default()
        }
    }
}

/// A compiled schema: the grammar, and what lenient mode left unenforced.
#[derive(Clone, Debug)]
pub struct CompiledSchema {
    /// The grammar of the JSON texts the schema accepts (under lenient mode, a superset where
    /// a warning says so).
    pub grammar: Grammar,
    /// One per keyword lenient mode did not enforce exactly; always empty in strict mode.
    pub warnings: Vec<SchemaWarning>,
}

/// The metaschemas whose validation vocabulary lacuna implements (drafts 4 to 2020-12).
pub const KNOWN_METASCHEMAS: &[&str] = &[
    "http://json-schema.org/draft-04/schema#",
    "http://json-schema.org/draft-06/schema#",
    "http://json-schema.org/draft-07/schema#",
    "http://json-schema.org/schema#",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema",
];

/// Compiles a schema document (an object or a boolean) to a grammar.
pub fn compile(schema: &Value, options: &SchemaOptions) -> Result<CompiledSchema, SchemaError> {
    if !matches!(schema, Value::Object(_) | Value::Bool(_)) {
        return Err(SchemaError::NotASchema {
            pointer: String::new(),
            found: refs::kind_name(schema).into(),
        });
    }
    let schema = &refs::without_inert_annotations(schema);
    // Names are lexed with their colon only where an object needs it (see `KeyMode`).
    let mut needs_colon_keys = false;
    let plain = compile_with(schema, options, KeyMode::Plain, &mut needs_colon_keys);
    if !needs_colon_keys {
        return plain;
    }
    match compile_with(schema, options, KeyMode::WithColon, &mut needs_colon_keys) {
        // Lenient mode compiled it, with a warning, where the exact reading fails.
        Err(_) if plain.is_ok() => plain,
        exact => exact,
    }
}

fn compile_with(
    schema: &Value,
    options: &SchemaOptions,
    key_mode: KeyMode,
    needs_colon_keys: &mut bool,
) -> Result<CompiledSchema, SchemaError> {
    let mut lw = lower::Lowerer::new(schema, options);
    lw.key_mode = key_mode;
    let start = lower(&mut lw, schema);
    *needs_colon_keys = lw.needs_colon_keys;
    let start = start?;
    let warnings = std::mem::take(&mut lw.warnings);
    let grammar =
        lw.b.build_merging_alternatives(start)
            .map_err(|e| match e {
                GrammarError::EmptyLanguage(_) => SchemaError::Empty {
                    pointer: String::new(),
                },
                GrammarError::TooLarge(message) => SchemaError::TooLarge {
                    pointer: String::new(),
                    message,
                },
                e => SchemaError::Grammar(e),
            })?;
    Ok(CompiledSchema { grammar, warnings })
}

/// Lowers the whole document; the start nonterminal.
fn lower(
    lw: &mut lower::Lowerer,
    schema: &Value,
) -> Result<crate::grammar::NonterminalId, SchemaError> {
    if let Some(meta) = schema.get("$schema") {
        let known = meta.as_str().is_some_and(|m| {
            KNOWN_METASCHEMAS
                .iter()
                .any(|k| m.trim_end_matches('#') == k.trim_end_matches('#'))
        });
        if !known {
            lw.unsupported(
                "/$schema",
                "$schema",
                "an unknown metaschema may change the vocabularies in force",
            )?;
        }
    }
    let root = lw.schema(schema, "", 0)?.ok_or(SchemaError::Empty {
        pointer: String::new(),
    })?;
    lw.finish_sites()?;
    let start = lw.b.fresh_nonterminal("start");
    lw.b.rule(start, vec![Symbol::N(root)]);
    Ok(start)
}

/// Compiles schema text (JSON).
pub fn compile_str(text: &str, options: &SchemaOptions) -> Result<CompiledSchema, SchemaError> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| SchemaError::NotJson(e.to_string()))?;
    compile(&value, options)
}
