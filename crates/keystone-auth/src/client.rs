//! [`KeystoneClient`]: the service's own token and the validation of its
//! users' tokens against Keystone v3.
//!
//! The service authenticates with the password method, project-scoped, or
//! with an application credential (`POST /v3/auth/tokens`), keeps that token and renews it
//! [`renew_before`](KeystoneClientBuilder::renew_before) its expiry (two
//! minutes by default, or half its lifetime when that is shorter), and validates a user's token with
//! `GET /v3/auth/tokens` (`X-Auth-Token`: its own token, `X-Subject-Token`:
//! the user's). When Keystone answers 401 to a validation (its own token
//! was revoked or expired early), it authenticates again once and retries.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;
use http::header::HeaderValue;
use serde_json::json;
use time::OffsetDateTime;
use url::Url;

use crate::catalog::{Catalog, Interface};
use crate::error::{ConfigError, Error, ErrorKind};
use crate::headers::{X_AUTH_TOKEN, X_SUBJECT_TOKEN};
use crate::model::{Identity, TokenResponse};
use crate::slot::{Renewable, TokenSlot, renew_at};

/// The longest token accepted, in bytes. Fernet tokens are about 200
/// bytes and JWS tokens under 1 KiB; anything longer is refused as invalid
/// without asking Keystone.
pub const MAX_TOKEN_LEN: usize = 8 * 1024;

/// The largest token body read from Keystone; a catalog of a large cloud
/// is a few hundred KiB. A longer answer is an invalid response.
const MAX_BODY_LEN: usize = 8 * 1024 * 1024;

