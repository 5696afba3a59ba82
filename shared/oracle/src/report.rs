//! The report Oracle-A produces for one case. Field order in the serialised
//! JSON is the declaration order below, so reports are byte-stable.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::rule_id::RuleId;

/// PASS or FAIL, serialised in upper case as in the specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    Pass,
    Fail,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
        })
    }
}

/// The full result for one case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseReport {
    pub id: String,
    /// FAIL iff any rule fails or `errors` is non-empty.
    pub verdict: Verdict,
    /// One entry per rule, in rule-index order.
    pub rules: Vec<RuleReport>,
    pub errors: Vec<ConfigError>,
}

impl CaseReport {
    /// Ids of the rules whose verdict is FAIL, in rule-index order.
    pub fn failed_rules(&self) -> impl Iterator<Item = RuleId> + '_ {
        self.rules
            .iter()
            .filter(|r| r.verdict == Verdict::Fail)
            .map(|r| r.rule_id)
    }
}

/// The result of one rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleReport {
    pub rule_id: RuleId,
    pub invariant: &'static str,
    /// FAIL iff `violations` is non-empty.
    pub verdict: Verdict,
    pub violations: Vec<Violation>,
    /// Every step the rule took, whatever the verdict.
    pub evidence: Vec<Evidence>,
}

impl RuleReport {
    pub(crate) fn new(
        rule_id: RuleId,
        violations: Vec<Violation>,
        evidence: Vec<Evidence>,
    ) -> Self {
        let verdict = if violations.is_empty() {
            Verdict::Pass
        } else {
            Verdict::Fail
        };
        Self {
            rule_id,
            invariant: rule_id.invariant(),
            verdict,
            violations,
            evidence,
        }
    }
}

/// One breach of an invariant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// `Q-INV-01` or `Q-INV-03`.
    pub invariant: &'static str,
    pub message: String,
}

/// One recorded step. Offsets (`offset`, `found_at`) are byte offsets into the
/// candidate output exactly as given; `text`, `fact` and `normalised` are
/// normalised, `pattern` is as given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Evidence {
    /// A sentence and the fact that sourced it (`null` when unsourced).
    Sentence {
        index: usize,
        offset: usize,
        text: String,
        source: Option<Source>,
    },
    /// The PREC-001 count against its threshold.
    UnsupportedCount { unsupported: usize, max: usize },
    /// A must-find or must-not-find pattern and where it was first found.
    Pattern {
        pattern: String,
        normalised: String,
        found_at: Option<usize>,
    },
    /// A pattern that normalises to nothing and so was not checked.
    EmptyPattern { index: usize, pattern: String },
    /// A contradiction pair and where each term was first found as a whole word.
    Pair {
        contradiction_id: String,
        terms: [TermHit; 2],
        contradiction: bool,
    },
    /// A contradiction id naming no predefined pair; not checked.
    UnknownContradictionId { contradiction_id: String },
    /// PREC-005: the words of a sentence outside every fact it lies in or contains.
    AddedWords {
        index: usize,
        offset: usize,
        added: Vec<String>,
        max: usize,
    },
    /// A rule whose limit the case and the oracle leave unset; not applied.
    NotConfigured { key: &'static str },
}

/// The fact that sourced a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    pub fact_index: usize,
    pub fact: String,
    #[serde(rename = "match")]
    pub direction: MatchDirection,
}

/// Which of the two sourcing conditions held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchDirection {
    FactContainsSentence,
    SentenceContainsFact,
}

/// One side of a contradiction pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TermHit {
    pub term: &'static str,
    pub found_at: Option<usize>,
}

/// A problem with the case's own configuration. Any one fails the case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ConfigError {
    #[error("unknown contradiction id {id:?} at expected.contradiction_ids[{index}]")]
    UnknownContradictionId { index: usize, id: String },
    #[error("empty pattern at expected.{list}[{index}]: it would match every output")]
    EmptyPattern { list: &'static str, index: usize },
}
