//! Rule versions under review (docs/releases.md, "Review"): `rule_proposals`. A proposal is a
//! validated rule document that changes no verdict; a second person (never its author) approves
//! or rejects it; where the deployment requires review, the evaluator takes a version live from
//! `policy.rules.updated` only when an approved proposal has its exact hash.

use anyhow::Context;
use deadpool_postgres::Pool;
use engine::{Catalogue, Date, Rule, RuleSet};
use fleet::events::RuleSimulationCompleted;

use crate::rules::simulate;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Serialize)]
pub struct Proposal {
    pub proposal_id: i64,
    pub rule_id: String,
    pub scheme_id: String,
    pub rule_version: i32,
    pub rule_hash: String,
    #[serde(skip)]
    pub rule_yaml: String,
    pub author: String,
    pub reason: Option<String>,
    pub status: String,
    pub simulation: Option<Value>,
    pub decided_by: Option<String>,
    pub decision_reason: Option<String>,
    /// When proposed and decided (UTC, `YYYY-MM-DD HH:MM:SS`).
    pub proposed_at: String,
    pub decided_at: Option<String>,
}

/// A new rule version submitted for review.
pub struct Submission<'a> {
    pub rule: &'a Rule,
    /// The document as written (stored with the proposal).
    pub yaml: &'a str,
    pub author: &'a str,
    pub reason: Option<&'a str>,
    /// The date the population diff is computed on.
    pub as_of: Date,
}

/// What the CLI, the evaluator and the API do with a version under review: store it as a
/// proposal, then attach its diff against the stored population (`current`: the rules the
/// caller already loaded), evaluated on `engine`. Returns the proposal id, the diff and its
/// event.
pub async fn submit(
    pool: &Pool,
    catalogue: &Catalogue,
    current: &RuleSet,
    submission: &Submission<'_>,
    engine: &kernels::engine_select::Engine,
) -> anyhow::Result<(i64, Value, RuleSimulationCompleted)> {
    let Submission {
        rule,
        yaml,
        author,
        reason,
        as_of,
    } = *submission;
    let id = propose(pool, rule, yaml, author, reason).await?;
    let (diff, event) = simulate(pool, catalogue, current, id, rule, as_of, engine, None).await?;
    Ok((id, diff, event))
}

/// Stores `rule` as a proposal, without its diff yet; the same document already open is the
/// same proposal. Returns its id.
pub async fn propose(
    pool: &Pool,
    rule: &Rule,
    yaml: &str,
    author: &str,
    reason: Option<&str>,
) -> anyhow::Result<i64> {
    let client = pool.get().await?;
    let row = client
        .query_one(
            "INSERT INTO rule_proposals (rule_id, scheme_id, rule_version, rule_hash, rule_yaml, author, reason)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (rule_hash) WHERE status = 'proposed' DO UPDATE SET rule_hash = EXCLUDED.rule_hash
             RETURNING proposal_id",
            &[&rule.rule_id, &rule.scheme_id, &(rule.version as i32), &rule.rule_hash, &yaml, &author, &reason],
        )
        .await?;
    Ok(row.get(0))
}

/// A new version must not reuse a rule id for other content, and must be above the scheme's
/// versions. Re-publishing the same rule is allowed (a replay): it re-runs the re-evaluation.
pub fn check_new_version(rules: &RuleSet, rule: &Rule) -> Result<(), String> {
    if let Some(old) = rules.get(&rule.rule_id) {
        return if old.rule_hash == rule.rule_hash {
            Ok(())
        } else {
            Err(format!(
                "rule_id: {} already exists with other content (rule_hash {}); publish the change as a new rule_id with a higher version",
                rule.rule_id, old.rule_hash
            ))
        };
    }
    match rules
        .rules
        .iter()
        .filter(|r| r.scheme_id == rule.scheme_id)
        .map(|r| r.version)
        .max()
    {
        Some(latest) if latest >= rule.version => Err(format!(
            "version: {} is not above version {latest} of scheme {}",
            rule.version, rule.scheme_id
        )),
        _ => Ok(()),
    }
}

