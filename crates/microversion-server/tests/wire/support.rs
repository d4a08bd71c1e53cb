//! The five profiles as test fixtures: each one's service, range and the
//! behaviour its documentation promises, written out by hand (not read
//! from `Profile::rules`, so a change to a profile fails these tests), an
//! app exercising every kind of response, and HTTP helpers.

use std::fmt::Display;

use axum::Json;
use http::header::VARY;
use http::{HeaderMap, HeaderValue, Method};
use microversion::{Version, VersionRange, VersionSpan};
use microversion_server::{
    ApiError, MicroversionLayer, Microversions, Profile, RequestId, ServedVersion, VersionedRouter,
};
use serde_json::{Value, json};

/// How error bodies look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `{"errors": [{"status", "title", "detail", ...}]}`.
    ApiSig,
    /// `{"<faultName>": {"code", "message"}}`.
    Fault,
    /// `{"error_message": "{\"faultstring\", \"faultcode\", \"debuginfo\"}"}`.
    Ironic,
}

/// The wording of the layer's version errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wording {
    ApiSig,
    Placement,
    Nova,
    Ironic,
}

/// Which version headers the layer's own 400 or 406 answer carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ErrHeaders {
    /// `Vary` naming the version headers.
    pub(crate) vary: bool,
    /// The rejected version echoed in the version headers.
    pub(crate) rejected_version: bool,
}

/// webob's explanation of a 400, which upstream Placement's 400 details
/// start with.
pub(crate) const WEBOB_400: &str = "The server could not comply with the request since it is either malformed or otherwise incorrect.";

const NONE: ErrHeaders = ErrHeaders {
    vary: false,
    rejected_version: false,
};
const VARY_ONLY: ErrHeaders = ErrHeaders {
    vary: true,
    rejected_version: false,
};

/// One profile with a service and what it must do on the wire.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Svc {
    pub(crate) profile: Profile,
    pub(crate) service: &'static str,
    pub(crate) min: Version,
    pub(crate) max: Version,
    /// The legacy request header, spelled as the real server spells it.
    pub(crate) legacy: Option<&'static str>,
    /// Responses carry `OpenStack-API-Version`.
    pub(crate) echo_standard: bool,
    /// Responses carry the legacy header.
    pub(crate) echo_legacy: bool,
    /// The header names `Vary` lists (lower case); empty: no `Vary` at all.
    pub(crate) vary: &'static [&'static str],
    /// The minimum and maximum headers on every negotiated response.
    pub(crate) range_headers: Option<(&'static str, &'static str)>,
    /// The status of a malformed version.
    pub(crate) malformed_status: u16,
    /// `0.5` is a version below the range (406) rather than malformed.
    pub zero_major_is_406: bool,
    /// `LATEST` and `Latest` mean the maximum.
    pub(crate) latest_any_case: bool,
    /// Headers on the layer's answer to a malformed version.
    pub(crate) malformed_headers: ErrHeaders,
    /// Headers on the layer's 406 for a version out of range.
    pub(crate) unsupported_headers: ErrHeaders,
    /// `GET /` reads the version header.
    pub(crate) root_versioned: bool,
    pub(crate) shape: Shape,
    pub(crate) wording: Wording,
    /// More headers with the request id.
    pub(crate) request_id_aliases: &'static [&'static str],
}

pub(crate) const API_SIG: Svc = Svc {
    profile: Profile::ApiSig,
    service: "placement",
    min: Version::new(1, 0),
    max: Version::new(1, 39),
    legacy: None,
    echo_standard: true,
    echo_legacy: false,
    vary: &["openstack-api-version"],
    range_headers: None,
    malformed_status: 400,
    zero_major_is_406: false,
    latest_any_case: false,
    malformed_headers: VARY_ONLY,
    unsupported_headers: VARY_ONLY,
    root_versioned: true,
    shape: Shape::ApiSig,
    wording: Wording::ApiSig,
    request_id_aliases: &[],
};

pub(crate) const PLACEMENT: Svc = Svc {
    profile: Profile::Placement,
    service: "placement",
    min: Version::new(1, 0),
    max: Version::new(1, 39),
    legacy: None,
    echo_standard: true,
    echo_legacy: false,
    vary: &["openstack-api-version"],
    range_headers: None,
    malformed_status: 400,
    zero_major_is_406: true,
    latest_any_case: false,
    malformed_headers: NONE,
    unsupported_headers: NONE,
    root_versioned: true,
    shape: Shape::ApiSig,
    wording: Wording::Placement,
    request_id_aliases: &[],
};

