//! `eligibility explainer`: run an explanation worker ([`crate::explainer`]); configuration from
//! `ELIGIBILITY_*` (docs/configuration.md).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args as ClapArgs;
use fleet::config::WorkerArgs;

use super::setup::{runtime, warn_unknown};
use crate::explainer;

#[derive(ClapArgs)]
pub struct ExplainerArgs {
    /// Languages to explain in, comma-separated ISO 639-1 codes: en, hi, bn, te, mr, ta, ur,
    /// gu, kn, or, ml, pa, as (docs/languages.md).
    #[arg(long, value_delimiter = ',', default_value = "en,hi")]
    pub languages: Vec<explain::Language>,
    /// Timeout of one LLM request, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    pub llm_timeout_ms: u64,
    /// LLM requests in flight at once.
    #[arg(long, default_value_t = 4)]
    pub llm_concurrency: usize,
    /// How long, in milliseconds, one micro-batch's explanations may wait on the LLM; then the
    /// rest are templates (fallback `budget`): a slow model delays a batch by at most this plus
    /// one request's timeout.
    #[arg(long, default_value_t = 60_000)]
    pub llm_batch_budget_ms: u64,
    /// Retries of a transient LLM failure (connection error, 5xx, 429).
    #[arg(long, default_value_t = 2)]
    pub llm_retries: usize,
    /// Consecutive failed LLM calls that open the circuit breaker.
    #[arg(long, default_value_t = 5)]
    pub llm_breaker_failures: u32,
    /// How long the open circuit refuses calls before a probe, in milliseconds.
    #[arg(long, default_value_t = 30_000)]
    pub llm_breaker_cooldown_ms: u64,
    /// Most records in one micro-batch.
    #[arg(long, default_value_t = 64)]
    pub max_batch: usize,
    /// Longest wait, in milliseconds, to fill a micro-batch.
    #[arg(long, default_value_t = 20)]
    pub max_wait_ms: u64,
    /// How long, in milliseconds, an event may wait for the profile snapshot and rule it names
    /// to be committed by the evaluator before it is dead-lettered.
    #[arg(long, default_value_t = 10_000)]
    pub missing_data_grace_ms: u64,
    #[command(flatten)]
    pub worker: WorkerArgs,
}

pub fn run(args: ExplainerArgs) -> Result<ExitCode> {
    let config = args.worker.config()?;
    fleet::init_tracing(&config.log);
    warn_unknown(&[]);
    let mut languages = Vec::new();
    for language in args.languages {
        if !languages.contains(&language) {
            languages.push(language);
        }
    }
    anyhow::ensure!(!languages.is_empty(), "--languages names no language");
    let options = explainer::Options {
        languages,
        llm: explainer::llm::LlmOptions {
            timeout: Duration::from_millis(args.llm_timeout_ms.max(1)),
            concurrency: args.llm_concurrency.max(1),
            max_retries: args.llm_retries,
            breaker: explainer::breaker::BreakerSettings {
                failures: args.llm_breaker_failures.max(1),
                cool_down: Duration::from_millis(args.llm_breaker_cooldown_ms),
            },
            ..explainer::llm::LlmOptions::default()
        },
        max_batch: args.max_batch.max(1),
        max_wait: Duration::from_millis(args.max_wait_ms),
        missing_data_grace: Duration::from_millis(args.missing_data_grace_ms),
        llm_batch_budget: Duration::from_millis(args.llm_batch_budget_ms),
    };
    runtime()?.block_on(async {
        let (shutdown, _trigger) = fleet::shutdown::Shutdown::on_signals();
        explainer::run(config, shutdown, options).await
    })?;
    Ok(ExitCode::SUCCESS)
}
