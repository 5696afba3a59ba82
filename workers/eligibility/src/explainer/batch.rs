//! One micro-batch end to end: skip what PostgreSQL says is done, decode, load the stored
//! profile and rule of each event and re-derive its facts (a missing or disagreeing input is a
//! dead letter), explain (events concurrently, LLM requests bounded by the client), publish,
//! commit, cache.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use ::explain::{Facts, Language};
use engine::{Profile, ValidationReport};
use fleet::error::IoError;
use fleet::events::EligibilityExplained;
use fleet::input::{Record, Rejected};
use fleet::kafka::Outgoing;
use fleet::metrics as m;
use fleet::offsets::Offsets;
use fleet::retry::{batch_with_retries, with_retries};
use fleet::topics::ELIGIBILITY_EXPLAINED;
use tokio::task::JoinSet;

use super::Pipeline;
use super::explain::{Explanation, Subject, derive_facts, explain_by};
use super::input::decode;
use super::store;

/// An event whose facts were re-derived.
struct Prepared {
    subject: Subject,
    facts: Vec<Facts>,
}

/// Processes `records`; returns the next offsets now committed in PostgreSQL.
pub async fn process(pipeline: &Pipeline, records: Vec<Record>) -> anyhow::Result<Offsets> {
    let done = pipeline.offsets.lock().expect("not poisoned").clone();
    let fresh: Vec<Record> = records
        .into_iter()
        .filter(|r| {
            done.get(&(r.topic.clone(), r.partition))
                .is_none_or(|&next| r.offset >= next)
        })
        .collect();
    if fresh.is_empty() {
        return Ok(HashMap::new());
    }
    let mut next = Offsets::new();
    let mut subjects = Vec::new();
    let mut rejected = Vec::new();
    for record in &fresh {
        let slot = next
            .entry((record.topic.clone(), record.partition))
            .or_default();
        *slot = (*slot).max(record.offset + 1);
        match decode(&pipeline.codec, record).await {
            Ok(subject) => subjects.push((record, subject)),
            Err(r) => rejected.push(r),
        }
    }
    let inputs = load_inputs(pipeline, &subjects).await?;
    let mut prepared: Vec<Prepared> = Vec::new();
    let mut seen = HashSet::new();
    for (record, subject) in subjects {
        match prepare(pipeline, &inputs, record, subject) {
            Ok(p) => {
                // The same evaluation twice (an evaluator replay): explained once.
                if seen.insert(p.subject.evaluation_id.clone()) {
                    prepared.push(p);
                }
            }
            Err(r) => rejected.push(r),
        }
    }
    let explained = explain_all(pipeline, prepared).await?;
    batch_with_retries(fresh.len(), || {
        attempt(pipeline, &explained, &rejected, &next)
    })
    .await?;
    store::cache(&pipeline.cache, &explained).await;
    fleet::input::count_batch(&fresh, &rejected);
    pipeline
        .offsets
        .lock()
        .expect("not poisoned")
        .extend(next.clone());
    Ok(next)
}

/// The stored profiles and rules the subjects name. The evaluator publishes its events before
/// its transaction commits, so an event can arrive a moment before its snapshot: what is missing
/// is asked again, with growing pauses, for up to `missing_data_grace`.
async fn load_inputs(
    pipeline: &Pipeline,
    subjects: &[(&Record, Subject)],
) -> anyhow::Result<store::Inputs> {
    let mut inputs = store::Inputs::default();
    let deadline = tokio::time::Instant::now() + pipeline.missing_data_grace;
    let mut pause = Duration::from_millis(50);
    let mut first = true;
    loop {
        let mut hashes: Vec<String> = subjects
            .iter()
            .map(|(_, s)| s.input_hash.clone())
            .filter(|h| !inputs.snapshots.contains_key(h))
            .collect();
        let mut rules: Vec<String> = subjects
            .iter()
            .map(|(_, s)| s.rule_id.clone())
            .filter(|r| !inputs.rules.contains_key(r))
            .collect();
        hashes.sort_unstable();
        hashes.dedup();
        rules.sort_unstable();
        rules.dedup();
        if hashes.is_empty() && rules.is_empty() {
            return Ok(inputs);
        }
        if !first {
            if tokio::time::Instant::now() + pause > deadline {
                return Ok(inputs);
            }
            tokio::time::sleep(pause).await;
            pipeline.health.heartbeat();
            pause = (pause * 2).min(Duration::from_secs(2));
        }
        first = false;
        let found = with_retries("postgres", || {
            store::load_inputs(&pipeline.pool, &hashes, &rules)
        })
        .await?;
        inputs.merge(found);
    }
}

/// The subject's facts from the stored profile and rule; the record is rejected, with the
/// reason, when they cannot be had.
fn prepare(
    pipeline: &Pipeline,
    inputs: &store::Inputs,
    record: &Record,
    subject: Subject,
) -> Result<Prepared, Rejected> {
    facts_of(pipeline, inputs, subject).map_err(|reason| Rejected::validation(record, reason))
}

