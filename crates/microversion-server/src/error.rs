//! The server crate's errors: [`ApiError`], as the API shows it, with the
//! rendering of every error body in the profile's format; and
//! [`BuildError`], a configuration refused when it is built.
//!
//! A handler (or the router's fallback) returns an [`ApiError`]; the layer
//! renders its body in the profile's shape, with the request id, the served
//! version and the request's `Accept` at hand. So handler errors, router
//! 404s and 405s, and the layer's own 400s and 406s all look the same.

use std::fmt;

use crate::webob::{self, WebobPage, latin1};
use axum::response::{IntoResponse, Response};
use http::Method;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, StatusCode};
use microversion::profile::{ErrorFormat, Rules};
use microversion::{
    ErrorBody, ErrorEntry, InvalidServiceType, InvalidVersion, Version, VersionRange, VersionSpan,
};

/// An error answer from a handler: a status, a detail for people, and an
/// optional machine-readable code.
///
/// Behind the microversion layer its body is rendered in the profile's
/// format. Without the layer it is plain text.
///
/// ```
/// use http::StatusCode;
/// use microversion_server::ApiError;
///
/// let err = ApiError::new(StatusCode::CONFLICT, "resource provider generation conflict")
///     .with_code("placement.concurrent_update");
/// assert_eq!(err.status(), StatusCode::CONFLICT);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    status: StatusCode,
    detail: String,
    code: Option<String>,
    /// The detail is the status's stock sentence, not a message about
    /// this request (Placement's format then shows no message of its own).
    stock: bool,
}

impl ApiError {
    /// An error with this status and detail.
    #[must_use]
    pub fn new(status: StatusCode, detail: impl Into<String>) -> Self {
        ApiError {
            status,
            detail: detail.into(),
            code: None,
            stock: false,
        }
    }

    /// An error whose detail is the status's stock sentence.
    fn stock(status: StatusCode, detail: impl Into<String>) -> Self {
        ApiError {
            stock: true,
            ..ApiError::new(status, detail)
        }
    }

    /// 400 Bad Request.
    #[must_use]
    pub fn bad_request(detail: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, detail)
    }

    /// 404 Not Found, as for a path that does not exist.
    #[must_use]
    pub fn not_found() -> Self {
        ApiError::stock(StatusCode::NOT_FOUND, "The resource could not be found.")
    }

    /// 405 Method Not Allowed.
    #[must_use]
    pub fn method_not_allowed() -> Self {
        ApiError::stock(StatusCode::METHOD_NOT_ALLOWED, METHOD_NOT_ALLOWED)
    }

    /// 405 Method Not Allowed, naming the method.
    #[must_use]
    pub fn method_not_allowed_for(method: &http::Method) -> Self {
        ApiError::stock(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("The method {method} is not allowed for this resource."),
        )
    }

    /// Sets the machine-readable code.
    #[must_use]
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// The status.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The detail for people.
    #[must_use]
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// The machine-readable code, if set.
    #[must_use]
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status, self.detail)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            [(
                CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            )],
            self.detail.clone(),
        )
            .into_response();
        // The layer finds this and renders the body in the profile's format.
        response.extensions_mut().insert(self);
        response
    }
}

/// What an error body may mention besides the error itself.
#[derive(Clone, Debug, Default)]
pub(crate) struct ErrorContext<'a> {
    pub(crate) request_id: Option<&'a str>,
    /// The version that served the request, if one did.
    pub(crate) served: Option<Version>,
    /// The supported range, on version errors.
    pub(crate) range: Option<VersionRange>,
    /// The request's `Accept`, for formats that follow it.
    pub(crate) accept: Option<&'a HeaderValue>,
    /// The request's method, for formats that name it.
    pub(crate) method: Option<&'a Method>,
    /// The request's `Content-Type`, for formats that name it.
    pub(crate) content_type: Option<&'a HeaderValue>,
}

/// The message upstream Placement's handler gives its 405s.
const METHOD_NOT_ALLOWED: &str = "The method specified is not allowed for this resource.";

