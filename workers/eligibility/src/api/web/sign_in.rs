//! Signing in to an [`Area`] of the pages, the desk or the console (docs/web.md, "Signing in"):
//! OpenID Connect's authorization code flow with PKCE (RFC 7636, S256) against the configured
//! issuer, whose access token the API's own verifier must accept with the area's role; or, on a
//! development stack (an HS256 secret and no issuer), a form that mints a token of that role as
//! `eligibility api token` does.

use std::time::Duration;

use axum::Form;
use axum::extract::Query;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;
use serde::Deserialize;

use std::sync::Arc;

use axum::extract::{FromRequest, Request, State};

use super::session::{Area, SIGN_IN_SECONDS, Session, cookie, pkce_challenge, random, set_cookie};
use crate::api::auth::{Caller, Claims, Role, mint_hs256};
use crate::api::service::Service;
use crate::api::web::html;
use crate::api::web::lang::Visit;
use crate::api::web::layout::{page, with_lang};

/// How caseworkers and admins sign in.
#[derive(Debug, Clone, Default)]
pub struct SignInConfig {
    pub oidc: Option<Oidc>,
    pub development: Option<Development>,
}

impl SignInConfig {
    /// The origin (`scheme://host[:port]`) `area` is served at, where its redirect URL names
    /// it: a post's `Origin` must be it (behind a proxy the `Host` header may differ).
    pub fn public_origin(&self, area: Area) -> Option<String> {
        let url = reqwest::Url::parse(self.oidc.as_ref()?.redirect_url(area)?).ok()?;
        Some(url.origin().ascii_serialization())
    }
}

/// The OpenID Connect client of the desk and the console.
#[derive(Debug, Clone)]
pub struct Oidc {
    /// The issuer; its discovery document is `{issuer}/.well-known/openid-configuration`.
    pub issuer: String,
    pub client_id: String,
    /// For a confidential client (sent in the token request); none for a public one (PKCE).
    pub client_secret: Option<String>,
    /// `https://<this host>/desk/callback`, as registered with the issuer.
    pub redirect_url: String,
    /// `https://<admin host>/console/callback`, as registered with the issuer: where admins
    /// come back to the rules console; none: the console has no OpenID Connect sign-in.
    pub console_redirect_url: Option<String>,
    /// The scopes asked for (`openid` and whatever the issuer needs to give a token for this
    /// API).
    pub scope: String,
}

impl Oidc {
    /// Where the issuer sends a browser signing in to `area` back to.
    pub fn redirect_url(&self, area: Area) -> Option<&str> {
        if area == super::session::CONSOLE {
            self.console_redirect_url.as_deref()
        } else {
            Some(&self.redirect_url)
        }
    }
}

/// Tokens minted with the development secret: the local stack only, switched on by its own
/// setting, and answered only to a client on this machine.
#[derive(Clone)]
pub struct Development {
    pub secret: Vec<u8>,
    pub issuer: String,
    pub audience: String,
}

impl std::fmt::Debug for Development {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Development { secret: <hidden> }")
    }
}

/// How long a development sign-in lasts.
const DEVELOPMENT_SESSION_SECONDS: u64 = 8 * 3600;
/// The longest a sign-in waits for the issuer.
const ISSUER_TIMEOUT: Duration = Duration::from_secs(10);

/// The issuer's endpoints (OpenID Connect Discovery 1.0).
#[derive(Debug, Clone, Deserialize)]
struct Discovery {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
}

/// The token endpoint's answer.
#[derive(Debug, Deserialize)]
struct Tokens {
    access_token: String,
}

fn http() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            // Sign-ins are rare: no idle connection is kept, so none goes stale between a
            // sign-in's discovery and its code exchange (an issuer may close idle ones in 5 s).
            reqwest::Client::builder()
                .timeout(ISSUER_TIMEOUT)
                .pool_max_idle_per_host(0)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("an HTTP client")
        })
        .clone()
}

/// How long a discovery document is kept: sign-ins do not each ask the issuer for it.
const DISCOVERY_TTL: Duration = Duration::from_secs(3600);

