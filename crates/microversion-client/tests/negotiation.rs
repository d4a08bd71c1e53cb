//! Every case of the negotiation list of docs/client.md, over loopback servers.

mod common;

use axum::Json;
use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use common::{ignoring_server, server, server_with_range, unversioned_server};
use microversion::{NegotiationError, ServerVersions, Version, VersionRange};
use microversion_client::{Client, ClientBuilder, IgnoredHeader, NegotiationMode, Versioned};
use microversion_server::Profile;
use microversion_test_support::{RequestLog, serve};
use serde_json::json;

fn r(min: &'static str, max: &'static str) -> VersionRange {
    VersionRange::from_static(min, max)
}

fn v(s: &'static str) -> Version {
    Version::from_static(s)
}

fn builder(endpoint: &str, service_type: &str, supported: VersionRange) -> ClientBuilder {
    Client::builder()
        .endpoint(endpoint)
        .service_type(service_type)
        .supported_versions(supported)
}

// --- Case 2: a server without microversions ---

#[tokio::test]
async fn case_2_server_without_microversions() {
    let s = unversioned_server().await;
    let c = builder(&s.endpoint, "legacy", r("2.1", "2.90"))
        .build()
        .unwrap();

    // Discovery recognises it.
    assert_eq!(
        c.server_versions().await.unwrap(),
        ServerVersions::Unversioned
    );
    let d = c.discover().await.unwrap();
    assert_eq!(d.selected().id, "v2.0");
    assert_eq!(d.major(), Some(2));

    // `2.0` works, without a header.
    let res = c.get(s.resource).version("2.0").send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.sent_version(), None);
    assert_eq!(
        s.resource_requests()[0].header("openstack-api-version"),
        None
    );

    // An explicit X.Y fails, before sending.
    let err = c.get(s.resource).version("2.10").send().await.unwrap_err();
    assert!(err.is_negotiation());
    assert_eq!(
        err.negotiation(),
        Some(&NegotiationError::ServerUnversioned {
            requested: v("2.10")
        })
    );
    assert_eq!(
        err.to_string(),
        format!(
            "legacy at {}: version 2.10 was requested, but the server does not support microversions",
            c.endpoint()
        )
    );
    assert_eq!(s.resource_requests().len(), 1);

    // `latest` falls back to X.0: no header, served as 2.0.
    let res = c.get(s.resource).version("latest").send().await.unwrap();
    assert_eq!(res.sent_version(), None);
    assert_eq!(res.version(), Some(v("2.0")));
    assert_eq!(
        s.resource_requests()[1].header("openstack-api-version"),
        None
    );
    assert_eq!(s.discoveries(), 1);
}

// --- Case 3: an exact version inside both ranges ---

#[tokio::test]
async fn case_3_exact_inside_both_is_sent() {
    let s = server(Profile::Placement).await;
    let c = builder(&s.endpoint, "placement", r("1.0", "1.30"))
        .version("1.20")
        .build()
        .unwrap();
    let res = c.get("resource_providers").send().await.unwrap();
    assert_eq!(
        (res.sent_version(), res.version()),
        (Some(v("1.20")), Some(v("1.20")))
    );
    assert_eq!(
        s.resource_requests()[0].header("openstack-api-version"),
        Some("placement 1.20")
    );
}

// --- Case 4: outside the client's range: fails before any request ---

#[tokio::test]
async fn case_4_outside_the_client_range_fails_before_any_request() {
    let s = server(Profile::Placement).await;
    for mode in [
        NegotiationMode::Discovery,
        NegotiationMode::Optimistic,
        NegotiationMode::Off,
    ] {
        let c = builder(&s.endpoint, "placement", r("1.0", "1.30"))
            .negotiation(mode)
            .build()
            .unwrap();
        for (request, message) in [
            (
                "1.35",
                "version 1.35 is outside the range this client supports (1.0 - 1.30)",
            ),
            (
                "2",
                "version 2.0 is outside the range this client supports (1.0 - 1.30)",
            ),
            (
                "3.latest",
                "version 3.latest is outside the range this client supports (1.0 - 1.30)",
            ),
        ] {
            let err = c
                .get("resource_providers")
                .version(request)
                .send()
                .await
                .unwrap_err();
            assert!(err.is_negotiation(), "{err}");
            assert!(
                matches!(
                    err.negotiation(),
                    Some(NegotiationError::OutsideClientRange { .. })
                ),
                "{err}"
            );
            assert!(err.to_string().ends_with(message), "{mode:?}: {err}");
        }
        // The client's own default is checked the same way.
        let c = builder(&s.endpoint, "placement", r("1.0", "1.30"))
            .version("1.31")
            .negotiation(mode)
            .build()
            .unwrap();
        assert!(
            c.get("resource_providers")
                .send()
                .await
                .unwrap_err()
                .is_negotiation()
        );
        assert!(c.version().await.unwrap_err().is_negotiation());
    }
    assert!(s.log.all().is_empty(), "{:?}", s.log.all());
}

