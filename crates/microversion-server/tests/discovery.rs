//! Discovery (docs/wire.md 12-13), the version history (18), deprecation
//! headers and telemetry, over a real loopback server.

use std::time::{Duration, UNIX_EPOCH};

use axum::Router;
use axum::routing::get;
use microversion::{Version, VersionRange, VersionSpan, VersionStatus, VersionsDocument};
use microversion_server::history::VersionHistory;
use microversion_server::{
    ApiVersionSpec, Deprecation, Discovery, MicroversionLayer, Microversions, Profile,
    ServedVersion, VersionedRouter,
};
use microversion_test_support::serve;
use serde_json::{Value, json};

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

/// A Cinder-like API: v2.0 without microversions beside v3 with them.
fn cinder_like(public_url: Option<&str>) -> Router {
    let api = Microversions::builder("volume", VersionRange::from_static("3.0", "3.70"))
        .profile(Profile::Cinder)
        .build()
        .unwrap();
    let mut builder = Discovery::builder()
        .version(
            ApiVersionSpec::new("v2.0", "/v2/", VersionStatus::Supported)
                .updated("2017-02-25T12:00:00Z"),
        )
        .version(
            ApiVersionSpec::new("v3.0", "/v3/", VersionStatus::Current)
                .microversions(api.range())
                .updated("2023-01-01T00:00:00Z")
                .media_type(
                    "application/json",
                    "application/vnd.openstack.volume+json;version=3",
                ),
        );
    if let Some(url) = public_url {
        builder = builder.public_url(url);
    }
    builder
        .build()
        .unwrap()
        .router()
        .layer(MicroversionLayer::new(api))
}

#[tokio::test]
async fn versions_document_lists_every_api_version() {
    let base = serve(cinder_like(None)).await;
    let res = client().get(format!("{base}/")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    // Cinder's root reads the header like any path: without one, the
    // versions document is served at the minimum, and says so.
    assert_eq!(res.headers()["openstack-api-version"], "volume 3.0");
    assert_eq!(res.headers()["openstack-volume-microversion"], "3.0");
    assert_eq!(
        res.headers()["vary"],
        "OpenStack-API-Version, OpenStack-Volume-Microversion"
    );
    let body: Value = res.json().await.unwrap();
    assert_eq!(
        body,
        json!({"versions": [
            {"id": "v2.0", "status": "SUPPORTED", "min_version": "", "max_version": "",
             "version": "", "updated": "2017-02-25T12:00:00Z",
             "links": [{"rel": "self", "href": format!("{base}/v2/")}]},
            {"id": "v3.0", "status": "CURRENT", "min_version": "3.0", "max_version": "3.70",
             "version": "3.70", "updated": "2023-01-01T00:00:00Z",
             "links": [{"rel": "self", "href": format!("{base}/v3/")}]}
        ]})
    );
    // The core crate's parser reads it back, both entries.
    let doc: VersionsDocument = serde_json::from_value(body).unwrap();
    assert_eq!(doc.versions[0].microversions(), None);
    assert_eq!(
        doc.current()
            .and_then(microversion::ApiVersion::microversions),
        Some(VersionRange::from_static("3.0", "3.70"))
    );
}

#[tokio::test]
async fn versioned_roots_answer_with_and_without_the_slash() {
    let base = serve(cinder_like(Some("https://volume.example.org"))).await;
    for path in ["/v3/", "/v3"] {
        let res = client().get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(res.status(), 200, "{path}");
        let body: Value = res.json().await.unwrap();
        let v = &body["version"];
        assert_eq!(v["id"], "v3.0");
        assert_eq!(v["max_version"], "3.70");
        assert_eq!(v["version"], "3.70");
        assert_eq!(
            v["links"],
            json!([{"rel": "self", "href": "https://volume.example.org/v3/"}])
        );
        assert_eq!(
            v["media-types"],
            json!([{"base": "application/json",
                    "type": "application/vnd.openstack.volume+json;version=3"}])
        );
    }
    let res = client().get(format!("{base}/v2")).send().await.unwrap();
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["version"]["min_version"], "");
}

#[tokio::test]
async fn links_follow_the_host_and_forwarded_proto() {
    let base = serve(cinder_like(None)).await;
    let res = client()
        .get(format!("{base}/"))
        .header("host", "api.example.net:8776")
        .header("x-forwarded-proto", "https")
        .send()
        .await
        .unwrap();
    let body: Value = res.json().await.unwrap();
    assert_eq!(
        body["versions"][1]["links"][0]["href"],
        "https://api.example.net:8776/v3/"
    );
}

