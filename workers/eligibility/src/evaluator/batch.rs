//! One micro-batch end to end: skip what PostgreSQL says is done, decode and validate (bad
//! records become dead letters), run each user's pass, publish, commit, cache.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use engine::{Date, Profile, Verdict};
use fleet::avro::Codec;
use fleet::events::ProfileUpdate;
use fleet::input::{Record, Rejected, decode};
use fleet::kafka::Outgoing;
use fleet::metrics as m;
use fleet::offsets::Offsets;
use fleet::retry::{StepError, step, with_retries};
use fleet::topics::*;
use serde_json::Value as Json;

use super::Pipeline;
use super::audit::PassAudit;
use super::pass::{self, OutEvent, Trigger, UserState};
use super::store::{self, BatchWrite};

/// Processes `records`; returns the next offsets now committed in PostgreSQL.
pub async fn process(pipeline: &mut Pipeline, records: Vec<Record>) -> anyhow::Result<Offsets> {
    let done = pipeline.offsets.lock().expect("not poisoned").clone();
    let fresh: Vec<Record> = records
        .into_iter()
        .filter(|r| {
            pipeline.replay
                || done
                    .get(&(r.topic.clone(), r.partition))
                    .is_none_or(|&next| r.offset >= next)
        })
        .collect();
    let mut committed = Offsets::new();
    let (profiles, others): (Vec<Record>, Vec<Record>) = fresh
        .into_iter()
        .partition(|r| r.topic == USER_METADATA_UPDATED || r.topic == PROFILE_ASSEMBLED);
    if !profiles.is_empty() {
        committed.extend(process_profiles(pipeline, profiles).await?);
    }
    for record in others {
        pipeline.refresh_rules().await?;
        committed.extend(super::rule_change::process(pipeline, record).await?);
    }
    pipeline
        .offsets
        .lock()
        .expect("not poisoned")
        .extend(committed.clone());
    Ok(committed)
}

/// A validated profile update.
struct Work {
    record: Record,
    user_id: String,
    profile: Profile,
    json: Json,
    as_of: Date,
    /// The partition that owns the user (the partition map, by state and user id).
    owner: i32,
}

fn validate(pipeline: &Pipeline, record: &Record, update: ProfileUpdate) -> Result<Work, Rejected> {
    let reject = |reason: String| Rejected::validation(record, reason);
    let json: Json = serde_json::from_str(&update.profile)
        .map_err(|e| reject(format!("profile: not JSON: {e}")))?;
    let profile = Profile::from_json(&pipeline.book.catalogue, &json, &record.source())
        .map_err(|report| reject(format!("profile: {report}")))?;
    if profile.user_id.as_deref() != Some(update.user_id.as_str()) {
        return Err(reject(format!(
            "user_id: the event says {:?} but the profile says {:?}",
            update.user_id, profile.user_id
        )));
    }
    let as_of = record.as_of(update.as_of.as_deref()).map_err(reject)?;
    let state = pass::state_of(&pipeline.book, &profile);
    let owner = partition_map().partition_for(state.as_deref(), &update.user_id);
    Ok(Work {
        record: record.clone(),
        user_id: update.user_id,
        profile,
        json,
        as_of,
        owner,
    })
}

