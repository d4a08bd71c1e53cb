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
    /// The domain of a domain-scoped token.
    pub domain_id: Option<String>,
}

/// What a token is scoped to, as oslo.policy tells it for `scope_types`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenScope {
    /// The whole deployment.
    System,
    /// One domain.
    Domain,
    /// One project (or, with noauth2, whatever the token names).
    Project,
}

impl TokenScope {
    /// The name in a rule's `scope_types`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::Domain => "domain",
            Self::Project => "project",
        }
    }
}

impl RequestContext {
    /// Whether the caller has `role` (case-insensitive, as Keystone roles).
    #[must_use]
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r.eq_ignore_ascii_case(role))
    }

    /// The token's scope: system before domain before project, as
    /// oslo.policy decides it.
    #[must_use]
    pub fn scope(&self) -> TokenScope {
        if self.system_scope.is_some() {
            TokenScope::System
        } else if self.domain_id.is_some() {
            TokenScope::Domain
        } else {
            TokenScope::Project
        }
    }

    /// The context of a request Keystone authenticated.
    #[must_use]
    pub fn from_identity(identity: &keystone_auth::Identity) -> Self {
        use keystone_auth::Scope;
        let (project_id, domain_id, system_scope) = match &identity.scope {
            Scope::Project { project, .. } => (Some(project.id.clone()), None, None),
            Scope::Domain(domain) => (None, Some(domain.id.clone()), None),
            Scope::System => (None, None, Some("all".to_owned())),
            _ => (None, None, None),
        };
        RequestContext {
            user_id: identity.user_id.clone(),
            project_id,
            roles: identity.roles.clone(),
            system_scope,
            domain_id,
        }
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
