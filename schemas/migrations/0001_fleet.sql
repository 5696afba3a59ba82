-- The evaluator fleet's store (docs/design.md, "Stores"). Applied by `eligibility migrate` and by every
-- worker on start, under an advisory lock; each file runs once, recorded in schema_migrations.

-- Rule versions (docs/design.md, "Stores"). rule_yaml is the document as authored; rule_definition its JSON form,
-- whose JCS SHA-256 is rule_hash.
CREATE TABLE eligibility_rules (
    rule_id          TEXT PRIMARY KEY,
    scheme_id        TEXT NOT NULL,
    state            TEXT NOT NULL,
    department       TEXT,
    rule_version     INTEGER NOT NULL,
    rule_definition  JSONB NOT NULL,
    rule_yaml        TEXT NOT NULL,
    rule_hash        CHAR(64) NOT NULL,
    effective_from   DATE NOT NULL,
    effective_until  DATE,
    is_active        BOOLEAN NOT NULL DEFAULT true,
    created_by       TEXT NOT NULL,
    change_reason    TEXT,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    supersedes       TEXT,
    UNIQUE (scheme_id, rule_version)
);

-- Bumped by every change to eligibility_rules, so workers notice and reload.
CREATE TABLE rules_revision (
    id        BOOLEAN PRIMARY KEY DEFAULT true CHECK (id),
    revision  BIGINT NOT NULL
);
INSERT INTO rules_revision VALUES (true, 0);

-- Every evaluation, changed or not (docs/semantics.md, "Transitions and idempotency"). The key is derived from the rule hash, the input
-- hash and as_of, so a replayed batch inserts nothing new. Partitioned by month of as_of (the
-- evaluation date, an input): created_at, the wall clock, would give a replay a different key.
CREATE TABLE evaluation_audit_log (
    evaluation_id      UUID NOT NULL,
    as_of              DATE NOT NULL,
    user_id            TEXT NOT NULL,
    scheme_id          TEXT NOT NULL,
    rule_id            TEXT NOT NULL,
    rule_version       INTEGER NOT NULL,
    rule_hash          CHAR(64) NOT NULL,
    input_hash         CHAR(64) NOT NULL,
    verdict            TEXT NOT NULL,
    match_score        SMALLINT NOT NULL,
    conditions_result  JSONB NOT NULL,
    evaluation_us      INTEGER NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (evaluation_id, as_of)
) PARTITION BY RANGE (as_of);
CREATE INDEX idx_eval_user ON evaluation_audit_log (user_id, as_of DESC);
CREATE INDEX idx_eval_scheme ON evaluation_audit_log (scheme_id, verdict);

-- Creates the month partition holding `day`; safe when two workers race to create it.
CREATE FUNCTION ensure_audit_partition(day DATE) RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    first_day DATE := date_trunc('month', day)::date;
    name TEXT := format('evaluation_audit_log_%s', to_char(first_day, 'YYYY_MM'));
BEGIN
    IF to_regclass(name) IS NULL THEN
        EXECUTE format('CREATE TABLE %I PARTITION OF evaluation_audit_log FOR VALUES FROM (%L) TO (%L)',
                       name, first_day, (first_day + INTERVAL '1 month')::date);
    END IF;
EXCEPTION WHEN duplicate_table OR unique_violation THEN
    NULL;
END $$;

-- Content-addressed profiles: any audit row's input can be re-derived from its input_hash.
CREATE TABLE profile_snapshots (
    input_hash  CHAR(64) PRIMARY KEY,
    profile     JSONB NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The last profile each user was evaluated with, and where it came from (replays of older
-- records must not move a user back in time).
CREATE TABLE profile_current (
    user_id           TEXT PRIMARY KEY,
    input_hash        CHAR(64) NOT NULL REFERENCES profile_snapshots (input_hash),
    state             TEXT,
    as_of             DATE NOT NULL,
    source_topic      TEXT NOT NULL,
    source_partition  INTEGER NOT NULL,
    source_offset     BIGINT NOT NULL,
    updated_at        TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX idx_profile_current_state ON profile_current (state);

-- The last known outcome of each (user, scheme): what transitions are computed against.
CREATE TABLE current_verdicts (
    user_id        TEXT NOT NULL,
    scheme_id      TEXT NOT NULL,
    rule_id        TEXT NOT NULL,
    rule_version   INTEGER NOT NULL,
    verdict        TEXT NOT NULL,
    match_score    SMALLINT NOT NULL,
    gaps           JSONB NOT NULL,
    evaluation_id  UUID NOT NULL,
    as_of          DATE NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, scheme_id)
);
CREATE INDEX idx_current_verdicts_scheme ON current_verdicts (scheme_id);

-- The next offset to process per (group, topic, partition), committed with the batch's effects.
CREATE TABLE consumer_offsets (
    consumer_group  TEXT NOT NULL,
    topic           TEXT NOT NULL,
    partition       INTEGER NOT NULL,
    next_offset     BIGINT NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, topic, partition)
);

-- Explanations (the explainer pool).
CREATE TABLE explanations (
    evaluation_id   UUID NOT NULL,
    language        TEXT NOT NULL,
    user_id         TEXT NOT NULL,
    scheme_id       TEXT NOT NULL,
    explanation     TEXT NOT NULL,
    generated_by    TEXT NOT NULL,
    oracle_verdict  TEXT NOT NULL,
    trust_score     REAL NOT NULL,
    fallback_reason TEXT,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (evaluation_id, language)
);

-- The local schema registry (`eligibility schema-registry`, a development default only).
CREATE TABLE registry_schemas (
    id           SERIAL PRIMARY KEY,
    schema_text  TEXT NOT NULL UNIQUE,
    schema_type  TEXT NOT NULL DEFAULT 'AVRO'
);
CREATE TABLE registry_subject_versions (
    subject    TEXT NOT NULL,
    version    INTEGER NOT NULL,
    schema_id  INTEGER NOT NULL REFERENCES registry_schemas (id),
    PRIMARY KEY (subject, version),
    UNIQUE (subject, schema_id)
);
