//! An `http::Request` sent over real HTTP, and its answer as an
//! `http::Response`: for helpers that speak `http` types (such as
//! `microversion_server::openapi::Sweep`) against a loopback server.

use axum::body::Body;
use http::{Request, Response};

/// Sends `request` (its path and query joined to `base`, such as
/// `http://127.0.0.1:PORT`) with `client`, and gives the answer back:
/// status, headers and body.
///
/// # Errors
///
/// Why the request could not be sent or its answer read.
pub async fn forward(
    client: &reqwest::Client,
    base: &str,
    request: Request<Body>,
) -> Result<Response<Body>, String> {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .map_err(|e| e.to_string())?;
    let target = parts
        .uri
        .path_and_query()
        .map_or("/", http::uri::PathAndQuery::as_str);
    let url = format!("{}{target}", base.trim_end_matches('/'));
    let answer = client
        .request(parts.method, url)
        .headers(parts.headers)
        .body(body)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        response = response.header(name, value);
    }
    let bytes = answer.bytes().await.map_err(|e| e.to_string())?;
    response.body(Body::from(bytes)).map_err(|e| e.to_string())
}
