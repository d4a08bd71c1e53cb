//! The [`Version`] value type and its one strict parser.

use std::fmt;
use std::str::FromStr;

use crate::error::{InvalidVersion, VersionErrorKind};

/// A microversion: a major and a minor number, such as `1.39` or `2.104`.
///
/// Versions order numerically by `(major, minor)`, so `2.10 > 2.9`.
/// Every way to make one from text goes through the same strict grammar
/// (`^([1-9][0-9]*)\.([1-9][0-9]*|0)$`): no signs, no leading zeros, no
/// whitespace, exactly one dot, and numbers that fit in a `u32`.
///
/// ```
/// use microversion::Version;
///
/// let v: Version = "2.10".parse()?;
/// assert_eq!((v.major(), v.minor()), (2, 10));
/// assert!(v > Version::new(2, 9));
/// assert_eq!(v.to_string(), "2.10");
/// assert!("2.01".parse::<Version>().is_err());
/// # Ok::<(), microversion::InvalidVersion>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    // Field order is the ordering: major first, then minor.
    major: u32,
    minor: u32,
}

impl Version {
    /// The largest version that can be represented.
    pub const MAX: Version = Version::new(u32::MAX, u32::MAX);

    /// Makes a version from its two numbers.
    ///
    /// Any pair is accepted, including a major of 0, which the text grammar
    /// rejects: a version built in code is trusted.
    #[must_use]
    pub const fn new(major: u32, minor: u32) -> Self {
        Version { major, minor }
    }

    /// Parses a version from a string literal.
    ///
    /// Meant for constants in a service's code, such as the bounds of a
    /// route's range.
    ///
    /// # Panics
    ///
    /// Panics when `s` is not a valid version: this is a programmer error in
    /// a literal, not bad input.
    #[must_use]
    #[track_caller]
    pub fn from_static(s: &'static str) -> Self {
        match parse(s.as_bytes()) {
            Ok(v) => v,
            Err(kind) => panic!("{}", InvalidVersion::new(s.as_bytes(), kind)),
        }
    }

    /// Parses a version from bytes, as found in a header value.
    ///
    /// # Errors
    ///
    /// Returns [`InvalidVersion`] when `bytes` does not follow the grammar.
    pub fn try_from_bytes(bytes: &[u8]) -> Result<Self, InvalidVersion> {
        parse(bytes).map_err(|kind| InvalidVersion::new(bytes, kind))
    }

    /// [`Version::try_from_bytes`] without the reason: the version `bytes`
    /// spell by the same grammar, or `None`, allocating nothing either
    /// way (the reason's error holds a copy of the input). For a hot path
    /// that hands anything else to a slower reader.
    ///
    /// ```
    /// use microversion::Version;
    ///
    /// assert_eq!(Version::checked_from_bytes(b"1.20"), Some(Version::new(1, 20)));
    /// assert_eq!(Version::checked_from_bytes(b"latest"), None);
    /// ```
    #[inline]
    #[must_use]
    pub fn checked_from_bytes(bytes: &[u8]) -> Option<Self> {
        parse(bytes).ok()
    }

    /// The major number.
    #[must_use]
    pub const fn major(self) -> u32 {
        self.major
    }

    /// The minor number.
    #[must_use]
    pub const fn minor(self) -> u32 {
        self.minor
    }

    /// The version right after this one in its major: `1.5` after `1.4`.
    /// `None` after a major's last representable minor.
    ///
    /// ```
    /// use microversion::Version;
    /// assert_eq!(Version::new(1, 4).next_minor(), Some(Version::new(1, 5)));
    /// assert_eq!(Version::new(1, u32::MAX).next_minor(), None);
    /// ```
    #[must_use]
    pub const fn next_minor(self) -> Option<Version> {
        match self.minor.checked_add(1) {
            Some(minor) => Some(Version::new(self.major, minor)),
            None => None,
        }
    }

    /// The version right before this one in its major: `1.4` before `1.5`.
    /// `None` for a major's first version, `X.0`.
    ///
    /// ```
    /// use microversion::Version;
    /// assert_eq!(Version::new(1, 5).previous_minor(), Some(Version::new(1, 4)));
    /// assert_eq!(Version::new(2, 0).previous_minor(), None);
    /// ```
    #[must_use]
    pub const fn previous_minor(self) -> Option<Version> {
        match self.minor.checked_sub(1) {
            Some(minor) => Some(Version::new(self.major, minor)),
            None => None,
        }
    }
}

