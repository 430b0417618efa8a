//! The public face for one grammar: can this canvas still be completed, and how?
//!
//! A [`Checker`] is built once per grammar (lexicon, normalized grammar, caches) and then
//! answers [`Checker::check`] for every proposed canvas, and [`Checker::complete`] when a
//! sampler gives up on the model's proposals. All caches belong to the checker, so checkers of
//! different grammars never share state.

mod build;
mod chain;
mod mask_memo;
mod tokens;

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use thiserror::Error;

use crate::canvas::{Canvas, HoleyText};
use crate::complete::realize;
use crate::deadline::Deadline;
use crate::grammar::schema::SchemaOptions;
use crate::grammar::{spec, Grammar, GrammarError, NormalGrammar};
use crate::holey::HoleyLexer;
use crate::intersect::{
    LexemeDfa, ProductMode, ProductTooLarge, RingProduct, Searcher, Verdict, DEFAULT_BUDGET,
    MAX_HOLEY_DEPTH,
};
use crate::lexicon::LexiconError;
use crate::vocab::Vocabulary;
use chain::chain_dfa;

pub use crate::holey::LexLimits;
pub use build::PARALLEL_BUILD_RULES;
pub use tokens::Allowed;

/// The answer for one canvas.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckVerdict {
    /// Some filling of the holes is a word of the grammar.
    Completable,
    /// No filling of the holes is a word of the grammar.
    NotCompletable,
    /// A work budget ran out: neither answer could be shown.
    Unknown,
}

/// A verdict with what it cost.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// The answer.
    pub verdict: CheckVerdict,
    /// States of the minimized lexeme DFA (0 when lexing ran out of budget).
    pub dfa_states: usize,
    /// Items the emptiness search settled (0 when lexing ran out of budget).
    pub items: u64,
    /// Wall-clock time of the check, in microseconds.
    pub micros: u64,
}

/// Why a checker could not be built.
#[derive(Debug, Error)]
pub enum CheckerError {
    #[error(transparent)]
    /// The grammar is not valid (see [`GrammarError`]).
    Grammar(#[from] GrammarError),
    #[error(transparent)]
    /// The grammar's terminals do not make a lexer within its limits.
    Lexicon(#[from] LexiconError),
}

/// Budgets of one check.
#[derive(Clone, Copy, Debug)]
pub struct Budgets {
    /// Limits of the lexer: configurations kept, states of one canvas's automaton.
    pub lexing: LexLimits,
    /// Work units of the emptiness search.
    pub search: u64,
    /// Nodes the completion search may visit.
    pub completion_nodes: usize,
    /// Checks one position's mask may make when it decides its tokens by one check per
    /// effect (see [`Checker::allowed`]), the search work they may spend together (in
    /// multiples of `search`), and the wall-clock time the mask may take (`None`: no
    /// deadline). The tokens of effects past any of these are `unknown`: never a guess, but
    /// past the deadline which ones depends on the machine's speed.
    pub mask_checks: usize,
    /// The search work one mask's checks may spend together, in multiples of `search`.
    pub mask_work_factor: u64,
    /// The wall-clock time one mask may take (`None`: no deadline of its own).
    pub mask_deadline: Option<std::time::Duration>,
    /// The work of a mask's one search over every path of the position (in multiples of
    /// `search`); past it the mask is decided by one check per effect. That search is
    /// exhaustive, so it needs more than a check: in the middle of a long run of masks in JSON
    /// it finishes within 4 × the default where the checks leave tokens unknown, and in C++
    /// within 8 × (some 30 million units, 0.8–1.2 s) where 4 × left a third of the ids
    /// unknown after the checks had spent the rest of the mask's 2 s (`cargo run --release
    /// --example mask_block -- cpp`). The mask's deadline bounds it either way.
    pub mask_search_factor: u64,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            lexing: LexLimits::default(),
            search: DEFAULT_BUDGET,
            completion_nodes: 2_000_000,
            mask_checks: 512,
            mask_work_factor: 16,
            mask_deadline: Some(std::time::Duration::from_secs(2)),
            mask_search_factor: 8,
        }
    }
}

