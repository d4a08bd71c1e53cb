//! The nodes sample (`examples/nodes`): its released documents frozen,
//! each of its changes on both sides of its version over a real loopback
//! server, a `Sweep` of every operation around each change, and
//! `microversion check` passing on it in Ironic's profile.

#[path = "../examples/nodes/service.rs"]
mod service;

use std::time::Duration;

use http::{HeaderMap, Method, StatusCode};
use microversion::Version;
use microversion_cli::check::{Check, Status};
use microversion_server::Profile;
use microversion_server::openapi::{Contracts, ResponseValidation, Sweep};
use serde_json::{Value, json};
use tower::ServiceExt as _;

use crate::service::{CHANGES, Nodes};

fn v(minor: u32) -> Version {
    Version::new(1, minor)
}

#[test]
fn released_versions_keep_their_documents() {
    let nodes = Nodes::build().unwrap();
    let contracts = Contracts::in_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/nodes-contracts"
    ));
    if let Err(report) = contracts.verify(&nodes.description) {
        panic!("{report}");
    }
}

#[test]
fn each_version_changes_what_its_change_says() {
    let nodes = Nodes::build().unwrap();
    let range = nodes.history.range();
    assert_eq!((range.min(), range.max()), (v(1), v(10)));
    assert_eq!(nodes.api.service_type(), "baremetal");
    let differences = |minor: u32| -> Vec<String> {
        nodes
            .description
            .differences(v(minor - 1), v(minor))
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    let none: [&str; 0] = [];
    assert_eq!(
        differences(2),
        none,
        "a behaviour change leaves the documents"
    );
    assert_eq!(
        differences(3),
        [
            "GET /nodes: 200 response changed",
            "POST /nodes: request body changed",
            "POST /nodes: 201 response changed",
            "GET /nodes/detail: 200 response changed",
            "GET /nodes/{node_ident}: 200 response changed",
        ]
    );
    assert_eq!(
        differences(4),
        [
            "POST /nodes: request body changed",
            "POST /nodes: 201 response changed",
            "GET /nodes/detail: 200 response changed",
            "GET /nodes/{node_ident}: 200 response changed",
        ]
    );
    assert_eq!(differences(5), ["GET /nodes/{node_ident}/states: added"]);
    assert_eq!(
        differences(6),
        [
            "POST /nodes: 201 response changed",
            "GET /nodes/detail: 200 response changed",
            "GET /nodes/{node_ident}: 200 response changed",
        ]
    );
    assert_eq!(
        differences(7),
        [
            "PUT /nodes/{node_ident}/maintenance: 202 response removed",
            "PUT /nodes/{node_ident}/maintenance: 204 response added",
        ]
    );
    assert_eq!(differences(8), ["POST /nodes: request body changed"]);
    assert_eq!(differences(9), ["GET /nodes/detail: removed"]);
    assert_eq!(differences(10), ["GET /nodes: query parameters changed"]);
    // Each version's document says what its change was.
    for change in CHANGES {
        let document = nodes.description.at(change.version()).unwrap().to_value();
        let text = document["info"]["description"].as_str().unwrap();
        assert!(text.contains(change.description()), "{text}");
    }
}

/// A client of one server, asking at a version.
struct Client {
    base: String,
    http: reqwest::Client,
}

/// An answer: status, headers, body (JSON, or `Value::Null` when empty).
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Value,
}

impl Answer {
    /// The fault string of an Ironic error body.
    fn fault(&self) -> String {
        let inner = self.body["error_message"].as_str().unwrap_or_else(|| {
            panic!("not an Ironic error body: {}", self.body);
        });
        let inner: Value = serde_json::from_str(inner).unwrap();
        inner["faultstring"].as_str().unwrap().to_owned()
    }
}

impl Client {
    async fn start() -> Client {
        let app = Nodes::build()
            .unwrap()
            .app(ResponseValidation::Error)
            .unwrap();
        Client {
            base: microversion_test_support::serve(app).await,
            http: reqwest::Client::new(),
        }
    }

    async fn send(&self, method: Method, path: &str, minor: u32, body: Option<Value>) -> Answer {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("openstack-api-version", format!("baremetal 1.{minor}"));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer = request.send().await.unwrap();
        let status = answer.status();
        let headers = answer.headers().clone();
        let bytes = answer.bytes().await.unwrap();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)))
        };
        // No answer here is a response-validation failure.
        assert_ne!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
        Answer {
            status,
            headers,
            body,
        }
    }

    async fn get(&self, path: &str, minor: u32) -> Answer {
        self.send(Method::GET, path, minor, None).await
    }

    /// Creates a node at 1.`minor`; its UUID.
    async fn create(&self, minor: u32, body: Value) -> Answer {
        self.send(Method::POST, "/nodes", minor, Some(body)).await
    }

    /// A node made at the latest version, for the tests of other changes.
    async fn node(&self) -> String {
        let made = self
            .create(10, json!({"driver": "ipmi", "name": "rack-1"}))
            .await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
        made.body["uuid"].as_str().unwrap().to_owned()
    }
}

