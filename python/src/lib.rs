//! `lacuna._lacuna`: the Python face of lacuna's checker, for PyTorch (or NumPy) samplers.
//!
//! The shape follows what samplers already call (llguidance's `LLMatcher`, XGrammar's
//! `GrammarMatcher`: a matcher per sequence that fills a row of an int32 bitmask, id `i` being
//! bit `i % 32` of word `i / 32`), with the canvas as the new axis: a [`CanvasMatcher`] holds
//! one canvas of a fixed number of positions, any of them masked, and fills the exact
//! valid-token mask of any masked position.
//!
//! Everything heavy (building a checker, checks, masks) runs with the interpreter released
//! ([`Python::detach`]), so other Python threads go on and [`fill_bitmasks`] spreads many
//! canvases over threads. Bad input raises a Python exception with lacuna's message; nothing
//! here panics on input.
//!
//! `unsafe` appears once: writing mask rows straight into the caller's array at the address
//! NumPy's `__array_interface__` gives (see [`write_rows`]), after its shape, item type,
//! contiguity and writability are checked; copying the whole array in and out instead would
//! cost a full copy of a `[rows, V/32]` array per call.

mod infill;

use std::sync::Arc;
use std::time::Duration;

use lacuna::canvas::tokens::{TokenCanvas, TokenCanvasError};
use lacuna::canvas::{Canvas, Cell};
use lacuna::checker::{CheckVerdict, Checker};
use lacuna::deadline::Deadline;
use lacuna::grammar::schema::{compile_str, SchemaOptions};
use lacuna::vocab::{TokenId, TokenKind, TokenMask, Vocabulary, MAX_VOCAB};
use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

create_exception!(
    _lacuna,
    LacunaError,
    PyValueError,
    "An input lacuna cannot use (a grammar, a schema, a tokenizer, a canvas): the message says what and where."
);

pub(crate) fn lacuna_error(e: impl std::fmt::Display) -> PyErr {
    LacunaError::new_err(e.to_string())
}

fn canvas_error(e: TokenCanvasError) -> PyErr {
    match e {
        TokenCanvasError::PositionOutOfRange { .. } => PyIndexError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// A context-free grammar: a shipped one (`json`, `smiles`, `cpp`), a Lark text, or a JSON
/// Schema. Immutable; share one among many matchers.
#[pyclass(frozen, module = "lacuna")]
pub(crate) struct Grammar {
    inner: lacuna::grammar::Grammar,
    warnings: Vec<String>,
    origin: String,
}

#[pymethods]
impl Grammar {
    /// A grammar from a spec, as `lacuna check --grammar` reads it: `json`, `smiles`, `cpp`,
    /// a `.lark` path, `schema:PATH`, each optionally followed by `+fence`.
    #[staticmethod]
    fn from_spec(py: Python<'_>, spec: &str) -> PyResult<Grammar> {
        let inner = py
            .detach(|| lacuna::grammar::spec::load(spec))
            .map_err(lacuna_error)?;
        Ok(Grammar {
            inner,
            warnings: Vec::new(),
            origin: format!("spec {spec:?}"),
        })
    }

    /// A grammar from Lark text; `name` names it in errors.
    #[staticmethod]
    #[pyo3(signature = (text, name = "<lark>"))]
    fn from_lark(py: Python<'_>, text: &str, name: &str) -> PyResult<Grammar> {
        let inner = py
            .detach(|| lacuna::grammar::lark::parse(text, name))
            .map_err(lacuna_error)?;
        Ok(Grammar {
            inner,
            warnings: Vec::new(),
            origin: format!("Lark grammar {name}"),
        })
    }

    /// A grammar from a JSON Schema: its JSON text, or the schema as Python objects (a dict,
    /// or a bool), serialized by `json.dumps`. Strict by default: a keyword lacuna cannot
    /// enforce exactly is an error naming its JSON pointer; `lenient=True` ignores it and
    /// records a warning (`Grammar.warnings`). `for_generation=True` accepts a subset of the
    /// valid instances, for a model to write: an object that names its members and leaves
    /// `additionalProperties` unspecified takes no others, objects of more than 8 declared
    /// properties follow schema order and name each member once, and number exponents have
    /// at most two digits (`1e400` is JSON, but parsers read it as infinity or refuse it);
    /// leave it off to check instances.
    #[staticmethod]
    #[pyo3(signature = (schema, lenient = false, for_generation = false))]
    fn from_json_schema(
        py: Python<'_>,
        schema: &Bound<'_, PyAny>,
        lenient: bool,
        for_generation: bool,
    ) -> PyResult<Grammar> {
        let text: String = match schema.extract::<String>() {
            Ok(text) => text,
            Err(_) => py
                .import("json")?
                .call_method1("dumps", (schema,))
                .map_err(|e| {
                    PyTypeError::new_err(format!(
                        "schema: expected JSON text or JSON-serializable objects ({})",
                        e.value(py)
                    ))
                })?
                .extract()?,
        };
        let compiled = py
            .detach(|| {
                let options = SchemaOptions {
                    lenient,
                    ..if for_generation {
                        SchemaOptions::for_generation()
                    } else {
                        SchemaOptions::default()
                    }
                };
                compile_str(&text, &options)
            })
            .map_err(lacuna_error)?;
        Ok(Grammar {
            inner: compiled.grammar,
            warnings: compiled.warnings.iter().map(ToString::to_string).collect(),
            origin: "JSON Schema".into(),
        })
    }

    /// What lenient schema compilation left unenforced (empty otherwise).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "<lacuna.Grammar from {}: {} terminals>",
            self.origin,
            self.inner.terminals().len()
        )
    }
}