/// Reads a body of at most [`MAX_BODY_LEN`] bytes.
pub(crate) async fn read_body(mut response: reqwest::Response) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(Error::from_reqwest)? {
        if body.len() + chunk.len() > MAX_BODY_LEN {
            return Err(Error::new(ErrorKind::InvalidResponse));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A domain given by name or by id (`user_domain_name` / `user_domain_id`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DomainSpec {
    /// `*_domain_id`.
    Id(String),
    /// `*_domain_name`.
    Name(String),
}

impl DomainSpec {
    pub(crate) fn to_json(&self) -> serde_json::Value {
        match self {
            Self::Id(id) => json!({ "id": id }),
            Self::Name(name) => json!({ "name": name }),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Self::Id(s) | Self::Name(s) => s.is_empty(),
        }
    }
}

/// Whether a client-supplied token may be sent to Keystone at all: not
/// empty, at most [`MAX_TOKEN_LEN`] bytes, visible ASCII only.
#[must_use]
pub fn is_plausible_token(token: &[u8]) -> bool {
    !token.is_empty() && token.len() <= MAX_TOKEN_LEN && token.iter().all(u8::is_ascii_graphic)
}

/// Validates tokens against Keystone v3 with the service's own credentials.
///
/// Cheap to clone: clones share the HTTP connection pool and the service
/// token.
#[derive(Clone)]
pub struct KeystoneClient {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    tokens_url: Url,
    /// Where validations go: `None` for `tokens_url`, or the identity
    /// endpoint of the service token's catalog for this interface and
    /// region.
    endpoint: Option<(Interface, Option<String>)>,
    auth_body: Vec<u8>,
    include_catalog: bool,
    renew_before: Duration,
    max_retries: u32,
    service_token: TokenSlot<ServiceToken>,
}

impl Renewable for ServiceToken {
    fn renew_at(&self) -> OffsetDateTime {
        self.renew_at
    }
}

struct ServiceToken {
    value: HeaderValue,
    /// `.../v3/auth/tokens` of the endpoint that validates users' tokens.
    validate_url: Url,
    /// When to get a new one: `renew_before` ahead of the expiry, or half
    /// way through the token's life when that comes later.
    renew_at: OffsetDateTime,
}

impl fmt::Debug for KeystoneClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the password nor the token.
        f.debug_struct("KeystoneClient")
            .field("tokens_url", &self.inner.tokens_url.as_str())
            .field("include_catalog", &self.inner.include_catalog)
            .finish_non_exhaustive()
    }
}

impl KeystoneClient {
    /// A builder; see [`KeystoneClientBuilder`] for the settings.
    pub fn builder() -> KeystoneClientBuilder {
        KeystoneClientBuilder::default()
    }

    /// Gets the service's own token now unless a fresh one is held: a
    /// service calls it at startup to find bad credentials early.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ServiceAuthRefused`] when Keystone refuses the
    /// credentials, or any unavailability.
    pub async fn authenticate(&self) -> Result<(), Error> {
        self.service_token().await.map(drop)
    }

    /// Validates a user's token and returns its identity.
    ///
    /// # Errors
    ///
    /// [`Error::is_invalid_token`] for a token Keystone does not know
    /// (404), one that has expired, or one that is not plausible (empty,
    /// longer than [`MAX_TOKEN_LEN`], not visible ASCII), which is never
    /// sent; [`Error::is_unavailable`] for anything that keeps Keystone from
    /// answering (unreachable, timeout, 5xx, an answer that is not a token).
    pub async fn validate(&self, token: &str) -> Result<Identity, Error> {
        if !is_plausible_token(token.as_bytes()) {
            return Err(Error::invalid_token());
        }
        let subject = HeaderValue::from_str(token).map_err(|_| Error::invalid_token())?;
        let service = self.service_token().await?;
        let response = self.send_validate(&service, &subject).await?;
        let response = if response.status() == StatusCode::UNAUTHORIZED {
            tracing::info!("keystone refused the service token; authenticating again");
            self.inner.service_token.forget(&service);
            let service = self.service_token().await?;
            self.send_validate(&service, &subject).await?
        } else {
            response
        };
        match response.status() {
            StatusCode::OK => {}
            StatusCode::NOT_FOUND => return Err(Error::invalid_token()),
            s if s.is_server_error() => return Err(Error::new(ErrorKind::ServerError(s))),
            s => return Err(Error::new(ErrorKind::UnexpectedStatus(s))),
        }
        let body = read_body(response).await?;
        let parsed: TokenResponse = serde_json::from_slice(&body)
            .map_err(|e| Error::with_source(ErrorKind::InvalidResponse, e))?;
        let identity = Identity::try_from(parsed.token)
            .map_err(|e| Error::with_source(ErrorKind::InvalidResponse, e))?;
        if identity.is_expired() {
            return Err(Error::invalid_token());
        }
        Ok(identity)
    }

    async fn send_validate(
        &self,
        service: &ServiceToken,
        subject: &HeaderValue,
    ) -> Result<reqwest::Response, Error> {
        let mut url = service.validate_url.clone();
        if !self.inner.include_catalog {
            url.set_query(Some("nocatalog"));
        }
        self.send(|| {
            self.inner
                .http
                .get(url.clone())
                .header(X_AUTH_TOKEN, service.value.clone())
                .header(X_SUBJECT_TOKEN, subject.clone())
        })
        .await
    }

    /// Sends a request, again on connection errors up to `max_retries`
    /// times with a short backoff; timeouts are not retried.
    async fn send(
        &self,
        request: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, Error> {
        let mut attempt = 0;
        loop {
            match request().send().await {
                Ok(r) => return Ok(r),
                Err(e) if e.is_connect() && attempt < self.inner.max_retries => {
                    attempt += 1;
                    tracing::debug!(attempt, error = %e, "keystone unreachable; retrying");
                    tokio::time::sleep(Duration::from_millis(50 << attempt.min(4))).await;
                }
                Err(e) => return Err(Error::from_reqwest(e)),
            }
        }
    }

    async fn service_token(&self) -> Result<Arc<ServiceToken>, Error> {
        self.inner
            .service_token
            .get_or_renew(|| self.request_service_token())
            .await
    }

    async fn request_service_token(&self) -> Result<ServiceToken, Error> {
        let mut url = self.inner.tokens_url.clone();
        // The catalog is only needed to find the identity endpoint.
        if self.inner.endpoint.is_none() {
            url.set_query(Some("nocatalog"));
        }
        let response = self
            .send(|| {
                self.inner
                    .http
                    .post(url.clone())
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(self.inner.auth_body.clone())
            })
            .await?;
        let status = response.status();
        if status.is_server_error() {
            return Err(Error::new(ErrorKind::ServerError(status)));
        }
        if matches!(
            status,
            StatusCode::BAD_REQUEST
                | StatusCode::UNAUTHORIZED
                | StatusCode::FORBIDDEN
                | StatusCode::NOT_FOUND
        ) {
            tracing::error!(
                status = status.as_u16(),
                "keystone refused the service credentials"
            );
            return Err(Error::new(ErrorKind::ServiceAuthRefused(status)));
        }
        if !status.is_success() {
            return Err(Error::new(ErrorKind::UnexpectedStatus(status)));
        }
        let mut value = response
            .headers()
            .get(X_SUBJECT_TOKEN)
            .filter(|v| is_plausible_token(v.as_bytes()))
            .cloned()
            .ok_or_else(|| Error::new(ErrorKind::InvalidResponse))?;
        value.set_sensitive(true);
        let body = read_body(response).await?;
        let mut parsed: TokenResponse = serde_json::from_slice(&body)
            .map_err(|e| Error::with_source(ErrorKind::InvalidResponse, e))?;
        let expires_at = crate::model::parse_time(&parsed.token.expires_at)
            .map_err(|e| Error::with_source(ErrorKind::InvalidResponse, e))?;
        let now = OffsetDateTime::now_utc();
        if expires_at <= now {
            return Err(Error::new(ErrorKind::InvalidResponse));
        }
        let renew_at = renew_at(now, expires_at, self.inner.renew_before);
        let validate_url = match &self.inner.endpoint {
            None => self.inner.tokens_url.clone(),
            Some((interface, region)) => {
                let catalog = Catalog::new(parsed.token.catalog.take().unwrap_or_default());
                let endpoint = catalog
                    .endpoint("identity", *interface, region.as_deref())
                    .map_err(|e| {
                        tracing::error!(error = %e, "no identity endpoint to validate tokens at");
                        Error::with_source(ErrorKind::NoIdentityEndpoint, e)
                    })?;
                tokens_url(Some(endpoint.url.as_str()))
                    .map_err(|e| Error::with_source(ErrorKind::InvalidResponse, e))?
            }
        };
        tracing::debug!(%expires_at, %renew_at, %validate_url, "got the service token");
        Ok(ServiceToken {
            value,
            validate_url,
            renew_at,
        })
    }
}

/// Settings of a [`KeystoneClient`]; `build` checks them.
///
/// Required: [`auth_url`](Self::auth_url) and the service's credentials:
/// either a password ([`username`](Self::username),
/// [`password`](Self::password), [`project_name`](Self::project_name),
/// [`user_domain`](Self::user_domain) and
/// [`project_domain`](Self::project_domain), or their ids), or an
/// application credential
/// ([`application_credential_secret`](Self::application_credential_secret)
/// with its id, or its name and its user), which carries its own project.
#[must_use]
pub struct KeystoneClientBuilder {
    auth_url: Option<String>,
    username: Option<String>,
    user_id: Option<String>,
    password: Option<String>,
    project_name: Option<String>,
    project_id: Option<String>,
    user_domain: Option<DomainSpec>,
    project_domain: Option<DomainSpec>,
    application_credential_id: Option<String>,
    application_credential_name: Option<String>,
    application_credential_secret: Option<String>,
    interface: Option<Interface>,
    region_name: Option<String>,
    connect_timeout: Duration,
    request_timeout: Duration,
    max_retries: u32,
    renew_before: Duration,
    include_catalog: bool,
    #[cfg(feature = "rustls")]
    ca_file: Option<std::path::PathBuf>,
    #[cfg(feature = "rustls")]
    insecure: bool,
    #[cfg(feature = "rustls")]
    client_identity: Option<(std::path::PathBuf, std::path::PathBuf)>,
}

impl Default for KeystoneClientBuilder {
    fn default() -> Self {
        Self {
            auth_url: None,
            username: None,
            user_id: None,
            password: None,
            project_name: None,
            project_id: None,
            user_domain: None,
            project_domain: None,
            application_credential_id: None,
            application_credential_name: None,
            application_credential_secret: None,
            interface: None,
            region_name: None,
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(10),
            max_retries: 3,
            renew_before: Duration::from_secs(120),
            include_catalog: false,
            #[cfg(feature = "rustls")]
            ca_file: None,
            #[cfg(feature = "rustls")]
            insecure: false,
            #[cfg(feature = "rustls")]
            client_identity: None,
        }
    }
}

impl fmt::Debug for KeystoneClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeystoneClientBuilder")
            .field("auth_url", &self.auth_url)
            .field("username", &self.username)
            .field("project_name", &self.project_name)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .finish_non_exhaustive()
    }
}