fn keys(body: &Value) -> Vec<&str> {
    body.as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

#[tokio::test]
async fn the_initial_version_and_the_version_headers() {
    let client = Client::start().await;
    let made = client
        .create(1, json!({"driver": "ipmi", "extra": {"rack": 4}}))
        .await;
    assert_eq!(made.status, StatusCode::CREATED);
    let uuid = made.body["uuid"].as_str().unwrap();
    assert_eq!(made.headers["location"], format!("/nodes/{uuid}"));
    // Ironic answers with its own header only.
    assert!(made.headers.get("openstack-api-version").is_none());
    assert_eq!(made.headers["x-openstack-ironic-api-version"], "1.1");
    assert_eq!(
        made.headers["x-openstack-ironic-api-minimum-version"],
        "1.1"
    );
    assert_eq!(
        made.headers["x-openstack-ironic-api-maximum-version"],
        "1.10"
    );
    assert_eq!(
        keys(&made.body),
        [
            "uuid",
            "driver",
            "provision_state",
            "power_state",
            "maintenance",
            "maintenance_reason",
            "extra"
        ]
    );
    assert_eq!(made.body["extra"], json!({"rack": 4}));
    let shown = client.get(&format!("/nodes/{uuid}"), 1).await;
    assert_eq!(shown.body, made.body);
    let listed = client.get("/nodes", 1).await;
    assert_eq!(
        listed.body,
        json!({"nodes": [{"uuid": uuid, "provision_state": "available", "maintenance": false}]})
    );
    let gone = client
        .send(Method::DELETE, &format!("/nodes/{uuid}"), 1, None)
        .await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT);
    assert_eq!(gone.body, Value::Null);
    let missing = client.get(&format!("/nodes/{uuid}"), 1).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.fault(), format!("Node {uuid} could not be found."));
    // Outside the range: Ironic's 406, naming the range.
    let refused = client.get("/nodes", 11).await;
    assert_eq!(refused.status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(
        refused.headers["x-openstack-ironic-api-maximum-version"],
        "1.10"
    );
}

#[tokio::test]
async fn from_1_2_new_nodes_enroll() {
    let client = Client::start().await;
    let before = client.create(1, json!({"driver": "ipmi"})).await;
    assert_eq!(before.body["provision_state"], "available");
    let after = client.create(2, json!({"driver": "ipmi"})).await;
    assert_eq!(after.body["provision_state"], "enroll");
    // The same shape: only the value differs.
    assert_eq!(keys(&before.body), keys(&after.body));
}

#[tokio::test]
async fn from_1_3_nodes_have_a_name() {
    let client = Client::start().await;
    let refused = client
        .create(2, json!({"driver": "ipmi", "name": "a"}))
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        refused.fault(),
        "JSON does not validate: field `name` does not exist at version 1.2; \
         the fields at 1.2 are `driver`, `extra` at line 1 column 23"
    );
    let made = client
        .create(3, json!({"driver": "ipmi", "name": "a"}))
        .await;
    assert_eq!(made.status, StatusCode::CREATED);
    assert_eq!(made.body["name"], "a");
    let uuid = made.body["uuid"].as_str().unwrap();
    let path = format!("/nodes/{uuid}");
    assert!(client.get(&path, 2).await.body.get("name").is_none());
    assert_eq!(client.get(&path, 3).await.body["name"], "a");
    assert_eq!(client.get("/nodes", 3).await.body["nodes"][0]["name"], "a");
    assert!(
        client.get("/nodes", 2).await.body["nodes"][0]
            .get("name")
            .is_none()
    );
}

#[tokio::test]
async fn from_1_4_extra_is_called_metadata() {
    let client = Client::start().await;
    let made = client
        .create(3, json!({"driver": "ipmi", "extra": {"rack": 4}}))
        .await;
    assert_eq!(made.body["extra"], json!({"rack": 4}));
    assert!(made.body.get("metadata").is_none());
    let path = format!("/nodes/{}", made.body["uuid"].as_str().unwrap());
    let renamed = client.get(&path, 4).await;
    assert_eq!(renamed.body["metadata"], json!({"rack": 4}));
    assert!(renamed.body.get("extra").is_none());
    let refused = client
        .create(4, json!({"driver": "ipmi", "extra": {"rack": 4}}))
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(
        refused
            .fault()
            .contains("field `extra` does not exist at version 1.4"),
        "{}",
        refused.fault()
    );
    let made = client
        .create(4, json!({"driver": "ipmi", "metadata": {"rack": 5}}))
        .await;
    assert_eq!(made.body["metadata"], json!({"rack": 5}));
}

