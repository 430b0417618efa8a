//! Constrained decoding for any sampler by checking proposed tokens: [`Constraint`], and the
//! [`TokenTable`] that turns ids into canvas cells.

use std::fmt;
use std::time::{Duration, Instant};

use crate::canvas::{Canvas, Cell};
use crate::checker::{CheckVerdict, Checker, CompletionError};

use super::error::{DiffusionError, Result};
use super::tokens::Tokens;

/// The canvas cell of every token id: its exact bytes, or EOS.
#[derive(Clone, Debug)]
pub struct TokenTable {
    bytes: Vec<Vec<u8>>,
    eos: Vec<bool>,
}

impl TokenTable {
    /// From the bytes of every id (indexed by id) and the ids that end the output.
    pub fn new(bytes: Vec<Vec<u8>>, eos_ids: &[u32]) -> TokenTable {
        let mut eos = vec![false; bytes.len()];
        for &e in eos_ids {
            if let Some(x) = eos.get_mut(e as usize) {
                *x = true;
            }
        }
        TokenTable { bytes, eos }
    }

    /// From a tokenizer's exact bytes; `eos_ids` end the output (the model's EOS, and e.g.
    /// the end-of-turn token of its chat template).
    pub fn from_tokens(tokens: &Tokens, eos_ids: &[u32]) -> TokenTable {
        TokenTable::new(tokens.all_bytes().to_vec(), eos_ids)
    }

    /// Whether `id` ends the output (never for ids outside the table).
    pub fn is_eos(&self, id: u32) -> bool {
        self.eos.get(id as usize).copied().unwrap_or(false)
    }

    /// The exact bytes of `id` (empty outside the table).
    pub fn bytes(&self, id: u32) -> &[u8] {
        self.bytes.get(id as usize).map_or(&[], |b| b.as_slice())
    }

    /// The canvas cell of `id`.
    pub fn cell(&self, id: u32) -> Cell {
        if self.is_eos(id) {
            Cell::Eos
        } else {
            Cell::Token(self.bytes(id).to_vec())
        }
    }

    /// The text of generated ids: their bytes up to the first EOS; `mask` ids add nothing.
    pub fn text(&self, ids: &[u32], mask: u32) -> Vec<u8> {
        let mut out = Vec::new();
        for &id in ids {
            if self.is_eos(id) {
                break;
            }
            if id != mask {
                out.extend_from_slice(self.bytes(id));
            }
        }
        out
    }

    /// Number of ids in the table.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the table has no ids.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// A checker's completion as a generation's result: the text, or why there is none.
pub(crate) fn completed(
    out: std::result::Result<Option<Vec<u8>>, CompletionError>,
) -> Result<Vec<u8>> {
    match out {
        Ok(Some(text)) => Ok(text),
        Ok(None) => Err(DiffusionError::Completion(
            "the canvas is not completable".into(),
        )),
        Err(e) => Err(DiffusionError::Completion(e.to_string())),
    }
}

/// The generated part of a completion of a canvas that starts with the fixed `prefix`: the
/// completion keeps placed tokens verbatim, so it starts with the prefix's bytes; an error
/// (not a silently wrong output) if it does not.
pub(crate) fn after_prefix(mut text: Vec<u8>, prefix: &[u8]) -> Result<Vec<u8>> {
    if !text.starts_with(prefix) {
        return Err(DiffusionError::Completion(format!(
            "the completion does not start with the fixed prefix ({} bytes): {:?}",
            prefix.len(),
            String::from_utf8_lossy(&text[..text.len().min(prefix.len() + 16)])
        )));
    }
    text.drain(..prefix.len());
    Ok(text)
}

/// What a constraint did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConstraintStats {
    /// Calls of [`Constraint::check`] that ran the checker (not those refused unchecked).
    pub checks: u64,
    /// Checks that refused the token, `unknown` included.
    pub rejections: u64,
    /// Checks that ran out of budget (counted as rejections: never a guess).
    pub unknown: u64,
    /// Wall time spent in the checker: checks and completions.
    pub checker_time: Duration,
}

/// A grammar constraint on one generation, for any sampler: it holds the generation's canvas
/// and answers, for a proposed (position, token), whether the canvas stays completable under
/// the grammar; accepted tokens are placed one after another, so every check sees the earlier
/// ones. An accepted EOS ends the output: every later position becomes EOS.
///
/// The output may continue a fixed prefix that the model did not generate (a function's
/// declaration): [`Constraint::with_prefix`]. The grammar then judges the prefix and the
/// output together, while positions and texts stay those of the output alone.
///
/// ```
/// use lacuna::checker::Checker;
/// use lacuna::diffusion::{Constraint, TokenTable};
/// use lacuna::grammar::lark;
///
/// // A grammar, and a toy vocabulary: ids 0..=255 are single bytes, 256 is EOS.
/// let grammar = lark::parse("start: \"[\" [D (\",\" D)*] \"]\"\nD: /[0-9]+/", "list.lark").unwrap();
/// let mut checker = Checker::new(grammar).unwrap();
/// let mut bytes: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
/// bytes.push(Vec::new());
/// let table = TokenTable::new(bytes, &[256]);
///
/// // Four positions, all masked. Some sampler proposes tokens in its own order.
/// let mut c = Constraint::new(&mut checker, &table, 4);
/// assert!(c.check(0, b'[' as u32));
/// c.accept(0, b'[' as u32);
/// assert!(!c.check(1, b'x' as u32)); // no word of the grammar has `[x`
/// assert!(c.check(2, b']' as u32));
/// c.accept(2, b']' as u32);
/// assert!(!c.check(1, b',' as u32)); // `[,]` cannot be completed
/// assert!(c.check(3, 256)); // EOS: the output may end after `]`
/// c.accept(3, 256);
/// // A sampler that gives up asks for a completion of what it has.
/// let text = c.completion().unwrap();
/// assert!(text == b"[]" || (text.starts_with(b"[") && text.ends_with(b"]")));
/// assert_eq!(c.stats().checks, 5);
/// assert_eq!(c.stats().rejections, 2);
/// ```
///
/// `Debug` shows the canvas and statistics, not the checker or the token table.
pub struct Constraint<'a> {
    checker: &'a mut Checker,
    table: &'a TokenTable,
    /// The prefix's cell (if the prefix is not empty), then the generated positions.
    canvas: Canvas,
    /// The fixed prefix's bytes.
    prefix: Vec<u8>,
    /// Cells before the generated positions: 1 with a prefix, else 0.
    offset: usize,
    stats: ConstraintStats,
}

