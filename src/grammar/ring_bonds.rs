//! Ring-bond labels: a side constraint on a grammar's lexemes that no CFG of practical size
//! can state.
//!
//! In SMILES a ring bond is a label written after two atoms (`C1CCCCC1`): the first occurrence
//! opens it, the next closes it, and the label may then be used again. A reader (RDKit) refuses
//! a molecule where a label is left open, closes on the atom that opened it (`C11`), or doubles
//! a bond (`C1C1`). Those are regular properties of the lexeme sequence, one per label (up to
//! what branches hide, see [`RingBonds`]), but the product of 100 labels' automata has a state
//! for every set of open labels, far too many for a grammar. So the grammar states them with a
//! directive (`%ring_bonds RING atoms ATOM breaks BRANCH_END DOT`), the terminal `RING` is split
//! here into one terminal per label (so that a lexeme automaton tells labels apart), and the
//! checker intersects its lexeme automata with the constraint, exploring only the sets of open
//! labels a canvas can reach (see [`crate::intersect::ring_bonds`]).

use regex_syntax::hir::{Class, Hir, HirKind};

use super::{Grammar, GrammarBuilder, GrammarError, Pattern, Symbol, TerminalId};

/// The most labels one label terminal may match (SMILES has 100: `0`–`9` and `%10`–`%99`).
pub const MAX_RING_LABELS: usize = 128;

/// A grammar's ring-bond constraint on its words' lexemes:
/// - each label terminal occurs an even number of times: its occurrences open and close a
///   ring bond in turn;
/// - a label does not close on the atom that opened it, nor on an atom bonded to that atom
///   (the ring bond would double the bond: `C1C1`, `C1=C1`). An atom is bonded to the atom
///   before it unless one of the `breaks` (a dot) came between; with `branches`, an atom that
///   follows a branch is bonded to the atom the branch hangs from (its *anchor*), and so is
///   the branch's first atom, and a label after a branch belongs to the anchor
///   (`C1(C)C1`, `C1(CC)1`, `C1C(C)1` and `C(C1)1` are refused, `C1(CC1)` and `C(CC1)1` are
///   not). Without `branches`, the end of a branch must be one of the `breaks`, and a ring
///   closed across a branch is not refused;
/// - nor on an atom already ring-bonded to that atom: two ring bonds between the same two
///   atoms (`C12CC12`, `C12CCC21`, `C2(CC21)1`), which RDKit refuses too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingBonds {
    /// One terminal per label, each matching exactly its label's text.
    labels: Vec<TerminalId>,
    /// The terminals that are atoms.
    atoms: Vec<TerminalId>,
    /// The terminals that open and close a branch, if branches are followed.
    branches: Option<(TerminalId, TerminalId)>,
    /// The terminals after which the next atom is not bonded to the last one.
    breaks: Vec<TerminalId>,
    /// Each label's text.
    texts: Vec<Vec<u8>>,
    /// The bytes a label's text starts with: at any other byte of a chunk none starts.
    starts: [bool; 256],
}

impl RingBonds {
    /// The label terminals, one per label.
    pub fn labels(&self) -> &[TerminalId] {
        &self.labels
    }

    /// The atom terminals.
    pub fn atoms(&self) -> &[TerminalId] {
        &self.atoms
    }

    /// The terminals that open and close a branch, if the constraint follows branches.
    pub fn branches(&self) -> Option<(TerminalId, TerminalId)> {
        self.branches
    }

    /// The terminals after which the next atom is not bonded to the atom before them.
    pub fn breaks(&self) -> &[TerminalId] {
        &self.breaks
    }