/// The issuer's endpoints, from its discovery document (kept for [`DISCOVERY_TTL`]); the
/// document must name exactly the configured issuer.
async fn discover(oidc: &Oidc) -> anyhow::Result<Discovery> {
    static KEPT: std::sync::Mutex<Option<(std::time::Instant, String, Discovery)>> =
        std::sync::Mutex::new(None);
    if let Some((at, issuer, found)) = &*KEPT.lock().expect("not poisoned")
        && *issuer == oidc.issuer
        && at.elapsed() < DISCOVERY_TTL
    {
        return Ok(found.clone());
    }
    let found: Discovery = http()
        .get(format!(
            "{}/.well-known/openid-configuration",
            oidc.issuer.trim_end_matches('/')
        ))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    anyhow::ensure!(
        found.issuer == oidc.issuer,
        "the discovery document names issuer {:?}, not {:?}",
        found.issuer,
        oidc.issuer
    );
    *KEPT.lock().expect("not poisoned") = Some((
        std::time::Instant::now(),
        oidc.issuer.clone(),
        found.clone(),
    ));
    Ok(found)
}

/// `GET {area}/sign-in`: to the issuer, or the development form.
pub async fn start(
    area: Area,
    Visit { service, lang }: Visit,
    peer: Peer,
    headers: HeaderMap,
) -> Response {
    if let Err(problem) = area.reachable(&service, peer.0, &headers) {
        return problem.into_response();
    }
    let config = &service.sign_in;
    if let Some((oidc, redirect_url)) = config
        .oidc
        .as_ref()
        .and_then(|oidc| Some((oidc, oidc.redirect_url(area)?)))
    {
        let endpoints = match discover(oidc).await {
            Ok(endpoints) => endpoints,
            Err(e) => {
                tracing::warn!(error = %format!("{e:#}"), "the identity provider does not answer");
                return message(area, lang, StatusCode::BAD_GATEWAY, "desk_issuer_down");
            }
        };
        let (state, verifier) = (random(24), random(32));
        let url = reqwest::Url::parse_with_params(
            &endpoints.authorization_endpoint,
            &[
                ("response_type", "code"),
                ("client_id", oidc.client_id.as_str()),
                ("redirect_uri", redirect_url),
                ("scope", oidc.scope.as_str()),
                ("state", state.as_str()),
                ("code_challenge", pkce_challenge(&verifier).as_str()),
                ("code_challenge_method", "S256"),
                ("ui_locales", lang.code()),
                // A desk PC is shared: each sign-in asks for the caseworker's credentials, so
                // the issuer's own session never signs the next person in as the last.
                ("prompt", "login"),
            ],
        );
        return match url {
            Ok(url) => (
                [set_cookie(
                    area,
                    area.sign_in,
                    &format!("{state}.{verifier}.{}", lang.code()),
                    SIGN_IN_SECONDS,
                )],
                Redirect::to(url.as_str()),
            )
                .into_response(),
            Err(_) => message(area, lang, StatusCode::BAD_GATEWAY, "desk_issuer_down"),
        };
    }
    if config.development.is_some() && peer.0.ip().is_loopback() {
        let nonce = random(24);
        let w = |key| lang.page(key);
        let body = html! {
            p { (w(area.dev_intro)) }
            form method="post" action=(area.at("/sign-in")) {
                input type="hidden" name="lang" value=(lang.code());
                input type="hidden" name="nonce" value=(nonce);
                label for="subject" { (w("desk_dev_subject")) }
                input id="subject" name="subject" type="text" required autocomplete="username";
                @if area.role == Role::Caseworker {
                    label for="states" { (w("desk_dev_states")) }
                    input id="states" name="states" type="text" required;
                }
                div.actions { button type="submit" { (w("desk_sign_in")) } }
            }
        };
        return (
            [set_cookie(area, area.sign_in, &nonce, SIGN_IN_SECONDS)],
            html(page(lang, w("desk_sign_in"), &area.at("/sign-in"), body)),
        )
            .into_response();
    }
    unavailable(area, lang)
}

