//! [`Microversions`]: the versioning of one API, built once and shared by
//! the layer, the extractors and the router.

use std::fmt;
use std::sync::Arc;

use http::{HeaderMap, HeaderName, HeaderValue};
use microversion::{
    Decoded, InvalidVersion, OPENSTACK_API_VERSION, Profile, RequestedVersion, Rules,
    UnsupportedVersion, Version, VersionHeader, VersionRange,
};

use crate::deprecation::Deprecation;
use crate::error::BuildError;
use crate::served::{InvalidServedRange, ServedRange};
use crate::telemetry::Asked;

/// The versioning of one API: its service type, supported range and
/// profile. Cheap to clone (a shared reference).
///
/// A build is freed when its last clone goes: the layer, the extractors
/// and the routers built on it each hold a clone, and so does every
/// request in flight. A process may build it as often as it likes (a
/// test suite, a fuzz harness resetting its service, a service rebuilding
/// on reload) without keeping anything of the builds it dropped; only the
/// header values of its versions are kept for the life of the process,
/// once per distinct value however often they are built (they are read
/// on every answer without counting references).
///
/// ```
/// use microversion::VersionRange;
/// use microversion_server::{Microversions, Profile};
///
/// let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
///     .profile(Profile::Placement)
///     .version_neutral("/healthcheck")
///     .build()?;
/// assert_eq!(api.range().max().to_string(), "1.39");
/// # Ok::<(), microversion_server::BuildError>(())
/// ```
#[derive(Clone)]
pub struct Microversions {
    inner: Arc<Inner>,
}

struct Inner {
    codec: VersionHeader,
    /// The code's range and the range served, which an operator may
    /// narrow inside it, also while serving.
    range: ServedRange,
    profile: Profile,
    rules: Rules,
    neutral_paths: Vec<String>,
    neutral_prefixes: Vec<String>,
    /// The legacy root (`/v2`), without a trailing `/`.
    legacy_root: Option<String>,
    deprecations: Vec<Deprecation>,
    /// Standard header values for every version of the range, so answering
    /// costs no formatting. Empty when the range is too wide to keep.
    standard_values: Vec<HeaderValue>,
    legacy_values: Vec<HeaderValue>,
    vary: HeaderValue,
    /// The service type and one space, as clients most often write the
    /// header (`placement 1.20`): a value that is this and a version's
    /// digits is read without the general decoder.
    common_prefix: Box<[u8]>,
    #[cfg(feature = "metrics")]
    telemetry: crate::telemetry::Telemetry,
    #[cfg(feature = "metrics")]
    count_requests: bool,
    #[cfg(feature = "metrics")]
    project_of: Option<crate::telemetry::ProjectOf>,
}

/// At most this many header values are prepared ahead.
const MAX_CACHED_VERSIONS: u32 = 4096;

/// A version text [`Microversions::resolve_text`] refuses: the status
/// and message the layer would answer a request carrying it with, and
/// (through [`IntoResponse`](axum::response::IntoResponse) or
/// [`VersionRefused::response_for`]) the layer's whole answer.
///
/// A service that reads a version from elsewhere than the header (a
/// query parameter, say) answers a bad one as the layer would:
///
/// ```
/// use axum::response::{IntoResponse, Response};
/// use microversion::VersionRange;
/// use microversion_server::{Microversions, Profile};
///
/// let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
///     .profile(Profile::Placement)
///     .build()?;
/// let answer = |asked: &str| -> Response {
///     match api.resolve_text(asked) {
///         Ok(version) => format!("served at {version}").into_response(),
///         Err(refused) => refused.into_response(),
///     }
/// };
/// let refused = answer("1.99");
/// assert_eq!(refused.status(), http::StatusCode::NOT_ACCEPTABLE);
/// assert!(refused.headers().contains_key("x-openstack-request-id"));
/// # Ok::<(), microversion_server::BuildError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionRefused {
    api: Microversions,
    refusal: Refusal,
    detail: String,
}

/// Why a version is refused, as the layer tells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Not a version (400, or 406 in some profiles).
    Malformed(InvalidVersion),
    /// A version outside the range (406).
    Unsupported(Version),
}

impl VersionRefused {
    fn new(api: &Microversions, refusal: Refusal) -> Self {
        let rules = api.rules();
        let detail = match &refusal {
            Refusal::Malformed(error) => crate::dialect::malformed_detail(rules, error),
            Refusal::Unsupported(version) => {
                crate::dialect::unsupported_detail(rules, api.range(), *version)
            }
        };
        VersionRefused {
            api: api.clone(),
            refusal,
            detail,
        }
    }

