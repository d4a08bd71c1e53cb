//! [`Client`], [`RequestBuilder`] and [`Response`]: sending requests at a
//! negotiated version.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use microversion::{
    ErrorBody, Negotiated, ServerVersions, Version, VersionRange, VersionRequest,
    check_client_range, negotiate, optimistic,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use url::Url;

use crate::auth::{Auth, Credential, X_AUTH_TOKEN};
use crate::builder::{ClientBuilder, IgnoredHeader, NegotiationMode};
use crate::cache::{DiscoveryCache, DiskCache, Known, Source};
use crate::discovery::{self, Discovery};
use crate::error::{Error, Kind};
use crate::headers::{Headers, range_from_headers};
use crate::input::{IntoVersion, IntoVersionRequest};
use crate::versioned::{Versioned, list_spans};

/// What every clone of a client shares.
pub(crate) struct Shared {
    pub(crate) http: reqwest::Client,
    pub(crate) endpoint: Url,
    /// The endpoint with a trailing slash, to join request paths to.
    pub(crate) base: Url,
    pub(crate) key: String,
    /// `compute at http://...`, the start of error messages.
    pub(crate) context: String,
    pub(crate) service_type: String,
    pub(crate) headers_codec: Headers,
    pub(crate) supported: VersionRange,
    pub(crate) requested: Option<VersionRequest>,
    pub(crate) negotiation: NegotiationMode,
    pub(crate) ignored_header: IgnoredHeader,
    pub(crate) memory: DiscoveryCache,
    pub(crate) disk: Option<DiskCache>,
    pub(crate) default_headers: HeaderMap,
    pub(crate) timeout: Option<Duration>,
    pub(crate) auth: Option<Auth>,
}

/// A client of one microversioned endpoint.
///
/// It discovers what the endpoint supports (once, shared by all clones and
/// concurrent calls), negotiates the version of each request, sends the
/// version headers, retries once after a 406 where that can help, and
/// checks that the server honoured the version. Cloning is cheap: clones
/// share the connection pool and the caches.
///
/// ```no_run
/// # async fn run() -> Result<(), microversion_client::Error> {
/// use microversion::VersionRange;
/// use microversion_client::Client;
///
/// let placement = Client::builder()
///     .endpoint("http://127.0.0.1:8778/")
///     .service_type("placement")
///     .supported_versions(VersionRange::from_static("1.0", "1.39"))
///     .version("latest")
///     .header("x-auth-token", "admin")
///     .build()?;
///
/// let response = placement.get("resource_providers").send().await?;
/// println!("served at {:?}", response.version());
///
/// // A call that needs 1.14 or later fails before sending when the
/// // negotiated version is lower.
/// let nested = placement
///     .get("resource_providers?in_tree=4e8e5957-649f-477b-9e5b-f1f75b21c03c")
///     .require("1.14")
///     .send()
///     .await?;
/// # let _ = nested;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
}

/// The version of a request, as negotiated.
///
/// [`header`](NegotiatedVersion::header) is what the version header carries
/// (nothing for `X`, `X.0`, `None`, no request at all, or a server without
/// microversions); [`effective`](NegotiatedVersion::effective) is the
/// version whose behaviour the server gives: the header's version, else the
/// server's minimum, else `X.0` for a server without microversions; `None`
/// when it cannot be known without asking the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NegotiatedVersion {
    header: Option<Version>,
    effective: Option<Version>,
}

impl NegotiatedVersion {
    /// The version sent in the header, if any.
    #[must_use]
    pub fn header(self) -> Option<Version> {
        self.header
    }

    /// The version whose behaviour the server gives, when known.
    #[must_use]
    pub fn effective(self) -> Option<Version> {
        self.effective
    }
}

impl fmt::Display for NegotiatedVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.header, self.effective) {
            (Some(v), _) => write!(f, "{v}"),
            (None, Some(v)) => write!(f, "{v} (no version header)"),
            (None, None) => f.write_str("the server's default (no version header)"),
        }
    }
}

/// A request on its way: the reqwest request and the client's options.
struct Prepared {
    request: reqwest::Request,
    version: Option<VersionRequest>,
    require: Option<Version>,
}

impl Client {
    /// Starts a [`ClientBuilder`].
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    pub(crate) fn from_shared(shared: Arc<Shared>) -> Self {
        Client { shared }
    }

    /// The endpoint (without query or fragment).
    #[must_use]
    pub fn endpoint(&self) -> &Url {
        &self.shared.endpoint
    }

