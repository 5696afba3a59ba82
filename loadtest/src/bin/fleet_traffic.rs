//! `fleet_traffic`: drives a running evaluator (scripts/fleet.sh) through the real broker.
//!
//! - `prepare`: migrate a fresh database and start the worker's consumer group (and an
//!   explainer's) at the topics' current ends (so earlier traffic on the shared topics is not
//!   replayed into it).
//! - `bench`: N synthetic citizens, then profile updates at each of several offered rates (a
//!   fixed rate, or as fast as the broker takes them); for each, updates/s end to end (produce →
//!   evaluated → events published → offsets committed in PostgreSQL), the latency percentiles
//!   input → pass summary published, the rows PostgreSQL wrote per update and the worker's
//!   PostgreSQL time per batch.
//! - `rule-change`: N synthetic citizens, then a new version of one rule on
//!   `policy.rules.updated`; reports how long the fleet takes to re-evaluate every citizen the
//!   rule covers (audit rows written, events published, the record's offset committed).

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use fleet::avro::Codec;
use fleet::config::{KafkaArgs, KafkaConfig};
use fleet::events::*;
use fleet::kafka::Outgoing;
use fleet::topics::*;
use loadtest::citizens::{CitizenSpec, Citizens};
use loadtest::cpu::CpuSample;
use loadtest::retention;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::{Message, Offset, TopicPartitionList};
use serde_json::Value as Json;

#[derive(Parser)]
#[command(about = "Traffic for a running evaluator fleet")]
struct Cli {
    #[command(subcommand)]
    what: What,
    #[command(flatten)]
    kafka: KafkaArgs,
}

#[derive(Subcommand)]
enum What {
    /// Migrate ELIGIBILITY_DATABASE_URL and start GROUP at the input topics' current ends.
    Prepare {
        #[arg(long)]
        group: String,
        /// Also start this explainer group at the ends of the explainer's input topics.
        #[arg(long)]
        explainer_group: Option<String>,
    },
    /// Measure profile updates per second end to end.
    Bench {
        /// Citizens created before the measured updates.
        #[arg(long, default_value_t = 2000)]
        users: usize,
        /// Profile updates of the saturation phase (a paced phase sends `seconds` worth, at
        /// most this).
        #[arg(long, default_value_t = 20_000)]
        updates: usize,
        /// How long a paced phase sends.
        #[arg(long, default_value_t = 10)]
        seconds: usize,
        /// Offered loads, updates/s, one phase each; 0 = as fast as the broker takes them.
        #[arg(long, value_delimiter = ',', default_value = "100,1000,0")]
        rates: Vec<u32>,
        /// What each update changes: `wide` sets income anywhere in ₹40,000–4,40,000 (most
        /// updates cross several schemes' thresholds); `drift` moves it by under 3 % (a raise:
        /// few thresholds crossed, as in most real updates).
        #[arg(long, value_enum, default_value_t = Workload::Wide)]
        workload: Workload,
        /// Updates sent as fast as possible before the measured phases, and reported as the
        /// "warm-up" row: a citizen's first update is heavier than the ones after it (for the
        /// one in twenty created without an income, it brings one, and every scheme reading
        /// income is evaluated again), so the first phase would carry that extra work.
        #[arg(long, default_value_t = 0)]
        warm_up: usize,
        /// Keep every record on the broker. By default the records the group has committed are
        /// deleted every second, and so are the events the evaluators publish, once read (see
        /// `loadtest::retention`: the local broker's fetch and produce slow down as its
        /// partitions grow).
        #[arg(long)]
        keep_records: bool,
        /// The evaluator's consumer group (whose committed offsets mark "done").
        #[arg(long)]
        group: String,
    },
    /// Create citizens through the fleet, run the calendar sweep of a day with the
    /// `eligibility` binary, and time the fleet's re-evaluation of every citizen due that day.
    Sweep {
        /// Citizens created first; 0: sweep the population already stored (built in parts
        /// with `populate`).
        #[arg(long, default_value_t = 1_000_000)]
        users: usize,
        /// The day swept (the citizens are evaluated earlier, on 2025-01-15); by default the
        /// day after a central scheme of the bundled corpus ends (Stand-Up India, 2025-03-31).
        #[arg(long, default_value = "2025-04-01")]
        day: String,
        /// The `eligibility` binary whose `sweep` command publishes the day's records.
        #[arg(long)]
        eligibility: std::path::PathBuf,
        #[arg(long)]
        group: String,
    },
    /// Create citizens through the fleet (user ids usr_00000000, usr_00000001, ...) and wait
    /// until every one is evaluated and stored: the population an API benchmark reads.
    Populate {
        #[arg(long, default_value_t = 100_000)]
        users: usize,
        /// The first user's number: a population built in parts (usr_{first}, ...).
        #[arg(long, default_value_t = 0)]
        first: u64,
        #[arg(long)]
        group: String,
    },
    /// A chaos run's traffic and its check (`scripts/chaos.sh` injects the faults meanwhile):
    /// N citizens, then profile updates at a fixed rate with new versions of a rule among
    /// them, then, once the fleet has consumed everything, the checker (`loadtest::chaos`).
    /// MARKER exists while updates are being sent. Exits 1 when the check fails.
    Chaos {
        #[arg(long, default_value_t = 100_000)]
        users: usize,
        #[arg(long, default_value_t = 1_000_000)]
        updates: usize,
        /// Updates offered per second.
        #[arg(long, default_value_t = 2000)]
        rate: u32,
        /// A rule whose next versions are published during the updates (same conditions: every
        /// citizen it covers is re-evaluated).
        #[arg(long)]
        rule: std::path::PathBuf,
        #[arg(long, default_value_t = 3)]
        rule_changes: u32,
        #[arg(long)]
        marker: std::path::PathBuf,
        #[arg(long)]
        group: String,
    },
    /// Measure the re-evaluation of every citizen after one rule changes.
    RuleChange {
        /// Citizens created before the rule changes.
        #[arg(long, default_value_t = 100_000)]
        users: usize,
        /// The rule whose next version is published (a central rule covers every citizen).
        #[arg(long)]
        rule: std::path::PathBuf,
        #[arg(long)]
        group: String,
    },
}

