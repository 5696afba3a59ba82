//! `/api/v1/eligibility/...`: a user's stored results (cache first, PostgreSQL second), one
//! scheme re-derived in full, partial matches, gaps, a forced re-evaluation through the fleet,
//! and the anonymous check of a profile given in the body (docs/api.md, "Routes").
//!
//! Stored verdicts keep no trace: the engine is deterministic, so the conditions, gaps and next
//! steps of a stored verdict are re-derived from the stored profile and rule version on its
//! evaluation date, and checked against the stored outcome.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use engine::{Date, Outcome, Profile, Rule, Verdict};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::auth::Caller;
use super::body::{self, JsonBody};
use super::limits::Class;
use super::problem::{Problem, ProblemBody};
use super::service::Service;
use crate::rules::book::RuleBook;
use crate::users::state::{StoredVerdict, UserState};
use crate::users::store::load_users;

/// All stored results of a user.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct UserResults {
    pub user_id: String,
    /// `demographics.state` of the stored profile.
    pub state: Option<String>,
    /// The date of the stored profile.
    pub as_of: String,
    pub input_hash: String,
    pub summary: Summary,
    pub results: Vec<SchemeResult>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
pub struct Summary {
    pub eligible: usize,
    pub partial_match: usize,
    pub not_eligible: usize,
    pub not_applicable: usize,
}

/// One scheme's stored verdict.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SchemeResult {
    pub scheme_id: String,
    pub scheme_name: String,
    pub rule_id: String,
    pub rule_version: u32,
    /// ELIGIBLE | PARTIAL_MATCH | NOT_ELIGIBLE | NOT_APPLICABLE.
    pub verdict: String,
    pub match_score: u8,
    /// The date it was evaluated on.
    pub as_of: String,
    /// What the scheme pays this citizen (amounts by tier), when the rule says.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub benefit: Option<Value>,
    /// For a partial match: whether the citizen can close every gap (a document, an answer,
    /// a date to wait for); such matches come first in `/partial-matches`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_gaps_closable: Option<bool>,
}

/// Every gap of a user's stored results, with what to do about it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GapItem {
    pub scheme_id: String,
    pub verdict: String,
    pub field: String,
    pub gap_kind: String,
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_eligibility_date: Option<String>,
    /// `document`, `information`, `waiting` (the citizen can close it that way) or `none`.
    pub closable_by: String,
    /// The scheme's next steps for this citizen.
    pub remediation: Vec<String>,
}

/// `POST /eligibility/check`: a profile to evaluate, not stored.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    /// The profile, namespaced as `schemas/profile.schema.json`.
    #[schema(value_type = Object)]
    pub profile: Value,
    /// The evaluation date; default: today (UTC).
    #[serde(default)]
    pub as_of: Option<String>,
    /// Only this scheme.
    #[serde(default)]
    pub scheme_id: Option<String>,
}

/// `POST /eligibility/{user_id}/evaluate`: the re-evaluation was queued.
#[derive(Debug, Serialize, ToSchema)]
pub struct EvaluationQueued {
    pub event_id: String,
    pub user_id: String,
    /// Where the new results will be.
    pub results: String,
}

/// What the store holds of a user the caller may see.
pub(in crate::api) struct Stored {
    pub book: Arc<RuleBook>,
    pub state: UserState,
}

/// Loads a user and checks the caller may see them: an unknown user and a forbidden one are
/// the same 404, so user ids cannot be probed.
pub(in crate::api) async fn stored_user(
    service: &Service,
    caller: &Caller,
    user_id: &str,
    may: impl Fn(&Caller, &str, Option<&str>) -> bool,
) -> Result<Stored, Problem> {
    let book = service.book();
    let mut users = load_users(&service.pool, &book, &[user_id.to_string()])
        .await
        .map_err(|e| Problem::from(anyhow::Error::from(e)))?;
    let state = users.remove(user_id).ok_or_else(Problem::not_found)?;
    let profile = state.profile.as_ref().ok_or_else(Problem::not_found)?;
    if !may(caller, user_id, profile.state.as_deref()) {
        return Err(Problem::not_found());
    }
    Ok(Stored { book, state })
}

