//! OpenAPI 3.1 documents of a microversioned API, made from what the
//! service already declares: the routes of its [`VersionedRouter`] with
//! their versions, the request body and query schemas of its
//! [`BodySchemas`], and the responses it declares here, per version range.
//!
//! Two forms come out of one [`ApiDescription`]:
//!
//! - [`ApiDescription::at`]: the document of one version. Only the
//!   operations, parameters, bodies and responses that exist at that
//!   version; the `OpenStack-API-Version` header as a required parameter
//!   naming it; the layer's answers to a malformed (400) or unsupported
//!   (406) version; every operation `deprecated` when the version is.
//! - [`ApiDescription::whole`]: one document for the whole range, in the
//!   convention of OpenStack's own OpenAPI documents (its `codegenerator`),
//!   so that its tools read ours: `x-openstack` with `min-ver` and
//!   `max-ver` on operations, parameters, responses and properties that
//!   exist at part of the range only, and a request body that changes
//!   between versions as a `oneOf` of its variants, each marked with its
//!   range, under `x-openstack: {discriminator: microversion}`.
//!
//! With the `reference-page` feature, [`ReferencePage`] serves a page a
//! person reads: Swagger UI, bundled at build time, under a picker of the
//! versions that loads the document of the one chosen.
//!
//! With the `contracts` feature, [`Contracts`] keeps each released
//! version's document committed and a test compares it with the one the
//! code makes, saying of each difference whether it breaks that
//! version's clients.
//!
//! With the `json-schema` feature too, `ResponseValidationLayer` checks
//! what the service answers against the document of the served version,
//! as Nova's `[api] response_validation` does (`error`, `warn`, `off`),
//! and `Sweep` tests every operation at its first and last version, on
//! both sides of each version that changes it, and just outside its
//! life.
//!
//! Building the description checks that it is complete and exact: every
//! route is documented and every documented operation is routed, every
//! version an operation is served at has a response, every schema has a
//! JSON Schema (a plain serde type does not) and lies within the versions
//! of its operation, and everything can be said in OpenAPI. Otherwise
//! [`ApiDescriptionBuilder::build`] fails, naming what is wrong: nothing
//! is left out silently.
//!
//! ```
//! use http::StatusCode;
//! use microversion::{Version, VersionRange, VersionSpan};
//! use microversion_server::openapi::{ApiDescription, OperationDoc, ResponseDoc};
//! use microversion_server::{BodySchemas, Microversions, VersionedRouter};
//! use serde_json::{Value, json};
//!
//! let api = Microversions::builder("things", VersionRange::from_static("1.0", "1.5")).build()?;
//! let router = VersionedRouter::<()>::new()
//!     .get("/things/{id}", VersionSpan::ALL, || async { "{}" })
//!     .put("/things/{id}", VersionSpan::from_static("1.2 - latest"), || async { "{}" });
//! let put_body = BodySchemas::<Value>::builder("PUT /things/{id}")
//!     .json_schema(VersionSpan::from_static("1.2 - latest"), &json!({
//!         "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]
//!     }))
//!     .build()?;
//! let thing = |since_1_3: bool| {
//!     let mut schema = json!({"type": "object", "properties": {"id": {"type": "string"}}});
//!     if since_1_3 {
//!         schema["properties"]["name"] = json!({"type": "string"});
//!     }
//!     schema
//! };
//! let description = ApiDescription::builder(&api)
//!     .title("Things")
//!     .routes(&router)
//!     .operation(
//!         OperationDoc::get("/things/{id}")
//!             .summary("Show a thing")
//!             .response(VersionSpan::from_static("1.0 - 1.2"), StatusCode::OK, ResponseDoc::json("The thing", thing(false)))
//!             .response(VersionSpan::from_static("1.3 - latest"), StatusCode::OK, ResponseDoc::json("The thing", thing(true)))
//!             .error(StatusCode::NOT_FOUND, "No such thing"),
//!     )
//!     .operation(
//!         OperationDoc::put("/things/{id}")
//!             .body(&put_body)
//!             .response(VersionSpan::from_static("1.2 - latest"), StatusCode::NO_CONTENT, ResponseDoc::empty("Renamed")),
//!     )
//!     .build()?;
//!
//! let at_1_1 = description.at(Version::new(1, 1))?.to_value();
//! assert!(at_1_1["paths"]["/things/{id}"].get("put").is_none());
//! let whole = description.whole().to_value();
//! assert_eq!(whole["paths"]["/things/{id}"]["put"]["x-openstack"]["min-ver"], "1.2");
//! assert_eq!(
//!     whole["paths"]["/things/{id}"]["get"]["responses"]["200"]["content"]["application/json"]
//!         ["schema"]["properties"]["name"]["x-openstack"]["min-ver"],
//!     "1.3"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod diff;
mod error;
#[cfg(feature = "contracts")]
mod frozen;
mod merge;
mod model;
#[cfg(feature = "reference-page")]
mod page;
mod render;
mod serve;
#[cfg(feature = "json-schema")]
mod sweep;
#[cfg(feature = "json-schema")]
mod validate;

