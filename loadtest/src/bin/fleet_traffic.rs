//! `fleet_traffic`: drives a running evaluator (scripts/fleet.sh) through the real broker.
//!
//! - `prepare`: migrate a fresh database and start the worker's consumer group at the topics'
//!   current ends (so earlier traffic on the shared topics is not replayed into it).
//! - `demo`: the example citizens, then one birthday and one lost BPL card; prints the events
//!   the fleet publishes.
//! - `bench`: N synthetic citizens, then M profile updates as fast as the broker takes them;
//!   reports updates/s end to end (produce → evaluated → events published → offsets committed
//!   in PostgreSQL) and the latency percentiles.
//! - `rule-change`: N synthetic citizens, then a new version of one rule on
//!   `policy.rules.updated`; reports how long the fleet takes to re-evaluate every citizen the
//!   rule covers (audit rows written, events published, the record's offset committed).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use fleet::avro::Codec;
use fleet::config::{KafkaConfig, Vars};
use fleet::events::*;
use fleet::kafka::Outgoing;
use fleet::topics::*;
use loadtest::citizens::{CitizenSpec, Citizens};
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::{Message, Offset, TopicPartitionList};
use serde_json::Value as Json;

#[derive(Parser)]
#[command(about = "Traffic for a running evaluator fleet")]
struct Cli {
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand)]
enum What {
    /// Migrate ELIGIBILITY_DATABASE_URL and start GROUP at the input topics' current ends.
    Prepare {
        #[arg(long)]
        group: String,
    },
    /// Send the example citizens and print the events the fleet publishes.
    Demo,
    /// Measure profile updates per second end to end.
    Bench {
        /// Citizens created before the measured updates.
        #[arg(long, default_value_t = 2000)]
        users: usize,
        /// Measured profile updates.
        #[arg(long, default_value_t = 20_000)]
        updates: usize,
        /// The evaluator's consumer group (whose committed offsets mark "done").
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

impl Env {
    fn new() -> Result<Env> {
        let vars = Vars::from_env();
        let kafka = KafkaConfig::from_vars(&vars)?;
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
        Ok(Env {
            codec: Codec::new(&registry, &topics),
            producer: fleet::kafka::producer(&kafka)?,
            database_url: std::env::var("ELIGIBILITY_DATABASE_URL")
                .context("ELIGIBILITY_DATABASE_URL is required")?,
            kafka,
        })
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
                payload: self.codec.encode(USER_METADATA_UPDATED, &update).await?,
                headers: vec![],
            });
        }
        Ok(out)
    }
}

/// Sends each profile to its state's partition (the partition map), all acknowledged.
async fn send_profiles(env: &Env, profiles: &[Json], records: Vec<Outgoing>) -> Result<()> {
    use rdkafka::producer::FutureRecord;
    let mut pending = Vec::with_capacity(records.len());
    for (profile, record) in profiles.iter().zip(&records) {
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
    let env = Env::new()?;
    match cli.what {
        What::Prepare { group } => prepare(&env, &group).await,
        What::Demo => demo(&env).await,
        What::Bench {
            users,
            updates,
            group,
        } => bench(&env, users, updates, &group).await,
        What::RuleChange { users, rule, group } => rule_change(&env, users, &rule, &group).await,
    }
}

async fn prepare(env: &Env, group: &str) -> Result<()> {
    let pool = fleet::postgres::pool(&env.database_url, 1)?;
    fleet::postgres::migrate(&pool).await?;
    let client = pool.get().await?;
    let mut n = 0;
    for topic in EVALUATOR_INPUTS {
        for e in env.ends(topic)?.elements() {
            if let Offset::Offset(o) = e.offset() {
                client
                    .execute(
                        "INSERT INTO consumer_offsets (consumer_group, topic, partition, next_offset)
                         VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                        &[&group, &e.topic(), &e.partition(), &o],
                    )
                    .await?;
                n += 1;
            }
        }
    }
    println!("consumer group {group} starts at the current end of {n} partitions");
    Ok(())
}

fn example(name: &str) -> Result<Json> {
    let path = format!(
        "{}/../examples/profiles/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    Ok(serde_json::from_str(
        &std::fs::read_to_string(&path).with_context(|| path.clone())?,
    )?)
}