/// What a [`Checker`] keeps between calls ([`Checker::cache_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lexer configurations interned; the tables are emptied before a canvas once this or
    /// `hole_sets` passes half of [`LexLimits::max_configs`].
    pub configs: usize,
    /// Sets of configurations a hole may be entered from, interned.
    pub hole_sets: usize,
    /// Results kept by chunk text (at most 24,576 entries).
    pub chunk_entries: usize,
    /// Bytes of chunk text their keys hold (at most 64 MiB).
    pub chunk_bytes: usize,
    /// Times the tables were emptied because they were crowded.
    pub evictions: u64,
    /// Exact mask answers kept by the canvas reading they answer (at most 64;
    /// [`Checker::forget_masks`]).
    pub mask_answers: usize,
}

/// Checks canvases against one grammar. See the [module docs](self).
pub struct Checker {
    grammar: Grammar,
    normal: NormalGrammar,
    lexer: HoleyLexer,
    searcher: Searcher,
    budgets: Budgets,
    deadline: Deadline,
    evictions: u64,
    /// Exact mask answers by the reading they were computed from.
    memo: mask_memo::MaskMemo,
}

impl std::fmt::Debug for Checker {
    /// The grammar's size and the caches' (the tables themselves are large and opaque).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checker")
            .field("terminals", &self.grammar.terminals().len())
            .field("nonterminals", &self.grammar.nonterminals().len())
            .field("budgets", &self.budgets)
            .field("deadline", &self.deadline)
            .field("caches", &self.cache_stats())
            .finish_non_exhaustive()
    }
}

impl Checker {
    /// A checker with the default [`Budgets`].
    pub fn new(grammar: Grammar) -> Result<Checker, CheckerError> {
        Self::with_budgets(grammar, Budgets::default())
    }

    /// A checker with the given budgets: the normalized grammar and the lexer's DFA, built
    /// side by side for larger grammars ([`PARALLEL_BUILD_RULES`]). What the lexer learns of
    /// canvases (configurations, hole sets) is left to the checks that need it; a text without
    /// holes needs none of it.
    pub fn with_budgets(grammar: Grammar, budgets: Budgets) -> Result<Checker, CheckerError> {
        let (normal, lexer) = build::normal_and_lexer(&grammar, budgets.lexing)?;
        Ok(Checker::from_parts(grammar, normal, lexer, budgets))
    }

    fn from_parts(
        grammar: Grammar,
        normal: NormalGrammar,
        lexer: HoleyLexer,
        budgets: Budgets,
    ) -> Checker {
        Checker {
            grammar,
            normal,
            lexer,
            searcher: Searcher::new(),
            budgets,
            deadline: Deadline::never(),
            evictions: 0,
            memo: Default::default(),
        }
    }

    /// A checker that also reads token canvases of `vocab`'s ids.
    pub fn with_vocabulary(
        grammar: Grammar,
        vocab: Arc<Vocabulary>,
    ) -> Result<Checker, CheckerError> {
        let mut checker = Self::new(grammar)?;
        checker.set_vocabulary(vocab);
        Ok(checker)
    }

    /// A checker for a grammar spec (`json`, `cpp+fence`, `x.lark`, ...).
    pub fn from_spec(spec_text: &str) -> Result<Checker, CheckerError> {
        Self::new(spec::load(spec_text)?)
    }

    /// A checker for a grammar spec whose JSON Schema is compiled with `options` (e.g.
    /// [`SchemaOptions::for_generation`]); lenient mode's warnings are not kept
    /// ([`spec::load_with`] returns them).
    pub fn from_spec_with(
        spec_text: &str,
        options: &SchemaOptions,
    ) -> Result<Checker, CheckerError> {
        Self::new(spec::load_with(spec_text, options)?.0)
    }

    /// The grammar the checker was built for.
    pub fn grammar(&self) -> &Grammar {
        &self.grammar
    }

    /// Whether some filling of the canvas's holes is a word of the grammar.
    pub fn check(&mut self, canvas: &Canvas) -> Check {
        self.check_text(&canvas.holey_text())
    }