/// A model's vocabulary as lacuna reads it: every id's exact bytes, its end-of-output ids,
/// and the ids that may never appear in an output (other special tokens).
#[pyclass(frozen, module = "lacuna")]
pub(crate) struct Tokenizer {
    vocab: Arc<Vocabulary>,
}

fn eos_names(eos: &Option<Vec<String>>) -> Vec<&str> {
    eos.iter().flatten().map(String::as_str).collect()
}

#[pymethods]
impl Tokenizer {
    /// Reads a Hugging Face `tokenizer.json`. `eos` names the end-of-output tokens (default:
    /// the usual names, `<|endoftext|>`, `</s>`, `<|im_end|>`, ...).
    #[staticmethod]
    #[pyo3(signature = (path, eos = None))]
    fn from_file(
        py: Python<'_>,
        path: std::path::PathBuf,
        eos: Option<Vec<String>>,
    ) -> PyResult<Tokenizer> {
        let vocab = py
            .detach(|| Vocabulary::from_tokenizer_file(&path, &eos_names(&eos)))
            .map_err(lacuna_error)?;
        Ok(Tokenizer {
            vocab: Arc::new(vocab),
        })
    }

    /// Reads the text of a `tokenizer.json` (e.g. `tokenizers.Tokenizer.to_str()`).
    #[staticmethod]
    #[pyo3(signature = (text, eos = None))]
    fn from_json(py: Python<'_>, text: &str, eos: Option<Vec<String>>) -> PyResult<Tokenizer> {
        let vocab = py
            .detach(|| {
                Vocabulary::from_tokenizer_json(text.as_bytes(), &eos_names(&eos), "tokenizer")
            })
            .map_err(lacuna_error)?;
        Ok(Tokenizer {
            vocab: Arc::new(vocab),
        })
    }

    /// A vocabulary given id by id: `tokens[i]` is id `i`'s bytes; `eos_ids` end the output;
    /// `forbidden_ids` may never appear in one.
    #[staticmethod]
    #[pyo3(signature = (tokens, eos_ids, forbidden_ids = Vec::new()))]
    fn from_tokens(
        tokens: Vec<Vec<u8>>,
        eos_ids: Vec<i64>,
        forbidden_ids: Vec<i64>,
    ) -> PyResult<Tokenizer> {
        if tokens.len() >= MAX_VOCAB {
            return Err(lacuna_error(format!(
                "the vocabulary has {} ids; at most {MAX_VOCAB} are supported",
                tokens.len()
            )));
        }
        let ids = |what: &str, v: &[i64]| -> PyResult<Vec<TokenId>> {
            v.iter()
                .map(|&id| {
                    if id < 0 || id as usize >= tokens.len() {
                        Err(PyValueError::new_err(format!(
                            "{what}: id {id} is outside the vocabulary ({} ids)",
                            tokens.len()
                        )))
                    } else {
                        Ok(id as TokenId)
                    }
                })
                .collect()
        };
        let eos = ids("eos_ids", &eos_ids)?;
        if eos.is_empty() {
            return Err(PyValueError::new_err(
                "eos_ids: name at least one end-of-output id",
            ));
        }
        let forbidden = ids("forbidden_ids", &forbidden_ids)?;
        Ok(Tokenizer {
            vocab: Arc::new(Vocabulary::new(tokens, &eos, &forbidden)),
        })
    }

