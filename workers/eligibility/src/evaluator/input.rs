//! Input records: an owned copy of what the consumer returned, and the dead letter a bad one
//! becomes.

use engine::Date;
use fleet::events::DeadLetter;
use fleet::kafka::Outgoing;
use rdkafka::Message;

use super::pass::Position;

#[derive(Debug, Clone)]
pub struct Record {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    pub payload: Option<Vec<u8>>,
    pub timestamp_ms: Option<i64>,
}

impl Record {
    pub fn from_message(message: &impl Message) -> Record {
        Record {
            topic: message.topic().to_string(),
            partition: message.partition(),
            offset: message.offset(),
            key: message.key().map(<[u8]>::to_vec),
            payload: message.payload().map(<[u8]>::to_vec),
            timestamp_ms: message.timestamp().to_millis(),
        }
    }

    pub fn position(&self) -> Position {
        Position {
            topic: self.topic.clone(),
            partition: self.partition,
            offset: self.offset,
        }
    }

    /// Names the record in error messages and validation reports.
    pub fn source(&self) -> String {
        format!("{}[{}]@{}", self.topic, self.partition, self.offset)
    }

    /// The evaluation date: the event's own `as_of`, else the record's timestamp (UTC), so that
    /// replaying a record evaluates on the same date as the first time.
    pub fn as_of(&self, explicit: Option<&str>) -> Result<Date, String> {
        match explicit {
            Some(text) => Date::parse(text)
                .ok_or_else(|| format!("as_of {text:?} is not a date (YYYY-MM-DD)")),
            None => {
                let ms = self
                    .timestamp_ms
                    .ok_or("the record has no timestamp and the event no as_of")?;
                Date::from_day_number(ms.div_euclid(86_400_000))
                    .ok_or_else(|| format!("record timestamp {ms} is out of range"))
            }
        }
    }
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

    pub fn headers(&self) -> Vec<(&'static str, String)> {
        vec![
            ("dlq_reason_code", self.code.to_string()),
            ("dlq_reason", self.reason.clone()),
            ("dlq_source", self.record.source()),
        ]
    }

    pub fn key(&self) -> Vec<u8> {
        self.record.key.clone().unwrap_or_default()
    }

    pub fn into_outgoing(self, payload: Vec<u8>) -> Outgoing {
        Outgoing {
            topic: fleet::topics::dead_letter_topic(&self.record.topic),
            key: self.key(),
            payload,
            headers: self.headers(),
        }
    }
}
