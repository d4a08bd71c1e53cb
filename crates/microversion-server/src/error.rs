//! The server crate's errors: [`ApiError`], as the API shows it; and
//! [`BuildError`], a configuration refused when it is built.
//!
//! A handler (or the router's fallback) returns an [`ApiError`]; the layer
//! renders its body in the profile's format (the `dialect` module), with
//! the request id, the served version and the request's `Accept` at hand.
//! So handler errors, router 404s and 405s, and the layer's own 400s and
//! 406s all look the same.

use std::fmt;

use axum::response::{IntoResponse, Response};
use http::Method;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, StatusCode};
use microversion::{InvalidServiceType, InvalidVersion, Version, VersionRange, VersionSpan};

/// An error answer from a handler: a status, a detail for people, and an
/// optional machine-readable code.
///
/// Behind the microversion layer its body is rendered in the profile's
/// format. Without the layer it is plain text.
///
/// ```
/// use http::StatusCode;
/// use microversion_server::ApiError;
///
/// let err = ApiError::new(StatusCode::CONFLICT, "resource provider generation conflict")
///     .with_code("placement.concurrent_update");
/// assert_eq!(err.status(), StatusCode::CONFLICT);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    status: StatusCode,
    detail: String,
    code: Option<String>,
    /// The detail is the status's stock sentence, not a message about
    /// this request (Placement's format then shows no message of its own).
    stock: bool,
}

impl ApiError {
    /// An error with this status and detail.
    #[must_use]
    pub fn new(status: StatusCode, detail: impl Into<String>) -> Self {
        ApiError {
            status,
            detail: detail.into(),
            code: None,
            stock: false,
        }
    }

    /// An error whose detail is the status's stock sentence.
    fn stock(status: StatusCode, detail: impl Into<String>) -> Self {
        ApiError {
            stock: true,
            ..ApiError::new(status, detail)
        }
    }

    /// 400 Bad Request.
    #[must_use]
    pub fn bad_request(detail: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, detail)
    }

    /// 404 Not Found, as for a path that does not exist.
    #[must_use]
    pub fn not_found() -> Self {
        ApiError::stock(StatusCode::NOT_FOUND, "The resource could not be found.")
    }

    /// 405 Method Not Allowed.
    #[must_use]
    pub fn method_not_allowed() -> Self {
        ApiError::stock(StatusCode::METHOD_NOT_ALLOWED, METHOD_NOT_ALLOWED)
    }

    /// 405 Method Not Allowed, naming the method.
    #[must_use]
    pub fn method_not_allowed_for(method: &http::Method) -> Self {
        ApiError::stock(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("The method {method} is not allowed for this resource."),
        )
    }

    /// Sets the machine-readable code.
    #[must_use]
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// The status.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The detail for people.
    #[must_use]
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// The machine-readable code, if set.
    #[must_use]
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// Whether the detail is the status's stock sentence rather than a
    /// message about this request.
    pub(crate) fn is_stock(&self) -> bool {
        self.stock
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status, self.detail)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            [(
                CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            )],
            self.detail.clone(),
        )
            .into_response();
        // The layer finds this and renders the body in the profile's format.
        response.extensions_mut().insert(self);
        response
    }
}

/// The detail of a 405 that names no method: upstream Placement's
/// handler's message, which Placement's error pages also show for every
/// stock 405.
pub(crate) const METHOD_NOT_ALLOWED: &str =
    "The method specified is not allowed for this resource.";