    /// Number of ids.
    #[getter]
    fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    /// The end-of-output ids.
    #[getter]
    fn eos_ids(&self) -> Vec<TokenId> {
        self.vocab.eos_ids().collect()
    }

    /// The exact bytes of `id` (empty for special tokens other than text).
    fn token_bytes<'py>(&self, py: Python<'py>, id: i64) -> PyResult<Bound<'py, PyBytes>> {
        let id = self.id(id)?;
        Ok(PyBytes::new(py, self.vocab.bytes(id)))
    }

    /// `"text"`, `"eos"` or `"forbidden"`.
    fn token_kind(&self, id: i64) -> PyResult<&'static str> {
        let id = self.id(id)?;
        Ok(match self.vocab.kind(id) {
            Some(TokenKind::Text) => "text",
            Some(TokenKind::Eos) => "eos",
            _ => "forbidden",
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<lacuna.Tokenizer: {} ids, eos {:?}>",
            self.vocab.len(),
            self.vocab.eos_ids().collect::<Vec<_>>()
        )
    }
}

impl Tokenizer {
    fn id(&self, id: i64) -> PyResult<TokenId> {
        if id < 0 || id as usize >= self.vocab.len() {
            return Err(PyIndexError::new_err(format!(
                "token id {id} is outside the vocabulary ({} ids)",
                self.vocab.len()
            )));
        }
        Ok(id as TokenId)
    }
}

/// What a matcher has done, for a sampler's logs.
#[derive(Clone, Copy, Default)]
pub(crate) struct Stats {
    masks: u64,
    mask_micros: u64,
    unknown_ids: u64,
    checks: u64,
}

impl Stats {
    /// The counters as the `stats` dictionaries show them.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("masks", self.masks)?;
        d.set_item("mask_micros", self.mask_micros)?;
        d.set_item("unknown_ids", self.unknown_ids)?;
        d.set_item("checks", self.checks)?;
        Ok(d)
    }
}

/// A matcher's error state as a Python exception: `state` and its reason, and the way out.
fn usable(error: &Option<String>, state: &str, remedy: &str) -> PyResult<()> {
    match error {
        None => Ok(()),
        Some(why) => Err(LacunaError::new_err(format!("{state} ({why}); {remedy}"))),
    }
}

/// `id` if `vocab` has it; else what is wrong, for the caller to say where.
fn vocab_id(vocab: &Vocabulary, id: i64) -> Result<TokenId, String> {
    if id < 0 || id as usize >= vocab.len() {
        return Err(format!(
            "token id {id} is outside the vocabulary ({} ids)",
            vocab.len()
        ));
    }
    Ok(id as TokenId)
}

/// The deadline of a call under a matcher's `set_timeout_ms`.
fn deadline_for(timeout: Option<Duration>) -> Deadline {
    timeout.map_or_else(Deadline::never, Deadline::after)
}

/// `vocab` as wide as the logits (`vocab_size`, if given): ids past the tokenizer are never
/// allowed; narrower than the tokenizer is an error.
pub(crate) fn widened(
    vocab: &Arc<Vocabulary>,
    vocab_size: Option<usize>,
) -> PyResult<Arc<Vocabulary>> {
    let Some(size) = vocab_size else {
        return Ok(vocab.clone());
    };
    if size < vocab.len() {
        return Err(PyValueError::new_err(format!(
            "vocab_size {size} is smaller than the tokenizer's {} ids: the logits would not \
             cover every token",
            vocab.len()
        )));
    }
    if size > MAX_VOCAB {
        return Err(PyValueError::new_err(format!(
            "vocab_size {size}: at most {MAX_VOCAB} ids are supported"
        )));
    }
    if size == vocab.len() {
        return Ok(vocab.clone());
    }
    let mut padded = (**vocab).clone();
    padded.pad_to(size);
    Ok(Arc::new(padded))
}