impl KeystoneClientBuilder {
    /// Keystone's URL: the identity root (`http://host:5000`) or its v3
    /// endpoint (`http://host:5000/v3`); `/v3` is added when missing.
    pub fn auth_url(mut self, url: impl Into<String>) -> Self {
        self.auth_url = Some(url.into());
        self
    }

    /// The service user's name.
    pub fn username(mut self, name: impl Into<String>) -> Self {
        self.username = Some(name.into());
        self
    }

    /// The service user's id (`user_id`), in place of
    /// [`username`](Self::username) and its domain.
    pub fn user_id(mut self, id: impl Into<String>) -> Self {
        self.user_id = Some(id.into());
        self
    }

    /// The service user's password.
    pub fn password(mut self, password: impl Into<String>) -> Self {
        self.password = Some(password.into());
        self
    }

    /// The project the service token is scoped to (`service` in devstack).
    pub fn project_name(mut self, name: impl Into<String>) -> Self {
        self.project_name = Some(name.into());
        self
    }

    /// The id of the project the service token is scoped to
    /// (`project_id`), in place of [`project_name`](Self::project_name)
    /// and its domain.
    pub fn project_id(mut self, id: impl Into<String>) -> Self {
        self.project_id = Some(id.into());
        self
    }

    /// Authenticate with the application credential of this id
    /// (`application_credential_id`) rather than a password.
    pub fn application_credential_id(mut self, id: impl Into<String>) -> Self {
        self.application_credential_id = Some(id.into());
        self
    }

