//! The nodes service: a slice of OpenStack Ironic's bare metal API whose
//! ten microversions make each kind of change once. Shared by the
//! `nodes` example, which serves it, and `tests/nodes.rs`, which checks
//! it.
//!
//! | version | change | kind |
//! |---|---|---|
//! | 1.1 | nodes listed, created, shown, deleted; `GET /nodes/detail`; `PUT /nodes/{node_ident}/maintenance` | initial |
//! | 1.2 | new nodes start in `enroll` instead of `available` | behaviour only |
//! | 1.3 | nodes have a `name` | field added |
//! | 1.4 | `extra` is called `metadata` | field renamed |
//! | 1.5 | `GET /nodes/{node_ident}/states` | route added |
//! | 1.6 | nodes lose `power_state` (`/states` has it) | field removed |
//! | 1.7 | `PUT /nodes/{node_ident}/maintenance` answers 204, not 202 | status changed |
//! | 1.8 | `POST /nodes` takes only known drivers | request tightened |
//! | 1.9 | `GET /nodes/detail` is gone | route removed |
//! | 1.10 | `GET /nodes?driver=` | query parameter added |
//!
//! Every version appears once, as a [`Change`]; the routes, statuses,
//! documents and the bodies' fields (`#[derive(Versioned)]`: `since =
//! NAME`, `removed = NO_POWER_FIELD`) name the changes. Only a field's
//! `form` takes its versions as a literal span (`"1.1 - 1.3"`), which the
//! derive checks when the program is compiled and the description's
//! history check catches when it disagrees with the changes.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Router;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::header::LOCATION;
use http::{Method, StatusCode};
use microversion::Change;
use microversion_server::history::VersionHistory;
use microversion_server::openapi::{
    ApiDescription, DOCUMENTS_PATH, Documents, OperationDoc, ResponseDoc, ResponseValidation,
    ResponseValidationLayer,
};
use microversion_server::schema::BodySchemas;
use microversion_server::versioned::{Versioned, VersionedQuery};
use microversion_server::{
    ApiError, Discovery, MicroversionLayer, Microversions, Profile, ServedVersion, VersionedJson,
    VersionedRouter,
};
use serde_json::{Value, json};

/// The first version: Ironic's API starts at 1.1.
pub(crate) const INITIAL: Change = Change::new(
    "1.1",
    "Initial version: nodes listed, created, shown and deleted; GET /nodes/detail; \
     PUT /nodes/{node_ident}/maintenance.",
);
/// A behaviour change: only the handler knows it.
pub(crate) const ENROLL: Change = Change::new(
    "1.2",
    "New nodes start in the enroll provision state instead of available.",
)
.behaviour();
/// A field added.
pub(crate) const NAME: Change = Change::new("1.3", "Nodes have a name, given when created.");
/// A field renamed.
pub(crate) const METADATA: Change = Change::new("1.4", "A node's extra is called metadata.");
/// A route added.
pub(crate) const STATES: Change = Change::new("1.5", "Adds GET /nodes/{node_ident}/states.");
/// A field removed.
pub(crate) const NO_POWER_FIELD: Change = Change::new(
    "1.6",
    "Nodes lose power_state: GET /nodes/{node_ident}/states has it.",
);
/// A success status changed.
pub(crate) const MAINTENANCE_204: Change = Change::new(
    "1.7",
    "PUT /nodes/{node_ident}/maintenance answers 204 instead of 202.",
);
/// A request schema tightened.
pub(crate) const KNOWN_DRIVERS: Change = Change::new(
    "1.8",
    "POST /nodes takes only the drivers ipmi, redfish and fake-hardware.",
);
/// A route removed.
pub(crate) const NO_DETAIL: Change = Change::new("1.9", "Removes GET /nodes/detail.");
/// A query parameter added.
pub(crate) const DRIVER_FILTER: Change = Change::new(
    "1.10",
    "GET /nodes takes ?driver= to list the nodes of one driver.",
);

/// Every microversion, oldest first: the history.
pub(crate) const CHANGES: [Change; 10] = [
    INITIAL,
    ENROLL,
    NAME,
    METADATA,
    STATES,
    NO_POWER_FIELD,
    MAINTENANCE_204,
    KNOWN_DRIVERS,
    NO_DETAIL,
    DRIVER_FILTER,
];

/// The path of the version history.
pub(crate) const HISTORY_PATH: &str = "/history";

