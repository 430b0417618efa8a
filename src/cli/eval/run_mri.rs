//! `lacuna eval run` on the infilling tasks (`mri-K`, `mril-K`): each item's holes filled one
//! after another, left to right, by a causal FIM checkpoint, a diffusion checkpoint or the
//! embedded model, as in the paper's MRI protocol (PROTOCOL 1.5).
//!
//! The model sees the task's docstring and the code before the hole; a causal model sees the
//! later fixed code as its FIM suffix with the other holes written `<TODO>` and the stub main
//! `int main(){ // TODO }` after it, so it does not write its own (a model trained by lacuna
//! sees its task's prompt and the code, as in its training). The grammar reads the declaration
//! and the solution — no docstring, no stub main — with each later hole as a hole.
//!
//! Con.⁻ is the program as the model left it (a hole that did not end within `--max-tokens`
//! keeps what was written; later holes stay empty). Con. is the same when every hole ended,
//! else the grammar's completion of that canvas (the unfinished hole and the later ones as
//! holes). Modes: `van` (no grammar), `mask` (each token under the exact frontier mask,
//! checked first and masked only when refused), `mask-eager` (the mask before every token)
//! and, for diffusion models, `native`: every hole at once, each a span of `--span` masks on
//! one canvas with the code ([`fill_native`]); its Con.⁻ is the code with the tokens the
//! model placed, Con. the same or, where the finisher gave up, each hole's completion.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::super::infill::{load_model, Loaded};
use super::records::{MriItem, ResultRecord};
use super::run::{each_run, item_seed, model_name, select_items, Mode, RunArgs};
use crate::canvas::{Canvas, Cell};
use crate::checker::Checker;
use crate::deadline::Deadline;
use crate::diffusion::Rng;
use crate::infill::{
    fill_file, fill_native, HoleyFile, InfillError, InfillOptions, MiddleWriter, NativeOptions,
};

/// The marker later holes are shown as in a causal model's suffix (the paper's).
const TODO: &str = "<TODO>";

/// The stub main after the last split, so the model does not write its own (paper Fig. 9).
const STUB_MAIN: &str = "\nint main(){\n// TODO\n }";

pub fn run(args: &RunArgs, items: Vec<MriItem>) -> Result<bool, String> {
    if let Some(m) = args
        .modes
        .iter()
        .find(|m| matches!(m, Mode::Reject | Mode::Gp))
    {
        return Err(format!(
            "--modes {}: the infilling tasks run van, mask and mask-eager (mask's check of the \
             model's own choice, then its mask when refused, draws what a rejection loop \
             without a budget draws)",
            m.name()
        ));
    }
    let loaded = load_model(
        args.model.as_deref(),
        args.tokenizer.as_deref(),
        &args.dtype,
        args.cuda,
        "cpp",
    )?;
    if let Some(m) = args.modes.iter().find(|m| m.is_native()) {
        if matches!(loaded, Loaded::Causal { .. }) {
            return Err(format!(
                "--modes {}: {}",
                m.name(),
                InfillError::NotDiffusion
            ));
        }
    }
    let model_name = model_name(args);
    let (tokens, width, ends, trained_by_lacuna) = match &loaded {
        Loaded::Causal {
            model,
            tokens,
            format,
        } => (tokens, model.config().vocab, format.ends.clone(), false),
        Loaded::Diffusion { loaded, ends, .. } => (
            &loaded.tokens,
            loaded.model.vocab_size(),
            ends.clone(),
            loaded.card.is_some(),
        ),
    };
    let vocab = Arc::new(tokens.vocabulary(&ends, width));
    let items = select_items(args, items, trained_by_lacuna, |i| i.held_out)?;
    let task = items[0].task.clone();
    // One checker for the whole run: the grammar is C++'s for every item.
    let grammar = crate::grammar::spec::load("cpp").map_err(|e| e.to_string())?;
    let mut checker = Checker::new(grammar).map_err(|e| e.to_string())?;
    checker.set_vocabulary(vocab);
    each_run(args, &task, &model_name, &items, |item, mode, seed| {
        let mut record = ResultRecord::new(&item.task, &item.id, &model_name, seed, mode.name());
        let t0 = Instant::now();
        checker.set_deadline(Deadline::at(t0 + Duration::from_secs_f64(args.timeout)));
        let filled = fill_item(
            args,
            &loaded,
            trained_by_lacuna,
            &mut checker,
            item,
            mode,
            seed,
            &mut record,
        );
        if let Err(e) = filled {
            record.error = Some(e.to_string());
        }
        record.t_total = t0.elapsed().as_secs_f64();
        record.t_model = (record.t_total - record.t_checker).max(0.0);
        record.timed_out = record.t_total > args.timeout;
        Ok(record)
    })
}

