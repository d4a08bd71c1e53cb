//! Versioned routing: several handlers for one method and path, each for a
//! range of versions, checked for overlaps when the router is built.
//!
//! ```
//! use axum::Json;
//! use http::Method;
//! use microversion::VersionSpan;
//! use microversion_server::VersionedRouter;
//! use serde_json::json;
//!
//! async fn list_v1() -> Json<serde_json::Value> { Json(json!({"items": []})) }
//! async fn list_v5() -> Json<serde_json::Value> { Json(json!({"items": [], "next": null})) }
//!
//! let routes = VersionedRouter::new()
//!     .route("/items", Method::GET, VersionSpan::from_static("1.0 - 1.4"), list_v1)
//!     .route("/items", Method::GET, VersionSpan::from_static("1.5 - latest"), list_v5);
//! println!("{}", routes.table());
//! let router: axum::Router = routes.build()?;
//! # Ok::<(), microversion_server::BuildError>(())
//! ```
//!
//! A request whose version no handler covers gets 404, exactly as a path
//! that does not exist (docs/wire.md 15); [`VersionedRouter::unavailable_status`]
//! changes that for one operation (Placement answers 405 for some), and
//! [`VersionedRouter::methods_at_every_version`] makes a path's unknown
//! methods 405 at every version (Placement's routing).

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::handler::Handler;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, any};
use http::header::ALLOW;
use http::{HeaderValue, Method, StatusCode};
use microversion::{VersionRange, VersionSpan};

use crate::config::Microversions;
use crate::deprecation::Deprecation;
use crate::error::{ApiError, BindingProblem, BuildError, NeutralRouteProblem, RouteConflict};
use crate::extract::ServedVersion;
use crate::schema::{BodySchemas, BoundSchemas};

/// Finds the first pair of overlapping ranges, in registration order.
pub(crate) fn find_overlap(ranges: &[VersionSpan]) -> Option<(VersionSpan, VersionSpan)> {
    ranges.iter().enumerate().find_map(|(i, a)| {
        ranges[i + 1..]
            .iter()
            .find(|b| a.overlaps(**b))
            .map(|b| (*a, *b))
    })
}

type BoxFuture = Pin<Box<dyn Future<Output = Response> + Send>>;
type BoxedHandler<S> = Arc<dyn Fn(Request, S) -> BoxFuture + Send + Sync>;
/// Entries grouped by path, then by method, in registration order.
type Grouped<S> = Vec<(String, Vec<(Method, Vec<Entry<S>>)>)>;

struct Entry<S> {
    path: String,
    method: Method,
    versions: VersionSpan,
    handler: BoxedHandler<S>,
}

/// `future` as a [`BoxFuture`], without boxing it again when it already is
/// one: axum's handlers made from `async fn`s answer with exactly that type,
/// so a second box would cost every request an allocation for nothing.
fn boxed<F>(future: F) -> BoxFuture
where
    F: Future<Output = Response> + Send + 'static,
{
    let mut slot = Some(future);
    let already = (&mut slot as &mut dyn Any)
        .downcast_mut::<Option<BoxFuture>>()
        .and_then(Option::take);
    match (already, slot) {
        (Some(future), _) => future,
        (None, Some(future)) => Box::pin(future),
        // The slot is only emptied when the downcast took the future.
        (None, None) => Box::pin(std::future::ready(
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "handler future lost").into_response(),
        )),
    }
}

/// One row of the route table.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RouteInfo {
    /// The method.
    pub method: String,
    /// The path pattern.
    pub path: String,
    /// The versions the handler serves, as text (`1.0 - 1.4`, `all`).
    pub versions: String,
    /// The first version.
    pub min_version: String,
    /// The last version, `None` for the newest.
    pub max_version: Option<String>,
}

/// Every route with its versions: for documentation and debugging.
///
/// Gaps (a method removed at some version) show as missing ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct RouteTable {
    rows: Vec<RouteInfo>,
}

impl RouteTable {
    /// The rows, sorted by path, method and first version.
    #[must_use]
    pub fn rows(&self) -> &[RouteInfo] {
        &self.rows
    }

    /// The table in Markdown.
    #[must_use]
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("| method | path | versions |\n|---|---|---|\n");
        for r in &self.rows {
            out.push_str(&format!(
                "| {} | `{}` | {} |\n",
                r.method, r.path, r.versions
            ));
        }
        out
    }
}

impl fmt::Display for RouteTable {
    /// Aligned plain text, one route per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self.rows.iter().map(|r| r.path.len()).max().unwrap_or(0);
        for r in &self.rows {
            writeln!(f, "{:<7} {:<width$}  {}", r.method, r.path, r.versions)?;
        }
        Ok(())
    }
}

