//! The payloads of every topic, field for field as in `schemas/avro/*.avsc` (a test encodes each
//! against its schema).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// `user.metadata.updated` and `profile.assembled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileUpdate {
    pub event_id: String,
    pub user_id: String,
    /// The profile JSON (schemas/profile.schema.json).
    pub profile: String,
    pub as_of: Option<String>,
}

/// `policy.rules.updated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RulesUpdate {
    pub event_id: String,
    pub rule_yaml: String,
    pub author: String,
    pub reason: Option<String>,
    pub as_of: Option<String>,
}

/// `scheme.deadline.approaching`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeadlineApproaching {
    pub event_id: String,
    pub scheme_id: String,
    pub deadline: String,
    pub as_of: Option<String>,
    /// The day's birthdays rather than a scheme: the users whose next age change has come.
    #[serde(default)]
    pub ages: bool,
}

/// `eligibility.computed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EligibilityComputed {
    pub idempotency_key: String,
    pub user_id: String,
    pub scheme_id: String,
    pub scheme_name: String,
    pub rule_id: String,
    pub rule_version: i32,
    pub verdict: String,
    pub match_score: i32,
    pub previous_verdict: Option<String>,
    pub benefit_estimate: Option<String>,
    pub evaluation_id: String,
    pub input_hash: String,
    pub as_of: String,
}

/// One scheme of a pass summary. A summary names every scheme its pass evaluated, hundreds
/// per update at stream speed, so the worker fills these with names it holds for the
/// process's life instead of allocating (and, on another thread, freeing) two strings each
/// (docs/fleet.md "Where the time goes"); a consumer that decodes one gets owned strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchemeResult {
    pub scheme_id: Cow<'static, str>,
    pub verdict: Cow<'static, str>,
    pub match_score: i32,
}

/// `eligibility.batch.computed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EligibilityBatchComputed {
    pub idempotency_key: String,
    pub user_id: String,
    pub input_hash: String,
    pub as_of: String,
    pub rules_evaluated: i32,
    pub total_eligible: i32,
    pub total_partial: i32,
    pub results: Vec<SchemeResult>,
}

/// `eligibility.new_match`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EligibilityNewMatch {
    pub idempotency_key: String,
    pub user_id: String,
    pub scheme_id: String,
    pub scheme_name: String,
    pub rule_id: String,
    pub rule_version: i32,
    pub match_score: i32,
    pub benefit: Option<String>,
    pub evaluation_id: String,
    pub input_hash: String,
    pub as_of: String,
}

/// `eligibility.lost`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EligibilityLost {
    pub idempotency_key: String,
    pub user_id: String,
    pub scheme_id: String,
    pub rule_id: String,
    pub rule_version: i32,
    pub reason: String,
    pub new_verdict: String,
    pub match_score: i32,
    pub input_hash: String,
    pub as_of: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapSummary {
    pub field: String,
    pub gap_kind: String,
    pub description: String,
    pub estimated_eligibility_date: Option<String>,
    /// `document`, `information`, `waiting` or `none` (engine `gaps::ClosableBy`); `none` in
    /// records written before the field existed.
    #[serde(default = "not_closable")]
    pub closable_by: String,
}

fn not_closable() -> String {
    "none".to_string()
}

/// `eligibility.partial_match`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EligibilityPartialMatch {
    pub idempotency_key: String,
    pub user_id: String,
    pub scheme_id: String,
    pub scheme_name: String,
    pub rule_id: String,
    pub rule_version: i32,
    pub match_score: i32,
    pub gaps: Vec<GapSummary>,
    pub evaluation_id: String,
    pub input_hash: String,
    pub as_of: String,
}

/// `rule.conflict.detected`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleConflictDetected {
    pub idempotency_key: String,
    pub rule_ids: Vec<String>,
    pub conflict_type: String,
    pub description: String,
    pub witness: Option<String>,
}

/// `rule.simulation.completed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleSimulationCompleted {
    pub idempotency_key: String,
    pub proposal_id: i64,
    pub rule_id: String,
    pub scheme_id: String,
    pub rule_version: i32,
    pub as_of: String,
    pub citizens: i64,
    pub gained: i64,
    pub lost: i64,
    pub monthly_outlay_change_inr: f64,
    pub conflicts_introduced: i32,
    /// The whole diff, JSON.
    pub diff: String,
}

/// `<topic>.dlq`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeadLetter {
    pub source_topic: String,
    pub source_partition: i32,
    pub source_offset: i64,
    pub reason_code: String,
    pub reason: String,
    #[serde(with = "optional_bytes")]
    pub original_key: Option<Vec<u8>>,
    #[serde(with = "optional_bytes")]
    pub original_value: Option<Vec<u8>>,
}

/// `eligibility.explained`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EligibilityExplained {
    pub idempotency_key: String,
    pub user_id: String,
    pub scheme_id: String,
    pub evaluation_id: String,
    pub language: String,
    pub explanation: String,
    pub generated_by: String,
    pub oracle_verdict: String,
    pub trust_score: f32,
    pub fallback_reason: Option<String>,
}

