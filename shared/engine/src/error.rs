//! Errors of the engine. Validation problems are collected into reports, not returned one by one.

use std::fmt;

/// One problem found while validating a rule or a profile: where it is and why it is wrong.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// The file (or other source) the document came from.
    pub source: String,
    /// The rule id (or user id) when it could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// JSON pointer inside the document, e.g. `/eligibility/conditions/1/value`.
    pub path: String,
    pub reason: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source)?;
        if let Some(id) = &self.id {
            write!(f, " ({id})")?;
        }
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        write!(f, ": {path}: {}", self.reason)
    }
}

/// All the problems found in one validation pass.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ValidationReport {
    pub problems: Vec<Problem>,
}

impl ValidationReport {
    pub fn is_empty(&self) -> bool {
        self.problems.is_empty()
    }
}

impl fmt::Display for ValidationReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for problem in &self.problems {
            writeln!(f, "{problem}")?;
        }
        write!(f, "{} problem(s)", self.problems.len())
    }
}

impl std::error::Error for ValidationReport {}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("field catalogue: {0}")]
    Catalogue(String),
    #[error("invalid input:\n{0}")]
    Invalid(ValidationReport),
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
}
