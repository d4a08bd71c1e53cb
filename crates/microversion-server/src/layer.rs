//! [`MicroversionLayer`]: negotiates the version of every request and sets
//! the version headers on every response.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, Entry, VARY};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use microversion::profile::VersionErrorHeaders;
use microversion::{InvalidVersion, OPENSTACK_API_VERSION, Version};
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use crate::config::{Microversions, NegotiationOutcome, REQUEST_ID, Refusal, VersionRefused};
use crate::dialect::{ErrorContext, malformed_detail, render, unsupported_detail};
use crate::error::ApiError;
use crate::extract::{Negotiated, RequestId};
use crate::telemetry::Asked;

/// Applies [`Microversion`] to a service.
///
/// ```
/// use axum::{Router, routing::get};
/// use microversion::VersionRange;
/// use microversion_server::{MicroversionLayer, Microversions, ServedVersion};
///
/// let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
///     .build()?;
/// let app: Router = Router::new()
///     .route("/things", get(|v: ServedVersion| async move { v.to_string() }))
///     .layer(MicroversionLayer::new(api));
/// # Ok::<(), microversion_server::BuildError>(())
/// ```
///
/// `Router::layer` wraps each route on its own, so axum boxes the layer's
/// future and clones the wrapped route on every request. Where that
/// matters, wrap the whole router once instead, after `with_state` (which
/// turns the handlers into services once rather than on every request),
/// which costs fewer instructions per request (BENCHMARKS.md, "Measured
/// choices").
///
/// ```no_run
/// use axum::extract::Request;
/// use axum::{Router, ServiceExt, routing::get};
/// use microversion::VersionRange;
/// use microversion_server::{MicroversionLayer, Microversions, ServedVersion};
/// use tower_layer::Layer;
///
/// # async fn serve() -> Result<(), Box<dyn std::error::Error>> {
/// let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
///     .build()?;
/// let routes: Router = Router::new()
///     .route("/things", get(|v: ServedVersion| async move { v.to_string() }))
///     .with_state(());
/// let app = MicroversionLayer::new(api).layer(routes);
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8778").await?;
/// axum::serve(listener, ServiceExt::<Request>::into_make_service(app)).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct MicroversionLayer {
    api: Microversions,
}

impl MicroversionLayer {
    /// A layer for the API described by `api`.
    #[must_use]
    pub fn new(api: Microversions) -> Self {
        MicroversionLayer { api }
    }
}

impl<S> Layer<S> for MicroversionLayer {
    type Service = Microversion<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Microversion {
            inner,
            api: self.api.clone(),
        }
    }
}

