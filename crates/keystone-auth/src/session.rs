//! [`Session`]: a user's token, as a client holds it: got from Keystone
//! with a password, an application credential or another token, kept,
//! renewed before it expires, and shared by every caller.
//!
//! This is the client side of Keystone; [`KeystoneClient`](crate::KeystoneClient)
//! is the service side.
//!
//! ```no_run
//! use keystone_auth::session::{Credentials, ProjectSpec, ScopeSpec, Session, UserSpec};
//! use keystone_auth::catalog::Interface;
//! use keystone_auth::DomainSpec;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let session = Session::builder()
//!     .auth_url("http://127.0.0.1:5000/v3")
//!     .credentials(Credentials::Password {
//!         user: UserSpec::Name { name: "demo".into(), domain: DomainSpec::Name("Default".into()) },
//!         password: "s3cret".into(),
//!         scope: ScopeSpec::Project(ProjectSpec::Name {
//!             name: "demo".into(),
//!             domain: DomainSpec::Name("Default".into()),
//!         }),
//!     })
//!     .build()?;
//! let token = session.token().await?;
//! let placement = token.catalog().endpoint("placement", Interface::Public, None)?;
//! println!("placement is at {}", placement.url);
//! # Ok(()) }
//! ```

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::HeaderValue;
use http::StatusCode;
use serde_json::{Value, json};
use time::OffsetDateTime;
use url::Url;

use crate::catalog::Catalog;
use crate::client::{DomainSpec, is_plausible_token, read_body, tokens_url};
use crate::error::ConfigError;
use crate::headers::X_SUBJECT_TOKEN;
use crate::model::{Identity, TokenResponse};
use crate::secret::Secret;
use crate::slot::{Renewable, TokenSlot, renew_at};

/// A user, by id or by name in a domain.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UserSpec {
    /// `user_id`: ids are unique across domains.
    Id(String),
    /// `username` with `user_domain_name` or `user_domain_id`.
    Name {
        /// The user's name.
        name: String,
        /// The user's domain.
        domain: DomainSpec,
    },
}

/// A project, by id or by name in a domain.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProjectSpec {
    /// `project_id`.
    Id(String),
    /// `project_name` with `project_domain_name` or `project_domain_id`.
    Name {
        /// The project's name.
        name: String,
        /// The project's domain.
        domain: DomainSpec,
    },
}

/// What a token is asked to be scoped to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScopeSpec {
    /// A project: what most service calls need.
    Project(ProjectSpec),
    /// A domain (`domain_name` / `domain_id`).
    Domain(DomainSpec),
    /// The whole deployment (`system_scope: all`).
    System,
    /// No scope asked: Keystone scopes to the user's default project, if
    /// any.
    Unscoped,
}

/// An application credential, by id or by name of one of a user's.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApplicationCredentialSpec {
    /// `application_credential_id`.
    Id(String),
    /// `application_credential_name` of the user.
    Name {
        /// The credential's name.
        name: String,
        /// Its user.
        user: UserSpec,
    },
}

/// How the user proves who they are.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Credentials {
    /// `password` (v3): a user and a password, with a scope.
    Password {
        /// The user.
        user: UserSpec,
        /// The password.
        password: Secret,
        /// The scope to ask for.
        scope: ScopeSpec,
    },
    /// `v3applicationcredential`: its scope and roles are its own.
    ApplicationCredential {
        /// Which credential.
        credential: ApplicationCredentialSpec,
        /// Its secret.
        secret: Secret,
    },
    /// `token` (v3): an existing token exchanged for one of the scope.
    Token {
        /// The existing token.
        token: Secret,
        /// The scope to ask for.
        scope: ScopeSpec,
    },
}

impl Credentials {
    /// The `{"auth": ...}` body of `POST /v3/auth/tokens`.
    fn body(&self) -> Value {
        let (identity, scope) = match self {
            Self::Password {
                user,
                password,
                scope,
            } => {
                let mut user = user_json(user);
                user["password"] = json!(password.expose());
                (
                    json!({"methods": ["password"], "password": {"user": user}}),
                    Some(scope),
                )
            }
            Self::ApplicationCredential { credential, secret } => {
                let mut credential = match credential {
                    ApplicationCredentialSpec::Id(id) => json!({ "id": id }),
                    ApplicationCredentialSpec::Name { name, user } => {
                        json!({ "name": name, "user": user_json(user) })
                    }
                };
                credential["secret"] = json!(secret.expose());
                (
                    json!({"methods": ["application_credential"], "application_credential": credential}),
                    None,
                )
            }
            Self::Token { token, scope } => (
                json!({"methods": ["token"], "token": {"id": token.expose()}}),
                Some(scope),
            ),
        };
        let mut auth = json!({ "identity": identity });
        if let Some(scope) = scope.and_then(scope_json) {
            auth["scope"] = scope;
        }
        json!({ "auth": auth })
    }

