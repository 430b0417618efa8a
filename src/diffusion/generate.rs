//! The generation loop, unconstrained or under a grammar. Each step runs the model once (twice
//! with classifier-free guidance), asks the sampler for its proposals, and places up to the
//! step's `k` tokens: unconstrained, the first `k` proposals; constrained, proposal by proposal,
//! each checked against the canvas that already holds the earlier ones, a rejected pair
//! removed and the next best proposed. After `max_resamples` rejections in a generation the
//! output is finished by the checker's completion; so is an output the schedule left with masks.
//!
//! ```no_run
//! use std::path::Path;
//! use candle_core::{DType, Device};
//! use lacuna::checker::Checker;
//! use lacuna::diffusion::{self, generate, ChatTemplate, Constraint, GenerateOptions, LLaDASampler,
//!                         TokenTable, Tokens};
//!
//! let dir = Path::new("models/LLaDA-8B-Instruct");
//! let model = diffusion::load(dir, DType::BF16, &Device::Cpu).unwrap();
//! let tokens = Tokens::load(&dir.join("tokenizer.json")).unwrap();
//! let template = ChatTemplate::for_family(model.family());
//! let prompt = template.render(None, "Give me a JSON object with a name.", "```json\n");
//! let eot = tokens.token_id(template.end_of_turn()).unwrap();
//! let table = TokenTable::from_tokens(&tokens, &[model.eos_token_id(), eot]);
//! let mut checker = Checker::from_spec("json+fence").unwrap();
//! let mut constraint = Constraint::new(&mut checker, &table, 128);
//! let mut sampler = LLaDASampler::new(64, 32); // steps, block_length
//! let out = generate(model.as_ref(), &mut sampler, &table, &tokens.encode(&prompt).unwrap(),
//!                    &GenerateOptions::new(128, 42), Some(&mut constraint)).unwrap();
//! println!("{}", String::from_utf8_lossy(&out.text));
//! ```

use std::time::{Duration, Instant};

use candle_core::{Device, Tensor};

use super::constraint::{Constraint, TokenTable};
use super::error::{DiffusionError, Result};
use super::rng::Rng;
use super::sampler::{Proposals, Sampler};
use super::Model;

/// Settings of one generation.
#[derive(Clone, Debug)]
pub struct GenerateOptions {
    /// Number of generated positions after the prompt.
    pub gen_length: usize,
    /// Seed of the generation's random draws (sampling, schedules): equal seeds, equal outputs
    /// on the same device.
    pub seed: u64,
    /// Rejections after which a constrained generation is finished by completion.
    pub max_resamples: u64,
    /// Rejections after which a position proposes no more: it stays masked, and the
    /// completion closes its hole at the end. A hole may take any string, but its positions
    /// hold one token each, so a position can be left where no single token fits (between a
    /// placed `1` and `)` a SMILES needs `(C`, two tokens); without this, such a position
    /// would spend the whole `max_resamples` budget.
    pub max_rejections_per_position: usize,
    /// End an unconstrained generation as soon as its text is final: an EOS is placed and
    /// no mask precedes it. The text is the same; positions after the EOS stay masked in
    /// `ids`, and the forward passes the authors' schedule would still run are saved.
    pub stop_when_settled: bool,
    /// Mask-guided generation ([`generate_masked`](super::generate_masked)): masked positions it may insert where a
    /// position's mask came out empty (the model ran out of room to finish), so that the
    /// model, not the grammar's completion, writes the rest.
    pub max_extra_positions: usize,
}

/// The default of [`GenerateOptions::max_extra_positions`].
pub const MAX_EXTRA_POSITIONS: usize = 64;

impl GenerateOptions {
    /// `gen_length` positions and `seed`, with the defaults: 100 resamples, 20 rejections per
    /// position, no early stop, [`MAX_EXTRA_POSITIONS`] extra positions.
    pub fn new(gen_length: usize, seed: u64) -> GenerateOptions {
        GenerateOptions {
            gen_length,
            seed,
            max_resamples: 100,
            max_rejections_per_position: 20,
            stop_when_settled: false,
            max_extra_positions: MAX_EXTRA_POSITIONS,
        }
    }
}