pub(in crate::api) fn results_of(user_id: &str, stored: &Stored) -> UserResults {
    let profile = stored
        .state
        .profile
        .as_ref()
        .expect("checked by stored_user");
    let mut summary = Summary::default();
    let results = stored
        .state
        .verdicts
        .iter()
        .map(|(scheme_id, v)| {
            match v.known.verdict {
                Verdict::Eligible => summary.eligible += 1,
                Verdict::PartialMatch => summary.partial_match += 1,
                Verdict::NotEligible => summary.not_eligible += 1,
                Verdict::NotApplicable => summary.not_applicable += 1,
            }
            let rule = stored.book.rules.get(v.rule_id);
            // As the profile read when the verdict was made (docs/semantics.md, "Age on a date").
            let aged = profile.profile.on(v.as_of);
            SchemeResult {
                scheme_id: scheme_id.to_string(),
                scheme_name: rule.map_or_else(|| scheme_id.to_string(), |r| r.scheme_name.clone()),
                rule_id: v.rule_id.to_string(),
                rule_version: v.rule_version,
                verdict: v.known.verdict.name().to_string(),
                match_score: v.known.score,
                as_of: v.as_of.to_string(),
                benefit: rule
                    .and_then(|r| r.benefit_for(&aged))
                    .map(|b| serde_json::to_value(b).expect("serialisable")),
                all_gaps_closable: rule
                    .filter(|_| v.known.verdict == Verdict::PartialMatch)
                    .map(|r| {
                        let catalogue = &stored.book.catalogue;
                        let (_, gaps) =
                            engine::eval::outcome_with_gaps(catalogue, r, &aged, v.as_of);
                        engine::gaps::all_closable(&gaps)
                    }),
            }
        })
        .collect();
    UserResults {
        user_id: user_id.to_string(),
        state: profile.state.clone(),
        as_of: profile.as_of.to_string(),
        input_hash: profile.profile.input_snapshot_hash.clone(),
        summary,
        results,
    }
}

/// The user's results as JSON text: from the cache when it has a copy of the user's current
/// results version, else from PostgreSQL (then cached, tagged with the version read before).
/// A copy is `version\nstate\njson`: the version and the state (what the access check needs)
/// are read without parsing the list. The evaluator increments the version after it writes a
/// verdict, so a copy read from PostgreSQL before that write is never served after it.
async fn user_results(
    service: &Service,
    caller: &Caller,
    user_id: &str,
) -> Result<String, Problem> {
    let key = fleet::cache::results_key(user_id);
    let keys = [key.clone(), fleet::cache::results_version_key(user_id)];
    let (cached, version) = match service.cache.get_many(&keys).await {
        Ok(values) => {
            let mut values = values.into_iter();
            (
                values.next().flatten(),
                values.next().flatten().unwrap_or_else(|| "0".into()),
            )
        }
        Err(e) => {
            tracing::warn!(error = %e, "reading the results cache failed");
            (None, "0".into())
        }
    };
    if let Some(mut text) = cached
        && let Some((tag, rest)) = text.split_once('\n')
        && tag == version
        && let Some((state, _)) = rest.split_once('\n')
    {
        metrics::counter!(fleet::metrics::API_CACHE, "outcome" => "hit").increment(1);
        if !caller.may_read_user(user_id, Some(state).filter(|s| !s.is_empty())) {
            return Err(Problem::not_found());
        }
        let body_at = tag.len() + 1 + state.len() + 1;
        return Ok(text.split_off(body_at));
    }
    metrics::counter!(fleet::metrics::API_CACHE, "outcome" => "miss").increment(1);
    let stored = stored_user(service, caller, user_id, Caller::may_read_user).await?;
    let results = results_of(user_id, &stored);
    let body = serde_json::to_string(&results).expect("serialisable");
    let copy = format!(
        "{version}\n{}\n{body}",
        results.state.as_deref().unwrap_or_default()
    );
    if let Err(e) = service.cache.put_one(&key, &copy).await {
        tracing::warn!(error = %e, "caching a user's results failed");
    }
    Ok(body)
}

#[utoipa::path(get, path = "/api/v1/eligibility/{user_id}", tag = "eligibility",
    params(("user_id" = String, Path, description = "The citizen's user id")),
    responses((status = 200, body = UserResults), (status = 401, body = ProblemBody),
              (status = 404, body = ProblemBody), (status = 429, body = ProblemBody)),
    security(("bearer" = [])))]