    /// Who these credentials are, without the secret: for messages.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::Password { user, .. } => format!("the password of {}", describe_user(user)),
            Self::ApplicationCredential { credential, .. } => match credential {
                ApplicationCredentialSpec::Id(id) => format!("application credential {id:?}"),
                ApplicationCredentialSpec::Name { name, user } => {
                    format!("application credential {name:?} of {}", describe_user(user))
                }
            },
            Self::Token { .. } => "the token given".to_owned(),
        }
    }
}

fn describe_user(user: &UserSpec) -> String {
    match user {
        UserSpec::Id(id) => format!("user id {id:?}"),
        UserSpec::Name { name, domain } => match domain {
            DomainSpec::Id(d) => format!("user {name:?} (domain id {d:?})"),
            DomainSpec::Name(d) => format!("user {name:?} (domain {d:?})"),
        },
    }
}

fn user_json(user: &UserSpec) -> Value {
    match user {
        UserSpec::Id(id) => json!({ "id": id }),
        UserSpec::Name { name, domain } => json!({ "name": name, "domain": domain.to_json() }),
    }
}

fn scope_json(scope: &ScopeSpec) -> Option<Value> {
    Some(match scope {
        ScopeSpec::Project(ProjectSpec::Id(id)) => json!({"project": {"id": id}}),
        ScopeSpec::Project(ProjectSpec::Name { name, domain }) => {
            json!({"project": {"name": name, "domain": domain.to_json()}})
        }
        ScopeSpec::Domain(domain) => json!({ "domain": domain.to_json() }),
        ScopeSpec::System => json!({"system": {"all": true}}),
        ScopeSpec::Unscoped => return None,
    })
}

/// Why no token could be had.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// Keystone refused the credentials (400, 401, 403 or 404), for
    /// example a wrong password or an unknown project.
    #[error("keystone at {url} refused {who}: {status} {message}")]
    Refused {
        /// Keystone's tokens URL.
        url: String,
        /// Who the credentials are ([`Credentials::describe`]).
        who: String,
        /// Keystone's status.
        status: u16,
        /// Keystone's own message, if its body had one.
        message: String,
    },
    /// Keystone could not be reached or did not answer in time.
    #[error("keystone at {url} could not be reached: {reason}")]
    Unreachable {
        /// Keystone's tokens URL.
        url: String,
        /// What reqwest said.
        reason: String,
    },
    /// Keystone answered with another status (5xx, ...).
    #[error("keystone at {url} answered {status}")]
    Status {
        /// Keystone's tokens URL.
        url: String,
        /// The status.
        status: u16,
    },
    /// Keystone's answer was no token: no `X-Subject-Token` header, no
    /// JSON token body, an expiry in the past.
    #[error("keystone at {url} gave no usable token: {reason}")]
    InvalidResponse {
        /// Keystone's tokens URL.
        url: String,
        /// What was wrong.
        reason: String,
    },
}

impl AuthError {
    /// Whether Keystone refused the credentials (retrying cannot help).
    #[must_use]
    pub fn is_refused(&self) -> bool {
        matches!(self, Self::Refused { .. })
    }
}

/// A token the session holds.
#[derive(Clone)]
pub struct UserToken {
    value: HeaderValue,
    identity: Identity,
    catalog: Catalog,
    renew_at: OffsetDateTime,
}

impl UserToken {
    /// The `X-Auth-Token` value, marked sensitive.
    #[must_use]
    pub fn header_value(&self) -> &HeaderValue {
        &self.value
    }

    /// Who the token is for, its scope, roles and expiry.
    #[must_use]
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The token's catalog (empty when Keystone sent none).
    #[must_use]
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// When the session will get a new token instead of this one.
    #[must_use]
    pub fn renew_at(&self) -> OffsetDateTime {
        self.renew_at
    }
}

impl Renewable for UserToken {
    fn renew_at(&self) -> OffsetDateTime {
        self.renew_at
    }
}

impl fmt::Debug for UserToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserToken")
            .field("user_id", &self.identity.user_id)
            .field("scope", &self.identity.scope)
            .field("expires_at", &self.identity.expires_at)
            .field("renew_at", &self.renew_at)
            .finish_non_exhaustive()
    }
}