pub(crate) const NOVA: Svc = Svc {
    profile: Profile::Nova,
    service: "compute",
    min: Version::new(2, 1),
    max: Version::new(2, 104),
    legacy: Some("X-OpenStack-Nova-API-Version"),
    echo_standard: true,
    echo_legacy: true,
    vary: &["openstack-api-version", "x-openstack-nova-api-version"],
    range_headers: None,
    malformed_status: 400,
    zero_major_is_406: false,
    latest_any_case: false,
    malformed_headers: NONE,
    unsupported_headers: ErrHeaders {
        vary: true,
        rejected_version: true,
    },
    root_versioned: false,
    shape: Shape::Fault,
    wording: Wording::Nova,
    request_id_aliases: &["x-compute-request-id"],
};

pub(crate) const IRONIC: Svc = Svc {
    profile: Profile::Ironic,
    service: "baremetal",
    min: Version::new(1, 1),
    max: Version::new(1, 115),
    legacy: Some("X-OpenStack-Ironic-API-Version"),
    echo_standard: false,
    echo_legacy: true,
    vary: &[],
    range_headers: Some((
        "x-openstack-ironic-api-minimum-version",
        "x-openstack-ironic-api-maximum-version",
    )),
    malformed_status: 406,
    zero_major_is_406: true,
    latest_any_case: true,
    malformed_headers: NONE,
    unsupported_headers: NONE,
    root_versioned: true,
    shape: Shape::Ironic,
    wording: Wording::Ironic,
    request_id_aliases: &["openstack-request-id"],
};

pub(crate) const CINDER: Svc = Svc {
    profile: Profile::Cinder,
    service: "volume",
    min: Version::new(3, 0),
    max: Version::new(3, 71),
    legacy: Some("OpenStack-Volume-microversion"),
    echo_standard: true,
    echo_legacy: true,
    vary: &["openstack-api-version", "openstack-volume-microversion"],
    range_headers: None,
    malformed_status: 400,
    zero_major_is_406: false,
    latest_any_case: false,
    malformed_headers: VARY_ONLY,
    unsupported_headers: VARY_ONLY,
    root_versioned: true,
    shape: Shape::Fault,
    wording: Wording::ApiSig,
    request_id_aliases: &[],
};

/// Every profile, in the order of `Profile::ALL`.
pub(crate) const SERVICES: [Svc; 5] = [API_SIG, PLACEMENT, NOVA, IRONIC, CINDER];

impl Svc {
    /// A version of the service's major: `v(10)` is 1.10, 2.10 or 3.10.
    pub(crate) fn v(&self, minor: u32) -> Version {
        Version::new(self.min.major(), minor)
    }

    /// The standard header value asking for `version`.
    pub(crate) fn ask(&self, version: impl Display) -> String {
        format!("{} {version}", self.service)
    }

    /// A different service type, for folded headers.
    pub(crate) fn other(&self) -> &'static str {
        if self.service == "compute" {
            "placement"
        } else {
            "compute"
        }
    }

    pub(crate) fn api(&self) -> Microversions {
        Microversions::builder(self.service, VersionRange::new(self.min, self.max).unwrap())
            .profile(self.profile)
            .build()
            .unwrap()
    }

    /// The routes every test server has.
    ///
    /// - `GET /`: a versions document (all versions);
    /// - `GET /echo`: the served version and request id, with `Vary: Accept`;
    /// - `GET /things`: one handler up to X.9, another from X.10;
    /// - `POST /things`: a handler error, 409 with a code;
    /// - `GET /gone`: only up to X.2 (removed later);
    /// - `GET /new`: only from X.10 (added later);
    /// - `GET /gap`: up to X.2 and from X.5 (removed, then back);
    /// - `GET /branch`: one handler branching with `VersionSpan::contains`.
    pub(crate) fn routes(&self) -> VersionedRouter {
        let upto = |minor| VersionSpan::new(self.min, Some(self.v(minor))).unwrap();
        let from = |minor| VersionSpan::new(self.v(minor), None).unwrap();
        VersionedRouter::new()
            .get("/", VersionSpan::ALL, root)
            .get("/echo", VersionSpan::ALL, echo)
            .get("/things", upto(9), things_old)
            .get("/things", from(10), things_new)
            .post("/things", VersionSpan::ALL, conflict)
            .get("/gone", upto(2), gone)
            .get("/new", from(10), added)
            .get("/gap", upto(2), gap_before)
            .get("/gap", from(5), gap_after)
            .get("/branch", VersionSpan::ALL, branch)
    }

    /// Starts this profile's server on loopback; returns its base URL.
    pub(crate) async fn start(&self) -> String {
        let app = self
            .routes()
            .build()
            .unwrap()
            .layer(MicroversionLayer::new(self.api()));
        microversion_test_support::serve(app).await
    }
}