/// A node, as `GET /nodes/{node_ident}` answers it, and as the store
/// keeps it.
#[derive(Clone, Debug, Versioned)]
#[versioned(response)]
pub(crate) struct Node {
    /// The node's UUID.
    uuid: String,
    /// A name for people (from 1.3).
    #[versioned(since = NAME)]
    name: Option<String>,
    /// The driver that manages the node.
    driver: String,
    /// Where the node is in its life: `available` or `enroll` when new.
    provision_state: String,
    /// Whether the node is powered (until 1.5; `/states` has it from 1.5).
    #[versioned(removed = NO_POWER_FIELD)]
    power_state: String,
    /// Whether the node is in maintenance.
    maintenance: bool,
    /// Why it is in maintenance.
    maintenance_reason: Option<String>,
    /// Free-form data about the node (`extra` before 1.4).
    #[versioned(form(versions = "1.1 - 1.3", rename = "extra"))]
    metadata: BTreeMap<String, Value>,
}

/// A node as `GET /nodes` lists it.
#[derive(Versioned)]
#[versioned(response)]
pub(crate) struct NodeSummary {
    /// The node's UUID.
    uuid: String,
    /// A name for people (from 1.3).
    #[versioned(since = NAME)]
    name: Option<String>,
    /// Where the node is in its life.
    provision_state: String,
    /// Whether the node is in maintenance.
    maintenance: bool,
}

impl From<&Node> for NodeSummary {
    fn from(node: &Node) -> Self {
        NodeSummary {
            uuid: node.uuid.clone(),
            name: node.name.clone(),
            provision_state: node.provision_state.clone(),
            maintenance: node.maintenance,
        }
    }
}

/// `GET /nodes`.
#[derive(Versioned)]
#[versioned(response)]
pub(crate) struct NodeList {
    /// The nodes, in short.
    #[versioned(nested)]
    nodes: Vec<NodeSummary>,
}

/// `GET /nodes/detail` (until 1.8).
#[derive(Versioned)]
#[versioned(response)]
pub(crate) struct NodeDetailList {
    /// The nodes, in full.
    #[versioned(nested)]
    nodes: Vec<Node>,
}

/// `GET /nodes/{node_ident}/states` (from 1.5).
#[derive(Versioned)]
#[versioned(response)]
pub(crate) struct NodeStates {
    /// `power on` or `power off`.
    power_state: String,
    /// Where the node is in its life.
    provision_state: String,
    /// Whether the node is in maintenance.
    maintenance: bool,
}

/// A driver `POST /nodes` takes from 1.8; any text before.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum KnownDriver {
    /// IPMI.
    Ipmi,
    /// Redfish.
    Redfish,
    /// A driver that drives nothing, for tests.
    FakeHardware,
}

impl From<KnownDriver> for String {
    fn from(driver: KnownDriver) -> String {
        match driver {
            KnownDriver::Ipmi => "ipmi",
            KnownDriver::Redfish => "redfish",
            KnownDriver::FakeHardware => "fake-hardware",
        }
        .to_owned()
    }
}

/// The body of `POST /nodes`.
#[derive(Debug, Versioned)]
#[versioned(request)]
pub(crate) struct NewNode {
    /// The driver that manages the node: from 1.8, one of `ipmi`,
    /// `redfish` and `fake-hardware`.
    #[versioned(form(versions = "1.8 - latest", via = KnownDriver))]
    driver: String,
    /// A name for people (from 1.3).
    #[versioned(since = NAME)]
    name: Option<String>,
    /// Free-form data about the node (`extra` before 1.4).
    #[versioned(default, form(versions = "1.1 - 1.3", rename = "extra"))]
    metadata: BTreeMap<String, Value>,
}

/// The body of `PUT /nodes/{node_ident}/maintenance`.
#[derive(Debug, Versioned)]
#[versioned(request)]
pub(crate) struct Maintenance {
    /// Why the node goes into maintenance.
    reason: Option<String>,
}

/// The query of `GET /nodes`.
#[derive(Debug, Versioned)]
#[versioned(request)]
pub(crate) struct NodeQuery {
    /// Only the nodes of this driver (from 1.10).
    #[versioned(since = DRIVER_FILTER)]
    driver: Option<String>,
}

/// The nodes, in memory, by UUID.
#[derive(Clone, Debug, Default)]
pub(crate) struct Store {
    nodes: Arc<Mutex<BTreeMap<String, Node>>>,
}

impl Store {
    fn nodes(&self) -> MutexGuard<'_, BTreeMap<String, Node>> {
        self.nodes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The node `ident` names, through `f`; 404 when there is none.
    fn with_node<R>(&self, ident: &str, f: impl FnOnce(&mut Node) -> R) -> Result<R, ApiError> {
        self.nodes()
            .get_mut(ident)
            .map(f)
            .ok_or_else(|| not_found(ident))
    }
}

fn not_found(ident: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("Node {ident} could not be found."),
    )
}

