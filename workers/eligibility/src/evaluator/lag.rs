//! `eligibility_consumer_lag`: every 10 s, for each owned partition, the high watermark minus
//! the next offset committed in PostgreSQL. Revoked partitions stop being refreshed and their
//! series expire (the recorder's gauge idle timeout). Watermarks are asked through a client of
//! their own: through the group consumer they queue behind its fetches (about 0.5 s each).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fleet::config::KafkaConfig;
use fleet::kafka::RebalanceTracker;
use fleet::offsets::Offsets;
use fleet::shutdown::Shutdown;
use fleet::topics::{PROFILE_ASSEMBLED, USER_METADATA_UPDATED, partition_map};
use rdkafka::consumer::{BaseConsumer, Consumer as _};

pub async fn report(
    kafka: KafkaConfig,
    tracker: RebalanceTracker,
    offsets: Arc<Mutex<Offsets>>,
    shutdown: Shutdown,
) {
    let consumer: Arc<BaseConsumer> = match fleet::kafka::client_config(&kafka).create() {
        Ok(c) => Arc::new(c),
        Err(e) => {
            tracing::error!(error = %e, "no Kafka client for the lag gauge");
            return;
        }
    };
    let mut pause = Duration::from_secs(1);
    loop {
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = shutdown.clone().wait() => return,
        }
        let owned = tracker
            .assignment
            .lock()
            .expect("not poisoned")
            .partitions
            .clone();
        // Soon after an assignment, then every 10 s.
        pause = if owned.is_empty() {
            Duration::from_secs(1)
        } else {
            Duration::from_secs(10)
        };
        for (topic, partition) in owned {
            let consumer = consumer.clone();
            let t = topic.clone();
            let marks = tokio::task::spawn_blocking(move || {
                consumer.fetch_watermarks(&t, partition, Duration::from_secs(5))
            })
            .await;
            let Ok(Ok((low, high))) = marks else {
                fleet::metrics::error("kafka_consume");
                continue;
            };
            let next = offsets
                .lock()
                .expect("not poisoned")
                .get(&(topic.clone(), partition))
                .copied()
                .unwrap_or(low);
            let state = if topic == USER_METADATA_UPDATED || topic == PROFILE_ASSEMBLED {
                partition_map().name_of(partition).to_string()
            } else {
                "all".to_string()
            };
            metrics::gauge!(fleet::metrics::CONSUMER_LAG,
                "topic" => topic, "partition" => partition.to_string(), "state" => state)
            .set((high - next).max(0) as f64);
        }
    }
}
