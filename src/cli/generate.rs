//! `lacuna generate --grammar SPEC`: generates with a masked diffusion model — the embedded
//! default model unless `--model DIR` names a LLaDA or Dream checkpoint — under the grammar.
//! With the default model (or any model trained by `lacuna train`) the prompt and the length
//! come from the task the grammar names. Prints each output (or, with `--json`, one JSON
//! object per output with its statistics); a progress bar on stderr for several outputs.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use candle_core::{DType, Device};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::checker::Checker;
use crate::diffusion::default_model::{load_default, load_folder, LoadedModel};
use crate::diffusion::tasks::{default_block, task_for_spec};
use crate::diffusion::{
    generate, generate_masked, ChatTemplate, Constraint, DreamAlg, DreamSampler, Family,
    GenerateOptions, Generation, LLaDASampler, MaskConstraint, Remasking, Sampler, TokenTable,
};
use crate::grammar::schema::SchemaOptions;

#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// Grammar the output must follow (json, smiles, cpp, FILE.lark, schema:PATH; +fence).
    #[arg(long, short, value_parser = Utf8Arg)]
    grammar: Option<String>,
    /// Checkpoint folder (config.json, *.safetensors, tokenizer.json); default: the
    /// embedded model.
    #[arg(long)]
    model: Option<PathBuf>,
    /// tokenizer.json (default: the one in the model folder).
    #[arg(long)]
    tokenizer: Option<PathBuf>,
    /// The prompt (a user turn with --chat, else raw text); default: the prompt of the
    /// grammar's task, for models trained by lacuna.
    #[arg(long, value_parser = Utf8Arg)]
    prompt: Option<String>,
    /// Number of outputs (seeds seed, seed+1, ...).
    #[arg(short = 'n', long, default_value_t = 1)]
    count: usize,
    /// Generated positions; default: the task's length, else 128.
    #[arg(long, alias = "gen-length")]
    length: Option<usize>,
    /// Denoising steps, at most one per generated position; default: one per position.
    #[arg(long)]
    steps: Option<usize>,
    /// LLaDA: semi-autoregressive block length; default: the largest of 32, 16 and 8 that
    /// divides the length into two blocks or more, else the whole length.
    #[arg(long, alias = "block-length")]
    block: Option<usize>,
    /// Sampling temperature; default: 1 for models trained by lacuna, else 0 (greedy).
    #[arg(long)]
    temperature: Option<f64>,
    /// Which positions to unmask first. LLaDA: low_confidence (default) or random; Dream:
    /// entropy (default), origin, maskgit_plus or topk_margin.
    #[arg(long)]
    alg: Option<String>,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Ignore the grammar while generating (for comparison); --json still tells whether
    /// each output is valid.
    #[arg(long)]
    unconstrained: bool,
    /// How the grammar steers: `mask-lazy` (default) draws every token from its position's
    /// valid-token mask, computed only when the model's first choices there are refused
    /// (its 8 best, checked one by one; positions are ranked by the model alone); `mask`
    /// computes every candidate's mask before the sampler ranks positions (slower: every
    /// masked position of the block, every step); `reject` checks the sampler's proposals one by one and finishes with the
    /// grammar's completion after --max-resamples rejections (the paper's method).
    #[arg(long, value_enum, default_value_t = ConstraintMode::MaskLazy)]
    constraint: ConstraintMode,
    /// JSON Schema grammars: steer by the schema's whole language. By default the model
    /// writes a subset of it: objects that name their members take no others unless
    /// `additionalProperties` says so, and number exponents have at most two digits (`1e400`
    /// is JSON, but parsers read it as infinity or refuse it). --unconstrained always judges
    /// by the whole language.
    #[arg(long)]
    whole_schema: bool,
    /// One JSON object per output: text, validity, ids and statistics.
    #[arg(long)]
    json: bool,
    /// Wrap the prompt in the family's chat template.
    #[arg(long)]
    chat: bool,
    /// System prompt for --chat.
    #[arg(long, value_parser = Utf8Arg)]
    system: Option<String>,
    /// Start of the answer, after the prompt (e.g. "```json\n").
    #[arg(long, default_value = "", value_parser = Utf8Arg)]
    prefill: String,
    /// Fixed start of the output, which the grammar reads together with what the model
    /// writes: a C++ function's declaration up to its body's `{`, which the embedded model's
    /// `cpp` task answers with the body. The model sees it after the prompt (and --prefill);
    /// it is printed with the output.
    #[arg(long, default_value = "", value_parser = Utf8Arg)]
    prefix: String,
    /// LLaDA: classifier-free guidance scale.
    #[arg(long, default_value_t = 0.0)]
    cfg_scale: f64,
    /// Dream: temperature of the unmasking order.
    #[arg(long, default_value_t = 0.0)]
    alg_temp: f64,
    #[arg(long, default_value_t = 1e-3)]
    eps: f64,
    #[arg(long)]
    top_p: Option<f64>,
    #[arg(long)]
    top_k: Option<usize>,
    /// Rejections after which an output is finished by the grammar's completion.
    #[arg(long, default_value_t = 100)]
    max_resamples: u64,
    /// Rejections after which a position is left to the grammar's completion.
    #[arg(long, default_value_t = 20)]
    max_rejections_per_position: usize,
    /// Compute dtype: f32, f16 or bf16.
    #[arg(long, default_value = "f32")]
    dtype: String,
    /// Run on the first CUDA GPU (needs the `cuda` feature).
    #[arg(long)]
    cuda: bool,
}

