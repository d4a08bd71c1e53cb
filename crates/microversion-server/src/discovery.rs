//! Discovery: the versions document at `GET /` (docs/wire.md 12) and the
//! versioned roots such as `/v2.1/` (docs/wire.md 13).
//!
//! ```
//! use microversion::{VersionRange, VersionStatus};
//! use microversion_server::discovery::{ApiVersionSpec, Discovery};
//!
//! // Cinder-like: a v2.0 without microversions beside the microversioned v3.
//! let discovery = Discovery::builder()
//!     .public_url("https://volume.example.org")
//!     .version(ApiVersionSpec::new("v2.0", "/v2/", VersionStatus::Supported))
//!     .version(
//!         ApiVersionSpec::new("v3.0", "/v3/", VersionStatus::Current)
//!             .microversions(VersionRange::from_static("3.0", "3.70"))
//!             .media_type("application/json", "application/vnd.openstack.volume+json;version=3"),
//!     )
//!     .build()?;
//! let doc = discovery.document(None);
//! assert_eq!(doc.versions[1].self_link(), Some("https://volume.example.org/v3/"));
//! let router: axum::Router = discovery.router();
//! # Ok::<(), microversion_server::BuildError>(())
//! ```
//!
//! These routes must be reachable without credentials: a service with an
//! authentication middleware skips [`Discovery::paths`].

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::Request;
use axum::routing::get;
use http::HeaderMap;
use http::header::HOST;
use microversion::document::{ApiVersion, Link, MediaType, VersionDocument};
use microversion::{Version, VersionRange, VersionStatus, VersionsDocument};

use crate::config::Microversions;
use crate::error::BuildError;

/// One API version (a major) as discovery lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct ApiVersionSpec {
    id: String,
    path: String,
    status: VersionStatus,
    microversions: Option<VersionRange>,
    /// The versioning whose served range is listed, read when the
    /// document is made (an operator may narrow it while serving).
    served_by: Option<Microversions>,
    updated: Option<String>,
    media_types: Vec<MediaType>,
    literal_self_href: Option<String>,
}

impl ApiVersionSpec {
    /// An API version `id` (such as `v2.1`) whose root is `path` (such as
    /// `/v2.1/`, or `/` when the API has no versioned root).
    pub fn new(id: impl Into<String>, path: impl Into<String>, status: VersionStatus) -> Self {
        ApiVersionSpec {
            id: id.into(),
            path: path.into(),
            status,
            microversions: None,
            served_by: None,
            updated: None,
            media_types: Vec::new(),
            literal_self_href: None,
        }
    }

    /// Its microversion range (without one, it has no microversions and
    /// the document shows empty `min_version` and `version`).
    pub fn microversions(mut self, range: VersionRange) -> Self {
        self.microversions = Some(range);
        self
    }

    /// Its microversion range is the one `api` serves, as it is when each
    /// document is made: a range an operator narrows while the service
    /// runs ([`Microversions::set_served_range`]) is listed from then on.
    pub fn served_by(mut self, api: &Microversions) -> Self {
        self.microversions = Some(api.range());
        self.served_by = Some(api.clone());
        self
    }

    /// When it last changed (ISO 8601).
    pub fn updated(mut self, updated: impl Into<String>) -> Self {
        self.updated = Some(updated.into());
        self
    }

    /// A media type shown at its versioned root.
    pub fn media_type(mut self, base: impl Into<String>, media_type: impl Into<String>) -> Self {
        self.media_types.push(MediaType::new(base, media_type));
        self
    }

    /// Use `href` as the `self` link exactly as given, instead of an
    /// absolute URL (upstream Placement sends `""`).
    pub fn literal_self_href(mut self, href: impl Into<String>) -> Self {
        self.literal_self_href = Some(href.into());
        self
    }
}

/// The discovery documents of an API, and the routes serving them.
///
/// Cheap to clone (an `Arc`).
#[derive(Clone, Debug)]
pub struct Discovery {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    public_url: Option<String>,
    versions: Vec<ApiVersionSpec>,
    deprecated_below: Option<Version>,
}

impl Discovery {
    /// Starts a builder.
    pub fn builder() -> DiscoveryBuilder {
        DiscoveryBuilder {
            public_url: None,
            versions: Vec::new(),
            deprecated_below: None,
        }
    }

