//! The published rule ids and the invariants they enforce (docs/oracle.md). Ids are immutable:
//! a change of meaning gets a new id.

use std::fmt;

use serde::Serialize;

/// Q-INV-01 (NO-BULLSHIT).
pub const Q_INV_01: &str = "Q-INV-01";
/// Q-INV-03 (CONTRADICTION ZERO-TOLERANCE).
pub const Q_INV_03: &str = "Q-INV-03";

/// A published rule id. Ids are immutable: a change of meaning gets a new id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum RuleId {
    #[serde(rename = "RULE-PREC-001")]
    Prec001,
    #[serde(rename = "RULE-PREC-002")]
    Prec002,
    #[serde(rename = "RULE-PREC-003")]
    Prec003,
    #[serde(rename = "RULE-PREC-004")]
    Prec004,
    #[serde(rename = "RULE-PREC-005")]
    Prec005,
    #[serde(rename = "RULE-CONT-001")]
    Cont001,
    #[serde(rename = "RULE-CONT-002")]
    Cont002,
    #[serde(rename = "RULE-CONT-003")]
    Cont003,
}

impl RuleId {
    /// Every rule, in rule-index order.
    pub const ALL: [RuleId; 8] = [
        RuleId::Prec001,
        RuleId::Prec002,
        RuleId::Prec003,
        RuleId::Prec004,
        RuleId::Prec005,
        RuleId::Cont001,
        RuleId::Cont002,
        RuleId::Cont003,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RuleId::Prec001 => "RULE-PREC-001",
            RuleId::Prec002 => "RULE-PREC-002",
            RuleId::Prec003 => "RULE-PREC-003",
            RuleId::Prec004 => "RULE-PREC-004",
            RuleId::Prec005 => "RULE-PREC-005",
            RuleId::Cont001 => "RULE-CONT-001",
            RuleId::Cont002 => "RULE-CONT-002",
            RuleId::Cont003 => "RULE-CONT-003",
        }
    }

    /// The invariant the rule enforces.
    pub fn invariant(self) -> &'static str {
        match self {
            RuleId::Prec001
            | RuleId::Prec002
            | RuleId::Prec003
            | RuleId::Prec004
            | RuleId::Prec005 => Q_INV_01,
            RuleId::Cont001 | RuleId::Cont002 | RuleId::Cont003 => Q_INV_03,
        }
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