async fn process_profiles(pipeline: &Pipeline, records: Vec<Record>) -> anyhow::Result<Offsets> {
    let mut next = Offsets::new();
    let mut work = Vec::new();
    let mut forwards = Vec::new();
    let mut rejected = Vec::new();
    for record in &records {
        // A replay's range is the caller's: it neither reads nor writes offsets.
        if !pipeline.replay {
            let slot = next
                .entry((record.topic.clone(), record.partition))
                .or_default();
            *slot = (*slot).max(record.offset + 1);
        }
        match decode::<ProfileUpdate>(&pipeline.codec, record).await {
            Ok(update) => match validate(pipeline, record, update) {
                // Another worker owns this user: the record goes there, and is committed here
                // with the forward (a replay evaluates what it is given).
                Ok(w) if w.owner != record.partition && !pipeline.replay => {
                    forwards.push(fleet::routing::copy_to(record, w.owner))
                }
                Ok(w) => work.push(w),
                Err(r) => rejected.push(r),
            },
            Err(r) => rejected.push(r),
        }
    }
    let (users, audit, events) = with_retries("internal", || {
        attempt(pipeline, &work, &forwards, &rejected, &next)
    })
    .await
    .map_err(|e| {
        m::error(e.kind);
        anyhow::anyhow!(
            "micro-batch of {} records failed after retries: {e}",
            records.len()
        )
    })?;
    write_cache(pipeline, &users).await;
    record_metrics(pipeline, &records, &rejected, &audit, &events);
    if !forwards.is_empty() {
        metrics::counter!(m::RECORDS_ROUTED, "kind" => "forwarded")
            .increment(forwards.len() as u64);
    }
    Ok(next)
}

type Attempt = (Vec<(String, UserState)>, Vec<PassAudit>, Vec<OutEvent>);

/// Load, evaluate, publish, commit. Deterministic given the stored state, so a retry (or a
/// replay after a crash) does the same thing again.
async fn attempt(
    pipeline: &Pipeline,
    work: &[Work],
    forwards: &[Outgoing],
    rejected: &[Rejected],
    next: &Offsets,
) -> Result<Attempt, StepError> {
    let mut ids: Vec<String> = work.iter().map(|w| w.user_id.clone()).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut states = step(
        "postgres",
        store::load_users(&pipeline.pool, &pipeline.book, &ids).await,
    )?;
    let started = Instant::now();
    let mut audit = Vec::new();
    let mut events = Vec::new();
    for w in work {
        let user = states.entry(w.user_id.clone()).or_default();
        let trigger = Trigger::Profile {
            profile: w.profile.clone(),
            json: w.json.clone(),
            position: pass::Position::of(&w.record),
            full: w.record.topic == PROFILE_ASSEMBLED,
        };
        if let Some(out) = pass::run(&pipeline.book, &w.user_id, user, trigger, w.as_of) {
            if !out.audit.is_empty() {
                audit.push(out.audit);
            }
            events.extend(out.events);
        }
    }
    metrics::histogram!(m::EVALUATION_DURATION, "engine" => "scalar")
        .record(started.elapsed().as_secs_f64());
    let mut outgoing = step(
        "schema_registry",
        m::time_store(
            "schema_registry",
            "encode",
            encode_events(&pipeline.codec, &events),
        )
        .await,
    )?;
    for r in rejected {
        outgoing.push(step("schema_registry", r.encode(&pipeline.codec).await)?);
    }
    outgoing.extend(forwards.iter().cloned());
    step(
        "kafka_produce",
        m::time_store(
            "kafka",
            "produce",
            fleet::kafka::send_all(&pipeline.producer, &outgoing),
        )
        .await,
    )?;
    let users: Vec<(String, UserState)> = states
        .into_iter()
        .filter(|(_, u)| u.profile_touched || !u.touched.is_empty())
        .collect();
    // Every record's partition: its offset is committed, and its user (if evaluated) is owned
    // by it.
    let mut partitions: Vec<i32> = next.keys().map(|&(_, p)| p).collect();
    partitions.sort_unstable();
    partitions.dedup();
    let write = BatchWrite {
        audit,
        users: users.iter().map(|(id, u)| (id.as_str(), u)).collect(),
        offsets: next.clone(),
        partitions,
    };
    step(
        "postgres",
        store::commit_batch(
            &pipeline.pool,
            &pipeline.group,
            pipeline.leases.as_ref(),
            &write,
        )
        .await,
    )?;
    let BatchWrite { audit, .. } = write;
    Ok((users, audit, events))
}

