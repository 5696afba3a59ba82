//! Topic names and the partition map (`schemas/partition_map.json`): which states each partition
//! of the state-keyed topics carries, where a user's records belong, and which partitions a
//! rule change concerns.

use std::collections::BTreeMap;

use serde::Deserialize;

pub const USER_METADATA_UPDATED: &str = "user.metadata.updated";
pub const PROFILE_ASSEMBLED: &str = "profile.assembled";
pub const POLICY_RULES_UPDATED: &str = "policy.rules.updated";
pub const SCHEME_DEADLINE_APPROACHING: &str = "scheme.deadline.approaching";
pub const ELIGIBILITY_COMPUTED: &str = "eligibility.computed";
pub const ELIGIBILITY_BATCH_COMPUTED: &str = "eligibility.batch.computed";
pub const ELIGIBILITY_NEW_MATCH: &str = "eligibility.new_match";
pub const ELIGIBILITY_LOST: &str = "eligibility.lost";
pub const ELIGIBILITY_PARTIAL_MATCH: &str = "eligibility.partial_match";
pub const ELIGIBILITY_EXPLAINED: &str = "eligibility.explained";
pub const RULE_CONFLICT_DETECTED: &str = "rule.conflict.detected";
pub const RULE_SIMULATION_COMPLETED: &str = "rule.simulation.completed";

/// The evaluator's inputs, in the order of docs/configuration.md.
pub const EVALUATOR_INPUTS: [&str; 4] = [
    USER_METADATA_UPDATED,
    POLICY_RULES_UPDATED,
    PROFILE_ASSEMBLED,
    SCHEME_DEADLINE_APPROACHING,
];

/// The explainer's inputs.
pub const EXPLAINER_INPUTS: [&str; 2] = [ELIGIBILITY_NEW_MATCH, ELIGIBILITY_PARTIAL_MATCH];

pub fn dead_letter_topic(source: &str) -> String {
    format!("{source}{}", partition_map().dead_letter.suffix)
}

#[derive(Debug, Deserialize)]
pub struct PartitionMap {
    pub version: u32,
    pub partitions: Vec<PartitionEntry>,
    pub topics: BTreeMap<String, TopicEntry>,
    pub dead_letter: DeadLetterEntry,
}

#[derive(Debug, Deserialize)]
pub struct PartitionEntry {
    pub partition: i32,
    pub name: String,
    pub states: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct TopicEntry {
    pub partitions: i32,
    pub keyed_by: String,
}

#[derive(Debug, Deserialize)]
pub struct DeadLetterEntry {
    pub suffix: String,
    pub partitions: i32,
}

const PARTITION_MAP: &str = include_str!("../../../schemas/partition_map.json");

pub fn partition_map() -> &'static PartitionMap {
    static MAP: std::sync::OnceLock<PartitionMap> = std::sync::OnceLock::new();
    MAP.get_or_init(|| {
        serde_json::from_str(PARTITION_MAP).expect("schemas/partition_map.json is valid")
    })
}

impl PartitionMap {
    /// Every topic the fleet reads or writes with its partition count, dead-letter topics
    /// included.
    pub fn all_topics(&self) -> Vec<(String, i32)> {
        let mut topics: Vec<(String, i32)> = self
            .topics
            .iter()
            .map(|(name, t)| (name.clone(), t.partitions))
            .collect();
        for input in EVALUATOR_INPUTS.iter().chain(&EXPLAINER_INPUTS) {
            topics.push((dead_letter_topic(input), self.dead_letter.partitions));
        }
        topics
    }

    /// The partitions of a state-keyed topic that carry `state` (the unassigned partition for
    /// a profile without a known state).
    pub fn partitions_of(&self, state: Option<&str>) -> Vec<i32> {
        let found: Vec<i32> = self
            .partitions
            .iter()
            .filter(|p| state.is_some_and(|s| p.states.iter().any(|x| x == s)))
            .map(|p| p.partition)
            .collect();
        if found.is_empty() {
            self.partitions
                .iter()
                .filter(|p| p.states.is_empty())
                .map(|p| p.partition)
                .collect()
        } else {
            found
        }
    }

