//! Test servers on loopback: the server crate's demo service in each
//! profile, the same service with one fault injected, and a log of what
//! each server received.
//!
//! Servers run on their own thread and runtime, so both async tests of the
//! library and blocking tests of the binary can use them.

#![allow(dead_code, unreachable_pub)]

use axum::Json;
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::header::{CONTENT_TYPE, VARY};
use http::{HeaderValue, StatusCode};
use microversion::{Decoded, Version, VersionHeader, VersionRange, VersionSpan, VersionStatus};
use microversion_server::discovery::ApiVersionSpec;
use microversion_server::{
    Discovery, MicroversionLayer, Microversions, Profile, ServedVersion, VersionedRouter,
};
use microversion_test_support::{RequestLog, dead_base, serve_on_own_thread};
use serde_json::{Value, json};

/// A running server.
#[derive(Clone, Debug)]
pub struct Server {
    /// `http://127.0.0.1:PORT/`
    pub url: String,
    pub log: RequestLog,
}

/// Serves `app` on 127.0.0.1 at a free port, on a thread of its own,
/// recording every request.
pub fn start(app: Router) -> Server {
    let log = RequestLog::default();
    let base = serve_on_own_thread(log.recording(app));
    Server {
        url: format!("{base}/"),
        log,
    }
}

/// A port nothing listens on.
pub fn dead_url() -> String {
    format!("{}/", dead_base())
}

/// The demo service in one profile, with the service type and range of
/// the real server the profile reproduces.
#[derive(Clone, Copy, Debug)]
pub struct Demo {
    pub profile: Profile,
    pub service: &'static str,
    pub min: Version,
    pub max: Version,
    /// The versioned root, as Nova's `/v2.1/`; `None`: the API is at `/`.
    pub root: Option<&'static str>,
}

pub const API_SIG: Demo = Demo {
    profile: Profile::ApiSig,
    service: "placement",
    min: Version::new(1, 0),
    max: Version::new(1, 39),
    root: None,
};

pub const PLACEMENT: Demo = Demo {
    profile: Profile::Placement,
    ..API_SIG
};

pub const NOVA: Demo = Demo {
    profile: Profile::Nova,
    service: "compute",
    min: Version::new(2, 1),
    max: Version::new(2, 104),
    root: Some("/v2.1/"),
};

pub const IRONIC: Demo = Demo {
    profile: Profile::Ironic,
    service: "baremetal",
    min: Version::new(1, 1),
    max: Version::new(1, 115),
    root: None,
};

pub const CINDER: Demo = Demo {
    profile: Profile::Cinder,
    service: "volume",
    min: Version::new(3, 0),
    max: Version::new(3, 71),
    root: Some("/v3/"),
};

/// Every profile, in the order of `Profile::ALL`.
pub const DEMOS: [Demo; 5] = [API_SIG, PLACEMENT, NOVA, IRONIC, CINDER];

impl Demo {
    pub fn range(&self) -> VersionRange {
        VersionRange::new(self.min, self.max).unwrap()
    }

