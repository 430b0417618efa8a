//! Terminal definitions → one regex each.
//!
//! A Lark terminal is a regular expression over literals, regexes, ranges and other terminals.
//! Each definition compiles to a single `regex-syntax` string in which referenced terminals are
//! inlined, so terminals must not refer to each other in a cycle; the definitions are ordered by
//! an iterative depth-first search that reports such a cycle by name. Compiled pieces carry
//! their precedence so that parentheses `(?:...)` appear only where they are needed, and whether
//! they are a plain string, so that `"a" "b"` stays a [`Pattern::Literal`].
//!
//! `%import common.NAME` makes `NAME` (or its alias) refer to the definition in the built-in
//! `common` module (`grammars/common.lark`, embedded in the binary); names inside that
//! definition resolve in `common`, so its helpers never clash with the importing grammar's.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::ast::{Def, Expansions, Expr, ExprKind, Item, RepeatOp};
use super::parser;
use super::{lexer, pyregex, syntax, GrammarError, Pos};
use crate::grammar::{parse_pattern, Pattern};

const COMMON_ORIGIN: &str = "grammars/common.lark";
const COMMON_SOURCE: &str = include_str!("../../../grammars/common.lark");

/// The longest regex (in bytes) a terminal may compile to once its references are inlined.
const MAX_REGEX_LEN: usize = 1 << 20;

/// The terminal definitions of the built-in `common` module, parsed once.
pub(super) fn common_defs() -> Result<&'static [Def], GrammarError> {
    static COMMON: OnceLock<Result<Vec<Def>, GrammarError>> = OnceLock::new();
    COMMON
        .get_or_init(|| {
            let tokens = lexer::tokenize(COMMON_SOURCE, COMMON_ORIGIN)?;
            let items = parser::parse(&tokens, COMMON_ORIGIN)?;
            Ok(items
                .into_iter()
                .filter_map(|item| match item {
                    Item::Term(d) => Some(d),
                    _ => None,
                })
                .collect())
        })
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

/// A terminal name of the grammar being compiled and where its definition comes from.
pub(super) enum Source<'a> {
    Defined(&'a Def),
    /// `%import common.NAME -> alias`: the index of `NAME` in [`common_defs`].
    Imported {
        common: usize,
        pos: Pos,
    },
}

/// A compiled terminal of the grammar.
#[derive(Clone, Debug)]
pub(super) struct Compiled {
    pub name: String,
    pub pattern: Pattern,
    pub priority: i32,
}

/// All terminals of a grammar, compiled, in order of definition.
pub(super) struct Terminals<'a> {
    pub list: Vec<Compiled>,
    /// Name → index in `list`.
    index: HashMap<String, usize>,
    origin: &'a str,
    /// Main-scope name → node.
    names: HashMap<String, usize>,
    frags: Vec<Option<Frag>>,
}

/// A piece of regex, with what is needed to combine it without needless groups.
#[derive(Clone, Debug)]
struct Frag {
    text: String,
    prec: Prec,
    /// The exact string matched, when the piece is a plain (case-sensitive) literal.
    literal: Option<String>,
    /// Whether the text is known to parse (it is one literal, regex or range, checked when
    /// it was read); combinations are checked once, as a whole terminal.
    checked: bool,
}

/// How loosely a piece binds: a piece is grouped before an operator that binds tighter.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Prec {
    Atom,
    Postfix,
    Concat,
    Alt,
}

impl Frag {
    fn pattern(&self) -> Pattern {
        match &self.literal {
            Some(s) => Pattern::Literal(s.clone()),
            None => Pattern::Regex(self.text.clone()),
        }
    }

    /// The text, wrapped in `(?:...)` if it binds more loosely than `max` or is empty.
    fn grouped(&self, max: Prec) -> String {
        if self.prec > max || self.text.is_empty() {
            format!("(?:{})", self.text)
        } else {
            self.text.clone()
        }
    }
}

/// One definition in the dependency graph: the grammar's own, then `common`'s.
struct Node<'a> {
    name: &'a str,
    def: &'a Def,
    origin: &'a str,
    common: bool,
}

/// What compiling a piece needs to know: where errors point and how names resolve.
struct Ctx<'a> {
    origin: &'a str,
    /// The terminal being compiled, for error messages.
    term: &'a str,
    names: &'a HashMap<String, usize>,
    frags: &'a [Option<Frag>],
}

