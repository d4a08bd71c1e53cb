//! Responses checked against the API's documents: [`ResponseValidationLayer`].

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};

use axum::body::Body;
use axum::response::IntoResponse;
use http::{Method, Request, Response, StatusCode};
use microversion::Version;
use serde_json::Value;
use tower_layer::Layer;
use tower_service::Service;

use super::ApiDescription;
use crate::error::ApiError;
use crate::extract::ServedVersion;

/// What a mismatch between a response and its document does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResponseValidation {
    /// The response is replaced by a 500 naming the mismatch: for tests
    /// and CI.
    Error,
    /// The response goes out as it is; the mismatch is logged at `warn`.
    Warn,
    /// Nothing is checked (the default).
    #[default]
    Off,
}

impl ResponseValidation {
    /// Its name in configuration: `error`, `warn` or `off`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseValidation::Error => "error",
            ResponseValidation::Warn => "warn",
            ResponseValidation::Off => "off",
        }
    }
}

impl fmt::Display for ResponseValidation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A response-validation mode that is not `error`, `warn` or `off`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidResponseValidation(String);

impl fmt::Display for InvalidResponseValidation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid response validation mode {:?}: expected \"error\", \"warn\" or \"off\" \
             (\"ignore\", Nova's word, means \"off\")",
            self.0
        )
    }
}

impl std::error::Error for InvalidResponseValidation {}

impl FromStr for ResponseValidation {
    type Err = InvalidResponseValidation;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "error" => Ok(ResponseValidation::Error),
            "warn" => Ok(ResponseValidation::Warn),
            "off" | "ignore" => Ok(ResponseValidation::Off),
            other => Err(InvalidResponseValidation(other.to_owned())),
        }
    }
}

/// What a response may be, for one status.
#[derive(Debug)]
pub(super) enum Expected {
    /// No body.
    Empty,
    /// A JSON body valid against a schema.
    Json(Arc<LazySchema>),
    /// A body of another media type, not checked.
    Other,
}

/// A schema compiled when first needed.
pub(super) struct LazySchema {
    schema: Value,
    compiled: OnceLock<Result<jsonschema::Validator, String>>,
}

impl fmt::Debug for LazySchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LazySchema").finish_non_exhaustive()
    }
}

impl LazySchema {
    /// The body's first failure, if any.
    fn check(&self, body: &Value) -> Result<(), String> {
        let compiled = self.compiled.get_or_init(|| {
            jsonschema::draft202012::new(&self.schema)
                .map_err(|e| format!("its documented schema does not compile: {e}"))
        });
        let validator = compiled.as_ref().map_err(Clone::clone)?;
        match validator.iter_errors(body).next() {
            None => Ok(()),
            Some(error) => {
                let at = error.instance_path().to_string();
                let at = if at.is_empty() { "/".to_owned() } else { at };
                Err(format!(
                    "the body does not match its schema: at {at}: {error}"
                ))
            }
        }
    }
}

/// A path template, a segment at a time.
#[derive(Debug)]
struct Template {
    text: String,
    /// `None` for a `{parameter}`.
    segments: Vec<Option<String>>,
}

impl Template {
    fn new(text: &str) -> Self {
        let segments = text
            .trim_start_matches('/')
            .split('/')
            .map(|s| (!(s.starts_with('{') && s.ends_with('}'))).then(|| s.to_owned()))
            .collect();
        Template {
            text: text.to_owned(),
            segments,
        }
    }

    /// How many literal segments match `path`, if it matches at all.
    fn literal_matches(&self, path: &[&str]) -> Option<usize> {
        if path.len() != self.segments.len() {
            return None;
        }
        let mut literal = 0;
        for (segment, given) in self.segments.iter().zip(path) {
            match segment {
                Some(text) if text == given => literal += 1,
                Some(_) => return None,
                None if given.is_empty() => return None,
                None => {}
            }
        }
        Some(literal)
    }
}

/// An operation's responses by status.
pub(super) type Responses = HashMap<u16, Expected>;

/// The documented operations of one version: each path's template, and
/// by method its responses.
#[derive(Debug, Default)]
struct Operations {
    paths: Vec<(Template, HashMap<Method, Responses>)>,
}

/// What each operation documents, version by version: a version's
/// document is read when a response at that version is first checked, so
/// that a service started for a few requests (a test's) reads only the
/// versions they ask for.
pub(super) struct Contract {
    description: ApiDescription,
    /// Every version of the range, in order, with its operations once
    /// read.
    versions: Vec<(Version, OnceLock<Operations>)>,
    shared: Mutex<Shared>,
}

