//! One pass over one user (docs/fleet.md "One micro-batch"): pick the rules to re-evaluate, take
//! their verdicts and scores from the compiled program (or the caller's batch engine), derive
//! gaps with a traced evaluation only where there can be any (not ELIGIBLE), compare with the
//! last known outcomes, and say what to store and what to publish. Only outcomes that changed
//! are stored again; every evaluation goes into the pass's packed audit record.
//! No I/O: the caller loads the user's state before and writes the output after, so a pass
//! over the same state and input always gives the same output.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use engine::temporal::{Applicability, applicability};
use engine::transitions::{Cause, Known, Transition, compare};
use engine::{Date, Outcome, Profile, Rule, Verdict};
use fleet::events::*;

use super::audit::PassAudit;
use crate::rules::book::{Candidates, RuleBook};
use crate::users::state::{
    NewVerdict, Position, ProfileText, StoredProfile, StoredVerdict, UserState,
};
use crate::users::verdicts::SchemeVerdicts;

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

#[derive(Debug)]
pub struct PassOutput {
    /// Every evaluation of the pass (empty when nothing needed re-evaluating).
    pub audit: PassAudit,
    pub events: Vec<OutEvent>,
    /// (user, rule) pairs where the batch evaluator's outcome differs from the traced one: a
    /// defect, never stored.
    pub disagreements: Vec<String>,
}

/// Why this pass runs: a new profile (diffed against the stored one), or a re-evaluation of the
/// stored profile (a rule changed, a deadline approaches).
// Built once per pass and consumed at once: boxing the profile would cost an allocation a pass.
#[allow(clippy::large_enum_variant)]
pub enum Trigger<'a> {
    Profile {
        profile: Arc<Profile>,
        json: ProfileText,
        position: Position,
        /// `profile.assembled`: re-evaluate every rule, not just those reading changed fields.
        full: bool,
        /// The batch engine's outcomes for this profile (a micro-batch on the GPU), by rule
        /// index in the book, or none: rules without one are evaluated here.
        batch: &'a [(usize, Outcome)],
    },
    Reevaluate {
        /// Only these schemes (a rule change, a deadline); others keep their verdicts unless
        /// their rule version or applicability moved.
        schemes: &'a BTreeSet<String>,
        /// The batch engine's outcomes for this user, by rule index in the book: the verdicts
        /// stored for those rules (other rules the pass needs are evaluated here).
        batch: &'a [(usize, Outcome)],
    },
}

/// The idempotency key (docs/semantics.md, "Transitions and idempotency"): (user, scheme, rule version, input hash).
pub fn idempotency_key(user: &str, scheme: &str, version: u32, input_hash: &str) -> String {
    format!("{user}:{scheme}:v{version}:{input_hash}")
}

pub fn state_of(book: &RuleBook, profile: &Profile) -> Option<String> {
    let field = book.catalogue.id("demographics.state")?;
    match profile.get(field)? {
        engine::value::FieldValue::Scalar(engine::value::Scalar::Str(s)) => Some(s.clone()),
        _ => None,
    }
}

pub fn gap_summaries(gaps: &[engine::gaps::Gap]) -> Vec<GapSummary> {
    gaps.iter()
        .map(|g| GapSummary {
            field: g.field.to_string(),
            gap_kind: g.gap_kind.name().to_string(),
            description: g.gap_description.to_string(),
            estimated_eligibility_date: g.estimated_eligibility_date.map(|d| d.to_string()),
            closable_by: g.closable_by.name().to_string(),
        })
        .collect()
}

