//! Test servers on loopback: one per profile of the server crate, plus a
//! server without microversions and an old server that ignores the
//! version header. Every server records the requests it receives.

#![allow(dead_code, unreachable_pub)]

use axum::Json;
use axum::Router;
use axum::routing::get;
use http::Method;
use microversion::document::Link;
use microversion::{ApiVersion, VersionRange, VersionSpan, VersionStatus, VersionsDocument};
use microversion_server::{
    MicroversionLayer, Microversions, Profile, ServedVersion, VersionedRouter,
};
use microversion_test_support::{RequestLog, SeenRequest, serve};
use serde_json::{Value, json};

/// A running test server.
#[derive(Clone, Debug)]
pub struct Server {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    /// The URL a client should be given.
    pub endpoint: String,
    /// The service type the server reads.
    pub service_type: &'static str,
    /// The service type a client is configured with (an alias, for Cinder).
    pub client_service_type: &'static str,
    pub range: VersionRange,
    /// Where the versions document is served (paths).
    pub discovery_paths: Vec<&'static str>,
    /// A resource path, relative to the endpoint.
    pub resource: &'static str,
    /// Its path on the server.
    pub resource_path: &'static str,
    /// The legacy header the server reads, if any.
    pub legacy: Option<&'static str>,
    pub profile: Option<Profile>,
    pub log: RequestLog,
}

impl Server {
    pub fn discoveries(&self) -> usize {
        let paths: Vec<&str> = self.discovery_paths.clone();
        self.log
            .to(&paths)
            .iter()
            .filter(|s| s.method == Method::GET)
            .count()
    }

    pub fn resource_requests(&self) -> Vec<SeenRequest> {
        self.log.to(&[self.resource_path])
    }
}

/// A handler that answers the served version.
async fn echo(version: ServedVersion) -> Json<Value> {
    Json(json!({"version": version.to_string()}))
}

fn api(service_type: &str, range: VersionRange, profile: Profile) -> Microversions {
    Microversions::builder(service_type, range)
        .profile(profile)
        .build()
        .expect("valid microversions")
}

fn entry(id: &str, status: VersionStatus, range: Option<VersionRange>, href: &str) -> ApiVersion {
    let mut entry = ApiVersion::new(id, status).with_link(Link::new("self", href));
    if let Some(range) = range {
        entry = entry.with_microversions(range);
    }
    entry
}

fn doc(entries: Vec<ApiVersion>) -> Value {
    serde_json::to_value(VersionsDocument::new(entries)).expect("document")
}

/// A server of `profile`, shaped like the real service.
pub async fn server(profile: Profile) -> Server {
    server_with_range(profile, None).await
}

