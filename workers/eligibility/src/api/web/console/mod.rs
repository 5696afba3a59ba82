//! The rules console (docs/web.md, "The rules console"): a department drafts, reviews and
//! releases a rule change by looking. Signed in as an admin ([`super::sign_in`], the session of
//! [`CONSOLE`]) from the admin networks only, and served on the admin listener where there is
//! one; every change goes through the admin API's own code paths (the same checks, the same
//! four eyes).
//!
//! - [`draft`]: a scheme's current version edited as a form generated from the rule schema and
//!   the field catalogue, or as YAML side by side; every problem shown at its place; proposed.
//! - [`review`]: a proposal: the change in words, its impact (the population diff, a job off
//!   the request path) as charts, its author; a second admin's decision.
//! - [`charts`]: server-rendered SVG bar charts, each with its numbers in a table.
//! - [`releases`]: what went live when, and the re-evaluation each release caused, from the
//!   stored versions and the audit log.

pub mod charts;
pub mod draft;
pub mod releases;
pub mod review;

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};

use super::html;
use super::layout::{page, with_lang};
use super::session::{CONSOLE, Session};
use crate::api::limits::{Class, Key};
use crate::api::problem::Problem;
use crate::api::service::Service;

/// Proposals listed on the console's first page (the newest).
pub const HISTORY_ROWS: i64 = 100;

/// A signed-in admin's request (from the admin networks only: [`CONSOLE`]).
pub struct Console(Session);

impl std::ops::Deref for Console {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.0
    }
}

impl FromRequestParts<Arc<Service>> for Console {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        service: &Arc<Service>,
    ) -> Result<Console, Response> {
        Session::of(CONSOLE, parts, service).await.map(Console)
    }
}

/// The console's routes: its pages and its sign-in.
pub fn routes() -> axum::Router<Arc<Service>> {
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/console", get(home))
        .route("/console/draft", get(draft::start).post(draft::step))
        .route("/console/draft/check", post(draft::live_check))
        .route("/console/proposals/{id}", get(review::proposal))
        .route("/console/proposals/{id}/decision", post(review::decide))
        .route("/console/releases", get(releases::list))
        .route("/console/releases/{rule_id}", get(releases::release))
        .merge(super::sign_in::routes(CONSOLE))
}

impl Console {
    /// Admits a change (a proposal, a decision) against the caller's `admin` budget, as the
    /// admin API's changing routes are.
    pub async fn admit_change(&self) -> Result<(), Response> {
        self.service
            .limits
            .admit(Class::Admin, Key::Caller(&self.caller.subject))
            .await
            .map_err(IntoResponse::into_response)
    }

    /// A console page: the signed-in line and the console's own navigation above `body`.
    pub fn page(&self, title: &str, here: &str, body: Markup) -> Response {
        let lang = self.lang;
        let w = |key| lang.page(key);
        let body = html! {
            div.meta {
                (explain::fill(w("console_signed_in_as"), &[("name", &self.caller.subject)]))
                form.inline method="post" action="/console/sign-out" {
                    (self.csrf_field())
                    button.secondary type="submit" { (w("desk_sign_out")) }
                }
            }
            nav.sub aria-label=(w("console_title")) {
                a href=(with_lang("/console", lang)) { (w("console_proposals")) }
                a href=(with_lang("/console/draft", lang)) { (w("console_new_draft")) }
                a href=(with_lang("/console/releases", lang)) { (w("console_releases")) }
            }
            (body)
        };
        html(page(lang, title, here, body))
    }

    /// A problem of the admin API's code path shown on a console page, with its status.
    pub fn problem(&self, title: &str, here: &str, problem: Problem) -> Response {
        let status = StatusCode::from_u16(problem.status).unwrap_or(StatusCode::BAD_REQUEST);
        let body = html! { p.error role="alert" { (problem_text(&problem)) } };
        let mut response = self.page(title, here, body);
        *response.status_mut() = status;
        response
    }
}

/// What a problem says: its detail, else its title, and each field it names.
pub fn problem_text(problem: &Problem) -> String {
    let mut text = problem
        .detail
        .clone()
        .unwrap_or_else(|| problem.title.to_string());
    for error in &problem.errors {
        text.push_str(&format!(" {}: {}.", error.pointer, error.detail));
    }
    text
}

/// `GET /console`: every proposal and decision (the newest first), and where to start a draft.
pub async fn home(console: Console) -> Response {
    let lang = console.lang;
    let w = |key| lang.page(key);
    let catalogue = &console.service.book().catalogue;
    let proposals = match crate::rules::proposals::list(&console.service.pool, HISTORY_ROWS).await {
        Ok(proposals) => proposals,
        Err(e) => return Problem::from(e).into_response(),
    };
    let body = html! {
        h2 { (w("console_history")) }
        @if proposals.is_empty() {
            p { (w("console_no_proposals")) }
        } @else {
            table {
                thead { tr {
                    th scope="col" { (w("console_proposal")) }
                    th scope="col" { (w("desk_scheme")) }
                    th scope="col" { (w("desk_rule_version")) }
                    th scope="col" { (w("console_author")) }
                    th scope="col" { (w("console_proposed_at")) }
                    th scope="col" { (w("console_status")) }
                    th scope="col" { (w("console_decided_by")) }
                } }
                tbody {
                    @for p in &proposals {
                        tr {
                            td { a href=(with_lang(&format!("/console/proposals/{}", p.proposal_id), lang)) { "#" (p.proposal_id) } }
                            td { (explain::scheme_name_in(catalogue, lang, &p.scheme_id, &p.scheme_id)) }
                            td { (p.rule_version) }
                            td { (p.author) }
                            td { (p.proposed_at) " UTC" }
                            td { (status_word(lang, &p.status)) }
                            td { (p.decided_by.as_deref().unwrap_or("")) }
                        }
                    }
                }
            }
        }
    };
    console.page(w("console_title"), "/console", body)
}

/// A proposal's status in words.
pub fn status_word(lang: explain::Language, status: &str) -> &'static str {
    lang.page(match status {
        "approved" => "console_status_approved",
        "rejected" => "console_status_rejected",
        "superseded" => "console_status_superseded",
        _ => "console_status_proposed",
    })
}