/// A router whose handlers are chosen by path, method and served version.
///
/// Build it into an [`axum::Router`] with [`VersionedRouter::build_for`]
/// (or [`VersionedRouter::build`] without a [`Microversions`]), which
/// fails when two handlers of one operation overlap or one reaches outside
/// the API's range, and wrap the result in
/// [`MicroversionLayer`](crate::MicroversionLayer). Unknown paths answer
/// 404 and unknown methods 405, with `Allow` naming the methods served at
/// the request's version; a path with no handler at that version answers
/// 404 to every method, as if it did not exist. All are rendered like
/// every other error.
#[must_use]
pub struct VersionedRouter<S = ()> {
    entries: Vec<Entry<S>>,
    unavailable: BTreeMap<(String, String), StatusCode>,
    every_version: BTreeSet<String>,
    /// Deprecations of one operation, by path and method.
    deprecated: BTreeMap<(String, String), Vec<Deprecation>>,
    /// Version-neutral routes, in registration order.
    neutral: Vec<(String, MethodRouter<S>)>,
    /// Request body schemas bound to one operation, by path and method.
    bodies: Vec<(String, Method, Arc<dyn BoundSchemas>)>,
    /// Success statuses set by version on one operation.
    statuses: Vec<(String, Method, VersionSpan, StatusCode)>,
}

impl<S> fmt::Debug for VersionedRouter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VersionedRouter")
            .field("routes", &self.entries.len())
            .finish_non_exhaustive()
    }
}

impl<S> Default for VersionedRouter<S>
where
    S: Clone + Send + Sync + 'static,
{
    fn default() -> Self {
        Self::new()
    }
}