    /// The service type as configured (the header may name an alias'
    /// canonical type, see [`header_service_type`](crate::header_service_type)).
    #[must_use]
    pub fn service_type(&self) -> &str {
        &self.shared.service_type
    }

    /// The versions this client supports.
    #[must_use]
    pub fn supported_versions(&self) -> VersionRange {
        self.shared.supported
    }

    /// The version requests use unless they override it.
    #[must_use]
    pub fn requested_version(&self) -> Option<VersionRequest> {
        self.shared.requested
    }

    /// The negotiation mode.
    #[must_use]
    pub fn negotiation(&self) -> NegotiationMode {
        self.shared.negotiation
    }

    /// A request for `path`, relative to the endpoint (`"flavors"` and
    /// `"/flavors"` both mean `<endpoint>/flavors`), or an absolute URL.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let (url, error) = match self.url_for(path) {
            Ok(url) => (url, None),
            Err(e) => (self.shared.base.clone(), Some(e)),
        };
        RequestBuilder {
            client: self.clone(),
            inner: self.shared.http.request(method, url),
            version: None,
            require: None,
            error,
        }
    }

    /// A GET request for `path`.
    pub fn get(&self, path: &str) -> RequestBuilder {
        self.request(Method::GET, path)
    }

    /// A POST request for `path`.
    pub fn post(&self, path: &str) -> RequestBuilder {
        self.request(Method::POST, path)
    }

    /// A PUT request for `path`.
    pub fn put(&self, path: &str) -> RequestBuilder {
        self.request(Method::PUT, path)
    }

    /// A PATCH request for `path`.
    pub fn patch(&self, path: &str) -> RequestBuilder {
        self.request(Method::PATCH, path)
    }

    /// A DELETE request for `path`.
    pub fn delete(&self, path: &str) -> RequestBuilder {
        self.request(Method::DELETE, path)
    }

    /// A HEAD request for `path`.
    pub fn head(&self, path: &str) -> RequestBuilder {
        self.request(Method::HEAD, path)
    }

    fn url_for(&self, path: &str) -> Result<Url, Error> {
        if path.starts_with("http://") || path.starts_with("https://") {
            return Url::parse(path)
                .map_err(|e| Error::builder_with_source(format!("invalid URL {path:?}"), e));
        }
        self.shared
            .base
            .join(path.trim_start_matches('/'))
            .map_err(|e| Error::builder_with_source(format!("invalid path {path:?}"), e))
    }

    /// The endpoint's versions document, as discovery read it: from the
    /// caches when they have it, else from the server (one request per
    /// endpoint, however many callers ask at once).
    ///
    /// # Errors
    ///
    /// Returns an error ([`Error::is_discovery`], [`Error::is_request`])
    /// when neither the endpoint nor its parent gives a versions document.
    pub async fn discover(&self) -> Result<Discovery, Error> {
        let result = async {
            let (known, _) = self.known_or_discover().await?;
            if let Some(discovery) = &known.discovery {
                return Ok(discovery.clone());
            }
            // Known from a 406 or a fallback: read the document now.
            let discovery = self.fetch_discovery().await?;
            self.remember(Known::from_discovery(discovery.clone()))
                .await;
            Ok(discovery)
        }
        .await;
        result.map_err(|e: Error| e.with_context(&self.shared.context))
    }

    /// What the endpoint supports: from the caches, or by discovery.
    ///
    /// # Errors
    ///
    /// As [`Client::discover`].
    pub async fn server_versions(&self) -> Result<ServerVersions, Error> {
        self.known_or_discover()
            .await
            .map(|(known, _)| known.versions)
            .map_err(|e| e.with_context(&self.shared.context))
    }

    /// What the client knows of the endpoint's versions now, without any
    /// I/O: `None` before discovery or a 406 taught it, or while a
    /// discovery is under way.
    #[must_use]
    pub fn known_server_versions(&self) -> Option<ServerVersions> {
        let slot = self.shared.memory.slot(&self.shared.key);
        let guard = slot.try_lock().ok()?;
        guard.as_ref().map(|known| known.versions)
    }

    /// The version requests without an override use, negotiated now (in
    /// the discovery mode this discovers, in the optimistic mode it uses
    /// what is known).
    ///
    /// # Errors
    ///
    /// Returns an error naming the request and both ranges when no version
    /// can be agreed ([`Error::is_negotiation`]), or a discovery error.
    pub async fn version(&self) -> Result<NegotiatedVersion, Error> {
        self.version_for(self.shared.requested)
            .await
            .map_err(|e| e.with_context(&self.shared.context))
    }

    /// Checks that the negotiated version is `minimum` or later (in the
    /// same major), before anything is sent: the gate of a feature that
    /// exists only from `minimum` on. Without a [requested
    /// version](ClientBuilder::version), the version checked (and sent by
    /// [`RequestBuilder::require`]) is the highest of `minimum`'s major that
    /// both sides support.
    ///
    /// # Errors
    ///
    /// Returns an error ([`Error::is_gate`]) naming `minimum` and the
    /// version in use when it is lower or not known, a builder error for an
    /// invalid `minimum`, or the errors of [`Client::version`].
    pub async fn require(&self, minimum: impl IntoVersion) -> Result<NegotiatedVersion, Error> {
        let result = async {
            let minimum = minimum
                .into_version()
                .map_err(|e| Error::builder_with_source("invalid required version", e))?;
            // Unset, as for a request that requires a version: the highest
            // of its major both sides support.
            let requested = self
                .shared
                .requested
                .or(Some(VersionRequest::MajorLatest(minimum.major())));
            let negotiated = self.version_for(requested).await?;
            check_minimum(minimum, negotiated)?;
            Ok(negotiated)
        }
        .await;
        result.map_err(|e: Error| e.with_context(&self.shared.context))
    }

    /// The implementation of `operation` for the negotiated version (the
    /// effective one: the server's minimum when no header is sent).
    ///
    /// # Errors
    ///
    /// Returns an error ([`Error::is_gate`]) naming the operation and the
    /// versions it is supported at, when none fits or the version in use
    /// is not known; or the errors of [`Client::version`].
    pub async fn select<'a, T>(&self, operation: &'a Versioned<T>) -> Result<&'a T, Error> {
        let result = async {
            let negotiated = self.version_for(self.shared.requested).await?;
            match negotiated.effective() {
                Some(version) => operation.select(version),
                None => Err(Error::gate(format!(
                    "{} is supported by API versions {}, but the version in use is not known \
                     (no version header is sent and the server's versions are not known)",
                    operation.name(),
                    list_spans(operation.spans())
                ))),
            }
        }
        .await;
        result.map_err(|e: Error| e.with_context(&self.shared.context))
    }

    /// Forgets what is known of the endpoint, in memory and on disk; the
    /// next call that needs it discovers again.
    pub async fn forget(&self) {
        let slot = self.shared.memory.slot(&self.shared.key);
        *slot.lock().await = None;
        self.remove_disk().await;
    }

    async fn version_for(
        &self,
        requested: Option<VersionRequest>,
    ) -> Result<NegotiatedVersion, Error> {
        self.preflight(requested)?;
        let (known, _) = self.known_for(true).await?;
        self.decide(requested, known.as_deref())
    }

    /// Case 4: a request outside the client's range fails before anything.
    fn preflight(&self, requested: Option<VersionRequest>) -> Result<(), Error> {
        match requested {
            Some(requested) => Ok(check_client_range(self.shared.supported, requested)?),
            None => Ok(()),
        }
    }

    /// What is known of the server, discovering first when the mode says so
    /// and the request needs it. The flag says whether it was fetched just
    /// now.
    async fn known_for(&self, needs_server: bool) -> Result<(Option<Arc<Known>>, bool), Error> {
        match self.shared.negotiation {
            NegotiationMode::Off => Ok((None, false)),
            NegotiationMode::Discovery if needs_server => {
                let (known, fresh) = self.known_or_discover().await?;
                Ok((Some(known), fresh))
            }
            _ => Ok((self.known_cached().await, false)),
        }
    }

    /// Chooses the version (cases 2 to 7, by the core crate's rules).
    fn decide(
        &self,
        requested: Option<VersionRequest>,
        known: Option<&Known>,
    ) -> Result<NegotiatedVersion, Error> {
        let server_default = known.and_then(|k| match k.versions {
            ServerVersions::Microversions(range) => Some(range.min()),
            ServerVersions::Unversioned => discovery::major_version(k.major),
        });
        let Some(requested) = requested else {
            return Ok(NegotiatedVersion {
                header: None,
                effective: server_default,
            });
        };
        let negotiated = match known {
            Some(known) => negotiate(self.shared.supported, known.versions, requested)?,
            None => optimistic(self.shared.supported, requested)?,
        };
        Ok(match negotiated {
            Negotiated::Version(v) => NegotiatedVersion {
                header: Some(v),
                effective: Some(v),
            },
            _ => NegotiatedVersion {
                header: None,
                effective: server_default,
            },
        })
    }

    async fn execute(&self, prepared: Prepared) -> Result<Response, Error> {
        // Unset, a call that needs a feature (`require`) asks for the
        // highest version of that major both sides support; other calls
        // send no header (the server's minimum). Never a version the
        // server does not support: negotiation checks its range.
        let requested = prepared.version.or(self.shared.requested).or_else(|| {
            prepared
                .require
                .map(|v| VersionRequest::MajorLatest(v.major()))
        });
        self.preflight(requested)?;
        let needs_server =
            prepared.require.is_some() || requested.is_some_and(VersionRequest::is_microversioned);
        let (mut known, mut fresh) = self.known_for(needs_server).await?;
        let mut credential = self.credential_for(&prepared.request).await?;
        let mut reauthenticated = false;
        let mut attempts = 0_u8;
        loop {
            attempts += 1;
            let negotiated = self.decide(requested, known.as_deref())?;
            if let Some(minimum) = prepared.require {
                check_minimum(minimum, negotiated)?;
            }
            let request =
                self.prepare(&prepared.request, negotiated.header(), credential.as_ref())?;
            let url = request.url().clone();
            let response = self
                .shared
                .http
                .execute(request)
                .await
                .map_err(Error::request)?;
            // One new token and one retry after a 401 to a session's token.
            if let (StatusCode::UNAUTHORIZED, false, Some(auth), Some(used)) = (
                response.status(),
                reauthenticated,
                &self.shared.auth,
                &credential,
            ) {
                if auth.refused(used) {
                    reauthenticated = true;
                    credential = Some(auth.credential().await?);
                    attempts -= 1;
                    continue;
                }
            }
            let (Some(requested), Some(sent), StatusCode::NOT_ACCEPTABLE) =
                (requested, negotiated.header(), response.status())
            else {
                return self.check_response(response, negotiated, attempts).await;
            };
            let learned = self
                .relearn(
                    Refused {
                        sent,
                        requested,
                        url,
                    },
                    known.as_ref(),
                    fresh,
                    attempts,
                    response,
                )
                .await?;
            known = Some(learned);
            fresh = true;
        }
    }

    /// The token to send with `request`: none without [`Auth`], or when
    /// the caller set `X-Auth-Token` on the request itself.
    async fn credential_for(
        &self,
        request: &reqwest::Request,
    ) -> Result<Option<Credential>, Error> {
        match &self.shared.auth {
            Some(auth) if !request.headers().contains_key(X_AUTH_TOKEN) => {
                auth.credential().await.map(Some)
            }
            _ => Ok(None),
        }
    }

    /// A copy of the request with the default and version headers.
    fn prepare(
        &self,
        request: &reqwest::Request,
        version: Option<Version>,
        credential: Option<&Credential>,
    ) -> Result<reqwest::Request, Error> {
        let mut request = request
            .try_clone()
            .ok_or_else(|| Error::builder("a request with a streaming body cannot be sent"))?;
        if let Some(credential) = credential {
            request
                .headers_mut()
                .insert(X_AUTH_TOKEN, credential.value.clone());
        }
        for (name, value) in &self.shared.default_headers {
            if !request.headers().contains_key(name) {
                request.headers_mut().insert(name.clone(), value.clone());
            }
        }
        self.shared
            .headers_codec
            .apply(request.headers_mut(), version);
        if request.timeout().is_none() {
            *request.timeout_mut() = self.shared.timeout;
        }
        Ok(request)
    }

    /// After a 406 to `refused.sent`: learns the server's range and
    /// returns what to retry with, or the error to give.
    async fn relearn(
        &self,
        refused: Refused,
        known: Option<&Arc<Known>>,
        fresh: bool,
        attempts: u8,
        response: reqwest::Response,
    ) -> Result<Arc<Known>, Error> {
        let (learned, told_by) = match range_from_headers(response.headers()) {
            Some(range) => (Some(range), "its range headers"),
            None => (range_from_body(response).await, "its error body"),
        };
        let previous = known.and_then(|k| k.range());
        let mode = self.shared.negotiation;
        if mode == NegotiationMode::Off {
            return Err(refused.error(
                &self.shared,
                learned,
                "and negotiation is off, so it is not retried",
            ));
        }
        if attempts >= 2 {
            return Err(refused.error(
                &self.shared,
                learned.or(previous),
                "again, after renegotiating once",
            ));
        }
        let renewed = if mode == NegotiationMode::Discovery {
            if fresh {
                return Err(refused.error(
                    &self.shared,
                    learned.or(previous),
                    "although its versions document lists it",
                ));
            }
            tracing::debug!(endpoint = %self.shared.endpoint, sent = %refused.sent,
                "406 on a cached version: discovering again");
            self.refresh(known).await?
        } else if let Some(range) = learned {
            tracing::debug!(endpoint = %self.shared.endpoint, sent = %refused.sent, %range,
                "406: the server told its range in {told_by}");
            self.remember(Known::from_not_acceptable(range)).await
        } else {
            tracing::debug!(endpoint = %self.shared.endpoint, sent = %refused.sent,
                "406 without a range: discovering");
            match self.refresh(known).await {
                Ok(known) => known,
                Err(e) => {
                    return Err(refused
                        .error(
                            &self.shared,
                            previous,
                            "and did not say which versions it supports (discovery failed too)",
                        )
                        .with_source(e));
                }
            }
        };
        let again = self.decide(Some(refused.requested), Some(&renewed))?;
        if again.header() == Some(refused.sent) {
            return Err(refused.error(
                &self.shared,
                renewed.range(),
                "although the versions it reports include it",
            ));
        }
        Ok(renewed)
    }

    /// Case 8: a successful microversioned response must name the version.
    async fn check_response(
        &self,
        response: reqwest::Response,
        negotiated: NegotiatedVersion,
        attempts: u8,
    ) -> Result<Response, Error> {
        let served = self.shared.headers_codec.served(response.headers());
        let mut version = served.or(negotiated.effective());
        if let Some(sent) = negotiated.header() {
            if response.status().is_success() && served != Some(sent) {
                if self.shared.ignored_header == IgnoredHeader::Error {
                    return Err(Error::new(Kind::IgnoredHeader {
                        sent,
                        answered: served,
                    })
                    .with_url(response.url()));
                }
                if served.is_none() {
                    version = Some(Version::new(sent.major(), 0));
                    if self.shared.negotiation != NegotiationMode::Off {
                        tracing::debug!(endpoint = %self.shared.endpoint, %sent,
                            "the server ignored the version header: carrying on without microversions");
                        self.remember(Known::ignored_header(sent.major())).await;
                    }
                }
            }
        }
        Ok(Response {
            inner: response,
            sent: negotiated.header(),
            version,
            attempts,
        })
    }

    // --- The caches ---

    /// What is known, from memory, disk or discovery, and whether it was
    /// fetched now. One discovery per endpoint: the slot stays locked
    /// while it runs, and every other caller waits for it.
    async fn known_or_discover(&self) -> Result<(Arc<Known>, bool), Error> {
        let slot = self.shared.memory.slot(&self.shared.key);
        let mut guard = slot.lock().await;
        if let Some(known) = guard.as_ref() {
            return Ok((Arc::clone(known), false));
        }
        if let Some(known) = self.load_disk().await {
            let known = Arc::new(known);
            *guard = Some(Arc::clone(&known));
            return Ok((known, false));
        }
        let known = Arc::new(Known::from_discovery(self.fetch_discovery().await?));
        *guard = Some(Arc::clone(&known));
        self.store_disk(&known).await;
        Ok((known, true))
    }

    /// What memory or disk knows, without any request.
    async fn known_cached(&self) -> Option<Arc<Known>> {
        let slot = self.shared.memory.slot(&self.shared.key);
        let mut guard = slot.lock().await;
        if let Some(known) = guard.as_ref() {
            return Some(Arc::clone(known));
        }
        let known = Arc::new(self.load_disk().await?);
        *guard = Some(Arc::clone(&known));
        Some(known)
    }

    /// Drops `stale` and discovers again; if another caller already
    /// replaced it, takes theirs.
    async fn refresh(&self, stale: Option<&Arc<Known>>) -> Result<Arc<Known>, Error> {
        let slot = self.shared.memory.slot(&self.shared.key);
        let mut guard = slot.lock().await;
        if let Some(current) = guard.as_ref() {
            if !stale.is_some_and(|stale| Arc::ptr_eq(stale, current)) {
                return Ok(Arc::clone(current));
            }
        }
        *guard = None;
        self.remove_disk().await;
        let known = Arc::new(Known::from_discovery(self.fetch_discovery().await?));
        *guard = Some(Arc::clone(&known));
        self.store_disk(&known).await;
        Ok(known)
    }

    /// Replaces what is known.
    async fn remember(&self, known: Known) -> Arc<Known> {
        let known = Arc::new(known);
        let slot = self.shared.memory.slot(&self.shared.key);
        *slot.lock().await = Some(Arc::clone(&known));
        self.store_disk(&known).await;
        known
    }

    async fn fetch_discovery(&self) -> Result<Discovery, Error> {
        tracing::debug!(endpoint = %self.shared.endpoint, "discovering");
        // With the token: some versions documents (Nova's /v2.1) need one.
        let headers = match &self.shared.auth {
            Some(auth) if !self.shared.default_headers.contains_key(X_AUTH_TOKEN) => {
                let mut headers = self.shared.default_headers.clone();
                headers.insert(X_AUTH_TOKEN, auth.credential().await?.value);
                std::borrow::Cow::Owned(headers)
            }
            _ => std::borrow::Cow::Borrowed(&self.shared.default_headers),
        };
        discovery::discover(
            &self.shared.http,
            &self.shared.endpoint,
            &headers,
            self.shared.timeout,
        )
        .await
    }

    async fn load_disk(&self) -> Option<Known> {
        let disk = self.shared.disk.clone()?;
        let key = self.shared.key.clone();
        tokio::task::spawn_blocking(move || disk.load(&key))
            .await
            .ok()
            .flatten()
    }

    async fn store_disk(&self, known: &Arc<Known>) {
        if let Some(disk) = self.shared.disk.clone() {
            if known.source == Source::IgnoredHeader {
                return;
            }
            let key = self.shared.key.clone();
            let known = Arc::clone(known);
            let _ = tokio::task::spawn_blocking(move || disk.store(&key, &known)).await;
        }
    }

    async fn remove_disk(&self) {
        if let Some(disk) = self.shared.disk.clone() {
            let key = self.shared.key.clone();
            let _ = tokio::task::spawn_blocking(move || disk.remove(&key)).await;
        }
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.shared;
        f.debug_struct("Client")
            .field("endpoint", &s.endpoint.as_str())
            .field("service_type", &s.service_type)
            .field("supported", &s.supported)
            .field("requested", &s.requested)
            .field("negotiation", &s.negotiation)
            .field("ignored_header", &s.ignored_header)
            .field("disk", &s.disk)
            .finish_non_exhaustive()
    }
}