/// As [`server`], with another supported range.
pub async fn server_with_range(profile: Profile, range: Option<VersionRange>) -> Server {
    let log = RequestLog::default();
    match profile {
        Profile::Placement => {
            let range = range.unwrap_or(VersionRange::from_static("1.0", "1.39"));
            // As Placement 16.0.0 answers: no `version`, an empty self link.
            let root = json!({"versions": [{"id": "v1.0", "max_version": range.max().to_string(),
                "min_version": range.min().to_string(), "status": "CURRENT",
                "links": [{"rel": "self", "href": ""}]}]});
            let app = VersionedRouter::new()
                .get("/resource_providers", VersionSpan::ALL, echo)
                .get("/traits", VersionSpan::from_static("1.6 - latest"), echo)
                .build()
                .expect("routes")
                .route("/", get(move || async move { Json(root.clone()) }))
                .layer(MicroversionLayer::new(api("placement", range, profile)));
            let base = serve(log.recording(app)).await;
            Server {
                endpoint: base.clone(),
                base,
                service_type: "placement",
                client_service_type: "placement",
                range,
                discovery_paths: vec!["/"],
                resource: "resource_providers",
                resource_path: "/resource_providers",
                legacy: None,
                profile: Some(profile),
                log,
            }
        }
        Profile::Nova => {
            let range = range.unwrap_or(VersionRange::from_static("2.1", "2.104"));
            // The links name the host Nova believes it has: a wrong host.
            let v20 = entry(
                "v2.0",
                VersionStatus::Deprecated,
                None,
                "http://controller:8774/v2/",
            );
            let v21 = entry(
                "v2.1",
                VersionStatus::Current,
                Some(range),
                "http://controller:8774/v2.1/",
            );
            let root = doc(vec![v20, v21.clone()]);
            let versioned_root = json!({"version": serde_json::to_value(&v21).unwrap()});
            let app = VersionedRouter::new()
                .get("/v2.1/flavors", VersionSpan::ALL, echo)
                .build()
                .expect("routes")
                .route("/", get(move || async move { Json(root.clone()) }))
                .route(
                    "/v2.1",
                    get({
                        let d = versioned_root.clone();
                        move || async move { Json(d.clone()) }
                    }),
                )
                .route(
                    "/v2.1/",
                    get(move || async move { Json(versioned_root.clone()) }),
                )
                .layer(MicroversionLayer::new(api("compute", range, profile)));
            let base = serve(log.recording(app)).await;
            Server {
                endpoint: format!("{base}/v2.1"),
                base,
                service_type: "compute",
                client_service_type: "compute",
                range,
                discovery_paths: vec!["/", "/v2.1", "/v2.1/"],
                resource: "flavors",
                resource_path: "/v2.1/flavors",
                legacy: Some("x-openstack-nova-api-version"),
                profile: Some(profile),
                log,
            }
        }
        Profile::Ironic => {
            let range = range.unwrap_or(VersionRange::from_static("1.1", "1.115"));
            let (min, max) = (range.min().to_string(), range.max().to_string());
            let default = json!({"id": "v1", "links": [{"href": "http://127.0.0.1:6385/v1/",
                "rel": "self"}], "status": "CURRENT", "min_version": min, "version": max});
            let root = json!({"name": "OpenStack Ironic API", "description": "Ironic test double",
                "default_version": default.clone(), "versions": [default.clone()]});
            // `/v1/`: a bare entry with resource links and the version inside.
            let v1 = json!({"id": "v1", "links": [{"href": "http://127.0.0.1:6385/v1/", "rel": "self"}],
                "media_types": {"base": "application/json", "type": "application/vnd.openstack.ironic.v1+json"},
                "nodes": [{"href": "http://127.0.0.1:6385/v1/nodes/", "rel": "self"}],
                "version": default});
            let app = VersionedRouter::new()
                .get("/v1/nodes", VersionSpan::ALL, echo)
                .build()
                .expect("routes")
                .route("/", get(move || async move { Json(root.clone()) }))
                .route(
                    "/v1",
                    get({
                        let v1 = v1.clone();
                        move || async move { Json(v1.clone()) }
                    }),
                )
                .route("/v1/", get(move || async move { Json(v1.clone()) }))
                .layer(MicroversionLayer::new(api("baremetal", range, profile)));
            let base = serve(log.recording(app)).await;
            Server {
                endpoint: format!("{base}/v1"),
                base,
                service_type: "baremetal",
                client_service_type: "baremetal",
                range,
                discovery_paths: vec!["/", "/v1", "/v1/"],
                resource: "nodes",
                resource_path: "/v1/nodes",
                legacy: Some("x-openstack-ironic-api-version"),
                profile: Some(profile),
                log,
            }
        }
        Profile::Cinder => {
            let range = range.unwrap_or(VersionRange::from_static("3.0", "3.70"));
            // `/v3/` itself is not served: discovery falls back to `/`.
            let root = doc(vec![
                entry("v2.0", VersionStatus::Deprecated, None, "/v2/"),
                entry("v3.0", VersionStatus::Current, Some(range), "/v3/"),
            ]);
            let app = VersionedRouter::new()
                .get("/v3/volumes", VersionSpan::ALL, echo)
                .build()
                .expect("routes")
                .route("/", get(move || async move { Json(root.clone()) }))
                .layer(MicroversionLayer::new(api("volume", range, profile)));
            let base = serve(log.recording(app)).await;
            Server {
                endpoint: format!("{base}/v3/"),
                base,
                service_type: "volume",
                client_service_type: "block-storage",
                range,
                // Discovery GETs `/v3/` (404), then `/`: count the document.
                discovery_paths: vec!["/"],
                resource: "volumes",
                resource_path: "/v3/volumes",
                legacy: Some("openstack-volume-microversion"),
                profile: Some(profile),
                log,
            }
        }
        _ => {
            // API-SIG: the `{"versions": {"values": [..]}}` shape.
            let range = range.unwrap_or(VersionRange::from_static("1.0", "1.50"));
            let root = json!({"versions": {"values": [
                serde_json::to_value(entry("v1.0", VersionStatus::Current, Some(range), "/")).unwrap()
            ]}});
            let app = VersionedRouter::new()
                .get("/things", VersionSpan::ALL, echo)
                .build()
                .expect("routes")
                .route("/", get(move || async move { Json(root.clone()) }))
                .layer(MicroversionLayer::new(api(
                    "example",
                    range,
                    Profile::ApiSig,
                )));
            let base = serve(log.recording(app)).await;
            Server {
                endpoint: format!("{base}/"),
                base,
                service_type: "example",
                client_service_type: "example",
                range,
                discovery_paths: vec!["/"],
                resource: "things",
                resource_path: "/things",
                legacy: None,
                profile: Some(Profile::ApiSig),
                log,
            }
        }
    }
}

/// A server without microversions: its document has no min or max, and
/// it ignores every version header.
pub async fn unversioned_server() -> Server {
    let log = RequestLog::default();
    let root = json!({"versions": [{"id": "v2.0", "status": "CURRENT", "min_version": "",
        "version": "", "links": [{"rel": "self", "href": "/v2/"}]}]});
    let app = Router::new()
        .route("/", get(move || async move { Json(root.clone()) }))
        .route("/v2/things", get(|| async { Json(json!({"things": []})) }));
    let base = serve(log.recording(app)).await;
    Server {
        endpoint: format!("{base}/v2"),
        base,
        service_type: "legacy",
        client_service_type: "legacy",
        range: VersionRange::from_static("2.0", "2.0"),
        // Discovery GETs `/v2` (404), then `/`: count the document.
        discovery_paths: vec!["/"],
        resource: "things",
        resource_path: "/v2/things",
        legacy: None,
        profile: None,
        log,
    }
}

/// An old server whose document announces microversions (1.0 - 1.20) but
/// whose API ignores the version header, as a deployment behind a proxy
/// that strips it, or a service older than its document, does.
pub async fn ignoring_server() -> Server {
    let log = RequestLog::default();
    let range = VersionRange::from_static("1.0", "1.20");
    let root = doc(vec![entry(
        "v1.0",
        VersionStatus::Current,
        Some(range),
        "/",
    )]);
    let app = Router::new()
        .route("/", get(move || async move { Json(root.clone()) }))
        .route("/things", get(|| async { Json(json!({"things": []})) }));
    let base = serve(log.recording(app)).await;
    Server {
        endpoint: format!("{base}/"),
        base,
        service_type: "example",
        client_service_type: "example",
        range,
        discovery_paths: vec!["/"],
        resource: "things",
        resource_path: "/things",
        legacy: None,
        profile: None,
        log,
    }
}
