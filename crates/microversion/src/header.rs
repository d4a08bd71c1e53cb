//! The `OpenStack-API-Version` header codec, and the legacy per-service
//! headers such as `X-OpenStack-Nova-API-Version`.
//!
//! Decoding takes an iterator of header values, so repeated headers are read
//! exactly as if they were folded with commas. It never allocates for a
//! well-formed header, and never panics on any bytes.

use http::header::{HeaderName, HeaderValue};

use crate::Version;
use crate::error::{InvalidVersion, VersionErrorKind};

/// The standard request and response header, `OpenStack-API-Version`.
pub const OPENSTACK_API_VERSION: HeaderName = HeaderName::from_static("openstack-api-version");

/// A well-formed version as a server reads it from a request: a concrete
/// version, or `latest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RequestedVersion {
    /// The highest version the server supports.
    Latest,
    /// Exactly this version.
    Exact(Version),
}

/// What a request's headers say about the version for one service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decoded<'a> {
    /// No entry for this service: the server serves its minimum.
    Absent,
    /// The entry for this service does not hold a valid version: a 400
    /// (406 in some profiles).
    Malformed(Malformed<'a>),
    /// A well-formed version.
    Present(RequestedVersion),
}

/// The version text of a malformed entry, borrowed from the header value.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Malformed<'a> {
    raw: &'a [u8],
}

impl<'a> Malformed<'a> {
    /// The version text exactly as sent (outer whitespace removed).
    #[must_use]
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The version text, with invalid UTF-8 replaced, for messages.
    #[must_use]
    pub fn to_string_lossy(&self) -> std::borrow::Cow<'a, str> {
        String::from_utf8_lossy(self.raw)
    }

    /// For text of the shape `0.Y`, that version (see
    /// [`InvalidVersion::zero_major`]), without building the error: a
    /// profile that answers it with 406 needs no allocation.
    #[must_use]
    pub fn zero_major(&self) -> Option<Version> {
        match crate::version::parse(self.raw) {
            Err(VersionErrorKind::ZeroMajor(minor)) => Some(Version::new(0, minor)),
            _ => None,
        }
    }

    /// Why the text is not a version.
    #[must_use]
    pub fn error(&self) -> InvalidVersion {
        match Version::try_from_bytes(self.raw) {
            Err(e) => e,
            // The decoder builds `Malformed` only from text the parser
            // rejected, so this arm is never taken.
            Ok(_) => InvalidVersion::new(self.raw, VersionErrorKind::InvalidCharacter),
        }
    }
}

impl std::fmt::Debug for Malformed<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Malformed(\"{}\")", self.raw.escape_ascii())
    }
}

/// The header codec for one service type.
///
/// ```
/// use http::HeaderValue;
/// use microversion::{Decoded, RequestedVersion, Version, VersionHeader};
///
/// let codec = VersionHeader::new("placement");
/// let values = [
///     HeaderValue::from_static("compute 2.1, placement 1.14"),
///     HeaderValue::from_static("placement 1.20"),
/// ];
/// assert_eq!(
///     codec.decode(&values),
///     Decoded::Present(RequestedVersion::Exact(Version::new(1, 20)))
/// );
/// assert_eq!(codec.encode(Version::new(1, 20)), "placement 1.20");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionHeader {
    service_type: String,
    latest_any_case: bool,
}

impl VersionHeader {
    /// A codec for `service_type` (compared case-insensitively); `latest` is
    /// recognised only in lower case.
    ///
    /// # Panics
    ///
    /// Panics when `service_type` is not a valid service type (see
    /// [`VersionHeader::try_new`]): a programmer error in a literal. Use
    /// `try_new` for a service type that comes from input.
    #[must_use]
    #[track_caller]
    pub fn new(service_type: impl Into<String>) -> Self {
        match VersionHeader::try_new(service_type) {
            Ok(codec) => codec,
            Err(e) => panic!("{e}"),
        }
    }

