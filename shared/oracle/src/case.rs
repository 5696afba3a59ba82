//! A case: the input Oracle-A checks, as one JSON object (one NDJSON line).

use serde::Deserialize;

use crate::report::Verdict;

/// One case, in the format of docs/oracle.md, "Cases and reports".
///
/// Unknown fields are rejected at every level: a misspelt `must_not_find` or
/// `UNSUPPORTED_MAX` would otherwise silently weaken the check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Case id; empty when absent.
    #[serde(default)]
    pub id: String,
    pub facts: Vec<String>,
    pub candidate_output: String,
    #[serde(default)]
    pub expected: Expected,
    #[serde(default)]
    pub config: CaseConfig,
    /// What a test set expects the verdict to be.
    #[serde(default)]
    pub expected_verdict: Option<Verdict>,
    /// What a test set expects the failing rule ids to be (order-insensitive).
    #[serde(default)]
    pub expected_violations: Option<Vec<String>>,
    /// Free-text rationale for a test-set case; ignored by the checks.
    #[serde(default)]
    pub note: Option<String>,
}

/// The `expected` object: patterns and contradiction ids to check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    #[serde(default)]
    pub must_find: Vec<String>,
    #[serde(default)]
    pub must_not_find: Vec<String>,
    #[serde(default)]
    pub contradiction_ids: Vec<String>,
}

/// The case's `config`; absent keys fall back to the [`OracleConfig`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseConfig {
    #[serde(rename = "UNSUPPORTED_MAX", default)]
    pub unsupported_max: Option<usize>,
    /// RULE-PREC-005's limit; absent (here and in the [`OracleConfig`]): the rule is not
    /// applied to the case.
    #[serde(rename = "ADDED_WORDS_MAX", default)]
    pub added_words_max: Option<usize>,
}

/// The oracle's own configuration, used where a case's `config` is silent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OracleConfig {
    /// CONFIG:UNSUPPORTED_MAX for RULE-PREC-001; 0 by default (strict mode).
    pub unsupported_max: usize,
    /// CONFIG:ADDED_WORDS_MAX for RULE-PREC-005; none by default (the rule applies only to a
    /// case that sets it, so cases written before it keep their verdicts).
    pub added_words_max: Option<usize>,
}

impl Case {
    /// Parses one case from a JSON object.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(json)
    }

    /// The ADDED_WORDS_MAX in force for this case, if any.
    pub fn added_words_max(&self, oracle: &OracleConfig) -> Option<usize> {
        self.config.added_words_max.or(oracle.added_words_max)
    }

    /// The UNSUPPORTED_MAX in force for this case.
    pub fn unsupported_max(&self, oracle: &OracleConfig) -> usize {
        self.config
            .unsupported_max
            .unwrap_or(oracle.unsupported_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_case_defaults_the_optional_parts() {
        let case = Case::from_json(r#"{"facts": [], "candidate_output": ""}"#).unwrap();
        assert_eq!(case.id, "");
        assert_eq!(case.expected, Expected::default());
        assert_eq!(case.expected_verdict, None);
        assert_eq!(case.expected_violations, None);
        assert_eq!(
            case.unsupported_max(&OracleConfig {
                unsupported_max: 3,
                added_words_max: None
            }),
            3
        );
    }

    #[test]
    fn contract_example_parses() {
        let case = Case::from_json(
            r#"{"id": "Q-0001",
 "facts": ["your age is 68", "the minimum age is 65"],
 "candidate_output": "You qualify because your age is 68. The minimum age is 65.",
 "expected": {"must_find": ["68"], "must_not_find": ["guaranteed"], "contradiction_ids": ["true_false"]},
 "config": {"UNSUPPORTED_MAX": 0},
 "expected_verdict": "PASS",
 "expected_violations": []}"#,
        )
        .unwrap();
        assert_eq!(case.id, "Q-0001");
        assert_eq!(case.expected.contradiction_ids, ["true_false"]);
        assert_eq!(
            case.unsupported_max(&OracleConfig {
                unsupported_max: 3,
                added_words_max: None
            }),
            0
        );
        assert_eq!(case.expected_verdict, Some(Verdict::Pass));
        assert_eq!(case.expected_violations, Some(vec![]));
    }

    #[test]
    fn missing_required_fields_and_typos_are_rejected() {
        for bad in [
            r#"{"candidate_output": ""}"#,
            r#"{"facts": []}"#,
            r#"{"facts": "x", "candidate_output": ""}"#,
            r#"{"facts": [], "candidate_output": "", "expected": {"must_not_fnd": ["x"]}}"#,
            r#"{"facts": [], "candidate_output": "", "config": {"UNSUPPORTED_MAX": -1}}"#,
            r#"{"facts": [], "candidate_output": "", "expected_verdict": "pass"}"#,
        ] {
            assert!(Case::from_json(bad).is_err(), "{bad}");
        }
    }
}
