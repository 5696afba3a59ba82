//! The Redis cache: `eligibility:{user_id}:{scheme_id}` (the current verdict, 24 h) and
//! `eligibility_summary:{user_id}` (the user's totals), and `eligibility_results:{user_id}` (the
//! API's read-through copy of the user's result list) with its version counter
//! `eligibility_results_version:{user_id}`; and the API's rate-limit counters
//! (`eligibility_limit:…`, [`Cache::count`]). PostgreSQL stays the source of truth:
//! a lost cache entry costs a read, never a verdict.

use std::path::Path;

use anyhow::Context;
use redis::AsyncCommands;
use redis::aio::ConnectionManager;

/// Cache entries live 24 hours (docs/design.md, "Stores").
pub const TTL_SECONDS: u64 = 24 * 3600;

pub fn verdict_key(user_id: &str, scheme_id: &str) -> String {
    format!("eligibility:{user_id}:{scheme_id}")
}

/// The API's copy of a user's whole result list (docs/api.md, "Cache"), tagged with the
/// user's results version it was read at.
pub fn results_key(user_id: &str) -> String {
    format!("eligibility_results:{user_id}")
}

/// The user's results version: the evaluator increments it whenever it writes one of the user's
/// verdicts, so a copy tagged with an older version is never served.
pub fn results_version_key(user_id: &str) -> String {
    format!("eligibility_results_version:{user_id}")
}

pub fn summary_key(user_id: &str) -> String {
    format!("eligibility_summary:{user_id}")
}

/// A reconnecting connection: after a drop (a Redis restart, a failover) the next command
/// connects again, so a worker never holds a dead connection for its whole life.
#[derive(Clone)]
pub struct Cache {
    connection: ConnectionManager,
}

impl Cache {
    /// Connects to `url` (`redis://`, or `rediss://` for TLS). With `ca_file` (PEM), TLS trusts
    /// that CA in place of the system's (a private CA, a managed Redis).
    pub async fn connect(url: &str, ca_file: Option<&Path>) -> anyhow::Result<Cache> {
        let client = match ca_file {
            None => redis::Client::open(url),
            Some(path) => {
                let root_cert = std::fs::read(path).with_context(|| {
                    format!("ELIGIBILITY_REDIS_CA_FILE: cannot read {}", path.display())
                })?;
                let certificates = redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(root_cert),
                };
                redis::Client::build_with_tls(url, certificates)
            }
        }
        .map_err(|e| anyhow::anyhow!("ELIGIBILITY_REDIS_URL: {e}"))?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_number_of_retries(2)
            .set_connection_timeout(Some(std::time::Duration::from_secs(5)));
        let connection = ConnectionManager::new_with_config(client, config)
            .await
            .map_err(|e| {
                // Redis away (refused, unreachable, slow) is waited out at start; anything
                // else (a bad password, a TLS mismatch) is a setting to fix.
                if e.is_connection_refusal() || e.is_io_error() || e.is_timeout() {
                    anyhow::Error::from(crate::error::IoError::Redis(e))
                        .context("connecting to ELIGIBILITY_REDIS_URL")
                } else {
                    anyhow::anyhow!("connecting to ELIGIBILITY_REDIS_URL: {e}")
                }
            })?;
        Ok(Cache { connection })
    }

    /// One round trip: what readiness asks of Redis.
    pub async fn ping(&self) -> redis::RedisResult<()> {
        let mut connection = self.connection.clone();
        redis::cmd("PING").query_async(&mut connection).await
    }

    /// Replaces the given entries (user, key, JSON value) in one round trip: the old value of a
    /// re-evaluated pair is overwritten, never served stale.
    pub async fn put(&self, entries: &[(String, String)]) -> redis::RedisResult<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for (key, value) in entries {
            pipe.set_ex(key, value, TTL_SECONDS).ignore();
        }
        let mut connection = self.connection.clone();
        pipe.query_async(&mut connection).await
    }

    /// Sets one entry for [`TTL_SECONDS`].
    pub async fn put_one(&self, key: &str, value: &str) -> redis::RedisResult<()> {
        let mut connection = self.connection.clone();
        connection.set_ex(key, value, TTL_SECONDS).await
    }

    /// Increments counters (versions), each kept an hour longer than the entries they tag.
    pub async fn bump(&self, keys: &[String]) -> redis::RedisResult<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for key in keys {
            pipe.incr(key, 1)
                .ignore()
                .expire(key, (TTL_SECONDS + 3600) as i64)
                .ignore();
        }
        let mut connection = self.connection.clone();
        pipe.query_async(&mut connection).await
    }

    /// Several entries in one round trip, in order.
    pub async fn get_many(&self, keys: &[String]) -> redis::RedisResult<Vec<Option<String>>> {
        let mut connection = self.connection.clone();
        redis::cmd("MGET")
            .arg(keys)
            .query_async(&mut connection)
            .await
    }

    /// Drops entries (a rule change before its users are re-evaluated, a user who moved state).
    pub async fn invalidate(&self, keys: &[String]) -> redis::RedisResult<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut connection = self.connection.clone();
        connection.del(keys).await
    }

    pub async fn get(&self, key: &str) -> redis::RedisResult<Option<String>> {
        let mut connection = self.connection.clone();
        connection.get(key).await
    }

    /// Counts one more use of a window's counter (the API's rate limits, shared by its
    /// replicas) and returns the count, in one atomic round trip; the counter expires
    /// `expire_ms` after its last use, so counters of past windows and of clients never seen
    /// again go away by themselves.
    pub async fn count(&self, key: &str, expire_ms: u64) -> redis::RedisResult<u64> {
        let mut connection = self.connection.clone();
        let (count,): (u64,) = redis::pipe()
            .atomic()
            .incr(key, 1)
            .pexpire(key, expire_ms as i64)
            .ignore()
            .query_async(&mut connection)
            .await?;
        Ok(count)
    }
}