/// A user's authenticated session with Keystone. Cheap to clone: clones
/// share the token, so concurrent callers cause one authentication.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    tokens_url: Url,
    body: Vec<u8>,
    who: String,
    renew_before: Duration,
    current: TokenSlot<UserToken>,
    authentications: AtomicUsize,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("tokens_url", &self.inner.tokens_url.as_str())
            .field("credentials", &self.inner.who)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A builder; [`SessionBuilder`] lists the settings.
    pub fn builder() -> SessionBuilder {
        SessionBuilder::default()
    }

    /// A token that is not due for renewal: the one held, or a new one
    /// from Keystone. Concurrent callers wait for one authentication.
    ///
    /// # Errors
    ///
    /// An [`AuthError`]: credentials refused, Keystone unreachable, or an
    /// answer that holds no token.
    pub async fn token(&self) -> Result<Arc<UserToken>, AuthError> {
        self.inner
            .current
            .get_or_renew(|| self.authenticate())
            .await
    }

    /// Forgets `used` (a service answered 401 to it), so that the next
    /// [`Session::token`] authenticates again. A newer token someone else
    /// already got is kept.
    pub fn invalidate(&self, used: &Arc<UserToken>) {
        self.inner.current.forget(used);
    }

    /// How many times this session asked Keystone for a token.
    #[must_use]
    pub fn authentications(&self) -> usize {
        self.inner.authentications.load(Ordering::Relaxed)
    }

    /// Keystone's tokens URL (`<auth_url>/v3/auth/tokens`).
    #[must_use]
    pub fn tokens_url(&self) -> &Url {
        &self.inner.tokens_url
    }

    async fn authenticate(&self) -> Result<UserToken, AuthError> {
        self.inner.authentications.fetch_add(1, Ordering::Relaxed);
        let url = self.inner.tokens_url.as_str().to_owned();
        let response = self
            .inner
            .http
            .post(self.inner.tokens_url.clone())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .body(self.inner.body.clone())
            .send()
            .await
            .map_err(|e| AuthError::Unreachable {
                url: url.clone(),
                reason: reqwest_reason(&e),
            })?;
        let status = response.status();
        let invalid = |reason: &str| AuthError::InvalidResponse {
            url: url.clone(),
            reason: reason.to_owned(),
        };
        if matches!(
            status,
            StatusCode::BAD_REQUEST
                | StatusCode::UNAUTHORIZED
                | StatusCode::FORBIDDEN
                | StatusCode::NOT_FOUND
        ) {
            let body = read_body(response).await.unwrap_or_default();
            return Err(AuthError::Refused {
                url: url.clone(),
                who: self.inner.who.clone(),
                status: status.as_u16(),
                message: keystone_message(status, &body),
            });
        }
        if !status.is_success() {
            return Err(AuthError::Status {
                url: url.clone(),
                status: status.as_u16(),
            });
        }
        let mut value = response
            .headers()
            .get(X_SUBJECT_TOKEN)
            .cloned()
            .ok_or_else(|| invalid("the answer has no X-Subject-Token header"))?;
        if !is_plausible_token(value.as_bytes()) {
            return Err(invalid("the X-Subject-Token header is not a token"));
        }
        value.set_sensitive(true);
        let body = read_body(response)
            .await
            .map_err(|_| invalid("the body could not be read"))?;
        let parsed: TokenResponse = serde_json::from_slice(&body)
            .map_err(|e| invalid(&format!("the body is not a token: {e}")))?;
        let identity = Identity::try_from(parsed.token).map_err(|e| invalid(&e.to_string()))?;
        let now = OffsetDateTime::now_utc();
        if identity.expires_at <= now {
            return Err(invalid("the token has already expired"));
        }
        let catalog = Catalog::new(identity.catalog.clone().unwrap_or_default());
        tracing::debug!(expires_at = %identity.expires_at, "got a user token");
        Ok(UserToken {
            value,
            renew_at: renew_at(now, identity.expires_at, self.inner.renew_before),
            identity,
            catalog,
        })
    }
}

/// Keystone's error message: `{"error": {"message": ...}}`, else the
/// status' reason.
fn keystone_message(status: StatusCode, body: &[u8]) -> String {
    let reason = status.canonical_reason().unwrap_or_default().to_owned();
    let message = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_owned));
    match message {
        Some(m) if !m.is_empty() => format!("{reason}: {m}"),
        _ => reason,
    }
}

