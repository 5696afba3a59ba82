//! What the subcommands share: a tokio runtime, a one-shot command's PostgreSQL pool and
//! publisher, the warning of unknown `ELIGIBILITY_*` variables (docs/configuration.md), and the
//! `--as-of` flag.

use anyhow::{Result, anyhow};
use engine::Date;

pub fn runtime() -> Result<tokio::runtime::Runtime> {
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
pub fn publisher(
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
pub fn warn_unknown(also_known: &[String]) {
    for name in fleet::config::unknown_variables(std::env::vars(), also_known) {
        tracing::warn!(variable = name, "unknown ELIGIBILITY_ variable (a typo?)");
    }
}

/// `--as-of`: a date, or today (UTC) when absent.
pub fn parse_as_of(text: Option<&str>) -> Result<Date> {
    match text {
        Some(text) => {
            Date::parse(text).ok_or_else(|| anyhow!("--as-of {text:?} is not a date YYYY-MM-DD"))
        }
        None => Ok(crate::clock::today()),
    }
}
