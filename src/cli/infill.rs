//! `lacuna infill --grammar SPEC [--model DIR] FILE`: fills every hole marker (`<FILL>`) of
//! FILE, one hole after another, each middle written by the model under the exact frontier
//! mask, and prints the filled file (or, with `--json`, the file and each hole's text and
//! statistics); with `--native`, a diffusion model fills every hole at once, each a span of
//! masks on one canvas. The model is the embedded diffusion model unless `--model` names a checkpoint:
//! a causal fill-in-the-middle model (Qwen2.5-Coder, StarCoder2, DeepSeek-Coder, CodeGemma)
//! in its family's FIM prompt, or a LLaDA/Dream diffusion model.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use serde_json::json;

use crate::checker::Checker;
use crate::diffusion::default_model::{load_default, load_folder, LoadedModel};
use crate::diffusion::tasks::task_for_spec;
use crate::diffusion::{ChatTemplate, Rng, Tokens, MAX_EXTRA_POSITIONS};
use crate::infill::{
    check_fillable, fill_file, fill_native, CausalLm, CausalWriter, DiffusionWriter, FimFormat,
    HoleyFile, InfillError, InfillOptions, Middle, MiddleWriter, NativeOptions,
};

/// The largest file read, in bytes.
const MAX_FILE_BYTES: u64 = 16 << 20;

#[derive(Args, Debug)]
pub struct InfillArgs {
    /// Grammar the filled file must follow (json, smiles, cpp, FILE.lark, schema:PATH).
    #[arg(long, short)]
    grammar: String,
    /// The file with holes.
    file: PathBuf,
    /// Checkpoint folder: a causal FIM model (model_type qwen2, starcoder2, llama, gemma) or
    /// a LLaDA/Dream diffusion model; default: the embedded diffusion model.
    #[arg(long)]
    model: Option<PathBuf>,
    /// tokenizer.json (default: the one in the model folder).
    #[arg(long)]
    tokenizer: Option<PathBuf>,
    /// The text that marks a hole.
    #[arg(long, default_value = "<FILL>")]
    marker: String,
    /// At most this many tokens per hole.
    #[arg(long, default_value_t = 256)]
    max_tokens: usize,
    /// Diffusion models: masked positions shown ahead of each hole's middle; with --native,
    /// each hole's length in tokens (a hole at the end of the file: at most that many).
    #[arg(long, default_value_t = 16)]
    span: usize,
    /// Diffusion models: fill every hole at once, each a span of --span masked positions on
    /// one canvas with the file's text, unmasked in the order the model's sampler chooses
    /// (default: one hole after another, left to right).
    #[arg(long)]
    native: bool,
    /// Sampling temperature; 0 (default) takes the most likely allowed token.
    #[arg(long, default_value_t = 0.0)]
    temperature: f64,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Ignore the grammar while writing (for comparison); --json still tells whether the
    /// filled file is valid.
    #[arg(long)]
    unconstrained: bool,
    /// Compute the whole frontier mask before every token. Default: check the model's own
    /// choice first (one check), draw again without a refused token (up to 8 times), and
    /// compute the mask only then, which draws from the same constrained distribution.
    #[arg(long)]
    eager_masks: bool,
    /// One JSON object: the filled file, its validity, each hole's text and statistics.
    #[arg(long)]
    json: bool,
    /// Compute dtype: f32, f16 or bf16.
    #[arg(long, default_value = "f32")]
    dtype: String,
    /// Run on the first CUDA GPU (needs the `cuda` feature).
    #[arg(long)]
    cuda: bool,
}

/// The model and what a writer needs besides it.
pub(super) enum Loaded {
    Causal {
        model: CausalLm,
        tokens: Tokens,
        format: FimFormat,
    },
    Diffusion {
        loaded: LoadedModel,
        prompt: Vec<u32>,
        ends: Vec<u32>,
    },
}

impl Loaded {
    /// The tokenizer of the loaded model.
    pub(super) fn tokens(&self) -> &Tokens {
        match self {
            Loaded::Causal { tokens, .. } => tokens,
            Loaded::Diffusion { loaded, .. } => &loaded.tokens,
        }
    }

    /// A writer for the middle after `prefix`, with the `later` pieces of the file after it
    /// (a causal model sees them joined by `marker`; a diffusion model sees spans of `span`
    /// masks where the other holes are).
    pub(super) fn writer(
        &self,
        prefix: &str,
        later: &[String],
        marker: &str,
        span: usize,
    ) -> Result<Box<dyn MiddleWriter + '_>, InfillError> {
        Ok(match self {
            Loaded::Causal {
                model,
                tokens,
                format,
            } => {
                let suffix = later.join(marker);
                let (p, s) = (tokens.encode(prefix)?, tokens.encode(&suffix)?);
                Box::new(CausalWriter::new(model, format, &p, &s))
            }
            Loaded::Diffusion {
                loaded,
                prompt,
                ends,
            } => Box::new(DiffusionWriter::new(
                loaded.model.as_ref(),
                &loaded.tokens,
                prompt,
                prefix,
                later,
                span,
                ends.clone(),
            )?),
        })
    }
}

