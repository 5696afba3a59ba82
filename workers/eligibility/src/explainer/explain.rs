//! One event's explanations, without Kafka or a database: the facts re-derived from the stored
//! profile and rule, then per language the LLM's answer if Oracle-A accepts it, else the
//! template.
//!
//! # Acceptance
//!
//! An LLM answer is served only if `oracle::check(&explain::oracle_case(..))` says PASS **and**
//! [`unsourced_numbers`](::explain::unsourced_numbers) finds no number the facts do not state. The second check
//! closes a loophole of Oracle-A's sourcing (RULE-PREC-001/004: a sentence is sourced when it
//! *contains* a fact): "You are eligible for X and will get ₹5,000 a month." passes the oracle
//! whenever "You are eligible for X" is a fact. Anything else (a failed rule, an invented
//! number) and every LLM error serves the template, whose fallback reason is recorded.
//!
//! # Trust score
//!
//! [`trust_score`]: 0 when the served text fails Oracle-A (which the template never does), else
//! the share of its sentences that are a fact word for word (after Oracle-A's normalisation:
//! lower case, collapsed whitespace; sentences split on `.` `!` `?` `।` `॥`, not on a `.`
//! between digits, facts split the same way). The template is made of facts, so it scores 1;
//! an accepted LLM answer scores 1 when it only restates facts whole and less for each
//! sentence that merely contains a fact or is part of one. Deterministic, in [0, 1].
//!
//! The verdict explained is always the event's: the facts are checked to re-derive it (and its
//! evaluation id) before anything is asked of the LLM, and an LLM answer stating another
//! verdict fails RULE-PREC-002/003.

use std::time::Instant;

use ::explain::{Facts, Language};
use engine::{Catalogue, Date, Profile, Rule, Verdict};
use fleet::events::{EligibilityNewMatch, EligibilityPartialMatch};
use fleet::metrics as m;
use oracle::{CaseReport, Verdict as OracleVerdict};

use super::llm::{LlmClient, LlmError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeneratedBy {
    Llm,
    Template,
}

impl GeneratedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            GeneratedBy::Llm => "llm",
            GeneratedBy::Template => "template",
        }
    }
}

/// Why the template was served: the `reason` label of `eligibility_explanation_fallbacks_total`
/// and the stored `fallback_reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// The LLM's answer failed Oracle-A or stated a number no fact states.
    OracleFailed,
    Timeout,
    /// A non-2xx answer or a connection failure (after retries), or an unusable 2xx body.
    HttpError,
    /// The answer was cut at `max_tokens` (the model said too much).
    Cut,
    CircuitOpen,
    /// The micro-batch's time for the model (`--llm-batch-budget-ms`) was spent before this
    /// explanation's turn.
    Budget,
    /// `ELIGIBILITY_LLM_BASE_URL` is unset.
    NoLlm,
}

impl Fallback {
    pub const ALL: [Fallback; 7] = [
        Fallback::OracleFailed,
        Fallback::Timeout,
        Fallback::HttpError,
        Fallback::Cut,
        Fallback::CircuitOpen,
        Fallback::Budget,
        Fallback::NoLlm,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Fallback::OracleFailed => "oracle_failed",
            Fallback::Timeout => "timeout",
            Fallback::HttpError => "http_error",
            Fallback::Cut => "cut",
            Fallback::CircuitOpen => "circuit_open",
            Fallback::Budget => "budget",
            Fallback::NoLlm => "no_llm",
        }
    }

    pub fn of(error: &LlmError) -> Fallback {
        match error {
            LlmError::Timeout => Fallback::Timeout,
            LlmError::Http { .. } | LlmError::InvalidResponse(_) => Fallback::HttpError,
            LlmError::Cut(_) => Fallback::Cut,
            LlmError::CircuitOpen => Fallback::CircuitOpen,
            LlmError::OverBudget => Fallback::Budget,
        }
    }
}

/// An LLM answer that was not served, and why (for logs, tests and `answers capture`; never
/// stored): refused by Oracle-A or for a number no fact states, or cut at `max_tokens` (no rule
/// failed: it never reached Oracle-A).
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    pub answer: String,
    /// The Oracle-A rules that failed (`RULE-PREC-001` …).
    pub failed_rules: Vec<&'static str>,
    pub unsourced_numbers: Vec<String>,
}

/// The explanation served for one evaluation in one language.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    pub language: Language,
    pub text: String,
    pub generated_by: GeneratedBy,
    pub oracle_verdict: OracleVerdict,
    pub trust_score: f32,
    pub fallback_reason: Option<Fallback>,
    pub rejected: Option<Rejection>,
}

