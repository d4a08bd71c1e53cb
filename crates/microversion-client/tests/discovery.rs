//! Discovery over loopback: the four document shapes, the documents the
//! real services send, the parent on 404, link normalisation, and errors.

use axum::Json;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::get;
use microversion::{ServerVersions, VersionRange};
use microversion_client::{Client, MatchedBy};
use microversion_test_support::{RequestLog, dead_base, serve};
use serde_json::{Value, json};

fn client(endpoint: &str) -> Client {
    Client::builder()
        .endpoint(endpoint)
        .service_type("example")
        .supported_versions(VersionRange::from_static("1.0", "9.99"))
        .build()
        .unwrap()
}

/// Serves `document` at `path` (and answers 404 elsewhere).
async fn serving(path: &'static str, status: StatusCode, document: Value) -> (String, RequestLog) {
    let log = RequestLog::default();
    let app = Router::new().route(
        path,
        get(move || async move { (status, Json(document.clone())) }),
    );
    let base = serve(log.recording(app)).await;
    (base, log)
}

fn entry() -> Value {
    json!({"id": "v1.0", "status": "CURRENT", "min_version": "1.2", "max_version": "1.38",
           "links": [{"rel": "self", "href": "/"}]})
}

#[tokio::test]
async fn the_four_shapes() {
    let shapes = [
        json!({"versions": {"values": [entry()]}}),
        json!({"versions": [entry()]}),
        json!({"version": entry()}),
        entry(),
    ];
    for shape in shapes {
        let (base, _) = serving("/", StatusCode::OK, shape.clone()).await;
        let c = client(&base);
        assert_eq!(
            c.server_versions().await.unwrap(),
            ServerVersions::Microversions(VersionRange::from_static("1.2", "1.38")),
            "{shape}"
        );
    }
}

#[tokio::test]
async fn keystone_answers_its_list_with_300() {
    let doc = json!({"versions": {"values": [
        {"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
         "links": [{"rel": "self", "href": "http://keystone.example/v3/"}]}
    ]}});
    let (base, _) = serving("/", StatusCode::MULTIPLE_CHOICES, doc).await;
    let c = client(&base);
    assert_eq!(
        c.server_versions().await.unwrap(),
        ServerVersions::Unversioned
    );
    let d = c.discover().await.unwrap();
    assert_eq!(d.major(), Some(3));
    // Neither the link nor CURRENT: the newest (here, the only one).
    assert_eq!(d.matched_by(), MatchedBy::Newest);
}

#[tokio::test]
async fn the_documents_of_the_real_services() {
    // Placement 16.0.0 `GET /`.
    let placement = json!({"versions": [{"id": "v1.0", "max_version": "1.39", "min_version": "1.0",
        "status": "CURRENT", "links": [{"rel": "self", "href": ""}]}]});
    // Nova 34.0.0 `GET /v2.1/`.
    let nova = json!({"version": {"id": "v2.1", "status": "CURRENT", "version": "2.104",
        "min_version": "2.1", "updated": "2013-07-23T11:33:21Z",
        "links": [{"rel": "self", "href": "http://127.0.0.1:8774/v2.1/"},
                  {"rel": "describedby", "type": "text/html", "href": "http://docs.openstack.org/"}],
        "media-types": [{"base": "application/json",
                         "type": "application/vnd.openstack.compute+json;version=2.1"}]}});
    // Ironic 39.0.0 `GET /v1/`.
    let ironic = json!({"id": "v1", "links": [{"href": "http://127.0.0.1:6385/v1/", "rel": "self"},
        {"href": "https://docs.openstack.org//ironic/latest/contributor//webapi.html",
         "rel": "describedby", "type": "text/html"}],
        "media_types": {"base": "application/json", "type": "application/vnd.openstack.ironic.v1+json"},
        "chassis": [{"href": "http://127.0.0.1:6385/v1/chassis/", "rel": "self"}],
        "version": {"id": "v1", "links": [{"href": "http://127.0.0.1:6385/v1/", "rel": "self"}],
                    "status": "CURRENT", "min_version": "1.1", "version": "1.115"}});
    for (path, endpoint_path, doc, range, by) in [
        ("/", "/", placement, ("1.0", "1.39"), MatchedBy::SelfLink),
        (
            "/v2.1/",
            "/v2.1/",
            nova,
            ("2.1", "2.104"),
            MatchedBy::SelfLink,
        ),
        (
            "/v1/",
            "/v1/",
            ironic,
            ("1.1", "1.115"),
            MatchedBy::SelfLink,
        ),
    ] {
        let (base, _) = serving(path, StatusCode::OK, doc).await;
        let d = client(&format!("{base}{endpoint_path}"))
            .discover()
            .await
            .unwrap();
        assert_eq!(
            d.server_versions(),
            ServerVersions::Microversions(VersionRange::from_static(range.0, range.1)),
            "{path}"
        );
        // The links name 127.0.0.1 on the real ports: a wrong host here,
        // normalised to the host that answered.
        assert_eq!(d.matched_by(), by, "{path}");
        assert!(
            d.selected().self_link().unwrap().starts_with(&base),
            "{path}"
        );
    }
}

