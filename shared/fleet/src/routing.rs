//! Records on a partition other than their own, and what a worker does with them.
//!
//! The state-keyed topics give each partition to one worker of the group, which alone evaluates
//! and writes that partition's users (docs/fleet.md "Ownership"). Two kinds of record arrive
//! elsewhere:
//!
//! - a profile update that a producer without the partition map put on another partition (a
//!   stock client hashing the user id): the worker that reads it **forwards** it, key, bytes and
//!   timestamp unchanged, to the owning partition, in the same step that commits its own offset;
//! - a rule or deadline record, which concerns every user of a state (of all states, for a
//!   central scheme): the worker that reads it validates it once and **fans it out**, one copy
//!   to each partition that carries those users, and each owner re-evaluates its own users, in
//!   order with their profile updates.
//!
//! A copy carries [`ROUTED_FROM`], naming the original record, so it is never routed again.

use crate::input::Record;
use crate::kafka::Outgoing;

/// The header of a forwarded or fanned-out copy: the original record's `topic[partition]@offset`.
pub const ROUTED_FROM: &str = "eligibility_routed_from";

/// Whether `record` is a copy this fleet routed (rather than a producer's original).
pub fn is_copy(record: &Record) -> bool {
    record.header(ROUTED_FROM).is_some()
}

/// A copy of `record` for `partition` of the same topic.
pub fn copy_to(record: &Record, partition: i32) -> Outgoing {
    Outgoing {
        topic: record.topic.clone(),
        key: record.key.clone().unwrap_or_default(),
        partition: Some(partition),
        timestamp_ms: record.timestamp_ms,
        payload: record.payload.clone().unwrap_or_default(),
        headers: vec![(ROUTED_FROM, record.source())],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_keeps_key_bytes_and_timestamp_and_names_its_original() {
        let original = Record {
            topic: "user.metadata.updated".into(),
            partition: 3,
            offset: 41,
            key: Some(b"u-1".to_vec()),
            payload: Some(vec![0, 0, 0, 0, 1, 2]),
            timestamp_ms: Some(1_736_899_200_000),
            headers: vec![],
        };
        assert!(!is_copy(&original));
        let copy = copy_to(&original, 9);
        assert_eq!(copy.topic, original.topic);
        assert_eq!(copy.partition, Some(9));
        assert_eq!(Some(copy.key), original.key);
        assert_eq!(Some(copy.payload), original.payload);
        assert_eq!(copy.timestamp_ms, original.timestamp_ms);
        let arrived = Record {
            partition: 9,
            offset: 0,
            headers: vec![(ROUTED_FROM.into(), "user.metadata.updated[3]@41".into())],
            ..original
        };
        assert!(is_copy(&arrived));
    }
}
