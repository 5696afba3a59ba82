//! A small Confluent-compatible schema registry stored in PostgreSQL: **the local default only**
//! (`eligibility schema-registry`, started by `scripts/stack.sh`), because no real registry
//! installs on the development machines. Production points `ELIGIBILITY_SCHEMA_REGISTRY_URL`
//! at Confluent, Karapace, Apicurio or Redpanda.
//!
//! The subset the fleet and stock clients use: `POST /subjects/{s}/versions` (register, or
//! return the id of an identical schema), `POST /subjects/{s}` (look up), `GET /schemas/ids/{id}`,
//! `GET /subjects`, `GET /subjects/{s}/versions`, `GET /subjects/{s}/versions/{v|latest}`.
//! Compatibility checks are not implemented: every new schema text becomes a new version.

use std::net::SocketAddr;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use deadpool_postgres::Pool;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
struct RegisterRequest {
    schema: String,
    #[serde(rename = "schemaType", default)]
    schema_type: Option<String>,
}

struct ApiError(StatusCode, i32, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Json(json!({"error_code": self.1, "message": self.2}));
        (
            self.0,
            [("content-type", "application/vnd.schemaregistry.v1+json")],
            body,
        )
            .into_response()
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> ApiError {
        ApiError(StatusCode::INTERNAL_SERVER_ERROR, 50001, e.to_string())
    }
}

/// The registry's store away: 503, which clients retry (a 500 is read as a refusal, and
/// some clients keep it as the answer).
fn store_away(e: impl std::fmt::Display) -> ApiError {
    ApiError(
        StatusCode::SERVICE_UNAVAILABLE,
        50003,
        format!("the schema store is unavailable: {e}"),
    )
}

impl From<tokio_postgres::Error> for ApiError {
    fn from(e: tokio_postgres::Error) -> ApiError {
        if crate::error::postgres_is_transient(&e) {
            store_away(e)
        } else {
            anyhow::Error::from(e).into()
        }
    }
}

impl From<deadpool_postgres::PoolError> for ApiError {
    fn from(e: deadpool_postgres::PoolError) -> ApiError {
        store_away(e)
    }
}

type ApiResult = Result<Json<Value>, ApiError>;

pub fn router(pool: Pool) -> Router {
    Router::new()
        .route("/subjects", get(subjects))
        .route("/subjects/{subject}", post(lookup))
        .route("/subjects/{subject}/versions", get(versions).post(register))
        .route("/subjects/{subject}/versions/{version}", get(version))
        .route("/schemas/ids/{id}", get(schema_by_id))
        .with_state(pool)
}

/// Serves the registry on `addr` until the process ends.
pub async fn serve(addr: SocketAddr, pool: Pool) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(%addr, "local schema registry listening (development default)");
    axum::serve(listener, router(pool)).await?;
    Ok(())
}

async fn register(
    State(pool): State<Pool>,
    Path(subject): Path<String>,
    Json(request): Json<RegisterRequest>,
) -> ApiResult {
    let schema_type = request.schema_type.unwrap_or_else(|| "AVRO".into());
    if schema_type == "AVRO" {
        apache_avro::Schema::parse_str(&request.schema).map_err(|e| {
            ApiError(
                StatusCode::UNPROCESSABLE_ENTITY,
                42201,
                format!("Invalid schema: {e}"),
            )
        })?;
    }
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    // Serialise registrations so that versions are dense and ids unique.
    tx.execute(
        "LOCK TABLE registry_subject_versions IN EXCLUSIVE MODE",
        &[],
    )
    .await?;
    let id: i32 = tx
        .query_one(
            "INSERT INTO registry_schemas (schema_text, schema_type) VALUES ($1, $2)
             ON CONFLICT (schema_text) DO UPDATE SET schema_type = EXCLUDED.schema_type
             RETURNING id",
            &[&request.schema, &schema_type],
        )
        .await?
        .get(0);
    tx.execute(
        "INSERT INTO registry_subject_versions (subject, version, schema_id)
         SELECT $1, coalesce(max(version), 0) + 1, $2 FROM registry_subject_versions WHERE subject = $1
         ON CONFLICT DO NOTHING",
        &[&subject, &id],
    )
    .await?;
    tx.commit().await?;
    Ok(Json(json!({"id": id})))
}