use std::collections::BTreeMap;
use std::fmt;

use http::{Method, StatusCode};
use microversion::{Version, VersionRange, VersionSpan};
use serde_json::{Map, Value};

pub use self::diff::{Difference, HistoryProblem};
pub use self::error::OpenApiError;
#[cfg(feature = "contracts")]
pub use self::frozen::{ACCEPT_VARIABLE, ContractReport, Contracts};
#[cfg(feature = "reference-page")]
pub use self::page::{InvalidReferencePage, ReferencePage, ReferencePageBuilder};
pub use self::render::OpenApiDocument;
pub use self::serve::{DOCUMENTS_PATH, DocumentError, Documents, RefusalAnswer};
#[cfg(feature = "json-schema")]
pub use self::sweep::{Probe, Sweep, SweepReport};
#[cfg(feature = "json-schema")]
pub use self::validate::{
    InvalidResponseValidation, ResponseValidation, ResponseValidationLayer, ValidateResponses,
    ValidationFuture,
};
use crate::config::Microversions;
use crate::deprecation::Deprecation;
use crate::routing::{VersionedRouter, find_overlap};
use crate::schema::BodySchemas;
use microversion::Rules;
/// A difference between two documents, from the `microversion-contract`
/// crate ([`ContractReport::deltas`]).
#[cfg(feature = "contracts")]
pub use microversion_contract::{Delta, Kind as DeltaKind};

/// A range of versions with both ends known: a span clamped to the API's
/// range.
pub(crate) type Closed = (Version, Version);

/// `span` within `range`, if they share a version.
fn clamp(span: VersionSpan, range: VersionRange) -> Option<Closed> {
    let start = span.start().max(range.min());
    let end = span.end().map_or(range.max(), |end| end.min(range.max()));
    (start <= end).then_some((start, end))
}

fn contains(range: Closed, version: Version) -> bool {
    range.0 <= version && version <= range.1
}

fn within(inner: Closed, outer: Closed) -> bool {
    outer.0 <= inner.0 && inner.1 <= outer.1
}

/// The name of the error schema in `components`.
const ERROR_SCHEMA: &str = "ApiError";

/// A response an operation declares: a description and, when it has a
/// body, its media type and schema.
#[derive(Clone, Debug, PartialEq)]
pub struct ResponseDoc {
    description: String,
    content: Option<(String, Value)>,
}

impl ResponseDoc {
    /// A response with a JSON body of `schema` (JSON Schema 2020-12).
    #[must_use]
    pub fn json(description: impl Into<String>, schema: Value) -> Self {
        ResponseDoc {
            description: description.into(),
            content: Some(("application/json".to_owned(), schema)),
        }
    }

    /// A response with a JSON body whose schema `schemars` derives from
    /// `T`.
    #[cfg(feature = "schemars")]
    #[must_use]
    pub fn of<T: schemars::JsonSchema>(description: impl Into<String>) -> Self {
        ResponseDoc::json(description, schemars::schema_for!(T).to_value())
    }

    /// A response without a body.
    #[must_use]
    pub fn empty(description: impl Into<String>) -> Self {
        ResponseDoc {
            description: description.into(),
            content: None,
        }
    }

    /// The body's media type, when it is not `application/json`.
    #[must_use]
    pub fn content_type(mut self, media_type: impl Into<String>) -> Self {
        if let Some((current, _)) = &mut self.content {
            *current = media_type.into();
        }
        self
    }
}

/// Schemas by version as an operation declares them, before checks.
type Declared = Vec<(VersionSpan, Option<Value>)>;

/// Request body schemas a router binds to one operation: its method, its
/// path, the schemas' name and the schemas.
pub(crate) type BoundBody = (Method, String, String, Declared);

/// The documentation of one operation (a method on a path): what the
/// router does not know. Its versions come from the router; its request
/// body and query schemas from the service's [`BodySchemas`].
#[derive(Clone, Debug)]
#[must_use]
pub struct OperationDoc {
    method: Method,
    path: String,
    summary: Option<String>,
    description: Option<String>,
    operation_id: Option<String>,
    tag: Option<String>,
    path_parameters: Vec<(String, Option<String>, Value)>,
    query: Option<(String, Declared)>,
    query_descriptions: BTreeMap<String, String>,
    body: Option<(String, Declared)>,
    responses: Vec<(VersionSpan, StatusCode, ResponseDoc)>,
    errors: Vec<(VersionSpan, StatusCode, String)>,
}

