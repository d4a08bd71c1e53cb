//! What many handlers share: content negotiation, JSON bodies, and the
//! caching headers of 1.15.

use std::time::SystemTime;

use axum::Json;
use axum::response::{IntoResponse, Response};
use http::header::{ACCEPT, CACHE_CONTROL, CONTENT_TYPE, HOST, LAST_MODIFIED};
use http::{HeaderMap, HeaderValue, StatusCode};
use microversion::Version;
use microversion_server::BodySchemas;
use serde_json::Value;

use crate::error::{Error, Result};

/// From this version GET responses carry `Last-Modified` and
/// `Cache-Control: no-cache`.
pub(crate) const CACHE_HEADERS: Version = Version::new(1, 15);

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
    let mut response = (status, Json(body)).into_response();
    if version >= CACHE_HEADERS {
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
    if version.matches(CACHE_HEADERS, None) {
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
pub(crate) fn json_response_dated(
    version: Version,
    status: StatusCode,
    body: &Value,
    last_modified: Option<SystemTime>,
) -> Response {
    cache_headers(version, (status, Json(body)).into_response(), last_modified)
}

/// The absolute URL of `path` on this service, as webob makes a relative
/// `Location` absolute: `http://` and the request's `Host`.
pub(crate) fn absolute_url(headers: &HeaderMap, path: &str) -> String {
    let host = headers
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| !h.is_empty())
        .unwrap_or("localhost");
    format!("http://{host}{path}")
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
