//! `/api/v1/rules/...`: a scheme's rule as the public may read it, its version history, the
//! conflicts among the rules in effect, and the admin routes that validate a rule document and
//! simulate it against the stored population (docs/api.md, "Routes").

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode};
use engine::Date;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::auth::{Caller, Role};
use super::body::{self, JsonBody, TextBody};
use super::limits::Class;
use super::problem::{Problem, ProblemBody};
use super::service::Service;
use crate::rules::book::RuleBook;

/// The parts of a rule document the public does not see: who wrote it and the curators' notes.
const REDACTED: [&str; 2] = ["last_modified_by", "last_modified_at"];

#[utoipa::path(get, path = "/api/v1/rules/{scheme_id}", tag = "rules",
    params(("scheme_id" = String, Path, description = "The scheme id")),
    responses((status = 200, description = "The version in effect today (else the newest), redacted", body = Object),
              (status = 404, body = ProblemBody), (status = 429, body = ProblemBody)))]
pub async fn public_rule(
    State(service): State<Arc<Service>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(scheme_id): Path<String>,
) -> Result<Json<Value>, Problem> {
    service
        .admit_anonymous(Class::Public, client.ip(), &headers)
        .await?;
    let book = service.book();
    let rule = book
        .rules
        .in_effect_or_newest(&scheme_id, crate::clock::today())
        .ok_or_else(Problem::not_found)?;
    let mut document = rule.document.clone();
    if let Some(object) = document.as_object_mut() {
        for key in REDACTED {
            object.remove(key);
        }
        if let Some(source) = object.get_mut("source").and_then(Value::as_object_mut) {
            source.remove("notes");
        }
    }
    Ok(Json(
        serde_json::json!({"rule_hash": rule.rule_hash, "rule": document}),
    ))
}

/// One stored version of a scheme.
#[derive(Debug, Serialize, ToSchema)]
pub struct RuleVersion {
    pub rule_id: String,
    pub version: u32,
    pub rule_hash: String,
    pub effective_from: String,
    pub effective_until: Option<String>,
    pub is_active: bool,
    pub supersedes: Option<String>,
    pub change_reason: Option<String>,
    pub stored_at: String,
}

#[utoipa::path(get, path = "/api/v1/rules/{scheme_id}/versions", tag = "rules",
    params(("scheme_id" = String, Path, description = "The scheme id")),
    responses((status = 200, body = Vec<RuleVersion>), (status = 401, body = ProblemBody),
              (status = 404, body = ProblemBody), (status = 429, body = ProblemBody)),
    security(("bearer" = [])))]
pub async fn versions(
    State(service): State<Arc<Service>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(scheme_id): Path<String>,
) -> Result<Json<Vec<RuleVersion>>, Problem> {
    service.admit(Class::Read, client.ip(), &headers).await?;
    let db = service.pool.get().await?;
    let rows = db
        .query(
            "SELECT rule_id, rule_version, rule_hash, effective_from::text, effective_until::text,
                    is_active, supersedes, change_reason, created_at::text
             FROM eligibility_rules WHERE scheme_id = $1 ORDER BY rule_version",
            &[&scheme_id],
        )
        .await?;
    if rows.is_empty() {
        return Err(Problem::not_found());
    }
    Ok(Json(
        rows.iter()
            .map(|r| RuleVersion {
                rule_id: r.get(0),
                version: r.get::<_, i32>(1) as u32,
                rule_hash: r.get(2),
                effective_from: r.get(3),
                effective_until: r.get(4),
                is_active: r.get(5),
                supersedes: r.get(6),
                change_reason: r.get(7),
                stored_at: r.get(8),
            })
            .collect(),
    ))
}

#[utoipa::path(get, path = "/api/v1/rules/conflicts", tag = "rules",
    responses((status = 200, description = "Conflicts among the rules held, each with its witness profile where there is one", body = Object),
              (status = 401, body = ProblemBody), (status = 429, body = ProblemBody)),
    security(("bearer" = [])))]
