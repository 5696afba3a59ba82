//! The checker of a chaos run (`scripts/chaos.sh`, docs/reliability.md "Chaos run"): once the
//! fleet has consumed everything sent, the stores are compared with what was sent and with a
//! full re-evaluation by the engine, the cache with the stores, and the transition events
//! with the verdicts they announce.
//!
//! - **Profiles**: each citizen's stored profile must be the last one sent (its input hash);
//!   any other is *lost*.
//! - **Verdicts**: the stored (scheme → rule, verdict, score) of each citizen must equal a full
//!   evaluation of the stored profile on its date under the active rules.
//! - **Audit**: every stored verdict must be backed by an audited evaluation — a row of the
//!   audit log with the same citizen, scheme, rule version, verdict and score — or it could not
//!   be reproduced for an auditor (*unaudited* otherwise).
//! - **Cache**: an entry present in Redis must agree with PostgreSQL (*stale* otherwise); an
//!   absent one only costs a read.
//! - **Transitions**: per (citizen, scheme), the last `new_match` / `lost` published must agree
//!   with the stored verdict (an ELIGIBLE pair's last event is its `new_match`; a pair whose
//!   last event is a `new_match` is still ELIGIBLE) — *last* by the profile the event read, in
//!   the order sent, then by rule version: the two topics are read side by side, so the order
//!   of reading says nothing of the order across them; and the transitions the audit log implies
//!   (its evaluations of a citizen ordered by the profile they read, in the order sent, then by
//!   rules revision; a verdict becoming ELIGIBLE is a `new_match`, leaving it a `lost`) must be
//!   exactly those published (distinct idempotency keys). Events published more than once carry
//!   the same idempotency key: they are counted, not errors.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use anyhow::{Context, Result};
use engine::{Catalogue, Date, Profile, RuleSet};
use fleet::avro::Codec;
use fleet::cache::Cache;
use fleet::config::KafkaConfig;
use fleet::events::{EligibilityLost, EligibilityNewMatch};
use fleet::topics::ELIGIBILITY_NEW_MATCH;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::{Message, Offset, TopicPartitionList};

/// (rule id, verdict, score) of one (citizen, scheme).
type Outcome = (String, String, i32);

/// What the checker found; [`Report::passed`] when nothing was lost, wrong or stale.
#[derive(Debug, Default)]
pub struct Report {
    pub citizens: usize,
    pub lost: Vec<String>,
    pub pairs_checked: usize,
    pub wrong: Vec<String>,
    pub cache_checked: usize,
    pub cache_stale: Vec<String>,
    pub passes_audited: i64,
    /// Evaluations the audit log holds (one row per scheme evaluated by a pass).
    pub evaluations_audited: usize,
    /// Stored verdicts, and those with an audited evaluation behind them.
    pub verdicts_stored: usize,
    pub verdicts_backed: usize,
    pub unaudited: Vec<String>,
    pub events_read: usize,
    pub pairs_announced: usize,
    /// Transitions the audit log implies, and distinct ones published.
    pub transitions_expected: usize,
    pub transitions_published: usize,
    /// Pairs whose implied and published transition counts differ.
    pub transitions_differing: Vec<String>,
    pub unannounced: Vec<String>,
    pub contradicted: Vec<String>,
    /// Idempotency keys published more than once, with how many times.
    pub duplicates: Vec<(String, usize)>,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.lost.is_empty()
            && self.wrong.is_empty()
            && self.cache_stale.is_empty()
            && self.unannounced.is_empty()
            && self.contradicted.is_empty()
            && self.transitions_differing.is_empty()
            && self.unaudited.is_empty()
    }

    pub fn print(&self) {
        let sample = |items: &[String]| {
            let shown: Vec<&str> = items.iter().take(5).map(String::as_str).collect();
            if shown.is_empty() {
                String::new()
            } else {
                format!(" (e.g. {})", shown.join("; "))
            }
        };
        println!("citizens sent: {}", self.citizens);
        println!(
            "profiles lost (stored profile is not the last sent): {}{}",
            self.lost.len(),
            sample(&self.lost)
        );
        println!(
            "verdicts checked against a full re-evaluation: {} pairs, wrong: {}{}",
            self.pairs_checked,
            self.wrong.len(),
            sample(&self.wrong)
        );
        println!(
            "evaluations audited: {} in {} passes; stored verdicts backed by an audited evaluation (same rule version, verdict, score): {} of {}, unaudited: {}{}",
            self.evaluations_audited,
            self.passes_audited,
            self.verdicts_backed,
            self.verdicts_stored,
            self.unaudited.len(),
            sample(&self.unaudited)
        );
        println!(
            "cache entries checked: {}, stale: {}{}",
            self.cache_checked,
            self.cache_stale.len(),
            sample(&self.cache_stale)
        );
        println!(
            "transition events read: {} over {} (citizen, scheme) pairs; ELIGIBLE without its new_match: {}{}; last event contradicting the verdict: {}{}",
            self.events_read,
            self.pairs_announced,
            self.unannounced.len(),
            sample(&self.unannounced),
            self.contradicted.len(),
            sample(&self.contradicted)
        );
        println!(
            "transitions implied by the audit log: {}, published (distinct idempotency keys): {}; pairs differing: {}{}",
            self.transitions_expected,
            self.transitions_published,
            self.transitions_differing.len(),
            sample(&self.transitions_differing)
        );
        let keys: Vec<String> = self
            .duplicates
            .iter()
            .map(|(key, n)| format!("{key} ×{n}"))
            .collect();
        println!(
            "events published more than once (same idempotency key, allowed): {}{}",
            self.duplicates.len(),
            sample(&keys)
        );
    }
}

