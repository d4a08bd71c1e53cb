//! Extractors: the served version and the request id.

use std::ops::Deref;

use axum::extract::FromRequestParts;
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::{HeaderValue, StatusCode};
use microversion::Version;

/// The version that serves this request, as negotiated by the layer.
///
/// It dereferences to [`Version`] and converts into one, so a handler can
/// branch with [`VersionSpan::contains`](microversion::VersionSpan::contains):
///
/// ```
/// use microversion::VersionSpan;
/// use microversion_server::ServedVersion;
///
/// const PARENT: VersionSpan = VersionSpan::from_static("1.14 - latest");
///
/// async fn show(version: ServedVersion) -> String {
///     if PARENT.contains(version) {
///         "with parent_provider_uuid".to_owned()
///     } else {
///         "without".to_owned()
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServedVersion(pub Version);

impl ServedVersion {
    /// The served version of a request that went through the layer; `None`
    /// on a version-neutral path or without the layer.
    #[must_use]
    pub fn from_extensions(extensions: &http::Extensions) -> Option<Self> {
        extensions
            .get::<Negotiated>()
            .and_then(|n| n.served)
            .map(ServedVersion)
    }
}

/// What the layer settled for a request, kept as one request extension.
///
/// One rather than a [`ServedVersion`] and a [`RequestId`] apart: each
/// extension is boxed on its own and hashed into the request's map, on
/// every request. Read through [`ServedVersion::from_extensions`] and
/// [`RequestId::from_extensions`].
#[derive(Clone, Debug)]
pub(crate) struct Negotiated {
    pub(crate) request_id: RequestId,
    /// `None` on a version-neutral path.
    pub(crate) served: Option<Version>,
    /// Under the legacy root.
    pub(crate) legacy: bool,
}

/// Whether the request came in under the legacy root
/// ([`MicroversionsBuilder::legacy_root`](crate::MicroversionsBuilder::legacy_root)):
/// served the code's minimum, with relaxed validation. A handler that
/// checks more of a request itself (a header, a parameter's form) relaxes
/// those checks as [`VersionedJson`](crate::VersionedJson) does.
///
/// ```
/// use microversion_server::LegacyRequest;
///
/// async fn list(LegacyRequest(legacy): LegacyRequest) -> &'static str {
///     if legacy { "served as v2.0" } else { "served as v2.1" }
/// }
/// ```
///
/// Never refused: without the layer, or on a version-neutral path, it
/// holds `false`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LegacyRequest(pub bool);

impl LegacyRequest {
    /// Whether the request these extensions belong to came in under the
    /// legacy root.
    #[must_use]
    pub fn from_extensions(extensions: &http::Extensions) -> bool {
        extensions.get::<Negotiated>().is_some_and(|n| n.legacy)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for LegacyRequest {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(LegacyRequest(LegacyRequest::from_extensions(
            &parts.extensions,
        )))
    }
}

impl Deref for ServedVersion {
    type Target = Version;

    fn deref(&self) -> &Version {
        &self.0
    }
}

impl From<ServedVersion> for Version {
    fn from(served: ServedVersion) -> Self {
        served.0
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ServedVersion {
    type Rejection = MissingLayer;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        ServedVersion::from_extensions(&parts.extensions).ok_or(MissingLayer("ServedVersion"))
    }
}

/// The id of this request, also sent in `x-openstack-request-id`.
///
/// The layer makes a new one for each request, unless a layer outside it
/// (a request log that writes the id before the request goes on) put one
/// in the request's extensions: then that one is used.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RequestId(pub(crate) HeaderValue);

impl RequestId {
    /// A new id: `req-` and a random UUID.
    #[must_use]
    pub fn generate() -> Self {
        // Formatted on the stack, then owned by shared bytes: one
        // allocation, and the clones for the request's extensions and the
        // response count references instead of copying. (Cutting ids from
        // a per-thread buffer of many saved nothing: docs/decisions.md.)
        let mut buf = [0u8; 40];
        buf[..4].copy_from_slice(b"req-");
        uuid::Uuid::new_v4()
            .hyphenated()
            .encode_lower(&mut buf[4..]);
        RequestId(
            HeaderValue::from_maybe_shared(bytes::Bytes::from_owner(buf))
                .unwrap_or(HeaderValue::from_static("req-unknown")),
        )
    }

    /// The id of a request that went through the layer.
    #[must_use]
    pub fn from_extensions(extensions: &http::Extensions) -> Option<Self> {
        extensions.get::<Negotiated>().map(|n| n.request_id.clone())
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        self.0.to_str().unwrap_or_default()
    }

    /// The id as a header value.
    #[must_use]
    pub fn header_value(&self) -> &HeaderValue {
        &self.0
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RequestId {
    type Rejection = MissingLayer;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        RequestId::from_extensions(&parts.extensions).ok_or(MissingLayer("RequestId"))
    }
}

/// An extractor was used on a route the microversion layer does not wrap:
/// a programming error, answered with 500.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MissingLayer(&'static str);

impl MissingLayer {
    pub(crate) const fn new(what: &'static str) -> Self {
        MissingLayer(what)
    }
}

impl std::fmt::Display for MissingLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is only available behind MicroversionLayer (or on a version-neutral path)",
            self.0
        )
    }
}

impl std::error::Error for MissingLayer {}

impl IntoResponse for MissingLayer {
    fn into_response(self) -> Response {
        (StatusCode::INTERNAL_SERVER_ERROR, self.to_string()).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_look_like_openstack_ones() {
        let id = RequestId::generate();
        assert!(id.as_str().starts_with("req-"));
        assert_eq!(id.as_str().len(), 40);
        assert_ne!(id, RequestId::generate());
    }
}