/// reqwest's error and its causes on one line (the URL is named apart).
fn reqwest_reason(e: &reqwest::Error) -> String {
    let mut text = if e.is_timeout() {
        "timed out".to_owned()
    } else if e.is_connect() {
        "connection failed".to_owned()
    } else {
        "request failed".to_owned()
    };
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// Settings of a [`Session`]. Required: [`auth_url`](Self::auth_url) and
/// [`credentials`](Self::credentials).
#[must_use]
pub struct SessionBuilder {
    auth_url: Option<String>,
    credentials: Option<Credentials>,
    http: Option<reqwest::Client>,
    renew_before: Duration,
}

impl Default for SessionBuilder {
    fn default() -> Self {
        Self {
            auth_url: None,
            credentials: None,
            http: None,
            renew_before: Duration::from_secs(120),
        }
    }
}

impl fmt::Debug for SessionBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionBuilder")
            .field("auth_url", &self.auth_url)
            .field("credentials", &self.credentials)
            .field("renew_before", &self.renew_before)
            .finish_non_exhaustive()
    }
}

impl SessionBuilder {
    /// Keystone's URL, with or without its `/v3`.
    pub fn auth_url(mut self, url: impl Into<String>) -> Self {
        self.auth_url = Some(url.into());
        self
    }

    /// How to authenticate.
    pub fn credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// The HTTP client to reach Keystone with (its TLS settings and time
    /// limits apply). By default, a client with a 30 s time limit.
    pub fn http_client(mut self, http: reqwest::Client) -> Self {
        self.http = Some(http);
        self
    }

    /// How long before its expiry a token is renewed (two minutes by
    /// default, or half the token's life when that is shorter).
    pub fn renew_before(mut self, margin: Duration) -> Self {
        self.renew_before = margin;
        self
    }

    /// Checks the settings and makes the session; nothing is sent yet.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the setting: `auth_url` missing or not an
    /// http(s) URL, `credentials` missing, an empty name, id or secret.
    pub fn build(self) -> Result<Session, ConfigError> {
        let tokens_url = tokens_url(self.auth_url.as_deref())?;
        let credentials = self
            .credentials
            .ok_or_else(|| ConfigError::new("credentials", "are required"))?;
        check(&credentials)?;
        let body = serde_json::to_vec(&credentials.body())
            .map_err(|e| ConfigError::new("credentials", e.to_string()))?;
        let http = match self.http {
            Some(http) => http,
            None => reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .map_err(|e| ConfigError::new("auth_url", format!("HTTP client: {e}")))?,
        };
        Ok(Session {
            inner: Arc::new(Inner {
                http,
                tokens_url,
                body,
                who: credentials.describe(),
                renew_before: self.renew_before,
                current: TokenSlot::new(),
                authentications: AtomicUsize::new(0),
            }),
        })
    }
}

