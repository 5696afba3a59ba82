//! The Prometheus recorder and the metric names of docs/metrics.md (the contract with the
//! dashboards and alerts: change both together).

use std::time::Duration;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use metrics_util::MetricKindMask;

pub const EVENTS_CONSUMED: &str = "eligibility_events_consumed_total";
pub const EVENTS_PRODUCED: &str = "eligibility_events_produced_total";
pub const DLQ_MESSAGES: &str = "eligibility_dlq_messages_total";
pub const MICRO_BATCH_SIZE: &str = "eligibility_micro_batch_size";
pub const EVALUATION_DURATION: &str = "eligibility_evaluation_duration_seconds";
pub const BATCH_ENGINE_DURATION: &str = "eligibility_batch_engine_duration_seconds";
pub const BATCH_ENGINE_EVALUATIONS: &str = "eligibility_batch_engine_evaluations_total";
pub const STORE_DURATION: &str = "eligibility_store_duration_seconds";
pub const VERDICTS: &str = "eligibility_verdicts_total";
pub const TRANSITION_EVENTS: &str = "eligibility_transition_events_total";
pub const CONSUMER_LAG: &str = "eligibility_consumer_lag";
pub const EXPLAINER_QUEUE_LAG: &str = "eligibility_explainer_queue_lag";
pub const LAST_PROGRESS: &str = "eligibility_last_progress_timestamp_seconds";
pub const ERRORS: &str = "eligibility_errors_total";
pub const LLM_REQUEST_DURATION: &str = "eligibility_llm_request_duration_seconds";
pub const ORACLE_CHECKS: &str = "eligibility_oracle_checks_total";
pub const EXPLANATION_FALLBACKS: &str = "eligibility_explanation_fallbacks_total";
pub const EXPLANATIONS: &str = "eligibility_explanations_total";
pub const RECORDS_ROUTED: &str = "eligibility_records_routed_total";
pub const RULES_HELD: &str = "eligibility_rules_held";
pub const BATCHES_IN_FLIGHT: &str = "eligibility_batches_in_flight";
pub const API_REQUESTS: &str = "eligibility_api_requests_total";
pub const API_REQUEST_DURATION: &str = "eligibility_api_request_seconds";
pub const API_CACHE: &str = "eligibility_api_cache_total";

const BATCH_BUCKETS: &[f64] = &[
    1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0,
];
const EVALUATION_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0, 120.0,
];
const STORE_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];
const API_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];
const LLM_BUCKETS: &[f64] = &[
    0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 30.0, 60.0,
];

/// Installs the global recorder: real histograms with the contract's buckets, and gauges that
/// disappear a minute after their last update (a revoked partition's lag).
pub fn install() -> anyhow::Result<PrometheusHandle> {
    let mut builder =
        PrometheusBuilder::new().idle_timeout(MetricKindMask::GAUGE, Some(Duration::from_secs(60)));
    for (name, buckets) in [
        (MICRO_BATCH_SIZE, BATCH_BUCKETS),
        (EVALUATION_DURATION, EVALUATION_BUCKETS),
        (BATCH_ENGINE_DURATION, EVALUATION_BUCKETS),
        (STORE_DURATION, STORE_BUCKETS),
        (LLM_REQUEST_DURATION, LLM_BUCKETS),
        (API_REQUEST_DURATION, API_BUCKETS),
    ] {
        builder = builder.set_buckets_for_metric(Matcher::Full(name.to_string()), buckets)?;
    }
    let handle = builder.install_recorder()?;
    metrics::gauge!(LAST_PROGRESS).set(unix_now());
    Ok(handle)
}

pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Times one store round trip into `eligibility_store_duration_seconds`.
pub async fn time_store<T>(
    store: &'static str,
    op: &'static str,
    fut: impl std::future::Future<Output = T>,
) -> T {
    let start = std::time::Instant::now();
    let out = fut.await;
    metrics::histogram!(STORE_DURATION, "store" => store, "op" => op)
        .record(start.elapsed().as_secs_f64());
    out
}

/// Counts a retried or batch-stopping failure.
pub fn error(kind: &'static str) {
    metrics::counter!(ERRORS, "kind" => kind).increment(1);
}

/// The closed label sets of docs/metrics.md.
pub const DLQ_REASONS: [&str; 4] = [
    "decode_failed",
    "schema_unknown",
    "validation_failed",
    "retries_exhausted",
];
pub const ERROR_KINDS: [&str; 10] = [
    "kafka_consume",
    "kafka_produce",
    "postgres",
    "redis",
    "schema_registry",
    "llm",
    "rules_load",
    "gpu",
    "internal",
    "upkeep",
];

/// Creates the counter series a worker can emit, at zero, so that rates and alerts see a
/// series from the start instead of an absent one (`rate()` over a series that appears at 1
/// misses the first event).
pub fn register_counters(input_topics: &[&str], extra: &[(&'static str, &'static str, &[&str])]) {
    for topic in input_topics {
        metrics::counter!(EVENTS_CONSUMED, "topic" => topic.to_string()).increment(0);
        for reason in DLQ_REASONS {
            metrics::counter!(DLQ_MESSAGES, "topic" => topic.to_string(), "reason" => reason)
                .increment(0);
        }
    }
    for kind in ERROR_KINDS {
        metrics::counter!(ERRORS, "kind" => kind).increment(0);
    }
    for (name, label, values) in extra {
        for value in *values {
            metrics::counter!(*name, *label => value.to_string()).increment(0);
        }
    }
}