/// Negotiates each request's version (docs/wire.md 1-8), answers malformed and
/// unsupported versions itself (400 / 406), and sets the version, `Vary`
/// and request id headers on every response (9-11), rendering error bodies
/// in the profile's format.
///
/// A request asks for a version in one of three forms, as upstream Nova
/// and Placement read them: no entry for the service (the served
/// minimum), `X.Y` (that version; 406 outside the range), or `latest`
/// (the served maximum; any case only under Ironic's rules). `X.latest`,
/// a bare major and `None` are forms of a client's own request
/// ([`VersionRequest`](microversion::VersionRequest)), never sent as
/// such: the layer answers them as malformed.
///
/// Handlers read the served version with the [`ServedVersion`](crate::ServedVersion)
/// extractor and the request id with [`RequestId`]; middleware inside the
/// layer with [`ServedVersion::from_extensions`](crate::ServedVersion::from_extensions)
/// and [`RequestId::from_extensions`].
#[derive(Clone, Debug)]
pub struct Microversion<S> {
    inner: S,
    api: Microversions,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for Microversion<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    ResBody: From<String>,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future, ResBody>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<ReqBody>) -> Self::Future {
        // An outer layer (a request log) may have chosen the id.
        let request_id = req
            .extensions()
            .get::<RequestId>()
            .cloned()
            .unwrap_or_else(RequestId::generate);
        let read = RequestHeaders::read(req.headers());
        #[cfg(feature = "metrics")]
        let observed = req
            .extensions()
            .get::<crate::telemetry::Observed>()
            .is_some();
        let mut finish = Finish {
            api: self.api.clone(),
            served: None,
            request_id,
            accept: read.accept.cloned(),
            content_type: read.content_type.cloned(),
            method: req.method().clone(),
            legacy: false,
            #[cfg(feature = "metrics")]
            observed,
        };
        if self.api.is_version_neutral(req.uri().path()) {
            req.extensions_mut().insert(Negotiated {
                request_id: finish.request_id.clone(),
                served: None,
                legacy: false,
            });
            return ResponseFuture::inner(self.inner.call(req), finish, tracing::Span::none());
        }
        if self.api.is_legacy(req.uri().path()) {
            // Nova's v2.0 on v2.1 code: the minimum, whatever was asked.
            let version = self.api.code_range().min();
            let served = crate::telemetry::Outcome::Served(version, Asked::Legacy);
            crate::telemetry::record(&self.api, &req, served);
            finish.legacy = true;
            return self.serve(req, version, finish);
        }
        let (outcome, asked) = self.api.negotiate_found(read.lone_version, req.headers());
        match outcome {
            NegotiationOutcome::Served(version) => {
                crate::telemetry::record(
                    &self.api,
                    &req,
                    crate::telemetry::Outcome::Served(version, asked),
                );
                self.serve(req, version, finish)
            }
            NegotiationOutcome::Malformed(error) => {
                crate::telemetry::record(&self.api, &req, crate::telemetry::Outcome::Malformed);
                let response = malformed(&self.api, &error, &finish);
                ResponseFuture::ready(response)
            }
            NegotiationOutcome::Unsupported(version) => {
                crate::telemetry::record(&self.api, &req, crate::telemetry::Outcome::Unsupported);
                let response = unsupported(&self.api, version, &finish);
                ResponseFuture::ready(response)
            }
        }
    }
}

impl<S> Microversion<S> {
    /// Hands `req` to the inner service to be served at `version`.
    fn serve<ReqBody, ResBody>(
        &mut self,
        mut req: Request<ReqBody>,
        version: Version,
        mut finish: Finish,
    ) -> ResponseFuture<S::Future, ResBody>
    where
        S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    {
        req.extensions_mut().insert(Negotiated {
            request_id: finish.request_id.clone(),
            served: Some(version),
            legacy: finish.legacy,
        });
        // At debug level: a service logging at info (one line per
        // request) pays nothing for a span it does not show; making,
        // entering and closing it cost about a tenth of a light request.
        let span = tracing::debug_span!(
            "microversion",
            version = %version,
            request_id = finish.request_id.as_str(),
        );
        finish.served = Some(version);
        // Entered only where a subscriber records it.
        let future = if span.is_disabled() {
            self.inner.call(req)
        } else {
            span.in_scope(|| self.inner.call(req))
        };
        ResponseFuture::inner(future, finish, span)
    }
}

/// What the layer reads of a request's headers, found in one pass over
/// them: a lookup each hashes the name it looks for (about 450
/// instructions a request for the three, against about 90 for the pass
/// over a request of two headers).
pub(crate) struct RequestHeaders<'a> {
    /// The standard version header's value when the request has exactly
    /// one (the general decoder reads the rest).
    pub(crate) lone_version: Option<&'a HeaderValue>,
    /// The first `Accept` and `Content-Type`, for error bodies.
    accept: Option<&'a HeaderValue>,
    content_type: Option<&'a HeaderValue>,
}

impl<'a> RequestHeaders<'a> {
    pub(crate) fn read(headers: &'a HeaderMap) -> Self {
        let mut read = RequestHeaders {
            lone_version: None,
            accept: None,
            content_type: None,
        };
        let mut versions = 0_usize;
        for (name, value) in headers {
            if *name == ACCEPT {
                read.accept.get_or_insert(value);
            } else if *name == CONTENT_TYPE {
                read.content_type.get_or_insert(value);
            } else if *name == OPENSTACK_API_VERSION {
                versions += 1;
                read.lone_version = (versions == 1).then_some(value);
            }
        }
        read
    }
}

