//! The Oracle-A case that checks a candidate explanation against the facts.
//!
//! - `facts`: the fact sentences; a sentence of the candidate must be part of one or contain
//!   one (RULE-PREC-001/004, UNSUPPORTED_MAX 0), and say at most [`ADDED_WORDS_MAX`] words
//!   beside the facts it contains (RULE-PREC-005).
//! - `must_find`: the phrase of the facts' verdict ("You are not eligible for"): an
//!   explanation states the verdict it explains (PREC-002).
//! - `must_not_find`: the phrases of every other verdict and promises no evaluation makes
//!   ("guarantee") (PREC-003).
//! - `contradiction_ids`: the ten predefined pairs (CONT-001..003).
//!
//! A forbidden phrase or a pair is checked only where the facts themselves do not already
//! contain it: rule labels say "below ₹2.5 lakh" and "not above ₹20,000" in one scheme, so the
//! facts may hold both `above` and `below`, and restating them is no contradiction. Whether the
//! facts contain it is asked of Oracle-A itself, so its matching (normalisation, whole words)
//! decides, not a copy of it.
//!
//! Oracle-A splits sentences on `.`, `!` and `?` only. A Hindi, Bengali, Odia, Punjabi or
//! Assamese answer ends its sentences with `।` (danda), an Urdu one with `۔`; unsplit, the whole
//! answer would be one sentence, sourced as soon as it contains any one fact. So the
//! candidate's sentence ends become `.` padded with spaces to the same byte length, so the
//! oracle's offsets still point into the text as given.

use engine::Verdict;
use oracle::{Case, CaseConfig, Evidence, Expected, RuleId};
use serde_json::{Value as Json, json};

use crate::facts::Facts;

/// Every predefined contradiction pair of Oracle-A.
pub const CONTRADICTION_IDS: [&str; 10] = [
    "always_never",
    "true_false",
    "increase_decrease",
    "positive_negative",
    "valid_invalid",
    "correct_incorrect",
    "success_failure",
    "above_below",
    "present_absent",
    "enabled_disabled",
];

/// The most words a sentence of an explanation may say beside the facts it is made of
/// (RULE-PREC-005): room for "and", "so" or "also" between two facts, none for a clause of its
/// own. Real answers that wrapped a fact in words of their own passed PREC-004
/// (docs/explainer-model.md, "The labelled answers").
pub const ADDED_WORDS_MAX: usize = 3;

/// The `config` of every case the explainer checks: no unsourced sentence (PREC-001) and at most
/// [`ADDED_WORDS_MAX`] added words in one (PREC-005).
pub fn case_config() -> CaseConfig {
    CaseConfig {
        unsupported_max: Some(0),
        added_words_max: Some(ADDED_WORDS_MAX),
    }
}

const VERDICTS: [Verdict; 4] = [
    Verdict::Eligible,
    Verdict::PartialMatch,
    Verdict::NotEligible,
    Verdict::NotApplicable,
];

/// The case as JSON, in the shape of an Oracle-A test-set line (for audit records).
pub fn oracle_case_json(id: &str, facts: &Facts, candidate: &str) -> Json {
    let words = facts.language().words();
    let texts = facts.texts();
    let forbidden: Vec<String> = VERDICTS
        .into_iter()
        .filter(|&v| v != facts.verdict())
        .map(|v| words.verdict_phrase(v))
        .chain(words.promises.iter().map(String::as_str))
        .map(str::to_string)
        .collect();
    let (must_not_find, contradiction_ids) = not_in_facts(&texts, forbidden);
    json!({
        "id": id,
        "facts": texts,
        "candidate_output": with_ascii_sentence_ends(candidate),
        "expected": {
            "must_find": [words.verdict_phrase(facts.verdict())],
            "must_not_find": must_not_find,
            "contradiction_ids": contradiction_ids,
        },
        "config": {"UNSUPPORTED_MAX": 0, "ADDED_WORDS_MAX": ADDED_WORDS_MAX},
    })
}

/// `candidate` with the sentence ends of Indian scripts (danda `।`, double danda `॥`, Urdu's
/// full stop `۔` and question mark `؟`) written as `.` padded with spaces to the same byte
/// length, so Oracle-A splits sentences there and its offsets still point into the text.
fn with_ascii_sentence_ends(candidate: &str) -> String {
    let mut out = String::with_capacity(candidate.len());
    for c in candidate.chars() {
        if matches!(c, '।' | '॥' | '۔' | '؟') {
            out.push('.');
            out.extend(std::iter::repeat_n(' ', c.len_utf8() - 1));
        } else {
            out.push(c);
        }
    }
    out
}

/// The case Oracle-A checks: `oracle::check(&oracle_case(..)).verdict`.
pub fn oracle_case(id: &str, facts: &Facts, candidate: &str) -> Case {
    serde_json::from_value(oracle_case_json(id, facts, candidate))
        .expect("the case JSON has the shape oracle::Case reads")
}

/// The forbidden phrases and the contradiction ids the facts do not themselves contain.
fn not_in_facts(texts: &[String], forbidden: Vec<String>) -> (Vec<String>, Vec<String>) {
    // The facts as an output; `. ` keeps a phrase from spanning two facts.
    let probe = Case {
        candidate_output: texts.join(". "),
        expected: Expected {
            must_not_find: forbidden,
            contradiction_ids: CONTRADICTION_IDS.map(str::to_string).to_vec(),
            ..Expected::default()
        },
        ..Case::default()
    };
    let report = oracle::check(&probe);
    let evidence = |rule: RuleId| {
        report
            .rules
            .iter()
            .filter(move |r| r.rule_id == rule)
            .flat_map(|r| &r.evidence)
    };
    let phrases = evidence(RuleId::Prec003)
        .filter_map(|e| match e {
            Evidence::Pattern {
                pattern,
                found_at: None,
                ..
            } => Some(pattern.clone()),
            _ => None,
        })
        .collect();
    let pairs = evidence(RuleId::Cont001)
        .filter_map(|e| match e {
            Evidence::Pair {
                contradiction_id,
                contradiction: false,
                ..
            } => Some(contradiction_id.clone()),
            _ => None,
        })
        .collect();
    (phrases, pairs)
}
