//! [`Error`]: the one error type of the crate.
//!
//! It is one pointer wide: the details live behind a `Box`. What went wrong
//! is asked with the `is_*` predicates; the typed detail, when there is one,
//! with the accessors ([`Error::negotiation`], [`Error::status`], ...).
//! Errors from other crates (reqwest, I/O, JSON) are its
//! [`source`](std::error::Error::source).

use std::fmt;

use http::StatusCode;
use microversion::{NegotiationError, Version, VersionRange};
use url::Url;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Everything that can go wrong in this crate.
///
/// The message names what was asked and what is supported, so it can be
/// shown to a user as it is:
///
/// ```text
/// compute at http://127.0.0.1:8774/v2.1: version 2.200 is not supported by the
/// server (it supports 2.1 - 2.104; this client supports 2.1 - 2.200)
/// ```
pub struct Error {
    inner: Box<Inner>,
}

struct Inner {
    kind: Kind,
    /// What the error is about: `compute at http://...`, or a builder name.
    context: Option<String>,
    url: Option<Url>,
    source: Option<BoxError>,
}

/// The private kinds; the public API is the predicates.
#[derive(Debug)]
pub(crate) enum Kind {
    /// A builder was misconfigured.
    Builder(String),
    /// Sending the request or reading the response failed (reqwest).
    Request,
    /// A response body could not be decoded.
    Decode,
    /// The server answered an error status (from `error_for_status`).
    Status(StatusCode),
    /// Discovery failed: no versions document could be read.
    Discovery(String),
    /// No version could be agreed (docs/client.md, negotiation 2 to 7).
    Negotiation(NegotiationError),
    /// The server refused a version (406) and nothing could fix it.
    NotAcceptable {
        sent: Version,
        client: VersionRange,
        server: Option<VersionRange>,
        why: &'static str,
    },
    /// A microversioned request was answered without the version header,
    /// or with another version (docs/client.md, negotiation 8).
    IgnoredHeader {
        sent: Version,
        answered: Option<Version>,
    },
    /// A feature's version range excludes the version in use.
    Gate(String),
    /// Probing found no version all endpoints support.
    NoCommonVersion(String),
    /// The cloud configuration (clouds.yaml, `OS_*`, options) is wrong or
    /// incomplete; the source is a [`ConfigError`](crate::config::ConfigError).
    Config,
    /// Keystone gave no token; the source is a
    /// [`keystone_auth::session::AuthError`].
    Auth,
    /// The catalog has no usable endpoint for a service.
    Catalog(String),
}

impl Error {
    pub(crate) fn new(kind: Kind) -> Self {
        Error {
            inner: Box::new(Inner {
                kind,
                context: None,
                url: None,
                source: None,
            }),
        }
    }

    pub(crate) fn builder(message: impl Into<String>) -> Self {
        Error::new(Kind::Builder(message.into()))
    }

    pub(crate) fn builder_with_source(
        message: impl Into<String>,
        source: impl Into<BoxError>,
    ) -> Self {
        Error::builder(message).with_source(source)
    }

    pub(crate) fn request(source: reqwest::Error) -> Self {
        let kind = if source.is_decode() {
            Kind::Decode
        } else if let (true, Some(status)) = (source.is_status(), source.status()) {
            Kind::Status(status)
        } else {
            Kind::Request
        };
        let url = source.url().cloned();
        let mut err = Error::new(kind).with_source(source);
        err.inner.url = url;
        err
    }

    pub(crate) fn discovery(message: impl Into<String>) -> Self {
        Error::new(Kind::Discovery(message.into()))
    }

    pub(crate) fn config(source: crate::config::ConfigError) -> Self {
        Error::new(Kind::Config).with_source(source)
    }

    pub(crate) fn auth(source: keystone_auth::session::AuthError) -> Self {
        Error::new(Kind::Auth).with_source(source)
    }

    pub(crate) fn catalog(message: impl Into<String>) -> Self {
        Error::new(Kind::Catalog(message.into()))
    }

    pub(crate) fn gate(message: impl Into<String>) -> Self {
        Error::new(Kind::Gate(message.into()))
    }

