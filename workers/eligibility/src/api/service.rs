//! What every request shares: the connections, the rules (reloaded when `eligibility_rules`
//! changes), the token verifier and the rate limiters; and the admission of a request
//! (address limit, token, caller limit) in one place.

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
use super::limits::{Class, Limits};
use super::problem::Problem;
use crate::rules::book::RuleBook;
use crate::rules::store as rules_store;

/// Which client addresses may call the admin routes; empty: any.
#[derive(Debug, Clone, Default)]
pub struct AdminNetworks(pub Vec<(IpAddr, u8)>);

impl AdminNetworks {
    pub fn parse(text: &str) -> Result<AdminNetworks, String> {
        let mut networks = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (address, bits) = part.split_once('/').unwrap_or((part, ""));
            let address: IpAddr = address
                .parse()
                .map_err(|_| format!("{part:?} is not an address or CIDR block"))?;
            let max = if address.is_ipv4() { 32 } else { 128 };
            let bits = if bits.is_empty() {
                max
            } else {
                bits.parse::<u8>()
                    .ok()
                    .filter(|b| *b <= max)
                    .ok_or_else(|| format!("{part:?}: the prefix length must be 0..={max}"))?
            };
            networks.push((address, bits));
        }
        Ok(AdminNetworks(networks))
    }

    pub fn allows(&self, client: IpAddr) -> bool {
        self.0.is_empty()
            || self
                .0
                .iter()
                .any(|&(network, bits)| within(client, network, bits))
    }
}

fn within(client: IpAddr, network: IpAddr, bits: u8) -> bool {
    match (client, network) {
        (IpAddr::V4(c), IpAddr::V4(n)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(c) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(c), IpAddr::V6(n)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(c) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

pub struct Service {
    pub pool: Pool,
    pub cache: Cache,
    pub codec: Codec,
    pub producer: FutureProducer,
    pub verifier: Verifier,
    pub limits: Limits,
    pub admin_networks: AdminNetworks,
    book: RwLock<Arc<RuleBook>>,
    /// The conflict report of the book's revision, worked out on first request.
    conflicts: RwLock<Option<(i64, Arc<serde_json::Value>)>>,
}

/// How often the rules' revision is checked: a new rule version is served within this.
pub const RULES_REFRESH: Duration = Duration::from_secs(5);

impl Service {
    pub async fn new(
        connections: fleet::connect::Connections,
        verifier: Verifier,
        limits: Limits,
        admin_networks: AdminNetworks,
    ) -> anyhow::Result<Arc<Service>> {
        let book = load_book(&connections.pool).await?;
        Ok(Arc::new(Service {
            pool: connections.pool,
            cache: connections.cache,
            codec: connections.codec,
            producer: connections.producer,
            verifier,
            limits,
            admin_networks,
            book: RwLock::new(Arc::new(book)),
            conflicts: RwLock::new(None),
        }))
    }

    pub fn book(&self) -> Arc<RuleBook> {
        self.book.read().expect("not poisoned").clone()
    }

    /// Reloads the rules when their revision moved; a failure keeps the rules held.
    pub async fn refresh_rules(&self) -> anyhow::Result<()> {
        let revision = rules_store::revision(&self.pool).await?;
        if revision != self.book().revision {
            let book = load_book(&self.pool).await?;
            tracing::info!(revision = book.revision, "API rules reloaded");
            *self.book.write().expect("not poisoned") = Arc::new(book);
        }
        Ok(())
    }

    /// Admits a request of `class`: the address's budget first (so that a flood of bad tokens
    /// is refused cheaply), then the token, then the caller's budget.
    pub fn admit(
        &self,
        class: Class,
        client: IpAddr,
        headers: &HeaderMap,
    ) -> Result<Caller, Problem> {
        self.limits.admit_address(class, client)?;
        let caller = self.verifier.caller(headers)?;
        self.limits.admit_caller(class, &caller.subject)?;
        Ok(caller)
    }

    /// The conflicts among the rules in effect, per revision.
    pub fn conflicts(&self) -> Arc<serde_json::Value> {
        let book = self.book();
        if let Some((revision, report)) = &*self.conflicts.read().expect("not poisoned")
            && *revision == book.revision
        {
            return report.clone();
        }
        let report = engine::conflicts::detect(&book.catalogue, &book.rules);
        let json = Arc::new(serde_json::to_value(&report).expect("serialisable"));
        *self.conflicts.write().expect("not poisoned") = Some((book.revision, json.clone()));
        json
    }
}

async fn load_book(pool: &Pool) -> anyhow::Result<RuleBook> {
    let catalogue = Catalogue::bundled();
    let loaded = rules_store::load(pool, &catalogue).await?;
    RuleBook::new(catalogue, loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_networks_match_by_prefix_and_refuse_bad_blocks() {
        let networks = AdminNetworks::parse("10.0.0.0/8, 127.0.0.1, ::1/128").unwrap();
        assert!(networks.allows("10.20.30.40".parse().unwrap()));
        assert!(networks.allows("127.0.0.1".parse().unwrap()));
        assert!(networks.allows("::1".parse().unwrap()));
        assert!(!networks.allows("11.0.0.1".parse().unwrap()));
        assert!(!networks.allows("127.0.0.2".parse().unwrap()));
        assert!(
            AdminNetworks::parse("")
                .unwrap()
                .allows("8.8.8.8".parse().unwrap())
        );
        assert!(
            AdminNetworks::parse("10.0.0.0/33")
                .unwrap_err()
                .contains("0..=32")
        );
        assert!(AdminNetworks::parse("ten/8").unwrap_err().contains("ten"));
    }
}
