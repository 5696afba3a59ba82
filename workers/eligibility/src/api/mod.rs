//! `eligibility api`: the HTTP service portals, caseworker desks and citizen apps call
//! (docs/api.md). Stateless: it reads the Redis cache first and PostgreSQL second, re-derives
//! full evaluations with the engine, and asks the fleet for re-evaluations over Kafka.
//!
//! - [`auth`]: JWT bearer tokens, roles and who may see which user.
//! - [`client`]: the client's address behind trusted proxies.
//! - [`limits`]: rate limits per caller and per client address, shared by the replicas.
//! - [`body`], [`problem`]: strict request bodies and RFC 9457 problem responses.
//! - [`service`]: what requests share, and their admission.
//! - [`citizens`], [`rules`], [`proposals`]: the routes; [`jobs`]: population diffs run off the
//!   request path; [`openapi`]: the routes' generated OpenAPI document.
//! - [`web`]: the web pages under `/` (scheme explorer, adaptive screener, caseworker desk,
//!   rules console; docs/web.md).

pub mod auth;
pub mod body;
pub mod citizens;
pub mod client;
pub mod jobs;
pub mod limits;
pub mod openapi;
pub mod problem;
pub mod proposals;
pub mod rules;
pub mod service;
pub mod web;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{MethodRouter, get, post};

use self::auth::Verifier;
use self::client::Networks;
use self::limits::LimitConfig;
use self::service::Service;

/// What `api serve` is given beyond a worker's configuration.
pub struct ApiConfig {
    /// Listen address of the API.
    pub addr: SocketAddr,
    /// Serve the admin routes only on this address; None: on `addr`.
    pub admin_addr: Option<SocketAddr>,
    /// Client networks allowed on the admin routes; empty: none.
    pub admin_networks: Networks,
    /// Peers whose `Forwarded` / `X-Forwarded-For` headers name the client (docs/api.md,
    /// "Client address"); empty: the TCP peer is the client.
    pub trusted_proxies: Networks,
    /// How tokens are checked.
    pub verifier: Verifier,
    /// Requests per minute per caller / per client address, by class of route.
    pub limits: LimitConfig,
    /// How caseworkers sign in to the web desk.
    pub sign_in: web::sign_in::SignInConfig,
}

/// Serves the API until `shutdown` (docs/api.md): health and readiness on
/// `config.http_addr`, the routes on `api.addr` (the admin routes apart on `api.admin_addr`
/// when given), the rules reloaded every [`service::RULES_REFRESH`].
pub async fn serve(
    config: fleet::config::Config,
    api: ApiConfig,
    shutdown: fleet::shutdown::Shutdown,
) -> Result<()> {
    let health = fleet::http::start(config.http_addr, shutdown.clone()).await?;
    // Forced re-evaluations, proposals' diffs and approved rule versions.
    let topics = [
        fleet::topics::PROFILE_ASSEMBLED,
        fleet::topics::RULE_SIMULATION_COMPLETED,
        fleet::topics::POLICY_RULES_UPDATED,
    ]
    .map(str::to_string);
    let connections = fleet::connect::Connections::open(&config, 16, &topics).await?;
    let service = Service::new(
        connections,
        api.verifier,
        &api.limits,
        api.admin_networks,
        api.trusted_proxies,
        api.sign_in,
    )
    .await?;
    health.dependencies_answered();
    // Readiness follows Redis for as long as the API serves.
    let _cache_watch = fleet::connect::watch_cache(service.cache.clone(), health.clone());
    health.set_ready();
    tokio::spawn(jobs::run(service.clone(), shutdown.clone()));
    let refresher = service.clone();
    let refresh_shutdown = shutdown.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(service::RULES_REFRESH);
        while !refresh_shutdown.requested() {
            tick.tick().await;
            health.heartbeat();
            refresher.limits.prune();
            match refresher.refresh_rules().await {
                Ok(()) => health.dependencies_answered(),
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), "reloading the rules failed")
                }
            }
        }
    });
    let separate_admin = api.admin_addr.is_some();
    let main = listen(
        api.addr,
        router(service.clone(), !separate_admin),
        shutdown.clone(),
        "ELIGIBILITY_API_ADDR",
    );
    match api.admin_addr {
        // Both listeners at once (each future runs only when polled: one after the other would
        // open the admin port only once the main one closed).
        Some(addr) => {
            let admin = router_of(
                service.clone(),
                routes().into_iter().filter(|r| r.admin),
                Some(web::console_routes()),
            )
            .route(
                "/api/v1/openapi.json",
                get(|| async { axum::Json(openapi::document(true)) }),
            );
            let admin = listen(addr, admin, shutdown.clone(), "ELIGIBILITY_API_ADMIN_ADDR");
            tokio::try_join!(main, admin)?;
        }
        None => main.await?,
    }
    Ok(())
}

/// How long a client may take to send a request's headers, and how long a connection may wait
/// idle for the next request (docs/api.md, "Limits"): a slow or silent client does not hold a
/// connection for ever.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest a request may take, its body included; then 408.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Serves `app` on `addr` until `shutdown`, then lets the connections finish their requests.
/// Each connection is HTTP/1.1 with [`HEADER_TIMEOUT`] (hyper's own, which `axum::serve` leaves
/// off), and knows its peer address (`ConnectInfo`).
async fn listen(
    addr: SocketAddr,
    app: Router,
    shutdown: fleet::shutdown::Shutdown,
    variable: &'static str,
) -> Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("{variable} {addr}"))?;
    tracing::info!(addr = %listener.local_addr()?, "API listening");
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let stopping = shutdown.wait();
    tokio::pin!(stopping);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors, say: wait a moment rather than spin.
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stopping => break,
        };
        let service = TowerToHyperService::new(
            app.clone()
                .layer(axum::Extension(axum::extract::ConnectInfo(peer))),
        );
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_TIMEOUT)
            .serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection closed");
            }
        });
    }
    if tokio::time::timeout(REQUEST_TIMEOUT, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open at shutdown were dropped");
    }
    Ok(())
}

