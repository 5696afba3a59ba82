//! `/metrics`, `/healthz` and `/readyz` (docs/configuration.md).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use metrics_exporter_prometheus::PrometheusHandle;

/// What readiness depends on. The worker's loops update it; the probes read it.
pub struct Health {
    started: Instant,
    state: Mutex<HealthState>,
}

#[derive(Default)]
struct HealthState {
    not_ready: Option<String>,
    last_heartbeat: Option<Instant>,
    dependencies_seen: Option<Instant>,
    /// Why the last Redis round trip failed; None once one succeeds.
    cache_failure: Option<String>,
}

/// A main loop that has not beaten for this long is wedged.
const WEDGED_AFTER: Duration = Duration::from_secs(120);
/// Readiness needs PostgreSQL and the brokers to have answered this recently.
const DEPENDENCIES_FRESH: Duration = Duration::from_secs(30);

impl Health {
    pub fn new() -> Arc<Health> {
        Arc::new(Health {
            started: Instant::now(),
            state: Mutex::new(HealthState {
                not_ready: Some("starting".into()),
                ..HealthState::default()
            }),
        })
    }

    /// The main loop is alive.
    pub fn heartbeat(&self) {
        self.state.lock().expect("not poisoned").last_heartbeat = Some(Instant::now());
    }

    /// PostgreSQL and the brokers just answered.
    pub fn dependencies_answered(&self) {
        let now = Instant::now();
        let mut state = self.state.lock().expect("not poisoned");
        state.dependencies_seen = Some(now);
        state.last_heartbeat = Some(now);
    }

    /// The outcome of the last Redis round trip: a worker whose cache does not answer is not
    /// ready (it would serve a stale cache to readers), until one succeeds again.
    pub fn cache_answered(&self, outcome: Result<(), String>) {
        self.state.lock().expect("not poisoned").cache_failure = outcome.err();
    }

    pub fn set_ready(&self) {
        self.state.lock().expect("not poisoned").not_ready = None;
    }

    pub fn set_not_ready(&self, reason: impl Into<String>) {
        self.state.lock().expect("not poisoned").not_ready = Some(reason.into());
    }

    fn live(&self) -> Result<(), String> {
        let state = self.state.lock().expect("not poisoned");
        let mut last = state.last_heartbeat.unwrap_or(self.started);
        // Waiting out a dependency, retrying: alive, only not ready.
        if let Some((_, since_attempt, _)) = crate::retry::outage::current() {
            last = last.max(Instant::now().checked_sub(since_attempt).unwrap_or(last));
        }
        if last.elapsed() > WEDGED_AFTER {
            return Err(format!(
                "main loop silent for {}s",
                last.elapsed().as_secs()
            ));
        }
        Ok(())
    }

    fn ready(&self) -> Result<(), String> {
        if let Some((waiting, _, reason)) = crate::retry::outage::current() {
            return Err(format!(
                "waiting {}s for a dependency: {reason}",
                waiting.as_secs()
            ));
        }
        let state = self.state.lock().expect("not poisoned");
        if let Some(reason) = &state.not_ready {
            return Err(reason.clone());
        }
        if let Some(failure) = &state.cache_failure {
            return Err(format!("Redis does not answer: {failure}"));
        }
        match state.dependencies_seen {
            Some(seen) if seen.elapsed() <= DEPENDENCIES_FRESH => Ok(()),
            Some(seen) => Err(format!(
                "PostgreSQL or the brokers last answered {}s ago",
                seen.elapsed().as_secs()
            )),
            None => Err("PostgreSQL and the brokers have not answered yet".into()),
        }
    }
}

#[derive(Clone)]
struct AppState {
    health: Arc<Health>,
    metrics: PrometheusHandle,
}

/// Serves the three endpoints on `addr` until `shutdown` resolves. Returns the bound address
/// (useful with port 0).
pub async fn serve(
    addr: SocketAddr,
    health: Arc<Health>,
    metrics: PrometheusHandle,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<SocketAddr> {
    let app = Router::new()
        .route("/metrics", get(render_metrics))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(AppState { health, metrics });
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("ELIGIBILITY_HTTP_ADDR {addr}: {e}"))?;
    let bound = listener.local_addr()?;
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await
        {
            tracing::error!(error = %e, "HTTP server stopped");
        }
    });
    Ok(bound)
}

async fn render_metrics(State(state): State<AppState>) -> String {
    state.metrics.run_upkeep();
    state.metrics.render()
}

async fn healthz(State(state): State<AppState>) -> (StatusCode, String) {
    match state.health.live() {
        Ok(()) => (StatusCode::OK, "ok\n".into()),
        Err(reason) => (StatusCode::SERVICE_UNAVAILABLE, format!("{reason}\n")),
    }
}

async fn readyz(State(state): State<AppState>) -> (StatusCode, String) {
    match state.health.ready() {
        Ok(()) => (StatusCode::OK, "ready\n".into()),
        Err(reason) => (StatusCode::SERVICE_UNAVAILABLE, format!("{reason}\n")),
    }
}

/// What every long-running worker does first: install the metrics recorder and serve the three
/// endpoints on `addr` until shutdown. Returns the health the worker's loops update.
pub async fn start(
    addr: SocketAddr,
    shutdown: crate::shutdown::Shutdown,
) -> anyhow::Result<Arc<Health>> {
    let health = Health::new();
    let metrics = crate::metrics::install()?;
    let bound = serve(addr, health.clone(), metrics, shutdown.wait()).await?;
    tracing::info!(addr = %bound, "serving /metrics, /healthz, /readyz");
    Ok(health)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_that_does_not_answer_makes_the_worker_unready_until_it_does() {
        let health = Health::new();
        health.dependencies_answered();
        health.set_ready();
        assert_eq!(health.ready(), Ok(()));
        health.cache_answered(Err("connection refused".into()));
        assert_eq!(
            health.ready(),
            Err("Redis does not answer: connection refused".into())
        );
        health.cache_answered(Ok(()));
        assert_eq!(health.ready(), Ok(()));
    }
}
