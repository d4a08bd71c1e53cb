//! `microversion impact`: which clients a narrower range would break, read
//! from the service's own counters (the `microversion_client_asked_*`
//! families of `microversion_server::telemetry`), from its metrics URL or
//! from a saved scrape.
//!
//! A request that asked for a version by number below the new minimum (or
//! above the new maximum) would be refused with 406. A request that asked
//! for no version was served the minimum, and would be served the new one:
//! it is not refused, but what it gets changes. A request that asked for
//! `latest` above a new maximum would be served the maximum. Requests under
//! a legacy root keep the code's minimum whatever the range.
//!
//! ```no_run
//! use std::time::Duration;
//! use microversion::Version;
//! use microversion_cli::impact::Query;
//!
//! # async fn run() -> Result<(), microversion_cli::Error> {
//! let report = Query::new(Version::new(1, 20))
//!     .hours(24.0)
//!     .read("http://127.0.0.1:9778/metrics", Duration::from_secs(10))
//!     .await?;
//! println!("{}", report.to_table());
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use microversion::Version;
use serde_json::{Value, json};

use crate::args::{ImpactArgs, ListFormat};
use crate::error::Error;
use crate::table::Table;

const ASKED: &str = "microversion_client_asked_total";
const LAST_SEEN: &str = "microversion_client_asked_last_seen_seconds";
const STARTED: &str = "microversion_telemetry_started_seconds";

/// One sample of a scrape: its family, labels and value.
#[derive(Clone, Debug, PartialEq)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

impl Sample {
    fn label(&self, name: &str) -> &str {
        self.labels.get(name).map_or("", String::as_str)
    }
}

/// Reads the samples of a Prometheus text exposition (comments skipped).
fn parse_scrape(text: &str, source: &str) -> Result<Vec<Sample>, Error> {
    let mut samples = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| {
            Error::new(format!(
                "{source}, line {}: {why}: {line:?} (expected name{{label=\"value\",...}} number)",
                number + 1
            ))
        };
        let name_end = line
            .find(|c: char| c == '{' || c.is_whitespace())
            .ok_or_else(|| bad("no value"))?;
        let name = &line[..name_end];
        let mut rest = &line[name_end..];
        let mut labels = BTreeMap::new();
        if let Some(after) = rest.strip_prefix('{') {
            let (parsed, tail) = parse_labels(after).ok_or_else(|| bad("unreadable labels"))?;
            labels = parsed;
            rest = tail;
        }
        let value = rest
            .split_whitespace()
            .next()
            .ok_or_else(|| bad("no value"))?;
        let value = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            other => other
                .parse()
                .map_err(|_| bad("the value is not a number"))?,
        };
        samples.push(Sample {
            name: name.to_owned(),
            labels,
            value,
        });
    }
    Ok(samples)
}

/// Reads `label="value",...}` and returns the labels and what follows.
fn parse_labels(mut text: &str) -> Option<(BTreeMap<String, String>, &str)> {
    let mut labels = BTreeMap::new();
    loop {
        text = text.trim_start_matches([' ', ',']);
        if let Some(rest) = text.strip_prefix('}') {
            return Some((labels, rest));
        }
        let eq = text.find('=')?;
        let name = text[..eq].trim().to_owned();
        let mut chars = text[eq + 1..]
            .trim_start()
            .strip_prefix('"')?
            .char_indices();
        let mut value = String::new();
        let end = loop {
            let (i, c) = chars.next()?;
            match c {
                '"' => break i,
                '\\' => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    other => value.push(other),
                },
                other => value.push(other),
            }
        };
        let after_quote = text[eq + 1..].trim_start();
        text = &after_quote[1 + end + 1..];
        labels.insert(name, value);
    }
}

/// One series: a client, a project, the version it was served and how it
/// asked for it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Series {
    client: String,
    project: String,
    version: Version,
    asked: String,
}

/// The counters of one scrape, for one service type.
#[derive(Debug, Default)]
struct Counters {
    requests: BTreeMap<Series, u64>,
    last_seen: BTreeMap<Series, u64>,
    started: Option<u64>,
}

impl Counters {
    fn read(samples: &[Sample], service_type: &str) -> Counters {
        let mut counters = Counters::default();
        for s in samples
            .iter()
            .filter(|s| s.label("service_type") == service_type)
        {
            let series = || {
                Some(Series {
                    client: s.label("client").to_owned(),
                    project: s.label("project").to_owned(),
                    version: s.label("version").parse().ok()?,
                    asked: s.label("asked").to_owned(),
                })
            };
            // Counters are whole numbers; anything else is not ours.
            let whole = (s.value >= 0.0 && s.value.fract() == 0.0).then_some(s.value as u64);
            match (s.name.as_str(), whole) {
                (ASKED, Some(n)) => {
                    if let Some(series) = series() {
                        counters.requests.insert(series, n);
                    }
                }
                (LAST_SEEN, Some(n)) => {
                    if let Some(series) = series() {
                        counters.last_seen.insert(series, n);
                    }
                }
                (STARTED, Some(n)) => counters.started = Some(n),
                _ => {}
            }
        }
        counters
    }
}