/// Checks the stores and events of the database `pool` against `sent` (user → input hashes of
/// the profiles sent, in order); the transition topics are read from `marks` (their ends when
/// the run began). Call once the fleet has committed every record sent.
pub async fn check(
    pool: &deadpool_postgres::Pool,
    cache: &Cache,
    kafka: &KafkaConfig,
    codec: &Codec,
    sent: &HashMap<String, Vec<String>>,
    marks: &[TopicPartitionList],
) -> Result<Report> {
    let catalogue = Catalogue::bundled();
    let client = pool.get().await?;
    let documents: Vec<(String, String)> = client
        .query(
            "SELECT rule_id, rule_yaml FROM eligibility_rules WHERE is_active",
            &[],
        )
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let rules = RuleSet::from_documents(&catalogue, &documents)
        .map_err(|e| anyhow::anyhow!("the stored rules do not load: {e}"))?;
    let mut report = Report {
        citizens: sent.len(),
        ..Report::default()
    };

    let verdicts: HashMap<(String, String), Outcome> = client
        .query(
            "SELECT user_id, scheme_id, rule_id, verdict, match_score::int FROM current_verdicts",
            &[],
        )
        .await?
        .iter()
        .map(|r| ((r.get(0), r.get(1)), (r.get(2), r.get(3), r.get(4))))
        .collect();
    let mut stored_verdicts: HashMap<&str, BTreeMap<&str, &Outcome>> = HashMap::new();
    for ((user, scheme), outcome) in &verdicts {
        stored_verdicts
            .entry(user)
            .or_default()
            .insert(scheme, outcome);
    }
    let profiles = client
        .query(
            "SELECT c.user_id, c.input_hash, c.as_of::text, s.profile::text
             FROM profile_current c JOIN profile_snapshots s USING (input_hash)",
            &[],
        )
        .await?;
    let mut stored_hash: HashMap<String, String> = HashMap::new();
    for row in &profiles {
        let (user, hash, as_of, json): (String, String, String, String) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        stored_hash.insert(user.clone(), hash);
        let as_of = Date::parse(&as_of).context("a stored as_of")?;
        let json: serde_json::Value = serde_json::from_str(&json)?;
        let profile = Profile::from_json(&catalogue, &json, &user)
            .map_err(|e| anyhow::anyhow!("the stored profile of {user} does not load: {e}"))?
            .into_on(as_of);
        let state = json["demographics"]["state"].as_str();
        let mut expected = BTreeMap::new();
        for rule in RuleSet::for_state(rules.in_effect(as_of), state) {
            if let Ok(e) = engine::evaluate(&catalogue, rule, &profile, as_of) {
                let outcome = (
                    rule.rule_id.clone(),
                    e.verdict.name().to_string(),
                    i32::from(e.match_score),
                );
                expected.insert(rule.scheme_id.clone(), outcome);
            }
        }
        let stored = stored_verdicts.remove(user.as_str()).unwrap_or_default();
        report.pairs_checked += expected.len().max(stored.len());
        let schemes: HashSet<&str> = expected
            .keys()
            .map(String::as_str)
            .chain(stored.keys().copied())
            .collect();
        for scheme in schemes {
            let (want, have) = (expected.get(scheme), stored.get(scheme).copied());
            if want != have {
                report.wrong.push(format!(
                    "{user} {scheme}: stored {have:?}, re-evaluated {want:?}"
                ));
            }
        }
    }
    for user in stored_verdicts.keys() {
        report
            .wrong
            .push(format!("{user}: verdicts without a stored profile"));
    }
    for (user, hashes) in sent {
        if stored_hash.get(user) != hashes.last() {
            report.lost.push(user.clone());
        }
    }
    report.passes_audited = client
        .query_one("SELECT count(*) FROM evaluation_passes", &[])
        .await?
        .get(0);

    check_cache(cache, &verdicts, &mut report).await?;
    let audit = read_audit_log(&client, sent).await?;
    report.evaluations_audited = audit.rows;
    report.verdicts_stored = verdicts.len();
    for ((user, scheme), (rule_id, verdict, score)) in &verdicts {
        let key = (
            user.clone(),
            scheme.clone(),
            rule_id.clone(),
            verdict.clone(),
            *score,
        );
        if audit.evaluated.contains(&key) {
            report.verdicts_backed += 1;
        } else {
            report.unaudited.push(format!(
                "{user} {scheme}: {verdict} {score} ({rule_id}) has no audited evaluation"
            ));
        }
    }
    check_events(
        kafka,
        codec,
        sent,
        marks,
        &verdicts,
        &audit.implied,
        &mut report,
    )
    .await?;
    Ok(report)
}

