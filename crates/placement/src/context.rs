//! Who is calling: the request context that authentication builds and
//! policy checks read.

use axum::extract::FromRequestParts;
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use microversion_server::ApiError;

/// The caller of a request, as keystonemiddleware (or `noauth2`) tells it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestContext {
    /// The user.
    pub user_id: String,
    /// The project the token is scoped to; `None` for a system-scoped
    /// token.
    pub project_id: Option<String>,
    /// The roles, flattened (`admin` may come with `member`, `reader`).
    pub roles: Vec<String>,
    /// The system scope (`all`), for system-scoped tokens.
    pub system_scope: Option<String>,
}

impl RequestContext {
    /// Whether the caller has `role` (case-insensitive, as Keystone roles).
    #[must_use]
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r.eq_ignore_ascii_case(role))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RequestContext {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<RequestContext>()
            .cloned()
            .ok_or_else(|| {
                ApiError::new(
                    http::StatusCode::UNAUTHORIZED,
                    "The request you have made requires authentication.",
                )
                .into_response()
            })
    }
}
