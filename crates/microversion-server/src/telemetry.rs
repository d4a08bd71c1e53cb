//! Operator telemetry: which versions are served, to which clients, and how
//! many requests were refused.
//!
//! With the `metrics` feature the layer counts every negotiated request by
//! served version, by client (the product token of `User-Agent`, such as
//! `python-openstackclient`) and by outcome (`served`, `malformed`,
//! `unsupported`), and [`Telemetry::render_prometheus`] writes the counters
//! in the Prometheus text format. Serve it on a version-neutral path:
//!
//! ```
//! # #[cfg(feature = "metrics")] {
//! use axum::{Router, routing::get};
//! use microversion::VersionRange;
//! use microversion_server::{MicroversionLayer, Microversions};
//!
//! let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
//!     .version_neutral("/metrics")
//!     .build()?;
//! let telemetry = api.telemetry().clone();
//! let app: Router = Router::new()
//!     .route("/metrics", get(move || async move { telemetry.render_prometheus() }))
//!     .layer(MicroversionLayer::new(api));
//! # }
//! # Ok::<(), microversion_server::BuildError>(())
//! ```
//!
//! [`HttpMetricsLayer`], put outside the microversion layer, adds every
//! answered request by route template, method, status and served version,
//! and a latency histogram per route template; the same text then carries
//! them. The families:
//!
//! | family | labels |
//! |---|---|
//! | `microversion_requests_total` | `version` |
//! | `microversion_negotiations_total` | `outcome` (`served`, `malformed`, `unsupported`) |
//! | `microversion_client_requests_total` | `client`, `outcome` |
//! | `microversion_client_versions_total` | `client`, `version`: who still asks for old versions |
//! | `microversion_client_asked_total` | `client`, `project`, `version` (served), `asked` (`none`, `exact`, `latest`, `legacy`) |
//! | `microversion_client_asked_last_seen_seconds` | the same labels: when such a request last came (a gauge, Unix time) |
//! | `microversion_telemetry_started_seconds` | when counting began (a gauge, Unix time) |
//! | `microversion_http_requests_total` | `route`, `method`, `status`, `version` (`none` when none was served) |
//! | `microversion_http_request_duration_seconds` | `route` (histogram) |
//!
//! `asked` says how the version was asked: `none` (no header: the
//! minimum), `exact` (a number), `latest`, or `legacy` (under the legacy
//! root, whatever was asked). It tells what a narrower range would do to
//! each client: raising the minimum above what a client asks by number
//! refuses it with 406, and serves a client that asks nothing another
//! version than before; `microversion impact` reads these families. The
//! project is what [`MicroversionsBuilder::telemetry_project`](crate::MicroversionsBuilder::telemetry_project)
//! reads from the request (Keystone's project id), else `unknown`.
//!
//! Every family also has `service_type`. Labels stay bounded: at most 200
//! clients apart (the rest are `other`), 1,000 projects per client (the
//! rest are `other`), the registered route templates
//! (a request no route answered is `unmatched`), the standard methods (any
//! other is `other`).
//!
//! Without the feature nothing is counted. In both cases every negotiated
//! request runs inside a `tracing` span named `microversion`, at debug
//! level, with the fields `version` and `request_id`.

use http::Request;
use microversion::Version;

use crate::config::Microversions;

/// How negotiation ended for one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Served(Version, Asked),
    Malformed,
    Unsupported,
}

/// How a served request asked for its version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Asked {
    /// No version header: the minimum.
    Absent,
    /// A version by number.
    Exact,
    /// `latest`.
    Latest,
    /// Under the legacy root, whatever the headers said.
    Legacy,
}

impl Asked {
    /// Its label value.
    #[cfg(feature = "metrics")]
    const fn label(self) -> &'static str {
        match self {
            Asked::Absent => "none",
            Asked::Exact => "exact",
            Asked::Latest => "latest",
            Asked::Legacy => "legacy",
        }
    }
}

/// What [`MicroversionsBuilder::telemetry_project`](crate::MicroversionsBuilder::telemetry_project)
/// takes: reads the project of a request from its extensions.
#[cfg(feature = "metrics")]
pub type ProjectOf = for<'a> fn(&'a http::Extensions) -> Option<&'a str>;