async fn root() -> Json<Value> {
    Json(json!({"versions": [{"id": "v1.0", "status": "CURRENT"}]}))
}

async fn echo(version: ServedVersion, id: RequestId) -> (HeaderMapPair, Json<Value>) {
    (
        [(VARY, HeaderValue::from_static("Accept"))],
        Json(json!({"version": version.to_string(), "request_id": id.as_str()})),
    )
}

type HeaderMapPair = [(http::HeaderName, HeaderValue); 1];

async fn things_old(version: ServedVersion) -> Json<Value> {
    Json(json!({"handler": "old", "version": version.to_string()}))
}

async fn things_new(version: ServedVersion) -> Json<Value> {
    Json(json!({"handler": "new", "version": version.to_string()}))
}

async fn conflict() -> ApiError {
    ApiError::new(http::StatusCode::CONFLICT, "busy").with_code("example.busy")
}

async fn gone(version: ServedVersion) -> Json<Value> {
    Json(json!({"handler": "gone", "version": version.to_string()}))
}

async fn added(version: ServedVersion) -> Json<Value> {
    Json(json!({"handler": "new", "version": version.to_string()}))
}

async fn gap_before(version: ServedVersion) -> Json<Value> {
    Json(json!({"handler": "before", "version": version.to_string()}))
}

async fn gap_after(version: ServedVersion) -> Json<Value> {
    Json(json!({"handler": "after", "version": version.to_string()}))
}

/// One handler for every version; fields differ by range.
async fn branch(version: ServedVersion) -> Json<Value> {
    let major = version.major();
    let at = |minor| Version::new(major, minor);
    let mut body = json!({"version": version.to_string()});
    let middle = VersionSpan::between(at(5), at(7)).expect("5 comes before 7");
    if middle.contains(*version) {
        body["middle"] = json!(true);
    }
    if VersionSpan::since(at(8)).contains(*version) {
        body["added_in_8"] = json!(true);
    }
    Json(body)
}

/// A response, read whole.
#[derive(Debug)]
pub(crate) struct Resp {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) body: String,
}

impl Resp {
    /// The only value of `name`; panics when there are several.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        let values = self.values(name);
        assert!(values.len() <= 1, "several {name} headers: {values:?}");
        values.first().copied()
    }

    /// Every value of `name`, in order.
    pub(crate) fn values(&self, name: &str) -> Vec<&str> {
        self.headers
            .get_all(name)
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect()
    }

    /// Every header name listed by `Vary`, lower case, in order.
    pub(crate) fn vary_names(&self) -> Vec<String> {
        self.values(VARY.as_str())
            .iter()
            .flat_map(|v| v.split(','))
            .map(|n| n.trim().to_ascii_lowercase())
            .collect()
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }

    /// The version a handler saw (`version` in the body).
    pub(crate) fn served(&self) -> String {
        assert_eq!(self.status, 200, "{}", self.body);
        self.json()["version"].as_str().unwrap().to_owned()
    }

    pub(crate) fn request_id(&self) -> &str {
        self.header("x-openstack-request-id")
            .expect("x-openstack-request-id")
    }
}

pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// Sends `method path` with `headers` (appended in order, so a name given
/// twice is sent as two header lines).
pub(crate) async fn send(base: &str, method: Method, path: &str, headers: &[(&str, &str)]) -> Resp {
    send_with(&client(), base, method, path, headers).await
}