    /// The path prefix of the API: `""` or `/v2.1`.
    pub fn prefix(&self) -> &'static str {
        self.root.map_or("", |r| r.trim_end_matches('/'))
    }

    /// A versioned resource path: `/widgets` or `/v2.1/widgets`.
    pub fn widgets(&self) -> String {
        format!("{}/widgets", self.prefix())
    }

    /// A version counted from the minimum.
    pub fn step(&self, k: u32) -> Version {
        Version::new(self.min.major(), self.min.minor() + k)
    }

    /// The demo app: widgets whose shape changes with the version, as in
    /// the server crate's `examples/demo.rs`, with discovery.
    ///
    /// Nova's profile also serves its v2.0 API at `/v2`, the minimum
    /// without version headers, as Nova does.
    pub fn app(&self) -> Router {
        let nova = self.profile == Profile::Nova;
        let mut builder = Microversions::builder(self.service, self.range())
            .profile(self.profile)
            .version_neutral("/healthcheck");
        if nova {
            builder = builder.legacy_root("/v2");
        }
        let api = builder.build().unwrap();
        let id = format!("v{}", self.min);
        let mut legacy = Discovery::builder();
        if nova {
            legacy = legacy.version(
                ApiVersionSpec::new("v2.0", "/v2/", VersionStatus::Supported)
                    .updated("2011-01-21T11:33:21Z"),
            );
        }
        let discovery = match self.root {
            None => Discovery::single(&api, &id).unwrap(),
            Some(root) => legacy
                .version(
                    ApiVersionSpec::new(&id, root, VersionStatus::Current)
                        .microversions(self.range())
                        .media_type(
                            "application/json",
                            format!(
                                "application/vnd.openstack.{}+json;version={}",
                                self.service, self.min
                            ),
                        ),
                )
                .build()
                .unwrap(),
        };
        let mut routes = self.widget_routes(VersionedRouter::new(), self.prefix());
        if nova {
            routes = self.widget_routes(routes, "/v2");
        }
        routes
            .build()
            .unwrap()
            .merge(discovery.router())
            .route("/healthcheck", get(|| async { "OK" }))
            .layer(MicroversionLayer::new(api))
    }

    /// `router` with the widget routes under `prefix`.
    fn widget_routes(&self, router: VersionedRouter, prefix: &str) -> VersionedRouter {
        let color_from = self.step(1);
        let returns_200_from = self.step(2);
        router
            .get(
                &format!("{prefix}/widgets"),
                VersionSpan::ALL,
                move |v: ServedVersion| async move {
                    let mut widget = json!({"id": 1, "name": "sprocket"});
                    if *v >= color_from {
                        widget["color"] = json!("red");
                    }
                    Json(json!({"widgets": [widget]}))
                },
            )
            .post(
                &format!("{prefix}/widgets"),
                VersionSpan::ALL,
                move |v: ServedVersion, Json(body): Json<Value>| async move {
                    let widget = json!({"id": 2, "name": body["name"]});
                    if *v >= returns_200_from {
                        (StatusCode::OK, Json(widget)).into_response()
                    } else {
                        StatusCode::CREATED.into_response()
                    }
                },
            )
            .get(
                &format!("{prefix}/gadgets"),
                VersionSpan::new(returns_200_from, None).unwrap(),
                || async { Json(json!({"gadgets": []})) },
            )
    }

    /// Starts the demo.
    pub fn start(&self) -> Server {
        start(self.app())
    }

    /// Starts the demo with `fault` injected around its microversion layer.
    pub fn start_broken(&self, fault: Fault) -> Server {
        let demo = *self;
        let app = self
            .app()
            .layer(middleware::from_fn(move |req: Request, next: Next| {
                inject(demo, fault, req, next)
            }));
        start(app)
    }
}

/// A departure from the rules, injected around a correct server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Responses lose `Vary`.
    NoVary,
    /// Responses always name the minimum.
    WrongEcho,
    /// `latest` is echoed as `latest`.
    EchoLatestLiterally,
    /// A malformed header crashes the handler: 500.
    ServerErrorOnBadHeader,
    /// 406 becomes 200 (out-of-range versions are served).
    OkInsteadOf406,
    /// No header means the maximum.
    DefaultIsMax,
    /// The first entry for the service wins.
    FirstEntryWins,
    /// Only the last header line is read (repeated lines are not folded).
    LastLineOnly,
    /// The service type is ignored: the last entry of any service wins.
    TypeBlind,
    /// The service type is compared case-sensitively.
    CaseSensitiveType,
    /// An entry without a version is a 400.
    TypeOnlyIs400,
    /// More than one space, or a tab, after the type is a 400.
    StrictSpacing,
    /// `LATEST` is read as `latest`.
    LatestAnyCase,
    /// Lenient parsing: `1.01` is read as `1.1`.
    LeadingZeros,
    /// VersionSpan are compared as text: `1.9` is above `1.39`.
    TextOrder,
    /// The legacy header wins over the standard one.
    LegacyWins,
    /// Responses lose the legacy header.
    NoLegacyEcho,
    /// Responses lose the minimum and maximum headers.
    NoRangeHeaders,
    /// 404 answers lose the version headers.
    BareNotFound,
    /// Answers lose the request id.
    NoRequestId,
    /// Answers lose Nova's second request id header.
    NoComputeRequestId,
    /// The 400 body is plain text.
    TextErrors,
    /// The 406 body lacks `min_version` and `max_version`.
    No406Range,
    /// The versions document has two CURRENT entries.
    TwoCurrent,
    /// The versions document gives `max_version` but not `version`.
    NoVersionField,
    /// `GET /` needs a token.
    AuthOnRoot,
    /// The versioned root answers the list of versions.
    RootIsList,
    /// There is no versions document: `GET /` and the versioned root
    /// answer 404.
    NoDocument,
    /// Nova's `/v2` names the version it served, as `/v2.1` does.
    LegacyEchoes,
}

fn is_root(path: &str) -> bool {
    path == "/"
}

