//! What every worker shares for I/O (docs/design.md, "Crates").
//!
//! Major components:
//! - [`config`]: the `ELIGIBILITY_*` environment contract (docs/configuration.md);
//!   [`connect`]: the connections a worker opens at start.
//! - [`topics`]: topic names and the partition map (`schemas/partition_map.json`).
//! - [`kafka`]: client set-up (security), the idempotent producer, the consumer whose offsets
//!   live in PostgreSQL, topic creation.
//! - [`input`]: records as consumed, micro-batches, decoding, dead letters; [`routing`]: records
//!   forwarded or fanned out to the partition that owns their users.
//! - [`avro`], [`events`]: Avro payloads in the Confluent wire format through a schema registry,
//!   and their Rust types.
//! - [`postgres`]: the pool and the migrations of `schemas/migrations/`; [`offsets`]: consumer
//!   offsets kept in PostgreSQL; [`leases`]: the partition leases that fence a worker which
//!   lost its partitions.
//! - [`cache`]: the Redis verdict cache.
//! - [`lag`]: the consumer lag of the partitions a worker owns.
//! - [`metrics`], [`http`]: the Prometheus recorder (docs/metrics.md) and the `/metrics`,
//!   `/healthz`, `/readyz` endpoints.
//! - [`worker`]: the consume loop every worker runs around its [`worker::Stage`].
//! - [`error`]: the I/O failures of a batch, typed, each with its `errors_total` kind.
//! - [`shutdown`], [`retry`]: graceful shutdown and the backoff policy.
//! - [`registry`]: the project's own small schema registry, the local development default.

pub mod avro;
pub mod cache;
pub mod config;
pub mod connect;
pub mod error;
pub mod events;
pub mod http;
pub mod input;
pub mod kafka;
pub mod lag;
pub mod leases;
pub mod metrics;
pub mod offsets;
pub mod postgres;
pub mod registry;
pub mod retry;
pub mod routing;
pub mod shutdown;
pub mod topics;
pub mod worker;

/// Structured logs (`ELIGIBILITY_LOG` is an `EnvFilter` directive), JSON when stderr is not a
/// terminal (a pod's log collector), human-readable otherwise.
pub fn init_tracing(directive: &str) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_new(directive)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if std::io::stderr().is_terminal() {
        let _ = builder.try_init();
    } else {
        let _ = builder.json().try_init();
    }
}
