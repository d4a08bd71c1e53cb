//! The request side, rules 1 to 4, 7 and 8: how the server reads the
//! version it is asked for (case, several entries, no entry, `latest`, the
//! legacy header, numeric order), and the version headers of its answer.

use http::HeaderName;
use microversion::{Version, VersionRange};

use super::Status;
use super::catalog::CheckId;
use super::probe::Seen;
use super::run::{Runner, STD, pass_if};

impl Runner {
    /// Rule 3: without an entry for this service, the minimum; and the
    /// version headers of that answer (rules 9 and 10).
    pub(super) async fn no_entry_checks(&mut self, min: Version, other_version: Version) {
        if let Some(seen) = self.served_row(CheckId::Default, &[], min).await {
            self.default_header_rows(&seen, min);
        }
        let other_only = format!("{} {other_version}", self.expect.other_service());
        self.served_row(CheckId::OtherServiceOnly, &[(STD, &other_only)], min)
            .await;
    }

    /// Rule 4: `latest` is the maximum, named concretely; `LATEST` as the
    /// judge says.
    pub(super) async fn latest_checks(&mut self, max: Version) {
        let e = self.expect.clone();
        let latest = e.ask("latest");
        if let Some(seen) = self
            .served_row(CheckId::Latest, &[(STD, &latest)], max)
            .await
        {
            let echoed = seen.values("openstack-api-version").join(", ");
            if echoed.to_ascii_lowercase().contains("latest") {
                self.push(
                    CheckId::LatestConcrete,
                    Status::Fail,
                    format!("OpenStack-API-Version: {echoed}"),
                    e.ask(max),
                );
            } else {
                self.push(
                    CheckId::LatestConcrete,
                    Status::Pass,
                    e.headers_seen(&seen),
                    "",
                );
            }
        }
        let upper = e.ask("LATEST");
        if e.latest_any_case {
            self.served_row(CheckId::LatestAnyCase, &[(STD, &upper)], max)
                .await;
        } else {
            self.status_row(
                CheckId::LatestExactWord,
                &[(STD, &upper)],
                e.malformed_status,
            )
            .await;
        }
    }

    /// Rule 1: the service type and the header name in any case.
    pub(super) async fn case_checks(&mut self, alt: Version) {
        let e = self.expect.clone();
        let shouted = format!("{} {alt}", e.service.to_ascii_uppercase());
        self.served_row(CheckId::ServiceTypeCase, &[(STD, &shouted)], alt)
            .await;
        let plain = e.ask(alt);
        let target = self.target.clone();
        match self.prober.get_title_case(&target, &[(STD, &plain)]).await {
            Ok(seen) => {
                self.judge_served(CheckId::HeaderNameCase, &seen, alt, "Openstack-Api-Version");
            }
            Err(err) => self.no_answer(CheckId::HeaderNameCase, &err),
        }
    }

    /// Rule 2: several services, repeated headers, the last entry.
    pub(super) async fn entry_checks(&mut self, min: Version, alt: Version) {
        let e = self.expect.clone();
        let other = e.other_service();
        let plain = e.ask(alt);
        let folded = format!("{}, {other} {min}", e.ask(alt));
        self.served_row(CheckId::Folded, &[(STD, &folded)], alt)
            .await;
        let other_min = format!("{other} {min}");
        self.served_row(CheckId::Repeated, &[(STD, &plain), (STD, &other_min)], alt)
            .await;
        let first = e.ask(min);
        self.served_row(
            CheckId::RepeatedLastWins,
            &[(STD, &first), (STD, &plain)],
            alt,
        )
        .await;
        let min_then_alt = format!("{}, {}", e.ask(min), e.ask(alt));
        let alt_then_min = format!("{}, {}", e.ask(alt), e.ask(min));
        self.served_row(CheckId::LastEntryWins, &[(STD, &alt_then_min)], min)
            .await;
        self.served_row(CheckId::LastEntryWinsHigher, &[(STD, &min_then_alt)], alt)
            .await;
        let bare = format!("{}, {}", e.ask(alt), e.service);
        self.served_row(CheckId::TypeOnlySkipped, &[(STD, &bare)], alt)
            .await;
    }

    /// Rule 5's whitespace that is allowed.
    pub(super) async fn whitespace_checks(&mut self, alt: Version) {
        let service = self.expect.service.clone();
        let spaced = format!("  {service}   {alt}  ");
        self.served_row(CheckId::Whitespace, &[(STD, &spaced)], alt)
            .await;
        let tabbed = format!("{service}\t{alt}");
        self.served_row(CheckId::WhitespaceTab, &[(STD, &tabbed)], alt)
            .await;
    }

    /// Rows about the headers of the answer to no header, served at
    /// `version` (9, 10).
    fn default_header_rows(&mut self, seen: &Seen, version: Version) {
        let e = self.expect.clone();
        let mut echo = e.echo_problems(seen, Some(version));
        let status = pass_if(echo.is_empty());
        let expected = self.echo_expected(version);
        self.push(
            CheckId::EchoDefault,
            status,
            if echo.is_empty() {
                e.headers_seen(seen)
            } else {
                echo.join("; ")
            },
            expected,
        );
        echo = e.vary_problems(seen, e.vary);
        let vary_expected = if e.vary {
            format!("Vary naming {}", e.vary_names().join(", "))
        } else {
            format!("no version header in Vary ({})", e.judge)
        };
        self.push(
            CheckId::VaryDefault,
            pass_if(echo.is_empty()),
            if echo.is_empty() {
                seen.joined("vary")
                    .map_or_else(|| "no Vary".to_owned(), |v| format!("Vary: {v}"))
            } else {
                echo.join("; ")
            },
            vary_expected,
        );
        self.range_headers_row(CheckId::RangeHeadersDefault, seen);
    }

