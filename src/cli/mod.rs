//! The `lacuna` command: one file per subcommand, this file only dispatches.

mod grammar;

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
    /// Inspect grammars: sizes before and after normalization, rules.
    #[command(subcommand)]
    Grammar(grammar::GrammarCommand),
}

/// Runs the command line; errors go to stderr and exit with status 1 (2 for usage errors).
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Grammar(cmd) => grammar::run(cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lacuna: {e}");
            ExitCode::FAILURE
        }
    }
}