async fn inject(demo: Demo, fault: Fault, mut req: Request, next: Next) -> Response {
    let codec = VersionHeader::new(demo.service);
    let std_values: Vec<String> = req
        .headers()
        .get_all("openstack-api-version")
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect();
    let asked_latest = std_values.iter().any(|v| v.contains("latest"));
    let path = req.uri().path().to_owned();
    let set_std = |req: &mut Request, value: &str| {
        req.headers_mut().remove("openstack-api-version");
        if let Ok(value) = HeaderValue::from_str(value) {
            req.headers_mut().insert("openstack-api-version", value);
        }
    };
    match fault {
        Fault::ServerErrorOnBadHeader => {
            if let Decoded::Malformed(_) =
                codec.decode(req.headers().get_all("openstack-api-version"))
            {
                return (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response();
            }
        }
        Fault::DefaultIsMax if std_values.is_empty() => {
            set_std(&mut req, &format!("{} latest", demo.service));
        }
        Fault::FirstEntryWins => {
            let entries = entries(&std_values);
            if let Some((_, v)) = entries
                .iter()
                .find(|(t, v)| t == demo.service && !v.is_empty())
            {
                set_std(&mut req, &format!("{} {v}", demo.service));
            }
        }
        Fault::LastLineOnly if std_values.len() > 1 => {
            let last = std_values.last().cloned().unwrap_or_default();
            set_std(&mut req, &last);
        }
        Fault::TypeBlind => {
            if let Some((_, v)) = entries(&std_values)
                .into_iter()
                .rev()
                .find(|(_, v)| !v.is_empty())
            {
                set_std(&mut req, &format!("{} {v}", demo.service));
            }
        }
        Fault::CaseSensitiveType
            if entries(&std_values)
                .iter()
                .any(|(t, _)| t != demo.service && t.eq_ignore_ascii_case(demo.service)) =>
        {
            req.headers_mut().remove("openstack-api-version");
        }
        Fault::TypeOnlyIs400 if entries(&std_values).iter().any(|(_, v)| v.is_empty()) => {
            return (StatusCode::BAD_REQUEST, "bad header").into_response();
        }
        Fault::StrictSpacing
            if std_values
                .iter()
                .any(|v| v.trim().contains("  ") || v.contains('\t')) =>
        {
            return (StatusCode::BAD_REQUEST, "bad header").into_response();
        }
        Fault::LatestAnyCase => {
            let lowered: Vec<String> = std_values
                .iter()
                .map(|v| v.replace("LATEST", "latest"))
                .collect();
            if lowered != std_values {
                set_std(&mut req, &lowered.join(", "));
            }
        }
        Fault::LeadingZeros => {
            let fixed: Vec<String> = std_values.iter().map(|v| v.replace(".01", ".1")).collect();
            if fixed != std_values {
                set_std(&mut req, &fixed.join(", "));
            }
        }
        Fault::TextOrder => {
            let max_text = demo.max.to_string();
            if entries(&std_values).iter().any(|(t, v)| {
                t == demo.service && v.contains('.') && v.as_str() > max_text.as_str()
            }) {
                return (StatusCode::NOT_ACCEPTABLE, "too new").into_response();
            }
        }
        Fault::LegacyWins => {
            let legacy = req
                .headers()
                .get("x-openstack-nova-api-version")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            if let Some(v) = legacy {
                set_std(&mut req, &format!("{} {v}", demo.service));
            }
        }
        Fault::AuthOnRoot if is_root(&path) && !req.headers().contains_key("x-auth-token") => {
            return (StatusCode::UNAUTHORIZED, "token needed").into_response();
        }
        Fault::RootIsList if demo.root.is_some_and(|r| path == r) => {
            return Json(json!({"versions": []})).into_response();
        }
        _ => {}
    }
    let mut response = next.run(req).await;
    let status = response.status();
    let headers = response.headers_mut();
    match fault {
        Fault::NoVary => {
            headers.remove(VARY);
        }
        Fault::WrongEcho if headers.contains_key("openstack-api-version") => {
            let value = format!("{} {}", demo.service, demo.min);
            headers.insert(
                "openstack-api-version",
                HeaderValue::from_str(&value).unwrap(),
            );
        }
        Fault::EchoLatestLiterally if asked_latest => {
            let value = format!("{} latest", demo.service);
            headers.insert(
                "openstack-api-version",
                HeaderValue::from_str(&value).unwrap(),
            );
        }
        Fault::OkInsteadOf406 if status == StatusCode::NOT_ACCEPTABLE => {
            *response.status_mut() = StatusCode::OK;
        }
        Fault::NoLegacyEcho => {
            headers.remove("x-openstack-nova-api-version");
            headers.remove("x-openstack-ironic-api-version");
        }
        Fault::NoRangeHeaders => {
            headers.remove("x-openstack-ironic-api-minimum-version");
            headers.remove("x-openstack-ironic-api-maximum-version");
        }
        Fault::BareNotFound if status == StatusCode::NOT_FOUND => {
            headers.remove("openstack-api-version");
            headers.remove("x-openstack-nova-api-version");
            headers.remove(VARY);
        }
        Fault::NoRequestId => {
            headers.remove("x-openstack-request-id");
        }
        Fault::LegacyEchoes if path.starts_with("/v2/") || path == "/v2" => {
            let value = format!("{} {}", demo.service, demo.min);
            headers.insert(
                "openstack-api-version",
                HeaderValue::from_str(&value).unwrap(),
            );
        }
        Fault::NoComputeRequestId => {
            headers.remove("x-compute-request-id");
        }
        Fault::TextErrors if status == StatusCode::BAD_REQUEST => {
            let (mut parts, _) = response.into_parts();
            parts
                .headers
                .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
            parts.headers.remove(http::header::CONTENT_LENGTH);
            return Response::from_parts(parts, Body::from("400 Bad Request"));
        }
        Fault::NoDocument
            if (is_root(&path) || demo.root.is_some_and(|r| path == r)) && status.is_success() =>
        {
            let (mut parts, _) = response.into_parts();
            parts.status = StatusCode::NOT_FOUND;
            parts.headers.remove(http::header::CONTENT_LENGTH);
            return Response::from_parts(parts, Body::from("no versions here"));
        }
        Fault::TwoCurrent | Fault::NoVersionField if is_root(&path) && status.is_success() => {
            let (mut parts, body) = response.into_parts();
            let bytes = axum::body::to_bytes(body, 1 << 20)
                .await
                .unwrap_or_default();
            let mut value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            if let Some(versions) = value.get_mut("versions").and_then(Value::as_array_mut) {
                if fault == Fault::TwoCurrent {
                    let mut twin = versions[0].clone();
                    twin["id"] = json!("v1.1");
                    versions.push(twin);
                } else if let Some(entry) = versions[0].as_object_mut() {
                    entry.remove("version");
                }
            }
            parts.headers.remove(http::header::CONTENT_LENGTH);
            return Response::from_parts(parts, Body::from(value.to_string()));
        }
        Fault::No406Range if status == StatusCode::NOT_ACCEPTABLE => {
            let (mut parts, body) = response.into_parts();
            let bytes = axum::body::to_bytes(body, 1 << 20)
                .await
                .unwrap_or_default();
            let mut value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            if let Some(entry) = value.get_mut("errors").and_then(|e| e.get_mut(0)) {
                if let Some(entry) = entry.as_object_mut() {
                    entry.remove("min_version");
                    entry.remove("max_version");
                }
            }
            parts.headers.remove(http::header::CONTENT_LENGTH);
            return Response::from_parts(parts, Body::from(value.to_string()));
        }
        _ => {}
    }
    response
}

/// `(service type, version)` of every entry of the standard header.
fn entries(values: &[String]) -> Vec<(String, String)> {
    values
        .iter()
        .flat_map(|v| v.split(','))
        .filter_map(|entry| {
            let mut words = entry.split_whitespace();
            let service = words.next()?.to_owned();
            Some((service, words.next().unwrap_or_default().to_owned()))
        })
        .collect()
}

/// One run of the binary.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `microversion args` in `dir` (where a clouds.yaml may be), with
/// none of the caller's `OS_*` or proxy variables, the cache, config and
/// home in `dir`, and `vars` set.
pub fn run_in(
    dir: &microversion_test_support::Scratch,
    args: &[&str],
    vars: &[(&str, &str)],
) -> Run {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_microversion"));
    cmd.args(args).current_dir(dir.path());
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy().into_owned();
        if name.starts_with("OS_") || name.to_ascii_lowercase().ends_with("_proxy") {
            cmd.env_remove(&name);
        }
    }
    cmd.env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("HOME", dir.join("home"));
    for (name, value) in vars {
        cmd.env(name, value);
    }
    let out = cmd.output().expect("the binary runs");
    Run {
        code: out.status.code().expect("an exit code"),
        stdout: String::from_utf8(out.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("UTF-8 stderr"),
    }
}
