//! [`KeystoneAuthLayer`] and its [`KeystoneAuth`] service.
//!
//! For each request the service:
//! 1. removes every identity header the client sent
//!    ([`remove_identity_headers`]);
//! 2. calls the inner service at once for a public path;
//! 3. answers 401 when `X-Auth-Token` is missing, repeated, not plausible
//!    (empty, longer than [`MAX_TOKEN_LEN`](crate::MAX_TOKEN_LEN), not
//!    visible ASCII) or refused by Keystone, and 503 when Keystone cannot
//!    answer;
//! 4. validates `X-Service-Token` the same way when present: invalid, or
//!    lacking the service roles while they are required, is 401;
//! 5. otherwise inserts a [`RequestIdentity`] extension and
//!    keystonemiddleware's headers, and calls the inner service.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::header::HeaderValue;
use http::{HeaderMap, Method, Request, Response};
use tower_layer::Layer;
use tower_service::Service;

use crate::cache::{DEFAULT_CACHE_CAPACITY, DEFAULT_TOKEN_CACHE_TIME, TokenCache};
use crate::client::KeystoneClient;
use crate::error::{ConfigError, Error};
use crate::headers::{
    X_AUTH_TOKEN, X_SERVICE_TOKEN, insert_identity_headers, insert_service_headers,
    remove_identity_headers,
};
use crate::model::{Identity, RequestIdentity};
use crate::rejection::Rejection;

/// Decides which requests pass without a token.
///
/// Implemented for closures `Fn(&Method, &str) -> bool` taking the method
/// and the path.
pub trait PublicPredicate: Send + Sync + 'static {
    /// Whether a request with this method and path needs no token.
    fn is_public(&self, method: &Method, path: &str) -> bool;
}

impl<F> PublicPredicate for F
where
    F: Fn(&Method, &str) -> bool + Send + Sync + 'static,
{
    fn is_public(&self, method: &Method, path: &str) -> bool {
        self(method, path)
    }
}

/// A tower layer that authenticates requests with Keystone tokens.
///
/// Built with [`KeystoneAuthLayer::builder`]; cheap to clone (the cache
/// and the client are shared).
#[derive(Clone)]
pub struct KeystoneAuthLayer {
    shared: Arc<Shared>,
}

struct Shared {
    cache: TokenCache,
    www_authenticate: HeaderValue,
    public_routes: Vec<(Method, String)>,
    public_predicate: Option<Box<dyn PublicPredicate>>,
    service_token_roles: Vec<String>,
    service_token_roles_required: bool,
    identity_headers: bool,
}

impl fmt::Debug for KeystoneAuthLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeystoneAuthLayer")
            .field("cache", &self.shared.cache)
            .field("www_authenticate", &self.shared.www_authenticate)
            .field("public_routes", &self.shared.public_routes)
            .field("service_token_roles", &self.shared.service_token_roles)
            .finish_non_exhaustive()
    }
}

impl KeystoneAuthLayer {
    /// A builder around a [`KeystoneClient`].
    pub fn builder(client: KeystoneClient) -> KeystoneAuthLayerBuilder {
        KeystoneAuthLayerBuilder {
            client,
            www_authenticate_uri: None,
            token_cache_time: DEFAULT_TOKEN_CACHE_TIME,
            cache_capacity: DEFAULT_CACHE_CAPACITY,
            public_routes: Vec::new(),
            public_predicate: None,
            service_token_roles: vec!["service".to_owned()],
            service_token_roles_required: true,
            identity_headers: true,
        }
    }

    /// The token cache (to clear it, or to validate outside a request).
    #[must_use]
    pub fn cache(&self) -> &TokenCache {
        &self.shared.cache
    }
}

impl<S> Layer<S> for KeystoneAuthLayer {
    type Service = KeystoneAuth<S>;

    fn layer(&self, inner: S) -> Self::Service {
        KeystoneAuth {
            inner,
            shared: Arc::clone(&self.shared),
        }
    }
}