/// The service types a scrape counts requests of.
fn service_types(samples: &[Sample]) -> Vec<String> {
    let mut types: Vec<String> = samples
        .iter()
        .filter(|s| s.name == ASKED)
        .map(|s| s.label("service_type").to_owned())
        .collect();
    types.sort();
    types.dedup();
    types
}

/// What a narrower range would do to one series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Effect {
    /// 406.
    Refused,
    /// Served another version than before.
    Changed(Version),
    Unaffected,
}

fn effect(series: &Series, min: Version, max: Option<Version>) -> Effect {
    let above_max = max.is_some_and(|max| series.version > max);
    match series.asked.as_str() {
        "exact" if series.version < min || above_max => Effect::Refused,
        "none" if series.version < min => Effect::Changed(min),
        "latest" if above_max => Effect::Changed(max.unwrap_or(series.version)),
        _ => Effect::Unaffected,
    }
}

/// What one client of one project would see.
#[derive(Debug, Default)]
struct ClientImpact {
    refused: BTreeMap<Version, u64>,
    /// By the version served before, with the one it would be served.
    changed: BTreeMap<Version, (Version, u64)>,
    last_seen: u64,
}

/// What to ask of the counters: the narrower range, and which requests
/// count.
#[derive(Clone, Debug)]
pub struct Query {
    min: Version,
    max: Option<Version>,
    baseline: Option<String>,
    hours: Option<f64>,
    service_type: Option<String>,
}

impl Query {
    /// If the service served from `min` on.
    #[must_use]
    pub fn new(min: Version) -> Self {
        Query {
            min,
            max: None,
            baseline: None,
            hours: None,
            service_type: None,
        }
    }

    /// And only up to `max`.
    #[must_use]
    pub fn max(mut self, max: Version) -> Self {
        self.max = Some(max);
        self
    }

    /// Only the requests made since the scrape at `source` (a URL or a
    /// file).
    #[must_use]
    pub fn baseline(mut self, source: impl Into<String>) -> Self {
        self.baseline = Some(source.into());
        self
    }

    /// Only the clients seen in the last `hours`.
    #[must_use]
    pub fn hours(mut self, hours: f64) -> Self {
        self.hours = Some(hours);
        self
    }

    /// The service type to read, when the metrics count several.
    #[must_use]
    pub fn service_type(mut self, service_type: impl Into<String>) -> Self {
        self.service_type = Some(service_type.into());
        self
    }

