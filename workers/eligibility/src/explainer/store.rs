//! The explainer's PostgreSQL reads and writes, and its Redis entries.
//!
//! - Reads: the consumer offsets of its group; the profile snapshots (`profile_snapshots`, by
//!   the event's `input_hash`) and rule versions (`eligibility_rules.rule_yaml`, by `rule_id`)
//!   the evaluator stored; explanations already stored for the batch's evaluations (a
//!   redelivered event is answered with the stored explanation, not a second LLM call).
//! - One transaction per micro-batch: the `explanations` rows (`ON CONFLICT (evaluation_id,
//!   language) DO NOTHING`: the first explanation of an evaluation stays) and the offsets.
//! - Redis: `explanation:{user_id}:{scheme_id}:{language}`, the `eligibility.explained` payload
//!   as JSON, 24 h.

use std::collections::HashMap;

use deadpool_postgres::Pool;
use fleet::cache::Cache;
use fleet::error::IoError;
use fleet::events::EligibilityExplained;
use fleet::metrics::time_store;
use fleet::offsets::Offsets;
use serde_json::Value as Json;

pub fn cache_key(user_id: &str, scheme_id: &str, language: &str) -> String {
    format!("explanation:{user_id}:{scheme_id}:{language}")
}

/// What the evaluator stored that the events name.
#[derive(Default)]
pub struct Inputs {
    /// input_hash → profile JSON.
    pub snapshots: HashMap<String, Json>,
    /// rule_id → rule text (YAML, or JSON, which is YAML).
    pub rules: HashMap<String, String>,
}

impl Inputs {
    pub fn merge(&mut self, other: Inputs) {
        self.snapshots.extend(other.snapshots);
        self.rules.extend(other.rules);
    }
}

pub async fn load_inputs(
    pool: &Pool,
    input_hashes: &[String],
    rule_ids: &[String],
) -> anyhow::Result<Inputs> {
    let client = pool.get().await?;
    let mut inputs = Inputs::default();
    if !input_hashes.is_empty() {
        let rows = time_store(
            "postgres",
            "read_snapshot",
            client.query(
                "SELECT input_hash, profile::text FROM profile_snapshots
                 WHERE input_hash = ANY($1::bpchar[])",
                &[&input_hashes],
            ),
        )
        .await?;
        for row in rows {
            let hash: String = row.get(0);
            let json: Json = serde_json::from_str(row.get::<_, &str>(1))?;
            // CHAR(64): the stored hash may carry padding; hashes are exactly 64 hex digits.
            inputs.snapshots.insert(hash.trim_end().to_string(), json);
        }
    }
    if !rule_ids.is_empty() {
        let rows = time_store(
            "postgres",
            "load_rules",
            client.query(
                "SELECT rule_id, rule_yaml FROM eligibility_rules WHERE rule_id = ANY($1::text[])",
                &[&rule_ids],
            ),
        )
        .await?;
        for row in rows {
            inputs.rules.insert(row.get(0), row.get(1));
        }
    }
    Ok(inputs)
}

/// The explanations already stored for `evaluation_ids` (valid UUIDs), by (evaluation_id,
/// language).
pub async fn load_explanations(
    pool: &Pool,
    evaluation_ids: &[String],
) -> anyhow::Result<HashMap<(String, String), EligibilityExplained>> {
    if evaluation_ids.is_empty() {
        return Ok(HashMap::new());
    }
    let client = pool.get().await?;
    let rows = client
        .query(
            "SELECT evaluation_id::text, language, user_id, scheme_id, explanation, generated_by,
                    oracle_verdict, trust_score, fallback_reason
             FROM explanations WHERE evaluation_id = ANY($1::text[]::uuid[])",
            &[&evaluation_ids],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let evaluation_id: String = r.get(0);
            let language: String = r.get(1);
            let stored = EligibilityExplained {
                idempotency_key: idempotency_key(&evaluation_id, &language),
                user_id: r.get(2),
                scheme_id: r.get(3),
                evaluation_id: evaluation_id.clone(),
                language: language.clone(),
                explanation: r.get(4),
                generated_by: r.get(5),
                oracle_verdict: r.get(6),
                trust_score: r.get(7),
                fallback_reason: r.get(8),
            };
            ((evaluation_id, language), stored)
        })
        .collect())
}

/// The idempotency key of an `eligibility.explained` event.
pub fn idempotency_key(evaluation_id: &str, language: &str) -> String {
    format!("{evaluation_id}:{language}")
}

/// Stores the batch's explanations and offsets in one transaction.
pub async fn commit(
    pool: &Pool,
    group: &str,
    rows: &[EligibilityExplained],
    offsets: &Offsets,
) -> Result<(), IoError> {
    let mut client = pool.get().await?;
    time_store("postgres", "store_explanation", async {
        let tx = client.transaction().await?;
        if !rows.is_empty() {
            let col = |f: &dyn Fn(&EligibilityExplained) -> String| {
                rows.iter().map(f).collect::<Vec<String>>()
            };
            let ids = col(&|r| r.evaluation_id.clone());
            let languages = col(&|r| r.language.clone());
            let users = col(&|r| r.user_id.clone());
            let schemes = col(&|r| r.scheme_id.clone());
            let texts = col(&|r| r.explanation.clone());
            let by = col(&|r| r.generated_by.clone());
            let verdicts = col(&|r| r.oracle_verdict.clone());
            let trust: Vec<f32> = rows.iter().map(|r| r.trust_score).collect();
            let reasons: Vec<Option<String>> =
                rows.iter().map(|r| r.fallback_reason.clone()).collect();
            tx.execute(
                "INSERT INTO explanations (evaluation_id, language, user_id, scheme_id, explanation,
                     generated_by, oracle_verdict, trust_score, fallback_reason)
                 SELECT e::uuid, l, u, s, x, g, o, t, f
                 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
                             $6::text[], $7::text[], $8::real[], $9::text[])
                      AS r(e, l, u, s, x, g, o, t, f)
                 ON CONFLICT (evaluation_id, language) DO NOTHING",
                &[
                    &ids, &languages, &users, &schemes, &texts, &by, &verdicts, &trust, &reasons,
                ],
            )
            .await?;
        }
        fleet::offsets::commit(&tx, group, offsets).await?;
        tx.commit().await?;
        Ok::<(), IoError>(())
    })
    .await
}

/// Caches the explanations. A Redis failure is counted and logged, not fatal: PostgreSQL has
/// them.
pub async fn cache(cache: &Cache, rows: &[EligibilityExplained]) {
    let entries: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            (
                cache_key(&r.user_id, &r.scheme_id, &r.language),
                serde_json::to_string(r).expect("serialisable"),
            )
        })
        .collect();
    if let Err(e) = time_store("redis", "set", cache.put(&entries)).await {
        fleet::metrics::error("redis");
        tracing::warn!(error = %e, "explanation cache update failed");
    }
}