/// A text argument read as given on the command line, so that one that is not UTF-8 is a
/// usage error naming the argument (clap's own message for `String` arguments names none).
#[derive(Clone, Copy, Debug)]
struct Utf8Arg;

impl clap::builder::TypedValueParser for Utf8Arg {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        value.to_str().map(str::to_string).ok_or_else(|| {
            let name = arg.map_or_else(|| "an argument".to_string(), |a| format!("'{a}'"));
            let lossy = value.to_string_lossy();
            let shown: String = lossy.chars().take(40).collect();
            clap::Error::raw(
                clap::error::ErrorKind::InvalidUtf8,
                format!("invalid value for {name}: not valid UTF-8 ({shown:?})\n"),
            )
            .with_cmd(cmd)
        })
    }
}

/// How a grammar steers generation.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstraintMode {
    Mask,
    MaskLazy,
    Reject,
}

impl ConstraintMode {
    fn name(self) -> &'static str {
        match self {
            ConstraintMode::Mask => "mask",
            ConstraintMode::MaskLazy => "mask-lazy",
            ConstraintMode::Reject => "reject",
        }
    }
}

/// What the run settled on, from the arguments and the model's card.
struct Plan {
    /// The prompt's ids, ending with the prefix's.
    prompt: Vec<u32>,
    /// The ids of --prefix, encoded on its own (as the model was taught a declaration).
    prefix: Vec<u32>,
    length: usize,
    steps: usize,
    block: usize,
    temperature: f64,
}

