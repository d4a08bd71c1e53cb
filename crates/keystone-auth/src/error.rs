//! Errors: a token Keystone refuses, Keystone unavailable, and bad
//! configuration.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

use http::StatusCode;

type BoxError = Box<dyn StdError + Send + Sync>;

/// Why a token could not be validated.
///
/// Either the token is invalid ([`Error::is_invalid_token`]: the client
/// gets 401) or Keystone could not answer ([`Error::is_unavailable`]: the
/// client gets 503). [`Error::kind`] says which and why. Cheap to clone,
/// so concurrent requests waiting on one validation all get its error.
#[derive(Clone)]
pub struct Error {
    inner: Arc<Inner>,
}

struct Inner {
    kind: ErrorKind,
    source: Option<BoxError>,
}

/// What went wrong; all but [`ErrorKind::InvalidToken`] mean Keystone is
/// unavailable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The token is unknown, revoked, expired or malformed.
    InvalidToken,
    /// Keystone could not be reached (connection refused, DNS, TLS).
    Connect,
    /// Keystone did not answer within the request timeout.
    Timeout,
    /// Keystone answered 5xx.
    ServerError(StatusCode),
    /// Keystone answered a status this client does not expect (403 when
    /// the service user may not validate tokens, 401 again after re-auth).
    UnexpectedStatus(StatusCode),
    /// Keystone's answer was not JSON, lacked a field, or lacked the
    /// `X-Subject-Token` header.
    InvalidResponse,
    /// Keystone refused the service's own credentials.
    ServiceAuthRefused(StatusCode),
    /// The catalog of the service's token has no identity endpoint for the
    /// configured interface and region.
    NoIdentityEndpoint,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidToken => f.write_str("the token is invalid, expired or revoked"),
            Self::Connect => f.write_str("keystone could not be reached"),
            Self::Timeout => f.write_str("keystone did not answer in time"),
            Self::ServerError(s) => write!(f, "keystone answered {}", s.as_u16()),
            Self::UnexpectedStatus(s) => {
                write!(f, "keystone answered an unexpected {}", s.as_u16())
            }
            Self::InvalidResponse => f.write_str("keystone's answer could not be understood"),
            Self::ServiceAuthRefused(s) => {
                write!(
                    f,
                    "keystone refused the service credentials ({})",
                    s.as_u16()
                )
            }
            Self::NoIdentityEndpoint => f.write_str(
                "the service token's catalog has no identity endpoint for the configured interface and region",
            ),
        }
    }
}

impl Error {
    pub(crate) fn new(kind: ErrorKind) -> Self {
        Self {
            inner: Arc::new(Inner { kind, source: None }),
        }
    }

    pub(crate) fn with_source(kind: ErrorKind, source: impl Into<BoxError>) -> Self {
        Self {
            inner: Arc::new(Inner {
                kind,
                source: Some(source.into()),
            }),
        }
    }

    pub(crate) fn invalid_token() -> Self {
        Self::new(ErrorKind::InvalidToken)
    }

    /// What went wrong.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        self.inner.kind
    }

    /// The token is invalid: the client gets 401.
    #[must_use]
    pub fn is_invalid_token(&self) -> bool {
        self.inner.kind == ErrorKind::InvalidToken
    }

    /// Keystone could not validate the token: the client gets 503.
    #[must_use]
    pub fn is_unavailable(&self) -> bool {
        !self.is_invalid_token()
    }

    /// Keystone did not answer in time.
    #[must_use]
    pub fn is_timeout(&self) -> bool {
        self.inner.kind == ErrorKind::Timeout
    }

    /// Keystone could not be reached.
    #[must_use]
    pub fn is_connect(&self) -> bool {
        self.inner.kind == ErrorKind::Connect
    }

    pub(crate) fn from_reqwest(e: reqwest::Error) -> Self {
        let kind = if e.is_timeout() {
            ErrorKind::Timeout
        } else if e.is_connect() {
            ErrorKind::Connect
        } else if e.is_decode() || e.is_body() {
            ErrorKind::InvalidResponse
        } else {
            ErrorKind::Connect
        };
        Self::with_source(kind, e)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("keystone_auth::Error");
        d.field("kind", &self.inner.kind);
        if let Some(source) = &self.inner.source {
            d.field("source", source);
        }
        d.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.inner.kind, f)
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}

/// A configuration the client or layer cannot work with, found when it is
/// built. The message names the setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid keystone auth configuration: {setting}: {reason}")]
pub struct ConfigError {
    setting: &'static str,
    reason: String,
}

impl ConfigError {
    pub(crate) fn new(setting: &'static str, reason: impl Into<String>) -> Self {
        Self {
            setting,
            reason: reason.into(),
        }
    }

    /// The setting at fault (`auth_url`, `token_cache_time`, ...).
    #[must_use]
    pub fn setting(&self) -> &'static str {
        self.setting
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_predicates() {
        let e = Error::invalid_token();
        assert!(e.is_invalid_token() && !e.is_unavailable());
        let e = Error::new(ErrorKind::ServerError(StatusCode::BAD_GATEWAY));
        assert!(e.is_unavailable());
        assert_eq!(e.to_string(), "keystone answered 502");
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    }

    #[test]
    fn config_error_names_the_setting() {
        let e = ConfigError::new("auth_url", "missing");
        assert_eq!(e.setting(), "auth_url");
        assert_eq!(
            e.to_string(),
            "invalid keystone auth configuration: auth_url: missing"
        );
    }
}
