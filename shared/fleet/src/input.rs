//! Input records as a worker consumes them: an owned copy of each record, micro-batches bounded
//! by size and time, decoding through the registry, and the dead letter a bad record becomes
//! (`<topic>.dlq`: a `DeadLetter` with the reason and the original bytes, the reason in headers
//! too).

use std::time::Duration;

use engine::Date;
use rdkafka::Message;
use serde::de::DeserializeOwned;

use crate::avro::Codec;
use crate::events::DeadLetter;
use crate::kafka::{Consumer, Outgoing};
use crate::retry::with_retries;
use crate::shutdown::Shutdown;
use crate::topics::dead_letter_topic;

#[derive(Debug, Clone)]
pub struct Record {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    pub payload: Option<Vec<u8>>,
    pub timestamp_ms: Option<i64>,
    /// Headers with a text value (the fleet's own routing header among them).
    pub headers: Vec<(String, String)>,
}

impl Record {
    /// The bytes of its value.
    pub fn payload_len(&self) -> usize {
        self.payload.as_ref().map_or(0, Vec::len)
    }

    pub fn from_message(message: &impl Message) -> Record {
        Record {
            topic: message.topic().to_string(),
            partition: message.partition(),
            offset: message.offset(),
            key: message.key().map(<[u8]>::to_vec),
            payload: message.payload().map(<[u8]>::to_vec),
            timestamp_ms: message.timestamp().to_millis(),
            headers: message
                .headers()
                .map(|headers| {
                    use rdkafka::message::Headers as _;
                    headers
                        .iter()
                        .filter_map(|h| {
                            let value = std::str::from_utf8(h.value?).ok()?;
                            Some((h.key.to_string(), value.to_string()))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The value of header `name`, when present and text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// Names the record in error messages, logs and dead letters.
    pub fn source(&self) -> String {
        format!("{}[{}]@{}", self.topic, self.partition, self.offset)
    }

    /// The evaluation date: the event's own `as_of`, else the record's timestamp (UTC), so that
    /// replaying a record evaluates on the same date as the first time. A record with neither
    /// is rejected.
    pub fn as_of(&self, explicit: Option<&str>) -> Result<Date, Rejected> {
        let reject = |reason: String| Rejected::validation(self, reason);
        match explicit {
            Some(text) => Date::parse(text)
                .ok_or_else(|| reject(format!("as_of {text:?} is not a date (YYYY-MM-DD)"))),
            None => {
                let ms = self.timestamp_ms.ok_or_else(|| {
                    reject("the record has no timestamp and the event no as_of".into())
                })?;
                Date::from_day_number(ms.div_euclid(86_400_000))
                    .ok_or_else(|| reject(format!("record timestamp {ms} is out of range")))
            }
        }
    }
}

/// What one wait on the consumer gave.
pub enum Polled {
    Records(Vec<Record>),
    /// Nothing arrived for a second: time for upkeep.
    Idle,
    Shutdown,
}

/// A batch of a quiet stream closes once no record has arrived for this long: it is processed
/// at once instead of waiting out `max_wait`.
pub const QUIET_GAP: Duration = Duration::from_millis(1);

/// A stream is busy while each batch takes at least this many records. A busy stream's batch
/// is not closed by a gap: it fills until `max_wait` after its first record (or until full),
/// so that a batch's fixed costs — its produce requests, its transaction, handing its work to
/// the pool — are shared by more updates (docs/fleet.md "One micro-batch").
pub const BUSY_BATCH: usize = 64;

/// How the stream looked to the batch before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    Quiet,
    Busy,
}

impl Pace {
    /// The pace that a batch of `records` (the last one taken) shows.
    pub fn after(records: usize) -> Pace {
        if records >= BUSY_BATCH {
            Pace::Busy
        } else {
            Pace::Quiet
        }
    }
}

/// A batch also closes once its record values reach this many bytes, so that the values a
/// worker holds (the batch it evaluates and the batches still being committed) stay bounded
/// however large `max_records` and the records are.
pub const MAX_BATCH_BYTES: usize = 32 << 20;

/// How full a batch being polled is: it takes records until `max_records` (at least one) or
/// until its values reach [`MAX_BATCH_BYTES`], whichever comes first.
struct Fill {
    records: usize,
    bytes: usize,
    max_records: usize,
}

impl Fill {
    fn new(max_records: usize) -> Fill {
        Fill {
            records: 0,
            bytes: 0,
            max_records: max_records.max(1),
        }
    }

    fn add(&mut self, record: &Record) {
        self.records += 1;
        self.bytes += record.payload_len();
    }

    fn is_full(&self) -> bool {
        self.records >= self.max_records || self.bytes >= MAX_BATCH_BYTES
    }
}

/// Waits for a first record, then takes more until the batch is full (`max_records` or
/// [`MAX_BATCH_BYTES`]), until `max_wait` after the first, or — where the stream is
/// [`Pace::Quiet`] — until no record has arrived for [`QUIET_GAP`], whichever comes first.
pub async fn poll_batch(
    consumer: &Consumer,
    max_records: usize,
    max_wait: Duration,
    pace: Pace,
    shutdown: &Shutdown,
) -> Result<Polled, rdkafka::error::KafkaError> {
    let first = tokio::select! {
        message = consumer.recv() => message?,
        _ = shutdown.clone().wait() => return Ok(Polled::Shutdown),
        _ = tokio::time::sleep(Duration::from_secs(1)) => return Ok(Polled::Idle),
    };
    let mut fill = Fill::new(max_records);
    let mut records = vec![Record::from_message(&first)];
    fill.add(&records[0]);
    let deadline = tokio::time::Instant::now() + max_wait;
    while !fill.is_full() {
        let quiet = match pace {
            Pace::Quiet => (tokio::time::Instant::now() + QUIET_GAP).min(deadline),
            Pace::Busy => deadline,
        };
        tokio::select! {
            message = consumer.recv() => match message {
                Ok(message) => {
                    let record = Record::from_message(&message);
                    fill.add(&record);
                    records.push(record);
                }
                // The records in hand are processed; the next poll meets the error again.
                Err(_) => break,
            },
            _ = tokio::time::sleep_until(quiet) => break,
        }
    }
    Ok(Polled::Records(records))
}

/// A record that cannot be processed, and why.
#[derive(Debug, Clone)]
pub struct Rejected {
    pub record: Box<Record>,
    /// The `reason` label of `eligibility_dlq_messages_total`.
    pub code: &'static str,
    pub reason: String,
}

impl Rejected {
    pub fn new(record: &Record, code: &'static str, reason: impl Into<String>) -> Rejected {
        Rejected {
            record: Box::new(record.clone()),
            code,
            reason: reason.into(),
        }
    }

    pub fn validation(record: &Record, reason: impl Into<String>) -> Rejected {
        Rejected::new(record, "validation_failed", reason)
    }

    pub fn dead_letter(&self) -> DeadLetter {
        DeadLetter {
            source_topic: self.record.topic.clone(),
            source_partition: self.record.partition,
            source_offset: self.record.offset,
            reason_code: self.code.to_string(),
            reason: self.reason.clone(),
            original_key: self.record.key.clone(),
            original_value: self.record.payload.clone(),
        }
    }

    /// The dead letter, encoded for `<topic>.dlq`.
    pub async fn encode(&self, codec: &Codec) -> Result<Outgoing, crate::error::IoError> {
        let topic = dead_letter_topic(&self.record.topic);
        Ok(Outgoing {
            payload: codec.encode(&topic, &self.dead_letter()).await?,
            topic,
            key: self.record.key.clone().unwrap_or_default(),
            partition: None,
            timestamp_ms: None,
            headers: vec![
                ("dlq_reason_code", self.code.to_string()),
                ("dlq_reason", self.reason.clone()),
                ("dlq_source", self.record.source()),
            ],
        })
    }
}

/// The largest record value a worker reads, in bytes (docs/fleet.md, "Limits"): a profile
/// update is a few kilobytes, a rule version a few more. A larger one is dead-lettered unread.
pub const MAX_RECORD_BYTES: usize = 256 * 1024;

/// Counts a committed micro-batch (docs/metrics.md): its records consumed, its dead letters
/// (each logged with its reason), its size, and the time of progress.
pub fn count_batch(records: &[Record], rejected: &[Rejected]) {
    use crate::metrics as m;
    for record in records {
        metrics::counter!(m::EVENTS_CONSUMED, "topic" => record.topic.clone()).increment(1);
    }
    for r in rejected {
        metrics::counter!(m::DLQ_MESSAGES, "topic" => r.record.topic.clone(), "reason" => r.code)
            .increment(1);
        tracing::warn!(source = %r.record.source(), code = r.code, reason = %r.reason, "dead-lettered");
    }
    metrics::histogram!(m::MICRO_BATCH_SIZE).record(records.len() as f64);
    metrics::gauge!(m::LAST_PROGRESS).set(m::unix_now());
}

/// Decodes a record's value; a registry outage is retried, anything else is the record's fault.
pub async fn decode<T: DeserializeOwned>(codec: &Codec, record: &Record) -> Result<T, Rejected> {
    let Some(payload) = &record.payload else {
        return Err(Rejected::new(
            record,
            "decode_failed",
            "the record has no value",
        ));
    };
    if payload.len() > MAX_RECORD_BYTES {
        return Err(Rejected::validation(
            record,
            format!(
                "the record is {} bytes; at most {MAX_RECORD_BYTES} are read",
                payload.len()
            ),
        ));
    }
    let outcome = with_retries("schema_registry", || async {
        match codec.decode::<T>(payload).await {
            Err(e) if e.dlq_reason().is_none() => Err(e),
            other => Ok(other),
        }
    })
    .await;
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(Rejected::new(
            record,
            e.dlq_reason().unwrap_or("decode_failed"),
            e.to_string(),
        )),
        Err(e) => Err(Rejected::new(record, "retries_exhausted", e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(value_bytes: usize) -> Record {
        Record {
            topic: "user.metadata.updated".into(),
            partition: 0,
            offset: 0,
            key: None,
            payload: Some(vec![0; value_bytes]),
            timestamp_ms: None,
            headers: vec![],
        }
    }

    /// Records added to a fresh [`Fill`] until it is full.
    fn records_until_full(max_records: usize, value_bytes: usize) -> usize {
        let mut fill = Fill::new(max_records);
        let one = record(value_bytes);
        while !fill.is_full() {
            fill.add(&one);
        }
        fill.records
    }

    #[test]
    fn a_batch_of_small_records_closes_at_max_records() {
        assert_eq!(records_until_full(2000, 2 * 1024), 2000);
    }

    #[test]
    fn a_batch_of_large_records_closes_at_max_batch_bytes_before_max_records() {
        // 200 KiB values (under MAX_RECORD_BYTES): 32 MiB is reached by the 164th.
        let value = 200 * 1024;
        let taken = records_until_full(2000, value);
        assert_eq!(taken, MAX_BATCH_BYTES.div_ceil(value));
        assert!(taken < 2000);
    }

    #[test]
    fn a_batch_takes_at_least_one_record() {
        assert_eq!(records_until_full(0, 10), 1);
        assert_eq!(records_until_full(10, MAX_BATCH_BYTES + 1), 1);
    }

    #[test]
    fn a_stream_is_busy_from_a_batch_of_busy_batch_records() {
        assert_eq!(Pace::after(0), Pace::Quiet);
        assert_eq!(Pace::after(BUSY_BATCH - 1), Pace::Quiet);
        assert_eq!(Pace::after(BUSY_BATCH), Pace::Busy);
        assert_eq!(Pace::after(2000), Pace::Busy);
    }
}
