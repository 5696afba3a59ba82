//! `eligibility replay`: re-reads a range of an input topic (by offsets or by dates) through the
//! evaluator's pipeline, for backfills. Safe to run twice: evaluations are keyed by their
//! inputs, and a record older than what a user was last evaluated with changes nothing. It
//! neither reads nor moves the consumer group's offsets.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args as ClapArgs;
use engine::Date;
use fleet::config::{Config, WorkerArgs};
use rdkafka::consumer::Consumer as _;
use rdkafka::{Message, Offset, TopicPartitionList};

use crate::evaluator::{Pipeline, Stats, batch};
use fleet::input::Record;

#[derive(ClapArgs)]
pub struct Args {
    /// An evaluator input topic.
    #[arg(long)]
    pub topic: String,
    /// Partitions to replay (default: all of the topic's).
    #[arg(long, value_delimiter = ',')]
    pub partitions: Vec<i32>,
    /// First offset, in every chosen partition.
    #[arg(long, conflicts_with = "from_date")]
    pub from_offset: Option<i64>,
    /// Stop before this offset (default: the end of each partition when the replay starts).
    #[arg(long, conflicts_with = "to_date")]
    pub to_offset: Option<i64>,
    /// First record timestamp, a UTC date (YYYY-MM-DD).
    #[arg(long)]
    pub from_date: Option<String>,
    /// Stop at records timestamped on or after this UTC date.
    #[arg(long)]
    pub to_date: Option<String>,
    /// Records per micro-batch.
    #[arg(long, default_value_t = 500)]
    pub batch: usize,
    #[command(flatten)]
    pub worker: WorkerArgs,
}

fn millis(date: &str, flag: &str) -> Result<i64> {
    let d = Date::parse(date).with_context(|| format!("{flag} {date:?} is not YYYY-MM-DD"))?;
    Ok(d.day_number() * 86_400_000)
}

pub fn run(args: Args) -> Result<std::process::ExitCode> {
    anyhow::ensure!(
        fleet::topics::EVALUATOR_INPUTS.contains(&args.topic.as_str()),
        "--topic {:?} is not an evaluator input ({})",
        args.topic,
        fleet::topics::EVALUATOR_INPUTS.join(", ")
    );
    let config = args.worker.config()?;
    fleet::init_tracing(&config.log);
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(replay(config, args))?;
    Ok(std::process::ExitCode::SUCCESS)
}

async fn replay(config: Config, args: Args) -> Result<()> {
    let health = fleet::http::Health::new();
    let mut pipeline = Pipeline::connect(&config, "eligibility-replay", health, true).await?;
    let probe = fleet::kafka::assigned_consumer(&config.kafka, &TopicPartitionList::new())?;
    let metadata = probe.fetch_metadata(Some(&args.topic), Duration::from_secs(10))?;
    let all: Vec<i32> = metadata
        .topics()
        .first()
        .map(|t| t.partitions().iter().map(|p| p.id()).collect())
        .unwrap_or_default();
    anyhow::ensure!(!all.is_empty(), "topic {} has no partitions", args.topic);
    let partitions = if args.partitions.is_empty() {
        all
    } else {
        args.partitions.clone()
    };

    // Where each partition starts and ends.
    let to_ms = args
        .to_date
        .as_deref()
        .map(|d| millis(d, "--to-date"))
        .transpose()?;
    let mut start = TopicPartitionList::new();
    let mut ends = std::collections::HashMap::new();
    for &p in &partitions {
        let (low, high) = probe.fetch_watermarks(&args.topic, p, Duration::from_secs(10))?;
        let from = match (&args.from_offset, &args.from_date) {
            (Some(o), _) => Offset::Offset((*o).max(low)),
            (None, Some(d)) => Offset::Offset(millis(d, "--from-date")?),
            (None, None) => Offset::Offset(low),
        };
        start.add_partition_offset(&args.topic, p, from)?;
        ends.insert(p, args.to_offset.map_or(high, |t| t.min(high)));
    }
    if args.from_date.is_some() {
        start = probe.offsets_for_times(start, Duration::from_secs(10))?;
    }
    let total: i64 = start
        .elements()
        .iter()
        .map(|e| match e.offset() {
            Offset::Offset(o) => (ends[&e.partition()] - o).max(0),
            _ => 0,
        })
        .sum();
    let consumer = Arc::new(fleet::kafka::assigned_consumer(&config.kafka, &start)?);
    let mut open: std::collections::HashSet<i32> = start
        .elements()
        .iter()
        .filter(|e| matches!(e.offset(), Offset::Offset(o) if o < ends[&e.partition()]))
        .map(|e| e.partition())
        .collect();
    eprintln!(
        "replaying {} records of {} ({} partitions)",
        total,
        args.topic,
        open.len()
    );

    let started = Instant::now();
    let mut last_line = Instant::now();
    let mut seen = 0i64;
    while !open.is_empty() {
        let mut records = Vec::new();
        while records.len() < args.batch && !open.is_empty() {
            let message = match tokio::time::timeout(Duration::from_secs(5), consumer.recv()).await
            {
                Ok(m) => m?,
                Err(_) => anyhow::bail!("no record for 5 s before the end of the range"),
            };
            let p = message.partition();
            if !open.contains(&p) {
                continue;
            }
            if message.offset() + 1 >= ends[&p] {
                open.remove(&p);
            }
            let beyond =
                to_ms.is_some_and(|t| message.timestamp().to_millis().is_some_and(|ms| ms >= t));
            if message.offset() >= ends[&p] || beyond {
                open.remove(&p);
                continue;
            }
            records.push(Record::from_message(&message));
        }
        seen += records.len() as i64;
        if !records.is_empty() {
            batch::process(&mut pipeline, records).await?;
        }
        if last_line.elapsed() > Duration::from_secs(1) || open.is_empty() {
            progress(seen, total, started);
            last_line = Instant::now();
        }
    }
    batch::settle(&mut pipeline).await?;
    let s = &pipeline.stats;
    eprintln!(
        "\nreplay done in {:.1}s: {} records, {} dead-lettered, {} evaluations written, {} events published",
        started.elapsed().as_secs_f64(),
        Stats::get(&s.records),
        Stats::get(&s.dead_lettered),
        Stats::get(&s.evaluations),
        Stats::get(&s.events),
    );
    Ok(())
}

fn progress(seen: i64, total: i64, started: Instant) {
    let width = 30;
    let done = if total > 0 {
        (seen * width / total).min(width)
    } else {
        width
    };
    let rate = seen as f64 / started.elapsed().as_secs_f64().max(1e-3);
    eprint!(
        "\r[{}{}] {seen}/{total} records, {rate:.0}/s",
        "#".repeat(done as usize),
        ".".repeat((width - done) as usize)
    );
}