fn facts_of(
    pipeline: &Pipeline,
    inputs: &store::Inputs,
    subject: Subject,
) -> Result<Prepared, String> {
    let catalogue = &pipeline.catalogue;
    let json = inputs.snapshots.get(&subject.input_hash).ok_or_else(|| {
        format!(
            "profile snapshot {} is not in profile_snapshots",
            subject.input_hash
        )
    })?;
    let text = inputs
        .rules
        .get(&subject.rule_id)
        .ok_or_else(|| format!("rule {} is not in eligibility_rules", subject.rule_id))?;
    let profile = Profile::from_json(
        catalogue,
        json,
        &format!("profile_snapshots/{}", subject.input_hash),
    )
    .map_err(|report| format!("stored profile: {report}"))?;
    let rule = engine::load::parse_rule_yaml(
        catalogue,
        text,
        &format!("eligibility_rules/{}", subject.rule_id),
    )
    .map_err(|problems| format!("stored rule: {}", ValidationReport { problems }))?;
    let facts = derive_facts(catalogue, &rule, &profile, &subject, &pipeline.languages)?;
    Ok(Prepared { subject, facts })
}

/// The explanations of every prepared event in every language: stored ones reused, the rest
/// made concurrently (one task per event and language; the LLM client bounds the requests, and
/// none starts after the batch's budget for the LLM).
async fn explain_all(
    pipeline: &Pipeline,
    prepared: Vec<Prepared>,
) -> anyhow::Result<Vec<EligibilityExplained>> {
    let ids: Vec<String> = prepared
        .iter()
        .map(|p| p.subject.evaluation_id.clone())
        .collect();
    let stored = with_retries("postgres", || {
        store::load_explanations(&pipeline.pool, &ids)
    })
    .await?;
    let mut out: Vec<Option<EligibilityExplained>> = Vec::new();
    let mut tasks = JoinSet::new();
    let deadline = std::time::Instant::now() + pipeline.llm_batch_budget;
    for p in prepared {
        let subject = Arc::new(p.subject);
        for facts in p.facts {
            let language = facts.language().code();
            let key = (subject.evaluation_id.clone(), language.to_string());
            let slot = out.len();
            if let Some(existing) = stored.get(&key) {
                out.push(Some(existing.clone()));
                continue;
            }
            out.push(None);
            let llm = pipeline.llm.clone();
            let subject = subject.clone();
            tasks.spawn(async move {
                let case_id = format!("{}:{language}", subject.evaluation_id);
                let explanation =
                    explain_by(&case_id, &facts, llm.as_deref(), Some(deadline)).await;
                (slot, event(&subject, facts.language(), explanation))
            });
        }
    }
    // Explaining can take a while (LLM timeouts): the main loop is busy, not wedged.
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            joined = tasks.join_next() => match joined {
                Some(Ok((slot, explained))) => out[slot] = Some(explained),
                Some(Err(e)) => {
                    m::error("internal");
                    anyhow::bail!("an explanation task failed: {e}");
                }
                None => break,
            },
            _ = tick.tick() => pipeline.health.heartbeat(),
        }
    }
    Ok(out.into_iter().flatten().collect())
}

/// The `eligibility.explained` payload (and `explanations` row) of one explanation.
pub fn event(subject: &Subject, language: Language, e: Explanation) -> EligibilityExplained {
    let language = language.code();
    EligibilityExplained {
        idempotency_key: store::idempotency_key(&subject.evaluation_id, language),
        user_id: subject.user_id.clone(),
        scheme_id: subject.scheme_id.clone(),
        evaluation_id: subject.evaluation_id.clone(),
        language: language.to_string(),
        explanation: e.text,
        generated_by: e.generated_by.as_str().to_string(),
        oracle_verdict: e.oracle_verdict.to_string(),
        trust_score: e.trust_score,
        fallback_reason: e.fallback_reason.map(|f| f.as_str().to_string()),
    }
}

/// Publish (events and dead letters, acknowledged), then commit rows and offsets.
async fn attempt(
    pipeline: &Pipeline,
    explained: &[EligibilityExplained],
    rejected: &[Rejected],
    next: &Offsets,
) -> Result<(), IoError> {
    let mut outgoing = Vec::with_capacity(explained.len() + rejected.len());
    for e in explained {
        let payload = pipeline.codec.encode(ELIGIBILITY_EXPLAINED, e).await?;
        outgoing.push(Outgoing {
            topic: ELIGIBILITY_EXPLAINED.to_string(),
            key: e.user_id.as_bytes().to_vec(),
            partition: None,
            timestamp_ms: None,
            payload,
            headers: vec![("idempotency_key", e.idempotency_key.clone())],
        });
    }
    for r in rejected {
        outgoing.push(r.encode(&pipeline.codec).await?);
    }
    fleet::kafka::send_all(&pipeline.producer, &outgoing).await?;
    store::commit(&pipeline.pool, &pipeline.group, explained, next).await
}