impl<S> VersionedRouter<S>
where
    S: Clone + Send + Sync + 'static,
{
    /// An empty router.
    pub fn new() -> Self {
        VersionedRouter {
            entries: Vec::new(),
            unavailable: BTreeMap::new(),
            every_version: BTreeSet::new(),
            deprecated: BTreeMap::new(),
            neutral: Vec::new(),
            bodies: Vec::new(),
            statuses: Vec::new(),
        }
    }

    /// Serves `path` with `route` at no version: a health check, a
    /// metrics page. The path is written once, here:
    /// [`MicroversionsBuilder::version_neutral_routes`](crate::MicroversionsBuilder::version_neutral_routes)
    /// makes the versioning skip negotiation for it (no version read,
    /// none echoed), and [`VersionedRouter::build_for`] checks that the
    /// versioning it is built for does.
    ///
    /// ```
    /// use axum::routing::get;
    /// use microversion::{VersionRange, VersionSpan};
    /// use microversion_server::{Microversions, VersionedRouter};
    ///
    /// let routes = VersionedRouter::<()>::new()
    ///     .get("/things", VersionSpan::ALL, || async { "things" })
    ///     .neutral("/healthcheck", get(|| async { "OK" }));
    /// let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
    ///     .version_neutral_routes(&routes)
    ///     .build()?;
    /// assert!(api.is_version_neutral("/healthcheck"));
    /// let router = routes.build_for(&api)?;
    /// # Ok::<(), microversion_server::BuildError>(())
    /// ```
    ///
    /// A path given twice, a pattern (version-neutral paths are matched
    /// exactly), a path with handlers by version too, or (for
    /// [`VersionedRouter::build_for`]) one the versioning negotiates fails
    /// the build with [`BuildError::NeutralRoute`].
    pub fn neutral(mut self, path: &str, route: MethodRouter<S>) -> Self {
        self.neutral.push((path.to_owned(), route));
        self
    }

    /// The paths of the version-neutral routes ([`VersionedRouter::neutral`]).
    pub fn neutral_paths(&self) -> impl Iterator<Item = &str> {
        self.neutral.iter().map(|(path, _)| path.as_str())
    }

    /// Adds a handler for `method` on `path` (axum path syntax, such as
    /// `/resource_providers/{uuid}`) at `versions`.
    pub fn route<H, T>(
        mut self,
        path: &str,
        method: Method,
        versions: VersionSpan,
        handler: H,
    ) -> Self
    where
        H: Handler<T, S>,
        T: 'static,
    {
        let handler: BoxedHandler<S> =
            Arc::new(move |req, state| boxed(handler.clone().call(req, state)));
        self.entries.push(Entry {
            path: path.to_owned(),
            method,
            versions,
            handler,
        });
        self
    }

    /// Adds a GET handler.
    pub fn get<H, T>(self, path: &str, versions: VersionSpan, handler: H) -> Self
    where
        H: Handler<T, S>,
        T: 'static,
    {
        self.route(path, Method::GET, versions, handler)
    }

    /// Adds a POST handler.
    pub fn post<H, T>(self, path: &str, versions: VersionSpan, handler: H) -> Self
    where
        H: Handler<T, S>,
        T: 'static,
    {
        self.route(path, Method::POST, versions, handler)
    }

    /// Adds a PUT handler.
    pub fn put<H, T>(self, path: &str, versions: VersionSpan, handler: H) -> Self
    where
        H: Handler<T, S>,
        T: 'static,
    {
        self.route(path, Method::PUT, versions, handler)
    }

    /// Adds a PATCH handler.
    pub fn patch<H, T>(self, path: &str, versions: VersionSpan, handler: H) -> Self
    where
        H: Handler<T, S>,
        T: 'static,
    {
        self.route(path, Method::PATCH, versions, handler)
    }

    /// Adds a DELETE handler.
    pub fn delete<H, T>(self, path: &str, versions: VersionSpan, handler: H) -> Self
    where
        H: Handler<T, S>,
        T: 'static,
    {
        self.route(path, Method::DELETE, versions, handler)
    }

    /// Binds `schemas` to `method` on `path`: [`VersionedJson`](crate::VersionedJson)
    /// in that operation's handlers reads its body with them, whatever
    /// other operation takes the same body type. The API description
    /// ([`ApiDescriptionBuilder::routes`](crate::openapi::ApiDescriptionBuilder::routes))
    /// documents them as the operation's request body.
    ///
    /// ```
    /// use http::Method;
    /// use microversion::VersionSpan;
    /// use microversion_server::{BodySchemas, VersionedJson, VersionedRouter};
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize)]
    /// #[serde(deny_unknown_fields)]
    /// struct Name { name: String }
    ///
    /// async fn create(VersionedJson(body): VersionedJson<Name>) -> String { body.name }
    /// async fn rename(VersionedJson(body): VersionedJson<Name>) -> String { body.name }
    ///
    /// let create_body = BodySchemas::<Name>::builder("POST /things")
    ///     .serde::<Name>(VersionSpan::ALL)
    ///     .build()?;
    /// let rename_body = BodySchemas::<Name>::builder("PUT /things/{id}")
    ///     .serde::<Name>(VersionSpan::from_static("1.2 - latest"))
    ///     .build()?;
    /// let router: axum::Router = VersionedRouter::new()
    ///     .post("/things", VersionSpan::ALL, create)
    ///     .body("/things", Method::POST, create_body)
    ///     .put("/things/{id}", VersionSpan::from_static("1.2 - latest"), rename)
    ///     .body("/things/{id}", Method::PUT, rename_body)
    ///     .build()?;
    /// # Ok::<(), microversion_server::BuildError>(())
    /// ```
    ///
    /// Building fails with [`BuildError::Binding`] when the operation
    /// is not routed, has schemas bound twice, or a schema covers a version
    /// none of its handlers serves.
    ///
    /// One set of schemas may serve several operations (the same path
    /// under a legacy root, say): give each an `Arc` of it.
    pub fn body<T>(
        mut self,
        path: &str,
        method: Method,
        schemas: impl Into<Arc<BodySchemas<T>>>,
    ) -> Self
    where
        T: Send + Sync + 'static,
    {
        let schemas: Arc<BodySchemas<T>> = schemas.into();
        self.bodies.push((path.to_owned(), method, schemas));
        self
    }

    /// The success statuses set by version on each operation
    /// ([`VersionedRouter::status`]), for its documents.
    #[cfg(feature = "openapi")]
    pub(crate) fn success_statuses(&self) -> Vec<(Method, String, VersionSpan, StatusCode)> {
        self.statuses
            .iter()
            .map(|(path, method, versions, status)| {
                (method.clone(), path.clone(), *versions, *status)
            })
            .collect()
    }

    /// The request body schemas bound to each operation, for its documents.
    #[cfg(feature = "openapi")]
    pub(crate) fn bound_bodies(&self) -> Vec<crate::openapi::BoundBody> {
        self.bodies
            .iter()
            .map(|(path, method, schemas)| {
                (
                    method.clone(),
                    path.clone(),
                    schemas.schemas_name().to_owned(),
                    schemas.documented(),
                )
            })
            .collect()
    }

    /// At `versions`, a success answer (2xx) of `method` on `path` gets
    /// `status`, whatever its handler set, as Nova's
    /// `@wsgi.response(code, min, max)` does: a status that changes with
    /// the version is declared on the route, not branched in the handler.
    ///
    /// ```
    /// use http::{Method, StatusCode};
    /// use microversion::Change;
    /// use microversion_server::VersionedRouter;
    ///
    /// const INITIAL: Change = Change::new("1.0", "Initial version.");
    /// const CREATED_AS_200: Change = Change::new("1.5", "POST /widgets answers 200 with the widget.");
    ///
    /// # async fn create() -> (StatusCode, &'static str) { (StatusCode::CREATED, "{}") }
    /// let router: axum::Router = VersionedRouter::new()
    ///     .post("/widgets", INITIAL.since(), create)
    ///     .status("/widgets", &Method::POST, CREATED_AS_200.since(), StatusCode::OK)
    ///     .build()?;
    /// # Ok::<(), microversion_server::BuildError>(())
    /// ```
    ///
    /// Building fails with [`BuildError::Binding`] when the operation is
    /// not routed, two statuses of it overlap, or one covers a version no
    /// handler of it serves; the API description
    /// ([`ApiDescriptionBuilder::routes`](crate::openapi::ApiDescriptionBuilder::routes))
    /// fails to build when the documents declare another success at one
    /// of those versions.
    pub fn status(
        mut self,
        path: &str,
        method: &Method,
        versions: VersionSpan,
        status: StatusCode,
    ) -> Self {
        self.statuses
            .push((path.to_owned(), method.clone(), versions, status));
        self
    }

    /// The spans of the handlers of `method` on `path`, by start.
    fn served(&self, path: &str, method: &Method) -> Vec<VersionSpan> {
        let mut served: Vec<VersionSpan> = self
            .entries
            .iter()
            .filter(|e| e.path == path && e.method == *method)
            .map(|e| e.versions)
            .collect();
        served.sort_by_key(|span| span.start());
        served
    }

    /// The problem of the first body schemas or status bound to an
    /// operation that cannot use them.
    fn check_bindings(&self) -> Result<(), BuildError> {
        let bodies = self
            .bodies
            .iter()
            .map(|(path, method, schemas)| ("request body schemas", path, method, schemas.spans()));
        let statuses = self
            .statuses
            .iter()
            .map(|(path, method, versions, _)| ("a success status", path, method, vec![*versions]));
        let bindings: Vec<_> = bodies.chain(statuses).collect();
        for (i, (what, path, method, spans)) in bindings.iter().enumerate() {
            let served = self.served(path, method);
            let earlier = bindings[..i]
                .iter()
                .filter(|(w, p, m, _)| w == what && p == path && m == method)
                .flat_map(|(_, _, _, spans)| spans);
            let repeated = earlier
                .flat_map(|before| spans.iter().filter_map(|span| before.intersect(*span)))
                .next();
            let problem = if served.is_empty() {
                Some(BindingProblem::NotRouted)
            } else if let Some(versions) = repeated {
                Some(BindingProblem::Repeated(versions))
            } else {
                spans
                    .iter()
                    .find(|span| !covered(**span, &served))
                    .map(|span| BindingProblem::Unserved(*span))
            };
            if let Some(problem) = problem {
                return Err(BuildError::Binding {
                    what,
                    path: (*path).clone(),
                    method: (*method).clone(),
                    problem,
                });
            }
        }
        Ok(())
    }

    /// The status for a request to this operation at a version no handler
    /// serves (default 404; Placement uses 405 for some operations).
    pub fn unavailable_status(mut self, path: &str, method: &Method, status: StatusCode) -> Self {
        self.unavailable
            .insert((path.to_owned(), method.as_str().to_owned()), status);
        self
    }

    /// Deprecates `method` on `path` at the versions `deprecation` covers:
    /// an operation that goes away at a later version (it is served up to
    /// there, then answers as if it did not exist), announced on the
    /// responses of the versions it still has (`Deprecation`, `Sunset`,
    /// `Link`) and in the OpenAPI documents, while the rest of the API at
    /// those versions is not deprecated. Where the whole version is
    /// deprecated too, the operation's own dates are sent.
    ///
    /// ```
    /// use std::time::{Duration, UNIX_EPOCH};
    /// use http::Method;
    /// use microversion::VersionSpan;
    /// use microversion_server::{Deprecation, VersionedRouter};
    ///
    /// // DELETE /widgets/{id} is gone from 1.4 on; 1.0 to 1.3 announce it.
    /// let router: VersionedRouter = VersionedRouter::new()
    ///     .delete("/widgets/{id}", VersionSpan::from_static("1.0 - 1.3"), || async { "" })
    ///     .deprecate(
    ///         "/widgets/{id}",
    ///         &Method::DELETE,
    ///         Deprecation::versions(VersionSpan::from_static("1.0 - 1.3"), UNIX_EPOCH)
    ///             .sunset(UNIX_EPOCH + Duration::from_secs(1_800_000_000)),
    ///     );
    /// # let _ = router.build().unwrap();
    /// ```
    pub fn deprecate(mut self, path: &str, method: &Method, deprecation: Deprecation) -> Self {
        self.deprecated
            .entry((path.to_owned(), method.as_str().to_owned()))
            .or_default()
            .push(deprecation);
        self
    }

    /// The deprecations of each operation, for its documents.
    #[cfg(feature = "openapi")]
    pub(crate) fn operation_deprecations(&self) -> Vec<(Method, String, Vec<Deprecation>)> {
        self.deprecated
            .iter()
            .filter_map(|((path, method), list)| {
                Some((
                    Method::from_bytes(method.as_bytes()).ok()?,
                    path.clone(),
                    list.clone(),
                ))
            })
            .collect()
    }

    /// Declares the methods of `path` at every version, as Placement's
    /// routing does: a method registered for no version of the path answers
    /// 405 at every version, with `Allow` naming every method registered
    /// for it, instead of 404 at versions where none is served. A
    /// registered method at a version it does not serve still gets its
    /// unavailable status.
    pub fn methods_at_every_version(mut self, path: &str) -> Self {
        self.every_version.insert(path.to_owned());
        self
    }

    /// The route table.
    #[must_use]
    pub fn table(&self) -> RouteTable {
        let mut rows: Vec<(&str, &Method, VersionSpan)> = self
            .entries
            .iter()
            .map(|e| (e.path.as_str(), &e.method, e.versions))
            .collect();
        rows.sort_by(|a, b| {
            (a.0, a.1.as_str(), a.2.start()).cmp(&(b.0, b.1.as_str(), b.2.start()))
        });
        RouteTable {
            rows: rows
                .into_iter()
                .map(|(path, method, versions)| RouteInfo {
                    method: method.to_string(),
                    path: path.to_owned(),
                    versions: versions.to_string(),
                    min_version: versions.start().to_string(),
                    max_version: versions.end().map(|v| v.to_string()),
                })
                .collect(),
        }
    }

    /// Every operation with the versions of each of its handlers, in
    /// registration order (for the OpenAPI generator).
    #[cfg(feature = "openapi")]
    pub(crate) fn route_versions(&self) -> Vec<crate::openapi::RouteVersions> {
        let mut out: Vec<crate::openapi::RouteVersions> = Vec::new();
        for e in &self.entries {
            match out
                .iter_mut()
                .find(|(method, path, _)| *method == e.method && *path == e.path)
            {
                Some((_, _, spans)) => spans.push(e.versions),
                None => out.push((e.method.clone(), e.path.clone(), vec![e.versions])),
            }
        }
        out
    }

    /// Checks every operation for overlapping ranges and builds the router,
    /// without knowing the API's range: a handler's versions are taken as
    /// written. A service whose [`Microversions`] is built first uses
    /// [`VersionedRouter::build_for`], which also refuses versions outside
    /// its range.
    ///
    /// # Errors
    ///
    /// Returns [`BuildError::Overlap`] naming the path, the method and both
    /// ranges when two handlers of one operation overlap.
    ///
    /// # Panics
    ///
    /// axum panics on an invalid path pattern (such as one with an unclosed
    /// `{`): a programmer error in a literal. Each path takes every method,
    /// so adding an axum route for the same path to the built router panics
    /// too: register every method of a path here.
    pub fn build(self) -> Result<Router<S>, BuildError> {
        self.build_within(None)
    }

    /// [`VersionedRouter::build`] for the API `api` describes: also
    /// refuses a handler whose versions reach outside the range its code
    /// implements ([`Microversions::code_range`]; an operator's narrower
    /// served range may change while serving and does not count). A span
    /// ending at `latest` only needs to start inside the range, and
    /// [`VersionSpan::ALL`] fits every range.
    ///
    /// ```
    /// use microversion::{VersionRange, VersionSpan};
    /// use microversion_server::{Microversions, VersionedRouter};
    ///
    /// let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
    ///     .build()?;
    /// let ok = VersionedRouter::<()>::new()
    ///     .get("/things", VersionSpan::from_static("1.0 - 1.4"), || async { "old" })
    ///     .get("/things", VersionSpan::from_static("1.5 - latest"), || async { "new" })
    ///     .build_for(&api);
    /// assert!(ok.is_ok());
    /// let err = VersionedRouter::<()>::new()
    ///     .get("/things", VersionSpan::from_static("1.38 - 1.40"), || async { "" })
    ///     .build_for(&api)
    ///     .unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "the handler of GET /things for 1.38 - 1.40 reaches outside the supported range 1.0 - 1.39"
    /// );
    /// # Ok::<(), microversion_server::BuildError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`BuildError::RouteOutsideRange`] naming the operation, its
    /// versions and the range, [`BuildError::NeutralRoute`] for a
    /// version-neutral route `api` negotiates, and those of
    /// [`VersionedRouter::build`].
    ///
    /// # Panics
    ///
    /// As [`VersionedRouter::build`].
    pub fn build_for(self, api: &Microversions) -> Result<Router<S>, BuildError> {
        self.build_within(Some(api))
    }

    /// The problem of the first version-neutral route that has one.
    fn check_neutral(&self, api: Option<&Microversions>) -> Result<(), BuildError> {
        for (i, (path, _)) in self.neutral.iter().enumerate() {
            let problem = if path.contains(['{', '}', '*']) {
                Some(NeutralRouteProblem::Pattern)
            } else if self.neutral[..i].iter().any(|(p, _)| p == path) {
                Some(NeutralRouteProblem::Repeated)
            } else if self.entries.iter().any(|e| e.path == *path) {
                Some(NeutralRouteProblem::Versioned)
            } else if api.is_some_and(|api| !api.is_version_neutral(path)) {
                Some(NeutralRouteProblem::Negotiated)
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(BuildError::NeutralRoute {
                    path: path.clone(),
                    problem,
                });
            }
        }
        Ok(())
    }

    fn build_within(self, api: Option<&Microversions>) -> Result<Router<S>, BuildError> {
        self.check_neutral(api)?;
        self.check_bindings()?;
        if let Some(range) = api.map(Microversions::code_range)
            && let Some(e) = self.entries.iter().find(|e| !span_fits(e.versions, range))
        {
            return Err(BuildError::RouteOutsideRange {
                path: e.path.clone(),
                method: e.method.clone(),
                versions: e.versions,
                range,
            });
        }
        // Group by path, then method, keeping registration order.
        let mut paths: Grouped<S> = Vec::new();
        for entry in self.entries {
            let methods = match paths.iter_mut().find(|(p, _)| *p == entry.path) {
                Some((_, methods)) => methods,
                None => {
                    paths.push((entry.path.clone(), Vec::new()));
                    &mut paths.last_mut().expect("just pushed").1
                }
            };
            match methods.iter_mut().find(|(m, _)| *m == entry.method) {
                Some((_, entries)) => entries.push(entry),
                None => methods.push((entry.method.clone(), vec![entry])),
            }
        }
        let mut router = Router::new();
        for (path, methods) in paths {
            let mut operations = Vec::with_capacity(methods.len());
            for (method, entries) in methods {
                let ranges: Vec<VersionSpan> = entries.iter().map(|e| e.versions).collect();
                if let Some((first, second)) = find_overlap(&ranges) {
                    return Err(BuildError::Overlap(RouteConflict {
                        path,
                        method: Some(method),
                        first,
                        second,
                    }));
                }
                let key = (path.clone(), method.as_str().to_owned());
                let unavailable = self
                    .unavailable
                    .get(&key)
                    .copied()
                    .unwrap_or(StatusCode::NOT_FOUND);
                let deprecated = self.deprecated.get(&key).cloned().unwrap_or_default();
                let body = self
                    .bodies
                    .iter()
                    .find(|(p, m, _)| *p == path && *m == method)
                    .map(|(_, _, schemas)| Arc::clone(schemas));
                let statuses = self
                    .statuses
                    .iter()
                    .filter(|(p, m, _, _)| *p == path && *m == method)
                    .map(|(_, _, versions, status)| (*versions, *status))
                    .collect();
                operations.push(Operation {
                    deprecated: deprecated.into(),
                    body,
                    statuses,
                    method,
                    handlers: entries
                        .into_iter()
                        .map(|e| (e.versions, e.handler))
                        .collect(),
                    unavailable,
                });
            }
            let operations: Arc<[Operation<S>]> = operations.into();
            let every_version = self.every_version.contains(&path);
            // One handler for every method of the path: whether a method
            // is missing (405) or the whole path is (404) depends on the
            // served version, which axum's method routing cannot see.
            router = router.route(
                &path,
                any(Dispatch {
                    operations,
                    every_version,
                    #[cfg(feature = "metrics")]
                    template: crate::telemetry::RouteTemplate(crate::kept::text(&path)),
                }),
            );
        }
        for (path, route) in self.neutral {
            router = router.route(&path, route);
        }
        Ok(router.fallback(|| async { ApiError::not_found() }))
    }
}

