//! `eligibility evaluator`: the stream worker (docs/design.md, "Data flow"). It reads the rules
//! ([`crate::rules`]) and users ([`crate::users`]) the fleet shares, and alone writes them.
//!
//! - [`pass`]: one user's pass (pure): what to re-evaluate, transitions, what to store.
//! - [`audit`]: a pass's packed audit record.
//! - [`batch`]: one micro-batch end to end, its tail left running in [`in_flight`];
//!   [`rule_change`]: `policy.rules.updated` and `scheme.deadline.approaching`, which
//!   re-evaluate many users; [`sink`]: how both publish, commit, cache and count what they
//!   produced; [`commit`]: the one PostgreSQL transaction after a micro-batch.
//! - [`lag`]: the consumer-lag gauges.
//! - [`Pipeline`]: the connections and state a micro-batch needs; it is the evaluator's
//!   [`fleet::worker::Stage`] in the shared consume loop.
//!
//! Ownership (docs/fleet.md "Ownership"): the group assigns each worker partitions of the
//! state-keyed inputs (the same numbers in all four); the worker holds the rules of those
//! partitions' states and the central ones, evaluates only its partitions' users, forwards a
//! profile record found on another user's partition, and fans each rule or deadline record out
//! to the partitions it concerns ([`fleet::routing`]). One worker thus writes each user.
//!
//! Delivery (docs/design.md, "Delivery guarantees without broker transactions"): a
//! micro-batch's events are published and acknowledged before its PostgreSQL transaction
//! (audit, verdicts, snapshots, offsets) commits; offsets resume from PostgreSQL, so a crash
//! can repeat an event (same idempotency key) but never lose one, and a repeated batch writes nothing new.

pub mod audit;
pub mod batch;
pub mod commit;
pub mod in_flight;
pub mod lag;
pub mod pass;
pub mod rule_change;
pub mod sink;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use deadpool_postgres::Pool;
use engine::Catalogue;
use fleet::avro::Codec;
use fleet::cache::Cache;
use fleet::config::Config;
use fleet::http::Health;
use fleet::leases::Leases;
use fleet::offsets::Offsets;
use fleet::shutdown::Shutdown;
use fleet::topics::*;
use fleet::worker::BatchBounds;
use kernels::engine_select::Engine;
use rdkafka::producer::FutureProducer;

use crate::rules::book::RuleBook;
use crate::rules::store as rules_store;

/// What the pipeline needs, shared by the evaluator loop and `replay`.
pub struct Pipeline {
    pub group: String,
    pub pool: Pool,
    pub cache: Cache,
    pub codec: Arc<Codec>,
    pub producer: FutureProducer,
    pub book: Arc<RuleBook>,
    /// The batch engine of rule changes (`ELIGIBILITY_ENGINE`): the CPU batch evaluator or
    /// the GPU kernels.
    pub engine: Arc<Engine>,
    /// `ELIGIBILITY_GPU_MIN_PROFILES`: profile micro-batches of at least this many records go
    /// to the GPU first, when the engine has one.
    pub gpu_min_profiles: usize,
    /// (topic, partition) → next offset to process, as committed in PostgreSQL.
    pub offsets: Arc<Mutex<Offsets>>,
    /// The partitions this worker owns (the same numbers in every input topic), whose states'
    /// rules the book holds: None before the group assigns any, and for `replay`, which
    /// evaluates whatever it is given with every rule.
    pub owned: Option<Vec<i32>>,
    /// The leases of the owned partitions (fleet::leases): None for `replay`, which owns none.
    pub leases: Option<Leases>,
    pub health: Arc<Health>,
    /// `replay`: no offsets are read or written (the range is the caller's), and records a
    /// user has already moved past change nothing.
    pub replay: bool,
    /// `ELIGIBILITY_RULE_REVIEW=required`: a rule version goes live only as an approved proposal.
    pub rule_review: bool,
    pub stats: Arc<Stats>,
    /// Profile batches still publishing and committing (docs/fleet.md "Pipelining").
    pub in_flight: in_flight::InFlight,
}

/// Running totals, for `replay`'s progress line and summary.
#[derive(Default)]
pub struct Stats {
    pub records: AtomicU64,
    pub dead_lettered: AtomicU64,
    pub evaluations: AtomicU64,
    pub events: AtomicU64,
}

