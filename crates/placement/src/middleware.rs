//! The middleware between the HTTP server and the handlers that is the
//! service's own: the request body read whole and bounded, the query
//! string bounded ([`crate::limits`]), `Content-Type` required with a
//! body, and the database gate. The application's router puts them in
//! order.

use std::sync::Arc;

use axum::middleware::Next;

use crate::error::Error;
use crate::limits::{MAX_QUERY_PARAMS, MAX_QUERY_STRING_BYTES};

/// While the database server is known to be unreachable, a request that
/// would use it is answered 503 at once, and one waiting for it when it
/// becomes so is answered 503 then, instead of after the pool's acquire
/// timeout. A request that meets the database unreachable, or takes
/// longer than [`PROBE_SLOW_REQUEST`], has it probed (see
/// [`crate::db::Health`]): after a crash of the server, the first request
/// may find only a pool retrying refused connections. `GET /` (the
/// versions document) does not use the database and is served as usual.
pub(crate) async fn database_gate(
    health: Arc<crate::db::Health>,
    req: axum::extract::Request,
    next: Next,
) -> axum::response::Response {
    use crate::error::{DatabaseUnreachable, unreachable_response};
    if req.uri().path() == "/" {
        return next.run(req).await;
    }
    if health.is_down() {
        return unreachable_response();
    }
    let work = next.run(req);
    let went_down = health.went_down();
    let slow = tokio::time::sleep(PROBE_SLOW_REQUEST);
    tokio::pin!(work, went_down, slow);
    let mut probed = false;
    let response = loop {
        tokio::select! {
            response = &mut work => break response,
            // The request's work is dropped: its transaction, if any, is
            // rolled back by the server when the connection goes.
            () = &mut went_down => break unreachable_response(),
            () = &mut slow, if !probed => {
                probed = true;
                health.suspect();
            }
        }
    };
    if response.extensions().get::<DatabaseUnreachable>().is_some() {
        health.suspect();
    }
    response
}

/// How long a request runs before the database is probed (a probe is one
/// connection and `SELECT 1`; a slow request on a reachable database
/// goes on as before).
const PROBE_SLOW_REQUEST: std::time::Duration = std::time::Duration::from_secs(1);

/// A request with a body must say what the body is, as upstream checks
/// before any handler: 400 when `Content-Length` is above zero and
/// `Content-Type` is missing or empty.
pub(crate) async fn require_content_type(
    req: axum::extract::Request,
    next: Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
    let has_body = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|n| n > 0);
    let has_type = req
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| !v.as_bytes().iter().all(u8::is_ascii_whitespace));
    if has_body && !has_type {
        return Error::bad_request("content-type header required when content-length > 0")
            .into_response();
    }
    next.run(req).await
}

/// Marks a request whose body was over the limit (and not read whole).
#[derive(Clone, Copy, Debug)]
struct BodyTooLarge(usize);

/// Reads the whole request body, up to `limit` bytes, before anything else
/// looks at the request: a response sent while the body is still unread
/// (a version or auth refusal) makes the HTTP server close the connection
/// without a `Connection: close`, and a keep-alive client's next request
/// on it fails. A body larger than `limit` (by `Content-Length`, or as
/// soon as the bytes of a chunked body pass it) is not read further: the
/// request goes on with an empty body and a [`BodyTooLarge`] mark, which
/// [`refuse_large_body`] answers with 413 inside the microversion layer
/// (so with an errors body), and the response says `Connection: close`.
pub(crate) async fn read_body(
    limit: usize,
    req: axum::extract::Request,
    next: Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    use http::header::CONTENT_LENGTH;
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let (mut parts, body) = req.into_parts();
    let body = if declared.is_some_and(|n| n > limit as u64) {
        None
    } else {
        match axum::body::to_bytes(body, limit).await {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                let source = std::error::Error::source(&e);
                if source
                    .is_some_and(<dyn std::error::Error>::is::<http_body_util::LengthLimitError>)
                {
                    None
                } else {
                    // The client broke the body off.
                    return Error::bad_request(format!("The request body could not be read: {e}"))
                        .into_response();
                }
            }
        }
    };
    let Some(bytes) = body else {
        parts.extensions.insert(BodyTooLarge(limit));
        let req = axum::extract::Request::from_parts(parts, axum::body::Body::empty());
        let mut response = next.run(req).await;
        response.headers_mut().insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
        return response;
    };
    next.run(axum::extract::Request::from_parts(
        parts,
        axum::body::Body::from(bytes),
    ))
    .await
}

