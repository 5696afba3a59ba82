//! Real model answers, labelled by hand, against the explainer's acceptance: Oracle-A passes
//! the answer and it states no number the facts do not (docs/explainer-model.md, "The labelled
//! answers"; captured with `eligibility answers capture`).
//!
//! Each line of `testdata/real_answers.ndjson` is one answer the local model gave to the
//! explainer's prompt, with the Oracle-A case the explainer checked and a `label`:
//! `{"faithful": true}`, or `{"faithful": false, "false_claim": "..."}` naming what it says that
//! the facts do not. The goal the test holds: no unfaithful answer is accepted. How many
//! faithful answers are refused, and by which rule, is printed (and reported in the doc).

use std::collections::BTreeMap;

use oracle::{Case, Verdict};
use serde_json::Value as Json;

const ANSWERS: &str = include_str!("../testdata/real_answers.ndjson");

struct Labelled {
    id: String,
    case: Case,
    faithful: bool,
    false_claim: Option<String>,
    language: String,
    verdict: String,
}

fn labelled() -> Vec<Labelled> {
    ANSWERS
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            let v: Json = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("line {}: not JSON: {e}", i + 1));
            let id = v["id"].as_str().unwrap_or_default().to_string();
            let mut case: Case = serde_json::from_value(v["case"].clone())
                .unwrap_or_else(|e| panic!("{id}: not an Oracle-A case: {e}"));
            // Judged by the explainer's check as it is now, whatever it was when captured.
            case.config = explain::case_config();
            let faithful = v["label"]["faithful"]
                .as_bool()
                .unwrap_or_else(|| panic!("{id}: not labelled"));
            let false_claim = v["label"]["false_claim"].as_str().map(str::to_string);
            Labelled {
                id,
                case,
                faithful,
                false_claim,
                language: v["language"].as_str().unwrap_or_default().to_string(),
                verdict: v["verdict"].as_str().unwrap_or_default().to_string(),
            }
        })
        .collect()
}

/// What the explainer would do with the answer today: the failed Oracle-A rules, and
/// `unsourced` where the answer states a number no fact states. Empty: accepted.
fn refusals(case: &Case) -> Vec<String> {
    let report = oracle::check(case);
    let mut why: Vec<String> = report
        .rules
        .iter()
        .filter(|r| r.verdict == Verdict::Fail)
        .map(|r| r.rule_id.as_str().to_string())
        .collect();
    let unsourced = explain::unsourced_numbers_in(
        case.facts.iter().map(String::as_str),
        &case.candidate_output,
    );
    if !unsourced.is_empty() {
        why.push("unsourced number".into());
    }
    assert_eq!(
        why.is_empty(),
        report.verdict == Verdict::Pass && unsourced.is_empty()
    );
    why
}

#[test]
fn no_unfaithful_real_answer_is_accepted() {
    let answers = labelled();
    assert!(answers.len() >= 200, "{} labelled answers", answers.len());
    let mut accepted_unfaithful = Vec::new();
    let mut refused_faithful: BTreeMap<String, usize> = BTreeMap::new();
    let mut table: BTreeMap<(String, String), [usize; 4]> = BTreeMap::new();
    for answer in &answers {
        if !answer.faithful {
            assert!(
                answer
                    .false_claim
                    .as_deref()
                    .is_some_and(|c| !c.trim().is_empty()),
                "{}: an unfaithful answer names its false claim",
                answer.id
            );
        }
        let why = refusals(&answer.case);
        let accepted = why.is_empty();
        let row = table
            .entry((answer.language.clone(), answer.verdict.clone()))
            .or_default();
        row[usize::from(answer.faithful) * 2 + usize::from(accepted)] += 1;
        match (answer.faithful, accepted) {
            (false, true) => accepted_unfaithful.push(format!(
                "{}: {:?} — false claim: {}",
                answer.id,
                answer.case.candidate_output,
                answer.false_claim.as_deref().unwrap_or_default()
            )),
            (true, false) => {
                for rule in why {
                    *refused_faithful.entry(rule).or_default() += 1;
                }
            }
            _ => {}
        }
    }
    eprintln!("language verdict: unfaithful refused / accepted, faithful refused / accepted");
    for ((language, verdict), [ur, ua, fr, fa]) in &table {
        eprintln!("  {language} {verdict}: {ur} / {ua}, {fr} / {fa}");
    }
    eprintln!("faithful answers refused, by rule: {refused_faithful:?}");
    assert!(
        accepted_unfaithful.is_empty(),
        "Oracle-A accepted {} unfaithful answer(s):\n{}",
        accepted_unfaithful.len(),
        accepted_unfaithful.join("\n")
    );
}