impl Stats {
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

/// Topics whose records the codec must read or write.
fn codec_topics() -> Vec<String> {
    let mut topics: Vec<String> = EVALUATOR_INPUTS.iter().map(|t| t.to_string()).collect();
    topics.extend(EVALUATOR_INPUTS.iter().map(|t| dead_letter_topic(t)));
    topics.extend(
        [
            ELIGIBILITY_COMPUTED,
            ELIGIBILITY_BATCH_COMPUTED,
            ELIGIBILITY_NEW_MATCH,
            ELIGIBILITY_LOST,
            ELIGIBILITY_PARTIAL_MATCH,
            RULE_CONFLICT_DETECTED,
            RULE_SIMULATION_COMPLETED,
        ]
        .map(str::to_string),
    );
    topics
}

impl Pipeline {
    /// Connects to everything, applies migrations, seeds and loads the rules.
    pub async fn connect(
        config: &Config,
        group: &str,
        health: Arc<Health>,
        replay: bool,
    ) -> anyhow::Result<Pipeline> {
        // First, so that `gpu` without a usable device stops the worker before it connects.
        let engine = Engine::new(config.engine, config.gpu_min_pairs).with_context(|| {
            format!(
                "batch engine {} (--engine or ELIGIBILITY_ENGINE)",
                config.engine
            )
        })?;
        match engine.gpu() {
            Ok(gpu) => tracing::info!(
                device = gpu.name(),
                min_pairs = config.gpu_min_pairs,
                "batch engine: the GPU for large batches"
            ),
            Err(why) => tracing::info!(%why, "batch engine: the CPU"),
        }
        let fleet::connect::Connections {
            pool,
            cache,
            codec,
            producer,
        } = fleet::connect::Connections::open(config, 8, &codec_topics()).await?;
        match config.rule_review {
            fleet::config::RuleReview::Required => tracing::info!(
                "rule review required: versions on policy.rules.updated go live only as approved proposals"
            ),
            fleet::config::RuleReview::Off => tracing::warn!(
                "rule review is off: every valid version on policy.rules.updated goes live on arrival (ELIGIBILITY_RULE_REVIEW=required to review)"
            ),
        }
        let catalogue = Catalogue::bundled();
        let corpus = crate::rules::source::load(&catalogue, config.rules_dir.as_deref())?;
        // Each step is idempotent: PostgreSQL going away half-way is waited out and the steps
        // run again, as at any other time (docs/reliability.md).
        let mut loaded = None;
        fleet::retry::wait_out(async || {
            let seeded = rules_store::seed(&pool, &corpus).await?;
            if seeded > 0 {
                tracing::info!(seeded, "rule versions seeded from the corpus");
            }
            let filled = commit::fill_owner_partitions(&pool).await?;
            if filled > 0 {
                tracing::info!(
                    filled,
                    "owner partitions filled in for users stored before 0003"
                );
            }
            let book = load_book(&pool, None).await?;
            loaded = Some((book, fleet::offsets::load(&pool, group).await?));
            Ok(())
        })
        .await?;
        let (book, offsets) = loaded.expect("loaded");
        let (book, offsets) = (Arc::new(book), Arc::new(Mutex::new(offsets)));
        health.dependencies_answered();
        Ok(Pipeline {
            group: group.to_string(),
            pool,
            cache,
            codec: Arc::new(codec),
            producer,
            book,
            engine: Arc::new(engine),
            gpu_min_profiles: config.gpu_min_profiles,
            offsets,
            owned: None,
            leases: None,
            health,
            replay,
            rule_review: config.rule_review == fleet::config::RuleReview::Required,
            stats: Arc::default(),
            in_flight: in_flight::InFlight::default(),
        })
    }

    /// The connections a batch's results leave through.
    pub fn sink(&self) -> sink::Sink {
        sink::Sink {
            pool: self.pool.clone(),
            cache: self.cache.clone(),
            codec: self.codec.clone(),
            producer: self.producer.clone(),
            group: self.group.clone(),
            leases: self.leases.clone(),
            stats: self.stats.clone(),
        }
    }

    /// Reloads the rules when the table's revision moved.
    pub async fn refresh_rules(&mut self) -> anyhow::Result<()> {
        let revision = rules_store::revision(&self.pool).await?;
        if revision != self.book.revision {
            self.reload_rules().await?;
        }
        metrics::gauge!(fleet::metrics::RULES_HELD).set(self.book.rules.rules.len() as f64);
        Ok(())
    }