/// The refused request of a 406.
struct Refused {
    sent: Version,
    requested: VersionRequest,
    url: Url,
}

impl Refused {
    fn error(&self, shared: &Shared, server: Option<VersionRange>, why: &'static str) -> Error {
        Error::new(Kind::NotAcceptable {
            sent: self.sent,
            client: shared.supported,
            server,
            why,
        })
        .with_url(&self.url)
    }
}

/// The range in a 406's API-SIG error body (`min_version`, `max_version`).
async fn range_from_body(response: reqwest::Response) -> Option<VersionRange> {
    let body = response.bytes().await.ok()?;
    let body: ErrorBody = serde_json::from_slice(&body).ok()?;
    body.errors
        .iter()
        .find_map(|e| match (e.min_version, e.max_version) {
            (Some(min), Some(max)) => VersionRange::new(min, max).ok(),
            _ => None,
        })
}

/// The gate of `require`: `minimum` or later, in the same major.
fn check_minimum(minimum: Version, negotiated: NegotiatedVersion) -> Result<(), Error> {
    match negotiated.effective() {
        Some(v) if v.major() == minimum.major() && v >= minimum => Ok(()),
        Some(v) => Err(Error::gate(format!(
            "this call requires API version {minimum} or later; the version in use is {v}"
        ))),
        None => Err(Error::gate(format!(
            "this call requires API version {minimum} or later, but the version in use is not \
             known (no version header is sent and the server's versions are not known)"
        ))),
    }
}

