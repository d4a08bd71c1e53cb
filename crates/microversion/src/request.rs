//! [`VersionRequest`]: what a user of a client asks for.

use std::fmt;
use std::str::FromStr;

use crate::error::InvalidVersionRequest;
use crate::version::{self, Version};

/// The version a client user asks for, in the client-side grammar.
///
/// | text | value | meaning |
/// |---|---|---|
/// | `2.10` | `Exact(2.10)` | exactly 2.10 |
/// | `2.0`, `2` | `Major(2)` | major 2 without microversions: send no header |
/// | `2.latest` | `MajorLatest(2)` | the highest 2.x both sides support |
/// | `latest` | `Latest` | the highest version both sides support |
/// | `None` (CLI only) | `Unversioned` | the default major, no microversion |
///
/// [`FromStr`] is the library grammar: exact, no trimming, no `None`.
/// [`VersionRequest::parse_cli`] is the CLI grammar: it trims surrounding
/// whitespace and also accepts `None`.
///
/// ```
/// use microversion::{Version, VersionRequest};
///
/// assert_eq!("2.10".parse(), Ok(VersionRequest::Exact(Version::new(2, 10))));
/// assert_eq!("2".parse(), Ok(VersionRequest::Major(2)));
/// assert_eq!("2.latest".parse(), Ok(VersionRequest::MajorLatest(2)));
/// assert_eq!(VersionRequest::parse_cli(" None "), Ok(VersionRequest::Unversioned));
/// let err = "spam".parse::<VersionRequest>().unwrap_err();
/// assert_eq!(err.to_string(), "invalid version \"spam\": expected X.Y, X.latest or latest");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum VersionRequest {
    /// Exactly this microversion (`X.Y` with `Y > 0`).
    Exact(Version),
    /// The major version without microversions (`X` or `X.0`): no header is
    /// sent, so the server uses its minimum.
    Major(u32),
    /// The highest microversion of this major that both sides support.
    MajorLatest(u32),
    /// The highest microversion both sides support.
    Latest,
    /// No microversion and the default major (the CLI's `None`).
    Unversioned,
}

impl VersionRequest {
    /// Parses the CLI grammar: surrounding whitespace is trimmed, and `None`
    /// (any case) means [`VersionRequest::Unversioned`].
    ///
    /// # Errors
    ///
    /// Returns [`InvalidVersionRequest`], whose message quotes the input and
    /// names the accepted forms, including `None`.
    pub fn parse_cli(s: &str) -> Result<Self, InvalidVersionRequest> {
        let trimmed = s.trim();
        if trimmed.eq_ignore_ascii_case("none") {
            return Ok(VersionRequest::Unversioned);
        }
        parse(trimmed.as_bytes()).ok_or_else(|| InvalidVersionRequest::new(s.as_bytes(), true))
    }

    /// Whether this request sends a microversion header at all.
    #[must_use]
    pub fn is_microversioned(self) -> bool {
        !matches!(self, VersionRequest::Major(_) | VersionRequest::Unversioned)
    }
}

/// The library grammar, on bytes.
fn parse(bytes: &[u8]) -> Option<VersionRequest> {
    if bytes == b"latest" {
        return Some(VersionRequest::Latest);
    }
    if let Some(major) = bytes.strip_suffix(b".latest") {
        return version::parse_major(major)
            .ok()
            .map(VersionRequest::MajorLatest);
    }
    if !bytes.contains(&b'.') {
        return version::parse_major(bytes).ok().map(VersionRequest::Major);
    }
    match version::parse(bytes) {
        Ok(v) if v.minor() == 0 => Some(VersionRequest::Major(v.major())),
        Ok(v) => Some(VersionRequest::Exact(v)),
        Err(_) => None,
    }
}

impl FromStr for VersionRequest {
    type Err = InvalidVersionRequest;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s.as_bytes()).ok_or_else(|| InvalidVersionRequest::new(s.as_bytes(), false))
    }
}

