//! The partial output: a sequence of cells (filled tokens, masks, end-of-sequence), and its
//! reading as text with holes.
//!
//! Semantics (DESIGN.md): consecutive filled cells concatenate; a run of masks is one hole that
//! any string may fill, the empty string too; the first EOS ends the output and everything after
//! it is ignored; without EOS the output ends where the canvas ends, so masks there form a
//! trailing hole. Text is bytes: a token may be any UTF-8 piece or a partial UTF-8 sequence.

use std::borrow::Cow;

mod jsonl;
pub mod token_lines;
pub mod tokens;

pub use jsonl::{parse_canvas_line, CanvasLine, CanvasLineError};

/// One position of a canvas.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cell {
    /// A filled position: its token's exact bytes.
    Token(Vec<u8>),
    /// A masked position.
    Mask,
    /// End of sequence: the output ends before this cell.
    Eos,
}

/// A canvas: the cells of a model's output, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Canvas {
    /// One cell per position, left to right; cells after the first [`Cell::Eos`] are ignored.
    pub cells: Vec<Cell>,
}

/// Text with holes: `chunks[0] □ chunks[1] □ … □ chunks[n]`, a hole between each pair of
/// consecutive chunks. Chunks may be empty (a hole at either end, or holes that only a mask run
/// separates).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HoleyText {
    /// The fixed text between holes, as bytes; never empty (a text with no holes has one chunk).
    pub chunks: Vec<Vec<u8>>,
}

/// What may fill a hole of a [`HoleyText`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum HoleKind {
    /// Any string, the empty one too (a run of masks in a text canvas).
    #[default]
    Any,
    /// Exactly one text token of the checker's vocabulary (a masked position).
    Token,
    /// One text token or nothing (a masked position that may hold the end of the output).
    TokenOrNone,
    /// Exactly one byte, any. A token canvas reads a long run of masks as one byte then any
    /// text (instead of one token then any text) when every byte is a token of its vocabulary
    /// ([`crate::vocab::Vocabulary::writes_every_byte`]): the two are then the same language,
    /// and a byte's ways through the lexer from a large entry set are a few dozen where a
    /// token's are thousands.
    Byte,
}

impl HoleyText {
    /// Number of holes: one fewer than the chunks.
    pub fn num_holes(&self) -> usize {
        self.chunks.len() - 1
    }

    /// Text without holes.
    pub fn solid(text: &[u8]) -> HoleyText {
        HoleyText {
            chunks: vec![text.to_vec()],
        }
    }

    /// A text that is one hole: every word of the grammar fills it.
    pub fn one_hole() -> HoleyText {
        HoleyText {
            chunks: vec![Vec::new(), Vec::new()],
        }
    }

    /// The same language with each run of holes that only empty chunks separate made one hole
    /// (any string, then any string, is any string). The checker reads text this way: each
    /// hole is a copy of the lexer's hole states in its automaton, so a text of 100 adjacent
    /// holes, which a caller may build by hand, had 100 copies and ran its search out of
    /// budget. Borrowed when there is nothing to merge.
    pub fn with_holes_merged(&self) -> Cow<'_, HoleyText> {
        let n = self.chunks.len();
        let interior_empty = (1..n.saturating_sub(1)).any(|i| self.chunks[i].is_empty());
        if !interior_empty {
            return Cow::Borrowed(self);
        }
        let mut chunks = Vec::with_capacity(n);
        for (i, chunk) in self.chunks.iter().enumerate() {
            let interior = i > 0 && i + 1 < n;
            if !(interior && chunk.is_empty()) {
                chunks.push(chunk.clone());
            }
        }
        Cow::Owned(HoleyText { chunks })
    }
}

impl Canvas {
    /// A canvas of the given cells.
    pub fn new(cells: Vec<Cell>) -> Self {
        Canvas { cells }
    }

    /// Builds a canvas from token strings, `None` for masks (no EOS).
    pub fn from_tokens<'a>(tokens: impl IntoIterator<Item = Option<&'a str>>) -> Self {
        Canvas {
            cells: tokens
                .into_iter()
                .map(|t| match t {
                    Some(s) => Cell::Token(s.as_bytes().to_vec()),
                    None => Cell::Mask,
                })
                .collect(),
        }
    }

    /// The canvas as text with holes.
    pub fn holey_text(&self) -> HoleyText {
        let mut chunks = vec![Vec::new()];
        let mut in_hole = false;
        for cell in &self.cells {
            match cell {
                Cell::Eos => break,
                Cell::Mask => {
                    if !in_hole {
                        chunks.push(Vec::new());
                        in_hole = true;
                    }
                }
                Cell::Token(bytes) => {
                    in_hole = false;
                    chunks
                        .last_mut()
                        .expect("chunks start non-empty")
                        .extend_from_slice(bytes);
                }
            }
        }
        HoleyText { chunks }
    }

    /// Number of masked positions before the first EOS.
    pub fn num_masks(&self) -> usize {
        self.cells
            .iter()
            .take_while(|c| **c != Cell::Eos)
            .filter(|c| **c == Cell::Mask)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holey(tokens: &[Option<&str>]) -> Vec<String> {
        Canvas::from_tokens(tokens.iter().copied())
            .holey_text()
            .chunks
            .into_iter()
            .map(|c| String::from_utf8(c).unwrap())
            .collect()
    }

    #[test]
    fn runs_of_masks_are_one_hole() {
        assert_eq!(holey(&[Some("ab"), None, None, Some("c")]), ["ab", "c"]);
        assert_eq!(holey(&[None, Some("a"), None]), ["", "a", ""]);
        assert_eq!(holey(&[Some("a"), Some("b")]), ["ab"]);
        assert_eq!(holey(&[]), [""]);
    }

    #[test]
    fn eos_ends_the_output() {
        let mut c = Canvas::from_tokens([Some("a"), None]);
        c.cells.push(Cell::Eos);
        c.cells.push(Cell::Token(b"zzz".to_vec()));
        c.cells.push(Cell::Mask);
        assert_eq!(c.holey_text().chunks, vec![b"a".to_vec(), vec![]]);
        assert_eq!(c.num_masks(), 1);
        let c = Canvas::new(vec![Cell::Token(b"x".to_vec()), Cell::Eos, Cell::Mask]);
        assert_eq!(c.holey_text().chunks, vec![b"x".to_vec()]);
    }

    #[test]
    fn partial_utf8_tokens_concatenate_into_bytes() {
        let e_acute = "é".as_bytes();
        let c = Canvas::new(vec![
            Cell::Token(vec![e_acute[0]]),
            Cell::Token(vec![e_acute[1]]),
        ]);
        assert_eq!(c.holey_text().chunks, vec![e_acute.to_vec()]);
    }
}