pub fn run(args: GenerateArgs) -> Result<bool, String> {
    let s = |e: crate::diffusion::DiffusionError| e.to_string();
    // The grammar first: a bad one is named before the model is loaded.
    let mut checker = match &args.grammar {
        Some(g) => Some(generation_checker(g, &args).map_err(|e| format!("--grammar {g}: {e}"))?),
        None => None,
    };
    let loaded = load(&args)?;
    let plan = plan(&args, &loaded)?;
    let model = loaded.model.as_ref();
    // The sampler's settings are checked once, not once per output.
    sampler(&args, &plan, model.family())?
        .begin(plan.prompt.len(), plan.length)
        .map_err(s)?;
    let template = ChatTemplate::for_family(model.family());
    let mut eos = vec![model.eos_token_id()];
    eos.extend(loaded.tokens.token_id(template.end_of_turn()));
    let table = TokenTable::from_tokens(&loaded.tokens, &eos);
    let masking = !args.unconstrained && args.constraint != ConstraintMode::Reject;
    if let (true, Some(c)) = (masking, checker.as_mut()) {
        let vocab = loaded.tokens.vocabulary(&eos, model.vocab_size());
        c.set_vocabulary(Arc::new(vocab));
    }
    let bar = progress(args.count);
    let mut stdout = std::io::stdout().lock();
    let mut failed = 0;
    for i in 0..args.count {
        let seed = args.seed.wrapping_add(i as u64);
        let mut sampler = sampler(&args, &plan, model.family())?;
        let mut options = GenerateOptions::new(plan.length, seed);
        options.max_resamples = args.max_resamples;
        options.max_rejections_per_position = args.max_rejections_per_position;
        options.stop_when_settled = true;
        let out = match checker.as_mut() {
            Some(c) if masking => {
                let mut constraint = MaskConstraint::with_prefix(c, &plan.prefix, plan.length)
                    .map_err(|e| format!("--prefix: {e}"))?;
                if args.constraint == ConstraintMode::MaskLazy {
                    constraint = constraint.lazy();
                }
                generate_masked(
                    model,
                    sampler.as_mut(),
                    &plan.prompt,
                    &options,
                    &mut constraint,
                )
            }
            Some(c) if !args.unconstrained => {
                let mut constraint =
                    Constraint::with_prefix(c, &table, args.prefix.as_bytes(), plan.length);
                generate(
                    model,
                    sampler.as_mut(),
                    &table,
                    &plan.prompt,
                    &options,
                    Some(&mut constraint),
                )
            }
            _ => generate(
                model,
                sampler.as_mut(),
                &table,
                &plan.prompt,
                &options,
                None,
            ),
        }
        .map_err(s);
        // One failed output (a completion over budget, say) is reported in its record and the
        // run goes on; the exit status says that one failed.
        let line = match out {
            Ok(mut out) => {
                if !args.prefix.is_empty() {
                    out.text.splice(0..0, args.prefix.bytes());
                }
                let valid = checker.as_mut().map(|c| c.accepts(&out.text));
                render(&args, i, seed, &out, valid)
            }
            Err(e) => {
                failed += 1;
                if args.json {
                    json!({"seed": seed, "error": e}).to_string()
                } else {
                    bar.suspend(|| eprintln!("lacuna: output {} (seed {seed}): {e}", i + 1));
                    bar.inc(1);
                    continue;
                }
            }
        };
        bar.suspend(|| writeln!(stdout, "{line}").map_err(|e| e.to_string()))?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(failed == 0)
}

/// The compute dtype and device of `--dtype` and `--cuda`.
pub(super) fn dtype_and_device(dtype: &str, cuda: bool) -> Result<(DType, Device), String> {
    let dtype = match dtype {
        "f32" => DType::F32,
        "f16" => DType::F16,
        "bf16" => DType::BF16,
        d => return Err(format!("--dtype {d}: expected f32, f16 or bf16")),
    };
    let device = if cuda {
        Device::new_cuda(0).map_err(|e| format!("--cuda: {e}"))?
    } else {
        Device::Cpu
    };
    Ok((dtype, device))
}

fn load(args: &GenerateArgs) -> Result<LoadedModel, String> {
    let (dtype, device) = dtype_and_device(&args.dtype, args.cuda)?;
    match &args.model {
        Some(dir) => load_folder(dir, args.tokenizer.as_deref(), dtype, &device),
        None => load_default(dtype, &device),
    }
    .map_err(|e| e.to_string())
}

/// The checker of `spec` for generating: a JSON Schema compiled for generation
/// ([`SchemaOptions::for_generation`]) unless --whole-schema or --unconstrained (whose outputs
/// are judged by the schema's own language).
fn generation_checker(spec: &str, args: &GenerateArgs) -> Result<Checker, String> {
    let options = if args.whole_schema || args.unconstrained {
        SchemaOptions::default()
    } else {
        SchemaOptions::for_generation()
    };
    Checker::from_spec_with(spec, &options).map_err(|e| e.to_string())
}

/// Prompt, length and schedule: explicit arguments first, then the task of the grammar in
/// the model's card, then general defaults.
fn plan(args: &GenerateArgs, loaded: &LoadedModel) -> Result<Plan, String> {
    let task = match (&args.grammar, &loaded.card) {
        (Some(g), Some(card)) => task_for_spec(g)
            .map_err(|e| format!("--grammar {g}: {e}"))?
            .and_then(|(name, prompt)| card.tasks.get(name).map(|info| (prompt, info.length))),
        _ => None,
    };
    let prompt_text = match (&args.prompt, &task) {
        (Some(p), _) => p.clone(),
        (None, Some((p, _))) => p.clone(),
        (None, None) => {
            return Err(format!(
                "--prompt is needed: {} has no task for {}",
                loaded.source.display(),
                args.grammar
                    .as_deref()
                    .map_or("output without --grammar".into(), |g| {
                        format!("--grammar {g}")
                    })
            ))
        }
    };
    let template = ChatTemplate::for_family(loaded.model.family());
    let text = if args.chat {
        template.render(args.system.as_deref(), &prompt_text, &args.prefill)
    } else {
        format!("{prompt_text}{}", args.prefill)
    };
    let mut prompt = loaded.tokens.encode(&text).map_err(|e| e.to_string())?;
    let prefix = loaded
        .tokens
        .encode(&args.prefix)
        .map_err(|e| format!("--prefix: {e}"))?;
    prompt.extend_from_slice(&prefix);
    let length = args.length.or(task.map(|(_, l)| l)).unwrap_or(128);
    if length == 0 {
        return Err("--length must be positive".into());
    }
    if let Some(room) = loaded.model.max_positions() {
        if prompt.len().saturating_add(length) > room {
            return Err(format!(
                "--length {length}: the prompt ({} tokens) and {length} generated positions do \
                 not fit {}'s context of {room} positions",
                prompt.len(),
                loaded.source.display()
            ));
        }
    }
    let steps = args.steps.unwrap_or(length);
    if steps == 0 || steps > length {
        return Err(format!(
            "--steps {steps}: must be from 1 to --length {length} (a step unmasks at least one \
             position)"
        ));
    }
    let block = args.block.unwrap_or_else(|| default_block(length));
    let temperature = args
        .temperature
        .unwrap_or(if loaded.card.is_some() { 1.0 } else { 0.0 });
    Ok(Plan {
        prompt,
        prefix,
        length,
        steps,
        block,
        temperature,
    })
}

fn sampler(args: &GenerateArgs, plan: &Plan, family: Family) -> Result<Box<dyn Sampler>, String> {
    Ok(match family {
        Family::LLaDA => {
            let remasking = match args.alg.as_deref().unwrap_or("low_confidence") {
                "low_confidence" => Remasking::LowConfidence,
                "random" => Remasking::Random,
                r => {
                    return Err(format!(
                        "--alg {r}: LLaDA models take low_confidence or random"
                    ))
                }
            };
            Box::new(
                LLaDASampler::new(plan.steps, plan.block)
                    .temperature(plan.temperature)
                    .cfg_scale(args.cfg_scale)
                    .remasking(remasking),
            )
        }
        Family::Dream => {
            let alg = args.alg.as_deref().unwrap_or("entropy");
            let mut d = DreamSampler::new(plan.steps)
                .alg(alg.parse::<DreamAlg>().map_err(|e| e.to_string())?)
                .alg_temp(args.alg_temp)
                .eps(args.eps)
                .temperature(plan.temperature);
            d.top_p = args.top_p;
            d.top_k = args.top_k;
            Box::new(d)
        }
    })
}

/// One output as printed: the text (with a note on stderr when the grammar's completion
/// finished it), or a JSON object with `--json`.
fn render(
    args: &GenerateArgs,
    i: usize,
    seed: u64,
    out: &Generation,
    valid: Option<bool>,
) -> String {
    let text = String::from_utf8_lossy(&out.text);
    let st = &out.stats;
    if !args.json {
        if st.fallback {
            eprintln!(
                "lacuna: output {} was finished by the grammar's completion ({} rejections, \
                 {} positions left masked, {} empty masks, {} bytes written by the completion)",
                i + 1,
                st.rejections,
                st.unfilled,
                st.empty_masks,
                st.completion_bytes
            );
        }
        return text.into_owned();
    }
    json!({
        "text": text,
        "valid": valid,
        "constrained": args.grammar.is_some() && !args.unconstrained,
        "mode": match (&args.grammar, args.unconstrained) {
            (Some(_), false) => args.constraint.name(),
            _ => "unconstrained",
        },
        "seed": seed,
        "ids": out.ids,
        "stats": {
            "forward_passes": st.forward_passes,
            "steps": st.steps,
            "checks": st.checks,
            "rejections": st.rejections,
            "model_ms": st.model_time.as_secs_f64() * 1e3,
            "checker_ms": st.checker_time.as_secs_f64() * 1e3,
            "sampler_ms": st.sampler_time.as_secs_f64() * 1e3,
            "fallback": st.fallback,
            "gave_up": st.gave_up,
            "unfilled": st.unfilled,
            "completion_bytes": st.completion_bytes,
            "extra_positions": st.extra_positions,
            "removed_positions": st.removed_positions,
            "spelled_tokens": st.spelled_tokens,
            "masks": st.masks,
            "mask_ms": st.mask_time.as_secs_f64() * 1e3,
            "unknown_ids": st.unknown_ids,
            "empty_masks": st.empty_masks,
        }
    })
    .to_string()
}

fn progress(count: usize) -> ProgressBar {
    if count < 2 || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(count as u64);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} outputs ({eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        args: GenerateArgs,
    }

    fn parse(args: &[&str]) -> GenerateArgs {
        let mut all = vec!["generate"];
        all.extend_from_slice(args);
        Cmd::try_parse_from(all).unwrap().args
    }

    #[test]
    fn a_prompt_that_is_not_utf8_is_a_usage_error_naming_it() {
        use std::os::unix::ffi::OsStringExt;
        let argv = [
            "generate".into(),
            "--prompt".into(),
            std::ffi::OsString::from_vec(vec![0xff, 0xfe]),
        ];
        let e = Cmd::try_parse_from(argv).err().unwrap();
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidUtf8);
        assert!(e.to_string().contains("'--prompt <PROMPT>'"), "{e}");
        assert_eq!(parse(&["--prompt", "é"]).prompt.as_deref(), Some("é"));
    }

    #[test]
    fn steps_are_bounded_by_the_length_before_any_schedule() {
        let loaded = load_default(DType::F32, &Device::Cpu).unwrap();
        let args = parse(&["--grammar", "smiles", "--steps", "18446744073709551615"]);
        let e = plan(&args, &loaded).err().unwrap();
        assert!(e.starts_with("--steps 18446744073709551615:"), "{e}");
        let e = plan(&parse(&["--grammar", "smiles", "--steps", "0"]), &loaded)
            .err()
            .unwrap();
        assert!(e.starts_with("--steps 0:"), "{e}");
        let p = plan(&parse(&["--grammar", "smiles", "--steps", "8"]), &loaded).unwrap();
        assert_eq!((p.steps, p.length), (8, 40));
    }
}
