//! `eligibility screener study`: how many questions the web pages' adaptive screener asks
//! synthetic citizens before no answer can change a verdict, against a form asking every
//! catalogue field (docs/web.md, "The screener").

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use engine::Catalogue;

use super::setup::parse_as_of;
use crate::rules::source::load;
use crate::screening;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Screen synthetic citizens, answering each question from their whole profile (a field
    /// the profile lacks is skipped), and report the questions asked.
    Study(StudyArgs),
}

#[derive(clap::Args)]
pub struct StudyArgs {
    /// How many synthetic citizens.
    #[arg(long, default_value_t = 1000)]
    citizens: usize,
    /// The synthetic population's seed.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// A directory of rule YAML files; default: the bundled corpus.
    #[arg(long)]
    rules: Option<PathBuf>,
    /// The screening date (YYYY-MM-DD); default: today (UTC).
    #[arg(long)]
    as_of: Option<String>,
}

pub fn run(command: Command) -> Result<ExitCode> {
    let Command::Study(args) = command;
    let catalogue = Catalogue::bundled();
    let rules = load(&catalogue, args.rules.as_deref())?;
    let as_of = parse_as_of(args.as_of.as_deref())?;
    let mut citizens = synth::citizens::Citizens::new(synth::citizens::CitizenSpec {
        seed: args.seed,
        missing_rate: 0.05,
        schemes: 0,
    });
    let people: Vec<_> = (0..args.citizens)
        .map(|_| citizens.next_profile())
        .collect();
    let started = Instant::now();
    let study = screening::study(&catalogue, &rules, &people, as_of);
    println!(
        "{} synthetic citizens (seed {}), {} rule versions, as of {as_of}",
        study.citizens,
        args.seed,
        rules.rules.len()
    );
    println!(
        "questions asked by the adaptive screener: mean {:.1}, median {}, 90th percentile {}, most {}",
        study.mean(),
        study.quantile(0.5),
        study.quantile(0.9),
        study.quantile(1.0)
    );
    println!(
        "questions a form asking every catalogue field asks: {} ({:.1}x the screener's mean)",
        study.every_question,
        study.every_question as f64 / study.mean().max(1.0)
    );
    println!(
        "citizens whose ELIGIBLE schemes differ from their whole profile's: {}",
        study.unstable
    );
    println!(
        "citizens for whom a scheme they cannot get is a partial match on one and not the other: {}",
        study.partial_differs
    );
    println!("took {:.1} s", started.elapsed().as_secs_f64());
    Ok(if study.unstable == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