#[tokio::test]
async fn parent_on_404_and_the_matching_entry() {
    // `GET /v2.1` is 404; `/` lists both, linked by a host the server
    // believes it has.
    let root = json!({"versions": [
        {"id": "v2.0", "status": "DEPRECATED", "version": "", "min_version": "",
         "links": [{"rel": "self", "href": "http://controller:8774/v2/"}]},
        {"id": "v2.1", "status": "SUPPORTED", "version": "2.90", "min_version": "2.1",
         "links": [{"rel": "self", "href": "http://controller:8774/v2.1/"}]},
        {"id": "v3.0", "status": "CURRENT", "max_version": "3.5", "min_version": "3.0",
         "links": [{"rel": "self", "href": "http://controller:8774/v3/"}]}
    ]});
    let (base, log) = serving("/", StatusCode::OK, root).await;
    let d = client(&format!("{base}/v2.1")).discover().await.unwrap();
    assert_eq!(
        log.all()
            .iter()
            .map(|s| s.path.as_str())
            .collect::<Vec<_>>(),
        ["/v2.1", "/"]
    );
    assert_eq!(d.document_url().as_str(), format!("{base}/"));
    // Not the CURRENT v3.0: the endpoint's own entry, by its link.
    assert_eq!(d.selected().id, "v2.1");
    assert_eq!(d.matched_by(), MatchedBy::SelfLink);
    assert_eq!(
        d.server_versions(),
        ServerVersions::Microversions(VersionRange::from_static("2.1", "2.90"))
    );
    let links: Vec<_> = d.entries().iter().filter_map(|e| e.self_link()).collect();
    assert_eq!(
        links,
        [
            format!("{base}/v2/"),
            format!("{base}/v2.1"),
            format!("{base}/v3/")
        ]
    );
    // The v2 endpoint is the entry without microversions.
    let d = client(&format!("{base}/v2/")).discover().await.unwrap();
    assert_eq!(d.server_versions(), ServerVersions::Unversioned);
    // Behind a proxy that adds a path prefix, the link still matches.
    let (proxied, _) = serving(
        "/compute/",
        StatusCode::OK,
        json!({"versions": [
            {"id": "v2.1", "status": "SUPPORTED", "version": "2.90", "min_version": "2.1",
             "links": [{"rel": "self", "href": "http://controller:8774/v2.1/"}]},
            {"id": "v3.0", "status": "CURRENT", "version": "3.5", "min_version": "3.0",
             "links": [{"rel": "self", "href": "http://controller:8774/v3/"}]}
        ]}),
    )
    .await;
    let d = client(&format!("{proxied}/compute/v2.1"))
        .discover()
        .await
        .unwrap();
    assert_eq!(d.selected().id, "v2.1");
    assert_eq!(
        d.selected().self_link(),
        Some(format!("{proxied}/compute/v2.1").as_str())
    );
}

