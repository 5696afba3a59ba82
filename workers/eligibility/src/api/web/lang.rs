//! A page request: admitted against the client address's `public` budget (docs/web.md; over it,
//! a page in the reader's language saying when to try again), in the page's language:
//! `?lang=<code>` (the switcher's links), else the first language of the browser's
//! `Accept-Language` the pages speak, else English.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::header::{ACCEPT_LANGUAGE, RETRY_AFTER};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use explain::Language;

use crate::api::limits::Class;
use crate::api::problem::Problem;
use crate::api::service::Service;

/// A page request, admitted: what it is served from, and in which language.
pub struct Visit {
    pub service: Arc<Service>,
    pub lang: Language,
}

impl FromRequestParts<Arc<Service>> for Visit {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        service: &Arc<Service>,
    ) -> Result<Visit, Response> {
        let Ok(Lang(lang)) = Lang::from_request_parts(parts, service).await;
        let client = ConnectInfo::<SocketAddr>::from_request_parts(parts, service)
            .await
            .map_err(|_| Problem::not_found().into_response())?;
        if let Err(problem) = service
            .admit_anonymous(Class::Public, client.ip(), &parts.headers)
            .await
        {
            return Err(match problem.retry_after_seconds {
                Some(seconds) => busy(lang, seconds),
                None => problem.into_response(),
            });
        }
        Ok(Visit {
            service: service.clone(),
            lang,
        })
    }
}

/// The page of a request over the address's budget (429): in the reader's language, saying
/// when to try again, with `Retry-After` (docs/web.md, "How they are built").
fn busy(lang: Language, seconds: u64) -> Response {
    let text = explain::fill(lang.page("busy"), &[("seconds", &seconds.to_string())]);
    let body = maud::html! { p role="alert" { (text) } };
    let mut response = super::html(super::layout::page(
        lang,
        lang.page("busy_title"),
        "/",
        body,
    ));
    *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(seconds));
    response
}

/// The language a page is rendered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lang(pub Language);

impl<S: Send + Sync> FromRequestParts<S> for Lang {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Lang, Self::Rejection> {
        let asked = parts.uri.query().and_then(|query| {
            query
                .split('&')
                .filter_map(|pair| pair.split_once('='))
                .find(|(key, _)| *key == "lang")
                .and_then(|(_, code)| code.parse().ok())
        });
        let accepted = || {
            parts
                .headers
                .get(ACCEPT_LANGUAGE)
                .and_then(|v| v.to_str().ok())
                .and_then(from_accept_language)
        };
        Ok(Lang(asked.or_else(accepted).unwrap_or(Language::En)))
    }
}

/// The first language of an `Accept-Language` header (in its order of preference) that the
/// pages speak: `hi-IN,hi;q=0.9,en;q=0.8` → Hindi.
pub fn from_accept_language(header: &str) -> Option<Language> {
    let mut ranked: Vec<(f32, usize, &str)> = header
        .split(',')
        .enumerate()
        .filter_map(|(order, item)| {
            let mut parts = item.trim().split(';');
            let tag = parts.next()?.trim();
            let q = parts
                .find_map(|p| p.trim().strip_prefix("q="))
                .map_or(Some(1.0), |q| q.parse::<f32>().ok())?;
            Some((q, order, tag))
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked.into_iter().find_map(|(q, _, tag)| {
        let primary = tag.split('-').next()?.to_ascii_lowercase();
        (q > 0.0).then(|| primary.parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_browsers_first_spoken_language_is_chosen() {
        assert_eq!(
            from_accept_language("hi-IN,hi;q=0.9,en;q=0.8"),
            Some(Language::Hi)
        );
        assert_eq!(
            from_accept_language("fr;q=0.9,ur;q=0.5"),
            Some(Language::Ur)
        );
        assert_eq!(
            from_accept_language("en;q=0.2,ta;q=0.8"),
            Some(Language::Ta)
        );
        assert_eq!(from_accept_language("fr, de"), None);
        assert_eq!(from_accept_language("ta;q=0"), None);
    }
}
