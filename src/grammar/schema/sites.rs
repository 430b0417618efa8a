//! String sites: every place where a string lexeme may stand, and the property-name literals.
//!
//! Property names are literal lexemes, and literals beat regexes in the lexer: a string whose
//! text equals a declared name lexes as that name's literal only. So every place that admits a
//! string (a string schema, an `enum` value, the name of an additional member) is recorded as a
//! site, and once all names are known each site also admits the literals of the names its own
//! constraints accept. Names declared by an object are thereby never additional names of that
//! object, which is what the grammar needs, without a complement regex.

use hashbrown::HashMap;

use super::error::SchemaError;
use super::lower::{KeyMode, Lowerer, COLON_SUFFIX};
use crate::grammar::{NonterminalId, Pattern, Symbol, TerminalId};

/// What a string lexeme at some place admits, checked against every property name at the end:
/// a string equal to a property name lexes as that name's literal only (literals beat regexes),
/// so each place that admits the name also admits its literal.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
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
    /// matching `pattern` if given (`patternProperties`); `siblings` are the patterns of its object
    /// that have key lexemes of their own.
    Key {
        excluded: Vec<String>,
        pattern: Option<String>,
        siblings: Vec<String>,
    },
}

/// Lexer priorities of names in [`KeyMode::WithColon`]: a declared name beats a pattern, which
/// beats any other name.
pub(super) const NAME_PRIORITY: i32 = 2;
pub(super) const PATTERN_PRIORITY: i32 = 1;

impl<'a> Lowerer<'a> {
    /// The literal terminal of a property name, in its serde_json encoding (with its colon, at
    /// [`NAME_PRIORITY`], in [`KeyMode::WithColon`]).
    pub(super) fn key(&mut self, name: &str) -> Symbol {
        if let Some(&t) = self.key_ids.get(name) {
            return Symbol::T(t);
        }
        let text = serde_json::to_string(name).expect("strings serialize");
        let t = match self.key_mode {
            KeyMode::Plain => self
                .b
                .terminal(&format!("KEY{text}"), Pattern::Literal(text), 0),
            KeyMode::WithColon => {
                let re = format!("{}{COLON_SUFFIX}", regex_syntax::escape(&text));
                self.b
                    .terminal(&format!("KEY{text}"), Pattern::Regex(re), NAME_PRIORITY)
            }
        };
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
        let signature = (lexeme, site);
        if let Some(&nt) = self.site_ids.get(&signature) {
            return Ok(Symbol::N(nt));
        }
        let (lexeme, site) = signature;
        let nt = self.fresh("string");
        self.site_ids.insert((lexeme, site.clone()), nt);
        self.rule(nt, vec![lexeme], ptr)?;
        self.sites.push((nt, site));
        Ok(Symbol::N(nt))
    }

    /// Lets every string site admit the literals of the property names it admits.
    ///
    /// In [`KeyMode::WithColon`] names never stand where values do, so only name sites take
    /// them; a site of any other name also takes the pattern keys of other objects, which the
    /// lexer gives to their patterns first. That is exact only when two pattern keys are never
    /// both possible for one name: patterns of different objects must be equal or disjoint.
    pub fn finish_sites(&mut self) -> Result<(), SchemaError> {
        let keys = std::mem::take(&mut self.keys);
        // In characters, as `minLength`/`maxLength` count; once, not once per site.
        let key_lengths: Vec<u64> = keys
            .iter()
            .map(|(name, _)| name.chars().count() as u64)
            .collect();
        let key_index: HashMap<&str, usize> = keys
            .iter()
            .enumerate()
            .map(|(i, (name, _))| (name.as_str(), i))
            .collect();
        self.key_ids.clear();
        let sites = std::mem::take(&mut self.sites);
        let with_colon = self.key_mode == KeyMode::WithColon;
        if with_colon {
            self.pattern_keys_apart()?;
        }
        let mut pattern_keys = std::mem::take(&mut self.pattern_keys);
        pattern_keys.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        pattern_keys.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        for (nt, site) in &sites {
            match site {
                // Any other name: also the names other objects' patterns take.
                StringSite::Key {
                    pattern: None,
                    siblings,
                    ..
                } if with_colon => {
                    for (p, t, _) in &pattern_keys {
                        if !siblings.contains(p) {
                            self.rule(*nt, vec![Symbol::T(*t)], "")?;
                        }
                    }
                }
                StringSite::Key { .. } => {}
                // With their colon, names never stand where values do.
                _ if with_colon => continue,
                _ => {}
            }
            self.admit_names(*nt, site, &keys, &key_lengths, &key_index)?;
        }
        Ok(())
    }