const AS_OF: &str = "2025-01-15";

struct Env {
    kafka: KafkaConfig,
    codec: Codec,
    producer: rdkafka::producer::FutureProducer,
    database_url: String,
}

/// See [`Env::new`].
const UPSTREAM_LINGER_MS: &str = "20";

impl Env {
    fn new(kafka: &KafkaArgs) -> Result<Env> {
        let kafka: KafkaConfig = kafka.config()?;
        let registry = std::env::var("ELIGIBILITY_SCHEMA_REGISTRY_URL")
            .context("ELIGIBILITY_SCHEMA_REGISTRY_URL is required")?;
        let topics: Vec<String> = [
            USER_METADATA_UPDATED,
            POLICY_RULES_UPDATED,
            ELIGIBILITY_NEW_MATCH,
            ELIGIBILITY_LOST,
            ELIGIBILITY_PARTIAL_MATCH,
            ELIGIBILITY_BATCH_COMPUTED,
        ]
        .map(str::to_string)
        .to_vec();
        // The upstream producers' batching: records wait up to 20 ms to share a request (a
        // paced stream otherwise sends a few records per partition per request, and the
        // broker, on the same two cores as the fleet, pays per request). The wait counts in
        // the latency measured: it runs from the send call.
        let mut upstream = kafka.clone();
        if !upstream
            .properties
            .iter()
            .any(|(name, _)| name == "linger.ms")
        {
            upstream
                .properties
                .push(("linger.ms".into(), UPSTREAM_LINGER_MS.into()));
        }
        Ok(Env {
            codec: Codec::new(&registry, &topics),
            producer: fleet::kafka::producer(&upstream)?,
            database_url: std::env::var("ELIGIBILITY_DATABASE_URL")
                .context("ELIGIBILITY_DATABASE_URL is required")?,
            kafka,
        })
    }

    /// The current end of every partition of `topics`, in one list.
    fn ends_of(&self, topics: &[&str]) -> Result<TopicPartitionList> {
        let mut list = TopicPartitionList::new();
        for topic in topics {
            for e in self.ends(topic)?.elements() {
                list.add_partition_offset(topic, e.partition(), e.offset())?;
            }
        }
        Ok(list)
    }

    fn ends(&self, topic: &str) -> Result<TopicPartitionList> {
        let probe: StreamConsumer = fleet::kafka::client_config(&self.kafka)
            .set("group.id", "fleet-traffic")
            .create()?;
        let partitions = partition_map()
            .all_topics()
            .into_iter()
            .find(|(t, _)| t == topic)
            .map_or(1, |(_, p)| p);
        let mut list = TopicPartitionList::new();
        for p in 0..partitions {
            let (_, high) = probe.fetch_watermarks(topic, p, Duration::from_secs(10))?;
            list.add_partition_offset(topic, p, Offset::Offset(high))?;
        }
        Ok(list)
    }

    async fn profile_records(&self, profiles: &[Json]) -> Result<Vec<Outgoing>> {
        let mut out = Vec::with_capacity(profiles.len());
        for profile in profiles {
            let user = profile["user_id"].as_str().context("user_id")?.to_string();
            let update = ProfileUpdate {
                event_id: engine::hash::jcs_sha256(profile),
                user_id: user.clone(),
                profile: profile.to_string(),
                as_of: Some(AS_OF.into()),
            };
            out.push(Outgoing {
                topic: USER_METADATA_UPDATED.into(),
                key: user.into_bytes(),
                partition: None,
                timestamp_ms: None,
                payload: self.codec.encode(USER_METADATA_UPDATED, &update).await?,
                headers: vec![],
            });
        }
        Ok(out)
    }
}

/// Sends each profile to its state's partition (the partition map), all acknowledged.
async fn send_profiles(env: &Env, profiles: &[Json], records: &[Outgoing]) -> Result<()> {
    let pending = enqueue_profiles(env, profiles, records).await?;
    acknowledged(pending).await
}

/// Hands each profile to the producer for its state's partition without waiting for the
/// broker: a paced sender must not slow down to the acknowledgements' pace.
async fn enqueue_profiles(
    env: &Env,
    profiles: &[Json],
    records: &[Outgoing],
) -> Result<Vec<rdkafka::producer::DeliveryFuture>> {
    use rdkafka::producer::FutureRecord;
    let mut pending = Vec::with_capacity(records.len());
    for (profile, record) in profiles.iter().zip(records) {
        let state = profile["demographics"]["state"].as_str();
        let user = profile["user_id"].as_str().unwrap_or_default();
        let partition = partition_map().partition_for(state, user);
        loop {
            let r = FutureRecord::to(&record.topic)
                .key(&record.key)
                .payload(&record.payload)
                .partition(partition);
            match env.producer.send_result(r) {
                Ok(delivery) => {
                    pending.push(delivery);
                    break;
                }
                Err((e, _))
                    if e.rdkafka_error_code()
                        == Some(rdkafka::types::RDKafkaErrorCode::QueueFull) =>
                {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                Err((e, _)) => return Err(e.into()),
            }
        }
    }
    Ok(pending)
}

async fn acknowledged(pending: Vec<rdkafka::producer::DeliveryFuture>) -> Result<()> {
    for delivery in pending {
        delivery.await.context("cancelled")?.map_err(|(e, _)| e)?;
    }
    Ok(())
}

fn reader(env: &Env, marks: &TopicPartitionList) -> Result<StreamConsumer> {
    Ok(fleet::kafka::assigned_consumer(&env.kafka, marks)?)
}

#[tokio::main]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    let env = Env::new(&cli.kafka)?;
    match cli.what {
        What::Prepare {
            group,
            explainer_group,
        } => {
            prepare(&env, &group, &EVALUATOR_INPUTS).await?;
            match explainer_group {
                Some(group) => prepare(&env, &group, &EXPLAINER_INPUTS).await,
                None => Ok(()),
            }
        }
        What::Bench {
            users,
            updates,
            rates,
            workload,
            warm_up,
            seconds,
            keep_records,
            group,
        } => {
            let phases = Phases {
                warm_up,
                rates,
                updates,
                seconds,
            };
            // Two connections: the bench's own queries and the retention task's.
            let pool = fleet::postgres::pool(&env.database_url, 2)?;
            let retention = (!keep_records).then(|| {
                let (kafka, pool, group) = (env.kafka.clone(), pool.clone(), group.clone());
                tokio::spawn(async move {
                    let topics = [USER_METADATA_UPDATED];
                    if let Err(e) =
                        retention::delete_committed(&kafka, &pool, &group, &topics).await
                    {
                        eprintln!("  (committed records are no longer deleted: {e:#})");
                    }
                })
            });
            let result = bench(&env, &pool, users, &phases, workload, &group, keep_records).await;
            if let Some(task) = &retention {
                task.abort();
            }
            result
        }
        What::RuleChange { users, rule, group } => rule_change(&env, users, &rule, &group).await,
        What::Chaos {
            users,
            updates,
            rate,
            rule,
            rule_changes,
            marker,
            group,
        } => {
            let plan = ChaosPlan {
                users,
                updates,
                rate,
                rule: &rule,
                rule_changes,
                marker: &marker,
            };
            chaos(&env, &plan, &group).await
        }
        What::Sweep {
            users,
            day,
            eligibility,
            group,
        } => sweep(&env, users, &day, &eligibility, &group).await,
        What::Populate {
            users,
            first,
            group,
        } => {
            let pool = fleet::postgres::pool(&env.database_url, 1)?;
            create_citizens(&env, &pool, &group, users, first)
                .await
                .map(|_| ())
        }
    }
}