    /// Authenticate with the application credential of this name
    /// (`application_credential_name`), of the user given by
    /// [`user_id`](Self::user_id) or [`username`](Self::username) and
    /// [`user_domain`](Self::user_domain).
    pub fn application_credential_name(mut self, name: impl Into<String>) -> Self {
        self.application_credential_name = Some(name.into());
        self
    }

    /// The application credential's secret
    /// (`application_credential_secret`): with it, the client
    /// authenticates with the application credential, scoped to its
    /// project, and the password settings are not used.
    pub fn application_credential_secret(mut self, secret: impl Into<String>) -> Self {
        self.application_credential_secret = Some(secret.into());
        self
    }

    /// Validate tokens at the identity endpoint of this interface in the
    /// service token's catalog (`interface`), instead of at `auth_url`.
    pub fn interface(mut self, interface: Interface) -> Self {
        self.interface = Some(interface);
        self
    }

    /// The region of that endpoint (`region_name`); any region when unset.
    /// Only used with [`interface`](Self::interface).
    pub fn region_name(mut self, region: impl Into<String>) -> Self {
        self.region_name = Some(region.into()).filter(|r: &String| !r.is_empty());
        self
    }

    /// The service user's domain (`user_domain_name` / `user_domain_id`).
    pub fn user_domain(mut self, domain: DomainSpec) -> Self {
        self.user_domain = Some(domain);
        self
    }

    /// The service project's domain (`project_domain_name` / `_id`).
    pub fn project_domain(mut self, domain: DomainSpec) -> Self {
        self.project_domain = Some(domain);
        self
    }

    /// Time allowed to open a connection to Keystone (5 s by default).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Time allowed for one request to Keystone, answer included (10 s by
    /// default).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How many times a request is sent again when Keystone cannot be
    /// reached (`http_request_max_retries`, 3 by default).
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// How long before its expiry the service token is renewed (two minutes
    /// by default). A token that lives less than twice as long is renewed
    /// half way through its life instead.
    pub fn renew_before(mut self, margin: Duration) -> Self {
        self.renew_before = margin;
        self
    }

    /// Whether validations ask for the catalog (`include_service_catalog`).
    /// Off by default here (keystonemiddleware's default is on): without it
    /// validations send `?nocatalog` and answers are small.
    pub fn include_catalog(mut self, include: bool) -> Self {
        self.include_catalog = include;
        self
    }