/// Avro `bytes` through serde: serialised as a byte string, not as an array of numbers.
mod optional_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(bytes) => s.serialize_some(&Bytes(bytes)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        Ok(Option::<ByteBuf>::deserialize(d)?.map(|b| b.0))
    }

    struct Bytes<'a>(&'a [u8]);

    impl serde::Serialize for Bytes<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }

    struct ByteBuf(Vec<u8>);

    impl<'de> Deserialize<'de> for ByteBuf {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Visitor;
            impl<'de> serde::de::Visitor<'de> for Visitor {
                type Value = ByteBuf;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("bytes")
                }
                fn visit_bytes<E>(self, v: &[u8]) -> Result<ByteBuf, E> {
                    Ok(ByteBuf(v.to_vec()))
                }
                fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<ByteBuf, E> {
                    Ok(ByteBuf(v))
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> Result<ByteBuf, A::Error> {
                    let mut out = Vec::new();
                    while let Some(b) = seq.next_element::<u8>()? {
                        out.push(b);
                    }
                    Ok(ByteBuf(out))
                }
            }
            d.deserialize_bytes(Visitor)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::avro::schema_for;
    use crate::topics::*;

    /// Each payload type fits its topic's schema, and reads back equal.
    fn round_trip<T: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
        topic: &str,
        item: T,
    ) {
        let schema = apache_avro::Schema::parse_str(schema_for(topic).unwrap()).unwrap();
        let value = apache_avro::to_value(&item).unwrap();
        let resolved = value
            .resolve(&schema)
            .unwrap_or_else(|e| panic!("{topic}: {e}"));
        let mut writer = apache_avro::Writer::new(&schema, Vec::new()).unwrap();
        writer.append_value(resolved).unwrap();
        let bytes = writer.into_inner().unwrap();
        let read = apache_avro::Reader::new(&bytes[..])
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        let back: T = apache_avro::from_value(&read).unwrap();
        assert_eq!(back, item, "{topic}");
    }

    #[test]
    fn every_payload_matches_its_schema() {
        round_trip(
            USER_METADATA_UPDATED,
            ProfileUpdate {
                event_id: "e1".into(),
                user_id: "u1".into(),
                profile: "{}".into(),
                as_of: Some("2025-01-15".into()),
            },
        );
        round_trip(
            POLICY_RULES_UPDATED,
            RulesUpdate {
                event_id: "e2".into(),
                rule_yaml: "rule_id: x".into(),
                author: "a".into(),
                reason: None,
                as_of: None,
            },
        );
        round_trip(
            RULE_SIMULATION_COMPLETED,
            RuleSimulationCompleted {
                idempotency_key: "proposal:1:h".into(),
                proposal_id: 1,
                rule_id: "rule_x_002".into(),
                scheme_id: "sch_x".into(),
                rule_version: 2,
                as_of: "2025-01-15".into(),
                citizens: 10,
                gained: 1,
                lost: 2,
                monthly_outlay_change_inr: -600.0,
                conflicts_introduced: 0,
                diff: "{}".into(),
            },
        );
        round_trip(
            SCHEME_DEADLINE_APPROACHING,
            DeadlineApproaching {
                event_id: "e3".into(),
                scheme_id: "s".into(),
                deadline: "2025-03-31".into(),
                as_of: None,
                ages: false,
            },
        );
        round_trip(
            ELIGIBILITY_BATCH_COMPUTED,
            EligibilityBatchComputed {
                idempotency_key: "k".into(),
                user_id: "u".into(),
                input_hash: "h".into(),
                as_of: "2025-01-15".into(),
                rules_evaluated: 2,
                total_eligible: 1,
                total_partial: 0,
                results: vec![SchemeResult {
                    scheme_id: "s".into(),
                    verdict: "ELIGIBLE".into(),
                    match_score: 100,
                }],
            },
        );
        round_trip(
            ELIGIBILITY_PARTIAL_MATCH,
            EligibilityPartialMatch {
                idempotency_key: "k".into(),
                user_id: "u".into(),
                scheme_id: "s".into(),
                scheme_name: "S".into(),
                rule_id: "r".into(),
                rule_version: 1,
                match_score: 66,
                gaps: vec![GapSummary {
                    field: "identity.age".into(),
                    gap_kind: "threshold".into(),
                    description: "d".into(),
                    estimated_eligibility_date: Some("2028-01-15".into()),
                    closable_by: "waiting".into(),
                }],
                evaluation_id: "id".into(),
                input_hash: "h".into(),
                as_of: "2025-01-15".into(),
            },
        );
        round_trip(
            "user.metadata.updated.dlq",
            DeadLetter {
                source_topic: "user.metadata.updated".into(),
                source_partition: 3,
                source_offset: 42,
                reason_code: "decode_failed".into(),
                reason: "r".into(),
                original_key: None,
                original_value: Some(vec![1, 2, 255]),
            },
        );
        round_trip(
            RULE_CONFLICT_DETECTED,
            RuleConflictDetected {
                idempotency_key: "k".into(),
                rule_ids: vec!["a".into(), "b".into()],
                conflict_type: "duplicate".into(),
                description: "d".into(),
                witness: None,
            },
        );
        round_trip(
            ELIGIBILITY_EXPLAINED,
            EligibilityExplained {
                idempotency_key: "k".into(),
                user_id: "u".into(),
                scheme_id: "s".into(),
                evaluation_id: "e".into(),
                language: "en".into(),
                explanation: "x".into(),
                generated_by: "template".into(),
                oracle_verdict: "PASS".into(),
                trust_score: 1.0,
                fallback_reason: Some("no_llm".into()),
            },
        );
    }
}
