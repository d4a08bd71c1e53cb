//! [`Cloud`]: a [`CloudConfig`] put to work: an HTTP client with its TLS
//! settings, its authentication, its endpoints from the catalog, and
//! [`Client`]s for its services.
//!
//! ```no_run
//! use microversion::VersionRange;
//! use microversion_client::cloud::Cloud;
//! use microversion_client::config::ConfigLoader;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // OS_CLOUD, clouds.yaml and secure.yaml, or the OS_* variables.
//! let cloud = Cloud::new(ConfigLoader::from_env().load()?)?;
//! let placement = cloud
//!     .client("placement")
//!     .await?
//!     .supported_versions(VersionRange::from_static("1.0", "1.39"))
//!     .build()?;
//! // The token is got (once), sent, renewed before it expires; the
//! // version is placement_api_version / OS_PLACEMENT_API_VERSION, else
//! // the highest both sides support.
//! let providers = placement.get("resource_providers").send().await?;
//! println!("{} at {:?}", providers.status(), providers.version());
//! # Ok(()) }
//! ```

use std::fmt;
use std::sync::Arc;

use keystone_auth::catalog::{Catalog, CatalogError, ServiceEndpoint};
use keystone_auth::session::{Session, UserToken};
use microversion::VersionRequest;
use url::Url;

use crate::auth::Auth;
use crate::builder::ClientBuilder;
use crate::client::Client;
use crate::config::{AuthConfig, CloudConfig, ConfigError, Source};
use crate::error::Error;

/// A configured cloud. Cheap to clone; clones share the HTTP client and
/// the token.
#[derive(Clone)]
pub struct Cloud {
    inner: Arc<Inner>,
}

struct Inner {
    config: CloudConfig,
    http: reqwest::Client,
    auth: Option<Auth>,
}

impl fmt::Debug for Cloud {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cloud")
            .field("name", &self.inner.config.name())
            .field("auth", &self.inner.auth)
            .finish_non_exhaustive()
    }
}

impl Cloud {
    /// The cloud of `config`, with an HTTP client made by
    /// [`Cloud::http_client_builder`]. Nothing is sent yet.
    ///
    /// # Errors
    ///
    /// A configuration error ([`Error::is_config`]) when `cacert` is not a
    /// PEM file, or when `cacert` or `verify: false` is set in a build
    /// without TLS (feature `rustls`).
    pub fn new(config: CloudConfig) -> Result<Self, Error> {
        let http = Self::http_client_builder(&config)?
            .build()
            .map_err(|e| Error::builder_with_source("cannot build the HTTP client", e))?;
        Self::with_http_client(config, http)
    }

    /// The cloud of `config`, sending through `http` (to Keystone too):
    /// its TLS settings are used, not `cacert` and `verify`.
    ///
    /// # Errors
    ///
    /// A configuration error when the session cannot be made from the
    /// settings.
    pub fn with_http_client(config: CloudConfig, http: reqwest::Client) -> Result<Self, Error> {
        let auth = match config.auth() {
            AuthConfig::Keystone {
                auth_url,
                credentials,
            } => {
                let session = Session::builder()
                    .auth_url(auth_url.clone())
                    .credentials(credentials.clone())
                    .http_client(http.clone())
                    .build()
                    .map_err(|e| {
                        Error::config(ConfigError::Invalid {
                            origin: Source::Option(e.setting().to_owned()),
                            value: None,
                            reason: e.to_string(),
                        })
                    })?;
                Some(Auth::session(session))
            }
            AuthConfig::AdminToken { token, .. } => Some(Auth::fixed_token(token.expose())?),
            AuthConfig::None { .. } => None,
        };
        Ok(Self {
            inner: Arc::new(Inner { config, http, auth }),
        })
    }

    /// A reqwest builder with the cloud's TLS settings (`cacert`,
    /// `verify`), to add time limits or a proxy to before
    /// [`Cloud::with_http_client`].
    ///
    /// # Errors
    ///
    /// As [`Cloud::new`].
    pub fn http_client_builder(config: &CloudConfig) -> Result<reqwest::ClientBuilder, Error> {
        let builder = reqwest::Client::builder()
            .user_agent(concat!("microversion-client/", env!("CARGO_PKG_VERSION")));
        tls(builder, config)
    }

    /// The settings.
    #[must_use]
    pub fn config(&self) -> &CloudConfig {
        &self.inner.config
    }

    /// The HTTP client.
    #[must_use]
    pub fn http_client(&self) -> &reqwest::Client {
        &self.inner.http
    }

    /// How requests are authenticated; `None` for auth type `none`.
    #[must_use]
    pub fn auth(&self) -> Option<&Auth> {
        self.inner.auth.as_ref()
    }

    /// The Keystone token, got now unless a fresh one is held; `None`
    /// without Keystone (`admin_token`, `none`).
    ///
    /// # Errors
    ///
    /// An authentication error ([`Error::is_auth`]; [`Error::is_auth_refused`]
    /// for a wrong password).
    pub async fn token(&self) -> Result<Option<Arc<UserToken>>, Error> {
        match self.auth().and_then(Auth::keystone_session) {
            Some(session) => session.token().await.map(Some).map_err(Error::auth),
            None => Ok(None),
        }
    }

    /// The `X-Auth-Token` value to send, if any: the session's token or
    /// the fixed one.
    ///
    /// # Errors
    ///
    /// As [`Cloud::token`].
    pub async fn token_header(&self) -> Result<Option<http::HeaderValue>, Error> {
        match self.auth() {
            Some(auth) => Ok(Some(auth.credential().await?.value)),
            None => Ok(None),
        }
    }