    /// A PEM file of CA certificates to trust for Keystone (`cafile`).
    #[cfg(feature = "rustls")]
    pub fn ca_file(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.ca_file = Some(path.into());
        self
    }

    /// A client certificate and its private key (PEM files: `certfile`,
    /// `keyfile`) presented to a Keystone that asks for one.
    #[cfg(feature = "rustls")]
    pub fn client_identity(
        mut self,
        certificate: impl Into<std::path::PathBuf>,
        key: impl Into<std::path::PathBuf>,
    ) -> Self {
        self.client_identity = Some((certificate.into(), key.into()));
        self
    }

    /// Do not verify Keystone's certificate (`insecure`); for tests only.
    #[cfg(feature = "rustls")]
    pub fn insecure(mut self, insecure: bool) -> Self {
        self.insecure = insecure;
        self
    }

    /// Checks the settings and makes the client. No request is sent: call
    /// [`KeystoneClient::authenticate`] to check the credentials.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the setting that is missing or invalid.
    pub fn build(self) -> Result<KeystoneClient, ConfigError> {
        let tokens_url = tokens_url(self.auth_url.as_deref())?;
        let auth_body = match self.application_credential_secret.clone() {
            Some(secret) if !secret.is_empty() => self.application_credential_body(&secret)?,
            _ => self.password_body()?,
        };
        if self.connect_timeout.is_zero() {
            return Err(ConfigError::new(
                "http_connect_timeout",
                "must be more than zero",
            ));
        }
        if self.request_timeout.is_zero() {
            return Err(ConfigError::new(
                "http_request_timeout",
                "must be more than zero",
            ));
        }
        let auth_body = serde_json::to_vec(&auth_body)
            .map_err(|e| ConfigError::new("password", e.to_string()))?;
        let http = reqwest::Client::builder()
            .connect_timeout(self.connect_timeout)
            .timeout(self.request_timeout)
            .user_agent(concat!("keystone-auth/", env!("CARGO_PKG_VERSION")));
        #[cfg(feature = "rustls")]
        let http = self.tls(http)?;
        let http = http
            .build()
            .map_err(|e| ConfigError::new("auth_url", format!("HTTP client: {e}")))?;
        Ok(KeystoneClient {
            inner: Arc::new(Inner {
                http,
                tokens_url,
                endpoint: self.interface.map(|i| (i, self.region_name)),
                auth_body,
                include_catalog: self.include_catalog,
                renew_before: self.renew_before,
                max_retries: self.max_retries,
                service_token: TokenSlot::new(),
            }),
        })
    }