async fn prepare(env: &Env, group: &str, topics: &[&str]) -> Result<()> {
    let pool = fleet::postgres::pool(&env.database_url, 1)?;
    fleet::postgres::migrate(&pool).await?;
    let mut ends = fleet::offsets::Offsets::new();
    for &topic in topics {
        for e in env.ends(topic)?.elements() {
            if let Offset::Offset(o) = e.offset() {
                ends.insert((e.topic().to_string(), e.partition()), o);
            }
        }
    }
    fleet::offsets::start_at(&pool, group, &ends).await?;
    println!(
        "consumer group {group} starts at the current end of {} partitions",
        ends.len()
    );
    Ok(())
}

async fn committed(pool: &deadpool_postgres::Pool, group: &str, topic: &str) -> Result<i64> {
    let client = pool.get().await?;
    Ok(client
        .query_one(
            "SELECT coalesce(sum(next_offset), 0)::bigint FROM consumer_offsets
             WHERE consumer_group = $1 AND topic = $2",
            &[&group, &topic],
        )
        .await?
        .get(0))
}

/// Creates `users` citizens through the fleet (each evaluated against every scheme it may
/// hold) and waits until all are committed.
async fn create_citizens(
    env: &Env,
    pool: &deadpool_postgres::Pool,
    group: &str,
    users: usize,
    first: u64,
) -> Result<Vec<Json>> {
    let mut citizens = Citizens::new(CitizenSpec {
        seed: 17 + first,
        missing_rate: 0.05,
        schemes: 1000,
    })
    .numbered_from(first);
    let base: Vec<Json> = (0..users).map(|_| citizens.next_profile()).collect();
    let start_offsets = committed(pool, group, USER_METADATA_UPDATED).await?;
    let t = Instant::now();
    // In slices, so that encoding and sending overlap with the fleet's work on earlier ones.
    for slice in base.chunks(10_000) {
        let records = env.profile_records(slice).await?;
        send_profiles(env, slice, &records).await?;
    }
    wait_committed(
        pool,
        group,
        USER_METADATA_UPDATED,
        start_offsets + users as i64,
        t,
    )
    .await?;
    println!(
        "{users} citizens evaluated against every scheme in {:.1}s ({:.0} citizens/s)",
        t.elapsed().as_secs_f64(),
        users as f64 / t.elapsed().as_secs_f64()
    );
    Ok(base)
}

async fn rule_change(env: &Env, users: usize, rule: &std::path::Path, group: &str) -> Result<()> {
    let pool = fleet::postgres::pool(&env.database_url, 1)?;
    create_citizens(env, &pool, group, users, 0).await?;

    let (record, rule_id, version, state) =
        next_version(env, rule, 1, "rule-change benchmark").await?;
    let before = committed(&pool, group, POLICY_RULES_UPDATED).await?;
    let t = Instant::now();
    fleet::kafka::send_all(&env.producer, &[record]).await?;
    // The original, then the copy the evaluator fans out to each partition of the rule's
    // state (every partition for a central rule), each re-evaluating that partition's users.
    let copies = partition_map().partitions_of_scheme(&state).len() as i64;
    wait_committed(&pool, group, POLICY_RULES_UPDATED, before + 1 + copies, t).await?;
    let elapsed = t.elapsed();
    let client = pool.get().await?;
    let evaluated: i64 = client
        .query_one(
            "SELECT count(*) FROM evaluation_audit_log WHERE rule_id = $1",
            &[&rule_id],
        )
        .await?
        .get(0);
    println!(
        "rule {rule_id} (version {version}): {evaluated} citizens re-evaluated, audited, published and committed in {:.1}s ({:.0} citizens/s)",
        elapsed.as_secs_f64(),
        evaluated as f64 / elapsed.as_secs_f64()
    );
    Ok(())
}

/// The record publishing version `+ step` of the rule at `path` (same conditions, a new id):
/// (record, rule id, version, state).
async fn next_version(
    env: &Env,
    path: &std::path::Path,
    step: u64,
    reason: &str,
) -> Result<(Outgoing, String, u64, String)> {
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    let mut doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text)?;
    let version = doc["version"].as_u64().context("the rule has no version")? + step;
    let rule_id = format!(
        "{}_v{version}",
        doc["rule_id"].as_str().context("the rule has no rule_id")?
    );
    doc["version"] = version.into();
    doc["rule_id"] = rule_id.clone().into();
    let update = RulesUpdate {
        event_id: format!("fleet-traffic-{rule_id}"),
        rule_yaml: serde_yaml_ng::to_string(&doc)?,
        author: "fleet_traffic".into(),
        reason: Some(reason.into()),
        as_of: Some(AS_OF.into()),
    };
    let record = Outgoing {
        topic: POLICY_RULES_UPDATED.into(),
        key: rule_id.clone().into_bytes(),
        partition: None,
        timestamp_ms: None,
        payload: env.codec.encode(POLICY_RULES_UPDATED, &update).await?,
        headers: vec![],
    };
    let state = doc["state"]
        .as_str()
        .context("the rule has no state")?
        .to_string();
    Ok((record, rule_id, version, state))
}

