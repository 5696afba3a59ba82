-- Who asked for a re-evaluation through the API (docs/api.md, "Audit"): one row per
-- `POST /api/v1/eligibility/{user_id}/evaluate`, written before the request is published, so
-- the pass that follows (same user, the event id in the record) is traceable to its requester.
CREATE TABLE evaluation_requests (
    event_id      TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL,
    requested_by  TEXT NOT NULL,
    role          TEXT NOT NULL,
    requested_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX idx_evaluation_requests_user ON evaluation_requests (user_id, requested_at DESC);