/// Whether a handler's `span` lies inside `range`: its start, and its end
/// unless it ends at `latest`; [`VersionSpan::ALL`] fits any range.
fn span_fits(span: VersionSpan, range: VersionRange) -> bool {
    span.is_all()
        || (range.contains(span.start()) && span.end().is_none_or(|end| range.contains(end)))
}

/// Whether the handlers' `served` spans, sorted by start, leave no
/// version of `span` out.
fn covered(span: VersionSpan, served: &[VersionSpan]) -> bool {
    let mut from = span.start();
    for handler in served {
        if !handler.contains(from) {
            continue;
        }
        match (handler.end(), span.end()) {
            (None, _) => return true,
            (Some(end), Some(last)) if last <= end => return true,
            (Some(end), _) => match end.next_minor() {
                Some(next) => from = next,
                None => return false,
            },
        }
    }
    false
}

/// One method on one path: its handlers by version.
struct Operation<S> {
    /// This operation's own deprecations (see [`VersionedRouter::deprecate`]).
    deprecated: Box<[Deprecation]>,
    /// The request body schemas bound to it ([`VersionedRouter::body`]).
    body: Option<Arc<dyn BoundSchemas>>,
    /// Its success statuses by version ([`VersionedRouter::status`]).
    statuses: Box<[(VersionSpan, StatusCode)]>,
    method: Method,
    handlers: Box<[(VersionSpan, BoxedHandler<S>)]>,
    /// The status when no handler serves the version.
    unavailable: StatusCode,
}