// --- Case 5: outside the server's range: fails, naming both ---

#[tokio::test]
async fn case_5_outside_the_server_range_names_both() {
    let s = server(Profile::Nova).await;
    let c = builder(&s.endpoint, "compute", r("2.1", "2.200"))
        .build()
        .unwrap();
    let err = c.get("flavors").version("2.150").send().await.unwrap_err();
    assert_eq!(
        err.negotiation(),
        Some(&NegotiationError::OutsideServerRange {
            requested: v("2.150"),
            client: r("2.1", "2.200"),
            server: r("2.1", "2.104"),
        })
    );
    assert_eq!(
        err.to_string(),
        format!(
            "compute at {}: version 2.150 is not supported by the server (it supports 2.1 - 2.104; \
             this client supports 2.1 - 2.200)",
            c.endpoint()
        )
    );
    assert!(s.resource_requests().is_empty());
}

// --- Case 6: latest and X.latest ---

#[tokio::test]
async fn case_6_latest_takes_the_highest_common_version() {
    let s = server(Profile::Placement).await;
    let below = builder(&s.endpoint, "placement", r("1.0", "1.30"))
        .version("latest")
        .build()
        .unwrap();
    assert_eq!(below.version().await.unwrap().header(), Some(v("1.30")));
    let above = builder(&s.endpoint, "placement", r("1.0", "1.99"))
        .version("1.latest")
        .build()
        .unwrap();
    assert_eq!(above.version().await.unwrap().header(), Some(v("1.39")));
    let res = above.get("resource_providers").send().await.unwrap();
    assert_eq!(res.version(), Some(v("1.39")));
}

#[tokio::test]
async fn case_6_server_too_old_or_too_new() {
    let s = server(Profile::Placement).await;
    let c = builder(&s.endpoint, "placement", r("1.40", "1.50"))
        .version("latest")
        .build()
        .unwrap();
    let err = c.get("resource_providers").send().await.unwrap_err();
    assert!(matches!(
        err.negotiation(),
        Some(NegotiationError::ServerTooOld { .. })
    ));
    assert!(
        err.to_string().ends_with(
            "no common version for latest: the server is too old (it supports 1.0 - 1.39; \
             this client supports 1.40 - 1.50)"
        ),
        "{err}"
    );

    let s = server_with_range(Profile::Placement, Some(r("1.10", "1.39"))).await;
    let c = builder(&s.endpoint, "placement", r("1.0", "1.5"))
        .version("1.latest")
        .build()
        .unwrap();
    let err = c.get("resource_providers").send().await.unwrap_err();
    assert!(matches!(
        err.negotiation(),
        Some(NegotiationError::ServerTooNew { .. })
    ));
    assert!(
        err.to_string().ends_with(
            "no common version for 1.latest: the server is too new (it supports 1.10 - 1.39; \
             this client supports 1.0 - 1.5)"
        ),
        "{err}"
    );
    assert!(s.resource_requests().is_empty());
}

// --- Case 7: the optimistic, 406-driven mode ---

#[tokio::test]
async fn case_7_a_user_version_is_never_downgraded() {
    for profile in [Profile::Ironic, Profile::Placement, Profile::Nova] {
        let s = server(profile).await;
        let max = s.range.max();
        let asked = Version::new(max.major(), max.minor() + 5);
        let supported = VersionRange::new(s.range.min(), Version::new(max.major(), 500)).unwrap();
        let c = builder(&s.endpoint, s.client_service_type, supported)
            .negotiation(NegotiationMode::Optimistic)
            .version(asked)
            .build()
            .unwrap();
        let err = c.get(s.resource).send().await.unwrap_err();
        assert_eq!(
            err.negotiation(),
            Some(&NegotiationError::OutsideServerRange {
                requested: asked,
                client: supported,
                server: s.range,
            }),
            "{profile}: {err}"
        );
        assert!(
            err.to_string()
                .contains(&format!("it supports {}", s.range)),
            "{err}"
        );
        // Sent once; never again at a lower version.
        assert_eq!(s.resource_requests().len(), 1, "{profile}");
        // The range was remembered: the next exact request fails before
        // sending.
        let err = c.get(s.resource).send().await.unwrap_err();
        assert!(err.is_negotiation());
        assert_eq!(s.resource_requests().len(), 1, "{profile}");
    }
}

