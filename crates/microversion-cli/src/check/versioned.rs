//! The versioned routes: whether the checks of rules 1 to 11 can run
//! (a range, a path that reads the version, credentials), the order they
//! run in, and rule 9's unknown path.

use http::StatusCode;
use microversion::{Version, VersionRange};

use super::Status;
use super::catalog::{CheckId, NEED_TWO_VERSIONS};
use super::run::{Runner, STD, error_text};

impl Runner {
    /// The range, or why the versioned checks cannot run.
    pub(super) async fn versioned_ready(
        &mut self,
        unversioned: bool,
    ) -> Result<VersionRange, String> {
        if unversioned {
            return Err("the API version has no microversions".to_owned());
        }
        let Some(range) = self.range else {
            return Err(
                "the supported range is unknown (no versions document, no range in a 406)"
                    .to_owned(),
            );
        };
        if !self.explicit_path && self.endpoint.path() == "/" && !self.expect.root_is_versioned {
            return Err(format!(
                "{} says GET / ignores the version header: give --path with a versioned path",
                self.expect.judge
            ));
        }
        let target = self.target.clone();
        match self.prober.get(&target, &[], true).await {
            Ok(seen) if matches!(seen.status.as_u16(), 401 | 403) => Err(format!(
                "GET {} answered {}: give --token",
                target.path(),
                seen.status_text()
            )),
            Ok(seen) => {
                if seen.status.is_client_error() {
                    self.notes.push(format!(
                        "GET {} (no version header) answered {}: is --path a route of the API?",
                        target.path(),
                        seen.status_text()
                    ));
                }
                Ok(range)
            }
            Err(e) => Err(format!("GET {} failed: {}", target.path(), error_text(&e))),
        }
    }

    /// Rules 1 to 11, in order; the checks that need two versions are
    /// skipped when the range has one.
    pub(super) async fn versioned(&mut self, range: VersionRange) {
        let (min, max) = (range.min(), range.max());
        let alt = (min != max).then_some(max);
        let legacy = match alt {
            Some(alt) => self.detect_legacy(alt).await,
            None => None,
        };
        self.no_entry_checks(min, alt.unwrap_or(max)).await;
        self.latest_checks(max).await;
        let Some(alt) = alt else {
            let why = format!("needs two versions; the server supports only {min}");
            for check in NEED_TWO_VERSIONS {
                self.skip(check, &why);
            }
            self.error_checks(range).await;
            return;
        };
        self.case_checks(alt).await;
        self.entry_checks(min, alt).await;
        self.whitespace_checks(alt).await;
        if let Some(legacy) = legacy {
            self.legacy_checks(&legacy, min, alt).await;
        }
        self.numeric_checks(range).await;
        self.error_checks(range).await;
        self.unknown_path(alt).await;
    }

    /// Rule 9: a 404 at an unknown path still names the version.
    async fn unknown_path(&mut self, version: Version) {
        let mut base = self.endpoint.clone();
        if !base.path().ends_with('/') {
            base.set_path(&format!("{}/", base.path()));
        }
        let Ok(url) = base.join("microversion-check-no-such-path") else {
            return;
        };
        let ask = self.expect.ask(version);
        let seen = match self.prober.get(&url, &[(STD, &ask)], true).await {
            Ok(seen) => seen,
            Err(e) => {
                self.no_answer(CheckId::UnknownPath, &e);
                return;
            }
        };
        let problems = self.expect.served_header_problems(&seen, version);
        let mut text = format!("GET {}: {}", url.path(), seen.status_text());
        let status = if !problems.is_empty() {
            text.push_str(&format!(", {}", problems.join("; ")));
            Status::Fail
        } else if seen.status != StatusCode::NOT_FOUND {
            text.push_str(&format!(", {}", self.expect.headers_seen(&seen)));
            Status::Warn
        } else {
            text.push_str(&format!(", {}", self.expect.headers_seen(&seen)));
            Status::Pass
        };
        let expected = format!("404 with {}", self.echo_expected(version));
        self.push(CheckId::UnknownPath, status, text, expected);
    }
}
