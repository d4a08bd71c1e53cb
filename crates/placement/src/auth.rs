//! Authentication: upstream's two strategies.
//!
//! - `noauth2`: every path but the root needs an `x-auth-token`, else 401
//!   ([`require_token`]). The token is `user[:project]` (the project
//!   defaults to the user); the user `admin` gets the role `admin`. The
//!   headers keystonemiddleware would set are honoured: `x-roles` (comma
//!   separated), `x-project-id`, `x-domain-id`, `openstack-system-scope`
//!   ([`noauth2_context`] makes the request context of them).
//! - `keystone`: [`keystone_auth::KeystoneAuthLayer`] validates the token
//!   (the root passes without one, whatever the method, as upstream's
//!   `PlacementAuthProtocol` lets it), and [`keystone_context`] makes the
//!   request context of the identity it found.
//!
//! Either way the caller is found once, here: the request log reads the
//! [`Caller`] left in the response.

use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderName, StatusCode};
use microversion_server::ApiError;

use crate::context::RequestContext;
use crate::keystone_authtoken::KeystoneAuthtoken;

/// The caller authentication found, left in the response's extensions
/// for the request log when it is on (the log sits outside every layer
/// and cannot see the request's extensions).
#[derive(Clone, Debug)]
pub(crate) enum Caller {
    /// The identity Keystone validated.
    Keystone(Arc<keystone_auth::Identity>),
    /// oslo.context's user identity of the context `noauth2` made of the
    /// token and headers, with the user's and the project's domains
    /// (`x-user-domain-id`, `x-project-domain-id`), which only the log
    /// shows: formatted when the context is made, so that nothing of the
    /// context is copied for the log.
    Noauth2(String),
}

/// The domains `noauth2` reads for the log.
const USER_DOMAIN: HeaderName = HeaderName::from_static("x-user-domain-id");
const PROJECT_DOMAIN: HeaderName = HeaderName::from_static("x-project-domain-id");

/// Marks a response refused where upstream refuses it before its
/// microversion middleware (`noauth2`'s 401): the request log shows no
/// version.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RefusedUnversioned;

/// Whether a path is the root, which upstream serves without a token.
fn is_root(path: &str) -> bool {
    path == "/" || path.is_empty()
}

/// The Keystone layer of `[keystone_authtoken]`.
///
/// # Errors
///
/// A setting the layer refuses, named.
pub(crate) fn keystone_layer(
    settings: &KeystoneAuthtoken,
) -> Result<keystone_auth::KeystoneAuthLayer, keystone_auth::ConfigError> {
    keystone_auth::KeystoneAuthLayer::builder(settings.client()?)
        .www_authenticate_uri(
            settings
                .www_authenticate_uri
                .as_deref()
                .unwrap_or(&settings.auth_url),
        )
        .token_cache_time(settings.token_cache_time)
        .service_token_roles(settings.service_token_roles.iter().cloned())
        .service_token_roles_required(settings.service_token_roles_required)
        .public_if(|_: &http::Method, path: &str| is_root(path))
        // The handlers read the typed identity; nothing reads the headers.
        .identity_headers(false)
        .build()
}

/// The request context of a request the Keystone layer let in. A request
/// it did not authenticate (the root) has none; the handlers that need one
/// answer 401, as upstream's context middleware does without a user id.
///
/// With `log_caller` (the request log is on), the response carries the
/// identity for the log.
pub(crate) async fn keystone_context(log_caller: bool, mut req: Request, next: Next) -> Response {
    let identity = req
        .extensions()
        .get::<keystone_auth::RequestIdentity>()
        .map(|identity| Arc::clone(&identity.user));
    let Some(identity) = identity else {
        return next.run(req).await;
    };
    req.extensions_mut()
        .insert(RequestContext::from_identity(&identity));
    let mut response = next.run(req).await;
    if log_caller {
        response.extensions_mut().insert(Caller::Keystone(identity));
    }
    response
}

