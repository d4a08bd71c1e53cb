//! [`VersionRange`]: an inclusive range of versions.

use std::fmt;

use crate::Version;
use crate::error::{InvalidRange, UnsupportedVersion};
use crate::header::RequestedVersion;

/// An inclusive range of versions, `[min, max]`, with `min <= max`.
///
/// A server supports one range; a client supports one too.
///
/// ```
/// use microversion::{RequestedVersion, Version, VersionRange};
///
/// let range = VersionRange::new(Version::new(1, 0), Version::new(1, 39))?;
/// assert!(range.contains(Version::new(1, 20)));
/// assert_eq!(range.resolve(RequestedVersion::Latest), Ok(Version::new(1, 39)));
/// let err = range.resolve(RequestedVersion::Exact(Version::new(1, 999))).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "version 1.999 is not supported by the API; minimum is 1.0 and maximum is 1.39"
/// );
/// # Ok::<(), microversion::InvalidRange>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct VersionRange {
    min: Version,
    max: Version,
}

impl VersionRange {
    /// Makes the range `[min, max]`.
    ///
    /// # Errors
    ///
    /// Returns [`InvalidRange`] when `min > max`.
    pub const fn new(min: Version, max: Version) -> Result<Self, InvalidRange> {
        // `Ord` is not const; compare the tuple by hand.
        if min.major() > max.major() || (min.major() == max.major() && min.minor() > max.minor()) {
            Err(InvalidRange { min, max })
        } else {
            Ok(VersionRange { min, max })
        }
    }

    /// Makes a range from two literals, for constants in a service's code.
    ///
    /// # Panics
    ///
    /// Panics when either literal is not a valid version or `min > max`: a
    /// programmer error, not bad input.
    #[must_use]
    #[track_caller]
    pub fn from_static(min: &'static str, max: &'static str) -> Self {
        match VersionRange::new(Version::from_static(min), Version::from_static(max)) {
            Ok(range) => range,
            Err(e) => panic!("{e}"),
        }
    }

    /// Every version of one major, `X.0` to the highest `X.Y`.
    #[must_use]
    pub const fn whole_major(major: u32) -> Self {
        VersionRange {
            min: Version::new(major, 0),
            max: Version::new(major, u32::MAX),
        }
    }

    /// The lowest version in the range.
    #[must_use]
    pub const fn min(self) -> Version {
        self.min
    }

    /// The highest version in the range.
    #[must_use]
    pub const fn max(self) -> Version {
        self.max
    }

    /// Whether `version` lies in the range, ends included.
    #[must_use]
    pub fn contains(self, version: Version) -> bool {
        version >= self.min && version <= self.max
    }

    /// The versions both ranges contain, if any.
    #[must_use]
    pub fn intersect(self, other: VersionRange) -> Option<VersionRange> {
        VersionRange::new(self.min.max(other.min), self.max.min(other.max)).ok()
    }

    /// Whether the two ranges share at least one version.
    #[must_use]
    pub fn overlaps(self, other: VersionRange) -> bool {
        self.intersect(other).is_some()
    }

    /// The concrete version a server serves for a well-formed request:
    /// `latest` is the maximum, an exact version must lie in the range.
    ///
    /// # Errors
    ///
    /// Returns [`UnsupportedVersion`] (a 406 on the wire) for an exact
    /// version outside the range; it carries the request and the range.
    pub fn resolve(self, requested: RequestedVersion) -> Result<Version, UnsupportedVersion> {
        match requested {
            RequestedVersion::Latest => Ok(self.max),
            RequestedVersion::Exact(v) if self.contains(v) => Ok(v),
            RequestedVersion::Exact(v) => Err(UnsupportedVersion {
                requested: v,
                supported: self,
            }),
        }
    }
}

impl fmt::Display for VersionRange {
    /// `1.0 - 1.39`, the form used in messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} - {}", self.min, self.max)
    }
}

impl fmt::Debug for VersionRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VersionRange({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(min: &'static str, max: &'static str) -> VersionRange {
        VersionRange::from_static(min, max)
    }

    #[test]
    fn new_rejects_inverted_ranges() {
        let err = VersionRange::new(Version::new(1, 5), Version::new(1, 4)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid version range: minimum 1.5 is above maximum 1.4"
        );
        assert!(VersionRange::new(Version::new(1, 5), Version::new(1, 5)).is_ok());
        assert!(VersionRange::new(Version::new(2, 0), Version::new(1, 99)).is_err());
    }

    #[test]
    fn ends_are_inclusive() {
        let range = r("1.2", "1.10");
        assert!(range.contains(Version::new(1, 2)));
        assert!(range.contains(Version::new(1, 10)));
        assert!(range.contains(Version::new(1, 9)));
        assert!(!range.contains(Version::new(1, 1)));
        assert!(!range.contains(Version::new(1, 11)));
        assert!(!range.contains(Version::new(2, 5)));
    }

    #[test]
    fn resolve_latest_exact_and_out_of_range() {
        let range = r("1.0", "1.39");
        assert_eq!(
            range.resolve(RequestedVersion::Latest),
            Ok(Version::new(1, 39))
        );
        assert_eq!(
            range.resolve(RequestedVersion::Exact(Version::new(1, 0))),
            Ok(Version::new(1, 0))
        );
        let err = range
            .resolve(RequestedVersion::Exact(Version::new(0, 5)))
            .unwrap_err();
        assert_eq!(err.requested(), Version::new(0, 5));
        assert_eq!(err.supported(), range);
    }

    #[test]
    fn intersections() {
        assert_eq!(
            r("1.0", "1.10").intersect(r("1.5", "1.20")),
            Some(r("1.5", "1.10"))
        );
        assert_eq!(r("1.0", "1.4").intersect(r("1.5", "1.20")), None);
        assert!(r("1.0", "1.5").overlaps(r("1.5", "1.20")));
        assert!(!r("1.0", "1.4").overlaps(r("1.5", "1.20")));
        assert_eq!(r("1.0", "1.39").to_string(), "1.0 - 1.39");
    }
}
