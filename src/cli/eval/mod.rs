//! `lacuna eval`: the research harness, in four stages that talk through JSON-lines files —
//! `prepare` (task files from local data), `run` (one model over a task file, per mode and
//! seed), `score` (lacuna's grammar and the independent tools, for Con.⁻ and Con.) and
//! `tables` (the paper's layout, with intervals over seeds). Generation can run on a GPU
//! machine and scoring anywhere; `eval/README.md` has the formats and how to run each table.

mod oracles;
mod prepare;
mod records;
mod run;
mod run_mri;
mod score;
mod tables;

use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum EvalCommand {
    /// Write the task files (DLM C++, JSON, SMILES; MRI and MRI-L) and MANIFEST.json.
    Prepare(prepare::PrepareArgs),
    /// Generate: one model over one task file (DLM or infilling), one result file per mode
    /// and seed.
    Run(Box<run::RunArgs>),
    /// Score result files: grammar, independent tools, functional tests.
    Score(score::ScoreArgs),
    /// Tables from scored files: correctness (Table 2) and cost (Table 4), Markdown and CSV.
    Tables(tables::TablesArgs),
}

pub fn run(cmd: EvalCommand) -> Result<bool, String> {
    match cmd {
        EvalCommand::Prepare(args) => prepare::run(args),
        EvalCommand::Run(args) => run::run(*args),
        EvalCommand::Score(args) => score::run(args),
        EvalCommand::Tables(args) => tables::run(args),
    }
}
