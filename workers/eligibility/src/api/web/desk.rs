//! The caseworker desk (docs/web.md, "The caseworker desk"): a signed-in caseworker looks up a
//! citizen of their states, sees the stored verdicts, the gaps and the evaluation history from the
//! audit log, and asks for a re-evaluation, with exactly the API's checks (a citizen of another
//! state is the same "not found" as one who does not exist). Signed in as [`super::sign_in`]
//! says, with the session of [`super::session::DESK`].

use std::sync::Arc;

use axum::Form;
use axum::extract::{FromRequestParts, Query};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};
use engine::Verdict;
use explain::FactKind;
use maud::{Markup, html};
use serde::Deserialize;

use super::layout::{page, with_lang};
use super::session::{DESK, Session};
use super::{form_value, html, verdict_name_word, verdict_word};
use crate::api::auth::Caller;
use crate::api::citizens::{Stored, queue_evaluation, rule_of, stored_user};
use crate::api::limits::{Class, Key};
use crate::api::service::Service;

/// The most audit rows the history shows (the newest).
pub const HISTORY_ROWS: i64 = 100;

/// A signed-in caseworker's request.
pub struct Desk(Session);

impl std::ops::Deref for Desk {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.0
    }
}

impl FromRequestParts<Arc<Service>> for Desk {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        service: &Arc<Service>,
    ) -> Result<Desk, Response> {
        Session::of(DESK, parts, service).await.map(Desk)
    }
}

/// The desk's routes (under the pages' router).
pub fn routes() -> axum::Router<Arc<Service>> {
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/desk", get(home))
        .route("/desk/citizen", get(citizen))
        .route("/desk/citizen/evaluate", post(evaluate))
        .merge(super::sign_in::routes(DESK))
}

/// The signed-in line, the sign-out form and the lookup form, on every desk page.
fn frame(desk: &Desk, user_id: &str, body: Markup) -> Markup {
    let w = |key| desk.lang.page(key);
    html! {
        div.meta {
            (explain::fill(w("desk_signed_in_as"), &[("name", &desk.caller.subject), ("states", &desk.caller.states.join(", "))]))
            form.inline method="post" action="/desk/sign-out" {
                (desk.csrf_field())
                button.secondary type="submit" { (w("desk_sign_out")) }
            }
        }
        form.filters method="get" action="/desk/citizen" {
            input type="hidden" name="lang" value=(desk.lang.code());
            div {
                label for="user_id" { (w("desk_user_id")) }
                input id="user_id" name="user_id" type="text" value=(user_id) required;
            }
            div { button type="submit" { (w("desk_find")) } }
        }
        (body)
    }
}

/// `GET /desk`: the lookup.
pub async fn home(desk: Desk) -> Response {
    let w = |key| desk.lang.page(key);
    let body = frame(&desk, "", html! {});
    html(page(desk.lang, w("desk_title"), "/desk", body))
}

#[derive(Debug, Deserialize)]
pub struct Lookup {
    #[serde(default)]
    user_id: String,
    /// A re-evaluation just asked for (its request id).
    #[serde(default)]
    queued: Option<String>,
}

/// `GET /desk/citizen?user_id=`: one citizen, as the caseworker may see them.
pub async fn citizen(desk: Desk, Query(lookup): Query<Lookup>) -> Response {
    let lang = desk.lang;
    let w = |key| lang.page(key);
    let user_id = lookup.user_id.trim().chars().take(128).collect::<String>();
    let here = super::with_query("/desk/citizen", &[("user_id", &user_id)]);
    let stored =
        match stored_user(&desk.service, &desk.caller, &user_id, Caller::may_read_user).await {
            Ok(stored) => stored,
            Err(problem) if problem.status == StatusCode::NOT_FOUND.as_u16() => {
                let body = frame(
                    &desk,
                    &user_id,
                    html! { p role="alert" { (w("desk_not_found")) } },
                );
                let mut response = html(page(lang, w("desk_title"), &here, body));
                *response.status_mut() = StatusCode::NOT_FOUND;
                return response;
            }
            Err(problem) => return problem.into_response(),
        };
    let history = history(&desk.service, &user_id).await.map_err(|e| {
        tracing::warn!(error = %format!("{e:#}"), "reading a user's audit history failed");
    });
    let body = frame(
        &desk,
        &user_id,
        citizen_body(&desk, &user_id, &stored, &history, lookup.queued.as_deref()).await,
    );
    html(page(
        lang,
        &explain::fill(w("desk_citizen"), &[("user_id", &user_id)]),
        &here,
        body,
    ))
}

/// One audit row: when recorded, the evaluation date, the scheme, the rule version, the
/// verdict and score.
type HistoryRow = (String, String, String, i32, String, i16);

/// The newest evaluations of a user from the audit log (docs/fleet.md, "The audit log").
async fn history(service: &Service, user_id: &str) -> anyhow::Result<Vec<HistoryRow>> {
    let client = service.pool.get().await?;
    let rows = client
        .query(
            "SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), as_of::text,
                    scheme_id, rule_version, verdict, match_score
             FROM evaluation_audit_log WHERE user_id = $1
             ORDER BY created_at DESC, scheme_id LIMIT $2",
            &[&user_id, &HISTORY_ROWS],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5)))
        .collect())
}

