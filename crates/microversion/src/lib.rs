//! OpenStack-style API microversions, without I/O.
//!
//! A microversioned HTTP API evolves one small step at a time: each request
//! names the version it wants (`OpenStack-API-Version: placement 1.20`), and
//! the server answers with exactly that version's behaviour. This crate
//! holds the rules both sides share:
//!
//! - [`Version`]: `X.Y`, ordered numerically, parsed by one strict grammar;
//! - [`VersionRequest`]: what a client user asks for (`2.10`, `2.latest`,
//!   `latest`, `2`, `None`);
//! - [`VersionRange`]: an inclusive range, and resolving a request in it;
//! - [`VersionSpan`]: the versions a route, schema or client operation
//!   exists at (`1.0 - 1.4`, `1.5 - latest`, `all`);
//! - [`Change`]: one microversion as a `const` value, its version and what
//!   it changed, that spans are made from;
//! - [`VersionHeader`]: the `OpenStack-API-Version` header codec and the
//!   legacy per-service headers;
//! - [`negotiate`]: a client's choice of version from both sides' ranges;
//! - [`document`]: the versions document of `GET /` and the API-SIG error
//!   body (serialized with the `serde` feature);
//! - [`Profile`]: the observable behaviour of real servers (`api-sig`,
//!   `placement`, `nova`, `ironic`, `cinder`) as [`Rules`] that servers
//!   follow and checkers expect.
//!
//! No input makes any of it panic: bad text is an error that quotes it and
//! says what is accepted.
//!
//! # Example: a server resolving a request
//!
//! ```
//! use http::HeaderMap;
//! use microversion::{Decoded, Version, VersionHeader, VersionRange, OPENSTACK_API_VERSION};
//!
//! let supported = VersionRange::from_static("1.0", "1.39");
//! let codec = VersionHeader::new("placement");
//!
//! let mut headers = HeaderMap::new();
//! headers.append(OPENSTACK_API_VERSION, "compute 2.1, placement latest".parse()?);
//!
//! let served = match codec.decode(headers.get_all(OPENSTACK_API_VERSION)) {
//!     Decoded::Absent => supported.min(),
//!     Decoded::Present(requested) => supported.resolve(requested)?, // 406 on error
//!     Decoded::Malformed(bad) => return Err(bad.error().into()),   // 400
//! };
//! assert_eq!(served, Version::new(1, 39));
//! assert_eq!(codec.encode(served), "placement 1.39");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Example: a client choosing a version
//!
//! ```
//! use microversion::{negotiate, Negotiated, ServerVersions, Version, VersionRange, VersionRequest};
//!
//! let client = VersionRange::from_static("1.0", "1.30");
//! let server = ServerVersions::Microversions(VersionRange::from_static("1.0", "1.39"));
//! let wanted = VersionRequest::parse_cli("latest")?;
//! assert_eq!(negotiate(client, server, wanted)?, Negotiated::Version(Version::new(1, 30)));
//!
//! let err = negotiate(client, server, "1.35".parse()?).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "version 1.35 is outside the range this client supports (1.0 - 1.30)"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! - `serde`: `Serialize` and `Deserialize` for versions, requests, spans, the
//!   versions document (all four shapes servers send) and the error body.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod change;
pub mod document;
mod error;
mod header;
mod negotiate;
pub mod profile;
mod range;
mod request;
#[cfg(feature = "serde")]
mod serde;
mod span;
mod version;

pub use crate::change::Change;
pub use crate::document::{ApiVersion, ErrorBody, ErrorEntry, VersionStatus, VersionsDocument};
pub use crate::error::{
    Error, InvalidRange, InvalidVersion, InvalidVersionRequest, InvalidVersionSpan,
    UnsupportedVersion,
};
pub use crate::header::{
    Decoded, InvalidServiceType, Malformed, OPENSTACK_API_VERSION, RequestedVersion, VersionHeader,
};
pub use crate::negotiate::{
    Negotiated, NegotiationError, ServerVersions, check_client_range, negotiate, optimistic,
};
pub use crate::profile::{Profile, Rules, UnknownProfile};
pub use crate::range::VersionRange;
pub use crate::request::VersionRequest;
pub use crate::span::VersionSpan;
pub use crate::version::Version;

/// The README's examples, compiled and run as doc tests so that they stay
/// true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