/// Renders `error` in the format of `rules`: the content type and the body.
pub(crate) fn render(
    rules: &Rules,
    error: &ApiError,
    ctx: &ErrorContext<'_>,
) -> (HeaderValue, String) {
    match rules.error_format {
        ErrorFormat::Placement => {
            let accept = placement_accept(ctx.accept);
            let content_type = ctx.content_type.map(|v| latin1(v.as_bytes()));
            let page = WebobPage {
                status: error.status,
                message: placement_message(error),
                method: ctx.method.map_or("GET", Method::as_str),
                accept: &accept,
                content_type: content_type.as_deref(),
            };
            match webob_choice(ctx.accept) {
                WebobChoice::Json => {
                    let mut body = api_sig_body(rules, error, page.json_detail(), ctx);
                    for entry in &mut body.errors {
                        webob::title(error.status).clone_into(&mut entry.title);
                    }
                    json(body)
                }
                WebobChoice::Html => (
                    HeaderValue::from_static("text/html; charset=UTF-8"),
                    page.html(),
                ),
                WebobChoice::Plain => (
                    HeaderValue::from_static("text/plain; charset=UTF-8"),
                    page.plain(),
                ),
            }
        }
        ErrorFormat::Fault => {
            let body = serde_json::json!({
                fault_name(error.status): {"code": error.status.as_u16(), "message": error.detail}
            });
            json(body)
        }
        ErrorFormat::Ironic => {
            let fault = serde_json::json!({
                "faultstring": error.detail,
                "faultcode": if error.status.is_server_error() { "Server" } else { "Client" },
                "debuginfo": null,
            });
            json(serde_json::json!({"error_message": fault.to_string()}))
        }
        // `ErrorFormat::ApiSig`, and the default of formats added later
        // (the enum is non-exhaustive since it moved to the core crate).
        _ => json(api_sig_body(rules, error, error.detail.clone(), ctx)),
    }
}

/// The message upstream Placement gives an error (webob's `detail`): none
/// for its stock 404s, a fixed one for its 405s.
fn placement_message(error: &ApiError) -> &str {
    match (error.stock, error.status) {
        (false, _) => &error.detail,
        (true, StatusCode::METHOD_NOT_ALLOWED) => METHOD_NOT_ALLOWED,
        (true, _) => "",
    }
}

/// The `Accept` upstream Placement's 406 page names: its request log
/// middleware makes a missing `Accept`, or exactly `*/*`,
/// `application/json`.
fn placement_accept(accept: Option<&HeaderValue>) -> String {
    match accept.map(HeaderValue::as_bytes) {
        None | Some(b"" | b"*/*") => "application/json".to_owned(),
        Some(bytes) => latin1(bytes),
    }
}

fn json(body: impl serde::Serialize) -> (HeaderValue, String) {
    (
        HeaderValue::from_static("application/json"),
        serde_json::to_string(&body).unwrap_or_else(|_| String::from("{}")),
    )
}

fn api_sig_body(
    rules: &Rules,
    error: &ApiError,
    detail: String,
    ctx: &ErrorContext<'_>,
) -> ErrorBody {
    let mut entry = ErrorEntry::new(error.status, detail);
    let code_allowed = match (rules.error_code_since, ctx.served) {
        (None, _) => true,
        (Some(since), Some(served)) => served >= since,
        (Some(_), None) => false,
    };
    if code_allowed {
        entry.code = error
            .code
            .clone()
            .or_else(|| rules.error_code_since.and(rules.default_error_code.clone()));
    }
    entry.request_id = ctx.request_id.map(str::to_owned);
    if let Some(range) = ctx.range {
        entry = entry.with_range(range);
    }
    ErrorBody::single(entry)
}

