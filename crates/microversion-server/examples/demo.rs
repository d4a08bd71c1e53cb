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
//! version-neutral; `/history` serves the version history.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use clap::Parser;
use http::StatusCode;
use microversion::{Version, VersionRange, VersionSpan};
use microversion_server::history::VersionHistory;
use microversion_server::schema::{BodySchemas, VersionedJson};
use microversion_server::{
    ApiError, Discovery, MicroversionLayer, Microversions, Profile, ServedVersion, VersionedRouter,
};
use serde::Deserialize;
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

fn render(id: u64, w: &Widget, version: Version, steps: Steps) -> Value {
    let mut body = json!({"id": id, "name": w.name});
    if version >= steps.color_field {
        body["color"] = json!(w.color);
    }
    body
}

async fn list(State(s): State<AppState>, v: ServedVersion) -> Json<Value> {
    let widgets: Vec<Value> = s
        .widgets()
        .iter()
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

#[derive(Deserialize)]
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

#[derive(Deserialize)]
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

async fn stats(State(s): State<AppState>) -> Json<Value> {
    Json(json!({"widget_count": s.widgets().len()}))
}

async fn gadgets() -> Json<Value> {
    Json(json!({"gadgets": [{"id": 1, "name": "sprocket"}]}))
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

fn app(args: &Args) -> Result<Router, Box<dyn std::error::Error>> {
    let range = VersionRange::new(args.min, args.max)?;
    let steps = Steps::from_min(args.min);
    let history = history(range, steps)?;
    let api = Microversions::builder(args.service_type.clone(), history.range())
        .profile(args.profile)
        .version_neutral("/healthcheck")
        .version_neutral("/history")
        .build()?;
    let discovery = Discovery::single(&api, &format!("v{}", args.min))?;
    let since = |v: Version| VersionSpan::new(v, None);
    let until = |v: Version| VersionSpan::new(args.min, Some(v));
    let state = AppState {
        widgets: Arc::default(),
        steps,
    };
    let schemas = BodySchemas::<NewWidget>::builder("POST /widgets")
        .serde::<NewWidgetV1>(until(Steps::before(steps.color_in_body))?)
        .serde::<NewWidgetWithColor>(since(steps.color_in_body)?)
        .build()?;
    let routes = VersionedRouter::new()
        .get("/widgets", VersionSpan::ALL, list)
        .post("/widgets", VersionSpan::ALL, create)
        .get("/widgets/{id}", VersionSpan::ALL, show)
        .delete("/widgets/{id}", VersionSpan::ALL, delete)
        .get(
            "/stats",
            until(Steps::before(steps.create_returns_200))?,
            stats,
        )
        .get("/gadgets", since(steps.create_returns_200)?, gadgets);
    eprintln!("routes:\n{}", routes.table());
    let router = routes
        .build()?
        .layer(schemas.extension())
        .with_state(state)
        .merge(discovery.router())
        .merge(history.router("/history", None))
        .route("/healthcheck", get(|| async { "OK" }))
        .layer(MicroversionLayer::new(api));
    Ok(router)
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let result = async {
        let router = app(&args)?;
        let listener = tokio::net::TcpListener::bind(args.bind).await?;
        eprintln!(
            "demo {} API ({} profile, {} - {}) on http://{}",
            args.service_type,
            args.profile,
            args.min,
            args.max,
            listener.local_addr()?
        );
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
