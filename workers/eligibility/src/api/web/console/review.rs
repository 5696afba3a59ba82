//! A proposal under review (docs/web.md, "The rules console"): what it changes in words against
//! the version before it, its impact on the stored population (the population diff, computed
//! by a job off the request path) as charts with their tables, its author and reason, and the
//! decision form: a second admin approves or rejects with a reason, through the admin API's own
//! code path (its author is refused: four eyes).

use axum::Form;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use engine::Rule;
use maud::{Markup, html};
use serde_json::Value;

use super::Console;
use super::charts::{Bar, Tone, bar_chart};
use crate::api::problem::Problem;
use crate::api::proposals::{Decision, decide_as, find};
use crate::api::web::layout::with_lang;
use crate::api::web::{form_value, verdict_name_word};
use crate::rules::jobs;
use crate::rules::proposals::Proposal;

/// How often a page waiting for its impact reloads itself (seconds).
const RELOAD_SECONDS: u32 = 2;

/// `GET /console/proposals/{id}`.
pub async fn proposal(console: Console, Path(id): Path<i64>) -> Response {
    page(&console, id, None).await
}

/// The proposal page, with `refused` (a decision the API's checks refused) above it.
async fn page(console: &Console, id: i64, refused: Option<Problem>) -> Response {
    let lang = console.lang;
    let w = |key| lang.page(key);
    let here = format!("/console/proposals/{id}");
    let title = explain::fill(w("console_proposal_title"), &[("id", &id.to_string())]);
    let proposal = match find(&console.service, id).await {
        Ok(proposal) => proposal,
        Err(problem) => return console.problem(&title, &here, problem),
    };
    let job = if proposal.simulation.is_none() {
        jobs::of_proposal(&console.service.pool, id)
            .await
            .ok()
            .flatten()
    } else {
        None
    };
    let status = refused.as_ref().map(|p| p.status);
    let body = html! {
        @if let Some(problem) = &refused {
            p.error role="alert" { (super::problem_text(problem)) }
        }
        (summary(console, &proposal))
        h2 { (w("console_changes")) }
        (changes(console, &proposal))
        h2 { (w("console_impact")) }
        @match (&proposal.simulation, &job) {
            (Some(diff), _) => (impact(console, diff)),
            (None, Some(job)) if job.status == "failed" => {
                p.error role="alert" { (w("console_impact_failed")) " " (job.error.clone().unwrap_or_default()) }
            }
            (None, Some(_)) => {
                meta http-equiv="refresh" content=(RELOAD_SECONDS);
                p role="status" { (w("console_impact_running")) }
            }
            (None, None) => p { (w("console_impact_none")) },
        }
        h2 { (w("console_decision")) }
        (decision(console, &proposal))
    };
    let mut response = console.page(&title, &here, body);
    if let Some(status) = status.and_then(|s| StatusCode::from_u16(s).ok()) {
        *response.status_mut() = status;
    }
    response
}

/// Who proposed what, when, and why; its status.
fn summary(console: &Console, proposal: &Proposal) -> Markup {
    let lang = console.lang;
    let w = |key| lang.page(key);
    let catalogue = &console.service.book().catalogue;
    html! {
        dl.facts {
            dt { (w("desk_scheme")) }
            dd { a href=(with_lang(&format!("/schemes/{}", proposal.scheme_id), lang)) { (explain::scheme_name_in(catalogue, lang, &proposal.scheme_id, &proposal.scheme_id)) } }
            dt { (w("desk_rule_version")) }
            dd { (proposal.rule_version) " (" code { (proposal.rule_id) } ")" }
            dt { (w("console_author")) }
            dd { (proposal.author) " · " (proposal.proposed_at) " UTC" }
            dt { (w("console_reason")) }
            dd { (proposal.reason.as_deref().unwrap_or("—")) }
            dt { (w("console_status")) }
            dd data-status=(proposal.status) { (super::status_word(lang, &proposal.status)) }
            @if let Some(by) = &proposal.decided_by {
                dt { (w("console_decided_by")) }
                dd { (by) " · " (proposal.decided_at.as_deref().unwrap_or("")) " UTC — " (proposal.decision_reason.as_deref().unwrap_or("")) }
            }
        }
    }
}