    /// 400 (malformed; 406 in some profiles) or 406 (outside the range).
    #[must_use]
    pub fn status(&self) -> http::StatusCode {
        match self.refusal {
            Refusal::Malformed(_) => self.api.rules().malformed_status,
            Refusal::Unsupported(_) => http::StatusCode::NOT_ACCEPTABLE,
        }
    }

    /// Whether the text is not a version at all (rather than one outside
    /// the range).
    #[must_use]
    pub fn is_malformed(&self) -> bool {
        matches!(self.refusal, Refusal::Malformed(_))
    }

    /// The versioning that refused it.
    pub(crate) fn api(&self) -> &Microversions {
        &self.api
    }

    /// Why it is refused.
    pub(crate) fn refusal(&self) -> &Refusal {
        &self.refusal
    }
}

impl fmt::Display for VersionRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)
    }
}

impl std::error::Error for VersionRefused {}

/// What the headers of a request ask, read by [`Microversions::negotiate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NegotiationOutcome {
    /// The version to serve.
    Served(Version),
    /// The version text is malformed (400, or 406 in some profiles): the
    /// error holds the text as sent and why it is wrong.
    Malformed(InvalidVersion),
    /// A well-formed version outside the range (406).
    Unsupported(Version),
}

impl Microversions {
    /// Starts a builder for `service_type` serving `range`.
    pub fn builder(service_type: impl Into<String>, range: VersionRange) -> MicroversionsBuilder {
        MicroversionsBuilder {
            service_type: service_type.into(),
            range,
            profile: Profile::default(),
            rules: None,
            neutral_paths: Vec::new(),
            neutral_prefixes: Vec::new(),
            legacy_root: None,
            deprecations: Vec::new(),
            served: None,
            #[cfg(feature = "metrics")]
            count_requests: true,
            #[cfg(feature = "metrics")]
            project_of: None,
        }
    }

    /// The service type read from and written to the header.
    #[must_use]
    pub fn service_type(&self) -> &str {
        self.inner.codec.service_type()
    }

    /// The range served: what requests may ask for, what discovery and
    /// refusals name. The code's range unless an operator narrowed it
    /// ([`MicroversionsBuilder::served_range`],
    /// [`Microversions::set_served_range`]).
    #[must_use]
    pub fn range(&self) -> VersionRange {
        self.inner.range.get()
    }

    /// The range the code implements, whatever is served of it.
    #[must_use]
    pub fn code_range(&self) -> VersionRange {
        self.inner.range.code()
    }

    /// Serves `served` from the next request on: an operator's raised
    /// minimum or capped maximum, inside the code's range (the code's
    /// range itself serves everything again). Every clone of this value,
    /// and so every layer, extractor and document built on it, follows.
    ///
    /// ```
    /// use microversion::{Version, VersionRange};
    /// use microversion_server::Microversions;
    ///
    /// let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
    ///     .build()?;
    /// api.set_served_range(VersionRange::from_static("1.10", "1.36"))?;
    /// assert_eq!(api.resolve_text("latest")?, Version::new(1, 36));
    /// assert_eq!(api.resolve_text("1.9").unwrap_err().status(), http::StatusCode::NOT_ACCEPTABLE);
    /// assert!(api.set_served_range(VersionRange::from_static("1.10", "1.40")).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Returns [`InvalidServedRange`], naming both ranges, when `served`
    /// is not inside the code's range (nothing changes then).
    pub fn set_served_range(&self, served: VersionRange) -> Result<(), InvalidServedRange> {
        self.inner.range.set(served)
    }

    /// The profile.
    #[must_use]
    pub fn profile(&self) -> Profile {
        self.inner.profile
    }

    /// The rules in force (the profile's, possibly changed).
    #[must_use]
    pub fn rules(&self) -> &Rules {
        &self.inner.rules
    }

    /// The deprecated versions, as declared (the first that covers a
    /// version speaks for it).
    #[must_use]
    pub fn deprecations(&self) -> &[Deprecation] {
        &self.inner.deprecations
    }

    /// The deprecation of `version`, if it is deprecated.
    #[must_use]
    pub fn deprecation_of(&self, version: Version) -> Option<&Deprecation> {
        Deprecation::of(&self.inner.deprecations, version)
    }

