//! A legacy root (Nova's `/v2` beside `/v2.1`): the code's minimum
//! whatever is asked, no version headers in the answers, and unknown body
//! properties and query parameters ignored where the versioned root
//! refuses them.

use axum::Json;
use microversion::{VersionRange, VersionSpan, VersionStatus, VersionsDocument};
use microversion_server::discovery::ApiVersionSpec;
use microversion_server::schema::{BodySchemas, VersionedJson};
use microversion_server::{
    BuildError, Discovery, LegacyRequest, MicroversionLayer, Microversions, Profile, ServedVersion,
    StrictQuery, VersionedRouter,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::support::{NOVA, Resp, client, get};

/// What `POST .../servers` reads.
#[derive(Debug, Deserialize)]
struct Create {
    name: String,
    #[serde(default)]
    metadata: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateV21 {
    name: String,
}

impl From<CreateV21> for Create {
    fn from(b: CreateV21) -> Self {
        Create {
            name: b.name,
            metadata: Value::Null,
        }
    }
}

#[derive(Deserialize)]
struct ListQuery {
    name: Option<String>,
}

async fn echo(version: ServedVersion, LegacyRequest(legacy): LegacyRequest) -> Json<Value> {
    Json(json!({"version": version.to_string(), "legacy": legacy}))
}

async fn create(VersionedJson(body): VersionedJson<Create>) -> Json<Value> {
    Json(json!({"name": body.name, "metadata": body.metadata}))
}

async fn list(StrictQuery(query): StrictQuery<ListQuery>) -> Json<Value> {
    Json(json!({"name": query.name}))
}

/// Nova's layout: the API at `/v2.1` and, relaxed, at `/v2`.
fn nova_like() -> (Microversions, axum::Router) {
    let api = Microversions::builder("compute", VersionRange::new(NOVA.min, NOVA.max).unwrap())
        .profile(Profile::Nova)
        .legacy_root("/v2")
        .build()
        .unwrap();
    let metadata = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "metadata": {
                "type": "object",
                "properties": {"k": {"type": "string"}},
                "additionalProperties": false
            }
        },
        "required": ["name"],
        "additionalProperties": false
    });
    let builder = BodySchemas::<Create>::builder("POST /servers")
        .serde::<CreateV21>(VersionSpan::new(NOVA.min, Some(NOVA.v(9))).unwrap());
    #[cfg(feature = "json-schema")]
    let builder = builder.json_schema(VersionSpan::since(NOVA.v(10)), &metadata);
    #[cfg(not(feature = "json-schema"))]
    let _ = metadata;
    let schemas = builder.build().unwrap();
    let mut routes = VersionedRouter::new();
    for root in ["/v2.1", "/v2"] {
        routes = routes
            .get(&format!("{root}/echo"), VersionSpan::ALL, echo)
            .post(&format!("{root}/servers"), VersionSpan::ALL, create)
            .get(&format!("{root}/servers"), VersionSpan::ALL, list);
    }
    let discovery = Discovery::builder()
        .version(
            ApiVersionSpec::new("v2.0", "/v2/", VersionStatus::Supported)
                .updated("2011-01-21T11:33:21Z"),
        )
        .version(ApiVersionSpec::new("v2.1", "/v2.1/", VersionStatus::Current).served_by(&api))
        .build()
        .unwrap();
    let app = routes
        .build()
        .unwrap()
        .layer(schemas.extension())
        .merge(discovery.router())
        .layer(MicroversionLayer::new(api.clone()));
    (api, app)
}

async fn post(base: &str, path: &str, version: &str, body: &Value) -> Resp {
    let res = client()
        .post(format!("{base}{path}"))
        .header("OpenStack-API-Version", version)
        .json(body)
        .send()
        .await
        .unwrap();
    Resp {
        status: res.status().as_u16(),
        headers: res.headers().clone(),
        body: res.text().await.unwrap(),
    }
}

