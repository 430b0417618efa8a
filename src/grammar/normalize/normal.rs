//! The normalized grammar in C2F+ε: every production is `A → B C`, `A → B`, `A → a` or `A → ε`.
//!
//! Besides the productions themselves it keeps the indices the emptiness search needs to extend
//! a derived item in O(1) per candidate: productions by terminal, by unit child, by left child
//! and by right child. All indices are flat (CSR) arrays, built once per grammar.

use super::context::{Context, Productions};
use crate::grammar::{NonterminalId, TerminalId};

/// A C2F+ε grammar with lookup indices. Nonterminal ids here are dense and local to this
/// grammar (the start symbol is id 0); terminal ids are those of the source [`Grammar`].
///
/// [`Grammar`]: crate::grammar::Grammar
#[derive(Clone, Debug)]
pub struct NormalGrammar {
    pub(super) names: Vec<String>,
    pub(super) num_terminals: usize,
    pub(super) terminal_rules: Vec<(NonterminalId, TerminalId)>,
    pub(super) epsilon_rules: Vec<NonterminalId>,
    pub(super) unit_rules: Vec<(NonterminalId, NonterminalId)>,
    pub(super) binary_rules: Vec<(NonterminalId, NonterminalId, NonterminalId)>,
    nullable: Vec<bool>,
    indices: Indices,
    context: Context,
}

/// Normal forms of at least this many unit and binary productions compute their lexical
/// context on a second thread while the indices are built. The context takes ~0.1 ms a
/// thousand productions (~1.2 ms for a Kubernetes schema's normal form), a thread's start
/// some tens of µs.
const PARALLEL_CONTEXT_PRODUCTIONS: usize = 2_000;

/// The lookup indices of [`NormalGrammar`], built together from its productions.
#[derive(Clone, Debug)]
struct Indices {
    by_terminal: Csr<NonterminalId>,
    terminals_of: Csr<TerminalId>,
    by_unit_child: Csr<NonterminalId>,
    by_left: Csr<(NonterminalId, NonterminalId)>,
    by_right: Csr<(NonterminalId, NonterminalId)>,
    by_nullable_sibling: Csr<NonterminalId>,
    /// The same relations from the parent's side, for the search's outside pass.
    by_unit_parent: Csr<NonterminalId>,
    by_parent: Csr<(NonterminalId, NonterminalId)>,
    by_nullable_sibling_parent: Csr<NonterminalId>,
}

impl Indices {
    fn of(p: &Productions<'_>) -> Indices {
        let (n, nullable) = (p.nonterminals, p.nullable);
        let by_terminal = Csr::build(p.terminals, p.terminal.iter().map(|&(a, t)| (t.index(), a)));
        let terminals_of = Csr::build(n, p.terminal.iter().map(|&(a, t)| (a.index(), t)));
        let by_unit_child = Csr::build(n, p.unit.iter().map(|&(a, b)| (b.index(), a)));
        let by_left = Csr::build(n, p.binary.iter().map(|&(a, b, c)| (b.index(), (a, c))));
        let by_right = Csr::build(n, p.binary.iter().map(|&(a, b, c)| (c.index(), (a, b))));
        // `A → X C` or `A → C X` with `C` nullable: `A` derives what `X` derives.
        let mut pairs: Vec<(usize, NonterminalId)> = p
            .binary
            .iter()
            .flat_map(|&(a, b, c)| {
                let left = nullable[c.index()].then_some((b.index(), a));
                let right = nullable[b.index()].then_some((c.index(), a));
                left.into_iter().chain(right)
            })
            .filter(|&(x, a)| x != a.index())
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        let by_nullable_sibling = Csr::build(n, pairs.iter().copied());
        let by_nullable_sibling_parent = Csr::build(
            n,
            pairs
                .iter()
                .map(|&(x, a)| (a.index(), NonterminalId(x as u32))),
        );
        let by_unit_parent = Csr::build(n, p.unit.iter().map(|&(a, b)| (a.index(), b)));
        let by_parent = Csr::build(n, p.binary.iter().map(|&(a, b, c)| (a.index(), (b, c))));
        Indices {
            by_terminal,
            terminals_of,
            by_unit_child,
            by_left,
            by_right,
            by_nullable_sibling,
            by_unit_parent,
            by_parent,
            by_nullable_sibling_parent,
        }
    }
}