    /// The request counters (feature `metrics`).
    #[cfg(feature = "metrics")]
    #[must_use]
    pub fn telemetry(&self) -> &crate::telemetry::Telemetry {
        &self.inner.telemetry
    }

    /// Whether the layer counts negotiations (see
    /// [`MicroversionsBuilder::count_requests`]).
    #[cfg(feature = "metrics")]
    pub(crate) fn counts_requests(&self) -> bool {
        self.inner.count_requests
    }

    /// The project of a request, as the service's hook reads it.
    #[cfg(feature = "metrics")]
    pub(crate) fn project_of<'a>(&self, extensions: &'a http::Extensions) -> Option<&'a str> {
        self.inner.project_of.and_then(|hook| hook(extensions))
    }

    /// Whether a request to `path` skips negotiation (health, metrics, and
    /// `/` in profiles whose root is not versioned).
    #[must_use]
    pub fn is_version_neutral(&self, path: &str) -> bool {
        let inner = &self.inner;
        (path == "/" && !inner.rules.root_is_versioned)
            || inner.neutral_paths.iter().any(|p| p == path)
            || inner
                .neutral_prefixes
                .iter()
                .any(|p| path.starts_with(p.as_str()))
    }

    /// The legacy root, as given to [`MicroversionsBuilder::legacy_root`]
    /// (without a trailing `/`).
    #[must_use]
    pub fn legacy_root(&self) -> Option<&str> {
        self.inner.legacy_root.as_deref()
    }

    /// Whether a request to `path` comes in under the legacy root: it is
    /// served the code's minimum whatever it asks, with no version headers.
    #[must_use]
    pub fn is_legacy(&self, path: &str) -> bool {
        self.inner.legacy_root.as_deref().is_some_and(|root| {
            path.strip_prefix(root)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }

    /// Reads the version a request asks for and decides what to serve.
    ///
    /// No allocation happens for a well-formed header or none, nor for a
    /// version answered with 406 (tests/alloc.rs checks it).
    #[must_use]
    pub fn negotiate(&self, headers: &HeaderMap) -> NegotiationOutcome {
        let mut standard = headers.get_all(OPENSTACK_API_VERSION).iter();
        let lone = match (standard.next(), standard.next()) {
            (Some(value), None) => Some(value),
            _ => None,
        };
        self.negotiate_found(lone, headers).0
    }

    /// [`Microversions::negotiate`] for a caller that has looked for the
    /// standard header already: `lone` is its value when the request has
    /// exactly one, `None` when it has none or several. Also says how the
    /// version was asked (for the telemetry).
    pub(crate) fn negotiate_found(
        &self,
        lone: Option<&HeaderValue>,
        headers: &HeaderMap,
    ) -> (NegotiationOutcome, Asked) {
        if let Some(version) = lone.and_then(|value| self.common_form(value)) {
            let outcome = match self.range().resolve(RequestedVersion::Exact(version)) {
                Ok(v) => NegotiationOutcome::Served(v),
                Err(e) => NegotiationOutcome::Unsupported(e.requested()),
            };
            return (outcome, Asked::Exact);
        }
        self.negotiate_asked(headers.get_all(OPENSTACK_API_VERSION), headers)
    }

    /// The version a request's only standard header asks for when it is in
    /// the common form, `<service type> <version>` with the service type
    /// spelled as configured and one space: the version the general
    /// decoder would read from it, for fewer instructions and no
    /// allocation (docs/decisions.md). `None` for anything else, left to
    /// the general decoder, every malformed version included.
    ///
    /// The version is read by the core crate's one parser
    /// ([`Version::checked_from_bytes`], which allocates nothing for a
    /// token that is not a version), so the grammar is written once. A
    /// token it accepts has no comma, white space or word, so the value is
    /// one entry for this service that the decoder would read the same
    /// way, and an entry in the standard header makes the legacy header
    /// irrelevant.
    fn common_form(&self, value: &HeaderValue) -> Option<Version> {
        let prefix = &*self.inner.common_prefix;
        if prefix.is_empty() {
            return None;
        }
        let token = value.as_bytes().strip_prefix(prefix)?;
        Version::checked_from_bytes(token)
    }

    /// [`Microversions::negotiate`] for any headers.
    #[cfg(test)]
    fn negotiate_general(
        &self,
        standard: http::header::GetAll<'_, HeaderValue>,
        headers: &HeaderMap,
    ) -> NegotiationOutcome {
        self.negotiate_asked(standard, headers).0
    }

    /// [`Microversions::negotiate`] for any headers, and how the version
    /// was asked.
    fn negotiate_asked(
        &self,
        standard: http::header::GetAll<'_, HeaderValue>,
        headers: &HeaderMap,
    ) -> (NegotiationOutcome, Asked) {
        let inner = &self.inner;
        let range = self.range();
        let decoded = match &inner.rules.legacy_header {
            Some(legacy) => inner
                .codec
                .decode_with_legacy(standard, headers.get_all(legacy)),
            None => inner.codec.decode(standard),
        };
        match decoded {
            Decoded::Absent => (NegotiationOutcome::Served(range.min()), Asked::Absent),
            Decoded::Present(requested) => {
                let asked = match requested {
                    RequestedVersion::Latest => Asked::Latest,
                    RequestedVersion::Exact(_) => Asked::Exact,
                };
                let outcome = match range.resolve(requested) {
                    Ok(v) => NegotiationOutcome::Served(v),
                    Err(e) => NegotiationOutcome::Unsupported(e.requested()),
                };
                (outcome, asked)
            }
            Decoded::Malformed(bad) => {
                let outcome = match bad.zero_major() {
                    Some(v) if inner.rules.zero_major_is_unsupported => {
                        NegotiationOutcome::Unsupported(v)
                    }
                    _ => NegotiationOutcome::Malformed(bad.error()),
                };
                (outcome, Asked::Exact)
            }
        }
    }

    /// Resolves a version the caller already holds (for tests and tools).
    ///
    /// # Errors
    ///
    /// Returns [`UnsupportedVersion`], with the request and the range, when
    /// the version is outside the range.
    pub fn resolve(&self, requested: RequestedVersion) -> Result<Version, UnsupportedVersion> {
        self.range().resolve(requested)
    }

    /// Resolves a version written as a client writes it in the header
    /// (`1.20`, `latest`), for tools that take one on their command line:
    /// the version a request carrying it would be served, or the refusal
    /// the layer would answer it with, in the same words.
    ///
    /// ```
    /// use microversion::{Version, VersionRange};
    /// use microversion_server::{Microversions, Profile};
    ///
    /// let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
    ///     .profile(Profile::Placement)
    ///     .build()?;
    /// assert_eq!(api.resolve_text("latest")?, Version::new(1, 39));
    /// let refused = api.resolve_text("9.99").unwrap_err();
    /// assert_eq!(refused.status(), http::StatusCode::NOT_ACCEPTABLE);
    /// assert_eq!(
    ///     refused.to_string(),
    ///     "Invalid microversion: Unacceptable version header: 9.99"
    /// );
    /// assert_eq!(api.resolve_text("abc").unwrap_err().status(), http::StatusCode::BAD_REQUEST);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Returns a [`VersionRefused`] with the layer's status (400 or 406)
    /// and message, which answers as the layer would
    /// ([`VersionRefused::response_for`]).
    pub fn resolve_text(&self, text: &str) -> Result<Version, VersionRefused> {
        let refused = |refusal| Err(VersionRefused::new(self, refusal));
        let value = format!("{} {}", self.service_type(), text.trim());
        let mut headers = HeaderMap::new();
        match HeaderValue::try_from(value) {
            Ok(value) if !text.trim().is_empty() => {
                headers.insert(microversion::OPENSTACK_API_VERSION, value);
            }
            // Not a header value at all, or nothing: the grammar's error
            // for the text itself.
            _ => {
                return refused(match Version::try_from_bytes(text.as_bytes()) {
                    Err(error) => Refusal::Malformed(error),
                    Ok(version) => Refusal::Unsupported(version),
                });
            }
        }
        match self.negotiate(&headers) {
            NegotiationOutcome::Served(version) => Ok(version),
            NegotiationOutcome::Malformed(error) => refused(Refusal::Malformed(error)),
            NegotiationOutcome::Unsupported(version) => refused(Refusal::Unsupported(version)),
        }
    }

    /// The standard header value naming `version`.
    #[must_use]
    pub fn standard_value(&self, version: Version) -> HeaderValue {
        self.cached(&self.inner.standard_values, version)
            .unwrap_or_else(|| self.inner.codec.encode(version))
    }

    /// The legacy header value naming `version` (the bare `X.Y`).
    #[must_use]
    pub fn legacy_value(&self, version: Version) -> HeaderValue {
        self.cached(&self.inner.legacy_values, version)
            .unwrap_or_else(|| VersionHeader::encode_legacy(version))
    }

    fn cached(&self, values: &[HeaderValue], version: Version) -> Option<HeaderValue> {
        let min = self.inner.range.code().min();
        if version.major() != min.major() || version < min {
            return None;
        }
        let index = usize::try_from(version.minor() - min.minor()).ok()?;
        values.get(index).cloned()
    }

    /// The served minimum and maximum as header values (for range
    /// headers).
    pub(crate) fn range_values(&self) -> (HeaderValue, HeaderValue) {
        let range = self.range();
        (
            self.legacy_value(range.min()),
            self.legacy_value(range.max()),
        )
    }

    /// The `Vary` value naming the headers versions are read from.
    pub(crate) fn vary_value(&self) -> &HeaderValue {
        &self.inner.vary
    }

    /// A weak reference to this build, which dies with its last clone.
    #[cfg(test)]
    pub(crate) fn downgrade(&self) -> std::sync::Weak<impl Sized + use<>> {
        Arc::downgrade(&self.inner)
    }
}

/// Two values are equal when they are the same versioning (clones of
/// one build).
impl PartialEq for Microversions {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for Microversions {}

impl fmt::Debug for Microversions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Microversions")
            .field("service_type", &self.service_type())
            .field("range", &self.range())
            .field("code_range", &self.code_range())
            .field("profile", &self.inner.profile)
            .finish_non_exhaustive()
    }
}

