//! Rule versions in PostgreSQL (`eligibility_rules`): seeding from the bundled corpus, loading,
//! and storing a new version from `policy.rules.updated`.

use std::collections::HashMap;

use deadpool_postgres::Pool;
use engine::{Catalogue, Rule, RuleSet};
use fleet::metrics::time_store;

use super::names::intern;

/// The current revision of the rules table (bumped by every change).
pub async fn revision(pool: &Pool) -> anyhow::Result<i64> {
    let client = pool.get().await?;
    Ok(client
        .query_one("SELECT revision FROM rules_revision", &[])
        .await?
        .get(0))
}

/// The state of a scheme's newest active version (`central` for a central scheme), or None
/// when no active rule has that scheme.
pub async fn state_of_scheme(pool: &Pool, scheme: &str) -> anyhow::Result<Option<String>> {
    let client = pool.get().await?;
    Ok(client
        .query_opt(
            "SELECT state FROM eligibility_rules WHERE scheme_id = $1 AND is_active
             ORDER BY rule_version DESC LIMIT 1",
            &[&scheme],
        )
        .await?
        .map(|r| r.get(0)))
}

/// Inserts the rules of `set` that the table does not have yet (the corpus shipped with the
/// image seeds a new database; versions published later through Kafka are kept).
pub async fn seed(pool: &Pool, set: &RuleSet) -> anyhow::Result<usize> {
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    lock(&tx).await?;
    let mut inserted = 0;
    for rule in &set.rules {
        // JSON is YAML: the document as loaded is stored as the rule's text.
        inserted += insert(&tx, rule, &rule.document.to_string(), "bundle", None).await?;
    }
    if inserted > 0 {
        bump(&tx).await?;
    }
    tx.commit().await?;
    Ok(inserted as usize)
}

/// Serialises writers of `eligibility_rules` until `tx` ends: workers starting together on a new
/// database all seed the same corpus, and a second insert of a version must wait for the first
/// to commit and then find it (`ON CONFLICT (rule_id)` alone does not cover the concurrent
/// `(scheme_id, rule_version)` conflict).
pub async fn lock(tx: &deadpool_postgres::Transaction<'_>) -> anyhow::Result<()> {
    // Any constant works; the migrations use 1701603687.
    tx.execute("SELECT pg_advisory_xact_lock(1701603688)", &[])
        .await?;
    Ok(())
}

/// Stores one rule version; returns 1 if it was new, 0 if the same rule id was there already.
pub async fn insert(
    tx: &deadpool_postgres::Transaction<'_>,
    rule: &Rule,
    text: &str,
    author: &str,
    reason: Option<&str>,
) -> anyhow::Result<u64> {
    let supersedes: Option<String> = tx
        .query_opt(
            "SELECT rule_id FROM eligibility_rules WHERE scheme_id = $1 AND rule_version < $2
             ORDER BY rule_version DESC LIMIT 1",
            &[&rule.scheme_id, &(rule.version as i32)],
        )
        .await?
        .map(|r| r.get(0));
    let until = rule.effective_until.map(|d| d.to_string());
    Ok(tx
        .execute(
            "INSERT INTO eligibility_rules (rule_id, scheme_id, state, department, rule_version,
                 rule_definition, rule_yaml, rule_hash, effective_from, effective_until, created_by,
                 change_reason, supersedes)
             VALUES ($1, $2, $3, $4, $5, $6::text::jsonb, $7, $8, $9::text::date, $10::text::date,
                     $11, $12, $13)
             ON CONFLICT (rule_id) DO NOTHING",
            &[
                &rule.rule_id,
                &rule.scheme_id,
                &rule.state,
                &rule.department,
                &(rule.version as i32),
                &rule.document.to_string(),
                &text,
                &rule.rule_hash,
                &rule.effective_from.to_string(),
                &until,
                &author,
                &reason,
                &supersedes,
            ],
        )
        .await?)
}

pub async fn bump(tx: &deadpool_postgres::Transaction<'_>) -> anyhow::Result<()> {
    tx.execute("UPDATE rules_revision SET revision = revision + 1", &[])
        .await?;
    Ok(())
}

/// The rules a worker holds: the revision they were loaded at, the rule set, and every stored
/// rule version by its `rule_key` (the name packed audit outcomes and stored verdicts use),
/// inactive ones included, so a stored verdict of a retired version can still be read.
pub struct Loaded {
    pub revision: i64,
    pub rules: RuleSet,
    pub versions: HashMap<i32, RuleRef>,
}

/// A stored rule version, by name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RuleRef {
    /// Held once ([`super::names`]): every stored verdict of every user loaded names its rule
    /// and scheme.
    pub rule_id: &'static str,
    pub scheme_id: &'static str,
    pub version: u32,
}

/// Loads every active rule, validated again (a row edited by hand cannot slip through).
pub async fn load(pool: &Pool, catalogue: &Catalogue) -> anyhow::Result<Loaded> {
    let client = pool.get().await?;
    let rows = time_store(
        "postgres",
        "load_rules",
        client.query(
            "SELECT rule_id, rule_yaml, (SELECT revision FROM rules_revision)
             FROM eligibility_rules WHERE is_active ORDER BY scheme_id, rule_version",
            &[],
        ),
    )
    .await?;
    let revision = rows.first().map_or(0, |r| r.get(2));
    let documents: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            (
                format!("eligibility_rules/{}", r.get::<_, &str>(0)),
                r.get(1),
            )
        })
        .collect();
    let rules = RuleSet::from_documents(catalogue, &documents)
        .map_err(|report| anyhow::anyhow!("stored rules are invalid:\n{report}"))?;
    let versions = client
        .query(
            "SELECT rule_key, rule_id, scheme_id, rule_version FROM eligibility_rules",
            &[],
        )
        .await?
        .iter()
        .map(|r| {
            let reference = RuleRef {
                rule_id: intern(r.get(1)),
                scheme_id: intern(r.get(2)),
                version: r.get::<_, i32>(3) as u32,
            };
            (r.get(0), reference)
        })
        .collect();
    Ok(Loaded {
        revision,
        rules,
        versions,
    })
}