    pub(crate) fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.inner.source = Some(source.into());
        self
    }

    pub(crate) fn with_context(mut self, context: impl Into<String>) -> Self {
        if self.inner.context.is_none() {
            self.inner.context = Some(context.into());
        }
        self
    }

    pub(crate) fn with_url(mut self, url: &Url) -> Self {
        if self.inner.url.is_none() {
            self.inner.url = Some(url.clone());
        }
        self
    }

    /// Whether the cloud configuration (clouds.yaml, secure.yaml, `OS_*`
    /// variables, options) is wrong or incomplete; nothing was sent.
    #[must_use]
    pub fn is_config(&self) -> bool {
        matches!(self.inner.kind, Kind::Config)
    }

    /// Whether Keystone gave no token: credentials refused, Keystone
    /// unreachable, or an answer without a token.
    #[must_use]
    pub fn is_auth(&self) -> bool {
        matches!(self.inner.kind, Kind::Auth)
    }

    /// Whether Keystone refused the credentials (a wrong password, an
    /// unknown project, ...): trying again cannot help.
    #[must_use]
    pub fn is_auth_refused(&self) -> bool {
        self.is_auth()
            && self
                .inner
                .source
                .as_deref()
                .and_then(|s| s.downcast_ref::<keystone_auth::session::AuthError>())
                .is_some_and(keystone_auth::session::AuthError::is_refused)
    }

    /// Whether the catalog has no usable endpoint for the service asked
    /// for (the message lists what it offers), or the endpoint's URL is
    /// broken.
    #[must_use]
    pub fn is_catalog(&self) -> bool {
        matches!(self.inner.kind, Kind::Catalog(_))
    }

    /// Whether a builder was misconfigured (returned by a `build()`, or by
    /// `send()` for a request builder).
    #[must_use]
    pub fn is_builder(&self) -> bool {
        matches!(self.inner.kind, Kind::Builder(_))
    }

    /// Whether sending a request or reading its response failed: connection,
    /// timeout, redirect loop, ... (see [`Error::is_timeout`] and
    /// [`Error::is_connect`]).
    #[must_use]
    pub fn is_request(&self) -> bool {
        matches!(self.inner.kind, Kind::Request)
    }

    /// Whether a request timed out.
    #[must_use]
    pub fn is_timeout(&self) -> bool {
        self.reqwest().is_some_and(reqwest::Error::is_timeout)
    }

    /// Whether connecting to the server failed.
    #[must_use]
    pub fn is_connect(&self) -> bool {
        self.reqwest().is_some_and(reqwest::Error::is_connect)
    }

    /// Whether a response body could not be decoded.
    #[must_use]
    pub fn is_decode(&self) -> bool {
        matches!(self.inner.kind, Kind::Decode)
    }

    /// Whether this is an error status turned into an error by
    /// [`Response::error_for_status`](crate::Response::error_for_status).
    #[must_use]
    pub fn is_status(&self) -> bool {
        matches!(self.inner.kind, Kind::Status(_))
    }

    /// Whether discovery failed: the endpoint and its parent gave no
    /// versions document that could be read.
    #[must_use]
    pub fn is_discovery(&self) -> bool {
        matches!(self.inner.kind, Kind::Discovery(_))
    }

    /// Whether no version could be agreed with the server, or the client
    /// itself cannot make the request (docs/client.md, negotiation 2 to 7).
    /// [`Error::negotiation`] tells which case.
    #[must_use]
    pub fn is_negotiation(&self) -> bool {
        matches!(self.inner.kind, Kind::Negotiation(_))
    }

    /// Whether the server refused a version with 406 Not Acceptable and
    /// renegotiating could not help (it said nothing about its range, or
    /// refused a version inside the range it reported).
    #[must_use]
    pub fn is_not_acceptable(&self) -> bool {
        matches!(self.inner.kind, Kind::NotAcceptable { .. })
    }

    /// Whether a microversioned request was answered without the version
    /// header, or with another version: the server ignored the header
    /// (docs/client.md, negotiation 8).
    #[must_use]
    pub fn is_ignored_header(&self) -> bool {
        matches!(self.inner.kind, Kind::IgnoredHeader { .. })
    }

    /// Whether a version gate failed: [`Client::require`](crate::Client::require),
    /// [`RequestBuilder::require`](crate::RequestBuilder::require), a
    /// [`Versioned`](crate::Versioned) method with no implementation for the
    /// version, or a versioned CLI command or option.
    #[must_use]
    pub fn is_gate(&self) -> bool {
        matches!(self.inner.kind, Kind::Gate(_))
    }

    /// Whether probing found no version every endpoint supports.
    #[must_use]
    pub fn is_no_common_version(&self) -> bool {
        matches!(self.inner.kind, Kind::NoCommonVersion(_))
    }

    /// The negotiation case, when [`Error::is_negotiation`].
    #[must_use]
    pub fn negotiation(&self) -> Option<&NegotiationError> {
        match &self.inner.kind {
            Kind::Negotiation(e) => Some(e),
            _ => None,
        }
    }

    /// The HTTP status, when [`Error::is_status`], or 406 when
    /// [`Error::is_not_acceptable`].
    #[must_use]
    pub fn status(&self) -> Option<StatusCode> {
        match &self.inner.kind {
            Kind::Status(status) => Some(*status),
            Kind::NotAcceptable { .. } => Some(StatusCode::NOT_ACCEPTABLE),
            _ => None,
        }
    }

    /// The URL the error is about, when there is one.
    #[must_use]
    pub fn url(&self) -> Option<&Url> {
        self.inner.url.as_ref()
    }

    /// The version sent in the header of the request the server refused or
    /// answered without a version, when [`Error::is_not_acceptable`] or
    /// [`Error::is_ignored_header`].
    #[must_use]
    pub fn sent_version(&self) -> Option<Version> {
        match &self.inner.kind {
            Kind::NotAcceptable { sent, .. } | Kind::IgnoredHeader { sent, .. } => Some(*sent),
            _ => None,
        }
    }

    fn reqwest(&self) -> Option<&reqwest::Error> {
        self.inner.source.as_ref()?.downcast_ref::<reqwest::Error>()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(context) = &self.inner.context {
            write!(f, "{context}: ")?;
        }
        match &self.inner.kind {
            Kind::Builder(message) => write!(f, "invalid configuration: {message}"),
            Kind::Request => match &self.inner.url {
                Some(url) => write!(f, "error sending request to {url}"),
                None => f.write_str("error sending request"),
            },
            Kind::Decode => f.write_str("error decoding the response body"),
            Kind::Status(status) => match &self.inner.url {
                Some(url) => write!(f, "HTTP status {status} from {url}"),
                None => write!(f, "HTTP status {status}"),
            },
            Kind::Discovery(message) => write!(f, "discovery failed: {message}"),
            Kind::Negotiation(e) => fmt::Display::fmt(e, f),
            Kind::NotAcceptable {
                sent,
                client,
                server,
                why,
            } => {
                write!(f, "the server refused version {sent} (406 Not Acceptable)")?;
                match server {
                    Some(server) => write!(
                        f,
                        " {why} (it supports {server}; this client supports {client})"
                    ),
                    None => write!(f, " {why} (this client supports {client})"),
                }
            }
            Kind::IgnoredHeader {
                sent,
                answered: None,
            } => write!(
                f,
                "version {sent} was requested, but the response names no version: the server \
                 ignored the version header (it may not support microversions)"
            ),
            Kind::IgnoredHeader {
                sent,
                answered: Some(answered),
            } => write!(
                f,
                "version {sent} was requested, but the server answered with version {answered}"
            ),
            Kind::Gate(message) | Kind::NoCommonVersion(message) | Kind::Catalog(message) => {
                f.write_str(message)
            }
            // The cause is the message: it names the file, cloud and key,
            // or Keystone and the credentials.
            Kind::Config => match &self.inner.source {
                Some(source) => write!(f, "invalid cloud configuration: {source}"),
                None => f.write_str("invalid cloud configuration"),
            },
            Kind::Auth => match &self.inner.source {
                Some(source) => write!(f, "authentication failed: {source}"),
                None => f.write_str("authentication failed"),
            },
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("microversion_client::Error");
        d.field("kind", &self.inner.kind);
        if let Some(context) = &self.inner.context {
            d.field("context", context);
        }
        if let Some(url) = &self.inner.url {
            d.field("url", &url.as_str());
        }
        if let Some(source) = &self.inner.source {
            d.field("source", source);
        }
        d.finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .source
            .as_ref()
            .map(|e| &**e as &(dyn std::error::Error + 'static))
    }
}

impl From<NegotiationError> for Error {
    fn from(e: NegotiationError) -> Self {
        Error::new(Kind::Negotiation(e))
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn is_one_pointer_wide() {
        assert_eq!(size_of::<Error>(), size_of::<usize>());
        assert_eq!(size_of::<Result<(), Error>>(), size_of::<usize>());
    }

    #[test]
    fn errors_are_send_and_sync() {
        fn check<T: Send + Sync + 'static>() {}
        check::<Error>();
    }

    #[test]
    fn predicates_match_the_kind() {
        let e = Error::builder("no endpoint");
        assert!(e.is_builder() && !e.is_request() && !e.is_negotiation());
        assert_eq!(e.to_string(), "invalid configuration: no endpoint");

        let n = NegotiationError::OutsideClientRange {
            requested: "1.20".parse().unwrap(),
            client: VersionRange::from_static("1.0", "1.10"),
        };
        let e = Error::from(n).with_context("placement at http://h/");
        assert!(e.is_negotiation());
        assert_eq!(e.negotiation(), Some(&n));
        assert_eq!(
            e.to_string(),
            "placement at http://h/: version 1.20 is outside the range this client supports (1.0 - 1.10)"
        );
        assert!(e.source().is_none());

        let e = Error::new(Kind::NotAcceptable {
            sent: Version::new(1, 30),
            client: VersionRange::from_static("1.0", "1.30"),
            server: Some(VersionRange::from_static("1.0", "1.39")),
            why: "although it reported supporting it",
        });
        assert!(e.is_not_acceptable());
        assert_eq!(e.status(), Some(StatusCode::NOT_ACCEPTABLE));
        assert_eq!(e.sent_version(), Some(Version::new(1, 30)));
        assert_eq!(
            e.to_string(),
            "the server refused version 1.30 (406 Not Acceptable) although it reported \
             supporting it (it supports 1.0 - 1.39; this client supports 1.0 - 1.30)"
        );

        let e = Error::new(Kind::IgnoredHeader {
            sent: Version::new(2, 10),
            answered: None,
        });
        assert!(e.is_ignored_header());
        assert!(e.to_string().contains("ignored the version header"), "{e}");
    }

    #[test]
    fn sources_chain() {
        let io = std::io::Error::other("disk on fire");
        let e = Error::builder_with_source("cannot read", io);
        assert_eq!(
            e.source().map(ToString::to_string).as_deref(),
            Some("disk on fire")
        );
        assert!(format!("{e:?}").contains("disk on fire"));
    }
}