    /// Refuses pattern keys that one name could match two of with different lexemes.
    fn pattern_keys_apart(&mut self) -> Result<(), SchemaError> {
        let mut distinct: Vec<(&String, &String)> =
            self.pattern_keys.iter().map(|(p, _, at)| (p, at)).collect();
        distinct.sort();
        distinct.dedup_by(|x, y| x.0 == y.0);
        for (i, (a, at)) in distinct.iter().enumerate() {
            for (b, _) in &distinct[i + 1..] {
                if !super::key_patterns::disjoint(a, b).unwrap_or(false) {
                    return Err(SchemaError::Unsupported {
                        pointer: at.to_string(),
                        keyword: "patternProperties".into(),
                        reason: format!(
                            "patterns {a:?} and {b:?} of different objects may match one name, \
                             and free additional names beside them cannot then be expressed"
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// Lets one string site admit the literals of the property names it admits.
    fn admit_names(
        &mut self,
        nt: NonterminalId,
        site: &StringSite,
        keys: &[(String, TerminalId)],
        key_lengths: &[u64],
        key_index: &HashMap<&str, usize>,
    ) -> Result<(), SchemaError> {
        // Matchers are built once per site, not once per name.
        let (min, max, pattern, format) = match site {
            StringSite::Exact(_) => (0, None, None, None),
            StringSite::Key { pattern, .. } => (0, None, pattern.as_deref(), None),
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
            ),
        };
        let pattern = match pattern.map(super::strings::pattern_matcher) {
            Some(Ok(m)) => Some(m),
            Some(Err(_)) => return Ok(()),
            None => None,
        };
        let format = match format {
            Some(f) => match super::strings::format_matcher(f) {
                Some(m) => Some(m),
                None => return Ok(()),
            },
            None => None,
        };
        // An additional name is one that none of its object's patterns takes.
        let mut taken_by_patterns = vec![];
        if let StringSite::Key {
            pattern: None,
            siblings,
            ..
        } = site
        {
            for p in siblings {
                match super::strings::pattern_matcher(p) {
                    Ok(m) => taken_by_patterns.push(m),
                    Err(_) => return Ok(()),
                }
            }
        }
        // Names are looked up by the site's few (an object's own names), not the other way
        // round: a large schema has hundreds of objects and hundreds of names.
        let mut admitted = match site {
            StringSite::Exact(v) => {
                let mut only = vec![false; keys.len()];
                if let Some(&i) = key_index.get(v.as_str()) {
                    only[i] = true;
                }
                only
            }
            _ => vec![true; keys.len()],
        };
        if let StringSite::Key { excluded, .. } = site {
            for name in excluded {
                if let Some(&i) = key_index.get(name.as_str()) {
                    admitted[i] = false;
                }
            }
        }
        let filtered = min > 0
            || max.is_some()
            || pattern.is_some()
            || format.is_some()
            || !taken_by_patterns.is_empty();
        if filtered {
            for (i, ((name, _), &n)) in keys.iter().zip(key_lengths).enumerate() {
                admitted[i] = admitted[i]
                    && n >= min
                    && max.is_none_or(|m| n <= m)
                    && pattern.as_ref().is_none_or(|m| m.is_match(name))
                    && format.as_ref().is_none_or(|m| m.is_match(name))
                    && !taken_by_patterns.iter().any(|m| m.is_match(name));
            }
        }
        let mut i = 0;
        while i < keys.len() {
            if !admitted[i] {
                i += 1;
                continue;
            }
            let run_end = (i..keys.len())
                .find(|&j| !admitted[j])
                .unwrap_or(keys.len());
            let mut cover = Vec::new();
            self.cover_keys(keys, (0, keys.len()), (i, run_end), &mut cover)?;
            for symbol in cover {
                self.rule(nt, vec![symbol], "")?;
            }
            i = run_end;
        }
        Ok(())
    }

    /// The symbols that together derive exactly the names `keys[want.0..want.1]`: nodes of a
    /// segment tree over all names, shared by every site. A site admits every name but its
    /// object's own (an additional member's name) or every name (a plain string where names
    /// are plain lexemes); listing them per site made a schema of 90 objects and 275 names
    /// 24,000 rules, most of its grammar. Through the tree a run of names costs a site at most
    /// 2·log₂(names) rules, and the tree 2 rules per name once.
    fn cover_keys(
        &mut self,
        keys: &[(String, TerminalId)],
        node: (usize, usize),
        want: (usize, usize),
        out: &mut Vec<Symbol>,
    ) -> Result<(), SchemaError> {
        let (lo, hi) = node;
        if want.1 <= lo || hi <= want.0 {
            return Ok(());
        }
        if want.0 <= lo && hi <= want.1 {
            out.push(self.key_range(keys, node)?);
            return Ok(());
        }
        let mid = lo + (hi - lo) / 2;
        self.cover_keys(keys, (lo, mid), want, out)?;
        self.cover_keys(keys, (mid, hi), want, out)
    }

    /// The symbol deriving exactly the names `keys[lo..hi]` (a node of the tree of
    /// [`Lowerer::cover_keys`]): the name's terminal for one name, else a nonterminal made once.
    fn key_range(
        &mut self,
        keys: &[(String, TerminalId)],
        (lo, hi): (usize, usize),
    ) -> Result<Symbol, SchemaError> {
        if hi - lo == 1 {
            return Ok(Symbol::T(keys[lo].1));
        }
        if let Some(&nt) = self.key_ranges.get(&(lo, hi)) {
            return Ok(Symbol::N(nt));
        }
        let mid = lo + (hi - lo) / 2;
        let left = self.key_range(keys, (lo, mid))?;
        let right = self.key_range(keys, (mid, hi))?;
        let nt = self.fresh("names");
        self.rule(nt, vec![left], "")?;
        self.rule(nt, vec![right], "")?;
        self.key_ranges.insert((lo, hi), nt);
        Ok(Symbol::N(nt))
    }
}
