//! Templates: generations whose canvas holds fixed text between its runs of masks from the
//! start (native infilling: the file's text around its holes), and the *regions* that tell
//! which run each generated position belongs to however the finisher moves positions.

use std::time::Instant;

use super::{MaskConstraint, Result};
use crate::checker::{CheckVerdict, Checker};
use crate::diffusion::DiffusionError;
use crate::vocab::TokenKind;

/// The region of a position that held a fixed token from the start
/// ([`MaskConstraint::with_template`]).
pub const FIXED_REGION: u32 = u32::MAX;

impl<'a> MaskConstraint<'a> {
    /// A constraint on the generated positions of `template`: its `Some` ids are fixed text
    /// placed from the start (the file between an infilling's holes), its `None`s are masked.
    /// Each run of masks in the template is a *region* (numbered from 0, left to right) that
    /// keeps its number while the generation fills it, and positions the finisher inserts
    /// into a run join its region ([`MaskConstraint::regions`]), so a caller can tell which
    /// hole each generated token belongs to. Besides [`MaskConstraint::with_prefix`]'s errors,
    /// a fixed id that is not a text token, and a template that no text in its runs of masks
    /// can complete (any text: the finisher may lengthen a run), are errors here.
    pub fn with_template(
        checker: &'a mut Checker,
        prefix: &[u32],
        template: &[Option<u32>],
    ) -> Result<MaskConstraint<'a>> {
        let mut c = MaskConstraint::with_prefix(checker, prefix, template.len())?;
        let mut region = 0;
        for (i, cell) in template.iter().enumerate() {
            match *cell {
                Some(id) => {
                    if c.vocab.kind(id) != Some(TokenKind::Text) {
                        return Err(DiffusionError::Sampler(format!(
                            "template position {i}: id {id} is not a text token of the \
                             checker's vocabulary"
                        )));
                    }
                    c.canvas.cells[c.offset + i] = Some(id);
                    c.regions[i] = FIXED_REGION;
                    if i > 0 && template[i - 1].is_none() {
                        region += 1;
                    }
                }
                None => c.regions[i] = region,
            }
        }
        // Runs read as any text: the finisher may lengthen a span too short for its hole.
        let text = c.text_canvas();
        if c.checker.check(&text).verdict == CheckVerdict::NotCompletable {
            return Err(DiffusionError::Sampler(
                "no filling of the template's masked positions is a word of the grammar".into(),
            ));
        }
        Ok(c)
    }

    /// Each region's text, `regions` of them, with the runs still masked filled by the
    /// grammar's completion: a region's placed text tokens and its runs' fillers, in order
    /// (the last resort of a [`MaskConstraint::with_template`] generation, read back hole by
    /// hole). `None` when the completion finds none within its budget.
    pub fn completed_regions(&mut self, regions: usize) -> Option<Vec<Vec<u8>>> {
        let text = self.text_canvas().holey_text();
        if text.with_holes_merged().num_holes() != text.num_holes() {
            return None; // two runs with nothing between them: not one filler each
        }
        let t0 = Instant::now();
        let fillers = self.checker.fillers(&text);
        self.stats.check_time += t0.elapsed();
        let mut fillers = fillers.ok()??.into_iter();
        let mut out = vec![Vec::new(); regions];
        let cells = self.cells();
        for (i, cell) in cells.iter().enumerate() {
            let region = self.regions[i];
            let into = (region != FIXED_REGION).then_some(region as usize);
            match *cell {
                None if i == 0 || cells[i - 1].is_some() => {
                    let filler = fillers.next()?;
                    out.get_mut(into?)?.extend_from_slice(&filler);
                }
                None => {}
                Some(id) if self.vocab.kind(id) == Some(TokenKind::Eos) => break,
                Some(id) => {
                    if let Some(r) = into {
                        out.get_mut(r)?.extend_from_slice(self.vocab.bytes(id));
                    }
                }
            }
        }
        Some(out)
    }

    /// Each generated position's region: for [`MaskConstraint::with_template`], the number of
    /// the run of masks it was part of (or joined), [`FIXED_REGION`] for its fixed ids; 0
    /// everywhere otherwise.
    pub fn regions(&self) -> &[u32] {
        &self.regions
    }
}