/// What the response needs once the inner service answers.
#[derive(Debug)]
struct Finish {
    api: Microversions,
    served: Option<Version>,
    request_id: RequestId,
    accept: Option<HeaderValue>,
    content_type: Option<HeaderValue>,
    method: Method,
    /// Under the legacy root: no version headers in the answer.
    legacy: bool,
    /// Whether an `HttpMetricsLayer` counts the response (which then
    /// carries the served version in its extensions).
    #[cfg(feature = "metrics")]
    observed: bool,
}

impl Finish {
    fn apply<B: From<String>>(&self, response: &mut Response<B>) {
        #[cfg(feature = "metrics")]
        if let (true, Some(version)) = (self.observed, self.served) {
            response
                .extensions_mut()
                .insert(crate::ServedVersion(version));
        }
        let rules = self.api.rules();
        let headers = response.headers_mut();
        // Under the legacy root the answer names no version.
        let versioned = self.served.filter(|_| !self.legacy);
        if let Some(version) = versioned {
            set_version_headers(&self.api, version, headers);
            // An operation's own deprecation (the router's) speaks first.
            if let Some(deprecation) = self.api.deprecation_of(version)
                && !headers.contains_key(crate::deprecation::DEPRECATION)
            {
                deprecation.annotate(headers);
            }
            set_range_headers(&self.api, headers);
        }
        if rules.vary && versioned.is_some() {
            append_vary(headers, self.api.vary_value());
        }
        self.set_request_id(headers);
        if let Some(error) = response.extensions_mut().remove::<ApiError>() {
            self.render_into(response, &error, None);
        }
    }

    fn set_request_id(&self, headers: &mut HeaderMap) {
        let id = self.request_id.header_value();
        headers.insert(REQUEST_ID, id.clone());
        for alias in &self.api.rules().request_id_aliases {
            headers.insert(alias.clone(), id.clone());
        }
    }

    fn render_into<B: From<String>>(
        &self,
        response: &mut Response<B>,
        error: &ApiError,
        range: Option<microversion::VersionRange>,
    ) {
        let ctx = ErrorContext {
            request_id: Some(self.request_id.as_str()),
            served: self.served,
            range,
            accept: self.accept.as_ref(),
            method: Some(&self.method),
            content_type: self.content_type.as_ref(),
        };
        let (content_type, body) = render(self.api.rules(), error, &ctx);
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, content_type);
        headers.remove(CONTENT_LENGTH);
        *response.body_mut() = B::from(body);
    }

    /// A response the layer makes itself for a version error.
    fn error_response<B: From<String>>(
        &self,
        error: &ApiError,
        range: Option<microversion::VersionRange>,
    ) -> Response<B> {
        let mut response = Response::new(B::from(String::new()));
        *response.status_mut() = error.status();
        self.render_into(&mut response, error, range);
        self.set_request_id(response.headers_mut());
        response
    }
}

fn set_version_headers(api: &Microversions, version: Version, headers: &mut HeaderMap) {
    let rules = api.rules();
    if rules.echo_standard {
        headers.insert(OPENSTACK_API_VERSION, api.standard_value(version));
    }
    if let (Some(legacy), true) = (&rules.legacy_header, rules.echo_legacy) {
        headers.insert(legacy.clone(), api.legacy_value(version));
    }
}

fn set_range_headers(api: &Microversions, headers: &mut HeaderMap) {
    if let Some((min_name, max_name)) = &api.rules().range_headers {
        let (min, max) = api.range_values();
        headers.insert(min_name.clone(), min);
        headers.insert(max_name.clone(), max);
    }
}

/// Adds our `Vary` value unless the handler's `Vary` already names it.
fn append_vary(headers: &mut HeaderMap, ours: &HeaderValue) {
    // One lookup: most responses have no `Vary` of their own.
    let mut existing = match headers.entry(VARY) {
        Entry::Vacant(vacant) => {
            vacant.insert(ours.clone());
            return;
        }
        Entry::Occupied(occupied) => occupied,
    };
    let ours_text = ours.to_str().unwrap_or_default();
    let already = existing.iter().any(|v| {
        v.to_str().is_ok_and(|v| {
            v.trim() == "*"
                || ours_text.split(',').all(|name| {
                    v.split(',')
                        .any(|n| n.trim().eq_ignore_ascii_case(name.trim()))
                })
        })
    });
    if !already {
        existing.append(ours.clone());
    }
}

