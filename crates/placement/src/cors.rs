//! Cross-origin resource sharing, as oslo.middleware's CORS middleware
//! does it when `[cors] allowed_origin` is set.
//!
//! Every `OPTIONS` request is answered here with 200 (a preflight); the
//! CORS headers are added only when the origin is allowed and the
//! requested method and headers are permitted. Other requests go through
//! and get `Access-Control-Allow-Origin` when their origin is allowed.

use axum::body::Body;
use axum::middleware::Next;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, Response, StatusCode};

/// The headers a browser may always send (oslo.middleware's list).
const SIMPLE_HEADERS: [&str; 6] = [
    "cache-control",
    "content-language",
    "content-type",
    "expires",
    "last-modified",
    "pragma",
];

/// The `[cors]` settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorsConfig {
    /// `allowed_origin`: the origins allowed (`*` for any).
    pub allowed_origins: Vec<String>,
    /// `allow_credentials` (default true).
    pub allow_credentials: bool,
    /// `expose_headers`.
    pub expose_headers: Vec<String>,
    /// `max_age` in seconds (default 3600; 0 leaves the header out).
    pub max_age: u64,
    /// `allow_methods` (default GET, PUT, POST, DELETE, PATCH).
    pub allow_methods: Vec<String>,
    /// `allow_headers`: the request headers a preflight may ask for.
    pub allow_headers: Vec<String>,
}

impl Default for CorsConfig {
    fn default() -> Self {
        CorsConfig {
            allowed_origins: Vec::new(),
            allow_credentials: true,
            expose_headers: Vec::new(),
            max_age: 3600,
            allow_methods: ["GET", "PUT", "POST", "DELETE", "PATCH"]
                .map(str::to_owned)
                .to_vec(),
            allow_headers: Vec::new(),
        }
    }
}

impl CorsConfig {
    fn allows_origin(&self, origin: &str) -> bool {
        self.allowed_origins.iter().any(|o| o == "*" || o == origin)
    }

    /// The preflight headers for `request`, or none when it is not
    /// permitted.
    fn preflight(&self, request: &HeaderMap) -> Option<Vec<(HeaderName, String)>> {
        let origin = request.get(header::ORIGIN)?.to_str().ok()?;
        if !self.allows_origin(origin) {
            return None;
        }
        let method = request
            .get(header::ACCESS_CONTROL_REQUEST_METHOD)?
            .to_str()
            .ok()?;
        if !self.allow_methods.iter().any(|m| m == method) {
            return None;
        }
        let mut asked = Vec::new();
        for value in request.get_all(header::ACCESS_CONTROL_REQUEST_HEADERS) {
            for name in value.to_str().ok()?.split(',') {
                let name = name.trim();
                if !name.is_empty() {
                    asked.push(name.to_owned());
                }
            }
        }
        let permitted = |name: &str| {
            SIMPLE_HEADERS.iter().any(|h| h.eq_ignore_ascii_case(name))
                || self
                    .allow_headers
                    .iter()
                    .any(|h| h.eq_ignore_ascii_case(name))
        };
        if !asked.iter().all(|h| permitted(h)) {
            return None;
        }
        let mut headers = self.origin_headers(origin);
        if self.max_age > 0 {
            headers.push((header::ACCESS_CONTROL_MAX_AGE, self.max_age.to_string()));
        }
        headers.push((header::ACCESS_CONTROL_ALLOW_METHODS, method.to_owned()));
        if !asked.is_empty() {
            headers.push((header::ACCESS_CONTROL_ALLOW_HEADERS, asked.join(",")));
        }
        Some(headers)
    }

    /// The headers of an actual (not preflight) request, or none when its
    /// origin is not allowed.
    fn actual(&self, request: &HeaderMap) -> Option<Vec<(HeaderName, String)>> {
        let origin = request.get(header::ORIGIN)?.to_str().ok()?;
        if !self.allows_origin(origin) {
            return None;
        }
        let mut headers = self.origin_headers(origin);
        if !self.expose_headers.is_empty() {
            headers.push((
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                self.expose_headers.join(","),
            ));
        }
        Some(headers)
    }

    fn origin_headers(&self, origin: &str) -> Vec<(HeaderName, String)> {
        let mut headers = vec![
            (header::VARY, "Origin".to_owned()),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.to_owned()),
        ];
        if self.allow_credentials {
            headers.push((header::ACCESS_CONTROL_ALLOW_CREDENTIALS, "true".to_owned()));
        }
        headers
    }
}

/// Sets `headers` on the response; `Vary` is added to what the response
/// already varies on (the API's `openstack-api-version`), as upstream
/// does, rather than replacing it.
fn apply(response: &mut Response<Body>, headers: Vec<(HeaderName, String)>) {
    let answer = response.headers_mut();
    for (name, mut value) in headers {
        if name == header::VARY {
            if let Some(existing) = answer.get(header::VARY).and_then(|v| v.to_str().ok()) {
                value = format!("{existing},{value}");
            }
        }
        if let Ok(value) = HeaderValue::from_str(&value) {
            answer.insert(name, value);
        }
    }
}

/// The middleware: answers `OPTIONS` itself, decorates other answers.
pub(crate) async fn cors(config: &CorsConfig, req: Request<Body>, next: Next) -> Response<Body> {
    if req.method() == Method::OPTIONS {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::OK;
        if let Some(headers) = config.preflight(req.headers()) {
            apply(&mut response, headers);
        }
        return response;
    }
    let headers = config.actual(req.headers());
    let mut response = next.run(req).await;
    if let Some(headers) = headers {
        apply(&mut response, headers);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> CorsConfig {
        CorsConfig {
            allowed_origins: vec!["http://valid.example.com".to_owned()],
            allow_headers: vec!["openstack-api-version".to_owned()],
            ..CorsConfig::default()
        }
    }

    fn request(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_static(v));
        }
        map
    }

    #[test]
    fn preflight_of_an_allowed_origin() {
        let h = config()
            .preflight(&request(&[
                ("origin", "http://valid.example.com"),
                ("access-control-request-method", "GET"),
                ("access-control-request-headers", "OpenStack-API-Version"),
            ]))
            .unwrap();
        assert!(h.contains(&(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            "http://valid.example.com".to_owned()
        )));
        assert!(h.contains(&(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            "OpenStack-API-Version".to_owned()
        )));
    }

    #[test]
    fn preflight_refused() {
        let c = config();
        for req in [
            request(&[
                ("origin", "http://invalid.example.com"),
                ("access-control-request-method", "GET"),
            ]),
            request(&[
                ("origin", "http://valid.example.com"),
                ("access-control-request-method", "HEAD"),
            ]),
            request(&[
                ("origin", "http://valid.example.com"),
                ("access-control-request-method", "GET"),
                ("access-control-request-headers", "x-other"),
            ]),
            request(&[("origin", "http://valid.example.com")]),
        ] {
            assert_eq!(c.preflight(&req), None);
        }
    }

    #[test]
    fn actual_request() {
        let c = config();
        assert!(
            c.actual(&request(&[("origin", "http://valid.example.com")]))
                .is_some()
        );
        assert!(
            c.actual(&request(&[("origin", "http://other.example.com")]))
                .is_none()
        );
        assert!(c.actual(&request(&[])).is_none());
    }
}
