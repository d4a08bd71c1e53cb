//! Client-side negotiation: from what the client supports, what the server
//! supports and what the user asked, the version to send. Pure: no I/O.

use std::fmt;

use crate::{Version, VersionRange, VersionRequest};

/// What a server supports, as discovery or a 406 told.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ServerVersions {
    /// The server supports microversions in this range.
    Microversions(VersionRange),
    /// The server does not support microversions (its versions document has
    /// no `min_version` and `max_version`): only `X.0` can be used.
    Unversioned,
}

/// The outcome of negotiation: what the client sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Negotiated {
    /// Send this version in the header.
    Version(Version),
    /// Send no version header: the server uses its default.
    NoHeader,
}

impl Negotiated {
    /// The version to send, if any.
    #[must_use]
    pub fn version(self) -> Option<Version> {
        match self {
            Negotiated::Version(v) => Some(v),
            Negotiated::NoHeader => None,
        }
    }
}

/// Why no version could be agreed.
///
/// Each message names what was requested and the ranges involved, so a
/// user can act on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NegotiationError {
    /// The request lies outside what this client supports; nothing was sent.
    OutsideClientRange {
        /// What was asked.
        requested: VersionRequest,
        /// What the client supports.
        client: VersionRange,
    },
    /// An explicit microversion was asked of a server without
    /// microversions.
    ServerUnversioned {
        /// What was asked.
        requested: Version,
    },
    /// An explicit version the client supports, but the server does not.
    OutsideServerRange {
        /// What was asked.
        requested: Version,
        /// What the client supports.
        client: VersionRange,
        /// What the server supports.
        server: VersionRange,
    },
    /// The server's maximum is below the client's minimum.
    ServerTooOld {
        /// What was asked (`latest` or `X.latest`).
        requested: VersionRequest,
        /// What the client supports.
        client: VersionRange,
        /// What the server supports.
        server: VersionRange,
    },
    /// The server's minimum is above the client's maximum.
    ServerTooNew {
        /// What was asked (`latest` or `X.latest`).
        requested: VersionRequest,
        /// What the client supports.
        client: VersionRange,
        /// What the server supports.
        server: VersionRange,
    },
}

impl fmt::Display for NegotiationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NegotiationError::OutsideClientRange { requested, client } => write!(
                f,
                "version {requested} is outside the range this client supports ({client})"
            ),
            NegotiationError::ServerUnversioned { requested } => write!(
                f,
                "version {requested} was requested, but the server does not support microversions"
            ),
            NegotiationError::OutsideServerRange {
                requested,
                client,
                server,
            } => write!(
                f,
                "version {requested} is not supported by the server (it supports {server}; \
                 this client supports {client})"
            ),
            NegotiationError::ServerTooOld {
                requested,
                client,
                server,
            } => write!(
                f,
                "no common version for {requested}: the server is too old (it supports {server}; \
                 this client supports {client})"
            ),
            NegotiationError::ServerTooNew {
                requested,
                client,
                server,
            } => write!(
                f,
                "no common version for {requested}: the server is too new (it supports {server}; \
                 this client supports {client})"
            ),
        }
    }
}

impl std::error::Error for NegotiationError {}

/// Chooses the version to send.
///
/// The rules (docs/client.md, negotiation 2-6):
/// - `X.Y` must lie in the client's range, then in the server's; a server
///   without microversions cannot serve it. It is never changed.
/// - `latest` and `X.latest` take the highest version both sides support
///   (within major X); with no overlap the server is too old or too new.
///   A server without microversions gets no header.
/// - `X`, `X.0` and `None` send no header.
///
/// ```
/// use microversion::{negotiate, Negotiated, ServerVersions, Version, VersionRange};
///
/// let client = VersionRange::from_static("1.0", "1.30");
/// let server = ServerVersions::Microversions(VersionRange::from_static("1.0", "1.39"));
/// assert_eq!(
///     negotiate(client, server, "latest".parse()?),
///     Ok(Negotiated::Version(Version::new(1, 30)))
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// Returns a [`NegotiationError`] naming the request and both ranges when
/// no version can be agreed.
pub fn negotiate(
    client: VersionRange,
    server: ServerVersions,
    requested: VersionRequest,
) -> Result<Negotiated, NegotiationError> {
    check_client_range(client, requested)?;
    let outside_client = || NegotiationError::OutsideClientRange { requested, client };
    match requested {
        VersionRequest::Unversioned => Ok(Negotiated::NoHeader),
        VersionRequest::Major(major) => {
            if (client.min().major()..=client.max().major()).contains(&major) {
                Ok(Negotiated::NoHeader)
            } else {
                Err(outside_client())
            }
        }
        VersionRequest::Exact(v) => {
            if !client.contains(v) {
                return Err(outside_client());
            }
            match server {
                ServerVersions::Unversioned => {
                    Err(NegotiationError::ServerUnversioned { requested: v })
                }
                ServerVersions::Microversions(server) if server.contains(v) => {
                    Ok(Negotiated::Version(v))
                }
                ServerVersions::Microversions(server) => {
                    Err(NegotiationError::OutsideServerRange {
                        requested: v,
                        client,
                        server,
                    })
                }
            }
        }
        VersionRequest::Latest | VersionRequest::MajorLatest(_) => {
            let wanted = match requested {
                VersionRequest::MajorLatest(major) => client
                    .intersect(VersionRange::whole_major(major))
                    .ok_or_else(outside_client)?,
                _ => client,
            };
            let ServerVersions::Microversions(server) = server else {
                return Ok(Negotiated::NoHeader);
            };
            if let Some(common) = wanted.intersect(server) {
                return Ok(Negotiated::Version(common.max()));
            }
            if wanted.min() > server.max() {
                Err(NegotiationError::ServerTooOld {
                    requested,
                    client,
                    server,
                })
            } else {
                Err(NegotiationError::ServerTooNew {
                    requested,
                    client,
                    server,
                })
            }
        }
    }
}

