//! The OpenAI-compatible chat-completions client (NVIDIA NIM, vLLM, Ollama): `POST
//! {ELIGIBILITY_LLM_BASE_URL}/chat/completions` with the model, the messages, temperature 0.2 and
//! the answer's token budget ([`explain::max_tokens`](::explain::max_tokens)), and the API key as
//! a bearer token when one is configured.
//!
//! - Each request has a timeout (`--llm-timeout-ms`), taken after a slot of the concurrency limit
//!   (`--llm-concurrency`, a semaphore) is held, so waiting for a slot is not timed out; a
//!   caller's deadline ([`LlmClient::complete`]: a micro-batch's `--llm-batch-budget-ms`)
//!   ends the wait, and no request starts after it.
//! - Transient failures (connection errors, 5xx, 429) are retried with the fleet's backoff
//!   ([`fleet::retry::policy`]), at most [`LlmOptions::max_retries`] times, releasing the slot
//!   while waiting. A timeout is not retried: it already spent the time budget.
//! - Every request is timed into `eligibility_llm_request_duration_seconds{outcome}` and every
//!   failed one counted in `eligibility_errors_total{kind="llm"}`.
//! - The [`Breaker`] sees one outcome per call (after its retries); while it is open no request
//!   is made at all. An answer cut at `max_tokens` ([`LlmError::Cut`]) is refused but counts as
//!   the endpoint answering: a verbose model must not open the circuit (it did, with the local
//!   model of docs/explainer-model.md, after a few long answers in a row).

use std::time::{Duration, Instant};

use ::explain::ChatMessage;
use backon::Retryable;
use fleet::config::LlmConfig;
use serde::Deserialize;
use tokio::sync::Semaphore;

use super::breaker::{Breaker, BreakerSettings, Permit};

/// Sampling temperature of every request (issue: low, near-deterministic wording).
pub const TEMPERATURE: f64 = 0.2;

#[derive(Debug, Clone, Copy)]
pub struct LlmOptions {
    /// One request, from sending to the last byte of the answer.
    pub timeout: Duration,
    /// Requests in flight at once, across the whole process.
    pub concurrency: usize,
    /// Retries of a transient failure (so at most `1 + max_retries` requests per call).
    pub max_retries: usize,
    /// The first retry's delay (doubling, with jitter, as [`fleet::retry::policy`]).
    pub retry_min_delay: Duration,
    pub breaker: BreakerSettings,
}

impl Default for LlmOptions {
    fn default() -> LlmOptions {
        LlmOptions {
            timeout: Duration::from_secs(10),
            concurrency: 4,
            max_retries: 2,
            retry_min_delay: Duration::from_millis(200),
            breaker: BreakerSettings::default(),
        }
    }
}

/// Why a call gave no answer. Each maps to a fallback reason of `eligibility_explanation_fallbacks_total`.
#[derive(Debug, Clone, PartialEq)]
pub enum LlmError {
    /// No answer within the timeout.
    Timeout,
    /// A non-2xx status (`status`) or a connection failure (`status` None).
    Http {
        status: Option<u16>,
        message: String,
    },
    /// A 2xx answer that cannot be used (not a chat completion, no text).
    InvalidResponse(String),
    /// A chat completion cut at `max_tokens` (its text so far, kept for the record, never
    /// served): the endpoint is well, the model said too much (a small local model often does).
    /// Not counted against the endpoint by the breaker.
    Cut(String),
    /// The circuit breaker is open: no request was made.
    CircuitOpen,
    /// The caller's deadline (a micro-batch's time for the model) passed before a request
    /// could start: no request was made.
    OverBudget,
}

impl LlmError {
    /// Worth retrying: the endpoint may answer next time.
    pub fn is_transient(&self) -> bool {
        match self {
            LlmError::Http { status: None, .. } => true,
            LlmError::Http {
                status: Some(code), ..
            } => *code == 429 || *code >= 500,
            _ => false,
        }
    }

    /// The `outcome` label of `eligibility_llm_request_duration_seconds`.
    fn outcome(&self) -> &'static str {
        match self {
            LlmError::Timeout => "timeout",
            LlmError::Http { .. } | LlmError::CircuitOpen | LlmError::OverBudget => "http_error",
            LlmError::InvalidResponse(_) | LlmError::Cut(_) => "invalid_response",
        }
    }
}

impl std::fmt::Display for LlmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LlmError::Timeout => f.write_str("the LLM did not answer in time"),
            LlmError::Http {
                status: Some(code),
                message,
            } => write!(f, "the LLM endpoint answered HTTP {code}: {message}"),
            LlmError::Http {
                status: None,
                message,
            } => write!(f, "the LLM endpoint could not be reached: {message}"),
            LlmError::InvalidResponse(why) => write!(f, "unusable LLM answer: {why}"),
            LlmError::Cut(_) => {
                f.write_str("unusable LLM answer: the answer was cut at max_tokens")
            }
            LlmError::CircuitOpen => f.write_str("the LLM circuit breaker is open"),
            LlmError::OverBudget => f.write_str("the batch's time for the LLM is spent"),
        }
    }
}

