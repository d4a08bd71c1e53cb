//! `[cors] allowed_origin`: oslo.middleware's CORS in front of the API
//! (upstream's cors.yaml).

mod support;

use placement::cors::CorsConfig;
use reqwest::Method;
use support::Server;

async fn server() -> Server {
    Server::start_with(|c| {
        c.cors = Some(CorsConfig {
            allowed_origins: vec!["http://valid.example.com".to_owned()],
            allow_headers: vec!["openstack-api-version".to_owned()],
            ..CorsConfig::default()
        });
    })
    .await
}

#[tokio::test]
async fn preflight_is_answered_whatever_the_origin() {
    let s = server().await;
    let r = s
        .call_as(
            &[
                ("x-auth-token", "user"),
                ("origin", "http://valid.example.com"),
                ("access-control-request-method", "GET"),
                ("access-control-request-headers", "openstack-api-version"),
            ],
            Method::OPTIONS,
            "/",
            None,
            None,
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("http://valid.example.com")
    );
    assert_eq!(
        r.header("access-control-allow-headers"),
        Some("openstack-api-version")
    );

    let r = s
        .call_as(
            &[
                ("origin", "http://invalid.example.com"),
                ("access-control-request-method", "GET"),
            ],
            Method::OPTIONS,
            "/resource_providers",
            None,
            None,
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("access-control-allow-origin"), None);
}

#[tokio::test]
async fn actual_requests_get_the_origin_when_allowed() {
    let s = server().await;
    let r = s
        .call_as(
            &[("origin", "http://valid.example.com")],
            Method::GET,
            "/",
            None,
            None,
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("http://valid.example.com")
    );
    let r = s
        .call_as(
            &[("origin", "http://invalid.example.com")],
            Method::GET,
            "/",
            None,
            None,
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("access-control-allow-origin"), None);
}

#[tokio::test]
async fn origin_is_added_to_the_versions_vary() {
    let s = server().await;
    let r = s
        .call_as(
            &[
                ("x-auth-token", "admin"),
                ("origin", "http://valid.example.com"),
            ],
            Method::GET,
            "/resource_providers",
            Some("1.20"),
            None,
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("vary"), Some("openstack-api-version,Origin"));
    // Without an allowed origin the API's own Vary is left as it is.
    let r = s
        .call_as(
            &[("x-auth-token", "admin")],
            Method::GET,
            "/resource_providers",
            Some("1.20"),
            None,
        )
        .await;
    assert_eq!(r.header("vary"), Some("openstack-api-version"));
}

#[tokio::test]
async fn without_cors_options_is_not_answered_here() {
    let s = Server::start().await;
    let r = s
        .call_as(
            &[
                ("x-auth-token", "admin"),
                ("origin", "http://valid.example.com"),
                ("access-control-request-method", "GET"),
            ],
            Method::OPTIONS,
            "/",
            None,
            None,
        )
        .await;
    assert_eq!(r.status, 405);
}