    /// Where a producer sends a user's profile record: one of the state's partitions, by a
    /// stable hash (FNV-1a) of the user id, so a user always lands on the same partition.
    pub fn partition_for(&self, state: Option<&str>, user_id: &str) -> i32 {
        let candidates = self.partitions_of(state);
        let hash = user_id.bytes().fold(0xcbf29ce484222325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
        });
        candidates[(hash % candidates.len() as u64) as usize]
    }

    /// The partitions whose users a scheme of `state` covers: the state's, or every partition
    /// for a central scheme (whose users are everywhere, the unassigned partition included).
    pub fn partitions_of_scheme(&self, state: &str) -> Vec<i32> {
        if state == "central" {
            self.partitions.iter().map(|p| p.partition).collect()
        } else {
            self.partitions_of(Some(state))
        }
    }

    /// The partition's name in the map (a state, or a group of small states): the `state`
    /// label of the lag gauge.
    pub fn name_of(&self, partition: i32) -> &str {
        self.partitions
            .iter()
            .find(|p| p.partition == partition)
            .map_or("unmapped", |p| p.name.as_str())
    }

    /// The states whose users a set of owned profile partitions carries.
    pub fn states_of(&self, partitions: &[i32]) -> Vec<&str> {
        let mut states: Vec<&str> = self
            .partitions
            .iter()
            .filter(|p| partitions.contains(&p.partition))
            .flat_map(|p| p.states.iter().map(String::as_str))
            .collect();
        states.sort_unstable();
        states.dedup();
        states
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalogue_state_has_a_partition_and_partitions_are_dense() {
        let map = partition_map();
        let catalogue = engine::Catalogue::bundled();
        let state = catalogue.id("demographics.state").unwrap();
        for value in catalogue.field(state).values.as_ref().unwrap() {
            let partitions = map.partitions_of(Some(value));
            assert!(
                partitions.iter().all(|&p| map.name_of(p) != "unassigned"),
                "{value} has no partition of its own"
            );
        }
        let numbers: Vec<i32> = map.partitions.iter().map(|p| p.partition).collect();
        assert_eq!(numbers, (0..numbers.len() as i32).collect::<Vec<_>>());
        assert_eq!(
            map.topics[USER_METADATA_UPDATED].partitions as usize,
            numbers.len()
        );
    }

    #[test]
    fn a_user_always_lands_on_one_of_its_states_partitions() {
        let map = partition_map();
        let p = map.partition_for(Some("uttar_pradesh"), "user-42");
        assert!([0, 1].contains(&p));
        assert_eq!(p, map.partition_for(Some("uttar_pradesh"), "user-42"));
        assert_eq!(map.partition_for(None, "user-42"), 15);
        assert_eq!(map.partition_for(Some("atlantis"), "user-42"), 15);
        assert_eq!(map.states_of(&[6]), vec!["puducherry", "tamil_nadu"]);
        assert_eq!(map.name_of(13), "north");
        assert_eq!(map.partitions_of_scheme("uttar_pradesh"), vec![0, 1]);
        assert_eq!(map.partitions_of_scheme("central").len(), 16);
    }

    #[test]
    fn the_rule_topics_have_the_profile_topics_partitions() {
        // One worker owns a state's users and its rule changes only if both topics have the
        // same partitions (the range assignor gives the same numbers of each to one member).
        let map = partition_map();
        for topic in [
            POLICY_RULES_UPDATED,
            SCHEME_DEADLINE_APPROACHING,
            PROFILE_ASSEMBLED,
        ] {
            assert_eq!(
                map.topics[topic].partitions, map.topics[USER_METADATA_UPDATED].partitions,
                "{topic}"
            );
        }
    }

    #[test]
    fn every_input_has_a_dead_letter_topic() {
        let topics = partition_map().all_topics();
        for input in EVALUATOR_INPUTS.iter().chain(&EXPLAINER_INPUTS) {
            assert!(topics.iter().any(|(t, _)| *t == dead_letter_topic(input)));
        }
    }
}
