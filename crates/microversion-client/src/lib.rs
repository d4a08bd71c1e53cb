//! An HTTP client for OpenStack-style microversioned APIs.
//!
//! A microversioned service (Nova, Ironic, Placement, Cinder, ...) serves
//! each request at the version it names in `OpenStack-API-Version`. A
//! client has to find out what the server supports, agree on a version with
//! it, send the right headers, and notice when the server did not honour
//! them. python-novaclient, python-ironicclient and keystoneauth1 each do
//! part of this; this crate does all of it, on reqwest:
//!
//! - **Discovery**: the endpoint's versions document in any of its four
//!   shapes, its parent on 404, the entry matching the endpoint (relative
//!   and wrong-host links normalised), servers without microversions
//!   recognised ([`Discovery`]).
//! - **Negotiation**: every case of the project's client spec, each failing
//!   with an error that names the request and both ranges; a version the
//!   user chose is never silently changed; at most one retry after a 406
//!   ([`NegotiationMode`]).
//! - **Response check**: a microversioned response without a version header
//!   means the server ignored it; the caller chooses an error or falling
//!   back to `X.0` ([`IgnoredHeader`]).
//! - **Headers**: the standard header always, the legacy one where the
//!   service reads it, service type aliases ([`header_service_type`],
//!   [`legacy_header`]).
//! - **Caching**: in memory, one discovery per endpoint shared by clones
//!   and concurrent callers ([`DiscoveryCache`]); on disk, opt-in, by the
//!   full endpoint URL, with a time-to-live and atomic writes
//!   ([`DiskCache`]).
//! - **Version gates**: a per-request version, [`RequestBuilder::require`]
//!   and [`Client::require`], and [`Versioned`] operations that pick an
//!   implementation by version.
//! - **Probing** many endpoints at once for their common range ([`Probe`]).
//! - **CLI metadata** (feature `clap`): version ranges for subcommands and
//!   options, their help suffixes and their validation (the `cli` module).
//!
//! # Example
//!
//! ```no_run
//! use microversion::VersionRange;
//! use microversion_client::{Client, DiskCache};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let compute = Client::builder()
//!     .endpoint("http://127.0.0.1:8774/v2.1")
//!     .service_type("compute")
//!     // The versions this program knows how to speak.
//!     .supported_versions(VersionRange::from_static("2.1", "2.96"))
//!     // The highest version both sides support.
//!     .version("latest")
//!     .header("x-auth-token", "admin")
//!     .disk_cache(DiskCache::new(DiskCache::default_dir().unwrap_or_else(std::env::temp_dir)))
//!     .build()?;
//!
//! // Discovers once, negotiates min(2.96, server max), sends
//! // `OpenStack-API-Version: compute 2.96` and
//! // `X-OpenStack-Nova-API-Version: 2.96`, and checks the answer names it.
//! let flavors = compute.get("flavors").send().await?.error_for_status()?;
//! println!("served at {:?}", flavors.version());
//! let body: serde_json::Value = flavors.json().await?;
//! println!("{body}");
//!
//! // One call at an exact version: fails before sending if either side
//! // does not support it, and names both ranges.
//! let keypairs = compute.get("os-keypairs").version("2.35").send().await?;
//! # let _ = keypairs;
//! # Ok(()) }
//! ```
//!
//! # Negotiation at a glance
//!
//! Let the client support `[cmin, cmax]` and the server `[smin, smax]`.
//!
//! | request | server | result |
//! |---|---|---|
//! | `X.Y` in both ranges | any | `X.Y` is sent |
//! | `X.Y` outside `[cmin, cmax]` | any | error before any request |
//! | `X.Y` outside `[smin, smax]` | discovered | error naming both ranges, nothing sent |
//! | `latest`, `X.latest` | discovered | `min(cmax, smax)` if `>= max(cmin, smin)`, else "server too old" / "too new" |
//! | `X`, `X.0`, unset | any | no header: the server's minimum |
//! | `X.Y` | no microversions | error: "the server does not support microversions" |
//! | `latest` | no microversions | no header (`X.0`) |
//!
//! In the [optimistic mode](NegotiationMode::Optimistic), nothing is discovered
//! up front: `latest` sends `cmax`, and a 406 teaches the server's range
//! (from Ironic's range headers, the API-SIG error body, or discovery)
//! before one retry.
//!
//! # TLS
//!
//! The crate enables no TLS backend of reqwest, to keep its dependencies
//! small. Enable one in your own `Cargo.toml` (`reqwest = { version =
//! "0.12", features = ["rustls-tls"] }`): cargo unifies the features, and
//! this crate's clients then speak HTTPS. Or hand a configured client to
//! [`ClientBuilder::http_client`].
//!
//! # Interoperability with the real services
//!
//! `scripts/interop-client.sh` (in the repository) installs the real
//! Placement, Nova and Ironic from `PyPI` into a private virtualenv, runs
//! them on loopback, and runs the `probe` example of this crate against
//! them: discovery, `latest`, an exact version, an out-of-range version,
//! the 406-driven mode, and probing. See the crate README for what it
//! showed.
//!
//! # Features
//!
//! - `clap`: version ranges for clap subcommands and options (the `cli`
//!   module).

#![cfg_attr(docsrs, feature(doc_cfg))]

mod auth;
mod builder;
mod cache;
#[cfg(feature = "clap")]
#[cfg_attr(docsrs, doc(cfg(feature = "clap")))]
pub mod cli;
mod client;
pub mod cloud;
pub mod config;
mod discovery;
mod error;
mod headers;
mod input;
mod probe;
mod versioned;

pub use crate::auth::Auth;
pub use crate::builder::{ClientBuilder, IgnoredHeader, NegotiationMode};
pub use crate::cache::{DiscoveryCache, DiskCache};
pub use crate::client::{Client, NegotiatedVersion, RequestBuilder, Response};
pub use crate::discovery::{Discovery, MatchedBy};
pub use crate::error::Error;
pub use crate::headers::{header_service_type, legacy_header};
pub use crate::input::{IntoVersion, IntoVersionRequest};
pub use crate::probe::{EndpointReport, Probe, ProbeReport};
pub use crate::versioned::{Versioned, VersionedBuilder};

/// The README's examples, compiled and run as doc tests so that they stay
/// true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