pub async fn all_results(
    State(service): State<Arc<Service>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(user_id): Path<String>,
) -> Result<impl IntoResponse, Problem> {
    let caller = service.admit(Class::Read, client.ip(), &headers).await?;
    let body = user_results(&service, &caller, &user_id).await?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    ))
}

#[utoipa::path(get, path = "/api/v1/eligibility/{user_id}/partial-matches", tag = "eligibility",
    params(("user_id" = String, Path, description = "The citizen's user id")),
    responses((status = 200, body = Vec<SchemeResult>, description = "Partial matches: those whose every gap the citizen can close first, then highest score first"),
              (status = 401, body = ProblemBody), (status = 404, body = ProblemBody), (status = 429, body = ProblemBody)),
    security(("bearer" = [])))]
pub async fn partial_matches(
    State(service): State<Arc<Service>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(user_id): Path<String>,
) -> Result<Json<Vec<SchemeResult>>, Problem> {
    let caller = service.admit(Class::Read, client.ip(), &headers).await?;
    let text = user_results(&service, &caller, &user_id).await?;
    let results: UserResults = serde_json::from_str(&text)
        .map_err(|e| Problem::from(anyhow::anyhow!("cached results of {user_id}: {e}")))?;
    let mut partial: Vec<SchemeResult> = results
        .results
        .into_iter()
        .filter(|r| r.verdict == Verdict::PartialMatch.name())
        .collect();
    // What the citizen can act on first: every gap closable, then by score.
    partial.sort_by(|a, b| {
        b.all_gaps_closable
            .cmp(&a.all_gaps_closable)
            .then(b.match_score.cmp(&a.match_score))
            .then(a.scheme_id.cmp(&b.scheme_id))
    });
    Ok(Json(partial))
}

/// The rule version a stored verdict names: the one held, or (retired) from PostgreSQL.
pub(in crate::api) async fn rule_of<'a>(
    service: &Service,
    book: &'a RuleBook,
    rule_id: &str,
) -> Result<std::borrow::Cow<'a, Rule>, Problem> {
    if let Some(rule) = book.rules.get(rule_id) {
        return Ok(std::borrow::Cow::Borrowed(rule));
    }
    let client = service.pool.get().await?;
    let row = client
        .query_opt(
            "SELECT rule_yaml FROM eligibility_rules WHERE rule_id = $1",
            &[&rule_id],
        )
        .await?
        .ok_or_else(|| {
            Problem::from(anyhow::anyhow!(
                "stored verdict names unknown rule {rule_id}"
            ))
        })?;
    engine::load::parse_rule_yaml(&book.catalogue, row.get(0), rule_id)
        .map(std::borrow::Cow::Owned)
        .map_err(|p| {
            Problem::from(anyhow::anyhow!(
                "stored rule {rule_id} does not load: {p:?}"
            ))
        })
}

/// The full evaluation behind a stored verdict, re-derived and checked against it.
pub(in crate::api) fn rederive(
    book: &RuleBook,
    rule: &Rule,
    profile: &Profile,
    stored: &StoredVerdict,
) -> Result<Value, Problem> {
    let profile = profile.on(stored.as_of);
    let evaluation = engine::evaluate(&book.catalogue, rule, &profile, stored.as_of);
    let json = match &evaluation {
        Ok(e) => {
            let derived = e.outcome();
            let recorded = Outcome {
                verdict: stored.known.verdict,
                score: stored.known.score,
            };
            if derived != recorded {
                return Err(Problem::from(anyhow::anyhow!(
                    "re-derived outcome {derived:?} differs from the stored {recorded:?} ({} on {})",
                    rule.rule_id,
                    stored.as_of
                )));
            }
            serde_json::to_value(e).expect("serialisable")
        }
        Err(why) => serde_json::json!({
            "scheme_id": rule.scheme_id, "rule_id": rule.rule_id, "verdict": "NOT_APPLICABLE",
            "as_of": stored.as_of.to_string(), "not_applicable": why,
        }),
    };
    Ok(json)
}

#[utoipa::path(get, path = "/api/v1/eligibility/{user_id}/{scheme_id}", tag = "eligibility",
    params(("user_id" = String, Path, description = "The citizen's user id"),
           ("scheme_id" = String, Path, description = "The scheme id")),
    responses((status = 200, description = "The evaluation with conditions, gaps, next steps and the latest explanation", body = Object),
              (status = 401, body = ProblemBody), (status = 404, body = ProblemBody), (status = 429, body = ProblemBody)),
    security(("bearer" = [])))]