    /// [`Checker::check`] on text with holes.
    pub fn check_text(&mut self, text: &HoleyText) -> Check {
        let t0 = Instant::now();
        let text = &*text.with_holes_merged();
        self.evict_if_crowded();
        let (verdict, dfa_states) = match self.lexer.automaton(text) {
            Ok(dfa) => (self.search(&dfa, text, false), dfa.num_states()),
            // A text without holes that fills the lexer's tables (a counted string of 10⁵
            // characters is a configuration per count) is lexed left to right instead.
            Err(_) if text.chunks.len() == 1 => match self.lexer.lexicon().lex(&text.chunks[0]) {
                Err(_) => (CheckVerdict::NotCompletable, 0),
                Ok(tokens) => {
                    let dfa = chain_dfa(&tokens);
                    (self.search(&dfa, text, false), dfa.num_states())
                }
            },
            Err(_) => (CheckVerdict::Unknown, 0),
        };
        Check {
            verdict,
            dfa_states,
            items: self.searcher.stats().settled,
            micros: t0.elapsed().as_micros() as u64,
        }
    }

    /// Empties what the checker keeps by chunk text between checks (to bound memory, or to
    /// measure checks of unseen canvases); what it knows of its grammar stays.
    pub fn forget_chunks(&mut self) {
        self.lexer.forget_chunks();
    }

    /// Every later call answers `unknown` (a completion: [`CompletionError::Budget`]; a mask:
    /// the undecided ids as unknown) once `deadline` expires, until another is set. A caller
    /// that serves requests sets one per request; another thread may cancel it through the
    /// deadline's flag.
    pub fn set_deadline(&mut self, deadline: Deadline) {
        self.lexer.set_deadline(deadline.clone());
        self.searcher.set_deadline(deadline.clone());
        self.deadline = deadline;
    }

    /// Empties the lexer's tables when they are crowded (see [`CacheStats`]), so that a
    /// long-lived checker fed an endless stream of distinct canvases keeps answering instead of
    /// filling its tables and turning `unknown`. Called at the start of each public check.
    fn evict_if_crowded(&mut self) {
        if self.lexer.evict_if_crowded() {
            self.evictions += 1;
        }
    }

    /// What the checker keeps between calls: it is bounded (the lexer's tables by
    /// [`LexLimits::max_configs`], its caches by chunk text by entries and bytes) and emptied
    /// when full, never latched.
    pub fn cache_stats(&self) -> CacheStats {
        let sizes = self.lexer.cache_sizes();
        CacheStats {
            configs: sizes.configs,
            hole_sets: sizes.hole_sets,
            chunk_entries: sizes.chunk_entries,
            chunk_bytes: sizes.chunk_bytes,
            evictions: self.evictions,
            mask_answers: self.memo.len(),
        }
    }

    /// Forgets the mask answers kept by canvas reading, so that the next mask of every
    /// position is computed (the lexer's caches stay). Masks are exact either way; this is for
    /// measuring what a mask costs when its reading is new, and for callers that watch memory.
    pub fn forget_masks(&mut self) {
        self.memo.clear();
    }

    /// Whether a complete text is a word of the grammar.
    pub fn accepts(&mut self, text: &[u8]) -> bool {
        self.check_text(&HoleyText::solid(text)).verdict == CheckVerdict::Completable
    }

    /// `dfa` intersected with the grammar's ring-bond constraint, if it has one (`None`: the
    /// automaton is searched as it is).
    pub(crate) fn constrained(
        &self,
        dfa: &LexemeDfa,
        text: &HoleyText,
    ) -> Result<Option<RingProduct>, ProductTooLarge> {
        self.constrained_as(dfa, text, ProductMode::Loose)
    }

    /// [`Checker::constrained`] in `mode`; `text` is the canvas `dfa` reads, whose chunks say
    /// which labels are tracked one by one.
    fn constrained_as(
        &self,
        dfa: &LexemeDfa,
        text: &HoleyText,
        mode: ProductMode,
    ) -> Result<Option<RingProduct>, ProductTooLarge> {
        let Some(rb) = self.grammar.ring_bonds() else {
            return Ok(None);
        };
        let mentioned = rb.mentioned(text.chunks.iter().map(Vec::as_slice));
        // Text without holes has an automaton without cycles: every branch can be followed.
        let max_depth = if text.chunks.len() > 1 {
            MAX_HOLEY_DEPTH
        } else {
            usize::MAX
        };
        let max_states = self.budgets.lexing.max_dfa_states;
        RingProduct::new(dfa, rb, mentioned, max_states, max_depth, mode)
    }