#[tokio::test]
async fn case_7_latest_below_every_server_version_fails_after_one_406() {
    let s = server(Profile::Ironic).await;
    let c = builder(&s.endpoint, "baremetal", r("2.0", "2.10"))
        .negotiation(NegotiationMode::Optimistic)
        .version("latest")
        .build()
        .unwrap();
    let err = c.get("nodes").send().await.unwrap_err();
    assert!(
        matches!(
            err.negotiation(),
            Some(NegotiationError::ServerTooOld { .. })
        ),
        "{err}"
    );
    assert_eq!(s.resource_requests().len(), 1);
}

/// A server that refuses every version with 406 and claims 1.0 - 1.10.
async fn always_refusing() -> (String, RequestLog) {
    let log = RequestLog::default();
    let app = Router::new().route(
        "/things",
        get(|| async {
            (
                StatusCode::NOT_ACCEPTABLE,
                Json(json!({"errors": [{"status": 406, "title": "Not Acceptable",
                    "detail": "no", "min_version": "1.0", "max_version": "1.10"}]})),
            )
        }),
    );
    let base = serve(log.recording(app)).await;
    (base, log)
}

#[tokio::test]
async fn case_7_at_most_one_retry() {
    let (base, log) = always_refusing().await;
    let c = builder(&base, "example", r("1.0", "1.50"))
        .negotiation(NegotiationMode::Optimistic)
        .version("latest")
        .build()
        .unwrap();
    let err = c.get("things").send().await.unwrap_err();
    assert!(err.is_not_acceptable(), "{err}");
    assert_eq!(err.sent_version(), Some(v("1.10")));
    assert!(
        err.to_string().ends_with(
            "the server refused version 1.10 (406 Not Acceptable) again, after renegotiating \
             once (it supports 1.0 - 1.10; this client supports 1.0 - 1.50)"
        ),
        "{err}"
    );
    let sent: Vec<_> = log
        .to(&["/things"])
        .iter()
        .map(|s| s.header("openstack-api-version").unwrap().to_owned())
        .collect();
    assert_eq!(sent, ["example 1.50", "example 1.10"]);
}

#[tokio::test]
async fn case_7_off_mode_neither_discovers_nor_retries() {
    let s = server(Profile::Placement).await;
    let c = builder(&s.endpoint, "placement", r("1.0", "1.50"))
        .negotiation(NegotiationMode::Off)
        .version("latest")
        .build()
        .unwrap();
    let err = c.get("resource_providers").send().await.unwrap_err();
    assert!(err.is_not_acceptable());
    assert!(
        err.to_string().ends_with(
            "the server refused version 1.50 (406 Not Acceptable) and negotiation is off, so it \
             is not retried (it supports 1.0 - 1.39; this client supports 1.0 - 1.50)"
        ),
        "{err}"
    );
    assert_eq!(s.log.all().len(), 1);
    // And it learns nothing.
    assert_eq!(c.known_server_versions(), None);
}

#[tokio::test]
async fn discovery_mode_does_not_loop_when_the_server_contradicts_its_document() {
    // The document says 1.0 - 1.50, the API serves 1.0 - 1.39.
    let log = RequestLog::default();
    let api = microversion_server::Microversions::builder("example", r("1.0", "1.39"))
        .build()
        .unwrap();
    let root = json!({"versions": [{"id": "v1.0", "status": "CURRENT", "min_version": "1.0",
        "max_version": "1.50", "links": []}]});
    let app = Router::new()
        .route("/things", get(|| async { "ok" }))
        .route("/", get(move || async move { Json(root.clone()) }))
        .layer(microversion_server::MicroversionLayer::new(api));
    let base = serve(log.recording(app)).await;
    let c = builder(&base, "example", r("1.0", "1.60"))
        .version("latest")
        .build()
        .unwrap();
    let err = c.get("things").send().await.unwrap_err();
    assert!(err.is_not_acceptable(), "{err}");
    assert!(
        err.to_string().ends_with(
            "the server refused version 1.50 (406 Not Acceptable) although its versions document \
             lists it (it supports 1.0 - 1.39; this client supports 1.0 - 1.60)"
        ),
        "{err}"
    );
    assert_eq!(log.count(&["/things"]), 1);
    assert_eq!(log.count(&["/"]), 1);
}

