//! The connections every worker opens at start, in one order, each failure naming the variable
//! to fix: PostgreSQL (and its migrations), Redis, the schema registry, the Kafka producer; and
//! the watch that keeps readiness following Redis while the worker runs.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use deadpool_postgres::Pool;
use rdkafka::producer::FutureProducer;

use crate::avro::{Codec, Registration};
use crate::cache::Cache;
use crate::config::Config;
use crate::http::Health;

pub struct Connections {
    pub pool: Pool,
    pub cache: Cache,
    pub codec: Codec,
    pub producer: FutureProducer,
}

impl Connections {
    /// Opens everything; `codec_topics` are the topics whose records the worker reads or writes.
    pub async fn open(
        config: &Config,
        pool_size: usize,
        codec_topics: &[String],
    ) -> anyhow::Result<Connections> {
        let pool = crate::postgres::pool_with_ca(
            &config.database_url,
            config.database_ca_file.as_deref(),
            pool_size,
        )?;
        // A dependency away at start (a restart during an outage) is waited out, reported on
        // /readyz, like one that goes away later: a worker does not crash-loop on it. A
        // setting that cannot work (a bad URL, a refused password) still stops it at once.
        crate::retry::wait_out(async || {
            let applied = crate::postgres::migrate(&pool)
                .await
                .context("applying migrations to ELIGIBILITY_DATABASE_URL")?;
            if !applied.is_empty() {
                tracing::info!(?applied, "migrations applied");
            }
            Ok(())
        })
        .await?;
        let mut cache = None;
        crate::retry::wait_out(async || {
            cache = Some(Cache::connect(&config.redis_url, config.redis_ca_file.as_deref()).await?);
            Ok(())
        })
        .await?;
        let cache = cache.expect("connected");
        let registration = if config.schema_auto_register {
            Registration::Auto
        } else {
            Registration::LookUpLatest
        };
        let codec =
            Codec::with_registration(&config.schema_registry_url, codec_topics, registration);
        crate::retry::wait_out(async || {
            codec
                .register_all()
                .await
                .context("the Avro schemas at ELIGIBILITY_SCHEMA_REGISTRY_URL")
        })
        .await?;
        let producer = crate::kafka::producer(&config.kafka)
            .context("the Kafka producer (ELIGIBILITY_KAFKA_* settings)")?;
        Ok(Connections {
            pool,
            cache,
            codec,
            producer,
        })
    }
}

/// How often readiness asks Redis.
const CACHE_CHECK_EVERY: Duration = Duration::from_secs(1);

/// Asks Redis once a second and records the answer for readiness, on a clock of its own rather
/// than between batches: a long batch or rule-change page must not keep a worker whose cache is
/// gone "ready". Stops when the returned watch is dropped.
pub fn watch_cache(cache: Cache, health: Arc<Health>) -> CacheWatch {
    CacheWatch(tokio::spawn(async move {
        loop {
            health.cache_answered(cache.ping().await.map_err(|e| e.to_string()));
            tokio::time::sleep(CACHE_CHECK_EVERY).await;
        }
    }))
}

/// The task of [`watch_cache`], stopped when dropped.
pub struct CacheWatch(tokio::task::JoinHandle<()>);

impl Drop for CacheWatch {
    fn drop(&mut self) {
        self.0.abort();
    }
}
