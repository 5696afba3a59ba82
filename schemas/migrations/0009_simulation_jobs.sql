-- Population diffs the API runs as jobs, off the request path (docs/api.md, "Simulations as
-- jobs"): a rule simulation or a proposal's diff is queued here by the request, run by one of
-- the API's replicas (one job at a time each), and fetched later by its id. One open job per
-- caller: a second request while the first is queued or running is refused.
CREATE TABLE simulation_jobs (
    job_id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    requested_by  TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('simulate', 'proposal')),
    request       JSONB NOT NULL,
    status        TEXT NOT NULL DEFAULT 'queued'
                  CHECK (status IN ('queued', 'running', 'done', 'failed')),
    result        JSONB,
    error         TEXT,
    queued_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    started_at    TIMESTAMPTZ,
    finished_at   TIMESTAMPTZ
);
CREATE UNIQUE INDEX idx_simulation_jobs_open ON simulation_jobs (requested_by)
    WHERE status IN ('queued', 'running');
CREATE INDEX idx_simulation_jobs_queued ON simulation_jobs (job_id) WHERE status = 'queued';