    /// The user, by id or by name in its domain.
    fn user_json(&self) -> Result<serde_json::Value, ConfigError> {
        if let Some(id) = self.user_id.as_ref().filter(|id| !id.is_empty()) {
            return Ok(json!({ "id": id }));
        }
        let name = self
            .username
            .as_ref()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| ConfigError::new("username", "username or user_id is required"))?;
        let domain = self
            .user_domain
            .as_ref()
            .filter(|d| !d.is_empty())
            .ok_or_else(|| {
                ConfigError::new(
                    "user_domain_name",
                    "user_domain_name or user_domain_id is required with username",
                )
            })?;
        Ok(json!({ "name": name, "domain": domain.to_json() }))
    }

    /// `POST /v3/auth/tokens` with an application credential: by id, or by
    /// name and user; no scope (the credential carries its project).
    fn application_credential_body(&self, secret: &str) -> Result<serde_json::Value, ConfigError> {
        let id = self
            .application_credential_id
            .as_ref()
            .filter(|v| !v.is_empty());
        let name = self
            .application_credential_name
            .as_ref()
            .filter(|v| !v.is_empty());
        let credential = match (id, name) {
            (Some(id), _) => json!({ "id": id, "secret": secret }),
            (None, Some(name)) => {
                json!({ "name": name, "user": self.user_json()?, "secret": secret })
            }
            (None, None) => {
                return Err(ConfigError::new(
                    "application_credential_id",
                    "application_credential_id or application_credential_name is required with application_credential_secret",
                ));
            }
        };
        Ok(json!({"auth": {"identity": {
            "methods": ["application_credential"],
            "application_credential": credential,
        }}}))
    }

    /// `POST /v3/auth/tokens` with the password method, project-scoped.
    fn password_body(&self) -> Result<serde_json::Value, ConfigError> {
        let password = required("password", self.password.clone())?;
        let mut user = self.user_json()?;
        user["password"] = json!(password);
        let project = match self.project_id.clone().filter(|id| !id.is_empty()) {
            Some(id) => json!({ "id": id }),
            None => {
                let name = self
                    .project_name
                    .clone()
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| {
                        ConfigError::new("project_name", "project_name or project_id is required")
                    })?;
                let domain = self
                    .project_domain
                    .as_ref()
                    .filter(|d| !d.is_empty())
                    .ok_or_else(|| {
                        ConfigError::new(
                            "project_domain_name",
                            "project_domain_name or project_domain_id is required with project_name",
                        )
                    })?;
                json!({ "name": name, "domain": domain.to_json() })
            }
        };
        Ok(json!({"auth": {
            "identity": {"methods": ["password"], "password": {"user": user}},
            "scope": {"project": project},
        }}))
    }

    /// The TLS settings: trusted CAs, a client certificate, verification.
    #[cfg(feature = "rustls")]
    fn tls(&self, http: reqwest::ClientBuilder) -> Result<reqwest::ClientBuilder, ConfigError> {
        let read = |setting: &'static str, path: &std::path::Path| {
            std::fs::read(path)
                .map_err(|e| ConfigError::new(setting, format!("{}: {e}", path.display())))
        };
        let mut http = {
            let mut http = http.danger_accept_invalid_certs(self.insecure);
            if let Some(path) = &self.ca_file {
                let pem = read("cafile", path)?;
                let certs = reqwest::Certificate::from_pem_bundle(&pem)
                    .map_err(|e| ConfigError::new("cafile", format!("{}: {e}", path.display())))?;
                if certs.is_empty() {
                    return Err(ConfigError::new(
                        "cafile",
                        format!("{}: no certificate", path.display()),
                    ));
                }
                for cert in certs {
                    http = http.add_root_certificate(cert);
                }
            }
            http
        };
        if let Some((certificate, key)) = &self.client_identity {
            // One PEM buffer holding the key and the chain, as reqwest
            // reads an identity.
            let mut pem = read("keyfile", key)?;
            pem.push(b'\n');
            pem.extend(read("certfile", certificate)?);
            let identity = reqwest::Identity::from_pem(&pem).map_err(|e| {
                ConfigError::new(
                    "certfile",
                    format!("{} with {}: {e}", certificate.display(), key.display()),
                )
            })?;
            http = http.identity(identity);
        }
        Ok(http)
    }
}

fn required(setting: &'static str, value: Option<String>) -> Result<String, ConfigError> {
    value
        .filter(|v| !v.is_empty())
        .ok_or_else(|| ConfigError::new(setting, "is required"))
}