/// One canvas of `length` positions over a grammar and a vocabulary: the exact set of tokens
/// at any masked position, joint k-token steps, completability and a completion.
///
/// A position holds one token id or is masked (`None`). A masked position takes exactly one
/// token; the output ends at the first end-of-output id; masks at the end may also be the end
/// of the output. An id is in a position's mask iff placing it there keeps the canvas
/// completable; ids the checker could not decide within its budgets are left out and counted
/// in `stats["unknown_ids"]` (never a guess).
///
/// A canvas that cannot be completed (tokens placed by `set_canvas` that no filling can
/// finish) is kept in the matcher's state, as llguidance's matchers keep theirs, rather than
/// raised in the middle of a sampling loop: the call that finds it answers truthfully (empty
/// mask rows, `False`, `None`) and records why (`is_error()`, `get_error()`); later calls that
/// compute raise `LacunaError` with that reason until `set_canvas`, `retract` or `reset`
/// change the canvas.
#[pyclass(module = "lacuna")]
struct CanvasMatcher {
    checker: Checker,
    vocab: Arc<Vocabulary>,
    canvas: TokenCanvas,
    timeout: Option<Duration>,
    stats: Stats,
    /// Why the canvas cannot be completed, once a call has found that it cannot.
    error: Option<String>,
}

#[pymethods]
impl CanvasMatcher {
    /// A matcher over an all-masked canvas of `length` positions. `vocab_size` is the width of
    /// the model's logits when it is wider than the tokenizer (ids past the tokenizer are
    /// never allowed); it may not be narrower.
    #[new]
    #[pyo3(signature = (grammar, tokenizer, length, vocab_size = None))]
    fn new(
        py: Python<'_>,
        grammar: &Grammar,
        tokenizer: &Tokenizer,
        length: usize,
        vocab_size: Option<usize>,
    ) -> PyResult<CanvasMatcher> {
        let vocab = widened(&tokenizer.vocab, vocab_size)?;
        let g = grammar.inner.clone();
        let v = vocab.clone();
        let checker = py
            .detach(move || Checker::with_vocabulary(g, v))
            .map_err(lacuna_error)?;
        Ok(CanvasMatcher {
            checker,
            vocab,
            canvas: TokenCanvas::masked(length),
            timeout: None,
            stats: Stats::default(),
            error: None,
        })
    }

    /// Number of positions.
    #[getter]
    fn length(&self) -> usize {
        self.canvas.len()
    }

    /// Width of a mask row in ids (the logits' width).
    #[getter]
    fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    /// Replaces the canvas: one id or `None` (masked) per position.
    fn set_canvas(&mut self, ids: Vec<Option<i64>>) -> PyResult<()> {
        if ids.len() != self.canvas.len() {
            return Err(PyValueError::new_err(format!(
                "the canvas has {} positions; got {} ids",
                self.canvas.len(),
                ids.len()
            )));
        }
        let mut cells = Vec::with_capacity(ids.len());
        for (position, id) in ids.into_iter().enumerate() {
            cells.push(match id {
                None => None,
                Some(id) => Some(self.id_at(position, id)?),
            });
        }
        self.canvas = TokenCanvas::new(cells);
        self.error = None;
        Ok(())
    }

    /// The canvas: one id or `None` per position.
    fn canvas(&self) -> Vec<Option<TokenId>> {
        self.canvas.cells.clone()
    }

    /// The masked positions, ascending.
    fn masked_positions(&self) -> Vec<usize> {
        self.canvas.masked_positions()
    }

    /// Masks every position again.
    fn reset(&mut self) {
        self.canvas = TokenCanvas::masked(self.canvas.len());
        self.error = None;
    }

