//! What every request shares: the connections, the rules (reloaded when `eligibility_rules`
//! changes), the token verifier and the rate limiters; and the admission of a request
//! (client address, token, the budget it spends) in one place.

use std::net::IpAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::http::HeaderMap;
use deadpool_postgres::Pool;
use engine::Catalogue;
use fleet::avro::Codec;
use fleet::cache::Cache;
use rdkafka::producer::FutureProducer;

use super::auth::{Caller, Verifier};
use super::client::{Networks, client_address};
use super::limits::{Class, Key, LimitConfig, Limits};
use super::problem::Problem;
use super::web::sign_in::SignInConfig;
use crate::rules::book::RuleBook;
use crate::rules::store as rules_store;

pub struct Service {
    pub pool: Pool,
    pub cache: Cache,
    pub codec: Codec,
    pub producer: FutureProducer,
    pub verifier: Verifier,
    pub limits: Limits,
    /// Client networks allowed on the admin routes; empty: none.
    pub admin_networks: Networks,
    /// Peers whose forwarded-client headers are believed (docs/api.md, "Client address").
    pub trusted_proxies: Networks,
    /// How caseworkers sign in to the desk (docs/web.md).
    pub sign_in: SignInConfig,
    /// The rules held, with their conflict report.
    held: RwLock<Held>,
}

/// The rules in effect and the conflict detector's report on them, worked out together when
/// the rules are (re)loaded: once per revision, off the requests, so no burst of requests after
/// a reload runs the detector many times over (docs/api.md, "The security review").
#[derive(Clone)]
struct Held {
    book: Arc<RuleBook>,
    conflicts: Arc<serde_json::Value>,
}

/// How often the rules' revision is checked: a new rule version is served within this.
pub const RULES_REFRESH: Duration = Duration::from_secs(5);

impl Service {
    pub async fn new(
        connections: fleet::connect::Connections,
        verifier: Verifier,
        limits: &LimitConfig,
        admin_networks: Networks,
        trusted_proxies: Networks,
        sign_in: SignInConfig,
    ) -> anyhow::Result<Arc<Service>> {
        let held = load(&connections.pool).await?;
        Ok(Arc::new(Service {
            pool: connections.pool,
            limits: Limits::shared(limits, connections.cache.clone()),
            cache: connections.cache,
            codec: connections.codec,
            producer: connections.producer,
            verifier,
            admin_networks,
            trusted_proxies,
            sign_in,
            held: RwLock::new(held),
        }))
    }

    pub fn book(&self) -> Arc<RuleBook> {
        self.held.read().expect("not poisoned").book.clone()
    }

    /// Reloads the rules when their revision moved; a failure keeps the rules held.
    pub async fn refresh_rules(&self) -> anyhow::Result<()> {
        let revision = rules_store::revision(&self.pool).await?;
        if revision != self.book().revision {
            let held = load(&self.pool).await?;
            tracing::info!(revision = held.book.revision, "API rules reloaded");
            *self.held.write().expect("not poisoned") = held;
        }
        Ok(())
    }

    /// Whether the client (behind the trusted proxies) is in the admin networks: the admin
    /// routes and the rules console answer no one else (docs/api.md, "Authentication and
    /// roles").
    pub fn in_admin_networks(&self, peer: IpAddr, headers: &HeaderMap) -> bool {
        self.admin_networks.contains(self.client(peer, headers))
    }

    /// The client's address behind the trusted proxies (docs/api.md, "Client address").
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        client_address(peer, headers, &self.trusted_proxies)
    }

    /// Admits a request of `class` (docs/api.md, "Limits"): a caller whose token holds spends
    /// its own budget only, so no one else can spend it; a refused token spends the client
    /// address's budget (a flood of bad tokens is refused with 429 once that is spent).
    pub async fn admit(
        &self,
        class: Class,
        peer: IpAddr,
        headers: &HeaderMap,
    ) -> Result<Caller, Problem> {
        match self.verifier.caller(headers) {
            Ok(caller) => {
                self.limits
                    .admit(class, Key::Caller(&caller.subject))
                    .await?;
                Ok(caller)
            }
            Err(refused) => {
                let client = self.client(peer, headers);
                self.limits.admit(class, Key::Address(client)).await?;
                Err(refused)
            }
        }
    }

    /// Admits a request of an anonymous route against the client address's budget.
    pub async fn admit_anonymous(
        &self,
        class: Class,
        peer: IpAddr,
        headers: &HeaderMap,
    ) -> Result<(), Problem> {
        let client = self.client(peer, headers);
        self.limits.admit(class, Key::Address(client)).await
    }

    /// The conflicts among the rules held.
    pub fn conflicts(&self) -> Arc<serde_json::Value> {
        self.held.read().expect("not poisoned").conflicts.clone()
    }
}

/// The stored rules, compiled, and their conflict report (worked out on a blocking thread).
async fn load(pool: &Pool) -> anyhow::Result<Held> {
    let catalogue = Catalogue::bundled();
    let loaded = rules_store::load(pool, &catalogue).await?;
    let book = Arc::new(RuleBook::new(catalogue, loaded)?);
    let detected = book.clone();
    let conflicts = tokio::task::spawn_blocking(move || {
        let report = engine::conflicts::detect(&detected.catalogue, &detected.rules);
        serde_json::to_value(&report).expect("a conflict report serialises")
    })
    .await?;
    Ok(Held {
        book,
        conflicts: Arc::new(conflicts),
    })
}