/// Nova's and Cinder's fault names, by status.
fn fault_name(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "badRequest",
        401 => "unauthorized",
        403 => "forbidden",
        404 => "itemNotFound",
        405 => "badMethod",
        409 => "conflictingRequest",
        413 | 429 => "overLimit",
        415 => "badMediaType",
        501 => "notImplemented",
        503 => "serviceUnavailable",
        _ => "computeFault",
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WebobChoice {
    Html,
    Plain,
    Json,
}

/// The representation upstream Placement picks for an error.
///
/// Its request log middleware first reads a missing `Accept`, or exactly
/// `*/*`, as `application/json`. Then webob offers HTML and JSON: the one
/// with the highest quality in `Accept` wins, HTML on ties; plain text
/// when `Accept` allows neither.
fn webob_choice(accept: Option<&HeaderValue>) -> WebobChoice {
    const OFFERS: [(&str, WebobChoice); 2] = [
        ("text/html", WebobChoice::Html),
        ("application/json", WebobChoice::Json),
    ];
    let accept = match accept.map(HeaderValue::to_str) {
        None => return WebobChoice::Json,
        Some(Ok(accept)) if accept.is_empty() || accept == "*/*" => return WebobChoice::Json,
        Some(Ok(accept)) => accept,
        Some(Err(_)) => return WebobChoice::Plain,
    };
    let mut best: Option<(f32, WebobChoice)> = None;
    for (offer, choice) in OFFERS {
        let quality = accept
            .split(',')
            .filter_map(|range| media_range_quality(range, offer))
            .fold(None, |acc: Option<(u8, f32)>, (spec, q)| match acc {
                // The most specific matching range decides the quality.
                Some((s, _)) if s > spec => acc,
                _ => Some((spec, q)),
            })
            .map(|(_, q)| q);
        if let Some(q) = quality {
            if q > 0.0 && best.is_none_or(|(bq, _)| q > bq) {
                best = Some((q, choice));
            }
        }
    }
    best.map_or(WebobChoice::Plain, |(_, choice)| choice)
}

/// If `range` (one element of `Accept`) matches `offer`: how specific it
/// is (0 for `*/*`, 1 for `type/*`, 2 for exact) and its quality.
fn media_range_quality(range: &str, offer: &str) -> Option<(u8, f32)> {
    let mut parts = range.split(';');
    let media = parts.next()?.trim().to_ascii_lowercase();
    let quality = parts
        .filter_map(|p| p.trim().strip_prefix("q="))
        .find_map(|q| q.trim().parse::<f32>().ok())
        .unwrap_or(1.0);
    let (offer_type, _) = offer.split_once('/')?;
    let specificity = if media == "*/*" {
        0
    } else if media.strip_suffix("/*") == Some(offer_type) {
        1
    } else if media == offer {
        2
    } else {
        return None;
    };
    Some((specificity, quality))
}

/// A configuration refused when it is built: of [`Microversions`], a
/// router, the body schemas, the version history or discovery. Never
/// returned while serving a request.
///
/// [`Microversions`]: crate::Microversions
#[derive(Debug)]
#[non_exhaustive]
pub enum BuildError {
    /// The service type cannot appear in the header.
    ServiceType(InvalidServiceType),
    /// The deprecation threshold lies outside the supported range.
    Deprecation {
        /// The threshold.
        below: Version,
        /// The supported range.
        range: VersionRange,
    },
    /// Two routes or schemas for one operation have overlapping spans.
    Overlap(RouteConflict),
    /// A JSON Schema that cannot be compiled.
    InvalidSchema {
        /// The operation the schema is for (`POST /things`).
        name: String,
        /// The versions the schema was registered for.
        versions: VersionSpan,
        /// Why it cannot be compiled.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A version of the history is not valid text.
    HistoryVersion(InvalidVersion),
    /// The version history has no entry.
    EmptyHistory,
    /// A version of the history does not come after the one before it.
    HistoryOrder {
        /// The version before.
        previous: Version,
        /// The version that should be above it.
        next: Version,
    },
    /// A version of the history has no description.
    NoDescription(Version),
    /// Discovery lists no CURRENT version, or several.
    CurrentVersions {
        /// How many are CURRENT.
        found: usize,
    },
    /// An API version's root path does not start and end with `/`.
    RootPath {
        /// The API version's id.
        id: String,
        /// Its root path.
        path: String,
    },
    /// The OpenAPI description does not match the routes (feature
    /// `openapi`).
    #[cfg(feature = "openapi")]
    Description(crate::openapi::OpenApiError),
    /// The API reference page cannot be built (feature `reference-page`).
    #[cfg(feature = "reference-page")]
    ReferencePage(crate::openapi::InvalidReferencePage),
    /// Two API versions of discovery share an id or a root path.
    SharedRoot {
        /// The id of the first.
        first: String,
        /// The id of the second.
        second: String,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::ServiceType(e) => fmt::Display::fmt(e, f),
            BuildError::Deprecation { below, range } => write!(
                f,
                "deprecation threshold {below} is outside the supported range {range}"
            ),
            BuildError::Overlap(e) => fmt::Display::fmt(e, f),
            BuildError::InvalidSchema {
                name,
                versions,
                source,
            } => write!(f, "invalid JSON Schema for {name} at {versions}: {source}"),
            BuildError::HistoryVersion(e) => write!(f, "version history: {e}"),
            BuildError::EmptyHistory => f.write_str("version history is empty"),
            BuildError::HistoryOrder { previous, next } => write!(
                f,
                "version history: {next} follows {previous}, but versions must increase"
            ),
            BuildError::NoDescription(version) => {
                write!(f, "version history: {version} has no description")
            }
            BuildError::CurrentVersions { found } => write!(
                f,
                "discovery needs exactly one CURRENT API version, found {found}"
            ),
            BuildError::RootPath { id, path } => write!(
                f,
                "the root path {path:?} of {id} must start and end with '/'"
            ),
            #[cfg(feature = "openapi")]
            BuildError::Description(e) => write!(f, "OpenAPI description: {e}"),
            #[cfg(feature = "reference-page")]
            BuildError::ReferencePage(e) => fmt::Display::fmt(e, f),
            BuildError::SharedRoot { first, second } => write!(
                f,
                "API versions {first} and {second} share an id or a root path"
            ),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::ServiceType(e) => Some(e),
            BuildError::Overlap(e) => Some(e),
            BuildError::InvalidSchema { source, .. } => Some(&**source),
            BuildError::HistoryVersion(e) => Some(e),
            #[cfg(feature = "openapi")]
            BuildError::Description(e) => Some(e),
            #[cfg(feature = "reference-page")]
            BuildError::ReferencePage(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(feature = "openapi")]
impl From<crate::openapi::OpenApiError> for BuildError {
    fn from(e: crate::openapi::OpenApiError) -> Self {
        BuildError::Description(e)
    }
}

#[cfg(feature = "reference-page")]
impl From<crate::openapi::InvalidReferencePage> for BuildError {
    fn from(e: crate::openapi::InvalidReferencePage) -> Self {
        BuildError::ReferencePage(e)
    }
}

/// Two handlers (or schemas) for one operation whose versions overlap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteConflict {
    /// The path, or the schema's name.
    pub path: String,
    /// The method (`None` for a schema).
    pub method: Option<Method>,
    /// The versions of the first handler.
    pub first: VersionSpan,
    /// The versions of the second handler.
    pub second: VersionSpan,
}

impl fmt::Display for RouteConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.method {
            Some(method) => write!(
                f,
                "overlapping version ranges for {method} {}: {} and {}",
                self.path, self.first, self.second
            ),
            None => write!(
                f,
                "overlapping version ranges for {}: {} and {}",
                self.path, self.first, self.second
            ),
        }
    }
}

impl std::error::Error for RouteConflict {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Profile;

    fn ctx() -> ErrorContext<'static> {
        ErrorContext {
            request_id: Some("req-1"),
            ..ErrorContext::default()
        }
    }

    #[test]
    fn api_sig_json() {
        let (ct, body) = render(
            &Profile::ApiSig.rules(),
            &ApiError::bad_request("bad").with_code("x.y"),
            &ctx(),
        );
        assert_eq!(ct, "application/json");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"errors": [{"status": 400, "title": "Bad Request",
                "detail": "bad", "code": "x.y", "request_id": "req-1"}]})
        );
    }

    #[test]
    fn placement_code_only_from_1_23() {
        let rules = Profile::Placement.rules();
        let accept = HeaderValue::from_static("application/json");
        let err = ApiError::new(StatusCode::CONFLICT, "conflict");
        let at = |v: Option<Version>| {
            let ctx = ErrorContext {
                served: v,
                accept: Some(&accept),
                ..ctx()
            };
            let (_, body) = render(&rules, &err, &ctx);
            serde_json::from_str::<serde_json::Value>(&body).unwrap()["errors"][0]["code"].clone()
        };
        assert_eq!(at(Some(Version::new(1, 22))), serde_json::Value::Null);
        assert_eq!(at(Some(Version::new(1, 23))), "placement.undefined_code");
        assert_eq!(at(None), serde_json::Value::Null);
    }

    #[test]
    fn placement_follows_accept() {
        let rules = Profile::Placement.rules();
        let err = ApiError::new(
            StatusCode::NOT_ACCEPTABLE,
            "Unacceptable version header: 0.5",
        );
        for (accept, want) in [
            (Some("application/json"), "application/json"),
            (Some("text/html"), "text/html; charset=UTF-8"),
            // Placement's request log makes these two JSON.
            (Some("*/*"), "application/json"),
            (None, "application/json"),
            (Some("*/*;q=0.9"), "text/html; charset=UTF-8"),
            (
                Some("application/json, text/html;q=0.5"),
                "application/json",
            ),
            // Plain text is not an offer, only the fallback.
            (
                Some("text/plain, application/json;q=0.5"),
                "application/json",
            ),
            (Some("text/plain"), "text/plain; charset=UTF-8"),
            (Some("image/png"), "text/plain; charset=UTF-8"),
        ] {
            let value = accept.map(HeaderValue::from_static);
            let ctx = ErrorContext {
                accept: value.as_ref(),
                ..ctx()
            };
            let (ct, body) = render(&rules, &err, &ctx);
            assert_eq!(ct, want, "{accept:?}");
            assert!(body.contains("Unacceptable version header: 0.5"), "{body}");
        }
    }

    #[test]
    fn placement_details_are_webob_pages() {
        let rules = Profile::Placement.rules();
        let delete = Method::DELETE;
        let detail = |err: &ApiError| {
            let ctx = ErrorContext {
                method: Some(&delete),
                ..ctx()
            };
            let (_, body) = render(&rules, err, &ctx);
            let v: serde_json::Value = serde_json::from_str(&body).unwrap();
            (
                v["errors"][0]["title"].as_str().unwrap().to_owned(),
                v["errors"][0]["detail"].as_str().unwrap().to_owned(),
            )
        };
        assert_eq!(
            detail(&ApiError::not_found()),
            (
                "Not Found".to_owned(),
                "The resource could not be found.\n\n   ".to_owned()
            )
        );
        assert_eq!(
            detail(&ApiError::method_not_allowed_for(&delete)).1,
            "The method DELETE is not allowed for this resource. \n\n The method specified is not allowed for this resource."
        );
        assert_eq!(
            detail(&ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "a\nb")),
            (
                "Request Entity Too Large".to_owned(),
                "The body of your request was too large for this server.\n\n a b  ".to_owned()
            )
        );
        // Other formats keep the stock sentence as the detail.
        let (_, body) = render(&Profile::ApiSig.rules(), &ApiError::not_found(), &ctx());
        assert!(
            body.contains("\"detail\":\"The resource could not be found.\""),
            "{body}"
        );
    }

    #[test]
    fn fault_and_ironic_shapes() {
        let (_, body) = render(
            &Profile::Nova.rules(),
            &ApiError::bad_request("nope"),
            &ctx(),
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&body).unwrap(),
            serde_json::json!({"badRequest": {"code": 400, "message": "nope"}})
        );
        let (_, body) = render(
            &Profile::Ironic.rules(),
            &ApiError::new(StatusCode::NOT_ACCEPTABLE, "too new"),
            &ctx(),
        );
        let outer: serde_json::Value = serde_json::from_str(&body).unwrap();
        let inner: serde_json::Value =
            serde_json::from_str(outer["error_message"].as_str().unwrap()).unwrap();
        assert_eq!(inner["faultstring"], "too new");
        assert_eq!(inner["faultcode"], "Client");
    }
}
