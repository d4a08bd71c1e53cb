//! Keystone v3 token validation for tower services, as keystonemiddleware's
//! `auth_token` does it for Python services.
//!
//! - [`KeystoneClient`] holds the service's own credentials, gets and
//!   renews its token, and validates users' tokens
//!   (`GET /v3/auth/tokens`).
//! - [`TokenCache`] keeps successful validations for `token_cache_time`,
//!   keyed by the token's SHA-256, with one validation for concurrent
//!   requests carrying the same new token.
//! - [`KeystoneAuthLayer`] removes the identity headers a client sent,
//!   answers 401 (with `WWW-Authenticate: Keystone uri="..."`) or 503 like
//!   keystonemiddleware, and gives the inner service the identity as a
//!   [`RequestIdentity`] extension and as keystonemiddleware's headers
//!   (`X-User-Id`, `X-Project-Id`, `X-Roles`, `OpenStack-System-Scope`, ...).
//! - [`model`] has the serde types of Keystone's token body and the typed
//!   [`Identity`].
//!
//! For clients of OpenStack services, the other side:
//!
//! - [`session::Session`] gets a user's token (password, application
//!   credential or token methods; project, domain or system scope), keeps
//!   it, renews it before it expires, and shares one authentication
//!   between concurrent callers.
//! - [`catalog::Catalog`] finds a service's endpoint in the token's
//!   catalog by type (with the official aliases), interface and region.
//! - [`Secret`] keeps passwords and tokens out of `Debug` output.
//!
//! # Example
//!
//! ```no_run
//! use axum::{Extension, Router, routing::get};
//! use http::Method;
//! use keystone_auth::{DomainSpec, KeystoneAuthLayer, KeystoneClient, RequestIdentity};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = KeystoneClient::builder()
//!     .auth_url("http://127.0.0.1:5000/v3")
//!     .username("placement")
//!     .password("secret")
//!     .project_name("service")
//!     .user_domain(DomainSpec::Name("Default".into()))
//!     .project_domain(DomainSpec::Name("Default".into()))
//!     .build()?;
//! let auth = KeystoneAuthLayer::builder(client)
//!     .www_authenticate_uri("http://127.0.0.1:5000")
//!     .token_cache_time(300)
//!     .public_route(Method::GET, "/")
//!     .build()?;
//! let app = Router::new()
//!     .route("/", get(|| async { "versions" }))
//!     .route(
//!         "/whoami",
//!         get(|Extension(id): Extension<RequestIdentity>| async move {
//!             format!("{} in {:?} with {:?}", id.user.user_name, id.user.project_id(), id.user.roles)
//!         }),
//!     )
//!     .layer(auth);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8778").await?;
//! axum::serve(listener, app).await?;
//! # Ok(())
//! # }
//! ```
//!
//! # Features
//!
//! - `rustls` (default): HTTPS to Keystone with rustls, and the `cafile`
//!   and `insecure` settings.

/// The README's example compiles.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod cache;
pub mod catalog;
mod client;
mod error;
pub mod headers;
mod layer;
pub mod model;
mod rejection;
mod secret;
pub mod session;
mod slot;

pub use cache::{CacheStats, DEFAULT_CACHE_CAPACITY, DEFAULT_TOKEN_CACHE_TIME, TokenCache};
pub use catalog::Interface;
pub use client::{
    DomainSpec, KeystoneClient, KeystoneClientBuilder, MAX_TOKEN_LEN, is_plausible_token,
};
pub use error::{ConfigError, Error, ErrorKind};
pub use layer::{
    KeystoneAuth, KeystoneAuthLayer, KeystoneAuthLayerBuilder, PublicPredicate, ResponseFuture,
};
pub use model::{Identity, RequestIdentity, Scope};
pub use rejection::{Rejection, UNAUTHORIZED_BODY, UNAVAILABLE_BODY};
pub use secret::Secret;
