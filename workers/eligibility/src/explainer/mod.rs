//! `eligibility explainer`: plain-language explanations of new and partial matches (docs/design.md,
//! "Explanations": facts → LLM → Oracle-A → template fallback → store + `eligibility.explained`).
//!
//! Components:
//! - [`input`]: records as consumed, their decoding into a [`explain::Subject`], dead letters.
//! - [`explain`]: one event's explanations without Kafka or a database: the facts re-derived
//!   with the engine (the verdict must be the event's), the LLM answer accepted only if
//!   Oracle-A passes it and it states no number the facts do not, else the template; the trust
//!   score. The LLM never decides a verdict: it only words the event's.
//! - [`llm`]: the OpenAI-compatible client (timeout, concurrency limit, retries with backoff)
//!   and [`breaker`], its circuit breaker.
//! - [`store`]: profile snapshots and rules read from PostgreSQL; explanations and offsets
//!   written in one transaction; the Redis entries.
//! - [`batch`]: one micro-batch end to end; [`lag`]: the queue-lag gauge.
//!
//! Without `ELIGIBILITY_LLM_BASE_URL` every explanation is the template (fallback `no_llm`).
//!
//! Delivery is the evaluator's (docs/design.md, "Delivery guarantees without broker transactions"): a micro-batch's events are
//! published and acknowledged before its PostgreSQL transaction (explanations, offsets) commits,
//! and offsets resume from PostgreSQL. A crash between the two repeats the batch: the event is
//! published again under the same idempotency key (`{evaluation_id}:{language}`), and the LLM
//! may word it differently that time; the stored row is the first committed one.

pub mod batch;
pub mod breaker;
pub mod explain;
pub mod input;
pub mod lag;
pub mod llm;
pub mod store;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use deadpool_postgres::Pool;
use engine::Catalogue;
use fleet::avro::Codec;
use fleet::cache::Cache;
use fleet::config::Config;
use fleet::http::Health;
use fleet::offsets::Offsets;
use fleet::shutdown::Shutdown;
use fleet::topics::*;
use rdkafka::producer::FutureProducer;

use self::llm::{LlmClient, LlmOptions};

/// The consumer group when `ELIGIBILITY_CONSUMER_GROUP` is unset.
pub const DEFAULT_GROUP: &str = "eligibility-explainer";

/// What the command line sets (the environment sets the rest, through [`Config`]).
#[derive(Debug, Clone)]
pub struct Options {
    /// Every event is explained in each of these.
    pub languages: Vec<::explain::Language>,
    pub llm: LlmOptions,
    /// Most records in one micro-batch.
    pub max_batch: usize,
    /// Longest wait to fill a micro-batch.
    pub max_wait: Duration,
    /// How long one micro-batch's explanations may wait on the LLM: after it no request
    /// starts, and the rest are templates (`budget`), so a slow model delays a batch by at most
    /// this plus one request's timeout and never stalls the pool.
    pub llm_batch_budget: Duration,
    /// How long an event may wait for the profile snapshot or rule it names to be committed
    /// (the evaluator publishes before it commits) before it is dead-lettered.
    pub missing_data_grace: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            languages: vec![::explain::Language::En, ::explain::Language::Hi],
            llm: LlmOptions::default(),
            max_batch: 64,
            max_wait: Duration::from_millis(20),
            llm_batch_budget: Duration::from_secs(60),
            missing_data_grace: Duration::from_secs(10),
        }
    }
}

pub struct Pipeline {
    pub group: String,
    pub pool: Pool,
    pub cache: Cache,
    pub codec: Codec,
    pub producer: FutureProducer,
    pub catalogue: Catalogue,
    pub llm: Option<Arc<LlmClient>>,
    pub languages: Vec<::explain::Language>,
    /// (topic, partition) → next offset to process, as committed in PostgreSQL.
    pub offsets: Arc<Mutex<Offsets>>,
    pub health: Arc<Health>,
    pub missing_data_grace: Duration,
    /// [`Options::llm_batch_budget`].
    pub llm_batch_budget: Duration,
}

/// The topics whose records the codec reads or writes.
fn codec_topics(inputs: &[String]) -> Vec<String> {
    let mut topics: Vec<String> = inputs.to_vec();
    topics.extend(inputs.iter().map(|t| dead_letter_topic(t)));
    topics.push(ELIGIBILITY_EXPLAINED.to_string());
    topics
}