    /// The verdict on `dfa` under the grammar's side constraints; with `witness`, the searcher
    /// keeps a cheapest one.
    ///
    /// Where the ring-bond product passes its state limit or its search the budget, the
    /// grammar alone answers: its refusals stand, and its yes is taken with the rings
    /// unchecked, as the product's loose group already does for labels no chunk mentions
    /// (text without holes never gets there: its product has a state per automaton state).
    fn search(&mut self, dfa: &LexemeDfa, text: &HoleyText, witness: bool) -> CheckVerdict {
        match self.constrained(dfa, text) {
            Ok(None) => self.search_as_is(dfa, witness),
            Ok(Some(product)) if text.chunks.len() == 1 => self.search_solid(&product),
            Ok(Some(product)) => match self.search_as_is(&product.dfa, witness) {
                CheckVerdict::Unknown => self.search_as_is(dfa, witness),
                verdict => verdict,
            },
            Err(ProductTooLarge) => self.search_as_is(dfa, witness),
        }
    }

    /// The verdict on the ring-bond product of a text without holes, made exact: the product
    /// keeps where each label's opener stands to the current atom, which misses a ring bond
    /// doubling one whose labels opened on different atoms (`C2(CC21)1`), so the word it finds
    /// is read bond by bond ([`RingProduct::pairs_up`]). A text's automaton has one word
    /// unless a lexeme is ambiguous; where it has several and the one found fails, the
    /// verdict is unknown rather than a guess.
    fn search_solid(&mut self, product: &RingProduct) -> CheckVerdict {
        let verdict = self.search_as_is(&product.dfa, true);
        if verdict != CheckVerdict::Completable {
            return verdict;
        }
        let witness = self
            .searcher
            .witness()
            .expect("a completable search leaves a witness");
        if product.pairs_up(&witness.lexemes(&product.dfa)) {
            CheckVerdict::Completable
        } else if product.dfa.is_one_path() {
            CheckVerdict::NotCompletable
        } else {
            CheckVerdict::Unknown
        }
    }

    /// The verdict on `dfa` by the grammar alone.
    fn search_as_is(&mut self, dfa: &LexemeDfa, witness: bool) -> CheckVerdict {
        let budget = self.budgets.search;
        let verdict = if witness {
            self.searcher.search(&self.normal, dfa, budget)
        } else {
            self.searcher.decide(&self.normal, dfa, budget)
        };
        match verdict {
            Verdict::NonEmpty => CheckVerdict::Completable,
            Verdict::Empty => CheckVerdict::NotCompletable,
            Verdict::Unknown => CheckVerdict::Unknown,
        }
    }

    /// A full output that contains every chunk of the canvas in order and is a word of the
    /// grammar, with short, readable fillers; `Ok(None)` if the canvas is not completable.
    /// The result is re-lexed and re-checked before it is returned.
    pub fn complete(&mut self, canvas: &Canvas) -> Result<Option<Vec<u8>>, CompletionError> {
        self.complete_text(&canvas.holey_text())
    }

    /// [`Checker::complete`] on text with holes.
    pub fn complete_text(&mut self, text: &HoleyText) -> Result<Option<Vec<u8>>, CompletionError> {
        let text = &*text.with_holes_merged();
        let Some(fillers) = self.fillers(text)? else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for (i, chunk) in text.chunks.iter().enumerate() {
            out.extend_from_slice(chunk);
            if let Some(f) = fillers.get(i) {
                out.extend_from_slice(f);
            }
        }
        if !self.parses(&out) {
            return Err(CompletionError::Recheck(
                String::from_utf8_lossy(&out).into_owned(),
            ));
        }
        Ok(Some(out))
    }