/// What an `eligibility.new_match` or `eligibility.partial_match` event asks to explain.
#[derive(Debug, Clone, PartialEq)]
pub struct Subject {
    pub user_id: String,
    pub scheme_id: String,
    pub rule_id: String,
    pub evaluation_id: String,
    pub input_hash: String,
    pub as_of: String,
    /// The verdict the event stands for: ELIGIBLE for a new match, PARTIAL_MATCH for a partial.
    pub verdict: Verdict,
}

impl Subject {
    pub fn from_new_match(e: &EligibilityNewMatch) -> Subject {
        Subject {
            user_id: e.user_id.clone(),
            scheme_id: e.scheme_id.clone(),
            rule_id: e.rule_id.clone(),
            evaluation_id: e.evaluation_id.clone(),
            input_hash: e.input_hash.clone(),
            as_of: e.as_of.clone(),
            verdict: Verdict::Eligible,
        }
    }

    pub fn from_partial_match(e: &EligibilityPartialMatch) -> Subject {
        Subject {
            user_id: e.user_id.clone(),
            scheme_id: e.scheme_id.clone(),
            rule_id: e.rule_id.clone(),
            evaluation_id: e.evaluation_id.clone(),
            input_hash: e.input_hash.clone(),
            as_of: e.as_of.clone(),
            verdict: Verdict::PartialMatch,
        }
    }
}

/// The facts of `subject` in each language, re-derived with the engine from the stored profile
/// and rule. An error says how the stored data fails to re-derive the event (the event is then
/// dead-lettered): another rule or profile than the event names, a rule not applicable on the
/// date, another verdict or evaluation id.
pub fn derive_facts(
    catalogue: &Catalogue,
    rule: &Rule,
    profile: &Profile,
    subject: &Subject,
    languages: &[Language],
) -> Result<Vec<Facts>, String> {
    if rule.rule_id != subject.rule_id || rule.scheme_id != subject.scheme_id {
        return Err(format!(
            "the stored rule is {}/{}, the event names {}/{}",
            rule.scheme_id, rule.rule_id, subject.scheme_id, subject.rule_id
        ));
    }
    if profile.input_snapshot_hash != subject.input_hash {
        return Err(format!(
            "the stored profile hashes to {}, the event says {}",
            profile.input_snapshot_hash, subject.input_hash
        ));
    }
    let as_of = Date::parse(&subject.as_of)
        .ok_or_else(|| format!("as_of {:?} is not a date (YYYY-MM-DD)", subject.as_of))?;
    let profile = profile.on(as_of);
    let evaluation = engine::evaluate(catalogue, rule, &profile, as_of)
        .map_err(|why| format!("{} does not apply on {as_of}: {why:?}", rule.rule_id))?;
    if evaluation.verdict != subject.verdict {
        return Err(format!(
            "re-evaluated, {} gives {} for this profile; the event stands for {}",
            rule.rule_id,
            evaluation.verdict.name(),
            subject.verdict.name()
        ));
    }
    if evaluation.evaluation_id != subject.evaluation_id {
        return Err(format!(
            "re-evaluated, the evaluation id is {}; the event says {}",
            evaluation.evaluation_id, subject.evaluation_id
        ));
    }
    Ok(languages
        .iter()
        .map(|&language| ::explain::facts(&evaluation, catalogue, language))
        .collect())
}

/// The explanation of `facts`: the LLM's if there is one and its answer is accepted, else the
/// template. Records the oracle checks and any fallback.
pub async fn explain(case_id: &str, facts: &Facts, llm: Option<&LlmClient>) -> Explanation {
    explain_by(case_id, facts, llm, None).await
}