/// The input topics: `ELIGIBILITY_INPUT_TOPICS` (a subset of the two) or both.
fn input_topics(config: &Config) -> anyhow::Result<Vec<String>> {
    match &config.input_topics {
        Some(topics) => {
            for t in topics {
                anyhow::ensure!(
                    EXPLAINER_INPUTS.contains(&t.as_str()),
                    "ELIGIBILITY_INPUT_TOPICS: {t:?} is not an explainer input ({})",
                    EXPLAINER_INPUTS.join(", ")
                );
            }
            anyhow::ensure!(
                !topics.is_empty(),
                "ELIGIBILITY_INPUT_TOPICS names no topic"
            );
            Ok(topics.clone())
        }
        None => Ok(EXPLAINER_INPUTS.iter().map(|t| t.to_string()).collect()),
    }
}

/// Runs the explainer until shutdown.
pub async fn run(config: Config, shutdown: Shutdown, options: Options) -> anyhow::Result<()> {
    let health = fleet::http::start(config.http_addr, shutdown.clone()).await?;

    let group = config
        .consumer_group
        .clone()
        .unwrap_or_else(|| DEFAULT_GROUP.into());
    let topics = input_topics(&config)?;
    let fleet::connect::Connections {
        pool,
        cache,
        codec,
        producer,
    } = fleet::connect::Connections::open(&config, 4, &codec_topics(&topics)).await?;
    let llm = match &config.llm {
        Some(llm) => {
            let client = LlmClient::new(llm, options.llm)?;
            tracing::info!(url = client.url(), model = %llm.model, "LLM explanations on");
            Some(Arc::new(client))
        }
        None => {
            tracing::info!("ELIGIBILITY_LLM_BASE_URL is unset: template explanations only");
            None
        }
    };
    let offsets = Arc::new(Mutex::new(fleet::offsets::load(&pool, &group).await?));
    health.dependencies_answered();
    let mut pipeline = Pipeline {
        group: group.clone(),
        pool,
        cache,
        codec,
        producer,
        catalogue: Catalogue::bundled(),
        llm,
        languages: options.languages.clone(),
        offsets,
        health,
        missing_data_grace: options.missing_data_grace,
        llm_batch_budget: options.llm_batch_budget,
    };
    let topic_refs: Vec<&str> = topics.iter().map(String::as_str).collect();
    register_counters(&topic_refs);
    let (consumer, tracker) = fleet::kafka::consumer(&config.kafka, &group, &topic_refs)?;
    tokio::spawn(fleet::lag::watch(
        config.kafka.clone(),
        group.clone(),
        tracker.clone(),
        pipeline.offsets.clone(),
        shutdown.clone(),
        lag::report,
    ));
    let languages: Vec<&str> = options.languages.iter().map(|&l| l.code()).collect();
    tracing::info!(group, ?topics, ?languages, "explainer started");
    let health = pipeline.health.clone();
    let cache = pipeline.cache.clone();
    let main_loop = fleet::worker::Loop {
        name: "explainer",
        consumer: &consumer,
        tracker: &tracker,
        health: &health,
        cache: &cache,
        bounds: fleet::worker::BatchBounds {
            max_records: options.max_batch,
            max_wait: options.max_wait,
        },
    };
    main_loop.run(&mut pipeline, shutdown).await
}

/// Every counter series the explainer can emit, at zero (see [`fleet::metrics::register_counters`]).
fn register_counters(topics: &[&str]) {
    let reasons: Vec<&str> = explain::Fallback::ALL
        .map(explain::Fallback::as_str)
        .to_vec();
    fleet::metrics::register_counters(
        topics,
        &[
            (fleet::metrics::EXPLANATION_FALLBACKS, "reason", &reasons),
            (
                fleet::metrics::EXPLANATIONS,
                "generated_by",
                &["llm", "template"],
            ),
        ],
    );
    for rule in oracle::RuleId::ALL {
        for verdict in ["pass", "fail"] {
            metrics::counter!(fleet::metrics::ORACLE_CHECKS,
                "rule" => rule.as_str(), "verdict" => verdict)
            .increment(0);
        }
    }
}

/// The explainer's part of the consume loop.
impl fleet::worker::Stage for Pipeline {
    /// After a rebalance: the owned partitions' offsets; otherwise a round trip to PostgreSQL.
    async fn upkeep(&mut self, assigned: Option<&[(String, i32)]>) -> anyhow::Result<()> {
        if assigned.is_some() {
            let offsets = fleet::offsets::load(&self.pool, &self.group).await?;
            *self.offsets.lock().expect("not poisoned") = offsets;
        } else {
            let client = self.pool.get().await?;
            client.query_one("SELECT 1", &[]).await?;
        }
        Ok(())
    }

    async fn process(&mut self, records: Vec<fleet::input::Record>) -> anyhow::Result<Offsets> {
        batch::process(self, records).await
    }
}
