//! [`ClientBuilder`]: the configuration of a [`Client`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http::header::{ACCEPT, USER_AGENT};
use http::{HeaderMap, HeaderName, HeaderValue};
use microversion::{VersionHeader, VersionRange, VersionRequest};
use url::Url;

use crate::auth::Auth;
use crate::cache::{DiscoveryCache, DiskCache};
use crate::client::{Client, Shared};
use crate::discovery::{endpoint_key, normalize_endpoint};
use crate::error::Error;
use crate::headers::{Headers, header_service_type};
use crate::input::IntoVersionRequest;

/// How a [`Client`] agrees on a version with the server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NegotiationMode {
    /// Read the endpoint's versions document first (once per endpoint,
    /// cached), then choose the version from both ranges (docs/client.md,
    /// negotiation 1 to 6). Requests the client cannot make fail before
    /// anything is sent. The default.
    #[default]
    Discovery,
    /// Send without discovery: `latest` sends the client's maximum. On 406
    /// Not Acceptable, read the server's range from the answer's headers,
    /// else from its error body, else by discovery; choose again and retry
    /// once; remember the range (docs/client.md, negotiation 7).
    Optimistic,
    /// Send the requested version without looking at the server: `X.Y` as
    /// is, `latest` as the client's maximum. No discovery, no cache, no
    /// retry; a 406 is an error.
    Off,
}

/// What to do when a successful microversioned response names no version,
/// or another version than the one sent: the server ignored the header
/// (docs/client.md, negotiation 8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IgnoredHeader {
    /// Fail the call ([`Error::is_ignored_header`]). The default: a version
    /// the caller relies on is never silently replaced.
    #[default]
    Error,
    /// Accept the response as served at `X.0` (the version named, if the
    /// response names another), and treat the endpoint as one without
    /// microversions from then on.
    FallBack,
}

/// Builds a [`Client`]. Every setter records the first error it meets
/// (a bad URL, version or header); [`ClientBuilder::build`] returns it.
///
/// Required: [`endpoint`](ClientBuilder::endpoint),
/// [`service_type`](ClientBuilder::service_type) and
/// [`supported_versions`](ClientBuilder::supported_versions).
///
/// ```
/// use std::time::Duration;
/// use microversion::VersionRange;
/// use microversion_client::{Client, DiskCache, NegotiationMode};
///
/// let client = Client::builder()
///     .endpoint("http://127.0.0.1:8778/")
///     .service_type("placement")
///     .supported_versions(VersionRange::from_static("1.0", "1.39"))
///     .version("latest")
///     .negotiation(NegotiationMode::Discovery)
///     .disk_cache(DiskCache::new("/tmp/microversion-cache").ttl(Duration::from_secs(600)))
///     .timeout(Duration::from_secs(30))
///     .header("x-auth-token", "admin")
///     .build()?;
/// assert_eq!(client.service_type(), "placement");
///
/// let err = Client::builder().endpoint("not a url").build().unwrap_err();
/// assert!(err.is_builder());
/// # Ok::<(), microversion_client::Error>(())
/// ```
#[must_use]
pub struct ClientBuilder {
    endpoint: Option<Url>,
    service_type: Option<String>,
    supported: Option<VersionRange>,
    requested: Option<VersionRequest>,
    negotiation: NegotiationMode,
    ignored_header: IgnoredHeader,
    memory: Option<DiscoveryCache>,
    disk: Option<DiskCache>,
    timeout: Option<Duration>,
    connect_timeout: Option<Duration>,
    headers: HeaderMap,
    http: Option<reqwest::Client>,
    auth: Option<Auth>,
    error: Option<Error>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            endpoint: None,
            service_type: None,
            supported: None,
            requested: None,
            negotiation: NegotiationMode::default(),
            ignored_header: IgnoredHeader::default(),
            memory: None,
            disk: None,
            timeout: None,
            connect_timeout: None,
            headers: HeaderMap::new(),
            http: None,
            auth: None,
            error: None,
        }
    }
}

impl ClientBuilder {
    /// A builder with nothing set.
    pub fn new() -> Self {
        ClientBuilder::default()
    }

    fn record(&mut self, error: Error) {
        if self.error.is_none() {
            self.error = Some(error);
        }
    }

