//! `policy.rules.updated` and `scheme.deadline.approaching`: the records that re-evaluate many
//! users.
//!
//! A producer's record (the original) is handled once, by whichever worker reads it: a rule
//! version is validated, checked against the stored versions, its conflicts published and the
//! version stored; a deadline's scheme is looked up. Then the record is fanned out
//! ([`fleet::routing`]): one copy to each partition that carries the scheme's users. The owner
//! of each partition re-evaluates that partition's users on the copy, in order with their
//! profile updates, so no other worker ever writes them. (A `replay` re-evaluates every user
//! of the scheme itself.)
//!
//! Users are re-evaluated in pages, each page published and committed like a micro-batch; the
//! record's offset is committed with the last page, so a crash re-runs the whole record, which
//! changes nothing for pages already done.

use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

use engine::columns::ProfileColumns;
use engine::conflicts::detect;
use engine::load::parse_rule_yaml;
use engine::program::Program;
use engine::{Catalogue, Date, Outcome};
use engine::{Rule, RuleSet};
use fleet::error::IoError;
use fleet::events::{DeadlineApproaching, RuleConflictDetected, RulesUpdate};
use fleet::input::{Record, Rejected, decode};
use fleet::kafka::Outgoing;
use fleet::metrics as m;
use fleet::offsets::Offsets;
use fleet::routing;
use fleet::topics::*;
use kernels::engine_select::EngineUsed;
use kernels::output::{Codes, NO_PREVIOUS, Output, Outputs};

use super::Pipeline;
use super::audit::PassAudit;
use super::commit::BatchWrite;
use super::pass::{self, Trigger};
use super::sink;
use crate::rules::proposals;
use crate::rules::store as rules_store;
use crate::users::state::UserState;
use crate::users::store;

/// Users re-evaluated per page.
const PAGE: i64 = 5000;

/// What a rule or deadline record changes: a scheme's verdicts, on a date — or, for the day's
/// birthdays (`ages`), the verdicts the age reaches of the users whose next age change has come.
struct Change {
    scheme: String,
    /// The scheme's state (`central` for a central scheme and for birthdays): which partitions
    /// it concerns.
    state: String,
    as_of: Date,
    ages: bool,
}

pub async fn process(pipeline: &mut Pipeline, record: Record) -> anyhow::Result<Offsets> {
    let offsets: Offsets = if pipeline.replay {
        Offsets::new()
    } else {
        [((record.topic.clone(), record.partition), record.offset + 1)].into()
    };
    let copy = routing::is_copy(&record);
    let read = match (record.topic.as_str(), copy) {
        (POLICY_RULES_UPDATED, false) => rules_updated(pipeline, &record).await?,
        (POLICY_RULES_UPDATED, true) => rule_of_copy(pipeline, &record)
            .await
            .map_or_else(Read::Rejected, Read::Change),
        (SCHEME_DEADLINE_APPROACHING, _) => deadline(pipeline, &record, copy).await?,
        (other, _) => anyhow::bail!("the evaluator does not consume {other}"),
    };
    match read {
        Read::Rejected(rejected) => dead_letter(pipeline, &record, rejected, &offsets).await?,
        Read::Proposed(simulation) => {
            let write = BatchWrite {
                offsets: offsets.clone(),
                partitions: vec![record.partition],
                ..BatchWrite::default()
            };
            sink::publish_and_commit(&pipeline.sink(), &[], vec![simulation], &write).await?;
            sink::after_commit(
                &pipeline.sink(),
                &[],
                std::slice::from_ref(&record),
                &[],
                &[],
                &[],
            )
            .await;
        }
        Read::Change(change) if copy => {
            reevaluate_scheme(pipeline, &record, &change, Some(record.partition), &offsets).await?
        }
        Read::Change(change) if pipeline.replay => {
            reevaluate_scheme(pipeline, &record, &change, None, &offsets).await?
        }
        Read::Change(change) => fan_out(pipeline, &record, &change, &offsets).await?,
    }
    Ok(offsets)
}

/// What a rule or deadline record amounts to: a change to re-evaluate, a dead letter, or (under
/// review) a proposal stored, which changes nothing.
enum Read {
    Change(Change),
    Rejected(Rejected),
    /// With its `rule.simulation.completed` event, encoded.
    Proposed(Outgoing),
}

