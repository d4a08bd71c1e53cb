//! Boundary tests made from the description: [`Sweep`].

use std::fmt;
use std::future::Future;

use axum::body::Body;
use http::{HeaderValue, Method, Request, Response, StatusCode};
use microversion::Version;

use super::ApiDescription;
use super::validate::{Contract, mismatch};

/// Every operation of an API at the versions where a mistake hides: its
/// first and last version, both sides of each version that changes it
/// ([`ApiDescription::differences`]), and the versions just outside its
/// life, where it must not be served.
///
/// The test says how to make each request (the path's parameters, the
/// body) and how to send it; the sweep names the version, sends, and
/// checks each answer: inside the operation's life, a success status the
/// version documents for it and a body that matches its schema; outside,
/// 404 or 405.
///
/// ```
/// use axum::body::Body;
/// use http::{Request, StatusCode};
/// use microversion::{Change, VersionRange};
/// use microversion_server::openapi::{ApiDescription, OperationDoc, ResponseDoc, Sweep};
/// use microversion_server::{MicroversionLayer, Microversions, VersionedRouter};
/// use serde_json::json;
/// use tower::ServiceExt;
///
/// const INITIAL: Change = Change::new("1.0", "Initial version.");
/// const GADGETS: Change = Change::new("1.1", "Adds GET /gadgets.");
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// let api = Microversions::builder("widgets", VersionRange::from_static("1.0", "1.1")).build()?;
/// let routes = VersionedRouter::<()>::new()
///     .get("/gadgets", GADGETS.since(), || async { axum::Json(json!([])) });
/// let description = ApiDescription::builder(&api)
///     .routes(&routes)
///     .operation(OperationDoc::get("/gadgets").response(
///         GADGETS.since(),
///         StatusCode::OK,
///         ResponseDoc::json("The gadgets", json!({"type": "array"})),
///     ))
///     .build()?;
/// let app = routes.build_for(&api)?.layer(MicroversionLayer::new(api));
///
/// let report = Sweep::new(&description)
///     .run(
///         |probe| async move {
///             Some(Request::builder().method(&probe.method).uri(&probe.path).body(Body::empty()))
///         },
///         |request| app.clone().oneshot(request),
///     )
///     .await;
/// assert!(report.passed(), "{report}");
/// // GET /gadgets at 1.1 (served) and at 1.0 (before it exists).
/// assert_eq!(report.checked, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Sweep {
    contract: Contract,
    service_type: String,
    probes: Vec<Probe>,
}

/// One request of a [`Sweep`]: an operation at one version.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Probe {
    /// The operation's method.
    pub method: Method,
    /// The operation's path pattern (`/nodes/{id}`): the request's path
    /// has its parameters filled in.
    pub path: String,
    /// The version asked for.
    pub version: Version,
    /// Whether the operation is served at that version.
    pub served: bool,
    /// Why this version is tried (`its first version`, `1.5 changes it`).
    pub why: String,
}

impl fmt::Display for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} at {} ({})",
            self.method, self.path, self.version, self.why
        )
    }
}

/// What a [`Sweep`] found.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct SweepReport {
    /// How many probes were sent and checked.
    pub checked: usize,
    /// The probes the test made no request for.
    pub skipped: Vec<Probe>,
    /// The probes whose answer was wrong, with what was wrong.
    pub failures: Vec<(Probe, String)>,
}

impl SweepReport {
    /// Whether every probe sent was answered as documented.
    #[must_use]
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

impl fmt::Display for SweepReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} probes checked, {} failed, {} skipped",
            self.checked,
            self.failures.len(),
            self.skipped.len()
        )?;
        for (probe, why) in &self.failures {
            write!(f, "\n  {probe}: {why}")?;
        }
        for probe in &self.skipped {
            write!(f, "\n  skipped: {probe}")?;
        }
        Ok(())
    }
}