#[tokio::test]
async fn placement_root_is_versioned_and_describes_the_range() {
    // upstream microversion.yaml "root has microversion info".
    let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
        .profile(Profile::Placement)
        .build()
        .unwrap();
    let discovery = Discovery::builder()
        .version(
            ApiVersionSpec::new("v1.0", "/", VersionStatus::Current)
                .microversions(api.range())
                .literal_self_href(""),
        )
        .build()
        .unwrap();
    let app = discovery.router().layer(MicroversionLayer::new(api));
    let base = serve(app).await;
    let res = client()
        .get(format!("{base}/"))
        .header("openstack-api-version", "placement latest")
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["openstack-api-version"], "placement 1.39");
    let body: Value = res.json().await.unwrap();
    let v = &body["versions"][0];
    assert_eq!(v["id"], "v1.0");
    assert_eq!(v["status"], "CURRENT");
    assert_eq!(v["min_version"], "1.0");
    assert_eq!(v["max_version"], "1.39");
    assert_eq!(v["links"], json!([{"rel": "self", "href": ""}]));
    let res = client()
        .get(format!("{base}/"))
        .header("openstack-api-version", "placement 0.5")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 406);
}

fn history() -> VersionHistory {
    VersionHistory::builder()
        .version("1.0", "Initial.")
        .version("1.1", "Adds color.")
        .version("1.2", "Adds size.")
        .version("1.3", "Adds weight.")
        .build()
        .unwrap()
}

/// The status of each version of a history page's body.
fn statuses(body: &Value) -> Vec<&str> {
    body["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["status"].as_str().unwrap())
        .collect()
}

/// An API deprecating everything below 1.2, with history and metrics.
fn deprecating_app() -> (Router, Microversions) {
    let history = history();
    let deprecation = Deprecation::new(
        Version::new(1, 2),
        UNIX_EPOCH + Duration::from_secs(1_700_000_000),
    )
    .sunset(UNIX_EPOCH + Duration::from_secs(1_800_000_000))
    .link("https://docs.example.org/deprecations");
    let api = Microversions::builder("widgets", history.range())
        .deprecation(deprecation)
        .version_neutral("/history")
        .version_neutral("/metrics")
        .build()
        .unwrap();
    let discovery = Discovery::single(&api, "v1").unwrap();
    #[allow(unused_mut)]
    let mut app = VersionedRouter::new()
        .get(
            "/widgets",
            VersionSpan::ALL,
            |v: ServedVersion| async move { v.to_string() },
        )
        .build()
        .unwrap()
        .merge(discovery.router())
        .merge(history.router("/history", api.deprecations()));
    #[cfg(feature = "metrics")]
    {
        let telemetry = api.telemetry().clone();
        app = app.route(
            "/metrics",
            get(move || async move { telemetry.render_prometheus() }),
        );
    }
    #[cfg(not(feature = "metrics"))]
    {
        app = app.route("/metrics", get(|| async { "" }));
    }
    (app.layer(MicroversionLayer::new(api.clone())), api)
}

#[tokio::test]
async fn deprecated_versions_carry_deprecation_and_sunset() {
    let (app, _) = deprecating_app();
    let base = serve(app).await;
    let res = client()
        .get(format!("{base}/widgets"))
        .header("openstack-api-version", "widgets 1.1")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["deprecation"], "@1700000000");
    assert_eq!(res.headers()["sunset"], "Fri, 15 Jan 2027 08:00:00 GMT");
    assert_eq!(
        res.headers()["link"],
        "<https://docs.example.org/deprecations>; rel=\"deprecation\""
    );
    let res = client()
        .get(format!("{base}/widgets"))
        .header("openstack-api-version", "widgets 1.2")
        .send()
        .await
        .unwrap();
    assert!(res.headers().get("deprecation").is_none());
    assert!(res.headers().get("sunset").is_none());
}