    /// The usual case: one API version `id`, CURRENT, at `/`, with the
    /// range (and deprecation) of `api`.
    ///
    /// # Errors
    ///
    /// As [`DiscoveryBuilder::build`].
    pub fn single(api: &Microversions, id: &str) -> Result<Discovery, BuildError> {
        let mut builder = Discovery::builder()
            .version(ApiVersionSpec::new(id, "/", VersionStatus::Current).served_by(api));
        // A whole API version is deprecated by a threshold above it.
        builder.deprecated_below = api
            .deprecations()
            .iter()
            .filter_map(crate::Deprecation::below)
            .max();
        builder.build()
    }

    /// The paths these routes serve (for an authentication middleware to
    /// skip).
    #[must_use]
    pub fn paths(&self) -> Vec<String> {
        let mut paths = vec!["/".to_owned()];
        for v in &self.inner.versions {
            if v.path != "/" {
                paths.push(v.path.clone());
                paths.push(v.path.trim_end_matches('/').to_owned());
            }
        }
        paths
    }

    /// The versions document; links are absolute from the configured public
    /// URL, else from `request_base` (`http://host:port`), else relative.
    #[must_use]
    pub fn document(&self, request_base: Option<&str>) -> VersionsDocument {
        VersionsDocument::new(
            self.inner
                .versions
                .iter()
                .map(|spec| self.entry(spec, request_base, false))
                .collect(),
        )
    }

    /// The document of one versioned root, `{"version": {...}}`.
    #[must_use]
    pub fn root_document(&self, id: &str, request_base: Option<&str>) -> Option<VersionDocument> {
        self.inner
            .versions
            .iter()
            .find(|v| v.id == id)
            .map(|spec| VersionDocument::new(self.entry(spec, request_base, true)))
    }

    fn entry(&self, spec: &ApiVersionSpec, request_base: Option<&str>, root: bool) -> ApiVersion {
        let href = spec.literal_self_href.clone().unwrap_or_else(|| {
            let base = self
                .inner
                .public_url
                .as_deref()
                .or(request_base)
                .unwrap_or_default()
                .trim_end_matches('/');
            format!("{base}{}", spec.path)
        });
        let microversions = spec
            .served_by
            .as_ref()
            .map(Microversions::range)
            .or(spec.microversions);
        let status = match (self.inner.deprecated_below, microversions) {
            // A whole API version below the threshold is deprecated.
            (Some(below), Some(range)) if range.max() < below => VersionStatus::Deprecated,
            _ => spec.status.clone(),
        };
        let mut entry = ApiVersion::new(spec.id.clone(), status).with_link(Link::new("self", href));
        if let Some(range) = microversions {
            entry = entry.with_microversions(range);
        }
        if let Some(updated) = &spec.updated {
            entry = entry.with_updated(updated.clone());
        }
        if root {
            for m in &spec.media_types {
                entry = entry.with_media_type(m.clone());
            }
        }
        entry
    }

    /// The routes: `GET /` and `GET` on each versioned root (with and
    /// without the trailing slash). Merge them into the application's
    /// router, inside the microversion layer.
    pub fn router<S>(&self) -> Router<S>
    where
        S: Clone + Send + Sync + 'static,
    {
        let this = self.clone();
        let mut router = Router::new().route(
            "/",
            get(move |req: Request| {
                let this = this.clone();
                async move { Json(this.document(request_base(req.headers()).as_deref())) }
            }),
        );
        for spec in &self.inner.versions {
            if spec.path == "/" {
                continue;
            }
            let this = self.clone();
            let id = spec.id.clone();
            let handler = get(move |req: Request| {
                let this = this.clone();
                let id = id.clone();
                async move { Json(this.root_document(&id, request_base(req.headers()).as_deref())) }
            });
            let trimmed = spec.path.trim_end_matches('/');
            router = router.route(&spec.path, handler.clone());
            if !trimmed.is_empty() && trimmed != spec.path {
                router = router.route(trimmed, handler);
            }
        }
        router
    }
}

/// `http://host` from the request's `Host`, honouring
/// `X-Forwarded-Proto` from a proxy.
fn request_base(headers: &HeaderMap) -> Option<String> {
    let host = headers.get(HOST)?.to_str().ok()?;
    let scheme = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .filter(|s| *s == "https" || *s == "http")
        .unwrap_or("http");
    Some(format!("{scheme}://{host}"))
}