/// [`explain`], asking the LLM only if its request can start by `deadline` (else the template,
/// [`Fallback::Budget`]).
pub async fn explain_by(
    case_id: &str,
    facts: &Facts,
    llm: Option<&LlmClient>,
    deadline: Option<Instant>,
) -> Explanation {
    let language = facts.language();
    let (fallback, rejected) = match llm {
        None => (Fallback::NoLlm, None),
        Some(llm) => match llm
            .complete(
                &::explain::prompt(facts),
                ::explain::max_tokens(facts),
                deadline,
            )
            .await
        {
            Ok(answer) => {
                let report = check(case_id, facts, &answer);
                let unsourced_numbers = ::explain::unsourced_numbers(facts, &answer);
                if report.verdict == OracleVerdict::Pass && unsourced_numbers.is_empty() {
                    metrics::counter!(m::EXPLANATIONS, "generated_by" => "llm").increment(1);
                    return Explanation {
                        language,
                        trust_score: trust_score(facts, &answer, report.verdict),
                        text: answer,
                        generated_by: GeneratedBy::Llm,
                        oracle_verdict: report.verdict,
                        fallback_reason: None,
                        rejected: None,
                    };
                }
                let failed_rules: Vec<&'static str> = report
                    .rules
                    .iter()
                    .filter(|r| r.verdict == OracleVerdict::Fail)
                    .map(|r| r.rule_id.as_str())
                    .collect();
                tracing::info!(
                    case = case_id,
                    ?failed_rules,
                    unsourced_numbers = unsourced_numbers.len(),
                    "LLM answer refused; serving the template"
                );
                (
                    Fallback::OracleFailed,
                    Some(Rejection {
                        answer,
                        failed_rules,
                        unsourced_numbers,
                    }),
                )
            }
            Err(LlmError::Cut(answer)) => {
                tracing::info!(
                    case = case_id,
                    "LLM answer cut at max_tokens; serving the template"
                );
                // Refused before Oracle-A: a cut sentence can pass it while saying less than
                // it seems to. Kept as the rejection (with no rule failed) for the record.
                (
                    Fallback::Cut,
                    Some(Rejection {
                        answer,
                        failed_rules: Vec::new(),
                        unsourced_numbers: Vec::new(),
                    }),
                )
            }
            Err(e) => {
                tracing::info!(case = case_id, error = %e, "no LLM answer; serving the template");
                (Fallback::of(&e), None)
            }
        },
    };
    metrics::counter!(m::EXPLANATION_FALLBACKS, "reason" => fallback.as_str()).increment(1);
    metrics::counter!(m::EXPLANATIONS, "generated_by" => "template").increment(1);
    let text = ::explain::template(facts);
    let report = check(&format!("{case_id}:template"), facts, &text);
    if report.verdict != OracleVerdict::Pass {
        // The template passes by construction (the explain crate's property tests); if it ever
        // does not, it is still the safest text there is, served and recorded as failing.
        m::error("internal");
        tracing::error!(
            case = case_id,
            "the template explanation failed Oracle-A; served as is"
        );
    }
    Explanation {
        language,
        trust_score: trust_score(facts, &text, report.verdict),
        text,
        generated_by: GeneratedBy::Template,
        oracle_verdict: report.verdict,
        fallback_reason: Some(fallback),
        rejected,
    }
}

/// The explanations of one event in `languages`, one after the other (the batch runs events
/// concurrently). `Err` as [`derive_facts`].
pub async fn explain_event(
    catalogue: &Catalogue,
    rule: &Rule,
    profile: &Profile,
    subject: &Subject,
    languages: &[Language],
    llm: Option<&LlmClient>,
) -> Result<Vec<Explanation>, String> {
    let all = derive_facts(catalogue, rule, profile, subject, languages)?;
    let mut out = Vec::with_capacity(all.len());
    for facts in &all {
        let case_id = format!("{}:{}", subject.evaluation_id, facts.language().code());
        out.push(explain(&case_id, facts, llm).await);
    }
    Ok(out)
}

/// Oracle-A on one candidate, each rule's verdict counted.
fn check(case_id: &str, facts: &Facts, candidate: &str) -> CaseReport {
    let report = oracle::check(&::explain::oracle_case(case_id, facts, candidate));
    for rule in &report.rules {
        let verdict = match rule.verdict {
            OracleVerdict::Pass => "pass",
            OracleVerdict::Fail => "fail",
        };
        metrics::counter!(m::ORACLE_CHECKS, "rule" => rule.rule_id.as_str(), "verdict" => verdict)
            .increment(1);
    }
    report
}

/// The trust score of a served `text` (module docs): 0 if it failed Oracle-A, else the share of
/// its sentences that are, word for word, a fact (or a sentence of one).
pub fn trust_score(facts: &Facts, text: &str, verdict: OracleVerdict) -> f32 {
    if verdict != OracleVerdict::Pass {
        return 0.0;
    }
    let fact_sentences: std::collections::HashSet<String> = facts
        .texts()
        .iter()
        .flat_map(|fact| sentences(fact))
        .collect();
    let said = sentences(text);
    if said.is_empty() {
        return 0.0;
    }
    let verbatim = said.iter().filter(|s| fact_sentences.contains(*s)).count();
    verbatim as f32 / said.len() as f32
}

/// Normalised sentences: split on `.` `!` `?` `।` `॥` (not a `.` between two digits), lower
/// case, whitespace collapsed, empty ones dropped.
fn sentences(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let between_digits = c == '.'
            && i > 0
            && chars[i - 1].is_numeric()
            && chars.get(i + 1).is_some_and(|n| n.is_numeric());
        if matches!(c, '.' | '!' | '?' | '।' | '॥') && !between_digits {
            out.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    out.push(current);
    out.into_iter()
        .map(|s| {
            s.to_lowercase()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|s| !s.is_empty())
        .collect()
}