/// Whether an approved proposal has exactly this rule document.
pub async fn is_approved(pool: &Pool, rule: &Rule) -> anyhow::Result<bool> {
    let client = pool.get().await?;
    Ok(client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM rule_proposals
                            WHERE rule_id = $1 AND rule_hash = $2 AND status = 'approved')",
            &[&rule.rule_id, &rule.rule_hash],
        )
        .await?
        .get(0))
}

pub async fn get(pool: &Pool, id: i64) -> anyhow::Result<Proposal> {
    find(pool, id)
        .await?
        .with_context(|| format!("no proposal {id}"))
}

/// The columns a [`Proposal`] is read from (`with_simulation`: its diff too, else none).
fn columns(with_simulation: bool) -> String {
    let simulation = if with_simulation {
        "simulation::text"
    } else {
        "NULL::text"
    };
    format!(
        "proposal_id, rule_id, scheme_id, rule_version, rule_hash, rule_yaml, author, reason,
         status, {simulation}, decided_by, decision_reason,
         to_char(proposed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'),
         to_char(decided_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"
    )
}

fn from_row(row: &tokio_postgres::Row) -> anyhow::Result<Proposal> {
    let simulation: Option<String> = row.get(9);
    Ok(Proposal {
        proposal_id: row.get(0),
        rule_id: row.get(1),
        scheme_id: row.get(2),
        rule_version: row.get(3),
        rule_hash: row.get(4),
        rule_yaml: row.get(5),
        author: row.get(6),
        reason: row.get(7),
        status: row.get(8),
        simulation: simulation.map(|s| serde_json::from_str(&s)).transpose()?,
        decided_by: row.get(10),
        decision_reason: row.get(11),
        proposed_at: row.get(12),
        decided_at: row.get(13),
    })
}

/// The proposal `id`, if there is one.
pub async fn find(pool: &Pool, id: i64) -> anyhow::Result<Option<Proposal>> {
    let client = pool.get().await?;
    let query = format!(
        "SELECT {} FROM rule_proposals WHERE proposal_id = $1",
        columns(true)
    );
    client
        .query_opt(&query, &[&id])
        .await?
        .as_ref()
        .map(from_row)
        .transpose()
}

/// The newest `limit` proposals, decided or not (without their diffs): the review history.
pub async fn list(pool: &Pool, limit: i64) -> anyhow::Result<Vec<Proposal>> {
    let client = pool.get().await?;
    let query = format!(
        "SELECT {} FROM rule_proposals ORDER BY proposal_id DESC LIMIT $1",
        columns(false)
    );
    client
        .query(&query, &[&limit])
        .await?
        .iter()
        .map(from_row)
        .collect()
}

/// The proposal's population diff against every stored citizen the scheme covers (the first
/// `limit` by user id, when given), with the stored rules (`current`, which the caller has
/// loaded) in effect on `as_of`: attached to the proposal whole, and returned with its
/// `rule.simulation.completed` event (for the caller to publish), which carries it as admins see
/// it (`simulate::for_admins`).
#[allow(clippy::too_many_arguments)]
pub async fn simulate(
    pool: &Pool,
    catalogue: &Catalogue,
    current: &RuleSet,
    id: i64,
    rule: &Rule,
    as_of: Date,
    engine: &kernels::engine_select::Engine,
    limit: Option<usize>,
) -> anyhow::Result<(Value, RuleSimulationCompleted)> {
    let diff =
        simulate::stored_diff(catalogue, current, rule.clone(), as_of, engine, pool, limit).await?;
    let json = serde_json::to_value(&diff)?;
    attach_simulation(pool, id, &json).await?;
    let totals = diff.totals();
    let event = RuleSimulationCompleted {
        idempotency_key: format!("proposal:{id}:{}:{as_of}", rule.rule_hash),
        proposal_id: id,
        rule_id: rule.rule_id.clone(),
        scheme_id: rule.scheme_id.clone(),
        rule_version: rule.version as i32,
        as_of: as_of.to_string(),
        citizens: diff.citizens as i64,
        gained: totals.gained as i64,
        lost: totals.lost as i64,
        monthly_outlay_change_inr: totals.monthly_outlay_change_inr,
        conflicts_introduced: diff.conflicts_introduced.len() as i32,
        diff: simulate::for_admins(&json).to_string(),
    };
    Ok((json, event))
}

/// The event, encoded for `rule.simulation.completed` (keyed by scheme).
pub async fn encode_simulation(
    codec: &fleet::avro::Codec,
    event: &RuleSimulationCompleted,
) -> anyhow::Result<fleet::kafka::Outgoing> {
    let topic = fleet::topics::RULE_SIMULATION_COMPLETED;
    Ok(fleet::kafka::Outgoing {
        topic: topic.to_string(),
        key: event.scheme_id.as_bytes().to_vec(),
        partition: None,
        timestamp_ms: None,
        payload: codec.encode(topic, event).await?,
        headers: vec![("idempotency_key", event.idempotency_key.clone())],
    })
}

/// The batch engine of a simulation run by a worker or the command line: the GPU when there
/// is one (the API keeps to the CPU, which serves its requests).
pub fn simulation_engine() -> anyhow::Result<kernels::engine_select::Engine> {
    kernels::engine_select::Engine::new(kernels::engine_select::EngineChoice::Auto, 1_000_000)
        .map_err(|e| anyhow::anyhow!("{e}"))
}

/// An approved proposal's document as a `policy.rules.updated` record (header
/// `eligibility_proposal`): where the fleet takes it live.
pub async fn approved_record(
    codec: &fleet::avro::Codec,
    decided: &Proposal,
    by: &str,
    reason: &str,
) -> anyhow::Result<fleet::kafka::Outgoing> {
    let update = fleet::events::RulesUpdate {
        event_id: format!("proposal-{}", decided.proposal_id),
        rule_yaml: decided.rule_yaml.clone(),
        author: decided.author.clone(),
        reason: Some(format!("approved by {by}: {reason}")),
        as_of: None,
    };
    let topic = fleet::topics::POLICY_RULES_UPDATED;
    Ok(fleet::kafka::Outgoing {
        topic: topic.to_string(),
        key: decided.scheme_id.as_bytes().to_vec(),
        partition: None,
        timestamp_ms: None,
        payload: codec.encode(topic, &update).await?,
        headers: vec![("eligibility_proposal", decided.proposal_id.to_string())],
    })
}

/// Attaches the population diff to an open proposal.
pub async fn attach_simulation(pool: &Pool, id: i64, diff: &Value) -> anyhow::Result<()> {
    let client = pool.get().await?;
    client
        .execute(
            "UPDATE rule_proposals SET simulation = $2::text::jsonb WHERE proposal_id = $1",
            &[&id, &diff.to_string()],
        )
        .await?;
    Ok(())
}

/// Approves or rejects an open proposal. The decider must not be its author. Approving one
/// supersedes the other open proposals of the same scheme.
pub async fn decide(
    pool: &Pool,
    id: i64,
    by: &str,
    reason: &str,
    approve: bool,
) -> anyhow::Result<Proposal> {
    let proposal = get(pool, id).await?;
    anyhow::ensure!(
        proposal.status == "proposed",
        "proposal {id} is {}: only an open proposal can be decided",
        proposal.status
    );
    anyhow::ensure!(
        proposal.author != by,
        "proposal {id} was written by {by}: a second person must decide it (four eyes)"
    );
    anyhow::ensure!(!reason.trim().is_empty(), "--reason: say why");
    let status = if approve { "approved" } else { "rejected" };
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let changed = tx
        .execute(
            "UPDATE rule_proposals SET status = $2, decided_by = $3, decision_reason = $4, decided_at = now()
             WHERE proposal_id = $1 AND status = 'proposed'",
            &[&id, &status, &by, &reason],
        )
        .await?;
    anyhow::ensure!(
        changed == 1,
        "proposal {id} was decided by someone else meanwhile"
    );
    if approve {
        tx.execute(
            "UPDATE rule_proposals SET status = 'superseded', decided_at = now()
             WHERE scheme_id = $1 AND status = 'proposed' AND proposal_id <> $2",
            &[&proposal.scheme_id, &id],
        )
        .await?;
    }
    tx.commit().await?;
    get(pool, id).await
}
