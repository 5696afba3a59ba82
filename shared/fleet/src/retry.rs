//! The retry policy for transient store and broker failures: exponential backoff with jitter.
//! While a batch is being retried the worker consumes nothing more (back-pressure), and a
//! batch is never dropped: after the policy gives up, the error stops the worker so that the
//! platform restarts it and the batch is read again from the stored offsets.

use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};

pub fn policy() -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(50))
        .with_max_delay(Duration::from_secs(5))
        .with_max_times(8)
        .with_jitter()
}

/// Runs `op` until it succeeds or the policy gives up, counting each failure under `kind`.
pub async fn with_retries<T, E, F, Fut>(kind: &'static str, op: F) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
    E: std::fmt::Display,
{
    op.retry(policy())
        .sleep(tokio::time::sleep)
        .notify(|e: &E, after: Duration| {
            crate::metrics::error(kind);
            tracing::warn!(kind, error = %e, retry_in_ms = after.as_millis() as u64, "transient failure");
        })
        .await
}

/// One micro-batch's attempt (publish and commit), retried under the policy; the failure that
/// outlives it is counted under its own kind and names the batch, and stops the worker.
pub async fn batch_with_retries<T, F, Fut>(records: usize, op: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, crate::error::IoError>>,
{
    with_retries("internal", op).await.map_err(|e| {
        crate::metrics::error(e.kind());
        anyhow::anyhow!("micro-batch of {records} records failed after retries: {e}")
    })
}
