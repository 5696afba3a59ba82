-- The compact store: the audit log and the current verdicts, one row per user and pass.
-- The audit log (docs/fleet.md "The audit log"): every evaluation stays on record, but as
-- one row per pass over a user instead of one row per (user, scheme): the pass's inputs (user,
-- as_of, input hash) and, packed, each evaluated rule's key and outcome code. Full traces are not
-- stored: the engine is deterministic, so `eligibility audit verify` re-derives them from the
-- profile snapshot and the rule version. The view `evaluation_audit_log` shows the familiar
-- per-evaluation rows for auditors' queries.

-- Readers of the packed columns: a big-endian int4 at a byte offset, and the verdict and score of
-- an engine outcome code (`Outcome::code`: NOT_ELIGIBLE 0..=100 is the score, PARTIAL_MATCH
-- 101..=151 is score 50..=100, ELIGIBLE 152, NOT_APPLICABLE 255).
CREATE FUNCTION int4_at(bytes BYTEA, at INTEGER) RETURNS INTEGER IMMUTABLE LANGUAGE sql AS $$
    SELECT (get_byte(bytes, at) << 24) | (get_byte(bytes, at + 1) << 16)
           | (get_byte(bytes, at + 2) << 8) | get_byte(bytes, at + 3)
$$;
CREATE FUNCTION outcome_verdict(code INTEGER) RETURNS TEXT IMMUTABLE LANGUAGE sql AS $$
    SELECT CASE WHEN code <= 100 THEN 'NOT_ELIGIBLE'
                WHEN code <= 151 THEN 'PARTIAL_MATCH'
                WHEN code = 152 THEN 'ELIGIBLE'
                ELSE 'NOT_APPLICABLE' END
$$;
CREATE FUNCTION outcome_score(code INTEGER) RETURNS SMALLINT IMMUTABLE LANGUAGE sql AS $$
    SELECT (CASE WHEN code <= 100 THEN code
                 WHEN code <= 151 THEN code - 51
                 WHEN code = 152 THEN 100
                 ELSE 0 END)::smallint
$$;

-- A small integer per rule version, so a packed outcome names its rule in 4 bytes.
ALTER TABLE eligibility_rules ADD COLUMN rule_key INTEGER GENERATED ALWAYS AS IDENTITY UNIQUE;

-- One row per pass. `outcomes` holds 5 bytes per evaluation, in evaluation order: the rule's
-- `rule_key` (big-endian int4) and its outcome code (engine `Outcome::code`: NOT_ELIGIBLE
-- 0..=100 is the score, PARTIAL_MATCH 101..=151 is score 50..=100, ELIGIBLE 152).
-- `pass_id` is derived from everything else in the row, so writing a replayed pass again inserts
-- nothing. Partitioned by month of as_of (an input, unlike the wall clock), so retention drops
-- whole partitions.
CREATE TABLE evaluation_passes (
    user_id         TEXT NOT NULL,
    as_of           DATE NOT NULL,
    pass_id         UUID NOT NULL,
    input_hash      CHAR(64) NOT NULL,
    rules_revision  BIGINT NOT NULL,
    outcomes        BYTEA NOT NULL CHECK (length(outcomes) % 5 = 0),
    evaluation_us   INTEGER NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, as_of, pass_id)
) PARTITION BY RANGE (as_of);

-- Creates the month partition of `parent` holding `day`; safe when two workers race to create it.
CREATE FUNCTION ensure_month_partition(parent TEXT, day DATE) RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    first_day DATE := date_trunc('month', day)::date;
    name TEXT := format('%s_%s', parent, to_char(first_day, 'YYYY_MM'));
BEGIN
    IF to_regclass(name) IS NULL THEN
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                       name, parent, first_day, (first_day + INTERVAL '1 month')::date);
    END IF;
EXCEPTION WHEN duplicate_table OR unique_violation THEN
    NULL;
END $$;

-- Rows written one per evaluation before this migration stay readable through the view.
ALTER TABLE evaluation_audit_log RENAME TO evaluation_audit_rows;
DROP FUNCTION ensure_audit_partition(DATE);

