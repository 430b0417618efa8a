//! Normalization of a [`Grammar`] into C2F+ε, kept small.
//!
//! The emptiness search visits items `(p, A, q)` for every nonterminal and pair of DFA states,
//! and extends them through binary productions with a third state, so its cost grows with the
//! number of productions. The pipeline therefore shrinks the grammar before binarizing it
//! (Appendix B.2 of the method's paper):
//!
//! 1. drop useless symbols (non-generating, unreachable) and duplicate rules;
//! 2. substitute aliases (`B → x` as B's only rule) and inline single-use nonterminals where
//!    that cannot grow the binarized grammar;
//! 3. left-factor alternatives that share a prefix;
//! 4. name shared 2-grams once (`N → B C`), most frequent first;
//! 5. binarize long right-hand sides into right-branching chains that share equal suffixes;
//! 6. lift terminals out of two-symbol rules;
//! 7. drop useless symbols again and renumber densely.
//!
//! No pass removes ε-productions or unit productions: C2F+ε keeps both, which is what keeps the
//! normal form linear in the size of the input grammar.
//!
//! Each pass takes time near-linear in the grammar's size, so a chain of 100,000 rules or an
//! alternation of 100,000 words normalizes in a fraction of a second: fixpoints (generating,
//! nullable, the lexical context) are worklists, substitutions and inlining keep indices instead
//! of sweeping all rules per step, and binarization compares suffixes by hash-consed ids. The
//! two passes whose rounds could still multiply on a hostile grammar, inlining and 2-gram
//! sharing, stop after a work budget ([`work::MAX_INLINE_WORK`], [`work::MAX_BIGRAM_WORK`]):
//! both only shrink the grammar, so stopping early keeps its language. The results are exactly
//! those of the sweeping versions (kept in `reference` for the tests).

pub mod context;
mod inline;
mod normal;
#[cfg(test)]
mod reference;
mod work;

pub use normal::NormalGrammar;
pub use work::WorkGrammar;

use serde::Serialize;

use crate::grammar::{Grammar, Symbol};

/// Which size-reducing passes run. All are on by default; turning them off is for tests and
/// for measuring what each pass buys.
#[derive(Debug, Clone)]
pub struct NormalizeOptions {
    /// Substitute aliases and inline single-use nonterminals (pass 2).
    pub inline: bool,
    /// Left-factor alternatives that share a prefix (pass 3).
    pub left_factor: bool,
    /// Name shared 2-grams once, most frequent first (pass 4).
    pub share_bigrams: bool,
}

impl Default for NormalizeOptions {
    fn default() -> Self {
        NormalizeOptions {
            inline: true,
            left_factor: true,
            share_bigrams: true,
        }
    }
}

/// Sizes of a grammar, raw or normalized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GrammarSize {
    /// Nonterminals.
    pub nonterminals: usize,
    /// Productions (alternatives).
    pub productions: usize,
    /// Terminals.
    pub terminals: usize,
    /// Total number of symbols on all right-hand sides.
    pub rhs_symbols: usize,
}

impl GrammarSize {
    /// The size of a grammar as written.
    pub fn of_grammar(g: &Grammar) -> Self {
        GrammarSize {
            nonterminals: g.nonterminals().len(),
            productions: g.rules().len(),
            terminals: g.terminals().len(),
            rhs_symbols: g.rules().iter().map(|r| r.rhs.len()).sum(),
        }
    }

    /// The size of a grammar after normalization.
    pub fn of_normal(n: &NormalGrammar) -> Self {
        let mut used = vec![false; n.num_terminals()];
        for &(_, t) in n.terminal_rules() {
            used[t.index()] = true;
        }
        GrammarSize {
            nonterminals: n.num_nonterminals(),
            productions: n.num_productions(),
            terminals: used.iter().filter(|u| **u).count(),
            rhs_symbols: n.terminal_rules().len()
                + n.unit_rules().len()
                + 2 * n.binary_rules().len(),
        }
    }
}

impl NormalGrammar {
    /// Normalizes `g` with every size-reducing pass on.
    pub fn from_grammar(g: &Grammar) -> NormalGrammar {
        Self::with_options(g, &NormalizeOptions::default())
    }

    /// Normalizes `g` with the chosen passes.
    ///
    /// The rules of the grammar's [normal nonterminals](Grammar::normal_nonterminals) are
    /// set aside once the grammar is clean ([`WorkGrammar::hold`]) and rejoin the others
    /// before the last cleaning: passes 2–6 rewrite only the rest.
    pub fn with_options(g: &Grammar, opts: &NormalizeOptions) -> NormalGrammar {
        Self::normalize(g, opts, || ())
    }