async fn list(
    State(store): State<Store>,
    version: ServedVersion,
    VersionedQuery(query): VersionedQuery<NodeQuery>,
) -> Versioned<NodeList> {
    let nodes = store
        .nodes()
        .values()
        .filter(|node| query.driver.as_ref().is_none_or(|d| *d == node.driver))
        .map(NodeSummary::from)
        .collect();
    Versioned::new(version, NodeList { nodes })
}

async fn detail(State(store): State<Store>, version: ServedVersion) -> Versioned<NodeDetailList> {
    let nodes = store.nodes().values().cloned().collect();
    Versioned::new(version, NodeDetailList { nodes })
}

async fn create(
    State(store): State<Store>,
    version: ServedVersion,
    VersionedJson(new): VersionedJson<NewNode>,
) -> Response {
    // The one behaviour change: nothing in the documents shows it.
    let provision_state = if ENROLL.since().contains(version) {
        "enroll"
    } else {
        "available"
    };
    let node = Node {
        uuid: uuid::Uuid::new_v4().to_string(),
        name: new.name,
        driver: new.driver,
        provision_state: provision_state.to_owned(),
        power_state: "power off".to_owned(),
        maintenance: false,
        maintenance_reason: None,
        metadata: new.metadata,
    };
    store.nodes().insert(node.uuid.clone(), node.clone());
    let location = format!("/nodes/{}", node.uuid);
    (
        StatusCode::CREATED,
        [(LOCATION, location)],
        Versioned::new(version, node),
    )
        .into_response()
}

async fn show(
    State(store): State<Store>,
    version: ServedVersion,
    Path(ident): Path<String>,
) -> Result<Versioned<Node>, ApiError> {
    let node = store.with_node(&ident, |node| node.clone())?;
    Ok(Versioned::new(version, node))
}

async fn delete(State(store): State<Store>, Path(ident): Path<String>) -> Response {
    match store.nodes().remove(&ident) {
        Some(_) => StatusCode::NO_CONTENT.into_response(),
        None => not_found(&ident).into_response(),
    }
}

async fn states(
    State(store): State<Store>,
    version: ServedVersion,
    Path(ident): Path<String>,
) -> Result<Versioned<NodeStates>, ApiError> {
    let states = store.with_node(&ident, |node| NodeStates {
        power_state: node.power_state.clone(),
        provision_state: node.provision_state.clone(),
        maintenance: node.maintenance,
    })?;
    Ok(Versioned::new(version, states))
}

/// Answers 202 at every version: the router gives 204 from 1.7.
async fn maintenance(
    State(store): State<Store>,
    Path(ident): Path<String>,
    VersionedJson(body): VersionedJson<Maintenance>,
) -> Result<StatusCode, ApiError> {
    store.with_node(&ident, |node| {
        node.maintenance = true;
        node.maintenance_reason = body.reason;
    })?;
    Ok(StatusCode::ACCEPTED)
}

/// The routes, each with the versions its changes give it.
fn routes(
    new_node: BodySchemas<NewNode>,
    maintain: BodySchemas<Maintenance>,
) -> VersionedRouter<Store> {
    let node = "/nodes/{node_ident}";
    let maintenance_path = "/nodes/{node_ident}/maintenance";
    VersionedRouter::new()
        .get("/nodes", INITIAL.since(), list)
        .post("/nodes", INITIAL.since(), create)
        .body("/nodes", Method::POST, new_node)
        .get("/nodes/detail", INITIAL.until(NO_DETAIL), detail)
        .get(node, INITIAL.since(), show)
        .delete(node, INITIAL.since(), delete)
        .get("/nodes/{node_ident}/states", STATES.since(), states)
        .put(maintenance_path, INITIAL.since(), maintenance)
        .body(maintenance_path, Method::PUT, maintain)
        .status(
            maintenance_path,
            &Method::PUT,
            MAINTENANCE_204.since(),
            StatusCode::NO_CONTENT,
        )
        .neutral("/healthcheck", get(|| async { "OK" }))
}