/// Runs one pass: plan (which rules, and why), evaluate (verdicts, then gaps where they can
/// exist), emit (events and stored state for what changed), then the summary. Returns None
/// when the trigger is a profile older than the one stored (a replayed record): then nothing
/// changes.
pub fn run(
    book: &RuleBook,
    user_id: &str,
    user: &mut UserState,
    trigger: Trigger,
    as_of: Date,
) -> Option<PassOutput> {
    let mut inputs = Inputs::of(user, trigger)?;
    // The profile as it reads on the pass's date: the age from the date of birth
    // (docs/semantics.md, "Age on a date").
    if let std::borrow::Cow::Owned(aged) = inputs.profile.on(as_of) {
        inputs.profile = Arc::new(aged);
    }
    let state = state_of(book, &inputs.profile);
    let previous_state = user.profile.as_ref().and_then(|p| p.state.clone());
    let candidates = book.candidates(state.as_deref(), as_of);
    let (needed, gone) = plan(book, user, &inputs, state.as_deref(), &candidates, as_of);
    let moved = previous_state.is_some() && previous_state != state;
    let input_hash = inputs.profile.input_snapshot_hash.clone();
    let pass = Pass {
        book,
        user_id,
        profile: &inputs.profile,
        input_hash: &input_hash,
        as_of,
    };
    let mut out = PassOutput {
        audit: PassAudit::new(user_id, as_of, &input_hash, book.revision),
        events: Vec::new(),
        disagreements: Vec::new(),
    };
    let started = Instant::now();
    let outcomes = book.outcomes_of(
        &inputs.profile,
        state.as_deref(),
        as_of,
        needed.iter().map(|&(index, _)| index),
        inputs.batch,
    );
    let results: Vec<SchemeResult> = needed
        .iter()
        .zip(outcomes)
        .filter_map(|(&(index, cause), outcome)| pass.apply(user, index, cause, outcome, &mut out))
        .collect();
    out.audit.evaluation_us = started.elapsed().as_micros().min(i32::MAX as u128) as i32;

    for scheme in gone {
        let cause = if moved {
            Cause::StateChanged
        } else {
            Cause::RuleExpired
        };
        leave(user_id, user, scheme, cause, &input_hash, as_of, &mut out);
    }
    out.events.push(pass.summary(user, results));
    let next_age_change = book.next_age_change(state.as_deref(), &inputs.profile, as_of);
    inputs.remember(user, state, as_of, next_age_change);
    Some(out)
}

/// What a trigger evaluates: the new profile, or the stored one for a re-evaluation.
struct Inputs<'a> {
    profile: Arc<Profile>,
    json: ProfileText,
    position: Position,
    /// `profile.assembled`: every rule, not only those reading changed fields.
    full: bool,
    /// A re-evaluation's schemes; None for a new profile.
    only: Option<&'a BTreeSet<String>>,
    batch: &'a [(usize, Outcome)],
}