async fn lookup(
    State(pool): State<Pool>,
    Path(subject): Path<String>,
    Json(request): Json<RegisterRequest>,
) -> ApiResult {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            "SELECT v.version, s.id, s.schema_text FROM registry_subject_versions v
             JOIN registry_schemas s ON s.id = v.schema_id
             WHERE v.subject = $1 AND s.schema_text = $2",
            &[&subject, &request.schema],
        )
        .await?
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, 40403, "Schema not found".into()))?;
    Ok(Json(json!({
        "subject": subject, "version": row.get::<_, i32>(0),
        "id": row.get::<_, i32>(1), "schema": row.get::<_, String>(2),
    })))
}

async fn subjects(State(pool): State<Pool>) -> ApiResult {
    let client = pool.get().await?;
    let rows = client
        .query(
            "SELECT DISTINCT subject FROM registry_subject_versions ORDER BY subject",
            &[],
        )
        .await?;
    Ok(Json(json!(
        rows.iter()
            .map(|r| r.get::<_, String>(0))
            .collect::<Vec<_>>()
    )))
}

async fn versions(State(pool): State<Pool>, Path(subject): Path<String>) -> ApiResult {
    let client = pool.get().await?;
    let rows = client
        .query(
            "SELECT version FROM registry_subject_versions WHERE subject = $1 ORDER BY version",
            &[&subject],
        )
        .await?;
    if rows.is_empty() {
        return Err(subject_not_found());
    }
    Ok(Json(json!(
        rows.iter().map(|r| r.get::<_, i32>(0)).collect::<Vec<_>>()
    )))
}

fn subject_not_found() -> ApiError {
    ApiError(StatusCode::NOT_FOUND, 40401, "Subject not found".into())
}

async fn version(
    State(pool): State<Pool>,
    Path((subject, version)): Path<(String, String)>,
) -> ApiResult {
    let client = pool.get().await?;
    let wanted: Option<i32> = match version.as_str() {
        "latest" | "-1" => None,
        v => Some(v.parse().map_err(|_| {
            ApiError(
                StatusCode::UNPROCESSABLE_ENTITY,
                42202,
                "Invalid version".into(),
            )
        })?),
    };
    let row = client
        .query_opt(
            "SELECT v.version, s.id, s.schema_text, s.schema_type FROM registry_subject_versions v
             JOIN registry_schemas s ON s.id = v.schema_id
             WHERE v.subject = $1 AND ($2::INT IS NULL OR v.version = $2)
             ORDER BY v.version DESC LIMIT 1",
            &[&subject, &wanted],
        )
        .await?
        .ok_or_else(subject_not_found)?;
    Ok(Json(json!({
        "subject": subject, "version": row.get::<_, i32>(0), "id": row.get::<_, i32>(1),
        "schema": row.get::<_, String>(2), "schemaType": row.get::<_, String>(3),
    })))
}

async fn schema_by_id(State(pool): State<Pool>, Path(id): Path<i32>) -> ApiResult {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            "SELECT schema_text, schema_type FROM registry_schemas WHERE id = $1",
            &[&id],
        )
        .await?
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, 40403, "Schema not found".into()))?;
    let schema_type: String = row.get(1);
    let mut body = json!({"schema": row.get::<_, String>(0)});
    if schema_type != "AVRO" {
        body["schemaType"] = json!(schema_type);
    }
    Ok(Json(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_away_is_503_which_clients_retry() {
        let away = ApiError::from(deadpool_postgres::PoolError::Closed);
        assert_eq!(away.0, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            away.into_response().status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
        let defect = ApiError::from(anyhow::anyhow!("a bug"));
        assert_eq!(defect.0, StatusCode::INTERNAL_SERVER_ERROR);
    }
}
