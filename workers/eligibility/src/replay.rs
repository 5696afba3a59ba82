//! `eligibility replay`: re-reads a range of an input topic (by offsets or by dates) through the
//! evaluator's pipeline, for backfills. Safe to run twice: evaluations are keyed by their
//! inputs, and a record older than what a user was last evaluated with changes nothing. It
//! neither reads nor moves the consumer group's offsets.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use engine::Date;
use fleet::config::Config;
use rdkafka::consumer::Consumer as _;
use rdkafka::{Message, Offset, TopicPartitionList};

use crate::evaluator::{Pipeline, Stats, batch};
use fleet::input::Record;

/// Which records to replay.
pub struct Range {
    /// An evaluator input topic.
    pub topic: String,
    /// Partitions to replay; empty: all of the topic's.
    pub partitions: Vec<i32>,
    /// First offset, in every chosen partition.
    pub from_offset: Option<i64>,
    /// Stop before this offset (default: the end of each partition when the replay starts).
    pub to_offset: Option<i64>,
    /// First record timestamp, a UTC day.
    pub from_date: Option<Date>,
    /// Stop at records timestamped on or after this UTC day.
    pub to_date: Option<Date>,
    /// Records per micro-batch.
    pub batch: usize,
}

fn millis(day: Date) -> i64 {
    day.day_number() * 86_400_000
}

/// Replays `range` through the evaluator's pipeline, printing progress on standard error.
pub async fn run(config: Config, range: Range) -> Result<()> {
    anyhow::ensure!(
        fleet::topics::EVALUATOR_INPUTS.contains(&range.topic.as_str()),
        "topic {:?} is not an evaluator input ({})",
        range.topic,
        fleet::topics::EVALUATOR_INPUTS.join(", ")
    );
    let health = fleet::http::Health::new();
    let mut pipeline = Pipeline::connect(&config, "eligibility-replay", health, true).await?;
    let probe = fleet::kafka::assigned_consumer(&config.kafka, &TopicPartitionList::new())?;
    let all = fleet::kafka::partitions_of(&probe, &range.topic)?;
    anyhow::ensure!(!all.is_empty(), "topic {} has no partitions", range.topic);
    let partitions = if range.partitions.is_empty() {
        all
    } else {
        range.partitions.clone()
    };

    // Where each partition starts and ends.
    let to_ms = range.to_date.map(millis);
    let mut start = TopicPartitionList::new();
    let mut ends = std::collections::HashMap::new();
    for &p in &partitions {
        let (low, high) = probe.fetch_watermarks(&range.topic, p, Duration::from_secs(10))?;
        let from = match (&range.from_offset, &range.from_date) {
            (Some(o), _) => Offset::Offset((*o).max(low)),
            (None, Some(d)) => Offset::Offset(millis(*d)),
            (None, None) => Offset::Offset(low),
        };
        start.add_partition_offset(&range.topic, p, from)?;
        ends.insert(p, range.to_offset.map_or(high, |t| t.min(high)));
    }
    if range.from_date.is_some() {
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
        range.topic,
        open.len()
    );

    let started = Instant::now();
    let mut last_line = Instant::now();
    let mut seen = 0i64;
    while !open.is_empty() {
        let mut records = Vec::new();
        while records.len() < range.batch && !open.is_empty() {
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