/// Compiles the grammar's terminals; `sources` is in order of definition, names unique.
pub(super) fn compile<'a>(
    sources: &[(String, Source<'a>)],
    origin: &'a str,
) -> Result<Terminals<'a>, GrammarError> {
    let common = if sources
        .iter()
        .any(|(_, s)| matches!(s, Source::Imported { .. }))
    {
        common_defs()?
    } else {
        &[]
    };
    let mut nodes: Vec<Node<'a>> = Vec::new();
    let mut names = HashMap::new();
    let mut roots = Vec::new();
    for (name, source) in sources {
        if let Source::Defined(def) = source {
            names.insert(name.clone(), nodes.len());
            roots.push(nodes.len());
            nodes.push(Node {
                name: &def.name,
                def,
                origin,
                common: false,
            });
        }
    }
    let first_common = nodes.len();
    let mut common_names = HashMap::new();
    for def in common {
        common_names.insert(def.name.clone(), nodes.len());
        nodes.push(Node {
            name: &def.name,
            def,
            origin: COMMON_ORIGIN,
            common: true,
        });
    }
    for (name, source) in sources {
        if let Source::Imported { common, .. } = source {
            names.insert(name.clone(), first_common + common);
            roots.push(first_common + common);
        }
    }

    let order = topological_order(&nodes, &roots, &names, &common_names)?;
    let mut frags: Vec<Option<Frag>> = vec![None; nodes.len()];
    for i in order {
        let Some(node) = nodes.get(i) else { continue };
        let ctx = Ctx {
            origin: node.origin,
            term: node.name,
            names: if node.common { &common_names } else { &names },
            frags: &frags,
        };
        let frag = ctx.expansions(&node.def.body)?;
        frags[i] = Some(frag);
    }

    let mut list = Vec::with_capacity(sources.len());
    let mut index = HashMap::new();
    for (name, source) in sources {
        let (node, pos) = match source {
            Source::Defined(def) => (names.get(name).copied(), def.pos),
            Source::Imported { common, pos } => (Some(first_common + common), *pos),
        };
        let Some(node) = node else { continue };
        let (Some(Some(frag)), Some(def)) = (frags.get(node), nodes.get(node)) else {
            continue;
        };
        let pattern = frag.pattern();
        if !frag.checked {
            if let Err(e) = parse_pattern(&pattern) {
                return Err(invalid(name, origin, pos, &e));
            }
        }
        index.insert(name.clone(), list.len());
        list.push(Compiled {
            name: name.clone(),
            pattern,
            priority: def.def.priority,
        });
    }
    Ok(Terminals {
        list,
        index,
        origin,
        names,
        frags,
    })
}

fn invalid(term: &str, origin: &str, pos: Pos, message: &str) -> GrammarError {
    GrammarError::InvalidPattern {
        terminal: term.to_string(),
        message: format!("{origin}:{pos}: {message}"),
    }
}

/// Orders the definitions reachable from `roots` so that each comes after those it names;
/// a cycle is an error that names every terminal on it.
fn topological_order(
    nodes: &[Node],
    roots: &[usize],
    names: &HashMap<String, usize>,
    common_names: &HashMap<String, usize>,
) -> Result<Vec<usize>, GrammarError> {
    let deps = |i: usize| -> Vec<usize> {
        let Some(node) = nodes.get(i) else {
            return Vec::new();
        };
        let mut refs = Vec::new();
        for alt in &node.def.body {
            for e in &alt.items {
                term_refs(e, &mut refs);
            }
        }
        let names = if node.common { common_names } else { names };
        refs.iter().filter_map(|r| names.get(*r).copied()).collect()
    };
    // 0: not seen, 1: on the stack, 2: done.
    let mut state = vec![0u8; nodes.len()];
    let mut order = Vec::new();
    for &root in roots {
        if state.get(root) != Some(&0) {
            continue;
        }
        state[root] = 1;
        let mut stack = vec![(root, deps(root), 0usize)];
        while let Some((node, next, k)) = stack.last_mut() {
            let node = *node;
            if let Some(&d) = next.get(*k) {
                *k += 1;
                match state.get(d) {
                    Some(0) => {
                        state[d] = 1;
                        stack.push((d, deps(d), 0));
                    }
                    Some(1) => {
                        let start = stack.iter().position(|s| s.0 == d).unwrap_or(0);
                        let mut cycle: Vec<&str> =
                            stack[start..].iter().map(|s| nodes[s.0].name).collect();
                        cycle.push(nodes[d].name);
                        let shown = cycle
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(" -> ");
                        let first = &nodes[d];
                        return Err(syntax(
                            first.origin,
                            first.def.pos,
                            format!(
                                "terminals cannot be recursive, but {shown} refer to each \
                                 other in a cycle (use rules for recursion)"
                            ),
                        ));
                    }
                    _ => {}
                }
            } else {
                state[node] = 2;
                order.push(node);
                stack.pop();
            }
        }
    }
    Ok(order)
}