/// No sign-in of this kind here.
fn unavailable(area: Area, lang: explain::Language) -> Response {
    message(
        area,
        lang,
        StatusCode::NOT_FOUND,
        "desk_sign_in_unavailable",
    )
}

/// `POST {area}/sign-in`: the development form (its nonce also in the sign-in cookie: a page
/// of another site cannot post it).
pub async fn development(
    area: Area,
    Visit { service, lang }: Visit,
    peer: Peer,
    headers: HeaderMap,
    Form(form): Form<Vec<(String, String)>>,
) -> Response {
    if let Err(problem) = area.reachable(&service, peer.0, &headers) {
        return problem.into_response();
    }
    let Some(development) = service
        .sign_in
        .development
        .as_ref()
        .filter(|_| peer.0.ip().is_loopback())
    else {
        return unavailable(area, lang);
    };
    let field = |key: &str| {
        crate::api::web::form_value(&form, key)
            .map(str::trim)
            .unwrap_or_default()
    };
    let nonce = cookie(&headers, area.sign_in).unwrap_or_default();
    let states: Vec<String> = field("states")
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .take(40)
        .collect();
    let subject = field("subject");
    if nonce.is_empty()
        || field("nonce") != nonce
        || subject.is_empty()
        || (states.is_empty() && area.role == Role::Caseworker)
        || subject.len() > 128
    {
        return message(area, lang, StatusCode::FORBIDDEN, area.refused);
    }
    let now = now();
    let claims = Claims {
        sub: subject.to_string(),
        role: area.role,
        states,
        iss: development.issuer.clone(),
        aud: development.audience.clone(),
        exp: now + DEVELOPMENT_SESSION_SECONDS,
        nbf: Some(now),
    };
    match mint_hs256(&development.secret, &claims) {
        Ok(token) => signed_in(area, lang, &token, DEVELOPMENT_SESSION_SECONDS),
        Err(_) => message(area, lang, StatusCode::INTERNAL_SERVER_ERROR, area.refused),
    }
}

/// The TCP peer of a request (not a forwarded address: the development form answers only a
/// browser on this machine).
pub type Peer = axum::extract::ConnectInfo<std::net::SocketAddr>;

#[derive(Debug, Deserialize)]
pub struct Callback {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    state: Option<String>,
    /// The issuer of the answer (RFC 9207), where the issuer sends one: it must be exactly the
    /// configured issuer.
    #[serde(default)]
    iss: Option<String>,
}

/// `GET {area}/callback?code=&state=`: the issuer's answer: the state checked against the
/// sign-in cookie, the code exchanged with the PKCE verifier, the access token checked by the
/// API's verifier (the area's role; a caseworker's with its states).
pub async fn callback(
    area: Area,
    Visit { service, lang }: Visit,
    peer: Peer,
    headers: HeaderMap,
    Query(answer): Query<Callback>,
) -> Response {
    if let Err(problem) = area.reachable(&service, peer.0, &headers) {
        return problem.into_response();
    }
    let Some((oidc, redirect_url)) = service
        .sign_in
        .oidc
        .as_ref()
        .and_then(|oidc| Some((oidc, oidc.redirect_url(area)?)))
    else {
        return unavailable(area, lang);
    };
    let mut parts = cookie(&headers, area.sign_in)
        .unwrap_or_default()
        .split('.');
    let (state, verifier) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let lang = parts.next().and_then(|c| c.parse().ok()).unwrap_or(lang);
    let (Some(code), Some(returned)) = (answer.code, answer.state) else {
        return message(area, lang, StatusCode::FORBIDDEN, area.refused);
    };
    // The answer of another issuer (a mix-up attack, RFC 9207) is refused like a wrong state.
    let other_issuer = answer.iss.as_deref().is_some_and(|iss| iss != oidc.issuer);
    if state.is_empty() || returned != state || verifier.is_empty() || other_issuer {
        return message(area, lang, StatusCode::FORBIDDEN, area.refused);
    }
    let exchanged = async {
        let endpoints = discover(oidc).await?;
        let mut form = vec![
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", redirect_url),
            ("client_id", oidc.client_id.as_str()),
            ("code_verifier", verifier),
        ];
        if let Some(secret) = &oidc.client_secret {
            form.push(("client_secret", secret.as_str()));
        }
        let tokens: Tokens = http()
            .post(&endpoints.token_endpoint)
            .form(&form)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        anyhow::Ok(tokens)
    }
    .await;
    let tokens = match exchanged {
        Ok(tokens) => tokens,
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), area = area.path, "a sign-in's code exchange failed");
            return message(area, lang, StatusCode::BAD_GATEWAY, "desk_issuer_down");
        }
    };
    match service.verifier.verify(&tokens.access_token) {
        Ok(Caller { role, .. }) if role == area.role => signed_in(
            area,
            lang,
            &tokens.access_token,
            expires_in(&tokens.access_token).unwrap_or(0),
        ),
        Ok(_) => message(area, lang, StatusCode::FORBIDDEN, area.wrong_role),
        Err(reason) => {
            tracing::info!(%reason, area = area.path, "a sign-in's token was refused");
            message(area, lang, StatusCode::FORBIDDEN, area.refused)
        }
    }
}

