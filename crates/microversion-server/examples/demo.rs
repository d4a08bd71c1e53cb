//! A small microversioned service: widgets and gadgets whose API changes
//! across versions in every way a real API does.
//!
//! ```text
//! cargo run -p microversion-server --example demo -- \
//!     --bind 127.0.0.1:8778 --profile placement --service-type placement --min 1.0 --max 1.39
//! ```
//!
//! The changes are counted from the minimum `M.m`:
//!
//! | version | change |
//! |---|---|
//! | M.m | widgets: list, show, create (201, empty body), delete; `/stats` |
//! | M.m+1 | widgets gain the field `color` |
//! | M.m+2 | POST /widgets answers 200 with the widget instead of 201; `/gadgets` appears; `/stats` is gone |
//! | M.m+3 | POST /widgets accepts `color` in the body (a new schema) |
//!
//! VersionSpan above M.m+3 change nothing here. `/healthcheck` is
//! version-neutral; `/history` serves the version history. `GET /widgets`
//! takes `?name=` and refuses parameters it does not know.
//!
//! `--legacy-root /v2` serves the same API under `/v2` too, as Nova serves
//! its v2.0 API on its v2.1 code: at the minimum whatever version is
//! asked, with no version headers in the answers, and with unknown body
//! properties and query parameters ignored rather than refused; the
//! versions document lists it as `v{major}.0`, SUPPORTED, without
//! microversions (with `--profile nova --service-type compute --min 2.1`,
//! Nova's `v2.0` beside `v2.1`).
//!
//! `--openapi X.Y` prints the OpenAPI document of one version and exits;
//! `--openapi all` the document of the whole range, with `x-openstack`
//! ranges (built with the `schemars` feature: the schemas are derived
//! from the types below).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::{Json, Router};
use clap::Parser;
use http::{Method, StatusCode};
use microversion::{Version, VersionRange, VersionSpan, VersionStatus};
use microversion_server::discovery::ApiVersionSpec;
use microversion_server::history::VersionHistory;
use microversion_server::openapi::{ApiDescription, OperationDoc, ResponseDoc};
use microversion_server::schema::{BodySchemas, VersionedJson};
use microversion_server::{
    ApiError, Discovery, MicroversionLayer, Microversions, Profile, ServedVersion, StrictQuery,
    VersionedRouter,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Serve the demo microversioned API.
#[derive(Debug, Parser)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8778")]
    bind: SocketAddr,
    /// Server behaviour to reproduce: api-sig, placement, nova, ironic, cinder.
    #[arg(long, default_value = "api-sig")]
    profile: Profile,
    /// Service type read from and written to OpenStack-API-Version.
    #[arg(long, default_value = "demo")]
    service_type: String,
    /// Lowest supported microversion.
    #[arg(long, default_value = "1.0")]
    min: Version,
    /// Highest supported microversion.
    #[arg(long, default_value = "1.5")]
    max: Version,
    /// Serve the API at its minimum under this root too, without version
    /// headers and with relaxed validation (Nova's `/v2`).
    #[arg(long, value_name = "PATH")]
    legacy_root: Option<String>,
    /// Print the OpenAPI document of this version (`X.Y`, or `all` for
    /// the whole range) and exit.
    #[arg(long, value_name = "VERSION")]
    openapi: Option<String>,
}

/// The demo's versions, counted from the minimum.
#[derive(Clone, Copy, Debug)]
struct Steps {
    color_field: Version,
    create_returns_200: Version,
    color_in_body: Version,
}

impl Steps {
    fn from_min(min: Version) -> Self {
        let at = |k: u32| Version::new(min.major(), min.minor().saturating_add(k));
        Steps {
            color_field: at(1),
            create_returns_200: at(2),
            color_in_body: at(3),
        }
    }

    /// The version just before `v` (`v` is always above the minimum).
    fn before(v: Version) -> Version {
        Version::new(v.major(), v.minor().saturating_sub(1))
    }
}

#[derive(Clone, Debug)]
struct Widget {
    name: String,
    color: Option<String>,
}

#[derive(Clone)]
struct AppState {
    widgets: Arc<Mutex<BTreeMap<u64, Widget>>>,
    steps: Steps,
}