impl<S> Operation<S> {
    fn handler_for(&self, served: Option<ServedVersion>) -> Option<&BoxedHandler<S>> {
        self.handlers
            .iter()
            .find(|(versions, _)| match served {
                Some(v) => versions.contains(*v),
                // A version-neutral path: only a handler for all versions.
                None => versions.is_all(),
            })
            .map(|(_, handler)| handler)
    }
}

/// The handler of one path: calls the handler of the request's method
/// whose versions contain the served version (HEAD falls back to GET).
///
/// A [`Handler`] of its own rather than a closure: axum boxes a closure's
/// future, and the chosen handler's future is boxed already.
struct Dispatch<S> {
    operations: Arc<[Operation<S>]>,
    every_version: bool,
    /// The path, for the responses an `HttpMetricsLayer` counts.
    #[cfg(feature = "metrics")]
    template: crate::telemetry::RouteTemplate,
}

impl<S> Clone for Dispatch<S> {
    fn clone(&self) -> Self {
        Dispatch {
            operations: Arc::clone(&self.operations),
            every_version: self.every_version,
            #[cfg(feature = "metrics")]
            template: self.template.clone(),
        }
    }
}

impl<S> Handler<(), S> for Dispatch<S>
where
    S: Clone + Send + Sync + 'static,
{
    type Future = Dispatched;

    fn call(self, req: Request, state: S) -> Dispatched {
        #[cfg(feature = "metrics")]
        if req
            .extensions()
            .get::<crate::telemetry::Observed>()
            .is_some()
        {
            let dispatched = dispatch(&self.operations, self.every_version, state, req);
            return Dispatched::Labelled(Box::new(dispatched), Some(self.template));
        }
        dispatch(&self.operations, self.every_version, state, req)
    }
}

