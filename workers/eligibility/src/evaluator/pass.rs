//! One pass over one user (spec §3–4): pick the rules to re-evaluate, evaluate them (with full
//! traces wherever gaps may exist), compare with the last known outcomes, and say what to store
//! and what to publish. Audit rows keep the compact trace (`engine::audit`).
//! No I/O: the caller loads the user's state before and writes the output after, so a pass
//! over the same state and input always gives the same output.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use engine::audit::AuditTrace;
use engine::temporal::applicability;
use engine::transitions::{Cause, Known, Transition, compare};
use engine::{Date, Outcome, Profile, Verdict};
use fleet::events::*;
use serde_json::Value as Json;

use super::rulebook::RuleBook;

/// Where a profile came from (replays of older records must not move a user back in time).
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

impl Position {
    pub fn of(record: &fleet::input::Record) -> Position {
        Position {
            topic: record.topic.clone(),
            partition: record.partition,
            offset: record.offset,
        }
    }
}

#[derive(Debug, Clone)]
pub struct StoredProfile {
    pub profile: Profile,
    pub json: Json,
    pub state: Option<String>,
    pub as_of: Date,
    pub position: Position,
}

#[derive(Debug, Clone)]
pub struct StoredVerdict {
    pub rule_id: String,
    pub rule_version: u32,
    pub known: Known<Vec<GapSummary>>,
    pub evaluation_id: String,
    pub as_of: Date,
}

/// What the store knows of a user, and which of its verdict rows this batch touched.
#[derive(Debug, Clone, Default)]
pub struct UserState {
    pub profile: Option<StoredProfile>,
    pub verdicts: BTreeMap<String, StoredVerdict>,
    /// Schemes whose row must be written (present in `verdicts`) or deleted (absent).
    pub touched: BTreeSet<String>,
    pub profile_touched: bool,
    /// Every profile this batch evaluated (input hash, JSON): audit rows point at them.
    pub snapshots: Vec<(String, Json)>,
}

/// One row of `evaluation_audit_log`.
#[derive(Debug, Clone)]
pub struct AuditRow {
    pub evaluation_id: String,
    pub as_of: Date,
    pub user_id: String,
    pub scheme_id: String,
    pub rule_id: String,
    pub rule_version: u32,
    pub rule_hash: String,
    pub input_hash: String,
    pub verdict: Verdict,
    pub score: u8,
    pub conditions_result: String,
    pub evaluation_us: i32,
}

/// An event to publish, keyed by user.
#[derive(Debug, Clone)]
pub enum OutEvent {
    Computed(EligibilityComputed),
    BatchComputed(EligibilityBatchComputed),
    NewMatch(EligibilityNewMatch),
    Lost(EligibilityLost),
    PartialMatch(EligibilityPartialMatch),
}

impl OutEvent {
    pub fn topic(&self) -> &'static str {
        use fleet::topics::*;
        match self {
            OutEvent::Computed(_) => ELIGIBILITY_COMPUTED,
            OutEvent::BatchComputed(_) => ELIGIBILITY_BATCH_COMPUTED,
            OutEvent::NewMatch(_) => ELIGIBILITY_NEW_MATCH,
            OutEvent::Lost(_) => ELIGIBILITY_LOST,
            OutEvent::PartialMatch(_) => ELIGIBILITY_PARTIAL_MATCH,
        }
    }

    pub fn user_id(&self) -> &str {
        match self {
            OutEvent::Computed(e) => &e.user_id,
            OutEvent::BatchComputed(e) => &e.user_id,
            OutEvent::NewMatch(e) => &e.user_id,
            OutEvent::Lost(e) => &e.user_id,
            OutEvent::PartialMatch(e) => &e.user_id,
        }
    }

    pub fn idempotency_key(&self) -> &str {
        match self {
            OutEvent::Computed(e) => &e.idempotency_key,
            OutEvent::BatchComputed(e) => &e.idempotency_key,
            OutEvent::NewMatch(e) => &e.idempotency_key,
            OutEvent::Lost(e) => &e.idempotency_key,
            OutEvent::PartialMatch(e) => &e.idempotency_key,
        }
    }

    /// The `kind` label of `eligibility_transition_events_total`, for transition events.
    pub fn transition_kind(&self) -> Option<&'static str> {
        match self {
            OutEvent::NewMatch(_) => Some("new_match"),
            OutEvent::Lost(_) => Some("lost"),
            OutEvent::PartialMatch(_) => Some("partial_match"),
            _ => None,
        }
    }
}

