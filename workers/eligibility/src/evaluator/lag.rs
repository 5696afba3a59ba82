//! `eligibility_consumer_lag`: every 10 s, for each owned partition, the high watermark minus
//! the next offset committed in PostgreSQL. Revoked partitions stop being refreshed and their
//! series expire (the recorder's gauge idle timeout).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fleet::kafka::{Consumer, RebalanceTracker};
use fleet::shutdown::Shutdown;
use fleet::topics::{PROFILE_ASSEMBLED, USER_METADATA_UPDATED, partition_map};
use rdkafka::consumer::Consumer as _;

pub async fn report(
    consumer: Arc<Consumer>,
    tracker: RebalanceTracker,
    offsets: Arc<Mutex<HashMap<(String, i32), i64>>>,
    shutdown: Shutdown,
) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(10)) => {}
            _ = shutdown.clone().wait() => return,
        }
        let owned = tracker
            .assignment
            .lock()
            .expect("not poisoned")
            .partitions
            .clone();
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