    /// Whether a call found that the canvas cannot be completed (see `get_error`).
    fn is_error(&self) -> bool {
        self.error.is_some()
    }

    /// Why the canvas cannot be completed, if a call found that it cannot; `None` otherwise.
    fn get_error(&self) -> Option<String> {
        self.error.clone()
    }

    /// Every later call gives up after `ms` milliseconds of work (its answers `unknown`:
    /// ids left out of masks and counted, `is_completable()` None); `None` removes the limit.
    #[pyo3(signature = (ms))]
    fn set_timeout_ms(&mut self, ms: Option<u64>) {
        self.timeout = ms.map(Duration::from_millis);
    }

    /// Writes the mask of each of `positions` (masked positions of the canvas) into row
    /// `row0 + i` of `bitmask`, an int32 array `[rows, ceil(vocab_size / 32)]` (NumPy, or a
    /// CPU torch tensor); id `t` is allowed iff bit `t % 32` of word `t / 32` is set.
    #[pyo3(signature = (bitmask, positions, row0 = 0))]
    fn fill_bitmask(
        &mut self,
        py: Python<'_>,
        bitmask: &Bound<'_, PyAny>,
        positions: Vec<i64>,
        row0: usize,
    ) -> PyResult<()> {
        self.ensure_usable()?;
        let view = bitmask_view(bitmask, self.vocab.len())?;
        view.check_rows(row0, positions.len())?;
        let positions = self.positions(&positions)?;
        let masks = py.detach(|| self.masks(&positions))?;
        write_rows(&view, row0, &masks)
    }

    /// The ids allowed at masked `position`, ascending.
    fn allowed_tokens(&mut self, py: Python<'_>, position: i64) -> PyResult<Vec<TokenId>> {
        self.ensure_usable()?;
        let positions = self.positions(&[position])?;
        let masks = py.detach(|| self.masks(&positions))?;
        Ok(masks[0].ids().collect())
    }

    /// How many of `pairs` (position, id), placed in order, keep the canvas completable: the
    /// first `n` are accepted, the next (if any) is not. The canvas is not changed.
    fn validate(&mut self, py: Python<'_>, pairs: Vec<(i64, i64)>) -> PyResult<usize> {
        self.ensure_usable()?;
        let pairs = self.pairs(&pairs)?;
        self.arm_deadline();
        let n = py.detach(|| self.checker.validate(&self.canvas, &pairs));
        self.stats.checks += pairs.len() as u64;
        n.map_err(canvas_error)
    }

    /// [`validate`](Self::validate), placing the accepted pairs on the canvas; returns how
    /// many were placed.
    fn commit(&mut self, py: Python<'_>, pairs: Vec<(i64, i64)>) -> PyResult<usize> {
        self.ensure_usable()?;
        let pairs = self.pairs(&pairs)?;
        self.arm_deadline();
        let (checker, canvas) = (&mut self.checker, &mut self.canvas);
        let n = py.detach(|| checker.commit(canvas, &pairs));
        self.stats.checks += pairs.len() as u64;
        n.map_err(canvas_error)
    }

    /// Masks `positions` again (a remasking sampler takes tokens back).
    fn retract(&mut self, positions: Vec<i64>) -> PyResult<()> {
        let positions = positions
            .iter()
            .map(|&p| self.in_canvas(p))
            .collect::<PyResult<Vec<_>>>()?;
        self.canvas.retract(&positions);
        self.error = None;
        Ok(())
    }

    /// Whether the masked positions can be filled (one token each, or the end of the output
    /// where it may end) so that the output is a word of the grammar; `None` if a budget or
    /// the timeout ran out first.
    fn is_completable(&mut self, py: Python<'_>) -> PyResult<Option<bool>> {
        self.ensure_usable()?;
        self.arm_deadline();
        let check = py
            .detach(|| self.checker.check_tokens(&self.canvas))
            .map_err(canvas_error)?;
        self.stats.checks += 1;
        Ok(match check.verdict {
            CheckVerdict::Completable => Some(true),
            CheckVerdict::NotCompletable => {
                self.error =
                    Some("is_completable() found no filling of the masked positions".into());
                Some(false)
            }
            CheckVerdict::Unknown => None,
        })
    }