    /// Reads the scrape at `source` (a metrics URL, a file, or `-` for
    /// standard input) and the baseline, and tells the impact.
    ///
    /// # Errors
    ///
    /// An empty range, hours that are not above 0, a source that cannot
    /// be read or is not in the Prometheus text format, or metrics without
    /// the request counters (or with several service types and none
    /// chosen).
    pub async fn read(&self, source: &str, timeout: Duration) -> Result<Impact, Error> {
        if let Some(max) = self.max
            && max < self.min
        {
            return Err(Error::new(format!(
                "--max {max} is below --min {}: the range would be empty",
                self.min
            )));
        }
        if self.hours.is_some_and(|h| !(h > 0.0 && h.is_finite())) {
            return Err(Error::new(
                "--hours takes a number of hours above 0, such as 24",
            ));
        }
        let current = parse_scrape(&crate::net::read_source(source, timeout).await?, source)?;
        let types = service_types(&current);
        let service_type = match (&self.service_type, types.as_slice()) {
            (Some(t), _) => t.clone(),
            (None, [one]) => one.clone(),
            (None, []) => {
                return Err(Error::new(format!(
                    "{source} has no {ASKED} samples: is it the metrics of a service built on \
                     microversion-server, with request counting on?"
                )));
            }
            (None, several) => {
                return Err(Error::new(format!(
                    "{source} counts requests of several service types ({}): choose one with --service-type",
                    several.join(", ")
                )));
            }
        };
        let baseline = match &self.baseline {
            Some(path) => {
                let samples = parse_scrape(&crate::net::read_source(path, timeout).await?, path)?;
                Some(Counters::read(&samples, &service_type))
            }
            None => None,
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Ok(Impact::compute(
            &Counters::read(&current, &service_type),
            baseline.as_ref(),
            self,
            &service_type,
            now,
        ))
    }
}

/// The answer: who would break, and how often.
#[derive(Debug)]
pub struct Impact {
    service_type: String,
    min: Version,
    max: Option<Version>,
    /// What the counts cover, in words.
    window: String,
    window_json: Value,
    clients: BTreeMap<(String, String), ClientImpact>,
    total: u64,
    refused: u64,
    changed: u64,
    notes: Vec<String>,
}

impl Impact {
    fn compute(
        current: &Counters,
        baseline: Option<&Counters>,
        args: &Query,
        service_type: &str,
        now: u64,
    ) -> Impact {
        let mut notes = Vec::new();
        let restarted = baseline.is_some_and(|b| b.started != current.started);
        if restarted {
            notes.push(
                "the service's counters began again after the baseline (a restart): \
                 the counts are those since then"
                    .to_owned(),
            );
        }
        let since = args.hours.map(|h| now.saturating_sub((h * 3600.0) as u64));
        let mut impact = Impact {
            service_type: service_type.to_owned(),
            min: args.min,
            max: args.max,
            window: String::new(),
            window_json: Value::Null,
            clients: BTreeMap::new(),
            total: 0,
            refused: 0,
            changed: 0,
            notes,
        };
        (impact.window, impact.window_json) = window(current, baseline, args.hours, now);
        for (series, &count) in &current.requests {
            let last_seen = current.last_seen.get(series).copied().unwrap_or(0);
            if since.is_some_and(|since| last_seen < since) {
                continue;
            }
            let before = match baseline {
                Some(b) if !restarted => b.requests.get(series).copied().unwrap_or(0),
                _ => 0,
            };
            // A count below the baseline's is a counter that began again.
            let count = if count >= before {
                count - before
            } else {
                count
            };
            if count == 0 {
                continue;
            }
            impact.total += count;
            let key = (series.client.clone(), series.project.clone());
            match effect(series, args.min, args.max) {
                Effect::Refused => {
                    impact.refused += count;
                    let client = impact.clients.entry(key).or_default();
                    *client.refused.entry(series.version).or_insert(0) += count;
                    client.last_seen = client.last_seen.max(last_seen);
                }
                Effect::Changed(to) => {
                    impact.changed += count;
                    let client = impact.clients.entry(key).or_default();
                    client.changed.entry(series.version).or_insert((to, 0)).1 += count;
                    client.last_seen = client.last_seen.max(last_seen);
                }
                Effect::Unaffected => {}
            }
        }
        impact
    }

    /// The requests that would have been refused with 406.
    #[must_use]
    pub fn refused_requests(&self) -> u64 {
        self.refused
    }

    /// The requests that would have been served another version.
    #[must_use]
    pub fn changed_requests(&self) -> u64 {
        self.changed
    }

    /// The requests counted.
    #[must_use]
    pub fn requests(&self) -> u64 {
        self.total
    }

    /// Of `client` (the product token of its `User-Agent`) in `project`,
    /// the requests that would have been refused, by the version asked.
    #[must_use]
    pub fn refused_of(&self, client: &str, project: &str) -> BTreeMap<Version, u64> {
        self.clients
            .get(&(client.to_owned(), project.to_owned()))
            .map(|c| c.refused.clone())
            .unwrap_or_default()
    }

    fn range_text(&self) -> String {
        match self.max {
            Some(max) => format!("{} - {max}", self.min),
            None => format!("{} and above", self.min),
        }
    }

    /// The report as aligned columns, for people.
    #[must_use]
    pub fn to_table(&self) -> String {
        let mut out = format!("Served {} only, {}:\n\n", self.range_text(), self.window);
        if self.clients.is_empty() {
            out.push_str("No client would be refused, and none would be served another version.\n");
        } else {
            let mut table = Table::new(&[
                "CLIENT",
                "PROJECT",
                "REFUSED",
                "SERVED ANOTHER VERSION",
                "LAST SEEN",
            ]);
            for ((client, project), c) in &self.clients {
                let refused: Vec<String> = c
                    .refused
                    .iter()
                    .map(|(v, n)| format!("{n} at {v}"))
                    .collect();
                let changed: Vec<String> = c
                    .changed
                    .iter()
                    .map(|(v, (to, n))| format!("{n} at {v} (would get {to})"))
                    .collect();
                table.row(vec![
                    client.clone(),
                    project.clone(),
                    if refused.is_empty() {
                        "-".into()
                    } else {
                        refused.join(", ")
                    },
                    if changed.is_empty() {
                        "-".into()
                    } else {
                        changed.join(", ")
                    },
                    timestamp(c.last_seen),
                ]);
            }
            out.push_str(&table.render());
        }
        out.push_str(&format!(
            "\n{} of {} requests would have been refused (406); {} sent no version (or latest) and would be served another one.\n",
            self.refused, self.total, self.changed
        ));
        if !self.notes.is_empty() {
            out.push_str("\nNotes:\n");
            for note in &self.notes {
                out.push_str(&format!("- {note}\n"));
            }
        }
        out
    }

