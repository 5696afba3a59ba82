//! Rate limits per caller and per client address, by class of route (docs/api.md, "Limits"):
//! evaluations are expensive, so a caller or an address over its budget gets 429 with
//! `Retry-After`, before any work is done.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::str::FromStr;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

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

/// The limiters, keyed by (class, caller) and (class, address).
pub struct Limits {
    by_caller: Vec<(Class, DefaultKeyedRateLimiter<String>)>,
    by_address: Vec<(Class, DefaultKeyedRateLimiter<IpAddr>)>,
}

/// A burst is a third of a minute's budget: short bursts pass, a steady flood does not.
fn quota(per_minute: u32) -> Quota {
    let per_minute = NonZeroU32::new(per_minute).expect("checked positive");
    let burst = NonZeroU32::new(per_minute.get().div_ceil(3)).expect("positive");
    Quota::per_minute(per_minute).allow_burst(burst)
}

impl Limits {
    pub fn new(config: &LimitConfig) -> Limits {
        Limits {
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

    /// Counts one request of `class` from `address`; refuses it with 429 and the seconds to
    /// wait when the address's budget is spent.
    pub fn admit_address(&self, class: Class, address: IpAddr) -> Result<(), Problem> {
        check(&self.by_address, class, &address)
    }

    /// The same for an authenticated caller's budget.
    pub fn admit_caller(&self, class: Class, caller: &str) -> Result<(), Problem> {
        check(&self.by_caller, class, &caller.to_string())
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

    #[test]
    fn a_caller_over_budget_is_refused_with_a_wait_while_another_caller_is_not() {
        let config: LimitConfig = DEFAULT_LIMITS
            .replace("evaluate=5/3", "evaluate=3/100")
            .parse()
            .unwrap();
        let limits = Limits::new(&config);
        let address: IpAddr = "127.0.0.1".parse().unwrap();
        // A burst is a third of the minute's budget: one request.
        assert!(limits.admit_caller(Class::Evaluate, "a").is_ok());
        let refused = limits.admit_caller(Class::Evaluate, "a").unwrap_err();
        assert_eq!(refused.status, 429);
        assert!(refused.retry_after_seconds.is_some_and(|s| s >= 1));
        assert!(limits.admit_caller(Class::Evaluate, "b").is_ok());
        // Other classes keep their own budgets; the address has its own (100 a minute).
        assert!(limits.admit_caller(Class::Read, "a").is_ok());
        for _ in 0..3 {
            assert!(limits.admit_address(Class::Evaluate, address).is_ok());
        }
    }
}
