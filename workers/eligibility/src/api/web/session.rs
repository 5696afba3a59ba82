//! The signed-in parts of the pages (docs/web.md, "Signing in"): the caseworker desk and the
//! rules console, each an [`Area`] with its own path, cookies and role. The session is the API
//! token itself in a cookie the page's script cannot read (`HttpOnly`), sent only over HTTPS
//! (`Secure`) and not with cross-site subrequests or posts (`SameSite=Lax`), limited to the
//! area's path and to the token's own lifetime; every state-changing form carries a CSRF token
//! bound to that session.

use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::header::{COOKIE, HOST, ORIGIN, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use explain::Language;
use sha2::{Digest, Sha256};

use super::lang::Visit;
use super::layout::with_lang;
use crate::api::auth::{Caller, Role};
use crate::api::limits::{Class, Key};
use crate::api::problem::Problem;
use crate::api::service::Service;

/// A part of the pages behind a sign-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Area {
    /// Its path (`/desk`): its pages, its sign-in (`{path}/sign-in`, `{path}/callback`,
    /// `{path}/sign-out`) and its cookies' `Path`.
    pub path: &'static str,
    /// The session cookie: the API token itself.
    pub session: &'static str,
    /// The sign-in's own cookie: the OIDC `state` and PKCE verifier, or the development form's
    /// nonce, for the few minutes a sign-in takes.
    pub sign_in: &'static str,
    /// The role its tokens must have.
    pub role: Role,
    /// Its page words: its title, the refusal of a token with another role, the refusal of a
    /// request (a wrong CSRF token, a sign-in that does not hold), the development form's
    /// introduction.
    pub title: &'static str,
    pub wrong_role: &'static str,
    pub refused: &'static str,
    pub dev_intro: &'static str,
    /// Only clients in the admin networks reach it, its sign-in included (anyone else gets the
    /// same 404 as the admin API's).
    pub admin_networks_only: bool,
}

/// The caseworker desk.
pub const DESK: Area = Area {
    path: "/desk",
    session: "eligibility_desk",
    sign_in: "eligibility_desk_sign_in",
    role: Role::Caseworker,
    title: "desk_title",
    wrong_role: "desk_not_caseworker",
    refused: "desk_refused",
    dev_intro: "desk_dev_intro",
    admin_networks_only: false,
};

/// The rules console.
pub const CONSOLE: Area = Area {
    path: "/console",
    session: "eligibility_console",
    sign_in: "eligibility_console_sign_in",
    role: Role::Admin,
    title: "console_title",
    wrong_role: "console_not_admin",
    refused: "console_refused",
    dev_intro: "console_dev_intro",
    admin_networks_only: true,
};

impl Area {
    /// `{path}{rest}`: one of the area's own paths.
    pub fn at(self, rest: &str) -> String {
        format!("{}{rest}", self.path)
    }

    /// Whether a client at `peer` (behind trusted proxies: the address they name) may reach
    /// the area; else [`Problem::not_found`].
    pub fn reachable(
        self,
        service: &Service,
        peer: std::net::SocketAddr,
        headers: &HeaderMap,
    ) -> Result<(), Problem> {
        let allowed = !self.admin_networks_only || service.in_admin_networks(peer.ip(), headers);
        if allowed {
            Ok(())
        } else {
            Err(Problem::not_found())
        }
    }

    /// A page of the area saying one thing (`key` of the page words), with `status`.
    pub fn message(self, lang: Language, status: StatusCode, key: &str) -> Response {
        super::message(lang, status, self.title, key)
    }
}

/// How long a sign-in may take.
pub const SIGN_IN_SECONDS: u64 = 600;

/// A signed-in request of an area: admitted against the client address's `public` budget
/// (as every page, before any token is checked), its session token verified by the API's own
/// verifier with the area's role, then admitted against the caller's own `read` budget, as
/// the API's reads are.
pub struct Session {
    pub service: Arc<Service>,
    pub lang: Language,
    pub caller: Caller,
    /// The session's token, for its CSRF token.
    pub session: String,
    pub area: Area,
}

impl Session {
    /// The session of a request to `area`; not signed in: a redirect to the sign-in; a token
    /// of another role: refused.
    pub async fn of(
        area: Area,
        parts: &mut Parts,
        service: &Arc<Service>,
    ) -> Result<Session, Response> {
        let peer = ConnectInfo::<std::net::SocketAddr>::from_request_parts(parts, service)
            .await
            .map_err(|_| Problem::not_found().into_response())?;
        area.reachable(service, peer.0, &parts.headers)
            .map_err(IntoResponse::into_response)?;
        let Visit { service, lang } = Visit::from_request_parts(parts, service)
            .await
            .map_err(IntoResponse::into_response)?;
        let session = cookie(&parts.headers, area.session)
            .unwrap_or_default()
            .to_string();
        let caller = match service.verifier.verify(&session) {
            Ok(caller) if caller.role == area.role => caller,
            Ok(_) => return Err(area.message(lang, StatusCode::FORBIDDEN, area.wrong_role)),
            Err(_) => {
                return Err(Redirect::to(&with_lang(&area.at("/sign-in"), lang)).into_response());
            }
        };
        service
            .limits
            .admit(Class::Read, Key::Caller(&caller.subject))
            .await
            .map_err(IntoResponse::into_response)?;
        Ok(Session {
            service,
            lang,
            caller,
            session,
            area,
        })
    }

