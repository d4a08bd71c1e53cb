//! [`VersionSpan`]: the versions something exists at.

use std::fmt;
use std::str::FromStr;

use crate::error::{InvalidRange, InvalidVersionSpan, SpanErrorKind};
use crate::version::parse;
use crate::{Version, VersionRange};

/// The versions a route, a request schema, a field or a client operation
/// exists at: from a first version to a last one, or to the newest
/// (`latest`).
///
/// Where [`VersionRange`] is what a server supports (both ends known),
/// a span is what one feature of the API covers, and may stay open at the
/// top. It is written and parsed as `1.0 - 1.4`, `1.5 - latest` or `all`:
///
/// ```
/// use microversion::{Version, VersionSpan};
///
/// const NESTED: VersionSpan = VersionSpan::from_static("1.14 - latest");
/// assert!(NESTED.contains(Version::new(1, 20)));
/// assert!(!NESTED.contains(Version::new(1, 13)));
///
/// let old = VersionSpan::between(Version::new(1, 0), Version::new(1, 13))?;
/// assert!(!old.overlaps(NESTED));
/// assert_eq!(old.to_string(), "1.0 - 1.13");
/// assert_eq!("1.14 - latest".parse::<VersionSpan>()?, NESTED);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct VersionSpan {
    start: Version,
    end: Option<Version>,
}

impl VersionSpan {
    /// Every version.
    pub const ALL: VersionSpan = VersionSpan {
        start: Version::new(0, 0),
        end: None,
    };

    /// From `start` to the newest version.
    #[must_use]
    pub const fn since(start: Version) -> Self {
        VersionSpan { start, end: None }
    }

    /// From `start` to `end`, both included.
    ///
    /// # Errors
    ///
    /// Returns [`InvalidRange`] when `start > end`.
    pub const fn between(start: Version, end: Version) -> Result<Self, InvalidRange> {
        match VersionRange::new(start, end) {
            Ok(_) => Ok(VersionSpan {
                start,
                end: Some(end),
            }),
            Err(e) => Err(e),
        }
    }

    /// From `start` to `end`, `None` meaning the newest.
    ///
    /// # Errors
    ///
    /// Returns [`InvalidRange`] when `start > end`.
    pub const fn new(start: Version, end: Option<Version>) -> Result<Self, InvalidRange> {
        match end {
            Some(end) => VersionSpan::between(start, end),
            None => Ok(VersionSpan::since(start)),
        }
    }

    /// Parses a literal in the written form (`"1.0 - 1.4"`,
    /// `"1.5 - latest"`, `"all"`), for constants in a service's code; it
    /// can be evaluated at compile time.
    ///
    /// # Panics
    ///
    /// Panics when the literal is not a valid span: a programmer error in
    /// a literal, not bad input. In a `const` the build fails instead.
    #[must_use]
    #[track_caller]
    pub const fn from_static(literal: &'static str) -> Self {
        match parse_span(literal.as_bytes()) {
            Ok(span) => span,
            // A const panic cannot format; the caller's location names the
            // literal.
            Err(_) => panic!(
                "invalid version span literal: expected \"X.Y - X.Y\", \"X.Y - latest\" or \"all\""
            ),
        }
    }

    /// The first version.
    #[must_use]
    pub const fn start(self) -> Version {
        self.start
    }

    /// The last version, `None` for the newest.
    #[must_use]
    pub const fn end(self) -> Option<Version> {
        self.end
    }

    /// Whether `version` lies in the span, ends included.
    ///
    /// This is how a handler branches on the version it serves (a
    /// server's extractor of that version converts into [`Version`]).
    #[must_use]
    pub fn contains(self, version: impl Into<Version>) -> bool {
        let version = version.into();
        version >= self.start && self.end.is_none_or(|end| version <= end)
    }

