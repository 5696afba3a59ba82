//! Request bodies: at most [`MAX_BODY_BYTES`], JSON into types that refuse unknown fields, and
//! every failure a problem naming the field by its JSON pointer, never echoing the value.
//! The body's problem is handed to the handler, which reports it only after admitting the
//! request (rate limit and token first).

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;

use super::problem::{FieldError, Problem};

/// A rule document is at most 64 KiB (engine `MAX_RULE_BYTES`); no body needs more.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// A JSON body, or why it is refused.
pub struct JsonBody<T>(pub Result<T, Problem>);

/// A text body (a YAML rule), or why it is refused.
pub struct TextBody(pub Result<String, Problem>);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = std::convert::Infallible;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = match Bytes::from_request(request, state).await {
            Ok(bytes) => bytes,
            Err(_) => return Ok(JsonBody(Err(Problem::too_large()))),
        };
        Ok(JsonBody(parse(&bytes)))
    }
}

impl<S: Send + Sync> FromRequest<S> for TextBody {
    type Rejection = std::convert::Infallible;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let text = match Bytes::from_request(request, state).await {
            Ok(bytes) => String::from_utf8(bytes.to_vec())
                .map_err(|_| field_error("", "the body is not UTF-8 text")),
            Err(_) => Err(Problem::too_large()),
        };
        Ok(TextBody(text))
    }
}

/// The body as one JSON value of type `T`, and nothing after it but whitespace.
fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Problem> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = deserialize(&mut deserializer)?;
    deserializer
        .end()
        .map_err(|_| field_error("", "data after the JSON value"))?;
    Ok(value)
}

fn deserialize<T: DeserializeOwned>(
    deserializer: &mut serde_json::Deserializer<serde_json::de::SliceRead<'_>>,
) -> Result<T, Problem> {
    serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let pointer = pointer_of(error.path());
        let inner = error.into_inner();
        // serde's messages quote the offending value; only its kind is told.
        let detail = if inner.to_string().starts_with("unknown field") {
            "unknown field"
        } else if inner.is_syntax() || inner.is_eof() {
            "not valid JSON"
        } else if inner.to_string().starts_with("missing field") {
            "missing field"
        } else {
            "not a valid value for this field"
        };
        // The path ends at an unknown field, but before a missing one.
        let pointer = match (detail, inner.to_string().split('`').nth(1)) {
            ("missing field", Some(name)) => format!("{pointer}/{name}"),
            _ => pointer,
        };
        Problem::invalid_body(vec![field(&pointer, detail)])
    })
}

fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
            // A key is named only when it is a plain name: the pointer never carries text a
            // client wrote beyond that (it ends at the key's parent instead).
            Segment::Map { key } if is_plain(key) => pointer.push_str(&format!("/{key}")),
            Segment::Map { .. } => break,
            Segment::Enum { variant } => pointer.push_str(&format!("/{variant}")),
            Segment::Unknown => {}
        }
    }
    pointer
}

fn is_plain(key: &str) -> bool {
    (1..=64).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

pub fn field(pointer: &str, detail: &str) -> FieldError {
    FieldError {
        pointer: pointer.to_string(),
        detail: detail.to_string(),
    }
}

pub fn field_error(pointer: &str, detail: &str) -> Problem {
    Problem::invalid_body(vec![field(pointer, detail)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Body {
        sample: u32,
        inner: Option<Inner>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        depth: u8,
    }

    fn refused(json: &str) -> FieldError {
        let problem = parse::<Body>(json.as_bytes()).unwrap_err();
        assert_eq!(problem.status, 422);
        problem.errors[0].clone()
    }

    #[test]
    fn data_after_the_json_value_and_odd_keys_are_refused_without_echo() {
        let trailing = refused(r#"{"sample": 1} {"sample": 2}"#);
        assert_eq!(
            (trailing.pointer.as_str(), trailing.detail.as_str()),
            ("", "data after the JSON value")
        );
        assert!(parse::<Body>(b"{\"sample\": 1}  \n").is_ok());
        let odd = refused(r#"{"sample": 1, "<script>alert(1)</script>": 2}"#);
        assert_eq!(
            (odd.pointer.as_str(), odd.detail.as_str()),
            ("", "unknown field")
        );
        let long = format!(r#"{{"sample": 1, "{}": 2}}"#, "k".repeat(65));
        assert_eq!(refused(&long).pointer, "");
    }

    #[test]
    fn refusals_name_the_field_and_never_echo_the_value() {
        let unknown = refused(r#"{"sample": 1, "secret_value_xyz": 2}"#);
        assert_eq!(unknown.pointer, "/secret_value_xyz");
        assert_eq!(unknown.detail, "unknown field");
        let typed = refused(r#"{"sample": "Ramesh Kumar"}"#);
        assert_eq!(typed.pointer, "/sample");
        assert!(!typed.detail.contains("Ramesh"), "{typed:?}");
        let nested = refused(r#"{"sample": 1, "inner": {"depth": 999}}"#);
        assert_eq!(nested.pointer, "/inner/depth");
        let missing = refused(r#"{}"#);
        assert_eq!(
            (missing.pointer.as_str(), missing.detail.as_str()),
            ("/sample", "missing field")
        );
        assert_eq!(refused("{").detail, "not valid JSON");
    }
}
