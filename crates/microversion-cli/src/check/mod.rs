//! The conformance checker: every rule of docs/wire.md that can be observed
//! from outside, checked against a running server.
//!
//! The checker reads the versions document (docs/wire.md 12; the versioned root
//! of 13 when the entry has one) and learns the supported range from it, or
//! from a 406 when there is none. It then sends raw requests with
//! deliberately odd headers to a versioned path and compares each answer
//! with what the judge expects: a profile's [`Rules`], the core crate's
//! single source of what each profile promises, or docs/wire.md as written
//! (the `api-sig` rules) without one.
//!
//! | rule | what is sent | what must come back |
//! |---|---|---|
//! | 1 | the service type upper-cased; the header name in title case | the version asked |
//! | 2 | several services in one header; repeated lines; the same service twice; a type without a version | the last entry for this service |
//! | 3 | no header; only another service | the minimum |
//! | 4 | `latest`; `LATEST` | the maximum, named concretely; `LATEST` as the judge says |
//! | 5 | `1.01`, `01.1`, `1`, `1.`, `1.2.3`, `-1.5`, `1.a`, `pony.horse`, 30 digits, `+1.1`, `1.1_0`; outer and inner whitespace | 400 (the judge's status); whitespace is allowed |
//! | 6 | the maximum + 0.1; the minimum - 0.1; `0.5` | 406 |
//! | 7 | the legacy header alone, beside the standard one, folded | the standard header wins; the legacy one counts without it |
//! | 8 | the minimum, the maximum, `X.9` below `X.39` | served: the range is inclusive and numeric |
//! | 9 | every answer above, and a 404 at an unknown path | the version headers and `Vary` the judge names |
//! | 10 | the 406 | the range in its body (and headers, for Ironic) |
//! | 11 | every answer | the judge's error body; `x-openstack-request-id` (and the profile's aliases) |
//! | 12 | `GET /` without credentials; with a malformed version | the versions document; whether `/` is versioned |
//! | 13 | the entry's `self` link, when it is a root of its own | `{"version": {...}}` with the same range |
//!
//! Each check is a [`Row`]: PASS, FAIL or WARN (the server departs from a
//! recommendation clients cope with), or SKIP when the check cannot run
//! (no range, a path that needs a token, a single supported version).
//!
//! ```no_run
//! use microversion_cli::check::{Check, Status};
//! use microversion::Profile;
//!
//! # async fn run() -> Result<(), microversion_cli::Error> {
//! let report = Check::new("http://127.0.0.1:8774/", "compute")
//!     .profile(Profile::Nova)
//!     .path("/v2.1/flavors")
//!     .token("admin")
//!     .run()
//!     .await?;
//! for row in report.rows().iter().filter(|r| r.status() == Status::Fail) {
//!     println!("rule {}: {}: {}", row.rule(), row.title(), row.seen());
//! }
//! print!("{}", report.to_table());
//! # Ok(()) }
//! ```
//!
//! [`Rules`]: microversion::Rules

mod catalog;
mod discovery;
mod errors;
mod expect;
mod probe;
mod render;
mod request_ids;
mod request_side;
mod run;
mod versioned;

use std::fmt;
use std::time::Duration;

use microversion::Profile;
use microversion::{VersionHeader, VersionRange};

use crate::error::Error;
use crate::net;

/// The outcome of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Status {
    /// The server does what the judge expects.
    Pass,
    /// It does not.
    Fail,
    /// It departs from a recommendation that clients cope with.
    Warn,
    /// The check could not run.
    Skip,
}

impl Status {
    /// `PASS`, `FAIL`, `WARN` or `SKIP`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Warn => "WARN",
            Status::Skip => "SKIP",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One check: the rule of docs/wire.md it belongs to, what was seen, and what
/// was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    rule: u8,
    id: String,
    title: String,
    status: Status,
    seen: String,
    expected: String,
}

impl Row {
    /// The number of the rule in docs/wire.md (1 to 13).
    #[must_use]
    pub fn rule(&self) -> u8 {
        self.rule
    }

    /// A stable identifier, such as `last-entry-wins` or
    /// `malformed 1.01`.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What is checked, in a few words.
    #[must_use]
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The outcome.
    #[must_use]
    pub fn status(&self) -> Status {
        self.status
    }

    /// What the server did (for a SKIP: why the check did not run).
    #[must_use]
    pub fn seen(&self) -> &str {
        &self.seen
    }