/// One client per process: its semaphore and breaker are shared by every call.
pub struct LlmClient {
    http: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    options: LlmOptions,
    slots: Semaphore,
    breaker: Breaker,
}

impl LlmClient {
    pub fn new(config: &LlmConfig, options: LlmOptions) -> anyhow::Result<LlmClient> {
        let http = reqwest::Client::builder()
            .user_agent(concat!("eligibility-explainer/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| anyhow::anyhow!("building the LLM HTTP client: {e}"))?;
        Ok(LlmClient {
            http,
            url: format!("{}/chat/completions", config.base_url.trim_end_matches('/')),
            model: config.model.clone(),
            api_key: config.api_key.clone(),
            options,
            slots: Semaphore::new(options.concurrency.max(1)),
            breaker: Breaker::new(options.breaker),
        })
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn breaker_is_open(&self) -> bool {
        self.breaker.is_open()
    }

    /// The model's answer to `messages` in at most `max_tokens`, trimmed; retried as the module
    /// says. No request starts after `deadline`: a call still waiting for a slot then, or made
    /// after it, is [`LlmError::OverBudget`] (a request already started runs to its own
    /// timeout).
    pub async fn complete(
        &self,
        messages: &[ChatMessage],
        max_tokens: u32,
        deadline: Option<Instant>,
    ) -> Result<String, LlmError> {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(LlmError::OverBudget);
        }
        let permit = self.breaker.permit();
        if permit == Permit::Refused {
            return Err(LlmError::CircuitOpen);
        }
        let policy = fleet::retry::policy()
            .with_min_delay(self.options.retry_min_delay)
            .with_max_times(self.options.max_retries);
        let result = (|| self.attempt(messages, max_tokens, deadline))
            .retry(policy)
            .sleep(tokio::time::sleep)
            .when(LlmError::is_transient)
            .notify(|e: &LlmError, after: Duration| {
                tracing::warn!(error = %e, retry_in_ms = after.as_millis() as u64, "LLM request failed");
            })
            .await;
        // The breaker guards against an endpoint that is down or failing; a model that talks
        // past max_tokens answered, and must not shut the way for the next, shorter answer.
        // A call that never started says nothing of the endpoint.
        if result == Err(LlmError::OverBudget) {
            self.breaker.forgo(permit);
        } else {
            self.breaker
                .record(permit, matches!(result, Ok(_) | Err(LlmError::Cut(_))));
        }
        result
    }

    /// One request, timed and counted.
    async fn attempt(
        &self,
        messages: &[ChatMessage],
        max_tokens: u32,
        deadline: Option<Instant>,
    ) -> Result<String, LlmError> {
        let slot = self.slots.acquire();
        let _slot = match deadline {
            None => slot.await,
            Some(deadline) => tokio::time::timeout_at(deadline.into(), slot)
                .await
                .map_err(|_| LlmError::OverBudget)?,
        }
        .expect("the semaphore is never closed");
        let started = Instant::now();
        let result = tokio::time::timeout(self.options.timeout, self.request(messages, max_tokens))
            .await
            .unwrap_or(Err(LlmError::Timeout));
        let outcome = match &result {
            Ok(_) => "success",
            Err(e) => e.outcome(),
        };
        metrics::histogram!(fleet::metrics::LLM_REQUEST_DURATION, "outcome" => outcome)
            .record(started.elapsed().as_secs_f64());
        if result.is_err() {
            fleet::metrics::error("llm");
        }
        result
    }

    async fn request(&self, messages: &[ChatMessage], max_tokens: u32) -> Result<String, LlmError> {
        let body = serde_json::json!({
            "model": self.model,
            "messages": messages,
            "temperature": TEMPERATURE,
            "max_tokens": max_tokens,
            "stream": false,
        });
        let mut request = self.http.post(&self.url).json(&body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let unreachable = |e: reqwest::Error| LlmError::Http {
            status: None,
            message: e.without_url().to_string(),
        };
        let response = request.send().await.map_err(unreachable)?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(unreachable)?;
        if !status.is_success() {
            let text = String::from_utf8_lossy(&bytes);
            return Err(LlmError::Http {
                status: Some(status.as_u16()),
                message: text.chars().take(200).collect(),
            });
        }
        parse_completion(&bytes)
    }
}

#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: Option<AnswerMessage>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct AnswerMessage {
    content: Option<String>,
}

/// The text of a chat-completion response body. An answer cut at `max_tokens`
/// (`finish_reason: "length"`) is refused: a cut sentence is a fragment of a fact as far as
/// Oracle-A is concerned, and would pass while saying less than it seems to.
pub fn parse_completion(body: &[u8]) -> Result<String, LlmError> {
    let completion: Completion = serde_json::from_slice(body)
        .map_err(|e| LlmError::InvalidResponse(format!("not a chat completion: {e}")))?;
    let choice = completion
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| LlmError::InvalidResponse("no choices".into()))?;
    let text = choice
        .message
        .and_then(|m| m.content)
        .map(|t| t.trim().to_string())
        .unwrap_or_default();
    if choice.finish_reason.as_deref() == Some("length") {
        return Err(LlmError::Cut(text));
    }
    if text.is_empty() {
        return Err(LlmError::InvalidResponse("no text in the answer".into()));
    }
    Ok(text)
}