    /// What [`Checker::complete_text`] writes into each hole of `text` (one filler per hole,
    /// in order; holes with nothing between them are one hole here, so give text whose
    /// interior chunks are not empty), not re-checked; `Ok(None)` if the text is not
    /// completable.
    pub fn fillers(&mut self, text: &HoleyText) -> Result<Option<Vec<Vec<u8>>>, CompletionError> {
        self.evict_if_crowded();
        let dfa = self
            .lexer
            .automaton(text)
            .map_err(|_| CompletionError::Budget)?;
        // Under ring bonds: a witness that only closes rings in the holes is sought first
        // (a small product), then one with at most one unmentioned label open at a time (both
        // can always be labelled), and only if neither exists does the loose product decide.
        // A witness that cannot be labelled, or fails the exact read, sends the search on to
        // the next product.
        let mut lexemes = None;
        let mut unknown = false;
        let mut refused = None;
        for mode in [
            ProductMode::Closing,
            ProductMode::Strict,
            ProductMode::LooseUntwinned,
        ] {
            let product = match self.constrained_as(&dfa, text, mode) {
                Ok(p) => p,
                Err(ProductTooLarge) => {
                    unknown = true;
                    continue;
                }
            };
            let searched = product.as_ref().map_or(&dfa, |p| &p.dfa);
            match self.search_as_is(searched, true) {
                CheckVerdict::NotCompletable
                    if product.is_none() || mode == ProductMode::LooseUntwinned =>
                {
                    return match refused {
                        Some(e) => Err(e),
                        None if unknown => Err(CompletionError::Budget),
                        None => Ok(None),
                    };
                }
                CheckVerdict::NotCompletable => continue,
                CheckVerdict::Unknown => {
                    unknown = true;
                    continue;
                }
                CheckVerdict::Completable => {}
            }
            let witness = self
                .searcher
                .witness()
                .expect("a completable search leaves a witness");
            let mut found = witness.lexemes(searched);
            if let Some(p) = &product {
                if !p.relabel(&witness.edges, &mut found) {
                    refused = Some(CompletionError::Unlabelled);
                    continue;
                }
                // The loose product may close a ring across branches a hole nests past
                // what it follows (a completion's products do not take such words).
                if !p.pairs_up(&found) {
                    refused = Some(CompletionError::RingAcrossBranches);
                    continue;
                }
            }
            lexemes = Some(found);
            break;
        }
        let Some(lexemes) = lexemes else {
            return Err(refused.unwrap_or(CompletionError::Budget));
        };
        let (lx, table) = self.lexer.parts();
        let fillers = realize(
            lx,
            table,
            text,
            &lexemes,
            self.budgets.completion_nodes,
            &self.deadline,
        )
        .map_err(|_| CompletionError::Budget)?
        .ok_or(CompletionError::Budget)?;
        Ok(Some(fillers))
    }

    /// Re-check of a complete text by a second route: lex it left to right, then search the
    /// chain of its lexemes (several edges where a token's lexeme is ambiguous).
    pub fn parses(&mut self, text: &[u8]) -> bool {
        let Ok(tokens) = self.lexer.lexicon().lex(text) else {
            return false;
        };
        let dfa = chain_dfa(&tokens);
        let product = match self.constrained(&dfa, &HoleyText::solid(text)) {
            Ok(p) => p,
            Err(ProductTooLarge) => return false,
        };
        match product {
            Some(product) => self.search_solid(&product) == CheckVerdict::Completable,
            None => {
                self.searcher
                    .decide(&self.normal, &dfa, self.budgets.search)
                    == Verdict::NonEmpty
            }
        }
    }
}

/// Why no completion could be returned for a canvas that may be completable.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CompletionError {
    #[error("a work budget ran out before a completion was found")]
    /// A work budget, or the caller's deadline, ran out before a completion was found.
    Budget,
    #[error(
        "the completion found needs ring bonds whose labels no chunk mentions, and none of \
         their labellings pairs them up (the check keeps only the parity of such labels)"
    )]
    /// The grammar has ring bonds and the witness found cannot be labelled so that they pair
    /// up (see [`crate::intersect::RingProduct`]): the canvas may still be completable.
    Unlabelled,
    #[error(
        "the completion found closes a ring onto an atom already bonded to its opener, across \
         branches its holes nest deeper than the check follows or by a second ring; the canvas \
         may still be completable"
    )]
    /// The grammar has ring bonds and the witness found closes a ring onto an atom already
    /// bonded to its opener, across branches the product did not follow or by a second ring
    /// bond (see DESIGN.md, *Ring bonds*): the canvas may still be completable.
    RingAcrossBranches,
    #[error("internal error: the completion {0:?} failed its re-check")]
    /// A bug: the completion found does not pass the independent re-check (the text is given).
    Recheck(String),
}
