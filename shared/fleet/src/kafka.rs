//! Kafka clients: the common client configuration (brokers, security), the idempotent producer,
//! the consumer (manual offsets: PostgreSQL holds the truth) and topic creation.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewPartitions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{ConsumerContext, Rebalance, StreamConsumer};
use rdkafka::producer::FutureProducer;
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{ClientContext, TopicPartitionList};

use crate::config::KafkaConfig;
use crate::topics::{POLICY_RULES_UPDATED, SCHEME_DEADLINE_APPROACHING, partition_map};

/// Brokers, security and the pass-through properties (last, so they can override), shared by
/// every client.
pub fn client_config(kafka: &KafkaConfig) -> ClientConfig {
    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", &kafka.brokers)
        .set("security.protocol", kafka.security.protocol);
    if let Some(mechanism) = &kafka.security.sasl_mechanism {
        config.set("sasl.mechanism", mechanism);
    }
    if let Some(username) = &kafka.security.sasl_username {
        config.set("sasl.username", username);
    }
    if let Some(password) = &kafka.security.sasl_password {
        config.set("sasl.password", password);
    }
    if let Some(ca) = &kafka.security.ssl_ca_location {
        config.set("ssl.ca.location", ca);
    }
    for (name, value) in &kafka.properties {
        config.set(name, value);
    }
    config
}

/// Sets each of `defaults` that no pass-through property set: tuning is the operator's to
/// change, while the settings a guarantee rests on are set after this, unconditionally.
fn with_defaults<'a>(
    config: &'a mut ClientConfig,
    defaults: &[(&str, &str)],
) -> &'a mut ClientConfig {
    for (name, value) in defaults {
        if config.get(name).is_none() {
            config.set(*name, *value);
        }
    }
    config
}

/// An idempotent producer: a retried send is written once, in order.
pub fn producer(kafka: &KafkaConfig) -> Result<FutureProducer, rdkafka::error::KafkaError> {
    producer_config(kafka).create()
}

fn producer_config(kafka: &KafkaConfig) -> ClientConfig {
    let mut config = client_config(kafka);
    with_defaults(
        &mut config,
        &[("linger.ms", "2"), ("message.timeout.ms", "30000")],
    )
    .set("enable.idempotence", "true")
    .set("acks", "all");
    config
}

/// What the consumer's group currently assigns to this process. The main loop reads it to
/// refresh its stored offsets and lag gauges after a rebalance.
#[derive(Default)]
pub struct Assignment {
    pub generation: u64,
    pub partitions: Vec<(String, i32)>,
}

/// Records rebalances so the worker can reload rules and offsets.
#[derive(Default, Clone)]
pub struct RebalanceTracker {
    pub assignment: Arc<Mutex<Assignment>>,
}

impl ClientContext for RebalanceTracker {}

impl ConsumerContext for RebalanceTracker {
    fn post_rebalance(
        &self,
        _consumer: &rdkafka::consumer::BaseConsumer<Self>,
        rebalance: &Rebalance<'_>,
    ) {
        let mut assignment = self.assignment.lock().expect("not poisoned");
        match rebalance {
            Rebalance::Assign(list) => {
                assignment.partitions = list
                    .elements()
                    .iter()
                    .map(|e| (e.topic().to_string(), e.partition()))
                    .collect();
            }
            Rebalance::Revoke(_) => assignment.partitions.clear(),
            Rebalance::Error(e) => tracing::warn!(error = %e, "rebalance error"),
        }
        assignment.generation += 1;
        tracing::info!(partitions = ?assignment.partitions, "partitions assigned");
    }
}

pub type Consumer = StreamConsumer<RebalanceTracker>;

/// A consumer in `group` that never auto-commits: offsets are committed to PostgreSQL with each
/// micro-batch (and to Kafka afterwards, for lag tooling such as KEDA).
pub fn consumer(
    kafka: &KafkaConfig,
    group: &str,
    topics: &[&str],
) -> Result<(Consumer, RebalanceTracker), rdkafka::error::KafkaError> {
    use rdkafka::consumer::Consumer as _;
    let tracker = RebalanceTracker::default();
    let consumer: Consumer = with_defaults(
        &mut client_config(kafka),
        &[
            ("auto.offset.reset", "earliest"),
            ("session.timeout.ms", "10000"),
            ("partition.assignment.strategy", "range"),
            FETCH_WAIT,
        ],
    )
    .set("group.id", group)
    .set("enable.auto.commit", "false")
    .set("enable.auto.offset.store", "false")
    .create_with_context(tracker.clone())?;
    consumer.subscribe(topics)?;
    Ok((consumer, tracker))
}

