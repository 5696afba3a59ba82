//! The retry policy for transient store and broker failures: exponential backoff with jitter.
//! While a batch is being retried the worker consumes nothing more (back-pressure), and a
//! batch is never dropped: a dependency that is away is waited for, reported on `/readyz`
//! ([`outage`]); any other failure, after the policy gives up, stops the worker so that the
//! platform restarts it and the batch is read again from the stored offsets.

use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};

use crate::error::IoError;
use crate::shutdown::Shutdown;

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
pub async fn wait_out(step: impl AsyncFnMut() -> anyhow::Result<()>) -> anyhow::Result<()> {
    waited_out(step, None).await.map(|_| ())
}

/// [`wait_out`] for a worker's upkeep, which has nothing to finish: gives up, returning
/// `Ok(false)`, once `shutdown` is requested while the dependency is still away, so that a
/// SIGTERM during an outage stops the worker (the records it has not committed are read again
/// by the partitions' next owner) instead of waiting for its kill.
pub async fn wait_out_unless(
    shutdown: &Shutdown,
    step: impl AsyncFnMut() -> anyhow::Result<()>,
) -> anyhow::Result<bool> {
    waited_out(step, Some(shutdown)).await
}

/// Whether `step` succeeded (`false`: `shutdown` came first while waiting).
async fn waited_out(
    mut step: impl AsyncFnMut() -> anyhow::Result<()>,
    shutdown: Option<&Shutdown>,
) -> anyhow::Result<bool> {
    let mut waiting = Waiting::new("upkeep");
    loop {
        match step().await {
            Ok(()) => {
                waiting.over();
                return Ok(true);
            }
            Err(e) => match dependency_away(&e) {
                Some(dependency) => {
                    // Named first, so that /readyz says which dependency is awaited.
                    let reason = format!("{dependency}: {e:#}");
                    match shutdown {
                        Some(shutdown) => tokio::select! {
                            () = waiting.wait(&reason) => {}
                            () = shutdown.clone().wait() => return Ok(false),
                        },
                        None => waiting.wait(&reason).await,
                    }
                }
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

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    fn registry_away() -> anyhow::Error {
        IoError::Registry(anyhow::anyhow!("status 503")).into()
    }

    /// An upkeep's error is transient when a dependency is away, whatever context it carries;
    /// a defect is not.
    #[test]
    fn an_upkeep_error_is_transient_when_a_dependency_is_away() {
        let upkeep = anyhow::Error::from(IoError::Registry(anyhow::anyhow!("503")))
            .context("refreshing the rules");
        assert!(is_transient(&upkeep));
        assert!(!is_transient(&anyhow::anyhow!("a rule file is invalid")));
    }

    #[tokio::test]
    async fn an_upkeep_waiting_for_a_dependency_stops_on_shutdown() {
        let (stop, receiver) = tokio::sync::watch::channel(false);
        let shutdown = Shutdown::from_receiver(receiver);
        let stopper = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            stop.send(true).expect("the upkeep listens");
            stop
        });
        let started = Instant::now();
        let mut attempts = 0;
        let done = wait_out_unless(&shutdown, async || {
            attempts += 1;
            Err(registry_away())
        })
        .await
        .expect("an outage is waited out, not an error");
        assert!(!done, "stopped by the shutdown");
        assert!(attempts >= 2, "retried while away: {attempts}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        drop(stopper.await);
    }

    #[tokio::test]
    async fn an_upkeep_resumes_when_the_dependency_is_back_and_a_defect_is_returned() {
        let (_stop, receiver) = tokio::sync::watch::channel(false);
        let shutdown = Shutdown::from_receiver(receiver);
        let mut attempts = 0;
        let done = wait_out_unless(&shutdown, async || {
            attempts += 1;
            if attempts < 3 {
                Err(registry_away())
            } else {
                Ok(())
            }
        })
        .await
        .expect("back after two attempts");
        assert!(done);
        assert_eq!(attempts, 3);

        let defect = wait_out_unless(&shutdown, async || Err(anyhow::anyhow!("a bug"))).await;
        assert_eq!(defect.expect_err("not waited out").to_string(), "a bug");
    }
}
