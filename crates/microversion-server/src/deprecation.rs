//! Deprecating microversions: `Deprecation` (RFC 9745) and `Sunset`
//! (RFC 8594) headers on responses served at them, every version below a
//! threshold or chosen versions one by one.

use std::time::{SystemTime, UNIX_EPOCH};

use http::{HeaderMap, HeaderName, HeaderValue};
use microversion::{Version, VersionSpan};

/// The `Deprecation` response header (RFC 9745).
pub const DEPRECATION: HeaderName = HeaderName::from_static("deprecation");
/// The `Sunset` response header (RFC 8594).
pub const SUNSET: HeaderName = HeaderName::from_static("sunset");

/// Deprecated versions: every version below a threshold
/// ([`Deprecation::new`]), or the versions of a span
/// ([`Deprecation::versions`]). Responses served at them carry
/// `Deprecation` and, when a removal date is set, `Sunset`; a `Link` to
/// the deprecation notice (the version history, say) when one is set.
/// Discovery, the version history, the OpenAPI documents and the
/// reference page mark them as deprecated. A service may declare several,
/// each with its own dates: the first that covers a version speaks for
/// it.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use microversion::{Version, VersionSpan};
/// use microversion_server::Deprecation;
///
/// let d = Deprecation::new(Version::new(1, 10), UNIX_EPOCH + Duration::from_secs(1_700_000_000))
///     .sunset(UNIX_EPOCH + Duration::from_secs(1_800_000_000))
///     .link("https://docs.example/deprecations");
/// assert!(d.applies_to(Version::new(1, 9)));
/// assert!(!d.applies_to(Version::new(1, 10)));
/// // 1.14 alone, with its own date.
/// let one = Deprecation::versions(VersionSpan::from_static("1.14 - 1.14"), UNIX_EPOCH);
/// assert!(one.applies_to(Version::new(1, 14)) && !one.applies_to(Version::new(1, 15)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deprecation {
    covers: Covers,
    deprecation: HeaderValue,
    sunset: Option<HeaderValue>,
    link: Option<HeaderValue>,
}

/// The versions a [`Deprecation`] covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Covers {
    Below(Version),
    Span(VersionSpan),
}

impl Deprecation {
    /// Versions below `below` are deprecated since `since`.
    #[must_use]
    pub fn new(below: Version, since: SystemTime) -> Self {
        Deprecation::covering(Covers::Below(below), since)
    }

    /// The versions of `versions` are deprecated since `since` (a version
    /// alone is the span from it to itself).
    #[must_use]
    pub fn versions(versions: VersionSpan, since: SystemTime) -> Self {
        Deprecation::covering(Covers::Span(versions), since)
    }

    fn covering(covers: Covers, since: SystemTime) -> Self {
        // RFC 9745: a structured-field date, `@` and seconds since the epoch.
        let seconds = since.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        Deprecation {
            covers,
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

    /// For a threshold, the first version that is not deprecated.
    #[must_use]
    pub fn below(&self) -> Option<Version> {
        match self.covers {
            Covers::Below(below) => Some(below),
            Covers::Span(_) => None,
        }
    }

    /// For chosen versions, their span.
    #[must_use]
    pub fn span(&self) -> Option<VersionSpan> {
        match self.covers {
            Covers::Below(_) => None,
            Covers::Span(span) => Some(span),
        }
    }

    /// Whether `version` is deprecated.
    #[must_use]
    pub fn applies_to(&self, version: Version) -> bool {
        match self.covers {
            Covers::Below(below) => version < below,
            Covers::Span(span) => span.contains(version),
        }
    }

    /// The first of `deprecations` that covers `version`.
    #[must_use]
    pub fn of(deprecations: &[Deprecation], version: Version) -> Option<&Deprecation> {
        deprecations.iter().find(|d| d.applies_to(version))
    }

    /// Adds the headers of a response served at a version it covers.
    pub(crate) fn annotate(&self, headers: &mut HeaderMap) {
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
    fn the_first_covering_deprecation_speaks_for_a_version() {
        let list = [
            Deprecation::versions(
                VersionSpan::from_static("1.7 - 1.8"),
                UNIX_EPOCH + Duration::from_secs(10),
            ),
            Deprecation::new(Version::new(1, 5), UNIX_EPOCH + Duration::from_secs(20)),
            Deprecation::versions(VersionSpan::from_static("1.2 - 1.2"), UNIX_EPOCH),
        ];
        let since = |v: Version| {
            Deprecation::of(&list, v).map(|d| {
                let mut h = HeaderMap::new();
                d.annotate(&mut h);
                h[DEPRECATION].to_str().unwrap().to_owned()
            })
        };
        assert_eq!(since(Version::new(1, 2)).as_deref(), Some("@20"));
        assert_eq!(since(Version::new(1, 4)).as_deref(), Some("@20"));
        assert_eq!(since(Version::new(1, 5)), None);
        assert_eq!(since(Version::new(1, 8)).as_deref(), Some("@10"));
        assert_eq!(since(Version::new(1, 9)), None);
        assert_eq!(list[0].span(), Some(VersionSpan::from_static("1.7 - 1.8")));
        assert_eq!(list[0].below(), None);
        assert_eq!(list[1].below(), Some(Version::new(1, 5)));
    }

    #[test]
    fn headers_only_below_the_threshold() {
        let d = Deprecation::new(
            Version::new(1, 5),
            UNIX_EPOCH + Duration::from_secs(1_688_169_599),
        )
        .sunset(UNIX_EPOCH + Duration::from_secs(1_700_000_000))
        .link("https://example.org/dep");
        let mut h = HeaderMap::new();
        let list = [d];
        Deprecation::of(&list, Version::new(1, 4))
            .unwrap()
            .annotate(&mut h);
        assert_eq!(h[DEPRECATION], "@1688169599");
        assert_eq!(h[SUNSET], "Tue, 14 Nov 2023 22:13:20 GMT");
        assert_eq!(
            h[http::header::LINK],
            "<https://example.org/dep>; rel=\"deprecation\""
        );
        assert!(Deprecation::of(&list, Version::new(1, 5)).is_none());
    }
}
