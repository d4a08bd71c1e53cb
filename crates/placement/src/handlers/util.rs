//! What many handlers share: content negotiation, JSON bodies, and the
//! caching headers of 1.15.

use std::time::SystemTime;

use axum::Json;
use axum::extract::FromRequestParts;
use axum::response::{IntoResponse, Response};
use http::header::{ACCEPT, CACHE_CONTROL, CONTENT_TYPE, LAST_MODIFIED};
use http::request::Parts;
use http::{HeaderMap, HeaderValue, StatusCode};
use jsonschema_python_messages::{FormatChecker, PythonSchema};
use microversion::{Version, VersionSpan};
use microversion_server::BodySchemas;
use microversion_server::schema::BodySchemasBuilder;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::history;

/// The path parameters of a route, as axum's `Path` reads them, refused
/// with Placement's errors body: a parameter that is not UTF-8 once
/// percent-decoded is a 400 that names it (axum answers it in plain text).
#[derive(Debug)]
pub(crate) struct Path<T>(pub(crate) T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for Path<T> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(Path(value)),
            Err(rejection) => Err(Error::new(rejection.status(), rejection.body_text())),
        }
    }
}

/// From this version GET responses carry `Last-Modified` and
/// `Cache-Control: no-cache`.
pub(crate) const CACHE_HEADERS: VersionSpan = history::CACHE_HEADERS.since();

/// 406 unless `Accept` (when given) allows JSON.
pub(crate) fn check_accept(headers: &HeaderMap) -> Result<()> {
    let Some(accept) = headers.get(ACCEPT).and_then(|v| v.to_str().ok()) else {
        return Ok(());
    };
    let acceptable = accept.split(',').any(|range| {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let q_zero = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        !q_zero
            && matches!(
                media.as_str(),
                "application/json" | "application/*" | "*/*" | ""
            )
    });
    if acceptable {
        Ok(())
    } else {
        Err(Error::new(
            StatusCode::NOT_ACCEPTABLE,
            "Only application/json is provided",
        ))
    }
}

/// 415 unless the body is declared JSON.
pub(crate) fn require_json(headers: &HeaderMap) -> Result<()> {
    let content_type = headers
        .get(CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let media = content_type
        .as_deref()
        .and_then(|ct| ct.split(';').next())
        .map(str::trim);
    match media {
        Some(m) if m.eq_ignore_ascii_case("application/json") => Ok(()),
        _ => Err(Error::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "The media type {} is not supported, use application/json",
                media.filter(|m| !m.is_empty()).unwrap_or("None")
            ),
        )),
    }
}

/// Starts the body schemas of an operation as upstream validates bodies
/// (`util.extract_json`): Python's `jsonschema` and `json` messages, and
/// the `uuid` format as oslo.utils' `is_uuid_like` reads it. Write each
/// schema's keywords in upstream's order: Python applies them in that
/// order, which decides the error reported.
pub(crate) fn body_schemas<T: Send + Sync + 'static>(name: &str) -> BodySchemasBuilder<T> {
    BodySchemas::builder(name)
        .python_messages()
        .format_checker(body_formats())
}

/// Upstream's format checker for bodies: `jsonschema.FormatChecker()` with
/// `uuid` replaced by `is_uuid_like`.
pub(crate) fn body_formats() -> FormatChecker {
    FormatChecker::default().with("uuid", |v| v.as_str().is_some_and(is_uuid_like))
}

/// oslo.utils `uuidutils.is_uuid_like`, with the query-string parsers.
pub(crate) use crate::query::is_uuid_like;

/// Validates query parameters (upstream's `util.validate_query_params`:
/// the parameters as a JSON object of strings, a schema compiled with
/// [`PythonSchema::new`], which checks formats as
/// `jsonschema.FormatChecker()` does).
pub(crate) fn validate_query(schema: &PythonSchema, params: &Value) -> Result<()> {
    schema
        .validate(params)
        .map_err(|e| Error::bad_request(format!("Invalid query string parameters: {e}")))
}

/// Checks the content type and parses `body` with the schema for
/// `version`.
pub(crate) fn json_body<T: Send + Sync + 'static>(
    schemas: &BodySchemas<T>,
    version: Version,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<T> {
    require_json(headers)?;
    Ok(schemas.parse(version, body)?)
}

/// A JSON response; from 1.15 with `Cache-Control: no-cache` and
/// `Last-Modified` (now, when nothing better is known).
pub(crate) fn json_response(
    version: Version,
    status: StatusCode,
    body: &Value,
    last_modified: Option<SystemTime>,
) -> Response {
    dated_now(version, (status, Json(body)).into_response(), last_modified)
}

/// [`json_response`] for a body already serialized.
pub(crate) fn json_bytes_response(
    version: Version,
    status: StatusCode,
    body: bytes::Bytes,
    last_modified: Option<SystemTime>,
) -> Response {
    let response = (
        status,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body,
    )
        .into_response();
    dated_now(version, response, last_modified)
}

/// From 1.15, `Cache-Control: no-cache` and `Last-Modified` (now, when
/// nothing better is known).
fn dated_now(
    version: Version,
    mut response: Response,
    last_modified: Option<SystemTime>,
) -> Response {
    if CACHE_HEADERS.contains(version) {
        let headers = response.headers_mut();
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        let when = last_modified.unwrap_or_else(SystemTime::now);
        if let Ok(value) = HeaderValue::try_from(httpdate::fmt_http_date(when)) {
            headers.insert(LAST_MODIFIED, value);
        }
    }
    response
}