// --- Case 8: the response check ---

#[tokio::test]
async fn case_8_a_server_that_ignores_the_header_is_an_error_by_default() {
    let s = ignoring_server().await;
    let c = builder(&s.endpoint, "example", r("1.0", "1.30"))
        .version("latest")
        .build()
        .unwrap();
    let err = c.get("things").send().await.unwrap_err();
    assert!(err.is_ignored_header());
    assert_eq!(err.sent_version(), Some(v("1.20")));
    assert!(
        err.to_string().ends_with(
            "version 1.20 was requested, but the response names no version: the server ignored \
             the version header (it may not support microversions)"
        ),
        "{err}"
    );
    assert_eq!(err.url().map(url::Url::path), Some("/things"));
    // Only successful responses are checked: a 404 without a version
    // header (Nova and Ironic router errors have none) is the caller's.
    let res = c.get("missing").send().await.unwrap();
    assert_eq!(res.status(), 404);
    assert!(res.error_for_status().unwrap_err().is_status());
}

#[tokio::test]
async fn case_8_or_falls_back_to_x_0() {
    let s = ignoring_server().await;
    let c = builder(&s.endpoint, "example", r("1.0", "1.30"))
        .version("latest")
        .ignored_header(IgnoredHeader::FallBack)
        .build()
        .unwrap();
    let res = c.get("things").send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.sent_version(), Some(v("1.20")));
    assert_eq!(res.version(), Some(v("1.0")));
    // From then on the endpoint is treated as one without microversions.
    assert_eq!(c.known_server_versions(), Some(ServerVersions::Unversioned));
    let res = c.get("things").send().await.unwrap();
    assert_eq!(res.sent_version(), None);
    assert_eq!(res.version(), Some(v("1.0")));
    assert_eq!(
        s.resource_requests()[1].header("openstack-api-version"),
        None
    );
    let err = c.get("things").version("1.5").send().await.unwrap_err();
    assert!(matches!(
        err.negotiation(),
        Some(NegotiationError::ServerUnversioned { .. })
    ));
}

#[tokio::test]
async fn case_8_another_version_in_the_answer() {
    let log = RequestLog::default();
    let root = json!({"versions": [{"id": "v1.0", "status": "CURRENT", "min_version": "1.0",
        "max_version": "1.20", "links": []}]});
    let app = Router::new()
        .route("/", get(move || async move { Json(root.clone()) }))
        .route(
            "/things",
            get(|| async { ([("openstack-api-version", "example 1.1")], "ok") }),
        );
    let base = serve(log.recording(app)).await;
    let c = builder(&base, "example", r("1.0", "1.20"))
        .version("1.20")
        .build()
        .unwrap();
    let err = c.get("things").send().await.unwrap_err();
    assert!(err.is_ignored_header());
    assert!(
        err.to_string()
            .ends_with("version 1.20 was requested, but the server answered with version 1.1"),
        "{err}"
    );
    let c = builder(&base, "example", r("1.0", "1.20"))
        .version("1.20")
        .ignored_header(IgnoredHeader::FallBack)
        .build()
        .unwrap();
    assert_eq!(
        c.get("things").send().await.unwrap().version(),
        Some(v("1.1"))
    );
}

#[tokio::test]
async fn case_8_in_the_optimistic_mode() {
    let s = ignoring_server().await;
    let c = builder(&s.endpoint, "example", r("1.0", "1.30"))
        .version("latest")
        .negotiation(NegotiationMode::Optimistic)
        .build()
        .unwrap();
    let err = c.get("things").send().await.unwrap_err();
    assert!(err.is_ignored_header());
    assert_eq!(err.sent_version(), Some(v("1.30")));
    assert_eq!(s.discoveries(), 0);
}

// --- Case 9: per-request versions and gates ---