/// A request being built; [`RequestBuilder::send`] negotiates and sends
/// it.
///
/// Errors of the setters (a bad version, header or body) are recorded and
/// returned by `send`.
#[must_use]
pub struct RequestBuilder {
    client: Client,
    inner: reqwest::RequestBuilder,
    version: Option<VersionRequest>,
    require: Option<Version>,
    error: Option<Error>,
}

impl RequestBuilder {
    fn record(&mut self, error: Error) {
        if self.error.is_none() {
            self.error = Some(error);
        }
    }

    /// Uses this version instead of the client's: a [`VersionRequest`] or
    /// text (`"2.10"`, `"2.latest"`, `"latest"`, `"2"`). It is negotiated
    /// like the client's and never silently changed.
    pub fn version(mut self, request: impl IntoVersionRequest) -> Self {
        match request.into_version_request() {
            Ok(request) => self.version = Some(request),
            Err(e) => self.record(Error::builder_with_source(
                format!("invalid version {:?}", String::from_utf8_lossy(e.input())),
                e,
            )),
        }
        self
    }

    /// Fails before sending unless the negotiated version is `minimum` or
    /// later (in the same major).
    pub fn require(mut self, minimum: impl IntoVersion) -> Self {
        match minimum.into_version() {
            Ok(minimum) => self.require = Some(minimum),
            Err(e) => self.record(Error::builder_with_source("invalid required version", e)),
        }
        self
    }