    /// Loads the rules of the owned partitions' states and the central ones.
    async fn reload_rules(&mut self) -> anyhow::Result<()> {
        self.book = Arc::new(load_book(&self.pool, self.owned.as_deref()).await?);
        tracing::info!(
            revision = self.book.revision,
            rules = self.book.rules.rules.len(),
            partitions = ?self.owned,
            "rules loaded"
        );
        Ok(())
    }
}

/// The active rules; with `owned`, only those of the partitions' states and the central ones
/// (a worker holds what it can evaluate, docs/fleet.md "Ownership").
async fn load_book(pool: &Pool, owned: Option<&[i32]>) -> anyhow::Result<RuleBook> {
    let catalogue = Catalogue::bundled();
    let mut loaded = rules_store::load(pool, &catalogue).await?;
    // The unassigned partition's users have no known state, and such a citizen can hold every
    // scheme (`RuleSet::for_state`): its owner keeps every rule.
    let unassigned = partition_map().partitions_of(None);
    if let Some(partitions) = owned.filter(|p| !p.iter().any(|p| unassigned.contains(p))) {
        let states = partition_map().states_of(partitions);
        let held = std::mem::take(&mut loaded.rules.rules)
            .into_iter()
            .filter(|r| r.is_central() || states.contains(&r.state.as_str()))
            .collect();
        loaded.rules = engine::RuleSet::from_rules(held);
    }
    RuleBook::new(catalogue, loaded)
}

/// Runs the evaluator until shutdown.
pub async fn run(config: Config, shutdown: Shutdown, bounds: BatchBounds) -> anyhow::Result<()> {
    let health = fleet::http::start(config.http_addr, shutdown.clone()).await?;

    let group = config
        .consumer_group
        .clone()
        .unwrap_or_else(|| "eligibility-evaluator".into());
    let topics: Vec<String> = match &config.input_topics {
        Some(topics) => {
            for t in topics {
                anyhow::ensure!(
                    EVALUATOR_INPUTS.contains(&t.as_str()),
                    "ELIGIBILITY_INPUT_TOPICS: {t:?} is not an evaluator input ({})",
                    EVALUATOR_INPUTS.join(", ")
                );
            }
            topics.clone()
        }
        None => EVALUATOR_INPUTS.iter().map(|t| t.to_string()).collect(),
    };
    let mut pipeline = Pipeline::connect(&config, &group, health.clone(), false).await?;
    let topic_refs: Vec<&str> = topics.iter().map(String::as_str).collect();
    fleet::metrics::register_counters(
        &topic_refs,
        &[
            (
                fleet::metrics::VERDICTS,
                "verdict",
                &["eligible", "partial_match", "not_eligible"],
            ),
            (
                fleet::metrics::TRANSITION_EVENTS,
                "kind",
                &["new_match", "lost", "partial_match"],
            ),
            (
                fleet::metrics::RECORDS_ROUTED,
                "kind",
                &["forwarded", "fanned_out"],
            ),
        ],
    );
    metrics::gauge!(fleet::metrics::BATCHES_IN_FLIGHT).set(0.0);
    let (consumer, tracker) = fleet::kafka::consumer(&config.kafka, &group, &topic_refs)?;
    let consumer = Arc::new(consumer);
    tokio::spawn(fleet::lag::watch(
        config.kafka.clone(),
        group.clone(),
        tracker.clone(),
        pipeline.offsets.clone(),
        shutdown.clone(),
        lag::report,
    ));
    tracing::info!(group, ?topics, "evaluator started");
    let health = pipeline.health.clone();
    let cache = pipeline.cache.clone();
    let main_loop = fleet::worker::Loop {
        name: "evaluator",
        consumer: &consumer,
        tracker: &tracker,
        health: &health,
        cache: &cache,
        bounds,
    };
    main_loop.run(&mut pipeline, shutdown).await
}

/// The evaluator's part of the consume loop.
impl fleet::worker::Stage for Pipeline {
    /// After a rebalance: the leases of the owned partitions first (a worker that lost them can
    /// no longer commit, and one committing right now finishes before the offsets are read),
    /// then their offsets and their states' rules. Always: a rules revision that moved.
    async fn upkeep(&mut self, assigned: Option<&[(String, i32)]>) -> anyhow::Result<()> {
        if let Some(assigned) = assigned {
            let mut owned: Vec<i32> = assigned.iter().map(|(_, p)| *p).collect();
            owned.sort_unstable();
            owned.dedup();
            let holder = fleet::leases::holder_name();
            self.leases = Some(Leases::take(&self.pool, &self.group, &owned, &holder).await?);
            let offsets = fleet::offsets::load(&self.pool, &self.group).await?;
            *self.offsets.lock().expect("not poisoned") = offsets;
            self.owned = Some(owned);
            self.reload_rules().await?;
        }
        self.refresh_rules().await
    }

    async fn process(&mut self, records: Vec<fleet::input::Record>) -> anyhow::Result<Offsets> {
        batch::process(self, records).await
    }

    async fn settle(&mut self) -> anyhow::Result<Offsets> {
        batch::settle(self).await
    }
}
