//! One citizen against every scheme in effect for them: what `eligibility evaluate` prints and
//! the API's anonymous check answers.

use anyhow::{Result, bail};
use engine::temporal::{Applicability, applicability};
use engine::{Catalogue, Date, Evaluation, Profile, RuleSet, Verdict, evaluate};
use serde::Serialize;

#[derive(Serialize)]
pub struct NotApplicable<'a> {
    pub scheme_id: &'a str,
    pub rule_id: &'a str,
    #[serde(flatten)]
    pub why: Applicability,
}

/// Every scheme in effect for one citizen, evaluated.
#[derive(Serialize)]
pub struct Output<'a> {
    pub as_of: Date,
    pub results: Vec<Evaluation<'a>>,
    /// Schemes in effect whose application window or deadline rules out applying on `as_of`.
    pub not_applicable: Vec<NotApplicable<'a>>,
}

/// Evaluates `profile` — as it reads on `as_of` ([`Profile::on`]) — against the schemes in
/// effect on `as_of` that a citizen of its state can hold (every state's with `all_states`),
/// or only `scheme`: what `eligibility evaluate` prints and the API's anonymous check answers.
pub fn evaluate_citizen<'a>(
    catalogue: &'a Catalogue,
    rules: &'a RuleSet,
    profile: &'a Profile,
    as_of: Date,
    scheme: Option<&str>,
    all_states: bool,
) -> Result<Output<'a>> {
    let in_effect = rules.in_effect(as_of);
    let selected = match scheme {
        Some(id) => {
            let chosen: Vec<_> = in_effect
                .into_iter()
                .filter(|r| r.scheme_id == id)
                .collect();
            if chosen.is_empty() {
                bail!("no version of scheme {id:?} is in effect on {as_of}");
            }
            chosen
        }
        None if all_states => in_effect,
        None => {
            let state = catalogue
                .id("demographics.state")
                .and_then(|f| profile.get(f))
                .and_then(|v| v.scalar()?.as_str());
            RuleSet::for_state(in_effect, state)
        }
    };
    let mut output = Output {
        as_of,
        results: Vec::new(),
        not_applicable: Vec::new(),
    };
    for rule in selected {
        match evaluate(catalogue, rule, profile, as_of) {
            Ok(evaluation) => output.results.push(evaluation),
            Err(_) => output.not_applicable.push(NotApplicable {
                scheme_id: &rule.scheme_id,
                rule_id: &rule.rule_id,
                why: applicability(rule, as_of),
            }),
        }
    }
    // What the citizen can act on first: ELIGIBLE, then partial matches whose every gap the
    // citizen can close, then the other partial matches, each by score; then the rest.
    output.results.sort_by_key(|e| {
        (
            rank(e.verdict, e.all_gaps_closable),
            std::cmp::Reverse(e.match_score),
        )
    });
    Ok(output)
}

/// Where a verdict comes in what a citizen can act on first: ELIGIBLE, then partial matches
/// whose every gap the citizen can close, then the other partial matches, then the rest.
pub fn rank(verdict: Verdict, all_gaps_closable: bool) -> u8 {
    match (verdict, all_gaps_closable) {
        (Verdict::Eligible, _) => 0,
        (Verdict::PartialMatch, true) => 1,
        (Verdict::PartialMatch, false) => 2,
        _ => 3,
    }
}