    /// Adds a header. The version headers are the client's: any set here
    /// are replaced by the negotiated ones.
    pub fn header<K, V>(mut self, name: K, value: V) -> Self
    where
        HeaderName: TryFrom<K>,
        <HeaderName as TryFrom<K>>::Error: Into<http::Error>,
        HeaderValue: TryFrom<V>,
        <HeaderValue as TryFrom<V>>::Error: Into<http::Error>,
    {
        self.inner = self.inner.header(name, value);
        self
    }

    /// Adds headers.
    pub fn headers(mut self, headers: HeaderMap) -> Self {
        self.inner = self.inner.headers(headers);
        self
    }

    /// Adds query parameters (anything `serde_urlencoded` can write).
    pub fn query<T: Serialize + ?Sized>(mut self, query: &T) -> Self {
        self.inner = self.inner.query(query);
        self
    }

    /// Sets a JSON body (and `Content-Type: application/json`).
    pub fn json<T: Serialize + ?Sized>(mut self, body: &T) -> Self {
        self.inner = self.inner.json(body);
        self
    }

    /// Sets a body. It must not be a stream: a request may be sent twice
    /// (after a 406).
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.inner = self.inner.body(body.into());
        self
    }

    /// The time limit of this request, instead of the client's.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.inner = self.inner.timeout(timeout);
        self
    }

    /// Negotiates the version and sends the request (docs/client.md, negotiation
    /// 2 to 8).
    ///
    /// # Errors
    ///
    /// - [`Error::is_builder`]: a setter was given something invalid;
    /// - [`Error::is_negotiation`]: no version can be agreed (nothing was
    ///   sent, or a 406 showed the server's range excludes the version
    ///   asked);
    /// - [`Error::is_not_acceptable`]: the server refused the version and
    ///   renegotiating could not help;
    /// - [`Error::is_ignored_header`]: a successful response named no
    ///   version or another one, and the client is set to fail then;
    /// - [`Error::is_gate`]: [`RequestBuilder::require`] failed;
    /// - [`Error::is_discovery`], [`Error::is_request`]: I/O failed.
    ///
    /// An error status (404, 500, ...) is not an error here: see
    /// [`Response::error_for_status`].
    pub async fn send(self) -> Result<Response, Error> {
        let context = self.client.shared.context.clone();
        let result = async {
            if let Some(error) = self.error {
                return Err(error);
            }
            let request = self
                .inner
                .build()
                .map_err(|e| Error::builder_with_source("invalid request", e))?;
            self.client
                .execute(Prepared {
                    request,
                    version: self.version,
                    require: self.require,
                })
                .await
        }
        .await;
        result.map_err(|e| e.with_context(context))
    }
}