    /// The report as one JSON document, for programs.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let clients: Vec<Value> = self
            .clients
            .iter()
            .map(|((client, project), c)| {
                let refused: serde_json::Map<String, Value> = c
                    .refused
                    .iter()
                    .map(|(v, n)| (v.to_string(), json!(n)))
                    .collect();
                let changed: Vec<Value> = c
                    .changed
                    .iter()
                    .map(|(v, (to, n))| json!({"served": v.to_string(), "would_be_served": to.to_string(), "requests": n}))
                    .collect();
                json!({
                    "client": client,
                    "project": project,
                    "refused": refused,
                    "refused_requests": c.refused.values().sum::<u64>(),
                    "served_another_version": changed,
                    "last_seen": timestamp(c.last_seen),
                })
            })
            .collect();
        json!({
            "service_type": self.service_type,
            "min_version": self.min.to_string(),
            "max_version": self.max.map(|v| v.to_string()),
            "window": self.window_json,
            "clients": clients,
            "requests": self.total,
            "refused_requests": self.refused,
            "served_another_version_requests": self.changed,
            "notes": self.notes,
        })
    }
}

/// What the counts cover: since counting began, since a baseline, or the
/// series seen in the last hours.
fn window(
    current: &Counters,
    baseline: Option<&Counters>,
    hours: Option<f64>,
    now: u64,
) -> (String, Value) {
    let began = current
        .started
        .map_or_else(|| "the service started".to_owned(), timestamp);
    let mut text = match baseline {
        Some(_) => "in the requests counted since the baseline scrape".to_owned(),
        None => format!("in the requests counted since {began}"),
    };
    if let Some(hours) = hours {
        text.push_str(&format!(
            ", of the clients seen in the last {hours} hours (since {})",
            timestamp(now.saturating_sub((hours * 3600.0) as u64))
        ));
    }
    let json = json!({
        "counting_since": current.started.map(timestamp),
        "since_baseline": baseline.is_some(),
        "seen_in_last_hours": hours,
    });
    (text, json)
}

/// `2026-12-02T01:00:00Z` from Unix seconds.
fn timestamp(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(|secs| time::OffsetDateTime::from_unix_timestamp(secs).ok())
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| format!("{secs} s after the Unix epoch"))
}

