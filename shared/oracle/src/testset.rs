//! Running a whole NDJSON test set and comparing each case with its expectation.

use std::collections::BTreeSet;
use std::fmt;

use crate::case::{Case, OracleConfig};
use crate::report::{CaseReport, Verdict};
use crate::rule_id::RuleId;

/// The result of a whole test set: one entry per non-blank line, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct TestsetOutcome {
    pub entries: Vec<Entry>,
    pub summary: Summary,
}

/// One non-blank line of a test set.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Case(Box<CaseOutcome>),
    InputError(InputError),
}

/// A line that could not be read as a case; the rest of the set still runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: input error: {message}")]
pub struct InputError {
    /// 1-based line number in the test-set text.
    pub line: usize,
    pub message: String,
}

/// How a case's result compares with what the test set expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agreement {
    Agreed,
    Disagreed,
    /// Neither `expected_verdict` nor `expected_violations` was given.
    Unchecked,
}

/// One case run against its expectation. `Display` gives one line:
/// `ID (line N): VERDICT [failed rules] errors: ..., expected VERDICT [rules]: agreed|DISAGREED|unchecked`.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseOutcome {
    /// 1-based line number in the test-set text.
    pub line: usize,
    pub id: String,
    pub expected_verdict: Option<Verdict>,
    pub actual_verdict: Verdict,
    /// `Some(true)` iff `expected_verdict` was given and equals the actual verdict.
    pub verdict_agrees: Option<bool>,
    /// The failing rule ids the case expected, when given.
    pub expected_violations: Option<Vec<String>>,
    /// `Some(..)` iff `expected_violations` was given: whether it names exactly
    /// the failing rules (as a set).
    pub violations_match: Option<bool>,
    pub report: CaseReport,
}

impl CaseOutcome {
    fn new(line: usize, case: &Case, report: CaseReport) -> Self {
        let verdict_agrees = case.expected_verdict.map(|v| v == report.verdict);
        let violations_match = case.expected_violations.as_ref().map(|expected| {
            let expected: BTreeSet<&str> = expected.iter().map(String::as_str).collect();
            let actual: BTreeSet<&str> = report.failed_rules().map(RuleId::as_str).collect();
            expected == actual
        });
        Self {
            line,
            id: case.id.clone(),
            expected_verdict: case.expected_verdict,
            actual_verdict: report.verdict,
            verdict_agrees,
            expected_violations: case.expected_violations.clone(),
            violations_match,
            report,
        }
    }

    /// Agreed iff every expectation given holds.
    pub fn agreement(&self) -> Agreement {
        match (self.verdict_agrees, self.violations_match) {
            (None, None) => Agreement::Unchecked,
            (Some(false), _) | (_, Some(false)) => Agreement::Disagreed,
            _ => Agreement::Agreed,
        }
    }
}

impl fmt::Display for CaseOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = if self.id.is_empty() {
            "(no id)"
        } else {
            &self.id
        };
        let failed: Vec<&str> = self.report.failed_rules().map(RuleId::as_str).collect();
        write!(
            f,
            "{id} (line {}): {} [{}]",
            self.line,
            self.actual_verdict,
            failed.join(", ")
        )?;
        if !self.report.errors.is_empty() {
            let errors: Vec<String> = self.report.errors.iter().map(|e| e.to_string()).collect();
            write!(f, " errors: {}", errors.join("; "))?;
        }
        f.write_str(", expected")?;
        match self.expected_verdict {
            Some(verdict) => write!(f, " {verdict}")?,
            None => f.write_str(" -")?,
        }
        if let Some(expected) = &self.expected_violations {
            write!(f, " [{}]", expected.join(", "))?;
        }
        f.write_str(match self.agreement() {
            Agreement::Agreed => ": agreed",
            Agreement::Disagreed => ": DISAGREED",
            Agreement::Unchecked => ": unchecked",
        })
    }
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entry::Case(outcome) => outcome.fmt(f),
            Entry::InputError(error) => error.fmt(f),
        }
    }
}

/// Counts over a test set; `total` counts every non-blank line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub total: usize,
    pub agreed: usize,
    pub disagreed: usize,
    pub unchecked: usize,
    pub input_errors: usize,
}

impl Summary {
    /// True iff no case disagreed and every line was a readable case.
    pub fn is_clean(&self) -> bool {
        self.disagreed == 0 && self.input_errors == 0
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "total {}: agreed {}, disagreed {}, unchecked {}, input errors {}",
            self.total, self.agreed, self.disagreed, self.unchecked, self.input_errors
        )
    }
}

/// Runs every case of an NDJSON test set with the default [`OracleConfig`].
pub fn run_testset(text: &str) -> TestsetOutcome {
    run_testset_with(text, &OracleConfig::default())
}

/// Runs every case of an NDJSON test set. Blank lines are skipped; a line that
/// is not a valid case becomes an [`InputError`] and the rest still runs.
pub fn run_testset_with(text: &str, oracle: &OracleConfig) -> TestsetOutcome {
    let mut entries = Vec::new();
    let mut summary = Summary::default();
    for (index, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let line = index + 1;
        summary.total += 1;
        let entry = match Case::from_json(raw) {
            Ok(case) => {
                let outcome = CaseOutcome::new(line, &case, crate::check_with(&case, oracle));
                match outcome.agreement() {
                    Agreement::Agreed => summary.agreed += 1,
                    Agreement::Disagreed => summary.disagreed += 1,
                    Agreement::Unchecked => summary.unchecked += 1,
                }
                Entry::Case(Box::new(outcome))
            }
            Err(error) => {
                summary.input_errors += 1;
                Entry::InputError(InputError {
                    line,
                    message: error.to_string(),
                })
            }
        };
        entries.push(entry);
    }
    TestsetOutcome { entries, summary }
}
