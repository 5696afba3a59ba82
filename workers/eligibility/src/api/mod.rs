//! `eligibility api`: the HTTP service portals, caseworker desks and citizen apps call
//! (docs/api.md). Stateless: it reads the Redis cache first and PostgreSQL second, re-derives
//! full evaluations with the engine, and asks the fleet for re-evaluations over Kafka.
//!
//! - [`auth`]: JWT bearer tokens, roles and who may see which user.
//! - [`client`]: the client's address behind trusted proxies.
//! - [`limits`]: rate limits per caller and per client address, shared by the replicas.
//! - [`body`], [`problem`]: strict request bodies and RFC 9457 problem responses.
//! - [`service`]: what requests share, and their admission.
//! - [`citizens`], [`rules`], [`proposals`]: the routes; [`openapi`]: their generated OpenAPI document.

pub mod auth;
pub mod body;
pub mod citizens;
pub mod client;
pub mod limits;
pub mod openapi;
pub mod problem;
pub mod proposals;
pub mod rules;
pub mod service;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

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
    )
    .await?;
    health.dependencies_answered();
    fleet::connect::check_cache(&service.cache, &health).await;
    health.set_ready();
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
            fleet::connect::check_cache(&refresher.cache, &health).await;
        }
    });
    let separate_admin = api.admin_addr.is_some();
    let main = router(service.clone(), !separate_admin);
    let mut servers = vec![listen(
        api.addr,
        main,
        shutdown.clone(),
        "ELIGIBILITY_API_ADDR",
    )];
    if let Some(addr) = api.admin_addr {
        let admin = router_of(service.clone(), routes().into_iter().filter(|r| r.admin)).route(
            "/api/v1/openapi.json",
            get(|| async { axum::Json(openapi::document(true)) }),
        );
        servers.push(listen(
            addr,
            admin,
            shutdown.clone(),
            "ELIGIBILITY_API_ADMIN_ADDR",
        ));
    }
    for server in futures_join(servers).await {
        server?;
    }
    Ok(())
}

async fn futures_join<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let handles: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut out = Vec::with_capacity(handles.len());
    for handle in handles {
        out.push(handle.await);
    }
    out
}

async fn listen(
    addr: SocketAddr,
    app: Router,
    shutdown: fleet::shutdown::Shutdown,
    variable: &'static str,
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("{variable} {addr}"))?;
    tracing::info!(addr = %listener.local_addr()?, "API listening");
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown.wait())
    .await?;
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

/// The API's router: every route (the admin ones too when `with_admin`) and the OpenAPI
/// document, which lists no admin route (the admin listener serves the whole one).
pub fn router(service: Arc<Service>, with_admin: bool) -> Router {
    router_of(
        service,
        routes().into_iter().filter(|r| with_admin || !r.admin),
    )
    .route(
        "/api/v1/openapi.json",
        get(|| async { axum::Json(openapi::document(false)) }),
    )
}

fn router_of(service: Arc<Service>, routes: impl Iterator<Item = Route>) -> Router {
    let mut app: Router<Arc<Service>> = Router::new();
    for route in routes {
        app = app.route(route.path, route.handler);
    }
    app.fallback(|| async { problem::Problem::not_found() })
        .layer(DefaultBodyLimit::max(body::MAX_BODY_BYTES))
        .layer(middleware::from_fn(record))
        .layer(middleware::from_fn(secure))
        .with_state(service)
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
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
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
