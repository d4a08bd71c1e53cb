//! What the fuzz targets of `fuzz/` call (the `fuzzing` feature, off by
//! default; not a stable API).
//!
//! - [`check_provider_query`] and [`check_candidate_query`]: the query
//!   string parsers of `GET /resource_providers` and
//!   `GET /allocation_candidates` (`resources`, `required`, `member_of`,
//!   `in_tree`, the group suffixes, `root_required`, `limit`), run on any
//!   query string, with the properties their results must have.
//! - [`Harness`]: the whole service in process (the router
//!   [`crate::app::router`] builds) on a temporary SQLite database holding a
//!   small [`fixture`], and the checks of each answer: never a 5xx, no row
//!   changed by a 4xx, and a 4xx to a client that accepts JSON with an
//!   errors body of the same status.
//! - [`RouterInput`]: the byte format the `router` target reads requests
//!   in (method, target, headers, body), also written by
//!   `fuzz/seed_from_gabbi.py`.
//!
//! Every check returns a [`Violation`] instead of panicking, so that a
//! caller can add what it knows; the fuzz targets panic with it.

use std::fmt;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::Context as _;
use axum::Router;
use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, TRANSFER_ENCODING};
use http::{HeaderName, HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::BodyExt as _;
use microversion::Version;
use serde_json::{Value, json};
use tower::ServiceExt as _;

use crate::app::{AppState, router};
use crate::config::{AuthStrategy, Config};
use crate::cors::CorsConfig;
use crate::query::{self, InvalidQuery, QueryParams, is_uuid_like};

/// The body type of the requests [`Harness`] sends.
pub use axum::body::Body;

/// A property of the service that an input broke: what the fuzzer looks
/// for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation(String);

impl Violation {
    fn new(message: impl Into<String>) -> Self {
        Violation(message.into())
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Violation {}

/// Fails with `message` unless `holds`.
fn ensure(holds: bool, message: impl FnOnce() -> String) -> Result<(), Violation> {
    if holds {
        Ok(())
    } else {
        Err(Violation::new(message()))
    }
}

/// A refusal of a parser must be an answer for the client (a 400): with
/// a detail.
fn refusal(what: &str, raw: &str, e: &InvalidQuery) -> Result<(), Violation> {
    ensure(!e.detail().is_empty(), || {
        format!("{what} of {raw:?}: refused without a detail")
    })
}

/// `target` (bytes a client might put after the method) as a valid
/// request target: `/` first, and every byte that may not appear in a URI
/// percent-encoded, as a client would send it. `%` is kept as it is, so
/// that any byte can still reach the service's own decoding.
#[must_use]
pub fn request_target(target: &[u8]) -> String {
    let mut out = String::with_capacity(target.len() + 1);
    if target.first() != Some(&b'/') {
        out.push('/');
    }
    for &b in target {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?%".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The query string of `raw` bytes as a client would send it (see
/// [`request_target`]; `#` and `?` are kept out of the way).
#[must_use]
pub fn query_string(raw: &[u8]) -> String {
    let target = request_target(raw);
    target[1..].to_owned()
}

/// The properties of the parsers shared by the query strings: the values
/// of `QueryParams`, and `resources`, `member_of` and `required` as the
/// served version allows them.
fn check_shared(params: &QueryParams, raw: &str) -> Result<(), Violation> {
    for (key, _) in params.pairs() {
        let all = params.get_all(key);
        ensure(params.get(key) == all.last().copied(), || {
            format!("{raw:?}: get({key:?}) is not the last of get_all")
        })?;
        ensure(params.contains(key), || {
            format!("{raw:?}: contains({key:?}) is false")
        })?;
    }
    Ok(())
}

/// Checks `resources=` values: every amount at least 1, every class named
/// once, no class with `,` or `:`.
fn check_resources(value: &str, raw: &str) -> Result<(), Violation> {
    match query::resources(value) {
        Ok(amounts) => {
            ensure(!amounts.is_empty(), || {
                format!("{raw:?}: resources {value:?} parsed to nothing")
            })?;
            for (i, (name, amount)) in amounts.iter().enumerate() {
                ensure(*amount >= 1, || {
                    format!("{raw:?}: resources {value:?}: {name} has amount {amount}")
                })?;
                ensure(!name.contains([',', ':']), || {
                    format!("{raw:?}: resources {value:?}: class {name:?}")
                })?;
                ensure(!amounts[..i].iter().any(|(n, _)| n == name), || {
                    format!("{raw:?}: resources {value:?}: {name} twice")
                })?;
                // Whatever amount was read reads back from its digits.
                ensure(
                    query::python_int(&amount.to_string()) == Some(*amount),
                    || format!("{raw:?}: python_int does not read {amount} back"),
                )?;
            }
            Ok(())
        }
        Err(e) => refusal("resources", raw, &e),
    }
}

/// Checks `member_of{suffix}`: UUID-like aggregates only, several values
/// only from 1.24, forbidden ones only from 1.32.
fn check_member_of(
    params: &QueryParams,
    version: Version,
    suffix: &str,
    raw: &str,
) -> Result<(), Violation> {
    match query::member_of(params, version, suffix) {
        Ok(member_of) => {
            for uuid in member_of
                .required
                .iter()
                .flatten()
                .chain(&member_of.forbidden)
            {
                ensure(is_uuid_like(uuid), || {
                    format!("{raw:?}: member_of{suffix} kept {uuid:?}, not a UUID")
                })?;
                ensure(query::canonical_uuid(uuid).is_some(), || {
                    format!("{raw:?}: {uuid:?} is UUID-like but has no canonical form")
                })?;
            }
            ensure(member_of.required.iter().all(|any| !any.is_empty()), || {
                format!("{raw:?}: member_of{suffix} has an empty set")
            })?;
            ensure(
                version >= Version::new(1, 32) || member_of.forbidden.is_empty(),
                || format!("{raw:?}: forbidden aggregates at {version}"),
            )?;
            ensure(
                version >= Version::new(1, 24) || member_of.required.len() <= 1,
                || format!("{raw:?}: several member_of{suffix} at {version}"),
            )
        }
        Err(e) => refusal("member_of", raw, &e),
    }
}

/// Checks `required{suffix}`: no empty trait, forbidden traits only from
/// 1.22, `in:` (sets of several) only from 1.39, no trait both required
/// alone and `!`-prefixed in its own name.
fn check_required(
    params: &QueryParams,
    version: Version,
    suffix: &str,
    raw: &str,
) -> Result<(), Violation> {
    match query::required_traits(params, version, suffix) {
        Ok(traits) => {
            for any in &traits.required {
                ensure(!any.is_empty(), || {
                    format!("{raw:?}: required{suffix} has an empty set")
                })?;
                ensure(version >= Version::new(1, 39) || any.len() == 1, || {
                    format!("{raw:?}: required{suffix} has an any-of set at {version}")
                })?;
                for name in any {
                    ensure(!name.is_empty() && !name.starts_with('!'), || {
                        format!("{raw:?}: required{suffix} kept the trait {name:?}")
                    })?;
                }
            }
            for name in &traits.forbidden {
                ensure(!name.is_empty(), || {
                    format!("{raw:?}: required{suffix} forbids an empty trait")
                })?;
            }
            ensure(
                version >= Version::new(1, 22) || traits.forbidden.is_empty(),
                || format!("{raw:?}: forbidden traits at {version}"),
            )
        }
        Err(e) => refusal("required", raw, &e),
    }
}

/// Checks `in_tree` as `GET /resource_providers` and the candidates read
/// it: a UUID-like value has a canonical form that is itself UUID-like.
fn check_uuid(value: &str, raw: &str) -> Result<(), Violation> {
    let trimmed = value.trim();
    match query::canonical_uuid(trimmed) {
        Some(canonical) => {
            let shape = canonical.len() == 36
                && canonical.char_indices().all(|(i, c)| {
                    if matches!(i, 8 | 13 | 18 | 23) {
                        c == '-'
                    } else {
                        c.is_ascii_digit() || ('a'..='f').contains(&c)
                    }
                });
            ensure(shape && is_uuid_like(&canonical), || {
                format!("{raw:?}: canonical form {canonical:?} of {trimmed:?}")
            })?;
            ensure(
                query::canonical_uuid(&canonical) == Some(canonical.clone()),
                || format!("{raw:?}: canonical form of {canonical:?} is not itself"),
            )
        }
        None => ensure(!is_uuid_like(trimmed), || {
            format!("{raw:?}: {trimmed:?} is UUID-like without a canonical form")
        }),
    }
}

/// Runs the parsers of `GET /resource_providers` on the query string
/// `raw` at `version` (as the handler does, without the database) and
/// checks their results.
///
/// # Errors
///
/// A [`Violation`] naming the property the query string broke; a query
/// string the service refuses is not one (it must be refused with a 400).
pub fn check_provider_query(version: Version, raw: &str) -> Result<(), Violation> {
    let params = match QueryParams::parse(Some(raw)) {
        Ok(params) => params,
        Err(e) => return refusal("the query string", raw, &e),
    };
    check_shared(&params, raw)?;
    if params.contains("member_of") {
        check_member_of(&params, version, "", raw)?;
    }
    if params.contains("required") {
        check_required(&params, version, "", raw)?;
    }
    if let Some(resources) = params.get("resources") {
        check_resources(resources, raw)?;
    }
    for key in ["uuid", "in_tree"] {
        if let Some(value) = params.get(key) {
            check_uuid(value, raw)?;
        }
    }
    Ok(())
}

/// Runs the parsers of `GET /allocation_candidates` on the query string
/// `raw` at `version`: every `resources`, `required`, `member_of` and
/// `in_tree` parameter, whatever its suffix, `root_required` and `limit`,
/// and checks their results.
///
/// The request-wide and group checks of the handler itself
/// (`request_wide`, `request_groups`) and its query schema are private to
/// it: the `candidate_query` target reaches them through [`Harness`].
///
/// # Errors
///
/// A [`Violation`] naming the property the query string broke.
pub fn check_candidate_query(version: Version, raw: &str) -> Result<(), Violation> {
    let params = match QueryParams::parse(Some(raw)) {
        Ok(params) => params,
        Err(e) => return refusal("the query string", raw, &e),
    };
    check_shared(&params, raw)?;
    let mut suffixes: Vec<(&str, &str)> = Vec::new();
    for (key, value) in params.pairs() {
        for prefix in ["resources", "required", "member_of", "in_tree"] {
            if let Some(suffix) = key.strip_prefix(prefix) {
                if !suffixes.contains(&(prefix, suffix)) {
                    suffixes.push((prefix, suffix));
                }
                if prefix == "resources" {
                    check_resources(value, raw)?;
                } else if prefix == "in_tree" {
                    check_uuid(value, raw)?;
                }
            }
        }
    }
    for (prefix, suffix) in suffixes {
        match prefix {
            "required" => check_required(&params, version, suffix, raw)?,
            "member_of" => check_member_of(&params, version, suffix, raw)?,
            _ => {}
        }
    }
    if let Some(value) = params.get_all("root_required").first() {
        match query::traits_value(value, true, false) {
            Ok(traits) => {
                ensure(
                    traits.required.iter().all(|any| any.len() == 1)
                        && traits
                            .required
                            .iter()
                            .flatten()
                            .chain(&traits.forbidden)
                            .all(|t| !t.is_empty() && !t.starts_with('!')),
                    || format!("{raw:?}: root_required read as {traits:?}"),
                )?;
            }
            Err(e) => refusal("root_required", raw, &e)?,
        }
    }
    if let Some(limit) = params.get_all("limit").first() {
        if let Some(n) = query::python_int(limit) {
            ensure(query::python_int(&n.to_string()) == Some(n), || {
                format!("{raw:?}: limit {limit:?} read as {n}, which does not read back")
            })?;
        }
    }
    Ok(())
}

/// Identifiers of the rows [`Harness`] puts in every database before the
/// fuzzer's requests, so that inputs can name existing providers,
/// consumers and aggregates (`fuzz/seed_from_gabbi.py` maps upstream's
/// `$ENVIRON` names to them).
pub mod fixture {
    /// A compute node (`cn1`): VCPU 8, MEMORY_MB 4096, DISK_GB 100; traits
    /// `HW_CPU_X86_AVX2`, `CUSTOM_FUZZ`; in aggregate [`AGG_A`].
    pub const CN1: &str = "c0000000-0000-4000-8000-000000000001";
    /// A second compute node (`cn2`): VCPU 8, MEMORY_MB 4096; in [`AGG_B`].
    pub const CN2: &str = "c0000000-0000-4000-8000-000000000002";
    /// A sharing provider (`ss`): DISK_GB 1000, `MISC_SHARES_VIA_AGGREGATE`,
    /// in [`AGG_A`].
    pub const SS: &str = "c0000000-0000-4000-8000-000000000003";
    /// A child of [`CN1`] (`cn1-numa0`): VCPU 4, `CUSTOM_FUZZ` 10.
    pub const NUMA0: &str = "c0000000-0000-4000-8000-000000000004";
    /// A provider with nothing (`empty`).
    pub const EMPTY: &str = "c0000000-0000-4000-8000-000000000005";
    /// A consumer of [`CN1`] (VCPU 2, MEMORY_MB 512), of [`PROJECT`] and
    /// [`USER`].
    pub const CONSUMER1: &str = "c0000000-0000-4000-8000-000000000101";
    /// A consumer of [`CN2`] (VCPU 1) and [`SS`] (DISK_GB 10), a migration.
    pub const CONSUMER2: &str = "c0000000-0000-4000-8000-000000000102";
    /// The project of the consumers.
    pub const PROJECT: &str = "c0000000-0000-4000-8000-000000000201";
    /// The user of the consumers.
    pub const USER: &str = "c0000000-0000-4000-8000-000000000301";
    /// An aggregate of [`CN1`] and [`SS`].
    pub const AGG_A: &str = "c0000000-0000-4000-8000-000000000a01";
    /// An aggregate of [`CN2`].
    pub const AGG_B: &str = "c0000000-0000-4000-8000-000000000a02";
    /// A custom resource class and a custom trait, both in use.
    pub const CUSTOM: &str = "CUSTOM_FUZZ";
    /// The origin CORS allows.
    pub const ORIGIN: &str = "http://valid.example.com";
}

/// The requests that make the [`fixture`], at 1.39 as the admin.
fn fixture_requests() -> Vec<(Method, String, Value)> {
    use fixture::*;
    let rp = |uuid: &str, name: &str, parent: Option<&str>| {
        (
            Method::POST,
            "/resource_providers".to_owned(),
            json!({"uuid": uuid, "name": name, "parent_provider_uuid": parent}),
        )
    };
    let inventories = |uuid: &str, inventories: Value| {
        (
            Method::PUT,
            format!("/resource_providers/{uuid}/inventories"),
            json!({"resource_provider_generation": 0, "inventories": inventories}),
        )
    };
    let put = |path: String, body: Value| (Method::PUT, path, body);
    vec![
        put(format!("/resource_classes/{CUSTOM}"), Value::Null),
        put(format!("/traits/{CUSTOM}"), Value::Null),
        rp(CN1, "cn1", None),
        rp(CN2, "cn2", None),
        rp(SS, "ss", None),
        rp(NUMA0, "cn1-numa0", Some(CN1)),
        rp(EMPTY, "empty", None),
        inventories(
            CN1,
            json!({"VCPU": {"total": 8}, "MEMORY_MB": {"total": 4096}, "DISK_GB": {"total": 100}}),
        ),
        inventories(
            CN2,
            json!({"VCPU": {"total": 8}, "MEMORY_MB": {"total": 4096}}),
        ),
        inventories(SS, json!({"DISK_GB": {"total": 1000}})),
        inventories(NUMA0, json!({"VCPU": {"total": 4}, CUSTOM: {"total": 10}})),
        put(
            format!("/resource_providers/{CN1}/traits"),
            json!({"resource_provider_generation": 1, "traits": ["HW_CPU_X86_AVX2", CUSTOM]}),
        ),
        put(
            format!("/resource_providers/{SS}/traits"),
            json!({"resource_provider_generation": 1, "traits": ["MISC_SHARES_VIA_AGGREGATE"]}),
        ),
        put(
            format!("/resource_providers/{CN1}/aggregates"),
            json!({"resource_provider_generation": 2, "aggregates": [AGG_A]}),
        ),
        put(
            format!("/resource_providers/{SS}/aggregates"),
            json!({"resource_provider_generation": 2, "aggregates": [AGG_A]}),
        ),
        put(
            format!("/resource_providers/{CN2}/aggregates"),
            json!({"resource_provider_generation": 1, "aggregates": [AGG_B]}),
        ),
        put(
            format!("/allocations/{CONSUMER1}"),
            json!({
                "allocations": {CN1: {"resources": {"VCPU": 2, "MEMORY_MB": 512}}},
                "project_id": PROJECT, "user_id": USER,
                "consumer_generation": null, "consumer_type": "INSTANCE"
            }),
        ),
        put(
            format!("/allocations/{CONSUMER2}"),
            json!({
                "allocations": {
                    CN2: {"resources": {"VCPU": 1}},
                    SS: {"resources": {"DISK_GB": 10}}
                },
                "project_id": PROJECT, "user_id": USER,
                "consumer_generation": null, "consumer_type": "MIGRATION"
            }),
        ),
    ]
}

/// A request as the `router` target reads it from bytes.
///
/// The format, so that seeds can be written by hand:
///
/// ```text
/// byte 0      flags: bits 0-1 the token (0 none, 1 or 2 `admin`, 3 `fuzz`),
///             bits 2-3 the version (0 none, 1 `latest`, 2 or 3 `1.<byte 1 % 42>`),
///             bit 4 no `content-type: application/json` for a body,
///             bit 5 `accept: application/json`
/// byte 1      the minor version
/// then        METHOD SP TARGET LF (no SP: the line is the target of a GET)
///             NAME: VALUE LF ... (headers; those given win over the flags')
///             LF
///             BODY
/// ```
///
/// The target is made valid as [`request_target`] does; a method that is
/// not a token is `GET`; headers that are not valid are left out;
/// `content-length` is the body's (given ones and `transfer-encoding` are
/// left out), as a client's HTTP library would send it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouterInput {
    /// The method as given.
    pub method: Vec<u8>,
    /// The target as given.
    pub target: Vec<u8>,
    /// The headers as given.
    pub headers: Vec<(Vec<u8>, Vec<u8>)>,
    /// The body.
    pub body: Vec<u8>,
    /// Byte 0.
    pub flags: u8,
    /// Byte 1.
    pub minor: u8,
}

/// `line` without a `\r` at its end.
fn chomp(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

impl RouterInput {
    /// Reads `data` (see the format above); any bytes are an input.
    #[must_use]
    pub fn parse(data: &[u8]) -> RouterInput {
        let (flags, minor, rest) = match data {
            [] => (0, 0, &[][..]),
            [flags] => (*flags, 0, &[][..]),
            [flags, minor, rest @ ..] => (*flags, *minor, rest),
        };
        let (head, body) = match rest.windows(2).position(|w| w == b"\n\n") {
            Some(at) => (&rest[..at], &rest[at + 2..]),
            None => (rest, &[][..]),
        };
        let mut lines = head.split(|&b| b == b'\n');
        let request_line = chomp(lines.next().unwrap_or_default());
        let (method, target) = match request_line.iter().position(|&b| b == b' ') {
            Some(at) => (&request_line[..at], &request_line[at + 1..]),
            None => (&b"GET"[..], request_line),
        };
        let headers = lines
            .filter_map(|line| {
                let line = chomp(line);
                let at = line.iter().position(|&b| b == b':')?;
                Some((
                    line[..at].trim_ascii().to_vec(),
                    line[at + 1..].trim_ascii().to_vec(),
                ))
            })
            .collect();
        RouterInput {
            method: method.to_vec(),
            target: target.to_vec(),
            headers,
            body: body.to_vec(),
            flags,
            minor,
        }
    }

    /// The bytes [`RouterInput::parse`] reads back as this input (headers
    /// and target as given).
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![self.flags, self.minor];
        out.extend_from_slice(&self.method);
        out.push(b' ');
        out.extend_from_slice(&self.target);
        for (name, value) in &self.headers {
            out.push(b'\n');
            out.extend_from_slice(name);
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
        }
        if !self.body.is_empty() {
            out.extend_from_slice(b"\n\n");
            out.extend_from_slice(&self.body);
        }
        out
    }

    /// The request, or `None` when no valid URI can be made of the target.
    #[must_use]
    pub fn to_request(&self) -> Option<Request<Body>> {
        let method = Method::from_bytes(&self.method).unwrap_or(Method::GET);
        let uri: Uri = request_target(&self.target).parse().ok()?;
        let mut request = Request::builder().method(method.clone()).uri(uri);
        let headers = request.headers_mut()?;
        for (name, value) in &self.headers {
            let (Ok(name), Ok(value)) =
                (HeaderName::from_bytes(name), HeaderValue::from_bytes(value))
            else {
                continue;
            };
            if name != CONTENT_LENGTH && name != TRANSFER_ENCODING {
                headers.append(name, value);
            }
        }
        let mut derived: Vec<(&str, String)> = Vec::new();
        match self.flags & 0b11 {
            1 | 2 => derived.push(("x-auth-token", "admin".to_owned())),
            3 => derived.push(("x-auth-token", "fuzz".to_owned())),
            _ => {}
        }
        match (self.flags >> 2) & 0b11 {
            1 => derived.push(("openstack-api-version", "placement latest".to_owned())),
            2 | 3 => derived.push((
                "openstack-api-version",
                format!("placement 1.{}", self.minor % 42),
            )),
            _ => {}
        }
        if self.flags & 0b1_0000 == 0 && !self.body.is_empty() {
            derived.push(("content-type", "application/json".to_owned()));
        }
        if self.flags & 0b10_0000 != 0 {
            derived.push(("accept", "application/json".to_owned()));
        }
        for (name, value) in derived {
            if !headers.contains_key(name) {
                headers.insert(name, HeaderValue::from_str(&value).ok()?);
            }
        }
        if !self.body.is_empty() || matches!(method, Method::POST | Method::PUT | Method::PATCH) {
            headers.insert(CONTENT_LENGTH, HeaderValue::from(self.body.len()));
        }
        request.body(Body::from(self.body.clone())).ok()
    }
}

/// A request as the admin at `version`, with a JSON body when one is
/// given; `None` when `target` cannot be made a URI.
#[must_use]
pub fn admin_request(
    method: Method,
    target: &str,
    version: Version,
    body: Option<&[u8]>,
) -> Option<Request<Body>> {
    let mut request = Request::builder()
        .method(method)
        .uri(target.parse::<Uri>().ok()?)
        .header("x-auth-token", "admin")
        .header("openstack-api-version", format!("placement {version}"))
        .header("accept", "application/json");
    if let Some(body) = body {
        request = request
            .header(CONTENT_TYPE, "application/json")
            .header(CONTENT_LENGTH, body.len());
    }
    request
        .body(Body::from(body.map(<[u8]>::to_vec).unwrap_or_default()))
        .ok()
}

/// An answer of the service.
#[derive(Clone, Debug)]
pub struct Answer {
    /// The status.
    pub status: StatusCode,
    /// The body, read whole.
    pub body: Bytes,
}

impl Answer {
    /// The `detail` of the first error of an errors body.
    #[must_use]
    pub fn detail(&self) -> Option<String> {
        let value: Value = serde_json::from_slice(&self.body).ok()?;
        value["errors"][0]["detail"].as_str().map(str::to_owned)
    }
}

/// One database of [`Harness`]: a copy of the template with the service
/// on it.
struct Live {
    file: PathBuf,
    state: AppState,
    router: Router,
    /// A connection of the harness's own, to see what the service wrote.
    watch: rusqlite::Connection,
    /// `PRAGMA data_version` on `watch` when `rows` was read.
    version: i64,
    /// Every row of every table, as text.
    rows: Vec<(String, Vec<String>)>,
}

/// Requests after which the database is replaced by a fresh copy.
const RESET_EVERY: u64 = 5_000;
/// Requests that wrote after which the database is replaced.
const RESET_AFTER_WRITES: u64 = 500;
/// The request body limit of the service under test, below the fuzzer's
/// input size so that the 413 answers are reached.
const BODY_LIMIT: usize = 3_000;

static HARNESSES: AtomicU32 = AtomicU32::new(0);

/// The service in process on a temporary SQLite database (in `/dev/shm`
/// when there is one: the service syncs every commit), with the
/// [`fixture`], and the checks of every answer.
///
/// The database lives across requests, so that writes the fuzzer makes
/// are there for the next ones; it is replaced by a fresh copy of the
/// fixture every 5,000 requests, or after 500 that wrote. A violation
/// says how many requests the database had seen.
pub struct Harness {
    runtime: tokio::runtime::Runtime,
    dir: PathBuf,
    /// The fixture, read-only, copied for each database.
    template: rusqlite::Connection,
    live: Option<Live>,
    copies: u64,
    requests: u64,
    writes: u64,
}

impl Harness {
    /// Creates the template database with the fixture, and the first copy
    /// of it with the service on it. Removes what harnesses of processes
    /// gone left behind.
    ///
    /// # Errors
    ///
    /// Fails when the temporary directory or the database cannot be made,
    /// or a fixture request is refused.
    pub fn new() -> anyhow::Result<Harness> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let base = Path::new("/dev/shm");
        let base = if base.is_dir() {
            base.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        remove_stale(&base);
        let dir = base.join(format!(
            "placement-fuzz-{}-{}",
            std::process::id(),
            HARNESSES.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let file = dir.join("template.db");
        runtime.block_on(async {
            let (state, app) = AppState::ready(config(&file)).await?;
            for (method, path, body) in fixture_requests() {
                let bytes = (!body.is_null()).then(|| body.to_string().into_bytes());
                let request =
                    admin_request(method.clone(), &path, Version::new(1, 39), bytes.as_deref())
                        .context("a fixture request")?;
                let response = app.clone().oneshot(request).await?;
                let status = response.status();
                let body = response.into_body().collect().await?.to_bytes();
                anyhow::ensure!(
                    status.is_success(),
                    "fixture {method} {path}: {status} {}",
                    String::from_utf8_lossy(&body)
                );
            }
            drop(app);
            state.store.close().await;
            anyhow::Ok(())
        })?;
        let template = rusqlite::Connection::open_with_flags(
            &file,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )?;
        let mut harness = Harness {
            runtime,
            dir,
            template,
            live: None,
            copies: 0,
            requests: 0,
            writes: 0,
        };
        harness.reset()?;
        Ok(harness)
    }

    /// Replaces the database by a fresh copy of the template.
    fn reset(&mut self) -> anyhow::Result<()> {
        if let Some(old) = self.live.take() {
            let Live {
                file,
                state,
                router,
                watch,
                ..
            } = old;
            drop(router);
            drop(watch);
            self.runtime.block_on(state.store.close());
            drop(state);
            remove_database(&file);
        }
        self.copies += 1;
        let file = self.dir.join(format!("live-{}.db", self.copies));
        remove_database(&file);
        self.template
            .execute("VACUUM INTO ?1", [file.to_string_lossy().as_ref()])?;
        let (state, router) = self.runtime.block_on(async {
            let state = AppState::new(config(&file)).await?;
            let router = router(state.clone())?;
            anyhow::Ok((state, router))
        })?;
        let watch = rusqlite::Connection::open_with_flags(
            &file,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )?;
        let version = data_version(&watch)?;
        let rows = dump(&watch)?;
        self.live = Some(Live {
            file,
            state,
            router,
            watch,
            version,
            rows,
        });
        self.requests = 0;
        self.writes = 0;
        Ok(())
    }

    /// Sends `request` to the service and checks the answer: no 5xx; a 4xx
    /// to a request that accepts `application/json` (alone; not `HEAD`)
    /// with an errors body whose first error has the same status; no row
    /// changed by a 4xx.
    ///
    /// # Errors
    ///
    /// A [`Violation`] saying what went wrong, with the request and the
    /// answer.
    ///
    /// # Panics
    ///
    /// When the harness's own database work fails (not the service's).
    pub fn send(&mut self, request: Request<Body>) -> Result<Answer, Violation> {
        let described = format!(
            "{} {} {:?}",
            request.method(),
            request.uri(),
            request.headers()
        );
        // Only a client that asks for JSON alone is promised an errors
        // body: upstream (webob) answers others in text or HTML.
        let wants_errors_body = request.method() != Method::HEAD
            && request
                .headers()
                .get_all(http::header::ACCEPT)
                .iter()
                .count()
                == 1
            && request
                .headers()
                .get(http::header::ACCEPT)
                .is_some_and(|v| v == "application/json");
        let live = self.live.as_mut().expect("a database is open");
        let (status, body) = self.runtime.block_on(async {
            let response = live
                .router
                .clone()
                .oneshot(request)
                .await
                .unwrap_or_else(|e| match e {});
            let status = response.status();
            let body = response
                .into_body()
                .collect()
                .await
                .map(http_body_util::Collected::to_bytes);
            (status, body)
        });
        self.requests += 1;
        let seen = self.requests;
        let context = |what: String| {
            Violation::new(format!(
                "{what}\nrequest: {described}\n(request {seen} on this copy of the database)"
            ))
        };
        let body = body.map_err(|e| context(format!("the body of a {status} broke off: {e}")))?;
        let answer = Answer {
            status,
            body: body.clone(),
        };
        let text = String::from_utf8_lossy(&body);
        if status.is_server_error() {
            return Err(context(format!("answered {status}: {text}")));
        }
        if status.is_client_error() && wants_errors_body {
            let first = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v["errors"][0]["status"].as_u64());
            if first != Some(u64::from(status.as_u16())) {
                return Err(context(format!(
                    "answered {status} without an errors body of that status: {text}"
                )));
            }
        }
        let version = data_version(&live.watch).expect("PRAGMA data_version");
        if version != live.version {
            self.writes += 1;
            let rows = dump(&live.watch).expect("the tables can be read");
            if status.is_client_error() && rows != live.rows {
                return Err(context(format!(
                    "answered {status} but wrote:\n{}\nanswer: {text}",
                    difference(&live.rows, &rows)
                )));
            }
            live.version = version;
            live.rows = rows;
        }
        if self.requests >= RESET_EVERY || self.writes >= RESET_AFTER_WRITES {
            self.reset().expect("a fresh copy of the database");
        }
        Ok(answer)
    }
}

impl fmt::Debug for Harness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Harness")
            .field("dir", &self.dir)
            .field("copies", &self.copies)
            .field("requests", &self.requests)
            .field("writes", &self.writes)
            .finish_non_exhaustive()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(live) = self.live.take() {
            self.runtime.block_on(live.state.store.close());
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The service's settings: no Keystone (`noauth2`: the token is the
/// user), the legacy policy (upstream's tests' default), a small body
/// limit, CORS for one origin.
fn config(file: &Path) -> Config {
    Config {
        database: format!("sqlite:///{}", file.display()),
        auth_strategy: AuthStrategy::Noauth2,
        enforce_new_defaults: false,
        enforce_scope: false,
        max_body_size: BODY_LIMIT,
        cors: Some(CorsConfig {
            allowed_origins: vec![fixture::ORIGIN.to_owned()],
            ..CorsConfig::default()
        }),
        ..Config::default()
    }
}

/// Removes an SQLite file and its journals.
fn remove_database(file: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = file.as_os_str().to_owned();
        name.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(name));
    }
}

/// Removes the directories of harnesses whose process is gone (a fuzzer
/// ends with `exit`, which runs no destructor).
fn remove_stale(base: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("placement-fuzz-"))
            .and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// `PRAGMA data_version`: changes when another connection commits.
fn data_version(conn: &rusqlite::Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA data_version", [], |row| row.get(0))
}

/// Every row of every table, sorted, as text.
fn dump(conn: &rusqlite::Connection) -> rusqlite::Result<Vec<(String, Vec<String>)>> {
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?
        .query_map([], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut out = Vec::with_capacity(tables.len());
    for table in tables {
        let mut statement = conn.prepare(&format!("SELECT * FROM \"{table}\""))?;
        let columns = statement.column_count();
        let mut rows: Vec<String> = statement
            .query_map([], |row| {
                let mut text = String::new();
                for i in 0..columns {
                    let _ = write!(text, "{:?}|", row.get_ref(i)?);
                }
                Ok(text)
            })?
            .collect::<rusqlite::Result<_>>()?;
        rows.sort();
        out.push((table, rows));
    }
    Ok(out)
}

/// The rows added and removed between two dumps.
fn difference(before: &[(String, Vec<String>)], after: &[(String, Vec<String>)]) -> String {
    let mut out = String::new();
    for (table, rows) in after {
        let old = before
            .iter()
            .find(|(t, _)| t == table)
            .map(|(_, r)| r.as_slice())
            .unwrap_or_default();
        for row in rows.iter().filter(|r| !old.contains(r)) {
            let _ = writeln!(out, "+ {table}: {row}");
        }
        for row in old.iter().filter(|r| !rows.contains(r)) {
            let _ = writeln!(out, "- {table}: {row}");
        }
    }
    for (table, _) in before
        .iter()
        .filter(|(t, _)| !after.iter().any(|(a, _)| a == t))
    {
        let _ = writeln!(out, "- table {table}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn router_inputs_read_back() {
        let input = RouterInput::parse(
            b"\x05\x14PUT /traits/CUSTOM_X?a=b c\r\nx-thing: 1\nbad\n\n{\"a\": 1}",
        );
        assert_eq!(input.flags, 5);
        assert_eq!(input.minor, 20);
        assert_eq!(input.method, b"PUT");
        assert_eq!(input.target, b"/traits/CUSTOM_X?a=b c");
        assert_eq!(input.headers, vec![(b"x-thing".to_vec(), b"1".to_vec())]);
        assert_eq!(input.body, b"{\"a\": 1}");
        assert_eq!(RouterInput::parse(&input.to_bytes()), input);
        let request = input.to_request().unwrap();
        assert_eq!(request.uri(), "/traits/CUSTOM_X?a=b%20c");
        assert_eq!(request.headers()["x-auth-token"], "admin");
        assert_eq!(
            request.headers()["openstack-api-version"],
            "placement latest"
        );
        assert_eq!(request.headers()["content-type"], "application/json");
        assert_eq!(request.headers()["content-length"], "8");
        let bare = RouterInput::parse(b"\x00\x00resource_providers")
            .to_request()
            .unwrap();
        assert_eq!(bare.method(), Method::GET);
        assert_eq!(bare.uri(), "/resource_providers");
        assert!(!bare.headers().contains_key("x-auth-token"));
        assert_eq!(RouterInput::parse(b"").to_request().unwrap().uri(), "/");
    }

    #[test]
    fn query_parsers_keep_their_properties() {
        for minor in [0, 14, 22, 24, 32, 39] {
            let version = Version::new(1, minor);
            for raw in [
                "resources=VCPU:1,MEMORY_MB:2&required=!A,B&member_of=in:%s,%s",
                "required=in:A,B&required=C&member_of=!aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa",
                "resources1=VCPU:1&required1=X&in_tree1={AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA}",
                "root_required=A,!B&limit=1_0&same_subtree=_a",
                "resources=VCPU:-1&resources=x&uuid=%ff",
            ] {
                check_provider_query(version, &query_string(raw.as_bytes())).unwrap();
                check_candidate_query(version, &query_string(raw.as_bytes())).unwrap();
            }
        }
    }

    #[test]
    fn the_harness_sees_answers_and_writes() {
        let mut harness = Harness::new().unwrap();
        let get = RouterInput::parse(&[1, 0]).to_request().unwrap();
        assert_eq!(harness.send(get).unwrap().status, StatusCode::OK);
        let create =
            admin_request(Method::PUT, "/traits/CUSTOM_NEW", Version::new(1, 39), None).unwrap();
        assert_eq!(harness.send(create).unwrap().status, StatusCode::CREATED);
        let stale = admin_request(
            Method::PUT,
            &format!("/resource_providers/{}/traits", fixture::CN1),
            Version::new(1, 39),
            Some(br#"{"resource_provider_generation": 0, "traits": []}"#),
        )
        .unwrap();
        let answer = harness.send(stale).unwrap();
        assert_eq!(answer.status, StatusCode::CONFLICT);
        assert!(answer.detail().is_some());
        let before = harness.live.as_ref().unwrap().rows.clone();
        let file = harness.live.as_ref().unwrap().file.clone();
        harness.reset().unwrap();
        assert!(!file.exists());
        assert_ne!(harness.live.as_ref().unwrap().rows, before);
    }
}