/// Builds [`Microversions`]; errors come out of [`MicroversionsBuilder::build`].
#[derive(Debug)]
#[must_use]
pub struct MicroversionsBuilder {
    service_type: String,
    range: VersionRange,
    profile: Profile,
    rules: Option<Rules>,
    neutral_paths: Vec<String>,
    neutral_prefixes: Vec<String>,
    legacy_root: Option<String>,
    deprecations: Vec<Deprecation>,
    served: Option<VersionRange>,
    #[cfg(feature = "metrics")]
    count_requests: bool,
    #[cfg(feature = "metrics")]
    project_of: Option<crate::telemetry::ProjectOf>,
}

impl MicroversionsBuilder {
    /// How the telemetry finds the project of a request, for the counts
    /// by client, project and version (feature `metrics`): a function
    /// reading what the service's authentication, which runs before the
    /// layer, put in the request's extensions (Keystone's project id).
    /// Without one, every request counts under the project `unknown`.
    ///
    /// ```
    /// use microversion::VersionRange;
    /// use microversion_server::Microversions;
    ///
    /// /// What the service's authentication puts in a request.
    /// #[derive(Clone)]
    /// struct Caller { project_id: Option<String> }
    ///
    /// let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
    ///     .telemetry_project(|extensions| {
    ///         extensions.get::<Caller>()?.project_id.as_deref()
    ///     })
    ///     .build()?;
    /// # Ok::<(), microversion_server::BuildError>(())
    /// ```
    #[cfg(feature = "metrics")]
    pub fn telemetry_project(mut self, project_of: crate::telemetry::ProjectOf) -> Self {
        self.project_of = Some(project_of);
        self
    }

