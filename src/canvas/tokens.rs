//! Token canvases: a model's output as vocabulary ids, one per position, and its reading as
//! text with holes under token-exact semantics.
//!
//! A diffusion model puts exactly one vocabulary token in each masked position, so a run of
//! masks is not "any string" (the text canvas's hole, [`super::HoleKind::Any`]):
//! - a run of `k` masks followed by a placed text token holds exactly `k` text tokens;
//! - a run that reaches the end of the output (the first EOS, or the canvas's end) holds at most
//!   `k` text tokens, then the output ends (each of its positions may hold an EOS);
//! - the first EOS ends the output; after it only EOS (or masks, which can only become EOS) may
//!   stand, since the model's text after an EOS would be thrown away;
//! - a forbidden id (a special token, an id with no bytes) is never valid.
//!
//! The reading is exact for runs of up to [`EXACT_RUN`] positions (one hole of one token per
//! position). A longer run is read as one token, then any text (a trailing one as any text): a
//! superset of what its tokens can write, so nothing a model could still do is ever rejected,
//! exact at the run's first position. A run of `k` writes at least `k` bytes, and this reading
//! bounds it by one only: bounding it by `k` with a hole of one byte per position made checks
//! and masks 5–100× slower (measured in the notes of issue 12), and a last hole of one token
//! (exact at the run's end too) made every hole of one token after a run of any text enter
//! from nearly every lexer configuration, and masks 10× slower. For a byte-level BPE
//! vocabulary (every byte a token, every longer token the merge of two) the last hole of one
//! token adds nothing: any text of at least `k` bytes that splits into at most `k` tokens
//! splits into exactly `k`.
//!
//! Where every byte is a token of its own ([`Vocabulary::writes_every_byte`]), one token then
//! any text is exactly any non-empty text, and the run is read as one byte
//! ([`HoleKind::Byte`]) then any text: the same language, whose hole of one byte the lexer
//! crosses in a few dozen ways where a token from a large entry set takes thousands.

use thiserror::Error;

use super::{HoleKind, HoleyText};
use crate::vocab::{TokenId, TokenKind, Vocabulary};

/// Runs of at most this many masks are read exactly (one hole per position); see the
/// [module docs](self).
pub const EXACT_RUN: usize = 2;

/// A canvas of vocabulary ids: `Some(id)` is a placed token, `None` a masked position.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TokenCanvas {
    /// One cell per position, left to right.
    pub cells: Vec<Option<TokenId>>,
}

impl TokenCanvas {
    /// A canvas of the given cells.
    pub fn new(cells: Vec<Option<TokenId>>) -> Self {
        TokenCanvas { cells }
    }

    /// A canvas of `len` masked positions.
    pub fn masked(len: usize) -> Self {
        TokenCanvas {
            cells: vec![None; len],
        }
    }

    /// Number of positions, masked or not.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether the canvas has no positions.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The masked positions, ascending.
    pub fn masked_positions(&self) -> Vec<usize> {
        (0..self.cells.len())
            .filter(|&i| self.cells[i].is_none())
            .collect()
    }

    /// Masks `positions` again (a remasking sampler takes tokens back); positions past the end
    /// are ignored.
    pub fn retract(&mut self, positions: &[usize]) {
        for &p in positions {
            if let Some(c) = self.cells.get_mut(p) {
                *c = None;
            }
        }
    }

    /// The canvas with `id` at `position`.
    pub fn with(&self, position: usize, id: TokenId) -> TokenCanvas {
        let mut c = self.clone();
        c.cells[position] = Some(id);
        c
    }
}

/// What is wrong with a token canvas or a question about it.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum TokenCanvasError {
    /// A placed id is not in the vocabulary.
    #[error("position {position}: token id {id} is outside the vocabulary ({vocab_len} ids)")]
    IdOutOfRange {
        /// The cell's position.
        position: usize,
        /// The id found there.
        id: TokenId,
        /// The vocabulary's size: valid ids are below it.
        vocab_len: usize,
    },
    /// A question named a position past the canvas's end.
    #[error("position {position} is past the canvas's end ({len} positions)")]
    PositionOutOfRange {
        /// The position asked about.
        position: usize,
        /// The canvas's length in positions.
        len: usize,
    },
    /// A question that needs a masked position (a mask over the vocabulary) named a placed one.
    #[error("position {position} is not masked (it holds token {id})")]
    NotMasked {
        /// The position asked about.
        position: usize,
        /// The token placed there.
        id: TokenId,
    },
    /// A text's hole kinds do not match its holes.
    #[error("the text has {holes} holes but {kinds} hole kinds were given")]
    HoleKinds {
        /// Holes in the text.
        holes: usize,
        /// Kinds given.
        kinds: usize,
    },
    /// The checker was built without a vocabulary, so it cannot read token ids.
    #[error("the checker has no vocabulary: build it with one for token canvases")]
    NoVocabulary,
}

/// A token canvas read as text with holes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TokenReading {
    /// The text, what fills each hole, and (if one was asked for) the hole that is the open
    /// position.
    Text {
        text: HoleyText,
        /// One per hole of `text`, in order.
        kinds: Vec<HoleKind>,
        /// The index among `text`'s holes of the open position's hole.
        open_hole: Option<usize>,
    },
    /// No filling is valid, for the reason given.
    Broken(&'static str),
}