/// The original of a rule version: validated against every stored rule (not only the ones this
/// worker holds), conflicts published, stored.
async fn rules_updated(pipeline: &mut Pipeline, record: &Record) -> anyhow::Result<Read> {
    let update: RulesUpdate = match decode(&pipeline.codec, record).await {
        Ok(u) => u,
        Err(r) => return Ok(Read::Rejected(r)),
    };
    let catalogue = &pipeline.book.catalogue;
    let rule = match parse_rule_yaml(catalogue, &update.rule_yaml, &record.source()) {
        Ok(rule) => rule,
        Err(problems) => {
            let report = engine::ValidationReport { problems };
            return Ok(Read::Rejected(Rejected::validation(
                record,
                format!("rule: {report}"),
            )));
        }
    };
    let as_of = match record.as_of(update.as_of.as_deref()) {
        Ok(d) => d,
        Err(r) => return Ok(Read::Rejected(r)),
    };
    let stored = rules_store::load(&pipeline.pool, &Catalogue::bundled())
        .await?
        .rules;
    if let Err(reason) = proposals::check_new_version(&stored, &rule) {
        return Ok(Read::Rejected(Rejected::validation(record, reason)));
    }
    if pipeline.rule_review && !proposals::is_approved(&pipeline.pool, &rule).await? {
        let submission = proposals::Submission {
            rule: &rule,
            yaml: &update.rule_yaml,
            author: &update.author,
            reason: update.reason.as_deref(),
            as_of,
        };
        let (id, _, event) = proposals::submit(
            &pipeline.pool,
            catalogue,
            &stored,
            &submission,
            &proposals::simulation_engine()?,
        )
        .await?;
        tracing::info!(proposal = id, rule_id = %rule.rule_id, scheme = %rule.scheme_id,
            gained = event.gained, lost = event.lost,
            "rule version stored as a proposal with its population diff: it goes live once approved (eligibility rules approve)");
        return Ok(Read::Proposed(
            proposals::encode_simulation(&pipeline.codec, &event).await?,
        ));
    }
    let conflicts = conflict_events(catalogue, &stored, &rule);
    let mut outgoing = Vec::new();
    for event in &conflicts {
        outgoing.push(Outgoing {
            topic: RULE_CONFLICT_DETECTED.to_string(),
            key: rule.scheme_id.as_bytes().to_vec(),
            partition: None,
            timestamp_ms: None,
            payload: pipeline.codec.encode(RULE_CONFLICT_DETECTED, event).await?,
            headers: vec![("idempotency_key", event.idempotency_key.clone())],
        });
    }
    fleet::kafka::send_all(&pipeline.producer, &outgoing).await?;
    let mut client = pipeline.pool.get().await?;
    let tx = client.transaction().await?;
    rules_store::lock(&tx).await?;
    if rules_store::insert(
        &tx,
        &rule,
        &update.rule_yaml,
        &update.author,
        update.reason.as_deref(),
    )
    .await?
        > 0
    {
        rules_store::bump(&tx).await?;
    }
    tx.commit().await?;
    pipeline.refresh_rules().await?;
    tracing::info!(rule_id = %rule.rule_id, scheme = %rule.scheme_id, version = rule.version,
        conflicts = conflicts.len(), "rule version stored");
    Ok(Read::Change(Change {
        scheme: rule.scheme_id,
        state: rule.state,
        as_of,
        ages: false,
    }))
}

/// A fanned-out copy of a rule version the original's reader already validated and stored.
async fn rule_of_copy(pipeline: &Pipeline, record: &Record) -> Result<Change, Rejected> {
    let update: RulesUpdate = decode(&pipeline.codec, record).await?;
    let rule = parse_rule_yaml(
        &pipeline.book.catalogue,
        &update.rule_yaml,
        &record.source(),
    )
    .map_err(|problems| {
        let report = engine::ValidationReport { problems };
        Rejected::validation(record, format!("rule: {report}"))
    })?;
    let as_of = record.as_of(update.as_of.as_deref())?;
    Ok(Change {
        scheme: rule.scheme_id,
        state: rule.state,
        as_of,
        ages: false,
    })
}

