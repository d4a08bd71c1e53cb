//! # Guide: adding a microversion
//!
//! Every change to the API's contract is a new microversion: a new URL, a
//! new or removed field, a changed status code, a newly accepted value or
//! query parameter, a changed meaning (docs/wire.md 14). Old clients keep the
//! old behaviour because they keep asking for the old version. Here is how
//! to add version `1.40` to a service built on this crate.
//!
//! ## 1. Declare it as a change
//!
//! Each microversion is a [`Change`](microversion::Change): a `const`
//! with its version and one line saying what it changed. The history is
//! the list of them, the one place where versions are listed; its last
//! entry is the API's maximum, so the layer, discovery and the docs pick
//! it up. The routes, schemas and responses of step 3 name the change
//! instead of writing `1.40` again. A change whose effect is inside a
//! handler only (a new error, a different search) is marked
//! [`behaviour`](microversion::Change::behaviour): for every other, the
//! API description checks that its version does change the documents.
//!
//! ```
//! use microversion::Change;
//! use microversion_server::history::VersionHistory;
//!
//! const COLOR: Change = Change::new("1.40", "GET /widgets/{id} returns the widget's color.");
//!
//! // `earlier` holds the changes of 1.0 to 1.39.
//! # let earlier: Vec<Change> = (0..40)
//! #     .map(|minor| Change::new(Box::leak(format!("1.{minor}").into_boxed_str()), "Earlier."))
//! #     .collect();
//! let history = VersionHistory::of(&[&earlier[..], &[COLOR]].concat())?;
//! assert_eq!(history.range().max().to_string(), "1.40");
//! # Ok::<(), microversion_server::BuildError>(())
//! ```
//!
//! ## 2. Serve the new range
//!
//! Build the API's [`Microversions`](crate::Microversions) from the
//! history's range, so the maximum is never written twice:
//!
//! ```
//! # use microversion_server::history::VersionHistory;
//! use microversion_server::{Microversions, Profile};
//! # let history = VersionHistory::builder().version("1.0", "a").version("1.1", "b").build()?;
//! let api = Microversions::builder("widgets", history.range())
//!     .profile(Profile::ApiSig)
//!     .build()?;
//! # Ok::<(), microversion_server::BuildError>(())
//! ```
//!
//! ## 3. Change the behaviour, only from 1.40
//!
//! Pick the smallest tool that expresses the change:
//!
//! - **A field added, removed, renamed or reshaped** (feature `derive`):
//!   say so on the field of the body's one type, and return it as a
//!   [`Versioned`](struct@crate::versioned::Versioned); each version's JSON
//!   Schema, for the OpenAPI documents, comes from the same definition
//!   (see [`versioned`](crate::versioned)):
//!
//!   ```
//!   use microversion_server::ServedVersion;
//!   use microversion_server::versioned::Versioned;
//!
//!   #[derive(Versioned)]
//!   #[versioned(response)]
//!   struct Widget {
//!       id: u64,
//!       name: String,
//!       #[versioned(since = "1.40")]
//!       color: Option<String>,
//!   }
//!
//!   async fn show(version: ServedVersion) -> Versioned<Widget> {
//!       let widget = Widget { id: 7, name: "gear".into(), color: Some("blue".into()) };
//!       Versioned::new(version, widget)
//!   }
//!   ```
//!
//! - **A success status changed**: declare it on the route with
//!   [`VersionedRouter::status`](crate::VersionedRouter::status); the
//!   handler keeps answering as before:
//!
//!   ```
//!   use http::{Method, StatusCode};
//!   use microversion::Change;
//!   use microversion_server::VersionedRouter;
//!
//!   const INITIAL: Change = Change::new("1.0", "Initial version.");
//!   const PAINTED: Change = Change::new("1.40", "POST /widgets answers 200 with the widget.");
//!
//!   # async fn create() -> (StatusCode, &'static str) { (StatusCode::CREATED, "{}") }
//!   let router: axum::Router = VersionedRouter::new()
//!       .post("/widgets", INITIAL.since(), create)
//!       .status("/widgets", &Method::POST, PAINTED.since(), StatusCode::OK)
//!       .build()?;
//!   # Ok::<(), microversion_server::BuildError>(())
//!   ```
//!
//! - **A field without the derive, or a change of behaviour**: branch
//!   inside the handler with [`ServedVersion`](crate::ServedVersion) and
//!   [`VersionSpan::contains`](microversion::VersionSpan::contains):
//!
//!   ```
//!   use axum::Json;
//!   use microversion::Change;
//!   use microversion_server::ServedVersion;
//!   use serde_json::{Value, json};
//!
//!   const COLOR: Change = Change::new("1.40", "GET /widgets/{id} returns the widget's color.");
//!
//!   async fn show(version: ServedVersion) -> Json<Value> {
//!       let mut widget = json!({"id": 7, "name": "gear"});
//!       if COLOR.since().contains(version) {
//!           widget["color"] = json!("blue");
//!       }
//!       Json(widget)
//!   }
//!   ```
//!
//! - **A new route, or a handler that differs a lot**: register it with a
//!   range in the [`VersionedRouter`](crate::VersionedRouter). Before 1.40
//!   the route answers 404, exactly as a path that does not exist. A route
//!   that goes away gets an end version. Overlapping ranges for one
//!   operation make `build()` fail, naming the path, method and ranges, so
//!   a mistake is found at start-up, not by a client.
//!
//!   ```
//!   use microversion::Change;
//!   use microversion_server::VersionedRouter;
//!
//!   const INITIAL: Change = Change::new("1.0", "Initial version.");
//!   const PAINT: Change = Change::new("1.40", "Adds POST /widgets/{id}/paint; lists are paged.");
//!
//!   # async fn list_old() {} async fn list_new() {} async fn paint() {}
//!   let router: axum::Router = VersionedRouter::new()
//!       .get("/widgets", INITIAL.until(PAINT), list_old)
//!       .get("/widgets", PAINT.since(), list_new)
//!       .post("/widgets/{id}/paint", PAINT.since(), paint)
//!       .build()?;
//!   # Ok::<(), microversion_server::BuildError>(())
//!   ```
//!
//! - **A request body that accepts something new**: add a field with
//!   `#[versioned(since = "1.40")]` to a `#[versioned(request)]` type read
//!   through [`BodySchemasBuilder::versioned`](crate::schema::BodySchemasBuilder::versioned),
//!   or add a schema for the new range to the operation's
//!   [`BodySchemas`](crate::BodySchemas), and end the old schema's range
//!   at 1.39. The schemas are bound to their operation on the router
//!   ([`VersionedRouter::body`](crate::VersionedRouter::body)), which
//!   checks when built that a handler serves every version they cover,
//!   and the OpenAPI description documents them from there.
//!
//! ## 4. Test both sides of the boundary
//!
//! For every change, test the last version without it (1.39) and the
//! first with it (1.40), through a real server on loopback: status,
//! headers and body. Give the history to the OpenAPI description
//! ([`ApiDescriptionBuilder::history`](crate::openapi::ApiDescriptionBuilder::history)):
//! it fails to build when a change not marked as one of behaviour makes
//! no difference in the documents, and
//! [`ApiDescription::differences`](crate::openapi::ApiDescription::differences)
//! lists what each version changed. The route table
//! ([`VersionedRouter::table`](crate::VersionedRouter::table)) shows every
//! route's range for the reference docs, and
//! [`VersionHistory::to_markdown`](crate::VersionHistory::to_markdown)
//! renders the history.
//!
//! ## 5. Deprecate, later
//!
//! To retire old versions, first mark them with a
//! [`Deprecation`](crate::Deprecation): responses served at them carry
//! `Deprecation` and `Sunset` headers, and the telemetry shows who still
//! uses them; an operation that goes away later is marked alone with
//! [`VersionedRouter::deprecate`](crate::VersionedRouter::deprecate).
//! Raising the minimum is the only breaking change, and the only "major"
//! one: an operator makes it without a rebuild
//! ([`MicroversionsBuilder::served_range`](crate::MicroversionsBuilder::served_range),
//! [`Microversions::set_served_range`](crate::Microversions::set_served_range)),
//! and caps the maximum the same way while a cloud is half upgraded.