pub(crate) async fn send_with(
    client: &reqwest::Client,
    base: &str,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
) -> Resp {
    let mut req = client.request(method, format!("{base}{path}"));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let res = req.send().await.unwrap();
    Resp {
        status: res.status().as_u16(),
        headers: res.headers().clone(),
        body: res.text().await.unwrap(),
    }
}

pub(crate) async fn get(base: &str, path: &str, headers: &[(&str, &str)]) -> Resp {
    send(base, Method::GET, path, headers).await
}

/// `GET /echo` with one standard header.
pub(crate) async fn ask(base: &str, value: &str) -> Resp {
    get(base, "/echo", &[("OpenStack-API-Version", value)]).await
}

impl Svc {
    /// Asserts the headers of a response served at `version`: the version
    /// headers the profile echoes and no others, `Vary` (after `own_vary`,
    /// what the handler set), the range headers and the request ids.
    pub(crate) fn assert_served_headers(&self, r: &Resp, version: Version, own_vary: &[&str]) {
        let p = self.profile;
        let want_std = self.echo_standard.then(|| self.ask(version));
        assert_eq!(
            r.header("openstack-api-version").map(str::to_owned),
            want_std,
            "{p}: standard header"
        );
        if let Some(legacy) = self.legacy {
            let want = self.echo_legacy.then(|| version.to_string());
            assert_eq!(
                r.header(legacy).map(str::to_owned),
                want,
                "{p}: legacy header {legacy}"
            );
        }
        let mut want_vary: Vec<String> = own_vary.iter().map(|n| n.to_ascii_lowercase()).collect();
        want_vary.extend(self.vary.iter().map(|n| (*n).to_owned()));
        assert_eq!(r.vary_names(), want_vary, "{p}: Vary");
        self.assert_range_headers(r, self.range_headers.is_some());
        self.assert_request_ids(r);
    }

    /// Asserts that no version, `Vary` or range header is present.
    pub(crate) fn assert_no_version_headers(&self, r: &Resp) {
        let p = self.profile;
        assert_eq!(r.header("openstack-api-version"), None, "{p}");
        if let Some(legacy) = self.legacy {
            assert_eq!(r.header(legacy), None, "{p}: {legacy}");
        }
        assert_eq!(r.values("vary"), Vec::<&str>::new(), "{p}: Vary");
        self.assert_range_headers(r, false);
        self.assert_request_ids(r);
    }

    /// Asserts the headers of the layer's own answer to a version error.
    pub(crate) fn assert_error_headers(
        &self,
        r: &Resp,
        expect: ErrHeaders,
        rejected: &str,
        range: bool,
    ) {
        let p = self.profile;
        if expect.rejected_version {
            assert_eq!(
                r.header("openstack-api-version").map(str::to_owned),
                self.echo_standard.then(|| self.ask(rejected)),
                "{p}: standard header echoes the rejected version"
            );
            if let (Some(legacy), true) = (self.legacy, self.echo_legacy) {
                assert_eq!(r.header(legacy), Some(rejected), "{p}: {legacy}");
            }
        } else {
            assert_eq!(r.header("openstack-api-version"), None, "{p}");
            if let Some(legacy) = self.legacy {
                assert_eq!(r.header(legacy), None, "{p}: {legacy}");
            }
        }
        let want_vary: Vec<String> = if expect.vary {
            self.vary.iter().map(|n| (*n).to_owned()).collect()
        } else {
            Vec::new()
        };
        assert_eq!(r.vary_names(), want_vary, "{p}: Vary on {}", r.status);
        self.assert_range_headers(r, range);
        self.assert_request_ids(r);
    }

    fn assert_range_headers(&self, r: &Resp, present: bool) {
        let p = self.profile;
        let (min, max) = self.range_headers.unwrap_or((
            "x-openstack-ironic-api-minimum-version",
            "x-openstack-ironic-api-maximum-version",
        ));
        let (want_min, want_max) = if present {
            (Some(self.min.to_string()), Some(self.max.to_string()))
        } else {
            (None, None)
        };
        assert_eq!(r.header(min).map(str::to_owned), want_min, "{p}: {min}");
        assert_eq!(r.header(max).map(str::to_owned), want_max, "{p}: {max}");
    }

