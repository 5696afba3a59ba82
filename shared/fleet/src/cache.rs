//! The Redis cache: `eligibility:{user_id}:{scheme_id}` (the current verdict, 24 h) and
//! `eligibility_summary:{user_id}` (the user's totals). PostgreSQL stays the source of truth:
//! a lost cache entry costs a read, never a verdict.

use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;

/// Cache entries live 24 hours (docs/design.md, "Stores").
pub const TTL_SECONDS: u64 = 24 * 3600;

pub fn verdict_key(user_id: &str, scheme_id: &str) -> String {
    format!("eligibility:{user_id}:{scheme_id}")
}

pub fn summary_key(user_id: &str) -> String {
    format!("eligibility_summary:{user_id}")
}

#[derive(Clone)]
pub struct Cache {
    connection: MultiplexedConnection,
}

impl Cache {
    pub async fn connect(url: &str) -> anyhow::Result<Cache> {
        let client =
            redis::Client::open(url).map_err(|e| anyhow::anyhow!("ELIGIBILITY_REDIS_URL: {e}"))?;
        let connection = client.get_multiplexed_async_connection().await?;
        Ok(Cache { connection })
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
}