impl fmt::Debug for Contract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Contract")
            .field("range", &self.description.range())
            .finish_non_exhaustive()
    }
}

impl Contract {
    pub(super) fn new(description: &ApiDescription) -> Self {
        let versions = description
            .versions()
            .into_iter()
            .map(|version| (version, OnceLock::new()))
            .collect();
        Contract {
            description: description.clone(),
            versions,
            shared: Mutex::new(Shared::default()),
        }
    }

    /// The operations `version`'s document describes.
    fn read(&self, version: Version) -> Operations {
        let Ok(document) = self.description.at(version) else {
            return Operations::default();
        };
        let document = document.to_value();
        let mut shared = self
            .shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let components = document.get("components").map(|c| shared.components(c));
        let mut paths = Vec::new();
        for (path, item) in document["paths"].as_object().into_iter().flatten() {
            let mut methods = HashMap::new();
            for (method, operation) in item.as_object().into_iter().flatten() {
                let Ok(method) = Method::from_bytes(method.to_ascii_uppercase().as_bytes()) else {
                    continue;
                };
                let responses = operation["responses"].as_object().into_iter().flatten();
                let expected = responses
                    .filter_map(|(status, response)| {
                        let status = status.parse::<u16>().ok()?;
                        Some((status, shared.expect(response, components)))
                    })
                    .collect();
                methods.insert(method, expected);
            }
            paths.push((Template::new(path), methods));
        }
        Operations { paths }
    }

    /// The operation's responses at `version`, if it is documented.
    pub(super) fn responses(
        &self,
        method: &Method,
        path: &str,
        version: Version,
    ) -> Option<(&str, &Responses)> {
        let given: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let (_, operations) = self
            .versions
            .binary_search_by_key(&version, |(v, _)| *v)
            .ok()
            .and_then(|i| self.versions.get(i))?;
        let operations = operations.get_or_init(|| self.read(version));
        operations
            .paths
            .iter()
            .filter_map(|(template, methods)| {
                let literal = template.literal_matches(&given)?;
                let responses = methods.get(method)?;
                Some((literal, template.text.as_str(), responses))
            })
            .max_by_key(|(literal, _, _)| *literal)
            .map(|(_, text, responses)| (text, responses))
    }
}

/// What the versions' documents share, made once: their components and
/// the schemas of their responses (most versions document most responses
/// alike, and every error the same).
#[derive(Default)]
struct Shared {
    /// Each distinct `components`, with its text.
    components: Vec<(String, Value)>,
    /// Each distinct response schema, by its components and its text.
    schemas: HashMap<(Option<usize>, String), Arc<LazySchema>>,
}

impl Shared {
    /// The index of `components` among the distinct ones.
    fn components(&mut self, components: &Value) -> usize {
        let text = components.to_string();
        match self.components.iter().position(|(t, _)| *t == text) {
            Some(i) => i,
            None => {
                self.components.push((text, components.clone()));
                self.components.len() - 1
            }
        }
    }

    /// What a documented response allows, its schema read beside the
    /// components of its document.
    fn expect(&mut self, response: &Value, components: Option<usize>) -> Expected {
        let Some(content) = response.get("content").and_then(Value::as_object) else {
            return Expected::Empty;
        };
        let Some(schema) = content
            .get("application/json")
            .and_then(|c| c.get("schema"))
        else {
            return Expected::Other;
        };
        let key = (components, schema.to_string());
        if let Some(lazy) = self.schemas.get(&key) {
            return Expected::Json(Arc::clone(lazy));
        }
        // The schema with the document's components beside it, so that
        // its references resolve.
        let mut rooted = match schema {
            Value::Object(map) => map.clone(),
            other => {
                let mut map = serde_json::Map::new();
                map.insert("allOf".to_owned(), Value::Array(vec![other.clone()]));
                map
            }
        };
        if let Some((_, components)) = components.and_then(|i| self.components.get(i)) {
            rooted.insert("components".to_owned(), components.clone());
        }
        let lazy = Arc::new(LazySchema {
            schema: Value::Object(rooted),
            compiled: OnceLock::new(),
        });
        self.schemas.insert(key, Arc::clone(&lazy));
        Expected::Json(lazy)
    }
}