impl<'a> Inputs<'a> {
    /// None for a profile older than the stored one on the same partition, and for a
    /// re-evaluation of a user without a stored profile.
    fn of(user: &UserState, trigger: Trigger<'a>) -> Option<Inputs<'a>> {
        match trigger {
            Trigger::Profile {
                profile,
                json,
                position,
                full,
                batch,
            } => {
                if let Some(stored) = &user.profile
                    && stored.position.topic == position.topic
                    && stored.position.partition == position.partition
                    && stored.position.offset >= position.offset
                {
                    return None;
                }
                Some(Inputs {
                    profile,
                    json,
                    position,
                    full,
                    only: None,
                    batch,
                })
            }
            Trigger::Reevaluate { schemes, batch } => {
                let stored = user.profile.as_ref()?;
                Some(Inputs {
                    profile: stored.profile.clone(),
                    json: stored.json.clone(),
                    position: stored.position.clone(),
                    full: false,
                    only: Some(schemes),
                    batch,
                })
            }
        }
    }

    /// The profile as the user's current one. `profile_current` changes with a new profile or
    /// a new date, not with a re-evaluation on the same date, which has no new snapshot.
    fn remember(
        self,
        user: &mut UserState,
        state: Option<String>,
        as_of: Date,
        next_age_change: Option<Date>,
    ) {
        let new_snapshot = self.only.is_none();
        let stored = user.profile.as_ref().map(|p| (p.as_of, p.next_age_change));
        // A rule change can move the next age change too (a new age limit).
        user.profile_touched |= new_snapshot || stored != Some((as_of, next_age_change));
        user.access_changed |= user.profile.as_ref().is_some_and(|p| p.state != state);
        if new_snapshot {
            user.snapshots
                .push((self.profile.input_snapshot_hash.clone(), self.json.clone()));
        }
        user.profile = Some(Arc::new(StoredProfile {
            profile: self.profile,
            json: self.json,
            state,
            as_of,
            position: self.position,
            next_age_change,
        }));
    }
}

/// The rules to re-evaluate among `candidates`, and why: a rule new to the user or in a new
/// version, one reading a changed field (unless none of its conditions on the changed fields
/// moved: `engine::deps::outcome_unchanged`), one of a re-evaluation's schemes, or one whose
/// applicability moved with the date. Also the schemes the user holds a verdict for that are
/// no candidate's: expired, or another state's.
fn plan(
    book: &RuleBook,
    user: &UserState,
    inputs: &Inputs,
    state: Option<&str>,
    candidates: &Candidates,
    as_of: Date,
) -> (Vec<(usize, Cause)>, Vec<&'static str>) {
    // The stored profile as it read on its own date, against the new one on the pass's date:
    // an age that moved with the calendar is a changed field.
    let before = user.profile.as_ref().map(|p| p.profile.on(p.as_of));
    let changed_fields: Vec<usize> = match (&before, inputs.only) {
        (Some(before), None) if !inputs.full => inputs.profile.changed_fields(before),
        (Some(before), Some(_)) => {
            let age = book.catalogue.id("identity.age");
            inputs
                .profile
                .changed_fields(before)
                .into_iter()
                .filter(|&f| Some(f) == age)
                .collect()
        }
        (None, Some(_)) => Vec::new(),
        _ => (0..book.catalogue.len()).collect(),
    };
    let change = engine::deps::ProfileChange::new(&book.catalogue, changed_fields);
    // Each candidate's leaves on the changed fields, compared once for the whole pass: asked
    // below of the rules a new profile reaches (other states' rules are never asked).
    let leaves_moved = match (&before, inputs.only) {
        (Some(before), None) if !inputs.full => {
            book.leaves_moved(&change, before, &inputs.profile, &candidates.indices)
        }
        _ => Vec::new(),
    };
    // A re-evaluation brings no new data: of the rules reading the age, those whose outcome
    // the age alone changed since the stored evaluation, found by evaluating both (so a
    // birthday re-evaluates exactly the pairs that change: docs/releases.md).
    let aged = match (&user.profile, inputs.only) {
        (Some(stored), Some(_)) => book.age_changed(state, &inputs.profile, stored.as_of, as_of),
        _ => Vec::new(),
    };
    let (stored_verdicts, gone) = pair_with_stored(book, candidates, &user.verdicts);
    let changed = book.field_set(&change.fields);
    let mut needed = Vec::new();
    for (&index, stored) in candidates.indices.iter().zip(stored_verdicts) {
        let rule = book.rule(index);
        let wanted = match stored {
            None => true,
            Some(s) => {
                s.rule_key != book.key(index)
                    || book.reads_any(index, &changed)
                    || inputs
                        .only
                        .is_some_and(|schemes| schemes.contains(&rule.scheme_id))
                    || !same_applicability(rule, s.as_of, as_of)
            }
        };
        if !wanted {
            continue;
        }
        let cause = match (stored, inputs.only) {
            (Some(s), _) if s.rule_key != book.key(index) => Cause::RuleChanged,
            (_, Some(schemes)) if schemes.contains(&rule.scheme_id) => Cause::RuleChanged,
            // A re-evaluation reaches a scheme it does not name only through the age, which
            // moved with the date (a birthday).
            (_, Some(_)) => Cause::AgeChanged,
            _ => Cause::ProfileChanged,
        };
        // The change reached none of the rule's conditions: its stored outcome stands, as
        // for a rule that reads no changed field.
        let unmoved = match (stored, &before) {
            (Some(s), Some(_)) if cause == Cause::AgeChanged => {
                same_applicability(rule, s.as_of, as_of) && aged.binary_search(&index).is_err()
            }
            (Some(s), Some(before)) => {
                cause == Cause::ProfileChanged
                    && !inputs.full
                    && same_applicability(rule, s.as_of, as_of)
                    && engine::deps::outcome_unchanged_given(
                        &book.catalogue,
                        rule,
                        before,
                        &inputs.profile,
                        &change,
                        as_of,
                        // Computed for every new profile compared with a stored one; were
                        // it not, "moved" is the answer that is always safe.
                        leaves_moved.get(index).copied().unwrap_or(true),
                    )
            }
            _ => false,
        };
        if !unmoved {
            needed.push((index, cause));
        }
    }
    (needed, gone)
}

/// Whether `rule` applies on `then` as on `now` (effective dates, deadline, application
/// window): at once on the same day, the usual case.
fn same_applicability(rule: &Rule, then: Date, now: Date) -> bool {
    then == now || applicability(rule, then) == applicability(rule, now)
}

/// Each candidate's stored verdict, if any, and the stored verdicts of schemes that are no
/// candidate's: one walk over the candidates and the verdicts, both in scheme id order.
fn pair_with_stored<'a>(
    book: &RuleBook,
    candidates: &Candidates,
    verdicts: &'a SchemeVerdicts,
) -> (Vec<Option<&'a StoredVerdict>>, Vec<&'static str>) {
    let mut paired = vec![None; candidates.indices.len()];
    let mut gone = Vec::new();
    let mut stored = verdicts.iter().peekable();
    for &at in &candidates.by_scheme {
        let index = candidates.indices[at];
        // A verdict of this very rule version is this scheme's (its key names the version,
        // which names the scheme): paired without comparing scheme ids, the usual case.
        if let Some((_, verdict)) = stored.next_if(|(_, held)| held.rule_key == book.key(index)) {
            paired[at] = Some(verdict);
            continue;
        }
        let scheme = book.rule(index).scheme_id.as_str();
        while let Some((held, _)) = stored.next_if(|(held, _)| *held < scheme) {
            gone.push(held);
        }
        if let Some((_, verdict)) = stored.next_if(|(held, _)| *held == scheme) {
            paired[at] = Some(verdict);
        }
    }
    gone.extend(stored.map(|(held, _)| held));
    (paired, gone)
}

