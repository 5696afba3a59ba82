//! `eligibility api serve`: the HTTP API ([`crate::api`]); `eligibility api token`: a
//! development token signed with the HS256 secret (docs/api.md).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args as ClapArgs, Subcommand};
use fleet::config::WorkerArgs;

use super::setup::{runtime, warn_unknown};
use crate::api::ApiConfig;
use crate::api::auth::{Claims, Role, Verifier, mint_hs256};
use crate::api::client::Networks;
use crate::api::limits::{DEFAULT_LIMITS, LimitConfig};
use crate::api::web::sign_in::{Development, Oidc, SignInConfig};

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
    /// Client networks allowed on the admin routes, comma-separated CIDR blocks; unset: none
    /// (the admin routes answer 404 to everyone).
    #[arg(long, env = "ELIGIBILITY_API_ADMIN_CIDRS", help_heading = "API")]
    pub api_admin_cidrs: Option<String>,
    /// Proxies whose `Forwarded` / `X-Forwarded-For` headers name the client (the Ingress
    /// controller's addresses), comma-separated CIDR blocks; unset: the TCP peer is the client.
    #[arg(long, env = "ELIGIBILITY_API_TRUSTED_PROXIES", help_heading = "API")]
    pub api_trusted_proxies: Option<String>,
    #[command(flatten)]
    pub token: TokenKeyArgs,
    #[command(flatten)]
    pub desk: DeskArgs,
    /// Requests per minute per caller / per client address, by class of route.
    #[arg(long, env = "ELIGIBILITY_API_RATE_LIMITS", default_value = DEFAULT_LIMITS,
          help_heading = "API")]
    pub api_rate_limits: LimitConfig,
    #[command(flatten)]
    pub worker: WorkerArgs,
}

/// How caseworkers sign in to the web desk and admins to the rules console (docs/web.md,
/// "Signing in"): OpenID Connect
/// when an issuer is set; else, with the HS256 development secret, a development form; else not
/// at all.
#[derive(ClapArgs)]
pub struct DeskArgs {
    /// The OpenID Connect issuer caseworkers sign in with (its discovery document is read at
    /// each sign-in); its access tokens must pass the API's token checks (JWKS, issuer,
    /// audience, role `caseworker` with `states`).
    #[arg(long, env = "ELIGIBILITY_WEB_OIDC_ISSUER", help_heading = "Web desk")]
    pub web_oidc_issuer: Option<String>,
    /// The desk's client id at the issuer.
    #[arg(
        long,
        env = "ELIGIBILITY_WEB_OIDC_CLIENT_ID",
        default_value = "eligibility-desk",
        help_heading = "Web desk"
    )]
    pub web_oidc_client_id: String,
    /// The client secret, for a confidential client (secret); unset: a public client (PKCE).
    #[arg(
        long,
        env = "ELIGIBILITY_WEB_OIDC_CLIENT_SECRET",
        hide_env_values = true,
        help_heading = "Web desk"
    )]
    pub web_oidc_client_secret: Option<String>,
    /// The redirect URL registered with the issuer: `https://<this host>/desk/callback`.
    #[arg(
        long,
        env = "ELIGIBILITY_WEB_OIDC_REDIRECT_URL",
        help_heading = "Web desk"
    )]
    pub web_oidc_redirect_url: Option<String>,
    /// The rules console's redirect URL, registered with the same issuer and client:
    /// `https://<admin host>/console/callback`; unset: admins sign in to the console only with
    /// the development form (where it is on).
    #[arg(
        long,
        env = "ELIGIBILITY_WEB_OIDC_CONSOLE_REDIRECT_URL",
        help_heading = "Web desk"
    )]
    pub web_oidc_console_redirect_url: Option<String>,
    /// The scopes asked for.
    #[arg(
        long,
        env = "ELIGIBILITY_WEB_OIDC_SCOPE",
        default_value = "openid",
        help_heading = "Web desk"
    )]
    pub web_oidc_scope: String,
    /// The development sign-in forms of the desk (any name, any states) and of the rules
    /// console (any name, an admin), each a token signed with ELIGIBILITY_API_JWT_SECRET,
    /// answered only to a browser on this machine: the local stack only. Needs the HS256
    /// secret and no issuer.
    #[arg(
        long,
        env = "ELIGIBILITY_WEB_DESK_DEVELOPMENT",
        default_value_t = false,
        help_heading = "Web desk"
    )]
    pub web_desk_development: bool,
}

impl DeskArgs {
    fn config(&self, token: &TokenKeyArgs) -> Result<SignInConfig> {
        let oidc = match (&self.web_oidc_issuer, &self.web_oidc_redirect_url) {
            (Some(issuer), Some(redirect_url)) => Some(Oidc {
                issuer: issuer.clone(),
                client_id: self.web_oidc_client_id.clone(),
                client_secret: self.web_oidc_client_secret.clone(),
                redirect_url: redirect_url.clone(),
                console_redirect_url: self.web_oidc_console_redirect_url.clone(),
                scope: self.web_oidc_scope.clone(),
            }),
            (Some(_), None) => anyhow::bail!(
                "ELIGIBILITY_WEB_OIDC_ISSUER needs ELIGIBILITY_WEB_OIDC_REDIRECT_URL (https://<this host>/desk/callback)"
            ),
            (None, _) => None,
        };
        // An ID token (its audience the client) must never pass as an access token.
        if oidc.is_some() && self.web_oidc_client_id == token.api_jwt_audience {
            anyhow::bail!(
                "ELIGIBILITY_WEB_OIDC_CLIENT_ID must differ from ELIGIBILITY_API_JWT_AUDIENCE: an ID token would pass as an access token"
            );
        }
        // The development form only when asked for, and only where tokens are checked with
        // the development secret.
        let development = match (
            self.web_desk_development,
            &oidc,
            &token.api_jwks_file,
            &token.api_jwt_secret,
        ) {
            (false, ..) => None,
            (true, None, None, Some(secret)) => {
                tracing::warn!(
                    "the desk's development sign-in is on: anyone on this machine may sign in as a caseworker of any state"
                );
                Some(Development {
                    secret: secret.as_bytes().to_vec(),
                    issuer: token.api_jwt_issuer.clone(),
                    audience: token.api_jwt_audience.clone(),
                })
            }
            (true, ..) => anyhow::bail!(
                "ELIGIBILITY_WEB_DESK_DEVELOPMENT needs ELIGIBILITY_API_JWT_SECRET, and neither an issuer nor a JWKS file"
            ),
        };
        Ok(SignInConfig { oidc, development })
    }
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
    #[arg(long)]
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
            println!("{}", mint_hs256(secret.as_bytes(), &claims)?);
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
    warn_unknown(&own_variables());
    let api = ApiConfig {
        addr: args.api_addr,
        admin_addr: args.api_admin_addr,
        admin_networks: Networks::parse(args.api_admin_cidrs.as_deref().unwrap_or_default())
            .map_err(|e| anyhow::anyhow!("ELIGIBILITY_API_ADMIN_CIDRS: {e}"))?,
        trusted_proxies: Networks::parse(args.api_trusted_proxies.as_deref().unwrap_or_default())
            .map_err(|e| anyhow::anyhow!("ELIGIBILITY_API_TRUSTED_PROXIES: {e}"))?,
        verifier: args.token.verifier()?,
        limits: args.api_rate_limits,
        sign_in: args.desk.config(&args.token)?,
    };
    runtime()?.block_on(async {
        let (shutdown, _trigger) = fleet::shutdown::Shutdown::on_signals();
        crate::api::serve(config, api, shutdown).await
    })?;
    Ok(ExitCode::SUCCESS)
}
