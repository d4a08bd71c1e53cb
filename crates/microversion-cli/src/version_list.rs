//! `microversion version-list`: every endpoint's API versions, and the
//! microversion range they all support.
//!
//! Discovery goes to every endpoint at once ([`Probe`]); an endpoint that
//! fails is shown with its error, and the others are still listed. The
//! common range is that of the API versions the endpoints serve (the entry
//! whose `self` link is the endpoint, else the CURRENT one), across the
//! endpoints that answered.

use std::time::Duration;

use microversion::{ServerVersions, VersionRange};
use microversion_client::{EndpointReport, Probe};
use serde_json::{Value, json};
use url::Url;

use crate::args::{ListFormat, VersionListArgs};
use crate::error::Error;
use crate::net;
use crate::table::Table;

/// What `version-list` found.
#[derive(Debug)]
pub(crate) struct Listing {
    service_type: Option<String>,
    endpoints: Vec<Endpoint>,
}

/// One endpoint and what it answered.
#[derive(Debug)]
struct Endpoint {
    url: Url,
    result: Result<Found, String>,
}

/// An endpoint's versions document.
#[derive(Debug)]
struct Found {
    document_url: Url,
    entries: Vec<Entry>,
    /// The index of the entry the endpoint serves.
    served: usize,
    versions: ServerVersions,
}

/// One API version of a versions document.
#[derive(Debug)]
struct Entry {
    id: String,
    status: String,
    range: Option<VersionRange>,
}

impl Endpoint {
    fn from_report(report: &EndpointReport) -> Self {
        let result = match report.discovery() {
            Ok(discovery) => {
                let selected = discovery.selected();
                Ok(Found {
                    document_url: discovery.document_url().clone(),
                    entries: discovery
                        .entries()
                        .iter()
                        .map(|e| Entry {
                            id: e.id.clone(),
                            status: e.status.to_string(),
                            range: e.microversions(),
                        })
                        .collect(),
                    served: discovery
                        .entries()
                        .iter()
                        .position(|e| std::ptr::eq(e, selected))
                        .unwrap_or(0),
                    versions: discovery.server_versions(),
                })
            }
            Err(e) => Err(one_line(e)),
        };
        Endpoint {
            url: report.endpoint().clone(),
            result,
        }
    }

    fn versions(&self) -> Option<ServerVersions> {
        self.result.as_ref().ok().map(|f| f.versions)
    }
}

/// The range every endpoint that answered supports, or why there is none.
#[derive(Debug, PartialEq, Eq)]
enum Common {
    Range {
        range: VersionRange,
        answered: usize,
        failed: usize,
    },
    /// The ranges do not overlap, or an endpoint has no microversions.
    Nothing(String),
    /// No endpoint answered.
    Unknown,
}

impl Listing {
    /// Asks every endpoint.
    /// `token` is the cloud's, when options name one; `--token` wins.
    pub(crate) async fn fetch(
        args: &VersionListArgs,
        timeout: Duration,
        token: Option<String>,
    ) -> Result<Self, Error> {
        let mut probe = Probe::new().http_client(net::http_client(timeout, true, false)?);
        for url in &args.urls {
            probe = probe.endpoint(net::parse_url(url)?.as_str());
        }
        if let Some(token) = args.token.clone().or(token) {
            net::token_value(&token)?;
            probe = probe.header("x-auth-token", token.trim());
        }
        let report = probe
            .run()
            .await
            .map_err(|e| Error::with_source("cannot probe the endpoints", e))?;
        Ok(Listing {
            service_type: args.service_type.clone(),
            endpoints: report
                .endpoints()
                .iter()
                .map(Endpoint::from_report)
                .collect(),
        })
    }

    /// Whether every endpoint answered.
    pub(crate) fn all_answered(&self) -> bool {
        self.endpoints.iter().all(|e| e.result.is_ok())
    }