    /// Whether the layer counts every negotiation in the
    /// [`Telemetry`](crate::Telemetry) (default `true`; feature
    /// `metrics`). A service whose metrics are turned off in its
    /// configuration passes `false`, and the layer then does no counting
    /// work at all.
    #[cfg(feature = "metrics")]
    pub fn count_requests(mut self, count: bool) -> Self {
        self.count_requests = count;
        self
    }

    /// Follows this profile (default `api-sig`).
    pub fn profile(mut self, profile: Profile) -> Self {
        self.profile = profile;
        self
    }

    /// Follows these rules instead of the profile's own (start from
    /// [`Profile::rules`] and change what differs).
    pub fn rules(mut self, rules: Rules) -> Self {
        self.rules = Some(rules);
        self
    }

    /// A path that skips negotiation: no version is read, none is echoed.
    /// For a path a [`VersionedRouter`](crate::VersionedRouter) serves,
    /// [`VersionedRouter::neutral`](crate::VersionedRouter::neutral) and
    /// [`MicroversionsBuilder::version_neutral_routes`] write it once.
    pub fn version_neutral(mut self, path: impl Into<String>) -> Self {
        self.neutral_paths.push(path.into());
        self
    }

    /// Every version-neutral route of `router`
    /// ([`VersionedRouter::neutral`](crate::VersionedRouter::neutral))
    /// skips negotiation: the router serves such a path and names it
    /// here, so that it is written once.
    pub fn version_neutral_routes<S>(mut self, router: &crate::VersionedRouter<S>) -> Self
    where
        S: Clone + Send + Sync + 'static,
    {
        self.neutral_paths
            .extend(router.neutral_paths().map(str::to_owned));
        self
    }