/// Responses checked against the API's own documents (features `openapi`
/// and `json-schema`): each JSON response's status and body against what
/// its operation documents at the served version, as Nova checks its
/// responses against its schemas with `[api] response_validation`.
///
/// [`ResponseValidationLayer`] goes inside the
/// [`MicroversionLayer`](crate::MicroversionLayer) (it reads the served
/// version the layer settled), around the router:
///
/// ```
/// use http::StatusCode;
/// use microversion::{VersionRange, VersionSpan};
/// use microversion_server::openapi::{
///     ApiDescription, OperationDoc, ResponseDoc, ResponseValidation, ResponseValidationLayer,
/// };
/// use microversion_server::{MicroversionLayer, Microversions, VersionedRouter};
/// use serde_json::json;
///
/// let api = Microversions::builder("things", VersionRange::from_static("1.0", "1.5")).build()?;
/// let router = VersionedRouter::<()>::new()
///     .get("/things", VersionSpan::ALL, || async { axum::Json(json!({"things": []})) });
/// let description = ApiDescription::builder(&api)
///     .routes(&router)
///     .operation(OperationDoc::get("/things").response(
///         VersionSpan::ALL,
///         StatusCode::OK,
///         ResponseDoc::json("The things", json!({
///             "type": "object", "required": ["things"],
///             "properties": {"things": {"type": "array"}}, "additionalProperties": false,
///         })),
///     ))
///     .build()?;
/// let app: axum::Router = router
///     .build()?
///     .layer(ResponseValidationLayer::new(&description, ResponseValidation::Error))
///     .layer(MicroversionLayer::new(api));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// What is checked, for a request to a documented operation at a served
/// version (version-neutral paths, undocumented paths and methods, and
/// the layer's own 400 and 406 answers are not):
///
/// - the status is one the operation documents at that version;
/// - a response documented without a body has none;
/// - a response documented as JSON says so (`Content-Type:
///   application/json`), is JSON and is valid against its schema
///   (JSON Schema 2020-12, references into the document's `components`
///   resolved); the body of a `HEAD` answer is not read, nor that of an
///   [`ApiError`], which the microversion layer renders in the profile's
///   format.
///
/// A mismatch is, by [`ResponseValidation`]: `Error`, a 500 whose detail
/// names the operation, the version, the status and what differs (for
/// tests: a test that reads the answer fails); `Warn`, the response as it
/// is and a `warn` event (target `microversion_server::response_validation`);
/// `Off`, nothing: the layer passes requests straight through, reading
/// nothing, and builds nothing.
///
/// A version's document is read when an answer at that version is first
/// checked, and a schema compiled when first used, once for each distinct
/// schema (versions that document the same response share it): a service
/// that builds its app per test pays only for the versions its requests
/// ask for.
#[derive(Clone, Debug)]
pub struct ResponseValidationLayer {
    mode: ResponseValidation,
    contract: Option<Arc<Contract>>,
}

impl ResponseValidationLayer {
    /// Checks responses against `description`'s documents in `mode`
    /// (`Off` reads nothing from the description).
    #[must_use]
    pub fn new(description: &ApiDescription, mode: ResponseValidation) -> Self {
        let contract =
            (mode != ResponseValidation::Off).then(|| Arc::new(Contract::new(description)));
        ResponseValidationLayer { mode, contract }
    }

    /// The mode it checks in.
    #[must_use]
    pub fn mode(&self) -> ResponseValidation {
        self.mode
    }
}

impl<S> Layer<S> for ResponseValidationLayer {
    type Service = ValidateResponses<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ValidateResponses {
            inner,
            mode: self.mode,
            contract: self.contract.clone(),
        }
    }
}

/// The service of [`ResponseValidationLayer`].
#[derive(Clone, Debug)]
pub struct ValidateResponses<S> {
    inner: S,
    mode: ResponseValidation,
    contract: Option<Arc<Contract>>,
}

type Checked = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

pin_project_lite::pin_project! {
    /// The future of [`ValidateResponses`]: the inner one as it is when
    /// nothing is checked.
    pub struct ValidationFuture<F> {
        #[pin]
        state: State<F>,
    }
}

pin_project_lite::pin_project! {
    #[project = StateProj]
    enum State<F> {
        // Nothing to check.
        Passed { #[pin] inner: F },
        // The response is read and checked.
        Checked { inner: Checked },
    }
}

impl<F> ValidationFuture<F> {
    fn passed(inner: F) -> Self {
        ValidationFuture {
            state: State::Passed { inner },
        }
    }
}

impl<F> fmt::Debug for ValidationFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ValidationFuture")
    }
}

