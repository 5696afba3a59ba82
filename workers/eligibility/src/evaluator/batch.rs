//! One micro-batch end to end: skip what PostgreSQL says is done, decode and validate (bad
//! records become dead letters), run each user's pass, then publish, commit, cache — that
//! tail as a task of its own, overlapping the next batch ([`super::in_flight`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use engine::profile_text::ReadProfile;
use engine::{Date, Outcome, Profile};
use fleet::error::IoError;
use fleet::events::ProfileUpdate;
use fleet::input::{Record, Rejected, decode};
use fleet::kafka::Outgoing;
use fleet::metrics as m;
use fleet::offsets::Offsets;
use fleet::retry::batch_with_retries;
use fleet::topics::*;
use kernels::engine_select::EngineUsed;
use tokio::sync::oneshot;

use super::Pipeline;
use super::audit::PassAudit;
use super::commit::BatchWrite;
use super::in_flight::{self, ChangedUsers, Committed};
use super::pass::{self, OutEvent, Trigger};
use super::sink::{self, Sink};
use crate::rules::book::{RuleBook, RuleOutcomes};
use crate::users::state::{Position, ProfileText, UserState};
use crate::users::store;

/// Processes `records`; returns the next offsets now committed in PostgreSQL — those of
/// the previous profile batch when this one's are still in flight ([`settle`] collects them).
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
    if !others.is_empty() {
        // A rule change reads its users from PostgreSQL: every profile before it is committed.
        committed.extend(settle(pipeline).await?);
        for record in others {
            pipeline.refresh_rules().await?;
            let offsets = super::rule_change::process(pipeline, record).await?;
            remember(pipeline, &offsets);
            committed.extend(offsets);
        }
    }
    Ok(committed)
}

/// Waits for every batch in flight to be published and committed; returns their offsets.
pub async fn settle(pipeline: &mut Pipeline) -> anyhow::Result<Offsets> {
    let offsets = pipeline.in_flight.settle().await?;
    remember(pipeline, &offsets);
    Ok(offsets)
}

/// Records committed offsets, so that a record seen again after them is skipped.
fn remember(pipeline: &Pipeline, committed: &Offsets) {
    pipeline
        .offsets
        .lock()
        .expect("not poisoned")
        .extend(committed.clone());
}

/// A validated profile update.
struct Work {
    position: Position,
    /// `profile.assembled`: every rule is evaluated again.
    full: bool,
    user_id: String,
    // Shared with the passes and the state they leave: cloned per pass, not copied.
    profile: Arc<Profile>,
    json: ProfileText,
    as_of: Date,
    /// The partition that owns the user (the partition map, by state and user id).
    owner: i32,
}

fn validate(book: &RuleBook, record: &Record, update: ProfileUpdate) -> Result<Work, Rejected> {
    let reject = |reason: String| Rejected::validation(record, reason);
    // One pass over the text: the profile, its input hash and the text to store (as read, not
    // as sent: PostgreSQL's `jsonb` cannot hold every number JSON can spell — `1e-20000` reads
    // as 0.0 here but overflows `numeric` there — and a snapshot that cannot be stored would
    // stop the partition).
    let ReadProfile { profile, text } =
        ReadProfile::read(&book.catalogue, &update.profile, &record.source())
            .map_err(|error| reject(format!("profile: {error}")))?;
    if profile.user_id.as_deref() != Some(update.user_id.as_str()) {
        return Err(reject(format!(
            "user_id: the event says {:?} but the profile says {:?}",
            update.user_id, profile.user_id
        )));
    }
    let as_of = record.as_of(update.as_of.as_deref())?;
    let state = pass::state_of(book, &profile);
    let owner = partition_map().partition_for(state.as_deref(), &update.user_id);
    Ok(Work {
        position: Position::of(record),
        full: record.topic == PROFILE_ASSEMBLED,
        user_id: update.user_id,
        profile: Arc::new(profile),
        json: text.into(),
        as_of,
        owner,
    })
}

async fn process_profiles(
    pipeline: &mut Pipeline,
    records: Vec<Record>,
) -> anyhow::Result<Offsets> {
    let mut next = Offsets::new();
    let mut decoded = Vec::with_capacity(records.len());
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
        decoded.push((
            record,
            decode::<ProfileUpdate>(&pipeline.codec, record).await,
        ));
    }
    // Who is read from PostgreSQL is known once the records are decoded: the read runs while
    // the updates are validated, not after (docs/fleet.md "Where the time goes").
    let carried = pipeline.in_flight.users();
    let unread = users_to_read(
        &carried,
        decoded
            .iter()
            .filter_map(|(_, update)| update.as_ref().ok())
            .map(|update| update.user_id.as_str()),
    );
    let (read, validated) = tokio::join!(
        biased;
        store::load_users(&pipeline.pool, &pipeline.book, &unread),
        async { validate_all(&pipeline.book, decoded) },
    );
    let mut work = Vec::with_capacity(validated.len());
    for (record, validated) in validated {
        match validated {
            // Another worker owns this user: the record goes there, and is committed here
            // with the forward (a replay evaluates what it is given).
            Ok(w) if w.owner != record.partition && !pipeline.replay => {
                forwards.push(fleet::routing::copy_to(record, w.owner))
            }
            Ok(w) => work.push(w),
            Err(r) => rejected.push(r),
        }
    }
    let mut read = Some(read);
    let (states, audit, events) = batch_with_retries(records.len(), || {
        evaluate(pipeline, &carried, &work, read.take())
    })
    .await?;
    let completed = pipeline.in_flight.make_room().await?;
    remember(pipeline, &completed);
    let users: ChangedUsers = Arc::new(
        states
            .into_iter()
            .filter(|(_, u)| u.profile_touched || !u.touched.is_empty())
            .collect(),
    );
    let tail = Tail {
        sink: pipeline.sink(),
        records,
        users: users.clone(),
        audit,
        events,
        forwards,
        rejected,
        next,
    };
    pipeline
        .in_flight
        .start(users, |after, done| tail.run(after, done));
    Ok(completed)
}