/// Reads `canvas` over `vocab`. With `open = Some(p)`, masked position `p` is read as a hole
/// of exactly one text token of its own (for a position's mask: every token there is read
/// against the same neighbours), and the reading says which hole it is.
pub(crate) fn read_tokens(
    canvas: &TokenCanvas,
    vocab: &Vocabulary,
    open: Option<usize>,
) -> Result<TokenReading, TokenCanvasError> {
    let cells = &canvas.cells;
    let mut end = cells.len();
    for (position, cell) in cells.iter().enumerate() {
        let Some(id) = *cell else { continue };
        match vocab.kind(id) {
            None => {
                return Err(TokenCanvasError::IdOutOfRange {
                    position,
                    id,
                    vocab_len: vocab.len(),
                })
            }
            Some(TokenKind::Eos) => end = end.min(position),
            Some(_) => {}
        }
    }
    if let Some(p) = open {
        if p >= cells.len() {
            return Err(TokenCanvasError::PositionOutOfRange {
                position: p,
                len: cells.len(),
            });
        }
    }
    let kind_at = |i: usize| cells[i].and_then(|id| vocab.kind(id));
    if (0..cells.len()).any(|i| kind_at(i) == Some(TokenKind::Forbidden)) {
        return Ok(TokenReading::Broken(
            "a forbidden token (special, or no bytes)",
        ));
    }
    if (end..cells.len()).any(|i| kind_at(i) == Some(TokenKind::Text) || open == Some(i)) {
        return Ok(TokenReading::Broken("text after the end of the output"));
    }
    let mut chunks = vec![Vec::new()];
    let mut kinds = Vec::new();
    let mut open_hole = None;
    let mut i = 0;
    while i < end {
        if open == Some(i) {
            open_hole = Some(kinds.len());
            kinds.push(HoleKind::Token);
            chunks.push(Vec::new());
            i += 1;
            continue;
        }
        if let Some(id) = cells[i] {
            chunks
                .last_mut()
                .expect("chunks start non-empty")
                .extend_from_slice(vocab.bytes(id));
            i += 1;
            continue;
        }
        let run_end = (i..end)
            .find(|&j| cells[j].is_some() || open == Some(j))
            .unwrap_or(end);
        let k = run_end - i;
        let trailing = run_end == end;
        let holes: &[HoleKind] = match (trailing, k <= EXACT_RUN) {
            (false, true) => &[HoleKind::Token; EXACT_RUN][..k],
            // One token then any text; where every byte is a token, the same language read
            // more cheaply as one byte then any text.
            (false, false) if vocab.writes_every_byte() => &[HoleKind::Byte, HoleKind::Any],
            (false, false) => &[HoleKind::Token, HoleKind::Any],
            (true, true) => &[HoleKind::TokenOrNone; EXACT_RUN][..k],
            (true, false) => &[HoleKind::Any],
        };
        for &h in holes {
            kinds.push(h);
            chunks.push(Vec::new());
        }
        i = run_end;
    }
    Ok(TokenReading::Text {
        text: HoleyText { chunks },
        kinds,
        open_hole,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> Vocabulary {
        // 0 "a", 1 "bc", 2 EOS, 3 forbidden (no bytes)
        Vocabulary::new(
            vec![b"a".to_vec(), b"bc".to_vec(), b"</s>".to_vec(), vec![]],
            &[2],
            &[],
        )
    }

    fn read(cells: &[Option<TokenId>]) -> TokenReading {
        read_tokens(&TokenCanvas::new(cells.to_vec()), &vocab(), None).unwrap()
    }

    fn text(chunks: &[&str], kinds: &[HoleKind]) -> TokenReading {
        TokenReading::Text {
            text: HoleyText {
                chunks: chunks.iter().map(|c| c.as_bytes().to_vec()).collect(),
            },
            kinds: kinds.to_vec(),
            open_hole: None,
        }
    }

    #[test]
    fn runs_become_token_holes() {
        use HoleKind::*;
        assert_eq!(
            read(&[Some(0), None, Some(1)]),
            text(&["a", "bc"], &[Token])
        );
        assert_eq!(
            read(&[Some(0), None, None, Some(1)]),
            text(&["a", "", "bc"], &[Token, Token])
        );
        assert_eq!(
            read(&[None, None, None, Some(1)]),
            text(&["", "", "bc"], &[Token, Any])
        );
        assert_eq!(read(&[Some(0), None]), text(&["a", ""], &[TokenOrNone]));
        assert_eq!(read(&[Some(0), None, None, None]), text(&["a", ""], &[Any]));
        assert_eq!(
            read(&[Some(0), None, Some(2), None]),
            text(&["a", ""], &[TokenOrNone])
        );
    }

    #[test]
    fn eos_ends_the_output() {
        assert_eq!(read(&[Some(0), Some(2), Some(2)]), text(&["a"], &[]));
        assert!(matches!(
            read(&[Some(0), Some(2), Some(1)]),
            TokenReading::Broken(_)
        ));
        assert!(matches!(read(&[Some(3)]), TokenReading::Broken(_)));
        let e = read_tokens(&TokenCanvas::new(vec![Some(9)]), &vocab(), None).unwrap_err();
        assert!(matches!(
            e,
            TokenCanvasError::IdOutOfRange { position: 0, .. }
        ));
    }

    #[test]
    fn an_open_position_splits_its_run() {
        let c = TokenCanvas::new(vec![Some(0), None, None, None, Some(1)]);
        let reading = read_tokens(&c, &vocab(), Some(2)).unwrap();
        let expected = TokenReading::Text {
            text: HoleyText {
                chunks: vec![b"a".to_vec(), vec![], vec![], b"bc".to_vec()],
            },
            kinds: vec![HoleKind::Token; 3],
            open_hole: Some(1),
        };
        assert_eq!(reading, expected);
    }
}
