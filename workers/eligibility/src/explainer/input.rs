//! Input records as consumed, their decoding, and the dead letter a bad one becomes (the
//! evaluator's pattern: `<topic>.dlq`, a `DeadLetter` record, the reason in headers too).

use fleet::avro::{Codec, DecodeError};
use fleet::events::{DeadLetter, EligibilityNewMatch, EligibilityPartialMatch};
use fleet::kafka::Outgoing;
use fleet::retry::with_retries;
use fleet::topics::{ELIGIBILITY_NEW_MATCH, ELIGIBILITY_PARTIAL_MATCH, dead_letter_topic};
use rdkafka::Message;

use super::explain::Subject;

#[derive(Debug, Clone)]
pub struct Record {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    pub payload: Option<Vec<u8>>,
}

impl Record {
    pub fn from_message(message: &impl Message) -> Record {
        Record {
            topic: message.topic().to_string(),
            partition: message.partition(),
            offset: message.offset(),
            key: message.key().map(<[u8]>::to_vec),
            payload: message.payload().map(<[u8]>::to_vec),
        }
    }

    /// Names the record in logs and dead letters.
    pub fn source(&self) -> String {
        format!("{}[{}]@{}", self.topic, self.partition, self.offset)
    }
}

/// A record that cannot be explained, and why.
#[derive(Debug, Clone)]
pub struct Rejected {
    pub record: Record,
    /// The `reason` label of `eligibility_dlq_messages_total`.
    pub code: &'static str,
    pub reason: String,
}

impl Rejected {
    pub fn validation(record: &Record, reason: impl Into<String>) -> Rejected {
        Rejected {
            record: record.clone(),
            code: "validation_failed",
            reason: reason.into(),
        }
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

    pub fn into_outgoing(self, payload: Vec<u8>) -> Outgoing {
        Outgoing {
            topic: dead_letter_topic(&self.record.topic),
            key: self.record.key.clone().unwrap_or_default(),
            payload,
            headers: vec![
                ("dlq_reason_code", self.code.to_string()),
                ("dlq_reason", self.reason.clone()),
                ("dlq_source", self.record.source()),
            ],
        }
    }
}

/// The subject of an input record. A registry outage is retried; anything else is the record's
/// fault.
pub async fn decode(codec: &Codec, record: &Record) -> Result<Subject, Rejected> {
    let Some(payload) = &record.payload else {
        return Err(Rejected {
            record: record.clone(),
            code: "decode_failed",
            reason: "the record has no value".into(),
        });
    };
    let outcome = match record.topic.as_str() {
        ELIGIBILITY_NEW_MATCH => decode_as::<EligibilityNewMatch>(codec, payload)
            .await
            .map(|r| r.map(|e| Subject::from_new_match(&e))),
        ELIGIBILITY_PARTIAL_MATCH => decode_as::<EligibilityPartialMatch>(codec, payload)
            .await
            .map(|r| r.map(|e| Subject::from_partial_match(&e))),
        other => {
            return Err(Rejected::validation(
                record,
                format!("{other} is not an explainer input"),
            ));
        }
    };
    match outcome {
        Ok(Ok(subject)) => Ok(subject),
        Ok(Err(e)) => Err(Rejected {
            record: record.clone(),
            code: e.dlq_reason().unwrap_or("decode_failed"),
            reason: e.to_string(),
        }),
        Err(e) => Err(Rejected {
            record: record.clone(),
            code: "retries_exhausted",
            reason: e.to_string(),
        }),
    }
}

/// `Err` only for a registry outage that outlived the retry policy.
async fn decode_as<T: serde::de::DeserializeOwned>(
    codec: &Codec,
    payload: &[u8],
) -> Result<Result<T, DecodeError>, DecodeError> {
    with_retries("schema_registry", || async {
        match codec.decode::<T>(payload).await {
            Err(e) if e.dlq_reason().is_none() => Err(e),
            other => Ok(other),
        }
    })
    .await
}