impl OperationDoc {
    /// The documentation of `method` on `path` (the router's pattern,
    /// such as `/things/{id}`).
    pub fn new(method: Method, path: impl Into<String>) -> Self {
        OperationDoc {
            method,
            path: path.into(),
            summary: None,
            description: None,
            operation_id: None,
            tag: None,
            path_parameters: Vec::new(),
            query: None,
            query_descriptions: BTreeMap::new(),
            body: None,
            responses: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Of `GET path`.
    pub fn get(path: impl Into<String>) -> Self {
        OperationDoc::new(Method::GET, path)
    }

    /// Of `POST path`.
    pub fn post(path: impl Into<String>) -> Self {
        OperationDoc::new(Method::POST, path)
    }

    /// Of `PUT path`.
    pub fn put(path: impl Into<String>) -> Self {
        OperationDoc::new(Method::PUT, path)
    }

    /// Of `PATCH path`.
    pub fn patch(path: impl Into<String>) -> Self {
        OperationDoc::new(Method::PATCH, path)
    }

    /// Of `DELETE path`.
    pub fn delete(path: impl Into<String>) -> Self {
        OperationDoc::new(Method::DELETE, path)
    }

    /// A one-line summary.
    pub fn summary(mut self, summary: impl Into<String>) -> Self {
        self.summary = Some(summary.into());
        self
    }

    /// A longer description (CommonMark).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The `operationId`; by default the path without its braces and
    /// the method (`things/id:get`), as OpenStack's documents name them.
    pub fn operation_id(mut self, id: impl Into<String>) -> Self {
        self.operation_id = Some(id.into());
        self
    }

    /// The tag the operation is grouped under; by default the first
    /// segment of the path (`version` for `/`).
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tag = Some(tag.into());
        self
    }

    /// Describes the path parameter `name` (by default a string with no
    /// description).
    pub fn path_parameter(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        schema: Value,
    ) -> Self {
        self.path_parameters
            .push((name.into(), Some(description.into()), schema));
        self
    }

    /// The query string's schemas, by version: each a JSON object schema
    /// whose `properties` are the parameters (`required` among them) and
    /// whose `patternProperties` are families of parameters named by a
    /// pattern.
    pub fn query<T>(mut self, schemas: &BodySchemas<T>) -> Self {
        self.query = Some((schemas.name().to_owned(), declared(schemas)));
        self
    }

    /// A query string schema at `versions`, for a service that checks
    /// its query string without [`BodySchemas`].
    pub fn query_schema(mut self, versions: VersionSpan, schema: Value) -> Self {
        let name = format!("the query of {} {}", self.method, self.path);
        add_schema(&mut self.query, name, versions, schema);
        self
    }

    /// Describes the query parameter `name` (or pattern).
    pub fn query_description(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        self.query_descriptions
            .insert(name.into(), description.into());
        self
    }

    /// The request body's schemas, by version. Only the versions the
    /// operation is served at are taken: several operations may share
    /// one set of schemas.
    pub fn body<T>(mut self, schemas: &BodySchemas<T>) -> Self {
        self.body = Some((schemas.name().to_owned(), declared(schemas)));
        self
    }

    /// The request body's schemas at `versions` only (the operation takes
    /// no body at its other versions).
    pub fn body_at<T>(mut self, versions: VersionSpan, schemas: &BodySchemas<T>) -> Self {
        let within = declared(schemas)
            .into_iter()
            .filter_map(|(span, schema)| span.intersect(versions).map(|s| (s, schema)))
            .collect();
        self.body = Some((schemas.name().to_owned(), within));
        self
    }

    /// A request body schema at `versions`, for a body read without
    /// [`BodySchemas`].
    pub fn body_schema(mut self, versions: VersionSpan, schema: Value) -> Self {
        let name = format!("the body of {} {}", self.method, self.path);
        add_schema(&mut self.body, name, versions, schema);
        self
    }

    /// At `versions`, the operation answers `status` with `response`.
    pub fn response(
        mut self,
        versions: VersionSpan,
        status: StatusCode,
        response: ResponseDoc,
    ) -> Self {
        self.responses.push((versions, status, response));
        self
    }

    /// At `versions`, the query string is a `T` read at the served
    /// version ([`VersionedQuery`](crate::versioned::VersionedQuery)): a
    /// schema per piece of `versions` where `T` keeps one shape.
    #[cfg(feature = "derive")]
    pub fn versioned_query<T: crate::versioned::VersionedSchema + ?Sized>(
        mut self,
        versions: VersionSpan,
    ) -> Self {
        for piece in crate::versioned::segments::<T>(versions) {
            let schema = crate::versioned::request_schema::<T>(piece.start());
            self = self.query_schema(piece, schema);
        }
        self
    }

    /// At `versions`, the operation answers `status` with a `T` written
    /// at the served version (`#[derive(Versioned)]`; see
    /// [`versioned`](crate::versioned)): a response per piece of
    /// `versions` where `T` keeps one shape, each with the schema the
    /// derive makes for it.
    #[cfg(feature = "derive")]
    pub fn versioned_response<T: crate::versioned::VersionedSchema + ?Sized>(
        mut self,
        versions: VersionSpan,
        status: StatusCode,
        description: impl Into<String>,
    ) -> Self {
        let description = description.into();
        for piece in crate::versioned::segments::<T>(versions) {
            let schema = crate::versioned::response_schema::<T>(piece.start());
            self = self.response(
                piece,
                status,
                ResponseDoc::json(description.clone(), schema),
            );
        }
        self
    }

    /// At every version of the operation, it may answer `status` with an
    /// error body in the profile's format.
    pub fn error(self, status: StatusCode, description: impl Into<String>) -> Self {
        self.error_at(VersionSpan::ALL, status, description)
    }

    /// At `versions`, the operation may answer `status` with an error
    /// body in the profile's format.
    pub fn error_at(
        mut self,
        versions: VersionSpan,
        status: StatusCode,
        description: impl Into<String>,
    ) -> Self {
        self.errors.push((versions, status, description.into()));
        self
    }
}

/// Adds a hand-given schema to `slot`, named `name` when it is the first.
fn add_schema(
    slot: &mut Option<(String, Declared)>,
    name: String,
    versions: VersionSpan,
    schema: Value,
) {
    slot.get_or_insert_with(|| (name, Vec::new()))
        .1
        .push((versions, Some(schema)));
}

fn declared<T>(schemas: &BodySchemas<T>) -> Declared {
    schemas
        .json_schemas()
        .map(|(versions, schema)| (versions, schema.cloned()))
        .collect()
}

/// One operation, checked: every range clamped to the API's range.
#[derive(Clone, Debug)]
struct Operation {
    method: Method,
    path: String,
    /// The versions it is served at (one run, no gap).
    life: Closed,
    summary: Option<String>,
    description: Option<String>,
    operation_id: String,
    tag: String,
    /// Whether requests to it skip negotiation.
    neutral: bool,
    path_parameters: Vec<(String, Option<String>, Value)>,
    query: Vec<(Closed, Value)>,
    query_descriptions: BTreeMap<String, String>,
    body: Vec<(Closed, Value)>,
    responses: Vec<(Closed, StatusCode, ResponseDoc)>,
    errors: Vec<(Closed, StatusCode, String)>,
    /// Its own deprecations ([`VersionedRouter::deprecate`]).
    deprecations: Vec<Deprecation>,
}

/// The routes of an API with their documentation, checked: the source of
/// its OpenAPI documents. See the [module documentation](self).
#[derive(Clone)]
pub struct ApiDescription {
    title: String,
    description: Option<String>,
    service_type: String,
    range: VersionRange,
    rules: Rules,
    deprecations: Vec<Deprecation>,
    operations: Vec<Operation>,
    components: Map<String, Value>,
    /// The history's changes, if it was given one.
    changes: Vec<crate::history::HistoryEntry>,
}

impl fmt::Debug for ApiDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiDescription")
            .field("title", &self.title)
            .field("range", &self.range)
            .field("operations", &self.operations.len())
            .finish_non_exhaustive()
    }
}