impl fmt::Debug for RequestBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestBuilder")
            .field("inner", &self.inner)
            .field("version", &self.version)
            .field("require", &self.require)
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

/// A response, with the version it was served at.
pub struct Response {
    inner: reqwest::Response,
    sent: Option<Version>,
    version: Option<Version>,
    attempts: u8,
}

impl Response {
    /// The status.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        self.inner.status()
    }

    /// The headers.
    #[must_use]
    pub fn headers(&self) -> &HeaderMap {
        self.inner.headers()
    }

    /// The final URL (after redirects).
    #[must_use]
    pub fn url(&self) -> &Url {
        self.inner.url()
    }

    /// The version the response was served at: the one its version header
    /// names (standard, else legacy); else, when the server ignored the
    /// header and the client falls back, `X.0`; else the version the client
    /// expects (the server's minimum when no header was sent). `None` when
    /// none of these is known.
    #[must_use]
    pub fn version(&self) -> Option<Version> {
        self.version
    }

    /// The version sent in the request's header, if any.
    #[must_use]
    pub fn sent_version(&self) -> Option<Version> {
        self.sent
    }

    /// How many times the request was sent: 1, or 2 after a 406 and a
    /// renegotiation.
    #[must_use]
    pub fn attempts(&self) -> u8 {
        self.attempts
    }

    /// The response, or an error ([`Error::is_status`]) for a 4xx or 5xx
    /// status.
    ///
    /// # Errors
    ///
    /// Returns the error for a client or server error status.
    pub fn error_for_status(self) -> Result<Self, Error> {
        let status = self.status();
        if status.is_client_error() || status.is_server_error() {
            Err(Error::new(Kind::Status(status)).with_url(self.url()))
        } else {
            Ok(self)
        }
    }

    /// The body as JSON.
    ///
    /// # Errors
    ///
    /// Returns an error ([`Error::is_decode`]) when the body is not valid
    /// JSON for `T`, or ([`Error::is_request`]) when reading it fails.
    pub async fn json<T: DeserializeOwned>(self) -> Result<T, Error> {
        self.inner.json().await.map_err(Error::request)
    }

    /// The body as text.
    ///
    /// # Errors
    ///
    /// Returns an error when reading the body fails.
    pub async fn text(self) -> Result<String, Error> {
        self.inner.text().await.map_err(Error::request)
    }

    /// The body as bytes.
    ///
    /// # Errors
    ///
    /// Returns an error when reading the body fails.
    pub async fn bytes(self) -> Result<Bytes, Error> {
        self.inner.bytes().await.map_err(Error::request)
    }

    /// The reqwest response underneath.
    #[must_use]
    pub fn into_inner(self) -> reqwest::Response {
        self.inner
    }
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Response")
            .field("url", &self.inner.url().as_str())
            .field("status", &self.inner.status())
            .field("version", &self.version)
            .field("sent", &self.sent)
            .field("attempts", &self.attempts)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimum_gate() {
        let at = |v: &'static str| NegotiatedVersion {
            header: Some(Version::from_static(v)),
            effective: Some(Version::from_static(v)),
        };
        assert!(check_minimum(Version::new(1, 10), at("1.10")).is_ok());
        assert!(check_minimum(Version::new(1, 10), at("1.39")).is_ok());
        let err = check_minimum(Version::new(1, 10), at("1.9")).unwrap_err();
        assert!(err.is_gate());
        assert_eq!(
            err.to_string(),
            "this call requires API version 1.10 or later; the version in use is 1.9"
        );
        // Another major is another API.
        assert!(check_minimum(Version::new(2, 10), at("3.1")).is_err());
        let unknown = NegotiatedVersion {
            header: None,
            effective: None,
        };
        assert!(
            check_minimum(Version::new(1, 1), unknown)
                .unwrap_err()
                .to_string()
                .contains("not known")
        );
    }

    #[test]
    fn negotiated_version_display() {
        let v = Version::new(2, 53);
        let with_header = NegotiatedVersion {
            header: Some(v),
            effective: Some(v),
        };
        assert_eq!(with_header.to_string(), "2.53");
        let default = NegotiatedVersion {
            header: None,
            effective: Some(Version::new(2, 1)),
        };
        assert_eq!(default.to_string(), "2.1 (no version header)");
    }

    #[test]
    fn paths_join_the_endpoint() {
        let client = Client::builder()
            .endpoint("http://127.0.0.1:1/v2.1")
            .service_type("compute")
            .supported_versions(VersionRange::from_static("2.1", "2.90"))
            .build()
            .unwrap();
        assert_eq!(
            client.url_for("flavors").unwrap().as_str(),
            "http://127.0.0.1:1/v2.1/flavors"
        );
        assert_eq!(
            client.url_for("/flavors").unwrap().as_str(),
            "http://127.0.0.1:1/v2.1/flavors"
        );
        assert_eq!(
            client
                .url_for("flavors/detail?is_public=none")
                .unwrap()
                .as_str(),
            "http://127.0.0.1:1/v2.1/flavors/detail?is_public=none"
        );
        assert_eq!(
            client
                .url_for("http://other:8774/v2.1/servers")
                .unwrap()
                .as_str(),
            "http://other:8774/v2.1/servers"
        );
        assert!(client.url_for("http://[bad").is_err());
    }
}