    /// The endpoint: the root of the API, such as
    /// `http://127.0.0.1:8774/v2.1` or `http://127.0.0.1:8778/`. Request
    /// paths are relative to it; discovery starts at it.
    pub fn endpoint(mut self, url: impl AsRef<str>) -> Self {
        let text = url.as_ref();
        match Url::parse(text) {
            Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
                self.endpoint = Some(url);
            }
            Ok(_) => self.record(Error::builder(format!(
                "endpoint {text:?} is not an http or https URL with a host"
            ))),
            Err(e) => self.record(Error::builder_with_source(
                format!("endpoint {text:?} is not a URL"),
                e,
            )),
        }
        self
    }

    /// The service type, such as `compute`, `placement` or `baremetal`.
    /// `volumev3` and `block-storage` send `volume` in the header.
    pub fn service_type(mut self, service_type: impl Into<String>) -> Self {
        self.service_type = Some(service_type.into());
        self
    }

    /// The versions this client supports: requests outside them fail
    /// before anything is sent, and `latest` never goes above them.
    pub fn supported_versions(mut self, range: VersionRange) -> Self {
        self.supported = Some(range);
        self
    }

    /// The version requests use unless they override it: a
    /// [`VersionRequest`], or text such as `"2.10"`, `"2.latest"`,
    /// `"latest"` or `"2"`.
    ///
    /// Unset, requests send no version header and the server uses its
    /// minimum: there is no default, the caller chooses.
    pub fn version(mut self, request: impl IntoVersionRequest) -> Self {
        match request.into_version_request() {
            Ok(request) => self.requested = Some(request),
            Err(e) => self.record(Error::builder_with_source(
                format!("invalid version {:?}", String::from_utf8_lossy(e.input())),
                e,
            )),
        }
        self
    }

    /// Authenticates every request, discovery included: a Keystone
    /// session's token (renewed before it expires; after a 401, a new
    /// token and one retry) or a fixed token. A request that sets its own
    /// `X-Auth-Token` keeps it.
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = Some(auth);
        self
    }

    /// How to agree on a version (default [`NegotiationMode::Discovery`]).
    pub fn negotiation(mut self, mode: NegotiationMode) -> Self {
        self.negotiation = mode;
        self
    }

    /// What to do when the server ignores the version header (default
    /// [`IgnoredHeader::Error`]).
    pub fn ignored_header(mut self, policy: IgnoredHeader) -> Self {
        self.ignored_header = policy;
        self
    }

    /// Shares an in-memory cache with other clients (by default each client
    /// has its own, shared by its clones).
    pub fn discovery_cache(mut self, cache: DiscoveryCache) -> Self {
        self.memory = Some(cache);
        self
    }

    /// Also caches what endpoints support on disk (off by default).
    pub fn disk_cache(mut self, cache: DiskCache) -> Self {
        self.disk = Some(cache);
        self
    }

    /// The time limit of each request, discovery included, from connecting
    /// to the end of the body.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The time limit for connecting. Not available with
    /// [`ClientBuilder::http_client`], whose own setting applies.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// A header sent with every request, discovery included, such as
    /// `x-auth-token`. A request may set its own value instead.
    pub fn header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        let name_text = name.as_ref();
        match (
            HeaderName::try_from(name_text),
            HeaderValue::try_from(value.as_ref()),
        ) {
            (Ok(name), Ok(mut value)) => {
                if is_secret(&name) {
                    value.set_sensitive(true);
                }
                self.headers.insert(name, value);
            }
            (Err(e), _) => self.record(Error::builder_with_source(
                format!("invalid header name {name_text:?}"),
                e,
            )),
            (_, Err(e)) => self.record(Error::builder_with_source(
                format!("invalid value for header {name_text:?}"),
                e,
            )),
        }
        self
    }

    /// Headers sent with every request; a name given here replaces the
    /// values set before for it.
    pub fn headers(mut self, headers: HeaderMap) -> Self {
        self.headers.extend(headers);
        self
    }

    /// Sends through this reqwest client (to share its connection pool or
    /// its TLS setup) instead of one of its own.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Checks the configuration and builds the client.
    ///
    /// # Errors
    ///
    /// Returns an error ([`Error::is_builder`]) for the first invalid
    /// setting, a missing endpoint, service type or supported range, an
    /// invalid service type, a `connect_timeout` with an `http_client`, or
    /// when the reqwest client cannot be built.
    pub fn build(self) -> Result<Client, Error> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let endpoint = self
            .endpoint
            .ok_or_else(|| Error::builder("no endpoint set"))?;
        let service_type = self
            .service_type
            .ok_or_else(|| Error::builder("no service type set"))?;
        let supported = self.supported.ok_or_else(|| {
            Error::builder("the versions this client supports are not set (supported_versions)")
        })?;
        let codec = VersionHeader::try_new(header_service_type(&service_type)).map_err(|e| {
            Error::builder_with_source(format!("invalid service type {service_type:?}"), e)
        })?;
        let http = match (self.http, self.connect_timeout) {
            (Some(_), Some(_)) => {
                return Err(Error::builder(
                    "connect_timeout cannot apply to a client given with http_client",
                ));
            }
            (Some(http), None) => http,
            (None, connect_timeout) => {
                let mut builder = reqwest::Client::builder();
                if let Some(timeout) = connect_timeout {
                    builder = builder.connect_timeout(timeout);
                }
                builder
                    .build()
                    .map_err(|e| Error::builder_with_source("cannot build the HTTP client", e))?
            }
        };
        let mut headers = self.headers;
        headers
            .entry(ACCEPT)
            .or_insert(HeaderValue::from_static("application/json"));
        headers
            .entry(USER_AGENT)
            .or_insert(HeaderValue::from_static(concat!(
                "microversion-client/",
                env!("CARGO_PKG_VERSION")
            )));
        let endpoint = normalize_endpoint(&endpoint);
        let mut base = endpoint.clone();
        if !base.path().ends_with('/') {
            base.set_path(&format!("{}/", base.path()));
        }
        Ok(Client::from_shared(Arc::new(Shared {
            http,
            key: endpoint_key(&endpoint),
            context: format!("{service_type} at {endpoint}"),
            endpoint,
            base,
            service_type,
            headers_codec: Headers::new(codec),
            supported,
            requested: self.requested,
            negotiation: self.negotiation,
            ignored_header: self.ignored_header,
            memory: self.memory.unwrap_or_default(),
            disk: self.disk,
            default_headers: headers,
            timeout: self.timeout,
            auth: self.auth,
        })))
    }
}

