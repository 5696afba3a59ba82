//! The compact trace an audit row keeps: each leaf's result and the matched count. With the rule
//! version (by `rule_hash`) and the profile snapshot (by `input_snapshot_hash`), which the store
//! keeps, the full trace of [`crate::evaluate`] is re-derived exactly; storing only this keeps the
//! audit log small enough to write for every evaluation.

use serde::Serialize;

use crate::eval::{NodeTruths, leaf_truth};
use crate::outcome::Truth;
use crate::profile::Profile;
use crate::rule::Rule;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditTrace {
    /// One character per eligibility leaf in document order: `1` passes, `0` fails, `?` the
    /// field is unknown.
    pub leaves: String,
    /// The same for the exclusions, in order.
    pub exclusions: String,
    pub matched_conditions: usize,
    pub total_conditions: usize,
}

impl AuditTrace {
    pub fn of(rule: &Rule, profile: &Profile) -> AuditTrace {
        let mut leaves = String::with_capacity(8);
        let (truths, _) = NodeTruths::record(&rule.eligibility, profile, &mut |_, truth| {
            leaves.push(mark(truth))
        });
        let exclusions = rule
            .exclusions
            .iter()
            .map(|l| mark(leaf_truth(l, profile.get(l.field))))
            .collect();
        AuditTrace {
            leaves,
            exclusions,
            matched_conditions: truths.matched(&rule.eligibility),
            total_conditions: rule.root_children().len(),
        }
    }
}

fn mark(truth: Truth) -> char {
    match truth {
        Truth::True => '1',
        Truth::False => '0',
        Truth::Unknown => '?',
    }
}