    /// A full output (bytes) that keeps every placed token's text in place and is a word of
    /// the grammar, filling each run of masks with any text (the grammar's shortest readable
    /// filler, not a model's); `None` if the canvas's text cannot be completed. Raises
    /// `LacunaError` when a budget or the timeout runs out.
    fn completion<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        self.ensure_usable()?;
        let mut cells = Vec::with_capacity(self.canvas.len());
        for (position, cell) in self.canvas.cells.iter().enumerate() {
            cells.push(match cell {
                None => Cell::Mask,
                Some(id) => match self.vocab.kind(*id) {
                    Some(TokenKind::Text) => Cell::Token(self.vocab.bytes(*id).to_vec()),
                    Some(TokenKind::Eos) => Cell::Eos,
                    _ => {
                        return Err(PyValueError::new_err(format!(
                            "position {position}: token {id} may not appear in an output"
                        )))
                    }
                },
            });
        }
        self.arm_deadline();
        let text = py.detach(|| self.checker.complete(&Canvas { cells }));
        match text {
            Ok(Some(bytes)) => Ok(Some(PyBytes::new(py, &bytes))),
            Ok(None) => {
                self.error = Some("completion() found no text that completes the canvas".into());
                Ok(None)
            }
            Err(e) => Err(lacuna_error(format!("completion: {e}"))),
        }
    }

    /// Counters since the matcher was made: masks filled, their total microseconds, ids left
    /// out of masks as undecided, checks made by `validate`/`commit`/`is_completable`.
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.stats.as_dict(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "<lacuna.CanvasMatcher: {} positions, {} masked, {} ids{}>",
            self.canvas.len(),
            self.canvas.masked_positions().len(),
            self.vocab.len(),
            if self.error.is_some() {
                ", in error"
            } else {
                ""
            }
        )
    }
}

impl CanvasMatcher {
    /// An error naming why the canvas cannot be completed, once a call has found that.
    fn ensure_usable(&self) -> PyResult<()> {
        usable(
            &self.error,
            "the canvas cannot be completed",
            "call set_canvas, retract or reset to go on",
        )
    }

    fn id_at(&self, position: usize, id: i64) -> PyResult<TokenId> {
        vocab_id(&self.vocab, id)
            .map_err(|e| PyValueError::new_err(format!("position {position}: {e}")))
    }

    /// `p` as an index of the canvas.
    fn in_canvas(&self, p: i64) -> PyResult<usize> {
        let len = self.canvas.len();
        if p < 0 || p as usize >= len {
            return Err(PyIndexError::new_err(format!(
                "position {p} is outside the canvas ({len} positions)"
            )));
        }
        Ok(p as usize)
    }

    /// `positions` as indices of masked positions of the canvas.
    fn positions(&self, positions: &[i64]) -> PyResult<Vec<usize>> {
        positions
            .iter()
            .map(|&p| {
                let at = self.in_canvas(p)?;
                match self.canvas.cells[at] {
                    Some(id) => Err(PyValueError::new_err(format!(
                        "position {p} is not masked (it holds token {id})"
                    ))),
                    None => Ok(at),
                }
            })
            .collect()
    }

    /// The pairs, each position masked and named once, checked before anything is placed (so
    /// a bad pair never leaves a `commit` half done).
    fn pairs(&self, pairs: &[(i64, i64)]) -> PyResult<Vec<(usize, TokenId)>> {
        let mut seen = std::collections::HashSet::new();
        pairs
            .iter()
            .map(|&(p, id)| {
                let position = self.positions(&[p])?[0];
                if !seen.insert(position) {
                    return Err(PyValueError::new_err(format!(
                        "position {p} appears twice among the pairs"
                    )));
                }
                Ok((position, self.id_at(position, id)?))
            })
            .collect()
    }

    fn arm_deadline(&mut self) {
        self.checker.set_deadline(deadline_for(self.timeout));
    }