impl AppState {
    fn widgets(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Widget>> {
        self.widgets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A widget before it had a color.
#[derive(Serialize, JsonSchema)]
struct PlainWidget {
    id: u64,
    name: String,
}

/// A widget with its color (`null` when it has none).
#[derive(Serialize, JsonSchema)]
struct ColoredWidget {
    id: u64,
    name: String,
    color: Option<String>,
}

/// `GET /widgets`.
#[derive(Serialize, JsonSchema)]
struct WidgetList<W> {
    widgets: Vec<W>,
}

/// `GET /stats`.
#[derive(Serialize, JsonSchema)]
struct Stats {
    widget_count: usize,
}

/// One gadget.
#[derive(Serialize, JsonSchema)]
struct Gadget {
    id: u64,
    name: String,
}

/// `GET /gadgets`.
#[derive(Serialize, JsonSchema)]
struct GadgetList {
    gadgets: Vec<Gadget>,
}

fn render(id: u64, w: &Widget, version: Version, steps: Steps) -> Value {
    let name = w.name.clone();
    let body = if version >= steps.color_field {
        serde_json::to_value(ColoredWidget {
            id,
            name,
            color: w.color.clone(),
        })
    } else {
        serde_json::to_value(PlainWidget { id, name })
    };
    body.unwrap_or(Value::Null)
}

/// The query of `GET /widgets`.
#[derive(Deserialize)]
struct ListQuery {
    /// Only the widgets of this name.
    name: Option<String>,
}

async fn list(
    State(s): State<AppState>,
    v: ServedVersion,
    StrictQuery(query): StrictQuery<ListQuery>,
) -> Json<Value> {
    let widgets: Vec<Value> = s
        .widgets()
        .iter()
        .filter(|(_, w)| query.name.as_ref().is_none_or(|name| *name == w.name))
        .map(|(id, w)| render(*id, w, *v, s.steps))
        .collect();
    Json(json!({"widgets": widgets}))
}

async fn show(State(s): State<AppState>, v: ServedVersion, Path(id): Path<u64>) -> Response {
    match s.widgets().get(&id) {
        Some(w) => Json(render(id, w, *v, s.steps)).into_response(),
        None => ApiError::new(StatusCode::NOT_FOUND, format!("No widget with id {id}."))
            .with_code("demo.widget_not_found")
            .into_response(),
    }
}

/// The body of POST /widgets, whatever the version.
#[derive(Debug)]
struct NewWidget {
    name: String,
    color: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NewWidgetV1 {
    name: String,
}

impl From<NewWidgetV1> for NewWidget {
    fn from(b: NewWidgetV1) -> Self {
        NewWidget {
            name: b.name,
            color: None,
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NewWidgetWithColor {
    name: String,
    color: Option<String>,
}

impl From<NewWidgetWithColor> for NewWidget {
    fn from(b: NewWidgetWithColor) -> Self {
        NewWidget {
            name: b.name,
            color: b.color,
        }
    }
}

async fn create(
    State(s): State<AppState>,
    v: ServedVersion,
    VersionedJson(body): VersionedJson<NewWidget>,
) -> Response {
    if body.name.is_empty() || body.name.len() > 200 {
        return ApiError::bad_request("name must be 1 to 200 characters long").into_response();
    }
    let widget = Widget {
        name: body.name,
        color: body.color,
    };
    let id = {
        let mut widgets = s.widgets();
        let id = widgets.keys().next_back().map_or(1, |last| last + 1);
        widgets.insert(id, widget.clone());
        id
    };
    let location = format!("/widgets/{id}");
    if *v >= s.steps.create_returns_200 {
        let body = render(id, &widget, *v, s.steps);
        (
            StatusCode::OK,
            [(http::header::LOCATION, location)],
            Json(body),
        )
            .into_response()
    } else {
        (StatusCode::CREATED, [(http::header::LOCATION, location)]).into_response()
    }
}

async fn delete(State(s): State<AppState>, Path(id): Path<u64>) -> Response {
    match s.widgets().remove(&id) {
        Some(_) => StatusCode::NO_CONTENT.into_response(),
        None => {
            ApiError::new(StatusCode::NOT_FOUND, format!("No widget with id {id}.")).into_response()
        }
    }
}

async fn stats(State(s): State<AppState>) -> Json<Stats> {
    Json(Stats {
        widget_count: s.widgets().len(),
    })
}

async fn gadgets() -> Json<GadgetList> {
    Json(GadgetList {
        gadgets: vec![Gadget {
            id: 1,
            name: "sprocket".to_owned(),
        }],
    })
}

fn history(
    range: VersionRange,
    steps: Steps,
) -> Result<VersionHistory, Box<dyn std::error::Error>> {
    let mut builder = VersionHistory::builder();
    let (min, max) = (range.min(), range.max());
    if min.major() != max.major() {
        return Err("--min and --max must share a major version".into());
    }
    for minor in min.minor()..=max.minor() {
        let v = Version::new(min.major(), minor);
        let text = if v == min {
            "Initial version: widgets and /stats."
        } else if v == steps.color_field {
            "Widgets gain the color field."
        } else if v == steps.create_returns_200 {
            "POST /widgets returns 200 with the widget; adds /gadgets; removes /stats."
        } else if v == steps.color_in_body {
            "POST /widgets accepts color."
        } else {
            "No change in this demo."
        };
        builder = builder.version(&v.to_string(), text);
    }
    Ok(builder.build()?)
}

/// The API's documentation: what the router does not know.
fn description(
    api: &Microversions,
    routes: &VersionedRouter<AppState>,
    steps: Steps,
) -> Result<ApiDescription, Box<dyn std::error::Error>> {
    let min = api.range().min();
    let plain = VersionSpan::new(min, Some(Steps::before(steps.color_field)))?;
    let colored = VersionSpan::new(steps.color_field, None)?;
    let created = VersionSpan::new(min, Some(Steps::before(steps.create_returns_200)))?;
    let returned = |from: Version| VersionSpan::new(from.max(steps.create_returns_200), None);
    let id = json!({"type": "integer", "minimum": 0});
    let description = ApiDescription::builder(api)
        .title("Demo widgets")
        .description("Widgets and gadgets whose API changes across versions.")
        .routes(routes)
        .operation(
            OperationDoc::get("/widgets")
                .summary("List widgets")
                .query_schema(
                    VersionSpan::ALL,
                    json!({
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "additionalProperties": false
                    }),
                )
                .query_description("name", "Only the widgets of this name.")
                .error(StatusCode::BAD_REQUEST, "A query parameter is not known.")
                .response(
                    plain,
                    StatusCode::OK,
                    ResponseDoc::of::<WidgetList<PlainWidget>>("The widgets"),
                )
                .response(
                    colored,
                    StatusCode::OK,
                    ResponseDoc::of::<WidgetList<ColoredWidget>>("The widgets"),
                ),
        )
        .operation(
            OperationDoc::post("/widgets")
                .summary("Create a widget")
                .response(
                    created,
                    StatusCode::CREATED,
                    ResponseDoc::empty("Created; `Location` names it"),
                )
                .response(
                    returned(min)?,
                    StatusCode::OK,
                    ResponseDoc::of::<ColoredWidget>("The new widget"),
                )
                .error(StatusCode::BAD_REQUEST, "The name is empty or too long."),
        )
        .operation(
            OperationDoc::get("/widgets/{id}")
                .summary("Show a widget")
                .path_parameter("id", "The widget's id.", id.clone())
                .response(
                    plain,
                    StatusCode::OK,
                    ResponseDoc::of::<PlainWidget>("The widget"),
                )
                .response(
                    colored,
                    StatusCode::OK,
                    ResponseDoc::of::<ColoredWidget>("The widget"),
                )
                .error(StatusCode::NOT_FOUND, "No such widget."),
        )
        .operation(
            OperationDoc::delete("/widgets/{id}")
                .summary("Delete a widget")
                .path_parameter("id", "The widget's id.", id)
                .response(
                    VersionSpan::ALL,
                    StatusCode::NO_CONTENT,
                    ResponseDoc::empty("Deleted"),
                )
                .error(StatusCode::NOT_FOUND, "No such widget."),
        )
        .operation(
            OperationDoc::get("/stats")
                .summary("Count widgets")
                .response(
                    created,
                    StatusCode::OK,
                    ResponseDoc::of::<Stats>("The counts"),
                ),
        )
        .operation(
            OperationDoc::get("/gadgets")
                .summary("List gadgets")
                .response(
                    returned(min)?,
                    StatusCode::OK,
                    ResponseDoc::of::<GadgetList>("The gadgets"),
                ),
        )
        .build()?;
    Ok(description)
}

/// The OpenAPI document `which` names: `all`, or a version written as in
/// the header.
fn openapi(
    api: &Microversions,
    description: &ApiDescription,
    which: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    let document = if which == "all" {
        description.whole()
    } else {
        description.at(api.resolve_text(which)?)?
    };
    Ok(document.to_json_pretty())
}

/// The versions document: the API at `/`, and the legacy root's API
/// version (`v2.0` for a minimum of 2.x) when there is one.
fn discovery(api: &Microversions, args: &Args) -> Result<Discovery, Box<dyn std::error::Error>> {
    let current = format!("v{}", args.min);
    let Some(root) = api.legacy_root() else {
        return Ok(Discovery::single(api, &current)?);
    };
    let legacy = format!("v{}.0", args.min.major());
    if legacy == current {
        return Err(format!(
            "--legacy-root needs a minimum above {}.0: the legacy API version is {legacy}",
            args.min.major()
        )
        .into());
    }
    Ok(Discovery::builder()
        .version(
            ApiVersionSpec::new(legacy, format!("{root}/"), VersionStatus::Supported)
                .updated("2011-01-21T11:33:21Z"),
        )
        .version(ApiVersionSpec::new(current, "/", VersionStatus::Current).served_by(api))
        .build()?)
}

/// The service, or `None` when the command line only asked for a document.
fn app(args: &Args) -> Result<Option<Router>, Box<dyn std::error::Error>> {
    let range = VersionRange::new(args.min, args.max)?;
    let steps = Steps::from_min(args.min);
    let history = history(range, steps)?;
    let since = |v: Version| VersionSpan::new(v, None);
    let until = |v: Version| VersionSpan::new(args.min, Some(v));
    let state = AppState {
        widgets: Arc::default(),
        steps,
    };
    let schemas = Arc::new(
        BodySchemas::<NewWidget>::builder("POST /widgets")
            .serde_schema::<NewWidgetV1>(until(Steps::before(steps.color_in_body))?)
            .serde_schema::<NewWidgetWithColor>(since(steps.color_in_body)?)
            .build()?,
    );
    let routes = |router: VersionedRouter<AppState>, prefix: &str| {
        let at = |path: &str| format!("{prefix}{path}");
        Ok::<_, microversion::InvalidRange>(
            router
                .get(&at("/widgets"), VersionSpan::ALL, list)
                .post(&at("/widgets"), VersionSpan::ALL, create)
                .body(&at("/widgets"), Method::POST, Arc::clone(&schemas))
                .get(&at("/widgets/{id}"), VersionSpan::ALL, show)
                .delete(&at("/widgets/{id}"), VersionSpan::ALL, delete)
                .get(
                    &at("/stats"),
                    until(Steps::before(steps.create_returns_200))?,
                    stats,
                )
                .get(&at("/gadgets"), since(steps.create_returns_200)?, gadgets),
        )
    };
    // `/healthcheck` is written once: the router serves it and the
    // versioning learns from the router that it is version-neutral.
    let mut router =
        routes(VersionedRouter::new(), "")?.neutral("/healthcheck", get(|| async { "OK" }));
    let mut builder = Microversions::builder(args.service_type.clone(), history.range())
        .profile(args.profile)
        .version_neutral_routes(&router)
        .version_neutral("/history");
    if let Some(root) = &args.legacy_root {
        builder = builder.legacy_root(root.clone());
    }
    let api = builder.build()?;
    let discovery = discovery(&api, args)?;
    // The documents describe the API once, as served at its own root.
    let description = description(&api, &router, steps)?;
    if let Some(which) = &args.openapi {
        println!("{}", openapi(&api, &description, which)?);
        return Ok(None);
    }
    if let Some(root) = api.legacy_root() {
        router = routes(router, root)?;
    }
    eprintln!("routes:\n{}", router.table());
    let router = router
        .build_for(&api)?
        .with_state(state)
        .merge(discovery.router())
        .merge(history.router("/history", &[]))
        .layer(MicroversionLayer::new(api));
    Ok(Some(router))
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let result = async {
        let Some(router) = app(&args)? else {
            return Ok(());
        };
        let listener = tokio::net::TcpListener::bind(args.bind).await?;
        eprintln!(
            "demo {} API ({} profile, {} - {}) on http://{}",
            args.service_type,
            args.profile,
            args.min,
            args.max,
            listener.local_addr()?
        );
        // As in the crate's example: no answer waits on Nagle's algorithm.
        let listener = listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                eprintln!("demo: TCP_NODELAY not set on a connection: {e}");
            }
        });
        axum::serve(listener, router).await?;
        Ok::<(), Box<dyn std::error::Error>>(())
    }
    .await;
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
