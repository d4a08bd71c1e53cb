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
    exit_code: u8,
}

impl Error {
    /// An error with this message and no cause.
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
            source: None,
            exit_code: crate::EXIT_ERROR,
        }
    }

    /// An error with this message, caused by `source`.
    pub(crate) fn with_source(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error {
            message: message.into(),
            source: Some(source.into()),
            exit_code: crate::EXIT_ERROR,
        }
    }

    /// A client crate error, its message first. Keystone refusing the
    /// credentials exits with 1 ([`EXIT_FAILURES`](crate::EXIT_FAILURES)):
    /// the command worked, the answer was no.
    pub(crate) fn from_client(e: microversion_client::Error) -> Self {
        let exit_code = if e.is_auth_refused() {
            crate::EXIT_FAILURES
        } else {
            crate::EXIT_ERROR
        };
        Error {
            message: e.to_string(),
            source: Some(Box::new(e)),
            exit_code,
        }
    }

    /// The exit code this error ends the command with: 1 when Keystone
    /// refused the credentials, 2 otherwise.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        self.exit_code
    }

    /// The message, without its causes.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = self.source.as_deref().map(|e| e as &dyn std::error::Error);
        f.write_str(&chain(self.message.clone(), source))
    }
}

/// `text` followed by the causes from `cause` on, on one line
/// ([`error_chain`]).
pub(crate) use microversion_client::cli::error_chain as chain;

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("message", &self.message)
            .field("source", &self.source)
            .field("exit_code", &self.exit_code)
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
