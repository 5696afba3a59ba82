//! The one way a batch's results leave the evaluator, for profile batches and rule-change
//! pages alike: [`publish_and_commit`] (events, dead letters and routed copies published and
//! acknowledged, then one PostgreSQL transaction: audit, users, offsets, after the leases'
//! check), then [`after_commit`] (the cache, the metrics). Publishing before committing is the
//! delivery guarantee of docs/design.md: a crash in between repeats events, never loses one.
//!
//! Both take a [`Sink`], the connections they need, cheap to clone: a profile batch's tail runs
//! as its own task while the next batch is evaluated (docs/fleet.md "Pipelining").

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use deadpool_postgres::Pool;
use fleet::cache::Cache;
use fleet::leases::Leases;
use rdkafka::producer::FutureProducer;

use engine::Verdict;
use fleet::avro::Codec;
use fleet::error::IoError;
use fleet::events::GapSummary;
use fleet::input::{Record, Rejected};
use fleet::kafka::Outgoing;
use fleet::metrics as m;
use serde::Serialize;

use super::Stats;
use super::audit::PassAudit;
use super::commit::{self, BatchWrite};
use super::pass::OutEvent;
use crate::users::state::{NewVerdict, StoredVerdict, UserState};

/// What publishing, committing and caching a batch need (a clone of the pipeline's).
#[derive(Clone)]
pub struct Sink {
    pub pool: Pool,
    pub cache: Cache,
    pub codec: Arc<Codec>,
    pub producer: FutureProducer,
    pub group: String,
    pub leases: Option<Leases>,
    pub stats: Arc<Stats>,
}

/// Publishes `events` (encoded) and `extra` (already encoded: dead letters, routed copies),
/// waits for every acknowledgement, then commits `write`.
pub async fn publish_and_commit(
    sink: &Sink,
    events: &[OutEvent],
    extra: Vec<Outgoing>,
    write: &BatchWrite<'_>,
) -> Result<(), IoError> {
    publish(sink, events, extra).await?;
    commit(sink, write).await
}

/// Publishes `events` and `extra`, and waits for every acknowledgement.
pub async fn publish(
    sink: &Sink,
    events: &[OutEvent],
    extra: Vec<Outgoing>,
) -> Result<(), IoError> {
    let mut outgoing = m::time_store(
        "schema_registry",
        "encode",
        encode_events(&sink.codec, events),
    )
    .await?;
    outgoing.extend(extra);
    m::time_store(
        "kafka",
        "produce",
        fleet::kafka::send_all(&sink.producer, &outgoing),
    )
    .await?;
    Ok(())
}

/// Commits `write` in one transaction, after the leases' check.
pub async fn commit(sink: &Sink, write: &BatchWrite<'_>) -> Result<(), IoError> {
    commit::commit_batch(&sink.pool, &sink.group, sink.leases.as_ref(), write).await
}

/// What follows a commit: the cache entries of what changed, and the metrics of the records.
pub async fn after_commit(
    sink: &Sink,
    users: &[(String, UserState)],
    records: &[Record],
    rejected: &[Rejected],
    audit: &[PassAudit],
    events: &[OutEvent],
) {
    write_cache(&sink.cache, users).await;
    record_metrics(&sink.stats, records, rejected, audit, events);
}

/// Encodes events for their topics, with the idempotency key as a header too.
async fn encode_events(codec: &Codec, events: &[OutEvent]) -> Result<Vec<Outgoing>, IoError> {
    let mut out = Vec::with_capacity(events.len());
    for event in events {
        let topic = event.topic();
        let payload = match event {
            OutEvent::Computed(e) => codec.encode(topic, e).await?,
            OutEvent::BatchComputed(e) => codec.encode(topic, e).await?,
            OutEvent::NewMatch(e) => codec.encode(topic, e).await?,
            OutEvent::Lost(e) => codec.encode(topic, e).await?,
            OutEvent::PartialMatch(e) => codec.encode(topic, e).await?,
        };
        out.push(Outgoing {
            topic: topic.to_string(),
            key: event.user_id().as_bytes().to_vec(),
            partition: None,
            timestamp_ms: None,
            payload,
            headers: vec![("idempotency_key", event.idempotency_key().to_string())],
        });
    }
    Ok(out)
}