    /// The labels that `chunks` mention, as bits by index into [`RingBonds::labels`]: each
    /// chunk read left to right, taking the longest label text at each place (so `%10` is
    /// label `%10`, not `1` and `0`) and moving on one byte where none starts. Digits inside a
    /// bracket atom count too: mentioning more only tracks more.
    pub fn mentioned<'a>(&self, chunks: impl IntoIterator<Item = &'a [u8]>) -> u128 {
        let mut out = 0u128;
        for chunk in chunks {
            let mut i = 0;
            while i < chunk.len() {
                if !self.starts[chunk[i] as usize] {
                    i += 1;
                    continue;
                }
                let longest = self
                    .texts
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| chunk[i..].starts_with(t))
                    .max_by_key(|(_, t)| t.len());
                match longest {
                    Some((l, t)) => {
                        out |= 1 << l;
                        i += t.len();
                    }
                    None => i += 1,
                }
            }
        }
        out
    }
}

/// The terminals a ring-bond constraint names besides its label terminal (see [`RingBonds`]).
#[derive(Clone, Debug, Default)]
pub struct RingBondRoles {
    /// The atom terminals.
    pub atoms: Vec<String>,
    /// None, or the terminal that opens a branch and the one that closes it.
    pub branches: Vec<String>,
    /// The terminals after which the next atom is not bonded to the atom before them.
    pub breaks: Vec<String>,
}

/// `g` with terminal `label` split into one literal terminal per string it matches (its
/// language must be finite, at most [`MAX_RING_LABELS`] strings), each use of `label` in a
/// rule replaced by a nonterminal of the same name deriving any one of them, and the
/// constraint recorded with the terminals of `roles` (see [`RingBonds`]).
pub fn with_ring_bonds(
    g: &Grammar,
    label: &str,
    roles: &RingBondRoles,
) -> Result<Grammar, GrammarError> {
    let bad = |message: String| GrammarError::InvalidPattern {
        terminal: label.to_string(),
        message,
    };
    let Some(label_id) = g.terminal_by_name(label) else {
        return Err(bad(format!(
            "`%ring_bonds` names `{label}`, which no rule uses"
        )));
    };
    let named = |names: &[String], what: &str| -> Result<Vec<TerminalId>, GrammarError> {
        names
            .iter()
            .map(|a| match g.terminal_by_name(a) {
                Some(t) if t != label_id => Ok(t),
                Some(_) => Err(bad(format!("`{a}` cannot be both the label and {what}"))),
                None => Err(GrammarError::InvalidPattern {
                    terminal: a.to_string(),
                    message: format!("`%ring_bonds` names {what} `{a}`, which no rule uses"),
                }),
            })
            .collect()
    };
    let atom_ids = named(&roles.atoms, "an atom terminal")?;
    let break_ids = named(&roles.breaks, "a break terminal")?;
    let branch_ids = named(&roles.branches, "a branch terminal")?;
    let branches =
        match branch_ids[..] {
            [] => None,
            [open, close] if open != close => Some((open, close)),
            _ => return Err(bad(
                "`branches` takes two different terminals, the one that opens a branch and the \
                 one that closes it"
                    .into(),
            )),
        };
    // Each terminal has one role: an atom that also closed a branch would say two things.
    let mut roles_of: Vec<(TerminalId, &str)> = Vec::new();
    for (ids, what) in [
        (&atom_ids, "an atom"),
        (&branch_ids, "a branch terminal"),
        (&break_ids, "a break"),
    ] {
        for &t in ids {
            if let Some((_, first)) = roles_of.iter().find(|(u, w)| *u == t && w != &what) {
                return Err(GrammarError::InvalidPattern {
                    terminal: g.terminal(t).name.clone(),
                    message: format!("`%ring_bonds` names it both {first} and {what}"),
                });
            }
            roles_of.push((t, what));
        }
    }
    let terminal = g.terminal(label_id);
    let hir = super::parse_pattern(&terminal.pattern).map_err(bad)?;
    let mut texts = finite_language(&hir, MAX_RING_LABELS).ok_or_else(|| {
        bad(format!(
            "a ring-bond label terminal must match a finite set of at most {MAX_RING_LABELS} strings"
        ))
    })?;
    texts.sort();
    texts.dedup();
    if g.ignored().contains(&label_id) {
        return Err(bad("a ring-bond label terminal cannot be `%ignore`d".into()));
    }

    let priority = terminal.priority;
    let mut b = GrammarBuilder::from_grammar(g);
    // The label terminal keeps its id as the first label's; the others are added.
    let mut labels = Vec::with_capacity(texts.len());
    for (i, text) in texts.iter().enumerate() {
        let name = format!("{label}_{text}");
        if b.has_terminal(&name) {
            return Err(bad(format!("terminal `{name}` exists already")));
        }
        let t = if i == 0 {
            b.replace_terminal(label_id, &name, Pattern::Literal(text.clone()));
            label_id
        } else {
            b.terminal(&name, Pattern::Literal(text.clone()), priority)
        };
        if let Some(src) = g.terminal_source(label_id) {
            b.set_terminal_source(t, src.to_string());
        }
        labels.push(t);
    }
    let any_label = b.fresh_nonterminal(label);
    b.map_rule_symbols(|s| match s {
        Symbol::T(t) if t == label_id => Symbol::N(any_label),
        s => s,
    });
    for &t in &labels {
        b.rule(any_label, vec![Symbol::T(t)]);
    }
    let mut starts = [false; 256];
    texts
        .iter()
        .for_each(|t| starts[t.as_bytes()[0] as usize] = true);
    b.set_ring_bonds(RingBonds {
        labels,
        atoms: atom_ids,
        branches,
        breaks: break_ids,
        texts: texts.iter().map(|t| t.as_bytes().to_vec()).collect(),
        starts,
    });
    b.build(g.start())
}