    /// Every path under this prefix skips negotiation.
    pub fn version_neutral_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.neutral_prefixes.push(prefix.into());
        self
    }

    /// Serves the code's minimum under `root` too, as Nova serves its
    /// v2.0 API (`/v2`) on its v2.1 code: requests under it are served the
    /// minimum of [`Microversions::code_range`] whatever version they ask
    /// (a malformed one included), the served range does not apply, their
    /// answers carry no version headers and no `Vary` for them, and
    /// [`VersionedJson`](crate::VersionedJson) and
    /// [`StrictQuery`](crate::StrictQuery) ignore the body properties and
    /// query parameters their schema does not know instead of refusing
    /// them. A handler tells such a request by
    /// [`LegacyRequest`](crate::LegacyRequest). The application mounts its
    /// routes under `root` itself (`Router::nest`); list the root in
    /// discovery as an API version without microversions.
    pub fn legacy_root(mut self, root: impl Into<String>) -> Self {
        self.legacy_root = Some(root.into());
        self
    }

    /// Marks versions as deprecated: below a threshold, or chosen ones
    /// (see [`Deprecation`]). Call it once for each set of versions with
    /// dates of their own; the first declared that covers a version
    /// speaks for it.
    pub fn deprecation(mut self, deprecation: Deprecation) -> Self {
        self.deprecations.push(deprecation);
        self
    }

    /// Serves only `served` of the code's range (an operator's raised
    /// minimum or capped maximum); it can change later with
    /// [`Microversions::set_served_range`]. Default: the whole range.
    pub fn served_range(mut self, served: VersionRange) -> Self {
        self.served = Some(served);
        self
    }

    /// Checks the configuration and builds it; the build is freed with
    /// its last clone (see [`Microversions`]).
    ///
    /// # Errors
    ///
    /// Returns [`BuildError`] for an invalid service type, a deprecation
    /// threshold or deprecated versions outside the range, a served
    /// range outside it, or a legacy root that is `/` or does not start
    /// with `/`.
    pub fn build(self) -> Result<Microversions, BuildError> {
        let rules = self.rules.unwrap_or_else(|| self.profile.rules());
        let codec = VersionHeader::try_new(self.service_type)
            .map_err(BuildError::ServiceType)?
            .latest_any_case(rules.latest_any_case);
        let range = self.range;
        for d in &self.deprecations {
            if let Some(below) = d.below()
                && !range.contains(below)
            {
                return Err(BuildError::Deprecation { below, range });
            }
            if let Some(span) = d.span() {
                let end = span.end().unwrap_or(range.max());
                if !range.contains(span.start()) || !range.contains(end) {
                    return Err(BuildError::DeprecatedVersions {
                        versions: span,
                        range,
                    });
                }
            }
        }
        let served = ServedRange::new(range, self.served.unwrap_or(range))
            .map_err(BuildError::ServedRange)?;
        let legacy_root = match self.legacy_root {
            Some(root) => {
                let trimmed = root.trim_end_matches('/');
                if !root.starts_with('/') || trimmed.is_empty() {
                    return Err(BuildError::LegacyRoot(root));
                }
                Some(trimmed.to_owned())
            }
            None => None,
        };
        let (min, max) = (range.min(), range.max());
        let same_major = min.major() == max.major();
        let count = max.minor().saturating_sub(min.minor());
        let versions: Vec<Version> = if same_major && count < MAX_CACHED_VERSIONS {
            (min.minor()..=max.minor())
                .map(|minor| Version::new(min.major(), minor))
                .collect()
        } else {
            Vec::new()
        };
        let standard_values = versions
            .iter()
            .map(|&v| crate::kept::header_value(codec.encode(v)))
            .collect();
        let legacy_values = versions
            .iter()
            .map(|&v| crate::kept::header_value(VersionHeader::encode_legacy(v)))
            .collect();
        let vary = crate::kept::header_value(vary_value(&rules));
        // A valid service type has no white space or comma; were it to
        // have one, the common form would not be read on its own.
        let common_prefix = if codec
            .service_type()
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b == b',')
        {
            Box::default()
        } else {
            format!("{} ", codec.service_type()).into_bytes().into()
        };
        Ok(Microversions {
            inner: Arc::new(Inner {
                range: served,
                profile: self.profile,
                neutral_paths: self.neutral_paths,
                neutral_prefixes: self.neutral_prefixes,
                legacy_root,
                deprecations: self.deprecations,
                standard_values,
                legacy_values,
                vary,
                common_prefix,
                #[cfg(feature = "metrics")]
                telemetry: crate::telemetry::Telemetry::new(codec.service_type()),
                #[cfg(feature = "metrics")]
                count_requests: self.count_requests,
                #[cfg(feature = "metrics")]
                project_of: self.project_of,
                rules,
                codec,
            }),
        })
    }
}

