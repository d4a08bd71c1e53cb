//! Every operation of placement at the versions where a mistake hides (its
//! first and last, both sides of each version that changes it, just
//! outside its life), each with what it needs set up first, sent over
//! loopback and checked against that version's document.

mod support;

use axum::body::Body;
use http::{Method, Request};
use microversion::Version;
use microversion_server::openapi::{Probe, Sweep};
use serde_json::{Value, json};
use support::{Server, uuid};

/// The body of a consumer's allocations of one VCPU on `provider`, as
/// `version` takes it (inside `POST /allocations` too from 1.13).
fn consumer_allocations(version: Version, provider: &str) -> Value {
    let at = |minor| version >= Version::new(1, minor);
    let mut body = if at(12) {
        json!({"allocations": {provider: {"resources": {"VCPU": 1}}}})
    } else {
        json!({"allocations": [{"resource_provider": {"uuid": provider}, "resources": {"VCPU": 1}}]})
    };
    if at(8) {
        body["project_id"] = json!(uuid());
        body["user_id"] = json!(uuid());
    }
    if at(28) {
        body["consumer_generation"] = Value::Null;
    }
    if at(38) {
        body["consumer_type"] = json!("INSTANCE");
    }
    body
}

/// What a probe sends, with what it needs made first: a provider with
/// VCPU inventory, a custom class or trait, a consumer's allocations.
async fn request(server: &Server, probe: Probe) -> (String, Option<Value>) {
    let version = probe.version;
    let at = |minor| version >= Version::new(1, minor);
    let needs_provider = probe.path.starts_with("/resource_providers/{uuid}")
        || probe.path.starts_with("/allocations/")
        || probe.path == "/allocations"
        || probe.path == "/reshaper";
    let provider = uuid();
    if needs_provider {
        server.provider(&provider, None).await;
        server.simple_inventory(&provider, "VCPU", 8).await;
    }
    let generation = if needs_provider {
        server.generation(&provider).await
    } else {
        0
    };
    let class = format!("CUSTOM_SWEEP_{}", uuid().replace('-', "").to_uppercase());
    let trait_name = class.clone();
    let consumer = uuid();
    let path = probe
        .path
        .replace("{uuid}", &provider)
        .replace("{consumer_uuid}", &consumer)
        .replace("{resource_class}", "VCPU");
    let method = probe.method.clone();
    let path_exists = |p: &str| probe.path == p;
    // Objects the operation reads, changes or removes.
    if path_exists("/resource_classes/{name}") && method != Method::PUT && probe.served {
        server.custom_class(&class).await;
    }
    if path_exists("/traits/{name}") && method != Method::PUT && probe.served {
        let r = server
            .call(
                Method::PUT,
                &format!("/traits/{trait_name}"),
                Some("1.6"),
                None,
            )
            .await;
        assert_eq!(r.status, 201, "{r:?}");
    }
    if path_exists("/allocations/{consumer_uuid}") && method == Method::DELETE && probe.served {
        let body = consumer_allocations(version, &provider);
        let r = server
            .put(
                &format!("/allocations/{consumer}"),
                &version.to_string(),
                &body,
            )
            .await;
        assert_eq!(r.status, 204, "{r:?}");
    }
    let path = path.replace("{name}", &class);
    let generation = json!(generation);
    let body = match (method.clone(), probe.path.as_str()) {
        (Method::POST, "/resource_classes") => Some(json!({"name": class})),
        (Method::PUT, "/resource_classes/{name}") if !at(7) => {
            server.custom_class(&class).await;
            Some(json!({"name": format!("{class}_RENAMED")}))
        }
        (Method::POST, "/resource_providers") => Some(json!({"name": format!("sweep-{}", uuid())})),
        (Method::PUT, "/resource_providers/{uuid}") => {
            Some(json!({"name": format!("renamed-{}", uuid())}))
        }
        (Method::PUT, "/resource_providers/{uuid}/aggregates") if at(19) => Some(json!({
            "aggregates": [uuid()], "resource_provider_generation": generation
        })),
        (Method::PUT, "/resource_providers/{uuid}/aggregates") => Some(json!([uuid()])),
        (Method::POST, "/resource_providers/{uuid}/inventories") => {
            Some(json!({"resource_class": "MEMORY_MB", "total": 1024}))
        }
        (Method::PUT, "/resource_providers/{uuid}/inventories") => Some(json!({
            "resource_provider_generation": generation,
            "inventories": {"VCPU": {"total": 16}}
        })),
        (Method::PUT, "/resource_providers/{uuid}/inventories/{resource_class}") => Some(json!({
            "resource_provider_generation": generation, "total": 16
        })),
        (Method::PUT, "/resource_providers/{uuid}/traits") => Some(json!({
            "traits": ["HW_CPU_X86_AVX"], "resource_provider_generation": generation
        })),
        (Method::PUT, "/allocations/{consumer_uuid}") => {
            Some(consumer_allocations(version, &provider))
        }
        (Method::POST, "/allocations") => {
            Some(json!({ consumer.clone(): consumer_allocations(version, &provider) }))
        }
        (Method::POST, "/reshaper") => Some(json!({
            "inventories": {provider.clone(): {
                "resource_provider_generation": generation,
                "inventories": {"VCPU": {"total": 8}, "MEMORY_MB": {"total": 512}}
            }},
            "allocations": {consumer.clone(): consumer_allocations(version, &provider)}
        })),
        _ => None,
    };
    let query = match probe.path.as_str() {
        "/usages" => format!("?project_id={}", uuid()),
        "/allocation_candidates" => "?resources=VCPU:1".to_owned(),
        _ => String::new(),
    };
    (format!("{path}{query}"), body)
}

