//! The fleet's I/O failures, typed by what failed. [`IoError::kind`] is the `kind` label of
//! `eligibility_errors_total` (docs/metrics.md), so a batch step needs no labelling by hand:
//! `?` converts the client libraries' errors.

use rdkafka::error::KafkaError;

#[derive(Debug, thiserror::Error)]
pub enum IoError {
    #[error("PostgreSQL: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    #[error("PostgreSQL pool: {0}")]
    Pool(#[from] deadpool_postgres::PoolError),
    #[error("Kafka: {0}")]
    Kafka(#[from] KafkaError),
    #[error("Redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("schema registry: {0:#}")]
    Registry(anyhow::Error),
    /// The GPU batch engine failed (under `gpu`, where no CPU fallback is wanted).
    #[error("GPU: {0:#}")]
    Gpu(anyhow::Error),
    /// A partition this worker no longer holds (fleet::leases): the batch is not committed.
    #[error("{0}")]
    Fenced(String),
    /// Stored data that does not read back, or a defect (paths of the engine that disagree).
    #[error("{0:#}")]
    Internal(anyhow::Error),
}

impl IoError {
    pub fn internal(error: impl Into<anyhow::Error>) -> IoError {
        IoError::Internal(error.into())
    }

    /// A dependency away or overloaded (a connection refused or dropped, PostgreSQL shutting
    /// down or out of connections, a broker or registry timeout), which waiting cures; not a
    /// defect, a fenced batch, an SQL error or a Kafka client in a fatal state (an idempotent
    /// producer out of step with the broker: only a new client, so a restart, cures that).
    pub fn is_transient(&self) -> bool {
        match self {
            IoError::Postgres(e) => postgres_is_transient(e),
            IoError::Kafka(e) => !kafka_is_fatal(e),
            IoError::Pool(_) | IoError::Redis(_) | IoError::Registry(_) => true,
            IoError::Gpu(_) | IoError::Fenced(_) | IoError::Internal(_) => false,
        }
    }

    /// The `kind` label of `eligibility_errors_total`.
    pub fn kind(&self) -> &'static str {
        match self {
            IoError::Postgres(_) | IoError::Pool(_) => "postgres",
            IoError::Kafka(KafkaError::MessageConsumption(_) | KafkaError::PartitionEOF(_)) => {
                "kafka_consume"
            }
            IoError::Kafka(_) => "kafka_produce",
            IoError::Redis(_) => "redis",
            IoError::Registry(_) => "schema_registry",
            IoError::Gpu(_) => "gpu",
            IoError::Fenced(_) | IoError::Internal(_) => "internal",
        }
    }
}

/// The client can no longer be used (librdkafka's fatal errors).
pub fn kafka_is_fatal(error: &KafkaError) -> bool {
    matches!(error, KafkaError::MessageConsumptionFatal(_))
        || error.rdkafka_error_code() == Some(rdkafka::types::RDKafkaErrorCode::Fatal)
}

/// A PostgreSQL failure that waiting cures: no SQL error at all (the connection failed or was
/// closed), or one of class connection exception, insufficient resources, operator
/// intervention (a shutdown), or transaction rollback (serialization failure, deadlock).
pub fn postgres_is_transient(error: &tokio_postgres::Error) -> bool {
    match error.as_db_error() {
        Some(db) => ["08", "53", "57", "40"]
            .iter()
            .any(|class| db.code().code().starts_with(class)),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_is_counted_under_a_kind_of_the_metrics_contract() {
        use rdkafka::types::RDKafkaErrorCode;
        let cases = [
            (
                IoError::Kafka(KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull)),
                "kafka_produce",
            ),
            (
                IoError::Kafka(KafkaError::MessageConsumption(
                    RDKafkaErrorCode::BrokerTransportFailure,
                )),
                "kafka_consume",
            ),
            (IoError::Registry(anyhow::anyhow!("503")), "schema_registry"),
            (IoError::Gpu(anyhow::anyhow!("no device")), "gpu"),
            (IoError::Fenced("fenced: partition 3".into()), "internal"),
        ];
        for (error, kind) in cases {
            assert_eq!(error.kind(), kind, "{error}");
            assert!(crate::metrics::ERROR_KINDS.contains(&kind));
        }
    }

    #[test]
    fn a_dependency_away_is_waited_out_and_a_defect_is_not() {
        use rdkafka::types::RDKafkaErrorCode;
        let waited = [
            IoError::Kafka(KafkaError::MessageProduction(
                RDKafkaErrorCode::MessageTimedOut,
            )),
            IoError::Registry(anyhow::anyhow!("connection refused")),
        ];
        assert!(waited.iter().all(IoError::is_transient));
        let not = [
            // An idempotent producer the broker put out of step (seen in the chaos run).
            IoError::Kafka(KafkaError::MessageProduction(RDKafkaErrorCode::Fatal)),
            IoError::Fenced("fenced: partition 3".into()),
            IoError::internal(anyhow::anyhow!("paths disagree")),
            IoError::Gpu(anyhow::anyhow!("no device")),
        ];
        assert!(!not.iter().any(IoError::is_transient));
    }
}