struct ChaosPlan<'a> {
    users: usize,
    updates: usize,
    rate: u32,
    rule: &'a std::path::Path,
    rule_changes: u32,
    marker: &'a std::path::Path,
}

/// The chaos run's traffic, then its check. Updates go out a second's worth at a time, each
/// second's to distinct citizens and acknowledged before the next (a failed send is sent
/// again), so the last profile acknowledged for a citizen is the last one the fleet reads.
async fn chaos(env: &Env, plan: &ChaosPlan<'_>, group: &str) -> Result<()> {
    let pool = fleet::postgres::pool(&env.database_url, 2)?;
    let marks: Vec<TopicPartitionList> = [ELIGIBILITY_NEW_MATCH, ELIGIBILITY_LOST]
        .iter()
        .map(|t| env.ends(t))
        .collect::<Result<_>>()?;
    let mut profiles = create_citizens(env, &pool, group, plan.users, 0).await?;
    // Each citizen's profiles (input hashes) in the order acknowledged: the last is what the
    // store must hold, the order is how the checker reads the audit log.
    let mut sent_profiles: HashMap<String, Vec<String>> = profiles
        .iter()
        .map(|p| {
            (
                p["user_id"].as_str().unwrap_or_default().to_string(),
                vec![engine::hash::jcs_sha256(p)],
            )
        })
        .collect();
    std::fs::write(plan.marker, b"sending updates\n")?;
    let per_second = (plan.rate as usize).clamp(1, plan.users);
    let t = Instant::now();
    let mut changes_sent = 0u64;
    let mut sent = 0usize;
    while sent < plan.updates {
        let count = per_second.min(plan.updates - sent);
        let batch: Vec<Json> = (sent..sent + count)
            .map(|i| {
                let at = (i * 7919) % plan.users;
                let p = &mut profiles[at];
                let income = p["economic"]["annual_income"]
                    .as_f64()
                    .map_or(100_000, |v| v as i64);
                // Up and down by under 3 %, distinct per update (every record is a change), each
                // citizen's turns alternating, so that an income near a limit crosses it again.
                let step = income * (1 + (i as i64 * 7) % 29) / 1000 + 1;
                p["economic"]["annual_income"] = (if (i / plan.users).is_multiple_of(2) {
                    income + step
                } else {
                    (income - step).max(0)
                })
                .into();
                p.clone()
            })
            .collect();
        let records = env.profile_records(&batch).await?;
        send_until_acknowledged(env, &batch, &records).await?;
        for p in &batch {
            let user = p["user_id"].as_str().unwrap_or_default().to_string();
            sent_profiles
                .entry(user)
                .or_default()
                .push(engine::hash::jcs_sha256(p));
        }
        sent += count;
        // The rule's next versions at even intervals among the updates.
        let due = u64::from(plan.rule_changes) * sent as u64 / plan.updates as u64;
        while changes_sent < due {
            changes_sent += 1;
            let (record, rule_id, _, _) =
                next_version(env, plan.rule, changes_sent, "chaos run").await?;
            fleet::kafka::send_all(&env.producer, &[record]).await?;
            println!("  rule {rule_id} published after {sent} updates");
        }
        let due = Duration::from_secs_f64(sent as f64 / f64::from(plan.rate.max(1)));
        tokio::time::sleep_until((t + due).into()).await;
        if sent % (per_second * 10) < count {
            println!("  {sent} updates sent in {:.0}s", t.elapsed().as_secs_f64());
        }
    }
    std::fs::remove_file(plan.marker)?;
    println!(
        "{sent} updates and {changes_sent} rule versions sent in {:.1}s; waiting for the fleet to consume everything",
        t.elapsed().as_secs_f64()
    );
    wait_consumed(env, &pool, group).await?;
    println!("consumed after {:.1}s; checking", t.elapsed().as_secs_f64());
    // The cache is written just after each commit.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let cache = fleet::cache::Cache::connect(
        &std::env::var("ELIGIBILITY_REDIS_URL").context("ELIGIBILITY_REDIS_URL is required")?,
        None,
    )
    .await?;
    let report = loadtest::chaos::check(
        &pool,
        &cache,
        &env.kafka,
        &env.codec,
        &sent_profiles,
        &marks,
    )
    .await?;
    report.print();
    if !report.passed() {
        anyhow::bail!("the chaos check failed");
    }
    println!("chaos check: PASSED");
    Ok(())
}