/// `<auth_url>/v3/auth/tokens`, with `/v3` added when the URL lacks it.
pub(crate) fn tokens_url(auth_url: Option<&str>) -> Result<Url, ConfigError> {
    let raw = auth_url
        .filter(|u| !u.is_empty())
        .ok_or_else(|| ConfigError::new("auth_url", "is required"))?;
    let url = Url::parse(raw).map_err(|e| ConfigError::new("auth_url", format!("{raw:?}: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(ConfigError::new(
            "auth_url",
            format!("{raw:?}: not an http(s) URL"),
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ConfigError::new(
            "auth_url",
            format!("{raw:?}: has a query or fragment"),
        ));
    }
    let path = url.path().trim_end_matches('/');
    let path = if path.ends_with("/v3") {
        format!("{path}/auth/tokens")
    } else {
        format!("{path}/v3/auth/tokens")
    };
    let mut url = url;
    url.set_path(&path);
    Ok(url)
}

/// A client of a Keystone nobody answers for (port 9), for unit tests of
/// what is built around it.
#[cfg(test)]
impl KeystoneClient {
    pub(crate) fn unreachable_for_tests() -> KeystoneClient {
        KeystoneClient::builder()
            .auth_url("http://127.0.0.1:9")
            .username("u")
            .password("p")
            .project_name("service")
            .user_domain(DomainSpec::Id("default".into()))
            .project_domain(DomainSpec::Id("default".into()))
            .build()
            .expect("the settings are complete")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> KeystoneClientBuilder {
        KeystoneClient::builder()
            .auth_url("http://127.0.0.1:5000")
            .username("placement")
            .password("secret")
            .project_name("service")
            .user_domain(DomainSpec::Name("Default".into()))
            .project_domain(DomainSpec::Id("default".into()))
    }

    #[test]
    fn tokens_url_adds_v3_once() {
        for (given, want) in [
            ("http://k:5000", "http://k:5000/v3/auth/tokens"),
            ("http://k:5000/", "http://k:5000/v3/auth/tokens"),
            ("http://k:5000/v3", "http://k:5000/v3/auth/tokens"),
            (
                "https://k/identity/v3/",
                "https://k/identity/v3/auth/tokens",
            ),
            ("https://k/identity", "https://k/identity/v3/auth/tokens"),
        ] {
            assert_eq!(tokens_url(Some(given)).unwrap().as_str(), want, "{given}");
        }
        for bad in ["", "k:5000", "ftp://k/", "http://k/?a=b", "not a url"] {
            assert_eq!(
                tokens_url(Some(bad)).unwrap_err().setting(),
                "auth_url",
                "{bad}"
            );
        }
    }

    #[test]
    fn build_names_the_missing_setting() {
        assert!(full().build().is_ok());
        let e = KeystoneClient::builder().build().unwrap_err();
        assert_eq!(e.setting(), "auth_url");
        let e = full().password("").build().unwrap_err();
        assert_eq!(e.setting(), "password");
        let e = full()
            .user_domain(DomainSpec::Name(String::new()))
            .build()
            .unwrap_err();
        assert_eq!(e.setting(), "user_domain_name");
        let e = full().connect_timeout(Duration::ZERO).build().unwrap_err();
        assert_eq!(e.setting(), "http_connect_timeout");
        // Ids stand in for names and their domains.
        let by_id = KeystoneClient::builder()
            .auth_url("http://127.0.0.1:5000")
            .user_id("u1")
            .password("secret")
            .project_id("p1");
        let client = by_id.build().unwrap();
        let body: serde_json::Value = serde_json::from_slice(&client.inner.auth_body).unwrap();
        assert_eq!(body["auth"]["identity"]["password"]["user"]["id"], "u1");
        assert_eq!(body["auth"]["scope"]["project"], json!({"id": "p1"}));
        let e = KeystoneClient::builder()
            .auth_url("http://127.0.0.1:5000")
            .username("placement")
            .password("secret")
            .project_id("p1")
            .build()
            .unwrap_err();
        assert_eq!(e.setting(), "user_domain_name");
        let e = KeystoneClient::builder()
            .auth_url("http://127.0.0.1:5000")
            .user_id("u1")
            .password("secret")
            .build()
            .unwrap_err();
        assert_eq!(e.setting(), "project_name");
    }

    #[cfg(feature = "rustls")]
    #[test]
    fn missing_ca_file_is_a_build_error() {
        let e = full().ca_file("/nonexistent/ca.pem").build().unwrap_err();
        assert_eq!(e.setting(), "cafile");
    }

    #[test]
    fn debug_shows_no_password() {
        let client = full().build().unwrap();
        let shown = format!("{client:?} {:?}", full());
        assert!(!shown.contains("secret"), "{shown}");
    }

    #[test]
    fn implausible_tokens() {
        assert!(is_plausible_token(b"gAAAAABn-abc_123"));
        assert!(!is_plausible_token(b""));
        assert!(!is_plausible_token(b"abc def"));
        assert!(!is_plausible_token(b"abc\x01"));
        assert!(!is_plausible_token("abc\u{e9}".as_bytes()));
        assert!(!is_plausible_token(&vec![b'a'; MAX_TOKEN_LEN + 1]));
        assert!(is_plausible_token(&vec![b'a'; MAX_TOKEN_LEN]));
    }
}