/// The future of [`Dispatch`]: the chosen handler's, or the answer when
/// none serves the request.
enum Dispatched {
    Handler(BoxFuture),
    /// A handler whose response announces that its operation is
    /// deprecated, or gets the status of the version on success, or both.
    Adjusted {
        future: BoxFuture,
        deprecation: Option<Deprecation>,
        status: Option<StatusCode>,
    },
    Ready(Option<Response>),
    /// For an `HttpMetricsLayer`: the response gets the route template.
    #[cfg(feature = "metrics")]
    Labelled(Box<Dispatched>, Option<crate::telemetry::RouteTemplate>),
}

impl Future for Dispatched {
    type Output = Response;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Response> {
        match &mut *self {
            Dispatched::Handler(future) => future.as_mut().poll(cx),
            Dispatched::Adjusted {
                future,
                deprecation,
                status,
            } => {
                let mut response = std::task::ready!(future.as_mut().poll(cx));
                if let Some(deprecation) = deprecation {
                    deprecation.annotate(response.headers_mut());
                }
                if let Some(status) = *status
                    && response.status().is_success()
                {
                    *response.status_mut() = status;
                }
                std::task::Poll::Ready(response)
            }
            Dispatched::Ready(response) => match response.take() {
                Some(response) => std::task::Poll::Ready(response),
                // Polled again after completion: a caller bug; never wake.
                None => std::task::Poll::Pending,
            },
            #[cfg(feature = "metrics")]
            Dispatched::Labelled(inner, template) => {
                let mut response = std::task::ready!(Pin::new(&mut **inner).poll(cx));
                if let Some(template) = template.take() {
                    response.extensions_mut().insert(template);
                }
                std::task::Poll::Ready(response)
            }
        }
    }
}

