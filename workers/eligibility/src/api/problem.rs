//! Errors as RFC 9457 problem details (`application/problem+json`). A problem never carries
//! user data or rule internals: its texts are fixed per kind, and a field is named only by its
//! JSON pointer.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// A problem response; boxed, as most results carry none.
#[derive(Debug, Clone)]
pub struct Problem(Box<ProblemBody>);

impl std::ops::Deref for Problem {
    type Target = ProblemBody;

    fn deref(&self) -> &ProblemBody {
        &self.0
    }
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(as = Problem)]
pub struct ProblemBody {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub title: &'static str,
    pub status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The offending fields of a request body, as JSON pointers with what is wrong in words
    /// that do not repeat the value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
    /// `rate_limit_exceeded` on a 429 (the design's body, kept for its clients).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'static str>,
    #[serde(skip)]
    pub retry_after_seconds: Option<u64>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct FieldError {
    pub pointer: String,
    pub detail: String,
}

impl Problem {
    fn body(status: StatusCode, kind: &'static str, title: &'static str) -> ProblemBody {
        ProblemBody {
            kind,
            title,
            status: status.as_u16(),
            detail: None,
            errors: Vec::new(),
            error: None,
            message: None,
            retry_after_seconds: None,
        }
    }

    pub fn unauthorized() -> Problem {
        Problem::wrap(
            StatusCode::UNAUTHORIZED,
            "/problems/unauthorized",
            "A valid bearer token is required",
        )
    }

    /// Also what a caller gets for a user or scheme it may not see: ids cannot be probed.
    pub fn not_found() -> Problem {
        Problem::wrap(StatusCode::NOT_FOUND, "/problems/not-found", "Not found")
    }

    pub fn invalid_body(errors: Vec<FieldError>) -> Problem {
        Problem(Box::new(ProblemBody {
            errors,
            ..Problem::body(
                StatusCode::UNPROCESSABLE_ENTITY,
                "/problems/invalid-body",
                "The request body is not valid",
            )
        }))
    }

    /// The request conflicts with the resource's state (a proposal already decided, or one
    /// its own author tries to decide).
    pub fn conflict(detail: impl Into<String>) -> Problem {
        Problem::wrap(
            StatusCode::CONFLICT,
            "/problems/conflict",
            "The request conflicts with the current state",
        )
        .with_detail(detail)
    }

    pub fn too_large() -> Problem {
        Problem::wrap(
            StatusCode::PAYLOAD_TOO_LARGE,
            "/problems/too-large",
            "The request body is too large",
        )
    }

    pub fn timed_out() -> Problem {
        Problem::wrap(
            StatusCode::REQUEST_TIMEOUT,
            "/problems/timed-out",
            "The request took too long",
        )
    }

    pub fn rate_limited(retry_after_seconds: u64) -> Problem {
        Problem(Box::new(ProblemBody {
            error: Some("rate_limit_exceeded"),
            message: Some("Eligibility evaluation rate limit reached. Please retry shortly."),
            retry_after_seconds: Some(retry_after_seconds),
            ..Problem::body(
                StatusCode::TOO_MANY_REQUESTS,
                "/problems/rate-limited",
                "Too many requests",
            )
        }))
    }

    pub fn unavailable() -> Problem {
        Problem::wrap(
            StatusCode::SERVICE_UNAVAILABLE,
            "/problems/unavailable",
            "The service cannot answer now; retry shortly",
        )
    }

    pub fn internal() -> Problem {
        Problem::wrap(
            StatusCode::INTERNAL_SERVER_ERROR,
            "/problems/internal",
            "Internal error",
        )
    }

    fn wrap(status: StatusCode, kind: &'static str, title: &'static str) -> Problem {
        Problem(Box::new(Problem::body(status, kind, title)))
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> Problem {
        self.0.detail = Some(detail.into());
        self
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, axum::Json(&*self.0)).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(seconds) = self.retry_after_seconds {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// Storage and broker failures: logged in full, answered as 503 without their text.
impl From<anyhow::Error> for Problem {
    fn from(error: anyhow::Error) -> Problem {
        tracing::warn!(error = %format!("{error:#}"), "API request failed");
        Problem::unavailable()
    }
}

impl From<tokio_postgres::Error> for Problem {
    fn from(error: tokio_postgres::Error) -> Problem {
        Problem::from(anyhow::Error::from(error))
    }
}

impl From<deadpool_postgres::PoolError> for Problem {
    fn from(error: deadpool_postgres::PoolError) -> Problem {
        Problem::from(anyhow::Error::from(error))
    }
}
