//! The `lacuna` command: one file per subcommand, this file only dispatches.

mod check;
mod checkers;
mod eval;
mod generate;
mod grammar;
mod infill;
mod mask;
mod train;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Grammar-constrained decoding for diffusion and infilling language models.
#[derive(Parser, Debug)]
#[command(name = "lacuna", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check canvases (JSON lines) for completability; print verdicts (JSON lines).
    Check(check::CheckArgs),
    /// Valid-token masks of token canvases (JSON lines) over a tokenizer's vocabulary.
    Mask(mask::MaskArgs),
    /// Generate with a LLaDA or Dream checkpoint, under a grammar if one is given.
    Generate(Box<generate::GenerateArgs>),
    /// Fill the holes of a file (`<FILL>` markers) under a grammar, with the embedded model or
    /// a fill-in-the-middle or diffusion checkpoint.
    Infill(Box<infill::InfillArgs>),
    /// Train a small masked diffusion model (LLaDA layout) and its tokenizer.
    Train(train::TrainArgs),
    /// The research harness: prepare tasks, run a model, score, make the paper's tables.
    #[command(subcommand)]
    Eval(eval::EvalCommand),
    /// Inspect grammars: sizes before and after normalization, rules.
    #[command(subcommand)]
    Grammar(grammar::GrammarCommand),
}

/// Runs the command line; errors go to stderr and exit with status 1 (2 for usage errors).
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => check::run(args),
        Command::Mask(args) => mask::run(args),
        Command::Generate(args) => generate::run(*args),
        Command::Infill(args) => infill::run(*args),
        Command::Train(args) => train::run(args),
        Command::Eval(cmd) => eval::run(cmd),
        Command::Grammar(cmd) => grammar::run(cmd).map(|()| true).map_err(|e| e.to_string()),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("lacuna: {e}");
            ExitCode::FAILURE
        }
    }
}
