//! Every hole of a file filled at once by a masked diffusion model: the file's fixed text is
//! placed on the model's canvas, each hole is a span of masked positions, and the model
//! unmasks positions in any hole in the order its sampler chooses, each token drawn from its
//! position's exact valid-token mask ([`generate_masked`]). This is how diffusion models infill
//! natively (LLaDA and Dream fill fixed spans), where [`fill_file`](super::fill_file) fills the
//! holes one after another, left to right, as the paper's autoregressive baseline does.
//!
//! A hole's span is its length budget in tokens: a masked position holds exactly one text
//! token, so a hole before fixed text holds as many tokens as its span (the grammar's
//! whitespace lets a short middle pad out its span), and a hole at the end of the file holds
//! at most that many, then the output ends. Where the tokens placed leave no way to finish in
//! the positions left, the finisher lengthens the hole (or shortens a run no token fits)
//! within [`GenerateOptions::max_extra_positions`]; each generated position stays tagged with
//! its hole ([`MaskConstraint::regions`]), so the middles are read back exactly however the
//! spans moved. Only where that fails does the grammar's completion write the rest, and the
//! result says so.

use super::file::HoleyFile;
use super::generate::InfillError;
use crate::checker::Checker;
use crate::diffusion::{
    generate_around, generate_masked, DreamSampler, Family, GenerateOptions, GenerationStats,
    LLaDASampler, MaskConstraint, Model, Sampler, TokenTable, Tokens, FIXED_REGION,
};
use crate::vocab::{TokenId, TokenKind, Vocabulary};

/// The canvas's bound for a model that states no context length.
const MAX_POSITIONS: usize = 1 << 16;

/// How [`fill_native`] runs.
#[derive(Clone, Debug)]
pub struct NativeOptions {
    /// Masked positions per hole.
    pub span: usize,
    /// Seed of the sampler's draws.
    pub seed: u64,
    /// Sampling temperature; 0 takes each position's most likely allowed token.
    pub temperature: f64,
    /// Compute a position's mask only when the model's choice there is refused (see
    /// [`MaskConstraint::lazy`]).
    pub lazy: bool,
    /// Positions the finisher may add, over all holes.
    pub max_extra_positions: usize,
    /// Draw each token from its position's valid-token mask (the default). Without, the model
    /// fills the same spans on the same canvas as it likes, for comparison: nothing moves, a
    /// hole's middle is its span's text tokens, and the file need not be valid.
    pub constrained: bool,
}

/// A file whose holes were filled together.
#[derive(Clone, Debug)]
pub struct NativeFill {
    /// Each hole's text, in order.
    pub middles: Vec<Vec<u8>>,
    /// Each hole's tokens as the model placed them (with `stats.fallback`, the completion
    /// wrote more).
    pub ids: Vec<Vec<TokenId>>,
    /// The filled file.
    pub text: Vec<u8>,
    /// What the generation cost; `fallback` when the grammar's completion finished the file
    /// (then each middle is its hole's placed tokens and the completion's text for the
    /// positions left masked in it).
    pub stats: GenerationStats,
}

/// The model's canvas for `file`: its first piece's tokens (a prefix the model reads, not
/// part of the generated positions), then for each hole `span` masks followed by the next
/// piece's tokens.
fn template(
    tokens: &Tokens,
    file: &HoleyFile,
    span: usize,
) -> Result<(Vec<TokenId>, Vec<Option<TokenId>>), InfillError> {
    let prefix = tokens.encode(&file.pieces[0])?;
    let mut cells = Vec::new();
    for piece in &file.pieces[1..] {
        cells.extend(std::iter::repeat_n(None, span));
        cells.extend(tokens.encode(piece)?.into_iter().map(Some));
    }
    Ok((prefix, cells))
}

/// The family's sampler for one canvas of `len` positions, `masked` of them masked: one
/// token a step, the whole canvas one block (its fixed text is on both sides of the holes,
/// so a semi-autoregressive block would hide the suffix's holes from the first steps).
fn sampler(model: &dyn Model, masked: usize, len: usize, temperature: f64) -> Box<dyn Sampler> {
    match model.family() {
        Family::LLaDA => Box::new(LLaDASampler::new(masked, len).temperature(temperature)),
        Family::Dream => Box::new(DreamSampler::new(masked).temperature(temperature)),
    }
}