impl Sweep {
    /// The probes of every operation `description` documents.
    #[must_use]
    pub fn new(description: &ApiDescription) -> Self {
        let range = description.range;
        let versions = description.versions();
        // What each version changes, against the one before it.
        let changes: Vec<(Version, Vec<super::Difference>)> = versions
            .iter()
            .skip(1)
            .map(|v| (*v, description.made_by(*v)))
            .collect();
        let mut probes = Vec::new();
        for op in &description.operations {
            let mut wanted: Vec<(Version, bool, String)> = Vec::new();
            let mut want = |version: Version, served: bool, why: String| match wanted
                .iter_mut()
                .find(|(v, _, _)| *v == version)
            {
                Some((_, _, reasons)) => {
                    reasons.push_str(", ");
                    reasons.push_str(&why);
                }
                None => wanted.push((version, served, why)),
            };
            let (first, last) = op.life;
            if op.neutral {
                want(first, true, "version-neutral".to_owned());
            } else {
                want(first, true, "its first version".to_owned());
                for (version, made) in &changes {
                    let touched = made
                        .iter()
                        .any(|d| d.method == op.method && d.path == op.path);
                    if touched && *version > first && *version <= last {
                        if let Some(before) = version.previous_minor() {
                            want(before, true, format!("before {version} changes it"));
                        }
                        want(*version, true, format!("{version} changes it"));
                    }
                }
                want(last, true, "its last version".to_owned());
                if first > range.min()
                    && let Some(before) = first.previous_minor()
                {
                    want(before, false, "before it exists".to_owned());
                }
                if last < range.max()
                    && let Some(after) = last.next_minor()
                {
                    want(after, false, "after it is gone".to_owned());
                }
            }
            wanted.sort_by_key(|(v, _, _)| *v);
            probes.extend(wanted.into_iter().map(|(version, served, why)| Probe {
                method: op.method.clone(),
                path: op.path.clone(),
                version,
                served,
                why,
            }));
        }
        Sweep {
            contract: Contract::new(description),
            service_type: description.service_type.clone(),
            probes,
        }
    }

    /// The probes, by operation, then version.
    #[must_use]
    pub fn probes(&self) -> &[Probe] {
        &self.probes
    }

    /// Sends each probe, one after the other, and checks its answer.
    /// `make` builds the request of a probe (its path with the parameters
    /// filled in, its body and headers; `None` skips it, reported), and
    /// may first set up what the request needs (the object a `DELETE`
    /// removes); `send` sends it: to an app in process, or over HTTP. The
    /// sweep adds the version header.
    pub async fn run<M, MF, S, F, E>(&self, mut make: M, mut send: S) -> SweepReport
    where
        M: FnMut(Probe) -> MF,
        MF: Future<Output = Option<Result<Request<Body>, http::Error>>>,
        S: FnMut(Request<Body>) -> F,
        F: Future<Output = Result<Response<Body>, E>>,
        E: fmt::Display,
    {
        let mut report = SweepReport::default();
        for probe in &self.probes {
            let mut request = match make(probe.clone()).await {
                None => {
                    report.skipped.push(probe.clone());
                    continue;
                }
                Some(Err(e)) => {
                    report
                        .failures
                        .push((probe.clone(), format!("the request could not be made: {e}")));
                    continue;
                }
                Some(Ok(request)) => request,
            };
            let header = format!("{} {}", self.service_type, probe.version);
            if let Ok(value) = HeaderValue::from_str(&header) {
                request
                    .headers_mut()
                    .insert(microversion::OPENSTACK_API_VERSION, value);
            }
            let path = request.uri().path().to_owned();
            report.checked += 1;
            let response = match send(request).await {
                Ok(response) => response,
                Err(e) => {
                    report
                        .failures
                        .push((probe.clone(), format!("it could not be sent: {e}")));
                    continue;
                }
            };
            if let Some(why) = self.judge(probe, &path, response).await {
                report.failures.push((probe.clone(), why));
            }
        }
        report
    }

    /// What is wrong with the answer to `probe`, if anything.
    async fn judge(&self, probe: &Probe, path: &str, response: Response<Body>) -> Option<String> {
        let status = response.status();
        let content_type = response.headers().get(http::header::CONTENT_TYPE).cloned();
        let body = match axum::body::to_bytes(response.into_body(), usize::MAX).await {
            Ok(body) => body,
            Err(e) => return Some(format!("the body could not be read: {e}")),
        };
        let excerpt = || {
            let text = String::from_utf8_lossy(&body);
            let cut: String = text.chars().take(200).collect();
            cut
        };
        if !probe.served {
            return (status != StatusCode::NOT_FOUND && status != StatusCode::METHOD_NOT_ALLOWED)
                .then(|| {
                    format!(
                        "answered {status} where it is not served (expected 404 or 405): {}",
                        excerpt()
                    )
                });
        }
        if !status.is_success() {
            return Some(format!("answered {status}: {}", excerpt()));
        }
        let Some((_, responses)) = self.contract.responses(&probe.method, path, probe.version)
        else {
            return Some(format!(
                "{path} matches no documented path of {} at {}",
                probe.method, probe.version
            ));
        };
        let body = (probe.method != Method::HEAD).then_some(&body[..]);
        mismatch(responses, status, content_type.as_ref(), body)
            .map(|why| format!("answered {}: {why}", status.as_u16()))
    }
}