#[derive(Debug, Default)]
pub struct PassOutput {
    pub audit: Vec<AuditRow>,
    pub events: Vec<OutEvent>,
    /// (user, rule) pairs where the batch evaluator's outcome differs from the traced one: a
    /// defect, never stored.
    pub disagreements: Vec<String>,
}

/// Why this pass runs: a new profile (diffed against the stored one), or a re-evaluation of the
/// stored profile (a rule changed, a deadline approaches).
pub enum Trigger<'a> {
    Profile {
        profile: Profile,
        json: Json,
        position: Position,
        /// `profile.assembled`: re-evaluate every rule, not just those reading changed fields.
        full: bool,
    },
    Reevaluate {
        /// Only these schemes (a rule change, a deadline); others keep their verdicts unless
        /// their rule version or applicability moved.
        schemes: &'a BTreeSet<String>,
        /// The CPU batch evaluator's outcomes for this user, by rule index in the book: the
        /// verdicts stored for those rules. A traced evaluation runs only where gaps may exist
        /// (anything but ELIGIBLE before and after) and must agree with them.
        batch: &'a [(usize, Outcome)],
    },
}

/// The idempotency key of spec §4: (user, scheme, rule version, input hash).
pub fn idempotency_key(user: &str, scheme: &str, version: u32, input_hash: &str) -> String {
    format!("{user}:{scheme}:v{version}:{input_hash}")
}

fn state_of(book: &RuleBook, profile: &Profile) -> Option<String> {
    let field = book.catalogue.id("demographics.state")?;
    match profile.get(field)? {
        engine::value::FieldValue::Scalar(engine::value::Scalar::Str(s)) => Some(s.clone()),
        _ => None,
    }
}