/// Checks a request against the client's own range alone (docs/client.md,
/// negotiation 4), before anything is sent or discovered.
///
/// `X.Y` must lie in the range; `X`, `X.0` and `X.latest` need the range to
/// reach into major X; `latest` and `None` always pass.
///
/// ```
/// use microversion::{check_client_range, VersionRange};
///
/// let client = VersionRange::from_static("2.1", "2.90");
/// assert!(check_client_range(client, "2.latest".parse()?).is_ok());
/// let err = check_client_range(client, "2.95".parse()?).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "version 2.95 is outside the range this client supports (2.1 - 2.90)"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// Returns [`NegotiationError::OutsideClientRange`] when the client cannot
/// make the request at all.
pub fn check_client_range(
    client: VersionRange,
    requested: VersionRequest,
) -> Result<(), NegotiationError> {
    let inside = match requested {
        VersionRequest::Latest | VersionRequest::Unversioned => true,
        VersionRequest::Exact(v) => client.contains(v),
        VersionRequest::Major(major) => {
            (client.min().major()..=client.max().major()).contains(&major)
        }
        VersionRequest::MajorLatest(major) => {
            client.intersect(VersionRange::whole_major(major)).is_some()
        }
    };
    if inside {
        Ok(())
    } else {
        Err(NegotiationError::OutsideClientRange { requested, client })
    }
}