/// What every rule of one pass shares.
struct Pass<'a> {
    book: &'a RuleBook,
    user_id: &'a str,
    profile: &'a Profile,
    input_hash: &'a str,
    as_of: Date,
}

/// What changed for one (user, scheme), ready to announce and store.
struct Change {
    index: usize,
    current: Known<u64>,
    previous_verdict: Option<Verdict>,
    /// The outcome differs from the stored one (else only the rule version moved).
    changed: bool,
    transitions: Vec<Transition>,
    gaps: Vec<GapSummary>,
}

impl Pass<'_> {
    /// One rule's outcome: audited; its gaps walked where there can be gaps (and the walk's
    /// verdict checked against the compiled one); stored and announced only if it changed.
    fn apply(
        &self,
        user: &mut UserState,
        index: usize,
        cause: Cause,
        outcome: Outcome,
        out: &mut PassOutput,
    ) -> Option<SchemeResult> {
        let (book, as_of) = (self.book, self.as_of);
        let rule = book.rule(index);
        if outcome == Outcome::NOT_APPLICABLE {
            // In effect by dates but not applicable (deadline passed, window closed).
            let cause = match applicability(rule, as_of) {
                Applicability::DeadlinePassed { .. } => Cause::DeadlinePassed,
                Applicability::WindowClosed { .. } => Cause::WindowClosed,
                _ => Cause::RuleExpired,
            };
            let scheme = &rule.scheme_id;
            leave(
                self.user_id,
                user,
                scheme,
                cause,
                self.input_hash,
                as_of,
                out,
            );
            return None;
        }
        out.audit.push(book.key(index), outcome);
        let stored = user.verdicts.get(rule.scheme_id.as_str());
        let previous_verdict = stored.map(|s| s.known.verdict);
        let (traced, gaps) = if outcome.verdict != Verdict::Eligible {
            let (traced, gaps) =
                engine::eval::outcome_with_gaps(&book.catalogue, rule, self.profile, as_of);
            (Some(traced), gaps)
        } else if previous_verdict != Some(Verdict::Eligible) {
            // A new match: no gaps to walk, but the verdict is checked by the tree walk too.
            (Some(engine::outcome(rule, self.profile, as_of)), Vec::new())
        } else {
            // ELIGIBLE before and after: an ELIGIBLE outcome has no gaps (a property test
            // holds it), so nothing needs walking.
            (None, Vec::new())
        };
        if let Some(traced) = traced.filter(|&t| t != outcome) {
            out.disagreements.push(format!(
                "{} × {}: the compiled or batch evaluator gives {outcome:?}, the tree walk {traced:?}",
                self.user_id, rule.rule_id
            ));
        }
        let current = Known {
            verdict: outcome.verdict,
            score: outcome.score,
            gaps: engine::gaps::fingerprint(&gaps),
        };
        let (changed, transitions) = compare(stored.map(|s| &s.known), Some(&current), cause);
        let rule_moved = stored.is_none_or(|s| s.rule_key != book.key(index));
        let result = SchemeResult {
            scheme_id: book.reference(index).scheme_id.into(),
            verdict: current.verdict.name().into(),
            match_score: i32::from(current.score),
        };
        // Write only what changed: an unchanged outcome keeps its stored row (and the
        // evaluation that produced it), so it costs no upsert, no cache write and no event.
        if changed || rule_moved {
            let change = Change {
                index,
                current,
                previous_verdict,
                changed,
                transitions,
                gaps: gap_summaries(&gaps),
            };
            self.emit(user, change, out);
        }
        Some(result)
    }

    /// The events of a change (`computed` when the outcome changed, and its transitions), and
    /// the verdict stored and cached.
    fn emit(&self, user: &mut UserState, change: Change, out: &mut PassOutput) {
        let (user_id, input_hash, as_of) = (self.user_id, self.input_hash, self.as_of);
        let rule = self.book.rule(change.index);
        let current = change.current;
        let evaluation_id = engine::eval::evaluation_id(rule, input_hash, as_of);
        let key = idempotency_key(user_id, &rule.scheme_id, rule.version, input_hash);
        let benefit = rule
            .benefit_for(self.profile)
            .map(|b| serde_json::to_string(b).expect("serialisable"));
        if change.changed {
            out.events.push(OutEvent::Computed(EligibilityComputed {
                idempotency_key: key.clone(),
                user_id: user_id.to_string(),
                scheme_id: rule.scheme_id.clone(),
                scheme_name: rule.scheme_name.clone(),
                rule_id: rule.rule_id.clone(),
                rule_version: rule.version as i32,
                verdict: current.verdict.name().to_string(),
                match_score: i32::from(current.score),
                previous_verdict: change.previous_verdict.map(|v| v.name().to_string()),
                benefit_estimate: benefit.clone(),
                evaluation_id: evaluation_id.clone(),
                input_hash: input_hash.to_string(),
                as_of: as_of.to_string(),
            }));
        }
        for transition in change.transitions {
            let event = match transition {
                Transition::NewMatch => OutEvent::NewMatch(EligibilityNewMatch {
                    idempotency_key: key.clone(),
                    user_id: user_id.to_string(),
                    scheme_id: rule.scheme_id.clone(),
                    scheme_name: rule.scheme_name.clone(),
                    rule_id: rule.rule_id.clone(),
                    rule_version: rule.version as i32,
                    match_score: i32::from(current.score),
                    benefit: benefit.clone(),
                    evaluation_id: evaluation_id.clone(),
                    input_hash: input_hash.to_string(),
                    as_of: as_of.to_string(),
                }),
                Transition::Lost(cause) => OutEvent::Lost(EligibilityLost {
                    idempotency_key: key.clone(),
                    user_id: user_id.to_string(),
                    scheme_id: rule.scheme_id.clone(),
                    rule_id: rule.rule_id.clone(),
                    rule_version: rule.version as i32,
                    reason: cause.name().to_string(),
                    new_verdict: current.verdict.name().to_string(),
                    match_score: i32::from(current.score),
                    input_hash: input_hash.to_string(),
                    as_of: as_of.to_string(),
                }),
                Transition::PartialMatch => OutEvent::PartialMatch(EligibilityPartialMatch {
                    idempotency_key: key.clone(),
                    user_id: user_id.to_string(),
                    scheme_id: rule.scheme_id.clone(),
                    scheme_name: rule.scheme_name.clone(),
                    rule_id: rule.rule_id.clone(),
                    rule_version: rule.version as i32,
                    match_score: i32::from(current.score),
                    gaps: change.gaps.clone(),
                    evaluation_id: evaluation_id.clone(),
                    input_hash: input_hash.to_string(),
                    as_of: as_of.to_string(),
                }),
            };
            out.events.push(event);
        }
        let reference = self.book.reference(change.index);
        Arc::make_mut(&mut user.verdicts).insert(
            reference.scheme_id,
            StoredVerdict {
                rule_key: self.book.key(change.index),
                rule_id: reference.rule_id,
                rule_version: rule.version,
                known: current,
                as_of,
            },
        );
        user.touched.insert(rule.scheme_id.clone());
        user.written.insert(
            rule.scheme_id.clone(),
            NewVerdict {
                evaluation_id,
                gaps: change.gaps,
            },
        );
    }

    /// The pass summary (`eligibility.batch.computed`): what was evaluated, and the totals the
    /// user now holds.
    fn summary(&self, user: &UserState, results: Vec<SchemeResult>) -> OutEvent {
        let count = |verdict| {
            user.verdicts
                .values()
                .filter(|v| v.known.verdict == verdict)
                .count() as i32
        };
        OutEvent::BatchComputed(EligibilityBatchComputed {
            idempotency_key: format!(
                "{}:batch:{}:{}:r{}",
                self.user_id, self.input_hash, self.as_of, self.book.revision
            ),
            user_id: self.user_id.to_string(),
            input_hash: self.input_hash.to_string(),
            as_of: self.as_of.to_string(),
            rules_evaluated: results.len() as i32,
            total_eligible: count(Verdict::Eligible),
            total_partial: count(Verdict::PartialMatch),
            results,
        })
    }
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
    // Checked first: `make_mut` copies verdicts shared with a batch in flight.
    if !user.verdicts.contains_key(scheme) {
        return;
    }
    let stored = Arc::make_mut(&mut user.verdicts)
        .remove(scheme)
        .expect("checked above");
    user.written.remove(scheme);
    user.touched.insert(scheme.to_string());
    let (_, transitions) = compare(Some(&stored.known), None, cause);
    if transitions.contains(&Transition::Lost(cause)) {
        out.events.push(OutEvent::Lost(EligibilityLost {
            idempotency_key: idempotency_key(user_id, scheme, stored.rule_version, input_hash),
            user_id: user_id.to_string(),
            scheme_id: scheme.to_string(),
            rule_id: stored.rule_id.to_string(),
            rule_version: stored.rule_version as i32,
            reason: cause.name().to_string(),
            new_verdict: Verdict::NotApplicable.name().to_string(),
            match_score: 0,
            input_hash: input_hash.to_string(),
            as_of: as_of.to_string(),
        }));
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::LazyLock;

    use kernels::engine_select::{Engine, EngineChoice};
    use proptest::prelude::*;
    use serde_json::{Value as Json, json};

    use super::*;

    static BOOK: LazyLock<RuleBook> = LazyLock::new(RuleBook::bundled_for_tests);

    const STATES: &[&str] = &[
        "karnataka",
        "tamil_nadu",
        "bihar",
        "uttar_pradesh",
        "kerala",
    ];
    const DOCUMENTS: &[&str] = &["aadhaar", "voter_id", "ration_card", "bank_passbook"];

    /// One citizen's profile; `None` fields are absent (unknown to the engine).
    fn profile() -> impl Strategy<Value = Json> {
        (
            (
                prop::option::of(0i64..100),
                0usize..STATES.len(),
                any::<bool>(),
            ),
            (
                prop::option::of(0i64..600_000),
                prop::option::of(any::<bool>()),
                prop::sample::subsequence(DOCUMENTS, 0..=DOCUMENTS.len()),
            ),
            (
                prop::option::of(any::<bool>()),
                prop::option::of(prop::sample::select(vec!["female", "male"])),
                prop::option::of((1925i32..2020, 1u8..13, 1u8..29)),
            ),
        )
            .prop_map(
                |((age, state, rural), (income, bpl, documents), (employee, gender, born))| {
                    let mut p = json!({
                        "user_id": "u1",
                        "identity": {"verified_documents": documents},
                        "demographics": {"state": STATES[state],
                                         "urban_rural": if rural { "rural" } else { "urban" }},
                        "economic": {},
                        "family": {},
                        "eligibility": {"active_schemes": []},
                    });
                    if let Some(age) = age {
                        p["identity"]["age"] = age.into();
                    }
                    if let Some(gender) = gender {
                        p["identity"]["gender"] = gender.into();
                    }
                    // The age then follows the calendar (docs/semantics.md, "Age on a date").
                    if let Some((year, month, day)) = born {
                        p["identity"]["date_of_birth"] =
                            format!("{year}-{month:02}-{day:02}").into();
                    }
                    if let Some(income) = income {
                        p["economic"]["annual_income"] = income.into();
                    }
                    if let Some(bpl) = bpl {
                        p["economic"]["bpl_status"] = bpl.into();
                    }
                    if let Some(employee) = employee {
                        p["economic"]["is_government_employee"] = employee.into();
                    }
                    p
                },
            )
    }

    /// What the store holds for the user between batches: the user's row is written only when
    /// the pass touched a verdict.
    #[derive(Default)]
    struct Store {
        profile: Option<Arc<StoredProfile>>,
        verdicts: Arc<SchemeVerdicts>,
    }

    impl Store {
        fn load(&self) -> UserState {
            UserState {
                profile: self.profile.clone(),
                verdicts: self.verdicts.clone(),
                ..UserState::default()
            }
        }

        fn commit(&mut self, user: &UserState) {
            if !user.touched.is_empty() {
                self.verdicts = user.verdicts.clone();
            }
            if user.profile_touched {
                self.profile = user.profile.clone();
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Writing only the outcomes that changed loses nothing: after any stream of updates,
        /// the stored verdicts are exactly a full evaluation of the last profile.
        #[test]
        fn the_stored_state_after_a_stream_equals_a_full_re_evaluation(
            stream in prop::collection::vec((profile(), prop_oneof![Just(0i64), 1i64..400], 0u8..3), 1..6),
            on_batch_engine in any::<bool>(),
        ) {
            let book = &*BOOK;
            let mut store = Store::default();
            let mut day = Date::parse("2024-01-01").unwrap().day_number();
            let mut last: Option<(Profile, Date)> = None;
            let mut previous: Option<Json> = None;
            let no_scheme = BTreeSet::new();
            for (offset, (generated, days_later, kind)) in stream.into_iter().enumerate() {
                if let (2, Some((profile, _))) = (kind, &last) {
                    // The daily sweep's birthday re-evaluation: no new data, a later date, no
                    // scheme named (the age that moved picks the rules).
                    day += days_later;
                    let as_of = Date::from_day_number(day).unwrap();
                    let trigger = Trigger::Reevaluate { schemes: &no_scheme, batch: &[] };
                    let mut user = store.load();
                    let out = run(book, "u1", &mut user, trigger, as_of).expect("a stored profile");
                    prop_assert!(out.disagreements.is_empty(), "{:?}", out.disagreements);
                    store.commit(&user);
                    last = Some((profile.clone(), as_of));
                    continue;
                }
                // A third of the updates change only the income of the previous profile, as
                // most real updates do: most rules reading it keep their outcome.
                let json = match (&previous, kind) {
                    (Some(before), 1) => {
                        let mut json = before.clone();
                        let economic = json["economic"].as_object_mut().unwrap();
                        match generated["economic"].get("annual_income") {
                            Some(income) => economic.insert("annual_income".into(), income.clone()),
                            None => economic.remove("annual_income"),
                        };
                        json
                    }
                    _ => generated,
                };
                previous = Some(json.clone());
                day += days_later;
                let as_of = Date::from_day_number(day).unwrap();
                let profile = Profile::from_json(&book.catalogue, &json, "stream").unwrap();
                // Half the streams go through the batch engine first, as a micro-batch on the
                // GPU does: the pass must come out the same (any disagreement with its traced
                // evaluation is reported below).
                let aged = profile.on(as_of);
                let state = state_of(book, &aged);
                let batch = if on_batch_engine {
                    let engine = Engine::new(EngineChoice::Cpu, 0).unwrap();
                    let (mut outcomes, _) = book
                        .batch_outcomes(&engine, &[(&aged, state.as_deref(), as_of)], 1)
                        .unwrap();
                    outcomes.remove(0)
                } else {
                    Vec::new()
                };
                let trigger = Trigger::Profile {
                    profile: Arc::new(profile.clone()),
                    json: json.to_string().into(),
                    position: Position { topic: "t".into(), partition: 0, offset: offset as i64 },
                    full: false,
                    batch: &batch,
                };
                let mut user = store.load();
                let out = run(book, "u1", &mut user, trigger, as_of).expect("a newer record");
                prop_assert!(out.disagreements.is_empty(), "{:?}", out.disagreements);
                store.commit(&user);
                // The next batch may start from this state while it is being committed
                // (pipelining): it must be what the store reads back.
                let (carried, stored) = (user.carried_over(), store.load());
                prop_assert_eq!(&carried.verdicts, &stored.verdicts);
                let snapshot = |p: Option<Arc<StoredProfile>>| p.map(|p| (p.json.clone(), p.state.clone(), p.as_of, p.position.clone(), p.next_age_change));
                prop_assert_eq!(snapshot(carried.profile), snapshot(stored.profile));
                last = Some((profile, as_of));
            }
            let (profile, as_of) = last.unwrap();
            let profile = profile.on(as_of);
            let state = state_of(book, &profile);
            let mut expected = BTreeMap::new();
            for &index in &book.candidates(state.as_deref(), as_of).indices {
                let rule = book.rule(index);
                if let Ok(e) = engine::evaluate(&book.catalogue, rule, &profile, as_of) {
                    expected.insert(
                        rule.scheme_id.clone(),
                        (rule.rule_id.clone(), e.verdict, e.match_score, engine::gaps::fingerprint(&e.gaps)),
                    );
                }
            }
            let stored: BTreeMap<_, _> = store
                .verdicts
                .iter()
                .map(|(scheme, v)| {
                    (
                        scheme.to_string(),
                        (v.rule_id.to_string(), v.known.verdict, v.known.score, v.known.gaps),
                    )
                })
                .collect();
            prop_assert_eq!(stored, expected);
        }
    }

    #[test]
    fn a_micro_batch_of_several_states_gives_each_citizen_its_own_states_outcomes() {
        // One batch against the rules of every state present (as a GPU micro-batch runs it):
        // each citizen gets exactly its own state's rules back, each outcome the scalar one.
        let book = &*BOOK;
        let as_of = Date::parse("2025-06-15").unwrap();
        let citizens: Vec<Profile> = [
            Some("karnataka"),
            Some("maharashtra"),
            Some("bihar"),
            None,
            Some("karnataka"),
        ]
        .iter()
        .enumerate()
        .map(|(k, state)| {
            let mut json = json!({
                "user_id": format!("u{k}"),
                "identity": {"age": 30 + 12 * k, "verified_documents": ["aadhaar"]},
                "economic": {"annual_income": 40_000 * (k + 1), "bpl_status": k % 2 == 0},
                "family": {}, "eligibility": {"active_schemes": []},
            });
            if let Some(state) = state {
                json["demographics"] = json!({"state": state});
            }
            Profile::from_json(&book.catalogue, &json, "t").unwrap()
        })
        .collect();
        let states: Vec<Option<String>> = citizens.iter().map(|p| state_of(book, p)).collect();
        let items: Vec<(&Profile, Option<&str>, Date)> = citizens
            .iter()
            .zip(&states)
            .map(|(p, s)| (p, s.as_deref(), as_of))
            .collect();
        let engine = Engine::new(EngineChoice::Cpu, 0).unwrap();
        let (outcomes, _) = book.batch_outcomes(&engine, &items, 1).unwrap();
        for ((profile, state), outcomes) in citizens.iter().zip(&states).zip(&outcomes) {
            let given: BTreeSet<usize> = outcomes.iter().map(|&(i, _)| i).collect();
            for &index in &book.candidates(state.as_deref(), as_of).indices {
                assert!(given.contains(&index), "{state:?}: rule {index} missing");
            }
            for &(index, outcome) in outcomes {
                let rule = book.rule(index);
                // A citizen without a state can hold any state's scheme.
                assert!(
                    state.is_none()
                        || rule.state == "central"
                        || Some(rule.state.as_str()) == state.as_deref(),
                    "{state:?} got {}'s rule {}",
                    rule.state,
                    rule.rule_id
                );
                assert_eq!(
                    outcome,
                    engine::outcome(rule, profile, as_of),
                    "{}",
                    rule.rule_id
                );
            }
        }
    }

    #[test]
    fn an_update_that_moves_no_condition_is_neither_evaluated_again_nor_written() {
        let book = &*BOOK;
        let as_of = Date::parse("2025-01-15").unwrap();
        let base = json!({
            "user_id": "u1",
            "identity": {"age": 70, "verified_documents": ["aadhaar"]},
            "demographics": {"state": "karnataka"},
            "economic": {"annual_income": 50_000, "bpl_status": true},
            "family": {}, "eligibility": {"active_schemes": []},
        });
        let mut store = Store::default();
        let mut passes = Vec::new();
        for (offset, income) in [50_000, 50_001, 2_000_000].into_iter().enumerate() {
            let mut json = base.clone();
            json["economic"]["annual_income"] = income.into();
            let profile = Profile::from_json(&book.catalogue, &json, "t").unwrap();
            let mut user = store.load();
            let trigger = Trigger::Profile {
                profile: Arc::new(profile),
                json: json.to_string().into(),
                position: Position {
                    topic: "t".into(),
                    partition: 0,
                    offset: offset as i64,
                },
                full: false,
                batch: &[],
            };
            let out = run(book, "u1", &mut user, trigger, as_of).unwrap();
            store.commit(&user);
            passes.push((out, user.touched.len()));
        }
        let (first, first_touched) = &passes[0];
        assert_eq!(
            *first_touched,
            first.audit.len(),
            "a new user: every verdict is written"
        );
        // One rupee more crosses no income limit of the corpus: the schemes reading income
        // keep every condition as it was, so none is evaluated, audited, written or published
        // again; only the pass summary goes out.
        let (second, second_touched) = &passes[1];
        assert!(second.audit.is_empty(), "{:?}", second.audit);
        assert_eq!(*second_touched, 0);
        assert!(
            matches!(&second.events[..], [OutEvent::BatchComputed(e)] if e.results.is_empty()),
            "only an empty pass summary: {:?}",
            second.events
        );
        // Twenty lakh crosses the limits: the schemes whose income condition moved are
        // evaluated again (a verdict can still come out the same), those whose outcome changed
        // are written, and the schemes whose conditions did not move are not evaluated.
        let (third, third_touched) = &passes[2];
        assert!(*third_touched > 0);
        assert!(third.audit.len() >= *third_touched);
        assert!(third.audit.len() < first.audit.len());
    }
}