/// Settings of a [`KeystoneAuthLayer`].
#[must_use]
pub struct KeystoneAuthLayerBuilder {
    client: KeystoneClient,
    www_authenticate_uri: Option<String>,
    token_cache_time: i64,
    cache_capacity: u64,
    public_routes: Vec<(Method, String)>,
    public_predicate: Option<Box<dyn PublicPredicate>>,
    service_token_roles: Vec<String>,
    service_token_roles_required: bool,
    identity_headers: bool,
}

impl fmt::Debug for KeystoneAuthLayerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeystoneAuthLayerBuilder")
            .field("client", &self.client)
            .field("www_authenticate_uri", &self.www_authenticate_uri)
            .field("token_cache_time", &self.token_cache_time)
            .field("public_routes", &self.public_routes)
            .finish_non_exhaustive()
    }
}

impl KeystoneAuthLayerBuilder {
    /// The Keystone URL clients should authenticate with, sent in
    /// `WWW-Authenticate: Keystone uri="..."` on 401 (required).
    pub fn www_authenticate_uri(mut self, uri: impl Into<String>) -> Self {
        self.www_authenticate_uri = Some(uri.into());
        self
    }

    /// Seconds a validated token is cached (300 by default; -1 turns the
    /// cache off).
    pub fn token_cache_time(mut self, seconds: i64) -> Self {
        self.token_cache_time = seconds;
        self
    }

    /// The most tokens the cache holds (10 000 by default).
    pub fn cache_capacity(mut self, tokens: u64) -> Self {
        self.cache_capacity = tokens;
        self
    }

    /// A method and exact path served without a token (`GET /` for a
    /// versions document). May be given several times.
    pub fn public_route(mut self, method: Method, path: impl Into<String>) -> Self {
        self.public_routes.push((method, path.into()));
        self
    }

    /// A predicate for requests served without a token, besides the
    /// [`public_route`](Self::public_route)s.
    pub fn public_if(mut self, predicate: impl PublicPredicate) -> Self {
        self.public_predicate = Some(Box::new(predicate));
        self
    }

    /// The roles a service token must have one of (`service_token_roles`,
    /// `["service"]` by default).
    pub fn service_token_roles<I, R>(mut self, roles: I) -> Self
    where
        I: IntoIterator<Item = R>,
        R: Into<String>,
    {
        self.service_token_roles = roles.into_iter().map(Into::into).collect();
        self
    }

    /// Whether a service token without those roles is refused (401, the
    /// default) or only logged (`service_token_roles_required`).
    pub fn service_token_roles_required(mut self, required: bool) -> Self {
        self.service_token_roles_required = required;
        self
    }

    /// Whether keystonemiddleware's identity headers (`X-User-Id`,
    /// `X-Roles`, ..., `X-Service-Catalog`) are written for the inner
    /// service (on by default). A service that reads only the
    /// [`RequestIdentity`] extension turns them off and saves their
    /// writing on every request; the headers a client sent are removed
    /// either way.
    pub fn identity_headers(mut self, write: bool) -> Self {
        self.identity_headers = write;
        self
    }