/// `native`: the diffusion model fills every hole of the item at once. It reads its prompt
/// (the task's, for the embedded model; else the docstring) and the code; the stub main is
/// not on its canvas, which holds only what the grammar reads.
#[allow(clippy::too_many_arguments)]
fn fill_item_natively(
    args: &RunArgs,
    loaded: &Loaded,
    checker: &mut Checker,
    file: &HoleyFile,
    head: &str,
    item: &MriItem,
    mode: Mode,
    seed: u64,
    record: &mut ResultRecord,
) -> Result<(), InfillError> {
    let Loaded::Diffusion {
        loaded: model,
        prompt,
        ..
    } = loaded
    else {
        return Err(InfillError::NotDiffusion);
    };
    let mut prompt = prompt.clone();
    prompt.extend(model.tokens.encode(head)?);
    let options = NativeOptions {
        span: args.span,
        seed: item_seed(seed, &item.id),
        temperature: args.temperature.unwrap_or(1.0),
        lazy: true,
        max_extra_positions: crate::diffusion::MAX_EXTRA_POSITIONS,
        constrained: mode == Mode::Native,
    };
    let filled = fill_native(
        model.model.as_ref(),
        &model.tokens,
        checker,
        &prompt,
        file,
        &options,
    )?;
    let placed: Vec<Vec<u8>> = filled
        .ids
        .iter()
        .map(|ids| model.tokens.decode_bytes(ids))
        .collect();
    record.raw_text = String::from_utf8_lossy(&file.with_middles(&placed)).into_owned();
    record.text = String::from_utf8_lossy(&filled.text).into_owned();
    let st = &filled.stats;
    record.completed = st.fallback;
    record.completion_bytes = st.completion_bytes;
    record.spelled_tokens = st.spelled_tokens;
    record.gave_up = st.fallback;
    record.generated_tokens = filled.ids.iter().map(Vec::len).sum();
    record.masks = st.masks;
    record.checks = st.checks;
    record.rejections = st.rejections;
    record.steps = st.steps;
    record.forward_passes = st.forward_passes;
    record.t_checker = st.checker_time.as_secs_f64();
    Ok(())
}

/// The docstring of a HumanEval-X prompt (everything before its first `#include`).
fn docstring(prompt: &str) -> &str {
    prompt.find("#include").map_or("", |i| &prompt[..i])
}

#[allow(clippy::too_many_arguments)]
fn fill_item(
    args: &RunArgs,
    loaded: &Loaded,
    trained_by_lacuna: bool,
    checker: &mut Checker,
    item: &MriItem,
    mode: Mode,
    seed: u64,
    record: &mut ResultRecord,
) -> Result<(), InfillError> {
    let mut pieces = item.splits.clone();
    pieces[0] = format!("{}{}", item.declaration, pieces[0]);
    let file = HoleyFile {
        pieces,
        marker: TODO.to_string(),
    };
    // What the model sees besides the grammar's text: the docstring before, the stub main
    // after (not for a model trained by lacuna, which never saw either).
    let (head, tail) = if trained_by_lacuna {
        ("", "")
    } else {
        (docstring(&item.prompt), STUB_MAIN)
    };
    if mode.is_native() {
        return fill_item_natively(args, loaded, checker, &file, head, item, mode, seed, record);
    }
    let mut writer_for =
        |prefix: &str, later: &[String]| -> Result<Box<dyn MiddleWriter + '_>, InfillError> {
            let prefix = format!("{head}{prefix}");
            let mut later = later.to_vec();
            if let Some(last) = later.last_mut() {
                last.push_str(tail);
            }
            loaded.writer(&prefix, &later, TODO, args.span)
        };
    let tokens = loaded.tokens();
    let options = InfillOptions {
        max_tokens: args.max_tokens,
        temperature: args.temperature.unwrap_or(1.0),
        constrained: mode != Mode::Van,
        lazy: mode == Mode::Mask,
    };
    let mut rng = Rng::new(item_seed(seed, &item.id));
    let filled = fill_file(&mut writer_for, tokens, checker, &file, &options, &mut rng)?;
    let all_ended = filled.len() == file.holes() && filled.iter().all(|(_, m)| m.ended);
    let mut raw = Vec::new();
    let mut cells = Vec::new();
    for (i, piece) in file.pieces.iter().enumerate() {
        raw.extend_from_slice(piece.as_bytes());
        cells.push(Cell::Token(piece.as_bytes().to_vec()));
        if i + 1 == file.pieces.len() {
            break;
        }
        match filled.get(i) {
            Some((text, m)) => {
                raw.extend_from_slice(text);
                cells.push(Cell::Token(text.clone()));
                if !m.ended {
                    cells.push(Cell::Mask);
                }
            }
            None => cells.push(Cell::Mask),
        }
    }
    record.raw_text = String::from_utf8_lossy(&raw).into_owned();
    record.text = record.raw_text.clone();
    if !all_ended && mode != Mode::Van {
        let t0 = Instant::now();
        let done = checker.complete(&Canvas::new(cells));
        record.t_checker += t0.elapsed().as_secs_f64();
        if let Ok(Some(text)) = done {
            record.completion_bytes = text.len().saturating_sub(raw.len());
            record.text = String::from_utf8_lossy(&text).into_owned();
            record.completed = true;
        }
    }
    for (_, m) in &filled {
        record.generated_tokens += m.ids.len();
        record.masks += m.masks as u64;
        record.checks += m.checks as u64;
        record.rejections += m.refused as u64;
        record.t_checker += m.mask_micros as f64 / 1e6;
    }
    record.gave_up = !all_ended;
    Ok(())
}