impl ApiDescription {
    /// Every version of its range, oldest first, minor by minor. Where
    /// the range crosses into a later major version, the earlier major's
    /// versions end at the last one any range of the description names:
    /// nothing says how far that major went.
    pub(crate) fn versions(&self) -> Vec<Version> {
        let (min, max) = (self.range.min(), self.range.max());
        let mut named = vec![min, max];
        for op in &self.operations {
            let ranges = std::iter::once(op.life)
                .chain(op.query.iter().map(|(r, _)| *r))
                .chain(op.body.iter().map(|(r, _)| *r))
                .chain(op.responses.iter().map(|(r, _, _)| *r))
                .chain(op.errors.iter().map(|(r, _, _)| *r));
            for (start, end) in ranges {
                named.extend([start, end]);
            }
        }
        let mut versions = Vec::new();
        for major in min.major()..=max.major() {
            let first = if major == min.major() { min.minor() } else { 0 };
            let last = if major == max.major() {
                max.minor()
            } else {
                match named
                    .iter()
                    .filter(|v| v.major() == major)
                    .map(|v| v.minor())
                    .max()
                {
                    Some(last) => last,
                    None => continue,
                }
            };
            versions.extend((first..=last).map(|minor| Version::new(major, minor)));
        }
        versions
    }

