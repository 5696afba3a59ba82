//! PostgreSQL: the connection pool and the schema migrations of `schemas/migrations/`.

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
];

/// A pool over `url` (TLS as the URL's `sslmode` asks; system trust store).
pub fn pool(url: &str, size: usize) -> anyhow::Result<Pool> {
    let config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| anyhow::anyhow!("ELIGIBILITY_DATABASE_URL is not a PostgreSQL URL: {e}"))?;
    let tls = MakeTlsConnector::new(native_tls::TlsConnector::new()?);
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