#[tokio::test]
async fn from_1_5_a_node_has_its_states_and_from_1_6_not_in_its_body() {
    let client = Client::start().await;
    let uuid = client.node().await;
    let states = format!("/nodes/{uuid}/states");
    let absent = client.get(&states, 4).await;
    assert_eq!(absent.status, StatusCode::NOT_FOUND);
    let present = client.get(&states, 5).await;
    assert_eq!(present.status, StatusCode::OK);
    assert_eq!(
        present.body,
        json!({"power_state": "power off", "provision_state": "enroll", "maintenance": false})
    );
    let node = format!("/nodes/{uuid}");
    assert_eq!(client.get(&node, 5).await.body["power_state"], "power off");
    assert!(client.get(&node, 6).await.body.get("power_state").is_none());
}

#[tokio::test]
async fn from_1_7_maintenance_answers_204() {
    let client = Client::start().await;
    let uuid = client.node().await;
    let path = format!("/nodes/{uuid}/maintenance");
    let body = || Some(json!({"reason": "disk"}));
    let accepted = client.send(Method::PUT, &path, 6, body()).await;
    assert_eq!(accepted.status, StatusCode::ACCEPTED);
    let done = client.send(Method::PUT, &path, 7, body()).await;
    assert_eq!(done.status, StatusCode::NO_CONTENT);
    assert_eq!(done.body, Value::Null);
    let node = client.get(&format!("/nodes/{uuid}"), 7).await;
    assert_eq!(node.body["maintenance"], true);
    assert_eq!(node.body["maintenance_reason"], "disk");
    let refused = client
        .send(Method::PUT, &path, 7, Some(json!({"why": "disk"})))
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        refused.fault(),
        "JSON does not validate: unknown field `why`; the fields at 1.7 are `reason` \
         at line 1 column 6"
    );
}

#[tokio::test]
async fn from_1_8_only_known_drivers() {
    let client = Client::start().await;
    let loose = client.create(7, json!({"driver": "my-own"})).await;
    assert_eq!(loose.status, StatusCode::CREATED);
    assert_eq!(loose.body["driver"], "my-own");
    let refused = client.create(8, json!({"driver": "my-own"})).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        refused.fault(),
        "JSON does not validate: at driver: unknown variant `my-own`, expected one of \
         `ipmi`, `redfish`, `fake-hardware` at line 1 column 18"
    );
    let made = client.create(8, json!({"driver": "fake-hardware"})).await;
    assert_eq!(made.status, StatusCode::CREATED);
    assert_eq!(made.body["driver"], "fake-hardware");
}

#[tokio::test]
async fn from_1_9_no_detail_list() {
    let client = Client::start().await;
    let uuid = client.node().await;
    let listed = client.get("/nodes/detail", 8).await;
    assert_eq!(listed.status, StatusCode::OK);
    assert_eq!(listed.body["nodes"][0]["uuid"], uuid.as_str());
    assert_eq!(listed.body["nodes"][0]["driver"], "ipmi");
    let gone = client.get("/nodes/detail", 9).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    assert_eq!(gone.headers["x-openstack-ironic-api-version"], "1.9");
}