pub fn gap_summaries(evaluation: &engine::Evaluation) -> Vec<GapSummary> {
    evaluation
        .gaps
        .iter()
        .map(|g| GapSummary {
            field: g.field.to_string(),
            gap_kind: serde_json::to_value(g.gap_kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            description: g.gap_description.to_string(),
            estimated_eligibility_date: g.estimated_eligibility_date.map(|d| d.to_string()),
        })
        .collect()
}

/// Runs one pass. Returns None when the trigger is a profile older than the one stored (a
/// replayed record): then nothing changes.
pub fn run(
    book: &RuleBook,
    user_id: &str,
    user: &mut UserState,
    trigger: Trigger,
    as_of: Date,
) -> Option<PassOutput> {
    let (profile, json, position, full, only, batch) = match trigger {
        Trigger::Profile {
            profile,
            json,
            position,
            full,
        } => {
            if let Some(stored) = &user.profile
                && stored.position.topic == position.topic
                && stored.position.partition == position.partition
                && stored.position.offset >= position.offset
            {
                return None;
            }
            (profile, json, position, full, None, &[][..])
        }
        Trigger::Reevaluate { schemes, batch } => {
            let stored = user.profile.as_ref()?;
            (
                stored.profile.clone(),
                stored.json.clone(),
                stored.position.clone(),
                false,
                Some(schemes),
                batch,
            )
        }
    };
    // A re-evaluation reads the stored snapshot: there is no new one to store.
    let new_snapshot = only.is_none();
    let previous_state = user.profile.as_ref().and_then(|p| p.state.clone());
    let changed_fields: Vec<usize> = match (&user.profile, only) {
        (_, Some(_)) => Vec::new(),
        (Some(stored), None) if !full => profile.changed_fields(&stored.profile),
        _ => (0..book.catalogue.len()).collect(),
    };
    let state = state_of(book, &profile);
    let reading = book.reading(&changed_fields);
    let candidates = book.candidates(state.as_deref(), as_of);
    let input_hash = profile.input_snapshot_hash.clone();
    let mut out = PassOutput::default();
    let mut evaluated_schemes = BTreeSet::new();
    let mut results = Vec::new();

    for &index in &candidates {
        let rule = book.rule(index);
        evaluated_schemes.insert(rule.scheme_id.clone());
        let stored = user.verdicts.get(&rule.scheme_id);
        let needed = match stored {
            None => true,
            Some(s) => {
                s.rule_id != rule.rule_id
                    || reading.binary_search(&index).is_ok()
                    || only.is_some_and(|schemes| schemes.contains(&rule.scheme_id))
                    || applicability(rule, s.as_of) != applicability(rule, as_of)
            }
        };
        if !needed {
            continue;
        }
        let cause = match stored {
            Some(s) if s.rule_id != rule.rule_id => Cause::RuleChanged,
            _ if only.is_some() => Cause::RuleChanged,
            _ => Cause::ProfileChanged,
        };
        let previous = stored.map(|s| s.known.clone());
        let batch_outcome = batch.iter().find(|(i, _)| *i == index).map(|&(_, o)| o);
        let started = Instant::now();
        let (current, evaluation_id) = match (batch_outcome, &previous) {
            // ELIGIBLE before and after with the same score: an ELIGIBLE outcome has no gaps
            // (a property test holds it), so the batch outcome is the whole outcome.
            (Some(o), Some(p))
                if o.verdict == Verdict::Eligible
                    && p.verdict == o.verdict
                    && p.score == o.score =>
            {
                let known = Known {
                    verdict: o.verdict,
                    score: o.score,
                    gaps: Vec::new(),
                };
                let id = engine::eval::evaluation_id(rule, &input_hash, as_of);
                (known, id)
            }
            _ => {
                let Ok(evaluation) = engine::evaluate(&book.catalogue, rule, &profile, as_of)
                else {
                    // In effect by dates but not applicable (deadline passed, window closed).
                    if let Some(o) = batch_outcome.filter(|&o| o != Outcome::NOT_APPLICABLE) {
                        out.disagreements.push(format!(
                            "{user_id} × {}: the CPU batch evaluator gives {o:?}, the traced evaluation finds the rule not applicable",
                            rule.rule_id
                        ));
                    }
                    leave(
                        user_id,
                        user,
                        &rule.scheme_id,
                        Cause::RuleExpired,
                        &input_hash,
                        as_of,
                        &mut out,
                    );
                    continue;
                };
                if let Some(o) = batch_outcome.filter(|&o| o != evaluation.outcome()) {
                    out.disagreements.push(format!(
                        "{user_id} × {}: the CPU batch evaluator gives {o:?}, the traced evaluation {:?}",
                        rule.rule_id,
                        evaluation.outcome()
                    ));
                }
                let known = Known {
                    verdict: evaluation.verdict,
                    score: evaluation.match_score,
                    gaps: gap_summaries(&evaluation),
                };
                (known, evaluation.evaluation_id)
            }
        };
        let elapsed_us = started.elapsed().as_micros().min(i32::MAX as u128) as i32;
        let (changed, transitions) = compare(previous.as_ref(), Some(&current), cause);
        let key = idempotency_key(user_id, &rule.scheme_id, rule.version, &input_hash);
        let benefit = rule
            .benefit_estimate
            .as_ref()
            .map(|b| serde_json::to_string(b).expect("serialisable"));
        if changed {
            out.events.push(OutEvent::Computed(EligibilityComputed {
                idempotency_key: key.clone(),
                user_id: user_id.to_string(),
                scheme_id: rule.scheme_id.clone(),
                scheme_name: rule.scheme_name.clone(),
                rule_id: rule.rule_id.clone(),
                rule_version: rule.version as i32,
                verdict: current.verdict.name().to_string(),
                match_score: i32::from(current.score),
                previous_verdict: previous.as_ref().map(|p| p.verdict.name().to_string()),
                benefit_estimate: benefit.clone(),
                evaluation_id: evaluation_id.clone(),
                input_hash: input_hash.clone(),
                as_of: as_of.to_string(),
            }));
        }
        for transition in transitions {
            match transition {
                Transition::NewMatch => out.events.push(OutEvent::NewMatch(EligibilityNewMatch {
                    idempotency_key: key.clone(),
                    user_id: user_id.to_string(),
                    scheme_id: rule.scheme_id.clone(),
                    scheme_name: rule.scheme_name.clone(),
                    rule_id: rule.rule_id.clone(),
                    rule_version: rule.version as i32,
                    match_score: i32::from(current.score),
                    benefit: benefit.clone(),
                    evaluation_id: evaluation_id.clone(),
                    input_hash: input_hash.clone(),
                    as_of: as_of.to_string(),
                })),
                Transition::Lost(cause) => out.events.push(OutEvent::Lost(EligibilityLost {
                    idempotency_key: key.clone(),
                    user_id: user_id.to_string(),
                    scheme_id: rule.scheme_id.clone(),
                    rule_id: rule.rule_id.clone(),
                    rule_version: rule.version as i32,
                    reason: cause.name().to_string(),
                    new_verdict: current.verdict.name().to_string(),
                    match_score: i32::from(current.score),
                    input_hash: input_hash.clone(),
                    as_of: as_of.to_string(),
                })),
                Transition::PartialMatch => {
                    out.events
                        .push(OutEvent::PartialMatch(EligibilityPartialMatch {
                            idempotency_key: key.clone(),
                            user_id: user_id.to_string(),
                            scheme_id: rule.scheme_id.clone(),
                            scheme_name: rule.scheme_name.clone(),
                            rule_id: rule.rule_id.clone(),
                            rule_version: rule.version as i32,
                            match_score: i32::from(current.score),
                            gaps: current.gaps.clone(),
                            evaluation_id: evaluation_id.clone(),
                            input_hash: input_hash.clone(),
                            as_of: as_of.to_string(),
                        }))
                }
            }
        }
        out.audit.push(AuditRow {
            evaluation_id: evaluation_id.clone(),
            as_of,
            user_id: user_id.to_string(),
            scheme_id: rule.scheme_id.clone(),
            rule_id: rule.rule_id.clone(),
            rule_version: rule.version,
            rule_hash: rule.rule_hash.clone(),
            input_hash: input_hash.clone(),
            verdict: current.verdict,
            score: current.score,
            conditions_result: serde_json::to_string(&AuditTrace::of(rule, &profile))
                .expect("serialisable"),
            evaluation_us: elapsed_us,
        });
        results.push(SchemeResult {
            scheme_id: rule.scheme_id.clone(),
            verdict: current.verdict.name().to_string(),
            match_score: i32::from(current.score),
        });
        user.verdicts.insert(
            rule.scheme_id.clone(),
            StoredVerdict {
                rule_id: rule.rule_id.clone(),
                rule_version: rule.version,
                known: current,
                evaluation_id: evaluation_id.clone(),
                as_of,
            },
        );
        user.touched.insert(rule.scheme_id.clone());
    }

    // Schemes the user held a verdict for that no longer apply: expired, or another state's.
    let gone: Vec<String> = user
        .verdicts
        .keys()
        .filter(|s| !evaluated_schemes.contains(*s))
        .cloned()
        .collect();
    for scheme in gone {
        let cause = if previous_state.is_some() && previous_state != state {
            Cause::StateChanged
        } else {
            Cause::RuleExpired
        };
        leave(user_id, user, &scheme, cause, &input_hash, as_of, &mut out);
    }

    let total_eligible = user
        .verdicts
        .values()
        .filter(|v| v.known.verdict == Verdict::Eligible)
        .count() as i32;
    let total_partial = user
        .verdicts
        .values()
        .filter(|v| v.known.verdict == Verdict::PartialMatch)
        .count() as i32;
    out.events
        .push(OutEvent::BatchComputed(EligibilityBatchComputed {
            idempotency_key: format!("{user_id}:batch:{input_hash}:{as_of}:r{}", book.revision),
            user_id: user_id.to_string(),
            input_hash: input_hash.clone(),
            as_of: as_of.to_string(),
            rules_evaluated: results.len() as i32,
            total_eligible,
            total_partial,
            results,
        }));
    // profile_current changes with a new profile or a new date, not with a re-evaluation on
    // the same date.
    let stored_as_of = user.profile.as_ref().map(|p| p.as_of);
    user.profile_touched |= new_snapshot || stored_as_of != Some(as_of);
    if new_snapshot {
        user.snapshots.push((input_hash, json.clone()));
    }
    user.profile = Some(StoredProfile {
        profile,
        json,
        state,
        as_of,
        position,
    });
    Some(out)
}

/// The user no longer has a verdict for `scheme`: a `lost` event if it was ELIGIBLE.
fn leave(
    user_id: &str,
    user: &mut UserState,
    scheme: &str,
    cause: Cause,
    input_hash: &str,
    as_of: Date,
    out: &mut PassOutput,
) {
    let Some(stored) = user.verdicts.remove(scheme) else {
        return;
    };
    user.touched.insert(scheme.to_string());
    let (_, transitions) = compare(Some(&stored.known), None, cause);
    if transitions.contains(&Transition::Lost(cause)) {
        out.events.push(OutEvent::Lost(EligibilityLost {
            idempotency_key: idempotency_key(user_id, scheme, stored.rule_version, input_hash),
            user_id: user_id.to_string(),
            scheme_id: scheme.to_string(),
            rule_id: stored.rule_id.clone(),
            rule_version: stored.rule_version as i32,
            reason: cause.name().to_string(),
            new_verdict: Verdict::NotApplicable.name().to_string(),
            match_score: 0,
            input_hash: input_hash.to_string(),
            as_of: as_of.to_string(),
        }));
    }
}
