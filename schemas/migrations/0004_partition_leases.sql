-- Who holds each partition of a consumer group, fenced by an epoch (docs/fleet.md
-- "Ownership"). A worker that is assigned a partition takes its lease (the epoch goes up)
-- before it reads the partition's offsets; every batch it commits first checks, under a share
-- lock, that its epoch is still the current one. A worker that lost the partition mid-batch
-- (a stall past the session timeout, a rebalance) therefore cannot commit after the new owner
-- has started, and the new owner's take waits for a commit already in flight.
CREATE TABLE partition_leases (
    consumer_group  TEXT NOT NULL,
    partition       INTEGER NOT NULL,
    epoch           BIGINT NOT NULL,
    holder          TEXT NOT NULL,
    taken_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, partition)
);
