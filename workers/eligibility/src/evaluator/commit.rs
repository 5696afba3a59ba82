//! The evaluator's one transaction after a micro-batch (docs/fleet.md "One micro-batch"): pass
//! audit records, the verdict rows of users with changes, snapshots, offsets. Every write is
//! keyed deterministically, so writing a replayed batch again changes nothing.

use std::collections::BTreeSet;

use deadpool_postgres::Pool;
use fleet::error::IoError;
use fleet::leases::Leases;
use fleet::metrics::time_store;
use fleet::offsets::Offsets;
use fleet::topics::partition_map;

use super::audit::PassAudit;
use crate::users::state::UserState;
use crate::users::store::pack_verdicts;

/// Everything one micro-batch writes.
#[derive(Default)]
pub struct BatchWrite<'a> {
    pub audit: Vec<PassAudit>,
    pub users: Vec<(&'a str, &'a UserState)>,
    /// (topic, partition) → next offset to process.
    pub offsets: Offsets,
    /// The partitions whose records (or users) the batch is about: their leases must still be
    /// this worker's.
    pub partitions: Vec<i32>,
}

/// Writes the batch in one transaction, after checking the partitions' leases (none for a
/// `replay`, which owns no partition).
///
/// Each statement is a round trip to PostgreSQL, and on a busy machine each round trip waits
/// for the server's process to be scheduled. So the statements are prepared once per
/// connection, and those that need no earlier answer are sent together (pipelined) in the
/// order they must run: snapshots before the profiles that refer to them, the staging table
/// before the audit copy (docs/fleet.md "Where the time goes").
pub async fn commit_batch(
    pool: &Pool,
    group: &str,
    leases: Option<&Leases>,
    batch: &BatchWrite<'_>,
) -> Result<(), IoError> {
    let mut client = pool.get().await?;
    let months: Vec<String> = batch
        .audit
        .iter()
        .map(|a| format!("{:04}-{:02}-01", a.as_of.year(), a.as_of.month()))
        .collect::<BTreeSet<String>>()
        .into_iter()
        .collect();
    let profiles = ProfileRows::of(&batch.users);
    let (verdict_users, verdicts): (Vec<&str>, Vec<Vec<u8>>) = batch
        .users
        .iter()
        .filter(|(_, u)| !u.touched.is_empty())
        .map(|(id, u)| (*id, pack_verdicts(&u.verdicts)))
        .unzip();
    time_store("postgres", "commit_batch", async {
        let tx = client.transaction().await?;
        // Prepared before the statements go out together: a statement still to be prepared
        // would be sent a round trip after the others, out of the order below.
        let (ensure_months, snapshots, current, verdict_rows, (), ()) = tokio::try_join!(
            tx.prepare_cached(
                "SELECT ensure_month_partition('evaluation_passes', m::date)
                 FROM unnest($1::text[]) AS t(m)"
            ),
            tx.prepare_cached(
                "INSERT INTO profile_snapshots (input_hash, profile)
                 SELECT DISTINCT ON (h) h, j::jsonb FROM unnest($1::text[], $2::text[]) AS t(h, j)
                 ON CONFLICT (input_hash) DO NOTHING"
            ),
            tx.prepare_cached(
                "INSERT INTO profile_current (user_id, input_hash, state, as_of, source_topic,
                                              source_partition, source_offset, owner_partition,
                                              next_age_change)
                 SELECT u, h, s, d::date, t, p, o, w, a::date
                 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[],
                             $7::bigint[], $8::int[], $9::text[])
                      AS x(u, h, s, d, t, p, o, w, a)
                 ON CONFLICT (user_id) DO UPDATE SET input_hash = EXCLUDED.input_hash,
                     state = EXCLUDED.state, as_of = EXCLUDED.as_of,
                     source_topic = EXCLUDED.source_topic,
                     source_partition = EXCLUDED.source_partition,
                     source_offset = EXCLUDED.source_offset,
                     owner_partition = EXCLUDED.owner_partition,
                     next_age_change = EXCLUDED.next_age_change, updated_at = now()"
            ),
            tx.prepare_cached(
                "INSERT INTO user_verdicts (user_id, verdicts)
                 SELECT * FROM unnest($1::text[], $2::bytea[])
                 ON CONFLICT (user_id) DO UPDATE SET verdicts = EXCLUDED.verdicts,
                     updated_at = now()"
            ),
            fleet::leases::prepare(&tx),
            fleet::offsets::prepare(&tx),
        )?;
        let p = &profiles;
        tokio::try_join!(
            biased;
            async {
                match leases {
                    Some(leases) => leases.check(&tx, &batch.partitions).await,
                    None => Ok(()),
                }
            },
            async { Ok(tx.execute(&ensure_months, &[&months]).await?) },
            async { Ok(tx.batch_execute(STAGING_TABLE).await?) },
            async {
                Ok(tx
                    .execute(&snapshots, &[&p.snapshot_hashes, &p.snapshot_jsons])
                    .await?)
            },
            async {
                Ok(tx
                    .execute(
                        &current,
                        &[
                            &p.ids,
                            &p.hashes,
                            &p.states,
                            &p.dates,
                            &p.topics,
                            &p.partitions,
                            &p.offsets,
                            &p.owners,
                            &p.age_changes,
                        ],
                    )
                    .await?)
            },
            async {
                Ok(tx
                    .execute(&verdict_rows, &[&verdict_users, &verdicts])
                    .await?)
            },
            async { Ok::<(), IoError>(fleet::offsets::commit(&tx, group, &batch.offsets).await?) },
        )?;
        write_audit(&tx, &batch.audit).await?;
        tx.commit().await?;
        Ok::<(), IoError>(())
    })
    .await
}

