//! `eligibility api`: the HTTP service portals, caseworker desks and citizen apps call
//! (docs/api.md). Stateless: it reads the Redis cache first and PostgreSQL second, re-derives
//! full evaluations with the engine, and asks the fleet for re-evaluations over Kafka.
//!
//! - [`auth`]: JWT bearer tokens, roles and who may see which user.
//! - [`limits`]: rate limits per caller and per client address.
//! - [`body`], [`problem`]: strict request bodies and RFC 9457 problem responses.
//! - [`service`]: what requests share, and their admission.
//! - [`citizens`], [`rules`], [`proposals`]: the routes; [`openapi`]: their generated OpenAPI document.
//! - `api token`: a development token signed with the HS256 secret.

pub mod auth;
pub mod body;
pub mod citizens;
pub mod limits;
pub mod openapi;
pub mod problem;
pub mod proposals;
pub mod rules;
pub mod service;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{MethodRouter, get, post};
use clap::{Args as ClapArgs, Subcommand};
use fleet::config::WorkerArgs;

use self::auth::{Claims, Role, Verifier};
use self::limits::{LimitConfig, Limits};
use self::service::{AdminNetworks, Service};

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once at start
pub enum ApiCommand {
    /// Serve the API (docs/api.md).
    Serve(ServeArgs),
    /// Print a development token signed with the HS256 secret.
    Token(TokenArgs),
}

#[derive(ClapArgs)]
pub struct ServeArgs {
    /// Listen address of the API.
    #[arg(
        long,
        env = "ELIGIBILITY_API_ADDR",
        default_value = "0.0.0.0:8080",
        help_heading = "API"
    )]
    pub api_addr: SocketAddr,
    /// Serve the admin routes (rules validate and simulate) only on this address (e.g. an
    /// internal port); unset: on the API address.
    #[arg(long, env = "ELIGIBILITY_API_ADMIN_ADDR", help_heading = "API")]
    pub api_admin_addr: Option<SocketAddr>,
    /// Client networks allowed on the admin routes, comma-separated CIDR blocks; unset: any.
    #[arg(long, env = "ELIGIBILITY_API_ADMIN_CIDRS", help_heading = "API")]
    pub api_admin_cidrs: Option<String>,
    #[command(flatten)]
    pub token: TokenKeyArgs,
    /// Requests per minute per caller / per client address, by class of route.
    #[arg(long, env = "ELIGIBILITY_API_RATE_LIMITS", default_value = limits::DEFAULT_LIMITS,
          help_heading = "API")]
    pub api_rate_limits: LimitConfig,
    #[command(flatten)]
    pub worker: WorkerArgs,
}

/// How tokens are checked.
#[derive(ClapArgs)]
pub struct TokenKeyArgs {
    /// JWKS file of the identity provider's public keys (RS256/ES256 ...).
    #[arg(
        long,
        env = "ELIGIBILITY_API_JWKS_FILE",
        value_name = "FILE",
        help_heading = "API tokens"
    )]
    pub api_jwks_file: Option<PathBuf>,
    /// HS256 shared secret: local development only (secret).
    #[arg(
        long,
        env = "ELIGIBILITY_API_JWT_SECRET",
        hide_env_values = true,
        help_heading = "API tokens"
    )]
    pub api_jwt_secret: Option<String>,
    /// The `iss` every token must carry.
    #[arg(
        long,
        env = "ELIGIBILITY_API_JWT_ISSUER",
        default_value = "eligibility-dev",
        help_heading = "API tokens"
    )]
    pub api_jwt_issuer: String,
    /// The `aud` every token must carry.
    #[arg(
        long,
        env = "ELIGIBILITY_API_JWT_AUDIENCE",
        default_value = "eligibility-api",
        help_heading = "API tokens"
    )]
    pub api_jwt_audience: String,
}

impl TokenKeyArgs {
    fn verifier(&self) -> Result<Verifier> {
        match (&self.api_jwks_file, &self.api_jwt_secret) {
            (Some(path), _) => {
                let text = std::fs::read_to_string(path).with_context(|| {
                    format!("ELIGIBILITY_API_JWKS_FILE: cannot read {}", path.display())
                })?;
                Verifier::from_jwks(&text, &self.api_jwt_issuer, &self.api_jwt_audience)
            }
            (None, Some(secret)) if secret.len() >= 32 => {
                tracing::warn!(
                    "API tokens are checked with an HS256 secret: for local development only"
                );
                Ok(Verifier::hs256(
                    secret.as_bytes(),
                    &self.api_jwt_issuer,
                    &self.api_jwt_audience,
                ))
            }
            (None, Some(_)) => {
                anyhow::bail!("ELIGIBILITY_API_JWT_SECRET must be at least 32 bytes")
            }
            (None, None) => anyhow::bail!(
                "set ELIGIBILITY_API_JWKS_FILE (or ELIGIBILITY_API_JWT_SECRET for local development)"
            ),
        }
    }
}