async fn citizen_body(
    desk: &Desk,
    user_id: &str,
    stored: &Stored,
    history: &Result<Vec<HistoryRow>, ()>,
    queued: Option<&str>,
) -> Markup {
    let lang = desk.lang;
    let w = |key| lang.page(key);
    let book = &stored.book;
    let catalogue = &book.catalogue;
    let profile = stored.state.profile.as_ref().expect("stored_user checked");
    let name = |scheme: &str| explain::scheme_name_in(catalogue, lang, scheme, scheme);
    // Each stored verdict with the gaps of its evaluation re-derived from the stored profile,
    // in the language; marked when that profile no longer gives the stored outcome (it changed
    // after the verdict, and a re-evaluation is on its way or due).
    let mut rows = Vec::new();
    for (scheme_id, verdict) in stored.state.verdicts.iter() {
        let mut gaps = Vec::new();
        let mut stale = false;
        if matches!(
            verdict.known.verdict,
            Verdict::PartialMatch | Verdict::NotEligible
        ) && let Ok(rule) = rule_of(&desk.service, book, verdict.rule_id).await
            && let Ok(evaluation) = engine::evaluate(
                catalogue,
                &rule,
                &profile.profile.on(verdict.as_of),
                verdict.as_of,
            )
        {
            let stored = engine::Outcome {
                verdict: verdict.known.verdict,
                score: verdict.known.score,
            };
            stale = evaluation.outcome() != stored;
            let facts = explain::facts(&evaluation, catalogue, lang);
            gaps = facts
                .facts()
                .iter()
                .filter(|f| matches!(f.kind, FactKind::Gap { .. } | FactKind::Exclusion))
                .map(|f| f.text.clone())
                .collect();
        }
        rows.push((scheme_id, verdict, gaps, stale));
    }
    rows.sort_by_key(|(scheme, v, _, _)| {
        (crate::citizen::rank(v.known.verdict, false), name(scheme))
    });
    html! {
        @if let Some(id) = queued {
            p role="status" { (explain::fill(w("desk_queued"), &[("id", id)])) }
        }
        p.meta {
            (explain::fill(w("desk_profile_date"), &[("date", &lang.date(profile.as_of))]))
            @if let Some(state) = &profile.state { " · " (super::explorer::state_name(catalogue, lang, state)) }
        }
        form method="post" action="/desk/citizen/evaluate" {
            (desk.csrf_field())
            input type="hidden" name="user_id" value=(user_id);
            input type="hidden" name="lang" value=(lang.code());
            button type="submit" { (w("desk_reevaluate")) }
        }
        h2 { (w("desk_verdicts")) }
        table {
            thead { tr { th scope="col" { (w("desk_scheme")) } th scope="col" { (w("desk_verdict")) } th scope="col" { (w("desk_score")) } th scope="col" { (w("desk_evaluated_on")) } } }
            tbody {
                @for (scheme, verdict, _, _) in &rows {
                    tr {
                        td { a href=(with_lang(&format!("/schemes/{scheme}"), lang)) { (name(scheme)) } }
                        td { (verdict_word(lang, verdict.known.verdict)) }
                        td { (verdict.known.score) }
                        td { (lang.date(verdict.as_of)) }
                    }
                }
            }
        }
        h2 { (w("desk_gaps")) }
        @for (scheme, _, gaps, stale) in rows.iter().filter(|(_, _, g, _)| !g.is_empty()) {
            h3 { (name(scheme)) }
            @if *stale { p.error { (w("desk_stale")) } }
            ul { @for gap in gaps { li { (gap) } } }
        }
        h2 { (w("desk_history")) }
        @if let Err(()) = history {
            p.error role="alert" { (w("desk_history_error")) }
        } @else if history.as_ref().is_ok_and(Vec::is_empty) {
            p { (w("desk_history_empty")) }
        } @else if let Ok(history) = history {
            table {
                thead { tr { th scope="col" { (w("desk_recorded_at")) } th scope="col" { (w("desk_evaluated_on")) } th scope="col" { (w("desk_scheme")) } th scope="col" { (w("desk_rule_version")) } th scope="col" { (w("desk_verdict")) } th scope="col" { (w("desk_score")) } } }
                tbody {
                    @for (at, as_of, scheme, version, verdict, score) in history {
                        tr {
                            td { (at) " UTC" }
                            td { (as_of) }
                            td { (name(scheme)) }
                            td { (version) }
                            td { (verdict_name_word(lang, verdict)) }
                            td { (score) }
                        }
                    }
                }
            }
        }
    }
}

/// `POST /desk/citizen/evaluate`: a re-evaluation, as the API's `POST .../evaluate`.
pub async fn evaluate(
    desk: Desk,
    headers: axum::http::HeaderMap,
    Form(form): Form<Vec<(String, String)>>,
) -> Response {
    let lang = desk.lang;
    if let Some(refused) = desk.refusal(&headers, &form) {
        return refused;
    }
    let user_id = form_value(&form, "user_id").unwrap_or_default();
    if let Err(e) = desk
        .service
        .limits
        .admit(Class::Evaluate, Key::Caller(&desk.caller.subject))
        .await
    {
        return e.into_response();
    }
    match queue_evaluation(&desk.service, &desk.caller, user_id).await {
        Ok(queued) => Redirect::to(&super::with_query(
            "/desk/citizen",
            &[
                ("user_id", user_id),
                ("queued", &queued.event_id),
                ("lang", lang.code()),
            ],
        ))
        .into_response(),
        Err(problem) if problem.status == StatusCode::NOT_FOUND.as_u16() => {
            DESK.message(lang, StatusCode::NOT_FOUND, "desk_not_found")
        }
        Err(problem) => problem.into_response(),
    }
}