/// A configuration refused when it is built: of [`Microversions`], a
/// router, the body schemas, the version history or discovery. Never
/// returned while serving a request.
///
/// [`Microversions`]: crate::Microversions
#[derive(Debug)]
#[non_exhaustive]
pub enum BuildError {
    /// The service type cannot appear in the header.
    ServiceType(InvalidServiceType),
    /// The deprecation threshold lies outside the supported range.
    Deprecation {
        /// The threshold.
        below: Version,
        /// The supported range.
        range: VersionRange,
    },
    /// Deprecated versions reach outside the supported range.
    DeprecatedVersions {
        /// The versions.
        versions: microversion::VersionSpan,
        /// The supported range.
        range: VersionRange,
    },
    /// The served range is not inside the code's range.
    ServedRange(crate::InvalidServedRange),
    /// The legacy root is `/` or does not start with `/`.
    LegacyRoot(String),
    /// Two routes or schemas for one operation have overlapping spans.
    Overlap(RouteConflict),
    /// A version-neutral route of a
    /// [`VersionedRouter`](crate::VersionedRouter) that cannot be served
    /// as one.
    NeutralRoute {
        /// The path.
        path: String,
        /// What is wrong with it.
        problem: NeutralRouteProblem,
    },
    /// Something bound to an operation on the router that it cannot
    /// use: its request body schemas
    /// ([`VersionedRouter::body`](crate::VersionedRouter::body)) or a
    /// success status ([`VersionedRouter::status`](crate::VersionedRouter::status)).
    Binding {
        /// What is bound (`request body schemas`, `a success status`).
        what: &'static str,
        /// The path pattern.
        path: String,
        /// The method.
        method: Method,
        /// What is wrong with the binding.
        problem: BindingProblem,
    },
    /// A handler's versions reach outside the API's range
    /// ([`VersionedRouter::build_for`](crate::VersionedRouter::build_for)).
    RouteOutsideRange {
        /// The path pattern.
        path: String,
        /// The method.
        method: Method,
        /// The versions the handler was registered for.
        versions: VersionSpan,
        /// The range the code implements.
        range: VersionRange,
    },
    /// A JSON Schema that cannot be compiled.
    InvalidSchema {
        /// The operation the schema is for (`POST /things`).
        name: String,
        /// The versions the schema was registered for.
        versions: VersionSpan,
        /// Why it cannot be compiled.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A version of the history is not valid text.
    HistoryVersion(InvalidVersion),
    /// The version history has no entry.
    EmptyHistory,
    /// A version of the history does not come after the one before it.
    HistoryOrder {
        /// The version before.
        previous: Version,
        /// The version that should be above it.
        next: Version,
    },
    /// A version of the history has no description.
    NoDescription(Version),
    /// Versions of one major are missing between two of the history's.
    HistoryGap {
        /// The version before the gap.
        previous: Version,
        /// The version after it.
        next: Version,
    },
    /// Discovery lists no CURRENT version, or several.
    CurrentVersions {
        /// How many are CURRENT.
        found: usize,
    },
    /// An API version's root path does not start and end with `/`.
    RootPath {
        /// The API version's id.
        id: String,
        /// Its root path.
        path: String,
    },
    /// The OpenAPI description does not match the routes (feature
    /// `openapi`).
    #[cfg(feature = "openapi")]
    Description(crate::openapi::OpenApiError),
    /// The API reference page cannot be built (feature `reference-page`).
    #[cfg(feature = "reference-page")]
    ReferencePage(crate::openapi::InvalidReferencePage),
    /// Two API versions of discovery share an id or a root path.
    SharedRoot {
        /// The id of the first.
        first: String,
        /// The id of the second.
        second: String,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::ServiceType(e) => fmt::Display::fmt(e, f),
            BuildError::Deprecation { below, range } => write!(
                f,
                "deprecation threshold {below} is outside the supported range {range}"
            ),
            BuildError::DeprecatedVersions { versions, range } => write!(
                f,
                "deprecated versions {versions} reach outside the supported range {range}"
            ),
            BuildError::ServedRange(e) => fmt::Display::fmt(e, f),
            BuildError::LegacyRoot(root) => write!(
                f,
                "the legacy root {root:?} must start with '/' and name a path below '/' (such as \"/v2\")"
            ),
            BuildError::Overlap(e) => fmt::Display::fmt(e, f),
            BuildError::NeutralRoute { path, problem } => match problem {
                NeutralRouteProblem::Pattern => write!(
                    f,
                    "the version-neutral path {path} is a pattern: version-neutral paths are matched exactly"
                ),
                NeutralRouteProblem::Repeated => {
                    write!(f, "the version-neutral path {path} is routed twice")
                }
                NeutralRouteProblem::Versioned => write!(
                    f,
                    "the path {path} is routed both as version-neutral and by version"
                ),
                NeutralRouteProblem::Negotiated => write!(
                    f,
                    "the path {path} is routed as version-neutral, but the versioning negotiates it: \
                     give the router to MicroversionsBuilder::version_neutral_routes"
                ),
            },
            BuildError::Binding {
                what,
                path,
                method,
                problem,
            } => match problem {
                BindingProblem::NotRouted => {
                    write!(f, "{what} for {method} {path}: the operation is not routed")
                }
                BindingProblem::Repeated(versions) => {
                    write!(f, "{what} for {method} {path}: {versions} is bound twice")
                }
                BindingProblem::Unserved(versions) => write!(
                    f,
                    "{what} for {method} {path}: {versions} covers versions no handler serves"
                ),
            },
            BuildError::RouteOutsideRange {
                path,
                method,
                versions,
                range,
            } => write!(
                f,
                "the handler of {method} {path} for {versions} reaches outside the supported range {range}"
            ),
            BuildError::InvalidSchema {
                name,
                versions,
                source,
            } => write!(f, "invalid JSON Schema for {name} at {versions}: {source}"),
            BuildError::HistoryVersion(e) => write!(f, "version history: {e}"),
            BuildError::EmptyHistory => f.write_str("version history is empty"),
            BuildError::HistoryOrder { previous, next } => write!(
                f,
                "version history: {next} follows {previous}, but versions must increase"
            ),
            BuildError::NoDescription(version) => {
                write!(f, "version history: {version} has no description")
            }
            BuildError::HistoryGap { previous, next } => write!(
                f,
                "version history: {next} follows {previous}, but every version between them \
                 needs its change"
            ),
            BuildError::CurrentVersions { found } => write!(
                f,
                "discovery needs exactly one CURRENT API version, found {found}"
            ),
            BuildError::RootPath { id, path } => write!(
                f,
                "the root path {path:?} of {id} must start and end with '/'"
            ),
            #[cfg(feature = "openapi")]
            BuildError::Description(e) => write!(f, "OpenAPI description: {e}"),
            #[cfg(feature = "reference-page")]
            BuildError::ReferencePage(e) => fmt::Display::fmt(e, f),
            BuildError::SharedRoot { first, second } => write!(
                f,
                "API versions {first} and {second} share an id or a root path"
            ),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::ServiceType(e) => Some(e),
            BuildError::Overlap(e) => Some(e),
            BuildError::InvalidSchema { source, .. } => Some(&**source),
            BuildError::HistoryVersion(e) => Some(e),
            #[cfg(feature = "openapi")]
            BuildError::Description(e) => Some(e),
            #[cfg(feature = "reference-page")]
            BuildError::ReferencePage(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(feature = "openapi")]
impl From<crate::openapi::OpenApiError> for BuildError {
    fn from(e: crate::openapi::OpenApiError) -> Self {
        BuildError::Description(e)
    }
}

#[cfg(feature = "reference-page")]
impl From<crate::openapi::InvalidReferencePage> for BuildError {
    fn from(e: crate::openapi::InvalidReferencePage) -> Self {
        BuildError::ReferencePage(e)
    }
}

/// Why something cannot be bound to its operation ([`BuildError::Binding`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BindingProblem {
    /// No handler serves the operation.
    NotRouted,
    /// These versions of the operation have it bound twice.
    Repeated(microversion::VersionSpan),
    /// It covers versions (these) that no handler of the operation
    /// serves: it could never be used.
    Unserved(microversion::VersionSpan),
}

/// Why a version-neutral route ([`VersionedRouter::neutral`]) cannot be
/// served as one.
///
/// [`VersionedRouter::neutral`]: crate::VersionedRouter::neutral
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NeutralRouteProblem {
    /// The path is a pattern (`{id}`, `*rest`), which the versioning,
    /// matching version-neutral paths exactly, would never match.
    Pattern,
    /// The path is given twice.
    Repeated,
    /// The path has handlers by version too.
    Versioned,
    /// The [`Microversions`](crate::Microversions) the router is built for
    /// negotiates the path.
    Negotiated,
}

/// Two handlers (or schemas) for one operation whose versions overlap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteConflict {
    /// The path, or the schema's name.
    pub path: String,
    /// The method (`None` for a schema).
    pub method: Option<Method>,
    /// The versions of the first handler.
    pub first: VersionSpan,
    /// The versions of the second handler.
    pub second: VersionSpan,
}

impl fmt::Display for RouteConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.method {
            Some(method) => write!(
                f,
                "overlapping version ranges for {method} {}: {} and {}",
                self.path, self.first, self.second
            ),
            None => write!(
                f,
                "overlapping version ranges for {}: {} and {}",
                self.path, self.first, self.second
            ),
        }
    }
}

impl std::error::Error for RouteConflict {}