/// The `profile_current` rows (and their new snapshots) of the users whose profile changed,
/// column by column.
#[derive(Default)]
struct ProfileRows<'a> {
    ids: Vec<String>,
    hashes: Vec<String>,
    states: Vec<Option<String>>,
    dates: Vec<String>,
    topics: Vec<String>,
    partitions: Vec<i32>,
    offsets: Vec<i64>,
    owners: Vec<i32>,
    age_changes: Vec<Option<String>>,
    snapshot_hashes: Vec<&'a str>,
    snapshot_jsons: Vec<&'a str>,
}

impl<'a> ProfileRows<'a> {
    fn of(users: &[(&str, &'a UserState)]) -> ProfileRows<'a> {
        let mut rows = ProfileRows::default();
        for (user_id, user) in users {
            let Some(p) = user.profile.as_ref().filter(|_| user.profile_touched) else {
                continue;
            };
            // A pass stores a snapshot only with a profile it marks as touched.
            for (hash, json) in &user.snapshots {
                rows.snapshot_hashes.push(hash);
                rows.snapshot_jsons.push(json);
            }
            rows.ids.push(user_id.to_string());
            rows.hashes.push(p.profile.input_snapshot_hash.clone());
            rows.states.push(p.state.clone());
            rows.dates.push(p.as_of.to_string());
            rows.topics.push(p.position.topic.clone());
            rows.partitions.push(p.position.partition);
            rows.offsets.push(p.position.offset);
            rows.owners
                .push(partition_map().partition_for(p.state.as_deref(), user_id));
            rows.age_changes
                .push(p.next_age_change.map(|d| d.to_string()));
        }
        rows
    }
}

/// Fills in `owner_partition` for users stored before the column existed (migration 0003), in
/// pages; a no-op once every row has one. Returns the rows filled.
pub async fn fill_owner_partitions(pool: &Pool) -> anyhow::Result<u64> {
    let client = pool.get().await?;
    let mut filled = 0;
    loop {
        let rows = client
            .query(
                "SELECT user_id, state FROM profile_current WHERE owner_partition IS NULL LIMIT 10000",
                &[],
            )
            .await?;
        if rows.is_empty() {
            return Ok(filled);
        }
        let ids: Vec<&str> = rows.iter().map(|r| r.get(0)).collect();
        let owners: Vec<i32> = rows
            .iter()
            .map(|r| partition_map().partition_for(r.get(1), r.get(0)))
            .collect();
        filled += client
            .execute(
                "UPDATE profile_current c SET owner_partition = x.w
                 FROM unnest($1::text[], $2::int[]) AS x(u, w) WHERE c.user_id = x.u",
                &[&ids, &owners],
            )
            .await?;
    }
}

/// The per-session staging table of [`write_audit`], created by the first batch on each
/// connection; checked quietly, as `IF NOT EXISTS` would log a notice for every batch.
const STAGING_TABLE: &str = "DO $$ BEGIN
    IF to_regclass('pg_temp.pass_staging') IS NULL THEN
        CREATE TEMP TABLE pass_staging (
            user_id TEXT, as_of_day INT4, pass_id BYTEA, input_hash TEXT,
            rules_revision INT8, outcomes BYTEA, evaluation_us INT4)
        ON COMMIT DELETE ROWS;
    END IF;
END $$";

/// The passes' audit records: binary `COPY` into a per-session staging table, then one insert
/// that skips passes already on record (a replay, a re-run rule change). `COPY` cannot skip
/// conflicts itself, and row-by-row inserts were the fleet's bottleneck (docs/fleet.md).
async fn write_audit(
    tx: &deadpool_postgres::Transaction<'_>,
    audit: &[PassAudit],
) -> Result<(), IoError> {
    use tokio_postgres::binary_copy::BinaryCopyInWriter;
    use tokio_postgres::types::Type;
    if audit.is_empty() {
        return Ok(());
    }
    let (copy, insert) = tokio::try_join!(
        tx.prepare_cached(
            "COPY pass_staging (user_id, as_of_day, pass_id, input_hash, rules_revision, outcomes,
                                evaluation_us) FROM STDIN (FORMAT binary)"
        ),
        tx.prepare_cached(
            "INSERT INTO evaluation_passes (user_id, as_of, pass_id, input_hash, rules_revision,
                                            outcomes, evaluation_us)
             SELECT user_id, DATE '1970-01-01' + as_of_day, encode(pass_id, 'hex')::uuid,
                    input_hash, rules_revision, outcomes, evaluation_us
             FROM pass_staging
             ON CONFLICT DO NOTHING"
        ),
    )?;
    let sink = tx.copy_in(&copy).await?;
    let types = [
        Type::TEXT,
        Type::INT4,
        Type::BYTEA,
        Type::TEXT,
        Type::INT8,
        Type::BYTEA,
        Type::INT4,
    ];
    let mut writer = std::pin::pin!(BinaryCopyInWriter::new(sink, &types));
    for pass in audit {
        let day = i32::try_from(pass.as_of.day_number()).map_err(IoError::internal)?;
        let id = pass.pass_id();
        writer
            .as_mut()
            .write(&[
                &pass.user_id,
                &day,
                &&id[..],
                &pass.input_hash,
                &pass.rules_revision,
                &pass.outcomes,
                &pass.evaluation_us,
            ])
            .await?;
    }
    writer.finish().await?;
    tx.execute(&insert, &[]).await?;
    Ok(())
}