    /// A codec for `service_type`, checked: it must be non-empty visible
    /// ASCII without commas, such as `placement` or `shared-file-system`.
    ///
    /// # Errors
    ///
    /// Returns [`InvalidServiceType`] for anything else.
    pub fn try_new(service_type: impl Into<String>) -> Result<Self, InvalidServiceType> {
        let service_type = service_type.into();
        let valid = !service_type.is_empty()
            && service_type
                .bytes()
                .all(|b| b.is_ascii_graphic() && b != b',');
        if !valid {
            return Err(InvalidServiceType {
                input: service_type,
            });
        }
        Ok(VersionHeader {
            service_type,
            latest_any_case: false,
        })
    }

    /// Accept `latest` in any case (`LATEST`, `Latest`), as Ironic does.
    #[must_use]
    pub fn latest_any_case(mut self, yes: bool) -> Self {
        self.latest_any_case = yes;
        self
    }

    /// The service type this codec reads and writes.
    #[must_use]
    pub fn service_type(&self) -> &str {
        &self.service_type
    }

    /// Decodes the standard header from all its values.
    ///
    /// Entries are separated by commas, within and across values. Entries
    /// for other services are ignored, and so is an entry that names a
    /// service but no version. When this service appears more than once,
    /// the last entry wins.
    pub fn decode<'a, I>(&self, values: I) -> Decoded<'a>
    where
        I: IntoIterator<Item = &'a HeaderValue>,
    {
        self.decode_bytes(values.into_iter().map(HeaderValue::as_bytes))
    }

    /// [`VersionHeader::decode`] on raw byte strings (for fuzzing, or for
    /// values taken from something other than the http crate).
    pub fn decode_bytes<'a, I>(&self, values: I) -> Decoded<'a>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        let mut last = None;
        for entry in values.into_iter().flat_map(|v| v.split(|&b| b == b',')) {
            let entry = trim(entry);
            let Some(split) = entry.iter().position(|&b| is_space(b)) else {
                // Empty, or a service type without a version.
                continue;
            };
            if entry[..split].eq_ignore_ascii_case(self.service_type.as_bytes()) {
                last = Some(trim(&entry[split..]));
            }
        }
        last.map_or(Decoded::Absent, |token| self.read_token(token))
    }

    /// Decodes a legacy header (`X-OpenStack-Nova-API-Version: 2.10`): a
    /// bare version; when folded, its last comma-separated value.
    pub fn decode_legacy<'a, I>(&self, values: I) -> Decoded<'a>
    where
        I: IntoIterator<Item = &'a HeaderValue>,
    {
        self.decode_legacy_bytes(values.into_iter().map(HeaderValue::as_bytes))
    }

    /// [`VersionHeader::decode_legacy`] on raw byte strings.
    pub fn decode_legacy_bytes<'a, I>(&self, values: I) -> Decoded<'a>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        let last = values
            .into_iter()
            .filter_map(|v| v.rsplit(|&b| b == b',').next())
            .map(trim)
            .filter(|token| !token.is_empty())
            .last();
        last.map_or(Decoded::Absent, |token| self.read_token(token))
    }

    /// Decodes the standard header, and the legacy one only when the
    /// standard header has no entry for this service.
    pub fn decode_with_legacy<'a, S, L>(&self, standard: S, legacy: L) -> Decoded<'a>
    where
        S: IntoIterator<Item = &'a HeaderValue>,
        L: IntoIterator<Item = &'a HeaderValue>,
    {
        match self.decode(standard) {
            Decoded::Absent => self.decode_legacy(legacy),
            found => found,
        }
    }

    /// The standard header's value for a served version:
    /// `<service-type> <X.Y>`.
    #[must_use]
    pub fn encode(&self, version: Version) -> HeaderValue {
        to_header_value(format!("{} {version}", self.service_type))
    }

    /// A legacy header's value: the bare `X.Y`.
    #[must_use]
    pub fn encode_legacy(version: Version) -> HeaderValue {
        to_header_value(version.to_string())
    }

    fn read_token<'a>(&self, token: &'a [u8]) -> Decoded<'a> {
        let is_latest = if self.latest_any_case {
            token.eq_ignore_ascii_case(b"latest")
        } else {
            token == b"latest"
        };
        if is_latest {
            return Decoded::Present(RequestedVersion::Latest);
        }
        match crate::version::parse(token) {
            Ok(v) => Decoded::Present(RequestedVersion::Exact(v)),
            Err(_) => Decoded::Malformed(Malformed { raw: token }),
        }
    }
}

