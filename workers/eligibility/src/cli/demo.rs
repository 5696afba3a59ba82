//! `eligibility demo`: README command 1's story, told to a running evaluator through the real
//! broker (scripts/fleet.sh starts both). Three example citizens arrive; the 58-year-old worker
//! turns 60 (her profile sent again as of her sixtieth birthday: her date of birth, not a
//! stored age, decides her age on a date); the senior's household leaves the BPL list. Each
//! step prints the events the evaluator published for it, and fails if it did not publish what
//! the step announces. With an explainer running (`--explanations-wait-s`), the explanations of
//! the matches follow: the model's words where Oracle-A accepted them, else the template and why.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use fleet::config::{Config, WorkerArgs};
use fleet::events::*;
use fleet::kafka::Outgoing;
use fleet::topics::*;
use rdkafka::consumer::Consumer as _;
use rdkafka::{Message, Offset, TopicPartitionList};
use serde_json::Value as Json;

use super::setup::{publisher, runtime};

#[derive(clap::Args)]
pub struct Args {
    /// How long to wait for the evaluator's answer to a step, in seconds.
    #[arg(long, default_value_t = 60)]
    pub wait_s: u64,
    /// After the steps, how long to wait for an explainer's English explanations of the
    /// matches, in seconds (scripts/fleet.sh runs one against the stack's local model); 0: no
    /// explainer runs, none are shown.
    #[arg(long, default_value_t = 0)]
    pub explanations_wait_s: u64,
    #[command(flatten)]
    pub worker: WorkerArgs,
}

/// The day the citizens arrive.
const ARRIVAL: &str = "2025-01-15";
/// The worker's sixtieth birthday (born 1966-09-10).
const SIXTIETH_BIRTHDAY: &str = "2026-09-10";

const SENIOR: &str = include_str!("../../../../examples/profiles/ka_senior_62.json");
const WORKER: &str = include_str!("../../../../examples/profiles/ka_worker_58.json");
const INCOMPLETE: &str = include_str!("../../../../examples/profiles/tn_incomplete_67.json");

/// What a step must show for the user it is about.
#[derive(Clone, Copy, PartialEq)]
enum Shows {
    Evaluated,
    NewMatch,
    Lost,
}

