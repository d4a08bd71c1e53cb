//! Rules 12 and 13: the versions document at the endpoint, the entry a
//! client picks from it, its versioned root, and whether `GET /` reads
//! the version header. Discovery also gives the range every later check
//! needs, or, without it, a 406 does.

use http::StatusCode;
use microversion::{ServerVersions, Version, VersionRange, VersionsDocument};
use serde_json::Value;
use url::Url;

use super::Status;
use super::catalog::CheckId;
use super::probe::{Seen, status_text};
use super::run::{Runner, STD, error_text, pass_if};
use crate::error::Error;

/// What the versions document gave.
pub(super) struct Document {
    url: Url,
    raw: Value,
    parsed: VersionsDocument,
}

impl Runner {
    /// Reads the versions document at the endpoint (its parent on 404).
    pub(super) async fn discovery(&mut self) -> Result<Option<Document>, Error> {
        let mut url = self.endpoint.clone();
        let mut seen = self.fetch_document(&url).await?;
        if seen.status == StatusCode::NOT_FOUND {
            if let Some(parent) = microversion_client::Discovery::parent_of(&url) {
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
        if !(seen.status.is_success() || seen.status == StatusCode::MULTIPLE_CHOICES) {
            self.push(
                CheckId::VersionsDocument,
                Status::Fail,
                format!("GET {url} answered {}", seen.status_text()),
                "200 with the versions document",
            );
            return Ok(None);
        }
        let Some(raw) = seen.json() else {
            self.push(
                CheckId::VersionsDocument,
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
                    CheckId::VersionsDocument,
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
                CheckId::VersionsDocument,
                Status::Fail,
                "an empty \"versions\" list",
                "at least one API version",
            ),
            Shape::List => self.push(CheckId::VersionsDocument, Status::Pass, seen_text, ""),
            Shape::Root => self.push(
                CheckId::VersionsDocument,
                Status::Warn,
                format!("{seen_text} (a versioned root's {{\"version\": ...}}, not the list)"),
                expected,
            ),
            Shape::Values | Shape::Bare => self.push(
                CheckId::VersionsDocument,
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
    /// if it asks for them (a failure of docs/wire.md 12).
    async fn fetch_document(&mut self, url: &Url) -> Result<Seen, Error> {
        let seen = self
            .prober
            .get(url, &[], false)
            .await
            .map_err(|e| Error::with_source(format!("cannot reach {url}"), e))?;
        if matches!(seen.status.as_u16(), 401 | 403) {
            self.push(
                CheckId::VersionsDocumentUnauthenticated,
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
                CheckId::VersionsDocumentUnauthenticated,
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
        self.push(CheckId::VersionStatuses, status, seen, expected);
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
        self.push(CheckId::VersionFields, status, seen, expected);
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
            CheckId::SelfLinks,
            status,
            seen,
            "links with rel \"self\" (clients match them to the endpoint)",
        );
    }

    /// A versioned root's document: `{"version": {...}}` with media types.
    fn root_document_fields(&mut self, raw: &Value, what: &str) -> bool {
        let Some(entry) = raw.get("version").filter(|v| v.is_object()) else {
            self.push(
                CheckId::VersionedRoot,
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
                CheckId::VersionedRoot,
                Status::Pass,
                format!("{{\"version\": {{\"id\": {id:?}, ..., \"media-types\": [...]}}}}"),
                "",
            );
        } else {
            self.push(
                CheckId::VersionedRoot,
                Status::Warn,
                format!("{{\"version\": {{\"id\": {id:?}, ...}}}} without media-types"),
                "the fields of the versions document plus media-types",
            );
        }
        true
    }

    /// Picks the endpoint's entry, as clients do, and checks its
    /// versioned root. Returns whether the API has no microversions.
    pub(super) async fn select(&mut self, doc: &Document) -> bool {
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
        // docs/wire.md 13: the entry's own root, when it is elsewhere.
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
                        CheckId::VersionedRootRange,
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
                CheckId::VersionedRoot,
                Status::Fail,
                format!("GET {link} answered {}", seen.status_text()),
                "200 with {\"version\": {...}}",
            ),
            Err(e) => self.push(
                CheckId::VersionedRoot,
                Status::Fail,
                format!("GET {link} failed: {}", error_text(&e)),
                "200 with {\"version\": {...}}",
            ),
        }
        false
    }

    /// docs/wire.md 13: an API version without microversions at a root of
    /// its own (Nova's v2.0 at `/v2/`, served by the v2.1 code) ignores
    /// the version headers, a malformed version included, and names no
    /// version in its answers.
    pub(super) async fn legacy_roots(&mut self, doc: &Document) {
        let document_path = doc.url.path().trim_end_matches('/').to_owned();
        let roots: Vec<(String, Url)> = doc
            .parsed
            .versions
            .iter()
            .filter(|v| v.microversions().is_none())
            .filter_map(|v| {
                let link = doc.url.join(v.self_link()?).ok()?;
                (link.path().trim_end_matches('/') != document_path).then(|| (v.id.clone(), link))
            })
            .collect();
        for (id, link) in roots {
            let ask = self.expect.ask("pony.horse");
            let mut headers = vec![(STD, ask.as_str())];
            let legacy = self.expect.legacy.clone();
            if let Some(legacy) = &legacy {
                headers.push((legacy.as_str(), "pony.horse"));
            }
            let check = CheckId::LegacyRoot(id);
            let expected = "200, the version headers ignored and none in the answer (wire.md 13)";
            match self.prober.get(&link, &headers, true).await {
                Ok(seen) => {
                    let mut problems = self.expect.echo_problems(&seen, None);
                    problems.extend(self.expect.vary_problems(&seen, false));
                    let status = pass_if(seen.status.is_success() && problems.is_empty());
                    let mut text = format!(
                        "GET {link} with a malformed version: {}",
                        seen.status_text()
                    );
                    if !problems.is_empty() {
                        text = format!("{text}; {}", problems.join("; "));
                    }
                    self.push(check, status, text, expected);
                }
                Err(e) => self.push(
                    check,
                    Status::Fail,
                    format!("GET {link} failed: {}", error_text(&e)),
                    expected,
                ),
            }
        }
    }

    /// Without a range from discovery, asks for a version no server has
    /// and reads the range from the 406 (docs/wire.md 10).
    pub(super) async fn learn_from_406(&mut self) {
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

    /// docs/wire.md 12 and the profiles: whether `GET /` reads the header.
    pub(super) async fn root_reads_the_header(&mut self) {
        if self.endpoint.path() != "/" {
            return;
        }
        let ask = self.expect.ask("pony.horse");
        let headers = [(STD, ask.as_str())];
        let root = self.endpoint.clone();
        let check = if self.expect.root_is_versioned {
            CheckId::RootReadsTheHeader
        } else {
            CheckId::RootIgnoresTheHeader
        };
        let seen = match self.prober.get(&root, &headers, false).await {
            Ok(seen) => seen,
            Err(e) => {
                self.no_answer(check, &e);
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
                check,
                status,
                text,
                format!("{} ({})", status_text(want), self.expect.judge),
            );
        } else {
            let problems = self.expect.echo_problems(&seen, None);
            let status = pass_if(seen.status.is_success() && problems.is_empty());
            self.push(
                check,
                status,
                text,
                format!("200 without version headers ({})", self.expect.judge),
            );
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_from_406_answers() {
        let r = |a, b| Some(VersionRange::from_static(a, b));
        let ironic = Seen::not_acceptable(
            &[
                ("x-openstack-ironic-api-minimum-version", "1.1"),
                ("x-openstack-ironic-api-maximum-version", "1.115"),
            ],
            "",
        );
        assert_eq!(range_from_406(&ironic), r("1.1", "1.115"));
        let api_sig = Seen::not_acceptable(
            &[],
            r#"{"errors": [{"status": 406, "min_version": "1.0", "max_version": "1.39"}]}"#,
        );
        assert_eq!(range_from_406(&api_sig), r("1.0", "1.39"));
        let nova = Seen::not_acceptable(
            &[],
            r#"{"computeFault": {"code": 406, "message": "Version 2.999 is not supported by the API. Minimum is 2.1 and maximum is 2.104."}}"#,
        );
        assert_eq!(range_from_406(&nova), r("2.1", "2.104"));
        let ironic_body = Seen::not_acceptable(
            &[],
            r#"{"error_message": "{\"faultstring\": \"Version 1.999 was requested but ... The supported version range is: [1.1, 1.115].\"}"}"#,
        );
        assert_eq!(range_from_406(&ironic_body), r("1.1", "1.115"));
        assert_eq!(range_from_406(&Seen::not_acceptable(&[], "not json")), None);
        assert_eq!(
            range_from_406(&Seen::not_acceptable(&[], r#"{"errors": []}"#)),
            None
        );
    }
}