#[tokio::test]
async fn case_9_per_request_override() {
    let s = server(Profile::Placement).await;
    let c = builder(&s.endpoint, "placement", r("1.0", "1.39"))
        .version("latest")
        .build()
        .unwrap();
    let res = c
        .get("resource_providers")
        .version("1.5")
        .send()
        .await
        .unwrap();
    assert_eq!(res.version(), Some(v("1.5")));
    // The server routes by version: /traits exists from 1.6.
    assert_eq!(
        c.get("traits")
            .version("1.5")
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    assert_eq!(
        c.get("traits")
            .version("1.6")
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        c.get("traits").send().await.unwrap().version(),
        Some(v("1.39"))
    );
    // No header at all for `1` / `1.0`.
    let res = c
        .get("resource_providers")
        .version("1")
        .send()
        .await
        .unwrap();
    assert_eq!((res.sent_version(), res.version()), (None, Some(v("1.0"))));
    // A bad override is a builder error out of send.
    let err = c.get("traits").version("1.06").send().await.unwrap_err();
    assert!(err.is_builder());
    assert_eq!(s.discoveries(), 1);
}

#[tokio::test]
async fn case_9_require_fails_before_sending() {
    let s = server(Profile::Placement).await;
    let c = builder(&s.endpoint, "placement", r("1.0", "1.39"))
        .version("1.5")
        .build()
        .unwrap();
    let err = c.get("traits").require("1.6").send().await.unwrap_err();
    assert!(err.is_gate());
    assert_eq!(
        err.to_string(),
        format!(
            "placement at {}: this call requires API version 1.6 or later; the version in use is 1.5",
            c.endpoint()
        )
    );
    assert!(s.log.to(&["/traits"]).is_empty());
    assert_eq!(
        c.get("traits")
            .require("1.6")
            .version("1.6")
            .send()
            .await
            .unwrap()
            .status(),
        200
    );

    assert!(c.require("1.5").await.is_ok());
    let err = c.require("1.10").await.unwrap_err();
    assert!(err.is_gate() && err.to_string().contains("1.10"), "{err}");
    assert!(c.require("1.x").await.unwrap_err().is_builder());

    // With no version asked, a feature's gate uses the highest version
    // both sides support, not the server's minimum.
    let c = builder(&s.endpoint, "placement", r("1.0", "1.39"))
        .build()
        .unwrap();
    assert_eq!(c.require("1.1").await.unwrap().header(), Some(v("1.39")));
}

#[tokio::test]
async fn case_9_require_holds_across_a_406_retry() {
    // Optimistic: 1.50 is refused, the server's 1.39 is below what the call
    // requires, so the retry is not sent.
    let s = server(Profile::Placement).await;
    let c = builder(&s.endpoint, "placement", r("1.0", "1.50"))
        .negotiation(NegotiationMode::Optimistic)
        .version("latest")
        .build()
        .unwrap();
    let err = c
        .get("resource_providers")
        .require("1.45")
        .send()
        .await
        .unwrap_err();
    assert!(err.is_gate(), "{err}");
    assert!(
        err.to_string().ends_with("the version in use is 1.39"),
        "{err}"
    );
    assert_eq!(s.resource_requests().len(), 1);
}

#[tokio::test]
async fn versioned_methods_pick_by_the_negotiated_version() {
    let s = server(Profile::Nova).await;
    let op = Versioned::builder("list flavors")
        .between("2.1", "2.54", "old")
        .since("2.55", "new")
        .build()
        .unwrap();
    let c = builder(&s.endpoint, "compute", r("2.1", "2.90"))
        .version("latest")
        .build()
        .unwrap();
    assert_eq!(c.select(&op).await.unwrap(), &"new");
    let c = builder(&s.endpoint, "compute", r("2.1", "2.90"))
        .version("2.10")
        .build()
        .unwrap();
    assert_eq!(c.select(&op).await.unwrap(), &"old");

    let gap = Versioned::builder("show server topology")
        .since("2.78", ())
        .build()
        .unwrap();
    let err = c.select(&gap).await.unwrap_err();
    assert!(err.is_gate());
    assert!(
        err.to_string().ends_with(
            "show server topology is not available at API version 2.10; it is supported by API \
             versions 2.78 - latest"
        ),
        "{err}"
    );
    // Without a version and without discovery, the version is unknown.
    let off = builder(&s.endpoint, "compute", r("2.1", "2.90"))
        .negotiation(NegotiationMode::Off)
        .build()
        .unwrap();
    let err = off.select(&op).await.unwrap_err();
    assert!(err.to_string().contains("not known"), "{err}");
}
