//! The consume loop every worker runs, written once: micro-batches from the group consumer,
//! upkeep after a rebalance and once a second, readiness, and a clean stop on shutdown. A
//! worker supplies its [`Stage`]: what a rebalance reloads, and how one micro-batch is
//! processed and committed.
//!
//! A batch in progress is finished on SIGTERM, not abandoned: its offsets are committed only
//! with its effects, so stopping half-way would only repeat work.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use rdkafka::consumer::Consumer as _;

use crate::cache::Cache;
use crate::http::Health;
use crate::input::{Pace, Polled, Record, poll_batch};
use crate::kafka::{Consumer, RebalanceTracker};
use crate::offsets::Offsets;
use crate::shutdown::Shutdown;

/// Micro-batch bounds: whichever comes first.
#[derive(Debug, Clone, Copy)]
pub struct BatchBounds {
    pub max_records: usize,
    pub max_wait: Duration,
}

/// Upkeep runs at least this often under load (rule revisions, readiness).
const UPKEEP_EVERY: Duration = Duration::from_secs(1);

/// A worker's part of the loop.
pub trait Stage {
    /// After a rebalance (`assigned`: the new assignment) or once a second (`None`): reload
    /// what depends on the assignment or may have changed, and check the stores answer.
    fn upkeep(
        &mut self,
        assigned: Option<&[(String, i32)]>,
    ) -> impl std::future::Future<Output = anyhow::Result<()>>;

    /// One micro-batch; returns the offsets now in PostgreSQL. A stage may leave the batch's
    /// publishing and commit running while the loop polls the next one (then the offsets
    /// returned are an earlier batch's).
    fn process(
        &mut self,
        records: Vec<Record>,
    ) -> impl std::future::Future<Output = anyhow::Result<Offsets>>;

    /// Finishes the work `process` left running; returns its offsets. The loop calls it when
    /// the stream is idle, before a rebalance's upkeep and before stopping.
    fn settle(&mut self) -> impl std::future::Future<Output = anyhow::Result<Offsets>> {
        async { Ok(Offsets::new()) }
    }
}

/// What the loop reads and reports beside the stage.
pub struct Loop<'a> {
    pub name: &'static str,
    pub consumer: &'a Consumer,
    pub tracker: &'a RebalanceTracker,
    pub health: &'a Arc<Health>,
    pub cache: &'a Cache,
    pub bounds: BatchBounds,
}

impl Loop<'_> {
    /// Runs `stage` until `shutdown`.
    pub async fn run(&self, stage: &mut impl Stage, shutdown: Shutdown) -> anyhow::Result<()> {
        let mut generation = 0;
        let mut upkept: Option<Instant> = None;
        let mut broker_away = crate::retry::Waiting::new("kafka_consume");
        let mut pace = Pace::Quiet;
        let _cache_watch = crate::connect::watch_cache(self.cache.clone(), self.health.clone());
        loop {
            self.health.heartbeat();
            let bounds = self.bounds;
            let polled = poll_batch(
                self.consumer,
                bounds.max_records.max(1),
                bounds.max_wait,
                pace,
                &shutdown,
            )
            .await;
            let polled = match polled {
                // The broker (or a partition's leader) is away: consume nothing, report it,
                // and poll again; the client reconnects by itself, at its own backoff, and a
                // poll waits until it has news. (Sleeping a backoff per error drained the
                // errors it had queued during an outage one per backoff: minutes after the
                // broker was back.) Only an error the client calls fatal stops the worker.
                Err(e) if !crate::error::kafka_is_fatal(&e) => {
                    if !broker_away.is_waiting() {
                        tracing::warn!(error = %e, "the broker is away: waiting");
                    }
                    broker_away.failed(&format!("Kafka: {e}"));
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
                // The client reports an outage now and then, not at every poll: during one,
                // an idle poll says nothing of the broker, which is asked for metadata.
                Ok(Polled::Idle) if broker_away.is_waiting() => {
                    let asked = tokio::task::block_in_place(|| {
                        self.consumer.fetch_metadata(None, Duration::from_secs(2))
                    });
                    if let Err(e) = asked {
                        broker_away.wait(&format!("Kafka: {e}")).await;
                        continue;
                    }
                    broker_away.over();
                    Ok(Polled::Idle)
                }
                polled => {
                    broker_away.over();
                    polled
                }
            };
            let records = match polled.context("consuming")? {
                Polled::Records(records) => {
                    pace = Pace::after(records.len());
                    Some(records)
                }
                Polled::Shutdown => {
                    self.settle(stage).await?;
                    break;
                }
                Polled::Idle => {
                    pace = Pace::Quiet;
                    None
                }
            };
            let (current, partitions) = {
                let assignment = self.tracker.assignment.lock().expect("not poisoned");
                (assignment.generation, assignment.partitions.clone())
            };
            let due = upkept.is_none_or(|at| at.elapsed() >= UPKEEP_EVERY);
            if records.is_none() || current != generation || due {
                let rebalanced = current != generation;
                if records.is_none() || rebalanced {
                    self.settle(stage).await?;
                }
                // PostgreSQL away during upkeep is waited out like a batch's store, before
                // the records in hand are processed.
                let assigned = rebalanced.then_some(partitions.as_slice());
                let upkept_now =
                    crate::retry::wait_out_unless(&shutdown, async || stage.upkeep(assigned).await)
                        .await?;
                if !upkept_now {
                    tracing::warn!(
                        "{} stopped while waiting for a dependency; records not yet committed are read again by their partitions' next owner",
                        self.name
                    );
                    return Ok(());
                }
                generation = current;
                upkept = Some(Instant::now());
                self.health.dependencies_answered();
                if current > 0 {
                    self.health.set_ready();
                } else {
                    self.health
                        .set_not_ready("the consumer has not joined its group yet");
                }
            }
            let Some(records) = records else { continue };
            let committed = stage.process(records).await?;
            self.health.dependencies_answered();
            crate::offsets::mirror_to_kafka(self.consumer, &committed);
        }
        tracing::info!("{} stopped cleanly", self.name);
        Ok(())
    }

    async fn settle(&self, stage: &mut impl Stage) -> anyhow::Result<()> {
        let committed = stage.settle().await?;
        crate::offsets::mirror_to_kafka(self.consumer, &committed);
        Ok(())
    }
}