    /// [`NormalGrammar::from_grammar`], calling `productions_final` once the productions are
    /// final, before their indices and lexical context are built (side by side on two
    /// threads for a large grammar): a checker's build stops its lexer's speculative work
    /// there, so that the two threads have the machine's cores.
    pub(crate) fn from_grammar_then(
        g: &Grammar,
        productions_final: impl FnOnce(),
    ) -> NormalGrammar {
        Self::normalize(g, &NormalizeOptions::default(), productions_final)
    }

    fn normalize(
        g: &Grammar,
        opts: &NormalizeOptions,
        productions_final: impl FnOnce(),
    ) -> NormalGrammar {
        let mut w = WorkGrammar::from_grammar(g);
        // Held after the useless symbols are gone (whose rules may be held), before the
        // duplicates (held rules have none: they are sorted and deduplicated with the others
        // once back).
        w.remove_useless();
        w.hold(g.normal_nonterminals());
        w.dedupe();
        rewrite(&mut w, opts);
        to_c2f(&mut w);
        w.compact();
        productions_final();
        from_binary_work(w, g.terminals().len())
    }
}

/// Passes 1–4: language-preserving rewrites that make the grammar smaller.
#[cfg(test)]
pub fn shrink(w: &mut WorkGrammar, opts: &NormalizeOptions) {
    w.remove_useless();
    w.dedupe();
    rewrite(w, opts);
}

/// Passes 2–4: aliases and single uses inlined, left factoring, shared 2-grams named.
fn rewrite(w: &mut WorkGrammar, opts: &NormalizeOptions) {
    if opts.inline {
        w.substitute_aliases();
        w.inline_single_use();
        w.dedupe();
    }
    if opts.left_factor {
        w.left_factor();
    }
    if opts.share_bigrams {
        w.share_bigrams();
    }
}

/// Passes 5–7: bring every rule into one of the four C2F+ε shapes (the held rules, already
/// in one, rejoin the others before the last cleaning).
pub fn to_c2f(w: &mut WorkGrammar) {
    w.binarize();
    w.lift_terminals();
    w.release();
    w.dedupe();
    w.remove_useless();
}

/// Sorts the (already binary) rules of `w` into the four production kinds.
fn from_binary_work(w: WorkGrammar, num_terminals: usize) -> NormalGrammar {
    let (mut terminal, mut epsilon, mut unit, mut binary) = (vec![], vec![], vec![], vec![]);
    for r in &w.rules {
        match r.rhs[..] {
            [] => epsilon.push(r.lhs),
            [Symbol::T(t)] => terminal.push((r.lhs, t)),
            [Symbol::N(b)] => unit.push((r.lhs, b)),
            [Symbol::N(b), Symbol::N(c)] => binary.push((r.lhs, b, c)),
            _ => unreachable!("to_c2f leaves only C2F+ε rules: {:?}", r.rhs),
        }
    }
    NormalGrammar::new(w.names, num_terminals, terminal, epsilon, unit, binary)
}

#[cfg(test)]
mod tests;

/// The time each pass of [`NormalGrammar::from_grammar`] takes on `g`, in order, for
/// profiling (`examples/phase_times.rs`); the passes are those of
/// [`NormalGrammar::with_options`].
#[cfg(feature = "internals")]
pub fn pass_times(g: &Grammar) -> Vec<(&'static str, std::time::Duration)> {
    let mut times = vec![];
    let mut t = std::time::Instant::now();
    let mut lap = |name, times: &mut Vec<_>| {
        times.push((name, t.elapsed()));
        t = std::time::Instant::now();
    };
    let mut w = WorkGrammar::from_grammar(g);
    lap("from_grammar", &mut times);
    w.remove_useless();
    lap("remove_useless", &mut times);
    w.hold(g.normal_nonterminals());
    lap("hold", &mut times);
    w.dedupe();
    lap("dedupe", &mut times);
    w.substitute_aliases();
    lap("aliases", &mut times);
    w.inline_single_use();
    lap("inline", &mut times);
    w.dedupe();
    lap("dedupe", &mut times);
    w.left_factor();
    lap("left_factor", &mut times);
    w.share_bigrams();
    lap("bigrams", &mut times);
    w.binarize();
    lap("binarize", &mut times);
    w.lift_terminals();
    lap("lift", &mut times);
    w.release();
    lap("release", &mut times);
    w.dedupe();
    lap("dedupe", &mut times);
    w.remove_useless();
    lap("remove_useless", &mut times);
    w.compact();
    lap("compact", &mut times);
    let n = from_binary_work(w, g.terminals().len());
    lap("normal", &mut times);
    drop(n);
    times
}