    fn common(&self) -> Common {
        let mut range: Option<VersionRange> = None;
        let mut answered = 0;
        let mut nothing = false;
        let mut parts = Vec::new();
        for endpoint in &self.endpoints {
            let Some(versions) = endpoint.versions() else {
                continue;
            };
            answered += 1;
            match versions {
                ServerVersions::Microversions(r) => {
                    parts.push(format!("{} supports {r}", endpoint.url));
                    if !nothing {
                        range = match range {
                            None => Some(r),
                            Some(common) => common.intersect(r),
                        };
                        nothing = range.is_none();
                    }
                }
                ServerVersions::Unversioned => {
                    parts.push(format!("{} does not support microversions", endpoint.url));
                    nothing = true;
                }
            }
        }
        match range {
            _ if answered == 0 => Common::Unknown,
            Some(range) if !nothing => Common::Range {
                range,
                answered,
                failed: self.endpoints.len() - answered,
            },
            _ => Common::Nothing(parts.join("; ")),
        }
    }

    /// The listing in `format`.
    pub(crate) fn render(&self, format: ListFormat) -> String {
        match format {
            ListFormat::Table => self.table(),
            ListFormat::Json => {
                let mut text = serde_json::to_string_pretty(&self.json()).unwrap_or_default();
                text.push('\n');
                text
            }
        }
    }

    fn table(&self) -> String {
        let mut table = Table::new(&["ENDPOINT", "ID", "STATUS", "MIN", "MAX", "NOTE"]);
        for report in &self.endpoints {
            let endpoint = report.url.to_string();
            match &report.result {
                Ok(found) => {
                    for (i, entry) in found.entries.iter().enumerate() {
                        let range = entry.range;
                        table.row(vec![
                            endpoint.clone(),
                            entry.id.clone(),
                            entry.status.clone(),
                            range.map_or_else(|| "-".to_owned(), |r| r.min().to_string()),
                            range.map_or_else(|| "-".to_owned(), |r| r.max().to_string()),
                            if i == found.served { "*" } else { "" }.to_owned(),
                        ]);
                    }
                }
                Err(e) => table.row(vec![
                    endpoint,
                    "-".to_owned(),
                    "ERROR".to_owned(),
                    "-".to_owned(),
                    "-".to_owned(),
                    e.clone(),
                ]),
            }
        }
        let mut out = table.render();
        out.push('\n');
        let label = match &self.service_type {
            Some(t) => format!("Common {t} microversion range"),
            None => "Common microversion range".to_owned(),
        };
        let line = match self.common() {
            Common::Range {
                range,
                failed: 0,
                answered: _,
            } => format!("{label}: {range}"),
            Common::Range {
                range,
                answered,
                failed,
            } => format!(
                "{label} of the {answered} endpoint{} that answered ({failed} failed): {range}",
                plural(answered)
            ),
            Common::Nothing(why) => format!("{label}: none ({why})"),
            Common::Unknown => format!("{label}: unknown (no endpoint answered)"),
        };
        out.push_str(&line);
        out.push_str("\n* the API version the endpoint serves\n");
        out
    }

    fn json(&self) -> Value {
        let endpoints: Vec<Value> = self
            .endpoints
            .iter()
            .map(|report| match &report.result {
                Ok(found) => {
                    let versions: Vec<Value> = found
                        .entries
                        .iter()
                        .enumerate()
                        .map(|(i, entry)| {
                            json!({
                                "id": entry.id,
                                "status": entry.status,
                                "min_version": entry.range.map(|r| r.min().to_string()),
                                "max_version": entry.range.map(|r| r.max().to_string()),
                                "served": i == found.served,
                            })
                        })
                        .collect();
                    json!({
                        "endpoint": report.url.as_str(),
                        "document_url": found.document_url.as_str(),
                        "versions": versions,
                        "error": null,
                    })
                }
                Err(e) => json!({
                    "endpoint": report.url.as_str(),
                    "document_url": null,
                    "versions": [],
                    "error": e,
                }),
            })
            .collect();
        let (common, common_error) = match self.common() {
            Common::Range {
                range,
                answered,
                failed,
            } => (
                json!({
                    "min_version": range.min().to_string(),
                    "max_version": range.max().to_string(),
                    "endpoints": answered,
                    "failed": failed,
                }),
                Value::Null,
            ),
            Common::Nothing(why) => (Value::Null, json!(format!("no common version: {why}"))),
            Common::Unknown => (Value::Null, json!("no endpoint answered")),
        };
        json!({
            "service_type": self.service_type,
            "endpoints": endpoints,
            "common": common,
            "common_error": common_error,
        })
    }
}

