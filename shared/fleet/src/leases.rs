//! Partition leases in PostgreSQL: the fence that keeps a worker which lost a partition from
//! committing after the partition's new owner has started (`partition_leases`, migration 0004).
//!
//! Kafka's group protocol tells a worker which partitions it owns, but a worker that stalls
//! past its session timeout learns that it lost them only after the fact, possibly in the middle
//! of a batch. So ownership is also recorded where the effects are written: on assignment a
//! worker [`take`](Leases::take)s each partition's lease (raising its epoch) *before* reading
//! the partition's offsets, and each batch transaction [`check`](Leases::check)s its epochs
//! under a share lock. A take waits for a commit in flight; a commit after a take fails.

use std::collections::HashMap;

use deadpool_postgres::{Pool, Transaction};

use crate::error::IoError;

/// The epochs this worker holds, by partition number, in one consumer group.
#[derive(Debug, Clone)]
pub struct Leases {
    group: String,
    held: HashMap<i32, i64>,
}

impl Leases {
    /// Takes the leases of `partitions` for `holder` (a name for operators: host and pid).
    pub async fn take(
        pool: &Pool,
        group: &str,
        partitions: &[i32],
        holder: &str,
    ) -> anyhow::Result<Leases> {
        let client = pool.get().await?;
        let rows = client
            .query(
                "INSERT INTO partition_leases (consumer_group, partition, epoch, holder)
                 SELECT $1, p, 1, $3 FROM unnest($2::int[]) AS p
                 ON CONFLICT (consumer_group, partition) DO UPDATE
                 SET epoch = partition_leases.epoch + 1, holder = EXCLUDED.holder, taken_at = now()
                 RETURNING partition, epoch",
                &[&group, &partitions, &holder],
            )
            .await?;
        Ok(Leases {
            group: group.to_string(),
            held: rows.iter().map(|r| (r.get(0), r.get(1))).collect(),
        })
    }

    /// Fails, naming the partitions, unless this worker still holds the current epoch of each
    /// of `partitions`; the rows stay share-locked until `tx` ends, so no take can come between
    /// this check and the commit.
    pub async fn check(&self, tx: &Transaction<'_>, partitions: &[i32]) -> Result<(), IoError> {
        if partitions.is_empty() {
            return Ok(());
        }
        let statement = tx.prepare_cached(CHECK).await?;
        let rows = tx.query(&statement, &[&self.group, &partitions]).await?;
        let current: HashMap<i32, (i64, String)> = rows
            .iter()
            .map(|r| (r.get(0), (r.get(1), r.get(2))))
            .collect();
        let lost: Vec<String> = partitions
            .iter()
            .filter(|p| match (self.held.get(p), current.get(p)) {
                (Some(ours), Some((epoch, _))) => ours != epoch,
                _ => true,
            })
            .map(|p| match current.get(p) {
                Some((epoch, holder)) => format!("{p} (now epoch {epoch}, {holder})"),
                None => format!("{p} (no lease)"),
            })
            .collect();
        if lost.is_empty() {
            return Ok(());
        }
        Err(IoError::Fenced(format!(
            "fenced: this worker no longer holds partition(s) {} of group {}; another worker \
             took them over, so this batch is not committed",
            lost.join(", "),
            self.group
        )))
    }
}

/// [`Leases::check`]'s statement.
const CHECK: &str = "SELECT partition, epoch, holder FROM partition_leases
                     WHERE consumer_group = $1 AND partition = ANY($2) FOR SHARE";

/// Prepares [`Leases::check`]'s statement on `tx`'s connection (once per connection), so that
/// a check sent with other statements goes out first, not a round trip after them.
pub async fn prepare(tx: &Transaction<'_>) -> Result<(), tokio_postgres::Error> {
    tx.prepare_cached(CHECK).await.map(drop)
}

/// How a worker names itself in `partition_leases.holder`.
pub fn holder_name() -> String {
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "unknown-host".into());
    format!("{host}/{}", std::process::id())
}