/// The conflicts (docs/semantics.md "Conflicts") that the new rule takes part in, among every
/// stored rule.
fn conflict_events(
    catalogue: &Catalogue,
    stored: &RuleSet,
    rule: &Rule,
) -> Vec<RuleConflictDetected> {
    let mut rules: Vec<Rule> = stored
        .rules
        .iter()
        .filter(|r| r.rule_id != rule.rule_id)
        .cloned()
        .collect();
    rules.push(rule.clone());
    let report = detect(catalogue, &RuleSet::from_rules(rules));
    report
        .conflicts
        .into_iter()
        .filter(|c| c.rule_ids.contains(&rule.rule_id))
        .map(|c| {
            let kind = serde_json::to_value(c.conflict_type)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            RuleConflictDetected {
                idempotency_key: engine::hash::sha256_hex(
                    format!("{kind}:{}:{}", c.rule_ids.join(","), c.description).as_bytes(),
                ),
                rule_ids: c.rule_ids,
                conflict_type: kind,
                description: c.description,
                witness: c.witness.map(|w| w.to_string()),
            }
        })
        .collect()
}

/// A deadline: on the original, the scheme's state is looked up among the stored rules (this
/// worker may hold none of them); on a copy, this worker holds the scheme.
async fn deadline(pipeline: &Pipeline, record: &Record, copy: bool) -> anyhow::Result<Read> {
    let event: DeadlineApproaching = match decode(&pipeline.codec, record).await {
        Ok(e) => e,
        Err(r) => return Ok(Read::Rejected(r)),
    };
    let as_of = match record.as_of(event.as_of.as_deref()) {
        Ok(d) => d,
        Err(r) => return Ok(Read::Rejected(r)),
    };
    if event.ages {
        // Birthdays concern users of every partition.
        return Ok(Read::Change(Change {
            scheme: String::new(),
            state: "central".into(),
            as_of,
            ages: true,
        }));
    }
    let state: Option<String> = if copy {
        pipeline
            .book
            .rules
            .rules
            .iter()
            .find(|r| r.scheme_id == event.scheme_id)
            .map(|r| r.state.clone())
    } else {
        rules_store::state_of_scheme(&pipeline.pool, &event.scheme_id).await?
    };
    let Some(state) = state else {
        return Ok(Read::Rejected(Rejected::validation(
            record,
            format!("scheme_id: no rule for scheme {:?}", event.scheme_id),
        )));
    };
    Ok(Read::Change(Change {
        scheme: event.scheme_id,
        state,
        as_of,
        ages: false,
    }))
}

/// Sends a copy of the original to every partition that carries the scheme's users, then
/// commits the original's offset: a crash in between sends the copies again, and a repeated
/// copy re-evaluates users whose verdicts are already current, which writes nothing.
async fn fan_out(
    pipeline: &Pipeline,
    record: &Record,
    change: &Change,
    offsets: &Offsets,
) -> anyhow::Result<()> {
    let copies: Vec<Outgoing> = partition_map()
        .partitions_of_scheme(&change.state)
        .into_iter()
        .map(|p| routing::copy_to(record, p))
        .collect();
    let count = copies.len();
    let write = BatchWrite {
        offsets: offsets.clone(),
        partitions: vec![record.partition],
        ..BatchWrite::default()
    };
    sink::publish_and_commit(&pipeline.sink(), &[], copies, &write).await?;
    sink::after_commit(
        &pipeline.sink(),
        &[],
        std::slice::from_ref(record),
        &[],
        &[],
        &[],
    )
    .await;
    metrics::counter!(m::RECORDS_ROUTED, "kind" => "fanned_out").increment(count as u64);
    tracing::info!(scheme = %change.scheme, source = %record.source(), partitions = count,
        "fanned out to the partitions of the scheme's users");
    Ok(())
}

async fn dead_letter(
    pipeline: &Pipeline,
    record: &Record,
    rejected: Rejected,
    offsets: &Offsets,
) -> anyhow::Result<()> {
    let letter = rejected.encode(&pipeline.codec).await?;
    let write = BatchWrite {
        offsets: offsets.clone(),
        partitions: vec![record.partition],
        ..BatchWrite::default()
    };
    sink::publish_and_commit(&pipeline.sink(), &[], vec![letter], &write).await?;
    sink::after_commit(
        &pipeline.sink(),
        &[],
        std::slice::from_ref(record),
        &[rejected],
        &[],
        &[],
    )
    .await;
    Ok(())
}