/// Sends `records` (to distinct citizens), sending again those whose delivery failed, until
/// every one is acknowledged (the broker may be restarting).
async fn send_until_acknowledged(env: &Env, profiles: &[Json], records: &[Outgoing]) -> Result<()> {
    let mut waiting: Vec<usize> = (0..records.len()).collect();
    for attempt in 1.. {
        let chosen: Vec<Json> = waiting.iter().map(|&i| profiles[i].clone()).collect();
        let outgoing: Vec<Outgoing> = waiting.iter().map(|&i| records[i].clone()).collect();
        let pending = enqueue_profiles(env, &chosen, &outgoing).await?;
        let mut failed = Vec::new();
        for (delivery, &i) in pending.into_iter().zip(&waiting) {
            if !matches!(delivery.await, Ok(Ok(_))) {
                failed.push(i);
            }
        }
        if failed.is_empty() {
            return Ok(());
        }
        anyhow::ensure!(
            attempt < 30,
            "{} updates still unacknowledged after {attempt} attempts",
            failed.len()
        );
        eprintln!(
            "  {} deliveries failed (attempt {attempt}); sending them again",
            failed.len()
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
        waiting = failed;
    }
    unreachable!("the loop returns or fails")
}

/// Waits until the group has committed every record of the evaluator's input topics (the rule
/// topic's fan-out copies included: its end must hold still across two looks).
async fn wait_consumed(env: &Env, pool: &deadpool_postgres::Pool, group: &str) -> Result<()> {
    let since = Instant::now();
    let (mut settled, mut behind) = (0, None);
    loop {
        anyhow::ensure!(
            since.elapsed() < Duration::from_secs(1800),
            "{behind:?} records still not consumed after 30 minutes"
        );
        // The broker or PostgreSQL may be coming back from the last fault: asked again.
        let now = match records_behind(env, pool, group).await {
            Ok(now) => now,
            Err(e) => {
                eprintln!("  … cannot tell how far the fleet is yet: {e:#}");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        behind = Some(now);
        settled = if now == 0 { settled + 1 } else { 0 };
        if settled >= 2 {
            return Ok(());
        }
        if now > 0 && since.elapsed().as_secs().is_multiple_of(10) {
            eprintln!(
                "  … {now} records to go after {:.0}s",
                since.elapsed().as_secs_f64()
            );
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Records on the evaluator's input topics that `group` has not committed yet.
async fn records_behind(env: &Env, pool: &deadpool_postgres::Pool, group: &str) -> Result<i64> {
    let mut behind = 0i64;
    for topic in EVALUATOR_INPUTS {
        let end: i64 = env
            .ends(topic)?
            .elements()
            .iter()
            .map(|e| match e.offset() {
                Offset::Offset(o) => o,
                _ => 0,
            })
            .sum();
        behind += (end - committed(pool, group, topic).await?).max(0);
    }
    Ok(behind)
}

/// The sweep of `day` over `users` citizens: from the `sweep` command's start until the
/// evaluators have committed every record on the calendar topic — the sweep's and the copies
/// they fan out to each partition, each re-evaluating that partition's due citizens.
async fn sweep(
    env: &Env,
    users: usize,
    day: &str,
    eligibility: &std::path::Path,
    group: &str,
) -> Result<()> {
    let pool = fleet::postgres::pool(&env.database_url, 1)?;
    if users > 0 {
        create_citizens(env, &pool, group, users, 0).await?;
    }
    let population: i64 = pool
        .get()
        .await?
        .query_one("SELECT count(*) FROM profile_current", &[])
        .await?
        .get(0);
    let end = || -> Result<i64> {
        Ok(env
            .ends(SCHEME_DEADLINE_APPROACHING)?
            .elements()
            .iter()
            .map(|e| match e.offset() {
                Offset::Offset(o) => o,
                _ => 0,
            })
            .sum())
    };
    let t = Instant::now();
    let swept = std::process::Command::new(eligibility)
        .args(["sweep", "--as-of", day])
        .output()
        .with_context(|| eligibility.display().to_string())?;
    anyhow::ensure!(
        swept.status.success(),
        "the sweep failed: {}",
        String::from_utf8_lossy(&swept.stderr)
    );
    print!("{}", String::from_utf8_lossy(&swept.stdout));
    let published = t.elapsed();
    // A record is committed only after the copies it fans out are on the topic, so the group
    // has caught up with the topic's end only once every copy is done.
    let mut last = Instant::now();
    loop {
        let (done, end) = (
            committed(&pool, group, SCHEME_DEADLINE_APPROACHING).await?,
            end()?,
        );
        if done >= end {
            break;
        }
        if last.elapsed() > Duration::from_secs(5) {
            eprintln!(
                "  … {} record(s) to go after {:.0}s",
                end - done,
                t.elapsed().as_secs_f64()
            );
            last = Instant::now();
        }
        anyhow::ensure!(
            t.elapsed() < Duration::from_secs(3600),
            "the sweep took over an hour"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let elapsed = t.elapsed();
    let client = pool.get().await?;
    // Every citizen re-evaluated on the day now has it as their current date (a scheme that
    // ends leaves no evaluation to audit, only the verdict removed and a `lost` where it was
    // ELIGIBLE).
    let passes: i64 = client
        .query_one(
            "SELECT count(*) FROM profile_current WHERE as_of = $1::text::date",
            &[&day],
        )
        .await?
        .get(0);
    println!(
        "sweep of {day} over {population} citizens: the records published in {:.1}s, {passes} citizens \
         re-evaluated, their changes audited, published and committed in {:.1}s ({:.0} citizens/s)",
        published.as_secs_f64(),
        elapsed.as_secs_f64(),
        passes as f64 / elapsed.as_secs_f64()
    );
    Ok(())
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Workload {
    Wide,
    Drift,
}

/// A benchmark's phases of updates: the warm-up (if any), then one per offered rate.
struct Phases {
    warm_up: usize,
    rates: Vec<u32>,
    updates: usize,
    seconds: usize,
}

impl Phases {
    /// Each phase: its label, its offered rate (0: as fast as possible) and its updates.
    fn each(&self) -> Vec<(String, u32, usize)> {
        let warm_up = (self.warm_up > 0).then(|| ("warm-up".to_string(), 0, self.warm_up));
        let measured = self.rates.iter().map(|&rate| match rate {
            0 => ("max".to_string(), 0, self.updates),
            _ => (
                rate.to_string(),
                rate,
                self.updates.min(rate as usize * self.seconds),
            ),
        });
        warm_up.into_iter().chain(measured).collect()
    }
}

/// The topics an evaluator publishes a profile update's events to: first the pass summaries,
/// which the bench reads, then those it does not.
const PUBLISHED: [&str; 5] = [
    ELIGIBILITY_BATCH_COMPUTED,
    ELIGIBILITY_COMPUTED,
    ELIGIBILITY_NEW_MATCH,
    ELIGIBILITY_LOST,
    ELIGIBILITY_PARTIAL_MATCH,
];

async fn bench(
    env: &Env,
    pool: &deadpool_postgres::Pool,
    users: usize,
    phases: &Phases,
    workload: Workload,
    group: &str,
    keep_records: bool,
) -> Result<()> {
    let deleter = match keep_records {
        true => None,
        false => Some(retention::Deleter::new(&env.kafka)?),
    };
    let deleter = deleter.as_ref();
    // Phase 1: every citizen's first evaluation (all schemes), not measured.
    let base = create_citizens(env, pool, group, users, 0).await?;
    // A first evaluation caches every scheme of every citizen after its commit; measuring
    // starts once the workers are done with that, not while they still are.
    workers_settled().await;
    println!(
        "\n{:>10} {:>8} {:>10} {:>8} {:>8} {:>8} {:>11} {:>12} {:>10}",
        "offered/s",
        "updates",
        "done/s",
        "p50 ms",
        "p99 ms",
        "max ms",
        "rows/update",
        "pg ms/batch",
        "batch size"
    );
    let mut sent = 0usize;
    for (label, rate, count) in phases.each() {
        // Updates that change income (a field many schemes read) for spread-out citizens.
        let changed: Vec<Json> = (sent..sent + count)
            .map(|i| {
                let mut p = base[(i * 7919) % users].clone();
                let income = match workload {
                    Workload::Wide => 40_000 + ((i as u64 * 104_729) % 400_000) as i64,
                    Workload::Drift => {
                        // Synthetic incomes are numbers with decimals; a missing one starts at 1 lakh.
                        let current = p["economic"]["annual_income"]
                            .as_f64()
                            .map_or(100_000, |v| v as i64);
                        // +0.1 % .. +2.9 % and a few rupees, so that a citizen's successive
                        // updates differ (every record is a change) while every phase drifts
                        // alike: adding the update's number itself raised incomes phase after
                        // phase, so that later phases crossed fewer thresholds than earlier ones.
                        current + current * (1 + (i as i64 * 7) % 29) / 1000 + (i as i64 % 997)
                    }
                };
                p["economic"]["annual_income"] = income.into();
                p
            })
            .collect();
        sent += count;
        workers_settled().await;
        if let Some(deleter) = deleter {
            // What the evaluators published so far has been read (the last phase's latencies).
            deleter.delete_read(&env.ends_of(&PUBLISHED)?).await?;
        }
        let phase = run_phase(env, pool, group, &changed, rate, deleter).await?;
        println!(
            "{:>10} {:>8} {:>10.0} {:>8} {:>8} {:>8} {:>11.1} {:>12.1} {:>10.1}",
            label,
            count,
            phase.throughput,
            percentile(&phase.latencies, 0.5),
            percentile(&phase.latencies, 0.99),
            percentile(&phase.latencies, 1.0),
            phase.rows_per_update,
            phase.commit_ms_per_batch,
            phase.batch_size
        );
        let steps: Vec<String> = phase
            .steps
            .iter()
            .map(|(step, ms)| format!("{step} {ms:.1}"))
            .collect();
        println!(
            "{:>10} ms per batch: {}; {:.1} events published per update",
            "",
            steps.join(", "),
            phase.events_per_update
        );
        let cpu: Vec<String> = phase
            .cpu_per_update
            .iter()
            .map(|(part, us)| format!("{part} {us:.0}"))
            .collect();
        println!("{:>10} µs CPU per update: {}", "", cpu.join(", "));
        println!(
            "{:>10} read back by a consumer: p50 {} ms, p99 {} ms, max {} ms",
            "",
            percentile(&phase.read_latencies, 0.5),
            percentile(&phase.read_latencies, 0.99),
            percentile(&phase.read_latencies, 1.0)
        );
        let slowest = phase.seconds.iter().max_by_key(|&&(_, p99, _)| p99);
        if let (Some((second, p99, count)), true) = (slowest, rate > 0) {
            println!(
                "{:>10} slowest second: +{second}s, p99 {p99} ms over its {count} updates",
                ""
            );
            let each: Vec<String> = phase
                .seconds
                .iter()
                .map(|(_, p99, _)| p99.to_string())
                .collect();
            println!(
                "{:>10} p99 ms of each second's updates: {}",
                "",
                each.join(" ")
            );
        }
    }
    println!(
        "(done/s: updates evaluated, published and committed per second from the first send; \
         latency: input record sent → pass summary published (the time its worker's producer \
         stamped on it; \"read back\": the time a consumer of the summaries read it, after the \
         broker appended it), {sent} updates in all; rows: tuples \
         PostgreSQL inserted, updated or deleted per update; pg: the worker's commit time per \
         micro-batch; CPU per update: from the first send to the last commit, each process of \
         the box, and the evaluators' threads by name: rdk:* librdkafka's (fetch, produce, \
         their network I/O), tokio-runtime-w the runtime's (decode, plan, encode, the \
         PostgreSQL and Redis clients), compute the pool the batch's validation and passes are \
         spread over)"
    );
    Ok(())
}

struct Phase {
    throughput: f64,
    /// Each update's latency to its pass summary's create time, in order.
    latencies: Vec<i64>,
    /// The same to the time the summary was read back (`Stamped`), in order.
    read_latencies: Vec<i64>,
    rows_per_update: f64,
    commit_ms_per_batch: f64,
    batch_size: f64,
    /// Where the worker's time went, ms per batch: (step, ms).
    steps: Vec<(&'static str, f64)>,
    /// µs of CPU per update of each part of the box, from the first send to the last commit
    /// (`loadtest::cpu`).
    cpu_per_update: Vec<(String, f64)>,
    events_per_update: f64,
    /// Each second of the phase: (second, p99 ms of the updates sent in it, how many).
    seconds: Vec<(i64, i64, usize)>,
}

/// The `q` quantile of `sorted` (1.0: the largest; -1 when empty).
fn percentile(sorted: &[i64], q: f64) -> i64 {
    sorted
        .get(((sorted.len() as f64 - 1.0) * q) as usize)
        .copied()
        .unwrap_or(-1)
}

/// Reads the pass summaries from `consumer` until `expected` distinct updates have one, or
/// none came for 5 s once `phase_done`: each update's (user, input hash) and, of its first
/// summary, the time the worker's producer stamped on it and the time it was read here. With a
/// `deleter`, deletes every second what it has read, and the other events published meanwhile
/// (on the partitions of `unread`), which nothing here reads (`loadtest::retention`: the local
/// broker slows as its partitions grow).
async fn read_summaries(
    env: &Env,
    consumer: &StreamConsumer,
    expected: usize,
    phase_done: &std::sync::atomic::AtomicBool,
    deleter: Option<&retention::Deleter>,
    unread: &TopicPartitionList,
) -> Result<HashMap<(String, String), Stamped>> {
    let mut published: HashMap<(String, String), Stamped> = HashMap::with_capacity(expected);
    let mut last_read = Instant::now();
    let mut deleted = Instant::now();
    while published.len() < expected {
        match tokio::time::timeout(Duration::from_secs(1), consumer.recv()).await {
            Ok(message) => {
                let message = message?;
                last_read = Instant::now();
                let e: EligibilityBatchComputed = env
                    .codec
                    .decode(message.payload().unwrap_or_default())
                    .await?;
                if let Some(stamped) = message.timestamp().to_millis() {
                    published
                        .entry((e.user_id, e.input_hash))
                        .or_insert(Stamped {
                            stamped,
                            read: unix_ms(),
                        });
                }
            }
            Err(_) => {
                let done = phase_done.load(std::sync::atomic::Ordering::SeqCst);
                if done && last_read.elapsed() >= Duration::from_secs(5) {
                    break;
                }
            }
        }
        if let Some(deleter) = deleter.filter(|_| deleted.elapsed() >= retention::EVERY) {
            let mut read = TopicPartitionList::new();
            // A partition the reader has taken nothing from yet has no position.
            for e in consumer.position()?.elements() {
                if let offset @ rdkafka::Offset::Offset(_) = e.offset() {
                    read.add_partition_offset(e.topic(), e.partition(), offset)?;
                }
            }
            for e in unread.elements() {
                read.add_partition_offset(e.topic(), e.partition(), rdkafka::Offset::End)?;
            }
            deleter.delete_read(&read).await?;
            deleted = Instant::now();
        }
    }
    Ok(published)
}

/// When a pass summary was published, ms since the epoch: `stamped` by the worker's producer as
/// it handed the record over (its create time), and `read` back here, by a consumer, once the
/// broker had appended it; the difference is the wait for the broker, as downstream sees it.
struct Stamped {
    stamped: i64,
    read: i64,
}

/// Sends `profiles` at `rate` per second (0: all at once), waits until the worker committed them
/// all, and measures.
async fn run_phase(
    env: &Env,
    pool: &deadpool_postgres::Pool,
    group: &str,
    profiles: &[Json],
    rate: u32,
    deleter: Option<&retention::Deleter>,
) -> Result<Phase> {
    let records = env.profile_records(profiles).await?;
    let marks = env.ends(ELIGIBILITY_BATCH_COMPUTED)?;
    let before = committed(pool, group, USER_METADATA_UPDATED).await?;
    let rows_before = rows_written(pool).await?;
    let metrics_before = worker_metrics().await;
    // Each update's (user, input hash), the key of its pass summary, computed before the clock
    // starts: hashing while pacing would take the box's CPU from the fleet under test.
    let keys: Vec<(String, String)> = profiles
        .iter()
        .map(|p| {
            let user = p["user_id"].as_str().unwrap_or_default().to_string();
            (user, engine::hash::jcs_sha256(p))
        })
        .collect();
    let mut sent_at: HashMap<(String, String), i64> = HashMap::with_capacity(profiles.len());
    let mut pending = Vec::with_capacity(profiles.len());
    // Latency: each update's pass summary (eligibility.batch.computed) is stamped by the
    // worker's producer when the worker hands it over, before the broker acknowledges it (and
    // before its batch commits). The summaries are read while the phase runs, as a downstream
    // consumer reads them: the time each is read adds the wait for the broker.
    let consumer = reader(env, &marks)?;
    // The partitions of the events nothing here reads, listed before the clock starts: asking
    // for them (a request per partition) in the phase's first second had made its p99 the
    // phase's highest.
    let unread = env.ends_of(&PUBLISHED[1..])?;
    let phase_done = std::sync::atomic::AtomicBool::new(false);
    let cpu_before = CpuSample::take();
    let t = Instant::now();
    let sending = async {
        // Paced in 10 ms ticks; the whole phase at once when the rate is 0.
        let per_tick = if rate == 0 {
            profiles.len()
        } else {
            (rate as usize / 100).max(1)
        };
        for (tick, ((chunk, records), keys)) in profiles
            .chunks(per_tick)
            .zip(records.chunks(per_tick))
            .zip(keys.chunks(per_tick))
            .enumerate()
        {
            if rate > 0 {
                let due = Duration::from_secs_f64((tick * per_tick) as f64 / f64::from(rate));
                tokio::time::sleep_until((t + due).into()).await;
            }
            let now = unix_ms();
            sent_at.extend(keys.iter().map(|key| (key.clone(), now)));
            pending.extend(enqueue_profiles(env, chunk, records).await?);
        }
        acknowledged(pending).await?;
        wait_committed(
            pool,
            group,
            USER_METADATA_UPDATED,
            before + profiles.len() as i64,
            t,
        )
        .await?;
        let elapsed = t.elapsed();
        let cpu_after = CpuSample::take();
        phase_done.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok::<_, anyhow::Error>((elapsed, cpu_after))
    };
    let ((elapsed, cpu_after), published) = tokio::try_join!(
        sending,
        read_summaries(
            env,
            &consumer,
            profiles.len(),
            &phase_done,
            deleter,
            &unread
        )
    )?;
    // Statistics reach pg_stat_user_tables within a second of each commit.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let rows = rows_written(pool).await? - rows_before;
    let metrics_after = worker_metrics().await;
    let delta = |name: &str| {
        metrics_after.get(name).unwrap_or(&0.0) - metrics_before.get(name).unwrap_or(&0.0)
    };
    let batches = delta("eligibility_micro_batch_size_count");
    let per_batch = |total: f64| {
        if batches > 0.0 {
            total / batches
        } else {
            f64::NAN
        }
    };

    let mut latencies = Vec::with_capacity(profiles.len());
    let mut read_latencies = Vec::with_capacity(profiles.len());
    let mut by_second: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    let started_ms = unix_ms() - t.elapsed().as_millis() as i64;
    for (key, Stamped { stamped: out, read }) in published {
        if let Some(input) = sent_at.get(&key) {
            latencies.push((out - input).max(0));
            read_latencies.push((read - input).max(0));
            by_second
                .entry((input - started_ms) / 1000)
                .or_default()
                .push((out - input).max(0));
        }
    }
    latencies.sort_unstable();
    read_latencies.sort_unstable();
    // Where a tail comes from: the p99 of the updates sent in each second of the phase.
    let seconds: Vec<(i64, i64, usize)> = by_second
        .into_iter()
        .map(|(second, mut waits)| {
            waits.sort_unstable();
            let p99 = percentile(&waits, 0.99);
            (second, p99, waits.len())
        })
        .collect();
    let store = |store: &str, op: &str| {
        1000.0
            * per_batch(delta(&format!(
                "eligibility_store_duration_seconds_sum{{store=\"{store}\",op=\"{op}\"}}"
            )))
    };
    let steps = vec![
        (
            "read",
            // `read_users` since both reads share one round trip; the others before.
            store("postgres", "read_users")
                + store("postgres", "read_snapshot")
                + store("postgres", "read_verdicts"),
        ),
        (
            "evaluate",
            1000.0
                * per_batch(delta(
                    "eligibility_evaluation_duration_seconds_sum{engine=\"scalar\"}",
                )),
        ),
        ("encode", store("schema_registry", "encode")),
        ("produce", store("kafka", "produce")),
        ("commit", store("postgres", "commit_batch")),
        (
            "cache",
            store("redis", "set") + store("redis", "invalidate"),
        ),
    ];
    let produced = |m: &HashMap<String, f64>| -> f64 {
        m.iter()
            .filter(|(k, _)| k.starts_with("eligibility_events_produced_total"))
            .map(|(_, v)| v)
            .sum()
    };
    let events = produced(&metrics_after) - produced(&metrics_before);
    Ok(Phase {
        cpu_per_update: cpu_before.per_update(&cpu_after, profiles.len()),
        steps,
        events_per_update: events / profiles.len() as f64,
        throughput: profiles.len() as f64 / elapsed.as_secs_f64(),
        latencies,
        read_latencies,
        rows_per_update: rows as f64 / profiles.len() as f64,
        commit_ms_per_batch: 1000.0
            * per_batch(delta(
                "eligibility_store_duration_seconds_sum{store=\"postgres\",op=\"commit_batch\"}",
            )),
        batch_size: per_batch(delta("eligibility_micro_batch_size_sum")),
        seconds,
    })
}

fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Tuples inserted, updated or deleted in the evaluator's tables so far.
async fn rows_written(pool: &deadpool_postgres::Pool) -> Result<i64> {
    let client = pool.get().await?;
    Ok(client
        .query_one(
            "SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint
             FROM pg_stat_user_tables
             WHERE relname LIKE 'evaluation_passes%' OR relname IN
                   ('user_verdicts', 'profile_current', 'profile_snapshots', 'consumer_offsets')",
            &[],
        )
        .await?
        .get(0))
}

/// Waits (at most 150 s) until the workers have no batch in flight, seen twice in a row: a
/// worker's last batches may still be publishing and writing the cache after their offsets are
/// committed. A build without that gauge: until its cache writes stop counting for a second.
async fn workers_settled() {
    let in_flight = |m: &HashMap<String, f64>| -> Option<f64> {
        m.iter()
            .filter(|(k, _)| k.starts_with("eligibility_batches_in_flight"))
            .map(|(_, v)| *v)
            .reduce(|a, b| a + b)
    };
    let cache_writes = |m: &HashMap<String, f64>| -> f64 {
        m.iter()
            .filter(|(k, _)| {
                k.starts_with("eligibility_store_duration_seconds_count")
                    && k.contains("store=\"redis\"")
            })
            .map(|(_, v)| v)
            .sum()
    };
    let mut last = cache_writes(&worker_metrics().await);
    let mut quiet_polls = 0;
    for _ in 0..600 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let metrics = worker_metrics().await;
        let (quiet, needed) = match in_flight(&metrics) {
            Some(running) => (running == 0.0, 2),
            None => (
                std::mem::replace(&mut last, cache_writes(&metrics)) == last,
                4,
            ),
        };
        quiet_polls = if quiet { quiet_polls + 1 } else { 0 };
        if quiet_polls >= needed {
            return;
        }
    }
}

/// The running workers' metrics, summed by series over the workers of `FLEET_METRICS_ADDRS`
/// (comma-separated `host:port`, as scripts/fleet.sh sets it; else `ELIGIBILITY_HTTP_ADDR`);
/// a worker that cannot be read adds nothing.
async fn worker_metrics() -> HashMap<String, f64> {
    let addrs = std::env::var("FLEET_METRICS_ADDRS")
        .or_else(|_| std::env::var("ELIGIBILITY_HTTP_ADDR"))
        .unwrap_or_default();
    let mut total = HashMap::new();
    for addr in addrs.split(',').filter(|a| !a.is_empty()) {
        for (series, value) in scrape(addr).await {
            *total.entry(series).or_insert(0.0) += value;
        }
    }
    total
}

async fn scrape(addr: &str) -> Vec<(String, f64)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await else {
        return Vec::new();
    };
    let request = format!("GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n");
    let mut body = String::new();
    if stream.write_all(request.as_bytes()).await.is_err()
        || stream.read_to_string(&mut body).await.is_err()
    {
        return Vec::new();
    }
    body.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            Some((series.to_string(), value.parse().ok()?))
        })
        .collect()
}

/// Waits until `group`'s committed offsets on `topic` add up to `target`.
async fn wait_committed(
    pool: &deadpool_postgres::Pool,
    group: &str,
    topic: &str,
    target: i64,
    since: Instant,
) -> Result<()> {
    let mut last = Instant::now();
    loop {
        let now = committed(pool, group, topic).await?;
        if now >= target {
            return Ok(());
        }
        if last.elapsed() > Duration::from_secs(2) {
            eprintln!(
                "  … {} to go after {:.0}s",
                target - now,
                since.elapsed().as_secs_f64()
            );
            last = Instant::now();
        }
        anyhow::ensure!(
            since.elapsed() < Duration::from_secs(3600),
            "the evaluator did not finish within an hour"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