impl Finish {
    /// What the layer would keep of `request` for its own answer: the id
    /// the layer gave it (or an outer layer chose), else a new one, and
    /// its `Accept`, `Content-Type` and method.
    fn of_request(api: &Microversions, request: Option<&http::request::Parts>) -> Finish {
        let request_id = request
            .and_then(|parts| {
                RequestId::from_extensions(&parts.extensions)
                    .or_else(|| parts.extensions.get::<RequestId>().cloned())
            })
            .unwrap_or_else(RequestId::generate);
        let header = |name| request.and_then(|parts| parts.headers.get(name)).cloned();
        Finish {
            api: api.clone(),
            served: None,
            request_id,
            accept: header(ACCEPT),
            content_type: header(CONTENT_TYPE),
            method: request.map_or(Method::GET, |parts| parts.method.clone()),
            legacy: false,
            #[cfg(feature = "metrics")]
            observed: false,
        }
    }
}

/// `error` rendered as the layer renders its own answers (the profile's
/// format, the request id), for `request` when there is one.
#[cfg(feature = "openapi")]
pub(crate) fn error_answer<B: From<String>>(
    api: &Microversions,
    error: &ApiError,
    request: Option<&http::request::Parts>,
) -> Response<B> {
    Finish::of_request(api, request).error_response(error, None)
}

/// The layer's answer to `refused`, for `request` when there is one.
fn refusal_response<B: From<String>>(
    refused: &VersionRefused,
    request: Option<&http::request::Parts>,
) -> Response<B> {
    let api = refused.api();
    let finish = Finish::of_request(api, request);
    match refused.refusal() {
        Refusal::Malformed(error) => malformed(api, error, &finish),
        Refusal::Unsupported(version) => unsupported(api, *version, &finish),
    }
}

impl VersionRefused {
    /// The answer the layer gives a request asking for this version,
    /// byte for byte: its status, headers (the request id, `Vary`, the
    /// range headers of profiles that send them) and the profile's error
    /// body, which on a 406 names the range (`min_version` and
    /// `max_version` in API-SIG's body), in the format `request`'s
    /// `Accept` picks where the profile follows it. The request id is the
    /// one the layer gave `request` (or an outer layer chose), else a new
    /// one.
    ///
    /// Served from a version-neutral path, that is all of the answer;
    /// behind the layer on a versioned path, the layer adds the served
    /// version's headers, as on every answer there.
    ///
    /// ```
    /// use axum::extract::Query;
    /// use axum::response::{IntoResponse, Response};
    /// use microversion::VersionRange;
    /// use microversion_server::Microversions;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Asked { version: String }
    ///
    /// async fn document(
    ///     axum::extract::State(api): axum::extract::State<Microversions>,
    ///     parts: http::request::Parts,
    ///     Query(asked): Query<Asked>,
    /// ) -> Response {
    ///     match api.resolve_text(&asked.version) {
    ///         Ok(version) => format!("the document of {version}").into_response(),
    ///         Err(refused) => refused.response_for(&parts),
    ///     }
    /// }
    /// # let _ = document;
    /// ```
    #[must_use]
    pub fn response_for(&self, request: &http::request::Parts) -> axum::response::Response {
        refusal_response(self, Some(request))
    }
}

/// The layer's answer to a request asking for the refused version that
/// has no `Accept` or `Content-Type`, with a new request id: see
/// [`VersionRefused::response_for`] to answer a request.
impl axum::response::IntoResponse for VersionRefused {
    fn into_response(self) -> axum::response::Response {
        refusal_response(&self, None)
    }
}

/// The layer's answer to a malformed version.
fn malformed<B: From<String>>(
    api: &Microversions,
    error: &InvalidVersion,
    finish: &Finish,
) -> Response<B> {
    let rules = api.rules();
    let detail = malformed_detail(rules, error);
    let status = rules.malformed_status;
    let mut response = finish.error_response(&ApiError::new(status, detail), None);
    if rules.vary && rules.version_error_headers == VersionErrorHeaders::VaryOnly {
        append_vary(response.headers_mut(), api.vary_value());
    }
    response
}