/// Fills every hole of `file` at once with `model` under `checker`, which reads the model's
/// token canvases ([`Checker::set_vocabulary`]). `prompt` is what the model reads before the
/// file (its task, for the embedded model).
pub fn fill_native(
    model: &dyn Model,
    tokens: &Tokens,
    checker: &mut Checker,
    prompt: &[TokenId],
    file: &HoleyFile,
    options: &NativeOptions,
) -> Result<NativeFill, InfillError> {
    if options.span == 0 {
        return Err(InfillError::EmptySpan);
    }
    // Adjacent holes would be one run of masks on the canvas, read back as one.
    let inner = file.pieces.len().saturating_sub(1);
    if let Some(i) = (1..inner).find(|&i| file.pieces[i].is_empty()) {
        let (line, column) = file.start_of(i);
        return Err(InfillError::Touching {
            first: i - 1,
            line,
            column,
        });
    }
    // The spans alone must fit the model's context before any is laid out.
    let room = model.max_positions().unwrap_or(MAX_POSITIONS);
    let spans = file.holes().saturating_mul(options.span);
    if spans > room {
        return Err(InfillError::Context {
            what: "the holes (as masked spans)",
            positions: spans,
            room,
        });
    }
    let (prefix, cells) = template(tokens, file, options.span)?;
    let mut head = prompt.to_vec();
    head.extend_from_slice(&prefix);
    if head.len() + cells.len() > room {
        return Err(InfillError::Context {
            what: "the prompt, the file and its holes (as masked spans)",
            positions: head.len() + cells.len(),
            room,
        });
    }
    if !options.constrained {
        return fill_unconstrained(model, tokens, checker, &head, &cells, file, options);
    }
    let mut constraint = MaskConstraint::with_template(checker, &prefix, &cells)?;
    if options.lazy {
        constraint = constraint.lazy();
    }
    let mut gen = GenerateOptions::new(cells.len(), options.seed);
    gen.max_extra_positions = options.max_extra_positions;
    let mut sampler = sampler(model, spans, cells.len(), options.temperature);
    let out = generate_masked(model, sampler.as_mut(), &head, &gen, &mut constraint)?;
    let holes = file.holes();
    let vocab = constraint.vocabulary().clone();
    let mut ids = vec![Vec::new(); holes];
    for (&cell, &region) in constraint.cells().iter().zip(constraint.regions()) {
        let Some(id) = cell.filter(|_| region != FIXED_REGION) else {
            continue;
        };
        if vocab.kind(id) == Some(TokenKind::Text) {
            ids[region as usize].push(id);
        }
    }
    let middles = if out.stats.fallback {
        constraint
            .completed_regions(holes)
            .ok_or(InfillError::Completion)?
    } else {
        middles_of(&vocab, &ids)
    };
    Ok(filled(file, middles, ids, out.stats))
}

/// What the tokens of each hole write.
fn middles_of(vocab: &Vocabulary, ids: &[Vec<TokenId>]) -> Vec<Vec<u8>> {
    ids.iter()
        .map(|ids| {
            ids.iter()
                .flat_map(|&id| vocab.bytes(id))
                .copied()
                .collect()
        })
        .collect()
}

/// `file` with `middles` in its holes.
fn filled(
    file: &HoleyFile,
    middles: Vec<Vec<u8>>,
    ids: Vec<Vec<TokenId>>,
    stats: GenerationStats,
) -> NativeFill {
    let text = file.with_middles(&middles);
    NativeFill {
        middles,
        ids,
        text,
        stats,
    }
}

/// [`fill_native`] without the grammar: the model unmasks the spans of `cells` after `head`
/// as it likes. Its vocabulary is `checker`'s (the same ids end the output and write text).
fn fill_unconstrained(
    model: &dyn Model,
    tokens: &Tokens,
    checker: &Checker,
    head: &[TokenId],
    cells: &[Option<TokenId>],
    file: &HoleyFile,
    options: &NativeOptions,
) -> Result<NativeFill, InfillError> {
    let vocab = checker
        .vocabulary()
        .expect("fill_native's checker reads the model's token canvases")
        .clone();
    let eos: Vec<TokenId> = vocab.eos_ids().collect();
    let table = TokenTable::from_tokens(tokens, &eos);
    let masked = cells.iter().filter(|c| c.is_none()).count();
    let gen = GenerateOptions::new(cells.len(), options.seed);
    let mut sampler = sampler(model, masked, cells.len(), options.temperature);
    let out = generate_around(model, sampler.as_mut(), &table, head, cells, &gen)?;
    // The spans never move: hole i is the i-th run of masks of the template.
    let mut ids = vec![Vec::new(); file.holes()];
    let mut hole = 0;
    for (i, cell) in cells.iter().enumerate() {
        if cell.is_some() {
            continue;
        }
        if i > 0 && cells[i - 1].is_some() {
            hole += 1;
        }
        let id = out.ids[i];
        if vocab.kind(id) == Some(TokenKind::Text) {
            ids[hole].push(id);
        }
    }
    Ok(filled(file, middles_of(&vocab, &ids), ids, out.stats))
}