/// `Vary` names every header the version is read from and echoed in.
fn vary_value(rules: &Rules) -> HeaderValue {
    let mut names: Vec<&str> = Vec::new();
    if rules.echo_standard {
        names.push("openstack-api-version");
    }
    if let (Some(legacy), true) = (&rules.legacy_header, rules.echo_legacy) {
        names.push(legacy.as_str());
    }
    if names.is_empty() {
        names.push("openstack-api-version");
    }
    let names: Vec<String> = names
        .into_iter()
        .map(|n| {
            if rules.vary_lowercase {
                n.to_owned()
            } else {
                canonical(n)
            }
        })
        .collect();
    HeaderValue::try_from(names.join(", "))
        .unwrap_or_else(|_| HeaderValue::from_static("OpenStack-API-Version"))
}

/// A header name in its usual spelling: `x-openstack-nova-api-version`
/// becomes `X-OpenStack-Nova-API-Version`.
pub(crate) fn canonical(name: &str) -> String {
    name.split('-')
        .map(|part| match part {
            "openstack" => "OpenStack".to_owned(),
            "api" => "API".to_owned(),
            other => {
                let mut chars = other.chars();
                chars.next().map_or_else(String::new, |c| {
                    c.to_ascii_uppercase().to_string() + chars.as_str()
                })
            }
        })
        .collect::<Vec<_>>()
        .join("-")
}

/// The name of the header that carries the request id.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-openstack-request-id");

#[cfg(test)]
mod tests {
    use super::*;

