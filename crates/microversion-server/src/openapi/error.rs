//! [`OpenApiError`]: what stops an API description from being built.

use std::fmt;

use http::Method;
use microversion::{Version, VersionRange, VersionSpan};

/// Why an [`ApiDescription`](super::ApiDescription) cannot be built, or a
/// document of it made: the routes, schemas and declared responses do not
/// describe the API completely and exactly. Found when the description is
/// built, never while serving a request.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpenApiError {
    /// A route of the router has no [`OperationDoc`](super::OperationDoc).
    Undocumented {
        /// The method.
        method: Method,
        /// The path pattern.
        path: String,
    },
    /// An [`OperationDoc`](super::OperationDoc) names an operation the
    /// router does not route, or one documented twice.
    UnknownOperation {
        /// The method.
        method: Method,
        /// The path pattern.
        path: String,
        /// Why (`no route`, `documented twice`).
        reason: &'static str,
    },
    /// At a version the operation is served, no response is declared.
    NoResponse {
        /// The method.
        method: Method,
        /// The path pattern.
        path: String,
        /// The first version without a response.
        version: Version,
    },
    /// A body or query schema was registered as a plain serde type: its
    /// shape is not known.
    NoJsonSchema {
        /// The schemas' name.
        name: String,
        /// The versions of the schema.
        versions: VersionSpan,
    },
    /// A schema, response or parameter is declared at versions the
    /// operation is not served at.
    OutsideOperation {
        /// The method.
        method: Method,
        /// The path pattern.
        path: String,
        /// What was declared (`the body`, `the 200 response`).
        what: String,
        /// Its versions.
        versions: VersionSpan,
    },
    /// Something OpenAPI (with the `x-openstack` ranges) cannot say: a
    /// wildcard path, a query schema that is not a plain object, a `$ref`
    /// outside the document, an operation or parameter that goes away and
    /// comes back.
    Undescribable {
        /// What (`GET /a`, `the query of GET /a at 1.2 - 1.4`).
        what: String,
        /// Why.
        reason: String,
    },
    /// The router sets a success status at a version
    /// ([`VersionedRouter::status`](crate::VersionedRouter::status)) whose
    /// documents declare other successes.
    SuccessStatus {
        /// The method.
        method: Method,
        /// The path pattern.
        path: String,
        /// The first version where they differ.
        version: Version,
        /// The status the router sets.
        status: http::StatusCode,
        /// The success statuses documented there.
        documented: Vec<http::StatusCode>,
    },
    /// The version history given to the description does not fit it
    /// ([`ApiDescriptionBuilder::history`](super::ApiDescriptionBuilder::history)).
    History {
        /// The version.
        version: Version,
        /// What is wrong.
        problem: super::HistoryProblem,
    },
    /// A document was asked for a version outside the supported range.
    Unsupported {
        /// The version asked for.
        version: Version,
        /// The supported range.
        range: VersionRange,
    },
}

impl fmt::Display for OpenApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenApiError::Undocumented { method, path } => {
                write!(f, "{method} {path} is routed but not documented")
            }
            OpenApiError::UnknownOperation {
                method,
                path,
                reason,
            } => write!(f, "documentation of {method} {path}: {reason}"),
            OpenApiError::NoResponse {
                method,
                path,
                version,
            } => write!(
                f,
                "{method} {path} is served at {version} but declares no response there"
            ),
            OpenApiError::NoJsonSchema { name, versions } => write!(
                f,
                "the schema of {name} at {versions} is a serde type without a JSON Schema"
            ),
            OpenApiError::OutsideOperation {
                method,
                path,
                what,
                versions,
            } => write!(
                f,
                "{what} of {method} {path} is declared at {versions}, where the operation is not served"
            ),
            OpenApiError::Undescribable { what, reason } => {
                write!(f, "cannot describe {what}: {reason}")
            }
            OpenApiError::SuccessStatus {
                method,
                path,
                version,
                status,
                documented,
            } => {
                let documented: Vec<String> =
                    documented.iter().map(|s| s.as_u16().to_string()).collect();
                let documented = if documented.is_empty() {
                    "none".to_owned()
                } else {
                    documented.join(", ")
                };
                write!(
                    f,
                    "{method} {path} answers {} at {version} (VersionedRouter::status), but its \
                     documents declare as its success there: {documented}",
                    status.as_u16()
                )
            }
            OpenApiError::History { version, problem } => match problem {
                super::HistoryProblem::OutsideRange(range) => write!(
                    f,
                    "the history's change of {version} lies outside the range {range}"
                ),
                super::HistoryProblem::NoChange => {
                    write!(f, "version {version} has no change in the history")
                }
                super::HistoryProblem::NoDifference(description) => write!(
                    f,
                    "the change of {version} ({description:?}) makes no difference in the \
                     documents: describe what it changes, or mark it Change::behaviour if its \
                     effect is inside a handler"
                ),
            },
            OpenApiError::Unsupported { version, range } => write!(
                f,
                "version {version} is not supported: the range is {range}"
            ),
        }
    }
}

impl std::error::Error for OpenApiError {}
