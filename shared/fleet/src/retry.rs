//! The retry policy for transient store and broker failures: exponential backoff with jitter.
//! While a batch is being retried the worker consumes nothing more (back-pressure), and a
//! batch is never dropped: a dependency that is away is waited for, reported on `/readyz`
//! ([`outage`]); any other failure, after the policy gives up, stops the worker so that the
//! platform restarts it and the batch is read again from the stored offsets.

use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};

use crate::error::IoError;

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

/// Failures that are not a dependency being away (a defect, a fenced batch) get this many
/// retries before they stop the worker.
const OTHER_FAILURES: usize = 8;

/// One step of a micro-batch (load, publish, commit), retried until it succeeds. A store, the
/// broker or the registry being away ([`IoError::is_transient`]) is waited out for as long as
/// it lasts, with the policy's backoff, while the worker stays alive, consumes nothing more and
/// reports not ready ([`outage`]); when the dependency is back the worker resumes by itself
/// from where it was, so an outage never turns into a crash loop. Any other failure is retried
/// under the policy and then stops the worker, counted under its own kind and naming the batch.
pub async fn batch_with_retries<T, F, Fut>(records: usize, op: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, IoError>>,
{
    let mut others = 0;
    let result = op
        .retry(policy().without_max_times())
        .sleep(tokio::time::sleep)
        .when(|e: &IoError| {
            if e.is_transient() {
                return true;
            }
            others += 1;
            others <= OTHER_FAILURES
        })
        .notify(|e: &IoError, after: Duration| {
            crate::metrics::error(e.kind());
            if e.is_transient() {
                outage::waiting(e);
            }
            tracing::warn!(kind = e.kind(), error = %e, retry_in_ms = after.as_millis() as u64, "transient failure");
        })
        .await;
    outage::over();
    result.map_err(|e| {
        crate::metrics::error(e.kind());
        anyhow::anyhow!("micro-batch of {records} records failed after retries: {e}")
    })
}

/// Whether an error from outside a batch (a worker's upkeep) is a dependency being away.
pub fn is_transient(error: &anyhow::Error) -> bool {
    dependency_away(error).is_some()
}

/// Which dependency `error` says is away (the `kind` label of `eligibility_errors_total`), if
/// it is one being away rather than a defect or a setting to fix.
fn dependency_away(error: &anyhow::Error) -> Option<&'static str> {
    if let Some(io) = error.downcast_ref::<IoError>() {
        return io.is_transient().then(|| io.kind());
    }
    let postgres = error
        .downcast_ref::<deadpool_postgres::PoolError>()
        .is_some()
        || error
            .downcast_ref::<tokio_postgres::Error>()
            .is_some_and(crate::error::postgres_is_transient);
    let kafka = error
        .downcast_ref::<rdkafka::error::KafkaError>()
        .is_some_and(|e| !crate::error::kafka_is_fatal(e));
    match (postgres, kafka) {
        (true, _) => Some("postgres"),
        (_, true) => Some("kafka"),
        _ => None,
    }
}

/// Waits out a dependency that is away while `step` (a worker's upkeep) fails with it, with
/// the policy's backoff, reporting the outage like [`batch_with_retries`]; any other failure
/// is returned at once.
pub async fn wait_out(mut step: impl AsyncFnMut() -> anyhow::Result<()>) -> anyhow::Result<()> {
    let mut waiting = Waiting::new("upkeep");
    loop {
        match step().await {
            Ok(()) => {
                waiting.over();
                return Ok(());
            }
            Err(e) => match dependency_away(&e) {
                // Named first, so that /readyz says which dependency is awaited.
                Some(dependency) => waiting.wait(&format!("{dependency}: {e:#}")).await,
                None => return Err(e),
            },
        }
    }
}

/// One dependency being waited for outside a batch: each failed attempt is counted under
/// `kind` in `eligibility_errors_total`, reported on `/readyz` ([`outage`]) and followed by a
/// backoff that doubles from 50 ms to 5 s.
pub struct Waiting {
    kind: &'static str,
    delay: Option<Duration>,
}

impl Waiting {
    pub fn new(kind: &'static str) -> Waiting {
        Waiting { kind, delay: None }
    }

    /// Records a failed attempt (`reason`) and sleeps before the next one.
    pub async fn wait(&mut self, reason: &str) {
        let delay = self.failed(reason);
        tracing::warn!(kind = self.kind, error = %reason, retry_in_ms = delay.as_millis() as u64, "a dependency is away: waiting");
        tokio::time::sleep(delay).await;
    }

    /// Records a failed attempt (`reason`) without sleeping or logging, for a caller whose next
    /// attempt itself waits (a poll that blocks until the client has news); returns the
    /// backoff [`Waiting::wait`] sleeps.
    pub fn failed(&mut self, reason: &str) -> Duration {
        let delay = self.delay.map_or(Duration::from_millis(50), |d| {
            (d * 2).min(Duration::from_secs(5))
        });
        self.delay = Some(delay);
        crate::metrics::error(self.kind);
        outage::waiting_for(reason.to_string());
        delay
    }

    /// Whether the last attempt failed.
    pub fn is_waiting(&self) -> bool {
        self.delay.is_some()
    }

    /// The dependency answered: the outage, if this was waiting, is over.
    pub fn over(&mut self) {
        if self.delay.take().is_some() {
            outage::over();
        }
    }
}

/// The dependency a worker is waiting for, if any: read by `/readyz` (not ready while it
/// lasts) and `/healthz` (a worker retrying is alive, not wedged).
pub mod outage {
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    use crate::error::IoError;

    struct Outage {
        since: Instant,
        last_attempt: Instant,
        reason: String,
    }

    static CURRENT: Mutex<Option<Outage>> = Mutex::new(None);

    pub(super) fn waiting(error: &IoError) {
        waiting_for(format!("{}: {error}", error.kind()));
    }

    pub(super) fn waiting_for(reason: String) {
        let now = Instant::now();
        let mut current = CURRENT.lock().expect("not poisoned");
        let since = current.as_ref().map_or(now, |o| o.since);
        *current = Some(Outage {
            since,
            last_attempt: now,
            reason,
        });
    }

    pub(super) fn over() {
        *CURRENT.lock().expect("not poisoned") = None;
    }

    /// (for how long, since the last attempt, why) while a dependency is away.
    pub fn current() -> Option<(Duration, Duration, String)> {
        CURRENT.lock().expect("not poisoned").as_ref().map(|o| {
            (
                o.since.elapsed(),
                o.last_attempt.elapsed(),
                o.reason.clone(),
            )
        })
    }
}
