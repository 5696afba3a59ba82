//! Consumer lag of the partitions a worker owns: for each, the high watermark minus the next
//! offset committed in PostgreSQL (the low watermark where none is stored). Refreshed every
//! [`REFRESH`] and within a second of a new assignment; the worker turns the figures into its
//! gauges. A revoked partition is no longer reported, so its series expires (the recorder's
//! gauge idle timeout).
//!
//! Watermarks are asked through a client of its own, outside the consumer group: on the group
//! consumer's connections a watermark request queues behind fetch long-polls.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer as _};

use crate::config::KafkaConfig;
use crate::kafka::RebalanceTracker;
use crate::offsets::Offsets;
use crate::shutdown::Shutdown;

pub const REFRESH: Duration = Duration::from_secs(5);

/// Records behind on one owned partition.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionLag {
    pub topic: String,
    pub partition: i32,
    pub records: i64,
}

/// Measures until shutdown, handing each round's figures to `report`.
pub async fn watch(
    kafka: KafkaConfig,
    group: String,
    tracker: RebalanceTracker,
    offsets: Arc<Mutex<Offsets>>,
    shutdown: Shutdown,
    mut report: impl FnMut(Vec<PartitionLag>) + Send + 'static,
) {
    // Never subscribes nor commits, so it joins no group.
    let client: BaseConsumer = match crate::kafka::client_config(&kafka)
        .set("group.id", format!("{group}-watermarks"))
        .set("enable.auto.commit", "false")
        .create()
    {
        Ok(client) => client,
        Err(e) => {
            crate::metrics::error("kafka_consume");
            tracing::error!(error = %e, "no Kafka client for the lag gauges");
            return;
        }
    };
    let client = Arc::new(client);
    let mut seen_generation = 0;
    let mut refreshed: Option<Instant> = None;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = shutdown.clone().wait() => return,
        }
        let (generation, owned) = {
            let assignment = tracker.assignment.lock().expect("not poisoned");
            (assignment.generation, assignment.partitions.clone())
        };
        let due = refreshed.is_none_or(|at| at.elapsed() >= REFRESH);
        if generation == seen_generation && !due {
            continue;
        }
        seen_generation = generation;
        refreshed = Some(Instant::now());
        let c = client.clone();
        let marks = tokio::task::spawn_blocking(move || {
            owned
                .into_iter()
                .map(|(topic, partition)| {
                    let marks = c.fetch_watermarks(&topic, partition, Duration::from_secs(5));
                    (topic, partition, marks)
                })
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        let mut lags = Vec::with_capacity(marks.len());
        for (topic, partition, marks) in marks {
            let Ok((low, high)) = marks else {
                crate::metrics::error("kafka_consume");
                continue;
            };
            let next = offsets
                .lock()
                .expect("not poisoned")
                .get(&(topic.clone(), partition))
                .copied()
                .unwrap_or(low);
            lags.push(PartitionLag {
                topic,
                partition,
                records: (high - next).max(0),
            });
        }
        report(lags);
    }
}
