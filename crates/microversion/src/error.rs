//! The error types of the crate: one small type per failing operation, and
//! [`Error`], which any of them converts into.

use std::fmt;

use crate::{Version, VersionRange};

/// What the accepted forms of a version are, for messages.
const VERSION_FORM: &str = "expected MAJOR.MINOR such as 1.0 or 2.15";

/// Why a version string was rejected; kept private so it can grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VersionErrorKind {
    Empty,
    MissingDot,
    TooManyParts,
    MissingNumber,
    LeadingZero,
    InvalidCharacter,
    Overflow,
    /// `0.Y`: well shaped, but majors start at 1. Keeps the minor so a
    /// lenient server profile can still name the version.
    ZeroMajor(u32),
}

impl VersionErrorKind {
    fn reason(self) -> &'static str {
        match self {
            VersionErrorKind::Empty => "empty",
            VersionErrorKind::MissingDot => "no dot between major and minor",
            VersionErrorKind::TooManyParts => "more than one dot",
            VersionErrorKind::MissingNumber => "a number is missing",
            VersionErrorKind::LeadingZero => "a number has a leading zero",
            VersionErrorKind::InvalidCharacter => "only the digits 0-9 and one dot are allowed",
            VersionErrorKind::Overflow => "a number is too large",
            VersionErrorKind::ZeroMajor(_) => "the major version must be 1 or more",
        }
    }
}

/// Writes `bytes` quoted, escaping anything that is not printable ASCII, so
/// a message never carries control characters from a request.
fn write_quoted(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    write!(f, "\"{}\"", bytes.escape_ascii())
}

/// A string that is not a valid [`Version`].
///
/// Its message quotes the input (escaped) and says what is accepted:
/// `invalid version "1.2.3": more than one dot; expected MAJOR.MINOR such as 1.0 or 2.15`.
#[derive(Clone, PartialEq, Eq)]
pub struct InvalidVersion {
    input: Box<[u8]>,
    kind: VersionErrorKind,
}

impl InvalidVersion {
    pub(crate) fn new(input: &[u8], kind: VersionErrorKind) -> Self {
        InvalidVersion {
            input: input.into(),
            kind,
        }
    }

    /// The rejected input, exactly as given.
    #[must_use]
    pub fn input(&self) -> &[u8] {
        &self.input
    }

    /// The rejected input as text, with invalid UTF-8 replaced.
    #[must_use]
    pub fn input_lossy(&self) -> String {
        String::from_utf8_lossy(&self.input).into_owned()
    }

    /// Why the input was rejected, in a few words (`more than one dot`),
    /// without the input or the accepted form.
    #[must_use]
    pub fn reason(&self) -> &'static str {
        self.kind.reason()
    }

    /// What is accepted: `expected MAJOR.MINOR such as 1.0 or 2.15`.
    #[must_use]
    pub fn expected() -> &'static str {
        VERSION_FORM
    }

    /// Whether the number overflowed: the shape was right but a number was
    /// too large.
    #[must_use]
    pub fn is_overflow(&self) -> bool {
        self.kind == VersionErrorKind::Overflow
    }

    /// For an input of the shape `0.Y` (well formed but for its major of 0),
    /// that version; otherwise `None`.
    ///
    /// The strict grammar rejects it, but a server profile that must answer
    /// 406 rather than 400 for it (as upstream Placement does) uses this.
    #[must_use]
    pub fn zero_major(&self) -> Option<Version> {
        match self.kind {
            VersionErrorKind::ZeroMajor(minor) => Some(Version::new(0, minor)),
            _ => None,
        }
    }
}

impl fmt::Display for InvalidVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid version ")?;
        write_quoted(f, &self.input)?;
        write!(f, ": {}; {VERSION_FORM}", self.kind.reason())
    }
}

impl fmt::Debug for InvalidVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InvalidVersion")
            .field("input", &self.input.escape_ascii().to_string())
            .field("kind", &self.kind)
            .finish()
    }
}

impl std::error::Error for InvalidVersion {}

/// A string that is not a valid [`VersionRequest`](crate::VersionRequest)
/// (the client-side grammar).
///
/// Its message quotes the input and names the accepted forms:
/// `invalid version "spam": expected X.Y, X.latest or latest`.
#[derive(Clone, PartialEq, Eq)]
pub struct InvalidVersionRequest {
    input: Box<[u8]>,
    allows_none: bool,
}

impl InvalidVersionRequest {
    pub(crate) fn new(input: &[u8], allows_none: bool) -> Self {
        InvalidVersionRequest {
            input: input.into(),
            allows_none,
        }
    }

    /// The rejected input, exactly as given.
    #[must_use]
    pub fn input(&self) -> &[u8] {
        &self.input
    }
}

impl fmt::Display for InvalidVersionRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid version ")?;
        write_quoted(f, &self.input)?;
        f.write_str(": expected X.Y, X.latest or latest")?;
        if self.allows_none {
            f.write_str(" (or None for no microversion)")?;
        }
        Ok(())
    }
}

impl fmt::Debug for InvalidVersionRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InvalidVersionRequest")
            .field("input", &self.input.escape_ascii().to_string())
            .finish()
    }
}

impl std::error::Error for InvalidVersionRequest {}

/// Why a text is not a [`VersionSpan`](crate::VersionSpan).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SpanErrorKind {
    /// Neither `all` nor two parts around a dash.
    Shape,
    Start(VersionErrorKind),
    End(VersionErrorKind),
    Inverted(InvalidRange),
}