/// Counts one request (a no-op without the `metrics` feature).
#[cfg_attr(not(feature = "metrics"), allow(clippy::missing_const_for_fn))]
pub(crate) fn record<B>(api: &Microversions, req: &Request<B>, outcome: Outcome) {
    #[cfg(feature = "metrics")]
    if api.counts_requests() {
        let project = api.project_of(req.extensions());
        api.telemetry().record(req.headers(), project, outcome);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (api, req, outcome);
}

#[cfg(feature = "metrics")]
pub use counters::Telemetry;
#[cfg(feature = "metrics")]
pub(crate) use requests::Observed;
#[cfg(feature = "metrics")]
pub use requests::{HttpMetrics, HttpMetricsFuture, HttpMetricsLayer, RouteTemplate};

#[cfg(feature = "metrics")]
mod requests;

#[cfg(feature = "metrics")]
mod counters {
    use std::collections::{BTreeMap, HashMap};
    use std::fmt::Write as _;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};

    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use http::HeaderMap;
    use http::header::USER_AGENT;
    use microversion::Version;

    use super::requests::{HttpCounters, RouteTemplate};
    use super::{Asked, Outcome};

    /// At most this many distinct clients are counted apart; the rest are
    /// counted as `other`, so a client cannot grow the label set at will.
    const MAX_CLIENTS: usize = 200;

    /// At most this many projects of one client are counted apart.
    const MAX_PROJECTS: usize = 1000;

    /// Request counters of one API. Cheap to clone (an `Arc`).
    #[derive(Clone, Debug, Default)]
    pub struct Telemetry {
        inner: Arc<Inner>,
    }

    #[derive(Debug, Default)]
    struct Inner {
        service_type: String,
        outcomes: [AtomicU64; 3],
        versions: Mutex<BTreeMap<Version, u64>>,
        clients: Mutex<HashMap<String, ClientCounts>>,
        http: Mutex<HttpCounters>,
        /// When counting began (Unix seconds).
        started: u64,
    }

    /// What one client asked for.
    #[derive(Debug, Default)]
    struct ClientCounts {
        /// Served, malformed, unsupported.
        outcomes: [u64; 3],
        /// The versions it was served.
        versions: BTreeMap<Version, u64>,
        /// By project, by served version and how it was asked.
        asked: HashMap<String, BTreeMap<(Version, Asked), Seen>>,
    }

    /// Requests of one series, and when the last came.
    #[derive(Clone, Copy, Debug, Default)]
    struct Seen {
        count: u64,
        /// Unix seconds.
        last: u64,
    }

    impl ClientCounts {
        fn add(&mut self, index: usize, project: Option<&str>, outcome: Outcome) {
            self.outcomes[index] += 1;
            if let Outcome::Served(version, asked) = outcome {
                *self.versions.entry(version).or_insert(0) += 1;
                let project = project.unwrap_or("unknown");
                let by_version = match self.asked.get_mut(project) {
                    Some(by_version) => by_version,
                    None => new_entry(&mut self.asked, project, MAX_PROJECTS),
                };
                let seen = by_version.entry((version, asked)).or_default();
                seen.count += 1;
                seen.last = unix_now();
            }
        }
    }

    /// The entry for `key`, which `map` lacks: made, or `other`'s once
    /// `map` holds `max` keys, so that a client cannot grow the label set
    /// at will. (Callers look `key` up first: one lookup when it is there.)
    fn new_entry<'m, V: Default>(
        map: &'m mut HashMap<String, V>,
        key: &str,
        max: usize,
    ) -> &'m mut V {
        let key = if map.len() < max { key } else { "other" };
        map.entry(key.to_owned()).or_default()
    }

    fn unix_now() -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }

    impl Telemetry {
        pub(crate) fn new(service_type: &str) -> Self {
            Telemetry {
                inner: Arc::new(Inner {
                    service_type: service_type.to_owned(),
                    started: unix_now(),
                    ..Inner::default()
                }),
            }
        }

        pub(crate) fn record(&self, headers: &HeaderMap, project: Option<&str>, outcome: Outcome) {
            let index = match outcome {
                Outcome::Served(..) => 0,
                Outcome::Malformed => 1,
                Outcome::Unsupported => 2,
            };
            self.inner.outcomes[index].fetch_add(1, Ordering::Relaxed);
            if let Outcome::Served(version, _) = outcome {
                let mut versions = lock(&self.inner.versions);
                *versions.entry(version).or_insert(0) += 1;
            }
            let client = headers
                .get(USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .map_or("unknown", product_token);
            let mut clients = lock(&self.inner.clients);
            let counts = match clients.get_mut(client) {
                Some(counts) => counts,
                None => new_entry(&mut clients, client, MAX_CLIENTS),
            };
            counts.add(index, project, outcome);
        }

        /// Records one answered request (for [`super::HttpMetricsFuture`]).
        pub(super) fn record_http(
            &self,
            route: Option<RouteTemplate>,
            method: &'static str,
            status: u16,
            version: Option<Version>,
            elapsed: Duration,
        ) {
            lock(&self.inner.http).record(route, method, status, version, elapsed);
        }

        /// How many requests an [`HttpMetricsLayer`](super::HttpMetricsLayer)
        /// counted for the route template `route` (`None`: no route
        /// answered), `method`, `status` and served `version`.
        #[must_use]
        pub fn http_requests(
            &self,
            route: Option<&str>,
            method: &str,
            status: u16,
            version: Option<Version>,
        ) -> u64 {
            lock(&self.inner.http).count(route, method, status, version)
        }

        /// How many requests from `client` (the product token of its
        /// `User-Agent`) were served at `version`.
        #[must_use]
        pub fn client_served_at(&self, client: &str, version: Version) -> u64 {
            lock(&self.inner.clients)
                .get(client)
                .and_then(|c| c.versions.get(&version).copied())
                .unwrap_or(0)
        }

        /// How many requests were served at `version`.
        #[must_use]
        pub fn served_at(&self, version: Version) -> u64 {
            lock(&self.inner.versions)
                .get(&version)
                .copied()
                .unwrap_or(0)
        }

        /// How many requests ended as served, malformed and unsupported.
        #[must_use]
        pub fn outcomes(&self) -> [u64; 3] {
            let o = &self.inner.outcomes;
            [0, 1, 2].map(|i| o[i].load(Ordering::Relaxed))
        }

        /// The counters in the Prometheus text exposition format.
        #[must_use]
        pub fn render_prometheus(&self) -> String {
            let service = escape(&self.inner.service_type);
            let mut out = String::new();
            out.push_str("# HELP microversion_requests_total Requests served, by microversion.\n");
            out.push_str("# TYPE microversion_requests_total counter\n");
            for (version, count) in lock(&self.inner.versions).iter() {
                let _ = writeln!(
                    out,
                    "microversion_requests_total{{service_type=\"{service}\",version=\"{version}\"}} {count}"
                );
            }
            out.push_str(
                "# HELP microversion_negotiations_total Negotiations, by outcome (served, malformed: 400, unsupported: 406).\n",
            );
            out.push_str("# TYPE microversion_negotiations_total counter\n");
            for (name, count) in OUTCOMES.iter().zip(self.outcomes()) {
                let _ = writeln!(
                    out,
                    "microversion_negotiations_total{{service_type=\"{service}\",outcome=\"{name}\"}} {count}"
                );
            }
            out.push_str(
                "# HELP microversion_client_requests_total Negotiations, by User-Agent product and outcome.\n",
            );
            out.push_str("# TYPE microversion_client_requests_total counter\n");
            let clients = lock(&self.inner.clients);
            let mut sorted: Vec<_> = clients.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            for (client, counts) in &sorted {
                for (name, count) in OUTCOMES.iter().zip(counts.outcomes) {
                    if count > 0 {
                        let _ = writeln!(
                            out,
                            "microversion_client_requests_total{{service_type=\"{service}\",client=\"{}\",outcome=\"{name}\"}} {count}",
                            escape(client)
                        );
                    }
                }
            }
            out.push_str(
                "# HELP microversion_client_versions_total Requests served, by User-Agent product and microversion.\n",
            );
            out.push_str("# TYPE microversion_client_versions_total counter\n");
            for (client, counts) in &sorted {
                for (version, count) in &counts.versions {
                    let _ = writeln!(
                        out,
                        "microversion_client_versions_total{{service_type=\"{service}\",client=\"{}\",version=\"{version}\"}} {count}",
                        escape(client)
                    );
                }
            }
            render_asked(&service, &sorted, &mut out);
            drop(clients);
            out.push_str(
                "# HELP microversion_telemetry_started_seconds When these counters began, in Unix time.\n",
            );
            out.push_str("# TYPE microversion_telemetry_started_seconds gauge\n");
            let _ = writeln!(
                out,
                "microversion_telemetry_started_seconds{{service_type=\"{service}\"}} {}",
                self.inner.started
            );
            lock(&self.inner.http).render(&service, &mut out);
            out
        }
    }

    const OUTCOMES: [&str; 3] = ["served", "malformed", "unsupported"];

    /// The families by client, project, version and how it was asked.
    fn render_asked(service: &str, clients: &[(&String, &ClientCounts)], out: &mut String) {
        let mut series: Vec<(String, u64, u64)> = Vec::new();
        for (client, counts) in clients {
            let client = escape(client);
            let mut projects: Vec<_> = counts.asked.iter().collect();
            projects.sort_by(|a, b| a.0.cmp(b.0));
            for (project, by_version) in projects {
                let project = escape(project);
                for ((version, asked), seen) in by_version {
                    let labels = format!(
                        "service_type=\"{service}\",client=\"{client}\",project=\"{project}\",version=\"{version}\",asked=\"{}\"",
                        asked.label()
                    );
                    series.push((labels, seen.count, seen.last));
                }
            }
        }
        out.push_str(
            "# HELP microversion_client_asked_total Requests served, by User-Agent product, project, microversion and how it was asked (none, exact, latest, legacy).\n",
        );
        out.push_str("# TYPE microversion_client_asked_total counter\n");
        for (labels, count, _) in &series {
            let _ = writeln!(out, "microversion_client_asked_total{{{labels}}} {count}");
        }
        out.push_str(
            "# HELP microversion_client_asked_last_seen_seconds When the last request of the series came, in Unix time.\n",
        );
        out.push_str("# TYPE microversion_client_asked_last_seen_seconds gauge\n");
        for (labels, _, last) in &series {
            let _ = writeln!(
                out,
                "microversion_client_asked_last_seen_seconds{{{labels}}} {last}"
            );
        }
    }

    /// A poisoned lock still holds valid counters: keep counting.
    pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `python-novaclient/18.0 keystoneauth1/5.0` -> `python-novaclient`.
    fn product_token(user_agent: &str) -> &str {
        let token = user_agent
            .split(|c: char| c == '/' || c.is_whitespace())
            .next()
            .unwrap_or_default();
        if token.is_empty() { "unknown" } else { token }
    }

    /// Escapes a Prometheus label value.
    pub(super) fn escape(value: &str) -> String {
        value
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
    }

    #[cfg(test)]
    mod tests {
        use http::HeaderValue;

        use super::*;

        #[test]
        fn counts_and_renders() {
            let t = Telemetry::new("placement");
            let mut h = HeaderMap::new();
            h.insert(
                USER_AGENT,
                HeaderValue::from_static("osc-placement/4.0 keystoneauth1/5"),
            );
            let served = Outcome::Served(Version::new(1, 39), Asked::Latest);
            t.record(&h, Some("p1"), served);
            t.record(&h, Some("p1"), served);
            t.record(&h, None, Outcome::Served(Version::new(1, 0), Asked::Absent));
            t.record(&HeaderMap::new(), None, Outcome::Unsupported);
            assert_eq!(t.served_at(Version::new(1, 39)), 2);
            assert_eq!(t.outcomes(), [3, 0, 1]);
            let text = t.render_prometheus();
            assert!(text.contains(
                "microversion_requests_total{service_type=\"placement\",version=\"1.39\"} 2"
            ));
            assert!(text.contains(
                "microversion_client_requests_total{service_type=\"placement\",client=\"osc-placement\",outcome=\"served\"} 3"
            ));
            assert!(text.contains(
                "microversion_client_asked_total{service_type=\"placement\",client=\"osc-placement\",project=\"p1\",version=\"1.39\",asked=\"latest\"} 2\n"
            ));
            assert!(text.contains(
                "microversion_client_asked_total{service_type=\"placement\",client=\"osc-placement\",project=\"unknown\",version=\"1.0\",asked=\"none\"} 1\n"
            ));
            let last_seen = text
                .lines()
                .find(|l| l.starts_with("microversion_client_asked_last_seen_seconds{service_type=\"placement\",client=\"osc-placement\",project=\"p1\""))
                .and_then(|l| l.rsplit(' ').next())
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap();
            assert!(last_seen >= t.inner.started && last_seen <= unix_now());
            assert!(text.contains(
                "microversion_client_requests_total{service_type=\"placement\",client=\"unknown\",outcome=\"unsupported\"} 1"
            ));
            assert!(text.contains(
                "microversion_client_versions_total{service_type=\"placement\",client=\"osc-placement\",version=\"1.39\"} 2\n"
            ));
            assert_eq!(t.client_served_at("osc-placement", Version::new(1, 39)), 2);
            assert_eq!(t.client_served_at("unknown", Version::new(1, 39)), 0);
        }

        #[test]
        fn clients_are_capped() {
            let t = Telemetry::new("x");
            for i in 0..(MAX_CLIENTS + 10) {
                let mut h = HeaderMap::new();
                h.insert(
                    USER_AGENT,
                    HeaderValue::try_from(format!("c{i}/1")).unwrap(),
                );
                t.record(&h, None, Outcome::Malformed);
            }
            let clients = lock(&t.inner.clients);
            assert_eq!(clients.len(), MAX_CLIENTS + 1);
            assert_eq!(clients["other"].outcomes[1], 10);
        }

        #[test]
        fn label_values_are_escaped() {
            assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        }
    }
}

#[cfg(all(test, feature = "metrics"))]
mod tests {
    use microversion::VersionRange;

    use super::*;

    #[test]
    fn counting_can_be_turned_off() {
        let range = VersionRange::from_static("1.0", "1.39");
        let req = Request::new(());
        let off = Microversions::builder("placement", range)
            .count_requests(false)
            .build()
            .unwrap();
        let served = Outcome::Served(Version::new(1, 2), Asked::Exact);
        record(&off, &req, served);
        assert_eq!(off.telemetry().outcomes(), [0, 0, 0]);
        let on = Microversions::builder("placement", range).build().unwrap();
        record(&on, &req, served);
        assert_eq!(on.telemetry().outcomes(), [1, 0, 0]);
    }
}