#[tokio::test]
async fn history_is_served_with_statuses() {
    let (app, _) = deprecating_app();
    let base = serve(app).await;
    let res = client()
        .get(format!("{base}/history"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    // Version-neutral: no negotiation, no version header.
    assert!(res.headers().get("openstack-api-version").is_none());
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["min_version"], "1.0");
    assert_eq!(body["max_version"], "1.3");
    assert_eq!(
        statuses(&body),
        ["DEPRECATED", "DEPRECATED", "SUPPORTED", "CURRENT"]
    );
    assert_eq!(body["versions"][1]["description"], "Adds color.");
}

#[cfg(feature = "metrics")]
#[tokio::test]
async fn metrics_count_versions_clients_and_outcomes() {
    let (app, api) = deprecating_app();
    let base = serve(app).await;
    let c = client();
    for (ua, version) in [
        ("python-novaclient/18.0 keystoneauth1/5.0", "widgets 1.1"),
        ("python-novaclient/18.0 keystoneauth1/5.0", "widgets 1.1"),
        ("osc-placement/4.9", "widgets latest"),
        ("osc-placement/4.9", "widgets 9.9"),
        ("curl/8", "widgets 1.x"),
    ] {
        c.get(format!("{base}/widgets"))
            .header("user-agent", ua)
            .header("openstack-api-version", version)
            .send()
            .await
            .unwrap();
    }
    assert_eq!(api.telemetry().served_at(Version::new(1, 1)), 2);
    assert_eq!(api.telemetry().outcomes(), [3, 1, 1]);
    let text = c
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for line in [
        "microversion_requests_total{service_type=\"widgets\",version=\"1.1\"} 2",
        "microversion_requests_total{service_type=\"widgets\",version=\"1.3\"} 1",
        "microversion_negotiations_total{service_type=\"widgets\",outcome=\"unsupported\"} 1",
        "microversion_negotiations_total{service_type=\"widgets\",outcome=\"malformed\"} 1",
        "microversion_client_requests_total{service_type=\"widgets\",client=\"python-novaclient\",outcome=\"served\"} 2",
        "microversion_client_requests_total{service_type=\"widgets\",client=\"osc-placement\",outcome=\"unsupported\"} 1",
        "microversion_client_requests_total{service_type=\"widgets\",client=\"curl\",outcome=\"malformed\"} 1",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
}

/// `GET path` asking `version` of the Ironic-like API below: the status,
/// its range headers, the version served and the body.
async fn ironic_get(base: &str, path: &str, version: &str) -> (u16, String, String, Value) {
    let res = client()
        .get(format!("{base}{path}"))
        .header("x-openstack-ironic-api-version", version)
        .send()
        .await
        .unwrap();
    let header = |name: &str| {
        res.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    let range = format!(
        "{} {}",
        header("x-openstack-ironic-api-minimum-version"),
        header("x-openstack-ironic-api-maximum-version")
    );
    let served = header("x-openstack-ironic-api-version");
    let status = res.status().as_u16();
    (
        status,
        range,
        served,
        res.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn an_operators_range_is_served_and_changes_while_serving() {
    let api = Microversions::builder("baremetal", VersionRange::from_static("1.1", "1.90"))
        .profile(Profile::Ironic)
        .served_range(VersionRange::from_static("1.1", "1.80"))
        .build()
        .unwrap();
    assert_eq!(api.code_range(), VersionRange::from_static("1.1", "1.90"));
    let discovery = Discovery::single(&api, "v1").unwrap();
    let app = VersionedRouter::new()
        .get("/nodes", VersionSpan::ALL, |v: ServedVersion| async move {
            axum::Json(json!({"served": v.to_string()}))
        })
        .build()
        .unwrap()
        .merge(discovery.router())
        .layer(MicroversionLayer::new(api.clone()));
    let base = serve(app).await;
    let listed = |body: &Value| {
        let v = &body["versions"][0];
        format!(
            "{} {}",
            v["min_version"].as_str().unwrap(),
            v["version"].as_str().unwrap()
        )
    };

    // Capped at 1.80: `latest` is the cap, 1.81 is refused with the cap.
    let (status, range, served, body) = ironic_get(&base, "/nodes", "latest").await;
    assert_eq!(
        (status, range.as_str(), served.as_str()),
        (200, "1.1 1.80", "1.80")
    );
    assert_eq!(body["served"], "1.80");
    let (status, range, _, body) = ironic_get(&base, "/nodes", "1.81").await;
    assert_eq!((status, range.as_str()), (406, "1.1 1.80"), "{body}");
    let (_, _, _, body) = ironic_get(&base, "/", "1.1").await;
    assert_eq!(listed(&body), "1.1 1.80");

    // Raised to 1.50 and widened to the code's maximum while serving.
    api.set_served_range(VersionRange::from_static("1.50", "1.90"))
        .unwrap();
    let (status, range, served, _) = ironic_get(&base, "/nodes", "latest").await;
    assert_eq!(
        (status, range.as_str(), served.as_str()),
        (200, "1.50 1.90", "1.90")
    );
    let (status, range, _, _) = ironic_get(&base, "/nodes", "1.49").await;
    assert_eq!((status, range.as_str()), (406, "1.50 1.90"));
    let (_, _, _, body) = ironic_get(&base, "/", "1.50").await;
    assert_eq!(listed(&body), "1.50 1.90");

    // A range outside the code's is refused and changes nothing.
    let err = api
        .set_served_range(VersionRange::from_static("1.50", "1.91"))
        .unwrap_err();
    assert_eq!(err.code(), api.code_range());
    assert_eq!(api.range(), VersionRange::from_static("1.50", "1.90"));
    let err = Microversions::builder("baremetal", VersionRange::from_static("1.1", "1.90"))
        .served_range(VersionRange::from_static("1.0", "1.90"))
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "served range 1.0 - 1.90 is not inside the range the code implements, 1.1 - 1.90"
    );
}

/// `method /widgets` asking `widgets {version}`: the status and the
/// `Deprecation`, `Sunset` and `Link` headers.
async fn widgets_call(
    base: &str,
    method: http::Method,
    version: &str,
) -> (u16, Option<String>, Option<String>, Option<String>) {
    let res = client()
        .request(method, format!("{base}/widgets"))
        .header("openstack-api-version", format!("widgets {version}"))
        .send()
        .await
        .unwrap();
    let h = |name: &str| {
        res.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    (
        res.status().as_u16(),
        h("deprecation"),
        h("sunset"),
        h("link"),
    )
}

#[tokio::test]
async fn versions_deprecated_one_by_one_carry_their_own_dates_and_link() {
    let history = history();
    let api = Microversions::builder("widgets", history.range())
        .deprecation(Deprecation::new(
            Version::new(1, 1),
            UNIX_EPOCH + Duration::from_secs(100),
        ))
        .deprecation(
            Deprecation::versions(
                VersionSpan::from_static("1.2 - 1.2"),
                UNIX_EPOCH + Duration::from_secs(200),
            )
            .sunset(UNIX_EPOCH + Duration::from_secs(1_800_000_000))
            .link("/history"),
        )
        .version_neutral("/history")
        .build()
        .unwrap();
    let app = VersionedRouter::new()
        .get(
            "/widgets",
            VersionSpan::ALL,
            |v: ServedVersion| async move { v.to_string() },
        )
        .build()
        .unwrap()
        .merge(history.router("/history", api.deprecations()))
        .layer(MicroversionLayer::new(api));
    let base = serve(app).await;
    let get = |version| widgets_call(&base, http::Method::GET, version);
    assert_eq!(get("1.0").await, (200, Some("@100".into()), None, None));
    assert_eq!(get("1.1").await, (200, None, None, None));
    assert_eq!(
        get("1.2").await,
        (
            200,
            Some("@200".into()),
            Some("Fri, 15 Jan 2027 08:00:00 GMT".into()),
            Some("</history>; rel=\"deprecation\"".into())
        )
    );
    assert_eq!(get("1.3").await, (200, None, None, None));
    let body: Value = client()
        .get(format!("{base}/history"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        statuses(&body),
        ["DEPRECATED", "SUPPORTED", "DEPRECATED", "CURRENT"]
    );
    // Deprecated versions outside the range do not build.
    let err = Microversions::builder("widgets", VersionRange::from_static("1.0", "1.4"))
        .deprecation(Deprecation::versions(
            VersionSpan::from_static("1.3 - 1.5"),
            UNIX_EPOCH,
        ))
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "deprecated versions 1.3 - 1.5 reach outside the supported range 1.0 - 1.4"
    );
}

#[tokio::test]
async fn an_operation_going_away_announces_it_and_speaks_before_the_api() {
    let api = Microversions::builder("widgets", VersionRange::from_static("1.0", "1.4"))
        .deprecation(Deprecation::new(
            Version::new(1, 1),
            UNIX_EPOCH + Duration::from_secs(100),
        ))
        .build()
        .unwrap();
    let app = VersionedRouter::new()
        .get("/widgets", VersionSpan::ALL, || async { "list" })
        .delete(
            "/widgets",
            VersionSpan::from_static("1.0 - 1.3"),
            || async { "gone" },
        )
        .deprecate(
            "/widgets",
            &http::Method::DELETE,
            Deprecation::versions(
                VersionSpan::from_static("1.0 - 1.3"),
                UNIX_EPOCH + Duration::from_secs(300),
            )
            .sunset(UNIX_EPOCH + Duration::from_secs(1_800_000_000)),
        )
        .build()
        .unwrap()
        .layer(MicroversionLayer::new(api));
    let base = serve(app).await;
    let call = |method, version| widgets_call(&base, method, version);
    let sunset = Some("Fri, 15 Jan 2027 08:00:00 GMT".to_owned());
    assert_eq!(
        call(http::Method::DELETE, "1.2").await,
        (200, Some("@300".into()), sunset.clone(), None)
    );
    assert_eq!(
        call(http::Method::GET, "1.2").await,
        (200, None, None, None)
    );
    // At 1.0 the whole version is deprecated too: the operation's dates.
    assert_eq!(
        call(http::Method::DELETE, "1.0").await,
        (200, Some("@300".into()), sunset, None)
    );
    assert_eq!(
        call(http::Method::GET, "1.0").await,
        (200, Some("@100".into()), None, None)
    );
    // Gone at 1.4: as if it never existed (docs/wire.md 15).
    assert_eq!(call(http::Method::DELETE, "1.4").await.0, 404);
}