/// What one generation cost.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GenerationStats {
    /// Model runs (a step with classifier-free guidance runs one batch of two rows: one pass).
    pub forward_passes: u64,
    /// Steps of the sampler's schedule taken.
    pub steps: u64,
    /// Grammar checks of proposed tokens (mask-guided generation: rechecks of a step's later
    /// pairs; with lazy masks every proposal, and a refused position's next best tokens).
    pub checks: u64,
    /// Of those, the tokens refused (mask-guided generation: redraws; with lazy masks each
    /// refused check).
    pub rejections: u64,
    /// Wall time in forward passes, logits rows copied out included.
    pub model_time: Duration,
    /// Wall time in the checker: checks, masks and the final completion.
    pub checker_time: Duration,
    /// Wall time in the sampler, checker time excluded.
    pub sampler_time: Duration,
    /// Whether the output was finished by the checker's completion (after `max_resamples`
    /// rejections, or with positions the schedule left masked).
    pub fallback: bool,
    /// Whether `max_resamples` rejections ended the generation.
    pub gave_up: bool,
    /// Positions still masked when the generation ended (the completion filled their holes,
    /// possibly with nothing: a hole may be empty, a position cannot).
    pub unfilled: usize,
    /// Bytes of the output that the completion wrote (0 when the model wrote it all).
    pub completion_bytes: usize,
    /// Masked positions inserted so that the model could finish (mask-guided generation).
    pub extra_positions: usize,
    /// Masked positions taken out of runs too long for what they had to hold (mask-guided
    /// generation: a run of three masks where the grammar lets in two bytes).
    pub removed_positions: usize,
    /// Tokens the finisher placed from the shortest spelling of the grammar's completion,
    /// not from the model's best, because none of those left the output finishable in its
    /// positions (mask-guided generation; the model wrote the rest).
    pub spelled_tokens: usize,
    /// Mask-guided generation ([`generate_masked`](super::generate_masked)): valid-token masks computed (0 otherwise).
    pub masks: u64,
    /// Wall time computing those masks (part of `checker_time`).
    pub mask_time: Duration,
    /// Ids left out of masks because their check ran out of budget.
    pub unknown_ids: u64,
    /// Masks that came out empty (their position was left masked).
    pub empty_masks: u64,
}

/// The result of one generation.
#[derive(Clone, Debug)]
pub struct Generation {
    /// The generated ids (masks where nothing was placed, EOS after an accepted EOS).
    pub ids: Vec<u32>,
    /// The output text: bytes up to the first EOS, or the completion if `stats.fallback`.
    pub text: Vec<u8>,
    /// What the generation cost, and how it ended.
    pub stats: GenerationStats,
}

/// Generates `options.gen_length` tokens after `prompt` with `sampler`, under `constraint`
/// if given (a constraint over `gen_length` positions, typically fresh). With a constraint
/// that has a fixed prefix ([`Constraint::with_prefix`]) the text is still the generated part
/// alone; the prompt is the caller's, so it typically ends with the prefix's tokens.
pub fn generate(
    model: &dyn Model,
    sampler: &mut dyn Sampler,
    table: &TokenTable,
    prompt: &[u32],
    options: &GenerateOptions,
    constraint: Option<&mut Constraint<'_>>,
) -> Result<Generation> {
    run(model, sampler, table, prompt, &[], options, constraint)
}

/// Generates without a constraint on a template: `cells` (one per generated position, so
/// `options.gen_length` of them) are on the canvas from the start, and the model unmasks the
/// `None` ones around them. The unconstrained twin of infilling with
/// [`MaskConstraint::with_template`](super::MaskConstraint::with_template): the text is the
/// whole canvas's, template included, up to the first EOS.
pub fn generate_around(
    model: &dyn Model,
    sampler: &mut dyn Sampler,
    table: &TokenTable,
    prompt: &[u32],
    cells: &[Option<u32>],
    options: &GenerateOptions,
) -> Result<Generation> {
    covers(cells.len(), options.gen_length)?;
    run(model, sampler, table, prompt, cells, options, None)
}