async fn check_cache(
    cache: &Cache,
    verdicts: &HashMap<(String, String), Outcome>,
    report: &mut Report,
) -> Result<()> {
    let pairs: Vec<&(String, String)> = verdicts.keys().collect();
    for chunk in pairs.chunks(1000) {
        let keys: Vec<String> = chunk
            .iter()
            .map(|(user, scheme)| fleet::cache::verdict_key(user, scheme))
            .collect();
        let values = cache.get_many(&keys).await?;
        for (pair, value) in chunk.iter().zip(values) {
            let Some(value) = value else { continue };
            report.cache_checked += 1;
            let cached: serde_json::Value = serde_json::from_str(&value)?;
            let (rule_id, verdict, score) = &verdicts[*pair];
            let agrees = cached["rule_id"] == rule_id.as_str()
                && cached["verdict"] == verdict.as_str()
                && cached["match_score"] == *score;
            if !agrees {
                report.cache_stale.push(format!(
                    "{} {}: cached {value}, stored {verdict} {score} ({rule_id})",
                    pair.0, pair.1
                ));
            }
        }
    }
    Ok(())
}

/// What the audit log says, read once.
struct AuditLog {
    rows: usize,
    /// (citizen, scheme, rule id, verdict, score) of every audited evaluation.
    evaluated: HashSet<(String, String, String, String, i32)>,
    /// Per (citizen, scheme), the transitions (`new_match` or `lost`) the log implies: each
    /// citizen's evaluations ordered by the position of the profile they read among those
    /// sent, then by rules revision.
    implied: HashMap<(String, String), usize>,
}

