//! The audit record of one pass (docs/fleet.md "The audit log"): the pass's inputs and every
//! evaluation it made, packed as 5 bytes each (the rule's `rule_key`, big-endian, and the
//! outcome code). Stored in `evaluation_passes`; the view `evaluation_audit_log` unpacks it into
//! one row per evaluation, and `eligibility audit verify` re-derives each full trace.

use engine::{Date, Outcome};
use sha2::{Digest, Sha256};

/// Bytes per packed evaluation.
pub const PACKED_LEN: usize = 5;

#[derive(Debug, Clone, PartialEq)]
pub struct PassAudit {
    pub user_id: String,
    pub as_of: Date,
    pub input_hash: String,
    /// The `rules_revision` the worker's rules were loaded at (informational: rules are named
    /// by key, which never changes meaning).
    pub rules_revision: i64,
    pub outcomes: Vec<u8>,
    pub evaluation_us: i32,
}

impl PassAudit {
    pub fn new(user_id: &str, as_of: Date, input_hash: &str, rules_revision: i64) -> PassAudit {
        PassAudit {
            user_id: user_id.to_string(),
            as_of,
            input_hash: input_hash.to_string(),
            rules_revision,
            outcomes: Vec::new(),
            evaluation_us: 0,
        }
    }

    pub fn push(&mut self, rule_key: i32, outcome: Outcome) {
        self.outcomes.extend_from_slice(&rule_key.to_be_bytes());
        self.outcomes.push(outcome.code());
    }

    pub fn len(&self) -> usize {
        self.outcomes.len() / PACKED_LEN
    }

    pub fn is_empty(&self) -> bool {
        self.outcomes.is_empty()
    }

    /// Each evaluation: (rule_key, outcome).
    pub fn evaluations(&self) -> impl Iterator<Item = (i32, Outcome)> + '_ {
        unpack(&self.outcomes)
    }

    /// The row's key (a UUID's 16 bytes): a digest of everything that determines the pass
    /// (user, date, input, outcomes), so the same pass written twice (a replay, a re-run rule
    /// change) is one row.
    pub fn pass_id(&self) -> [u8; 16] {
        let digest = Sha256::new()
            .chain_update(self.user_id.as_bytes())
            .chain_update(b"\0")
            .chain_update(self.as_of.to_string().as_bytes())
            .chain_update(b"\0")
            .chain_update(self.input_hash.as_bytes())
            .chain_update(b"\0")
            .chain_update(&self.outcomes)
            .finalize();
        let mut id = [0; 16];
        id.copy_from_slice(&digest[..16]);
        id
    }
}

/// The evaluations packed in `bytes`; a trailing partial entry (a damaged row) is ignored here
/// and refused by the table's CHECK.
pub fn unpack(bytes: &[u8]) -> impl Iterator<Item = (i32, Outcome)> + '_ {
    bytes.chunks_exact(PACKED_LEN).map(|chunk| {
        let key = i32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        (key, Outcome::from_code(chunk[4]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Verdict;

    #[test]
    fn outcomes_round_trip_through_the_packed_form() {
        let mut pass = PassAudit::new("u1", Date::parse("2025-01-15").unwrap(), "ab", 3);
        let partial = Outcome {
            verdict: Verdict::PartialMatch,
            score: 75,
        };
        let eligible = Outcome {
            verdict: Verdict::Eligible,
            score: 100,
        };
        pass.push(7, partial);
        pass.push(70_000, eligible);
        assert_eq!(pass.len(), 2);
        assert_eq!(
            pass.evaluations().collect::<Vec<_>>(),
            vec![(7, partial), (70_000, eligible)]
        );
        assert_eq!(&pass.outcomes[..5], &[0, 0, 0, 7, partial.code()]);
    }

    #[test]
    fn the_pass_id_is_stable_and_depends_on_the_outcomes() {
        let as_of = Date::parse("2025-01-15").unwrap();
        let mut a = PassAudit::new("u1", as_of, "ab", 3);
        a.push(1, Outcome::NOT_APPLICABLE);
        let mut b = a.clone();
        b.rules_revision = 4;
        b.evaluation_us = 99;
        assert_eq!(
            a.pass_id(),
            b.pass_id(),
            "timing and revision are not inputs"
        );
        b.push(2, Outcome::NOT_APPLICABLE);
        assert_ne!(a.pass_id(), b.pass_id());
        assert_eq!(a.pass_id(), a.clone().pass_id());
    }
}