/// [`generate`] from a canvas with `placed` cells (none, or one per generated position).
fn run(
    model: &dyn Model,
    sampler: &mut dyn Sampler,
    table: &TokenTable,
    prompt: &[u32],
    placed: &[Option<u32>],
    options: &GenerateOptions,
    mut constraint: Option<&mut Constraint<'_>>,
) -> Result<Generation> {
    let mask = model.mask_token_id();
    let n = options.gen_length;
    let p = prompt.len();
    if let Some(c) = constraint.as_deref() {
        covers(c.cells().len(), n)?;
    }
    let (mut ids, mut rng) = start(model, sampler, prompt, options)?;
    for (i, cell) in placed.iter().enumerate() {
        if let Some(id) = *cell {
            ids[p + i] = id;
        }
    }
    let mut stats = GenerationStats::default();
    // Rejected pairs stay rejected: the canvas only grows, so a token that cannot be
    // completed at a position now never can be later.
    let mut dead: Vec<Vec<u32>> = vec![vec![mask]; n];
    let before = constraint.as_deref().map(|c| c.stats()).unwrap_or_default();
    let mut gave_up = false;
    // `dead[i]` holds the mask and the tokens rejected at position i.
    let retired = |dead: &[Vec<u32>], i: usize| dead[i].len() > options.max_rejections_per_position;
    'steps: while let Some(mut plan) = sampler.plan(&ids, mask, &mut rng) {
        stats.steps += 1;
        plan.candidates.retain(|&c| c < p || !retired(&dead, c - p));
        if plan.candidates.is_empty() {
            continue;
        }
        let rows = step_rows(model, sampler, &ids, p, &plan.candidates, &mut stats)?;
        let t1 = Instant::now();
        let banned: Vec<Vec<u32>> = plan
            .candidates
            .iter()
            .map(|&c| {
                if c >= p {
                    dead[c - p].clone()
                } else {
                    vec![mask]
                }
            })
            .collect();
        let mut props = sampler.proposals(&plan, rows, &banned, &mut rng);
        let Some(c) = constraint.as_deref_mut() else {
            for (pos, tok) in props.top_k(plan.k) {
                ids[pos] = tok;
            }
            stats.sampler_time += t1.elapsed();
            if options.stop_when_settled && settled(&ids[p..], mask, table) {
                break;
            }
            continue;
        };
        let check_before = c.stats().checker_time;
        let mut placed = 0;
        while placed < plan.k {
            let Some((pos, tok)) = props.next_best() else {
                break;
            };
            if pos < p {
                // A masked prompt position: not part of the constrained output.
                place(&mut ids, &mut props, pos, tok, []);
                placed += 1;
                continue;
            }
            if c.check(pos - p, tok) {
                let filled = c.accept(pos - p, tok).into_iter().map(|q| q + p);
                place(&mut ids, &mut props, pos, tok, filled);
                placed += 1;
            } else {
                props.reject(pos, tok);
                dead[pos - p].push(tok);
                if retired(&dead, pos - p) {
                    props.accept(pos);
                }
                if c.stats().rejections - before.rejections >= options.max_resamples {
                    gave_up = true;
                    break 'steps;
                }
            }
        }
        let ct = c.stats().checker_time;
        stats.sampler_time += t1.elapsed().saturating_sub(ct - check_before);
        stats.checker_time = ct - before.checker_time;
        if c.is_complete() {
            break;
        }
    }
    let text = match constraint {
        Some(c) => {
            let s = c.stats();
            stats.checks = s.checks - before.checks;
            stats.rejections = s.rejections - before.rejections;
            stats.gave_up = gave_up;
            stats.unfilled = c.canvas().num_masks();
            if gave_up || !c.is_complete() {
                stats.fallback = true;
                let t = c.completion()?;
                stats.checker_time = c.stats().checker_time - before.checker_time;
                let placed: usize = c
                    .cells()
                    .iter()
                    .map(|c| match c {
                        crate::canvas::Cell::Token(b) => b.len(),
                        _ => 0,
                    })
                    .sum();
                stats.completion_bytes = t.len().saturating_sub(placed);
                t
            } else {
                table.text(&ids[p..], mask)
            }
        }
        None => table.text(&ids[p..], mask),
    };
    Ok(Generation {
        ids: ids[p..].to_vec(),
        text,
        stats,
    })
}

/// The ids a generation starts from (the prompt, then `options.gen_length` masks) and its
/// generator, once the lengths fit the model's context and the sampler has its schedule.
pub(crate) fn start(
    model: &dyn Model,
    sampler: &mut dyn Sampler,
    prompt: &[u32],
    options: &GenerateOptions,
) -> Result<(Vec<u32>, Rng)> {
    let (p, n) = (prompt.len(), options.gen_length);
    check_context(model, p, n)?;
    sampler.begin(p, n)?;
    let mut ids = prompt.to_vec();
    ids.extend(std::iter::repeat_n(model.mask_token_id(), n));
    Ok((ids, Rng::new(options.seed)))
}