/// Every string `hir` matches, if they are at most `limit`; `None` if more (or infinitely
/// many), or if a class holds more than `limit` characters.
fn finite_language(hir: &Hir, limit: usize) -> Option<Vec<String>> {
    match hir.kind() {
        HirKind::Empty => Some(vec![String::new()]),
        HirKind::Literal(lit) => Some(vec![String::from_utf8(lit.0.to_vec()).ok()?]),
        HirKind::Class(Class::Unicode(c)) => {
            let mut out = Vec::new();
            for r in c.ranges() {
                for ch in r.start()..=r.end() {
                    out.push(ch.to_string());
                    if out.len() > limit {
                        return None;
                    }
                }
            }
            Some(out)
        }
        HirKind::Class(Class::Bytes(c)) => {
            let mut out = Vec::new();
            for r in c.ranges() {
                for b in r.start()..=r.end() {
                    out.push(String::from_utf8(vec![b]).ok()?);
                    if out.len() > limit {
                        return None;
                    }
                }
            }
            Some(out)
        }
        HirKind::Look(_) => None,
        HirKind::Capture(c) => finite_language(&c.sub, limit),
        HirKind::Repetition(rep) => {
            let max = rep.max?;
            let one = finite_language(&rep.sub, limit)?;
            let mut out = Vec::new();
            let mut power = vec![String::new()];
            for k in 0..=max {
                if k >= rep.min {
                    out.extend(power.iter().cloned());
                    if out.len() > limit {
                        return None;
                    }
                }
                if k < max {
                    power = concat(&power, &one, limit)?;
                }
            }
            Some(out)
        }
        HirKind::Concat(parts) => {
            let mut out = vec![String::new()];
            for p in parts {
                out = concat(&out, &finite_language(p, limit)?, limit)?;
            }
            Some(out)
        }
        HirKind::Alternation(alts) => {
            let mut out = Vec::new();
            for a in alts {
                out.extend(finite_language(a, limit)?);
                if out.len() > limit {
                    return None;
                }
            }
            Some(out)
        }
    }
}