#[derive(ClapArgs)]
pub struct TokenArgs {
    /// The caller's role.
    #[arg(long, value_enum)]
    pub role: Role,
    /// The subject: a citizen's user id, or the name of a caseworker, auditor or admin.
    #[arg(long)]
    pub sub: String,
    /// A caseworker's states, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub states: Vec<String>,
    /// Lifetime in seconds.
    #[arg(long, default_value_t = 3600)]
    pub ttl: u64,
    #[command(flatten)]
    pub key: TokenKeyArgs,
}

pub fn run(command: ApiCommand) -> Result<ExitCode> {
    match command {
        ApiCommand::Serve(args) => serve(args),
        ApiCommand::Token(args) => {
            let secret = args
                .key
                .api_jwt_secret
                .as_deref()
                .filter(|s| s.len() >= 32)
                .context(
                    "ELIGIBILITY_API_JWT_SECRET (at least 32 bytes) signs development tokens",
                )?;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)?
                .as_secs();
            let claims = Claims {
                sub: args.sub,
                role: args.role,
                states: args.states,
                iss: args.key.api_jwt_issuer,
                aud: args.key.api_jwt_audience,
                exp: now + args.ttl,
                nbf: Some(now),
            };
            println!("{}", auth::mint_hs256(secret.as_bytes(), &claims)?);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The `ELIGIBILITY_*` variables `api serve` reads beyond a worker's.
fn own_variables() -> Vec<String> {
    use clap::CommandFactory;
    #[derive(clap::Parser)]
    struct Own {
        #[command(flatten)]
        serve: ServeArgs,
    }
    Own::command()
        .get_arguments()
        .filter_map(|a| a.get_env())
        .map(|v| v.to_string_lossy().into_owned())
        .collect()
}

fn serve(args: ServeArgs) -> Result<ExitCode> {
    let config = args.worker.config()?;
    fleet::init_tracing(&config.log);
    crate::commands::services::warn_unknown(&own_variables());
    let verifier = args.token.verifier()?;
    let admin_networks = AdminNetworks::parse(args.api_admin_cidrs.as_deref().unwrap_or_default())
        .map_err(|e| anyhow::anyhow!("ELIGIBILITY_API_ADMIN_CIDRS: {e}"))?;
    let limits = Limits::new(&args.api_rate_limits);
    crate::commands::services::runtime()?.block_on(async {
        let (shutdown, _trigger) = fleet::shutdown::Shutdown::on_signals();
        let health = fleet::http::start(config.http_addr, shutdown.clone()).await?;
        // Forced re-evaluations, proposals' diffs and approved rule versions.
        let topics = [
            fleet::topics::PROFILE_ASSEMBLED,
            fleet::topics::RULE_SIMULATION_COMPLETED,
            fleet::topics::POLICY_RULES_UPDATED,
        ]
        .map(str::to_string);
        let connections = fleet::connect::Connections::open(&config, 16, &topics).await?;
        let service = Service::new(connections, verifier, limits, admin_networks).await?;
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
                match refresher.refresh_rules().await {
                    Ok(()) => health.dependencies_answered(),
                    Err(e) => {
                        tracing::warn!(error = %format!("{e:#}"), "reloading the rules failed")
                    }
                }
                fleet::connect::check_cache(&refresher.cache, &health).await;
            }
        });
        let separate_admin = args.api_admin_addr.is_some();
        let main = router(service.clone(), !separate_admin);
        let mut servers = vec![listen(
            args.api_addr,
            main,
            shutdown.clone(),
            "ELIGIBILITY_API_ADDR",
        )];
        if let Some(addr) = args.api_admin_addr {
            let admin = router_of(service.clone(), routes().into_iter().filter(|r| r.admin));
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
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
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
/// document.
pub fn router(service: Arc<Service>, with_admin: bool) -> Router {
    router_of(
        service,
        routes().into_iter().filter(|r| with_admin || !r.admin),
    )
    .route(
        "/api/v1/openapi.json",
        get(|| async { axum::Json(openapi::document()) }),
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
        .with_state(service)
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
