//! Helpers shared by the integration tests and benchmarks of this
//! workspace's crates: an axum app served on a free loopback port (from
//! async and from blocking tests), a log of the requests such a server
//! received, scratch directories removed when a test ends, header maps
//! from literals, and `http` requests forwarded over real HTTP.
//!
//! Only what several crates' tests need lives here; a crate's own test
//! doubles stay in its `tests/`. Helpers panic instead of returning errors:
//! a failure to bind loopback or to make a directory fails the test.
//!
//! ```no_run
//! use axum::{Router, routing::get};
//! use microversion_test_support::{RequestLog, serve};
//!
//! # async fn example() {
//! let log = RequestLog::default();
//! let base = serve(log.recording(Router::new().route("/", get(|| async { "ok" })))).await;
//! // ... send requests to `base` ...
//! assert_eq!(log.count(&["/"]), 0);
//! # }
//! ```

mod forward;
mod headers;
pub mod keystone;
mod real_keystone;
mod request_log;
mod scratch;
mod serve;

pub use forward::forward;
pub use headers::header_map;
pub use real_keystone::RealKeystone;
pub use request_log::{RequestLog, SeenRequest};
pub use scratch::Scratch;
pub use serve::{dead_base, serve, serve_on, serve_on_own_thread};