/// A constraint over `len` positions serves a generation of `n`.
pub(crate) fn covers(len: usize, n: usize) -> Result<()> {
    if len != n {
        return Err(DiffusionError::Sampler(format!(
            "the constraint covers {len} positions, gen_length is {n}"
        )));
    }
    Ok(())
}

/// The logits rows of a step's `candidates` (with the sampler's guidance), timed as model time.
pub(crate) fn step_rows(
    model: &dyn Model,
    sampler: &dyn Sampler,
    ids: &[u32],
    prompt_len: usize,
    candidates: &[usize],
    stats: &mut GenerationStats,
) -> Result<Vec<Vec<f32>>> {
    let t0 = Instant::now();
    let rows = logits_rows(
        model,
        ids,
        prompt_len,
        sampler.cfg_scale(),
        candidates,
        stats,
    )?;
    stats.model_time += t0.elapsed();
    Ok(rows)
}

/// Writes `tok` at absolute position `pos` and at the positions an EOS there filled (`filled`,
/// absolute), and takes them all out of the step's queue.
pub(crate) fn place(
    ids: &mut [u32],
    props: &mut Proposals,
    pos: usize,
    tok: u32,
    filled: impl IntoIterator<Item = usize>,
) {
    for q in std::iter::once(pos).chain(filled) {
        ids[q] = tok;
        props.accept(q);
    }
}

/// A prompt of `prompt_len` tokens and `gen_len` generated positions must fit the model's
/// context (before anything is allocated for them).
pub(crate) fn check_context(model: &dyn Model, prompt_len: usize, gen_len: usize) -> Result<()> {
    let total = prompt_len.checked_add(gen_len);
    match (model.max_positions(), total) {
        (Some(room), Some(t)) if t <= room => Ok(()),
        (None, Some(_)) => Ok(()),
        (room, _) => Err(DiffusionError::Sampler(format!(
            "the prompt ({prompt_len} tokens) and the generated positions ({gen_len}) do not \
             fit the model's context ({} positions)",
            room.map_or("unbounded".to_string(), |r| r.to_string())
        ))),
    }
}

/// Whether an unconstrained output is final: an EOS is placed and no mask precedes it (the
/// text ends at the first EOS, so later positions cannot change it).
fn settled(ids: &[u32], mask: u32, table: &TokenTable) -> bool {
    for &t in ids {
        if t == mask {
            return false;
        }
        if table.is_eos(t) {
            return true;
        }
    }
    true
}

/// Runs the model on `ids` and returns the logits rows of `positions` (with guidance if
/// `cfg > 0`: a second row of the batch with the prompt masked).
pub(crate) fn logits_rows(
    model: &dyn Model,
    ids: &[u32],
    prompt_len: usize,
    cfg: f64,
    positions: &[usize],
    stats: &mut GenerationStats,
) -> Result<Vec<Vec<f32>>> {
    let device: &Device = model.device();
    let len = ids.len();
    let index = Tensor::from_vec(
        positions.iter().map(|&i| i as u32).collect::<Vec<_>>(),
        positions.len(),
        device,
    )?;
    stats.forward_passes += 1;
    if cfg > 0.0 {
        let mut both = ids.to_vec();
        let mask = model.mask_token_id();
        both.extend(
            ids.iter()
                .enumerate()
                .map(|(i, &t)| if i < prompt_len { mask } else { t }),
        );
        let x = Tensor::from_vec(both, (2, len), device)?;
        let logits = model.forward(&x)?;
        let cond = logits.get(0)?.index_select(&index, 0)?;
        let un = logits.get(1)?.index_select(&index, 0)?;
        let guided = (&un + ((cond - &un)? * (cfg + 1.0))?)?;
        return Ok(guided.to_vec2::<f32>()?);
    }
    let x = Tensor::from_vec(ids.to_vec(), (1, len), device)?;
    let logits = model.forward(&x)?;
    Ok(logits.get(0)?.index_select(&index, 0)?.to_vec2::<f32>()?)
}