/// The layer's answer to a well-formed version outside the range.
fn unsupported<B: From<String>>(
    api: &Microversions,
    requested: Version,
    finish: &Finish,
) -> Response<B> {
    let rules = api.rules();
    let range = api.range();
    let detail = unsupported_detail(rules, range, requested);
    let error = ApiError::new(StatusCode::NOT_ACCEPTABLE, detail);
    let mut response = finish.error_response(&error, Some(range));
    let headers = response.headers_mut();
    // Exhaustive: a new choice of headers does not compile until it is
    // made here.
    match rules.version_error_headers {
        VersionErrorHeaders::VaryOnly => {
            if rules.vary {
                append_vary(headers, api.vary_value());
            }
        }
        VersionErrorHeaders::RejectedVersion => {
            set_version_headers(api, requested, headers);
            if rules.vary {
                append_vary(headers, api.vary_value());
            }
        }
        VersionErrorHeaders::None => {}
    }
    set_range_headers(api, headers);
    response
}

pin_project! {
    /// The response future of [`Microversion`].
    pub struct ResponseFuture<F, B> {
        #[pin]
        kind: Kind<F, B>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<F, B> {
        Inner {
            #[pin]
            future: F,
            finish: Finish,
            span: tracing::Span,
        },
        Ready {
            response: Option<Response<B>>,
        },
    }
}

impl<F, B> ResponseFuture<F, B> {
    fn inner(future: F, finish: Finish, span: tracing::Span) -> Self {
        ResponseFuture {
            kind: Kind::Inner {
                future,
                finish,
                span,
            },
        }
    }

    fn ready(response: Response<B>) -> Self {
        ResponseFuture {
            kind: Kind::Ready {
                response: Some(response),
            },
        }
    }
}

impl<F, B, E> Future for ResponseFuture<F, B>
where
    F: Future<Output = Result<Response<B>, E>>,
    B: From<String>,
{
    type Output = Result<Response<B>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            KindProj::Inner {
                future,
                finish,
                span,
            } => {
                let _entered = span.enter();
                let mut response = ready!(future.poll(cx))?;
                finish.apply(&mut response);
                Poll::Ready(Ok(response))
            }
            KindProj::Ready { response } => match response.take() {
                Some(response) => Poll::Ready(Ok(response)),
                // Polled again after completion: a caller bug; never wake.
                None => Poll::Pending,
            },
        }
    }
}