impl TryFrom<&str> for VersionRequest {
    type Error = InvalidVersionRequest;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Version> for VersionRequest {
    /// An exact request, or [`VersionRequest::Major`] for `X.0`, as the
    /// grammar reads it.
    fn from(v: Version) -> Self {
        if v.minor() == 0 {
            VersionRequest::Major(v.major())
        } else {
            VersionRequest::Exact(v)
        }
    }
}

impl fmt::Display for VersionRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionRequest::Exact(v) => fmt::Display::fmt(v, f),
            VersionRequest::Major(major) => write!(f, "{major}.0"),
            VersionRequest::MajorLatest(major) => write!(f, "{major}.latest"),
            VersionRequest::Latest => f.write_str("latest"),
            VersionRequest::Unversioned => f.write_str("None"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u32, minor: u32) -> Version {
        Version::new(major, minor)
    }

    /// Every input of the client grammar table in docs/client.md.
    #[test]
    fn client_grammar_table() {
        let ok: &[(&str, VersionRequest)] = &[
            ("2.10", VersionRequest::Exact(v(2, 10))),
            ("1.39", VersionRequest::Exact(v(1, 39))),
            ("2.0", VersionRequest::Major(2)),
            ("2", VersionRequest::Major(2)),
            ("12", VersionRequest::Major(12)),
            ("2.latest", VersionRequest::MajorLatest(2)),
            ("latest", VersionRequest::Latest),
        ];
        for (input, want) in ok {
            assert_eq!(input.parse::<VersionRequest>(), Ok(*want), "{input:?}");
            assert_eq!(VersionRequest::parse_cli(input), Ok(*want), "{input:?}");
        }
        let bad: &[&str] = &[
            "spam",
            "l33t",
            "1.2.3.4.5",
            "02.1",
            "2.01",
            " 2.1",
            "1.",
            "+2.1",
            "-1.2",
            "v2.1",
            "2.1\n",
            "1.1_0",
            "",
            "99999999999999999999.1",
            "1.99999999999999999999",
            "99999999999999999999",
            "99999999999999999999.latest",
            "None",
            "Latest",
            "LATEST",
            ".latest",
            "latest.1",
            "2.latest.1",
            "02",
            "0",
            "0.latest",
        ];
        for input in bad {
            let err = input.parse::<VersionRequest>().unwrap_err();
            assert_eq!(err.input(), input.as_bytes());
            let msg = err.to_string();
            assert!(
                msg.contains("expected X.Y, X.latest or latest"),
                "{input:?}: {msg}"
            );
        }
    }

    #[test]
    fn cli_grammar_trims_and_accepts_none() {
        assert_eq!(
            VersionRequest::parse_cli(" 2.1"),
            Ok(VersionRequest::Exact(v(2, 1)))
        );
        assert_eq!(
            VersionRequest::parse_cli("2.1\n"),
            Ok(VersionRequest::Exact(v(2, 1)))
        );
        assert_eq!(
            VersionRequest::parse_cli("None"),
            Ok(VersionRequest::Unversioned)
        );
        assert_eq!(
            VersionRequest::parse_cli("none"),
            Ok(VersionRequest::Unversioned)
        );
        let err = VersionRequest::parse_cli("spam").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid version \"spam\": expected X.Y, X.latest or latest (or None for no microversion)"
        );
        assert!(VersionRequest::parse_cli("").is_err());
    }

    #[test]
    fn display_round_trips() {
        for input in ["2.10", "2.0", "2.latest", "latest"] {
            let req: VersionRequest = input.parse().unwrap();
            assert_eq!(req.to_string(), input);
        }
        assert_eq!(VersionRequest::Major(2).to_string(), "2.0");
        assert_eq!(VersionRequest::Unversioned.to_string(), "None");
    }

    #[test]
    fn only_microversioned_requests_send_a_header() {
        assert!(VersionRequest::Latest.is_microversioned());
        assert!(VersionRequest::Exact(v(1, 2)).is_microversioned());
        assert!(VersionRequest::MajorLatest(1).is_microversioned());
        assert!(!VersionRequest::Major(2).is_microversioned());
        assert!(!VersionRequest::Unversioned.is_microversioned());
    }
}
