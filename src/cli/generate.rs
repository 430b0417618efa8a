//! `lacuna generate --model DIR [--grammar SPEC] --prompt TEXT ...`: runs a LLaDA or Dream
//! checkpoint (with `DIR/tokenizer.json`) with the family's sampler, under the grammar if one is
//! given, and prints one JSON object: the output text, the generated ids and the statistics.

use std::path::PathBuf;

use candle_core::{DType, Device};
use clap::Args;
use serde_json::json;

use crate::checker::Checker;
use crate::diffusion::{
    self, generate, ChatTemplate, Constraint, DreamAlg, DreamSampler, Family, GenerateOptions,
    LLaDASampler, Remasking, Sampler, TokenTable, Tokens,
};

#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// Checkpoint folder: config.json, *.safetensors.
    #[arg(long)]
    model: PathBuf,
    /// tokenizer.json (default: the one in the model folder).
    #[arg(long)]
    tokenizer: Option<PathBuf>,
    /// Grammar the output must follow (json, smiles, cpp, FILE.lark, schema:PATH; +fence).
    #[arg(long, short)]
    grammar: Option<String>,
    /// The prompt (a user turn with --chat, else raw text).
    #[arg(long)]
    prompt: String,
    /// Wrap the prompt in the family's chat template.
    #[arg(long)]
    chat: bool,
    /// System prompt for --chat.
    #[arg(long)]
    system: Option<String>,
    /// Start of the answer, after the prompt (e.g. "```json\n").
    #[arg(long, default_value = "")]
    prefill: String,
    #[arg(long, default_value_t = 128)]
    gen_length: usize,
    #[arg(long, default_value_t = 64)]
    steps: usize,
    /// LLaDA: semi-autoregressive block length (default: gen_length).
    #[arg(long)]
    block_length: Option<usize>,
    #[arg(long, default_value_t = 0.0)]
    temperature: f64,
    /// LLaDA: classifier-free guidance scale.
    #[arg(long, default_value_t = 0.0)]
    cfg_scale: f64,
    /// LLaDA: low_confidence or random.
    #[arg(long, default_value = "low_confidence")]
    remasking: String,
    /// Dream: origin, maskgit_plus, topk_margin or entropy.
    #[arg(long, default_value = "entropy")]
    alg: String,
    #[arg(long, default_value_t = 0.0)]
    alg_temp: f64,
    #[arg(long, default_value_t = 1e-3)]
    eps: f64,
    #[arg(long)]
    top_p: Option<f64>,
    #[arg(long)]
    top_k: Option<usize>,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long, default_value_t = 100)]
    max_resamples: u64,
    /// Compute dtype: f32, f16 or bf16.
    #[arg(long, default_value = "f32")]
    dtype: String,
    /// Run on the first CUDA GPU (needs the `cuda` feature).
    #[arg(long)]
    cuda: bool,
}

pub fn run(args: GenerateArgs) -> Result<bool, String> {
    let s = |e: diffusion::DiffusionError| e.to_string();
    let dtype = match args.dtype.as_str() {
        "f32" => DType::F32,
        "f16" => DType::F16,
        "bf16" => DType::BF16,
        d => return Err(format!("--dtype {d}: expected f32, f16 or bf16")),
    };
    let device = if args.cuda {
        Device::new_cuda(0).map_err(|e| format!("--cuda: {e}"))?
    } else {
        Device::Cpu
    };
    let model = diffusion::load(&args.model, dtype, &device).map_err(s)?;
    let tok_path = args
        .tokenizer
        .clone()
        .unwrap_or_else(|| args.model.join("tokenizer.json"));
    let tokens = Tokens::load_with_mask(&tok_path, None).map_err(s)?;
    if tokens.mask_id() != model.mask_token_id() {
        return Err(format!(
            "{}: mask token id {} differs from the model's mask_token_id {}",
            tok_path.display(),
            tokens.mask_id(),
            model.mask_token_id()
        ));
    }
    let template = ChatTemplate::for_family(model.family());
    let text = if args.chat {
        template.render(args.system.as_deref(), &args.prompt, &args.prefill)
    } else {
        format!("{}{}", args.prompt, args.prefill)
    };
    let prompt = tokens.encode(&text).map_err(s)?;
    let mut eos = vec![model.eos_token_id()];
    eos.extend(tokens.token_id(template.end_of_turn()));
    let table = TokenTable::from_tokens(&tokens, &eos);
    let mut sampler: Box<dyn Sampler> = match model.family() {
        Family::LLaDA => {
            let remasking = match args.remasking.as_str() {
                "low_confidence" => Remasking::LowConfidence,
                "random" => Remasking::Random,
                r => {
                    return Err(format!(
                        "--remasking {r}: expected low_confidence or random"
                    ))
                }
            };
            Box::new(
                LLaDASampler::new(args.steps, args.block_length.unwrap_or(args.gen_length))
                    .temperature(args.temperature)
                    .cfg_scale(args.cfg_scale)
                    .remasking(remasking),
            )
        }
        Family::Dream => {
            let mut d = DreamSampler::new(args.steps)
                .alg(args.alg.parse::<DreamAlg>().map_err(s)?)
                .alg_temp(args.alg_temp)
                .eps(args.eps)
                .temperature(args.temperature);
            d.top_p = args.top_p;
            d.top_k = args.top_k;
            Box::new(d)
        }
    };
    let mut options = GenerateOptions::new(args.gen_length, args.seed);
    options.max_resamples = args.max_resamples;
    let mut checker = match &args.grammar {
        Some(g) => Some(Checker::from_spec(g).map_err(|e| format!("--grammar {g}: {e}"))?),
        None => None,
    };
    let mut constraint = checker
        .as_mut()
        .map(|c| Constraint::new(c, &table, args.gen_length));
    let out = generate(
        model.as_ref(),
        sampler.as_mut(),
        &table,
        &prompt,
        &options,
        constraint.as_mut(),
    )
    .map_err(s)?;
    let st = out.stats;
    let line = json!({
        "text": String::from_utf8_lossy(&out.text),
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
        }
    });
    println!("{line}");
    Ok(true)
}
