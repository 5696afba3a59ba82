//! `eligibility replay`: re-read a range of an input topic through the evaluator's pipeline
//! ([`crate::replay`]), for backfills.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args as ClapArgs;
use engine::Date;
use fleet::config::WorkerArgs;

use super::setup::runtime;
use crate::replay::Range;

#[derive(ClapArgs)]
pub struct Args {
    /// An evaluator input topic.
    #[arg(long)]
    pub topic: String,
    /// Partitions to replay (default: all of the topic's).
    #[arg(long, value_delimiter = ',')]
    pub partitions: Vec<i32>,
    /// First offset, in every chosen partition.
    #[arg(long, conflicts_with = "from_date")]
    pub from_offset: Option<i64>,
    /// Stop before this offset (default: the end of each partition when the replay starts).
    #[arg(long, conflicts_with = "to_date")]
    pub to_offset: Option<i64>,
    /// First record timestamp, a UTC date (YYYY-MM-DD).
    #[arg(long)]
    pub from_date: Option<String>,
    /// Stop at records timestamped on or after this UTC date.
    #[arg(long)]
    pub to_date: Option<String>,
    /// Records per micro-batch.
    #[arg(long, default_value_t = 500)]
    pub batch: usize,
    #[command(flatten)]
    pub worker: WorkerArgs,
}

fn day(text: Option<String>, flag: &str) -> Result<Option<Date>> {
    text.map(|t| Date::parse(&t).with_context(|| format!("{flag} {t:?} is not YYYY-MM-DD")))
        .transpose()
}

pub fn run(args: Args) -> Result<ExitCode> {
    let config = args.worker.config()?;
    fleet::init_tracing(&config.log);
    let range = Range {
        topic: args.topic,
        partitions: args.partitions,
        from_offset: args.from_offset,
        to_offset: args.to_offset,
        from_date: day(args.from_date, "--from-date")?,
        to_date: day(args.to_date, "--to-date")?,
        batch: args.batch.max(1),
    };
    runtime()?.block_on(crate::replay::run(config, range))?;
    Ok(ExitCode::SUCCESS)
}
