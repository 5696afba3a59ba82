//! `eligibility_explainer_queue_lag{topic}`: for each input topic, the sum over the partitions
//! this process owns of the high watermark minus the next offset committed in PostgreSQL (the
//! low watermark where none is stored). Refreshed every [`REFRESH`], and within a second of a
//! new assignment. A topic with no owned partition is no longer refreshed, so its series
//! expires (the recorder's gauge idle timeout).
//!
//! Watermarks are asked through a client of their own, outside the consumer group: on the
//! group consumer's connections a watermark request can queue behind fetch long-polls (on the
//! local broker, about half a second each, so 32 partitions took ~16 s).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fleet::config::KafkaConfig;
use fleet::kafka::RebalanceTracker;
use fleet::offsets::Offsets;
use fleet::shutdown::Shutdown;
use rdkafka::consumer::{BaseConsumer, Consumer as _};

pub const REFRESH: Duration = Duration::from_secs(5);

pub async fn report(
    kafka: KafkaConfig,
    group: String,
    tracker: RebalanceTracker,
    offsets: Arc<Mutex<Offsets>>,
    shutdown: Shutdown,
) {
    // Never subscribes nor commits, so it joins no group.
    let client: BaseConsumer = match fleet::kafka::client_config(&kafka)
        .set("group.id", format!("{group}-watermarks"))
        .set("enable.auto.commit", "false")
        .create()
    {
        Ok(client) => client,
        Err(e) => {
            fleet::metrics::error("kafka_consume");
            tracing::error!(error = %e, "no Kafka client for the queue-lag gauge");
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
        let mut lag: BTreeMap<String, i64> = BTreeMap::new();
        for (topic, partition, marks) in marks {
            let Ok((low, high)) = marks else {
                fleet::metrics::error("kafka_consume");
                continue;
            };
            let next = offsets
                .lock()
                .expect("not poisoned")
                .get(&(topic.clone(), partition))
                .copied()
                .unwrap_or(low);
            *lag.entry(topic).or_default() += (high - next).max(0);
        }
        for (topic, records) in lag {
            metrics::gauge!(fleet::metrics::EXPLAINER_QUEUE_LAG, "topic" => topic)
                .set(records as f64);
        }
    }
}
