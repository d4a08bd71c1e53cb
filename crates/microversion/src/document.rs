//! The versions document a server returns at `GET /` (and `{"version": ..}`
//! at a versioned root), and the API-SIG error body.
//!
//! Serialization and parsing are in the crate's `serde` feature; these are
//! the plain data types.

use std::fmt;
use std::str::FromStr;

use http::StatusCode;

use crate::{Version, VersionRange};

/// The status of one API version in the versions document.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum VersionStatus {
    /// The version new clients should use; exactly one entry has it.
    Current,
    /// Still supported, not the newest.
    Supported,
    /// Still served, scheduled for removal.
    Deprecated,
    /// Not yet stable.
    Experimental,
    /// A status this crate does not know, kept as sent (upper case).
    Other(String),
}

impl VersionStatus {
    /// The status as it appears in the document: `CURRENT`, ...
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            VersionStatus::Current => "CURRENT",
            VersionStatus::Supported => "SUPPORTED",
            VersionStatus::Deprecated => "DEPRECATED",
            VersionStatus::Experimental => "EXPERIMENTAL",
            VersionStatus::Other(s) => s,
        }
    }
}

impl FromStr for VersionStatus {
    type Err = std::convert::Infallible;

    /// Case-insensitive; unknown words become [`VersionStatus::Other`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.to_ascii_uppercase().as_str() {
            "CURRENT" => VersionStatus::Current,
            "SUPPORTED" => VersionStatus::Supported,
            "DEPRECATED" => VersionStatus::Deprecated,
            "EXPERIMENTAL" => VersionStatus::Experimental,
            other => VersionStatus::Other(other.to_owned()),
        })
    }
}

impl fmt::Display for VersionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A link in a version entry (`{"rel": "self", "href": ...}`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Link {
    /// The relation: `self`, `describedby`, ...
    pub rel: String,
    /// The target URL.
    pub href: String,
    /// The media type of the target, if given.
    pub media_type: Option<String>,
}

impl Link {
    /// A link with a relation and a target.
    #[must_use]
    pub fn new(rel: impl Into<String>, href: impl Into<String>) -> Self {
        Link {
            rel: rel.into(),
            href: href.into(),
            media_type: None,
        }
    }
}

/// A media type entry of a versioned root (`{"base": .., "type": ..}`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct MediaType {
    /// The base type, such as `application/json`.
    pub base: String,
    /// The vendor type, such as `application/vnd.openstack.compute+json;version=2.1`.
    pub media_type: String,
}

impl MediaType {
    /// A media type entry.
    #[must_use]
    pub fn new(base: impl Into<String>, media_type: impl Into<String>) -> Self {
        MediaType {
            base: base.into(),
            media_type: media_type.into(),
        }
    }
}

/// One API version (a major, such as `v2.1` or `v1.0`) in the versions
/// document.
///
/// `min_version` and `max_version` are `None` for an API version without
/// microversions; on the wire they are empty strings.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ApiVersion {
    /// The identifier, such as `v1.0`.
    pub id: String,
    /// Its status.
    pub status: VersionStatus,
    /// The lowest microversion, if it has microversions.
    pub min_version: Option<Version>,
    /// The highest microversion, if it has microversions (read from
    /// `max_version`, else `version`).
    pub max_version: Option<Version>,
    /// When it last changed (ISO 8601), if given.
    pub updated: Option<String>,
    /// Its links; the `self` link points at its root.
    pub links: Vec<Link>,
    /// Media types, given at a versioned root.
    pub media_types: Vec<MediaType>,
}

impl ApiVersion {
    /// An entry with no microversions, no links and no date.
    #[must_use]
    pub fn new(id: impl Into<String>, status: VersionStatus) -> Self {
        ApiVersion {
            id: id.into(),
            status,
            min_version: None,
            max_version: None,
            updated: None,
            links: Vec::new(),
            media_types: Vec::new(),
        }
    }

    /// Sets the microversion range.
    #[must_use]
    pub fn with_microversions(mut self, range: VersionRange) -> Self {
        self.min_version = Some(range.min());
        self.max_version = Some(range.max());
        self
    }