#[tokio::test]
async fn every_operation_answers_as_documented_around_each_change() {
    let server = Server::start().await;
    let description = placement::openapi::description().unwrap();
    let sweep = Sweep::new(&description);
    let client = reqwest::Client::new();
    let server = &server;
    let report = sweep
        .run(
            |probe| async move {
                let method = probe.method.clone();
                let (target, body) = request(server, probe).await;
                let builder = Request::builder()
                    .method(method)
                    .uri(target)
                    .header("x-auth-token", "admin")
                    .header("accept", "application/json");
                Some(match body {
                    Some(body) => builder
                        .header("content-type", "application/json")
                        .body(Body::from(body.to_string())),
                    None => builder.body(Body::empty()),
                })
            },
            |request| microversion_test_support::forward(&client, &server.base, request),
        )
        .await;
    assert!(report.passed(), "{report}");
    assert!(report.skipped.is_empty(), "{report}");
    // Each of the 36 operations at two versions at least.
    assert!(report.checked >= 72, "{report}");
}

/// The versions tried follow placement's history.
#[test]
fn the_probes_follow_the_history() {
    let description = placement::openapi::description().unwrap();
    let sweep = Sweep::new(&description);
    let tried = |method: Method, path: &str| -> Vec<String> {
        sweep
            .probes()
            .iter()
            .filter(|p| p.method == method && p.path == path)
            .map(|p| {
                format!(
                    "{}{}",
                    p.version,
                    if p.served { "" } else { " (not served)" }
                )
            })
            .collect()
    };
    // 1.14 adds parent_provider_uuid to the body, 1.20 answers 200.
    assert_eq!(
        tried(Method::POST, "/resource_providers"),
        ["1.0", "1.13", "1.14", "1.19", "1.20", "1.39"]
    );
    assert_eq!(
        tried(Method::DELETE, "/resource_providers/{uuid}/inventories"),
        ["1.4 (not served)", "1.5", "1.39"]
    );
    assert_eq!(
        tried(Method::POST, "/reshaper"),
        [
            "1.29 (not served)",
            "1.30",
            "1.33",
            "1.34",
            "1.37",
            "1.38",
            "1.39"
        ]
    );
}
