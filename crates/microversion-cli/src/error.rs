//! [`Error`]: why a command could not do its work (exit code 2).

use std::fmt;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A usage, input or connection error: the command could not do its work.
///
/// Its [`Display`](fmt::Display) is the message and every cause in its
/// source chain, joined with `: `, ready to be shown to a user.
pub struct Error {
    message: String,
    source: Option<BoxError>,
}

impl Error {
    /// An error with this message and no cause.
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
            source: None,
        }
    }

    /// An error with this message, caused by `source`.
    pub(crate) fn with_source(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// The message, without its causes.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        let mut cause = self.source.as_deref().map(|e| e as &dyn std::error::Error);
        while let Some(e) = cause {
            let text = e.to_string();
            // Errors that already repeat their cause's text are not repeated.
            if !self.message.ends_with(&text) {
                write!(f, ": {text}")?;
            }
            cause = e.source();
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("message", &self.message)
            .field("source", &self.source)
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Outer(std::io::Error);

    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("cannot connect")
        }
    }

    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn display_walks_the_source_chain() {
        let e = Error::new("no service type");
        assert_eq!(e.to_string(), "no service type");
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let e = Error::with_source("GET http://h/ failed", Outer(io));
        assert_eq!(
            e.to_string(),
            "GET http://h/ failed: cannot connect: refused"
        );
        assert_eq!(e.message(), "GET http://h/ failed");
    }
}