impl NormalGrammar {
    pub(super) fn new(
        names: Vec<String>,
        num_terminals: usize,
        terminal_rules: Vec<(NonterminalId, TerminalId)>,
        epsilon_rules: Vec<NonterminalId>,
        unit_rules: Vec<(NonterminalId, NonterminalId)>,
        binary_rules: Vec<(NonterminalId, NonterminalId, NonterminalId)>,
    ) -> Self {
        let n = names.len();
        let nullable = nullable(n, &epsilon_rules, &unit_rules, &binary_rules);
        let productions = Productions {
            nonterminals: n,
            terminals: num_terminals,
            start: NonterminalId(0),
            terminal: &terminal_rules,
            unit: &unit_rules,
            binary: &binary_rules,
            nullable: &nullable,
        };
        // The context and the indices read the same productions and nothing of each other.
        // Together they were a third of a Kubernetes schema's normalization (~1.8 of ~5.4 ms,
        // the context two thirds of that), so a large grammar builds them side by side.
        let (indices, context) =
            if unit_rules.len() + binary_rules.len() >= PARALLEL_CONTEXT_PRODUCTIONS {
                std::thread::scope(|scope| {
                    let context = scope.spawn(|| Context::of(&productions));
                    let indices = Indices::of(&productions);
                    let context = context
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    (indices, context)
                })
            } else {
                (Indices::of(&productions), Context::of(&productions))
            };
        NormalGrammar {
            names,
            num_terminals,
            terminal_rules,
            epsilon_rules,
            unit_rules,
            binary_rules,
            nullable,
            indices,
            context,
        }
    }

    /// Terminals that may precede / follow each nonterminal (see `normalize::context`).
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The start symbol (always id 0).
    pub fn start(&self) -> NonterminalId {
        NonterminalId(0)
    }

    /// Number of nonterminals (ids are `0..n`).
    pub fn num_nonterminals(&self) -> usize {
        self.names.len()
    }

    /// Number of terminal ids of the source grammar (not all need to occur in productions).
    pub fn num_terminals(&self) -> usize {
        self.num_terminals
    }

    /// The nonterminal's name (generated names end in `#k`).
    pub fn name(&self, n: NonterminalId) -> &str {
        &self.names[n.index()]
    }

    /// All productions counted once each.
    pub fn num_productions(&self) -> usize {
        self.terminal_rules.len()
            + self.epsilon_rules.len()
            + self.unit_rules.len()
            + self.binary_rules.len()
    }

    /// Rules `A → a`.
    pub fn terminal_rules(&self) -> &[(NonterminalId, TerminalId)] {
        &self.terminal_rules
    }

    /// Nonterminals with a rule `A → ε`.
    pub fn epsilon_rules(&self) -> &[NonterminalId] {
        &self.epsilon_rules
    }

    /// Rules `A → B`.
    pub fn unit_rules(&self) -> &[(NonterminalId, NonterminalId)] {
        &self.unit_rules
    }

    /// Rules `A → B C`.
    pub fn binary_rules(&self) -> &[(NonterminalId, NonterminalId, NonterminalId)] {
        &self.binary_rules
    }

    /// Nonterminals `A` with a production `A → t`.
    #[inline]
    pub fn lhs_of_terminal(&self, t: TerminalId) -> &[NonterminalId] {
        if t.index() < self.num_terminals {
            self.indices.by_terminal.get(t.index())
        } else {
            &[]
        }
    }

    /// Terminals `t` with a production `a → t`.
    #[inline]
    pub fn terminals_of(&self, a: NonterminalId) -> &[TerminalId] {
        self.indices.terminals_of.get(a.index())
    }

    /// Nonterminals `A` with a production `A → b`.
    #[inline]
    pub fn unit_parents(&self, b: NonterminalId) -> &[NonterminalId] {
        self.indices.by_unit_child.get(b.index())
    }

    /// Whether `a` derives the empty string.
    #[inline]
    pub fn is_nullable(&self, a: NonterminalId) -> bool {
        self.nullable[a.index()]
    }

