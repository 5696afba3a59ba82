//! `eligibility evaluator`: run a stream worker ([`crate::evaluator`]); configuration from
//! `ELIGIBILITY_*` (docs/configuration.md).

use std::process::ExitCode;

use anyhow::Result;
use clap::Args as ClapArgs;
use fleet::config::WorkerArgs;

use super::setup::{runtime, warn_unknown};

#[derive(ClapArgs)]
pub struct EvaluatorArgs {
    /// Most records in one micro-batch. A batch of a quiet stream closes as soon as the stream
    /// pauses, so it grows toward this only while records queue: a bigger batch then spreads
    /// each batch's fixed costs (a PostgreSQL transaction, its produce requests, handing its
    /// work to the thread pool) over more records.
    #[arg(long, default_value_t = 2000)]
    pub max_batch: usize,
    /// Longest wait, in milliseconds, to fill a micro-batch. On a busy stream (the batch before
    /// took 64 records or more) a batch fills for this long after its first record; on a quiet
    /// one it closes after 1 ms without a record (docs/fleet.md "One micro-batch").
    #[arg(long, default_value_t = 30)]
    pub max_wait_ms: u64,
    #[command(flatten)]
    pub worker: WorkerArgs,
}

pub fn run(args: EvaluatorArgs) -> Result<ExitCode> {
    let config = args.worker.config()?;
    fleet::init_tracing(&config.log);
    warn_unknown(&[]);
    let bounds = fleet::worker::BatchBounds {
        max_records: args.max_batch.max(1),
        max_wait: std::time::Duration::from_millis(args.max_wait_ms),
    };
    runtime()?.block_on(async {
        let (shutdown, _trigger) = fleet::shutdown::Shutdown::on_signals();
        crate::evaluator::run(config, shutdown, bounds).await
    })?;
    Ok(ExitCode::SUCCESS)
}