/// Re-evaluates every stored user the scheme covers (its state's users, or everyone for a
/// central scheme) on `partition` (every partition for a replay), page by page: verdicts from
/// the batch engine, traces where gaps may exist. For birthdays (`ages`), the users whose next
/// age change has come, re-evaluated on the rules that read the age (no scheme named: the
/// pass finds them through the age that moved, and says `age_changed`).
async fn reevaluate_scheme(
    pipeline: &Pipeline,
    record: &Record,
    change: &Change,
    partition: Option<i32>,
    offsets: &Offsets,
) -> anyhow::Result<()> {
    let Change {
        scheme,
        state,
        as_of,
        ages,
    } = change;
    let as_of = *as_of;
    let state: Option<&str> = (state != "central").then_some(state.as_str());
    let schemes: BTreeSet<String> = if *ages {
        BTreeSet::new()
    } else {
        [scheme.to_string()].into()
    };
    let due: Option<String> = ages.then(|| as_of.to_string());
    let started = Instant::now();
    let mut after = String::new();
    let mut total = 0usize;
    loop {
        let client = pipeline.pool.get().await?;
        let rows = client
            .query(
                "SELECT user_id FROM profile_current
                 WHERE ($1::text IS NULL OR state = $1) AND ($2::int IS NULL OR owner_partition = $2)
                       AND user_id > $3
                       AND ($5::text IS NULL OR next_age_change <= $5::date)
                 ORDER BY user_id LIMIT $4",
                &[&state, &partition, &after, &PAGE, &due],
            )
            .await?;
        drop(client);
        let users: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        let last_page = (users.len() as i64) < PAGE;
        let page_offsets = if last_page {
            offsets.clone()
        } else {
            Offsets::new()
        };
        let done = fleet::retry::with_retries("internal", || {
            reevaluate_page(pipeline, &users, &schemes, as_of, partition, &page_offsets)
        })
        .await
        .map_err(|e: IoError| {
            m::error(e.kind());
            let what = if *ages { "birthdays" } else { scheme.as_str() };
            anyhow::anyhow!("re-evaluating {what} for {}: {e}", record.source())
        })?;
        sink::after_commit(
            &pipeline.sink(),
            &done.0,
            if last_page {
                std::slice::from_ref(record)
            } else {
                &[]
            },
            &[],
            &done.1,
            &done.2,
        )
        .await;
        total += users.len();
        match users.last() {
            Some(last) if !last_page => after = last.clone(),
            _ => break,
        }
    }
    tracing::info!(
        scheme = if *ages {
            "(birthdays)"
        } else {
            scheme.as_str()
        },
        users = total,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "scheme re-evaluated"
    );
    Ok(())
}

type Page = (
    Vec<(String, UserState)>,
    Vec<PassAudit>,
    Vec<pass::OutEvent>,
);

async fn reevaluate_page(
    pipeline: &Pipeline,
    users: &[String],
    schemes: &BTreeSet<String>,
    as_of: Date,
    partition: Option<i32>,
    offsets: &Offsets,
) -> Result<Page, IoError> {
    let mut states = store::load_users(&pipeline.pool, &pipeline.book, users).await?;
    let batch = batch_outcomes(pipeline, users, &states, schemes, as_of)?;
    let started = Instant::now();
    let mut audit = Vec::new();
    let mut events = Vec::new();
    let mut disagreements = Vec::new();
    for user_id in users {
        let Some(user) = states.get_mut(user_id) else {
            continue;
        };
        let trigger = Trigger::Reevaluate {
            schemes,
            batch: batch.get(user_id).map_or(&[], Vec::as_slice),
        };
        if let Some(out) = pass::run(&pipeline.book, user_id, user, trigger, as_of) {
            if !out.audit.is_empty() {
                audit.push(out.audit);
            }
            events.extend(out.events);
            disagreements.extend(out.disagreements);
        }
    }
    metrics::histogram!(m::EVALUATION_DURATION, "engine" => "scalar")
        .record(started.elapsed().as_secs_f64());
    if let Some(first) = disagreements.first() {
        // The property tests hold every path equal; a difference here is a defect, so the
        // page is refused rather than stored.
        return Err(IoError::internal(anyhow::anyhow!(
            "{} verdict(s) differ between the engine's paths, e.g. {first}",
            disagreements.len()
        )));
    }
    let touched: Vec<(String, UserState)> = states.into_iter().collect();
    let write = BatchWrite {
        audit,
        users: touched.iter().map(|(id, u)| (id.as_str(), u)).collect(),
        offsets: offsets.clone(),
        partitions: partition.into_iter().collect(),
    };
    sink::publish_and_commit(&pipeline.sink(), &events, Vec::new(), &write).await?;
    let BatchWrite { audit, .. } = write;
    Ok((touched, audit, events))
}

