//! `/api/v1/rules/proposals/...` (admin): rule versions under review (docs/releases.md,
//! "Review"), the same as `eligibility rules propose | approve | reject | proposal`. The caller's
//! token subject is the author or the decider, so the four-eyes rule holds across people, not
//! command lines.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode};
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::auth::Caller;
use super::body::{self, JsonBody};
use super::problem::{Problem, ProblemBody};
use super::rules::{admin, admin_read, proposed_rule};
use super::service::Service;
use crate::rules::jobs;
use crate::rules::proposals::{self, Proposal};
use crate::rules::simulate;

/// `POST /rules/proposals`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposeRequest {
    /// The proposed rule document (YAML or JSON text).
    pub rule_yaml: String,
    #[serde(default)]
    pub reason: Option<String>,
    /// The evaluation date of the population diff; default: today (UTC).
    #[serde(default)]
    pub as_of: Option<String>,
}

/// `POST /rules/proposals/{id}/decision`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionRequest {
    pub decision: Decision,
    /// Why (recorded).
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    Reject,
}

#[utoipa::path(post, path = "/api/v1/rules/proposals", tag = "rules (admin)",
    request_body = ProposeRequest,
    responses((status = 201, description = "The proposal, and the job (`simulation_job`) that computes its population diff against the stored citizens the scheme covers (attached to the proposal and published on rule.simulation.completed when done)", body = Object),
              (status = 401, body = ProblemBody), (status = 404, body = ProblemBody),
              (status = 409, body = ProblemBody), (status = 413, body = ProblemBody),
              (status = 422, body = ProblemBody), (status = 429, body = ProblemBody)),
    security(("bearer" = [])))]
pub async fn propose(
    State(service): State<Arc<Service>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: JsonBody<ProposeRequest>,
) -> Result<(StatusCode, Json<Value>), Problem> {
    let caller = admin(&service, client, &headers).await?;
    let request = body.0?;
    let book = service.book();
    let (rule, as_of) = proposed_rule(&book, &request.rule_yaml, request.as_of.as_deref())?;
    let (proposal, job) = submit(
        &service,
        &caller,
        &rule,
        &request.rule_yaml,
        request.reason.as_deref(),
        as_of,
    )
    .await?;
    let mut proposal = serde_json::to_value(proposal).map_err(anyhow::Error::from)?;
    proposal["simulation_job"] = job.into();
    Ok((StatusCode::CREATED, Json(proposal)))
}

/// What `POST /rules/proposals` and the rules console do with a validated rule version: the
/// version checked against the stored ones (409 when not new), stored as a proposal by
/// `caller`, and its population diff queued as a job (409 when the caller has one open).
/// Returns the proposal as admins see it and the job's id.
pub(in crate::api) async fn submit(
    service: &Service,
    caller: &Caller,
    rule: &engine::Rule,
    yaml: &str,
    reason: Option<&str>,
    as_of: engine::Date,
) -> Result<(Proposal, i64), Problem> {
    let book = service.book();
    let stored = crate::rules::store::load(&service.pool, &book.catalogue)
        .await?
        .rules;
    proposals::check_new_version(&stored, rule).map_err(Problem::conflict)?;
    if let Some(open) = jobs::open_job(&service.pool, &caller.subject).await? {
        return Err(super::jobs::busy(open));
    }
    let id = proposals::propose(&service.pool, rule, yaml, &caller.subject, reason).await?;
    let job = serde_json::json!({"proposal_id": id, "as_of": as_of.to_string()});
    let job = match jobs::enqueue(&service.pool, &caller.subject, "proposal", &job).await? {
        jobs::Enqueued::Queued(job) => job,
        jobs::Enqueued::Busy(open) => return Err(super::jobs::busy(open)),
    };
    Ok((shown(proposals::get(&service.pool, id).await?), job))
}