async fn read_audit_log(
    client: &deadpool_postgres::Client,
    sent: &HashMap<String, Vec<String>>,
) -> Result<AuditLog> {
    let rows = client
        .query(
            "SELECT a.user_id, a.scheme_id, a.input_hash, p.rules_revision, a.verdict,
                    a.rule_id, a.match_score::int
             FROM evaluation_audit_log a
             JOIN evaluation_passes p
               ON p.user_id = a.user_id AND p.as_of = a.as_of AND p.pass_id = a.pass_id",
            &[],
        )
        .await?;
    // (position of the profile, rules revision, ELIGIBLE) of each evaluation of a pair.
    type Evaluated = (usize, i64, bool);
    let mut evaluations: HashMap<(String, String), Vec<Evaluated>> = HashMap::new();
    let mut evaluated = HashSet::new();
    for row in &rows {
        let (user, scheme, hash, revision, verdict): (String, String, String, i64, String) =
            (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
        evaluated.insert((
            user.clone(),
            scheme.clone(),
            row.get(5),
            verdict.clone(),
            row.get(6),
        ));
        let position = position_sent(sent, &user, &hash)?;
        evaluations.entry((user, scheme)).or_default().push((
            position,
            revision,
            verdict == "ELIGIBLE",
        ));
    }
    let implied = evaluations
        .into_iter()
        .map(|(pair, mut in_order)| {
            in_order.sort_unstable();
            let mut eligible = false;
            let mut transitions = 0;
            for (_, _, now) in in_order {
                transitions += usize::from(now != eligible);
                eligible = now;
            }
            (pair, transitions)
        })
        .collect();
    Ok(AuditLog {
        rows: rows.len(),
        evaluated,
        implied,
    })
}

/// The position of the profile of `hash` among those sent for `user`.
fn position_sent(sent: &HashMap<String, Vec<String>>, user: &str, hash: &str) -> Result<usize> {
    sent.get(user)
        .and_then(|hashes| hashes.iter().position(|h| h == hash))
        .with_context(|| format!("{user} was evaluated on a profile never sent ({hash})"))
}

/// Reads `new_match` and `lost` from `marks` to their current ends; per (citizen, scheme) of
/// the citizens sent, the last event must agree with the stored verdict, and the distinct
/// events published must be the transitions `implied` by the audit log.
async fn check_events(
    kafka: &KafkaConfig,
    codec: &Codec,
    sent: &HashMap<String, Vec<String>>,
    marks: &[TopicPartitionList],
    verdicts: &HashMap<(String, String), Outcome>,
    implied: &HashMap<(String, String), usize>,
    report: &mut Report,
) -> Result<()> {
    let consumer: StreamConsumer = fleet::kafka::client_config(kafka)
        .set("group.id", "chaos-check")
        .set("enable.auto.commit", "false")
        .create()?;
    let mut list = TopicPartitionList::new();
    let mut ends: HashMap<(String, i32), i64> = HashMap::new();
    for mark in marks.iter().flat_map(TopicPartitionList::elements) {
        let (topic, p) = (mark.topic(), mark.partition());
        let (_, high) = consumer.fetch_watermarks(topic, p, Duration::from_secs(30))?;
        let Offset::Offset(from) = mark.offset() else {
            anyhow::bail!("the mark of {topic}/{p} is not an offset");
        };
        if high > from {
            list.add_partition_offset(topic, p, Offset::Offset(from))?;
            ends.insert((topic.to_string(), p), high);
        }
    }
    consumer.assign(&list)?;
    // (user, scheme) → ((position of the profile read, rule version), the event was a
    // new_match) of its last event.
    let mut last: HashMap<(String, String), ((usize, i32), bool)> = HashMap::new();
    let mut keys: HashMap<String, usize> = HashMap::new();
    let mut published: HashMap<(String, String), HashSet<String>> = HashMap::new();
    while !ends.is_empty() {
        let message = tokio::time::timeout(Duration::from_secs(60), consumer.recv())
            .await
            .context("no event within 60 s while reading the transition topics")??;
        let at = (message.topic().to_string(), message.partition());
        if ends
            .get(&at)
            .is_some_and(|&end| message.offset() + 1 >= end)
        {
            ends.remove(&at);
        }
        let payload = message.payload().unwrap_or_default();
        let (user, scheme, key, read, matched) = if message.topic() == ELIGIBILITY_NEW_MATCH {
            let e: EligibilityNewMatch = codec.decode(payload).await?;
            let read = (e.input_hash, e.rule_version);
            (e.user_id, e.scheme_id, e.idempotency_key, read, true)
        } else {
            let e: EligibilityLost = codec.decode(payload).await?;
            let read = (e.input_hash, e.rule_version);
            (e.user_id, e.scheme_id, e.idempotency_key, read, false)
        };
        if !sent.contains_key(&user) {
            continue;
        }
        let order = (position_sent(sent, &user, &read.0)?, read.1);
        report.events_read += 1;
        *keys.entry(key.clone()).or_default() += 1;
        published
            .entry((user.clone(), scheme.clone()))
            .or_default()
            .insert(key);
        let latest = last.entry((user, scheme)).or_insert((order, matched));
        if order > latest.0 {
            *latest = (order, matched);
        }
    }
    report.pairs_announced = last.len();
    for (pair, (_, verdict, _)) in verdicts {
        let announced = last.get(pair).is_some_and(|&(_, matched)| matched);
        if verdict == "ELIGIBLE" && !announced && sent.contains_key(&pair.0) {
            report.unannounced.push(format!("{} {}", pair.0, pair.1));
        }
    }
    for (pair, (_, matched)) in &last {
        let eligible = verdicts.get(pair).is_some_and(|(_, v, _)| v == "ELIGIBLE");
        if *matched != eligible {
            report.contradicted.push(format!(
                "{} {}: last event {}, stored {:?}",
                pair.0,
                pair.1,
                if *matched { "new_match" } else { "lost" },
                verdicts.get(pair).map(|(_, v, _)| v)
            ));
        }
    }
    report.transitions_expected = implied.values().sum();
    report.transitions_published = published.values().map(HashSet::len).sum();
    for pair in implied
        .keys()
        .chain(published.keys())
        .collect::<HashSet<_>>()
    {
        let want = implied.get(pair).copied().unwrap_or(0);
        let have = published.get(pair).map_or(0, HashSet::len);
        if want != have {
            report.transitions_differing.push(format!(
                "{} {}: {want} implied, {have} published",
                pair.0, pair.1
            ));
        }
    }
    report.duplicates = keys.into_iter().filter(|(_, n)| *n > 1).collect();
    report.duplicates.sort();
    Ok(())
}