    /// The mask of each position (checked masked beforehand).
    fn masks(&mut self, positions: &[usize]) -> PyResult<Vec<TokenMask>> {
        self.arm_deadline();
        let mut out = Vec::with_capacity(positions.len());
        for &p in positions {
            let allowed = self
                .checker
                .allowed(&self.canvas, p)
                .map_err(canvas_error)?;
            self.stats.masks += 1;
            self.stats.mask_micros += allowed.micros;
            self.stats.unknown_ids += allowed.unknown as u64;
            // A completable canvas has a filling with one token at `p`, and that token is in
            // the mask; so an empty mask with nothing undecided means no filling exists.
            if allowed.mask.is_empty() && allowed.unknown == 0 && self.error.is_none() {
                self.error = Some(format!("no token is valid at position {p}"));
            }
            out.push(allowed.mask);
        }
        Ok(out)
    }
}

/// A caller's bitmask array, checked: two dimensions of 32-bit integers, at least
/// `ceil(vocab / 32)` words a row, C-contiguous, writable. Read through NumPy's
/// `__array_interface__` (the buffer protocol is not in the stable ABI before Python 3.11); a
/// torch tensor is read through `.numpy()` (same memory; CPU only). It holds the array, so
/// the memory stays alive while the view does.
pub(crate) struct BitmaskView<'py> {
    ptr: usize,
    rows: usize,
    width: usize,
    _owner: Bound<'py, PyAny>,
}

impl BitmaskView<'_> {
    /// Whether rows `row0 .. row0 + n` exist: checked before any mask is computed.
    fn check_rows(&self, row0: usize, n: usize) -> PyResult<()> {
        if row0 + n > self.rows {
            return Err(PyIndexError::new_err(format!(
                "rows {row0}..{} do not fit a bitmask of {} rows",
                row0 + n,
                self.rows
            )));
        }
        Ok(())
    }
}

const BITMASK_SHAPE: &str = "an int32 array of shape [rows, ceil(vocab_size / 32)]";

pub(crate) fn bitmask_view<'py>(
    bitmask: &Bound<'py, PyAny>,
    vocab: usize,
) -> PyResult<BitmaskView<'py>> {
    let py = bitmask.py();
    if !bitmask.hasattr("__array_interface__")? {
        if bitmask.hasattr("numpy")? {
            let array = bitmask.call_method0("numpy").map_err(|e| {
                PyTypeError::new_err(format!(
                    "bitmask: a torch tensor must be on the CPU ({})",
                    e.value(py)
                ))
            })?;
            return bitmask_view(&array, vocab);
        }
        return Err(PyTypeError::new_err(format!(
            "bitmask must be {BITMASK_SHAPE} (NumPy or a CPU torch tensor); got {}",
            bitmask.get_type().name()?
        )));
    }
    let interface = bitmask.getattr("__array_interface__")?;
    let typestr: String = interface.get_item("typestr")?.extract()?;
    if !matches!(typestr.as_str(), "<i4" | "<u4") {
        return Err(PyTypeError::new_err(format!(
            "bitmask must be {BITMASK_SHAPE}; its item type is {typestr:?}"
        )));
    }
    let shape: Vec<usize> = interface.get_item("shape")?.extract()?;
    let words = vocab.div_ceil(32);
    let [rows, width] = shape[..] else {
        return Err(PyValueError::new_err(format!(
            "bitmask must have 2 dimensions [rows, {words}]; its shape is {shape:?}"
        )));
    };
    if width < words {
        return Err(PyValueError::new_err(format!(
            "bitmask rows hold {width} words; a vocabulary of {vocab} ids needs {words}"
        )));
    }
    let strides = interface.get_item("strides")?;
    if !strides.is_none() {
        let strides: Vec<isize> = strides.extract()?;
        if rows > 1 && strides[0] != 4 * width as isize || width > 1 && strides[1] != 4 {
            return Err(PyValueError::new_err(
                "bitmask must be C-contiguous (use numpy.ascontiguousarray)",
            ));
        }
    }
    let (ptr, readonly): (usize, bool) = interface.get_item("data")?.extract()?;
    if readonly {
        return Err(PyValueError::new_err("bitmask is read-only"));
    }
    if ptr == 0 && rows * width > 0 {
        return Err(PyValueError::new_err("bitmask has no data"));
    }
    Ok(BitmaskView {
        ptr,
        rows,
        width,
        _owner: bitmask.clone(),
    })
}