/// A string that is not a valid [`VersionSpan`](crate::VersionSpan).
///
/// Its message quotes the input and says what is wrong or accepted:
/// `invalid version span "1.5": expected "X.Y - X.Y", "X.Y - latest" or "all"`.
#[derive(Clone, PartialEq, Eq)]
pub struct InvalidVersionSpan {
    input: Box<str>,
    kind: SpanErrorKind,
}

impl InvalidVersionSpan {
    pub(crate) fn new(input: &str, kind: SpanErrorKind) -> Self {
        InvalidVersionSpan {
            input: input.into(),
            kind,
        }
    }

    /// The rejected input, exactly as given.
    #[must_use]
    pub fn input(&self) -> &str {
        &self.input
    }
}

impl fmt::Display for InvalidVersionSpan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid version span ")?;
        write_quoted(f, self.input.as_bytes())?;
        match self.kind {
            SpanErrorKind::Shape => {
                f.write_str(": expected \"X.Y - X.Y\", \"X.Y - latest\" or \"all\"")
            }
            SpanErrorKind::Start(kind) => write!(f, ": its first version: {}", kind.reason()),
            SpanErrorKind::End(kind) => write!(
                f,
                ": its last version: {}; expected a version or \"latest\"",
                kind.reason()
            ),
            SpanErrorKind::Inverted(e) => write!(
                f,
                ": its first version {} is above its last {}",
                e.min, e.max
            ),
        }
    }
}

impl fmt::Debug for InvalidVersionSpan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InvalidVersionSpan")
            .field("input", &self.input)
            .field("kind", &self.kind)
            .finish()
    }
}

impl std::error::Error for InvalidVersionSpan {}

/// A range whose minimum is above its maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidRange {
    pub(crate) min: Version,
    pub(crate) max: Version,
}

impl InvalidRange {
    /// The minimum that was given.
    #[must_use]
    pub fn min(&self) -> Version {
        self.min
    }

    /// The maximum that was given.
    #[must_use]
    pub fn max(&self) -> Version {
        self.max
    }
}

impl fmt::Display for InvalidRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid version range: minimum {} is above maximum {}",
            self.min, self.max
        )
    }
}

impl std::error::Error for InvalidRange {}

/// A well-formed version outside the supported range: a server answers it
/// with 406 Not Acceptable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnsupportedVersion {
    pub(crate) requested: Version,
    pub(crate) supported: VersionRange,
}

impl UnsupportedVersion {
    /// The version that was asked for.
    #[must_use]
    pub fn requested(&self) -> Version {
        self.requested
    }

    /// The range that is supported.
    #[must_use]
    pub fn supported(&self) -> VersionRange {
        self.supported
    }
}

impl fmt::Display for UnsupportedVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "version {} is not supported by the API; minimum is {} and maximum is {}",
            self.requested,
            self.supported.min(),
            self.supported.max()
        )
    }
}

impl std::error::Error for UnsupportedVersion {}

/// Any error of this crate.
///
/// Each operation returns its own small error type; they all convert into
/// this one for callers that want a single type.
#[derive(Debug)]
pub struct Error {
    inner: ErrorKind,
}

#[derive(Debug)]
enum ErrorKind {
    Version(InvalidVersion),
    Request(InvalidVersionRequest),
    Range(InvalidRange),
    Span(InvalidVersionSpan),
    Unsupported(UnsupportedVersion),
    Negotiation(crate::NegotiationError),
}

impl Error {
    fn get_ref(&self) -> &(dyn std::error::Error + 'static) {
        match &self.inner {
            ErrorKind::Version(e) => e,
            ErrorKind::Request(e) => e,
            ErrorKind::Range(e) => e,
            ErrorKind::Span(e) => e,
            ErrorKind::Unsupported(e) => e,
            ErrorKind::Negotiation(e) => e,
        }
    }

    /// Whether this is an [`InvalidVersion`], an [`InvalidVersionRequest`]
    /// or an [`InvalidVersionSpan`]: bad input text.
    #[must_use]
    pub fn is_invalid_version(&self) -> bool {
        matches!(
            self.inner,
            ErrorKind::Version(_) | ErrorKind::Request(_) | ErrorKind::Span(_)
        )
    }

    /// Whether this is an [`UnsupportedVersion`] or a negotiation failure:
    /// a valid version that cannot be served.
    #[must_use]
    pub fn is_unsupported(&self) -> bool {
        matches!(
            self.inner,
            ErrorKind::Unsupported(_) | ErrorKind::Negotiation(_)
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.get_ref(), f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.get_ref().source()
    }
}

macro_rules! into_error {
    ($($ty:ty => $kind:ident),* $(,)?) => {$(
        impl From<$ty> for Error {
            fn from(e: $ty) -> Self {
                Error { inner: ErrorKind::$kind(e) }
            }
        }
    )*};
}

into_error! {
    InvalidVersion => Version,
    InvalidVersionRequest => Request,
    InvalidRange => Range,
    InvalidVersionSpan => Span,
    UnsupportedVersion => Unsupported,
    crate::NegotiationError => Negotiation,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_escape_control_characters() {
        let err = InvalidVersion::new(b"1.1\n\x1b", VersionErrorKind::InvalidCharacter);
        assert!(
            err.to_string()
                .starts_with("invalid version \"1.1\\n\\x1b\"")
        );
    }

    #[test]
    fn crate_error_keeps_the_message_and_predicates() {
        let err: Error = "x".parse::<Version>().unwrap_err().into();
        assert!(err.is_invalid_version());
        assert!(!err.is_unsupported());
        assert!(err.to_string().starts_with("invalid version \"x\""));
    }
}
