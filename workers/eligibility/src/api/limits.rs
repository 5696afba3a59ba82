//! Rate limits per caller and per client address, by class of route (docs/api.md, "Limits"):
//! evaluations are expensive, so a caller or an address over its budget gets 429 with
//! `Retry-After`, before any work is done. The budgets are counted in Redis, shared by every
//! replica, in counters that expire.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::str::FromStr;

use fleet::cache::Cache;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use sha2::{Digest, Sha256};

use super::problem::Problem;

/// Routes priced alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Stored results (`GET /eligibility/...`, rule versions, conflicts).
    Read,
    /// `POST /eligibility/check`: every scheme evaluated for a given profile.
    Check,
    /// `POST /eligibility/{user}/evaluate`: a full re-evaluation through the fleet.
    Evaluate,
    /// `POST /rules/validate`, `POST /rules/simulate`.
    Admin,
    /// `GET /rules/{scheme}`: public, limited per address only.
    Public,
}

const CLASSES: [(&str, Class); 5] = [
    ("read", Class::Read),
    ("check", Class::Check),
    ("evaluate", Class::Evaluate),
    ("admin", Class::Admin),
    ("public", Class::Public),
];

/// Requests per minute per caller and per client address, for each class.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitConfig {
    per_class: Vec<(Class, u32, u32)>,
}

/// The design's figures (check 30/min a caller, 20 an address; evaluate 5 and 3; admin 10).
pub const DEFAULT_LIMITS: &str =
    "read=1200/2400,check=30/20,evaluate=5/3,admin=10/10,public=600/600";

impl FromStr for LimitConfig {
    type Err = String;

    /// `class=PER_CALLER/PER_ADDRESS,...` with every class named once.
    fn from_str(text: &str) -> Result<LimitConfig, String> {
        let mut per_class = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, numbers) = part
                .split_once('=')
                .ok_or_else(|| format!("{part:?}: expected class=PER_CALLER/PER_ADDRESS"))?;
            let class = CLASSES
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, c)| *c)
                .ok_or_else(|| {
                    format!("{name:?} is not a class (read, check, evaluate, admin, public)")
                })?;
            let (caller, address) = numbers
                .split_once('/')
                .ok_or_else(|| format!("{part:?}: expected PER_CALLER/PER_ADDRESS"))?;
            let number = |n: &str| {
                n.parse::<u32>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("{n:?} in {part:?} is not a positive number"))
            };
            per_class.push((class, number(caller)?, number(address)?));
        }
        for (name, class) in CLASSES {
            if !per_class.iter().any(|(c, _, _)| *c == class) {
                return Err(format!("no limit for class {name:?}"));
            }
        }
        Ok(LimitConfig { per_class })
    }
}

/// Whose budget a request spends.
#[derive(Debug, Clone, Copy)]
pub enum Key<'a> {
    /// An authenticated caller, by token subject.
    Caller(&'a str),
    /// A client address (docs/api.md, "Client address"): anonymous routes, and requests whose
    /// token was refused.
    Address(IpAddr),
}

impl Key<'_> {
    /// The key's part of a shared counter's name: an address as written, a subject by digest
    /// (a bounded name whatever the token says).
    fn id(&self) -> String {
        match self {
            Key::Caller(subject) => {
                let digest = Sha256::digest(subject.as_bytes());
                let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
                format!("c:{hex}")
            }
            Key::Address(address) => format!("a:{address}"),
        }
    }
}

/// Requests are counted in windows of a third of a minute, each admitting a third of the
/// minute's budget (rounded up): short bursts pass, a steady flood does not.
pub const WINDOW_MS: u64 = 20_000;

/// The budgets, counted in Redis when shared (every replica spends the same budget, and a
/// counter expires two windows after its last use), else — and whenever Redis fails — in this
/// process.
pub struct Limits {
    config: LimitConfig,
    shared: Option<Cache>,
    by_caller: Vec<(Class, DefaultKeyedRateLimiter<String>)>,
    by_address: Vec<(Class, DefaultKeyedRateLimiter<IpAddr>)>,
}

/// The in-process fallback: the same third of a minute's budget as a burst, refilled evenly.
fn quota(per_minute: u32) -> Quota {
    let per_minute = NonZeroU32::new(per_minute).expect("checked positive");
    let burst = NonZeroU32::new(per_minute.get().div_ceil(3)).expect("positive");
    Quota::per_minute(per_minute).allow_burst(burst)
}

impl Limits {
    /// Budgets counted in this process only.
    pub fn new(config: &LimitConfig) -> Limits {
        Limits {
            config: config.clone(),
            shared: None,
            by_caller: config
                .per_class
                .iter()
                .map(|&(class, caller, _)| (class, DefaultKeyedRateLimiter::keyed(quota(caller))))
                .collect(),
            by_address: config
                .per_class
                .iter()
                .map(|&(class, _, address)| (class, DefaultKeyedRateLimiter::keyed(quota(address))))
                .collect(),
        }
    }