/// 413 with an errors body for a request [`read_body`] marked.
pub(crate) async fn refuse_large_body(
    req: axum::extract::Request,
    next: Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if let Some(BodyTooLarge(limit)) = req.extensions().get::<BodyTooLarge>().copied() {
        return Error::new(
            http::StatusCode::PAYLOAD_TOO_LARGE,
            format!("Request body is larger than the limit of {limit} bytes."),
        )
        .into_response();
    }
    next.run(req).await
}

/// Refuses a query string past [`MAX_QUERY_STRING_BYTES`] (414) or with
/// more than [`MAX_QUERY_PARAMS`] parameters (400), with an errors body,
/// before a handler parses it.
pub(crate) async fn refuse_large_query(
    req: axum::extract::Request,
    next: Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if let Err(e) = check_query(req.uri().query()) {
        return e.into_response();
    }
    next.run(req).await
}

/// The bounds of [`refuse_large_query`] on a raw query string.
fn check_query(query: Option<&str>) -> Result<(), Error> {
    let Some(query) = query else {
        return Ok(());
    };
    if query.len() > MAX_QUERY_STRING_BYTES {
        return Err(Error::new(
            http::StatusCode::URI_TOO_LONG,
            format!(
                "The query string is {} bytes long; at most {MAX_QUERY_STRING_BYTES} bytes are accepted.",
                query.len()
            ),
        ));
    }
    // As `QueryParams::parse` splits it: blank parts are no parameter.
    let params = query.split('&').filter(|part| !part.is_empty()).count();
    if params > MAX_QUERY_PARAMS {
        return Err(crate::query::invalid(&format!(
            "The query string has {params} parameters; at most {MAX_QUERY_PARAMS} are accepted."
        ))
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(query: &str) -> Option<(http::StatusCode, String)> {
        match check_query(Some(query)) {
            Ok(()) => None,
            Err(Error::Api(e)) => Some((e.status(), e.detail().to_owned())),
            Err(other) => panic!("unexpected error {other}"),
        }
    }

    #[test]
    fn query_strings_up_to_the_bounds_pass() {
        assert!(check_query(None).is_ok());
        assert_eq!(refusal(""), None);
        assert_eq!(refusal(&"a".repeat(MAX_QUERY_STRING_BYTES)), None);
        let params = vec!["a=1"; MAX_QUERY_PARAMS].join("&");
        assert_eq!(refusal(&params), None);
        // Blank parts are not parameters.
        let blanks = format!("{params}&&&");
        assert_eq!(refusal(&blanks), None);
    }

    #[test]
    fn query_strings_past_the_bounds_are_refused() {
        let long = "a".repeat(MAX_QUERY_STRING_BYTES + 1);
        assert_eq!(
            refusal(&long),
            Some((
                http::StatusCode::URI_TOO_LONG,
                "The query string is 32769 bytes long; at most 32768 bytes are accepted."
                    .to_owned()
            ))
        );
        let many = vec!["a"; MAX_QUERY_PARAMS + 1].join("&");
        assert_eq!(
            refusal(&many),
            Some((
                http::StatusCode::BAD_REQUEST,
                "Invalid query string parameters: The query string has 1001 parameters; \
                 at most 1000 are accepted."
                    .to_owned()
            ))
        );
        // Length is checked first: a long string of many parameters is a 414.
        let both = vec!["a"; MAX_QUERY_STRING_BYTES].join("&");
        assert_eq!(
            refusal(&both).map(|(status, _)| status),
            Some(http::StatusCode::URI_TOO_LONG)
        );
    }
}