pub async fn conflicts(
    State(service): State<Arc<Service>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Result<Json<Value>, Problem> {
    service.admit(Class::Read, client.ip(), &headers).await?;
    Ok(Json(service.conflicts().as_ref().clone()))
}

/// A proposed rule document of a request body (`/rule_yaml`) and the date to simulate it on
/// (`/as_of`, default today), each problem named by its pointer.
pub(super) fn proposed_rule(
    book: &RuleBook,
    rule_yaml: &str,
    as_of: Option<&str>,
) -> Result<(engine::Rule, Date), Problem> {
    let as_of = match as_of {
        Some(text) => {
            Date::parse(text).ok_or_else(|| body::field_error("/as_of", "not a date YYYY-MM-DD"))?
        }
        None => crate::clock::today(),
    };
    let rule = engine::load::parse_rule_yaml(&book.catalogue, rule_yaml, "proposal").map_err(
        |problems| {
            Problem::invalid_body(
                problems
                    .iter()
                    .map(|p| body::field(&format!("/rule_yaml{}", p.path), &p.reason))
                    .collect(),
            )
        },
    )?;
    Ok((rule, as_of))
}

/// The batch engine of the API's simulations: the API's CPU serves requests, so they stay
/// off any GPU.
pub(super) fn simulation_engine() -> Result<kernels::engine_select::Engine, Problem> {
    kernels::engine_select::Engine::new(kernels::engine_select::EngineChoice::Cpu, 0)
        .map_err(|e| Problem::from(anyhow::anyhow!("{e}")))
}

/// Admits an admin route that changes or computes something (the `admin` budget); the admin
/// reads (a proposal, a job being polled) are [`admin_read`].
pub(super) async fn admin(
    service: &Service,
    peer: SocketAddr,
    headers: &HeaderMap,
) -> Result<Caller, Problem> {
    admitted(service, Class::Admin, peer, headers).await
}

/// Admits an admin route that only reads: the `read` budget.
pub(super) async fn admin_read(
    service: &Service,
    peer: SocketAddr,
    headers: &HeaderMap,
) -> Result<Caller, Problem> {
    admitted(service, Class::Read, peer, headers).await
}

/// Only from a client address in the admin networks (none when the list is empty), only with
/// the admin role; anything else is 404, as if the route did not exist.
async fn admitted(
    service: &Service,
    class: Class,
    peer: SocketAddr,
    headers: &HeaderMap,
) -> Result<Caller, Problem> {
    if !service.in_admin_networks(peer.ip(), headers) {
        return Err(Problem::not_found());
    }
    let caller = service.admit(class, peer.ip(), headers).await?;
    if caller.role != Role::Admin {
        return Err(Problem::not_found());
    }
    Ok(caller)
}

/// What `POST /rules/validate` found.
#[derive(Debug, Serialize, ToSchema)]
pub struct Validation {
    pub valid: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule_hash: Option<String>,
    /// Every problem, with the JSON pointer inside the rule and the reason.
    pub problems: Vec<ValidationProblem>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ValidationProblem {
    pub path: String,
    pub reason: String,
}

#[utoipa::path(post, path = "/api/v1/rules/validate", tag = "rules (admin)",
    request_body(content = String, content_type = "application/yaml", description = "One rule document (YAML or JSON)"),
    responses((status = 200, body = Validation), (status = 401, body = ProblemBody), (status = 404, body = ProblemBody),
              (status = 413, body = ProblemBody), (status = 429, body = ProblemBody)),
    security(("bearer" = [])))]
pub async fn validate(
    State(service): State<Arc<Service>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: TextBody,
) -> Result<Json<Validation>, Problem> {
    admin(&service, client, &headers).await?;
    let text = body.0?;
    let book = service.book();
    Ok(Json(
        match engine::load::parse_rule_yaml(&book.catalogue, &text, "request") {
            Ok(rule) => Validation {
                valid: true,
                rule_id: Some(rule.rule_id),
                rule_hash: Some(rule.rule_hash),
                problems: Vec::new(),
            },
            Err(problems) => Validation {
                valid: false,
                rule_id: None,
                rule_hash: None,
                problems: problems
                    .into_iter()
                    .map(|p| ValidationProblem {
                        path: p.path,
                        reason: p.reason,
                    })
                    .collect(),
            },
        },
    ))
}

/// `POST /rules/simulate`: a proposed rule against a sample of the stored population.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SimulateRequest {
    /// The proposed rule document (YAML or JSON text).
    pub rule_yaml: String,
    /// How many stored citizens to evaluate (the first by user id among those the scheme
    /// covers); default 10,000, at most 100,000.
    #[serde(default)]
    pub sample: Option<u32>,
    /// The evaluation date; default: today (UTC).
    #[serde(default)]
    pub as_of: Option<String>,
}

const MAX_SAMPLE: u32 = 100_000;

#[utoipa::path(post, path = "/api/v1/rules/simulate", tag = "rules (admin)",
    request_body = SimulateRequest,
    responses((status = 202, description = "Queued: the job's id and where to fetch it (GET /api/v1/rules/simulations/{job_id}), whose result is, per changed scheme and state, verdict transitions, monthly outlay before and after, newly blocking gaps (counts under 10 said as \"<10\", no user ids), and the conflicts introduced", body = Object),
              (status = 409, description = "The caller's previous job is still queued or running", body = ProblemBody),
              (status = 401, body = ProblemBody), (status = 404, body = ProblemBody),
              (status = 413, body = ProblemBody), (status = 422, body = ProblemBody), (status = 429, body = ProblemBody)),
    security(("bearer" = [])))]
pub async fn simulate(
    State(service): State<Arc<Service>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: JsonBody<SimulateRequest>,
) -> Result<(StatusCode, Json<Value>), Problem> {
    let caller = admin(&service, client, &headers).await?;
    let request = body.0?;
    let sample = request.sample.unwrap_or(10_000);
    if sample == 0 || sample > MAX_SAMPLE {
        return Err(body::field_error("/sample", "must be 1..=100000"));
    }
    // The document is checked now (a bad one is a 422 here, not a failed job later).
    let book = service.book();
    let (_, as_of) = proposed_rule(&book, &request.rule_yaml, request.as_of.as_deref())?;
    let job = serde_json::json!({
        "rule_yaml": request.rule_yaml,
        "sample": sample,
        "as_of": as_of.to_string(),
    });
    let enqueued =
        crate::rules::jobs::enqueue(&service.pool, &caller.subject, "simulate", &job).await?;
    Ok((StatusCode::ACCEPTED, Json(super::jobs::queued(enqueued)?)))
}