pub async fn one_scheme(
    State(service): State<Arc<Service>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path((user_id, scheme_id)): Path<(String, String)>,
) -> Result<Json<Value>, Problem> {
    let caller = service.admit(Class::Read, client.ip(), &headers).await?;
    let stored = stored_user(&service, &caller, &user_id, Caller::may_read_user).await?;
    let verdict = stored
        .state
        .verdicts
        .get(scheme_id.as_str())
        .ok_or_else(Problem::not_found)?;
    let profile = &stored.state.profile.as_ref().expect("checked").profile;
    let rule = rule_of(&service, &stored.book, verdict.rule_id).await?;
    let mut evaluation = rederive(&stored.book, &rule, profile, verdict)?;
    let client = service.pool.get().await?;
    let explanations: Vec<Value> = client
        .query(
            "SELECT language, explanation, evaluation_id::text, oracle_verdict FROM explanations
             WHERE user_id = $1 AND scheme_id = $2 AND created_at = (
                 SELECT max(created_at) FROM explanations WHERE user_id = $1 AND scheme_id = $2)
             ORDER BY language",
            &[&user_id, &scheme_id],
        )
        .await?
        .iter()
        .map(|r| {
            serde_json::json!({"language": r.get::<_, &str>(0), "text": r.get::<_, &str>(1),
                               "evaluation_id": r.get::<_, &str>(2), "oracle_verdict": r.get::<_, &str>(3)})
        })
        .collect();
    evaluation["explanations"] = Value::Array(explanations);
    Ok(Json(evaluation))
}

#[utoipa::path(get, path = "/api/v1/eligibility/{user_id}/gaps", tag = "eligibility",
    params(("user_id" = String, Path, description = "The citizen's user id")),
    responses((status = 200, body = Vec<GapItem>), (status = 401, body = ProblemBody),
              (status = 404, body = ProblemBody), (status = 429, body = ProblemBody)),
    security(("bearer" = [])))]
pub async fn gaps(
    State(service): State<Arc<Service>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(user_id): Path<String>,
) -> Result<Json<Vec<GapItem>>, Problem> {
    let caller = service.admit(Class::Read, client.ip(), &headers).await?;
    let stored = stored_user(&service, &caller, &user_id, Caller::may_read_user).await?;
    let profile = &stored.state.profile.as_ref().expect("checked").profile;
    let mut items = Vec::new();
    for (scheme_id, verdict) in stored.state.verdicts.iter() {
        if matches!(
            verdict.known.verdict,
            Verdict::Eligible | Verdict::NotApplicable
        ) {
            continue;
        }
        let rule = rule_of(&service, &stored.book, verdict.rule_id).await?;
        let evaluation = rederive(&stored.book, &rule, profile, verdict)?;
        let remediation: Vec<String> = evaluation["next_steps"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["text"].as_str().or(s.as_str()).map(str::to_string))
            .collect();
        for gap in evaluation["gaps"].as_array().into_iter().flatten() {
            items.push(GapItem {
                scheme_id: scheme_id.to_string(),
                verdict: verdict.known.verdict.name().to_string(),
                field: gap["field"].as_str().unwrap_or_default().to_string(),
                gap_kind: gap["gap_kind"].as_str().unwrap_or_default().to_string(),
                description: gap["gap_description"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                estimated_eligibility_date: gap["estimated_eligibility_date"]
                    .as_str()
                    .map(str::to_string),
                closable_by: gap["closable_by"].as_str().unwrap_or("none").to_string(),
                remediation: remediation.clone(),
            });
        }
    }
    Ok(Json(items))
}

#[utoipa::path(post, path = "/api/v1/eligibility/{user_id}/evaluate", tag = "eligibility",
    params(("user_id" = String, Path, description = "The citizen's user id")),
    responses((status = 202, body = EvaluationQueued, description = "Queued on profile.assembled; the fleet re-evaluates every scheme"),
              (status = 401, body = ProblemBody), (status = 404, body = ProblemBody), (status = 429, body = ProblemBody),
              (status = 503, body = ProblemBody)),
    security(("bearer" = [])))]