#[tokio::test]
async fn redirects_are_followed_and_links_resolved_from_where_they_led() {
    let log = RequestLog::default();
    let app = Router::new()
        .route("/old/", get(|| async { Redirect::permanent("/new/") }))
        .route(
            "/new/",
            get(|| async {
                Json(json!({"versions": [{"id": "v1.0", "status": "CURRENT",
                    "min_version": "1.0", "max_version": "1.9",
                    "links": [{"rel": "self", "href": "v1/"}]}]}))
            }),
        );
    let base = serve(log.recording(app)).await;
    let d = client(&format!("{base}/old/")).discover().await.unwrap();
    assert_eq!(d.document_url().path(), "/new/");
    assert_eq!(
        d.selected().self_link(),
        Some(format!("{base}/new/v1/").as_str())
    );
    assert_eq!(d.matched_by(), MatchedBy::Current);
}

#[tokio::test]
async fn discovery_errors_say_what_answered() {
    let (base, _) = serving("/", StatusCode::INTERNAL_SERVER_ERROR, json!({})).await;
    let err = client(&base).discover().await.unwrap_err();
    assert!(err.is_discovery());
    assert_eq!(
        err.to_string(),
        format!("example at {base}/: discovery failed: {base}/ answered 500 Internal Server Error")
    );

    let log = RequestLog::default();
    let app = Router::new().route("/", get(|| async { "<html>hello</html>".into_response() }));
    let html = serve(log.recording(app)).await;
    let err = client(&html).discover().await.unwrap_err();
    assert!(err.is_discovery());
    assert!(
        err.to_string()
            .ends_with("did not answer a versions document"),
        "{err}"
    );
    assert!(std::error::Error::source(&err).is_some());

    let (base, _) = serving("/other", StatusCode::OK, json!({})).await;
    let err = client(&format!("{base}/v1/")).discover().await.unwrap_err();
    assert!(
        err.to_string().ends_with(&format!(
            "both {base}/v1/ and its parent {base}/ answered 404 Not Found"
        )),
        "{err}"
    );
    let err = client(&base).discover().await.unwrap_err();
    assert!(
        err.to_string()
            .ends_with("answered 404 Not Found and has no parent URL"),
        "{err}"
    );

    let (base, _) = serving("/", StatusCode::OK, json!({"versions": []})).await;
    let err = client(&base).discover().await.unwrap_err();
    assert!(err.to_string().ends_with("lists no version"), "{err}");

    // Nothing listens there.
    let closed = format!("{}/", dead_base());
    let err = client(&closed).discover().await.unwrap_err();
    assert!(err.is_request() && err.is_connect(), "{err:?}");
}

#[tokio::test]
async fn failed_discovery_is_not_cached() {
    let (base, log) = serving("/", StatusCode::SERVICE_UNAVAILABLE, json!({})).await;
    let c = client(&base);
    assert!(c.discover().await.is_err());
    assert!(c.discover().await.is_err());
    assert_eq!(log.count(&["/"]), 2);
    assert_eq!(c.known_server_versions(), None);
}

#[tokio::test]
async fn timeouts_apply_to_discovery() {
    let log = RequestLog::default();
    let app = Router::new().route(
        "/",
        get(|| async {
            tokio::time::sleep(std::time::Duration::from_secs(5)).await;
            Json(json!({}))
        }),
    );
    let base = serve(log.recording(app)).await;
    let c = Client::builder()
        .endpoint(&base)
        .service_type("example")
        .supported_versions(VersionRange::from_static("1.0", "1.9"))
        .timeout(std::time::Duration::from_millis(100))
        .build()
        .unwrap();
    let err = c.discover().await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
}