/// The one grammar of a version, on bytes.
///
/// Kept allocation-free: it runs for every request that carries a header.
#[inline(always)]
pub(crate) const fn parse(bytes: &[u8]) -> Result<Version, VersionErrorKind> {
    if bytes.is_empty() {
        return Err(VersionErrorKind::Empty);
    }
    let mut dot = 0;
    while dot < bytes.len() && bytes[dot] != b'.' {
        dot += 1;
    }
    if dot == bytes.len() {
        return Err(VersionErrorKind::MissingDot);
    }
    let (major, rest) = bytes.split_at(dot);
    let (_, minor) = rest.split_at(1);
    // The minor's error comes first: `1.2.3` says "more than one dot".
    let minor = match parse_number(minor) {
        Ok(minor) => minor,
        Err(kind) => return Err(kind),
    };
    match parse_number(major) {
        Ok(0) => Err(VersionErrorKind::ZeroMajor(minor)),
        Ok(major) => Ok(Version::new(major, minor)),
        Err(kind) => Err(kind),
    }
}

/// A major number alone (as in `2` or `2.latest`), by the same rules as the
/// major of a full version.
pub(crate) fn parse_major(digits: &[u8]) -> Result<u32, VersionErrorKind> {
    match parse_number(digits)? {
        0 => Err(VersionErrorKind::ZeroMajor(0)),
        major => Ok(major),
    }
}

/// `0` or a number without leading zeros that fits in a `u32`.
///
/// `const` (hence the loops) so that spans can be parsed at compile time.
#[inline(always)]
const fn parse_number(digits: &[u8]) -> Result<u32, VersionErrorKind> {
    if digits.is_empty() {
        return Err(VersionErrorKind::MissingNumber);
    }
    if digits[0] == b'0' && digits.len() > 1 && all_digits(digits) {
        return Err(VersionErrorKind::LeadingZero);
    }
    let mut number: u32 = 0;
    let mut i = 0;
    // Nine digits cannot overflow a `u32`: no check for those, which are
    // every real version's.
    let unchecked = if digits.len() < 9 { digits.len() } else { 9 };
    while i < unchecked {
        let b = digits[i];
        if !b.is_ascii_digit() {
            return Err(not_a_digit(b));
        }
        number = number * 10 + (b - b'0') as u32;
        i += 1;
    }
    while i < digits.len() {
        let b = digits[i];
        if !b.is_ascii_digit() {
            return Err(not_a_digit(b));
        }
        number = match number.checked_mul(10) {
            Some(tens) => match tens.checked_add((b - b'0') as u32) {
                Some(sum) => sum,
                None => return Err(VersionErrorKind::Overflow),
            },
            None => return Err(VersionErrorKind::Overflow),
        };
        i += 1;
    }
    Ok(number)
}

/// Why `b`, in a number, is not part of it.
#[inline]
const fn not_a_digit(b: u8) -> VersionErrorKind {
    if b == b'.' {
        VersionErrorKind::TooManyParts
    } else {
        VersionErrorKind::InvalidCharacter
    }
}

const fn all_digits(digits: &[u8]) -> bool {
    let mut i = 0;
    while i < digits.len() {
        if !digits[i].is_ascii_digit() {
            return false;
        }
        i += 1;
    }
    true
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl fmt::Debug for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Version({self})")
    }
}

impl FromStr for Version {
    type Err = InvalidVersion;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Version::try_from_bytes(s.as_bytes())
    }
}

impl TryFrom<&str> for Version {
    type Error = InvalidVersion;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl TryFrom<&[u8]> for Version {
    type Error = InvalidVersion;

    fn try_from(bytes: &[u8]) -> Result<Self, Self::Error> {
        Version::try_from_bytes(bytes)
    }
}

impl TryFrom<&http::HeaderValue> for Version {
    type Error = InvalidVersion;

