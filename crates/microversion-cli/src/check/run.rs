//! The checks, in the order they run: discovery first (it gives the range
//! every later check needs), then the request side, then the answers to
//! errors.

use http::{HeaderName, StatusCode};
use microversion::{ServerVersions, Version, VersionRange, VersionsDocument};
use serde_json::Value;
use url::Url;

use super::expect::{BodyShape, ErrorHeaders, Expect};
use super::probe::{Headers, Prober, Seen, describe, status_text};
use super::{Row, Status};
use crate::error::Error;

/// The standard header's name, as the checker sends it.
const STD: &str = "OpenStack-API-Version";

/// What the versions document gave.
struct Document {
    url: Url,
    raw: Value,
    parsed: VersionsDocument,
}

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
    fn push(
        &mut self,
        rule: u8,
        id: impl Into<String>,
        title: impl Into<String>,
        status: Status,
        seen: impl Into<String>,
        expected: impl Into<String>,
    ) {
        // One line each: answers may carry newlines (webob's messages do).
        let line = |text: String| text.split_whitespace().collect::<Vec<_>>().join(" ");
        self.rows.push(Row {
            rule,
            id: id.into(),
            title: title.into(),
            status,
            seen: line(seen.into()),
            expected: line(expected.into()),
        });
    }

    fn skip(&mut self, rule: u8, id: &str, title: &str, why: &str) {
        self.push(rule, id, title, Status::Skip, why, "");
    }

    /// Runs every check. Fails only when the server cannot be reached.
    pub(crate) async fn run(mut self) -> Result<super::Report, Error> {
        let document = self.discovery().await?;
        let mut unversioned = false;
        if let Some(doc) = &document {
            unversioned = self.select(doc).await;
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
                for (rule, id, title) in VERSIONED_CHECKS {
                    self.skip(*rule, id, title, &why);
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

    // --- Discovery: wire.md 12 and 13 ---

    /// Reads the versions document at the endpoint (its parent on 404).
    async fn discovery(&mut self) -> Result<Option<Document>, Error> {
        let mut url = self.endpoint.clone();
        let mut seen = self.fetch_document(&url).await?;
        if seen.status == StatusCode::NOT_FOUND {
            if let Some(parent) = parent_url(&url) {
                let answer = self.fetch_document(&parent).await?;
                if answer.status != StatusCode::NOT_FOUND {
                    self.notes.push(format!(
                        "{url} answered 404; the versions document is read from {parent}"
                    ));
                    url = parent;
                    seen = answer;
                }
            }
        }
        let title = "versions document";
        if !(seen.status.is_success() || seen.status == StatusCode::MULTIPLE_CHOICES) {
            self.push(
                12,
                "versions-document",
                title,
                Status::Fail,
                format!("GET {url} answered {}", seen.status_text()),
                "200 with the versions document",
            );
            return Ok(None);
        }
        let Some(raw) = seen.json() else {
            self.push(
                12,
                "versions-document",
                title,
                Status::Fail,
                format!("GET {url} answered {} that is not JSON", seen.status_text()),
                "a JSON versions document",
            );
            return Ok(None);
        };
        let parsed: VersionsDocument = match serde_json::from_value(raw.clone()) {
            Ok(doc) => doc,
            Err(e) => {
                self.push(
                    12,
                    "versions-document",
                    title,
                    Status::Fail,
                    format!("not a versions document: {e}"),
                    "{\"versions\": [{\"id\", \"status\", \"min_version\", \"max_version\", ...}]}",
                );
                return Ok(None);
            }
        };
        let summary: Vec<String> = parsed
            .versions
            .iter()
            .map(|v| match v.microversions() {
                Some(r) => format!("{} {} {r}", v.id, v.status),
                None => format!("{} {} without microversions", v.id, v.status),
            })
            .collect();
        let shape = if raw.get("versions").is_some_and(Value::is_array) {
            Shape::List
        } else if raw.get("versions").is_some() {
            Shape::Values
        } else if raw.get("version").is_some_and(Value::is_object) {
            Shape::Root
        } else {
            Shape::Bare
        };
        let seen_text = format!("{}: {}", seen.status_text(), summary.join("; "));
        let expected = "{\"versions\": [...]} (wire.md 12)";
        match shape {
            Shape::List if parsed.versions.is_empty() => self.push(
                12,
                "versions-document",
                title,
                Status::Fail,
                "an empty \"versions\" list",
                "at least one API version",
            ),
            Shape::List => self.push(12, "versions-document", title, Status::Pass, seen_text, ""),
            Shape::Root => self.push(
                12,
                "versions-document",
                title,
                Status::Warn,
                format!("{seen_text} (a versioned root's {{\"version\": ...}}, not the list)"),
                expected,
            ),
            Shape::Values | Shape::Bare => self.push(
                12,
                "versions-document",
                title,
                Status::Warn,
                format!("{seen_text} (another shape than a \"versions\" list)"),
                expected,
            ),
        }
        if parsed.versions.is_empty() {
            return Ok(None);
        }
        let entries = raw_entries(&raw);
        if shape != Shape::Root {
            self.statuses(&parsed);
        }
        self.version_fields(&entries);
        self.self_links(&entries);
        if shape == Shape::Root {
            self.root_document_fields(&raw, "document");
        }
        Ok(Some(Document { url, raw, parsed }))
    }

    /// GETs a versions document without credentials, and again with them
    /// if it asks for them (a failure of wire.md 12).
    async fn fetch_document(&mut self, url: &Url) -> Result<Seen, Error> {
        let seen = self
            .prober
            .get(url, &[], false)
            .await
            .map_err(|e| Error::with_source(format!("cannot reach {url}"), e))?;
        let title = "versions document without credentials";
        if matches!(seen.status.as_u16(), 401 | 403) {
            self.push(
                12,
                "versions-document-unauthenticated",
                title,
                Status::Fail,
                format!("GET {url} answered {}", seen.status_text()),
                "GET / answers without credentials",
            );
            return self
                .prober
                .get(url, &[], true)
                .await
                .map_err(|e| Error::with_source(format!("cannot reach {url}"), e));
        }
        if seen.status.is_success() || seen.status == StatusCode::MULTIPLE_CHOICES {
            self.push(
                12,
                "versions-document-unauthenticated",
                title,
                Status::Pass,
                format!("GET {url} answered {}", seen.status_text()),
                "",
            );
        }
        Ok(seen)
    }

    /// Statuses are known words, and exactly one entry is CURRENT.
    fn statuses(&mut self, doc: &VersionsDocument) {
        let known = ["CURRENT", "SUPPORTED", "DEPRECATED", "EXPERIMENTAL"];
        let statuses: Vec<String> = doc.versions.iter().map(|v| v.status.to_string()).collect();
        let unknown: Vec<&String> = statuses
            .iter()
            .filter(|s| !known.contains(&s.as_str()))
            .collect();
        let current = statuses.iter().filter(|s| *s == "CURRENT").count();
        let seen = format!("statuses {}", statuses.join(", "));
        let expected = "one of CURRENT, SUPPORTED, DEPRECATED, EXPERIMENTAL; exactly one CURRENT";
        let status = if unknown.is_empty() && current == 1 {
            Status::Pass
        } else {
            Status::Fail
        };
        self.push(
            12,
            "versions-document-statuses",
            "version statuses, exactly one CURRENT",
            status,
            seen,
            expected,
        );
    }

    /// Both `version` and `max_version`, and empty strings without
    /// microversions.
    fn version_fields(&mut self, entries: &[Value]) {
        let mut problems = Vec::new();
        let mut warnings = Vec::new();
        for entry in entries {
            let id = entry.get("id").and_then(Value::as_str).unwrap_or("?");
            let text = |k: &str| entry.get(k).and_then(Value::as_str).map(str::to_owned);
            let (min, max, version) = (text("min_version"), text("max_version"), text("version"));
            let microversioned = [&min, &max, &version]
                .iter()
                .any(|v| v.as_deref().is_some_and(|s| !s.is_empty()));
            if microversioned {
                match (&max, &version) {
                    (Some(m), Some(v)) if m != v => {
                        problems.push(format!("{id}: max_version {m:?} but version {v:?}"));
                    }
                    (Some(_), Some(_)) => {}
                    (Some(_), None) => warnings.push(format!("{id}: max_version only")),
                    (None, Some(_)) => warnings.push(format!("{id}: version only")),
                    (None, None) => problems.push(format!("{id}: neither version nor max_version")),
                }
                if min.as_deref().is_none_or(str::is_empty) {
                    problems.push(format!("{id}: no min_version"));
                }
            } else if min.is_none() || version.is_none() {
                warnings.push(format!(
                    "{id}: without microversions, min_version and version should be \"\""
                ));
            }
        }
        let expected = "min_version and both max_version and version (older clients read version)";
        let (status, seen) = if !problems.is_empty() {
            (Status::Fail, problems.join("; "))
        } else if !warnings.is_empty() {
            (Status::Warn, warnings.join("; "))
        } else {
            (
                Status::Pass,
                "min_version, max_version and version".to_owned(),
            )
        };
        self.push(
            12,
            "versions-document-fields",
            "version range fields",
            status,
            seen,
            expected,
        );
    }

    fn self_links(&mut self, entries: &[Value]) {
        let missing: Vec<&str> = entries
            .iter()
            .filter(|e| {
                !e.get("links")
                    .and_then(Value::as_array)
                    .is_some_and(|links| {
                        links
                            .iter()
                            .any(|l| l.get("rel").and_then(Value::as_str) == Some("self"))
                    })
            })
            .map(|e| e.get("id").and_then(Value::as_str).unwrap_or("?"))
            .collect();
        let (status, seen) = if missing.is_empty() {
            (Status::Pass, "every entry has a self link".to_owned())
        } else {
            (
                Status::Warn,
                format!("no self link: {}", missing.join(", ")),
            )
        };
        self.push(
            12,
            "versions-document-links",
            "self links",
            status,
            seen,
            "links with rel \"self\" (clients match them to the endpoint)",
        );
    }

    /// A versioned root's document: `{"version": {...}}` with media types.
    fn root_document_fields(&mut self, raw: &Value, what: &str) -> bool {
        let Some(entry) = raw.get("version").filter(|v| v.is_object()) else {
            self.push(
                13,
                "versioned-root",
                "versioned root document",
                Status::Fail,
                format!("the {what} is not {{\"version\": {{...}}}}"),
                "{\"version\": {...}} (wire.md 13)",
            );
            return false;
        };
        let media = entry
            .get("media-types")
            .and_then(Value::as_array)
            .is_some_and(|m| !m.is_empty());
        let id = entry.get("id").and_then(Value::as_str).unwrap_or("?");
        if media {
            self.push(
                13,
                "versioned-root",
                "versioned root document",
                Status::Pass,
                format!("{{\"version\": {{\"id\": {id:?}, ..., \"media-types\": [...]}}}}"),
                "",
            );
        } else {
            self.push(
                13,
                "versioned-root",
                "versioned root document",
                Status::Warn,
                format!("{{\"version\": {{\"id\": {id:?}, ...}}}} without media-types"),
                "the fields of the versions document plus media-types",
            );
        }
        true
    }

    /// Picks the endpoint's entry, as clients do, and checks its
    /// versioned root. Returns whether the API has no microversions.
    async fn select(&mut self, doc: &Document) -> bool {
        let discovery = match microversion_client::Discovery::from_document(
            &self.endpoint,
            &doc.url,
            doc.parsed.clone(),
        ) {
            Ok(d) => d,
            Err(e) => {
                self.notes
                    .push(format!("no API version can be picked: {e}"));
                return false;
            }
        };
        let entry = discovery.selected().clone();
        match discovery.server_versions() {
            ServerVersions::Microversions(range) => {
                self.range = Some(range);
                self.range_source = Some(format!(
                    "the versions document ({} {}, by {})",
                    entry.id,
                    entry.status,
                    discovery.matched_by()
                ));
            }
            ServerVersions::Unversioned => {
                self.notes.push(format!(
                    "the API version {} has no microversions: the version checks do not apply",
                    entry.id
                ));
                return true;
            }
        }
        // wire.md 13: the entry's own root, when it is elsewhere.
        if doc.raw.get("version").is_some() {
            return false;
        }
        let Some(link) = entry.self_link().and_then(|l| Url::parse(l).ok()) else {
            return false;
        };
        if link.path().trim_end_matches('/') == doc.url.path().trim_end_matches('/') {
            self.notes.push(format!(
                "{} has no versioned root of its own (its self link is the versions document)",
                entry.id
            ));
            return false;
        }
        match self.prober.get(&link, &[], false).await {
            Ok(seen) if seen.status.is_success() => {
                let raw = seen.json().unwrap_or(Value::Null);
                if self.root_document_fields(&raw, &format!("answer of {link}")) {
                    let root: Option<VersionsDocument> = serde_json::from_value(raw).ok();
                    let root_range = root
                        .as_ref()
                        .and_then(|d| d.versions.first())
                        .and_then(microversion::ApiVersion::microversions);
                    let status = if root_range == entry.microversions() {
                        Status::Pass
                    } else {
                        Status::Fail
                    };
                    self.push(
                        13,
                        "versioned-root-range",
                        "versioned root names the same range",
                        status,
                        format!(
                            "{link}: {}",
                            root_range.map_or_else(|| "no range".to_owned(), |r| r.to_string())
                        ),
                        entry
                            .microversions()
                            .map_or_else(|| "no range".to_owned(), |r| r.to_string()),
                    );
                }
            }
            Ok(seen) => self.push(
                13,
                "versioned-root",
                "versioned root document",
                Status::Fail,
                format!("GET {link} answered {}", seen.status_text()),
                "200 with {\"version\": {...}}",
            ),
            Err(e) => self.push(
                13,
                "versioned-root",
                "versioned root document",
                Status::Fail,
                format!("GET {link} failed: {}", error_text(&e)),
                "200 with {\"version\": {...}}",
            ),
        }
        false
    }

    /// Without a range from discovery, asks for a version no server has
    /// and reads the range from the 406 (wire.md 10).
    async fn learn_from_406(&mut self) {
        let ask = self.expect.ask("99999.99999");
        let headers = [(STD, ask.as_str())];
        let Ok(seen) = self.prober.get(&self.target.clone(), &headers, true).await else {
            return;
        };
        if seen.status != StatusCode::NOT_ACCEPTABLE {
            return;
        }
        if let Some(range) = range_from_406(&seen) {
            self.range = Some(range);
            self.range_source = Some("a 406 answer (no usable versions document)".to_owned());
        }
    }

    /// wire.md 12 and the profiles: whether `GET /` reads the header.
    async fn root_reads_the_header(&mut self) {
        if self.endpoint.path() != "/" {
            return;
        }
        let ask = self.expect.ask("pony.horse");
        let headers = [(STD, ask.as_str())];
        let root = self.endpoint.clone();
        let title = if self.expect.root_is_versioned {
            "GET / reads the version header"
        } else {
            "GET / ignores the version header"
        };
        let seen = match self.prober.get(&root, &headers, false).await {
            Ok(seen) => seen,
            Err(e) => {
                self.no_answer(12, "root-versioned", title, &e);
                return;
            }
        };
        let text = format!(
            "{} to a malformed version, {}",
            seen.status_text(),
            self.expect.headers_seen(&seen)
        );
        if self.expect.root_is_versioned {
            let want = self.malformed_status_for("pony.horse");
            let status = pass_if(seen.status == want);
            self.push(
                12,
                "root-versioned",
                title,
                status,
                text,
                format!("{} ({})", status_text(want), self.expect.judge),
            );
        } else {
            let problems = self.expect.echo_problems(&seen, None);
            let status = pass_if(seen.status.is_success() && problems.is_empty());
            self.push(
                12,
                "root-versioned",
                title,
                status,
                text,
                format!("200 without version headers ({})", self.expect.judge),
            );
        }
    }

    /// The range, or why the versioned checks cannot run.
    async fn versioned_ready(&mut self, unversioned: bool) -> Result<VersionRange, String> {
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

    fn no_answer(&mut self, rule: u8, id: &str, title: &str, e: &reqwest::Error) {
        let text = format!("no answer: {}", error_text(e));
        self.push(rule, id, title, Status::Fail, text, "an answer");
    }

    // --- The versioned checks: wire.md 1 to 11 ---

    async fn versioned(&mut self, range: VersionRange) {
        let (min, max) = (range.min(), range.max());
        let alt = (min != max).then_some(max);
        let legacy = match alt {
            Some(alt) => self.detect_legacy(alt).await,
            None => None,
        };
        let other = self.expect.other_service();
        let e = self.expect.clone();

        // 3: the default.
        if let Some(seen) = self
            .served_row(3, "default", "no header: the minimum", &[], min)
            .await
        {
            self.header_rows(&seen, min, "default");
        }
        let other_only = format!("{other} {}", alt.unwrap_or(max));
        self.served_row(
            3,
            "other-service-only",
            "no entry for this service: the minimum",
            &[(STD, &other_only)],
            min,
        )
        .await;

        // 4: latest.
        let latest = e.ask("latest");
        if let Some(seen) = self
            .served_row(4, "latest", "latest: the maximum", &[(STD, &latest)], max)
            .await
        {
            let echoed = seen.values("openstack-api-version").join(", ");
            if echoed.to_ascii_lowercase().contains("latest") {
                self.push(
                    4,
                    "latest-concrete",
                    "latest is answered with the concrete version",
                    Status::Fail,
                    format!("OpenStack-API-Version: {echoed}"),
                    e.ask(max),
                );
            } else {
                self.push(
                    4,
                    "latest-concrete",
                    "latest is answered with the concrete version",
                    Status::Pass,
                    e.headers_seen(&seen),
                    "",
                );
            }
        }
        let upper = e.ask("LATEST");
        if e.latest_any_case {
            self.served_row(
                4,
                "latest-case",
                "LATEST means latest (any case)",
                &[(STD, &upper)],
                max,
            )
            .await;
        } else {
            self.status_row(
                4,
                "latest-case",
                "LATEST is not the exact word latest",
                &[(STD, &upper)],
                e.malformed_status,
            )
            .await;
        }

        let Some(alt) = alt else {
            for (rule, id, title) in TWO_VERSION_CHECKS {
                self.skip(
                    *rule,
                    id,
                    title,
                    &format!("needs two versions; the server supports only {min}"),
                );
            }
            self.error_checks(range).await;
            return;
        };

        // 1: case-insensitive service type and header name.
        let shouted = format!("{} {alt}", e.service.to_ascii_uppercase());
        self.served_row(
            1,
            "service-type-case",
            "the service type is case-insensitive",
            &[(STD, &shouted)],
            alt,
        )
        .await;
        let plain = e.ask(alt);
        let target = self.target.clone();
        let title = "the header name is case-insensitive";
        match self.prober.get_title_case(&target, &[(STD, &plain)]).await {
            Ok(seen) => {
                self.judge_served(
                    1,
                    "header-name-case",
                    title,
                    &seen,
                    alt,
                    "Openstack-Api-Version",
                );
            }
            Err(err) => self.no_answer(1, "header-name-case", title, &err),
        }

        // 2: several services, repeated headers, the last entry.
        let folded = format!("{}, {other} {min}", e.ask(alt));
        self.served_row(
            2,
            "folded",
            "comma-separated entries; other services ignored",
            &[(STD, &folded)],
            alt,
        )
        .await;
        let other_min = format!("{other} {min}");
        self.served_row(
            2,
            "repeated",
            "repeated header lines are folded",
            &[(STD, &plain), (STD, &other_min)],
            alt,
        )
        .await;
        let first = e.ask(min);
        self.served_row(
            2,
            "repeated-last-wins",
            "repeated lines: the last entry wins",
            &[(STD, &first), (STD, &plain)],
            alt,
        )
        .await;
        let min_then_alt = format!("{}, {}", e.ask(min), e.ask(alt));
        let alt_then_min = format!("{}, {}", e.ask(alt), e.ask(min));
        self.served_row(
            2,
            "last-entry-wins",
            "the last entry wins (lower last)",
            &[(STD, &alt_then_min)],
            min,
        )
        .await;
        self.served_row(
            2,
            "last-entry-wins-higher",
            "the last entry wins (higher last)",
            &[(STD, &min_then_alt)],
            alt,
        )
        .await;
        let bare = format!("{}, {}", e.ask(alt), e.service);
        self.served_row(
            2,
            "type-only-skipped",
            "an entry without a version is skipped",
            &[(STD, &bare)],
            alt,
        )
        .await;

        // 5: whitespace that is allowed.
        let spaced = format!("  {}   {alt}  ", e.service);
        self.served_row(
            5,
            "whitespace",
            "outer whitespace and spaces after the type",
            &[(STD, &spaced)],
            alt,
        )
        .await;
        let tabbed = format!("{}\t{alt}", e.service);
        self.served_row(
            5,
            "whitespace-tab",
            "a tab between type and version",
            &[(STD, &tabbed)],
            alt,
        )
        .await;

        // 7: the legacy header.
        if let Some(legacy) = legacy {
            self.legacy_checks(&legacy, min, alt).await;
        }

        // 8: numeric order, inclusive ends.
        self.numeric_checks(range).await;

        // 5, 6, 9, 10, 11: the answers to bad versions.
        self.error_checks(range).await;

        // 9: an unknown path still names the version.
        self.unknown_path(alt).await;
    }

    /// Rows about the headers of an answer served at `version` (9, 10).
    fn header_rows(&mut self, seen: &Seen, version: Version, what: &str) {
        let e = self.expect.clone();
        let mut echo = e.echo_problems(seen, Some(version));
        let title = format!("the answer names the version ({what})");
        let status = pass_if(echo.is_empty());
        let expected = self.echo_expected(version);
        self.push(
            9,
            format!("echo-{what}"),
            title,
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
            9,
            format!("vary-{what}"),
            format!("Vary ({what})"),
            pass_if(echo.is_empty()),
            if echo.is_empty() {
                seen.joined("vary")
                    .map_or_else(|| "no Vary".to_owned(), |v| format!("Vary: {v}"))
            } else {
                echo.join("; ")
            },
            vary_expected,
        );
        if e.range_headers.is_some() {
            let problems = e.range_header_problems(seen);
            self.push(
                10,
                format!("range-headers-{what}"),
                format!("minimum and maximum headers ({what})"),
                pass_if(problems.is_empty()),
                if problems.is_empty() {
                    e.headers_seen(seen)
                } else {
                    problems.join("; ")
                },
                format!("the range in headers ({})", e.judge),
            );
        }
    }

    fn echo_expected(&self, version: Version) -> String {
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

    /// Sends `headers` to the target and checks the version served.
    async fn served_row(
        &mut self,
        rule: u8,
        id: &str,
        title: &str,
        headers: Headers<'_>,
        want: Version,
    ) -> Option<Seen> {
        let target = self.target.clone();
        match self.prober.get(&target, headers, true).await {
            Ok(seen) => {
                let sent = describe(&target, headers);
                self.judge_served(rule, id, title, &seen, want, &sent);
                Some(seen)
            }
            Err(e) => {
                self.no_answer(rule, id, title, &e);
                None
            }
        }
    }

    fn judge_served(
        &mut self,
        rule: u8,
        id: &str,
        title: &str,
        seen: &Seen,
        want: Version,
        sent: &str,
    ) {
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
        self.push(rule, id, title, status, text, format!("version {want}"));
    }

    /// Sends `headers` and checks the status only.
    async fn status_row(
        &mut self,
        rule: u8,
        id: &str,
        title: &str,
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
                self.push(
                    rule,
                    id,
                    title,
                    status,
                    text,
                    format!("{} ({})", status_text(want), self.expect.judge),
                );
                Some(seen)
            }
            Err(e) => {
                self.no_answer(rule, id, title, &e);
                None
            }
        }
    }

    /// The status of a malformed `raw` version: the judge's, or 406 for a
    /// `0.Y` read as below the range.
    fn malformed_status_for(&self, raw: &str) -> StatusCode {
        if self.expect.zero_major_is_unsupported && is_zero_major(raw) {
            StatusCode::NOT_ACCEPTABLE
        } else {
            self.expect.malformed_status
        }
    }

    // --- 7: the legacy header ---

    /// The legacy header to check: the judge's, or, without a profile,
    /// the one the client crate knows for the service type when the server
    /// turns out to read it.
    async fn detect_legacy(&mut self, alt: Version) -> Option<HeaderName> {
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

    async fn legacy_checks(&mut self, legacy: &HeaderName, min: Version, alt: Version) {
        let name = legacy.as_str();
        let (min_text, alt_text) = (min.to_string(), alt.to_string());
        self.served_row(
            7,
            "legacy-alone",
            "the legacy header alone",
            &[(name, &alt_text)],
            alt,
        )
        .await;
        let standard = self.expect.ask(alt);
        self.served_row(
            7,
            "legacy-standard-wins",
            "the standard header wins over the legacy one",
            &[(STD, &standard), (name, &min_text)],
            alt,
        )
        .await;
        let other = format!("{} {min}", self.expect.other_service());
        self.served_row(
            7,
            "legacy-no-entry",
            "the legacy header counts when the standard has no entry",
            &[(STD, &other), (name, &alt_text)],
            alt,
        )
        .await;
        let folded = format!("{min}, {alt}");
        self.served_row(
            7,
            "legacy-folded",
            "a folded legacy header: its last value",
            &[(name, &folded)],
            alt,
        )
        .await;
    }

    // --- 8: comparing versions ---

    async fn numeric_checks(&mut self, range: VersionRange) {
        let (min, max) = (range.min(), range.max());
        let (ask_min, ask_max) = (self.expect.ask(min), self.expect.ask(max));
        self.served_row(
            8,
            "inclusive-min",
            "the minimum is inside the range",
            &[(STD, &ask_min)],
            min,
        )
        .await;
        self.served_row(
            8,
            "inclusive-max",
            "the maximum is inside the range",
            &[(STD, &ask_max)],
            max,
        )
        .await;
        if let Some(v) = string_order_trap(range) {
            let ask = self.expect.ask(v);
            self.served_row(
                8,
                "numeric-order",
                &format!("{v} is below {max} (numeric, not text, order)"),
                &[(STD, &ask)],
                v,
            )
            .await;
        }
    }

    // --- 5, 6, 9, 10, 11: the answers to bad versions ---

    async fn error_checks(&mut self, range: VersionRange) {
        let (min, max) = (range.min(), range.max());
        let major = min.major();
        let digits30 = "123456789012345678901234567890";
        let malformed = [
            format!("{major}.01"),
            format!("0{major}.1"),
            format!("{major}"),
            format!("{major}."),
            format!("{major}.2.3"),
            format!("-{major}.5"),
            format!("{major}.a"),
            "pony.horse".to_owned(),
            digits30.to_owned(),
            format!("{major}.{digits30}"),
            format!("+{major}.1"),
            format!("{major}.1_0"),
            "0.5".to_owned(),
        ];
        let mut first_bad: Option<(String, Seen)> = None;
        for raw in &malformed {
            let want = self.malformed_status_for(raw);
            let ask = self.expect.ask(raw);
            let title = if want == StatusCode::NOT_ACCEPTABLE && is_zero_major(raw) {
                format!("{raw:?} is below the range")
            } else {
                format!("malformed version {raw:?}")
            };
            let rule = if want == StatusCode::NOT_ACCEPTABLE && is_zero_major(raw) {
                6
            } else {
                5
            };
            let seen = self
                .status_row(
                    rule,
                    &format!("malformed {raw}"),
                    &title,
                    &[(STD, &ask)],
                    want,
                )
                .await;
            if let (None, Some(seen)) = (&first_bad, seen) {
                if raw == "pony.horse" {
                    first_bad = Some((raw.clone(), seen));
                }
            }
        }
        if let Some((raw, seen)) = first_bad {
            self.version_error_rows(&seen, &raw, false, range);
        }

        // 6: out of range.
        let above = Version::new(max.major(), max.minor().saturating_add(1));
        let mut above_seen = None;
        if above != max {
            let ask = self.expect.ask(above);
            above_seen = self
                .status_row(
                    6,
                    "above-max",
                    &format!("{above} is above the maximum"),
                    &[(STD, &ask)],
                    StatusCode::NOT_ACCEPTABLE,
                )
                .await;
        }
        if min.minor() > 0 {
            let below = Version::new(min.major(), min.minor() - 1);
            let ask = self.expect.ask(below);
            self.status_row(
                6,
                "below-min",
                &format!("{below} is below the minimum"),
                &[(STD, &ask)],
                StatusCode::NOT_ACCEPTABLE,
            )
            .await;
        }
        if let Some(seen) = above_seen {
            if seen.status == StatusCode::NOT_ACCEPTABLE {
                self.version_error_rows(&seen, &above.to_string(), true, range);
            }
        }
    }

    /// Headers (9, 10) and body (10, 11) of the answer to a version error.
    fn version_error_rows(
        &mut self,
        seen: &Seen,
        raw: &str,
        unsupported: bool,
        range: VersionRange,
    ) {
        let e = self.expect.clone();
        let what = if unsupported { "406" } else { "malformed" };
        let rejected = raw.parse::<Version>().ok();
        let (echo, vary_wanted, expected) = match e.error_headers {
            ErrorHeaders::RejectedVersion if unsupported => (
                e.echo_problems(seen, rejected),
                e.vary,
                format!("the rejected version echoed, Vary ({})", e.judge),
            ),
            ErrorHeaders::VaryOnly => (
                e.echo_problems(seen, None),
                e.vary,
                if e.vary {
                    format!("Vary but no version header ({})", e.judge)
                } else {
                    format!("no version header ({})", e.judge)
                },
            ),
            _ => (
                e.echo_problems(seen, None),
                false,
                format!("neither version headers nor Vary ({})", e.judge),
            ),
        };
        let mut problems = echo;
        problems.extend(e.vary_problems(seen, vary_wanted));
        self.push(
            9,
            format!("headers-{what}"),
            format!("version headers of the {what} answer"),
            pass_if(problems.is_empty()),
            if problems.is_empty() {
                format!("{}, {}", seen.status_text(), e.headers_seen(seen))
            } else {
                problems.join("; ")
            },
            expected,
        );
        if unsupported && e.range_headers.is_some() {
            let problems = e.range_header_problems(seen);
            self.push(
                10,
                "range-headers-406",
                "minimum and maximum headers of the 406",
                pass_if(problems.is_empty()),
                if problems.is_empty() {
                    e.headers_seen(seen)
                } else {
                    problems.join("; ")
                },
                format!("the range in headers ({})", e.judge),
            );
        }
        let mention = unsupported.then_some((raw, range));
        let (problems, message) = error_body(&e, seen, mention);
        let (rule, title) = if unsupported {
            (10, "the 406 body names what was asked and the range")
        } else {
            (11, "error body of the malformed answer")
        };
        let shape = match e.body {
            BodyShape::ApiSig if unsupported => {
                "{\"errors\": [{\"status\": 406, \"title\", \"detail\", \"min_version\", \"max_version\"}]}"
            }
            BodyShape::ApiSig => "{\"errors\": [{\"status\", \"title\", \"detail\"}]}",
            BodyShape::Fault => "{\"<fault>\": {\"code\", \"message\"}}",
            BodyShape::Ironic => "{\"error_message\": \"{\\\"faultstring\\\": ...}\"}",
        };
        self.push(
            rule,
            format!("body-{what}"),
            title,
            pass_if(problems.is_empty()),
            if problems.is_empty() {
                message.unwrap_or_default()
            } else {
                problems.join("; ")
            },
            format!("{shape} ({})", e.judge),
        );
    }

    // --- 9: an unknown path ---

    async fn unknown_path(&mut self, version: Version) {
        let mut base = self.endpoint.clone();
        if !base.path().ends_with('/') {
            base.set_path(&format!("{}/", base.path()));
        }
        let Ok(url) = base.join("microversion-check-no-such-path") else {
            return;
        };
        let ask = self.expect.ask(version);
        let title = "a 404 at an unknown path names the version";
        let seen = match self.prober.get(&url, &[(STD, &ask)], true).await {
            Ok(seen) => seen,
            Err(e) => {
                self.no_answer(9, "unknown-path", title, &e);
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
        self.push(9, "unknown-path", title, status, text, expected);
    }

    // --- 11: request ids ---

    fn request_ids(&mut self) {
        let total = self.prober.request_ids.len();
        if total == 0 {
            return;
        }
        let text = |h: &http::HeaderMap, name: &str| {
            h.get(name)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        };
        let answers: Vec<(String, Option<String>, &http::HeaderMap)> = self
            .prober
            .request_ids
            .iter()
            .map(|(what, h)| (what.clone(), text(h, "x-openstack-request-id"), h))
            .collect();
        let missing: Vec<&String> = answers
            .iter()
            .filter(|(_, id, _)| id.is_none())
            .map(|(what, _, _)| what)
            .collect();
        let odd: Vec<String> = answers
            .iter()
            .filter_map(|(what, id, _)| {
                id.as_deref()
                    .filter(|id| !is_request_id(id))
                    .map(|id| format!("{what}: {id:?}"))
            })
            .collect();
        let expected = "x-openstack-request-id: req-<uuid> on every answer";
        let (status, seen) = if let Some(first) = missing.first() {
            (
                Status::Fail,
                format!(
                    "{} of {total} answers without x-openstack-request-id, such as {first}",
                    missing.len()
                ),
            )
        } else if let Some(first) = odd.first() {
            (
                Status::Warn,
                format!(
                    "{} of {total} ids not req-<uuid>, such as {first}",
                    odd.len()
                ),
            )
        } else {
            (Status::Pass, format!("on all {total} answers"))
        };
        let mut alias_rows = Vec::new();
        for alias in &self.expect.request_id_aliases {
            let wrong: Vec<String> = answers
                .iter()
                .filter(|(_, id, h)| id.is_some() && text(h, alias.as_str()) != *id)
                .map(|(what, _, h)| match text(h, alias.as_str()) {
                    Some(other) => format!("{what}: {alias}: {other:?}"),
                    None => format!("{what}: no {alias}"),
                })
                .collect();
            let (status, seen) = match wrong.first() {
                Some(first) => (
                    Status::Fail,
                    format!("{} of {total} answers, such as {first}", wrong.len()),
                ),
                None => {
                    let with_id = answers.iter().filter(|(_, id, _)| id.is_some()).count();
                    let text = if with_id == total {
                        format!("{alias} on all {total} answers")
                    } else {
                        format!("{alias} on all {with_id} answers with a request id")
                    };
                    (Status::Pass, text)
                }
            };
            alias_rows.push((alias.clone(), status, seen));
        }
        self.push(
            11,
            "request-id",
            "request id on every answer",
            status,
            seen,
            expected,
        );
        for (alias, status, seen) in alias_rows {
            let judge = self.expect.judge.clone();
            self.push(
                11,
                format!("request-id-alias {alias}"),
                format!("the request id also in {alias}"),
                status,
                seen,
                format!("{alias} equal to x-openstack-request-id ({judge})"),
            );
        }
    }
}

/// The checks that need the range and a versioned path: skipped together
/// when either is missing. (The rows of the malformed inputs and the body
/// checks are summed up by their first id.)
const VERSIONED_CHECKS: &[(u8, &str, &str)] = &[
    (
        1,
        "service-type-case",
        "the service type is case-insensitive",
    ),
    (
        2,
        "last-entry-wins",
        "folded and repeated headers, the last entry wins",
    ),
    (3, "default", "no header: the minimum"),
    (4, "latest", "latest: the maximum"),
    (5, "malformed", "malformed versions"),
    (6, "above-max", "versions outside the range"),
    (7, "legacy", "the legacy header"),
    (8, "inclusive-min", "numeric order, inclusive ends"),
    (9, "echo-default", "version headers on every answer"),
    (10, "body-406", "the 406 body names the range"),
    (11, "body-malformed", "error bodies"),
];

/// The checks that need two distinct versions.
const TWO_VERSION_CHECKS: &[(u8, &str, &str)] = &[
    (
        1,
        "service-type-case",
        "the service type is case-insensitive",
    ),
    (
        2,
        "last-entry-wins",
        "folded and repeated headers, the last entry wins",
    ),
    (
        5,
        "whitespace",
        "outer whitespace and spaces after the type",
    ),
    (7, "legacy", "the legacy header"),
    (8, "inclusive-min", "numeric order, inclusive ends"),
    (
        9,
        "unknown-path",
        "a 404 at an unknown path names the version",
    ),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// `{"versions": [...]}`.
    List,
    /// `{"versions": {"values": [...]}}`.
    Values,
    /// `{"version": {...}}`.
    Root,
    /// `{"id": ...}`.
    Bare,
}

/// The raw JSON entries of a document, whatever its shape.
fn raw_entries(raw: &Value) -> Vec<Value> {
    if let Some(list) = raw.get("versions").and_then(Value::as_array) {
        return list.clone();
    }
    if let Some(list) = raw
        .get("versions")
        .and_then(|v| v.get("values"))
        .and_then(Value::as_array)
    {
        return list.clone();
    }
    if let Some(entry) = raw.get("version").filter(|v| v.is_object()) {
        return vec![entry.clone()];
    }
    vec![raw.clone()]
}

fn pass_if(ok: bool) -> Status {
    if ok { Status::Pass } else { Status::Fail }
}

fn is_zero_major(raw: &str) -> bool {
    raw.strip_prefix("0.")
        .is_some_and(|minor| !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit()))
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

/// The URL one path segment up, or `None` at the root.
fn parent_url(url: &Url) -> Option<Url> {
    let path = url.path().trim_end_matches('/');
    if path.is_empty() {
        return None;
    }
    let cut = path.rfind('/')?;
    let mut parent = url.clone();
    parent.set_path(&format!("{}/", &path[..cut]));
    Some(parent)
}

/// `req-` and a UUID in its hyphenated form.
fn is_request_id(id: &str) -> bool {
    let Some(uuid) = id.strip_prefix("req-") else {
        return false;
    };
    let groups: Vec<&str> = uuid.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The range a 406 tells: Ironic-style headers, the API-SIG body fields,
/// or the wording "Minimum is X and maximum is Y" / "[X, Y]".
pub(crate) fn range_from_406(seen: &Seen) -> Option<VersionRange> {
    let header = |suffix: &str| {
        seen.headers
            .iter()
            .find(|(name, _)| name.as_str().ends_with(suffix))
            .and_then(|(_, value)| Version::try_from(value).ok())
    };
    if let (Some(min), Some(max)) = (
        header("-api-minimum-version"),
        header("-api-maximum-version"),
    ) {
        return VersionRange::new(min, max).ok();
    }
    let body = seen.json()?;
    if let Some(errors) = body.get("errors").and_then(Value::as_array) {
        for e in errors {
            let field = |k: &str| e.get(k).and_then(Value::as_str)?.parse::<Version>().ok();
            if let (Some(min), Some(max)) = (field("min_version"), field("max_version")) {
                return VersionRange::new(min, max).ok();
            }
        }
    }
    range_from_text(&body.to_string().replace("\\\"", "\""))
}

/// "Minimum is 2.1 and maximum is 2.104" or "range is: [1.1, 1.115]".
fn range_from_text(text: &str) -> Option<VersionRange> {
    let version_after = |marker: &str| -> Option<Version> {
        let start = text.find(marker)? + marker.len();
        let rest = &text[start..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        rest[..end].trim_end_matches('.').parse().ok()
    };
    if let (Some(min), Some(max)) = (version_after("Minimum is "), version_after("maximum is ")) {
        return VersionRange::new(min, max).ok();
    }
    let start = text.find("range is: [")? + "range is: [".len();
    let (min, rest) = text[start..].split_once(", ")?;
    let max = rest.split(']').next()?;
    VersionRange::new(min.parse().ok()?, max.parse().ok()?).ok()
}

/// Checks an error body's shape; returns the problems and the message.
/// `mention`: the version asked and the range the message must name.
fn error_body(
    e: &Expect,
    seen: &Seen,
    mention: Option<(&str, VersionRange)>,
) -> (Vec<String>, Option<String>) {
    let mut problems = Vec::new();
    let content_type = seen.joined("content-type").unwrap_or_default();
    if !content_type.starts_with("application/json") {
        problems.push(format!(
            "Content-Type {content_type:?}, not application/json"
        ));
    }
    let Some(body) = seen.json() else {
        problems.push(format!(
            "the body is not JSON: {:?}",
            excerpt(&String::from_utf8_lossy(&seen.body))
        ));
        return (problems, None);
    };
    let status = u64::from(seen.status.as_u16());
    let message = match e.body {
        BodyShape::ApiSig => {
            let entry = body
                .get("errors")
                .and_then(Value::as_array)
                .and_then(|errors| errors.first());
            match entry {
                None => {
                    problems.push(format!(
                        "no \"errors\" list: {}",
                        excerpt(&body.to_string())
                    ));
                    None
                }
                Some(entry) => {
                    if entry.get("status").and_then(Value::as_u64) != Some(status) {
                        problems.push(format!(
                            "errors[0].status is {}, not {status}",
                            entry.get("status").unwrap_or(&Value::Null)
                        ));
                    }
                    if entry
                        .get("title")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                    {
                        problems.push("errors[0] has no title".to_owned());
                    }
                    if let Some((_, range)) = mention {
                        for (key, want) in
                            [("min_version", range.min()), ("max_version", range.max())]
                        {
                            let got = entry.get(key).and_then(Value::as_str);
                            if got != Some(want.to_string().as_str()) {
                                problems.push(format!(
                                    "errors[0].{key} is {}, not \"{want}\"",
                                    entry.get(key).unwrap_or(&Value::Null)
                                ));
                            }
                        }
                    }
                    let detail = entry.get("detail").and_then(Value::as_str);
                    if detail.is_none_or(str::is_empty) {
                        problems.push("errors[0] has no detail".to_owned());
                    }
                    detail.map(str::to_owned)
                }
            }
        }
        BodyShape::Fault => {
            let inner = body
                .as_object()
                .filter(|o| o.len() == 1)
                .and_then(|o| o.values().next());
            match inner {
                None => {
                    problems.push(format!(
                        "not {{\"<fault>\": {{...}}}}: {}",
                        excerpt(&body.to_string())
                    ));
                    None
                }
                Some(inner) => {
                    if inner.get("code").and_then(Value::as_u64) != Some(status) {
                        problems.push(format!(
                            "code is {}, not {status}",
                            inner.get("code").unwrap_or(&Value::Null)
                        ));
                    }
                    let message = inner.get("message").and_then(Value::as_str);
                    if message.is_none_or(str::is_empty) {
                        problems.push("no message".to_owned());
                    }
                    message.map(str::to_owned)
                }
            }
        }
        BodyShape::Ironic => {
            let inner: Option<Value> = body
                .get("error_message")
                .and_then(Value::as_str)
                .and_then(|text| serde_json::from_str(text).ok());
            let message = inner
                .as_ref()
                .and_then(|i| i.get("faultstring").and_then(Value::as_str))
                .map(str::to_owned);
            if message.as_deref().is_none_or(str::is_empty) {
                problems.push(format!(
                    "not {{\"error_message\": \"{{\\\"faultstring\\\": ...}}\"}}: {}",
                    excerpt(&body.to_string())
                ));
            }
            message
        }
    };
    if let (Some((asked, range)), Some(text)) = (mention, &message) {
        let missing: Vec<String> = [
            asked.to_owned(),
            range.min().to_string(),
            range.max().to_string(),
        ]
        .into_iter()
        .filter(|part| !text.contains(part.as_str()))
        .collect();
        if !missing.is_empty() {
            problems.push(format!(
                "the message does not name {}: {:?}",
                missing.join(" or "),
                excerpt(text)
            ));
        }
    }
    (problems, message)
}

/// The start of a long text, for messages.
fn excerpt(text: &str) -> String {
    const MAX: usize = 200;
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(MAX).collect();
        cut.push('…');
        cut
    }
}

/// An error and its causes, on one line.
fn error_text(e: &reqwest::Error) -> String {
    crate::error::chain(e.to_string(), std::error::Error::source(e))
}

#[cfg(test)]
mod tests {
    use http::HeaderMap;

    use super::*;

    fn seen(headers: &[(&'static str, &'static str)], body: &str) -> Seen {
        let mut map = HeaderMap::new();
        for (n, v) in headers {
            map.append(*n, v.parse().unwrap());
        }
        Seen {
            status: StatusCode::NOT_ACCEPTABLE,
            headers: map,
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn ranges_from_406_answers() {
        let r = |a, b| Some(VersionRange::from_static(a, b));
        let ironic = seen(
            &[
                ("x-openstack-ironic-api-minimum-version", "1.1"),
                ("x-openstack-ironic-api-maximum-version", "1.115"),
            ],
            "",
        );
        assert_eq!(range_from_406(&ironic), r("1.1", "1.115"));
        let api_sig = seen(
            &[],
            r#"{"errors": [{"status": 406, "min_version": "1.0", "max_version": "1.39"}]}"#,
        );
        assert_eq!(range_from_406(&api_sig), r("1.0", "1.39"));
        let nova = seen(
            &[],
            r#"{"computeFault": {"code": 406, "message": "Version 2.999 is not supported by the API. Minimum is 2.1 and maximum is 2.104."}}"#,
        );
        assert_eq!(range_from_406(&nova), r("2.1", "2.104"));
        let ironic_body = seen(
            &[],
            r#"{"error_message": "{\"faultstring\": \"Version 1.999 was requested but ... The supported version range is: [1.1, 1.115].\"}"}"#,
        );
        assert_eq!(range_from_406(&ironic_body), r("1.1", "1.115"));
        assert_eq!(range_from_406(&seen(&[], "not json")), None);
        assert_eq!(range_from_406(&seen(&[], r#"{"errors": []}"#)), None);
    }

    #[test]
    fn the_406_message_must_name_the_version_and_the_range() {
        let e = Expect::new(microversion::VersionHeader::new("placement"), None);
        let range = VersionRange::from_static("1.0", "1.39");
        let body = |detail: &str| {
            serde_json::json!({"errors": [{"status": 406, "title": "Not Acceptable",
                "detail": detail, "min_version": "1.0", "max_version": "1.39"}]})
            .to_string()
        };
        let mut answer = seen(&[("content-type", "application/json")], "");
        answer.body = body("Unacceptable version header: 1.40").into_bytes();
        let (problems, message) = error_body(&e, &answer, Some(("1.40", range)));
        assert_eq!(
            problems,
            ["the message does not name 1.0 or 1.39: \"Unacceptable version header: 1.40\""]
        );
        assert_eq!(
            message.as_deref(),
            Some("Unacceptable version header: 1.40")
        );
        answer.body =
            body("Version 1.40 is not supported by the API. Minimum is 1.0 and maximum is 1.39.")
                .into_bytes();
        assert!(error_body(&e, &answer, Some(("1.40", range))).0.is_empty());
        // A text body is named, cut short.
        answer.body = "x".repeat(500).into_bytes();
        let (problems, _) = error_body(&e, &answer, None);
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].starts_with("the body is not JSON: \"xxx"),
            "{problems:?}"
        );
        assert!(problems[0].ends_with("x…\""), "{problems:?}");
    }

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

    #[test]
    fn request_ids() {
        assert!(is_request_id("req-5f1d3c4e-2b7a-4c1d-9e8f-0a1b2c3d4e5f"));
        for bad in [
            "5f1d3c4e-2b7a-4c1d-9e8f-0a1b2c3d4e5f",
            "req-5f1d3c4e2b7a4c1d9e8f0a1b2c3d4e5f",
            "req-5f1d3c4e-2b7a-4c1d-9e8f-0a1b2c3d4e5g",
            "req-",
        ] {
            assert!(!is_request_id(bad), "{bad}");
        }
    }

    #[test]
    fn zero_majors_and_parents() {
        assert!(is_zero_major("0.5") && is_zero_major("0.0"));
        assert!(!is_zero_major("0.") && !is_zero_major("1.0") && !is_zero_major("0.a"));
        let p = |s: &str| parent_url(&Url::parse(s).unwrap()).map(|u| u.to_string());
        assert_eq!(p("http://h/v2.1/"), Some("http://h/".to_owned()));
        assert_eq!(p("http://h/a/b"), Some("http://h/a/".to_owned()));
        assert_eq!(p("http://h/"), None);
    }
}