/// Encodes events for their topics, with the idempotency key as a header too.
pub async fn encode_events(codec: &Codec, events: &[OutEvent]) -> anyhow::Result<Vec<Outgoing>> {
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
/// users with any). A Redis failure is counted and logged, not fatal: PostgreSQL has the
/// verdicts, and a missing entry only costs a read.
pub async fn write_cache(pipeline: &Pipeline, users: &[(String, UserState)]) {
    let mut puts = Vec::new();
    let mut deletes = Vec::new();
    for (user_id, user) in users.iter().filter(|(_, u)| !u.touched.is_empty()) {
        for scheme in &user.touched {
            let key = fleet::cache::verdict_key(user_id, scheme);
            match (user.verdicts.get(scheme), user.written.get(scheme)) {
                (Some(v), Some(new)) => puts.push((
                    key,
                    serde_json::json!({
                        "verdict": v.known.verdict.name(), "match_score": v.known.score,
                        "rule_id": v.rule_id, "rule_version": v.rule_version,
                        "evaluation_id": new.evaluation_id, "as_of": v.as_of.to_string(),
                        "gaps": new.gaps,
                    })
                    .to_string(),
                )),
                _ => deletes.push(key),
            }
        }
        let count = |verdict| {
            user.verdicts
                .values()
                .filter(|v| v.known.verdict == verdict)
                .count()
        };
        puts.push((
            fleet::cache::summary_key(user_id),
            serde_json::json!({
                "eligible": count(Verdict::Eligible), "partial_match": count(Verdict::PartialMatch),
                "not_eligible": count(Verdict::NotEligible),
                "input_hash": user.profile.as_ref().map(|p| p.profile.input_snapshot_hash.clone()),
            })
            .to_string(),
        ));
    }
    let cache = &pipeline.cache;
    if let Err(e) = m::time_store("redis", "invalidate", cache.invalidate(&deletes)).await {
        m::error("redis");
        tracing::warn!(error = %e, "cache invalidation failed");
    }
    if let Err(e) = m::time_store("redis", "set", cache.put(&puts)).await {
        m::error("redis");
        tracing::warn!(error = %e, "cache update failed");
    }
}

pub fn record_metrics(
    pipeline: &Pipeline,
    records: &[Record],
    rejected: &[Rejected],
    audit: &[PassAudit],
    events: &[OutEvent],
) {
    for record in records {
        metrics::counter!(m::EVENTS_CONSUMED, "topic" => record.topic.clone()).increment(1);
    }
    for r in rejected {
        metrics::counter!(m::DLQ_MESSAGES, "topic" => r.record.topic.clone(), "reason" => r.code)
            .increment(1);
        tracing::warn!(source = %r.record.source(), code = r.code, reason = %r.reason, "dead-lettered");
    }
    for (_, outcome) in audit.iter().flat_map(PassAudit::evaluations) {
        let label = match outcome.verdict {
            Verdict::Eligible => "eligible",
            Verdict::PartialMatch => "partial_match",
            Verdict::NotEligible => "not_eligible",
            Verdict::NotApplicable => continue,
        };
        metrics::counter!(m::VERDICTS, "verdict" => label).increment(1);
    }
    for event in events {
        if let Some(kind) = event.transition_kind() {
            metrics::counter!(m::TRANSITION_EVENTS, "kind" => kind).increment(1);
        }
    }
    let stats = &pipeline.stats;
    stats.records.fetch_add(records.len() as u64, Relaxed);
    stats
        .dead_lettered
        .fetch_add(rejected.len() as u64, Relaxed);
    stats.evaluations.fetch_add(
        audit.iter().map(PassAudit::len).sum::<usize>() as u64,
        Relaxed,
    );
    stats.events.fetch_add(events.len() as u64, Relaxed);
    metrics::histogram!(m::MICRO_BATCH_SIZE).record(records.len() as f64);
    metrics::gauge!(m::LAST_PROGRESS).set(m::unix_now());
}
