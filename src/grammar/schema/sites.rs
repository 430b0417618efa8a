//! String sites: every place where a string lexeme may stand, and the property-name literals.
//!
//! Property names are literal lexemes, and literals beat regexes in the lexer: a string whose
//! text equals a declared name lexes as that name's literal only. So every place that admits a
//! string (a string schema, an `enum` value, the name of an additional member) is recorded as a
//! site, and once all names are known each site also admits the literals of the names its own
//! constraints accept. Names declared by an object are thereby never additional names of that
//! object, which is what the grammar needs, without a complement regex.

use hashbrown::HashSet;

use super::error::SchemaError;
use super::lower::Lowerer;
use crate::grammar::{Pattern, Symbol};

/// What a string lexeme at some place admits, checked against every property name at the end:
/// a string equal to a property name lexes as that name's literal only (literals beat regexes),
/// so each place that admits the name also admits its literal.
#[derive(Clone, Debug)]
pub enum StringSite {
    /// A string with these constraints (`pattern`, `format`, lengths).
    Spec {
        min_length: u64,
        max_length: Option<u64>,
        pattern: Option<String>,
        format: Option<String>,
    },
    /// Exactly this string (`enum`/`const`).
    Exact(String),
    /// The name of an additional member: any name not declared by its object (`excluded`),
    /// matching `pattern` if given (`patternProperties`).
    Key {
        excluded: Vec<String>,
        pattern: Option<String>,
    },
}

impl<'a> Lowerer<'a> {
    /// The literal terminal of a property name, in its serde_json encoding.
    pub(super) fn key(&mut self, name: &str) -> Symbol {
        if let Some(&t) = self.key_ids.get(name) {
            return Symbol::T(t);
        }
        let text = serde_json::to_string(name).expect("strings serialize");
        let t = self
            .b
            .terminal(&format!("KEY{text}"), Pattern::Literal(text), 0);
        self.keys.push((name.to_string(), t));
        self.key_ids.insert(name.to_string(), t);
        Symbol::T(t)
    }

    /// A nonterminal for a string lexeme, registered as a [`StringSite`].
    pub(super) fn string_site(
        &mut self,
        lexeme: Symbol,
        site: StringSite,
        ptr: &str,
    ) -> Result<Symbol, SchemaError> {
        // Equal sites share one nonterminal (most strings are plain `{"type": "string"}`).
        let signature = format!("{lexeme:?} {site:?}");
        if let Some(&nt) = self.site_ids.get(&signature) {
            return Ok(Symbol::N(nt));
        }
        let nt = self.fresh("string");
        self.site_ids.insert(signature, nt);
        self.rule(nt, vec![lexeme], ptr)?;
        self.sites.push((nt, site));
        Ok(Symbol::N(nt))
    }

    /// Lets every string site admit the literals of the property names it admits.
    pub fn finish_sites(&mut self) -> Result<(), SchemaError> {
        let keys = std::mem::take(&mut self.keys);
        self.key_ids.clear();
        let sites = std::mem::take(&mut self.sites);
        for (nt, site) in &sites {
            // Matchers are built once per site, not once per name.
            let (min, max, pattern, format, exact, excluded) = match site {
                StringSite::Exact(v) => (0, None, None, None, Some(v), None),
                StringSite::Key { excluded, pattern } => (
                    0,
                    None,
                    pattern.as_deref(),
                    None,
                    None,
                    Some(
                        excluded
                            .iter()
                            .map(String::as_str)
                            .collect::<HashSet<&str>>(),
                    ),
                ),
                StringSite::Spec {
                    min_length,
                    max_length,
                    pattern,
                    format,
                } => (
                    *min_length,
                    *max_length,
                    pattern.as_deref(),
                    format.as_deref(),
                    None,
                    None,
                ),
            };
            let pattern = match pattern.map(super::strings::pattern_matcher) {
                Some(Ok(m)) => Some(m),
                Some(Err(_)) => continue,
                None => None,
            };
            let format = match format {
                Some(f) => match super::strings::format_matcher(f) {
                    Some(m) => Some(m),
                    None => continue,
                },
                None => None,
            };
            for (name, t) in &keys {
                let n = name.chars().count() as u64;
                let ok = exact.is_none_or(|v| v == name)
                    && excluded.as_ref().is_none_or(|x| !x.contains(name.as_str()))
                    && n >= min
                    && max.is_none_or(|m| n <= m)
                    && pattern.as_ref().is_none_or(|m| m.is_match(name))
                    && format.as_ref().is_none_or(|m| m.is_match(name));
                if ok {
                    self.rule(*nt, vec![Symbol::T(*t)], "")?;
                }
            }
        }
        Ok(())
    }
}
