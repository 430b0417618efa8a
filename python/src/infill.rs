//! `lacuna.InfillMatcher`: fill-in-the-middle for any left-to-right sampler (a Hugging Face
//! FIM model's `generate` loop, say), in the shape of llguidance's `LLMatcher` — a bitmask
//! row for the next token, `consume_token`, errors kept in state — over lacuna's exact
//! frontier mask: the tokens that may come next so that `prefix · middle · suffix` can still
//! be a word of the grammar ([`lacuna::infill::frontier_mask`]).

use std::sync::Arc;
use std::time::Duration;

use lacuna::canvas::HoleyText;
use lacuna::checker::{CheckVerdict, Checker};
use lacuna::infill::{frontier_mask, Piece};
use lacuna::vocab::{TokenId, TokenKind, TokenMask, Vocabulary};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use super::{
    bitmask_view, deadline_for, lacuna_error, usable, vocab_id, widened, write_rows, Grammar,
    Stats, Tokenizer,
};

/// Text given as `str` (UTF-8) or `bytes`.
fn text_arg(what: &str, v: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(s.to_cow()?.as_bytes().to_vec());
    }
    Err(PyTypeError::new_err(format!(
        "{what}: expected str or bytes, got {}",
        v.get_type().name()?
    )))
}

/// A middle written left to right between `prefix` and `suffix`, one token at a time.
///
/// `suffix` is the text after the middle; a list of texts is the text after it with other
/// holes between the items (middles written later, any text for now). The tokenizer's
/// end-of-output ids end the middle (give a FIM model's end tokens as its `eos`); they are
/// allowed only where `prefix · middle · suffix` can be a word of the grammar.
#[pyclass(module = "lacuna")]
pub(crate) struct InfillMatcher {
    checker: Checker,
    vocab: Arc<Vocabulary>,
    prefix: Vec<u8>,
    after: Vec<Piece>,
    ids: Vec<TokenId>,
    middle: Vec<u8>,
    finished: bool,
    timeout: Option<Duration>,
    error: Option<String>,
    stats: Stats,
}

#[pymethods]
impl InfillMatcher {
    #[new]
    #[pyo3(signature = (grammar, tokenizer, prefix, suffix, vocab_size = None))]
    fn new(
        py: Python<'_>,
        grammar: &Grammar,
        tokenizer: &Tokenizer,
        prefix: &Bound<'_, PyAny>,
        suffix: &Bound<'_, PyAny>,
        vocab_size: Option<usize>,
    ) -> PyResult<InfillMatcher> {
        let prefix = text_arg("prefix", prefix)?;
        let mut after = Vec::new();
        if let Ok(list) = suffix.cast::<PyList>() {
            for (i, item) in list.iter().enumerate() {
                if i > 0 {
                    after.push(Piece::Hole);
                }
                after.push(Piece::Text(text_arg(&format!("suffix[{i}]"), &item)?));
            }
        } else {
            after.push(Piece::Text(text_arg("suffix", suffix)?));
        }
        let vocab = widened(&tokenizer.vocab, vocab_size)?;
        let g = grammar.inner.clone();
        let v = vocab.clone();
        let checker = py
            .detach(move || Checker::with_vocabulary(g, v))
            .map_err(lacuna_error)?;
        let mut m = InfillMatcher {
            checker,
            vocab,
            prefix,
            after,
            ids: Vec::new(),
            middle: Vec::new(),
            finished: false,
            timeout: None,
            error: None,
            stats: Stats::default(),
        };
        // A suffix no middle can complete is said at once, in the matcher's state.
        if py.detach(|| m.verdict(true, &[])) == CheckVerdict::NotCompletable {
            m.error = Some("no middle can complete the text around it".into());
        }
        Ok(m)
    }

    /// Width of a mask row in ids.
    #[getter]
    fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    /// The middle's ids so far.
    fn middle_ids(&self) -> Vec<TokenId> {
        self.ids.clone()
    }