async fn demo(env: &Env) -> Result<()> {
    let mut marks = TopicPartitionList::new();
    for topic in [
        ELIGIBILITY_NEW_MATCH,
        ELIGIBILITY_LOST,
        ELIGIBILITY_PARTIAL_MATCH,
        ELIGIBILITY_BATCH_COMPUTED,
    ] {
        for e in env.ends(topic)?.elements() {
            marks.add_partition_offset(topic, e.partition(), e.offset())?;
        }
    }
    let senior = example("ka_senior_62")?;
    let worker = example("ka_worker_58")?;
    let incomplete = example("tn_incomplete_67")?;
    let mut worker_at_60 = worker.clone();
    worker_at_60["identity"]["age"] = 60.into();
    let mut senior_not_bpl = senior.clone();
    senior_not_bpl["economic"]["bpl_status"] = false.into();
    let steps = [
        (
            "three citizens arrive",
            vec![senior.clone(), worker.clone(), incomplete],
        ),
        ("the 58-year-old worker turns 60", vec![worker_at_60]),
        (
            "the senior's household leaves the BPL list",
            vec![senior_not_bpl],
        ),
    ];
    let consumer = reader(env, &marks)?;
    for (title, profiles) in steps {
        println!("\n== {title}");
        let records = env.profile_records(&profiles).await?;
        send_profiles(env, &profiles, records).await?;
        let mut passes = 0;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            anyhow::ensure!(
                Instant::now() < deadline,
                "no answer from the evaluator within 60 s: is it running?"
            );
            // The pass summaries come last; other topics' events of the step may trail them.
            let wait = if passes < profiles.len() { 1000 } else { 1500 };
            let Ok(message) =
                tokio::time::timeout(Duration::from_millis(wait), consumer.recv()).await
            else {
                if passes < profiles.len() {
                    continue;
                }
                break;
            };
            let message = message?;
            let payload = message.payload().unwrap_or_default();
            match message.topic() {
                ELIGIBILITY_NEW_MATCH => {
                    let e: EligibilityNewMatch = env.codec.decode(payload).await?;
                    println!(
                        "  new_match      {:<12} {} ({})",
                        e.user_id, e.scheme_id, e.scheme_name
                    );
                }
                ELIGIBILITY_LOST => {
                    let e: EligibilityLost = env.codec.decode(payload).await?;
                    println!(
                        "  lost           {:<12} {} (now {}, {})",
                        e.user_id, e.scheme_id, e.new_verdict, e.reason
                    );
                }
                ELIGIBILITY_PARTIAL_MATCH => {
                    let e: EligibilityPartialMatch = env.codec.decode(payload).await?;
                    let gaps: Vec<&str> = e.gaps.iter().map(|g| g.description.as_str()).collect();
                    println!(
                        "  partial_match  {:<12} {} score {}: {}",
                        e.user_id,
                        e.scheme_id,
                        e.match_score,
                        gaps.join("; ")
                    );
                }
                _ => {
                    let e: EligibilityBatchComputed = env.codec.decode(payload).await?;
                    println!(
                        "  batch.computed {:<12} {} schemes evaluated, {} eligible, {} partial in total",
                        e.user_id, e.rules_evaluated, e.total_eligible, e.total_partial
                    );
                    passes += 1;
                }
            }
        }
    }
    println!(
        "\nEvery evaluation is in evaluation_audit_log; current verdicts in current_verdicts and Redis (eligibility:<user>:<scheme>)."
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
) -> Result<Vec<Json>> {
    let mut citizens = Citizens::new(CitizenSpec {
        seed: 17,
        missing_rate: 0.05,
        schemes: 1000,
    });
    let base: Vec<Json> = (0..users).map(|_| citizens.next_profile()).collect();
    let start_offsets = committed(pool, group, USER_METADATA_UPDATED).await?;
    let t = Instant::now();
    // In slices, so that encoding and sending overlap with the fleet's work on earlier ones.
    for slice in base.chunks(10_000) {
        let records = env.profile_records(slice).await?;
        send_profiles(env, slice, records).await?;
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
    create_citizens(env, &pool, group, users).await?;

    // The next version of the rule: same eligibility, a new id and version.
    let text = std::fs::read_to_string(rule).with_context(|| rule.display().to_string())?;
    let mut doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text)?;
    let version = doc["version"].as_u64().context("the rule has no version")? + 1;
    let rule_id = format!(
        "{}_v{version}",
        doc["rule_id"].as_str().context("the rule has no rule_id")?
    );
    doc["version"] = version.into();
    doc["rule_id"] = rule_id.clone().into();
    let update = RulesUpdate {
        event_id: format!("bench-{rule_id}"),
        rule_yaml: serde_yaml_ng::to_string(&doc)?,
        author: "fleet_traffic".into(),
        reason: Some("rule-change benchmark".into()),
        as_of: Some(AS_OF.into()),
    };
    let record = Outgoing {
        topic: POLICY_RULES_UPDATED.into(),
        key: rule_id.clone().into_bytes(),
        payload: env.codec.encode(POLICY_RULES_UPDATED, &update).await?,
        headers: vec![],
    };
    let before = committed(&pool, group, POLICY_RULES_UPDATED).await?;
    let t = Instant::now();
    fleet::kafka::send_all(&env.producer, &[record]).await?;
    wait_committed(&pool, group, POLICY_RULES_UPDATED, before + 1, t).await?;
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

async fn bench(env: &Env, users: usize, updates: usize, group: &str) -> Result<()> {
    let pool = fleet::postgres::pool(&env.database_url, 1)?;
    // Phase 1: every citizen's first evaluation (all schemes), not measured.
    let base = create_citizens(env, &pool, group, users).await?;

    // Phase 2: updates that change income (a field many schemes read) for random citizens.
    let changed: Vec<Json> = (0..updates)
        .map(|i| {
            let mut p = base[(i * 7919) % users].clone();
            let income = 40_000 + ((i as u64 * 104_729) % 400_000) as i64;
            p["economic"]["annual_income"] = income.into();
            p
        })
        .collect();
    let records = env.profile_records(&changed).await?;
    let marks = env.ends(ELIGIBILITY_BATCH_COMPUTED)?;
    let before = committed(&pool, group, USER_METADATA_UPDATED).await?;
    let t = Instant::now();
    send_profiles(env, &changed, records).await?;
    let produced = t.elapsed();
    wait_committed(
        &pool,
        group,
        USER_METADATA_UPDATED,
        before + updates as i64,
        t,
    )
    .await?;
    let elapsed = t.elapsed();

    println!(
        "{updates} profile updates: produced in {:.2}s; all evaluated, published and committed after {:.2}s → {:.0} updates/s end to end",
        produced.as_secs_f64(),
        elapsed.as_secs_f64(),
        updates as f64 / elapsed.as_secs_f64()
    );
    // Latency: each update's pass summary (eligibility.batch.computed) is stamped by the
    // broker when the worker publishes it, just before its batch commits.
    let consumer = reader(env, &marks)?;
    let mut latencies = Vec::with_capacity(updates);
    let input_times = input_timestamps(env, updates).await?;
    while latencies.len() < updates {
        let Ok(message) = tokio::time::timeout(Duration::from_secs(5), consumer.recv()).await
        else {
            break;
        };
        let message = message?;
        let e: EligibilityBatchComputed = env
            .codec
            .decode(message.payload().unwrap_or_default())
            .await?;
        if let (Some(out), Some(input)) = (
            message.timestamp().to_millis(),
            input_times.get(&(e.user_id.clone(), e.input_hash.clone())),
        ) {
            latencies.push((out - input).max(0));
        }
    }
    latencies.sort_unstable();
    let pct = |q: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * q) as usize)
            .copied()
            .unwrap_or(-1)
    };
    println!(
        "latency (input record → pass summary published), {} samples: p50 {} ms, p99 {} ms, max {} ms",
        latencies.len(),
        pct(0.5),
        pct(0.99),
        latencies.last().copied().unwrap_or(-1)
    );
    Ok(())
}

