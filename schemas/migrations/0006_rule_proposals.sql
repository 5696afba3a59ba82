-- Rule versions under review (docs/releases.md, "Review"): a proposal is validated and stored
-- here and changes no verdict; a second person approves or rejects it; only an approved
-- proposal's exact document (same rule hash) is taken live from `policy.rules.updated` when the
-- deployment requires review. Rejected and superseded proposals stay on record.
CREATE TABLE rule_proposals (
    proposal_id      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    rule_id          TEXT NOT NULL,
    scheme_id        TEXT NOT NULL,
    rule_version     INTEGER NOT NULL,
    rule_hash        CHAR(64) NOT NULL,
    rule_yaml        TEXT NOT NULL,
    author           TEXT NOT NULL,
    reason           TEXT,
    status           TEXT NOT NULL DEFAULT 'proposed'
                     CHECK (status IN ('proposed', 'approved', 'rejected', 'superseded')),
    -- The population diff (docs/releases.md, "Population diff"), attached before a decision.
    simulation       JSONB,
    decided_by       TEXT,
    decision_reason  TEXT,
    proposed_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    decided_at       TIMESTAMPTZ,
    CHECK (decided_by IS NULL OR decided_by <> author)
);
CREATE INDEX idx_rule_proposals_scheme ON rule_proposals (scheme_id, status);
-- One open proposal per exact document: the same record read twice is one proposal.
CREATE UNIQUE INDEX idx_rule_proposals_open ON rule_proposals (rule_hash) WHERE status = 'proposed';