    /// Starts the description of the API versioned by `api`.
    pub fn builder(api: &Microversions) -> ApiDescriptionBuilder {
        ApiDescriptionBuilder {
            api: api.clone(),
            title: None,
            description: None,
            routes: Vec::new(),
            bodies: Vec::new(),
            statuses: Vec::new(),
            deprecated: Vec::new(),
            operations: Vec::new(),
            history: None,
        }
    }

    /// The supported range.
    #[must_use]
    pub fn range(&self) -> VersionRange {
        self.range
    }

    /// This description as a service serving only `range` of it has it
    /// (an operator's raised minimum or capped maximum): operations,
    /// parameters, bodies and responses outside `range` are left out,
    /// and what remains is marked within `range`.
    ///
    /// ```
    /// use microversion::VersionRange;
    /// use microversion_server::Microversions;
    /// use microversion_server::openapi::ApiDescription;
    ///
    /// let api = Microversions::builder("things", VersionRange::from_static("1.0", "1.5")).build()?;
    /// let description = ApiDescription::builder(&api).build()?;
    /// let narrowed = description.within(VersionRange::from_static("1.2", "1.4"))?;
    /// assert_eq!(narrowed.whole().to_value()["info"]["version"], "1.4");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`OpenApiError::Unsupported`] when `range` is not inside the
    /// description's.
    pub fn within(&self, range: VersionRange) -> Result<ApiDescription, OpenApiError> {
        for bound in [range.min(), range.max()] {
            if !self.range.contains(bound) {
                return Err(OpenApiError::Unsupported {
                    version: bound,
                    range: self.range,
                });
            }
        }
        let clip = |piece: Closed| -> Option<Closed> {
            let (start, end) = (piece.0.max(range.min()), piece.1.min(range.max()));
            (start <= end).then_some((start, end))
        };
        fn clipped<T: Clone>(
            pieces: &[(Closed, T)],
            clip: impl Fn(Closed) -> Option<Closed>,
        ) -> Vec<(Closed, T)> {
            pieces
                .iter()
                .filter_map(|(r, piece)| Some((clip(*r)?, piece.clone())))
                .collect()
        }
        let operations = self
            .operations
            .iter()
            .filter_map(|op| {
                let life = clip(op.life)?;
                let responses = op
                    .responses
                    .iter()
                    .filter_map(|(r, status, doc)| Some((clip(*r)?, *status, doc.clone())))
                    .collect();
                let errors = op
                    .errors
                    .iter()
                    .filter_map(|(r, status, text)| Some((clip(*r)?, *status, text.clone())))
                    .collect();
                Some(Operation {
                    life,
                    query: clipped(&op.query, clip),
                    body: clipped(&op.body, clip),
                    responses,
                    errors,
                    ..op.clone()
                })
            })
            .collect();
        Ok(ApiDescription {
            range,
            operations,
            ..self.clone()
        })
    }
}

/// A route as the router holds it: the method, the path and the versions
/// of each handler.
pub(crate) type RouteVersions = (Method, String, Vec<VersionSpan>);

/// Builds an [`ApiDescription`]; every check is made by `build`.
#[must_use]
pub struct ApiDescriptionBuilder {
    api: Microversions,
    title: Option<String>,
    description: Option<String>,
    routes: Vec<RouteVersions>,
    /// The request bodies the router binds to operations.
    bodies: Vec<BoundBody>,
    /// The success statuses the router sets by version.
    statuses: Vec<(Method, String, VersionSpan, StatusCode)>,
    /// The router's deprecations of single operations.
    deprecated: Vec<(Method, String, Vec<Deprecation>)>,
    operations: Vec<OperationDoc>,
    history: Option<crate::history::VersionHistory>,
}

impl fmt::Debug for ApiDescriptionBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiDescriptionBuilder")
            .field("title", &self.title)
            .field("routes", &self.routes.len())
            .field("operations", &self.operations.len())
            .finish_non_exhaustive()
    }
}