    /// `x-openstack-request-id: req-<uuid4>`, and the same value in every
    /// alias the profile names (and in no other alias).
    pub(crate) fn assert_request_ids(&self, r: &Resp) {
        let p = self.profile;
        let id = r.request_id();
        let uuid = id
            .strip_prefix("req-")
            .and_then(|u| uuid::Uuid::parse_str(u).ok())
            .unwrap_or_else(|| panic!("{p}: request id {id:?}"));
        assert_eq!(uuid.get_version_num(), 4, "{p}: {id}");
        assert_eq!(uuid.hyphenated().to_string(), id[4..], "{p}: {id}");
        for alias in ["x-compute-request-id", "openstack-request-id"] {
            let want = self.request_id_aliases.contains(&alias).then_some(id);
            assert_eq!(r.header(alias), want, "{p}: {alias}");
        }
    }

    /// Reads an error body in the profile's shape, checking the shape
    /// strictly (no unknown keys, one entry).
    pub(crate) fn error(&self, r: &Resp) -> ErrorView {
        let p = self.profile;
        assert!(
            r.header("content-type")
                .is_some_and(|c| c.starts_with("application/json")),
            "{p}: error content type {:?}: {}",
            r.header("content-type"),
            r.body
        );
        let body = r.json();
        match self.shape {
            Shape::ApiSig => {
                let outer = body.as_object().unwrap();
                assert_eq!(outer.len(), 1, "{p}: {body}");
                let errors = outer["errors"].as_array().unwrap();
                assert_eq!(errors.len(), 1, "{p}: {body}");
                let e = errors[0].as_object().unwrap();
                for key in e.keys() {
                    assert!(
                        [
                            "status",
                            "title",
                            "detail",
                            "code",
                            "request_id",
                            "min_version",
                            "max_version"
                        ]
                        .contains(&key.as_str()),
                        "{p}: unknown key {key}: {body}"
                    );
                }
                let text = |k: &str| e.get(k).map(|v| v.as_str().unwrap().to_owned());
                ErrorView {
                    status: e["status"].as_u64().unwrap(),
                    title: text("title"),
                    message: text("detail").unwrap(),
                    code: text("code"),
                    request_id: text("request_id"),
                    min_version: text("min_version"),
                    max_version: text("max_version"),
                    fault: None,
                }
            }
            Shape::Fault => {
                let outer = body.as_object().unwrap();
                assert_eq!(outer.len(), 1, "{p}: {body}");
                let (name, inner) = outer.iter().next().unwrap();
                let inner = inner.as_object().unwrap();
                assert_eq!(inner.len(), 2, "{p}: {body}");
                ErrorView {
                    status: inner["code"].as_u64().unwrap(),
                    title: None,
                    message: inner["message"].as_str().unwrap().to_owned(),
                    code: None,
                    request_id: None,
                    min_version: None,
                    max_version: None,
                    fault: Some(name.clone()),
                }
            }
            Shape::Ironic => {
                let outer = body.as_object().unwrap();
                assert_eq!(outer.len(), 1, "{p}: {body}");
                let text = outer["error_message"].as_str().unwrap();
                let inner: Value = serde_json::from_str(text).unwrap();
                let inner = inner.as_object().unwrap();
                assert_eq!(inner.len(), 3, "{p}: {text}");
                assert_eq!(inner["debuginfo"], Value::Null, "{p}: {text}");
                ErrorView {
                    status: u64::from(r.status),
                    title: None,
                    message: inner["faultstring"].as_str().unwrap().to_owned(),
                    code: None,
                    request_id: None,
                    min_version: None,
                    max_version: None,
                    fault: Some(inner["faultcode"].as_str().unwrap().to_owned()),
                }
            }
        }
    }

    /// The message a malformed `raw` gets.
    pub(crate) fn assert_malformed_message(&self, e: &ErrorView, raw: &str) {
        let p = self.profile;
        match self.wording {
            Wording::ApiSig => {
                let want =
                    format!("Invalid OpenStack-API-Version header: invalid version \"{raw}\": ");
                assert!(e.message.starts_with(&want), "{p}: {:?}", e.message);
                assert!(
                    e.message
                        .ends_with("; expected MAJOR.MINOR such as 1.0 or 2.15"),
                    "{p}: {:?}",
                    e.message
                );
            }
            Wording::Placement => {
                // webob's 400 page, the message on one line.
                let want = format!(
                    "{WEBOB_400}\n\n Invalid microversion: invalid version string: {raw}; "
                );
                assert!(e.message.starts_with(&want), "{p}: {:?}", e.message);
                assert!(e.message.ends_with("  "), "{p}: {:?}", e.message);
            }
            Wording::Nova => assert_eq!(
                e.message,
                format!(
                    "API Version String {raw} is of invalid format. Must be of format MajorNum.MinorNum."
                ),
                "{p}"
            ),
            Wording::Ironic => assert_eq!(
                e.message, "Invalid value for X-OpenStack-Ironic-API-Version header",
                "{p}"
            ),
        }
    }