/// The terminal names an expression mentions.
fn term_refs<'e>(e: &'e Expr, out: &mut Vec<&'e str>) {
    match &e.kind {
        ExprKind::Term(n) => out.push(n),
        ExprKind::Group(exps) | ExprKind::Maybe(exps) => {
            for alt in exps {
                for e in &alt.items {
                    term_refs(e, out);
                }
            }
        }
        ExprKind::Repeat { inner, .. } => term_refs(inner, out),
        ExprKind::Rule(_)
        | ExprKind::Literal { .. }
        | ExprKind::Regex { .. }
        | ExprKind::Range { .. } => {}
    }
}

impl Terminals<'_> {
    /// The compiled terminal `name`, if the grammar defines or imports it.
    pub(super) fn get(&self, name: &str) -> Option<&Compiled> {
        self.index.get(name).and_then(|&i| self.list.get(i))
    }

    /// Compiles an expression outside any definition (an anonymous terminal in a rule, or the
    /// body of `%ignore`) into a pattern; `term` names it in error messages.
    pub(super) fn anonymous(&self, body: &Expansions, term: &str) -> Result<Pattern, GrammarError> {
        let ctx = Ctx {
            origin: self.origin,
            term,
            names: &self.names,
            frags: &self.frags,
        };
        Ok(ctx.expansions(body)?.pattern())
    }

    /// [`Self::anonymous`] for a single expression.
    pub(super) fn anonymous_expr(&self, e: &Expr, term: &str) -> Result<Pattern, GrammarError> {
        let ctx = Ctx {
            origin: self.origin,
            term,
            names: &self.names,
            frags: &self.frags,
        };
        Ok(ctx.expr(e)?.pattern())
    }
}