/// The page's users against the schemes' rules in effect, on the batch engine
/// (`ELIGIBILITY_ENGINE`: the compiled CPU batch evaluator, or the GPU kernels for pages of at
/// least `ELIGIBILITY_GPU_MIN_PAIRS` pairs): per user, (rule index in the book, outcome). These
/// are the verdicts the pass stores.
fn batch_outcomes(
    pipeline: &Pipeline,
    users: &[String],
    states: &HashMap<String, UserState>,
    schemes: &BTreeSet<String>,
    as_of: Date,
) -> Result<HashMap<String, Vec<(usize, Outcome)>>, IoError> {
    let book = &pipeline.book;
    let rules: Vec<&Rule> = book
        .rules
        .in_effect(as_of)
        .into_iter()
        .filter(|r| schemes.contains(&r.scheme_id))
        .collect();
    let with_profile: Vec<(&String, &engine::Profile)> = users
        .iter()
        .filter_map(|u| Some((u, &*states.get(u)?.profile.as_ref()?.profile)))
        .collect();
    if rules.is_empty() || with_profile.is_empty() {
        return Ok(HashMap::new());
    }
    // As the users read on the date, as their passes will (docs/semantics.md, "Age on a date").
    let profiles: Vec<std::borrow::Cow<engine::Profile>> =
        with_profile.iter().map(|(_, p)| p.on(as_of)).collect();
    let columns = ProfileColumns::new(&book.catalogue, &profiles);
    let program = Program::compile(&rules);
    // The stored outcomes of the same rules: only the pairs that differ come back from the
    // engine (a rule change moves few citizens' outcomes), the rest are these.
    let mut previous = Codes::filled(with_profile.len(), rules.len(), NO_PREVIOUS);
    for (c, (user_id, _)) in with_profile.iter().enumerate() {
        let Some(state) = states.get(*user_id) else {
            continue;
        };
        for (r, rule) in rules.iter().enumerate() {
            if let Some(stored) = state.verdicts.get(rule.scheme_id.as_str())
                && *stored.rule_id == *rule.rule_id
            {
                let outcome = Outcome {
                    verdict: stored.known.verdict,
                    score: stored.known.score,
                };
                previous.set(c, r, outcome.code());
            }
        }
    }
    let started = Instant::now();
    let (changes, used) = pipeline
        .engine
        .evaluate(
            &program,
            &rules,
            &columns,
            as_of,
            2,
            Output::ChangesFrom(&previous),
        )
        .map_err(|e| IoError::Gpu(e.into()))?;
    let Outputs::Changes(changes) = changes else {
        unreachable!("changes were asked for")
    };
    let outcomes = changes.applied_to(&previous);
    if let EngineUsed::CpuAfterGpuError(why) = &used {
        fleet::metrics::error("gpu");
        tracing::warn!(%why, "the GPU failed on a batch: evaluated on the CPU");
    }
    let engine = used.name();
    metrics::histogram!(m::BATCH_ENGINE_DURATION, "engine" => engine)
        .record(started.elapsed().as_secs_f64());
    metrics::counter!(m::BATCH_ENGINE_EVALUATIONS, "engine" => engine)
        .increment((profiles.len() * rules.len()) as u64);
    let indices: Vec<usize> = rules
        .iter()
        .map(|r| {
            book.index_of(&r.rule_id)
                .expect("rules in effect come from the book")
        })
        .collect();
    Ok(with_profile
        .iter()
        .enumerate()
        .map(|(c, (user_id, _))| {
            let per_rule = indices
                .iter()
                .enumerate()
                .map(|(r, &index)| (index, Outcome::from_code(outcomes.code(c, r))))
                .collect();
            ((*user_id).clone(), per_rule)
        })
        .collect())
}