    /// Sets the date it last changed.
    #[must_use]
    pub fn with_updated(mut self, updated: impl Into<String>) -> Self {
        self.updated = Some(updated.into());
        self
    }

    /// Adds a link.
    #[must_use]
    pub fn with_link(mut self, link: Link) -> Self {
        self.links.push(link);
        self
    }

    /// Adds a media type.
    #[must_use]
    pub fn with_media_type(mut self, media_type: MediaType) -> Self {
        self.media_types.push(media_type);
        self
    }

    /// The microversion range, or `None` without microversions.
    ///
    /// A document that gives only a maximum is read as supporting every
    /// microversion of that major up to it.
    #[must_use]
    pub fn microversions(&self) -> Option<VersionRange> {
        let max = self.max_version?;
        let min = self.min_version.unwrap_or(Version::new(max.major(), 0));
        VersionRange::new(min, max).ok()
    }

    /// The major version of this entry: the major of its microversions, or
    /// else the number its `id` names (`v2.0`, `v1`, `v3.14` give 2, 1, 3).
    ///
    /// This is the `X` of `X.0` for an API version without microversions.
    ///
    /// ```
    /// use microversion::{ApiVersion, VersionStatus};
    ///
    /// assert_eq!(ApiVersion::new("v2.0", VersionStatus::Deprecated).major(), Some(2));
    /// assert_eq!(ApiVersion::new("v1", VersionStatus::Current).major(), Some(1));
    /// assert_eq!(ApiVersion::new("beta", VersionStatus::Current).major(), None);
    /// ```
    #[must_use]
    pub fn major(&self) -> Option<u32> {
        if let Some(v) = self.max_version.or(self.min_version) {
            return Some(v.major());
        }
        let id = self.id.strip_prefix(['v', 'V']).unwrap_or(&self.id);
        let digits = id.split('.').next().unwrap_or_default();
        crate::version::parse_major(digits.as_bytes()).ok()
    }

    /// The `href` of the `self` link, if any.
    #[must_use]
    pub fn self_link(&self) -> Option<&str> {
        self.links
            .iter()
            .find(|l| l.rel == "self")
            .map(|l| l.href.as_str())
    }
}

/// The versions document of `GET /`: `{"versions": [...]}`.
///
/// Parsing (feature `serde`) accepts the four shapes servers send:
/// `{"versions": {"values": [..]}}`, `{"versions": [..]}`,
/// `{"version": {..}}` and a bare `{"id": ..}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct VersionsDocument {
    /// The API versions, in document order.
    pub versions: Vec<ApiVersion>,
}

impl VersionsDocument {
    /// A document with these entries.
    #[must_use]
    pub fn new(versions: Vec<ApiVersion>) -> Self {
        VersionsDocument { versions }
    }

    /// The entry marked CURRENT, else the one with the highest
    /// microversion, else the last one.
    #[must_use]
    pub fn current(&self) -> Option<&ApiVersion> {
        self.versions
            .iter()
            .find(|v| v.status == VersionStatus::Current)
            .or_else(|| {
                self.versions
                    .iter()
                    .filter(|v| v.max_version.is_some())
                    .max_by_key(|v| v.max_version)
            })
            .or_else(|| self.versions.last())
    }
}

/// The document of a versioned root such as `/v2.1/`:
/// `{"version": {...}}`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct VersionDocument {
    /// The one API version.
    pub version: ApiVersion,
}

impl VersionDocument {
    /// A document for one API version.
    #[must_use]
    pub fn new(version: ApiVersion) -> Self {
        VersionDocument { version }
    }
}

/// The API-SIG error body: `{"errors": [...]}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ErrorBody {
    /// The errors, most important first.
    pub errors: Vec<ErrorEntry>,
}

impl ErrorBody {
    /// A body with one error.
    #[must_use]
    pub fn single(entry: ErrorEntry) -> Self {
        ErrorBody {
            errors: vec![entry],
        }
    }
}