impl<F> Future for ValidationFuture<F>
where
    F: Future<Output = Result<Response<Body>, Infallible>>,
{
    type Output = Result<Response<Body>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProj::Passed { inner } => inner.poll(cx),
            StateProj::Checked { inner } => inner.as_mut().poll(cx),
        }
    }
}

impl<S, B> Service<Request<B>> for ValidateResponses<S>
where
    S: Service<Request<B>, Response = Response<Body>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = ValidationFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let Some(contract) = self.contract.clone() else {
            return ValidationFuture::passed(self.inner.call(request));
        };
        let Some(version) = ServedVersion::from_extensions(request.extensions()) else {
            return ValidationFuture::passed(self.inner.call(request));
        };
        let method = request.method().clone();
        let path = request.uri().path().to_owned();
        let mode = self.mode;
        let inner = self.inner.call(request);
        ValidationFuture {
            state: State::Checked {
                inner: Box::pin(async move {
                    let response = inner.await?;
                    Ok(check(&contract, mode, &method, &path, version.0, response).await)
                }),
            },
        }
    }
}

/// What differs between an answer with `status`, `content_type` and
/// `body` (`None`: not read) and the operation's documented `responses`,
/// if anything.
pub(super) fn mismatch(
    responses: &Responses,
    status: StatusCode,
    content_type: Option<&http::HeaderValue>,
    body: Option<&[u8]>,
) -> Option<String> {
    let Some(expected) = responses.get(&status.as_u16()) else {
        let mut documented: Vec<u16> = responses.keys().copied().collect();
        documented.sort_unstable();
        let documented: Vec<String> = documented.iter().map(u16::to_string).collect();
        return Some(format!(
            "the status is not documented (documented: {})",
            documented.join(", ")
        ));
    };
    let bytes = body?;
    match expected {
        Expected::Empty if bytes.is_empty() => None,
        Expected::Empty => Some(format!(
            "it is documented without a body but has {} bytes",
            bytes.len()
        )),
        Expected::Json(schema) => {
            let media = content_type
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split(';').next())
                .map(str::trim);
            if !media.is_some_and(|m| m.eq_ignore_ascii_case("application/json")) {
                let given = content_type.map_or_else(
                    || "missing".to_owned(),
                    |v| String::from_utf8_lossy(v.as_bytes()).into_owned(),
                );
                return Some(format!(
                    "its Content-Type is {given}, documented application/json"
                ));
            }
            match serde_json::from_slice::<Value>(bytes) {
                Err(e) => Some(format!("the body is not JSON: {e}")),
                Ok(value) => schema.check(&value).err(),
            }
        }
        Expected::Other => None,
    }
}

/// The response, or what replaces it when it does not match.
async fn check(
    contract: &Contract,
    mode: ResponseValidation,
    method: &Method,
    path: &str,
    version: Version,
    response: Response<Body>,
) -> Response<Body> {
    let Some((template, responses)) = contract.responses(method, path, version) else {
        return response;
    };
    let status = response.status();
    let (parts, body) = response.into_parts();
    // The microversion layer renders an error's body in the profile's
    // format, the one the documents declare; a HEAD answer has none.
    let read = method != Method::HEAD && parts.extensions.get::<ApiError>().is_none();
    let (body, mismatch) = match responses.get(&status.as_u16()) {
        Some(Expected::Empty | Expected::Json(_)) if read => {
            match axum::body::to_bytes(body, usize::MAX).await {
                Err(e) => (
                    Body::empty(),
                    Some(format!("the body could not be read: {e}")),
                ),
                Ok(bytes) => {
                    let content_type = parts.headers.get(http::header::CONTENT_TYPE);
                    let mismatch = mismatch(responses, status, content_type, Some(&bytes));
                    (Body::from(bytes), mismatch)
                }
            }
        }
        _ => (body, mismatch(responses, status, None, None)),
    };
    let Some(mismatch) = mismatch else {
        return Response::from_parts(parts, body);
    };
    let message = format!(
        "Response validation failed: {method} {template} at {version} answered {}: {mismatch}",
        status.as_u16()
    );
    match mode {
        ResponseValidation::Error => {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message).into_response()
        }
        _ => {
            tracing::warn!(target: "microversion_server::response_validation", "{message}");
            Response::from_parts(parts, body)
        }
    }
}