/// A fetch returns as soon as there is a record; an idle partition's fetch is answered within
/// 10 ms instead of librdkafka's 500, which would otherwise be the floor of every record's
/// latency on a quiet stream (the local broker holds an empty fetch for half the wait, then a
/// quarter, and so on, before it looks again).
const FETCH_WAIT: (&str, &str) = ("fetch.wait.max.ms", "10");

/// A consumer outside any group, reading explicitly assigned partitions (replay, the fleet
/// bench's reader of pass summaries).
pub fn assigned_consumer(
    kafka: &KafkaConfig,
    list: &TopicPartitionList,
) -> Result<StreamConsumer, rdkafka::error::KafkaError> {
    use rdkafka::consumer::Consumer as _;
    let consumer: StreamConsumer = with_defaults(&mut client_config(kafka), &[FETCH_WAIT])
        .set("group.id", "eligibility-replay")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.assign(list)?;
    Ok(consumer)
}

/// The partition ids of `topic` as the broker reports them; empty when it has none.
pub fn partitions_of(
    consumer: &StreamConsumer,
    topic: &str,
) -> Result<Vec<i32>, rdkafka::error::KafkaError> {
    use rdkafka::consumer::Consumer as _;
    let metadata = consumer.fetch_metadata(Some(topic), Duration::from_secs(10))?;
    Ok(metadata
        .topics()
        .first()
        .map(|t| t.partitions().iter().map(|p| p.id()).collect())
        .unwrap_or_default())
}

/// Creates every topic of the partition map that does not exist yet. An existing profile topic
/// with fewer partitions than the map says is an error: users map to partitions by state, so it
/// is never silently repartitioned. The rule topics are grown instead (they had one partition
/// before the fleet was partitioned by state): the evaluator fans their records out whatever
/// partition they are on.
pub async fn create_topics(kafka: &KafkaConfig, replication: i32) -> anyhow::Result<Vec<String>> {
    let admin: AdminClient<DefaultClientContext> = client_config(kafka).create()?;
    let wanted = partition_map().all_topics();
    let metadata = admin
        .inner()
        .fetch_metadata(None, Duration::from_secs(10))?;
    let mut created = Vec::new();
    let mut problems = Vec::new();
    let mut to_create = Vec::new();
    let mut to_grow = Vec::new();
    for (name, partitions) in &wanted {
        match metadata.topics().iter().find(|t| t.name() == name) {
            Some(existing) if !existing.partitions().is_empty() => {
                let has = existing.partitions().len() as i32;
                let routed =
                    [POLICY_RULES_UPDATED, SCHEME_DEADLINE_APPROACHING].contains(&name.as_str());
                if has < *partitions && routed {
                    to_grow.push(NewPartitions::new(name, *partitions as usize));
                } else if has < *partitions {
                    problems.push(format!(
                        "{name} has {has} partitions, the partition map needs {partitions}"
                    ));
                }
            }
            _ => to_create.push((name.as_str(), *partitions)),
        }
    }
    if !to_grow.is_empty() {
        let options = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
        match admin.create_partitions(&to_grow, &options).await {
            Ok(results) => {
                for result in results {
                    match result {
                        Ok(name) => created.push(format!("{name} (partitions added)")),
                        Err((name, code)) => {
                            problems.push(format!("{name}: adding partitions: {code}"))
                        }
                    }
                }
            }
            Err(e) => problems.extend(to_grow.iter().map(|t| {
                format!(
                    "{} needs {} partitions and the broker refused to add them ({e}): add them \
                     with the cluster's own tools",
                    t.topic_name, t.new_partition_count
                )
            })),
        }
    }
    let new_topics: Vec<NewTopic> = to_create
        .iter()
        .map(|(name, partitions)| {
            NewTopic::new(name, *partitions, TopicReplication::Fixed(replication))
        })
        .collect();
    if !new_topics.is_empty() {
        let options = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
        for result in admin.create_topics(&new_topics, &options).await? {
            match result {
                Ok(name) => created.push(name),
                Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
                Err((name, code)) => problems.push(format!("{name}: {code}")),
            }
        }
    }
    if problems.is_empty() {
        Ok(created)
    } else {
        anyhow::bail!(
            "topics not as the partition map needs: {}",
            problems.join("; ")
        )
    }
}