#[utoipa::path(get, path = "/api/v1/rules/proposals/{id}", tag = "rules (admin)",
    params(("id" = i64, Path, description = "The proposal id")),
    responses((status = 200, description = "The proposal with its status, decision and population diff", body = Object),
              (status = 401, body = ProblemBody), (status = 404, body = ProblemBody), (status = 429, body = ProblemBody)),
    security(("bearer" = [])))]
pub async fn proposal(
    State(service): State<Arc<Service>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(id): Path<i64>,
) -> Result<Json<Proposal>, Problem> {
    admin_read(&service, client, &headers).await?;
    Ok(Json(find(&service, id).await?))
}

#[utoipa::path(post, path = "/api/v1/rules/proposals/{id}/decision", tag = "rules (admin)",
    params(("id" = i64, Path, description = "The proposal id")),
    request_body = DecisionRequest,
    responses((status = 200, description = "The decided proposal (kept on record); an approved document is published on policy.rules.updated, where the fleet takes it live", body = Object),
              (status = 401, body = ProblemBody), (status = 404, body = ProblemBody),
              (status = 409, description = "Already decided, the caller wrote it (four eyes), or an approval of a proposal without its population diff", body = ProblemBody),
              (status = 422, body = ProblemBody), (status = 429, body = ProblemBody)),
    security(("bearer" = [])))]
pub async fn decide(
    State(service): State<Arc<Service>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    body: JsonBody<DecisionRequest>,
) -> Result<Json<Proposal>, Problem> {
    let caller = admin(&service, client, &headers).await?;
    let DecisionRequest { decision, reason } = body.0?;
    decide_as(&service, &caller, id, decision, &reason)
        .await
        .map(Json)
}

/// What `POST /rules/proposals/{id}/decision` and the rules console do with a decision: only
/// an open proposal, never by its author (four eyes), an approval only of a proposal whose
/// population diff is attached; an approved document is published on `policy.rules.updated`.
pub(in crate::api) async fn decide_as(
    service: &Service,
    caller: &Caller,
    id: i64,
    decision: Decision,
    reason: &str,
) -> Result<Proposal, Problem> {
    if reason.trim().is_empty() {
        return Err(body::field_error("/reason", "say why"));
    }
    let proposal = open(service, id).await?;
    if proposal.status != "proposed" {
        return Err(Problem::conflict(format!(
            "proposal {id} is {}: only an open proposal can be decided",
            proposal.status
        )));
    }
    if proposal.author == caller.subject {
        return Err(Problem::conflict(format!(
            "proposal {id} was written by {}: a second person must decide it (four eyes)",
            caller.subject
        )));
    }
    let approving = decision == Decision::Approve;
    if approving && proposal.simulation.is_none() {
        return Err(Problem::conflict(format!(
            "proposal {id} has no population diff (it failed or never ran): no one can approve \
             what no one has seen; propose the version again, or approve it with \
             `eligibility rules approve`, which computes the diff first"
        )));
    }
    let decided = proposals::decide(&service.pool, id, &caller.subject, reason, approving).await?;
    if approving {
        let record =
            proposals::approved_record(&service.codec, &decided, &caller.subject, reason).await?;
        fleet::kafka::send_all(&service.producer, &[record])
            .await
            .map_err(anyhow::Error::from)?;
    }
    Ok(shown(decided))
}

/// A proposal as admins see it: its stored diff without user ids or small cells
/// (docs/api.md, "What admins see").
fn shown(mut proposal: Proposal) -> Proposal {
    proposal.simulation = proposal.simulation.map(|d| simulate::for_admins(&d));
    proposal
}

/// The proposal `id` as admins see it, or a 404.
pub(in crate::api) async fn find(service: &Service, id: i64) -> Result<Proposal, Problem> {
    open(service, id).await.map(shown)
}

/// The proposal `id`, or a 404.
async fn open(service: &Service, id: i64) -> Result<Proposal, Problem> {
    proposals::find(&service.pool, id)
        .await?
        .ok_or_else(Problem::not_found)
}