/// Builds [`Discovery`].
#[derive(Debug)]
#[must_use]
pub struct DiscoveryBuilder {
    public_url: Option<String>,
    versions: Vec<ApiVersionSpec>,
    deprecated_below: Option<Version>,
}

impl DiscoveryBuilder {
    /// The public URL links start with (such as
    /// `https://placement.example.org`); without it, links are built from
    /// each request's `Host`.
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        self.public_url = Some(url.into());
        self
    }

    /// Adds an API version.
    pub fn version(mut self, spec: ApiVersionSpec) -> Self {
        self.versions.push(spec);
        self
    }

    /// API versions whose whole range is below `below` are listed as
    /// DEPRECATED.
    pub fn deprecated_below(mut self, below: Version) -> Self {
        self.deprecated_below = Some(below);
        self
    }

    /// Checks and builds.
    ///
    /// # Errors
    ///
    /// Returns [`BuildError::CurrentVersions`] unless there is exactly one
    /// CURRENT version, [`BuildError::SharedRoot`] unless ids and paths are
    /// unique, and [`BuildError::RootPath`] unless each path starts and
    /// ends with `/`.
    pub fn build(self) -> Result<Discovery, BuildError> {
        let current = self
            .versions
            .iter()
            .filter(|v| v.status == VersionStatus::Current)
            .count();
        if current != 1 {
            return Err(BuildError::CurrentVersions { found: current });
        }
        for (i, v) in self.versions.iter().enumerate() {
            if !v.path.starts_with('/') || !v.path.ends_with('/') {
                return Err(BuildError::RootPath {
                    id: v.id.clone(),
                    path: v.path.clone(),
                });
            }
            if let Some(other) = self.versions[..i]
                .iter()
                .find(|o| o.id == v.id || o.path == v.path)
            {
                return Err(BuildError::SharedRoot {
                    first: other.id.clone(),
                    second: v.id.clone(),
                });
            }
        }
        Ok(Discovery {
            inner: Arc::new(Inner {
                public_url: self.public_url,
                versions: self.versions,
                deprecated_below: self.deprecated_below,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_current() {
        let err = Discovery::builder()
            .version(ApiVersionSpec::new("v1", "/", VersionStatus::Supported))
            .build()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "discovery needs exactly one CURRENT API version, found 0"
        );
        assert!(matches!(err, BuildError::CurrentVersions { found: 0 }));
        let err = Discovery::builder()
            .version(ApiVersionSpec::new("v1", "/v1/", VersionStatus::Current))
            .version(ApiVersionSpec::new("v1", "/v2/", VersionStatus::Supported))
            .build()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "API versions v1 and v1 share an id or a root path"
        );
        assert!(matches!(err, BuildError::SharedRoot { .. }));
        let err = Discovery::builder()
            .version(ApiVersionSpec::new("v1", "v1", VersionStatus::Current))
            .build()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the root path \"v1\" of v1 must start and end with '/'"
        );
        assert!(matches!(err, BuildError::RootPath { .. }));
    }

    #[test]
    fn links_from_public_url_or_request() {
        let d = Discovery::builder()
            .version(
                ApiVersionSpec::new("v2.1", "/v2.1/", VersionStatus::Current)
                    .microversions(VersionRange::from_static("2.1", "2.90")),
            )
            .build()
            .unwrap();
        let doc = d.document(Some("http://10.0.0.1:8774"));
        assert_eq!(
            doc.versions[0].self_link(),
            Some("http://10.0.0.1:8774/v2.1/")
        );
        assert_eq!(d.document(None).versions[0].self_link(), Some("/v2.1/"));
        assert_eq!(d.paths(), ["/", "/v2.1/", "/v2.1"]);
    }

    #[test]
    fn deprecated_api_versions() {
        let d = Discovery::builder()
            .version(
                ApiVersionSpec::new("v1", "/v1/", VersionStatus::Supported)
                    .microversions(VersionRange::from_static("1.0", "1.9")),
            )
            .version(
                ApiVersionSpec::new("v2", "/v2/", VersionStatus::Current)
                    .microversions(VersionRange::from_static("2.0", "2.9")),
            )
            .deprecated_below(Version::new(2, 0))
            .build()
            .unwrap();
        let doc = d.document(None);
        assert_eq!(doc.versions[0].status, VersionStatus::Deprecated);
        assert_eq!(doc.versions[1].status, VersionStatus::Current);
    }
}
