//! OpenStack-style API microversions for tower and axum services.
//!
//! Nova, Cinder, Ironic and Placement each implement microversions by hand.
//! This crate does it once, as a tower layer with axum integration:
//!
//! - [`MicroversionLayer`] negotiates the version of every request
//!   (`OpenStack-API-Version: placement 1.20`; none means the minimum,
//!   `latest` the maximum), answers malformed versions with 400 and
//!   unsupported ones with 406, and sets the version, `Vary` and request id
//!   headers on every response, errors included.
//! - [`ServedVersion`] gives a handler the negotiated version, with
//!   [`VersionSpan::contains`](microversion::VersionSpan::contains) for small
//!   differences.
//! - [`VersionedRouter`] picks a handler by path, method and version, and
//!   refuses to build when two handlers of one operation overlap or
//!   ([`VersionedRouter::build_for`]) reach outside the API's range.
//! - [`Profile`] reproduces the observable behaviour of real servers
//!   (`api-sig`, `placement`, `nova`, `ironic`, `cinder`).
//! - [`ApiError`] renders errors in the profile's body format.
//!
//!   The layer words its refusals and renders error bodies as API-SIG
//!   does, unless the rules name another wording
//!   ([`Messages`](profile::Messages)) or body format
//!   ([`ErrorFormat`](profile::ErrorFormat)). Both are closed sets that
//!   the crate matches exhaustively, each profile's texts in a module of
//!   its own, so a new one cannot fall back to API-SIG's unnoticed.
//!   Upstream Placement's Python `int()` messages and webob error pages
//!   are used only under Placement's rules.
//! - `#[derive(Versioned)]` (feature `derive`) makes one type serve every
//!   version of a body: written, read and described (JSON Schema) at the
//!   served version, from field attributes checked when the program is
//!   compiled (the `versioned` module).
//! - [`BodySchemas`] and [`VersionedJson`] pick a request body schema by
//!   version, with the same overlap check, bound to their operation on
//!   the router ([`VersionedRouter::body`]); [`StrictQuery`] refuses query
//!   parameters it does not know.
//! - [`MicroversionsBuilder::legacy_root`] serves the minimum under a root
//!   of its own (Nova's `/v2` beside `/v2.1`), without version headers
//!   and with relaxed validation ([`LegacyRequest`]).
//! - [`Discovery`] serves the versions document at `GET /` and the
//!   versioned roots; [`VersionHistory`] keeps every microversion with a
//!   one-line description in one place.
//! - [`Deprecation`] marks old versions (`Deprecation` and `Sunset`
//!   headers), and [`telemetry`] counts who uses which version.
//!
//! The [`guide`] walks through adding a microversion to a service.
//!
//! # Example
//!
//! ```no_run
//! use axum::Json;
//! use axum::serve::ListenerExt;
//! use microversion::{Version, VersionRange, VersionSpan};
//! use microversion_server::{MicroversionLayer, Microversions, Profile, ServedVersion, VersionedRouter};
//! use serde_json::{Value, json};
//!
//! async fn show(version: ServedVersion) -> Json<Value> {
//!     let mut body = json!({"name": "rp1"});
//!     // A field added in 1.14: branch inside the handler.
//!     if VersionSpan::from_static("1.14 - latest").contains(version) {
//!         body["parent_provider_uuid"] = Value::Null;
//!     }
//!     Json(body)
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
//!     .profile(Profile::Placement)
//!     .build()?;
//! let app = VersionedRouter::new()
//!     .get("/thing", VersionSpan::ALL, show)
//!     .build_for(&api)?
//!     .layer(MicroversionLayer::new(api));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8778")
//!     .await?
//!     // An answer written in several pieces (a streamed body) would
//!     // otherwise hold its last piece until the client acknowledges the
//!     // one before, which Linux clients delay by up to 40 ms.
//!     .tap_io(|tcp| {
//!         if let Err(e) = tcp.set_nodelay(true) {
//!             tracing::warn!("TCP_NODELAY not set on a connection: {e}");
//!         }
//!     });
//! axum::serve(listener, app).await?;
//! # Ok(()) }
//! ```
//!
//! # Features
//!
//! - `metrics`: request counters by version, client and outcome, by
//!   client, project and how the version was asked, and by route
//!   template, method and status with latency histograms, in the
//!   Prometheus text format (see [`telemetry`]).
//! - `json-schema`: request bodies validated against JSON Schema documents;
//!   with [`MessageStyle::Python`], errors worded as Python's jsonschema
//!   words them (the `jsonschema-python-messages` crate).
//! - `openapi`: OpenAPI 3.1 documents of the API, per version and for the
//!   whole range (the `openapi` module).
//! - `schemars`: `openapi`, with schemas derived from Rust types.
//! - `derive`: `schemars`, with `#[derive(Versioned)]`: one type for every
//!   version of a body, written, read and described at each version (the
//!   [`versioned`] module).
//! - `reference-page`: `openapi`, with an API reference page and its
//!   version picker (`openapi::ReferencePage`). Its renderer, Swagger UI,
//!   is bundled at build time from the `swagger-ui-dist` crate, whose
//!   package holds the files (no build script, nothing downloaded), so
//!   the build needs nothing but the crate registry and the page fetches
//!   nothing at run time; see the `openapi` module.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod config;
pub mod deprecation;
mod dialect;
pub mod discovery;
mod error;
mod extract;
pub mod guide;
pub mod history;
mod html;
mod kept;
mod layer;
#[cfg(feature = "openapi")]
pub mod openapi;
mod query;
pub mod routing;
pub mod schema;
mod served;
pub mod telemetry;
pub mod tutorial;
#[cfg(feature = "derive")]
pub mod versioned;

pub use crate::config::{
    Microversions, MicroversionsBuilder, NegotiationOutcome, REQUEST_ID, VersionRefused,
};
pub use crate::deprecation::Deprecation;
pub use crate::discovery::{ApiVersionSpec, Discovery};
pub use crate::error::{ApiError, BindingProblem, BuildError, NeutralRouteProblem, RouteConflict};
pub use crate::extract::{LegacyRequest, MissingLayer, RequestId, ServedVersion};
pub use crate::history::VersionHistory;
pub use crate::layer::{Microversion, MicroversionLayer, ResponseFuture};
pub use crate::query::StrictQuery;
pub use crate::routing::{RouteTable, VersionedRouter};
pub use crate::schema::{BodyError, BodySchemas, MessageStyle, VersionedJson};
pub use crate::served::{InvalidServedRange, check_served_range};
#[cfg(feature = "metrics")]
pub use crate::telemetry::Telemetry;
#[cfg(feature = "derive")]
pub use crate::versioned::Versioned;
/// The `schemars` crate the `schemars` feature derives schemas with: a
/// service's `#[derive(JsonSchema)]` types need the same version.
#[cfg(feature = "schemars")]
pub use schemars;
// The profiles live in the core crate (the checker reads them without a
// server); they stay reachable here, where servers configure them.
pub use microversion::profile::{self, Profile, Rules};

/// The README's examples, compiled and run as doc tests so that they stay
/// true (with the `derive` feature, which one of them shows).
#[doc = include_str!("../README.md")]
#[cfg(all(doctest, feature = "derive"))]
pub struct ReadmeDoctests;