-- The per-evaluation rows of the original design, unpacked. evaluation_id is the engine's:
-- the first 16 bytes of SHA-256("rule_hash:input_hash:as_of"). conditions_result is null for
-- packed rows: `eligibility audit verify` re-derives the trace.
CREATE VIEW evaluation_audit_log AS
SELECT encode(substring(sha256(convert_to(r.rule_hash || ':' || p.input_hash || ':'
                                          || to_char(p.as_of, 'YYYY-MM-DD'), 'UTF8'))
                        FROM 1 FOR 16), 'hex')::uuid AS evaluation_id,
       p.as_of,
       p.user_id,
       r.scheme_id,
       r.rule_id,
       r.rule_version,
       r.rule_hash,
       p.input_hash,
       outcome_verdict(o.code) AS verdict,
       outcome_score(o.code) AS match_score,
       NULL::jsonb AS conditions_result,
       p.evaluation_us,
       p.created_at,
       p.pass_id
FROM evaluation_passes p
CROSS JOIN LATERAL (
    SELECT int4_at(p.outcomes, i) AS rule_key, get_byte(p.outcomes, i + 4) AS code
    FROM generate_series(0, length(p.outcomes) - 5, 5) AS i
) o
JOIN eligibility_rules r ON r.rule_key = o.rule_key
UNION ALL
SELECT evaluation_id, as_of, user_id, scheme_id, rule_id, rule_version, rule_hash, input_hash,
       verdict, match_score, conditions_result, evaluation_us, created_at, NULL::uuid
FROM evaluation_audit_rows;

-- The last known outcome of each (user, scheme), one row per user (docs/fleet.md "Current
-- verdicts"): a pass reads and writes one row whatever the number of schemes. 17 bytes per
-- scheme: the rule version's `rule_key` (int4), the outcome code (1 byte), the fingerprint of the
-- gaps (int8, engine `gaps::fingerprint`: tells whether the gaps changed without storing their
-- texts, which are re-derived from the snapshot) and the evaluation date (int4, days since
-- 1970-01-01), all big-endian.
CREATE TABLE user_verdicts (
    user_id     TEXT PRIMARY KEY,
    verdicts    BYTEA NOT NULL CHECK (length(verdicts) % 17 = 0),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Existing rows carry over with fingerprint 0, so each one's first re-evaluation writes it again.
INSERT INTO user_verdicts (user_id, verdicts)
SELECT c.user_id,
       string_agg(int4send(r.rule_key) || decode(lpad(to_hex(k.code), 2, '0'), 'hex')
                  || int8send(0) || int4send(c.as_of - DATE '1970-01-01'), ''::bytea
                  ORDER BY r.rule_key)
FROM current_verdicts c
JOIN eligibility_rules r ON r.rule_id = c.rule_id
CROSS JOIN LATERAL (
    SELECT CASE c.verdict WHEN 'ELIGIBLE' THEN 152
                          WHEN 'PARTIAL_MATCH' THEN 101 + c.match_score - 50
                          ELSE c.match_score END AS code
) k
GROUP BY c.user_id;
DROP TABLE current_verdicts;

-- One row per (user, scheme), unpacked, for queries and reports.
CREATE VIEW current_verdicts AS
SELECT u.user_id,
       r.scheme_id,
       r.rule_id,
       r.rule_version,
       outcome_verdict(v.code) AS verdict,
       outcome_score(v.code) AS match_score,
       v.gaps_fingerprint,
       DATE '1970-01-01' + v.as_of_day AS as_of,
       u.updated_at
FROM user_verdicts u
CROSS JOIN LATERAL (
    SELECT int4_at(u.verdicts, i) AS rule_key,
           get_byte(u.verdicts, i + 4) AS code,
           encode(substring(u.verdicts FROM i + 6 FOR 8), 'hex') AS gaps_fingerprint,
           int4_at(u.verdicts, i + 13) AS as_of_day
    FROM generate_series(0, length(u.verdicts) - 17, 17) AS i
) v
JOIN eligibility_rules r ON r.rule_key = v.rule_key;