/// The create timestamps of the last `count` records on the profile topic, by (user, input hash).
async fn input_timestamps(env: &Env, count: usize) -> Result<HashMap<(String, String), i64>> {
    let ends = env.ends(USER_METADATA_UPDATED)?;
    let mut starts = TopicPartitionList::new();
    let probe: StreamConsumer = fleet::kafka::client_config(&env.kafka)
        .set("group.id", "fleet-traffic")
        .create()?;
    let mut total = 0i64;
    for e in ends.elements() {
        let (low, high) =
            probe.fetch_watermarks(e.topic(), e.partition(), Duration::from_secs(10))?;
        let from = (high - count as i64).max(low);
        total += high - from;
        starts.add_partition_offset(e.topic(), e.partition(), Offset::Offset(from))?;
    }
    let consumer = fleet::kafka::assigned_consumer(&env.kafka, &starts)?;
    let mut out = HashMap::new();
    for _ in 0..total {
        let Ok(Ok(message)) = tokio::time::timeout(Duration::from_secs(5), consumer.recv()).await
        else {
            break;
        };
        let payload = message.payload().unwrap_or_default();
        // Other traffic on the shared topic (e.g. the tests' malformed records) is not ours.
        let Ok(update) = env.codec.decode::<ProfileUpdate>(payload).await else {
            continue;
        };
        let profile: Json = serde_json::from_str(&update.profile)?;
        if let Some(ms) = message.timestamp().to_millis() {
            out.insert((update.user_id, engine::hash::jcs_sha256(&profile)), ms);
        }
    }
    Ok(out)
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
            since.elapsed() < Duration::from_secs(900),
            "the evaluator did not finish within 15 min"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