    /// Budgets counted in `cache`, shared by every replica that counts there.
    pub fn shared(config: &LimitConfig, cache: Cache) -> Limits {
        Limits {
            shared: Some(cache),
            ..Limits::new(config)
        }
    }

    /// Counts one request of `class` against `key`'s budget; refuses it with 429 and the
    /// seconds to wait when the budget is spent.
    pub async fn admit(&self, class: Class, key: Key<'_>) -> Result<(), Problem> {
        let Some(&(_, caller, address)) = self.config.per_class.iter().find(|(c, ..)| *c == class)
        else {
            return Ok(());
        };
        let per_minute = match key {
            Key::Caller(_) => caller,
            Key::Address(_) => address,
        };
        if let Some(cache) = &self.shared {
            let now = unix_ms();
            let window = now / WINDOW_MS;
            let counter = format!("eligibility_limit:{}:{}:{window}", class.name(), key.id());
            match cache.count(&counter, 2 * WINDOW_MS).await {
                Ok(count) if count <= u64::from(per_minute.div_ceil(3)) => return Ok(()),
                Ok(_) => {
                    let left_ms = (window + 1) * WINDOW_MS - now;
                    return Err(Problem::rate_limited(left_ms.div_ceil(1000).max(1)));
                }
                Err(error) => {
                    fleet::metrics::error("redis");
                    tracing::warn!(%error, "rate-limit counters unavailable: counting in this process");
                }
            }
        }
        match key {
            Key::Caller(subject) => check(&self.by_caller, class, &subject.to_string()),
            Key::Address(address) => check(&self.by_address, class, &address),
        }
    }

    /// Forgets the in-process counters of callers and addresses whose budget is whole again.
    pub fn prune(&self) {
        for (_, limiter) in &self.by_caller {
            limiter.retain_recent();
        }
        for (_, limiter) in &self.by_address {
            limiter.retain_recent();
        }
    }
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Class {
    fn name(self) -> &'static str {
        CLASSES
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("?", |(n, _)| n)
    }
}

fn check<K: Clone + Eq + std::hash::Hash>(
    limiters: &[(Class, DefaultKeyedRateLimiter<K>)],
    class: Class,
    key: &K,
) -> Result<(), Problem> {
    let Some((_, limiter)) = limiters.iter().find(|(c, _)| *c == class) else {
        return Ok(());
    };
    limiter.check_key(key).map_err(|until| {
        let wait = until.wait_time_from(DefaultClock::default().now());
        Problem::rate_limited(wait.as_secs().max(1))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_limits_parse_and_a_missing_or_unknown_class_is_named() {
        assert!(DEFAULT_LIMITS.parse::<LimitConfig>().is_ok());
        let missing = "read=1/1".parse::<LimitConfig>().unwrap_err();
        assert!(missing.contains("check"), "{missing}");
        let unknown = "reed=1/1".parse::<LimitConfig>().unwrap_err();
        assert!(unknown.contains("reed"), "{unknown}");
        let zero = DEFAULT_LIMITS.replace("check=30/20", "check=0/20");
        assert!(
            zero.parse::<LimitConfig>()
                .unwrap_err()
                .contains("positive")
        );
    }

    #[tokio::test]
    async fn in_process_a_caller_over_budget_is_refused_with_a_wait_while_another_is_not() {
        let config: LimitConfig = DEFAULT_LIMITS
            .replace("evaluate=5/3", "evaluate=3/100")
            .parse()
            .unwrap();
        let limits = Limits::new(&config);
        let address: IpAddr = "127.0.0.1".parse().unwrap();
        // A burst is a third of the minute's budget: one request.
        assert!(
            limits
                .admit(Class::Evaluate, Key::Caller("a"))
                .await
                .is_ok()
        );
        let refused = limits
            .admit(Class::Evaluate, Key::Caller("a"))
            .await
            .unwrap_err();
        assert_eq!(refused.status, 429);
        assert!(refused.retry_after_seconds.is_some_and(|s| s >= 1));
        assert!(
            limits
                .admit(Class::Evaluate, Key::Caller("b"))
                .await
                .is_ok()
        );
        // Other classes keep their own budgets; the address has its own (100 a minute).
        assert!(limits.admit(Class::Read, Key::Caller("a")).await.is_ok());
        for _ in 0..3 {
            assert!(
                limits
                    .admit(Class::Evaluate, Key::Address(address))
                    .await
                    .is_ok()
            );
        }
        limits.prune();
        assert!(
            limits
                .admit(Class::Evaluate, Key::Caller("a"))
                .await
                .is_err(),
            "pruning forgets only whole budgets"
        );
    }

    #[test]
    fn a_counter_is_named_by_class_and_a_bounded_digest_of_the_subject() {
        let long = "x".repeat(10_000);
        let id = Key::Caller(&long).id();
        assert_eq!(id.len(), 2 + 32, "{id}");
        assert_ne!(id, Key::Caller("y").id());
        assert_eq!(Key::Address("10.1.2.3".parse().unwrap()).id(), "a:10.1.2.3");
        assert_eq!(Class::Evaluate.name(), "evaluate");
    }
}