#[tokio::test]
async fn from_1_10_nodes_are_listed_by_driver() {
    let client = Client::start().await;
    let ipmi = client.node().await;
    let made = client.create(10, json!({"driver": "redfish"})).await;
    let redfish = made.body["uuid"].as_str().unwrap();
    let refused = client.get("/nodes?driver=ipmi", 9).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        refused.fault(),
        "Invalid query string: field `driver` does not exist at version 1.9; \
         there are no fields at 1.9"
    );
    let uuids = |answer: &Answer| -> Vec<String> {
        answer.body["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["uuid"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(uuids(&client.get("/nodes?driver=ipmi", 10).await), [ipmi]);
    assert_eq!(
        uuids(&client.get("/nodes?driver=redfish", 10).await),
        [redfish]
    );
    assert_eq!(uuids(&client.get("/nodes", 10).await).len(), 2);
}

#[tokio::test]
async fn discovery_history_and_documents_are_served() {
    let client = Client::start().await;
    let root = client.get("/", 1).await;
    assert_eq!(root.status, StatusCode::OK);
    let entry = &root.body["versions"][0];
    assert_eq!(entry["id"], "v1");
    assert_eq!(entry["min_version"], "1.1");
    assert_eq!(entry["max_version"], "1.10");
    let history = client.get("/history", 1).await;
    assert_eq!(history.body["versions"].as_array().unwrap().len(), 10);
    assert_eq!(
        history.body["versions"][6]["description"],
        "PUT /nodes/{node_ident}/maintenance answers 204 instead of 202."
    );
    let at_5 = client.get("/openapi.json?version=1.5", 1).await;
    assert_eq!(at_5.status, StatusCode::OK);
    assert_eq!(at_5.body["info"]["version"], "1.5");
    assert!(at_5.body["paths"]["/nodes/{node_ident}/states"]["get"].is_object());
    let at_4 = client.get("/openapi.json?version=1.4", 1).await;
    assert!(
        at_4.body["paths"]
            .get("/nodes/{node_ident}/states")
            .is_none()
    );
    let refused = client.get("/openapi.json?version=1.11", 1).await;
    assert_eq!(refused.status, StatusCode::NOT_ACCEPTABLE);
    let healthy = client
        .http
        .get(format!("{}/healthcheck", client.base))
        .send()
        .await
        .unwrap();
    assert_eq!(healthy.status(), StatusCode::OK);
    assert!(
        healthy
            .headers()
            .get("x-openstack-ironic-api-version")
            .is_none()
    );
}

#[tokio::test]
async fn microversion_check_passes_in_the_ironic_profile() {
    let client = Client::start().await;
    for path in [Some("/nodes"), None] {
        let mut check = Check::new(format!("{}/", client.base), "baremetal")
            .profile(Profile::Ironic)
            .timeout(Duration::from_secs(10))
            .no_proxy();
        if let Some(path) = path {
            check = check.path(path);
        }
        let report = check.run().await.expect("the check runs");
        let failing: Vec<String> = report
            .rows()
            .iter()
            .filter(|row| row.status() != Status::Pass)
            .map(|row| format!("{} [{}]: {}", row.status(), row.id(), row.seen()))
            .collect();
        assert!(
            failing.is_empty(),
            "{path:?}:\n{}\n{}",
            failing.join("\n"),
            report.to_table()
        );
        assert!(report.rows().len() > 30, "{}", report.to_table());
        assert_eq!(
            report.range(),
            Some(microversion::VersionRange::from_static("1.1", "1.10"))
        );
        assert_eq!(report.judge(), "the ironic profile");
    }
}

/// Creates a node through `app`, in process; its UUID.
async fn create_in(app: &axum::Router) -> String {
    let request = http::Request::post("/nodes")
        .header("openstack-api-version", "baremetal latest")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(r#"{"driver": "ipmi"}"#))
        .unwrap();
    let answer = app.clone().oneshot(request).await.unwrap();
    assert_eq!(answer.status(), StatusCode::CREATED);
    let body = axum::body::to_bytes(answer.into_body(), usize::MAX)
        .await
        .unwrap();
    let node: Value = serde_json::from_slice(&body).unwrap();
    node["uuid"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_sweep_around_every_change_passes() {
    let nodes = Nodes::build().unwrap();
    let sweep = Sweep::new(&nodes.description);
    let shown: Vec<String> = sweep.probes().iter().map(ToString::to_string).collect();
    for expected in [
        "GET /nodes/{node_ident}/states at 1.4 (before it exists)",
        "GET /nodes/detail at 1.9 (after it is gone)",
        "PUT /nodes/{node_ident}/maintenance at 1.6 (before 1.7 changes it)",
        "PUT /nodes/{node_ident}/maintenance at 1.7 (1.7 changes it)",
    ] {
        assert!(
            shown.iter().any(|p| p == expected),
            "{expected}: {shown:#?}"
        );
    }
    let app = nodes.app(ResponseValidation::Error).unwrap();
    let report = sweep
        .run(
            |probe| {
                let app = app.clone();
                async move {
                    // Each probe of a node's operations gets a node of its
                    // own (a DELETE removes it).
                    let path = if probe.path.contains("{node_ident}") {
                        probe.path.replace("{node_ident}", &create_in(&app).await)
                    } else {
                        probe.path.clone()
                    };
                    let body = match (&probe.method, probe.path.as_str()) {
                        (&Method::POST, "/nodes") => json!({"driver": "ipmi"}).to_string(),
                        (&Method::PUT, _) => json!({"reason": "sweep"}).to_string(),
                        _ => String::new(),
                    };
                    Some(
                        http::Request::builder()
                            .method(probe.method)
                            .uri(path)
                            .header("content-type", "application/json")
                            .body(axum::body::Body::from(body)),
                    )
                }
            },
            |request| app.clone().oneshot(request),
        )
        .await;
    assert!(report.passed(), "{report}");
    assert!(report.skipped.is_empty(), "{report}");
    assert_eq!(report.checked, sweep.probes().len());
    // Seven operations at their ends, around each change and outside
    // their lives.
    assert_eq!(report.checked, 38, "{shown:#?}");
}