    /// Whether the two spans share a version.
    #[must_use]
    pub fn overlaps(self, other: VersionSpan) -> bool {
        let end = |span: VersionSpan| span.end.unwrap_or(Version::MAX);
        self.start <= end(other) && other.start <= end(self)
    }

    /// Whether every version of `other` lies in this span.
    ///
    /// ```
    /// use microversion::VersionSpan;
    /// let newer = VersionSpan::from_static("1.5 - latest");
    /// assert!(newer.covers(VersionSpan::from_static("1.6 - 1.9")));
    /// assert!(!newer.covers(VersionSpan::from_static("1.4 - 1.9")));
    /// assert!(!VersionSpan::from_static("1.5 - 1.9").covers(newer));
    /// ```
    #[must_use]
    pub fn covers(self, other: VersionSpan) -> bool {
        let end = |span: VersionSpan| span.end.unwrap_or(Version::MAX);
        self.start <= other.start && end(other) <= end(self)
    }

    /// The versions both spans hold, if they share any.
    ///
    /// ```
    /// use microversion::VersionSpan;
    /// let a = VersionSpan::from_static("1.2 - 1.9");
    /// let b = VersionSpan::from_static("1.5 - latest");
    /// assert_eq!(a.intersect(b), Some(VersionSpan::from_static("1.5 - 1.9")));
    /// assert_eq!(a.intersect(VersionSpan::from_static("1.10 - latest")), None);
    /// ```
    #[must_use]
    pub fn intersect(self, other: VersionSpan) -> Option<VersionSpan> {
        let start = self.start.max(other.start);
        let end = match (self.end, other.end) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, None) => a,
            (None, b) => b,
        };
        VersionSpan::new(start, end).ok()
    }

    /// Whether it covers every version.
    #[must_use]
    pub fn is_all(self) -> bool {
        self == VersionSpan::ALL
    }
}

/// The one grammar of a span: `all`, or a version, `-`, and a version or
/// `latest`, with optional spaces around the dash.
const fn parse_span(bytes: &[u8]) -> Result<VersionSpan, SpanErrorKind> {
    let bytes = bytes.trim_ascii();
    if bytes.len() == 3 && bytes[0] == b'a' && bytes[1] == b'l' && bytes[2] == b'l' {
        return Ok(VersionSpan::ALL);
    }
    let mut dash = 0;
    while dash < bytes.len() && bytes[dash] != b'-' {
        dash += 1;
    }
    if dash == bytes.len() {
        return Err(SpanErrorKind::Shape);
    }
    let (start, rest) = bytes.split_at(dash);
    let (_, end) = rest.split_at(1);
    let start = match parse(start.trim_ascii()) {
        Ok(start) => start,
        Err(kind) => return Err(SpanErrorKind::Start(kind)),
    };
    let end = end.trim_ascii();
    if is_latest(end) {
        return Ok(VersionSpan::since(start));
    }
    let end = match parse(end) {
        Ok(end) => end,
        Err(kind) => return Err(SpanErrorKind::End(kind)),
    };
    match VersionSpan::between(start, end) {
        Ok(span) => Ok(span),
        Err(e) => Err(SpanErrorKind::Inverted(e)),
    }
}

const fn is_latest(bytes: &[u8]) -> bool {
    let word = b"latest";
    if bytes.len() != word.len() {
        return false;
    }
    let mut i = 0;
    while i < word.len() {
        if bytes[i] != word[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl From<VersionRange> for VersionSpan {
    fn from(range: VersionRange) -> Self {
        VersionSpan {
            start: range.min(),
            end: Some(range.max()),
        }
    }
}

impl fmt::Display for VersionSpan {
    /// `1.0 - 1.4`, `1.5 - latest`, or `all`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.is_all(), self.end) {
            (true, _) => f.write_str("all"),
            (false, Some(end)) => write!(f, "{} - {end}", self.start),
            (false, None) => write!(f, "{} - latest", self.start),
        }
    }
}

impl fmt::Debug for VersionSpan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VersionSpan({self})")
    }
}

