//! [`CommandError`]: why a command could not do its work, with the exit
//! code it ends with.

use std::fmt;

use super::error_chain;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Exit code of a command whose request was refused: a server's error
/// status, Keystone refusing the credentials, a check that found failures.
pub const EXIT_FAILURES: u8 = 1;
/// Exit code of a usage, input, configuration or connection error.
pub const EXIT_ERROR: u8 = 2;

/// A usage, input, configuration or connection error (exit code
/// [`EXIT_ERROR`]), or Keystone refusing the credentials
/// ([`EXIT_FAILURES`]: the command worked, the answer was no).
///
/// Its [`Display`](fmt::Display) is the message and every cause in its
/// source chain on one line ([`error_chain`]), ready to be shown to a
/// user.
///
/// ```
/// use microversion_client::cli::{CommandError, EXIT_ERROR};
///
/// let io = std::io::Error::new(std::io::ErrorKind::BrokenPipe, "closed");
/// let e = CommandError::with_source("cannot write to standard output", io);
/// assert_eq!(e.to_string(), "cannot write to standard output: closed");
/// assert_eq!(e.exit_code(), EXIT_ERROR);
/// ```
pub struct CommandError {
    message: String,
    source: Option<BoxError>,
    exit_code: u8,
}

impl CommandError {
    /// An error with this message and no cause.
    pub fn new(message: impl Into<String>) -> Self {
        CommandError {
            message: message.into(),
            source: None,
            exit_code: EXIT_ERROR,
        }
    }

    /// An error with this message, caused by `source`.
    pub fn with_source(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        CommandError {
            message: message.into(),
            source: Some(source.into()),
            exit_code: EXIT_ERROR,
        }
    }

    /// A client crate error, its message first; Keystone refusing the
    /// credentials exits with [`EXIT_FAILURES`].
    #[must_use]
    pub fn from_client(e: crate::Error) -> Self {
        let exit_code = if e.is_auth_refused() {
            EXIT_FAILURES
        } else {
            EXIT_ERROR
        };
        CommandError {
            message: e.to_string(),
            source: Some(Box::new(e)),
            exit_code,
        }
    }

    /// The exit code this error ends the command with.
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

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = self.source.as_deref().map(|e| e as &dyn std::error::Error);
        f.write_str(&error_chain(self.message.clone(), source))
    }
}

impl fmt::Debug for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandError")
            .field("message", &self.message)
            .field("source", &self.source)
            .field("exit_code", &self.exit_code)
            .finish()
    }
}

impl std::error::Error for CommandError {
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
        let e = CommandError::new("no service type");
        assert_eq!(e.to_string(), "no service type");
        assert_eq!(e.exit_code(), EXIT_ERROR);
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let e = CommandError::with_source("GET http://h/ failed", Outer(io));
        assert_eq!(
            e.to_string(),
            "GET http://h/ failed: cannot connect: refused"
        );
        assert_eq!(e.message(), "GET http://h/ failed");
    }
}