/// Chooses the version to send when the server's range is not known yet
/// (docs/client.md, negotiation 7: the optimistic, 406-driven mode).
///
/// `X.Y` is sent as asked; `latest` sends the client's maximum and
/// `X.latest` the client's highest version of major X; `X`, `X.0` and
/// `None` send no header. If the server answers 406, read its range and
/// call [`negotiate`] with it.
///
/// ```
/// use microversion::{optimistic, Negotiated, Version, VersionRange};
///
/// let client = VersionRange::from_static("2.1", "3.5");
/// assert_eq!(
///     optimistic(client, "2.latest".parse()?),
///     Ok(Negotiated::Version(Version::new(2, u32::MAX)))
/// );
/// assert_eq!(
///     optimistic(client, "latest".parse()?),
///     Ok(Negotiated::Version(Version::new(3, 5)))
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// Returns [`NegotiationError::OutsideClientRange`] as
/// [`check_client_range`] does.
pub fn optimistic(
    client: VersionRange,
    requested: VersionRequest,
) -> Result<Negotiated, NegotiationError> {
    check_client_range(client, requested)?;
    Ok(match requested {
        VersionRequest::Exact(v) => Negotiated::Version(v),
        VersionRequest::Major(_) | VersionRequest::Unversioned => Negotiated::NoHeader,
        VersionRequest::Latest => Negotiated::Version(client.max()),
        VersionRequest::MajorLatest(major) => client
            .intersect(VersionRange::whole_major(major))
            .map_or(Negotiated::NoHeader, |mine| Negotiated::Version(mine.max())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(min: &'static str, max: &'static str) -> VersionRange {
        VersionRange::from_static(min, max)
    }

    fn server(min: &'static str, max: &'static str) -> ServerVersions {
        ServerVersions::Microversions(range(min, max))
    }

    fn req(s: &str) -> VersionRequest {
        s.parse().unwrap()
    }

    fn sent(s: &'static str) -> Result<Negotiated, NegotiationError> {
        Ok(Negotiated::Version(Version::from_static(s)))
    }

    #[test]
    fn case_2_server_without_microversions() {
        let client = range("2.1", "2.90");
        assert_eq!(
            negotiate(client, ServerVersions::Unversioned, req("2.0")),
            Ok(Negotiated::NoHeader)
        );
        assert_eq!(
            negotiate(client, ServerVersions::Unversioned, req("latest")),
            Ok(Negotiated::NoHeader)
        );
        let err = negotiate(client, ServerVersions::Unversioned, req("2.10")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "version 2.10 was requested, but the server does not support microversions"
        );
    }

    #[test]
    fn case_3_exact_inside_both() {
        assert_eq!(
            negotiate(range("1.0", "1.39"), server("1.0", "1.20"), req("1.20")),
            sent("1.20")
        );
    }

    #[test]
    fn case_4_exact_outside_client() {
        let err = negotiate(range("1.0", "1.10"), server("1.0", "1.39"), req("1.20")).unwrap_err();
        assert_eq!(
            err,
            NegotiationError::OutsideClientRange {
                requested: req("1.20"),
                client: range("1.0", "1.10")
            }
        );
        assert_eq!(
            err.to_string(),
            "version 1.20 is outside the range this client supports (1.0 - 1.10)"
        );
    }

    #[test]
    fn case_5_exact_outside_server() {
        let err = negotiate(range("1.0", "1.50"), server("1.0", "1.39"), req("1.45")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "version 1.45 is not supported by the server (it supports 1.0 - 1.39; this client supports 1.0 - 1.50)"
        );
    }

    #[test]
    fn case_6_latest() {
        assert_eq!(
            negotiate(range("1.0", "1.30"), server("1.0", "1.39"), req("latest")),
            sent("1.30")
        );
        assert_eq!(
            negotiate(range("1.0", "1.50"), server("1.0", "1.39"), req("latest")),
            sent("1.39")
        );
        let err =
            negotiate(range("1.40", "1.50"), server("1.0", "1.39"), req("latest")).unwrap_err();
        assert!(matches!(err, NegotiationError::ServerTooOld { .. }));
        assert_eq!(
            err.to_string(),
            "no common version for latest: the server is too old (it supports 1.0 - 1.39; this client supports 1.40 - 1.50)"
        );
        let err = negotiate(range("2.1", "2.90"), server("3.0", "3.5"), req("latest")).unwrap_err();
        assert!(matches!(err, NegotiationError::ServerTooNew { .. }));
    }

    #[test]
    fn case_6_major_latest() {
        let client = range("2.1", "3.5");
        assert_eq!(
            negotiate(client, server("2.1", "2.90"), req("2.latest")),
            sent("2.90")
        );
        assert_eq!(
            negotiate(client, server("2.1", "3.9"), req("3.latest")),
            sent("3.5")
        );
        let err = negotiate(client, server("2.1", "3.9"), req("4.latest")).unwrap_err();
        assert!(matches!(err, NegotiationError::OutsideClientRange { .. }));
        let err = negotiate(client, server("3.6", "3.9"), req("2.latest")).unwrap_err();
        assert!(matches!(err, NegotiationError::ServerTooNew { .. }));
    }

    #[test]
    fn unversioned_requests_send_no_header() {
        let client = range("2.1", "2.90");
        assert_eq!(
            negotiate(client, server("2.1", "2.90"), req("2")),
            Ok(Negotiated::NoHeader)
        );
        assert_eq!(
            negotiate(client, server("2.1", "2.90"), VersionRequest::Unversioned),
            Ok(Negotiated::NoHeader)
        );
        assert!(negotiate(client, server("2.1", "2.90"), req("3")).is_err());
    }

    #[test]
    fn client_range_check_before_anything() {
        let client = range("2.1", "3.5");
        for ok in ["2.1", "3.5", "2", "3.0", "2.latest", "3.latest", "latest"] {
            assert_eq!(check_client_range(client, req(ok)), Ok(()), "{ok}");
        }
        assert_eq!(
            check_client_range(client, VersionRequest::Unversioned),
            Ok(())
        );
        for bad in ["1.9", "3.6", "4", "1", "4.latest", "1.latest"] {
            let request = req(bad);
            assert_eq!(
                check_client_range(client, request),
                Err(NegotiationError::OutsideClientRange {
                    requested: request,
                    client
                }),
                "{bad}"
            );
        }
    }

    #[test]
    fn optimistic_sends_the_client_maximum() {
        let client = range("2.1", "3.5");
        assert_eq!(optimistic(client, req("latest")), sent("3.5"));
        assert_eq!(optimistic(client, req("3.latest")), sent("3.5"));
        assert_eq!(
            optimistic(client, req("2.latest")),
            Ok(Negotiated::Version(Version::new(2, u32::MAX)))
        );
        assert_eq!(optimistic(client, req("2.7")), sent("2.7"));
        assert_eq!(optimistic(client, req("2")), Ok(Negotiated::NoHeader));
        assert_eq!(
            optimistic(client, VersionRequest::Unversioned),
            Ok(Negotiated::NoHeader)
        );
        assert!(matches!(
            optimistic(client, req("3.6")),
            Err(NegotiationError::OutsideClientRange { .. })
        ));
        // A narrow client range within one major.
        assert_eq!(
            optimistic(range("1.0", "1.30"), req("1.latest")),
            sent("1.30")
        );
    }
}