    /// Asserts a 406 for `requested`: status, headers and body naming the
    /// version asked and the range.
    pub(crate) fn assert_unsupported(&self, r: &Resp, requested: &str) {
        let p = self.profile;
        assert_eq!(r.status, 406, "{p}: {requested}: {}", r.body);
        self.assert_error_headers(
            r,
            self.unsupported_headers,
            requested,
            self.range_headers.is_some(),
        );
        let e = self.error(r);
        assert_eq!(e.status, 406, "{p}");
        let (min, max) = (self.min, self.max);
        let want = match self.wording {
            Wording::ApiSig | Wording::Nova => format!(
                "Version {requested} is not supported by the API. Minimum is {min} and maximum is {max}."
            ),
            // webob's 406 page names the request's `Accept` (none here,
            // which upstream's request log makes application/json).
            Wording::Placement => format!(
                "The resource could not be generated that was acceptable to your browser (content of type application/json. \n\n Invalid microversion: Unacceptable version header: {requested}"
            ),
            Wording::Ironic if requested.starts_with(&format!("{}.", min.major())) => format!(
                "Version {requested} was requested but the minor version is not supported by this service. The supported version range is: [{min}, {max}]."
            ),
            Wording::Ironic => format!(
                "Mutually exclusive versions requested. Version {requested} requested but not supported by this service. The supported version range is: [{min}, {max}]."
            ),
        };
        assert_eq!(e.message, want, "{p}");
        match self.shape {
            Shape::ApiSig => {
                assert_eq!(e.title.as_deref(), Some("Not Acceptable"), "{p}");
                assert_eq!(e.min_version, Some(min.to_string()), "{p}");
                assert_eq!(e.max_version, Some(max.to_string()), "{p}");
                assert_eq!(e.request_id.as_deref(), Some(r.request_id()), "{p}");
                assert_eq!(e.code, None, "{p}");
            }
            Shape::Fault => assert_eq!(e.fault.as_deref(), Some("computeFault"), "{p}"),
            Shape::Ironic => assert_eq!(e.fault.as_deref(), Some("Client"), "{p}"),
        }
    }

    /// Asserts the layer's answer to the malformed version text `raw`.
    pub(crate) fn assert_malformed(&self, r: &Resp, raw: &str) {
        let p = self.profile;
        assert_eq!(r.status, self.malformed_status, "{p}: {raw:?}: {}", r.body);
        self.assert_error_headers(r, self.malformed_headers, raw, false);
        let e = self.error(r);
        assert_eq!(e.status, u64::from(self.malformed_status), "{p}");
        self.assert_malformed_message(&e, raw);
        match self.shape {
            Shape::ApiSig => {
                assert_eq!(e.title.as_deref(), Some("Bad Request"), "{p}");
                assert_eq!(e.min_version, None, "{p}");
                assert_eq!(e.request_id.as_deref(), Some(r.request_id()), "{p}");
            }
            Shape::Fault => assert_eq!(e.fault.as_deref(), Some("badRequest"), "{p}"),
            Shape::Ironic => assert_eq!(e.fault.as_deref(), Some("Client"), "{p}"),
        }
    }
}

/// An error body, whatever its shape.
#[derive(Debug)]
pub(crate) struct ErrorView {
    /// `status` (API-SIG), `code` (faults), or the HTTP status (Ironic).
    pub(crate) status: u64,
    pub(crate) title: Option<String>,
    /// `detail`, `message` or `faultstring`.
    pub(crate) message: String,
    pub(crate) code: Option<String>,
    pub(crate) request_id: Option<String>,
    pub(crate) min_version: Option<String>,
    pub(crate) max_version: Option<String>,
    /// The fault key (Nova, Cinder) or `faultcode` (Ironic).
    pub(crate) fault: Option<String>,
}