/// From 1.15, adds `Cache-Control: no-cache` and, when known,
/// `Last-Modified` to `response` (upstream omits the header when it has
/// no time to tell).
pub(crate) fn cache_headers(
    version: Version,
    mut response: Response,
    last_modified: Option<SystemTime>,
) -> Response {
    if CACHE_HEADERS.contains(version) {
        let headers = response.headers_mut();
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        if let Some(when) = last_modified {
            if let Ok(value) = HeaderValue::try_from(httpdate::fmt_http_date(when)) {
                headers.insert(LAST_MODIFIED, value);
            }
        }
    }
    response
}

/// A JSON response with the caching headers of 1.15, where
/// `last_modified` is exactly what `Last-Modified` tells (`None`: no such
/// header).
pub(crate) fn json_response_dated<T: serde::Serialize + ?Sized>(
    version: Version,
    status: StatusCode,
    body: &T,
    last_modified: Option<SystemTime>,
) -> Response {
    cache_headers(version, (status, Json(body)).into_response(), last_modified)
}

/// Whether `serde_json` escapes anything in `s` (a quote, a backslash or
/// a control character; it writes everything else as it is). Answers of
/// many strings that need none are written without its escaping pass.
fn needs_escape(s: &[u8]) -> bool {
    // Without an early exit, the compiler checks many bytes at once.
    s.iter().fold(false, |any, &b| {
        any | (b < 0x20) | (b == b'"') | (b == b'\\')
    })
}

/// Appends `s` as a JSON string when it [`needs_escape`] not; `None`
/// (after writing part of it) when it does.
pub(crate) fn push_plain_str(out: &mut Vec<u8>, s: &str) -> Option<()> {
    // Uuids are most of an answer's strings: at a length known when
    // compiling, the check and the copy are a few wide moves.
    if let Ok(uuid) = <&[u8; UUID_LEN]>::try_from(s.as_bytes()) {
        if needs_escape(uuid) {
            return None;
        }
        let mut quoted = [b'"'; UUID_LEN + 2];
        quoted[1..=UUID_LEN].copy_from_slice(uuid);
        out.extend_from_slice(&quoted);
        return Some(());
    }
    if needs_escape(s.as_bytes()) {
        return None;
    }
    out.push(b'"');
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
    Some(())
}

/// The length of a uuid with its dashes.
const UUID_LEN: usize = 36;

/// Appends `n` as `serde_json` writes it.
pub(crate) fn push_int(out: &mut Vec<u8>, n: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// The later of two optional times.
pub(crate) fn later(a: Option<SystemTime>, b: Option<SystemTime>) -> Option<SystemTime> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: &'static str, value: &'static str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, HeaderValue::from_static(value));
        h
    }

    /// The body schemas' `uuid` format is `is_uuid_like` (tested with
    /// the query parser, where it lives).
    #[test]
    fn the_uuid_format_is_oslo_s() {
        assert!(body_formats().conforms(
            "uuid",
            &serde_json::json!("0123456789abcdef0123456789abcdef")
        ));
        assert!(!body_formats().conforms("uuid", &serde_json::json!(1)));
        assert!(!body_formats().conforms("uuid", &serde_json::json!("0123-not-a-uuid")));
    }

    /// Written as serde_json writes it when it would escape nothing, and
    /// refused otherwise: uuid-long strings (the path of their own) too.
    #[test]
    fn plain_strings_as_serde_json_writes_them() {
        let uuid = "01234567-89ab-cdef-0123-456789abcdef";
        let mut cases: Vec<String> = vec![
            String::new(),
            "VCPU".into(),
            "CUSTOM_PHYSNET_PHYS1".into(),
            uuid.into(),
            format!("{uuid}0"),
            uuid[1..].into(),
            "é\u{2028}".into(),
        ];
        for bad in ['"', '\\', '\n', '\u{1f}', '\0'] {
            for at in [0, 17, 35] {
                let mut s: Vec<char> = uuid.chars().collect();
                s[at] = bad;
                cases.push(s.into_iter().collect());
            }
            cases.push(format!("A{bad}"));
        }
        for s in &cases {
            let serde = serde_json::to_vec(s).unwrap();
            let mut out = b"[".to_vec();
            match push_plain_str(&mut out, s) {
                Some(()) => assert_eq!(out[1..], serde[..], "{s:?}"),
                None => assert!(serde.contains(&b'\\'), "{s:?} refused"),
            }
        }
    }

    #[test]
    fn query_errors_read_as_upstream() {
        let schema = PythonSchema::new(&serde_json::json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "additionalProperties": false
        }))
        .unwrap();
        assert!(validate_query(&schema, &serde_json::json!({"name": "x"})).is_ok());
        let Err(Error::Api(e)) = validate_query(&schema, &serde_json::json!({"limit": "1"})) else {
            panic!("expected an API error");
        };
        assert_eq!(e.status(), StatusCode::BAD_REQUEST);
        assert!(
            e.detail().starts_with(
                "Invalid query string parameters: Additional properties are not allowed ('limit' was unexpected)"
            ),
            "{}",
            e.detail()
        );
    }

    #[test]
    fn accept_and_content_type() {
        assert!(check_accept(&HeaderMap::new()).is_ok());
        assert!(check_accept(&headers("accept", "application/json")).is_ok());
        assert!(check_accept(&headers("accept", "text/html, */*;q=0.1")).is_ok());
        assert!(check_accept(&headers("accept", "text/plain")).is_err());
        assert!(require_json(&headers("content-type", "application/json; charset=utf-8")).is_ok());
        let Err(Error::Api(e)) = require_json(&headers("content-type", "text/plain")) else {
            panic!("expected an API error");
        };
        assert_eq!(e.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert_eq!(
            e.detail(),
            "The media type text/plain is not supported, use application/json"
        );
        let Err(Error::Api(e)) = require_json(&HeaderMap::new()) else {
            panic!("expected an API error");
        };
        assert!(e.detail().contains("media type None"));
    }
}