/// Headers whose values must not appear in debug output.
fn is_secret(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "x-auth-token" | "authorization" | "x-subject-token" | "proxy-authorization"
    )
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("endpoint", &self.endpoint.as_ref().map(Url::as_str))
            .field("service_type", &self.service_type)
            .field("supported", &self.supported)
            .field("requested", &self.requested)
            .field("negotiation", &self.negotiation)
            .field("ignored_header", &self.ignored_header)
            .field("disk", &self.disk)
            .field("timeout", &self.timeout)
            .field("headers", &self.headers)
            .field("auth", &self.auth)
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> ClientBuilder {
        Client::builder()
            .endpoint("http://127.0.0.1:1/v2.1")
            .service_type("compute")
            .supported_versions(VersionRange::from_static("2.1", "2.90"))
    }

    #[test]
    fn builds_and_normalises() {
        let client = base().version("2.latest").build().unwrap();
        assert_eq!(client.endpoint().as_str(), "http://127.0.0.1:1/v2.1");
        assert_eq!(
            client.requested_version(),
            Some(VersionRequest::MajorLatest(2))
        );
        assert_eq!(client.negotiation(), NegotiationMode::Discovery);
    }

    #[test]
    fn the_first_error_comes_out_of_build() {
        let cases: Vec<(ClientBuilder, &str)> = vec![
            (
                base().endpoint("nope").endpoint("also nope"),
                "invalid configuration: endpoint \"nope\" is not a URL",
            ),
            (
                base().endpoint("ftp://h/"),
                "invalid configuration: endpoint \"ftp://h/\" is not an http or https URL with a host",
            ),
            (
                base().version("2.01"),
                "invalid configuration: invalid version \"2.01\"",
            ),
            (
                base().header("bad header", "x"),
                "invalid configuration: invalid header name \"bad header\"",
            ),
            (
                base().header("x-auth-token", "a\nb"),
                "invalid configuration: invalid value for header \"x-auth-token\"",
            ),
            (
                base().service_type("two words"),
                "invalid configuration: invalid service type \"two words\"",
            ),
            (
                base()
                    .http_client(reqwest::Client::new())
                    .connect_timeout(Duration::from_secs(1)),
                "invalid configuration: connect_timeout cannot apply to a client given with http_client",
            ),
            (
                Client::builder().service_type("compute"),
                "invalid configuration: no endpoint set",
            ),
            (
                Client::builder().endpoint("http://h/"),
                "invalid configuration: no service type set",
            ),
            (
                Client::builder()
                    .endpoint("http://h/")
                    .service_type("compute"),
                "invalid configuration: the versions this client supports are not set (supported_versions)",
            ),
        ];
        for (builder, message) in cases {
            let err = builder.build().unwrap_err();
            assert!(err.is_builder(), "{err}");
            assert_eq!(err.to_string(), message);
        }
    }

    #[test]
    fn secrets_stay_out_of_debug_output() {
        let builder = base().header("x-auth-token", "s3cret");
        let text = format!("{builder:?}");
        assert!(!text.contains("s3cret"), "{text}");
        assert!(text.contains("Sensitive"), "{text}");
    }
}