/// What the router does not know: summaries, responses, errors.
fn operations() -> Vec<OperationDoc> {
    let ident = || {
        (
            "node_ident",
            "The node's UUID.",
            json!({"type": "string", "format": "uuid"}),
        )
    };
    let with_ident = |doc: OperationDoc| {
        let (name, text, schema) = ident();
        doc.path_parameter(name, text, schema)
            .error(StatusCode::NOT_FOUND, "No node has this UUID.")
    };
    vec![
        OperationDoc::get("/nodes")
            .summary("List nodes")
            .versioned_query::<NodeQuery>(INITIAL.since())
            .versioned_response::<NodeList>(INITIAL.since(), StatusCode::OK, "The nodes")
            .error(
                StatusCode::BAD_REQUEST,
                "A query parameter the version does not have, or a bad value.",
            ),
        OperationDoc::post("/nodes")
            .summary("Create a node")
            .versioned_response::<Node>(
                INITIAL.since(),
                StatusCode::CREATED,
                "The new node; `Location` names it",
            )
            .error(
                StatusCode::BAD_REQUEST,
                "The body is not JSON, lacks the driver, names a driver not taken, \
                 or has a field the version does not have.",
            )
            .error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "The body is not JSON."),
        OperationDoc::get("/nodes/detail")
            .summary("List nodes in full")
            .versioned_response::<NodeDetailList>(
                INITIAL.until(NO_DETAIL),
                StatusCode::OK,
                "The nodes",
            ),
        with_ident(OperationDoc::get("/nodes/{node_ident}"))
            .summary("Show a node")
            .versioned_response::<Node>(INITIAL.since(), StatusCode::OK, "The node"),
        with_ident(OperationDoc::delete("/nodes/{node_ident}"))
            .summary("Delete a node")
            .response(
                INITIAL.since(),
                StatusCode::NO_CONTENT,
                ResponseDoc::empty("Deleted"),
            ),
        with_ident(OperationDoc::get("/nodes/{node_ident}/states"))
            .summary("Show a node's states")
            .versioned_response::<NodeStates>(STATES.since(), StatusCode::OK, "The states"),
        with_ident(OperationDoc::put("/nodes/{node_ident}/maintenance"))
            .summary("Put a node in maintenance")
            .response(
                INITIAL.until(MAINTENANCE_204),
                StatusCode::ACCEPTED,
                ResponseDoc::empty("In maintenance"),
            )
            .response(
                MAINTENANCE_204.since(),
                StatusCode::NO_CONTENT,
                ResponseDoc::empty("In maintenance"),
            )
            .error(
                StatusCode::BAD_REQUEST,
                "The body is not JSON or has a field other than reason.",
            )
            .error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "The body is not JSON."),
    ]
}

/// The service, built: its history, versioning, routes and documents.
#[derive(Debug)]
pub(crate) struct Nodes {
    /// Every microversion.
    pub(crate) history: VersionHistory,
    /// The versioning: Ironic's rules, service type `baremetal`.
    pub(crate) api: Microversions,
    /// The checked documents of every version.
    pub(crate) description: ApiDescription,
    router: VersionedRouter<Store>,
}

/// What building the service may fail with: a programming error in its
/// declarations, found at start-up (and by the tests).
pub(crate) type BuildFailure = Box<dyn std::error::Error + Send + Sync>;

impl Nodes {
    /// Builds the service and checks its declarations against each
    /// other: routes, bodies and statuses within the range, every route
    /// documented, every change visible in the documents unless it is one
    /// of behaviour.
    pub(crate) fn build() -> Result<Nodes, BuildFailure> {
        let history = VersionHistory::of(&CHANGES)?;
        let new_node = BodySchemas::<NewNode>::builder("POST /nodes")
            .versioned::<NewNode>(INITIAL.since())
            .build()?;
        let maintain = BodySchemas::<Maintenance>::builder("PUT /nodes/{node_ident}/maintenance")
            .versioned::<Maintenance>(INITIAL.since())
            .build()?;
        let router = routes(new_node, maintain);
        let api = Microversions::builder("baremetal", history.range())
            .profile(Profile::Ironic)
            .version_neutral_routes(&router)
            .version_neutral(HISTORY_PATH)
            .version_neutral(DOCUMENTS_PATH)
            .build()?;
        let description = ApiDescription::builder(&api)
            .title("Bare metal nodes (sample)")
            .description(
                "A slice of Ironic's API whose microversions make each kind of change once.",
            )
            .routes(&router)
            .history(&history)
            .operations(operations())
            .build()?;
        Ok(Nodes {
            history,
            api,
            description,
            router,
        })
    }

    /// The application: the API with `GET /` (discovery), `/history`
    /// and `/openapi.json?version=`, its answers checked against its
    /// documents in `validation` mode.
    pub(crate) fn app(self, validation: ResponseValidation) -> Result<Router, BuildFailure> {
        let discovery = Discovery::single(&self.api, "v1")?;
        let documents = Documents::new(self.description.clone(), &self.api);
        let app = self
            .router
            .build_for(&self.api)?
            .with_state(Store::default())
            .merge(discovery.router())
            .merge(self.history.router(HISTORY_PATH, &[]))
            .merge(documents.router(DOCUMENTS_PATH))
            .layer(ResponseValidationLayer::new(&self.description, validation))
            .layer(MicroversionLayer::new(self.api));
        Ok(app)
    }
}