impl FromStr for VersionSpan {
    type Err = InvalidVersionSpan;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_span(s.as_bytes()).map_err(|kind| InvalidVersionSpan::new(s, kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u32, minor: u32) -> Version {
        Version::new(major, minor)
    }

    #[test]
    fn written_forms_round_trip() {
        for text in ["1.0 - 1.4", "1.5 - latest", "all", "2.1 - 2.1"] {
            let span: VersionSpan = text.parse().unwrap();
            assert_eq!(span.to_string(), text);
            assert_eq!(VersionSpan::from_static(text), span);
        }
        assert_eq!(
            "1.5-latest".parse::<VersionSpan>().unwrap(),
            VersionSpan::since(v(1, 5))
        );
        assert_eq!(
            " 1.0 -1.4 ".parse::<VersionSpan>().unwrap(),
            VersionSpan::between(v(1, 0), v(1, 4)).unwrap()
        );
    }

    #[test]
    fn bad_text_says_what_is_accepted() {
        let cases = [
            (
                "1.5",
                "invalid version span \"1.5\": expected \"X.Y - X.Y\", \"X.Y - latest\" or \"all\"",
            ),
            (
                "",
                "invalid version span \"\": expected \"X.Y - X.Y\", \"X.Y - latest\" or \"all\"",
            ),
            (
                "1.x - latest",
                "invalid version span \"1.x - latest\": its first version: only the digits 0-9 and one dot are allowed",
            ),
            (
                "1.0 - Latest",
                "invalid version span \"1.0 - Latest\": its last version: no dot between major and minor; expected a version or \"latest\"",
            ),
            (
                "1.4 - 1.0",
                "invalid version span \"1.4 - 1.0\": its first version 1.4 is above its last 1.0",
            ),
            (
                "1.0 - 1.4 - 1.5",
                "invalid version span \"1.0 - 1.4 - 1.5\": its last version: only the digits 0-9 and one dot are allowed; expected a version or \"latest\"",
            ),
        ];
        for (text, message) in cases {
            let err = text.parse::<VersionSpan>().unwrap_err();
            assert_eq!(err.to_string(), message, "{text:?}");
        }
    }

    #[test]
    #[should_panic(expected = "invalid version span literal")]
    fn from_static_panics_on_a_bad_literal() {
        let _ = VersionSpan::from_static("1.5");
    }

    #[test]
    fn contains_is_inclusive_with_an_open_end() {
        let closed = VersionSpan::between(v(1, 10), v(1, 10)).unwrap();
        assert!(closed.contains(v(1, 10)));
        assert!(!closed.contains(v(1, 9)));
        assert!(!closed.contains(v(1, 11)));
        let open = VersionSpan::since(v(1, 10));
        assert!(open.contains(v(1, 10)));
        assert!(open.contains(v(7, 0)));
        assert!(!open.contains(v(1, 9)));
        assert!(VersionSpan::ALL.contains(Version::new(0, 0)));
        assert!(VersionSpan::ALL.contains(Version::MAX));
    }

    #[test]
    fn overlaps_needs_a_shared_version() {
        let old = VersionSpan::from_static("1.0 - 1.4");
        assert!(!old.overlaps(VersionSpan::from_static("1.5 - latest")));
        assert!(old.overlaps(VersionSpan::from_static("1.4 - latest")));
        assert!(VersionSpan::from_static("1.4 - latest").overlaps(old));
        assert!(old.overlaps(VersionSpan::ALL));
        assert!(VersionSpan::ALL.is_all());
        assert!(!old.is_all());
        assert_eq!(
            VersionSpan::new(v(1, 4), Some(v(1, 0)))
                .unwrap_err()
                .to_string(),
            "invalid version range: minimum 1.4 is above maximum 1.0"
        );
        assert_eq!(
            VersionSpan::from(VersionRange::from_static("1.0", "1.39")),
            VersionSpan::from_static("1.0 - 1.39")
        );
    }
}