/// One route of the API.
pub struct Route {
    pub method: Method,
    pub path: &'static str,
    pub handler: MethodRouter<Arc<Service>>,
    /// Served on the admin address when there is one.
    pub admin: bool,
}

/// Every route, in one table: the router is built from it and the OpenAPI test checks it.
pub fn routes() -> Vec<Route> {
    let route = |method: Method, path, handler, admin| Route {
        method,
        path,
        handler,
        admin,
    };
    vec![
        route(
            Method::GET,
            "/api/v1/eligibility/{user_id}",
            get(citizens::all_results),
            false,
        ),
        route(
            Method::GET,
            "/api/v1/eligibility/{user_id}/{scheme_id}",
            get(citizens::one_scheme),
            false,
        ),
        route(
            Method::POST,
            "/api/v1/eligibility/{user_id}/evaluate",
            post(citizens::evaluate),
            false,
        ),
        route(
            Method::GET,
            "/api/v1/eligibility/{user_id}/partial-matches",
            get(citizens::partial_matches),
            false,
        ),
        route(
            Method::GET,
            "/api/v1/eligibility/{user_id}/gaps",
            get(citizens::gaps),
            false,
        ),
        route(
            Method::POST,
            "/api/v1/eligibility/check",
            post(citizens::check),
            false,
        ),
        route(
            Method::GET,
            "/api/v1/rules/{scheme_id}",
            get(rules::public_rule),
            false,
        ),
        route(
            Method::GET,
            "/api/v1/rules/{scheme_id}/versions",
            get(rules::versions),
            false,
        ),
        route(
            Method::POST,
            "/api/v1/rules/validate",
            post(rules::validate),
            true,
        ),
        route(
            Method::POST,
            "/api/v1/rules/simulate",
            post(rules::simulate),
            true,
        ),
        route(
            Method::GET,
            "/api/v1/rules/simulations/{job_id}",
            get(jobs::job),
            true,
        ),
        route(
            Method::GET,
            "/api/v1/rules/conflicts",
            get(rules::conflicts),
            false,
        ),
        route(
            Method::POST,
            "/api/v1/rules/proposals",
            post(proposals::propose),
            true,
        ),
        route(
            Method::GET,
            "/api/v1/rules/proposals/{id}",
            get(proposals::proposal),
            true,
        ),
        route(
            Method::POST,
            "/api/v1/rules/proposals/{id}/decision",
            post(proposals::decide),
            true,
        ),
    ]
}

/// The API's router: every route (the admin ones and the rules console too when
/// `with_admin`), the web pages ([`web`]) and the OpenAPI document, which lists no admin route
/// (the admin listener serves the whole one).
pub fn router(service: Arc<Service>, with_admin: bool) -> Router {
    let pages = if with_admin {
        web::routes().merge(web::console::routes())
    } else {
        web::routes()
    };
    router_of(
        service,
        routes().into_iter().filter(|r| with_admin || !r.admin),
        Some(pages),
    )
    .route(
        "/api/v1/openapi.json",
        get(|| async { axum::Json(openapi::document(false)) }),
    )
}

fn router_of(
    service: Arc<Service>,
    routes: impl Iterator<Item = Route>,
    pages: Option<Router<Arc<Service>>>,
) -> Router {
    let mut app: Router<Arc<Service>> = pages.unwrap_or_default();
    for route in routes {
        app = app.route(route.path, route.handler);
    }
    // A known path with another method is 404 too, not 405: a route that is not served
    // here (an admin route on the API address) is not told apart from one that does not exist.
    app.fallback(|| async { problem::Problem::not_found() })
        .method_not_allowed_fallback(|| async { problem::Problem::not_found() })
        .layer(DefaultBodyLimit::max(body::MAX_BODY_BYTES))
        .layer(middleware::from_fn(time_limit))
        .layer(middleware::from_fn(record))
        .layer(middleware::from_fn(secure))
        .with_state(service)
}

/// A request that takes longer than [`REQUEST_TIMEOUT`] (a body sent slowly, say) is answered
/// 408 and dropped.
async fn time_limit(request: Request, next: Next) -> Response {
    use axum::response::IntoResponse;
    match tokio::time::timeout(REQUEST_TIMEOUT, next.run(request)).await {
        Ok(response) => response,
        Err(_) => problem::Problem::timed_out().into_response(),
    }
}

/// Headers on every response (docs/api.md, "Security headers"): personal data is never
/// stored by a browser or a shared cache, never sniffed as another type, never framed.
async fn secure(request: Request, next: Next) -> Response {
    use axum::http::{HeaderValue, header};
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // A web page sets its own policy (its stylesheet, its forms); everything else loads nothing.
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"),
        );
    }
    // The web pages send no referrer to another site but keep their own `Origin` (docs/web.md).
    if !headers.contains_key(header::REFERRER_POLICY) {
        headers.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
    }
    response
}

/// Counts each request by route and status, and times it (docs/metrics.md).
async fn record(request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let started = Instant::now();
    let response = next.run(request).await;
    let status = response.status().as_u16().to_string();
    metrics::counter!(fleet::metrics::API_REQUESTS, "route" => route.clone(), "status" => status)
        .increment(1);
    metrics::histogram!(fleet::metrics::API_REQUEST_DURATION, "route" => route)
        .record(started.elapsed().as_secs_f64());
    response
}