impl ApiDescriptionBuilder {
    /// The documents' title (default: the service type).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The documents' description (CommonMark).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The routes of `router`, each of which must be documented, with the
    /// request body schemas it binds to them
    /// ([`VersionedRouter::body`]): those need no
    /// [`OperationDoc::body`].
    pub fn routes<S>(mut self, router: &VersionedRouter<S>) -> Self
    where
        S: Clone + Send + Sync + 'static,
    {
        self.routes.extend(router.route_versions());
        self.bodies.extend(router.bound_bodies());
        self.statuses.extend(router.success_statuses());
        self.deprecated.extend(router.operation_deprecations());
        self
    }

    /// The API's version history, checked against the documents when
    /// built: every version of the code's range has its change and none
    /// lies outside it, and each change not marked as one of behaviour
    /// ([`Change::behaviour`](microversion::Change::behaviour)) makes a
    /// difference ([`ApiDescription::differences`]) against the version
    /// before it. Each version's document then says what its change was.
    pub fn history(mut self, history: &crate::history::VersionHistory) -> Self {
        self.history = Some(history.clone());
        self
    }

    /// Documents one operation.
    pub fn operation(mut self, operation: OperationDoc) -> Self {
        self.operations.push(operation);
        self
    }

    /// Documents several operations.
    pub fn operations(mut self, operations: impl IntoIterator<Item = OperationDoc>) -> Self {
        self.operations.extend(operations);
        self
    }

    /// Checks the documentation against the routes and builds.
    ///
    /// # Errors
    ///
    /// Returns the first [`OpenApiError`]: a route without documentation
    /// or documentation without a route, a version of an operation
    /// without a response, a schema without a JSON Schema or outside its
    /// operation's versions, or something OpenAPI cannot say.
    pub fn build(self) -> Result<ApiDescription, OpenApiError> {
        let range = self.api.range();
        let mut components = Map::new();
        components.insert(
            ERROR_SCHEMA.to_owned(),
            render::error_schema(self.api.rules()),
        );
        let mut docs: Vec<Option<OperationDoc>> = self.operations.into_iter().map(Some).collect();
        // Every documented operation is routed, once.
        for (i, doc) in docs.iter().enumerate() {
            let Some(doc) = doc else { continue };
            let same = |other: &Option<OperationDoc>| {
                other
                    .as_ref()
                    .is_some_and(|o| o.method == doc.method && o.path == doc.path)
            };
            if docs[i + 1..].iter().any(same) {
                return Err(OpenApiError::UnknownOperation {
                    method: doc.method.clone(),
                    path: doc.path.clone(),
                    reason: "documented twice",
                });
            }
            if !self
                .routes
                .iter()
                .any(|(method, path, _)| *method == doc.method && *path == doc.path)
            {
                return Err(OpenApiError::UnknownOperation {
                    method: doc.method.clone(),
                    path: doc.path.clone(),
                    reason: "no route",
                });
            }
        }
        let mut operations = Vec::new();
        for (method, path, spans) in self.routes {
            let mut doc = docs
                .iter_mut()
                .find(|d| {
                    d.as_ref()
                        .is_some_and(|d| d.method == method && d.path == path)
                })
                .and_then(Option::take)
                .ok_or_else(|| OpenApiError::Undocumented {
                    method: method.clone(),
                    path: path.clone(),
                })?;
            if let Some((_, _, name, schemas)) = self
                .bodies
                .iter()
                .find(|(m, p, _, _)| *m == method && *p == path)
            {
                if doc.body.is_some() {
                    return Err(OpenApiError::UnknownOperation {
                        method,
                        path,
                        reason: "its request body is bound on the router and documented again",
                    });
                }
                doc.body = Some((name.clone(), schemas.clone()));
            }
            if let Some(mut operation) = check_operation(&self.api, doc, &spans, &mut components)? {
                operation.deprecations = self
                    .deprecated
                    .iter()
                    .find(|(m, p, _)| *m == method && *p == path)
                    .map(|(_, _, list)| list.clone())
                    .unwrap_or_default();
                operations.push(operation);
            }
        }
        operations.sort_by(|a, b| (&a.path, a.method.as_str()).cmp(&(&b.path, b.method.as_str())));
        let description = ApiDescription {
            title: self
                .title
                .unwrap_or_else(|| self.api.service_type().to_owned()),
            description: self.description,
            service_type: self.api.service_type().to_owned(),
            range,
            rules: self.api.rules().clone(),
            deprecations: self.api.deprecations().to_vec(),
            operations,
            components,
            changes: self
                .history
                .as_ref()
                .map(|h| h.entries().to_vec())
                .unwrap_or_default(),
        };
        check_statuses(&description, &self.statuses)?;
        if self.history.is_some() {
            diff::check_history(&description, self.api.code_range(), &description.changes)?;
        }
        Ok(description)
    }
}