/// No version header, nor `Vary` naming one: what Nova's `/v2` answers.
fn assert_unversioned(r: &Resp, what: &str) {
    for name in ["openstack-api-version", "x-openstack-nova-api-version"] {
        assert_eq!(r.header(name), None, "{what}: {name}");
    }
    assert!(
        !r.vary_names().iter().any(|n| n.contains("api-version")),
        "{what}: Vary {:?}",
        r.vary_names()
    );
    assert!(r.header("x-openstack-request-id").is_some(), "{what}");
    assert!(r.header("x-compute-request-id").is_some(), "{what}");
}

#[tokio::test]
async fn the_legacy_root_serves_the_minimum_without_version_headers() {
    let (api, app) = nova_like();
    let base = microversion_test_support::serve(app).await;
    for asked in [
        vec![("OpenStack-API-Version", "compute 2.50")],
        vec![("X-OpenStack-Nova-API-Version", "2.50")],
        vec![("OpenStack-API-Version", "compute latest")],
        // Malformed and out of range: ignored, not 400 or 406.
        vec![("OpenStack-API-Version", "compute pony.horse")],
        vec![("OpenStack-API-Version", "compute 9.0")],
        vec![],
    ] {
        let r = get(&base, "/v2/echo", &asked).await;
        assert_eq!(r.status, 200, "{asked:?}: {}", r.body);
        assert_eq!(
            r.json(),
            json!({"version": "2.1", "legacy": true}),
            "{asked:?}"
        );
        assert_unversioned(&r, &format!("{asked:?}"));
    }
    // The versioned root beside it negotiates as before.
    let r = get(
        &base,
        "/v2.1/echo",
        &[("OpenStack-API-Version", "compute 2.50")],
    )
    .await;
    assert_eq!(r.json(), json!({"version": "2.50", "legacy": false}));
    assert_eq!(r.header("openstack-api-version"), Some("compute 2.50"));
    let r = get(
        &base,
        "/v2.1/echo",
        &[("OpenStack-API-Version", "compute 9.0")],
    )
    .await;
    assert_eq!(r.status, 406);
    // An operator's raised minimum narrows the versioned root only: the
    // legacy root keeps serving what v2.0 clients were promised.
    api.set_served_range(VersionRange::new(NOVA.v(10), NOVA.max).unwrap())
        .unwrap();
    let r = get(&base, "/v2.1/echo", &[]).await;
    assert_eq!(r.json()["version"], "2.10");
    let r = get(&base, "/v2/echo", &[]).await;
    assert_eq!(r.json()["version"], "2.1");
    // A path that only starts like the root is not under it.
    assert!(!api.is_legacy("/v2x/echo"));
    assert!(api.is_legacy("/v2"));
}

#[tokio::test]
async fn the_versions_document_lists_the_legacy_root_as_nova_does() {
    let (_, app) = nova_like();
    let base = microversion_test_support::serve(app).await;
    let r = get(&base, "/", &[]).await;
    let doc: VersionsDocument = serde_json::from_str(&r.body).unwrap();
    let raw = r.json();
    assert_eq!(doc.versions[0].id, "v2.0");
    assert_eq!(doc.versions[0].status, VersionStatus::Supported);
    assert_eq!(doc.versions[0].microversions(), None);
    assert_eq!(raw["versions"][0]["version"], "");
    assert_eq!(raw["versions"][0]["min_version"], "");
    assert_eq!(raw["versions"][0]["updated"], "2011-01-21T11:33:21Z");
    assert_eq!(doc.versions[1].id, "v2.1");
    assert_eq!(doc.versions[1].status, VersionStatus::Current);
    // The legacy root's own document, without version headers.
    let r = get(&base, "/v2/", &[("OpenStack-API-Version", "compute 2.50")]).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["version"]["id"], "v2.0");
    assert_unversioned(&r, "GET /v2/");
}