/// Writes `masks[i]` into row `row0 + i` of `view`, zeroing the rest of the row.
pub(crate) fn write_rows(view: &BitmaskView<'_>, row0: usize, masks: &[TokenMask]) -> PyResult<()> {
    view.check_rows(row0, masks.len())?;
    let base = view.ptr as *mut u32;
    for (i, mask) in masks.iter().enumerate() {
        let words = mask.words();
        let n = words.len().min(view.width);
        // SAFETY: `bitmask_view` checked a writable, C-contiguous, 2-D array of 4-byte items,
        // `rows × width` of them from `ptr`; row `row0 + i` lies within it (checked above).
        // The view holds the array, and the GIL (held: `view` carries a `Bound`) keeps
        // Python code from resizing or freeing it meanwhile.
        unsafe {
            let row = base.add((row0 + i) * view.width);
            std::ptr::copy_nonoverlapping(words.as_ptr(), row, n);
            std::ptr::write_bytes(row.add(n), 0, view.width - n);
        }
    }
    Ok(())
}

/// Fills the masks of many canvases at once, spread over `threads` threads (default: the
/// machine's cores): each item is `(matcher, positions, row0)` as for
/// `CanvasMatcher.fill_bitmask`, all writing into one `bitmask`. A matcher may appear once.
#[pyfunction]
#[pyo3(signature = (items, bitmask, threads = None))]
fn fill_bitmasks(
    py: Python<'_>,
    items: Vec<(Bound<'_, CanvasMatcher>, Vec<i64>, usize)>,
    bitmask: &Bound<'_, PyAny>,
    threads: Option<usize>,
) -> PyResult<()> {
    let mut work = Vec::with_capacity(items.len());
    let mut vocab = None;
    for (i, (matcher, positions, row0)) in items.iter().enumerate() {
        let m = matcher.try_borrow_mut().map_err(|_| {
            PyValueError::new_err(format!("item {i}: this matcher appears more than once"))
        })?;
        m.ensure_usable()
            .map_err(|e| LacunaError::new_err(format!("item {i}: {}", e.value(py))))?;
        if *vocab.get_or_insert(m.vocab.len()) != m.vocab.len() {
            return Err(PyValueError::new_err(format!(
                "item {i}: its matcher's vocab_size {} differs from the first's",
                m.vocab.len()
            )));
        }
        let positions = m.positions(positions)?;
        work.push((m, positions, *row0));
    }
    let Some(vocab) = vocab else {
        return Ok(());
    };
    let view = bitmask_view(bitmask, vocab)?;
    for (i, (_, positions, row0)) in work.iter().enumerate() {
        view.check_rows(*row0, positions.len())
            .map_err(|e| PyIndexError::new_err(format!("item {i}: {}", e.value(py))))?;
    }
    let threads = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, work.len().max(1));
    let mut jobs: Vec<(&mut CanvasMatcher, &[usize])> = work
        .iter_mut()
        .map(|(m, p, _)| (&mut **m, p.as_slice()))
        .collect();
    let results: Vec<PyResult<Vec<TokenMask>>> = py.detach(|| {
        let per = jobs.len().div_ceil(threads);
        std::thread::scope(|s| {
            let handles: Vec<_> = jobs
                .chunks_mut(per)
                .map(|chunk| {
                    s.spawn(move || {
                        chunk
                            .iter_mut()
                            .map(|(m, p)| m.masks(p))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("a mask thread does not panic"))
                .collect()
        })
    });
    for ((_, _, row0), masks) in work.iter().zip(results) {
        write_rows(&view, *row0, &masks?)?;
    }
    Ok(())
}

#[pymodule]
fn _lacuna(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Grammar>()?;
    m.add_class::<Tokenizer>()?;
    m.add_class::<CanvasMatcher>()?;
    m.add_class::<infill::InfillMatcher>()?;
    m.add_function(wrap_pyfunction!(fill_bitmasks, m)?)?;
    m.add("LacunaError", m.py().get_type::<LacunaError>())?;
    Ok(())
}
