//! # Tutorial: a microversioned service from scratch
//!
//! This walks through a small bare metal service, shaped like a slice of
//! OpenStack Ironic, from its first microversion to its tenth, in the
//! order a service author meets the changes: a change of behaviour, a
//! field added, renamed and removed, a route added, a success status
//! changed, a request body tightened, a route removed and a query
//! parameter added. Each step is a doc test that compiles and runs.
//!
//! The finished service is the `nodes` example (`examples/nodes/`), with
//! its tests in `tests/nodes.rs`:
//!
//! ```text
//! cargo run -p microversion-server --features derive,json-schema,contracts \
//!     --example nodes -- --bind 127.0.0.1:6385
//! curl -s -H 'OpenStack-API-Version: baremetal 1.3' localhost:6385/nodes
//! curl -s 'localhost:6385/openapi.json?version=1.5'
//! ```
//!
//! It needs the features `derive`, `json-schema` and `contracts` (the
//! example's `required-features`: without them `cargo run` refuses it).
//!
//! The habit throughout: **every microversion is a [`Change`] named once,
//! and everything else names the change.** Routes, success statuses,
//! request bodies and documented responses take spans made from changes
//! (`NAME.since()`, `INITIAL.until(NO_DETAIL)`); bodies say at which
//! versions each field exists, naming changes too (`#[derive(Versioned)]`,
//! `#[versioned(since = NAME)]`); the API
//! description is given the history and refuses to build when a change
//! makes no difference it can see, unless the change says it is one of
//! behaviour.
//!
//! [`Change`]: microversion::Change
//!
//! ## 1.1: the first version
//!
//! Declare the first change, the body types, the handlers and the router;
//! the versioning is built from the history's range, so the maximum is
//! never written twice. The description documents what the router does
//! not know (responses and errors); request bodies come from the router
//! (`.body(..)`), and the description checks every route is documented.
//! The [`ResponseValidationLayer`](crate::openapi::ResponseValidationLayer)
//! then checks every answer against the document of its version.
//!
//! ```rust
//! use std::sync::{Arc, Mutex};
//!
//! use axum::extract::{Path, State};
//! use http::{Method, StatusCode};
//! use microversion::Change;
//! use microversion_server::history::VersionHistory;
//! use microversion_server::openapi::{
//!     ApiDescription, OperationDoc, ResponseValidation, ResponseValidationLayer,
//! };
//! use microversion_server::schema::BodySchemas;
//! use microversion_server::versioned::Versioned;
//! use microversion_server::{
//!     ApiError, MicroversionLayer, Microversions, Profile, ServedVersion, VersionedJson,
//!     VersionedRouter,
//! };
//!
//! const INITIAL: Change = Change::new("1.1", "Initial version: nodes created and shown.");
//! const CHANGES: &[Change] = &[INITIAL];
//!
//! /// A node, as the API shows it.
//! #[derive(Clone, Versioned)]
//! #[versioned(response)]
//! struct Node {
//!     uuid: String,
//!     driver: String,
//!     provision_state: String,
//! }
//!
//! /// The body of `POST /nodes`.
//! #[derive(Debug, Versioned)]
//! #[versioned(request)]
//! struct NewNode {
//!     driver: String,
//! }
//!
//! type Store = Arc<Mutex<Vec<Node>>>;
//!
//! async fn create(
//!     State(store): State<Store>,
//!     version: ServedVersion,
//!     VersionedJson(new): VersionedJson<NewNode>,
//! ) -> (StatusCode, Versioned<Node>) {
//!     let mut nodes = store.lock().unwrap();
//!     let node = Node {
//!         uuid: format!("node-{}", nodes.len()),
//!         driver: new.driver,
//!         provision_state: "available".to_owned(),
//!     };
//!     nodes.push(node.clone());
//!     (StatusCode::CREATED, Versioned::new(version, node))
//! }
//!
//! async fn show(
//!     State(store): State<Store>,
//!     version: ServedVersion,
//!     Path(uuid): Path<String>,
//! ) -> Result<Versioned<Node>, ApiError> {
//!     let nodes = store.lock().unwrap();
//!     match nodes.iter().find(|n| n.uuid == uuid) {
//!         Some(node) => Ok(Versioned::new(version, node.clone())),
//!         None => Err(ApiError::new(StatusCode::NOT_FOUND, format!("Node {uuid} could not be found."))),
//!     }
//! }
//!
//! # async fn ask(app: &axum::Router, method: &str, path: &str, version: &str, body: &str) -> (StatusCode, String) {
//! #     use tower::ServiceExt as _;
//! #     let request = http::Request::builder().method(method).uri(path)
//! #         .header("openstack-api-version", format!("baremetal {version}"))
//! #         .header("content-type", "application/json")
//! #         .body(axum::body::Body::from(body.to_owned())).unwrap();
//! #     let answer = app.clone().oneshot(request).await.unwrap();
//! #     let status = answer.status();
//! #     let bytes = http_body_util::BodyExt::collect(answer.into_body()).await.unwrap().to_bytes();
//! #     (status, String::from_utf8(bytes.to_vec()).unwrap())
//! # }
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let history = VersionHistory::of(CHANGES)?;
//!     let api = Microversions::builder("baremetal", history.range())
//!         .profile(Profile::Ironic)
//!         .build()?;
//!     let new_node = BodySchemas::<NewNode>::builder("POST /nodes")
//!         .versioned::<NewNode>(INITIAL.since())
//!         .build()?;
//!     let router = VersionedRouter::new()
//!         .post("/nodes", INITIAL.since(), create)
//!         .body("/nodes", Method::POST, new_node)
//!         .get("/nodes/{uuid}", INITIAL.since(), show);
//!     let description = ApiDescription::builder(&api)
//!         .routes(&router)
//!         .history(&history)
//!         .operation(
//!             OperationDoc::post("/nodes")
//!                 .versioned_response::<Node>(INITIAL.since(), StatusCode::CREATED, "The new node")
//!                 .error(StatusCode::BAD_REQUEST, "The body is not a node.")
//!                 .error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "The body is not JSON."),
//!         )
//!         .operation(
//!             OperationDoc::get("/nodes/{uuid}")
//!                 .versioned_response::<Node>(INITIAL.since(), StatusCode::OK, "The node")
//!                 .error(StatusCode::NOT_FOUND, "No such node."),
//!         )
//!         .build()?;
//!     let app: axum::Router = router
//!         .build_for(&api)?
//!         .with_state(Store::default())
//!         .layer(ResponseValidationLayer::new(&description, ResponseValidation::Error))
//!         .layer(MicroversionLayer::new(api));
//!
//!     let (status, body) = ask(&app, "POST", "/nodes", "1.1", r#"{"driver": "ipmi"}"#).await;
//!     assert_eq!(status, StatusCode::CREATED);
//!     assert_eq!(body, r#"{"uuid":"node-0","driver":"ipmi","provision_state":"available"}"#);
//!     let (status, _) = ask(&app, "POST", "/nodes", "1.1", r#"{"drivr": "ipmi"}"#).await;
//!     assert_eq!(status, StatusCode::BAD_REQUEST);
//!     let (status, _) = ask(&app, "GET", "/nodes/node-0", "1.2", "").await;
//!     assert_eq!(status, StatusCode::NOT_ACCEPTABLE, "1.2 does not exist yet");
//!     Ok(())
//! }
//! ```
//!
//! ## 1.2: a change of behaviour
//!
//! New nodes start in `enroll` instead of `available`. Nothing a document
//! shows changes (the field is a string either way), so the change is
//! marked [`behaviour`](microversion::Change::behaviour) and the handler
//! branches on it. Unmarked, the description refuses to build: the
//! history says 1.2 changed something the documents do not show.
//!
//! ```rust
//! # use http::StatusCode;
//! use microversion::Change;
//! use microversion_server::ServedVersion;
//! # use microversion_server::history::VersionHistory;
//! # use microversion_server::openapi::{ApiDescription, OperationDoc, ResponseDoc};
//! # use microversion_server::{Microversions, Profile, VersionedRouter};
//!
//! const INITIAL: Change = Change::new("1.1", "Initial version: nodes created and shown.");
//! const ENROLL: Change =
//!     Change::new("1.2", "New nodes start in enroll instead of available.").behaviour();
//!
//! fn provision_state(version: ServedVersion) -> &'static str {
//!     if ENROLL.since().contains(version) { "enroll" } else { "available" }
//! }
//!
//! # fn description(changes: &[Change]) -> Result<ApiDescription, Box<dyn std::error::Error>> {
//! #     let history = VersionHistory::of(changes)?;
//! #     let api = Microversions::builder("baremetal", history.range()).profile(Profile::Ironic).build()?;
//! #     let router = VersionedRouter::<()>::new().get("/nodes", INITIAL.since(), || async { "{}" });
//! #     Ok(ApiDescription::builder(&api)
//! #         .routes(&router)
//! #         .history(&history)
//! #         .operation(OperationDoc::get("/nodes").response(
//! #             INITIAL.since(), StatusCode::OK, ResponseDoc::json("The nodes", serde_json::json!({"type": "object"})),
//! #         ))
//! #         .build()?)
//! # }
//! assert!(description(&[INITIAL, ENROLL]).is_ok());
//! let unmarked = Change::new("1.2", "New nodes start in enroll instead of available.");
//! let refused = description(&[INITIAL, unmarked]).unwrap_err();
//! assert_eq!(
//!     refused.to_string(),
//!     "the change of 1.2 (\"New nodes start in enroll instead of available.\") makes no \
//!      difference in the documents: describe what it changes, or mark it Change::behaviour \
//!      if its effect is inside a handler",
//! );
//! let at = |minor| provision_state(ServedVersion(microversion::Version::new(1, minor)));
//! assert_eq!((at(1), at(2)), ("available", "enroll"));
//! ```
//!
//! ## 1.3: a field added
//!
//! Nodes get a `name`, shown in answers and accepted when a node is
//! created. One attribute on each type, naming the change: the derive
//! writes, reads and describes each version from it, and the
//! description's documents follow without any range restated.
//!
//! ```rust
//! use microversion::{Change, Version};
//! use microversion_server::schema::BodySchemas;
//! use microversion_server::versioned::Versioned;
//!
//! const NAME: Change = Change::new("1.3", "Nodes have a name, given when created.");
//!
//! #[derive(Versioned)]
//! #[versioned(response)]
//! struct Node {
//!     uuid: String,
//!     #[versioned(since = NAME)]
//!     name: Option<String>,
//!     driver: String,
//! }
//!
//! #[derive(Debug, Versioned)]
//! #[versioned(request)]
//! struct NewNode {
//!     driver: String,
//!     #[versioned(since = NAME)]
//!     name: Option<String>,
//! }
//!
//! let node = Node { uuid: "n1".into(), name: Some("rack-1".into()), driver: "ipmi".into() };
//! let at = |minor| serde_json::to_string(&Versioned::new(Version::new(1, minor), &node)).unwrap();
//! assert_eq!(at(2), r#"{"uuid":"n1","driver":"ipmi"}"#);
//! assert_eq!(at(3), r#"{"uuid":"n1","name":"rack-1","driver":"ipmi"}"#);
//!
//! let bodies = BodySchemas::<NewNode>::builder("POST /nodes")
//!     .versioned::<NewNode>(microversion::VersionSpan::ALL)
//!     .build()?;
//! let body = br#"{"driver": "ipmi", "name": "rack-1"}"#;
//! assert_eq!(bodies.parse(Version::new(1, 3), body)?.name.as_deref(), Some("rack-1"));
//! assert_eq!(
//!     bodies.parse(Version::new(1, 2), body).unwrap_err().to_string(),
//!     "JSON does not validate: field `name` does not exist at version 1.2; \
//!      the fields at 1.2 are `driver` at line 1 column 25",
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## 1.4: a field renamed
//!
//! `extra` becomes `metadata`. The field takes its new name, and a
//! `form` keeps the old one over the versions that had it, in answers and
//! in requests alike. A form's versions are a literal span, checked when
//! the program is compiled; were it to disagree with the change, the
//! description's history check would find a version that changes nothing.
//!
//! ```rust
//! use std::collections::BTreeMap;
//!
//! use microversion::Version;
//! use microversion_server::versioned::Versioned;
//!
//! #[derive(Versioned)]
//! #[versioned(response)]
//! struct Node {
//!     uuid: String,
//!     #[versioned(form(versions = "1.1 - 1.3", rename = "extra"))]
//!     metadata: BTreeMap<String, u32>,
//! }
//!
//! let node = Node { uuid: "n1".into(), metadata: BTreeMap::from([("rack".to_owned(), 4)]) };
//! let at = |minor| serde_json::to_string(&Versioned::new(Version::new(1, minor), &node)).unwrap();
//! assert_eq!(at(3), r#"{"uuid":"n1","extra":{"rack":4}}"#);
//! assert_eq!(at(4), r#"{"uuid":"n1","metadata":{"rack":4}}"#);
//! ```
//!
//! ## 1.5: a route added
//!
//! `GET /nodes/{uuid}/states`, from 1.5 on: the route's span is its
//! change's. Before, it answers 404, as a path that does not exist; the
//! router refuses to build when two handlers of one operation overlap or
//! ([`build_for`](crate::VersionedRouter::build_for)) when a span reaches
//! outside the API's range.
//!
//! ```rust
//! # use http::StatusCode;
//! use microversion::Change;
//! use microversion_server::history::VersionHistory;
//! use microversion_server::{MicroversionLayer, Microversions, Profile, VersionedRouter};
//!
//! # const INITIAL: Change = Change::new("1.1", "Initial version.");
//! # const ENROLL: Change = Change::new("1.2", "New nodes enroll.").behaviour();
//! # const NAME: Change = Change::new("1.3", "Nodes have a name.");
//! # const METADATA: Change = Change::new("1.4", "A node's extra is called metadata.");
//! const STATES: Change = Change::new("1.5", "Adds GET /nodes/{uuid}/states.");
//!
//! async fn states() -> &'static str {
//!     r#"{"power_state": "power off"}"#
//! }
//!
//! # async fn ask(app: &axum::Router, method: &str, path: &str, version: &str, body: &str) -> (StatusCode, String) {
//! #     use tower::ServiceExt as _;
//! #     let request = http::Request::builder().method(method).uri(path)
//! #         .header("openstack-api-version", format!("baremetal {version}"))
//! #         .header("content-type", "application/json")
//! #         .body(axum::body::Body::from(body.to_owned())).unwrap();
//! #     let answer = app.clone().oneshot(request).await.unwrap();
//! #     let status = answer.status();
//! #     let bytes = http_body_util::BodyExt::collect(answer.into_body()).await.unwrap().to_bytes();
//! #     (status, String::from_utf8(bytes.to_vec()).unwrap())
//! # }
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let history = VersionHistory::of(&[INITIAL, ENROLL, NAME, METADATA, STATES])?;
//! let api = Microversions::builder("baremetal", history.range())
//!     .profile(Profile::Ironic)
//!     .build()?;
//! let app: axum::Router = VersionedRouter::new()
//!     .get("/nodes/{uuid}/states", STATES.since(), states)
//!     .build_for(&api)?
//!     .layer(MicroversionLayer::new(api));
//! assert_eq!(ask(&app, "GET", "/nodes/n1/states", "1.4", "").await.0, StatusCode::NOT_FOUND);
//! assert_eq!(ask(&app, "GET", "/nodes/n1/states", "1.5", "").await.0, StatusCode::OK);
//! # Ok(()) }
//! ```
//!
//! ## 1.6: a field removed
//!
//! `power_state` leaves the node's body (the states route has it). The
//! field stays in the type, for the versions that still show it:
//! `removed` names the change it goes with (`until = "1.5"` would name
//! the last version that has it).
//!
//! ```rust
//! use microversion::{Change, Version};
//! use microversion_server::versioned::{Versioned, response_schema};
//!
//! const NO_POWER_FIELD: Change = Change::new("1.6", "Nodes lose power_state.");
//!
//! #[derive(Versioned)]
//! #[versioned(response)]
//! struct Node {
//!     uuid: String,
//!     #[versioned(removed = NO_POWER_FIELD)]
//!     power_state: String,
//! }
//!
//! let node = Node { uuid: "n1".into(), power_state: "power off".into() };
//! let at = |minor| serde_json::to_string(&Versioned::new(Version::new(1, minor), &node)).unwrap();
//! assert_eq!(at(5), r#"{"uuid":"n1","power_state":"power off"}"#);
//! assert_eq!(at(6), r#"{"uuid":"n1"}"#);
//! // Each version's schema says the same, and refuses what is not there.
//! let schema = response_schema::<Node>(Version::new(1, 6));
//! assert!(schema["properties"].get("power_state").is_none());
//! assert_eq!(schema["additionalProperties"], false);
//! ```
//!
//! ## 1.7: a success status changed
//!
//! `PUT /nodes/{uuid}/maintenance` answers 204 instead of 202. The status
//! is declared on the route with
//! [`VersionedRouter::status`](crate::VersionedRouter::status): the handler
//! keeps answering as it did, and the router gives the answer the status
//! of its version. The documents say it with two responses, one per span.
//!
//! ```rust
//! use http::{Method, StatusCode};
//! use microversion::Change;
//! use microversion_server::openapi::{OperationDoc, ResponseDoc};
//! use microversion_server::history::VersionHistory;
//! use microversion_server::{MicroversionLayer, Microversions, Profile, VersionedRouter};
//!
//! # const ENROLL: Change = Change::new("1.2", "New nodes enroll.").behaviour();
//! # const NAME: Change = Change::new("1.3", "Nodes have a name.");
//! # const METADATA: Change = Change::new("1.4", "A node's extra is called metadata.");
//! # const STATES: Change = Change::new("1.5", "Adds GET /nodes/{uuid}/states.");
//! # const NO_POWER_FIELD: Change = Change::new("1.6", "Nodes lose power_state.");
//! const INITIAL: Change = Change::new("1.1", "Initial version.");
//! const MAINTENANCE_204: Change = Change::new("1.7", "PUT /nodes/{uuid}/maintenance answers 204.");
//!
//! async fn maintenance() -> StatusCode {
//!     StatusCode::ACCEPTED
//! }
//! # async fn ask(app: &axum::Router, method: &str, path: &str, version: &str, body: &str) -> (StatusCode, String) {
//! #     use tower::ServiceExt as _;
//! #     let request = http::Request::builder().method(method).uri(path)
//! #         .header("openstack-api-version", format!("baremetal {version}"))
//! #         .header("content-type", "application/json")
//! #         .body(axum::body::Body::from(body.to_owned())).unwrap();
//! #     let answer = app.clone().oneshot(request).await.unwrap();
//! #     let status = answer.status();
//! #     let bytes = http_body_util::BodyExt::collect(answer.into_body()).await.unwrap().to_bytes();
//! #     (status, String::from_utf8(bytes.to_vec()).unwrap())
//! # }
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let path = "/nodes/{uuid}/maintenance";
//! let router = VersionedRouter::<()>::new()
//!     .put(path, INITIAL.since(), maintenance)
//!     .status(path, &Method::PUT, MAINTENANCE_204.since(), StatusCode::NO_CONTENT);
//! let doc = OperationDoc::put(path)
//!     .response(INITIAL.until(MAINTENANCE_204), StatusCode::ACCEPTED, ResponseDoc::empty("In maintenance"))
//!     .response(MAINTENANCE_204.since(), StatusCode::NO_CONTENT, ResponseDoc::empty("In maintenance"));
//! # let history = VersionHistory::of(&[INITIAL, ENROLL, NAME, METADATA, STATES, NO_POWER_FIELD, MAINTENANCE_204])?;
//! # let api = Microversions::builder("baremetal", history.range()).profile(Profile::Ironic).build()?;
//! # let description = microversion_server::openapi::ApiDescription::builder(&api)
//! #     .routes(&router).operation(doc).build()?;
//! let app: axum::Router = router.build_for(&api)?.layer(MicroversionLayer::new(api));
//! assert_eq!(ask(&app, "PUT", "/nodes/n1/maintenance", "1.6", "").await.0, StatusCode::ACCEPTED);
//! assert_eq!(ask(&app, "PUT", "/nodes/n1/maintenance", "1.7", "").await.0, StatusCode::NO_CONTENT);
//! let changed: Vec<String> = description
//!     .differences(MAINTENANCE_204.version().previous_minor().unwrap(), MAINTENANCE_204.version())?
//!     .iter()
//!     .map(ToString::to_string)
//!     .collect();
//! assert_eq!(changed, [
//!     "PUT /nodes/{uuid}/maintenance: 202 response removed",
//!     "PUT /nodes/{uuid}/maintenance: 204 response added",
//! ]);
//! # Ok(()) }
//! ```
//!
//! ## 1.8: a request body tightened
//!
//! From 1.8, `POST /nodes` takes only the drivers it knows. The field
//! keeps its type (a `String`); over the versions that restrict it, a
//! `form` reads it `via` an enum, whose schema lists the values and whose
//! deserializer refuses the others with a clear 400.
//!
//! ```rust
//! use microversion::{Version, VersionSpan};
//! use microversion_server::schema::BodySchemas;
//! use microversion_server::versioned::{Versioned, request_schema};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(rename_all = "kebab-case")]
//! enum KnownDriver {
//!     Ipmi,
//!     Redfish,
//!     FakeHardware,
//! }
//!
//! impl From<KnownDriver> for String {
//!     fn from(driver: KnownDriver) -> String {
//!         match driver {
//!             KnownDriver::Ipmi => "ipmi",
//!             KnownDriver::Redfish => "redfish",
//!             KnownDriver::FakeHardware => "fake-hardware",
//!         }
//!         .to_owned()
//!     }
//! }
//!
//! #[derive(Debug, Versioned)]
//! #[versioned(request)]
//! struct NewNode {
//!     #[versioned(form(versions = "1.8 - latest", via = KnownDriver))]
//!     driver: String,
//! }
//!
//! let bodies = BodySchemas::<NewNode>::builder("POST /nodes")
//!     .versioned::<NewNode>(VersionSpan::ALL)
//!     .build()?;
//! let body = br#"{"driver": "my-own"}"#;
//! assert_eq!(bodies.parse(Version::new(1, 7), body)?.driver, "my-own");
//! assert_eq!(
//!     bodies.parse(Version::new(1, 8), body).unwrap_err().to_string(),
//!     "JSON does not validate: at driver: unknown variant `my-own`, expected one of \
//!      `ipmi`, `redfish`, `fake-hardware` at line 1 column 19",
//! );
//! let schema = request_schema::<NewNode>(Version::new(1, 8));
//! assert_eq!(schema["properties"]["driver"]["$ref"], "#/$defs/KnownDriver");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## 1.9: a route removed
//!
//! `GET /nodes/detail` goes: its span ends at the version before the
//! change that removes it, `INITIAL.until(NO_DETAIL)`, on the route and
//! on its documented response alike. From 1.9 it answers 404.
//!
//! ```rust
//! # use http::StatusCode;
//! use microversion::Change;
//! use microversion_server::VersionedRouter;
//!
//! const INITIAL: Change = Change::new("1.1", "Initial version.");
//! const NO_DETAIL: Change = Change::new("1.9", "Removes GET /nodes/detail.");
//!
//! # async fn detail() -> &'static str { r#"{"nodes": []}"# }
//! let router = VersionedRouter::<()>::new().get("/nodes/detail", INITIAL.until(NO_DETAIL), detail);
//! assert_eq!(INITIAL.until(NO_DETAIL).to_string(), "1.1 - 1.8");
//! # let _ = router;
//! ```
//!
//! ## 1.10: a query parameter added
//!
//! `GET /nodes?driver=` lists the nodes of one driver. The query is a
//! `#[versioned(request)]` type read with
//! [`VersionedQuery`](crate::versioned::VersionedQuery): before 1.10 the
//! parameter is refused with 400, naming the parameters the version has;
//! [`OperationDoc::versioned_query`](crate::openapi::OperationDoc::versioned_query)
//! documents each version's from the same type.
//!
//! ```rust
//! # use http::StatusCode;
//! use microversion::Change;
//! use microversion_server::versioned::{Versioned, VersionedQuery};
//! # use microversion_server::history::VersionHistory;
//! # use microversion_server::{MicroversionLayer, Microversions, Profile, VersionedRouter};
//!
//! const INITIAL: Change = Change::new("1.1", "Initial version.");
//! # const CHANGES: [Change; 10] = [
//! #     INITIAL,
//! #     Change::new("1.2", "b").behaviour(), Change::new("1.3", "c"), Change::new("1.4", "d"),
//! #     Change::new("1.5", "e"), Change::new("1.6", "f"), Change::new("1.7", "g"),
//! #     Change::new("1.8", "h"), Change::new("1.9", "i"), DRIVER_FILTER,
//! # ];
//! const DRIVER_FILTER: Change = Change::new("1.10", "GET /nodes takes ?driver=.");
//!
//! #[derive(Debug, Versioned)]
//! #[versioned(request)]
//! struct NodeQuery {
//!     #[versioned(since = DRIVER_FILTER)]
//!     driver: Option<String>,
//! }
//!
//! async fn list(VersionedQuery(query): VersionedQuery<NodeQuery>) -> String {
//!     format!("nodes of {:?}", query.driver)
//! }
//!
//! # async fn ask(app: &axum::Router, method: &str, path: &str, version: &str, body: &str) -> (StatusCode, String) {
//! #     use tower::ServiceExt as _;
//! #     let request = http::Request::builder().method(method).uri(path)
//! #         .header("openstack-api-version", format!("baremetal {version}"))
//! #         .header("content-type", "application/json")
//! #         .body(axum::body::Body::from(body.to_owned())).unwrap();
//! #     let answer = app.clone().oneshot(request).await.unwrap();
//! #     let status = answer.status();
//! #     let bytes = http_body_util::BodyExt::collect(answer.into_body()).await.unwrap().to_bytes();
//! #     (status, String::from_utf8(bytes.to_vec()).unwrap())
//! # }
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let history = VersionHistory::of(&CHANGES)?;
//! # let api = Microversions::builder("baremetal", history.range()).profile(Profile::Ironic).build()?;
//! let app: axum::Router = VersionedRouter::new()
//!     .get("/nodes", INITIAL.since(), list)
//!     .build_for(&api)?
//!     .layer(MicroversionLayer::new(api));
//! let (status, body) = ask(&app, "GET", "/nodes?driver=ipmi", "1.9", "").await;
//! assert_eq!(status, StatusCode::BAD_REQUEST);
//! assert!(body.contains("field `driver` does not exist at version 1.9"), "{body}");
//! let (status, body) = ask(&app, "GET", "/nodes?driver=ipmi", "1.10", "").await;
//! assert_eq!((status, body.as_str()), (StatusCode::OK, r#"nodes of Some("ipmi")"#));
//! # Ok(()) }
//! ```
//!
//! ## Released versions, frozen
//!
//! Once a version is released its document must not change: commit each
//! version's document and compare in a test with
//! [`Contracts`](crate::openapi::Contracts). The first run, with
//! `MICROVERSION_ACCEPT_CONTRACTS=1`, writes them; after that a
//! difference fails the test, each one marked BREAKING or compatible. The
//! sample's are in `examples/nodes-contracts/`.
//!
//! ```rust
//! # use http::StatusCode;
//! # use microversion::Change;
//! # use microversion_server::history::VersionHistory;
//! # use microversion_server::openapi::{ApiDescription, OperationDoc, ResponseDoc};
//! # use microversion_server::{Microversions, Profile, VersionedRouter};
//! use microversion_server::openapi::Contracts;
//!
//! # const INITIAL: Change = Change::new("1.1", "Initial version.");
//! # let history = VersionHistory::of(&[INITIAL])?;
//! # let api = Microversions::builder("baremetal", history.range()).profile(Profile::Ironic).build()?;
//! # let router = VersionedRouter::<()>::new().get("/nodes", INITIAL.since(), || async { "{}" });
//! # let description = ApiDescription::builder(&api).routes(&router).history(&history)
//! #     .operation(OperationDoc::get("/nodes").response(
//! #         INITIAL.since(), StatusCode::OK, ResponseDoc::json("The nodes", serde_json::json!({"type": "object"})),
//! #     ))
//! #     .build()?;
//! let dir = tempfile::tempdir()?;
//! let report = Contracts::in_dir(dir.path()).verify(&description).unwrap_err();
//! assert_eq!(report.missing.len(), 1, "1.1 is not committed yet: {report}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The sample also serves its documents (`/openapi.json?version=X.Y`,
//! [`Documents`](crate::openapi::Documents)), its history (`/history`)
//! and its versions document (`GET /`, [`Discovery`](crate::Discovery)),
//! and its test runs `microversion check` against it in Ironic's profile.
//!
//! ## What each kind of change costs
//!
//! Lines a change took in the sample, against the same change written in
//! the branching form of `examples/demo.rs` (one struct per shape, `From`
//! impls, `if span.contains(version)` branches, each range restated in
//! the documents). Non-blank lines added or changed, as `rustfmt` lays
//! them out, doc comments left out, the history's lines (the `const` and
//! its place in the list) counted in both. "Measured": the old form was
//! written out and diffed (its 107 lines include about 20 of the old
//! code, moved into the new `else` branch); "counted": the old form's
//! pieces counted one by one, not compiled; "same code": both forms
//! write it alike.
//!
//! | change | old form | new form | how |
//! |---|---|---|---|
//! | field added (`name`: 3 types, 4 operations) | 107 | 10 | measured |
//! | field renamed (`extra` → `metadata`) | about 60 | 7 | counted |
//! | field removed (`power_state`) | about 45 | 6 | counted |
//! | request tightened (known drivers) | about 41 | 23 | counted |
//! | query parameter added (`?driver=`) | about 30 | 14 | counted |
//! | route added (`/states`) | about 29 | about 27 | counted |
//! | success status changed (202 → 204) | 17 | 17 | counted |
//! | route removed (`/nodes/detail`) | 4 | 4 | counted |
//! | behaviour change (`enroll`) | 12 | 12 | same code |
//!
//! The savings are in the body changes, and they grow: in the old form,
//! each later change of a body's shape copies every struct that shape
//! is in again, adds a branch to each place it is written and a response
//! to each operation that answers it, while in the new one it stays an
//! attribute on a field. A route or a status costs the same lines either
//! way; what changes is where they are, on the route, checked when it is
//! built, instead of in a handler.
#![cfg(all(feature = "derive", feature = "json-schema", feature = "contracts"))]
#![cfg_attr(
    docsrs,
    doc(cfg(all(feature = "derive", feature = "json-schema", feature = "contracts")))
)]
