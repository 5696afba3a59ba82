//! `eligibility_explainer_queue_lag{topic}`: for each input topic, the sum over the partitions
//! this process owns of the records behind ([`fleet::lag`]).

use std::collections::BTreeMap;

use fleet::lag::PartitionLag;

pub fn report(lags: Vec<PartitionLag>) {
    let mut by_topic: BTreeMap<String, i64> = BTreeMap::new();
    for lag in lags {
        *by_topic.entry(lag.topic).or_default() += lag.records;
    }
    for (topic, records) in by_topic {
        metrics::gauge!(fleet::metrics::EXPLAINER_QUEUE_LAG, "topic" => topic).set(records as f64);
    }
}