    /// Checks the settings and makes the layer.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] for a missing or unusable `www_authenticate_uri`
    /// (not an http(s) URL, or with quotes or control bytes), a bad
    /// `token_cache_time` or capacity, a public path not starting with
    /// `/`, or required service roles that are empty.
    pub fn build(self) -> Result<KeystoneAuthLayer, ConfigError> {
        let uri = self
            .www_authenticate_uri
            .filter(|u| !u.is_empty())
            .ok_or_else(|| ConfigError::new("www_authenticate_uri", "is required"))?;
        let parsed = url::Url::parse(&uri)
            .map_err(|e| ConfigError::new("www_authenticate_uri", format!("{uri:?}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || uri.contains('"') {
            return Err(ConfigError::new(
                "www_authenticate_uri",
                format!("{uri:?}: not an http(s) URL"),
            ));
        }
        let www_authenticate = HeaderValue::try_from(format!("Keystone uri=\"{uri}\""))
            .map_err(|_| ConfigError::new("www_authenticate_uri", "not a valid header value"))?;
        let cache = TokenCache::new(self.client, self.token_cache_time, self.cache_capacity)?;
        if let Some((_, path)) = self.public_routes.iter().find(|(_, p)| !p.starts_with('/')) {
            return Err(ConfigError::new(
                "public_route",
                format!("{path:?}: must start with /"),
            ));
        }
        if self.service_token_roles_required && self.service_token_roles.is_empty() {
            return Err(ConfigError::new(
                "service_token_roles",
                "empty while service_token_roles_required is true",
            ));
        }
        Ok(KeystoneAuthLayer {
            shared: Arc::new(Shared {
                cache,
                www_authenticate,
                public_routes: self.public_routes,
                public_predicate: self.public_predicate,
                service_token_roles: self.service_token_roles,
                service_token_roles_required: self.service_token_roles_required,
                identity_headers: self.identity_headers,
            }),
        })
    }
}

/// The service of [`KeystoneAuthLayer`].
#[derive(Clone)]
pub struct KeystoneAuth<S> {
    inner: S,
    shared: Arc<Shared>,
}

impl<S: fmt::Debug> fmt::Debug for KeystoneAuth<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeystoneAuth")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl Shared {
    fn is_public(&self, method: &Method, path: &str) -> bool {
        self.public_routes
            .iter()
            .any(|(m, p)| m == method && p == path)
            || self
                .public_predicate
                .as_ref()
                .is_some_and(|p| p.is_public(method, path))
    }

    /// The request's identity, or the rejection to answer.
    async fn authenticate(&self, headers: &HeaderMap) -> Result<RequestIdentity, Rejection> {
        let token = single_token(headers, &X_AUTH_TOKEN)?.ok_or(Rejection::Unauthorized)?;
        let user = self
            .cache
            .identity(token)
            .await
            .map_err(|e| reject(&e, "user"))?;
        let service = match single_token(headers, &X_SERVICE_TOKEN)? {
            None => None,
            Some(token) => Some(self.service_identity(token).await?),
        };
        Ok(RequestIdentity { user, service })
    }

    async fn service_identity(&self, token: &str) -> Result<Arc<Identity>, Rejection> {
        let service = self
            .cache
            .identity(token)
            .await
            .map_err(|e| reject(&e, "service"))?;
        let has_role = self.service_token_roles.iter().any(|r| service.has_role(r));
        if !has_role {
            if self.service_token_roles_required {
                tracing::info!(
                    user = %service.user_id,
                    "service token lacks the service roles; refused"
                );
                return Err(Rejection::Unauthorized);
            }
            tracing::warn!(
                user = %service.user_id,
                "service token lacks the service roles; accepted as service_token_roles_required is false"
            );
        }
        Ok(service)
    }
}

/// The one value of a token header: none is `Ok(None)`, several or one
/// that is not visible ASCII is a 401.
fn single_token<'a>(
    headers: &'a HeaderMap,
    name: &http::HeaderName,
) -> Result<Option<&'a str>, Rejection> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(Rejection::Unauthorized);
    }
    first
        .to_str()
        .map(Some)
        .map_err(|_| Rejection::Unauthorized)
}

fn reject(e: &Error, which: &'static str) -> Rejection {
    if e.is_invalid_token() {
        tracing::debug!(token = which, "token refused");
        Rejection::Unauthorized
    } else {
        tracing::warn!(token = which, error = %e, "keystone unavailable");
        Rejection::Unavailable
    }
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for KeystoneAuth<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    ReqBody: Send + 'static,
    ResBody: From<String> + Send + 'static,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = ResponseFuture<ResBody, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<ReqBody>) -> Self::Future {
        // The clone is not ready; keep it and call the one that is.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let shared = Arc::clone(&self.shared);
        remove_identity_headers(request.headers_mut());
        if shared.is_public(request.method(), request.uri().path()) {
            let future = inner.call(request);
            return ResponseFuture {
                inner: Box::pin(future),
            };
        }
        ResponseFuture {
            inner: Box::pin(async move {
                match shared.authenticate(request.headers()).await {
                    Ok(identity) => {
                        if shared.identity_headers {
                            let headers = request.headers_mut();
                            insert_identity_headers(headers, &identity.user);
                            if let Some(service) = &identity.service {
                                insert_service_headers(headers, service);
                            }
                        }
                        request.extensions_mut().insert(identity);
                        inner.call(request).await
                    }
                    Err(rejection) => Ok(rejection.into_response(&shared.www_authenticate)),
                }
            }),
        }
    }
}