/// An error and its causes, on one line.
fn one_line(error: &(dyn std::error::Error + 'static)) -> String {
    crate::error::chain(error.to_string(), error.source())
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry: id, status and the range, if any.
    type Spec<'a> = (&'a str, &'a str, Option<(&'static str, &'static str)>);

    fn found(entries: &[Spec<'_>], served: usize) -> Found {
        let entries: Vec<Entry> = entries
            .iter()
            .map(|(id, status, range)| Entry {
                id: (*id).to_owned(),
                status: (*status).to_owned(),
                range: range.map(|(min, max)| VersionRange::from_static(min, max)),
            })
            .collect();
        let versions = entries[served]
            .range
            .map_or(ServerVersions::Unversioned, ServerVersions::Microversions);
        Found {
            document_url: Url::parse("http://h/").unwrap(),
            entries,
            served,
            versions,
        }
    }

    fn listing(endpoints: Vec<(&str, Result<Found, String>)>) -> Listing {
        Listing {
            service_type: Some("compute".to_owned()),
            endpoints: endpoints
                .into_iter()
                .map(|(url, result)| Endpoint {
                    url: Url::parse(url).unwrap(),
                    result,
                })
                .collect(),
        }
    }

    #[test]
    fn common_range_of_the_endpoints_that_answered() {
        let l = listing(vec![
            (
                "http://a/",
                Ok(found(
                    &[
                        ("v2.0", "DEPRECATED", None),
                        ("v2.1", "CURRENT", Some(("2.1", "2.90"))),
                    ],
                    1,
                )),
            ),
            (
                "http://b/",
                Ok(found(&[("v2.1", "CURRENT", Some(("2.10", "2.104")))], 0)),
            ),
            ("http://c/", Err("connection refused".to_owned())),
        ]);
        assert!(!l.all_answered());
        assert_eq!(
            l.common(),
            Common::Range {
                range: VersionRange::from_static("2.10", "2.90"),
                answered: 2,
                failed: 1
            }
        );
        let text = l.render(ListFormat::Table);
        assert!(
            text.starts_with("ENDPOINT   ID    STATUS      MIN   MAX    NOTE\n"),
            "{text}"
        );
        assert!(
            text.contains("http://a/  v2.0  DEPRECATED  -     -\n"),
            "{text}"
        );
        assert!(
            text.contains("http://a/  v2.1  CURRENT     2.1   2.90   *\n"),
            "{text}"
        );
        assert!(
            text.contains("http://c/  -     ERROR       -     -      connection refused\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "Common compute microversion range of the 2 endpoints that answered (1 failed): 2.10 - 2.90"
            ),
            "{text}"
        );
        let json = l.json();
        assert_eq!(json["common"]["min_version"], "2.10");
        assert_eq!(json["common"]["failed"], 1);
        assert_eq!(
            json["endpoints"][0]["versions"][0]["min_version"],
            Value::Null
        );
        assert_eq!(json["endpoints"][0]["versions"][1]["served"], true);
        assert_eq!(json["endpoints"][2]["error"], "connection refused");
    }

    #[test]
    fn no_common_range() {
        let l = listing(vec![
            (
                "http://a/",
                Ok(found(&[("v1", "CURRENT", Some(("1.0", "1.10")))], 0)),
            ),
            (
                "http://b/",
                Ok(found(&[("v1", "CURRENT", Some(("1.20", "1.30")))], 0)),
            ),
            (
                "http://c/",
                Ok(found(&[("v1", "CURRENT", Some(("1.0", "1.39")))], 0)),
            ),
        ]);
        assert!(l.all_answered());
        let Common::Nothing(why) = l.common() else {
            panic!("{:?}", l.common())
        };
        assert_eq!(
            why,
            "http://a/ supports 1.0 - 1.10; http://b/ supports 1.20 - 1.30; http://c/ supports 1.0 - 1.39"
        );
        let l = listing(vec![
            (
                "http://a/",
                Ok(found(&[("v1", "CURRENT", Some(("1.0", "1.10")))], 0)),
            ),
            ("http://b/", Ok(found(&[("v2.0", "CURRENT", None)], 0))),
        ]);
        assert_eq!(
            l.json()["common_error"],
            "no common version: http://a/ supports 1.0 - 1.10; http://b/ does not support microversions"
        );
        let l = listing(vec![("http://a/", Err("refused".to_owned()))]);
        assert_eq!(l.common(), Common::Unknown);
        assert!(
            l.render(ListFormat::Table)
                .contains("unknown (no endpoint answered)")
        );
    }
}
