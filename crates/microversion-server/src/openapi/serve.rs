//! [`Documents`]: the OpenAPI documents over HTTP, `GET /openapi.json`
//! for the whole range and `GET /openapi.json?version=X.Y` for one
//! version.

use std::fmt;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::header::CACHE_CONTROL;
use http::request::Parts;
use http::{HeaderValue, StatusCode};
use serde_json::Value;

use super::{ApiDescription, OpenApiError};
use crate::config::{Microversions, VersionRefused};
use crate::error::ApiError;

/// The path [`Documents::router`] is usually given, and the reference
/// page's default [`document_url`](super::ReferencePageBuilder::document_url).
pub const DOCUMENTS_PATH: &str = "/openapi.json";

/// A document [`ApiDescription::served_document`] cannot give.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum DocumentError {
    /// The version is malformed (400; 406 under Ironic's rules) or
    /// outside the range served (406): the refusal a request carrying it
    /// in the header would get, in the same words.
    Version(VersionRefused),
    /// The description has no document of the version (406): it
    /// describes less than the versioning serves.
    Document(OpenApiError),
}

impl DocumentError {
    /// The HTTP status of the refusal.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        match self {
            DocumentError::Version(refused) => refused.status(),
            DocumentError::Document(_) => StatusCode::NOT_ACCEPTABLE,
        }
    }
}

impl fmt::Display for DocumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocumentError::Version(e) => fmt::Display::fmt(e, f),
            DocumentError::Document(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for DocumentError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DocumentError::Version(e) => Some(e),
            DocumentError::Document(e) => Some(e),
        }
    }
}

impl ApiDescription {
    /// The document `version` names, written as a request writes it in
    /// the header (`1.20`, `latest`), or the whole range's (with its
    /// `x-openstack` annotations) when it names none; both of what `api`
    /// serves of the description now (an operator's narrower range
    /// leaves the rest out, as [`ApiDescription::within`] does).
    ///
    /// ```
    /// use microversion::VersionRange;
    /// use microversion_server::Microversions;
    /// use microversion_server::openapi::ApiDescription;
    ///
    /// let api = Microversions::builder("things", VersionRange::from_static("1.0", "1.5")).build()?;
    /// let description = ApiDescription::builder(&api).build()?;
    /// assert_eq!(description.served_document(&api, Some("1.2"))?["info"]["version"], "1.2");
    /// assert_eq!(description.served_document(&api, None)?["info"]["version"], "1.5");
    /// let refused = description.served_document(&api, Some("1.9")).unwrap_err();
    /// assert_eq!(refused.status(), http::StatusCode::NOT_ACCEPTABLE);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`DocumentError::Version`] with the refusal a request carrying
    /// that version would get, [`DocumentError::Document`] when the
    /// description does not cover what `api` serves.
    pub fn served_document(
        &self,
        api: &Microversions,
        version: Option<&str>,
    ) -> Result<Value, DocumentError> {
        let narrowed;
        let description = if api.range() == self.range() {
            self
        } else {
            narrowed = self.within(api.range()).map_err(DocumentError::Document)?;
            &narrowed
        };
        let Some(version) = version else {
            return Ok(description.whole().to_value());
        };
        let version = api.resolve_text(version).map_err(DocumentError::Version)?;
        description
            .at(version)
            .map(|d| d.to_value())
            .map_err(DocumentError::Document)
    }
}

/// How a [`Documents`] answers a version it cannot give a document of.
pub type RefusalAnswer = fn(&DocumentError, &Parts) -> Response;

/// The OpenAPI documents of an API over HTTP (feature `openapi`):
/// `GET` with no `version` in the query string answers the whole range's
/// document, `?version=X.Y` (or `latest`) that version's, each as JSON
/// with `Cache-Control: no-cache` (an operator's range may change while
/// serving). A malformed or unsupported version is answered as the
/// layer answers it in the header ([`VersionRefused::response_for`]):
/// the same status, headers and error body in the profile's format.
///
/// The path needs no version header: serve it outside the
/// [`MicroversionLayer`](crate::MicroversionLayer), or make it
/// version-neutral (a [`VersionedRouter`](crate::VersionedRouter)'s
/// [`neutral`](crate::VersionedRouter::neutral) route, with
/// [`Documents::method_router`]).
///
/// ```
/// use microversion::VersionRange;
/// use microversion_server::Microversions;
/// use microversion_server::openapi::{ApiDescription, DOCUMENTS_PATH, Documents};
///
/// let api = Microversions::builder("things", VersionRange::from_static("1.0", "1.5")).build()?;
/// let description = ApiDescription::builder(&api).build()?;
/// let router: axum::Router = Documents::new(description, &api).router(DOCUMENTS_PATH);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Documents {
    inner: Arc<Inner>,
}