/// The problem of the first success status the router sets at a version
/// whose documents declare another success.
fn check_statuses(
    description: &ApiDescription,
    statuses: &[(Method, String, VersionSpan, StatusCode)],
) -> Result<(), OpenApiError> {
    let all = description.versions();
    for (method, path, versions, status) in statuses {
        let Some(op) = description
            .operations
            .iter()
            .find(|op| op.method == *method && op.path == *path)
        else {
            continue;
        };
        let covered = all
            .iter()
            .copied()
            .filter(|v| contains(op.life, *v) && versions.contains(*v));
        for version in covered {
            let documented: Vec<StatusCode> = op
                .responses
                .iter()
                .filter(|(range, s, _)| contains(*range, version) && s.is_success())
                .map(|(_, s, _)| *s)
                .collect();
            if documented != [*status] {
                return Err(OpenApiError::SuccessStatus {
                    method: method.clone(),
                    path: path.clone(),
                    version,
                    status: *status,
                    documented,
                });
            }
        }
    }
    Ok(())
}

/// Checks one operation against its route; `None` when it is served at
/// no version of the range.
fn check_operation(
    api: &Microversions,
    doc: OperationDoc,
    spans: &[VersionSpan],
    components: &mut Map<String, Value>,
) -> Result<Option<Operation>, OpenApiError> {
    let range = api.range();
    let name = format!("{} {}", doc.method, doc.path);
    if let Some((first, second)) = find_overlap(spans) {
        return Err(OpenApiError::Undescribable {
            what: name,
            reason: format!("its handlers overlap at {first} and {second}"),
        });
    }
    let mut served: Vec<Closed> = spans.iter().filter_map(|s| clamp(*s, range)).collect();
    served.sort();
    let Some(&first) = served.first() else {
        return Ok(None);
    };
    let mut life = first;
    for &(start, end) in &served[1..] {
        if life.1.next_minor() != Some(start) {
            return Err(OpenApiError::Undescribable {
                what: name,
                reason: format!(
                    "it is served up to {} and again from {start}: one operation has one range",
                    life.1
                ),
            });
        }
        life.1 = end;
    }
    let outside = |what: String, versions: VersionSpan| OpenApiError::OutsideOperation {
        method: doc.method.clone(),
        path: doc.path.clone(),
        what,
        versions,
    };
    // Path parameters.
    let names = path_parameters(&doc.path).map_err(|reason| OpenApiError::Undescribable {
        what: name.clone(),
        reason,
    })?;
    let mut path_parameters = Vec::new();
    for param in &names {
        let described = doc.path_parameters.iter().find(|(n, _, _)| n == param);
        path_parameters.push(match described {
            Some((n, description, schema)) => (
                n.clone(),
                description.clone(),
                absorb(schema, components, &name)?,
            ),
            None => (param.clone(), None, serde_json::json!({"type": "string"})),
        });
    }
    if let Some((n, _, _)) = doc
        .path_parameters
        .iter()
        .find(|(n, _, _)| !names.contains(n))
    {
        return Err(OpenApiError::Undescribable {
            what: name,
            reason: format!("it describes a path parameter {n} its path does not have"),
        });
    }
    // Schemas: known, within the operation, describable.
    let mut schemas = |declared: Option<(String, Declared)>,
                       what: &str,
                       query: bool|
     -> Result<Vec<(Closed, Value)>, OpenApiError> {
        let mut out = Vec::new();
        for (versions, schema) in declared.map(|(_, d)| d).unwrap_or_default() {
            let Some(schema) = schema else {
                return Err(OpenApiError::NoJsonSchema {
                    name: format!("{what} of {name}"),
                    versions,
                });
            };
            // Where the operation is served: schemas may be shared.
            let Some(closed) = clamp(versions, life_span(life)) else {
                continue;
            };
            let schema = absorb(&schema, components, &name)?;
            if query {
                render::check_query_schema(&schema).map_err(|reason| {
                    OpenApiError::Undescribable {
                        what: format!("the query of {name} at {versions}"),
                        reason,
                    }
                })?;
            }
            out.push((closed, schema));
        }
        out.sort_by_key(|(closed, _)| *closed);
        Ok(out)
    };
    let query = schemas(doc.query, "the query", true)?;
    let body = schemas(doc.body, "the body", false)?;
    let mut responses = Vec::new();
    for (versions, status, mut response) in doc.responses {
        let Some(closed) = clamp(versions, range) else {
            continue;
        };
        if !within(closed, life) {
            return Err(outside(
                format!("the {} response", status.as_u16()),
                versions,
            ));
        }
        if let Some((_, schema)) = &mut response.content {
            *schema = absorb(schema, components, &name)?;
        }
        responses.push((closed, status, response));
    }
    // A response at every version.
    let mut version = life.0;
    loop {
        let covering = responses
            .iter()
            .filter(|(r, _, _)| contains(*r, version))
            .map(|(r, _, _)| r.1)
            .max();
        let Some(end) = covering else {
            return Err(OpenApiError::NoResponse {
                method: doc.method,
                path: doc.path,
                version,
            });
        };
        match end.next_minor() {
            Some(next) if next <= life.1 => version = next.max(version),
            _ => break,
        }
    }
    let mut errors = Vec::new();
    for (versions, status, description) in doc.errors {
        let Some(closed) = clamp(versions, life_span(life)) else {
            return Err(outside(format!("the {} error", status.as_u16()), versions));
        };
        errors.push((closed, status, description));
    }
    let neutral = api.is_version_neutral(&doc.path);
    Ok(Some(Operation {
        operation_id: doc
            .operation_id
            .unwrap_or_else(|| default_operation_id(&doc.method, &doc.path)),
        tag: doc.tag.unwrap_or_else(|| default_tag(&doc.path)),
        method: doc.method,
        path: doc.path,
        life,
        summary: doc.summary,
        description: doc.description,
        neutral,
        path_parameters,
        query,
        query_descriptions: doc.query_descriptions,
        body,
        responses,
        errors,
        deprecations: Vec::new(),
    }))
}

