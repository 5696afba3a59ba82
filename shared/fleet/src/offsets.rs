//! Consumer offsets kept in PostgreSQL (`consumer_offsets`), the source of truth: a worker
//! commits a micro-batch's offsets in the same transaction as its effects, resumes from them,
//! and mirrors them to Kafka only for tools that read lag from the brokers (KEDA).

use std::collections::HashMap;

use deadpool_postgres::Pool;
use rdkafka::consumer::Consumer as _;

use crate::kafka::Consumer;
use crate::metrics::time_store;

/// (topic, partition) → the next offset to process.
pub type Offsets = HashMap<(String, i32), i64>;

/// The offsets stored for `group`.
pub async fn load(pool: &Pool, group: &str) -> anyhow::Result<Offsets> {
    let client = pool.get().await?;
    let rows = time_store(
        "postgres",
        "read_offsets",
        client.query(
            "SELECT topic, partition, next_offset FROM consumer_offsets WHERE consumer_group = $1",
            &[&group],
        ),
    )
    .await?;
    Ok(rows
        .iter()
        .map(|r| ((r.get(0), r.get(1)), r.get(2)))
        .collect())
}

/// Records `offsets` as `group`'s next offsets, inside the batch's transaction: one statement
/// (prepared once per connection) for every partition, since a batch spans up to all of them and
/// each statement is a round trip to PostgreSQL. Rows in (topic, partition) order, so two
/// transactions lock them in the same order.
pub async fn commit(
    tx: &deadpool_postgres::Transaction<'_>,
    group: &str,
    offsets: &Offsets,
) -> Result<(), tokio_postgres::Error> {
    if offsets.is_empty() {
        return Ok(());
    }
    let mut rows: Vec<(&str, i32, i64)> = offsets
        .iter()
        .map(|((topic, partition), next)| (topic.as_str(), *partition, *next))
        .collect();
    rows.sort_unstable();
    let topics: Vec<&str> = rows.iter().map(|r| r.0).collect();
    let partitions: Vec<i32> = rows.iter().map(|r| r.1).collect();
    let nexts: Vec<i64> = rows.iter().map(|r| r.2).collect();
    let statement = tx.prepare_cached(COMMIT).await?;
    tx.execute(&statement, &[&group, &topics, &partitions, &nexts])
        .await?;
    Ok(())
}

/// [`commit`]'s statement.
const COMMIT: &str = "INSERT INTO consumer_offsets (consumer_group, topic, partition, next_offset)
                      SELECT $1, t, p, o FROM unnest($2::text[], $3::int[], $4::bigint[]) AS x(t, p, o)
                      ON CONFLICT (consumer_group, topic, partition)
                      DO UPDATE SET next_offset = EXCLUDED.next_offset, updated_at = now()";

/// Prepares [`commit`]'s statement on `tx`'s connection (once per connection), so that a commit
/// sent with other statements needs no round trip of its own first.
pub async fn prepare(tx: &deadpool_postgres::Transaction<'_>) -> Result<(), tokio_postgres::Error> {
    tx.prepare_cached(COMMIT).await.map(drop)
}

/// Starts a new `group` at `offsets` (a benchmark or test that skips earlier traffic): a
/// partition the group already has an offset for keeps it.
pub async fn start_at(pool: &Pool, group: &str, offsets: &Offsets) -> anyhow::Result<()> {
    let client = pool.get().await?;
    for ((topic, partition), next) in offsets {
        client
            .execute(
                "INSERT INTO consumer_offsets (consumer_group, topic, partition, next_offset)
                 VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                &[&group, topic, partition, next],
            )
            .await?;
    }
    Ok(())
}

/// Mirrors committed offsets to Kafka. PostgreSQL has them, so a failure is only logged.
pub fn mirror_to_kafka(consumer: &Consumer, committed: &Offsets) {
    if committed.is_empty() {
        return;
    }
    let mut list = rdkafka::TopicPartitionList::new();
    for ((topic, partition), next) in committed {
        if let Err(e) = list.add_partition_offset(topic, *partition, rdkafka::Offset::Offset(*next))
        {
            tracing::warn!(error = %e, "offset not mirrored to Kafka");
        }
    }
    if let Err(e) = consumer.commit(&list, rdkafka::consumer::CommitMode::Async) {
        tracing::debug!(error = %e, "offset commit to Kafka failed (PostgreSQL has them)");
    }
}
