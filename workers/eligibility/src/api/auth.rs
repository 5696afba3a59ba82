//! Who is calling: a JWT bearer token checked against configured keys (a JWKS file, or one
//! HS256 secret for local development), with `exp`, `nbf`, `iss` and `aud` checked, and the
//! caller's role and scope (docs/api.md, "Authentication and roles").

use std::collections::HashMap;

use axum::http::HeaderMap;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use super::problem::Problem;

/// What a caller may do (docs/api.md, "Authentication and roles").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Reads and re-evaluates only their own user id (the token's subject).
    Citizen,
    /// Reads and re-evaluates users of the states in the token's `states`.
    Caseworker,
    /// Reads everything, changes nothing.
    Auditor,
    /// Validates and simulates rules.
    Admin,
}

impl std::str::FromStr for Role {
    type Err = String;

    /// A role as tokens name it.
    fn from_str(text: &str) -> Result<Role, String> {
        match text {
            "citizen" => Ok(Role::Citizen),
            "caseworker" => Ok(Role::Caseworker),
            "auditor" => Ok(Role::Auditor),
            "admin" => Ok(Role::Admin),
            _ => Err(format!(
                "{text:?} is not a role: citizen, caseworker, auditor or admin"
            )),
        }
    }
}

/// The claims this service reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Claims {
    pub sub: String,
    pub role: Role,
    /// A caseworker's states (`demographics.state` values).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<String>,
    pub iss: String,
    pub aud: String,
    pub exp: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbf: Option<u64>,
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq)]
pub struct Caller {
    pub subject: String,
    pub role: Role,
    pub states: Vec<String>,
}

impl Caller {
    /// Whether the caller may see the user `user_id`, whose state is `state` (BOLA: a citizen
    /// only themself, a caseworker only their states' users, an auditor everyone, an admin
    /// no one's data).
    pub fn may_read_user(&self, user_id: &str, state: Option<&str>) -> bool {
        match self.role {
            Role::Citizen => self.subject == user_id,
            Role::Caseworker => state.is_some_and(|s| self.states.iter().any(|own| own == s)),
            Role::Auditor => true,
            Role::Admin => false,
        }
    }

    /// Whether the caller may ask for a user's re-evaluation (an auditor only reads).
    pub fn may_reevaluate(&self, user_id: &str, state: Option<&str>) -> bool {
        self.role != Role::Auditor && self.may_read_user(user_id, state)
    }
}

/// Checks tokens.
pub struct Verifier {
    /// By key id; `None` holds the key for tokens without a `kid` (the HS256 secret, or a JWKS
    /// of one key).
    keys: HashMap<Option<String>, (DecodingKey, Algorithm)>,
    issuer: String,
    audience: String,
}

/// Seconds of clock skew allowed on `exp` and `nbf`.
const LEEWAY_SECONDS: u64 = 30;

impl Verifier {
    /// Development only: one shared secret.
    pub fn hs256(secret: &[u8], issuer: &str, audience: &str) -> Verifier {
        let keys = HashMap::from([(None, (DecodingKey::from_secret(secret), Algorithm::HS256))]);
        Verifier {
            keys,
            issuer: issuer.into(),
            audience: audience.into(),
        }
    }

    /// The public keys of a JWKS document (RSA and EC keys with their algorithms).
    pub fn from_jwks(text: &str, issuer: &str, audience: &str) -> anyhow::Result<Verifier> {
        let set: JwkSet = serde_json::from_str(text)
            .map_err(|e| anyhow::anyhow!("ELIGIBILITY_API_JWKS_FILE is not a JWKS: {e}"))?;
        let mut keys = HashMap::new();
        let only_one = set.keys.len() == 1;
        for jwk in &set.keys {
            let algorithm = jwk
                .common
                .key_algorithm
                .and_then(|a| a.to_string().parse::<Algorithm>().ok())
                .ok_or_else(|| anyhow::anyhow!("ELIGIBILITY_API_JWKS_FILE: a key has no `alg`"))?;
            if matches!(
                algorithm,
                Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
            ) {
                anyhow::bail!("ELIGIBILITY_API_JWKS_FILE: shared-secret keys are refused");
            }
            let key = DecodingKey::from_jwk(jwk)
                .map_err(|e| anyhow::anyhow!("ELIGIBILITY_API_JWKS_FILE: {e}"))?;
            let kid = jwk.common.key_id.clone();
            if only_one {
                keys.insert(None, (key.clone(), algorithm));
            }
            keys.insert(kid, (key, algorithm));
        }
        if keys.is_empty() {
            anyhow::bail!("ELIGIBILITY_API_JWKS_FILE has no keys");
        }
        Ok(Verifier {
            keys,
            issuer: issuer.into(),
            audience: audience.into(),
        })
    }

    /// The caller of a request with `Authorization: Bearer <token>`. Every failure is the same
    /// 401: which check failed is logged, not told.
    pub fn caller(&self, headers: &HeaderMap) -> Result<Caller, Problem> {
        let token = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or_else(Problem::unauthorized)?;
        self.verify(token).map_err(|reason| {
            tracing::debug!(%reason, "token refused");
            Problem::unauthorized()
        })
    }

    pub fn verify(&self, token: &str) -> Result<Caller, String> {
        // `alg: none` and unknown algorithms fail here: the header does not parse.
        let header = jsonwebtoken::decode_header(token).map_err(|e| e.to_string())?;
        let (key, algorithm) = self
            .keys
            .get(&header.kid)
            .ok_or_else(|| format!("no key {:?}", header.kid))?;
        if header.alg != *algorithm {
            return Err(format!("algorithm {:?} is not the key's", header.alg));
        }
        let mut validation = Validation::new(*algorithm);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = LEEWAY_SECONDS;
        let claims = jsonwebtoken::decode::<Claims>(token, key, &validation)
            .map_err(|e| e.to_string())?
            .claims;
        if claims.role == Role::Caseworker && claims.states.is_empty() {
            return Err("a caseworker token names no state".into());
        }
        Ok(Caller {
            subject: claims.sub,
            role: claims.role,
            states: claims.states,
        })
    }
}

/// Signs a development token with an HS256 secret (`eligibility api token`).
pub fn mint_hs256(secret: &[u8], claims: &Claims) -> anyhow::Result<String> {
    Ok(jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(secret),
    )?)
}