/// Validates the batch's decoded updates on every core: parsing and hashing a profile is most
/// of the loop's own work per record ([`super::spread`]). In record order, with the records
/// that did not decode, so that dead letters keep the order of their records.
fn validate_all<'r>(
    book: &RuleBook,
    decoded: Vec<(&'r Record, Result<ProfileUpdate, Rejected>)>,
) -> Vec<(&'r Record, Result<Work, Rejected>)> {
    crate::spread::map(decoded, |(record, update)| {
        (record, update.and_then(|u| validate(book, record, u)))
    })
}

type Evaluated = (HashMap<String, UserState>, Vec<PassAudit>, Vec<OutEvent>);

/// The users of `updates` that no batch in flight holds, sorted, once each.
fn users_to_read<'a>(
    carried: &HashMap<&str, &UserState>,
    updates: impl Iterator<Item = &'a str>,
) -> Vec<String> {
    let mut ids: Vec<String> = updates
        .filter(|user| !carried.contains_key(user))
        .map(str::to_string)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// Takes the batch's users (those a batch in flight changed from `carried`, the rest from
/// `read`, the read of [`users_to_read`] made while the batch was validated; a retry, which has
/// none, reads them again) and runs their passes. Pure given what it loads, so a retry does the
/// same.
async fn evaluate(
    pipeline: &Pipeline,
    carried: &HashMap<&str, &UserState>,
    work: &[Work],
    read: Option<Result<HashMap<String, UserState>, IoError>>,
) -> Result<Evaluated, IoError> {
    let mut states = match read {
        Some(read) => read?,
        None => {
            let unread = users_to_read(carried, work.iter().map(|w| w.user_id.as_str()));
            store::load_users(&pipeline.pool, &pipeline.book, &unread).await?
        }
    };
    for w in work {
        if let Some(state) = carried.get(w.user_id.as_str()) {
            states.insert(w.user_id.clone(), state.carried_over());
        }
    }
    let started = Instant::now();
    let on_gpu = pipeline.engine.gpu().is_ok() && work.len() >= pipeline.gpu_min_profiles;
    let batch = if on_gpu {
        gpu_outcomes(pipeline, work)?
    } else {
        Vec::new()
    };
    let (audit, events) = run_passes(&pipeline.book, work, &batch, &mut states);
    metrics::histogram!(m::EVALUATION_DURATION, "engine" => if on_gpu { "gpu" } else { "scalar" })
        .record(started.elapsed().as_secs_f64());
    Ok((states, audit, events))
}

/// A micro-batch big enough for the GPU (`ELIGIBILITY_GPU_MIN_PROFILES`): every rule of each
/// profile's state, evaluated there first; the passes take these outcomes instead of
/// evaluating (their gaps and traces still run on the CPU, and are checked against them).
fn gpu_outcomes(pipeline: &Pipeline, work: &[Work]) -> Result<Vec<RuleOutcomes>, IoError> {
    let book = &pipeline.book;
    let aged: Vec<Profile> = work
        .iter()
        .map(|w| w.profile.on(w.as_of).into_owned())
        .collect();
    let states: Vec<Option<String>> = aged.iter().map(|p| pass::state_of(book, p)).collect();
    let items: Vec<(&Profile, Option<&str>, Date)> = work
        .iter()
        .zip(&aged)
        .zip(&states)
        .map(|((w, p), state)| (p, state.as_deref(), w.as_of))
        .collect();
    let started = Instant::now();
    let (outcomes, used) = book
        .batch_outcomes(&pipeline.engine, &items, 2)
        .map_err(|e| IoError::Gpu(e.into()))?;
    if let EngineUsed::CpuAfterGpuError(why) = &used {
        fleet::metrics::error("gpu");
        tracing::warn!(%why, "the GPU failed on a profile batch: evaluated on the CPU");
    }
    metrics::histogram!(m::BATCH_ENGINE_DURATION, "engine" => used.name())
        .record(started.elapsed().as_secs_f64());
    Ok(outcomes)
}

/// What is left of a batch once evaluated: publish, commit, cache, count.
struct Tail {
    sink: Sink,
    records: Vec<Record>,
    users: ChangedUsers,
    audit: Vec<PassAudit>,
    events: Vec<OutEvent>,
    forwards: Vec<Outgoing>,
    rejected: Vec<Rejected>,
    next: Offsets,
}

impl Tail {
    /// Publishes at once; commits and writes the cache after the previous batch did.
    async fn run(
        self,
        previous: Option<Committed>,
        done: oneshot::Sender<()>,
    ) -> anyhow::Result<Offsets> {
        let Tail {
            sink,
            records,
            users,
            audit,
            events,
            forwards,
            rejected,
            next,
        } = self;
        // Every record's partition: its offset is committed, and its user (if evaluated) is
        // owned by it.
        let mut partitions: Vec<i32> = next.keys().map(|&(_, p)| p).collect();
        partitions.sort_unstable();
        partitions.dedup();
        let write = BatchWrite {
            audit,
            users: users.iter().map(|(id, u)| (id.as_str(), u)).collect(),
            offsets: next.clone(),
            partitions,
        };
        batch_with_retries(records.len(), || async {
            let mut extra = Vec::with_capacity(rejected.len() + forwards.len());
            for r in &rejected {
                extra.push(r.encode(&sink.codec).await?);
            }
            extra.extend(forwards.iter().cloned());
            sink::publish(&sink, &events, extra).await
        })
        .await?;
        in_flight::after_previous(previous).await?;
        batch_with_retries(records.len(), || sink::commit(&sink, &write)).await?;
        let BatchWrite { audit, .. } = write;
        sink::after_commit(&sink, &users, &records, &rejected, &audit, &events).await;
        // The next batch's commit may go ahead (its cache writes come after these).
        let _ = done.send(());
        if !forwards.is_empty() {
            metrics::counter!(m::RECORDS_ROUTED, "kind" => "forwarded")
                .increment(forwards.len() as u64);
        }
        Ok(next)
    }
}

/// One user's passes in a batch, in record order.
struct UserPasses<'a> {
    user_id: &'a str,
    state: UserState,
    /// Each record, with the batch engine's outcomes for it (empty when none).
    work: Vec<(&'a Work, &'a [(usize, Outcome)])>,
    outputs: Vec<pass::PassOutput>,
}