    /// What was expected (empty when the check passed without more to
    /// say).
    #[must_use]
    pub fn expected(&self) -> &str {
        &self.expected
    }
}

/// Everything a check run found.
#[derive(Clone, Debug)]
pub struct Report {
    endpoint: String,
    target: String,
    service_type: String,
    judge: String,
    range: Option<VersionRange>,
    range_source: Option<String>,
    notes: Vec<String>,
    rows: Vec<Row>,
}

impl Report {
    /// The rows, by rule number.
    #[must_use]
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The row with this id, if any.
    #[must_use]
    pub fn row(&self, id: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.id == id)
    }

    /// How many rows have `status`.
    #[must_use]
    pub fn count(&self, status: Status) -> usize {
        self.rows.iter().filter(|r| r.status == status).count()
    }

    /// Whether some check failed.
    #[must_use]
    pub fn has_failures(&self) -> bool {
        self.count(Status::Fail) > 0
    }

    /// The range the checks used, when it was learned.
    #[must_use]
    pub fn range(&self) -> Option<VersionRange> {
        self.range
    }

    /// What the checks were judged against: "wire.md" or "the nova
    /// profile".
    #[must_use]
    pub fn judge(&self) -> &str {
        &self.judge
    }

    /// Facts learned on the way that are not checks (where the range came
    /// from, whether a legacy header is read, ...).
    #[must_use]
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}

/// A check run to be made: the endpoint, the service type and options.
#[derive(Clone, Debug)]
#[must_use]
pub struct Check {
    endpoint: String,
    service_type: String,
    profile: Option<Profile>,
    token: Option<String>,
    path: Option<String>,
    timeout: Duration,
    env_proxy: bool,
}

impl Check {
    /// Checks the server whose versions document is at `endpoint`, for the
    /// service type it answers to.
    pub fn new(endpoint: impl Into<String>, service_type: impl Into<String>) -> Self {
        Check {
            endpoint: endpoint.into(),
            service_type: service_type.into(),
            profile: None,
            token: None,
            path: None,
            timeout: Duration::from_secs(30),
            env_proxy: true,
        }
    }

    /// Judges against this profile's documented behaviour instead of
    /// docs/wire.md.
    pub fn profile(mut self, profile: Profile) -> Self {
        self.profile = Some(profile);
        self
    }

    /// Sends `X-Auth-Token` (except to the versions document).
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// The versioned path to send the version headers to, resolved against
    /// the endpoint (default: the endpoint itself).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The time limit of each request (default 30 seconds).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Ignores the proxy settings of the environment (`HTTP_PROXY`, ...).
    pub fn no_proxy(mut self) -> Self {
        self.env_proxy = false;
        self
    }

    /// Runs every check.
    ///
    /// A server that answers badly makes FAIL rows, not an error.
    ///
    /// # Errors
    ///
    /// Returns an error for an invalid URL, path, service type or token,
    /// or when the server cannot be reached at all.
    pub async fn run(self) -> Result<Report, Error> {
        let endpoint = net::parse_url(&self.endpoint)?;
        let codec = VersionHeader::try_new(self.service_type.trim()).map_err(|e| {
            Error::with_source(format!("invalid service type {:?}", self.service_type), e)
        })?;
        let target = match &self.path {
            Some(path) => {
                let target = endpoint
                    .join(path.trim())
                    .map_err(|e| Error::with_source(format!("invalid path {path:?}"), e))?;
                if target.origin() != endpoint.origin() {
                    return Err(Error::new(format!(
                        "--path {path:?} leads to another server than {endpoint}"
                    )));
                }
                target
            }
            None => endpoint.clone(),
        };
        let token = self.token.as_deref().map(net::token_value).transpose()?;
        let http = net::http_client(self.timeout, self.env_proxy, false)?;
        let title_case = net::http_client(self.timeout, self.env_proxy, true)?;
        let known_legacy = microversion_client::legacy_header(codec.service_type());
        let runner = run::Runner {
            expect: expect::Expect::new(codec, self.profile),
            prober: probe::Prober::new(http, title_case, token),
            endpoint,
            target,
            explicit_path: self.path.is_some(),
            profile_given: self.profile.is_some(),
            known_legacy,
            rows: Vec::new(),
            notes: Vec::new(),
            range: None,
            range_source: None,
        };
        runner.run().await
    }
}