/// Calls the handler of the request's method whose versions contain the
/// served version (HEAD falls back to GET).
///
/// A method with no handler at that version gets the operation's
/// unavailable status (404 by default). A method not registered at all
/// gets 405, with `Allow` naming the methods served at that version; but
/// when no method of the path is served at that version, the path does not
/// exist there: 404, as for an unknown path. On a path whose methods exist
/// at `every_version`, an unregistered method is 405 naming every
/// registered method.
fn dispatch<S>(
    operations: &[Operation<S>],
    every_version: bool,
    state: S,
    mut req: Request,
) -> Dispatched {
    let served = ServedVersion::from_extensions(req.extensions());
    let find = |method: &Method| operations.iter().find(|op| op.method == *method);
    let operation = find(req.method()).or_else(|| {
        if req.method() == Method::HEAD {
            find(&Method::GET)
        } else {
            None
        }
    });
    let status = match operation {
        Some(op) => match op.handler_for(served) {
            Some(handler) => {
                let deprecated = served.and_then(|v| Deprecation::of(&op.deprecated, *v));
                let status = served.and_then(|v| {
                    op.statuses
                        .iter()
                        .find(|(versions, _)| versions.contains(*v))
                        .map(|(_, status)| *status)
                });
                if let Some(body) = &op.body {
                    Arc::clone(body).insert_into(req.extensions_mut());
                }
                let future = handler(req, state);
                return match (deprecated, status) {
                    (None, None) => Dispatched::Handler(future),
                    (deprecation, status) => Dispatched::Adjusted {
                        future,
                        deprecation: deprecation.cloned(),
                        status,
                    },
                };
            }
            None => op.unavailable,
        },
        None => StatusCode::METHOD_NOT_ALLOWED,
    };
    // HEAD is answered wherever GET is, and not listed, as most servers do.
    let allowed: Vec<&str> = operations
        .iter()
        .filter(|op| every_version || op.handler_for(served).is_some())
        .map(|op| op.method.as_str())
        .collect();
    Dispatched::Ready(Some(match status {
        StatusCode::NOT_FOUND => ApiError::not_found().into_response(),
        StatusCode::METHOD_NOT_ALLOWED if operation.is_none() && allowed.is_empty() => {
            ApiError::not_found().into_response()
        }
        StatusCode::METHOD_NOT_ALLOWED => {
            let mut response = ApiError::method_not_allowed_for(req.method()).into_response();
            if let Ok(allow) = HeaderValue::from_str(&allowed.join(", ")) {
                response.headers_mut().insert(ALLOW, allow);
            }
            response
        }
        status => ApiError::new(
            status,
            "The requested operation is not available at this version.",
        )
        .into_response(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlaps_fail_the_build_naming_path_method_and_ranges() {
        let err = VersionedRouter::<()>::new()
            .get("/a", VersionSpan::from_static("1.0 - 1.5"), || async {
                "a"
            })
            .get("/a", VersionSpan::from_static("1.5 - latest"), || async {
                "b"
            })
            .build()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "overlapping version ranges for GET /a: 1.0 - 1.5 and 1.5 - latest"
        );
    }

    #[test]
    fn build_for_refuses_versions_outside_the_range() {
        let api = Microversions::builder("compute", VersionRange::from_static("2.1", "2.90"))
            .served_range(VersionRange::from_static("2.10", "2.50"))
            .build()
            .unwrap();
        let built = |span: &'static str| {
            VersionedRouter::<()>::new()
                .get("/ok", VersionSpan::ALL, || async { "a" })
                .post("/a", VersionSpan::from_static(span), || async { "b" })
                .build_for(&api)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        // Inside the code's range, whatever the served range.
        for span in ["2.1 - latest", "2.1 - 2.90", "2.90 - latest", "2.5 - 2.6"] {
            assert_eq!(built(span), Ok(()), "{span}");
        }
        for span in [
            "2.0 - 2.5",
            "1.0 - latest",
            "2.80 - 2.91",
            "2.91 - latest",
            "3.0 - latest",
        ] {
            assert_eq!(
                built(span),
                Err(format!(
                    "the handler of POST /a for {span} reaches outside the supported range 2.1 - 2.90"
                )),
            );
        }
        let err = VersionedRouter::<()>::new()
            .get("/a", VersionSpan::from_static("2.0 - 2.5"), || async {
                "a"
            })
            .build_for(&api)
            .unwrap_err();
        assert!(matches!(
            err,
            BuildError::RouteOutsideRange { ref path, ref method, versions, range }
                if path == "/a" && method == Method::GET
                    && versions == VersionSpan::from_static("2.0 - 2.5")
                    && range == api.code_range()
        ));
        // The plain build takes the versions as written.
        assert!(
            VersionedRouter::<()>::new()
                .get("/a", VersionSpan::from_static("9.0 - latest"), || async {
                    "a"
                })
                .build()
                .is_ok()
        );
    }

    /// A version-neutral route is written once: the router serves it, the
    /// versioning learns it from the router, and the layer skips it.
    #[test]
    fn a_neutral_route_is_served_and_skips_negotiation() {
        use axum::body::Body;
        use axum::routing::get;
        use tower::ServiceExt;

        let routes = VersionedRouter::<()>::new()
            .get("/a", VersionSpan::from_static("1.2 - latest"), || async {
                "a"
            })
            .neutral("/healthcheck", get(|| async { "OK" }));
        assert_eq!(routes.neutral_paths().collect::<Vec<_>>(), ["/healthcheck"]);
        let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
            .version_neutral_routes(&routes)
            .build()
            .unwrap();
        assert!(api.is_version_neutral("/healthcheck"));
        assert!(!api.is_version_neutral("/a"));
        let app = routes
            .build_for(&api)
            .unwrap()
            .layer(crate::MicroversionLayer::new(api));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let send = |path: &str, version: &str| {
            let request = http::Request::get(path)
                .header("openstack-api-version", version)
                .body(Body::empty())
                .unwrap();
            runtime.block_on(app.clone().oneshot(request)).unwrap()
        };
        // A malformed version is not read there, and none is echoed.
        let response = send("/healthcheck", "placement 1.a");
        assert_eq!(response.status(), StatusCode::OK);
        assert!(!response.headers().contains_key("openstack-api-version"));
        assert_eq!(
            send("/a", "placement 1.a").status(),
            StatusCode::BAD_REQUEST
        );
        let response = send("/a", "placement 1.3");
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["openstack-api-version"], "placement 1.3");
    }

    #[test]
    fn neutral_routes_that_cannot_be_served_fail_the_build() {
        use axum::routing::get;

        let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
            .build()
            .unwrap();
        let ok = || get(|| async { "OK" });
        let cases = [
            (
                VersionedRouter::<()>::new().neutral("/health/{part}", ok()),
                "the version-neutral path /health/{part} is a pattern: version-neutral paths are matched exactly",
            ),
            (
                VersionedRouter::<()>::new()
                    .neutral("/health", ok())
                    .neutral("/health", ok()),
                "the version-neutral path /health is routed twice",
            ),
            (
                VersionedRouter::<()>::new()
                    .get("/health", VersionSpan::ALL, || async { "" })
                    .neutral("/health", ok()),
                "the path /health is routed both as version-neutral and by version",
            ),
        ];
        for (routes, message) in cases {
            assert_eq!(routes.build().unwrap_err().to_string(), message);
        }
        // The versioning it is built for must skip the path.
        let err = VersionedRouter::<()>::new()
            .neutral("/health", ok())
            .build_for(&api)
            .unwrap_err();
        assert!(matches!(
            err,
            BuildError::NeutralRoute { ref path, problem: NeutralRouteProblem::Negotiated }
                if path == "/health"
        ));
        assert!(err.to_string().contains("version_neutral_routes"), "{err}");
        // Declared the old way, it builds too.
        let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
            .version_neutral("/health")
            .build()
            .unwrap();
        let routes = VersionedRouter::<()>::new().neutral("/health", ok());
        assert!(routes.build_for(&api).is_ok());
    }

    #[test]
    fn same_ranges_on_other_methods_are_fine() {
        let router = VersionedRouter::<()>::new()
            .get("/a", VersionSpan::ALL, || async { "a" })
            .post("/a", VersionSpan::ALL, || async { "b" })
            .get("/b", VersionSpan::ALL, || async { "c" });
        let table = router.table();
        assert_eq!(table.rows().len(), 3);
        assert!(table.to_string().contains("GET     /a  all"));
        assert!(router.build().is_ok());
    }
}
