//! The fleet's subcommands: `evaluator`, `explainer`, `migrate`, `topics create` and the local
//! `schema-registry`. Configuration comes from `ELIGIBILITY_*` (docs/configuration.md).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::{Args as ClapArgs, Subcommand};
use fleet::config::{DatabaseArgs, KafkaArgs, WorkerArgs};

use crate::explainer;

use crate::evaluator;

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// A one-shot command's PostgreSQL pool, the schema brought up to date first.
pub(crate) async fn migrated_pool(
    config: &fleet::config::Config,
    size: usize,
) -> Result<deadpool_postgres::Pool> {
    let pool = fleet::postgres::pool_with_ca(
        &config.database_url,
        config.database_ca_file.as_deref(),
        size,
    )?;
    fleet::postgres::migrate(&pool).await?;
    Ok(pool)
}

/// A one-shot command's codec for `topics` and producer: what publishes a few records and
/// waits for their acknowledgement.
pub(crate) fn publisher(
    config: &fleet::config::Config,
    topics: &[&str],
) -> Result<(fleet::avro::Codec, rdkafka::producer::FutureProducer)> {
    let topics: Vec<String> = topics.iter().map(|t| t.to_string()).collect();
    Ok((
        fleet::avro::Codec::new(&config.schema_registry_url, &topics),
        fleet::kafka::producer(&config.kafka)?,
    ))
}

/// Warns of `ELIGIBILITY_*` variables that neither the worker arguments nor `also_known` (the
/// subcommand's own) read.
pub(crate) fn warn_unknown(also_known: &[String]) {
    for name in fleet::config::unknown_variables(std::env::vars(), also_known) {
        tracing::warn!(variable = name, "unknown ELIGIBILITY_ variable (a typo?)");
    }
}

#[derive(ClapArgs)]
pub struct EvaluatorArgs {
    /// Most records in one micro-batch. A batch closes as soon as the stream pauses, so it
    /// grows toward this only while records queue: a bigger batch then spreads each batch's
    /// fixed costs (a PostgreSQL transaction, a round of acknowledgements) over more records.
    #[arg(long, default_value_t = 2000)]
    pub max_batch: usize,
    /// Longest wait, in milliseconds, to fill a micro-batch.
    #[arg(long, default_value_t = 10)]
    pub max_wait_ms: u64,
    #[command(flatten)]
    pub worker: WorkerArgs,
}

pub fn evaluator(args: EvaluatorArgs) -> Result<ExitCode> {
    let config = args.worker.config()?;
    fleet::init_tracing(&config.log);
    warn_unknown(&[]);
    let bounds = fleet::worker::BatchBounds {
        max_records: args.max_batch.max(1),
        max_wait: std::time::Duration::from_millis(args.max_wait_ms),
    };
    runtime()?.block_on(async {
        let (shutdown, _trigger) = fleet::shutdown::Shutdown::on_signals();
        evaluator::run(config, shutdown, bounds).await
    })?;
    Ok(ExitCode::SUCCESS)
}

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

pub fn explainer(args: ExplainerArgs) -> Result<ExitCode> {
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
    };
    runtime()?.block_on(async {
        let (shutdown, _trigger) = fleet::shutdown::Shutdown::on_signals();
        explainer::run(config, shutdown, options).await
    })?;
    Ok(ExitCode::SUCCESS)
}

pub fn migrate(args: DatabaseArgs) -> Result<ExitCode> {
    let url = args.url()?;
    fleet::init_tracing("info");
    runtime()?.block_on(async {
        let pool = fleet::postgres::pool_with_ca(&url, args.database_ca_file.as_deref(), 1)?;
        let applied = fleet::postgres::migrate(&pool).await?;
        println!(
            "schema current ({} migrations; applied now: {})",
            fleet::postgres::MIGRATIONS.len(),
            if applied.is_empty() {
                "none".to_string()
            } else {
                applied.join(", ")
            }
        );
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Subcommand)]
pub enum TopicsCommand {
    /// Create every topic of the partition map that is missing (idempotent).
    Create {
        #[arg(long, default_value_t = 3)]
        replication_factor: i32,
        #[command(flatten)]
        kafka: KafkaArgs,
    },
}

pub fn topics(command: TopicsCommand) -> Result<ExitCode> {
    let TopicsCommand::Create {
        replication_factor,
        kafka,
    } = command;
    let kafka = kafka.config()?;
    runtime()?.block_on(async {
        let created = fleet::kafka::create_topics(&kafka, replication_factor).await?;
        let all = fleet::topics::partition_map().all_topics();
        println!(
            "{} topics present ({} created now{}{})",
            all.len(),
            created.len(),
            if created.is_empty() { "" } else { ": " },
            created.join(", ")
        );
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

#[derive(ClapArgs)]
pub struct RegistryArgs {
    /// Listen address.
    #[arg(long, default_value = "127.0.0.1:8081")]
    pub listen: SocketAddr,
    /// Where schemas are kept.
    #[command(flatten)]
    pub database: DatabaseArgs,
}

/// The project's own Confluent-compatible registry: the local development default only.
pub fn schema_registry(args: RegistryArgs) -> Result<ExitCode> {
    let url = args.database.url()?;
    fleet::init_tracing("info");
    runtime()?.block_on(async {
        let ca = args.database.database_ca_file.as_deref();
        let pool = fleet::postgres::pool_with_ca(&url, ca, 4)?;
        fleet::postgres::migrate(&pool).await?;
        fleet::registry::serve(args.listen, pool).await
    })?;
    Ok(ExitCode::SUCCESS)
}