#[tokio::test]
async fn unknown_body_properties_and_query_parameters_are_ignored_there() {
    let (_, app) = nova_like();
    let base = microversion_test_support::serve(app).await;
    let body = json!({"name": "vm", "flavor": "m1", "metadata": {"k": "v"}});
    // A serde schema (deny_unknown_fields) at the minimum: refused at
    // /v2.1, the unknown fields dropped at /v2.
    let strict = post(&base, "/v2.1/servers", "compute 2.1", &body).await;
    assert_eq!(strict.status, 400, "{}", strict.body);
    assert!(strict.body.contains("flavor"), "{}", strict.body);
    let relaxed = post(&base, "/v2/servers", "compute 2.1", &body).await;
    assert_eq!(relaxed.status, 200, "{}", relaxed.body);
    assert_eq!(relaxed.json(), json!({"name": "vm", "metadata": null}));
    assert_unversioned(&relaxed, "POST /v2/servers");
    // What the relaxed schema still needs is still needed.
    let missing = post(
        &base,
        "/v2/servers",
        "compute 2.1",
        &json!({"flavor": "m1"}),
    )
    .await;
    assert_eq!(missing.status, 400, "{}", missing.body);
    assert!(missing.body.contains("name"), "{}", missing.body);
    // The JSON Schema from 2.10 refuses them at the versioned root
    // (a_json_schema_is_relaxed_at_every_level reads it relaxed).
    #[cfg(feature = "json-schema")]
    {
        let deep = json!({"name": "vm", "x": 1, "metadata": {"k": "v", "y": 2}});
        let strict = post(&base, "/v2.1/servers", "compute 2.10", &deep).await;
        assert_eq!(strict.status, 400, "{}", strict.body);
    }
    // Query parameters.
    let r = get(&base, "/v2.1/servers?name=vm&sort=up", &[]).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.body
            .contains("Invalid query parameters: 'sort' is not accepted here; accepted: name."),
        "{}",
        r.body
    );
    let r = get(&base, "/v2/servers?name=vm&sort=up&sort=down", &[]).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json(), json!({"name": "vm"}));
}

#[cfg(feature = "json-schema")]
#[test]
fn a_json_schema_is_relaxed_at_every_level() {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "metadata": {"type": "object", "properties": {"k": {}}, "additionalProperties": false}
        },
        "required": ["name"],
        "additionalProperties": false
    });
    let schemas = BodySchemas::<Value>::builder("POST /servers")
        .json_schema(VersionSpan::ALL, &schema)
        .build()
        .unwrap();
    let body = br#"{"name": "vm", "x": 1, "metadata": {"k": "v", "y": 2}}"#;
    let v = NOVA.v(10);
    assert!(schemas.parse(v, body).is_err());
    assert_eq!(
        schemas.parse_relaxed(v, body).unwrap(),
        json!({"name": "vm", "metadata": {"k": "v"}})
    );
    // Relaxed, not lax: a known property of the wrong type is refused.
    assert!(schemas.parse_relaxed(v, br#"{"name": 5, "x": 1}"#).is_err());
    let python = BodySchemas::<Value>::builder("POST /servers")
        .python_messages()
        .json_schema(VersionSpan::ALL, &schema)
        .build()
        .unwrap();
    assert_eq!(
        python.parse_relaxed(v, body).unwrap(),
        json!({"name": "vm", "metadata": {"k": "v"}})
    );
}

#[test]
fn a_legacy_root_below_nothing_is_refused() {
    for root in ["/", "v2", ""] {
        let err = Microversions::builder("compute", VersionRange::new(NOVA.min, NOVA.max).unwrap())
            .legacy_root(root)
            .build()
            .unwrap_err();
        assert!(matches!(err, BuildError::LegacyRoot(_)), "{root:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "the legacy root {root:?} must start with '/' and name a path below '/' (such as \"/v2\")"
            )
        );
    }
    let api = Microversions::builder("compute", VersionRange::new(NOVA.min, NOVA.max).unwrap())
        .legacy_root("/v2/")
        .build()
        .unwrap();
    assert_eq!(api.legacy_root(), Some("/v2"));
}
