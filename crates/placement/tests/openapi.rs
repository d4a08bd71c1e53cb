//! The OpenAPI documents: served at `/openapi.json` only when
//! `[openapi] enabled`, and printed by `placement-api openapi`; the
//! reference page at `/api-ref` only when `[openapi] reference_page` too.

mod support;

use reqwest::Method;
use support::Server;

#[tokio::test]
async fn documents_are_not_served_by_default() {
    let s = Server::start().await;
    let r = s.call(Method::GET, "/openapi.json", None, None).await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn documents_are_served_when_enabled() {
    let s = Server::start_with(|c| c.openapi = true).await;
    // No token needed, and no version: the whole range.
    let r = s
        .call_as(&[], Method::GET, "/openapi.json", None, None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["info"]["x-openstack"]["max-ver"], "1.39");
    assert_eq!(
        r.body["paths"]["/usages"]["get"]["x-openstack"]["min-ver"],
        "1.9"
    );
    let r = s
        .call_as(&[], Method::GET, "/openapi.json?version=1.10", None, None)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["info"]["version"], "1.10");
    assert!(r.body["paths"].get("/allocation_candidates").is_some());
    assert!(r.body["paths"].get("/reshaper").is_none());
    let r = s
        .call_as(&[], Method::GET, "/openapi.json?version=1.9", None, None)
        .await;
    assert!(r.body["paths"].get("/allocation_candidates").is_none());
    assert!(r.body["paths"].get("/usages").is_some());
    // The API itself is as before.
    let r = s.get("/resource_providers", "1.39").await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn bad_versions_get_the_header_s_refusal() {
    let s = Server::start_with(|c| c.openapi = true).await;
    let r = s
        .call_as(&[], Method::GET, "/openapi.json?version=9.99", None, None)
        .await;
    assert_eq!(r.status, 406);
    let header = s.get("/", "9.99").await;
    assert_eq!(header.status, 406);
    // The same words; the endpoint, outside upstream's API, does not wrap
    // them in webob's page text.
    assert_eq!(r.detail(), header.message());
    let r = s
        .call_as(&[], Method::GET, "/openapi.json?version=abc", None, None)
        .await;
    assert_eq!(r.status, 400);
    let header = s.get("/", "abc").await;
    assert_eq!(r.detail(), header.message());
}

#[test]
fn the_command_prints_documents_and_refuses_bad_versions() {
    let bin = env!("CARGO_BIN_EXE_placement-api");
    let run = |args: &[&str]| {
        std::process::Command::new(bin)
            .args(args)
            .output()
            .expect("placement-api runs")
    };
    let out = run(&["openapi", "--version", "1.20"]);
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["info"]["version"], "1.20");
    let out = run(&["openapi", "--yaml"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("openapi: 3.1.0\n"), "{text}");
    for (bad, message) in [
        (
            "9.99",
            "Invalid microversion: Unacceptable version header: 9.99 (this service serves 1.0 to 1.39)",
        ),
        ("abc", "Invalid microversion: invalid version string: abc;"),
    ] {
        let out = run(&["openapi", "--version", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(message), "{bad}: {err}");
        assert!(out.stdout.is_empty());
    }
}

#[tokio::test]
async fn the_reference_page_is_served_only_when_enabled() {
    let s = Server::start_with(|c| c.openapi = true).await;
    // Not a path of the service: the API's 404 (with a token; without
    // one, the API's 401).
    let r = s.call(Method::GET, "/api-ref", None, None).await;
    assert_eq!(r.status, 404, "not without [openapi] reference_page");

    let s = Server::start_with(|c| {
        c.openapi = true;
        c.reference_page = true;
    })
    .await;
    // No token needed, as for the documents.
    let r = s.call_as(&[], Method::GET, "/api-ref", None, None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.headers["content-type"], "text/html; charset=utf-8");
    assert!(r.headers.contains_key("content-security-policy"));
    // A picker of every version, opening at the highest, loading the
    // documents the service serves.
    for minor in 0..39 {
        let option = format!("<option value=\"1.{minor}\">1.{minor}</option>");
        assert!(r.text.contains(&option), "{option} missing: {}", r.text);
    }
    assert!(
        r.text
            .contains("<option value=\"1.39\" selected>1.39</option>")
    );
    assert!(
        r.text
            .contains("<option value=\"all\">1.0 - 1.39 (x-openstack)</option>")
    );
    assert!(r.text.contains(r#"data-document="openapi.json""#));
    assert!(r.text.contains("<title>Placement API reference</title>"));
    for file in [
        "swagger-ui-bundle.js",
        "swagger-ui.css",
        "reference.js",
        "reference.css",
    ] {
        let r = s
            .call_as(&[], Method::GET, &format!("/api-ref/{file}"), None, None)
            .await;
        assert_eq!(r.status, 200, "{file}");
    }
    // What the picker loads at 1.0 and at 1.39.
    let r = s
        .call_as(&[], Method::GET, "/openapi.json?version=1.0", None, None)
        .await;
    assert!(r.body["paths"].get("/allocation_candidates").is_none());
    let r = s
        .call_as(&[], Method::GET, "/openapi.json?version=1.39", None, None)
        .await;
    assert!(r.body["paths"].get("/allocation_candidates").is_some());
}