impl<'a> Constraint<'a> {
    /// A constraint on `len` generated positions, all masked.
    pub fn new(checker: &'a mut Checker, table: &'a TokenTable, len: usize) -> Constraint<'a> {
        Constraint::with_prefix(checker, table, &[], len)
    }

    /// A constraint on `len` generated positions, all masked, that continue the fixed text
    /// `prefix` (one placed cell in front of them; none when it is empty): every check and
    /// completion reads `prefix` and the output together, as one word of the grammar.
    /// Positions given to the methods count from the first generated one, and the texts they
    /// return leave the prefix out.
    pub fn with_prefix(
        checker: &'a mut Checker,
        table: &'a TokenTable,
        prefix: &[u8],
        len: usize,
    ) -> Constraint<'a> {
        let mut cells = Vec::with_capacity(len + 1);
        if !prefix.is_empty() {
            cells.push(Cell::Token(prefix.to_vec()));
        }
        let offset = cells.len();
        cells.resize(offset + len, Cell::Mask);
        Constraint {
            checker,
            table,
            canvas: Canvas::new(cells),
            prefix: prefix.to_vec(),
            offset,
            stats: ConstraintStats::default(),
        }
    }

    /// Whether `token` at `position` keeps the canvas completable. A position that is not
    /// masked, and an EOS before a placed token (it would erase it), are refused unchecked.
    pub fn check(&mut self, position: usize, token: u32) -> bool {
        let at = self.offset + position;
        if self.canvas.cells.get(at) != Some(&Cell::Mask) {
            return false;
        }
        let cell = self.table.cell(token);
        if cell == Cell::Eos
            && self.canvas.cells[at + 1..]
                .iter()
                .any(|c| matches!(c, Cell::Token(_)))
        {
            return false;
        }
        let old = std::mem::replace(&mut self.canvas.cells[at], cell);
        let t0 = Instant::now();
        let verdict = self.checker.check(&self.canvas).verdict;
        self.stats.checker_time += t0.elapsed();
        self.canvas.cells[at] = old;
        self.stats.checks += 1;
        match verdict {
            CheckVerdict::Completable => true,
            CheckVerdict::NotCompletable => {
                self.stats.rejections += 1;
                false
            }
            CheckVerdict::Unknown => {
                self.stats.rejections += 1;
                self.stats.unknown += 1;
                false
            }
        }
    }

    /// Places `token` at `position` (after a successful [`Constraint::check`]); an EOS fills
    /// every later position with EOS. Returns the positions that became EOS besides `position`.
    pub fn accept(&mut self, position: usize, token: u32) -> Vec<usize> {
        let cell = self.table.cell(token);
        let mut filled = Vec::new();
        if cell == Cell::Eos {
            for (i, c) in self.cells_mut().iter_mut().enumerate().skip(position + 1) {
                if *c != Cell::Eos {
                    *c = Cell::Eos;
                    filled.push(i);
                }
            }
        }
        self.cells_mut()[position] = cell;
        filled
    }

    /// A full output built from the canvas (its chunks in order, holes filled by the
    /// checker's shortest readable completion), without the prefix.
    pub fn completion(&mut self) -> Result<Vec<u8>> {
        let t0 = Instant::now();
        let out = self.checker.complete(&self.canvas);
        self.stats.checker_time += t0.elapsed();
        after_prefix(completed(out)?, &self.prefix)
    }

    /// Whether no position is masked before the first EOS.
    pub fn is_complete(&self) -> bool {
        self.canvas.num_masks() == 0
    }

    /// The whole canvas as the checker reads it: the prefix's cell (if any), then the
    /// generated positions (accepted tokens and EOS, masks elsewhere). [`Constraint::cells`]
    /// has the generated positions alone.
    pub fn canvas(&self) -> &Canvas {
        &self.canvas
    }

    /// The cells of the generated positions, indexed as the methods' positions are.
    pub fn cells(&self) -> &[Cell] {
        &self.canvas.cells[self.offset..]
    }

    /// [`Constraint::cells`], to place tokens.
    fn cells_mut(&mut self) -> &mut [Cell] {
        &mut self.canvas.cells[self.offset..]
    }

    /// The fixed prefix the output continues (empty for [`Constraint::new`]).
    pub fn prefix(&self) -> &[u8] {
        &self.prefix
    }

    /// What the constraint has done so far.
    pub fn stats(&self) -> ConstraintStats {
        self.stats
    }
}

impl fmt::Debug for Constraint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Constraint")
            .field("canvas", &self.canvas)
            .field("offset", &self.offset)
            .field("table_len", &self.table.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}
