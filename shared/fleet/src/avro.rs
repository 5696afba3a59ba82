//! Avro payloads in the Confluent wire format (magic byte 0, 4-byte schema id, Avro body),
//! with schemas from `schemas/avro/` registered in the schema registry under the topic-name
//! strategy (`<topic>-value`), so that any stock client can read them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use apache_avro::Schema;
use apache_avro::writer::datum::GenericDatumWriter;
use schema_registry_converter::async_impl::avro::{AvroDecoder, AvroEncoder};
use schema_registry_converter::async_impl::schema_registry::SrSettings;
use schema_registry_converter::schema_registry_common::{
    SchemaType, SubjectNameStrategy, SuppliedSchema,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use thiserror::Error;

use crate::error::IoError;
use crate::topics::*;

/// Why an input record could not be decoded: the DLQ reasons of docs/metrics.md.
#[derive(Debug, Error)]
pub enum DecodeError {
    #[error("not Confluent-framed Avro: {0}")]
    NotAvro(String),
    #[error("schema id {id} is not in the registry: {reason}")]
    SchemaUnknown { id: u32, reason: String },
    #[error("the schema registry could not be reached: {0}")]
    RegistryUnavailable(String),
    #[error("the Avro body does not match schema id {id}: {reason}")]
    BadBody { id: u32, reason: String },
}

impl DecodeError {
    /// The `reason` label of `eligibility_dlq_messages_total`, or None for a transient failure
    /// that must be retried rather than dead-lettered.
    pub fn dlq_reason(&self) -> Option<&'static str> {
        match self {
            DecodeError::NotAvro(_) | DecodeError::BadBody { .. } => Some("decode_failed"),
            DecodeError::SchemaUnknown { .. } => Some("schema_unknown"),
            DecodeError::RegistryUnavailable(_) => None,
        }
    }
}

/// The schema of each topic's values.
pub fn schema_for(topic: &str) -> Option<&'static str> {
    let text = match topic {
        USER_METADATA_UPDATED | PROFILE_ASSEMBLED => {
            include_str!("../../../schemas/avro/profile_update.avsc")
        }
        POLICY_RULES_UPDATED => include_str!("../../../schemas/avro/rules_update.avsc"),
        SCHEME_DEADLINE_APPROACHING => {
            include_str!("../../../schemas/avro/deadline_approaching.avsc")
        }
        ELIGIBILITY_COMPUTED => include_str!("../../../schemas/avro/eligibility_computed.avsc"),
        ELIGIBILITY_BATCH_COMPUTED => {
            include_str!("../../../schemas/avro/eligibility_batch_computed.avsc")
        }
        ELIGIBILITY_NEW_MATCH => include_str!("../../../schemas/avro/eligibility_new_match.avsc"),
        ELIGIBILITY_LOST => include_str!("../../../schemas/avro/eligibility_lost.avsc"),
        ELIGIBILITY_PARTIAL_MATCH => {
            include_str!("../../../schemas/avro/eligibility_partial_match.avsc")
        }
        ELIGIBILITY_EXPLAINED => include_str!("../../../schemas/avro/eligibility_explained.avsc"),
        RULE_CONFLICT_DETECTED => {
            include_str!("../../../schemas/avro/rule_conflict_detected.avsc")
        }
        RULE_SIMULATION_COMPLETED => {
            include_str!("../../../schemas/avro/rule_simulation_completed.avsc")
        }
        t if t.ends_with(".dlq") => include_str!("../../../schemas/avro/dead_letter.avsc"),
        _ => return None,
    };
    Some(text)
}

/// How a codec finds the schema ids it writes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registration {
    /// Register each schema of `schemas/avro/` under `<topic>-value` (a no-op when that exact
    /// schema is registered already).
    Auto,
    /// Only look up the latest version registered under `<topic>-value`, which must be this
    /// build's schema (`ELIGIBILITY_SCHEMA_AUTO_REGISTER=false`: read-only registry credentials,
    /// schemas registered by a release pipeline).
    LookUpLatest,
}