/// Text made only of a checked service type, a space and a version is
/// always a valid header value.
fn to_header_value(text: String) -> HeaderValue {
    HeaderValue::try_from(text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// A service type that cannot appear in the header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidServiceType {
    input: String,
}

impl std::fmt::Display for InvalidServiceType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "invalid service type {:?}: expected visible ASCII without spaces or commas, such as placement or compute",
            self.input
        )
    }
}

impl std::error::Error for InvalidServiceType {}

/// Optional whitespace as HTTP defines it: space and horizontal tab.
fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn trim(mut bytes: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = bytes {
        if !is_space(*first) {
            break;
        }
        bytes = rest;
    }
    while let [rest @ .., last] = bytes {
        if !is_space(*last) {
            break;
        }
        bytes = rest;
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode<'a>(service: &str, values: &'a [&'a str]) -> Decoded<'a> {
        VersionHeader::new(service).decode_bytes(values.iter().map(|v| v.as_bytes()))
    }

    fn exact(major: u32, minor: u32) -> Decoded<'static> {
        Decoded::Present(RequestedVersion::Exact(Version::new(major, minor)))
    }

    fn malformed(raw: &str) -> Decoded<'_> {
        Decoded::Malformed(Malformed {
            raw: raw.as_bytes(),
        })
    }

    /// docs/wire.md items 1-8, case by case.
    #[test]
    fn wire_cases() {
        // 3: no header, or only other services.
        assert_eq!(decode("placement", &[]), Decoded::Absent);
        assert_eq!(decode("placement", &["compute 2.1"]), Decoded::Absent);
        assert_eq!(decode("cats", &["dogs 1.9"]), Decoded::Absent);
        // 1: service type compared case-insensitively.
        assert_eq!(decode("placement", &["PLACEMENT 1.5"]), exact(1, 5));
        assert_eq!(decode("Placement", &["placement 1.5"]), exact(1, 5));
        // 2: folding, repetition, last entry wins, entries without version.
        assert_eq!(decode("cats", &["dogs 1.9, cats 1.1"]), exact(1, 1));
        assert_eq!(decode("cats", &["cats 1.2, cats 1.3"]), exact(1, 3));
        assert_eq!(decode("cats", &["cats 1.2", "cats 1.3"]), exact(1, 3));
        assert_eq!(decode("cats", &["cats 1.3", "dogs 1.9"]), exact(1, 3));
        assert_eq!(decode("cats", &["cats 1.2, cats"]), exact(1, 2));
        assert_eq!(decode("cats", &["cats"]), Decoded::Absent);
        assert_eq!(decode("cats", &["cats 1.x, cats 1.3"]), exact(1, 3));
        assert_eq!(decode("cats", &["cats 1.3, cats 1.x"]), malformed("1.x"));
        assert_eq!(decode("cats", &[",,, cats 1.4 ,"]), exact(1, 4));
        // 4: latest, exact word by default.
        assert_eq!(
            decode("cats", &["cats latest"]),
            Decoded::Present(RequestedVersion::Latest)
        );
        assert_eq!(decode("cats", &["cats LATEST"]), malformed("LATEST"));
        assert_eq!(
            VersionHeader::new("baremetal")
                .latest_any_case(true)
                .decode_bytes([&b"baremetal Latest"[..]]),
            Decoded::Present(RequestedVersion::Latest)
        );
        // 5: malformed versions, outer whitespace allowed.
        assert_eq!(decode("cats", &["cats 1.9.5"]), malformed("1.9.5"));
        assert_eq!(decode("cats", &["  cats \t 1.7  "]), exact(1, 7));
        for bad in [
            "1.01",
            "01.1",
            "1",
            "1.",
            "1.2.3",
            "-1.5",
            "1.a",
            "pony.horse",
            "123456789012345678901234567890.1",
            "1.1 1",
            "0.5",
        ] {
            let value = format!("cats {bad}");
            assert_eq!(
                VersionHeader::new("cats").decode_bytes([value.as_bytes()]),
                malformed(bad),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn legacy_header_is_read_only_without_a_standard_entry() {
        let codec = VersionHeader::new("compute");
        let std_values = [HeaderValue::from_static("compute 2.10")];
        let legacy = [HeaderValue::from_static("2.5")];
        let other = [HeaderValue::from_static("placement 1.2")];
        assert_eq!(codec.decode_with_legacy(&std_values, &legacy), exact(2, 10));
        assert_eq!(codec.decode_with_legacy(&other, &legacy), exact(2, 5));
        assert_eq!(codec.decode_with_legacy(&[], &legacy), exact(2, 5));
        assert_eq!(codec.decode_with_legacy(&[], &[]), Decoded::Absent);
        // A malformed standard entry is still an entry: it wins.
        let bad = [HeaderValue::from_static("compute 2.x")];
        assert_eq!(codec.decode_with_legacy(&bad, &legacy), malformed("2.x"));
    }

    #[test]
    fn legacy_header_uses_the_last_comma_value() {
        let codec = VersionHeader::new("compute");
        assert_eq!(codec.decode_legacy_bytes([&b"2.1, 2.7"[..]]), exact(2, 7));
        assert_eq!(
            codec.decode_legacy_bytes([&b"2.1"[..], b"2.9"]),
            exact(2, 9)
        );
        assert_eq!(
            codec.decode_legacy_bytes([&b" latest "[..]]),
            Decoded::Present(RequestedVersion::Latest)
        );
        assert_eq!(codec.decode_legacy_bytes([&b"2.1,"[..]]), Decoded::Absent);
        assert_eq!(codec.decode_legacy_bytes([&b""[..]]), Decoded::Absent);
        assert_eq!(codec.decode_legacy_bytes([&b"2.1, x"[..]]), malformed("x"));
    }

    #[test]
    fn service_types_are_checked() {
        assert!(VersionHeader::try_new("shared-file-system").is_ok());
        for bad in ["", "a b", "a,b", "caf\u{e9}", "x\n"] {
            let err = VersionHeader::try_new(bad).unwrap_err();
            assert!(
                err.to_string().starts_with("invalid service type"),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn encode() {
        let codec = VersionHeader::new("placement");
        assert_eq!(codec.encode(Version::new(1, 39)), "placement 1.39");
        assert_eq!(VersionHeader::encode_legacy(Version::new(2, 104)), "2.104");
    }

    #[test]
    fn malformed_reports_why() {
        let Decoded::Malformed(m) = decode("cats", &["cats 1.9.5"]) else {
            panic!("expected malformed");
        };
        assert_eq!(m.to_string_lossy(), "1.9.5");
        assert!(m.error().to_string().contains("more than one dot"));
        let Decoded::Malformed(m) = decode("cats", &["cats 0.5"]) else {
            panic!("expected malformed");
        };
        assert_eq!(m.error().zero_major(), Some(Version::new(0, 5)));
        assert_eq!(m.zero_major(), Some(Version::new(0, 5)));
        let Decoded::Malformed(m) = decode("cats", &["cats 00.5"]) else {
            panic!("expected malformed");
        };
        assert_eq!(m.zero_major(), None);
    }
}