fn concat(left: &[String], right: &[String], limit: usize) -> Option<Vec<String>> {
    if left.len().saturating_mul(right.len()) > limit {
        return None;
    }
    Some(
        left.iter()
            .flat_map(|l| right.iter().map(move |r| format!("{l}{r}")))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn language(re: &str) -> Option<Vec<String>> {
        let mut v = finite_language(&super::super::parse_regex(re).unwrap(), 128)?;
        v.sort();
        v.dedup();
        Some(v)
    }

    #[test]
    fn smiles_ring_labels_are_the_hundred_labels() {
        let v = language("[0-9]|%[1-9][0-9]").unwrap();
        assert_eq!(v.len(), 100);
        assert!(v.contains(&"0".to_string()) && v.contains(&"%99".to_string()));
        assert!(!v.contains(&"%05".to_string()));
    }

    #[test]
    fn infinite_or_large_languages_are_refused() {
        assert_eq!(language("[0-9]+"), None);
        assert_eq!(language("[a-z]{2}"), None);
        assert_eq!(language("a{0,3}b?").unwrap().len(), 8);
    }

    #[test]
    fn a_grammar_with_ring_bonds_splits_the_label_terminal() {
        let g = crate::grammar::lark::parse(
            "start: chain\nchain: ATOM | chain ATOM | chain RING\nATOM: \"C\"\nRING: /[1-3]/\n%ring_bonds RING atoms ATOM\n",
            "t.lark",
        )
        .unwrap();
        let rb = g.ring_bonds().expect("the constraint is kept");
        assert_eq!(rb.labels().len(), 3);
        let texts: Vec<String> = rb
            .labels()
            .iter()
            .map(|&t| g.terminal(t).pattern.to_regex())
            .collect();
        assert_eq!(texts, ["1", "2", "3"]);
        assert_eq!(rb.atoms(), [g.terminal_by_name("ATOM").unwrap()]);
    }

    #[test]
    fn a_terminal_has_one_role_in_a_ring_bond_directive() {
        let head = "start: chain\nchain: ATOM | chain ATOM | chain RING | chain OPEN chain CLOSE\n\
                    ATOM: \"C\"\nRING: /[1-3]/\nOPEN: \"(\"\nCLOSE: \")\"\n";
        let ok = format!("{head}%ring_bonds RING atoms ATOM branches OPEN CLOSE\n");
        let g = crate::grammar::lark::parse(&ok, "t.lark").unwrap();
        let rb = g.ring_bonds().unwrap();
        let (open, close) = rb.branches().expect("branches kept");
        assert_eq!(g.terminal(open).name, "OPEN");
        assert_eq!(g.terminal(close).name, "CLOSE");
        let twice = format!("{head}%ring_bonds RING atoms ATOM branches OPEN CLOSE breaks CLOSE\n");
        let e = crate::grammar::lark::parse(&twice, "t.lark")
            .unwrap_err()
            .to_string();
        assert!(e.contains("CLOSE") && e.contains("both"), "{e}");
    }

    #[test]
    fn bad_ring_bond_directives_are_named() {
        let cases = [
            (
                "RING: /[1-3]+/\n%ring_bonds RING atoms ATOM\n",
                "finite set",
            ),
            ("RING: /[1-3]/\n%ring_bonds RING atoms NOPE\n", "NOPE"),
            ("RING: /[1-3]/\n%ring_bonds RING\n", "`atoms`"),
            ("RING: /[1-3]/\n%ring_bonds RING atoms\n", "after `atoms`"),
            ("RING: /[1-3]/\n%ring_bonds RING atoms RING\n", "both"),
            (
                "RING: /[1-3]/\n%ring_bonds RING atoms ATOM breaks X\n",
                "`X`",
            ),
            (
                "RING: /[1-3]/\n%ring_bonds RING atoms ATOM branches ATOM\n",
                "`branches` takes two terminals",
            ),
            (
                "RING: /[1-3]/\n%ring_bonds RING atoms ATOM branches ATOM ATOM\n",
                "two different terminals",
            ),
            (
                "RING: /[1-3]/\n%ring_bonds RING atoms ATOM branches ATOM RING\n",
                "both",
            ),
        ];
        for (tail, want) in cases {
            let text =
                format!("start: chain\nchain: ATOM | chain ATOM | chain RING\nATOM: \"C\"\n{tail}");
            let e = crate::grammar::lark::parse(&text, "t.lark")
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{tail:?}: {e}");
        }
    }
}