/// Encodes and decodes payloads through the registry; schema ids are cached after first use.
///
/// The registry is asked once per topic for the id of the schema it writes with (registering
/// it, or checking the latest registered version: [`Registration`]); from then on a record is
/// written by a writer built once for the topic, straight into its framed buffer. The stock
/// converter's `encode_struct` would, per record, format the subject's name, copy the strategy
/// with the schema's whole text, and copy the resolved schema's name table
/// (docs/performance.md "CPU per update"); the bytes are the same, which
/// `tests/connections.rs` holds against the converter.
pub struct Codec {
    settings: SrSettings,
    encoder: AvroEncoder,
    decoder: AvroDecoder,
    topics: HashMap<String, TopicCodec>,
    registration: Registration,
}

/// What a codec keeps for one topic it writes.
struct TopicCodec {
    strategy: SubjectNameStrategy,
    /// This build's schema for the topic, from `schemas/avro/`.
    schema: &'static Schema,
    writer: GenericDatumWriter<'static>,
    /// The registry's id of the schema, once asked.
    id: OnceLock<u32>,
    /// The length of the last record written, to size the next one's buffer.
    last_len: AtomicUsize,
}

/// The schema of `text` (one of [`schema_for`]'s), parsed once per process. A writer borrows
/// its schema, so each is kept for the life of the process: there are as many as files in
/// `schemas/avro/`.
fn parsed(text: &'static str) -> &'static Schema {
    static PARSED: OnceLock<Mutex<HashMap<usize, &'static Schema>>> = OnceLock::new();
    let mut parsed = PARSED
        .get_or_init(Default::default)
        .lock()
        .expect("not poisoned");
    parsed.entry(text.as_ptr() as usize).or_insert_with(|| {
        Box::leak(Box::new(
            Schema::parse_str(text).expect("schemas/avro/ holds valid schemas (tested)"),
        ))
    })
}

impl Codec {
    /// A codec for the payloads of `topics` (each must have a schema in `schemas/avro/`) that
    /// registers its schemas.
    pub fn new(registry_url: &str, topics: &[String]) -> Codec {
        Codec::with_registration(registry_url, topics, Registration::Auto)
    }

    pub fn with_registration(
        registry_url: &str,
        topics: &[String],
        registration: Registration,
    ) -> Codec {
        let topics = topics
            .iter()
            .map(|topic| {
                let schema =
                    schema_for(topic).unwrap_or_else(|| panic!("no Avro schema for topic {topic}"));
                let strategy = match registration {
                    Registration::Auto => SubjectNameStrategy::TopicNameStrategyWithSchema(
                        topic.clone(),
                        false,
                        SuppliedSchema::new(None, SchemaType::Avro, schema.to_string()),
                    ),
                    Registration::LookUpLatest => {
                        SubjectNameStrategy::TopicNameStrategy(topic.clone(), false)
                    }
                };
                let schema = parsed(schema);
                let writer = GenericDatumWriter::builder(schema)
                    .build()
                    .expect("schemas/avro/'s schemas resolve (tested)");
                let codec = TopicCodec {
                    strategy,
                    schema,
                    writer,
                    id: OnceLock::new(),
                    last_len: AtomicUsize::new(0),
                };
                (topic.clone(), codec)
            })
            .collect();
        Codec {
            settings: SrSettings::new(registry_url.to_string()),
            encoder: AvroEncoder::new(SrSettings::new(registry_url.to_string())),
            decoder: AvroDecoder::new(SrSettings::new(registry_url.to_string())),
            topics,
            registration,
        }
    }

    fn topic(&self, topic: &str) -> anyhow::Result<&TopicCodec> {
        self.topics
            .get(topic)
            .ok_or_else(|| anyhow::anyhow!("this codec was not built for topic {topic}"))
    }

    /// Registers every schema, or under [`Registration::LookUpLatest`] checks that the latest
    /// registered version of each subject is this build's schema, so that a registry outage or
    /// a missing registration shows at start-up, naming the subject.
    pub async fn register_all(&self) -> anyhow::Result<()> {
        for (topic, codec) in &self.topics {
            self.schema_id(topic, codec).await?;
        }
        Ok(())
    }

    /// The registry's id of the schema `topic` is written with: asked once (registering the
    /// schema, or checking that the latest registered version is this build's), then kept.
    async fn schema_id(&self, topic: &str, codec: &TopicCodec) -> anyhow::Result<u32> {
        if let Some(id) = codec.id.get() {
            return Ok(*id);
        }
        let subject = codec.strategy.get_subject()?;
        if self.registration == Registration::LookUpLatest {
            self.check_registered(topic, codec.schema, &subject).await?;
        }
        let schema = self
            .encoder
            .get_schema_and_id(&subject, codec.strategy.clone())
            .await
            .map_err(|e| {
                // The converter keeps a failed lookup as its answer (a 500 while the
                // registry's store was away would be served forever): forget it.
                self.encoder.remove_errors_from_cache();
                registry_failure(&e, format!("the schema of {topic} (subject {subject})"))
            })?;
        Ok(*codec.id.get_or_init(|| schema.id))
    }

    async fn check_registered(
        &self,
        topic: &str,
        ours: &Schema,
        subject: &str,
    ) -> anyhow::Result<()> {
        use schema_registry_converter::async_impl::schema_registry::get_schema_by_subject_and_version;
        let registered = get_schema_by_subject_and_version(&self.settings, subject, None)
            .await
            .map_err(|e| {
                if registry_away(&e) {
                    return registry_failure(&e, format!("looking up subject {subject}"));
                }
                anyhow::anyhow!(
                    "subject {subject} has no registered schema to look up ({e}); register \
                     schemas/avro/'s schema for {topic} first, or set \
                     ELIGIBILITY_SCHEMA_AUTO_REGISTER=true"
                )
            })?;
        let theirs = Schema::parse_str(&registered.schema)?;
        anyhow::ensure!(
            theirs.canonical_form() == ours.canonical_form(),
            "subject {subject}: the latest registered version (id {}) is not the schema this \
             build writes for {topic}; register this build's schema before rolling it out, or \
             set ELIGIBILITY_SCHEMA_AUTO_REGISTER=true",
            registered.id
        );
        Ok(())
    }

    pub async fn encode(&self, topic: &str, item: &impl Serialize) -> Result<Vec<u8>, IoError> {
        // A topic this codec was not built for is a defect, not a registry to wait for.
        let codec = self.topic(topic).map_err(IoError::Internal)?;
        let id = self
            .schema_id(topic, codec)
            .await
            .map_err(|e| match e.downcast() {
                Ok(io) => io,
                Err(e) => IoError::Registry(e),
            })?;
        // The Confluent frame: magic byte 0, the schema id (big-endian), the Avro body.
        let mut bytes = Vec::with_capacity(5 + codec.last_len.load(Ordering::Relaxed));
        bytes.push(0);
        bytes.extend_from_slice(&id.to_be_bytes());
        codec.writer.write_ser(&mut bytes, item).map_err(|e| {
            IoError::Internal(anyhow::anyhow!(
                "encoding a {topic} record with schemas/avro/'s schema: {e}"
            ))
        })?;
        codec.last_len.store(bytes.len(), Ordering::Relaxed);
        Ok(bytes)
    }

    pub async fn decode<T: DeserializeOwned>(&self, bytes: &[u8]) -> Result<T, DecodeError> {
        if bytes.len() < 5 || bytes[0] != 0 {
            return Err(DecodeError::NotAvro(format!(
                "{} bytes, first byte {:?} (expected magic byte 0 and a 4-byte schema id)",
                bytes.len(),
                bytes.first()
            )));
        }
        let id = u32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]);
        if let Err(e) = self.decoder.get_schema(id).await {
            self.decoder.remove_errors_from_cache();
            return Err(if e.retriable {
                DecodeError::RegistryUnavailable(e.to_string())
            } else {
                DecodeError::SchemaUnknown {
                    id,
                    reason: e.to_string(),
                }
            });
        }
        let decoded = self
            .decoder
            .decode(Some(bytes))
            .await
            .map_err(|e| DecodeError::BadBody {
                id,
                reason: e.to_string(),
            })?;
        apache_avro::from_value(&decoded.value).map_err(|e| DecodeError::BadBody {
            id,
            reason: e.to_string(),
        })
    }
}

/// The registry unreachable, or failing on its side (a 5xx: its own store away), which a
/// retry may cure; not a refusal of the schema.
fn registry_away(error: &schema_registry_converter::error::SRCError) -> bool {
    error.retriable || error.error.contains("failed with status 5")
}

/// `error` while doing `what`, marked as the registry being away ([`IoError::Registry`],
/// waited out) when [`registry_away`] says so.
fn registry_failure(
    error: &schema_registry_converter::error::SRCError,
    what: String,
) -> anyhow::Error {
    let failure = anyhow::anyhow!("{what}: {error}");
    if registry_away(error) {
        crate::error::IoError::Registry(failure).into()
    } else {
        failure
    }
}