/// A record ready to send.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub topic: String,
    pub key: Vec<u8>,
    /// Where to write it; None = the producer's partitioner (by key).
    pub partition: Option<i32>,
    /// The record's timestamp; None = now. A routed copy keeps its original's, which is the
    /// evaluation date of an event without `as_of`.
    pub timestamp_ms: Option<i64>,
    pub payload: Vec<u8>,
    /// `idempotency_key` and, for dead letters, the reason: readable without decoding.
    pub headers: Vec<(&'static str, String)>,
}

/// Sends every record and waits for every acknowledgement. Records of one key keep their
/// order (idempotent producer). When the client's local queue is full (a batch with more events
/// than `queue.buffering.max.messages`), the oldest send is awaited to make room instead of
/// failing the batch. Counts `eligibility_events_produced_total` per topic, once per topic and
/// call (a batch publishes hundreds of events to a handful of topics).
pub async fn send_all(
    producer: &FutureProducer,
    records: &[Outgoing],
) -> Result<(), rdkafka::error::KafkaError> {
    use rdkafka::message::{Header, OwnedHeaders};
    use rdkafka::producer::FutureRecord;
    use rdkafka::types::RDKafkaErrorCode;
    let mut pending = std::collections::VecDeque::with_capacity(records.len());
    let mut settled = Settled::default();
    for record in records {
        loop {
            let mut headers = OwnedHeaders::new_with_capacity(record.headers.len());
            for (name, value) in &record.headers {
                headers = headers.insert(Header {
                    key: name,
                    value: Some(value.as_bytes()),
                });
            }
            let mut future = FutureRecord::to(&record.topic)
                .key(&record.key)
                .payload(&record.payload)
                .headers(headers);
            if let Some(partition) = record.partition {
                future = future.partition(partition);
            }
            if let Some(ms) = record.timestamp_ms {
                future = future.timestamp(ms);
            }
            let sent = producer.send_result(future);
            match sent {
                Ok(delivery) => {
                    pending.push_back((record.topic.as_str(), delivery));
                    break;
                }
                Err((e, _)) if e.rdkafka_error_code() == Some(RDKafkaErrorCode::QueueFull) => {
                    match pending.pop_front() {
                        Some((topic, delivery)) => settled.add(topic, delivery.await),
                        None => tokio::time::sleep(std::time::Duration::from_millis(5)).await,
                    }
                }
                Err((e, _)) => {
                    settled.count();
                    return Err(e);
                }
            }
        }
    }
    for (topic, delivery) in pending {
        settled.add(topic, delivery.await);
    }
    settled.count();
    match settled.first_error {
        None => Ok(()),
        Some(e) => Err(e),
    }
}

/// The acknowledged sends of one [`send_all`] by topic, and its first failure.
#[derive(Default)]
struct Settled<'a> {
    acknowledged: Vec<(&'a str, u64)>,
    first_error: Option<rdkafka::error::KafkaError>,
}

impl<'a> Settled<'a> {
    fn add<Canceled>(
        &mut self,
        topic: &'a str,
        delivery: Result<rdkafka::producer::future_producer::OwnedDeliveryResult, Canceled>,
    ) {
        match delivery {
            Ok(Ok(_)) => match self.acknowledged.iter_mut().find(|(t, _)| *t == topic) {
                Some((_, count)) => *count += 1,
                None => self.acknowledged.push((topic, 1)),
            },
            Ok(Err((e, _))) => {
                self.first_error.get_or_insert(e);
            }
            Err(_) => {
                self.first_error
                    .get_or_insert(rdkafka::error::KafkaError::Canceled);
            }
        }
    }

    /// Adds the acknowledged sends to `eligibility_events_produced_total`.
    fn count(&mut self) {
        for (topic, count) in self.acknowledged.drain(..) {
            metrics::counter!(crate::metrics::EVENTS_PRODUCED, "topic" => topic.to_string())
                .increment(count);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_property_overrides_a_tuning_default_but_not_a_guarantee() {
        let mut kafka = KafkaConfig::plaintext("127.0.0.1:9092");
        let default = producer_config(&kafka);
        assert_eq!(default.get("linger.ms"), Some("2"));
        kafka.properties = vec![
            ("linger.ms".into(), "20".into()),
            ("acks".into(), "1".into()),
            ("enable.idempotence".into(), "false".into()),
        ];
        let tuned = producer_config(&kafka);
        assert_eq!(tuned.get("linger.ms"), Some("20"));
        assert_eq!(tuned.get("message.timeout.ms"), Some("30000"));
        assert_eq!(tuned.get("acks"), Some("all"));
        assert_eq!(tuned.get("enable.idempotence"), Some("true"));
    }
}