impl Ctx<'_> {
    fn check_len(&self, f: Frag, pos: Pos) -> Result<Frag, GrammarError> {
        if f.text.len() > MAX_REGEX_LEN {
            return Err(invalid(
                self.term,
                self.origin,
                pos,
                &format!("the regex grows beyond {MAX_REGEX_LEN} bytes once terminals are inlined"),
            ));
        }
        Ok(f)
    }

    fn expansions(&self, alts: &Expansions) -> Result<Frag, GrammarError> {
        let mut frags = Vec::with_capacity(alts.len());
        for alt in alts {
            if let Some((alias, pos)) = &alt.alias {
                return Err(syntax(
                    self.origin,
                    *pos,
                    format!("aliases (`-> {alias}`) are not allowed in terminals"),
                ));
            }
            frags.push(self.concat(&alt.items)?);
        }
        if frags.len() == 1 {
            if let Some(f) = frags.pop() {
                return Ok(f);
            }
        }
        let text = frags.iter().map(|f| f.text.as_str()).collect::<Vec<_>>();
        let pos = alts
            .iter()
            .find_map(|a| a.items.first().map(|e| e.pos))
            .unwrap_or(Pos { line: 1, column: 1 });
        self.check_len(
            Frag {
                text: text.join("|"),
                prec: Prec::Alt,
                literal: None,
                checked: false,
            },
            pos,
        )
    }

    fn concat(&self, items: &[Expr]) -> Result<Frag, GrammarError> {
        let mut frags = Vec::with_capacity(items.len());
        for e in items {
            frags.push(self.expr(e)?);
        }
        if frags.len() == 1 {
            if let Some(f) = frags.pop() {
                return Ok(f);
            }
        }
        let mut text = String::new();
        let mut literal = Some(String::new());
        for f in &frags {
            text.push_str(&f.grouped(Prec::Concat));
            literal = match (literal, &f.literal) {
                (Some(mut l), Some(s)) => {
                    l.push_str(s);
                    Some(l)
                }
                _ => None,
            };
        }
        let pos = items.first().map_or(Pos { line: 1, column: 1 }, |e| e.pos);
        self.check_len(
            Frag {
                text,
                prec: Prec::Concat,
                literal,
                checked: false,
            },
            pos,
        )
    }

    fn expr(&self, e: &Expr) -> Result<Frag, GrammarError> {
        match &e.kind {
            ExprKind::Literal { value, insensitive } => {
                if value.is_empty() {
                    return Err(syntax(
                        self.origin,
                        e.pos,
                        "empty string literal: a terminal must match at least one character",
                    ));
                }
                let escaped = regex_syntax::escape(value);
                Ok(if *insensitive {
                    Frag {
                        text: format!("(?i:{escaped})"),
                        prec: Prec::Atom,
                        literal: None,
                        checked: true,
                    }
                } else {
                    let single = value.chars().nth(1).is_none();
                    Frag {
                        text: escaped,
                        prec: if single { Prec::Atom } else { Prec::Concat },
                        literal: Some(value.clone()),
                        checked: true,
                    }
                })
            }
            ExprKind::Regex { body, flags } => self.regex(body, flags, e.pos),
            ExprKind::Range { from, to } => Ok(Frag {
                text: format!("[\\x{{{:X}}}-\\x{{{:X}}}]", u32::from(*from), u32::from(*to)),
                prec: Prec::Atom,
                literal: None,
                checked: true,
            }),
            ExprKind::Term(name) => {
                let frag = self.names.get(name).and_then(|&i| self.frags.get(i));
                match frag {
                    Some(Some(f)) => Ok(f.clone()),
                    Some(None) => Err(syntax(
                        self.origin,
                        e.pos,
                        format!("terminal `{name}` could not be compiled before `{}`", self.term),
                    )),
                    None => Err(syntax(
                        self.origin,
                        e.pos,
                        format!("undefined terminal `{name}` (used in `{}`)", self.term),
                    )),
                }
            }
            ExprKind::Rule(name) => Err(syntax(
                self.origin,
                e.pos,
                format!(
                    "`{}` is a terminal and cannot refer to rule `{name}`: rules are not allowed inside terminals",
                    self.term
                ),
            )),
            ExprKind::Group(alts) => self.expansions(alts),
            ExprKind::Maybe(alts) => {
                let inner = self.expansions(alts)?;
                self.postfix(inner, "?", e.pos)
            }
            ExprKind::Repeat { inner, op } => {
                let inner = self.expr(inner)?;
                let op = match *op {
                    RepeatOp::Optional => "?".to_string(),
                    RepeatOp::Star => "*".to_string(),
                    RepeatOp::Plus => "+".to_string(),
                    RepeatOp::Between(lo, hi) if lo == hi => format!("{{{lo}}}"),
                    RepeatOp::Between(lo, hi) => format!("{{{lo},{hi}}}"),
                };
                self.postfix(inner, &op, e.pos)
            }
        }
    }

    fn postfix(&self, inner: Frag, op: &str, pos: Pos) -> Result<Frag, GrammarError> {
        let mut text = inner.grouped(Prec::Atom);
        text.push_str(op);
        self.check_len(
            Frag {
                text,
                prec: Prec::Postfix,
                literal: None,
                checked: false,
            },
            pos,
        )
    }

    /// A regex literal: translated from Python syntax, flags applied, validated on its own.
    fn regex(&self, body: &str, flags: &str, pos: Pos) -> Result<Frag, GrammarError> {
        let verbose = flags.contains('x');
        let translated = pyregex::translate(body, verbose)
            .map_err(|m| invalid(self.term, self.origin, pos, &m))?;
        let inline: String = ['i', 'm', 's', 'x']
            .into_iter()
            .filter(|f| flags.contains(*f))
            .collect();
        let mut frag = if inline.is_empty() && !translated.contains("(?") {
            Frag {
                text: translated,
                prec: Prec::Alt,
                literal: None,
                checked: false,
            }
        } else if inline.is_empty() {
            // A bare `(?i)` inside would reach past the literal into its neighbours.
            Frag {
                text: format!("(?:{translated})"),
                prec: Prec::Atom,
                literal: None,
                checked: false,
            }
        } else {
            // Under `x` a trailing `# comment` would swallow the closing parenthesis.
            let end = if verbose { "\n" } else { "" };
            Frag {
                text: format!("(?{inline}:{translated}{end})"),
                prec: Prec::Atom,
                literal: None,
                checked: false,
            }
        };
        if let Err(e) = parse_pattern(&Pattern::Regex(frag.text.clone())) {
            return Err(invalid(self.term, self.origin, pos, &e));
        }
        frag.checked = true;
        Ok(frag)
    }
}
