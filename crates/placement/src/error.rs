//! Errors of the service: an API answer, or a database failure.

use axum::response::{IntoResponse, Response};
use http::StatusCode;
use microversion_server::{ApiError, BodyError};

/// Upstream's error codes (shown from microversion 1.23).
pub(crate) mod code {
    pub(crate) const INVENTORY_INUSE: &str = "placement.inventory.inuse";
    pub(crate) const CONCURRENT_UPDATE: &str = "placement.concurrent_update";
    pub(crate) const DUPLICATE_NAME: &str = "placement.duplicate_name";
    pub(crate) const PROVIDER_IN_USE: &str = "placement.resource_provider.inuse";
    pub(crate) const PROVIDER_CANNOT_DELETE_PARENT: &str =
        "placement.resource_provider.cannot_delete_parent";
    pub(crate) const RESOURCE_PROVIDER_NOT_FOUND: &str = "placement.resource_provider.not_found";
    pub(crate) const QUERYPARAM_DUPLICATE_KEY: &str = "placement.query.duplicate_key";
    pub(crate) const QUERYPARAM_BAD_VALUE: &str = "placement.query.bad_value";
    pub(crate) const QUERYPARAM_MISSING_VALUE: &str = "placement.query.missing_value";
}

/// A failed request.
#[derive(Debug)]
pub(crate) enum Error {
    /// An answer for the client (4xx, or a 5xx the service chose).
    Api(ApiError),
    /// The database failed (or the store could not start the work).
    Db(crate::db::Error),
    /// The database answered what cannot be: a row this transaction has
    /// just written is not there to read back, or a provider's root or
    /// parent is missing from the rows of its tree.
    Inconsistent(String),
}

pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn new(status: StatusCode, detail: impl Into<String>) -> Self {
        Error::Api(ApiError::new(status, detail))
    }

    pub(crate) fn bad_request(detail: impl Into<String>) -> Self {
        Error::new(StatusCode::BAD_REQUEST, detail)
    }

    pub(crate) fn not_found(detail: impl Into<String>) -> Self {
        Error::new(StatusCode::NOT_FOUND, detail)
    }

    pub(crate) fn conflict(detail: impl Into<String>) -> Self {
        Error::new(StatusCode::CONFLICT, detail)
    }

    /// Sets the error code (ignored on a database error).
    pub(crate) fn with_code(self, code: &str) -> Self {
        match self {
            Error::Api(e) => Error::Api(e.with_code(code)),
            other => other,
        }
    }
}

impl Error {
    /// A database failure that the same work may not meet again: a lock
    /// not had in time, a deadlock, a serialization failure.
    pub(crate) fn is_transient(&self) -> bool {
        matches!(self, Error::Db(e) if e.is_transient())
    }

    /// A write that a unique key refused.
    pub(crate) fn is_unique_violation(&self) -> bool {
        matches!(self, Error::Db(e) if e.is_unique_violation())
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Api(e) => f.write_str(e.detail()),
            Error::Db(e) => write!(f, "{e}"),
            Error::Inconsistent(what) => f.write_str(what),
        }
    }
}

impl From<crate::db::Error> for Error {
    fn from(e: crate::db::Error) -> Self {
        Error::Db(e)
    }
}

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        Error::Api(e)
    }
}

impl From<BodyError> for Error {
    fn from(e: BodyError) -> Self {
        Error::Api(e.into())
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        match self {
            Error::Api(e) => e.into_response(),
            Error::Db(e) if e.is_shutting_down() => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.to_string()).into_response()
            }
            Error::Db(e) if e.is_unstorable_text() => {
                tracing::info!(error = %e, "text the database cannot store");
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "The request holds text the database cannot store (a NUL character, \
                     or a character outside its character set).",
                )
                .into_response()
            }
            Error::Db(e) if e.is_unreachable() => database_unreachable(&e),
            Error::Db(e) => database_failed(&e),
            Error::Inconsistent(what) => database_failed(&what),
        }
    }
}

/// Marks a response answered 503 because the database could not be
/// reached (see [`crate::db::Health`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DatabaseUnreachable;

/// The detail of the 503 answered while the database cannot be reached.
pub(crate) const DATABASE_UNREACHABLE: &str =
    "The database cannot be reached; please try again later.";

/// 503 for a database that cannot be reached or cannot serve now (the
/// request may be sent again), its cause logged and not shown.
fn database_unreachable(cause: &dyn std::fmt::Display) -> Response {
    tracing::warn!(error = %cause, "database unreachable");
    unreachable_response()
}

/// The 503 of a database that cannot be reached, marked with
/// [`DatabaseUnreachable`].
pub(crate) fn unreachable_response() -> Response {
    let mut response =
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, DATABASE_UNREACHABLE).into_response();
    response.extensions_mut().insert(DatabaseUnreachable);
    response
}

/// 500 for a failed database, its cause logged and not shown.
fn database_failed(cause: &dyn std::fmt::Display) -> Response {
    tracing::error!(error = %cause, "database error");
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "The database failed to complete the request.",
    )
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_database_is_a_503_marked_for_the_probe() {
        for cause in [
            sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
            sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::UnexpectedEof)),
            sqlx::Error::PoolTimedOut,
        ] {
            let response = Error::from(crate::db::Error::from(cause)).into_response();
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
            assert!(response.extensions().get::<DatabaseUnreachable>().is_some());
            let detail = response
                .extensions()
                .get::<ApiError>()
                .map(|e| e.detail().to_owned());
            assert_eq!(detail.as_deref(), Some(DATABASE_UNREACHABLE));
        }
        let other = Error::from(crate::db::Error::from(sqlx::Error::RowNotFound)).into_response();
        assert_eq!(other.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(other.extensions().get::<DatabaseUnreachable>().is_none());
    }

    #[test]
    fn a_store_shutting_down_is_a_503_with_its_reason() {
        let response = Error::from(crate::db::Error::shutting_down()).into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(response.extensions().get::<DatabaseUnreachable>().is_none());
        let detail = response
            .extensions()
            .get::<ApiError>()
            .map(|e| e.detail().to_owned());
        assert_eq!(detail.as_deref(), Some("The service is shutting down."));
    }

    #[test]
    fn an_inconsistent_database_is_a_500_that_keeps_its_cause_to_the_log() {
        let error = Error::Inconsistent("the consumer c1 just inserted cannot be read back".into());
        assert!(!error.is_transient());
        assert!(!error.is_unique_violation());
        let response = error.into_response();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let detail = response
            .extensions()
            .get::<ApiError>()
            .map(|e| e.detail().to_owned());
        assert_eq!(
            detail.as_deref(),
            Some("The database failed to complete the request.")
        );
    }
}