    /// Nonterminals `A ≠ x` with a production `A → x C` or `A → C x` where `C` is nullable:
    /// `A` derives everything `x` derives. A search that uses these never needs the items of
    /// empty spans, except the start symbol's.
    #[inline]
    pub fn nullable_sibling_parents(&self, x: NonterminalId) -> &[NonterminalId] {
        self.indices.by_nullable_sibling.get(x.index())
    }

    /// Nonterminals `B` with a production `a → B`.
    #[inline]
    pub fn unit_children(&self, a: NonterminalId) -> &[NonterminalId] {
        self.indices.by_unit_parent.get(a.index())
    }

    /// Pairs `(B, C)` with a production `a → B C`.
    #[inline]
    pub fn binary_children(&self, a: NonterminalId) -> &[(NonterminalId, NonterminalId)] {
        self.indices.by_parent.get(a.index())
    }

    /// Nonterminals `x` with `a` among their [`NormalGrammar::nullable_sibling_parents`].
    #[inline]
    pub fn nullable_sibling_children(&self, a: NonterminalId) -> &[NonterminalId] {
        self.indices.by_nullable_sibling_parent.get(a.index())
    }

    /// Pairs `(A, C)` with a production `A → b C`.
    #[inline]
    pub fn as_left_child(&self, b: NonterminalId) -> &[(NonterminalId, NonterminalId)] {
        self.indices.by_left.get(b.index())
    }

    /// Pairs `(A, B)` with a production `A → B c`.
    #[inline]
    pub fn as_right_child(&self, c: NonterminalId) -> &[(NonterminalId, NonterminalId)] {
        self.indices.by_right.get(c.index())
    }
}

/// Which nonterminals derive the empty string: a worklist over the productions (each binary
/// production waits for its two children), linear in the grammar's size.
fn nullable(
    n: usize,
    epsilon_rules: &[NonterminalId],
    unit_rules: &[(NonterminalId, NonterminalId)],
    binary_rules: &[(NonterminalId, NonterminalId, NonterminalId)],
) -> Vec<bool> {
    // Productions by child (a binary one once per occurrence).
    let by_unit = Csr::build(n, unit_rules.iter().map(|&(a, b)| (b.index(), a)));
    let by_binary = Csr::build(
        n,
        binary_rules
            .iter()
            .enumerate()
            .flat_map(|(i, &(_, b, c))| [(b.index(), i as u32), (c.index(), i as u32)]),
    );
    let mut waiting: Vec<u8> = vec![2; binary_rules.len()];
    let mut null = vec![false; n];
    let mut stack = Vec::new();
    for &a in epsilon_rules {
        if !null[a.index()] {
            null[a.index()] = true;
            stack.push(a);
        }
    }
    while let Some(x) = stack.pop() {
        for &a in by_unit.get(x.index()) {
            if !null[a.index()] {
                null[a.index()] = true;
                stack.push(a);
            }
        }
        for &i in by_binary.get(x.index()) {
            let i = i as usize;
            waiting[i] -= 1;
            let a = binary_rules[i].0;
            if waiting[i] == 0 && !null[a.index()] {
                null[a.index()] = true;
                stack.push(a);
            }
        }
    }
    null
}

/// A compressed sparse row table: for each key in `0..n`, a slice of values.
#[derive(Clone, Debug)]
pub(super) struct Csr<V> {
    offsets: Vec<u32>,
    values: Vec<V>,
}

impl<V: Copy> Csr<V> {
    pub(super) fn build(n: usize, pairs: impl Iterator<Item = (usize, V)> + Clone) -> Self {
        let mut offsets = vec![0u32; n + 1];
        for (k, _) in pairs.clone() {
            offsets[k + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        // Every slot is written below; the first pair's value only gives them a start.
        let mut values = match pairs.clone().next() {
            Some((_, v)) => vec![v; offsets[n] as usize],
            None => Vec::new(),
        };
        for (k, v) in pairs {
            values[fill[k] as usize] = v;
            fill[k] += 1;
        }
        Csr { offsets, values }
    }

    #[inline]
    pub(super) fn get(&self, k: usize) -> &[V] {
        &self.values[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }
}