struct Inner {
    description: ApiDescription,
    api: Microversions,
    /// `None`: the layer's answer.
    refused: Option<RefusalAnswer>,
}

impl fmt::Debug for Documents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Documents")
            .field("description", &self.inner.description)
            .field("api", &self.inner.api)
            .finish_non_exhaustive()
    }
}

impl Documents {
    /// The documents of `description`, as `api` serves them.
    #[must_use]
    pub fn new(description: ApiDescription, api: &Microversions) -> Self {
        Documents {
            inner: Arc::new(Inner {
                description,
                api: api.clone(),
                refused: None,
            }),
        }
    }

    /// Answers a version without a document with `answer` instead of the
    /// layer's refusal (a service whose documents, outside the API it
    /// mirrors, answer in a format of their own). `Cache-Control` is
    /// added to its answer.
    #[must_use]
    pub fn refusal_answer(self, answer: RefusalAnswer) -> Self {
        let inner = &self.inner;
        Documents {
            inner: Arc::new(Inner {
                description: inner.description.clone(),
                api: inner.api.clone(),
                refused: Some(answer),
            }),
        }
    }

    /// The answer to `request` (its query string's last `version`).
    #[must_use]
    pub fn answer(&self, request: &Parts) -> Response {
        let inner = &self.inner;
        let query = request.uri.query().unwrap_or_default();
        let mut response = match serde_urlencoded::from_str::<Vec<(String, String)>>(query) {
            Err(e) => {
                let error = ApiError::bad_request(format!("invalid query string: {e}"));
                crate::layer::error_answer(&inner.api, &error, Some(request))
            }
            Ok(pairs) => {
                let version = pairs
                    .into_iter()
                    .rev()
                    .find(|(key, _)| key == "version")
                    .map(|(_, value)| value);
                match inner
                    .description
                    .served_document(&inner.api, version.as_deref())
                {
                    Ok(document) => (StatusCode::OK, axum::Json(document)).into_response(),
                    Err(error) => match inner.refused {
                        Some(answer) => answer(&error, request),
                        None => layer_answer(&inner.api, &error, request),
                    },
                }
            }
        };
        response
            .headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        response
    }

    /// `GET` (and `HEAD`) answering with [`Documents::answer`], to route
    /// at a path of the service's choosing.
    pub fn method_router<S>(self) -> axum::routing::MethodRouter<S>
    where
        S: Clone + Send + Sync + 'static,
    {
        get(move |request: Request| {
            let documents = self.clone();
            async move { documents.answer(&request.into_parts().0) }
        })
    }

    /// A router serving [`Documents::answer`] at `path` (usually
    /// [`DOCUMENTS_PATH`]).
    ///
    /// # Panics
    ///
    /// axum panics on an invalid path pattern: a programmer error in a
    /// literal.
    pub fn router<S>(self, path: &str) -> Router<S>
    where
        S: Clone + Send + Sync + 'static,
    {
        Router::new().route(path, self.method_router())
    }
}

