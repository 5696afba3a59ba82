//! `eligibility oracle --testset FILE | --case FILE`.

use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
#[group(required = true, multiple = false)]
pub struct Args {
    /// An NDJSON test set: one line per case and a summary; exit 1 if any verdict disagrees.
    #[arg(long)]
    testset: Option<PathBuf>,
    /// One case (JSON): print its full report.
    #[arg(long)]
    case: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let read = |p: &PathBuf| {
        std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))
    };
    if let Some(path) = &args.testset {
        let outcome = oracle::run_testset(&read(path)?);
        for entry in &outcome.entries {
            println!("{entry}");
        }
        println!("{}", outcome.summary);
        return Ok(if outcome.summary.is_clean() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    if let Some(path) = &args.case {
        let case = match oracle::Case::from_json(&read(path)?) {
            Ok(case) => case,
            Err(e) => bail!("{} is not a valid case: {e}", path.display()),
        };
        println!("{}", serde_json::to_string_pretty(&oracle::check(&case))?);
        return Ok(ExitCode::SUCCESS);
    }
    unreachable!("clap requires one of --testset and --case")
}
