//! The web pages (docs/web.md), served by `eligibility api serve` under `/` beside the API:
//! HTML rendered on the server, every word from the language files, nothing loaded from another
//! host, no script needed.
//!
//! - [`lang`]: a page request, admitted against the client address's budget, in its language
//!   (`?lang=`, else the browser's `Accept-Language`).
//! - [`layout`]: the page shell (language switcher, navigation, right-to-left for Urdu), its
//!   inline stylesheet and its one small script.
//! - [`explorer`]: schemes by state, people served and kind of benefit; a scheme's conditions,
//!   benefit, documents, sources and versions in words.
//! - [`screener`]: the adaptive screener ([`crate::screening`]): a few facts, then only the
//!   questions that can still change a verdict, then the results grouped.
//! - [`session`], [`sign_in`]: the signed-in areas (the desk, the console): their session
//!   cookie and CSRF token; OpenID Connect, or a development form.
//! - [`desk`]: the caseworker desk: a citizen's stored verdicts, gaps and audit history, a
//!   re-evaluation.
//! - [`console`]: the rules console (admins, on the admin listener): a rule change drafted,
//!   its impact on the stored population, its review, and the releases.

pub mod console;
pub mod desk;
pub mod explorer;
pub mod lang;
pub mod layout;
pub mod screener;
pub mod session;
pub mod sign_in;

use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use crate::api::service::Service;

/// The pages' content security policy: their inline stylesheet (by its hash: one round trip
/// fewer before the first paint on a slow network), their own script (which may ask only this
/// host: the console draft's live check), forms posted only here, never framed.
pub fn content_security_policy() -> &'static str {
    static POLICY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    POLICY.get_or_init(|| {
        use base64::Engine;
        use sha2::{Digest, Sha256};
        let hash = base64::engine::general_purpose::STANDARD
            .encode(Sha256::digest(layout::STYLESHEET.as_bytes()));
        format!(
            "default-src 'none'; style-src 'sha256-{hash}'; script-src 'self'; img-src 'self'; \
             connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
        )
    })
}

/// The public pages' and the desk's routes (the API's router adds them on its main listener).
pub fn routes() -> Router<Arc<Service>> {
    Router::new()
        .route("/", get(explorer::home))
        .route("/schemes", get(explorer::list))
        .route("/schemes/{scheme_id}", get(explorer::scheme))
        .route("/check", get(screener::start).post(screener::step))
        .route("/assets/page.js", get(script))
        .merge(desk::routes())
}

/// The rules console's routes, with the pages' script: on the admin listener where there is
/// one (docs/web.md, "The rules console").
pub fn console_routes() -> Router<Arc<Service>> {
    Router::new()
        .route("/assets/page.js", get(script))
        .merge(console::routes())
}

/// An HTML page with the pages' security policy.
pub fn html(markup: maud::Markup) -> Response {
    let mut response = Html(markup.into_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_str(content_security_policy()).expect("an ASCII policy"),
    );
    // No referrer leaves for another site (an apply portal, a source); the pages' own forms
    // carry their true `Origin` (with `no-referrer` a browser sends `Origin: null`), which the
    // desk checks on every state-changing request.
    response.headers_mut().insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    response
}

/// `path` with the query `pairs`, each encoded (a user id or a filter value never reads as
/// another parameter).
pub fn with_query(path: &str, pairs: &[(&str, &str)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (key, value) in pairs {
        query.append_pair(key, value);
    }
    format!("{path}?{}", query.finish())
}

/// A verdict in the page's words.
pub fn verdict_word(lang: explain::Language, verdict: engine::Verdict) -> &'static str {
    use engine::Verdict;
    lang.page(match verdict {
        Verdict::Eligible => "desk_verdict_eligible",
        Verdict::PartialMatch => "desk_verdict_partial_match",
        Verdict::NotEligible => "desk_verdict_not_eligible",
        Verdict::NotApplicable => "desk_verdict_not_applicable",
    })
}

/// A verdict's stored name (`ELIGIBLE`, as the audit log and the diffs hold it) in the page's
/// words; a name that is no verdict's as it is.
pub fn verdict_name_word(lang: explain::Language, name: &str) -> &str {
    engine::Verdict::from_name(name).map_or(name, |v| verdict_word(lang, v))
}

/// The first value of `key` in a posted form.
pub fn form_value<'a>(form: &'a [(String, String)], key: &str) -> Option<&'a str> {
    form.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// A page saying one thing (the page word `key`) under `title`, with `status`: the pages'
/// errors are pages in the reader's language, not the API's JSON problems.
pub fn message(
    lang: explain::Language,
    status: axum::http::StatusCode,
    title: &str,
    key: &str,
) -> Response {
    let body = maud::html! { p role="alert" { (lang.page(key)) } };
    let mut response = html(layout::page(lang, lang.page(title), "/", body));
    *response.status_mut() = status;
    response
}

async fn script() -> Response {
    asset("text/javascript; charset=utf-8", layout::SCRIPT)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}