/// One error of an [`ErrorBody`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ErrorEntry {
    /// The HTTP status code.
    pub status: u16,
    /// The status' reason phrase, such as `Not Acceptable`.
    pub title: String,
    /// What went wrong and what is accepted, for a person.
    pub detail: String,
    /// A stable machine-readable code, such as `placement.undefined_code`.
    pub code: Option<String>,
    /// The request id of the failed request.
    pub request_id: Option<String>,
    /// The lowest supported microversion (on version errors).
    pub min_version: Option<Version>,
    /// The highest supported microversion (on version errors).
    pub max_version: Option<Version>,
}

impl ErrorEntry {
    /// An error for `status`, titled with its reason phrase.
    #[must_use]
    pub fn new(status: StatusCode, detail: impl Into<String>) -> Self {
        ErrorEntry {
            status: status.as_u16(),
            title: status.canonical_reason().unwrap_or("Error").to_owned(),
            detail: detail.into(),
            code: None,
            request_id: None,
            min_version: None,
            max_version: None,
        }
    }

    /// Sets the machine-readable code.
    #[must_use]
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// Sets the request id.
    #[must_use]
    pub fn with_request_id(mut self, request_id: impl Into<String>) -> Self {
        self.request_id = Some(request_id.into());
        self
    }

    /// Sets the supported range (for 406 answers).
    #[must_use]
    pub fn with_range(mut self, range: VersionRange) -> Self {
        self.min_version = Some(range.min());
        self.max_version = Some(range.max());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microversions_of_an_entry() {
        let v = ApiVersion::new("v1.0", VersionStatus::Current)
            .with_microversions(VersionRange::from_static("1.0", "1.39"));
        assert_eq!(
            v.microversions(),
            Some(VersionRange::from_static("1.0", "1.39"))
        );
        let mut only_max = ApiVersion::new("v2.1", VersionStatus::Current);
        only_max.max_version = Some(Version::new(2, 5));
        assert_eq!(
            only_max.microversions(),
            Some(VersionRange::from_static("2.0", "2.5"))
        );
        assert_eq!(
            ApiVersion::new("v2.0", VersionStatus::Supported).microversions(),
            None
        );
    }

    #[test]
    fn major_from_range_or_id() {
        let v = ApiVersion::new("v1.0", VersionStatus::Current)
            .with_microversions(VersionRange::from_static("2.1", "2.90"));
        assert_eq!(v.major(), Some(2));
        for (id, want) in [
            ("v2.0", Some(2)),
            ("v2.1", Some(2)),
            ("V3", Some(3)),
            ("v12.5", Some(12)),
            ("3.0", Some(3)),
            ("v", None),
            ("", None),
            ("v0", None),
            ("v02", None),
            ("vx.1", None),
            ("v99999999999", None),
        ] {
            assert_eq!(
                ApiVersion::new(id, VersionStatus::Current).major(),
                want,
                "{id:?}"
            );
        }
    }

    #[test]
    fn current_prefers_status_then_newest() {
        let old = ApiVersion::new("v2.0", VersionStatus::Supported);
        let new = ApiVersion::new("v2.1", VersionStatus::Supported)
            .with_microversions(VersionRange::from_static("2.1", "2.90"));
        let doc = VersionsDocument::new(vec![new.clone(), old.clone()]);
        assert_eq!(doc.current().map(|v| v.id.as_str()), Some("v2.1"));
        let cur = ApiVersion::new("v3", VersionStatus::Current);
        let doc = VersionsDocument::new(vec![old, cur, new]);
        assert_eq!(doc.current().map(|v| v.id.as_str()), Some("v3"));
        assert_eq!(VersionsDocument::default().current(), None);
    }

    #[test]
    fn status_words() {
        assert_eq!("current".parse(), Ok(VersionStatus::Current));
        assert_eq!("DEPRECATED".parse(), Ok(VersionStatus::Deprecated));
        assert_eq!(
            "stable".parse::<VersionStatus>().map(|s| s.to_string()),
            Ok("STABLE".to_owned())
        );
    }

    #[test]
    fn error_entry_titles_from_status() {
        let e = ErrorEntry::new(StatusCode::NOT_ACCEPTABLE, "no")
            .with_range(VersionRange::from_static("1.0", "1.39"));
        assert_eq!(e.title, "Not Acceptable");
        assert_eq!(e.status, 406);
        assert_eq!(e.max_version, Some(Version::new(1, 39)));
    }
}