/// Empty names, ids and secrets are refused before any request.
fn check(credentials: &Credentials) -> Result<(), ConfigError> {
    fn non_empty(setting: &'static str, value: &str) -> Result<(), ConfigError> {
        if value.is_empty() {
            Err(ConfigError::new(setting, "is empty"))
        } else {
            Ok(())
        }
    }
    fn domain(setting: &'static str, d: &DomainSpec) -> Result<(), ConfigError> {
        if d.is_empty() {
            Err(ConfigError::new(setting, "is empty"))
        } else {
            Ok(())
        }
    }
    fn user(u: &UserSpec) -> Result<(), ConfigError> {
        match u {
            UserSpec::Id(id) => non_empty("user_id", id),
            UserSpec::Name { name, domain: d } => {
                non_empty("username", name)?;
                domain("user_domain_name", d)
            }
        }
    }
    fn scope(s: &ScopeSpec) -> Result<(), ConfigError> {
        match s {
            ScopeSpec::Project(ProjectSpec::Id(id)) => non_empty("project_id", id),
            ScopeSpec::Project(ProjectSpec::Name { name, domain: d }) => {
                non_empty("project_name", name)?;
                domain("project_domain_name", d)
            }
            ScopeSpec::Domain(d) => domain("domain_name", d),
            ScopeSpec::System | ScopeSpec::Unscoped => Ok(()),
        }
    }
    match credentials {
        Credentials::Password {
            user: u,
            password,
            scope: s,
        } => {
            user(u)?;
            non_empty("password", password.expose())?;
            scope(s)
        }
        Credentials::ApplicationCredential { credential, secret } => {
            match credential {
                ApplicationCredentialSpec::Id(id) => non_empty("application_credential_id", id)?,
                ApplicationCredentialSpec::Name { name, user: u } => {
                    non_empty("application_credential_name", name)?;
                    user(u)?;
                }
            }
            non_empty("application_credential_secret", secret.expose())
        }
        Credentials::Token { token, scope: s } => {
            if !is_plausible_token(token.expose().as_bytes()) {
                return Err(ConfigError::new(
                    "token",
                    "is empty, too long or not visible ASCII",
                ));
            }
            scope(s)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn password() -> Credentials {
        Credentials::Password {
            user: UserSpec::Name {
                name: "demo".into(),
                domain: DomainSpec::Name("Default".into()),
            },
            password: "s3cret".into(),
            scope: ScopeSpec::Project(ProjectSpec::Id("p1".into())),
        }
    }

    #[test]
    fn bodies_follow_the_identity_api() {
        assert_eq!(
            password().body(),
            json!({"auth": {
                "identity": {"methods": ["password"], "password": {"user": {
                    "name": "demo", "domain": {"name": "Default"}, "password": "s3cret"}}},
                "scope": {"project": {"id": "p1"}}}})
        );
        let app = Credentials::ApplicationCredential {
            credential: ApplicationCredentialSpec::Name {
                name: "ci".into(),
                user: UserSpec::Id("u1".into()),
            },
            secret: "x".into(),
        };
        assert_eq!(
            app.body(),
            json!({"auth": {"identity": {"methods": ["application_credential"],
                "application_credential": {"name": "ci", "user": {"id": "u1"}, "secret": "x"}}}})
        );
        let token = Credentials::Token {
            token: "gAAAA".into(),
            scope: ScopeSpec::System,
        };
        assert_eq!(
            token.body(),
            json!({"auth": {"identity": {"methods": ["token"], "token": {"id": "gAAAA"}},
                "scope": {"system": {"all": true}}}})
        );
        let unscoped = Credentials::Token {
            token: "gAAAA".into(),
            scope: ScopeSpec::Unscoped,
        };
        assert!(unscoped.body()["auth"].get("scope").is_none());
        let domain = Credentials::Token {
            token: "gAAAA".into(),
            scope: ScopeSpec::Domain(DomainSpec::Id("d1".into())),
        };
        assert_eq!(
            domain.body()["auth"]["scope"],
            json!({"domain": {"id": "d1"}})
        );
    }

    #[test]
    fn build_names_the_bad_setting() {
        let e = Session::builder()
            .credentials(password())
            .build()
            .unwrap_err();
        assert_eq!(e.setting(), "auth_url");
        let e = Session::builder()
            .auth_url("http://k:5000")
            .build()
            .unwrap_err();
        assert_eq!(e.setting(), "credentials");
        let e = Session::builder()
            .auth_url("http://k:5000")
            .credentials(Credentials::Password {
                user: UserSpec::Id("u".into()),
                password: "".into(),
                scope: ScopeSpec::System,
            })
            .build()
            .unwrap_err();
        assert_eq!(e.setting(), "password");
        let e = Session::builder()
            .auth_url("http://k:5000")
            .credentials(Credentials::Token {
                token: "a b".into(),
                scope: ScopeSpec::System,
            })
            .build()
            .unwrap_err();
        assert_eq!(e.setting(), "token");
    }

    #[test]
    fn secrets_stay_out_of_debug_and_messages() {
        let session = Session::builder()
            .auth_url("http://k:5000/v3")
            .credentials(password())
            .build()
            .unwrap();
        let shown = format!(
            "{session:?} {:?} {:?}",
            Session::builder().credentials(password()),
            password()
        );
        assert!(!shown.contains("s3cret"), "{shown}");
        assert_eq!(
            password().describe(),
            "the password of user \"demo\" (domain \"Default\")"
        );
        assert_eq!(
            session.tokens_url().as_str(),
            "http://k:5000/v3/auth/tokens"
        );
    }

    #[test]
    fn keystone_messages() {
        let body = br#"{"error": {"code": 401, "message": "The request you have made requires authentication.", "title": "Unauthorized"}}"#;
        assert_eq!(
            keystone_message(StatusCode::UNAUTHORIZED, body),
            "Unauthorized: The request you have made requires authentication."
        );
        assert_eq!(
            keystone_message(StatusCode::NOT_FOUND, b"<html>"),
            "Not Found"
        );
    }
}