    fn api(profile: Profile) -> Microversions {
        Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
            .profile(profile)
            .build()
            .unwrap()
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(*k, HeaderValue::from_static(v));
        }
        map
    }

    #[test]
    fn negotiates_min_latest_and_errors() {
        let api = api(Profile::ApiSig);
        assert_eq!(
            api.negotiate(&HeaderMap::new()),
            NegotiationOutcome::Served(Version::new(1, 0))
        );
        let h = headers(&[("openstack-api-version", "placement latest")]);
        assert_eq!(
            api.negotiate(&h),
            NegotiationOutcome::Served(Version::new(1, 39))
        );
        let h = headers(&[("openstack-api-version", "placement 1.999")]);
        assert_eq!(
            api.negotiate(&h),
            NegotiationOutcome::Unsupported(Version::new(1, 999))
        );
        let h = headers(&[("openstack-api-version", "placement 0.5")]);
        assert!(matches!(
            api.negotiate(&h),
            NegotiationOutcome::Malformed(_)
        ));
        let api = self::api(Profile::Placement);
        assert_eq!(
            api.negotiate(&h),
            NegotiationOutcome::Unsupported(Version::new(0, 5))
        );
    }

    /// The common form is read as the general decoder reads it, and
    /// everything near it is left to the general decoder.
    #[test]
    fn common_form_reads_as_the_general_decoder() {
        let prefixes = [
            "placement ",
            "PLACEMENT ",
            "Placement ",
            "placement  ",
            "placement\t",
            " placement ",
            "placements ",
            "placemen ",
            "compute ",
            "",
        ];
        let tokens = [
            "1.20",
            "1.0",
            "1.39",
            "1.40",
            "1.999",
            "2.0",
            "0.5",
            "0.0",
            "01.2",
            "1.02",
            "1.",
            ".1",
            "1",
            "1..2",
            "1.2.3",
            "latest",
            "LATEST",
            "1.2,",
            "1.2 ",
            "1.a",
            "",
            "4294967296.1",
            "1.4294967296",
            "99999999999999999999.1",
            "999999999.999999999",
            "1000000000.1",
            "1.1000000000",
            "1.00",
            "10.10",
            "1.+2",
            "+1.2",
            "1.2a",
            "1.-0",
        ];
        let suffixes = ["", ",", ", compute 2.1", " , placement 1.5", ", placement"];
        let mut values = Vec::new();
        for prefix in prefixes {
            for token in tokens {
                for suffix in suffixes {
                    values.push(format!("{prefix}{token}{suffix}"));
                }
            }
        }
        let nova = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
            .profile(Profile::Nova)
            .build()
            .unwrap();
        for api in [api(Profile::ApiSig), api(Profile::Placement), nova] {
            for value in &values {
                let Ok(value) = HeaderValue::try_from(value.as_str()) else {
                    continue;
                };
                let mut one = HeaderMap::new();
                one.insert(OPENSTACK_API_VERSION, value.clone());
                let mut with_legacy = one.clone();
                with_legacy.insert(
                    "x-openstack-nova-api-version",
                    HeaderValue::from_static("1.7"),
                );
                let mut repeated = one.clone();
                repeated.append(
                    OPENSTACK_API_VERSION,
                    HeaderValue::from_static("placement 1.3"),
                );
                let mut repeated_first = HeaderMap::new();
                repeated_first.append(
                    OPENSTACK_API_VERSION,
                    HeaderValue::from_static("placement 1.3"),
                );
                repeated_first.append(OPENSTACK_API_VERSION, value.clone());
                for headers in [one, with_legacy, repeated, repeated_first] {
                    let general =
                        api.negotiate_general(headers.get_all(OPENSTACK_API_VERSION), &headers);
                    assert_eq!(api.negotiate(&headers), general, "{headers:?}");
                    // As the layer reads the headers.
                    let found = crate::layer::RequestHeaders::read(&headers).lone_version;
                    assert_eq!(api.negotiate_found(found, &headers).0, general);
                }
            }
        }
        // The common form is taken where it applies.
        let api = api(Profile::Placement);
        let h = headers(&[("openstack-api-version", "placement 1.20")]);
        assert_eq!(
            api.common_form(&HeaderValue::from_static("placement 1.20")),
            Some(Version::new(1, 20))
        );
        assert_eq!(
            api.negotiate(&h),
            NegotiationOutcome::Served(Version::new(1, 20))
        );
    }

    #[test]
    fn resolve_names_the_range_it_refuses() {
        let api = api(Profile::ApiSig);
        assert_eq!(
            api.resolve(RequestedVersion::Latest),
            Ok(Version::new(1, 39))
        );
        let err = api
            .resolve(RequestedVersion::Exact(Version::new(1, 40)))
            .unwrap_err();
        assert_eq!(err.requested(), Version::new(1, 40));
        assert_eq!(err.supported(), api.range());
    }

    #[test]
    fn header_values_are_prepared() {
        let api = api(Profile::ApiSig);
        assert_eq!(api.standard_value(Version::new(1, 20)), "placement 1.20");
        assert_eq!(api.standard_value(Version::new(2, 0)), "placement 2.0");
        assert_eq!(api.legacy_value(Version::new(1, 39)), "1.39");
    }

    /// Every build is freed with its last clone: a process that builds
    /// the versioning many times keeps none of the builds it dropped.
    #[test]
    fn a_build_is_freed_with_its_last_clone() {
        let mut builds = Vec::new();
        for _ in 0..1000 {
            let api = api(Profile::Placement);
            let clone = api.clone();
            assert_eq!(Arc::strong_count(&api.inner), 2);
            builds.push(Arc::downgrade(&api.inner));
            drop((api, clone));
        }
        assert!(builds.iter().all(|weak| weak.upgrade().is_none()));
        // Two builds are two versionings, a clone the same one.
        let (one, two) = (api(Profile::Placement), api(Profile::Placement));
        assert_ne!(one, two);
        assert_eq!(one, one.clone());
    }

    #[test]
    fn bad_configuration_fails_to_build() {
        let err = Microversions::builder("bad type", VersionRange::from_static("1.0", "1.2"))
            .build()
            .unwrap_err();
        assert!(err.to_string().starts_with("invalid service type"), "{err}");
    }

    #[test]
    fn neutral_paths() {
        let api = Microversions::builder("compute", VersionRange::from_static("2.1", "2.90"))
            .profile(Profile::Nova)
            .version_neutral("/healthcheck")
            .version_neutral_prefix("/static/")
            .build()
            .unwrap();
        assert!(api.is_version_neutral("/"));
        assert!(api.is_version_neutral("/healthcheck"));
        assert!(api.is_version_neutral("/static/a.css"));
        assert!(!api.is_version_neutral("/servers"));
        assert!(!self::api(Profile::Placement).is_version_neutral("/"));
    }
}