/// The layer's answer: a refused version as in the header, a version the
/// description lacks as the layer renders a 406.
fn layer_answer(api: &Microversions, error: &DocumentError, request: &Parts) -> Response {
    match error {
        DocumentError::Version(refused) => refused.response_for(request),
        DocumentError::Document(e) => {
            let error = ApiError::new(StatusCode::NOT_ACCEPTABLE, e.to_string());
            crate::layer::error_answer(api, &error, Some(request))
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use http_body_util::BodyExt;
    use microversion::{Profile, VersionRange};
    use tower::ServiceExt;

    use super::*;
    use crate::{MicroversionLayer, RequestId};

    fn api(profile: Profile) -> Microversions {
        Microversions::builder("things", VersionRange::from_static("1.0", "1.5"))
            .profile(profile)
            .build()
            .unwrap()
    }

    type Answer = (StatusCode, http::HeaderMap, Vec<u8>);

    fn send(runtime: &tokio::runtime::Runtime, app: &Router, request: Request) -> Answer {
        let response = runtime.block_on(app.clone().oneshot(request)).unwrap();
        let (parts, body) = response.into_parts();
        let body = runtime.block_on(body.collect()).unwrap().to_bytes();
        (parts.status, parts.headers, body.to_vec())
    }

    fn request(uri: &str, id: &RequestId) -> Request {
        let mut request = Request::get(uri).body(Body::empty()).unwrap();
        request.extensions_mut().insert(id.clone());
        request
    }

    fn json(answer: &Answer) -> Value {
        serde_json::from_slice(&answer.2).unwrap()
    }

    #[test]
    fn documents_of_the_range_and_of_each_version() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let api = api(Profile::ApiSig);
        let description = ApiDescription::builder(&api).build().unwrap();
        let app = Documents::new(description, &api).router(DOCUMENTS_PATH);
        let id = RequestId::generate();
        let whole = send(&runtime, &app, request("/openapi.json", &id));
        assert_eq!(whole.0, StatusCode::OK);
        assert_eq!(whole.1[CACHE_CONTROL], "no-cache");
        assert_eq!(whole.1["content-type"], "application/json");
        assert_eq!(json(&whole)["info"]["x-openstack"]["max-ver"], "1.5");
        let at = send(&runtime, &app, request("/openapi.json?version=1.2", &id));
        assert_eq!(at.0, StatusCode::OK);
        assert_eq!(json(&at)["info"]["version"], "1.2");
        // The last `version` counts, percent-decoded.
        let at = send(
            &runtime,
            &app,
            request("/openapi.json?version=1.1&version=%31.3", &id),
        );
        assert_eq!(json(&at)["info"]["version"], "1.3");
        let latest = send(&runtime, &app, request("/openapi.json?version=latest", &id));
        assert_eq!(json(&latest)["info"]["version"], "1.5");
        // An operator's range narrows the documents.
        api.set_served_range(VersionRange::from_static("1.2", "1.4"))
            .unwrap();
        let whole = send(&runtime, &app, request("/openapi.json", &id));
        assert_eq!(json(&whole)["info"]["version"], "1.4");
        let below = send(&runtime, &app, request("/openapi.json?version=1.1", &id));
        assert_eq!(below.0, StatusCode::NOT_ACCEPTABLE);
        assert_eq!(json(&below)["errors"][0]["min_version"], "1.2");
    }

    /// A refused version is answered as the layer answers it in the
    /// header, in every profile, plus `Cache-Control`.
    #[test]
    fn a_refused_version_is_answered_as_the_layer_answers_it() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for profile in [
            Profile::ApiSig,
            Profile::Placement,
            Profile::Nova,
            Profile::Ironic,
        ] {
            let api = api(profile);
            let description = ApiDescription::builder(&api).build().unwrap();
            let app = Documents::new(description, &api).router::<()>(DOCUMENTS_PATH);
            let layered = axum::Router::new()
                .route("/things", get(|| async { "" }))
                .layer(MicroversionLayer::new(api.clone()));
            for (query, header) in [("9.99", "things 9.99"), ("abc", "things abc")] {
                let id = RequestId::generate();
                let ours = send(
                    &runtime,
                    &app,
                    request(&format!("/openapi.json?version={query}"), &id),
                );
                let mut asked = request("/things", &id);
                asked
                    .headers_mut()
                    .insert("openstack-api-version", HeaderValue::from_static(header));
                let (status, mut headers, body) = send(&runtime, &layered, asked);
                headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
                assert_eq!(ours, (status, headers, body), "{profile} {query}");
                assert!(ours.0.is_client_error());
            }
        }
    }

    #[test]
    fn a_service_may_answer_refusals_its_own_way() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let api = api(Profile::Placement);
        let description = ApiDescription::builder(&api).build().unwrap();
        let app = Documents::new(description, &api)
            .refusal_answer(|error, _| (error.status(), error.to_string()).into_response())
            .router(DOCUMENTS_PATH);
        let answer = send(
            &runtime,
            &app,
            request("/openapi.json?version=1.9", &RequestId::generate()),
        );
        assert_eq!(answer.0, StatusCode::NOT_ACCEPTABLE);
        assert_eq!(answer.1[CACHE_CONTROL], "no-cache");
        assert_eq!(
            String::from_utf8(answer.2).unwrap(),
            "Invalid microversion: Unacceptable version header: 1.9"
        );
    }
}