    /// Rule 10: the minimum and maximum headers of `seen`, where the judge
    /// wants them (no row otherwise).
    pub(super) fn range_headers_row(&mut self, check: CheckId, seen: &Seen) {
        let e = &self.expect;
        if e.range_headers.is_none() {
            return;
        }
        let problems = e.range_header_problems(seen);
        let status = pass_if(problems.is_empty());
        let text = if problems.is_empty() {
            e.headers_seen(seen)
        } else {
            problems.join("; ")
        };
        let expected = format!("the range in headers ({})", e.judge);
        self.push(check, status, text, expected);
    }

    /// The version headers an answer served at `version` must carry.
    pub(super) fn echo_expected(&self, version: Version) -> String {
        let e = &self.expect;
        let mut parts = Vec::new();
        if e.echo_standard {
            parts.push(format!("OpenStack-API-Version: {}", e.ask(version)));
        }
        if let (Some(legacy), true) = (&e.legacy, e.echo_legacy) {
            parts.push(format!("{legacy}: {version}"));
        }
        parts.join(", ")
    }

    /// The legacy header to check: the judge's, or, without a profile,
    /// the one the client crate knows for the service type when the server
    /// turns out to read it.
    pub(super) async fn detect_legacy(&mut self, alt: Version) -> Option<HeaderName> {
        if let Some(legacy) = &self.expect.legacy {
            return Some(legacy.clone());
        }
        if self.profile_given {
            return None;
        }
        let known = self.known_legacy.clone()?;
        let alt_text = alt.to_string();
        let target = self.target.clone();
        let reads = match self
            .prober
            .get(&target, &[(known.as_str(), &alt_text)], true)
            .await
        {
            Ok(seen) => {
                let probe = self.expect.clone().with_detected_legacy(known.clone());
                probe.served(&seen) == Some(alt)
            }
            Err(_) => false,
        };
        if reads {
            self.notes.push(format!(
                "the server reads the legacy header {known}, so it must also echo it and name \
                 it in Vary (wire.md 9)"
            ));
            self.expect = self.expect.clone().with_detected_legacy(known.clone());
            Some(known)
        } else {
            self.notes.push(format!(
                "the server does not read the legacy header {known} (it is optional)"
            ));
            None
        }
    }

    /// Rule 7: the legacy header alone, beside the standard one, folded.
    pub(super) async fn legacy_checks(&mut self, legacy: &HeaderName, min: Version, alt: Version) {
        let name = legacy.as_str();
        let (min_text, alt_text) = (min.to_string(), alt.to_string());
        self.served_row(CheckId::LegacyAlone, &[(name, &alt_text)], alt)
            .await;
        let standard = self.expect.ask(alt);
        self.served_row(
            CheckId::LegacyStandardWins,
            &[(STD, &standard), (name, &min_text)],
            alt,
        )
        .await;
        let other = format!("{} {min}", self.expect.other_service());
        self.served_row(
            CheckId::LegacyNoEntry,
            &[(STD, &other), (name, &alt_text)],
            alt,
        )
        .await;
        let folded = format!("{min}, {alt}");
        self.served_row(CheckId::LegacyFolded, &[(name, &folded)], alt)
            .await;
    }

    /// Rule 8: the range is inclusive and its order numeric.
    pub(super) async fn numeric_checks(&mut self, range: VersionRange) {
        let (min, max) = (range.min(), range.max());
        let (ask_min, ask_max) = (self.expect.ask(min), self.expect.ask(max));
        self.served_row(CheckId::InclusiveMin, &[(STD, &ask_min)], min)
            .await;
        self.served_row(CheckId::InclusiveMax, &[(STD, &ask_max)], max)
            .await;
        if let Some(v) = string_order_trap(range) {
            let ask = self.expect.ask(v);
            let check = CheckId::NumericOrder { version: v, max };
            self.served_row(check, &[(STD, &ask)], v).await;
        }
    }
}

/// A version whose text sorts above the maximum although it is below it
/// (`1.9` against `1.39`): a server comparing text refuses it.
fn string_order_trap(range: VersionRange) -> Option<Version> {
    let (min, max) = (range.min(), range.max());
    if min.major() != max.major() || max.minor() < 10 {
        return None;
    }
    let first_digit = max.minor().to_string().bytes().next()? - b'0';
    let v = Version::new(max.major(), 9);
    (first_digit < 9 && v >= min).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_order_traps() {
        let r = VersionRange::from_static;
        assert_eq!(
            string_order_trap(r("1.0", "1.39")),
            Some(Version::new(1, 9))
        );
        assert_eq!(
            string_order_trap(r("2.1", "2.104")),
            Some(Version::new(2, 9))
        );
        assert_eq!(string_order_trap(r("1.0", "1.5")), None);
        assert_eq!(string_order_trap(r("1.0", "1.95")), None);
        assert_eq!(string_order_trap(r("1.10", "1.39")), None);
        assert_eq!(string_order_trap(r("1.0", "2.39")), None);
    }
}