pub async fn evaluate(
    State(service): State<Arc<Service>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(user_id): Path<String>,
) -> Result<impl IntoResponse, Problem> {
    let caller = service
        .admit(Class::Evaluate, client.ip(), &headers)
        .await?;
    let queued = queue_evaluation(&service, &caller, &user_id).await?;
    Ok((StatusCode::ACCEPTED, Json(queued)))
}

/// Asks the fleet to re-evaluate `user_id` for `caller` (who may): recorded with the
/// requester, then published on `profile.assembled` (the API's route and the caseworker desk).
pub(in crate::api) async fn queue_evaluation(
    service: &Service,
    caller: &Caller,
    user_id: &str,
) -> Result<EvaluationQueued, Problem> {
    let stored = stored_user(service, caller, user_id, Caller::may_reevaluate).await?;
    let profile = stored.state.profile.as_ref().expect("checked");
    let event_id = request_id(user_id, &caller.subject);
    // Recorded before it is published: no re-evaluation without its requester on record.
    let db = service.pool.get().await?;
    db.execute(
        "INSERT INTO evaluation_requests (event_id, user_id, requested_by, role) VALUES ($1, $2, $3, $4)",
        &[&event_id, &user_id, &caller.subject, &format!("{:?}", caller.role).to_lowercase()],
    )
    .await?;
    let topic = fleet::topics::PROFILE_ASSEMBLED;
    let record = fleet::events::ProfileUpdate {
        event_id: event_id.clone(),
        user_id: user_id.to_string(),
        profile: profile.json.to_string(),
        as_of: None,
    };
    let payload = service
        .codec
        .encode(topic, &record)
        .await
        .map_err(|e| Problem::from(anyhow::Error::from(e)))?;
    let outgoing = fleet::kafka::Outgoing {
        topic: topic.to_string(),
        key: user_id.as_bytes().to_vec(),
        partition: Some(
            fleet::topics::partition_map().partition_for(profile.state.as_deref(), user_id),
        ),
        timestamp_ms: None,
        payload,
        headers: vec![("eligibility_requested_by", caller.subject.clone())],
    };
    fleet::kafka::send_all(&service.producer, &[outgoing])
        .await
        .map_err(|e| Problem::from(anyhow::Error::from(e)))?;
    Ok(EvaluationQueued {
        event_id,
        results: format!("/api/v1/eligibility/{user_id}"),
        user_id: user_id.to_string(),
    })
}

/// A request id: unique per request, derived from who asked, for whom, and when.
fn request_id(user_id: &str, subject: &str) -> String {
    use sha2::{Digest, Sha256};
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let digest = Sha256::digest(format!("{user_id}\u{0}{subject}\u{0}{now}").as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

#[utoipa::path(post, path = "/api/v1/eligibility/check", tag = "eligibility",
    request_body = CheckRequest,
    responses((status = 200, description = "Every scheme in effect for the profile's state, evaluated (nothing stored)", body = Object),
              (status = 401, body = ProblemBody), (status = 413, body = ProblemBody), (status = 422, body = ProblemBody),
              (status = 429, body = ProblemBody)),
    security(("bearer" = [])))]
pub async fn check(
    State(service): State<Arc<Service>>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: JsonBody<CheckRequest>,
) -> Result<Json<Value>, Problem> {
    service.admit(Class::Check, client.ip(), &headers).await?;
    let request = body.0?;
    let book = service.book();
    let as_of = match &request.as_of {
        Some(text) => {
            Date::parse(text).ok_or_else(|| body::field_error("/as_of", "not a date YYYY-MM-DD"))?
        }
        None => crate::clock::today(),
    };
    let profile = Profile::from_json(&book.catalogue, &request.profile, "request")
        .map_err(|report| {
            Problem::invalid_body(
                report
                    .problems
                    .iter()
                    .map(|p| {
                        body::field(
                            &format!("/profile{}", p.path),
                            "not a valid value for this field",
                        )
                    })
                    .collect(),
            )
        })?
        .into_on(as_of);
    let output = crate::citizen::evaluate_citizen(
        &book.catalogue,
        &book.rules,
        &profile,
        as_of,
        request.scheme_id.as_deref(),
        false,
    )
    .map_err(|_| {
        Problem::not_found().with_detail("no version of that scheme is in effect on that date")
    })?;
    Ok(Json(serde_json::to_value(&output).expect("serialisable")))
}
