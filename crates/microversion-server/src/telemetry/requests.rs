//! [`HttpMetricsLayer`]: requests by route template, method, status and
//! served version, and latency histograms per route template.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use http::{Method, Request, Response};
use microversion::Version;
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use super::Telemetry;
use crate::extract::ServedVersion;

/// The route template a [`VersionedRouter`](crate::VersionedRouter)
/// matched (`/resource_providers/{uuid}`), put in the extensions of the
/// responses of requests that went through an [`HttpMetricsLayer`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RouteTemplate(pub(crate) &'static str);

impl RouteTemplate {
    /// The template, as the route was registered.
    #[must_use]
    pub fn as_str(&self) -> &str {
        self.0
    }
}

/// Marks a request the [`HttpMetricsLayer`] observes: the router and the
/// microversion layer then put the route template and the served version
/// in the response's extensions (and only then, so that without the layer
/// nothing is added to a response).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Observed;

/// The upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// What [`HttpMetricsLayer`] counts. Cardinality is bounded: routes are
/// the registered templates (plus `unmatched`), methods the standard ones
/// (plus `other`), versions those of the API.
#[derive(Debug, Default)]
pub(super) struct HttpCounters {
    requests: HashMap<RequestKey, u64>,
    latency: HashMap<Option<RouteTemplate>, Histogram>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct RequestKey {
    route: Option<RouteTemplate>,
    method: &'static str,
    status: u16,
    version: Option<Version>,
}

impl PartialOrd for RouteTemplate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RouteTemplate {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.cmp(other.0)
    }
}

#[derive(Debug, Default)]
struct Histogram {
    /// Observations per bucket (not cumulative); the last is `+Inf`.
    buckets: [u64; BUCKETS.len() + 1],
    sum: Duration,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, elapsed: Duration) {
        let secs = elapsed.as_secs_f64();
        let index = BUCKETS
            .iter()
            .position(|bound| secs <= *bound)
            .unwrap_or(BUCKETS.len());
        self.buckets[index] += 1;
        self.sum += elapsed;
        self.count += 1;
    }
}

/// A method's label: the standard methods by name, any other as `other`,
/// so that a client cannot grow the label set at will.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        Method::TRACE => "TRACE",
        Method::CONNECT => "CONNECT",
        _ => "other",
    }
}

impl HttpCounters {
    pub(super) fn record(
        &mut self,
        route: Option<RouteTemplate>,
        method: &'static str,
        status: u16,
        version: Option<Version>,
        elapsed: Duration,
    ) {
        let key = RequestKey {
            route,
            method,
            status,
            version,
        };
        match self.latency.get_mut(&key.route) {
            Some(histogram) => histogram.observe(elapsed),
            None => self
                .latency
                .entry(key.route.clone())
                .or_default()
                .observe(elapsed),
        }
        *self.requests.entry(key).or_insert(0) += 1;
    }

    pub(super) fn count(
        &self,
        route: Option<&str>,
        method: &str,
        status: u16,
        version: Option<Version>,
    ) -> u64 {
        self.requests
            .iter()
            .filter(|(k, _)| {
                k.route.as_ref().map(RouteTemplate::as_str) == route
                    && k.method == method
                    && k.status == status
                    && k.version == version
            })
            .map(|(_, n)| *n)
            .sum()
    }

