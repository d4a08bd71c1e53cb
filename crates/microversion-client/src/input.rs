//! Conversions for builder arguments: a version or a request may be given
//! as a value or as text. Text goes through the core crate's one parser; a
//! parse error is recorded by the builder and returned by `build()`.

use microversion::{InvalidVersion, InvalidVersionRequest, Version, VersionRequest};

mod sealed {
    pub trait Sealed {}
}

/// A version given to a builder: a [`Version`], or text such as `"1.14"`.
pub trait IntoVersion: sealed::Sealed {
    /// The version, or why the text is not one.
    ///
    /// # Errors
    ///
    /// Returns [`InvalidVersion`] for text that is not `X.Y`.
    fn into_version(self) -> Result<Version, InvalidVersion>;
}

/// What a user asks for, given to a builder: a [`VersionRequest`], a
/// [`Version`], or text in the library grammar (`"2.10"`, `"2.latest"`,
/// `"latest"`, `"2"`).
pub trait IntoVersionRequest: sealed::Sealed {
    /// The request, or why the text is not one.
    ///
    /// # Errors
    ///
    /// Returns [`InvalidVersionRequest`], whose message quotes the text and
    /// says "expected X.Y, X.latest or latest".
    fn into_version_request(self) -> Result<VersionRequest, InvalidVersionRequest>;
}

impl sealed::Sealed for Version {}
impl sealed::Sealed for VersionRequest {}
impl sealed::Sealed for &str {}
impl sealed::Sealed for String {}
impl sealed::Sealed for &String {}

impl IntoVersion for Version {
    fn into_version(self) -> Result<Version, InvalidVersion> {
        Ok(self)
    }
}

impl IntoVersion for &str {
    fn into_version(self) -> Result<Version, InvalidVersion> {
        self.parse()
    }
}

impl IntoVersion for String {
    fn into_version(self) -> Result<Version, InvalidVersion> {
        self.parse()
    }
}

impl IntoVersion for &String {
    fn into_version(self) -> Result<Version, InvalidVersion> {
        self.parse()
    }
}

impl IntoVersionRequest for VersionRequest {
    fn into_version_request(self) -> Result<VersionRequest, InvalidVersionRequest> {
        Ok(self)
    }
}

impl IntoVersionRequest for Version {
    fn into_version_request(self) -> Result<VersionRequest, InvalidVersionRequest> {
        Ok(VersionRequest::from(self))
    }
}

impl IntoVersionRequest for &str {
    fn into_version_request(self) -> Result<VersionRequest, InvalidVersionRequest> {
        self.parse()
    }
}

impl IntoVersionRequest for String {
    fn into_version_request(self) -> Result<VersionRequest, InvalidVersionRequest> {
        self.parse()
    }
}

impl IntoVersionRequest for &String {
    fn into_version_request(self) -> Result<VersionRequest, InvalidVersionRequest> {
        self.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_goes_through_the_core_grammar() {
        assert_eq!("1.14".into_version(), Ok(Version::new(1, 14)));
        assert!("1.014".into_version().is_err());
        assert_eq!(
            String::from("2.latest").into_version_request(),
            Ok(VersionRequest::MajorLatest(2))
        );
        assert_eq!(
            Version::new(2, 0).into_version_request(),
            Ok(VersionRequest::Major(2))
        );
        assert!(" 2.1".into_version_request().is_err());
        assert!("None".into_version_request().is_err());
    }
}