    /// The middle's text so far.
    fn middle<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.middle)
    }

    /// Whether an end-of-output id ended the middle.
    fn is_finished(&self) -> bool {
        self.finished
    }

    /// Whether a call found that the middle cannot go on (see `get_error`).
    fn is_error(&self) -> bool {
        self.error.is_some()
    }

    /// Why the middle cannot go on; `None` when it can.
    fn get_error(&self) -> Option<String> {
        self.error.clone()
    }

    /// Starts the middle again (empty), clearing an error.
    fn reset(&mut self) {
        self.ids.clear();
        self.middle.clear();
        self.finished = false;
        self.error = None;
    }

    /// Later calls give up after `ms` of work (undecided ids are left out of masks and
    /// counted; `may_end()` None); `None` removes the limit.
    #[pyo3(signature = (ms))]
    fn set_timeout_ms(&mut self, ms: Option<u64>) {
        self.timeout = ms.map(Duration::from_millis);
    }

    /// Whether the middle may end here: True, False, or None when a budget ran out.
    fn may_end(&mut self, py: Python<'_>) -> PyResult<Option<bool>> {
        self.ensure_usable()?;
        Ok(match py.detach(|| self.verdict(false, &[])) {
            CheckVerdict::Completable => Some(true),
            CheckVerdict::NotCompletable => Some(false),
            CheckVerdict::Unknown => None,
        })
    }

    /// Writes the mask of the next token into row `row` of `bitmask` (int32
    /// `[rows, ceil(vocab_size / 32)]`): the text tokens that keep the file completable, and
    /// the end-of-output ids where the middle may end. After the middle ended, only the
    /// end-of-output ids.
    #[pyo3(signature = (bitmask, row = 0))]
    fn fill_next_token_bitmask(
        &mut self,
        py: Python<'_>,
        bitmask: &Bound<'_, PyAny>,
        row: usize,
    ) -> PyResult<()> {
        self.ensure_usable()?;
        let view = bitmask_view(bitmask, self.vocab.len())?;
        view.check_rows(row, 1)?;
        let mask = py.detach(|| self.next_mask())?;
        write_rows(&view, row, &[mask])
    }

    /// The ids the next token may be, ascending.
    fn allowed_tokens(&mut self, py: Python<'_>) -> PyResult<Vec<TokenId>> {
        self.ensure_usable()?;
        Ok(py.detach(|| self.next_mask())?.ids().collect())
    }

    /// Appends `id` to the middle (an end-of-output id ends it) if the file stays completable;
    /// returns whether it did. A refused id puts the matcher in its error state, as
    /// llguidance's matchers do: the sampler placed a token its mask did not allow.
    fn consume_token(&mut self, py: Python<'_>, id: i64) -> PyResult<bool> {
        self.ensure_usable()?;
        let id = self.id(id)?;
        let ok = py.detach(|| self.accepts(id));
        if ok {
            self.place(id);
        } else {
            self.error = Some(format!(
                "token {id} ({:?}) cannot come next in the middle",
                String::from_utf8_lossy(self.vocab.bytes(id))
            ));
        }
        Ok(ok)
    }

    /// How many of `ids`, appended in order, keep the file completable (the middle is not
    /// changed).
    fn validate_tokens(&mut self, py: Python<'_>, ids: Vec<i64>) -> PyResult<usize> {
        self.ensure_usable()?;
        let ids = ids
            .iter()
            .map(|&id| self.id(id))
            .collect::<PyResult<Vec<_>>>()?;
        let (saved_ids, saved_middle, saved_finished) =
            (self.ids.clone(), self.middle.clone(), self.finished);
        let n = py.detach(|| {
            let mut n = 0;
            for &id in &ids {
                if !self.accepts(id) {
                    break;
                }
                self.place(id);
                n += 1;
            }
            n
        });
        (self.ids, self.middle, self.finished) = (saved_ids, saved_middle, saved_finished);
        Ok(n)
    }

    /// Counters: masks, mask_micros, unknown_ids, checks.
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.stats.as_dict(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "<lacuna.InfillMatcher: {} tokens written{}{}>",
            self.ids.len(),
            if self.finished { ", finished" } else { "" },
            if self.error.is_some() {
                ", in error"
            } else {
                ""
            }
        )
    }
}

impl InfillMatcher {
    fn ensure_usable(&self) -> PyResult<()> {
        usable(
            &self.error,
            "the middle cannot go on",
            "call reset to start again",
        )
    }

    fn id(&self, id: i64) -> PyResult<TokenId> {
        vocab_id(&self.vocab, id).map_err(PyValueError::new_err)
    }

    fn arm_deadline(&mut self) {
        self.checker.set_deadline(deadline_for(self.timeout));
    }

    /// Whether `prefix · middle · extra`, then (with `gap`) any text, then the suffix, can be
    /// a word of the grammar.
    fn verdict(&mut self, gap: bool, extra: &[u8]) -> CheckVerdict {
        self.arm_deadline();
        let mut chunks = vec![[self.prefix.as_slice(), &self.middle, extra].concat()];
        if gap {
            chunks.push(Vec::new());
        }
        for p in &self.after {
            match p {
                Piece::Text(t) => chunks.last_mut().expect("a chunk").extend_from_slice(t),
                Piece::Hole => chunks.push(Vec::new()),
            }
        }
        self.stats.checks += 1;
        self.checker.check_text(&HoleyText { chunks }).verdict
    }

    fn accepts(&mut self, id: TokenId) -> bool {
        if self.finished {
            return self.vocab.kind(id) == Some(TokenKind::Eos);
        }
        match self.vocab.kind(id) {
            Some(TokenKind::Eos) => self.verdict(false, &[]) == CheckVerdict::Completable,
            Some(TokenKind::Text) => {
                let bytes = self.vocab.bytes(id).to_vec();
                self.verdict(true, &bytes) == CheckVerdict::Completable
            }
            _ => false,
        }
    }

    fn place(&mut self, id: TokenId) {
        if self.vocab.kind(id) == Some(TokenKind::Eos) {
            self.finished = true;
        } else {
            self.ids.push(id);
            self.middle.extend_from_slice(self.vocab.bytes(id));
        }
    }

    fn next_mask(&mut self) -> PyResult<TokenMask> {
        let mut out = TokenMask::new(self.vocab.len());
        if self.finished {
            self.vocab.eos_ids().for_each(|e| out.insert(e));
            return Ok(out);
        }
        self.arm_deadline();
        let before = [
            Piece::Text(self.prefix.clone()),
            Piece::Text(self.middle.clone()),
        ];
        let f = frontier_mask(&mut self.checker, &before, &self.after).map_err(lacuna_error)?;
        self.stats.masks += 1;
        self.stats.mask_micros += f.micros;
        self.stats.unknown_ids += f.unknown as u64;
        for id in f.mask.ids() {
            if self.vocab.kind(id) == Some(TokenKind::Text) {
                out.insert(id);
            }
        }
        if f.may_end == CheckVerdict::Completable {
            self.vocab.eos_ids().for_each(|e| out.insert(e));
        }
        if out.is_empty() && f.unknown == 0 && f.may_end == CheckVerdict::NotCompletable {
            self.error = Some(format!(
                "no token can come after the middle's {} tokens",
                self.ids.len()
            ));
        }
        Ok(out)
    }
}
