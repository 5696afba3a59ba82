//! Population diffs run as jobs, off the request path (docs/api.md, "Simulations as jobs"):
//! `simulation_jobs`. A request queues a job and answers at once; a runner (one job at a time in
//! each API replica) claims the oldest queued job, runs it and records its result, which the
//! caller fetches by id. One open job per caller. A job whose runner stopped mid-way (a pod
//! killed) is taken again once [`STALE_AFTER`] has passed.

use std::time::Duration;

use deadpool_postgres::Pool;
use serde::Serialize;
use serde_json::Value;

/// A running job not finished after this is taken by another runner.
pub const STALE_AFTER: Duration = Duration::from_secs(600);

/// What queuing a job did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enqueued {
    /// Queued with this id.
    Queued(i64),
    /// The caller already has this job queued or running: nothing was queued.
    Busy(i64),
}

/// A claimed job.
#[derive(Debug, Clone)]
pub struct Job {
    pub job_id: i64,
    pub requested_by: String,
    /// `simulate` or `proposal`.
    pub kind: String,
    pub request: Value,
}

/// A job as its caller reads it.
#[derive(Debug, Clone, Serialize)]
pub struct JobView {
    pub job_id: i64,
    pub kind: String,
    /// `queued`, `running`, `done` or `failed`.
    pub status: String,
    pub requested_by: String,
    pub queued_at: String,
    pub finished_at: Option<String>,
    /// The diff, as admins see it (`done`).
    pub result: Option<Value>,
    /// Why it failed (`failed`).
    pub error: Option<String>,
}

/// The caller's open job, if any.
pub async fn open_job(pool: &Pool, requested_by: &str) -> anyhow::Result<Option<i64>> {
    let client = pool.get().await?;
    Ok(client
        .query_opt(
            "SELECT job_id FROM simulation_jobs
             WHERE requested_by = $1 AND status IN ('queued', 'running')",
            &[&requested_by],
        )
        .await?
        .map(|row| row.get(0)))
}

/// Queues a job of `kind` for `requested_by`, unless the caller has one open.
pub async fn enqueue(
    pool: &Pool,
    requested_by: &str,
    kind: &str,
    request: &Value,
) -> anyhow::Result<Enqueued> {
    let client = pool.get().await?;
    loop {
        let queued = client
            .query_opt(
                "INSERT INTO simulation_jobs (requested_by, kind, request)
                 VALUES ($1, $2, $3::text::jsonb)
                 ON CONFLICT (requested_by) WHERE status IN ('queued', 'running') DO NOTHING
                 RETURNING job_id",
                &[&requested_by, &kind, &request.to_string()],
            )
            .await?;
        if let Some(row) = queued {
            return Ok(Enqueued::Queued(row.get(0)));
        }
        // The open job may finish between the insert and the look-up: then insert again.
        if let Some(id) = open_job(pool, requested_by).await? {
            return Ok(Enqueued::Busy(id));
        }
    }
}

/// Claims the oldest queued job (or a stale running one) for this runner.
pub async fn claim(pool: &Pool) -> anyhow::Result<Option<Job>> {
    let client = pool.get().await?;
    let stale = STALE_AFTER.as_secs() as f64;
    Ok(client
        .query_opt(
            "UPDATE simulation_jobs SET status = 'running', started_at = now()
             WHERE job_id = (
                 SELECT job_id FROM simulation_jobs
                 WHERE status = 'queued'
                    OR (status = 'running' AND started_at < now() - make_interval(secs => $1))
                 ORDER BY job_id FOR UPDATE SKIP LOCKED LIMIT 1)
             RETURNING job_id, requested_by, kind, request::text",
            &[&stale],
        )
        .await?
        .map(|row| Job {
            job_id: row.get(0),
            requested_by: row.get(1),
            kind: row.get(2),
            request: serde_json::from_str(row.get::<_, &str>(3)).unwrap_or(Value::Null),
        }))
}

/// Records a job's outcome.
pub async fn finish(pool: &Pool, job_id: i64, outcome: Result<&Value, &str>) -> anyhow::Result<()> {
    let client = pool.get().await?;
    let (status, result, error) = match outcome {
        Ok(result) => ("done", Some(result.to_string()), None),
        Err(error) => ("failed", None, Some(error)),
    };
    client
        .execute(
            "UPDATE simulation_jobs
             SET status = $2, result = $3::text::jsonb, error = $4, finished_at = now()
             WHERE job_id = $1",
            &[&job_id, &status, &result, &error],
        )
        .await?;
    Ok(())
}

/// The job `job_id`, if there is one.
pub async fn get(pool: &Pool, job_id: i64) -> anyhow::Result<Option<JobView>> {
    view(pool, "job_id = $1", &job_id).await
}

/// The newest job computing the diff of proposal `proposal_id`, if there is one.
pub async fn of_proposal(pool: &Pool, proposal_id: i64) -> anyhow::Result<Option<JobView>> {
    view(
        pool,
        "kind = 'proposal' AND (request->>'proposal_id')::bigint = $1",
        &proposal_id,
    )
    .await
}

/// The newest job where `condition` (on `$1`) holds.
async fn view(pool: &Pool, condition: &str, value: &i64) -> anyhow::Result<Option<JobView>> {
    let client = pool.get().await?;
    let query = format!(
        "SELECT job_id, kind, status, requested_by, queued_at::text, finished_at::text,
                result::text, error
         FROM simulation_jobs WHERE {condition} ORDER BY job_id DESC LIMIT 1"
    );
    let Some(row) = client.query_opt(&query, &[value]).await? else {
        return Ok(None);
    };
    let result: Option<String> = row.get(6);
    Ok(Some(JobView {
        job_id: row.get(0),
        kind: row.get(1),
        status: row.get(2),
        requested_by: row.get(3),
        queued_at: row.get(4),
        finished_at: row.get(5),
        result: result.map(|r| serde_json::from_str(&r)).transpose()?,
        error: row.get(7),
    }))
}