/// Runs `impact`: the report as text to print.
pub(crate) async fn run(args: &ImpactArgs, timeout: Duration) -> Result<String, Error> {
    let mut query = Query::new(args.min);
    query.max = args.max;
    query.baseline.clone_from(&args.baseline);
    query.hours = args.hours;
    query.service_type.clone_from(&args.service_type);
    let impact = query.read(&args.source, timeout).await?;
    Ok(match args.format {
        ListFormat::Table => impact.to_table(),
        ListFormat::Json => {
            let mut text = serde_json::to_string_pretty(&impact.to_json()).unwrap_or_default();
            text.push('\n');
            text
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRAPE: &str = r#"# HELP microversion_client_asked_total Requests served.
# TYPE microversion_client_asked_total counter
microversion_client_asked_total{service_type="placement",client="nova-scheduler",project="svc",version="1.36",asked="exact"} 40
microversion_client_asked_total{service_type="placement",client="old-tool",project="p1",version="1.5",asked="exact"} 7
microversion_client_asked_total{service_type="placement",client="curl",project="p\"2",version="1.0",asked="none"} 3
microversion_client_asked_total{service_type="placement",client="osc",project="p1",version="1.39",asked="latest"} 5
microversion_client_asked_last_seen_seconds{service_type="placement",client="nova-scheduler",project="svc",version="1.36",asked="exact"} 1000
microversion_client_asked_last_seen_seconds{service_type="placement",client="old-tool",project="p1",version="1.5",asked="exact"} 900
microversion_client_asked_last_seen_seconds{service_type="placement",client="curl",project="p\"2",version="1.0",asked="none"} 100
microversion_client_asked_last_seen_seconds{service_type="placement",client="osc",project="p1",version="1.39",asked="latest"} 1000
microversion_telemetry_started_seconds{service_type="placement"} 50
microversion_requests_total{service_type="placement",version="1.36"} 40
"#;

    fn args(min: &str, max: Option<&str>, hours: Option<f64>) -> Query {
        let mut query = Query::new(min.parse().unwrap());
        query.max = max.map(|m| m.parse().unwrap());
        query.hours = hours;
        query
    }

    fn counters(text: &str) -> Counters {
        Counters::read(&parse_scrape(text, "scrape").unwrap(), "placement")
    }

    #[test]
    fn the_exposition_is_read_with_its_escapes() {
        let samples = parse_scrape(SCRAPE, "scrape").unwrap();
        assert_eq!(samples.len(), 10);
        assert_eq!(samples[2].label("project"), "p\"2");
        let err = parse_scrape("x{a=\"1\" 3\n", "f.prom").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("f.prom, line 1: unreadable labels"),
            "{err}"
        );
        let err = parse_scrape("x 1\ny{a=\"b\"} many\n", "f.prom").unwrap_err();
        assert!(
            err.to_string()
                .contains("line 2: the value is not a number"),
            "{err}"
        );
    }

    #[test]
    fn a_raised_minimum_refuses_exact_askers_and_moves_the_others() {
        let impact = Impact::compute(
            &counters(SCRAPE),
            None,
            &args("1.20", None, None),
            "placement",
            1000,
        );
        assert_eq!((impact.total, impact.refused, impact.changed), (55, 7, 3));
        let old = &impact.clients[&("old-tool".to_owned(), "p1".to_owned())];
        assert_eq!(old.refused[&Version::new(1, 5)], 7);
        let curl = &impact.clients[&("curl".to_owned(), "p\"2".to_owned())];
        assert_eq!(curl.changed[&Version::new(1, 0)], (Version::new(1, 20), 3));
        assert!(
            !impact
                .clients
                .contains_key(&("nova-scheduler".to_owned(), "svc".to_owned()))
        );
        let table = impact.to_table();
        assert!(table.contains("old-tool  p1       7 at 1.5"), "{table}");
        assert!(table.contains("3 at 1.0 (would get 1.20)"), "{table}");
        assert!(
            table.contains("7 of 55 requests would have been refused (406)"),
            "{table}"
        );
        assert!(table.contains("since 1970-01-01T00:00:50Z"), "{table}");
        let json = impact.to_json();
        assert_eq!(json["refused_requests"], 7);
        assert_eq!(json["clients"][1]["client"], "old-tool");
        assert_eq!(json["clients"][1]["refused"]["1.5"], 7);
    }

    #[test]
    fn a_capped_maximum_refuses_above_it_and_serves_latest_lower() {
        let impact = Impact::compute(
            &counters(SCRAPE),
            None,
            &args("1.0", Some("1.30"), None),
            "placement",
            1000,
        );
        assert_eq!((impact.refused, impact.changed), (40, 5));
        let osc = &impact.clients[&("osc".to_owned(), "p1".to_owned())];
        assert_eq!(osc.changed[&Version::new(1, 39)], (Version::new(1, 30), 5));
    }

    #[test]
    fn hours_keep_the_recent_clients_and_a_baseline_the_recent_requests() {
        let recent = Impact::compute(
            &counters(SCRAPE),
            None,
            &args("1.20", None, Some(0.1)),
            "placement",
            1000,
        );
        // curl was last seen 900 s before: outside 6 minutes.
        assert_eq!((recent.refused, recent.changed), (7, 0));
        let before = SCRAPE.replace(
            "version=\"1.5\",asked=\"exact\"} 7",
            "version=\"1.5\",asked=\"exact\"} 5",
        );
        let baseline = counters(&before);
        let since = Impact::compute(
            &counters(SCRAPE),
            Some(&baseline),
            &args("1.20", None, None),
            "placement",
            1000,
        );
        assert_eq!(since.refused, 2);
        assert_eq!(since.changed, 0, "curl's 3 were in the baseline too");
        // A restart between the two: the current counts stand alone.
        let restarted = before.replace("} 50\n", "} 10\n");
        let since = Impact::compute(
            &counters(SCRAPE),
            Some(&counters(&restarted)),
            &args("1.20", None, None),
            "placement",
            1000,
        );
        assert_eq!(since.refused, 7);
        assert!(since.notes[0].contains("a restart"), "{:?}", since.notes);
    }

    #[test]
    fn timestamps_are_rfc_3339() {
        assert_eq!(timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(timestamp(1_796_173_200), "2026-12-02T01:00:00Z");
        assert_eq!(timestamp(951_782_400), "2000-02-29T00:00:00Z");
    }
}
