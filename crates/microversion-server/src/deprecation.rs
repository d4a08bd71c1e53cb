//! Deprecating old microversions: `Deprecation` (RFC 9745) and `Sunset`
//! (RFC 8594) headers on responses served at them.

use std::time::{SystemTime, UNIX_EPOCH};

use http::{HeaderMap, HeaderName, HeaderValue};
use microversion::Version;

/// The `Deprecation` response header (RFC 9745).
pub const DEPRECATION: HeaderName = HeaderName::from_static("deprecation");
/// The `Sunset` response header (RFC 8594).
pub const SUNSET: HeaderName = HeaderName::from_static("sunset");

/// VersionSpan below a threshold are deprecated: responses served at them
/// carry `Deprecation` and, when a removal date is set, `Sunset`; a `Link`
/// to the deprecation notice when one is set. Discovery and the version
/// history mark them as deprecated.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use microversion::Version;
/// use microversion_server::Deprecation;
///
/// let d = Deprecation::new(Version::new(1, 10), UNIX_EPOCH + Duration::from_secs(1_700_000_000))
///     .sunset(UNIX_EPOCH + Duration::from_secs(1_800_000_000))
///     .link("https://docs.example/deprecations");
/// assert!(d.applies_to(Version::new(1, 9)));
/// assert!(!d.applies_to(Version::new(1, 10)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deprecation {
    below: Version,
    deprecation: HeaderValue,
    sunset: Option<HeaderValue>,
    link: Option<HeaderValue>,
}

impl Deprecation {
    /// VersionSpan below `below` are deprecated since `since`.
    #[must_use]
    pub fn new(below: Version, since: SystemTime) -> Self {
        // RFC 9745: a structured-field date, `@` and seconds since the epoch.
        let seconds = since.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        Deprecation {
            below,
            deprecation: HeaderValue::try_from(format!("@{seconds}"))
                .unwrap_or(HeaderValue::from_static("@0")),
            sunset: None,
            link: None,
        }
    }

    /// They will stop being served at `when`.
    #[must_use]
    pub fn sunset(mut self, when: SystemTime) -> Self {
        self.sunset = HeaderValue::try_from(httpdate::fmt_http_date(when)).ok();
        self
    }

    /// A page that explains the deprecation (sent as
    /// `Link: <url>; rel="deprecation"`). A URL with characters a header
    /// cannot carry is ignored.
    #[must_use]
    pub fn link(mut self, url: &str) -> Self {
        self.link = HeaderValue::try_from(format!("<{url}>; rel=\"deprecation\"")).ok();
        self
    }

    /// The first version that is not deprecated.
    #[must_use]
    pub fn below(&self) -> Version {
        self.below
    }

    /// Whether `version` is deprecated.
    #[must_use]
    pub fn applies_to(&self, version: Version) -> bool {
        version < self.below
    }

    /// Adds the headers for a response served at `version`.
    pub(crate) fn annotate(&self, version: Version, headers: &mut HeaderMap) {
        if !self.applies_to(version) {
            return;
        }
        headers.insert(DEPRECATION, self.deprecation.clone());
        if let Some(sunset) = &self.sunset {
            headers.insert(SUNSET, sunset.clone());
        }
        if let Some(link) = &self.link {
            headers.append(http::header::LINK, link.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn headers_only_below_the_threshold() {
        let d = Deprecation::new(
            Version::new(1, 5),
            UNIX_EPOCH + Duration::from_secs(1_688_169_599),
        )
        .sunset(UNIX_EPOCH + Duration::from_secs(1_700_000_000))
        .link("https://example.org/dep");
        let mut h = HeaderMap::new();
        d.annotate(Version::new(1, 4), &mut h);
        assert_eq!(h[DEPRECATION], "@1688169599");
        assert_eq!(h[SUNSET], "Tue, 14 Nov 2023 22:13:20 GMT");
        assert_eq!(
            h[http::header::LINK],
            "<https://example.org/dep>; rel=\"deprecation\""
        );
        let mut h = HeaderMap::new();
        d.annotate(Version::new(1, 5), &mut h);
        assert!(h.is_empty());
    }
}