    pub(super) fn render(&self, service: &str, out: &mut String) {
        out.push_str(
            "# HELP microversion_http_requests_total HTTP requests answered, by route template, method, status and served microversion.\n",
        );
        out.push_str("# TYPE microversion_http_requests_total counter\n");
        let mut requests: Vec<_> = self.requests.iter().collect();
        requests.sort();
        for (key, count) in requests {
            let version = key
                .version
                .map_or_else(|| "none".to_owned(), |v| v.to_string());
            let _ = writeln!(
                out,
                "microversion_http_requests_total{{service_type=\"{service}\",route=\"{}\",method=\"{}\",status=\"{}\",version=\"{version}\"}} {count}",
                route_label(key.route.as_ref()),
                key.method,
                key.status,
            );
        }
        out.push_str(
            "# HELP microversion_http_request_duration_seconds Time from a request's arrival to its response's head, by route template.\n",
        );
        out.push_str("# TYPE microversion_http_request_duration_seconds histogram\n");
        let mut latency: Vec<_> = self.latency.iter().collect();
        latency.sort_by(|a, b| a.0.cmp(b.0));
        for (route, histogram) in latency {
            let route = route_label(route.as_ref());
            let mut cumulative = 0;
            for (i, count) in histogram.buckets.iter().enumerate() {
                cumulative += count;
                let le = BUCKETS
                    .get(i)
                    .map_or_else(|| "+Inf".to_owned(), ToString::to_string);
                let _ = writeln!(
                    out,
                    "microversion_http_request_duration_seconds_bucket{{service_type=\"{service}\",route=\"{route}\",le=\"{le}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "microversion_http_request_duration_seconds_sum{{service_type=\"{service}\",route=\"{route}\"}} {}",
                histogram.sum.as_secs_f64()
            );
            let _ = writeln!(
                out,
                "microversion_http_request_duration_seconds_count{{service_type=\"{service}\",route=\"{route}\"}} {}",
                histogram.count
            );
        }
    }
}

fn route_label(route: Option<&RouteTemplate>) -> String {
    route.map_or_else(
        || "unmatched".to_owned(),
        |r| super::counters::escape(r.as_str()),
    )
}

/// Counts every response of the wrapped service in a [`Telemetry`]: by
/// route template, method, status and served version, with a latency
/// histogram per route template. Put it outside everything that may answer
/// a request (authentication too), and the [`MicroversionLayer`] and the
/// [`VersionedRouter`](crate::VersionedRouter) inside it: they label the
/// responses. A response no route answered (an unknown path, a refused
/// version or token) counts under the route `unmatched`.
///
/// [`MicroversionLayer`]: crate::MicroversionLayer
///
/// ```
/// use axum::Router;
/// use microversion::VersionRange;
/// use microversion_server::telemetry::HttpMetricsLayer;
/// use microversion_server::{MicroversionLayer, Microversions, VersionedRouter};
/// use tower::ServiceBuilder;
///
/// let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
///     .build()?;
/// let telemetry = api.telemetry().clone();
/// let routes: Router = VersionedRouter::new().build()?;
/// let app = ServiceBuilder::new()
///     .layer(HttpMetricsLayer::new(telemetry.clone()))
///     .layer(MicroversionLayer::new(api))
///     .service(routes);
/// // telemetry.render_prometheus() now includes the HTTP families.
/// # let _ = app;
/// # Ok::<(), microversion_server::BuildError>(())
/// ```
#[derive(Clone, Debug)]
pub struct HttpMetricsLayer {
    telemetry: Telemetry,
}

impl HttpMetricsLayer {
    /// A layer counting into `telemetry`.
    #[must_use]
    pub fn new(telemetry: Telemetry) -> Self {
        HttpMetricsLayer { telemetry }
    }
}

impl<S> Layer<S> for HttpMetricsLayer {
    type Service = HttpMetrics<S>;

    fn layer(&self, inner: S) -> Self::Service {
        HttpMetrics {
            inner,
            telemetry: self.telemetry.clone(),
        }
    }
}

/// The service of [`HttpMetricsLayer`].
#[derive(Clone, Debug)]
pub struct HttpMetrics<S> {
    inner: S,
    telemetry: Telemetry,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for HttpMetrics<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = HttpMetricsFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<ReqBody>) -> Self::Future {
        let started = Instant::now();
        let method = method_label(req.method());
        req.extensions_mut().insert(Observed);
        HttpMetricsFuture {
            future: self.inner.call(req),
            telemetry: self.telemetry.clone(),
            method,
            started,
        }
    }
}

pin_project! {
    /// The response future of [`HttpMetrics`].
    pub struct HttpMetricsFuture<F> {
        #[pin]
        future: F,
        telemetry: Telemetry,
        method: &'static str,
        started: Instant,
    }
}

impl<F> std::fmt::Debug for HttpMetricsFuture<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpMetricsFuture").finish_non_exhaustive()
    }
}

impl<F, B, E> Future for HttpMetricsFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<B>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let result = ready!(this.future.poll(cx));
        if let Ok(response) = &result {
            let route = response.extensions().get::<RouteTemplate>().cloned();
            let version = response.extensions().get::<ServedVersion>().map(|v| v.0);
            this.telemetry.record_http(
                route,
                this.method,
                response.status().as_u16(),
                version,
                this.started.elapsed(),
            );
        }
        Poll::Ready(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative_in_the_text() {
        let mut c = HttpCounters::default();
        let route = Some(RouteTemplate("/things/{id}"));
        for ms in [0, 3, 3, 700, 20_000] {
            c.record(
                route.clone(),
                "GET",
                200,
                Some(Version::new(1, 2)),
                Duration::from_millis(ms),
            );
        }
        c.record(None, "other", 404, None, Duration::ZERO);
        let mut text = String::new();
        c.render("x", &mut text);
        assert!(text.contains(
            "microversion_http_requests_total{service_type=\"x\",route=\"/things/{id}\",method=\"GET\",status=\"200\",version=\"1.2\"} 5\n"
        ));
        assert!(text.contains(
            "microversion_http_requests_total{service_type=\"x\",route=\"unmatched\",method=\"other\",status=\"404\",version=\"none\"} 1\n"
        ));
        let bucket = |le: &str| {
            format!(
                "microversion_http_request_duration_seconds_bucket{{service_type=\"x\",route=\"/things/{{id}}\",le=\"{le}\"}} "
            )
        };
        for (le, n) in [
            ("0.0005", 1),
            ("0.0025", 1),
            ("0.005", 3),
            ("0.5", 3),
            ("1", 4),
            ("10", 4),
            ("+Inf", 5),
        ] {
            assert!(
                text.contains(&format!("{}{n}\n", bucket(le))),
                "{le}\n{text}"
            );
        }
        assert!(text.contains(
            "microversion_http_request_duration_seconds_count{service_type=\"x\",route=\"/things/{id}\"} 5\n"
        ));
        assert!(text.contains(
            "microversion_http_request_duration_seconds_sum{service_type=\"x\",route=\"/things/{id}\"} 20.706\n"
        ));
        assert_eq!(
            c.count(Some("/things/{id}"), "GET", 200, Some(Version::new(1, 2))),
            5
        );
        assert_eq!(c.count(None, "other", 404, None), 1);
    }

    #[test]
    fn unusual_methods_share_one_label() {
        assert_eq!(method_label(&Method::PATCH), "PATCH");
        assert_eq!(method_label(&Method::from_bytes(b"BREW").unwrap()), "other");
    }
}