struct Step {
    title: &'static str,
    /// Each profile with the day it is evaluated on.
    profiles: Vec<(Json, &'static str)>,
    /// The user the step is about, and what it must show of them.
    expects: (String, Shows),
}

fn steps() -> Result<Vec<Step>> {
    let senior: Json = serde_json::from_str(SENIOR)?;
    let worker: Json = serde_json::from_str(WORKER)?;
    let incomplete: Json = serde_json::from_str(INCOMPLETE)?;
    let user = |p: &Json| p["user_id"].as_str().unwrap_or_default().to_string();
    let mut worker_at_60 = worker.clone();
    worker_at_60["identity"]["age"] = 60.into();
    let mut senior_not_bpl = senior.clone();
    senior_not_bpl["economic"]["bpl_status"] = false.into();
    Ok(vec![
        Step {
            title: "three citizens arrive",
            expects: (user(&incomplete), Shows::Evaluated),
            profiles: vec![
                (senior.clone(), ARRIVAL),
                (worker.clone(), ARRIVAL),
                (incomplete, ARRIVAL),
            ],
        },
        Step {
            title: "the 58-year-old worker turns 60",
            expects: (user(&worker), Shows::NewMatch),
            profiles: vec![(worker_at_60, SIXTIETH_BIRTHDAY)],
        },
        Step {
            title: "the senior's household leaves the BPL list",
            expects: (user(&senior), Shows::Lost),
            profiles: vec![(senior_not_bpl, ARRIVAL)],
        },
    ])
}

pub fn run(args: Args) -> Result<ExitCode> {
    let config = args.worker.config()?;
    fleet::init_tracing("warn");
    let wait = Duration::from_secs(args.wait_s.max(1));
    let explanations = Duration::from_secs(args.explanations_wait_s);
    runtime()?.block_on(demo(&config, wait, explanations))?;
    println!(
        "\nEvery evaluation is in evaluation_audit_log; current verdicts in user_verdicts and Redis (eligibility:<user>:<scheme>)."
    );
    Ok(ExitCode::SUCCESS)
}

const OUTPUTS: [&str; 4] = [
    ELIGIBILITY_NEW_MATCH,
    ELIGIBILITY_LOST,
    ELIGIBILITY_PARTIAL_MATCH,
    ELIGIBILITY_BATCH_COMPUTED,
];

async fn demo(config: &Config, wait: Duration, explanations: Duration) -> Result<()> {
    let (codec, producer) = publisher(config, &[&[USER_METADATA_UPDATED][..], &OUTPUTS].concat())?;
    let mut topics = OUTPUTS.to_vec();
    if !explanations.is_zero() {
        topics.push(ELIGIBILITY_EXPLAINED);
    }
    let consumer = fleet::kafka::assigned_consumer(&config.kafka, &ends(config, &topics)?)?;
    let mut matches = 0;
    let mut explained: Vec<EligibilityExplained> = Vec::new();
    for step in steps()? {
        println!("\n== {}", step.title);
        let mut records = Vec::with_capacity(step.profiles.len());
        for (profile, as_of) in &step.profiles {
            let user = profile["user_id"].as_str().context("user_id")?.to_string();
            let state = profile["demographics"]["state"].as_str();
            let update = ProfileUpdate {
                event_id: engine::hash::jcs_sha256(&serde_json::json!([profile, as_of])),
                user_id: user.clone(),
                profile: profile.to_string(),
                as_of: Some(as_of.to_string()),
            };
            records.push(Outgoing {
                topic: USER_METADATA_UPDATED.into(),
                partition: Some(partition_map().partition_for(state, &user)),
                key: user.into_bytes(),
                timestamp_ms: None,
                payload: codec.encode(USER_METADATA_UPDATED, &update).await?,
                headers: vec![],
            });
        }
        fleet::kafka::send_all(&producer, &records).await?;
        let mut passes = 0;
        let mut shown = Vec::new();
        let deadline = Instant::now() + wait;
        loop {
            if Instant::now() >= deadline {
                bail!(
                    "no answer from the evaluator within {} s: is it running?",
                    wait.as_secs()
                );
            }
            // The pass summaries come last; other topics' events of the step may trail them.
            let pause = if passes < records.len() { 1000 } else { 1500 };
            let Ok(message) =
                tokio::time::timeout(Duration::from_millis(pause), consumer.recv()).await
            else {
                if passes < records.len() {
                    continue;
                }
                break;
            };
            let message = message?;
            let payload = message.payload().unwrap_or_default();
            match message.topic() {
                ELIGIBILITY_NEW_MATCH => {
                    let e: EligibilityNewMatch = codec.decode(payload).await?;
                    println!(
                        "  new_match      {:<12} {} ({})",
                        e.user_id, e.scheme_id, e.scheme_name
                    );
                    shown.push((e.user_id, Shows::NewMatch));
                    matches += 1;
                }
                ELIGIBILITY_LOST => {
                    let e: EligibilityLost = codec.decode(payload).await?;
                    println!(
                        "  lost           {:<12} {} (now {}, {})",
                        e.user_id, e.scheme_id, e.new_verdict, e.reason
                    );
                    shown.push((e.user_id, Shows::Lost));
                }
                ELIGIBILITY_PARTIAL_MATCH => {
                    let e: EligibilityPartialMatch = codec.decode(payload).await?;
                    let gaps: Vec<&str> = e.gaps.iter().map(|g| g.description.as_str()).collect();
                    println!(
                        "  partial_match  {:<12} {} score {}: {}",
                        e.user_id,
                        e.scheme_id,
                        e.match_score,
                        gaps.join("; ")
                    );
                    matches += 1;
                }
                ELIGIBILITY_EXPLAINED => explained.push(codec.decode(payload).await?),
                _ => {
                    let e: EligibilityBatchComputed = codec.decode(payload).await?;
                    println!(
                        "  batch.computed {:<12} {} schemes evaluated, {} eligible, {} partial in total",
                        e.user_id, e.rules_evaluated, e.total_eligible, e.total_partial
                    );
                    if e.rules_evaluated > 0 {
                        shown.push((e.user_id, Shows::Evaluated));
                    }
                    passes += 1;
                }
            }
        }
        let (user, shows) = &step.expects;
        if !shown.iter().any(|(u, s)| u == user && s == shows) {
            bail!(
                "the step \"{}\" published no {} event for {user}",
                step.title,
                match shows {
                    Shows::Evaluated => "batch.computed with a scheme evaluated",
                    Shows::NewMatch => "new_match",
                    Shows::Lost => "lost",
                }
            );
        }
    }
    if !explanations.is_zero() {
        show_explanations(&codec, &consumer, explained, matches, explanations).await?;
    }
    Ok(())
}

/// The explainer's explanations of the `matches` new and partial matches, as they arrive (up to
/// `wait`), each with who wrote it; then how many the model wrote and why the others are
/// templates. Fails if none arrives.
async fn show_explanations(
    codec: &fleet::avro::Codec,
    consumer: &rdkafka::consumer::StreamConsumer,
    mut explained: Vec<EligibilityExplained>,
    matches: usize,
    wait: Duration,
) -> Result<()> {
    println!(
        "\n== Explanations of the {matches} matches (docs/explainer-model.md): the local model's words where Oracle-A accepted them, else the template"
    );
    let deadline = Instant::now() + wait;
    let mut shown = 0;
    loop {
        for e in &explained[shown..] {
            let by = match &e.fallback_reason {
                None => "model".to_string(),
                Some(reason) => format!("template ({reason})"),
            };
            let text: String = e.explanation.chars().take(160).collect();
            let cut = if text.len() < e.explanation.len() {
                "…"
            } else {
                ""
            };
            println!("  {by:<24} {:<12} {}: {text}{cut}", e.user_id, e.scheme_id);
        }
        shown = explained.len();
        let left = deadline.saturating_duration_since(Instant::now());
        if shown >= matches || left.is_zero() {
            break;
        }
        let Ok(message) = tokio::time::timeout(left, consumer.recv()).await else {
            break;
        };
        let message = message?;
        if message.topic() == ELIGIBILITY_EXPLAINED {
            explained.push(codec.decode(message.payload().unwrap_or_default()).await?);
        }
    }
    if explained.is_empty() {
        bail!(
            "no explanation within {} s: is the explainer running?",
            wait.as_secs()
        );
    }
    let mut reasons: std::collections::BTreeMap<&str, usize> = Default::default();
    for e in &explained {
        *reasons
            .entry(e.fallback_reason.as_deref().unwrap_or("model"))
            .or_default() += 1;
    }
    let model = reasons.remove("model").unwrap_or(0);
    println!(
        "  {} of {matches} explained within {} s: {model} in the model's words, {} templates {reasons:?}",
        explained.len(),
        wait.as_secs(),
        explained.len() - model
    );
    Ok(())
}

/// The current end of every partition of `topics`: the demo reads what the workers publish
/// from here on.
fn ends(config: &Config, topics: &[&str]) -> Result<TopicPartitionList> {
    let probe = fleet::kafka::assigned_consumer(&config.kafka, &TopicPartitionList::new())?;
    let mut list = TopicPartitionList::new();
    for &topic in topics {
        for p in fleet::kafka::partitions_of(&probe, topic)? {
            let (_, high) = probe.fetch_watermarks(topic, p, Duration::from_secs(10))?;
            list.add_partition_offset(topic, p, Offset::Offset(high))?;
        }
    }
    Ok(list)
}