pub fn run(args: InfillArgs) -> Result<bool, String> {
    if args.max_tokens == 0 {
        return Err("--max-tokens must be positive".into());
    }
    if !(args.temperature.is_finite() && args.temperature >= 0.0) {
        return Err(format!(
            "--temperature {}: must be 0 or more",
            args.temperature
        ));
    }
    let file_name = args.file.display().to_string();
    let in_file = |e: InfillError| format!("{file_name}: {e}");
    // The grammar and the file first: bad ones are named before a model is loaded.
    let g = &args.grammar;
    let mut checker = Checker::from_spec(g).map_err(|e| format!("--grammar {g}: {e}"))?;
    let bytes = crate::vocab::read_bounded(&args.file, MAX_FILE_BYTES, "files to fill")
        .map_err(|e| format!("{file_name}: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "{file_name}: not UTF-8 (at byte {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    let holey = HoleyFile::parse(&text, &args.marker).map_err(in_file)?;
    check_fillable(&mut checker, &holey).map_err(in_file)?;

    let loaded = load(&args)?;
    let tokens = loaded.tokens();
    let width = match &loaded {
        Loaded::Causal { model, .. } => model.config().vocab,
        Loaded::Diffusion { loaded, .. } => loaded.model.vocab_size(),
    };
    if tokens.len() > width {
        return Err(format!(
            "the tokenizer has {} ids, the model's logits {width}",
            tokens.len()
        ));
    }
    let ends: Vec<u32> = match &loaded {
        Loaded::Causal { format, .. } => format.ends.clone(),
        Loaded::Diffusion { ends, .. } => ends.clone(),
    };
    checker.set_vocabulary(Arc::new(tokens.vocabulary(&ends, width)));
    if args.native {
        return native(&args, &loaded, &mut checker, &holey, &file_name);
    }
    let options = InfillOptions {
        max_tokens: args.max_tokens,
        temperature: args.temperature,
        constrained: !args.unconstrained,
        lazy: !args.eager_masks,
    };
    let mut writer_for =
        |prefix: &str, later: &[String]| loaded.writer(prefix, later, &args.marker, args.span);
    let mut rng = Rng::new(args.seed);
    let filled = fill_file(
        &mut writer_for,
        tokens,
        &mut checker,
        &holey,
        &options,
        &mut rng,
    )
    .map_err(in_file)?;
    let middles: Vec<Vec<u8>> = filled.iter().map(|(t, _)| t.clone()).collect();
    let out = holey.with_middles(&middles);
    let all_ended = filled.len() == holey.holes() && filled.iter().all(|(_, m)| m.ended);
    let valid = all_ended && checker.accepts(&out);
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let holes: Vec<_> = filled
            .iter()
            .enumerate()
            .map(|(i, (text, m))| hole_record(i, text, m))
            .collect();
        let record = json!({
            "file": file_name,
            "text": String::from_utf8_lossy(&out),
            "valid": valid,
            "holes": holes,
        });
        writeln!(stdout, "{record}").map_err(|e| e.to_string())?;
    } else {
        stdout.write_all(&out).map_err(|e| e.to_string())?;
    }
    if !all_ended {
        let i = filled.len().saturating_sub(1);
        eprintln!(
            "lacuna: {file_name}: hole {i} did not end within --max-tokens {}",
            args.max_tokens
        );
    } else if !valid && !args.unconstrained {
        eprintln!("lacuna: {file_name}: the filled file is not a word of the grammar");
    }
    Ok(valid)
}

/// `--native`: every hole at once by the diffusion model.
fn native(
    args: &InfillArgs,
    loaded: &Loaded,
    checker: &mut Checker,
    holey: &HoleyFile,
    file_name: &str,
) -> Result<bool, String> {
    let Loaded::Diffusion { loaded, prompt, .. } = loaded else {
        return Err(format!("--native: {}", InfillError::NotDiffusion));
    };
    let options = NativeOptions {
        span: args.span,
        seed: args.seed,
        temperature: args.temperature,
        lazy: !args.eager_masks,
        max_extra_positions: MAX_EXTRA_POSITIONS,
        constrained: !args.unconstrained,
    };
    let filled = fill_native(
        loaded.model.as_ref(),
        &loaded.tokens,
        checker,
        prompt,
        holey,
        &options,
    )
    .map_err(|e| format!("{file_name}: {e}"))?;
    let valid = checker.accepts(&filled.text);
    let st = &filled.stats;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let holes: Vec<_> = filled
            .middles
            .iter()
            .zip(&filled.ids)
            .enumerate()
            .map(|(i, (text, ids))| {
                json!({"hole": i, "text": String::from_utf8_lossy(text), "tokens": ids.len()})
            })
            .collect();
        let record = json!({
            "file": file_name,
            "text": String::from_utf8_lossy(&filled.text),
            "valid": valid,
            "native": true,
            "constrained": !args.unconstrained,
            "holes": holes,
            "completion_bytes": st.completion_bytes,
            "extra_positions": st.extra_positions,
            "removed_positions": st.removed_positions,
            "steps": st.steps,
            "masks": st.masks,
            "mask_ms": st.mask_time.as_secs_f64() * 1e3,
            "checks": st.checks,
            "refused": st.rejections,
            "unknown_ids": st.unknown_ids,
            "model_ms": st.model_time.as_secs_f64() * 1e3,
            "checker_ms": st.checker_time.as_secs_f64() * 1e3,
        });
        writeln!(stdout, "{record}").map_err(|e| e.to_string())?;
    } else {
        stdout.write_all(&filled.text).map_err(|e| e.to_string())?;
    }
    if st.fallback {
        eprintln!(
            "lacuna: {file_name}: the grammar's completion wrote {} bytes the model left \
             unwritten",
            st.completion_bytes
        );
    }
    if !valid && !args.unconstrained {
        eprintln!("lacuna: {file_name}: the filled file is not a word of the grammar");
    }
    Ok(valid)
}

fn hole_record(i: usize, text: &[u8], m: &Middle) -> serde_json::Value {
    json!({
        "hole": i,
        "text": String::from_utf8_lossy(text),
        "tokens": m.ids.len(),
        "ended": m.ended,
        "masks": m.masks,
        "mask_ms": m.mask_micros as f64 / 1000.0,
        "checks": m.checks,
        "refused": m.refused,
        "unknown_ids": m.unknown,
    })
}

fn load(args: &InfillArgs) -> Result<Loaded, String> {
    load_model(
        args.model.as_deref(),
        args.tokenizer.as_deref(),
        &args.dtype,
        args.cuda,
        &args.grammar,
    )
}

/// Loads the model of `lacuna infill` (and `eval run` on infilling tasks): a causal FIM
/// checkpoint, a diffusion checkpoint, or the embedded model (`model` None), prompted for the
/// task of `grammar` when it was trained by lacuna.
pub(super) fn load_model(
    model: Option<&std::path::Path>,
    tokenizer: Option<&std::path::Path>,
    dtype: &str,
    cuda: bool,
    grammar: &str,
) -> Result<Loaded, String> {
    let (dtype, device) = super::generate::dtype_and_device(dtype, cuda)?;
    let s = |e: crate::diffusion::DiffusionError| e.to_string();
    let Some(dir) = model else {
        let loaded = load_default(dtype, &device).map_err(s)?;
        return diffusion(grammar, loaded);
    };
    let model_type = crate::diffusion::checkpoint::model_type(dir).map_err(s)?;
    match model_type.to_ascii_lowercase().as_str() {
        "llada" | "dream" => {
            let loaded = load_folder(dir, tokenizer, dtype, &device).map_err(s)?;
            diffusion(grammar, loaded)
        }
        _ => {
            let model = CausalLm::load(dir, dtype, &device).map_err(s)?;
            let tok_path = tokenizer
                .map(std::path::Path::to_path_buf)
                .unwrap_or_else(|| dir.join("tokenizer.json"));
            let tokens = Tokens::load_causal(&tok_path).map_err(s)?;
            let format =
                FimFormat::for_family(model.config().family, dir, |name| tokens.token_id(name))
                    .map_err(s)?;
            Ok(Loaded::Causal {
                model,
                tokens,
                format,
            })
        }
    }
}

/// A diffusion model's prompt (the grammar's task, for models trained by lacuna; else none)
/// and the ids that end a middle (its end of text and end of turn).
fn diffusion(grammar: &str, loaded: LoadedModel) -> Result<Loaded, String> {
    let task = match &loaded.card {
        Some(card) => task_for_spec(grammar)
            .map_err(|e| format!("--grammar {grammar}: {e}"))?
            .and_then(|(name, prompt)| card.tasks.get(name).map(|_| prompt)),
        None => None,
    };
    let prompt = loaded
        .tokens
        .encode(task.as_deref().unwrap_or(""))
        .map_err(|e| e.to_string())?;
    let template = ChatTemplate::for_family(loaded.model.family());
    let mut ends = vec![loaded.model.eos_token_id()];
    ends.extend(loaded.tokens.token_id(template.end_of_turn()));
    Ok(Loaded::Diffusion {
        loaded,
        prompt,
        ends,
    })
}