impl<F, B> std::fmt::Debug for ResponseFuture<F, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::canonical;

    #[test]
    fn canonical_header_names() {
        assert_eq!(
            canonical("x-openstack-ironic-api-version"),
            "X-OpenStack-Ironic-API-Version"
        );
    }

    /// The layer, its services and every request in flight hold the
    /// versioning; once they are gone, so is it.
    #[test]
    fn the_layer_frees_the_versioning_when_dropped() {
        use tower::{Service, ServiceExt};

        let api = Microversions::builder(
            "placement",
            microversion::VersionRange::from_static("1.0", "1.39"),
        )
        .build()
        .unwrap();
        let weak = api.downgrade();
        let layer = MicroversionLayer::new(api);
        let inner = tower::service_fn(|_req: Request<String>| async {
            Ok::<_, std::convert::Infallible>(Response::new(String::new()))
        });
        let mut service = layer.layer(inner);
        drop(layer);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let request = Request::get("/things")
            .header("openstack-api-version", "placement 1.20")
            .body(String::new())
            .unwrap();
        let future = runtime.block_on(service.ready()).unwrap().call(request);
        drop(service);
        // The request in flight still holds it.
        assert!(weak.upgrade().is_some());
        let response = runtime.block_on(future).unwrap();
        assert_eq!(response.headers()[OPENSTACK_API_VERSION], "placement 1.20");
        assert!(weak.upgrade().is_none());
    }

    /// A refusal of `resolve_text` answers exactly as the layer answers a
    /// request carrying the same version, in every profile.
    #[test]
    fn a_refused_version_answers_as_the_layer() {
        use axum::body::Body;
        use axum::response::IntoResponse;
        use http_body_util::BodyExt;
        use microversion::Profile;
        use tower::{Service, ServiceExt};

        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let text = |response: Response<Body>| {
            let (parts, body) = response.into_parts();
            let bytes = runtime.block_on(body.collect()).unwrap().to_bytes();
            (
                parts.status,
                parts.headers,
                String::from_utf8(bytes.to_vec()).unwrap(),
            )
        };
        let apis = [
            ("placement", "1.0", "1.39", Profile::Placement),
            ("placement", "1.0", "1.39", Profile::ApiSig),
            ("compute", "2.1", "2.90", Profile::Nova),
            ("baremetal", "1.1", "1.99", Profile::Ironic),
            ("volume", "3.0", "3.70", Profile::Cinder),
        ];
        for (service_type, min, max, profile) in apis {
            let api = Microversions::builder(
                service_type,
                microversion::VersionRange::from_static(min, max),
            )
            .profile(profile)
            .build()
            .unwrap();
            let inner = tower::service_fn(|_req: Request<Body>| async {
                Ok::<_, std::convert::Infallible>(Response::new(Body::empty()))
            });
            let mut service = MicroversionLayer::new(api.clone()).layer(inner);
            for asked in ["9.99", "abc", "0.5", "1.a", "latest1"] {
                for accept in [None, Some("text/html"), Some("text/plain")] {
                    let id = RequestId::generate();
                    let mut request = Request::get("/things")
                        .header("openstack-api-version", format!("{service_type} {asked}"));
                    if let Some(accept) = accept {
                        request = request.header("accept", accept);
                    }
                    let mut request = request.body(Body::empty()).unwrap();
                    request.extensions_mut().insert(id.clone());
                    let (parts, body) = request.into_parts();
                    let request = Request::from_parts(parts.clone(), body);
                    let ready = runtime.block_on(service.ready()).unwrap();
                    let layer = text(runtime.block_on(ready.call(request)).unwrap());
                    let refused = api.resolve_text(asked).unwrap_err();
                    assert_eq!(refused.status(), layer.0, "{profile} {asked}");
                    assert!(!refused.to_string().is_empty());
                    let ours = text(refused.response_for(&parts));
                    assert_eq!(ours, layer, "{profile} {asked} {accept:?}");

                    // Without a request: a new id, and the answer to no
                    // `Accept`.
                    if accept.is_none() {
                        let (status, headers, body) = text(refused.clone().into_response());
                        let new_id = headers[REQUEST_ID].to_str().unwrap().to_owned();
                        assert_ne!(new_id, id.as_str());
                        assert_eq!(status, layer.0);
                        let mut expected = layer.1.clone();
                        expected.insert(REQUEST_ID, headers[REQUEST_ID].clone());
                        for alias in &api.rules().request_id_aliases {
                            expected.insert(alias.clone(), headers[REQUEST_ID].clone());
                        }
                        assert_eq!(headers, expected, "{profile} {asked}");
                        assert_eq!(body, layer.2.replace(id.as_str(), &new_id));
                    }
                }
            }
        }
        // API-SIG's 406 names the range.
        let api = Microversions::builder(
            "placement",
            microversion::VersionRange::from_static("1.0", "1.39"),
        )
        .build()
        .unwrap();
        let (status, _, body) = text(api.resolve_text("1.40").unwrap_err().into_response());
        assert_eq!(status, StatusCode::NOT_ACCEPTABLE);
        let body: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["errors"][0]["min_version"], "1.0");
        assert_eq!(body["errors"][0]["max_version"], "1.39");
    }

    #[test]
    fn vary_is_appended_once() {
        let ours = HeaderValue::from_static("OpenStack-API-Version");
        let mut h = HeaderMap::new();
        h.insert(VARY, HeaderValue::from_static("Accept"));
        append_vary(&mut h, &ours);
        append_vary(&mut h, &ours);
        let values: Vec<_> = h.get_all(VARY).iter().collect();
        assert_eq!(values, ["Accept", "OpenStack-API-Version"]);
        let mut h = HeaderMap::new();
        h.insert(
            VARY,
            HeaderValue::from_static("accept, openstack-api-version"),
        );
        append_vary(&mut h, &ours);
        assert_eq!(h.get_all(VARY).iter().count(), 1);
    }
}
