//! Upstream Placement 16.0.0's functional test of microversions
//! (`placement/tests/functional/gabbits/microversion.yaml`), its
//! expectations restated against the `placement` profile, plus how
//! Placement picks the error representation from `Accept`.
//!
//! Like the gabbi file, every request sends `Accept: application/json`
//! unless it says otherwise. Not restated: "root has microversion info",
//! which checks the versions document (the discovery module's job, not
//! the layer's).

use http::Method;

use crate::support::{PLACEMENT, Resp, send};

const JSON: (&str, &str) = ("Accept", "application/json");

async fn start() -> String {
    PLACEMENT.start().await
}

fn assert_vary_names_version(r: &Resp) {
    assert!(
        r.vary_names().iter().any(|n| n == "openstack-api-version"),
        "{:?}",
        r.values("vary")
    );
}

#[tokio::test]
async fn root_has_microversion_header() {
    let base = start().await;
    let r = send(&base, Method::GET, "/", &[JSON]).await;
    assert_eq!(r.status, 200);
    assert_vary_names_version(&r);
    assert_eq!(r.header("openstack-api-version"), Some("placement 1.0"));
}

#[tokio::test]
async fn unavailable_microversion_raises_406() {
    let base = start().await;
    let r = send(
        &base,
        Method::GET,
        "/",
        &[JSON, ("OpenStack-API-Version", "placement 0.5")],
    )
    .await;
    assert_eq!(r.status, 406);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert!(
        r.body.contains("Unacceptable version header: 0.5"),
        "{}",
        r.body
    );
    assert_eq!(r.json()["errors"][0]["title"], "Not Acceptable");
}

#[tokio::test]
async fn latest_microversion_is_1_39() {
    let base = start().await;
    let r = send(
        &base,
        Method::GET,
        "/",
        &[JSON, ("OpenStack-API-Version", "placement latest")],
    )
    .await;
    assert_eq!(r.status, 200);
    assert_vary_names_version(&r);
    assert_eq!(r.header("openstack-api-version"), Some("placement 1.39"));
}

#[tokio::test]
async fn other_accept_header_bad_version() {
    let base = start().await;
    let r = send(
        &base,
        Method::GET,
        "/",
        &[
            ("Accept", "text/html"),
            ("OpenStack-API-Version", "placement 0.5"),
        ],
    )
    .await;
    assert_eq!(r.status, 406);
    assert!(
        r.header("content-type")
            .is_some_and(|c| c.starts_with("text/html")),
        "{:?}",
        r.header("content-type")
    );
    assert!(
        r.body.contains("Unacceptable version header: 0.5"),
        "{}",
        r.body
    );
    assert!(
        r.body.contains("<title>406 Not Acceptable</title>"),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn bad_format_strings_raise_400() {
    let base = start().await;
    for raw in ["pony.horse", "1.2.3"] {
        let value = format!("placement {raw}");
        let r = send(
            &base,
            Method::GET,
            "/",
            &[JSON, ("OpenStack-API-Version", &value)],
        )
        .await;
        assert_eq!(r.status, 400, "{raw}");
        let want = format!("invalid version string: {raw}");
        assert!(r.body.contains(&want), "{raw}: {}", r.body);
        assert_eq!(r.json()["errors"][0]["title"], "Bad Request", "{raw}");
    }
}

#[tokio::test]
async fn error_in_application_produces_microversion_headers() {
    // "we do not want xml": POST to a GET-only root.
    let base = start().await;
    let r = send(
        &base,
        Method::POST,
        "/",
        &[JSON, ("Content-Type", "application/xml")],
    )
    .await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("openstack-api-version"), Some("placement 1.0"));
    assert_vary_names_version(&r);
    assert_eq!(r.header("allow"), Some("GET"));
    assert_eq!(r.json()["errors"][0]["title"], "Method Not Allowed");
}

/// Sends a request without an `Accept` header (reqwest always adds one):
/// the status line, the `Content-Type` and the body.
async fn raw_get_without_accept(base: &str, path: &str) -> (String, String, String) {
    let addr = base.strip_prefix("http://").unwrap().to_owned();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    // Blocking std I/O on a blocking thread: tokio's io-util is not enabled.
    let response = tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response
    })
    .await
    .unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines.next().unwrap().to_owned();
    let content_type = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
        .map(|(_, value)| value.trim().to_owned())
        .unwrap_or_default();
    (status, content_type, body.to_owned())
}

/// Upstream Placement reads a missing `Accept`, and exactly `*/*`, as
/// `application/json`, so clients that send neither (curl, reqwest by
/// default) get JSON errors; otherwise webob picks HTML or JSON by
/// quality, and plain text when `Accept` allows neither.
#[tokio::test]
async fn error_representation_follows_accept_as_upstream() {
    let base = start().await;
    let (status, content_type, body) = raw_get_without_accept(&base, "/nowhere").await;
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    assert_eq!(content_type, "application/json", "{body}");
    assert!(body.starts_with("{\"errors\":"), "{body}");
    let cases = [
        (None, "application/json"),
        (Some("*/*"), "application/json"),
        (Some("application/json"), "application/json"),
        (Some("text/html"), "text/html; charset=UTF-8"),
        (Some("text/*"), "text/html; charset=UTF-8"),
        (Some("*/*;q=0.8"), "text/html; charset=UTF-8"),
        (
            Some("application/json, text/html;q=0.5"),
            "application/json",
        ),
        (
            Some("text/plain, application/json;q=0.5"),
            "application/json",
        ),
        (Some("text/plain"), "text/plain; charset=UTF-8"),
        (Some("image/png"), "text/plain; charset=UTF-8"),
        (Some("application/json;q=0"), "text/plain; charset=UTF-8"),
    ];
    for (accept, want) in cases {
        // reqwest sends `Accept: */*` unless told otherwise.
        let headers: Vec<(&str, &str)> = accept.map(|a| ("Accept", a)).into_iter().collect();
        let r = send(&base, Method::GET, "/nowhere", &headers).await;
        assert_eq!(r.status, 404, "{accept:?}");
        assert_eq!(r.header("content-type"), Some(want), "{accept:?}");
        assert!(
            r.body.contains("The resource could not be found."),
            "{accept:?}: {}",
            r.body
        );
    }
}
