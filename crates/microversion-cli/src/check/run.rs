//! The driver: the state of one run, the order of the groups of checks,
//! and the few ways a check makes its row. The checks themselves live in
//! one module per group of rules: [`discovery`](super::discovery) first
//! (it gives the range every later check needs), then the
//! [`versioned`](super::versioned) routes with the
//! [`request side`](super::request_side) and the
//! [`errors`](super::errors), and last the [`request ids`](super::request_ids)
//! of every answer seen.

use http::{HeaderName, StatusCode};
use microversion::{Version, VersionRange};
use url::Url;

use super::catalog::{CheckId, NEED_A_RANGE};
use super::expect::Expect;
use super::probe::{Headers, Prober, Seen, describe, status_text};
use super::{Row, Status};
use crate::error::Error;

/// The standard header's name, as the checker sends it.
pub(super) const STD: &str = "OpenStack-API-Version";

/// The state of one check run.
pub(crate) struct Runner {
    pub(crate) expect: Expect,
    pub(crate) prober: Prober,
    pub(crate) endpoint: Url,
    pub(crate) target: Url,
    /// The target was given with `--path`.
    pub(crate) explicit_path: bool,
    /// A profile was given (else the legacy header is detected).
    pub(crate) profile_given: bool,
    /// The legacy header the client crate knows for the service type.
    pub(crate) known_legacy: Option<HeaderName>,
    pub(crate) rows: Vec<Row>,
    pub(crate) notes: Vec<String>,
    pub(crate) range: Option<VersionRange>,
    pub(crate) range_source: Option<String>,
}

impl Runner {
    /// Runs every check. Fails only when the server cannot be reached.
    pub(crate) async fn run(mut self) -> Result<super::Report, Error> {
        let document = self.discovery().await?;
        let mut unversioned = false;
        if let Some(doc) = &document {
            unversioned = self.select(doc).await;
            self.legacy_roots(doc).await;
        }
        if self.range.is_none() && !unversioned {
            self.learn_from_406().await;
        }
        if let Some(range) = self.range {
            self.expect = self.expect.clone().with_range(range);
        }
        self.root_reads_the_header().await;
        match self.versioned_ready(unversioned).await {
            Ok(range) => self.versioned(range).await,
            Err(why) => {
                for check in NEED_A_RANGE {
                    self.skip(check, &why);
                }
            }
        }
        self.request_ids();
        self.rows.sort_by_key(|r| r.rule);
        Ok(super::Report {
            endpoint: self.endpoint.to_string(),
            target: self.target.to_string(),
            service_type: self.expect.service.clone(),
            judge: self.expect.judge.clone(),
            range: self.range,
            range_source: self.range_source,
            notes: self.notes,
            rows: self.rows,
        })
    }

    /// Adds the row of `check`.
    pub(super) fn push(
        &mut self,
        check: CheckId,
        status: Status,
        seen: impl Into<String>,
        expected: impl Into<String>,
    ) {
        // One line each: answers may carry newlines (webob's messages do).
        let line = |text: String| text.split_whitespace().collect::<Vec<_>>().join(" ");
        let (rule, id, title) = check.describe();
        self.rows.push(Row {
            rule,
            id: id.into_owned(),
            title: title.into_owned(),
            status,
            seen: line(seen.into()),
            expected: line(expected.into()),
        });
    }

    /// Adds a SKIP row saying why `check` could not run.
    pub(super) fn skip(&mut self, check: CheckId, why: &str) {
        self.push(check, Status::Skip, why, "");
    }

    /// Adds a FAIL row for a request that got no answer.
    pub(super) fn no_answer(&mut self, check: CheckId, e: &reqwest::Error) {
        let text = format!("no answer: {}", error_text(e));
        self.push(check, Status::Fail, text, "an answer");
    }

    /// Sends `headers` to the target and checks the version served.
    pub(super) async fn served_row(
        &mut self,
        check: CheckId,
        headers: Headers<'_>,
        want: Version,
    ) -> Option<Seen> {
        let target = self.target.clone();
        match self.prober.get(&target, headers, true).await {
            Ok(seen) => {
                let sent = describe(&target, headers);
                self.judge_served(check, &seen, want, &sent);
                Some(seen)
            }
            Err(e) => {
                self.no_answer(check, &e);
                None
            }
        }
    }

    /// Checks that `seen`, the answer to `sent`, served `want`.
    pub(super) fn judge_served(&mut self, check: CheckId, seen: &Seen, want: Version, sent: &str) {
        let served = self.expect.served(seen);
        let refused = matches!(seen.status.as_u16(), 400 | 406) || seen.status.is_server_error();
        let status = pass_if(served == Some(want) && !refused);
        let text = match served {
            Some(v) => format!("{}, served {v}", seen.status_text()),
            None => format!("{}, no version named", seen.status_text()),
        };
        let text = if status == Status::Fail {
            format!("{text} (sent {sent})")
        } else {
            text
        };
        self.push(check, status, text, format!("version {want}"));
    }

    /// Sends `headers` and checks the status only.
    pub(super) async fn status_row(
        &mut self,
        check: CheckId,
        headers: Headers<'_>,
        want: StatusCode,
    ) -> Option<Seen> {
        let target = self.target.clone();
        match self.prober.get(&target, headers, true).await {
            Ok(seen) => {
                let status = pass_if(seen.status == want);
                let mut text = seen.status_text();
                if let Some(v) = self.expect.served(&seen) {
                    let verb = if seen.status.is_success() {
                        "served"
                    } else {
                        "names"
                    };
                    text.push_str(&format!(", {verb} {v}"));
                }
                let expected = format!("{} ({})", status_text(want), self.expect.judge);
                self.push(check, status, text, expected);
                Some(seen)
            }
            Err(e) => {
                self.no_answer(check, &e);
                None
            }
        }
    }
}

pub(super) fn pass_if(ok: bool) -> Status {
    if ok { Status::Pass } else { Status::Fail }
}

/// An error and its causes, on one line.
pub(super) fn error_text(e: &reqwest::Error) -> String {
    crate::error::chain(e.to_string(), std::error::Error::source(e))
}