    fn try_from(value: &http::HeaderValue) -> Result<Self, Self::Error> {
        Version::try_from_bytes(value.as_bytes())
    }
}

impl From<(u32, u32)> for Version {
    fn from((major, minor): (u32, u32)) -> Self {
        Version::new(major, minor)
    }
}

impl From<Version> for (u32, u32) {
    fn from(v: Version) -> Self {
        (v.major, v.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every input named in docs/wire.md item 5, and the valid forms.
    #[test]
    fn server_grammar_table() {
        let ok: &[(&str, (u32, u32))] = &[
            ("1.0", (1, 0)),
            ("1.1", (1, 1)),
            ("1.39", (1, 39)),
            ("2.10", (2, 10)),
            ("2.104", (2, 104)),
            ("10.0", (10, 0)),
            ("4294967295.4294967295", (u32::MAX, u32::MAX)),
        ];
        for (input, want) in ok {
            assert_eq!(
                input.parse::<Version>().map(<(u32, u32)>::from),
                Ok(*want),
                "{input:?}"
            );
        }
        let bad: &[&str] = &[
            "",
            "1.01",
            "01.1",
            " 1.1",
            "1.1 ",
            "1 .1",
            "1. 1",
            "1",
            "1.",
            ".1",
            "1.2.3",
            "-1.5",
            "+1.5",
            "1.-5",
            "1.a",
            "a.1",
            "pony.horse",
            "latest",
            "1.1_0",
            "1,1",
            "0.5",
            "0.0",
            "00.1",
            "1.00",
            "123456789012345678901234567890.1",
            "1.123456789012345678901234567890",
            "4294967296.0",
            "1.4294967296",
            "1.1\n",
            "１.1",
            "v1.1",
        ];
        for input in bad {
            let err = input.parse::<Version>().unwrap_err();
            assert_eq!(err.input(), input.as_bytes(), "{input:?}");
        }
    }

    #[test]
    fn error_messages_name_the_input_and_the_reason() {
        let err = "1.2.3".parse::<Version>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid version \"1.2.3\": more than one dot; expected MAJOR.MINOR such as 1.0 or 2.15"
        );
        let err = "99999999999.1".parse::<Version>().unwrap_err();
        assert!(err.to_string().contains("too large"), "{err}");
        let err = "1.01".parse::<Version>().unwrap_err();
        assert!(err.to_string().contains("leading zero"), "{err}");
    }

    /// Numbers of up to nine digits are read without overflow checks,
    /// longer ones with them; the reasons stay in the same order.
    #[test]
    fn long_numbers_keep_their_reasons() {
        let ok = |s: &str| s.parse::<Version>().map_err(|e| e.to_string());
        assert_eq!(
            ok("123456789.987654321"),
            Ok(Version::new(123_456_789, 987_654_321))
        );
        assert_eq!(ok("1.4294967295"), Ok(Version::new(1, u32::MAX)));
        assert_eq!(ok("4294967295.0"), Ok(Version::new(u32::MAX, 0)));
        for (input, reason) in [
            ("1.4294967296", "too large"),
            ("4294967296.1", "too large"),
            ("1.99999999999a", "too large"),
            ("1.0999999999999", "leading zero"),
            ("1.0999999999999a", "too large"),
            ("1.123456789a", "only the digits"),
            ("1.1234567890.1", "more than one dot"),
        ] {
            let err = ok(input).unwrap_err();
            assert!(err.contains(reason), "{input}: {err}");
        }
    }

    #[test]
    fn zero_major_is_well_shaped_but_invalid() {
        let err = "0.5".parse::<Version>().unwrap_err();
        assert_eq!(err.zero_major(), Some(Version::new(0, 5)));
        assert_eq!("00.5".parse::<Version>().unwrap_err().zero_major(), None);
        assert_eq!("pony".parse::<Version>().unwrap_err().zero_major(), None);
    }

    #[test]
    fn ordering_is_numeric() {
        assert!(Version::new(2, 10) > Version::new(2, 9));
        assert!(Version::new(3, 0) > Version::new(2, 104));
        assert!(Version::new(1, 0) < Version::new(1, 1));
    }

    #[test]
    #[should_panic(expected = "invalid version \"1.x\"")]
    fn from_static_panics_on_bad_literal() {
        let _ = Version::from_static("1.x");
    }

    #[test]
    fn parses_from_bytes_and_header_values() {
        let hv = http::HeaderValue::from_static("1.20");
        assert_eq!(Version::try_from(&hv), Ok(Version::new(1, 20)));
        assert!(Version::try_from(&b"\xff.1"[..]).is_err());
    }
}
