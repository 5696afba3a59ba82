//! PostgreSQL: the connection pool and the schema migrations of `schemas/migrations/`.

use std::path::Path;

use anyhow::Context;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use postgres_native_tls::MakeTlsConnector;

/// The migrations, in order. A worker expects exactly this many to be applied.
pub const MIGRATIONS: &[(&str, &str)] = &[
    (
        "0001_fleet",
        include_str!("../../../schemas/migrations/0001_fleet.sql"),
    ),
    (
        "0002_compact_store",
        include_str!("../../../schemas/migrations/0002_compact_store.sql"),
    ),
    (
        "0003_partition_owner",
        include_str!("../../../schemas/migrations/0003_partition_owner.sql"),
    ),
    (
        "0004_partition_leases",
        include_str!("../../../schemas/migrations/0004_partition_leases.sql"),
    ),
    (
        "0005_evaluation_requests",
        include_str!("../../../schemas/migrations/0005_evaluation_requests.sql"),
    ),
    (
        "0006_rule_proposals",
        include_str!("../../../schemas/migrations/0006_rule_proposals.sql"),
    ),
    (
        "0007_next_age_change",
        include_str!("../../../schemas/migrations/0007_next_age_change.sql"),
    ),
    (
        "0008_verdicts_lz4",
        include_str!("../../../schemas/migrations/0008_verdicts_lz4.sql"),
    ),
    (
        "0009_simulation_jobs",
        include_str!("../../../schemas/migrations/0009_simulation_jobs.sql"),
    ),
    (
        "0010_verdicts_inline",
        include_str!("../../../schemas/migrations/0010_verdicts_inline.sql"),
    ),
];

/// A pool over `url`, trusting the system's certificate authorities (tests and tools).
pub fn pool(url: &str, size: usize) -> anyhow::Result<Pool> {
    pool_with_ca(url, None, size)
}

/// A pool over `url` (`ELIGIBILITY_DATABASE_URL`). TLS as its `sslmode` asks: `disable`,
/// `prefer` or `require`; libpq's `verify-ca` and `verify-full` are accepted as `require`,
/// because TLS here always verifies the server's certificate chain and host name (so `require`
/// already means what libpq calls `verify-full`). With `ca_file` (PEM,
/// `ELIGIBILITY_DATABASE_CA_FILE`) that authority is trusted too: a managed database's CA
/// (RDS, Cloud SQL) or a private one.
pub fn pool_with_ca(url: &str, ca_file: Option<&Path>, size: usize) -> anyhow::Result<Pool> {
    let config: tokio_postgres::Config = as_tokio_postgres_url(url)
        .parse()
        .map_err(|e| anyhow::anyhow!("ELIGIBILITY_DATABASE_URL is not a PostgreSQL URL: {e}"))?;
    let mut tls = native_tls::TlsConnector::builder();
    if let Some(path) = ca_file {
        let pem = std::fs::read(path).with_context(|| {
            format!(
                "ELIGIBILITY_DATABASE_CA_FILE: cannot read {}",
                path.display()
            )
        })?;
        let ca = native_tls::Certificate::from_pem(&pem).with_context(|| {
            format!(
                "ELIGIBILITY_DATABASE_CA_FILE: {} is not a PEM certificate",
                path.display()
            )
        })?;
        tls.add_root_certificate(ca);
    }
    let tls = MakeTlsConnector::new(tls.build()?);
    let manager = Manager::from_config(
        config,
        tls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Ok(Pool::builder(manager).max_size(size).build()?)
}

/// Applies the migrations not yet applied, one transaction each, serialised across processes by
/// an advisory lock. Returns the names applied now.
pub async fn migrate(pool: &Pool) -> anyhow::Result<Vec<&'static str>> {
    let mut client = pool.get().await?;
    client
        .batch_execute(
            // Any constant works; this one spells "elig" in ASCII.
            "SELECT pg_advisory_lock(1701603687);
             CREATE TABLE IF NOT EXISTS schema_migrations (
                 name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
        )
        .await?;
    let result = async {
        let mut applied = Vec::new();
        for (name, sql) in MIGRATIONS {
            let done = client
                .query_opt("SELECT 1 FROM schema_migrations WHERE name = $1", &[name])
                .await?
                .is_some();
            if done {
                continue;
            }
            let tx = client.transaction().await?;
            tx.batch_execute(sql)
                .await
                .map_err(|e| match e.as_db_error() {
                    // tokio-postgres's Display says only "db error": name what PostgreSQL said.
                    Some(db) => {
                        anyhow::anyhow!("migration {name}: {}: {}", db.code().code(), db.message())
                    }
                    None => anyhow::anyhow!("migration {name}: {e}"),
                })?;
            tx.execute("INSERT INTO schema_migrations (name) VALUES ($1)", &[name])
                .await?;
            tx.commit().await?;
            applied.push(*name);
        }
        anyhow::Ok(applied)
    }
    .await;
    client
        .batch_execute("SELECT pg_advisory_unlock(1701603687)")
        .await?;
    result
}

/// `sslmode=verify-ca` / `verify-full` (libpq's names, which this client's parser refuses) as
/// `require`: the connector verifies chain and host name whatever the mode.
fn as_tokio_postgres_url(url: &str) -> String {
    url.replace("sslmode=verify-full", "sslmode=require")
        .replace("sslmode=verify-ca", "sslmode=require")
}

/// Whether the database has exactly the migrations this binary expects.
pub async fn schema_is_current(pool: &Pool) -> anyhow::Result<bool> {
    let client = pool.get().await?;
    let row = client
        .query_one(
            "SELECT count(*) FROM schema_migrations WHERE name = ANY($1)",
            &[&MIGRATIONS.iter().map(|(n, _)| *n).collect::<Vec<_>>()],
        )
        .await?;
    Ok(row.get::<_, i64>(0) as usize == MIGRATIONS.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpq_verify_modes_are_accepted_as_require() {
        for mode in ["verify-full", "verify-ca"] {
            let url =
                format!("postgres://u:p@db.internal:5432/e?sslmode={mode}&application_name=x");
            let config: tokio_postgres::Config = as_tokio_postgres_url(&url).parse().unwrap();
            assert_eq!(
                config.get_ssl_mode(),
                tokio_postgres::config::SslMode::Require
            );
            assert_eq!(config.get_application_name(), Some("x"));
        }
        let missing = pool_with_ca(
            "postgres://u@127.0.0.1/e?sslmode=require",
            Some(Path::new("/nonexistent/ca.pem")),
            1,
        )
        .err()
        .unwrap();
        assert!(
            missing
                .to_string()
                .contains("ELIGIBILITY_DATABASE_CA_FILE: cannot read /nonexistent/ca.pem"),
            "{missing}"
        );
    }
}
