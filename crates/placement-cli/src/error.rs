//! [`Error`]: why a command could not do its work, before or instead of
//! the request.

use std::fmt;

use microversion_client::cli::error_chain;

use crate::{EXIT_ERROR, EXIT_FAILURES};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A usage, input, version, configuration or connection error (exit code
/// 2), or Keystone refusing the credentials (exit code 1).
///
/// Its [`Display`](fmt::Display) is the message and every cause in its
/// source chain on one line ([`error_chain`]).
pub(crate) struct Error {
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
            exit_code: EXIT_ERROR,
        }
    }

    /// An error with this message, caused by `source`.
    pub(crate) fn with_source(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error {
            message: message.into(),
            source: Some(source.into()),
            exit_code: EXIT_ERROR,
        }
    }

    /// A client crate error, its message first. Keystone refusing the
    /// credentials exits with 1: the command worked, the answer was no.
    pub(crate) fn from_client(e: microversion_client::Error) -> Self {
        let exit_code = if e.is_auth_refused() {
            EXIT_FAILURES
        } else {
            EXIT_ERROR
        };
        Error {
            message: e.to_string(),
            source: Some(Box::new(e)),
            exit_code,
        }
    }

    /// The exit code this error ends the command with.
    pub(crate) fn exit_code(&self) -> u8 {
        self.exit_code
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = self.source.as_deref().map(|e| e as &dyn std::error::Error);
        f.write_str(&error_chain(self.message.clone(), source))
    }
}

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

    #[test]
    fn display_walks_the_source_chain() {
        assert_eq!(Error::new("no column").to_string(), "no column");
        let io = std::io::Error::new(std::io::ErrorKind::BrokenPipe, "closed");
        let e = Error::with_source("cannot write to standard output", io);
        assert_eq!(e.to_string(), "cannot write to standard output: closed");
        assert_eq!(e.exit_code(), EXIT_ERROR);
    }
}