    /// The endpoint of `service_type`: its `<service>_endpoint_override`,
    /// else the catalog's (by type and its aliases, the configured
    /// interface, public by default, and region), else for `admin_token`
    /// and `none` the configured `endpoint`.
    ///
    /// # Errors
    ///
    /// [`Error::is_catalog`] when the catalog has no such endpoint (the
    /// message lists what it offers) or its URL is broken; without a
    /// catalog, when no endpoint is configured; or the errors of
    /// [`Cloud::token`].
    pub async fn endpoint(&self, service_type: &str) -> Result<Url, Error> {
        let config = &self.inner.config;
        if let Some(url) = config.endpoint_override(service_type) {
            return Ok(url.clone());
        }
        match config.auth() {
            AuthConfig::Keystone { .. } => {
                let token = self
                    .token()
                    .await?
                    .ok_or_else(|| no_catalog(config, service_type))?;
                token
                    .catalog()
                    .endpoint(service_type, config.interface(), config.region_name())
                    .map(|e| e.url)
                    .map_err(|e| Error::catalog(e.to_string()))
            }
            AuthConfig::AdminToken { endpoint, .. } | AuthConfig::None { endpoint } => endpoint
                .clone()
                .ok_or_else(|| no_catalog(config, service_type)),
        }
    }

    /// Every service of the catalog with an endpoint of the configured
    /// interface and region, one per service, in the catalog's order: its
    /// type (as the catalog names it) and its URL, or the error of a
    /// broken URL.
    ///
    /// # Errors
    ///
    /// [`Error::is_catalog`] without Keystone (no catalog), or the errors
    /// of [`Cloud::token`].
    pub async fn catalog_endpoints(&self) -> Result<Vec<(String, Result<Url, Error>)>, Error> {
        let catalog = self.catalog().await?;
        let config = &self.inner.config;
        Ok(catalog
            .endpoints(config.interface(), config.region_name())
            .into_iter()
            .map(|e| match e {
                Ok(ServiceEndpoint {
                    service_type, url, ..
                }) => (service_type, Ok(url)),
                Err(e) => {
                    let service_type = match &e {
                        CatalogError::InvalidUrl { service_type, .. } => service_type.clone(),
                        _ => String::new(),
                    };
                    (service_type, Err(Error::catalog(e.to_string())))
                }
            })
            .collect())
    }

    /// The token's catalog.
    ///
    /// # Errors
    ///
    /// As [`Cloud::catalog_endpoints`].
    pub async fn catalog(&self) -> Result<Catalog, Error> {
        match self.token().await? {
            Some(token) => Ok(token.catalog().clone()),
            None => Err(Error::catalog(format!(
                "auth_type {} has no catalog: name the endpoints",
                self.inner.config.auth().type_name()
            ))),
        }
    }

    /// The version a client of `service_type` asks for when the caller
    /// names none: `<service>_api_version` (`OS_<SERVICE>_API_VERSION`),
    /// else `latest`, the highest version both sides support.
    #[must_use]
    pub fn default_version(&self, service_type: &str) -> VersionRequest {
        self.inner
            .config
            .api_version(service_type)
            .unwrap_or(VersionRequest::Latest)
    }

    /// A [`ClientBuilder`] for `service_type`, ready but for
    /// [`supported_versions`](ClientBuilder::supported_versions): the
    /// endpoint ([`Cloud::endpoint`]), the service type, this cloud's HTTP
    /// client and authentication, and the [default
    /// version](Cloud::default_version). Each setting may be changed.
    ///
    /// # Errors
    ///
    /// As [`Cloud::endpoint`].
    pub async fn client(&self, service_type: &str) -> Result<ClientBuilder, Error> {
        let endpoint = self.endpoint(service_type).await?;
        let mut builder = Client::builder()
            .endpoint(endpoint.as_str())
            .service_type(service_type)
            .http_client(self.inner.http.clone())
            .version(self.default_version(service_type));
        if let Some(auth) = &self.inner.auth {
            builder = builder.auth(auth.clone());
        }
        Ok(builder)
    }
}

fn no_catalog(config: &CloudConfig, service_type: &str) -> Error {
    Error::catalog(format!(
        "no endpoint for {service_type}: auth_type {} has no catalog; set endpoint \
         (OS_ENDPOINT, --os-endpoint) or {}_endpoint_override",
        config.auth().type_name(),
        service_type.replace('-', "_")
    ))
}

#[cfg(feature = "rustls")]
fn tls(
    mut builder: reqwest::ClientBuilder,
    config: &CloudConfig,
) -> Result<reqwest::ClientBuilder, Error> {
    if !config.verify() {
        builder = builder.danger_accept_invalid_certs(true);
    }
    if let Some(path) = config.cacert() {
        let invalid = |reason: String| {
            Error::config(ConfigError::Invalid {
                origin: Source::Option("cacert".to_owned()),
                value: Some(path.display().to_string()),
                reason,
            })
        };
        let pem = std::fs::read(path).map_err(|e| invalid(e.to_string()))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| invalid(format!("not PEM certificates ({e})")))?;
        if certs.is_empty() {
            return Err(invalid("no certificate in the file".to_owned()));
        }
        for cert in certs {
            builder = builder.add_root_certificate(cert);
        }
    }
    Ok(builder)
}

#[cfg(not(feature = "rustls"))]
fn tls(
    builder: reqwest::ClientBuilder,
    config: &CloudConfig,
) -> Result<reqwest::ClientBuilder, Error> {
    if config.cacert().is_some() || !config.verify() {
        return Err(Error::config(ConfigError::Invalid {
            origin: Source::Option(
                if config.cacert().is_some() {
                    "cacert"
                } else {
                    "verify"
                }
                .to_owned(),
            ),
            value: None,
            reason: "TLS settings need a build with HTTPS support (feature rustls)".to_owned(),
        }));
    }
    Ok(builder)
}