/// Refreshes the cache for what the batch changed (only outcomes that changed, and the totals of
/// users with any), and moves the results version of every user whose verdicts or stored state
/// changed, so that no copy the API cached before is served after (docs/api.md, "Cache"). A
/// Redis failure is counted and logged, not fatal: PostgreSQL has the verdicts, and a missing
/// entry only costs a read.
async fn write_cache(cache: &Cache, users: &[(String, UserState)]) {
    let mut puts = Vec::new();
    let mut deletes = Vec::new();
    let versions: Vec<String> = users
        .iter()
        .filter(|(_, u)| !u.touched.is_empty() || u.access_changed)
        .map(|(user_id, _)| fleet::cache::results_version_key(user_id))
        .collect();
    for (user_id, user) in users.iter().filter(|(_, u)| !u.touched.is_empty()) {
        for scheme in &user.touched {
            let key = fleet::cache::verdict_key(user_id, scheme);
            match (user.verdicts.get(scheme.as_str()), user.written.get(scheme)) {
                (Some(v), Some(new)) => puts.push((key, cached_verdict(v, new))),
                _ => deletes.push(key),
            }
        }
        let count = |verdict| {
            user.verdicts
                .values()
                .filter(|v| v.known.verdict == verdict)
                .count()
        };
        let summary = CachedSummary {
            eligible: count(Verdict::Eligible),
            partial_match: count(Verdict::PartialMatch),
            not_eligible: count(Verdict::NotEligible),
            input_hash: user
                .profile
                .as_ref()
                .map(|p| p.profile.input_snapshot_hash.as_str()),
        };
        puts.push((
            fleet::cache::summary_key(user_id),
            serde_json::to_string(&summary).expect("serialisable"),
        ));
    }
    if let Err(e) = m::time_store("redis", "invalidate", cache.invalidate(&deletes)).await {
        m::error("redis");
        tracing::warn!(error = %e, "cache invalidation failed");
    }
    if let Err(e) = m::time_store("redis", "set", cache.put(&puts)).await {
        m::error("redis");
        tracing::warn!(error = %e, "cache update failed");
    }
    // After the verdicts: a reader that sees the new version reads the new verdicts.
    if let Err(e) = m::time_store("redis", "set", cache.bump(&versions)).await {
        m::error("redis");
        tracing::warn!(error = %e, "bumping results versions failed");
    }
}

/// A verdict's cache entry, as the API's citizen routes read it. Written straight to text
/// (fields in this order) rather than built as a `serde_json::Value` first: a batch writes
/// one per changed outcome.
#[derive(Serialize)]
struct CachedVerdict<'a> {
    verdict: &'static str,
    match_score: u8,
    rule_id: &'a str,
    rule_version: u32,
    evaluation_id: &'a str,
    as_of: String,
    gaps: &'a [GapSummary],
}

/// A user's totals, cached beside their verdicts.
#[derive(Serialize)]
struct CachedSummary<'a> {
    eligible: usize,
    partial_match: usize,
    not_eligible: usize,
    input_hash: Option<&'a str>,
}

fn cached_verdict(stored: &StoredVerdict, new: &NewVerdict) -> String {
    serde_json::to_string(&CachedVerdict {
        verdict: stored.known.verdict.name(),
        match_score: stored.known.score,
        rule_id: stored.rule_id,
        rule_version: stored.rule_version,
        evaluation_id: &new.evaluation_id,
        as_of: stored.as_of.to_string(),
        gaps: &new.gaps,
    })
    .expect("serialisable")
}

fn record_metrics(
    stats: &Stats,
    records: &[Record],
    rejected: &[Rejected],
    audit: &[PassAudit],
    events: &[OutEvent],
) {
    fleet::input::count_batch(records, rejected);
    // Counted here, then added once per label: a batch holds a hundred thousand evaluations.
    let mut verdicts = [0u64; 3];
    for (_, outcome) in audit.iter().flat_map(PassAudit::evaluations) {
        match outcome.verdict {
            Verdict::Eligible => verdicts[0] += 1,
            Verdict::PartialMatch => verdicts[1] += 1,
            Verdict::NotEligible => verdicts[2] += 1,
            Verdict::NotApplicable => {}
        }
    }
    for (label, count) in ["eligible", "partial_match", "not_eligible"]
        .into_iter()
        .zip(verdicts)
        .filter(|&(_, count)| count > 0)
    {
        metrics::counter!(m::VERDICTS, "verdict" => label).increment(count);
    }
    let mut transitions: Vec<(&str, u64)> = Vec::new();
    for kind in events.iter().filter_map(OutEvent::transition_kind) {
        match transitions.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, count)) => *count += 1,
            None => transitions.push((kind, 1)),
        }
    }
    for (kind, count) in transitions {
        metrics::counter!(m::TRANSITION_EVENTS, "kind" => kind).increment(count);
    }
    stats.records.fetch_add(records.len() as u64, Relaxed);
    stats
        .dead_lettered
        .fetch_add(rejected.len() as u64, Relaxed);
    stats.evaluations.fetch_add(
        audit.iter().map(PassAudit::len).sum::<usize>() as u64,
        Relaxed,
    );
    stats.events.fetch_add(events.len() as u64, Relaxed);
}
