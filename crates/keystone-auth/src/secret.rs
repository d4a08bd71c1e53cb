//! [`Secret`]: a password, application credential secret or token that
//! never shows in `Debug` output or error messages.

use std::fmt;

/// A secret string. Its `Debug` shows `Secret(***)`; it has no `Display`,
/// so it cannot end up in a message by accident. [`Secret::expose`] gives
/// the text to the one place that sends it.
///
/// ```
/// use keystone_auth::Secret;
///
/// let password = Secret::new("s3cret");
/// assert_eq!(format!("{password:?}"), "Secret(***)");
/// assert_eq!(password.expose(), "s3cret");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Box<str>);

impl Secret {
    /// Wraps the text.
    #[must_use]
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into().into_boxed_str())
    }

    /// The text, for the request that sends it.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the secret is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl From<String> for Secret {
    fn from(text: String) -> Self {
        Self::new(text)
    }
}

impl From<&str> for Secret {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}
