//! `eligibility_consumer_lag{topic, partition, state}`: per owned partition ([`fleet::lag`]),
//! with the partition's name in the partition map (every evaluator input is state-keyed).

use fleet::lag::PartitionLag;
use fleet::topics::partition_map;

pub fn report(lags: Vec<PartitionLag>) {
    for lag in lags {
        let state = partition_map().name_of(lag.partition).to_string();
        metrics::gauge!(fleet::metrics::CONSUMER_LAG,
            "topic" => lag.topic, "partition" => lag.partition.to_string(), "state" => state)
        .set(lag.records as f64);
    }
}