/// The request context of a `noauth2` request, made once of its token
/// and headers: none for the root or without a token. Outside CORS, the
/// OpenAPI documents and the version check, so that the request log shows
/// the caller of a request answered there too, as upstream's does.
///
/// With `log_caller` (the request log is on), the response carries the
/// caller for the log.
pub(crate) async fn noauth2_context(log_caller: bool, mut req: Request, next: Next) -> Response {
    if is_root(req.uri().path()) {
        return next.run(req).await;
    }
    let Some(token) = req.headers().get("x-auth-token") else {
        return next.run(req).await;
    };
    let context = context_from(&String::from_utf8_lossy(token.as_bytes()), req.headers());
    let caller = log_caller.then(|| {
        let header = |name: &HeaderName| req.headers().get(name).and_then(|v| v.to_str().ok());
        Caller::Noauth2(crate::requestlog::noauth2_identity(
            &context,
            header(&USER_DOMAIN),
            header(&PROJECT_DOMAIN),
        ))
    });
    req.extensions_mut().insert(context);
    let mut response = next.run(req).await;
    if let Some(caller) = caller {
        response.extensions_mut().insert(caller);
    }
    response
}

/// `noauth2`'s refusal of a request without a token (401); the root
/// passes. Inside the microversion layer, so that a refused version is
/// answered first; the context is [`noauth2_context`]'s.
pub(crate) async fn require_token(req: Request, next: Next) -> Response {
    if is_root(req.uri().path()) || req.headers().contains_key("x-auth-token") {
        return next.run(req).await;
    }
    let mut response = ApiError::new(
        StatusCode::UNAUTHORIZED,
        "The request you have made requires authentication.",
    )
    .into_response();
    // Upstream refuses it before its microversion middleware: its
    // request log shows no version.
    response.extensions_mut().insert(RefusedUnversioned);
    response
}

fn context_from(token: &str, headers: &http::HeaderMap) -> RequestContext {
    let (user_id, project_id) = match token.split_once(':') {
        Some((user, project)) if !project.is_empty() => (user, project),
        Some((user, _)) => (user, user),
        None => (token, token),
    };
    let header = |name: &str| {
        headers
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let roles = match header("x-roles") {
        Some(roles) => roles
            .split(',')
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty())
            .collect(),
        None if user_id == "admin" => vec!["admin".to_owned()],
        None => Vec::new(),
    };
    let system_scope = header("openstack-system-scope");
    RequestContext {
        user_id: user_id.to_owned(),
        // `x-project-id` wins over the token's project, as oslo.context
        // reads it before the tenant noauth2 sets; a system-scoped token
        // has no project otherwise.
        project_id: header("x-project-id")
            .or_else(|| system_scope.is_none().then(|| project_id.to_owned())),
        roles,
        system_scope,
        domain_id: header("x-domain-id"),
    }
}

#[cfg(test)]
mod tests {
    use http::{HeaderMap, HeaderValue};

    use super::*;

    #[test]
    fn tokens_and_headers() {
        let c = context_from("admin", &HeaderMap::new());
        assert_eq!(c.user_id, "admin");
        assert_eq!(c.project_id.as_deref(), Some("admin"));
        assert_eq!(c.roles, ["admin"]);
        let c = context_from("alice:proj", &HeaderMap::new());
        assert_eq!(
            (c.user_id.as_str(), c.project_id.as_deref()),
            ("alice", Some("proj"))
        );
        assert!(c.roles.is_empty());
        let mut h = HeaderMap::new();
        h.insert("x-roles", HeaderValue::from_static("reader, member"));
        h.insert("openstack-system-scope", HeaderValue::from_static("all"));
        let c = context_from("bob", &h);
        assert_eq!(c.roles, ["reader", "member"]);
        assert_eq!(c.project_id, None);
        assert_eq!(c.system_scope.as_deref(), Some("all"));
        let mut h = HeaderMap::new();
        h.insert("x-project-id", HeaderValue::from_static("p1"));
        let c = context_from("user", &h);
        assert_eq!(
            (c.user_id.as_str(), c.project_id.as_deref()),
            ("user", Some("p1"))
        );
    }
}