/// Runs every pass of the batch: a user's passes in record order on one thread, users spread
/// over the cores (passes are pure; each reads only its own user's state). The audit records
/// and events come back in the order of each user's first record, whatever the threads did.
fn run_passes(
    book: &RuleBook,
    work: &[Work],
    batch: &[RuleOutcomes],
    states: &mut HashMap<String, UserState>,
) -> (Vec<PassAudit>, Vec<OutEvent>) {
    let mut users: Vec<UserPasses> = Vec::new();
    let mut slot_of: HashMap<&str, usize> = HashMap::new();
    for (k, w) in work.iter().enumerate() {
        let outcomes = batch.get(k).map_or(&[][..], Vec::as_slice);
        let slot = *slot_of.entry(w.user_id.as_str()).or_insert_with(|| {
            users.push(UserPasses {
                user_id: &w.user_id,
                state: states.remove(&w.user_id).unwrap_or_default(),
                work: Vec::new(),
                outputs: Vec::new(),
            });
            users.len() - 1
        });
        users[slot].work.push((w, outcomes));
    }
    crate::spread::for_each_mut(&mut users, |u| u.run(book));
    let mut audit = Vec::new();
    let mut events = Vec::new();
    for user in users {
        for out in user.outputs {
            if !out.audit.is_empty() {
                audit.push(out.audit);
            }
            events.extend(out.events);
        }
        states.insert(user.user_id.to_string(), user.state);
    }
    (audit, events)
}

impl UserPasses<'_> {
    fn run(&mut self, book: &RuleBook) {
        for &(w, batch) in &self.work {
            let trigger = Trigger::Profile {
                profile: w.profile.clone(),
                json: w.json.clone(),
                position: w.position.clone(),
                full: w.full,
                batch,
            };
            if let Some(out) = pass::run(book, &w.user_id, &mut self.state, trigger, w.as_of) {
                self.outputs.push(out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A number the engine reads but PostgreSQL's `jsonb` could not hold (a scale beyond
    /// `numeric`'s) is stored as read, so the snapshot can be written.
    #[test]
    fn a_snapshot_holds_the_profile_as_read_not_as_spelled() {
        let book = RuleBook::bundled_for_tests();
        let record = Record {
            topic: USER_METADATA_UPDATED.into(),
            partition: 0,
            offset: 7,
            key: None,
            payload: None,
            timestamp_ms: None,
            headers: Vec::new(),
        };
        let update = ProfileUpdate {
            event_id: "e1".into(),
            user_id: "u1".into(),
            profile: r#"{"user_id": "u1", "economic": {"annual_income": 1e-20000}}"#.into(),
            as_of: Some("2025-01-15".into()),
        };
        let work = validate(&book, &record, update).expect("a valid profile");
        assert_eq!(
            &*work.json,
            r#"{"user_id":"u1","economic":{"annual_income":0.0}}"#
        );
    }
}
