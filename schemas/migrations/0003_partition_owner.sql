-- Which partition of the state-keyed topics owns each user (the partition map: one of the
-- state's partitions by a hash of the user id). The worker assigned that partition is the only
-- one that writes the user, and a rule change fanned out to a partition re-evaluates exactly its
-- users (docs/fleet.md "Ownership"). Rows stored before this column are filled in by the
-- evaluator when it starts (the hash is computed in Rust).
ALTER TABLE profile_current ADD COLUMN owner_partition INTEGER;
CREATE INDEX idx_profile_current_owner ON profile_current (owner_partition, user_id);