/// `life` as a range, to clamp to.
fn life_span(life: Closed) -> VersionRange {
    // `life` is ordered: built from clamped spans.
    VersionRange::new(life.0, life.1).unwrap_or_else(|_| VersionRange::whole_major(life.0.major()))
}

/// The names of the parameters of an axum path pattern, in order.
fn path_parameters(path: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        if rest[open..].starts_with("{{") {
            rest = &rest[open + 2..];
            continue;
        }
        let Some(close) = rest[open..].find('}') else {
            return Err("a `{` without its `}`".to_owned());
        };
        let name = &rest[open + 1..open + close];
        if name.starts_with('*') {
            return Err(format!(
                "the wildcard {{{name}}} matches any number of segments, which an OpenAPI path cannot"
            ));
        }
        names.push(name.to_owned());
        rest = &rest[open + close + 1..];
    }
    Ok(names)
}

fn default_operation_id(method: &Method, path: &str) -> String {
    let bare: String = path
        .trim_start_matches('/')
        .chars()
        .filter(|c| *c != '{' && *c != '}')
        .collect();
    format!("{bare}:{}", method.as_str().to_ascii_lowercase())
}

fn default_tag(path: &str) -> String {
    match path.trim_start_matches('/').split('/').next() {
        Some(first) if !first.is_empty() => first.to_owned(),
        _ => "version".to_owned(),
    }
}

/// `schema` ready for a document: its `$defs` moved into `components`
/// (references to them rewritten), its `$schema` dropped; a reference
/// outside the document is refused.
fn absorb(
    schema: &Value,
    components: &mut Map<String, Value>,
    what: &str,
) -> Result<Value, OpenApiError> {
    let mut schema = schema.clone();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        for key in ["$defs", "definitions"] {
            let Some(Value::Object(defs)) = map.remove(key) else {
                continue;
            };
            for (def_name, mut def) in defs {
                rewrite_refs(&mut def, what)?;
                match components.get(&def_name) {
                    Some(existing) if *existing != def => {
                        return Err(OpenApiError::Undescribable {
                            what: what.to_owned(),
                            reason: format!("two different schemas are named {def_name}"),
                        });
                    }
                    Some(_) => {}
                    None => {
                        components.insert(def_name, def);
                    }
                }
            }
        }
    }
    rewrite_refs(&mut schema, what)?;
    Ok(schema)
}

fn rewrite_refs(schema: &mut Value, what: &str) -> Result<(), OpenApiError> {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get_mut("$ref") {
                let local = ["#/$defs/", "#/definitions/"]
                    .iter()
                    .find_map(|prefix| target.strip_prefix(prefix));
                if let Some(name) = local {
                    *target = format!("#/components/schemas/{name}");
                } else if !target.starts_with("#/components/schemas/") {
                    return Err(OpenApiError::Undescribable {
                        what: what.to_owned(),
                        reason: format!("the reference {target} points outside the document"),
                    });
                }
            }
            for value in map.values_mut() {
                rewrite_refs(value, what)?;
            }
        }
        Value::Array(items) => {
            for value in items {
                rewrite_refs(value, what)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests;