    /// The refusal page for a state-changing post whose CSRF token or origin does not hold
    /// (docs/web.md, "Signing in"); `None`: it may proceed.
    pub fn refusal(&self, headers: &HeaderMap, form: &[(String, String)]) -> Option<Response> {
        let origin = self.service.sign_in.public_origin(self.area);
        let token = super::form_value(form, "csrf");
        let holds = csrf_holds(headers, origin.as_deref(), &self.session, token);
        (!holds).then(|| {
            self.area
                .message(self.lang, StatusCode::FORBIDDEN, self.area.refused)
        })
    }

    /// The hidden CSRF field of a state-changing form.
    pub fn csrf_field(&self) -> maud::Markup {
        maud::html! { input type="hidden" name="csrf" value=(csrf_token(&self.session)); }
    }
}

/// The value of cookie `name` in a request.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// A `Set-Cookie` header for the area's cookie `name`, for `max_age_seconds` (0: delete it).
pub fn set_cookie(
    area: Area,
    name: &str,
    value: &str,
    max_age_seconds: u64,
) -> (axum::http::HeaderName, HeaderValue) {
    let header = format!(
        "{name}={value}; Path={}; Max-Age={max_age_seconds}; HttpOnly; Secure; SameSite=Lax",
        area.path
    );
    (
        SET_COOKIE,
        HeaderValue::from_str(&header).expect("cookie values are base64 or JWT characters"),
    )
}

/// The CSRF token of a session: a digest of its token, which a page from another site can
/// neither read (the cookie is `HttpOnly`, and another origin cannot read this page) nor
/// derive.
pub fn csrf_token(session: &str) -> String {
    let digest = Sha256::digest(format!("eligibility-desk-csrf\0{session}").as_bytes());
    URL_SAFE_NO_PAD.encode(&digest[..24])
}

/// Whether a state-changing request may proceed: its form's `csrf` is the session's token
/// (compared in constant time), and an `Origin` it names is the desk's: `public_origin` where
/// configured (behind a proxy), else this request's host. (A client that sends no `Origin` —
/// browsers send one with every post — still needs the token.)
pub fn csrf_holds(
    headers: &HeaderMap,
    public_origin: Option<&str>,
    session: &str,
    sent: Option<&str>,
) -> bool {
    let expected = csrf_token(session);
    let Some(sent) = sent else { return false };
    let same = sent.len() == expected.len()
        && sent
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    same && same_origin(headers, public_origin)
}

/// An `Origin` header, where the browser sends one, names the pages' own origin.
fn same_origin(headers: &HeaderMap, public_origin: Option<&str>) -> bool {
    let Some(origin) = headers.get(ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    match public_origin {
        Some(expected) => origin == expected,
        None => {
            let host = headers
                .get(HOST)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            origin
                .split_once("://")
                .is_some_and(|(_, rest)| rest == host)
        }
    }
}

/// A random value for a URL or a cookie: `bytes` random bytes, base64url.
pub fn random(bytes: usize) -> String {
    use rand::RngCore;
    let mut buffer = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buffer);
    URL_SAFE_NO_PAD.encode(buffer)
}

/// The PKCE `code_challenge` of a verifier (method S256, RFC 7636).
pub fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        map
    }

    #[test]
    fn the_csrf_token_is_bound_to_the_session_and_the_origin() {
        let token = csrf_token("session-a");
        let here = headers(&[
            ("host", "desk.example:8080"),
            ("origin", "https://desk.example:8080"),
        ]);
        assert!(csrf_holds(&here, None, "session-a", Some(&token)));
        assert!(
            !csrf_holds(&here, None, "session-b", Some(&token)),
            "another session's token"
        );
        assert!(!csrf_holds(&here, None, "session-a", None), "no token");
        assert!(
            !csrf_holds(&here, None, "session-a", Some("x")),
            "a wrong one"
        );
        let elsewhere = headers(&[
            ("host", "desk.example:8080"),
            ("origin", "https://evil.example"),
        ]);
        assert!(
            !csrf_holds(&elsewhere, None, "session-a", Some(&token)),
            "another origin"
        );
        // Behind a proxy the Host is the upstream's; the configured origin decides.
        let proxied = headers(&[
            ("host", "10.0.0.7:8080"),
            ("origin", "https://desk.example"),
        ]);
        assert!(csrf_holds(
            &proxied,
            Some("https://desk.example"),
            "session-a",
            Some(&token)
        ));
        assert!(!csrf_holds(&proxied, None, "session-a", Some(&token)));
    }

    #[test]
    fn cookies_are_read_by_name_and_set_with_every_flag() {
        let h = headers(&[("cookie", "a=1; eligibility_desk=tok.en; b=2")]);
        assert_eq!(cookie(&h, DESK.session), Some("tok.en"));
        assert_eq!(cookie(&h, "c"), None);
        let (_, value) = set_cookie(CONSOLE, CONSOLE.session, "tok.en", 60);
        assert!(
            value.to_str().unwrap().contains("Path=/console;"),
            "{value:?}"
        );
        let (_, value) = set_cookie(DESK, DESK.session, "tok.en", 60);
        let value = value.to_str().unwrap();
        for flag in [
            "HttpOnly",
            "Secure",
            "SameSite=Lax",
            "Path=/desk",
            "Max-Age=60",
        ] {
            assert!(value.contains(flag), "{value}");
        }
    }

    #[test]
    fn the_pkce_challenge_is_rfc_7636s() {
        // RFC 7636, appendix B.
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}
