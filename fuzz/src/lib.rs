//! What the fuzz targets share (not a stable API):
//!
//! - [`check_provider_query`] and [`check_candidate_query`]: placement's
//!   query-string parsers ([`placement::query`]) run on any query string,
//!   with the properties their results must have.
//! - [`Harness`]: the whole service in process (the router
//!   [`placement::app::router`] builds) on a temporary SQLite database
//!   holding a small [`fixture`], and the checks of each answer: never a
//!   5xx, no row changed by a 4xx, and a 4xx to a client that accepts JSON
//!   with an errors body of the same status. One per process: [`harness`],
//!   [`send`], [`get_with_query`].
//! - [`RouterInput`]: the byte format the `router` target reads requests
//!   in (method, target, headers, body), also written by
//!   `fuzz/seed_from_gabbi.py`.
//! - JSON as serde reads it ([`serde_reads`]), for comparison with the
//!   service's own reader, and the ASan options of the targets that link
//!   SQLite ([`asan_default_options!`]).
//!
//! Every check returns a [`Violation`] instead of panicking, so that a
//! caller can add what it knows; the fuzz targets panic with it.

use std::fmt;
use std::sync::{LazyLock, Mutex, MutexGuard};

use serde::Deserialize as _;
use serde_json::Value;

pub mod fixture;
mod input;
mod query;
mod service;

/// The body type of the requests [`Harness`] sends.
pub use axum::body::Body;
pub use input::{RouterInput, admin_request, query_string, request_target};
pub use query::{check_candidate_query, check_provider_query};
pub use service::{Answer, Harness};

/// A property of the service that an input broke: what the fuzzer looks
/// for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation(String);

impl Violation {
    fn new(message: impl Into<String>) -> Self {
        Violation(message.into())
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Violation {}

/// Fails with `message` unless `holds`.
fn ensure(holds: bool, message: impl FnOnce() -> String) -> Result<(), Violation> {
    if holds {
        Ok(())
    } else {
        Err(Violation::new(message()))
    }
}

/// The deepest nesting the service reads (Python's limit, near 1000).
pub const MAX_DEPTH: usize = 1000;

/// The deepest nesting of arrays and objects in `bytes`, strings (with
/// their escapes) skipped: an upper bound of what a parser recurses.
pub fn json_depth(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in bytes {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
    }
    deepest
}

/// `bytes` as serde reads one JSON document, without its own depth limit
/// of 128; `None` when it is not JSON or nests deeper than [`MAX_DEPTH`]
/// (not read at all: it could overflow this stack).
pub fn serde_reads(bytes: &[u8]) -> Option<Value> {
    if json_depth(bytes) > MAX_DEPTH {
        return None;
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let value = Value::deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// Defines ASan's default options (`ASAN_OPTIONS` adds to them or
/// overrides them) for a target that links SQLite: `detect_odr_violation=0`
/// first, as the amalgamation has two `static` arrays named `aiOff`, which
/// ASan's check of the one-definition rule takes for one (a false report
/// at start-up); then the target's own, given as a C string literal.
#[macro_export]
macro_rules! asan_default_options {
    ($options:literal) => {
        #[unsafe(no_mangle)]
        pub extern "C" fn __asan_default_options() -> *const std::ffi::c_char {
            $options.as_ptr()
        }
    };
}

static HARNESS: LazyLock<Mutex<Harness>> =
    LazyLock::new(|| Mutex::new(Harness::new().expect("the service starts on a fresh database")));

/// The service under test, one per process.
pub fn harness() -> MutexGuard<'static, Harness> {
    HARNESS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Sends `request` and panics on a violation of the service's rules.
pub fn send(request: http::Request<Body>) -> Answer {
    harness().send(request).unwrap_or_else(|v| panic!("{v}"))
}

/// Checks the query string `raw` with `check` (the parsers' properties),
/// then sends `GET {path}?{query}` as the admin at `version`: it must be
/// answered 200 or a 4xx, besides the service's rules.
pub fn get_with_query(
    path: &str,
    version: microversion::Version,
    raw: &[u8],
    check: fn(microversion::Version, &str) -> Result<(), Violation>,
) {
    let query = query_string(raw);
    if let Err(violation) = check(version, &query) {
        panic!("{violation}");
    }
    let target = format!("{path}?{query}");
    let Some(request) = admin_request(http::Method::GET, &target, version, None) else {
        return;
    };
    let answer = send(request);
    assert!(
        answer.status == 200 || answer.status.is_client_error(),
        "{target} at {version}: {}",
        answer.status
    );
}
