//! Deletes, during a benchmark, the records an evaluator group has committed from the local
//! broker, so that its fetches stay as cheap as a production broker's.
//!
//! Why a benchmark needs it: the local broker's in-memory storage keeps every record batch as
//! its own object, deletes nothing on its own (no retention), and, on each fetch of a partition,
//! lists every batch that partition ever held, under a lock that produce requests wait on. Its
//! fetch and produce times therefore grow with the log (per record, 0.09 → 0.27 ms over six
//! 10-second phases at 5,000 updates/s), and a sustained run measured the broker filling up
//! rather than the fleet. A Kafka broker finds a fetch offset through a segment index, at a cost
//! that does not grow with the log. Deleting what is committed (DeleteRecords, the admin call
//! behind `kafka-delete-records`) every second keeps the local broker's partitions short; that
//! is far more often than production retention, and only for this reason. Only records below
//! the group's committed offsets in PostgreSQL are deleted: the fleet never reads them again.
//!
//! The events the evaluators publish grow the broker's partitions the same way (the time to
//! acknowledge a batch's events rose by a third to a half from one 10-second phase to the
//! next, and each second's p99 rose through a 60-second phase). The benchmark reads the pass
//! summaries while a phase runs, for their latencies, and every second [`delete_read`] deletes
//! what it has read and the other events published meanwhile, which nothing in the benchmark
//! reads; before each phase, what the earlier steps published goes the same way.

use std::time::Duration;

use anyhow::Result;
use fleet::config::KafkaConfig;
use fleet::offsets::Offsets;
use rdkafka::admin::{AdminClient, AdminOptions};
use rdkafka::client::DefaultClientContext;
use rdkafka::{Offset, TopicPartitionList};

/// How often committed records are deleted.
pub const EVERY: Duration = Duration::from_secs(1);

/// Deletes, every [`EVERY`], the records of `topics` below `group`'s committed offsets, until
/// the task is aborted. A failed round (PostgreSQL or the broker unreachable for a moment) is
/// reported and tried again at the next; the task ends, with the broker's answer, only if the
/// broker refuses the deletion itself (a broker without DeleteRecords): the benchmark then runs
/// with every record kept.
pub async fn delete_committed(
    kafka: &KafkaConfig,
    pool: &deadpool_postgres::Pool,
    group: &str,
    topics: &[&str],
) -> Result<()> {
    let deleter = Deleter::new(kafka)?;
    let mut deleted_to = Offsets::new();
    loop {
        tokio::time::sleep(EVERY).await;
        // The committed offsets of `topics` that moved since the last deletion, and the broker's
        // answer to deleting below them (None when none moved).
        let round = async {
            let wanted: Vec<_> = fleet::offsets::load(pool, group)
                .await?
                .into_iter()
                .filter(|(at, next)| {
                    topics.contains(&at.0.as_str()) && deleted_to.get(at) != Some(next)
                })
                .collect();
            if wanted.is_empty() {
                return Ok((wanted, None));
            }
            let mut list = TopicPartitionList::new();
            for ((topic, partition), next) in &wanted {
                list.add_partition_offset(topic, *partition, Offset::Offset(*next))?;
            }
            let answer = deleter
                .admin
                .delete_records(&list, &deleter.options)
                .await?;
            Ok::<_, anyhow::Error>((wanted, Some(answer)))
        };
        let (wanted, answer) = match round.await {
            Ok(round) => round,
            Err(e) => {
                eprintln!("  (deleting committed records failed this round, retrying: {e:#})");
                continue;
            }
        };
        if let Some(answer) = &answer {
            all_deleted(answer)?;
        }
        deleted_to.extend(wanted);
    }
}

/// An admin client for deleting what has been read, made once and kept: a client of its own
/// per deletion (a connection and a metadata request each time) added its own stalls.
pub struct Deleter {
    admin: AdminClient<DefaultClientContext>,
    options: AdminOptions,
}

impl Deleter {
    pub fn new(kafka: &KafkaConfig) -> Result<Deleter> {
        Ok(Deleter {
            admin: fleet::kafka::client_config(kafka).create()?,
            options: AdminOptions::new().operation_timeout(Some(Duration::from_secs(10))),
        })
    }

    /// Deletes every record below `ends` (the ends of topics the caller has read to there). A
    /// failure is an error, not retried: nothing else deletes them.
    pub async fn delete_read(&self, ends: &TopicPartitionList) -> Result<()> {
        all_deleted(&self.admin.delete_records(ends, &self.options).await?)
    }
}

/// The broker's answer to a deletion, as an error naming the first partition it refused.
fn all_deleted(answer: &TopicPartitionList) -> Result<()> {
    if let Some(refused) = answer.elements().iter().find(|e| e.error().is_err()) {
        anyhow::bail!(
            "the broker refused to delete {}[{}] below {:?}: {:?}",
            refused.topic(),
            refused.partition(),
            refused.offset(),
            refused.error()
        );
    }
    Ok(())
}
