//! A file with hole markers, filled hole by hole: the pieces between markers, whether any
//! filling can make the file a word of the grammar (and if not, where it goes wrong), and the
//! loop over holes with a causal FIM model.

use super::frontier::Piece;
use super::generate::{
    fill_middle, InfillError, InfillOptions, Middle, MiddleWriter, Surroundings,
};
use crate::canvas::HoleyText;
use crate::checker::{CheckVerdict, Checker};
use crate::diffusion::{Rng, Tokens};

/// A file's text cut at its hole markers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HoleyFile {
    /// The fixed text around the holes: one more piece than holes.
    pub pieces: Vec<String>,
    /// The marker the holes were written as (shown to the model for holes not yet filled).
    pub marker: String,
}

impl HoleyFile {
    /// Cuts `text` at every `marker`; a text without one is an error (there is nothing to
    /// fill), as is an empty marker.
    pub fn parse(text: &str, marker: &str) -> Result<HoleyFile, InfillError> {
        if marker.is_empty() || !text.contains(marker) {
            return Err(InfillError::NoMarker {
                marker: marker.to_string(),
            });
        }
        Ok(HoleyFile {
            pieces: text.split(marker).map(str::to_string).collect(),
            marker: marker.to_string(),
        })
    }

    /// Number of holes.
    pub fn holes(&self) -> usize {
        self.pieces.len() - 1
    }

    /// The 1-based line and column (in characters) where piece `i` starts in the file.
    pub fn start_of(&self, i: usize) -> (usize, usize) {
        let mut before = String::new();
        for p in &self.pieces[..i] {
            before.push_str(p);
            before.push_str(&self.marker);
        }
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, column)
    }

    /// The file with `middles` in its first holes and the rest as markers.
    pub fn with_middles(&self, middles: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, p) in self.pieces.iter().enumerate() {
            out.extend_from_slice(p.as_bytes());
            if i + 1 < self.pieces.len() {
                match middles.get(i) {
                    Some(m) => out.extend_from_slice(m),
                    None => out.extend_from_slice(self.marker.as_bytes()),
                }
            }
        }
        out
    }
}

/// Whether some filling of the holes makes the file a word of the grammar; if none does, the
/// error says where the text goes wrong: the first piece that no text before it (holes filled
/// any way) can be followed by. `unknown` (a budget) is not an error.
pub fn check_fillable(checker: &mut Checker, file: &HoleyFile) -> Result<(), InfillError> {
    let holey = |n: usize, open_end: bool| {
        let mut chunks: Vec<Vec<u8>> = file.pieces[..n]
            .iter()
            .map(|p| p.as_bytes().to_vec())
            .collect();
        if open_end {
            chunks.push(Vec::new());
        }
        HoleyText { chunks }
    };
    let whole = holey(file.pieces.len(), false);
    if checker.check_text(&whole).verdict != CheckVerdict::NotCompletable {
        return Ok(());
    }
    // The first piece after which nothing can follow; else the end of the file is wrong.
    let piece = (1..=file.pieces.len())
        .find(|&n| checker.check_text(&holey(n, true)).verdict == CheckVerdict::NotCompletable)
        .map_or(file.pieces.len() - 1, |n| n - 1);
    let (line, column) = file.start_of(piece);
    Err(InfillError::Unfillable {
        piece,
        line,
        column,
        at_end: checker.check_text(&holey(file.pieces.len(), true)).verdict
            != CheckVerdict::NotCompletable,
    })
}

/// Makes the writer of a middle from the text before the hole and the fixed pieces after it.
pub type WriterFor<'f, 'w> =
    dyn FnMut(&str, &[String]) -> Result<Box<dyn MiddleWriter + 'w>, InfillError> + 'f;

/// Fills every hole of `file`, one after another, each middle proposed by the writer
/// `writer_for(prefix, later)` makes for it: `prefix` is the text before the hole (earlier
/// middles in place), `later` the fixed pieces after it (the holes between them not filled
/// yet). Stops at the first middle that does not end within `options.max_tokens` (its text
/// is returned as far as it got).
pub fn fill_file<'w>(
    writer_for: &mut WriterFor<'_, 'w>,
    tokens: &Tokens,
    checker: &mut Checker,
    file: &HoleyFile,
    options: &InfillOptions,
    rng: &mut Rng,
) -> Result<Vec<(Vec<u8>, Middle)>, InfillError> {
    let mut done: Vec<(Vec<u8>, Middle)> = Vec::new();
    for hole in 0..file.holes() {
        let mut before = Vec::new();
        let mut prefix = String::new();
        for (i, p) in file.pieces[..=hole].iter().enumerate() {
            before.push(Piece::Text(p.as_bytes().to_vec()));
            prefix.push_str(p);
            if let Some((text, _)) = done.get(i) {
                before.push(Piece::Text(text.clone()));
                prefix.push_str(&String::from_utf8_lossy(text));
            }
        }
        let mut after = Vec::new();
        for (i, p) in file.pieces[hole + 1..].iter().enumerate() {
            if i > 0 {
                after.push(Piece::Hole);
            }
            after.push(Piece::Text(p.as_bytes().to_vec()));
        }
        let around = Surroundings {
            hole,
            before: &before,
            after: &after,
        };
        let mut writer = writer_for(&prefix, &file.pieces[hole + 1..])?;
        let middle = fill_middle(writer.as_mut(), checker, &around, options, rng)?;
        let text = tokens.decode_bytes(&middle.ids);
        let ended = middle.ended;
        done.push((text, middle));
        if !ended {
            break;
        }
    }
    Ok(done)
}