/// The response future of [`KeystoneAuth`].
pub struct ResponseFuture<B, E> {
    inner: Pin<Box<dyn Future<Output = Result<Response<B>, E>> + Send>>,
}

impl<B, E> fmt::Debug for ResponseFuture<B, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

impl<B, E> Future for ResponseFuture<B, E> {
    type Output = Result<Response<B>, E>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client() -> KeystoneClient {
        KeystoneClient::unreachable_for_tests()
    }

    #[test]
    fn build_checks_settings() {
        let ok = KeystoneAuthLayer::builder(client())
            .www_authenticate_uri("http://127.0.0.1:5000")
            .build()
            .unwrap();
        assert_eq!(
            ok.shared.www_authenticate,
            r#"Keystone uri="http://127.0.0.1:5000""#
        );
        let e = KeystoneAuthLayer::builder(client()).build().unwrap_err();
        assert_eq!(e.setting(), "www_authenticate_uri");
        for bad in ["nope", "ftp://k/", "http://k/\"x"] {
            let e = KeystoneAuthLayer::builder(client())
                .www_authenticate_uri(bad)
                .build()
                .unwrap_err();
            assert_eq!(e.setting(), "www_authenticate_uri", "{bad}");
        }
        let e = KeystoneAuthLayer::builder(client())
            .www_authenticate_uri("http://k")
            .token_cache_time(-5)
            .build()
            .unwrap_err();
        assert_eq!(e.setting(), "token_cache_time");
        let e = KeystoneAuthLayer::builder(client())
            .www_authenticate_uri("http://k")
            .public_route(Method::GET, "versions")
            .build()
            .unwrap_err();
        assert_eq!(e.setting(), "public_route");
        let e = KeystoneAuthLayer::builder(client())
            .www_authenticate_uri("http://k")
            .service_token_roles(Vec::<String>::new())
            .build()
            .unwrap_err();
        assert_eq!(e.setting(), "service_token_roles");
    }

    #[test]
    fn public_routes_and_predicate() {
        let layer = KeystoneAuthLayer::builder(client())
            .www_authenticate_uri("http://k")
            .public_route(Method::GET, "/")
            .public_if(|m: &Method, p: &str| m == Method::GET && p.starts_with("/healthz"))
            .build()
            .unwrap();
        let s = &layer.shared;
        assert!(s.is_public(&Method::GET, "/"));
        assert!(!s.is_public(&Method::POST, "/"));
        assert!(!s.is_public(&Method::GET, "/resource_providers"));
        assert!(s.is_public(&Method::GET, "/healthz/live"));
    }

    #[test]
    fn repeated_or_binary_tokens_are_refused() {
        let mut h = HeaderMap::new();
        assert_eq!(single_token(&h, &X_AUTH_TOKEN), Ok(None));
        h.append(X_AUTH_TOKEN, HeaderValue::from_static("a"));
        assert_eq!(single_token(&h, &X_AUTH_TOKEN), Ok(Some("a")));
        h.append(X_AUTH_TOKEN, HeaderValue::from_static("b"));
        assert_eq!(
            single_token(&h, &X_AUTH_TOKEN),
            Err(Rejection::Unauthorized)
        );
        let mut h = HeaderMap::new();
        h.insert(X_AUTH_TOKEN, HeaderValue::from_bytes(b"\xff\xfe").unwrap());
        assert_eq!(
            single_token(&h, &X_AUTH_TOKEN),
            Err(Rejection::Unauthorized)
        );
    }
}