/// The session cookie set, the sign-in cookie cleared, on to the area.
fn signed_in(area: Area, lang: explain::Language, token: &str, seconds: u64) -> Response {
    let mut response = Redirect::to(&with_lang(area.path, lang)).into_response();
    for (name, value) in [
        set_cookie(area, area.session, token, seconds),
        set_cookie(area, area.sign_in, "", 0),
    ] {
        response.headers_mut().append(name, value);
    }
    response
}

/// A page of `area` saying one thing (`key` of the page words), with `status`.
fn message(area: Area, lang: explain::Language, status: StatusCode, key: &str) -> Response {
    area.message(lang, status, key)
}

/// Seconds until a (verified) token's `exp`: the session cookie lasts exactly as long.
fn expires_in(token: &str) -> Option<u64> {
    use base64::Engine;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()?;
    let exp = serde_json::from_slice::<serde_json::Value>(&bytes).ok()?["exp"].as_u64()?;
    Some(exp.saturating_sub(now()))
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The sign-in routes of `area`: `{path}/sign-in` (GET: to the issuer or the development form;
/// POST: the development form), `{path}/callback` (the issuer's answer), `{path}/sign-out`.
pub fn routes(area: Area) -> axum::Router<Arc<Service>> {
    use axum::routing::{get, post};
    axum::Router::new()
        .route(
            &area.at("/sign-in"),
            get(move |visit: Visit, peer: Peer, headers: HeaderMap| {
                start(area, visit, peer, headers)
            })
            .post(
                move |visit: Visit,
                      peer: Peer,
                      headers: HeaderMap,
                      form: Form<Vec<(String, String)>>| {
                    development(area, visit, peer, headers, form)
                },
            ),
        )
        .route(
            &area.at("/callback"),
            get(
                move |visit: Visit, peer: Peer, headers: HeaderMap, answer: Query<Callback>| {
                    callback(area, visit, peer, headers, answer)
                },
            ),
        )
        .route(
            &area.at("/sign-out"),
            post(
                move |State(service): State<Arc<Service>>, request: Request| {
                    sign_out(area, service, request)
                },
            ),
        )
}

/// `POST {area}/sign-out`: the session cookie cleared (a CSRF-checked form).
async fn sign_out(area: Area, service: Arc<Service>, request: Request) -> Response {
    let (mut parts, body) = request.into_parts();
    let session = match Session::of(area, &mut parts, &service).await {
        Ok(session) => session,
        Err(response) => return response,
    };
    let headers = parts.headers.clone();
    let form =
        Form::<Vec<(String, String)>>::from_request(Request::from_parts(parts, body), &service)
            .await
            .map(|Form(form)| form)
            .unwrap_or_default();
    if let Some(refused) = session.refusal(&headers, &form) {
        return refused;
    }
    (
        [set_cookie(area, area.session, "", 0)],
        Redirect::to(&with_lang("/", session.lang)),
    )
        .into_response()
}