/// The change in words: the proposal against the scheme's version before it (its highest
/// stored version below the proposal's).
fn changes(console: &Console, proposal: &Proposal) -> Markup {
    let lang = console.lang;
    let w = |key| lang.page(key);
    let book = console.service.book();
    let catalogue = &book.catalogue;
    let Ok(new) = engine::load::parse_rule_yaml(catalogue, &proposal.rule_yaml, "proposal") else {
        return html! { p.error { (w("console_unreadable")) } };
    };
    let old: Option<&Rule> = book
        .rules
        .rules
        .iter()
        .filter(|r| r.scheme_id == proposal.scheme_id && r.version < new.version)
        .max_by_key(|r| r.version);
    let Some(old) = old else {
        return html! { p { (w("console_new_scheme")) } };
    };
    let lines = explain::changes(old, &new, catalogue, lang);
    html! {
        p.meta { (explain::fill(w("console_against"), &[("version", &old.version.to_string())])) }
        @if lines.is_empty() {
            p { (w("console_no_change")) }
        } @else {
            ul.changes { @for line in &lines { li { (line) } } }
        }
    }
}

/// A count of a diff as admins see it (`rules::simulate::cell`): a number, or `"<10"`
/// (withheld): its bar's length (none where withheld) and its words.
pub fn count(value: &Value) -> (Option<f64>, String) {
    match value {
        Value::Number(n) => (
            n.as_f64(),
            engine::format::indian_number(n.as_f64().unwrap_or(0.0)),
        ),
        Value::String(s) => (None, s.clone()),
        _ => (None, String::new()),
    }
}

