//! Population diffs off the request path (docs/api.md, "Simulations as jobs"): the runner each
//! replica keeps (one job at a time, on a blocking thread, so requests keep the runtime), and
//! `GET /rules/simulations/{job_id}`, where a caller fetches what `POST /rules/simulate` or
//! `POST /rules/proposals` queued.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::problem::{Problem, ProblemBody};
use super::rules::{admin_read, proposed_rule, simulation_engine};
use super::service::Service;
use crate::rules::jobs::{self, Job, JobView};
use crate::rules::{proposals, simulate};

/// The most stored citizens one job evaluates (the first by user id): a proposal's diff over a
/// larger population says so by its `citizens`, and the command line computes the whole.
pub const MAX_POPULATION: usize = 1_000_000;

/// How long an idle runner waits before looking for a job again.
const POLL: Duration = Duration::from_millis(500);

/// Runs queued jobs until `shutdown`, one at a time.
pub async fn run(service: Arc<Service>, shutdown: fleet::shutdown::Shutdown) {
    while !shutdown.requested() {
        let job = match jobs::claim(&service.pool).await {
            Ok(Some(job)) => job,
            Ok(None) => {
                tokio::time::sleep(POLL).await;
                continue;
            }
            Err(error) => {
                tracing::warn!(error = %format!("{error:#}"), "claiming a simulation job failed");
                tokio::time::sleep(POLL * 4).await;
                continue;
            }
        };
        let id = job.job_id;
        let runner = service.clone();
        let handle = tokio::runtime::Handle::current();
        let outcome = tokio::task::spawn_blocking(move || handle.block_on(execute(&runner, job)))
            .await
            .map_err(anyhow::Error::from)
            .and_then(|outcome| outcome);
        let recorded = match &outcome {
            Ok(result) => jobs::finish(&service.pool, id, Ok(result)).await,
            Err(error) => {
                tracing::warn!(job = id, error = %format!("{error:#}"), "simulation job failed");
                jobs::finish(&service.pool, id, Err(&format!("{error:#}"))).await
            }
        };
        if let Err(error) = recorded {
            tracing::warn!(job = id, error = %format!("{error:#}"), "recording a simulation job failed");
        }
    }
}

/// One job: the diff as admins see it.
async fn execute(service: &Service, job: Job) -> anyhow::Result<Value> {
    let engine = simulation_engine().map_err(failed)?;
    let book = service.book();
    let text = |field: &str| job.request[field].as_str().map(str::to_string);
    match job.kind.as_str() {
        "simulate" => {
            let yaml = text("rule_yaml").unwrap_or_default();
            let (rule, as_of) =
                proposed_rule(&book, &yaml, text("as_of").as_deref()).map_err(failed)?;
            let sample = job.request["sample"].as_u64().unwrap_or(0) as usize;
            let diff = simulate::stored_diff(
                &book.catalogue,
                &book.rules,
                rule,
                as_of,
                &engine,
                &service.pool,
                Some(sample.clamp(1, MAX_POPULATION)),
            )
            .await?;
            Ok(diff.for_admins())
        }
        "proposal" => {
            let id = job.request["proposal_id"].as_i64().unwrap_or_default();
            let proposal = proposals::get(&service.pool, id).await?;
            let (rule, as_of) = proposed_rule(&book, &proposal.rule_yaml, text("as_of").as_deref())
                .map_err(failed)?;
            let stored = crate::rules::store::load(&service.pool, &book.catalogue)
                .await?
                .rules;
            let (diff, event) = proposals::simulate(
                &service.pool,
                &book.catalogue,
                &stored,
                id,
                &rule,
                as_of,
                &engine,
                Some(MAX_POPULATION),
            )
            .await?;
            let record = proposals::encode_simulation(&service.codec, &event).await?;
            fleet::kafka::send_all(&service.producer, &[record]).await?;
            Ok(simulate::for_admins(&diff))
        }
        other => anyhow::bail!("unknown job kind {other:?}"),
    }
}

/// A problem met inside a job, as the job's error.
fn failed(problem: Problem) -> anyhow::Error {
    anyhow::anyhow!(
        "{}",
        serde_json::to_string(&*problem).unwrap_or_else(|_| problem.title.to_string())
    )
}

/// The answer to a request that queued a job (202), or the caller's open job (409).
pub fn queued(enqueued: jobs::Enqueued) -> Result<Value, Problem> {
    match enqueued {
        jobs::Enqueued::Queued(id) => Ok(json!({
            "job_id": id,
            "status": "queued",
            "href": format!("/api/v1/rules/simulations/{id}"),
        })),
        jobs::Enqueued::Busy(id) => Err(busy(id)),
    }
}

/// A caller with an open job gets 409 naming it: one job at a time per caller.
pub fn busy(id: i64) -> Problem {
    Problem::conflict(format!(
        "your simulation job {id} is still queued or running (one at a time per caller): \
         fetch it at /api/v1/rules/simulations/{id}"
    ))
}

#[utoipa::path(get, path = "/api/v1/rules/simulations/{job_id}", tag = "rules (admin)",
    params(("job_id" = i64, Path, description = "The job id a simulation or proposal answered")),
    responses((status = 200, description = "The job: queued, running, done (with the diff as admins see it) or failed (with why)", body = Object),
              (status = 401, body = ProblemBody), (status = 404, body = ProblemBody), (status = 429, body = ProblemBody)),
    security(("bearer" = [])))]
pub async fn job(
    State(service): State<Arc<Service>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(job_id): Path<i64>,
) -> Result<Json<JobView>, Problem> {
    admin_read(&service, client, &headers).await?;
    jobs::get(&service.pool, job_id)
        .await?
        .map(Json)
        .ok_or_else(Problem::not_found)
}