/// The population diff (as admins see it: counts only, small cells withheld, no user id) as
/// charts: per state and scheme the verdict transitions, the monthly outlay before and after,
/// the gaps that newly block people; and the conflicts the change brings.
fn impact(console: &Console, diff: &Value) -> Markup {
    let lang = console.lang;
    let w = |key| lang.page(key);
    let catalogue = &console.service.book().catalogue;
    let (_, citizens) = count(&diff["citizens"]);
    let state_name = |state: &str| crate::api::web::explorer::state_name(catalogue, lang, state);
    let mut transitions = Vec::new();
    let mut outlay = Vec::new();
    let mut gaps = Vec::new();
    let schemes = diff["schemes"].as_object();
    let several = schemes.is_some_and(|s| s.len() > 1);
    for (scheme, states) in schemes.into_iter().flatten() {
        let prefix = if several {
            format!(
                "{} · ",
                explain::scheme_name_in(catalogue, lang, scheme, scheme)
            )
        } else {
            String::new()
        };
        for (state, cell) in states.as_object().into_iter().flatten() {
            let place = format!("{prefix}{}", state_name(state));
            for (transition, n) in cell["transitions"].as_object().into_iter().flatten() {
                let Some((from, to)) = transition.split_once("->") else {
                    continue;
                };
                if from == to {
                    continue;
                }
                let (value, shown) = count(n);
                transitions.push(Bar {
                    label: format!(
                        "{place}: {} → {}",
                        verdict_name_word(lang, from),
                        verdict_name_word(lang, to)
                    ),
                    value,
                    shown,
                    tone: Tone::of_transition(Some(from), to),
                });
            }
            for (key, word, tone) in [
                ("monthly_outlay_before_inr", "console_before", Tone::Neutral),
                ("monthly_outlay_after_inr", "console_after", Tone::Gain),
            ] {
                let money = cell[key].as_f64();
                outlay.push(Bar {
                    label: format!("{place}: {}", w(word)),
                    value: money,
                    shown: money
                        .map_or_else(|| w("console_withheld").to_string(), engine::format::rupees),
                    tone,
                });
            }
            for (field, n) in cell["newly_blocking_gaps"]
                .as_object()
                .into_iter()
                .flatten()
            {
                let label = catalogue.id(field).map_or_else(
                    || field.clone(),
                    |id| lang.label(catalogue.field(id)).to_string(),
                );
                let (value, shown) = count(n);
                gaps.push(Bar {
                    label: format!("{place}: {label}"),
                    value,
                    shown,
                    tone: Tone::Neutral,
                });
            }
        }
    }
    let conflicts: &[Value] = diff["conflicts_introduced"]
        .as_array()
        .map_or(&[], Vec::as_slice);
    html! {
        p { (explain::fill(w("console_impact_over"), &[("citizens", &citizens), ("date", diff["as_of"].as_str().unwrap_or_default())])) }
        p.meta { (w("console_small_cells")) }
        h3 { (w("console_transitions")) }
        @if transitions.is_empty() {
            p { (w("console_no_transitions")) }
        } @else {
            (bar_chart("transitions", w("console_transitions"), (w("console_change"), w("console_citizens")), &transitions))
        }
        h3 { (w("console_outlay")) }
        (bar_chart("outlay", w("console_outlay"), (w("console_when"), w("console_rupees_a_month")), &outlay))
        h3 { (w("console_gaps")) }
        @if gaps.is_empty() {
            p { (w("console_no_gaps")) }
        } @else {
            (bar_chart("gaps", w("console_gaps"), (w("console_gap"), w("console_citizens")), &gaps))
        }
        h3 { (w("console_conflicts")) }
        @if conflicts.is_empty() {
            p { (w("console_no_conflicts")) }
        } @else {
            ul { @for c in conflicts {
                li { code { (c["conflict_type"].as_str().unwrap_or_default()) } " — " (c["rule_ids"].as_array().map(|ids| ids.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")).unwrap_or_default()) }
            } }
        }
    }
}

/// The decision form (an open proposal), or the decision taken.
fn decision(console: &Console, proposal: &Proposal) -> Markup {
    let lang = console.lang;
    let w = |key| lang.page(key);
    if proposal.status != "proposed" {
        return html! { p { (super::status_word(lang, &proposal.status)) } };
    }
    html! {
        @if proposal.author == console.caller.subject {
            p.meta { (w("console_own_proposal")) }
        }
        form method="post" action=(format!("/console/proposals/{}/decision", proposal.proposal_id)) {
            (console.csrf_field())
            input type="hidden" name="lang" value=(lang.code());
            label for="reason" { (w("console_decision_reason")) }
            textarea id="reason" name="reason" rows="3" required {}
            div.actions {
                button type="submit" name="decision" value="approve" { (w("console_approve")) }
                button.secondary type="submit" name="decision" value="reject" { (w("console_reject")) }
            }
        }
    }
}

/// `POST /console/proposals/{id}/decision`: approve or reject, as the admin API's decision
/// route (its `admin` budget, its checks); refused: the proposal page saying why.
pub async fn decide(
    console: Console,
    Path(id): Path<i64>,
    headers: HeaderMap,
    Form(form): Form<Vec<(String, String)>>,
) -> Response {
    if let Some(refused) = console.refusal(&headers, &form) {
        return refused;
    }
    if let Err(refused) = console.admit_change().await {
        return refused;
    }
    let decision = match form_value(&form, "decision") {
        Some("approve") => Decision::Approve,
        Some("reject") => Decision::Reject,
        _ => {
            return page(
                &console,
                id,
                Some(crate::api::body::field_error(
                    "/decision",
                    "approve or reject",
                )),
            )
            .await;
        }
    };
    let reason = form_value(&form, "reason").unwrap_or_default();
    match decide_as(&console.service, &console.caller, id, decision, reason).await {
        Ok(_) => Redirect::to(&with_lang(
            &format!("/console/proposals/{id}"),
            console.lang,
        ))
        .into_response(),
        Err(problem) => page(&console, id, Some(problem)).await,
    }
}
