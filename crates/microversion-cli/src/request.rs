//! `microversion request`: one request at a negotiated microversion.
//!
//! The version comes from `--api-version`, else from
//! `OS_<SERVICE_TYPE>_API_VERSION`, else it is `latest`; it is checked
//! before anything is sent. A microversioned request goes through
//! [`microversion_client::Client`]: discovery at the endpoint (through the
//! on-disk cache unless `--no-cache`), negotiation, the standard and legacy
//! headers, one retry after a 406 on a stale cache entry. `None` and `X`
//! send no version header and nothing is negotiated: the request goes out
//! with the headers exactly as given.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method};
use microversion::{
    Decoded, NegotiationError, OPENSTACK_API_VERSION, RequestedVersion, ServerVersions, Version,
    VersionHeader, VersionRange, VersionRequest,
};
use microversion_client::{Client, DiskCache, IgnoredHeader, header_service_type, legacy_header};
use url::Url;

use microversion_client::cloud::Cloud;

use crate::args::{BodySource, RequestArgs};
use crate::cloud::{self, Need};
use crate::error::Error;
use crate::{EXIT_FAILURES, EXIT_SUCCESS, net};

/// Where standard output and standard error go.
pub(crate) struct Outputs<'a> {
    pub(crate) stdout: &'a mut dyn Write,
    pub(crate) stderr: &'a mut dyn Write,
    /// Whether standard output is a terminal (a final newline is added
    /// after a body that lacks one).
    pub(crate) terminal: bool,
}

/// The CLI supports every version: the server's range is the only limit.
fn cli_range() -> VersionRange {
    VersionRange::new(Version::new(1, 0), Version::MAX).unwrap_or(VersionRange::whole_major(1))
}

/// The environment variable that holds the version for `service_type`:
/// `OS_<SERVICE_TYPE>_API_VERSION`, upper case, dashes as underscores.
pub(crate) fn version_env_var(service_type: &str) -> String {
    format!(
        "OS_{}_API_VERSION",
        service_type.trim().replace('-', "_").to_ascii_uppercase()
    )
}

/// The version asked for: the option, else the environment, else the
/// cloud's `<service>_api_version`, else `latest`.
fn requested_version(
    args: &RequestArgs,
    target: &Target,
) -> Result<(VersionRequest, String), Error> {
    if let Some(v) = args.api_version {
        return Ok((v, "from --api-version".to_owned()));
    }
    if let Some(service_type) = &target.service_type {
        let name = version_env_var(service_type);
        if let Some(value) = std::env::var_os(&name) {
            let text = value.to_string_lossy();
            let v = VersionRequest::parse_cli(&text)
                .map_err(|e| Error::new(format!("invalid {name}: {e}")))?;
            return Ok((v, format!("from {name}")));
        }
        let configured = target
            .cloud
            .as_ref()
            .and_then(|c| c.config().api_version(service_type));
        if let Some(v) = configured {
            // clouds.yaml, or the variable of an alias (OS_VOLUME_API_VERSION
            // for block-storage).
            return Ok((v, "from the cloud configuration".to_owned()));
        }
    }
    Ok((VersionRequest::Latest, "by default".to_owned()))
}

/// Where a request goes: a URL, or a service of the cloud and a path.
pub(crate) struct Target {
    url: Url,
    /// The catalog's endpoint of the service.
    endpoint: Option<Url>,
    service_type: Option<String>,
    method: Option<String>,
    cloud: Option<Cloud>,
}

/// Reads `URL`, `SERVICE PATH` or `SERVICE METHOD PATH`; a service's
/// endpoint comes from the cloud's catalog.
async fn resolve(args: &RequestArgs, timeout: Duration) -> Result<Target, Error> {
    let (service, method, path) = match args.target.as_slice() {
        [url] if url.contains("://") => {
            return Ok(Target {
                url: net::parse_url(url)?,
                endpoint: None,
                service_type: args.service_type.clone(),
                method: None,
                cloud: cloud::load(&args.cloud, Need::Explicit, timeout)?,
            });
        }
        [service, path] => (service, None, path),
        [service, method, path] => (service, Some(method.clone()), path),
        _ => {
            return Err(Error::new(format!(
                "{:?} is not a URL; to call a service of the cloud, give SERVICE PATH or \
                 SERVICE METHOD PATH, such as `placement GET /resource_providers`",
                args.target.join(" ")
            )));
        }
    };
    if let Some(given) = &args.service_type {
        if given != service {
            return Err(Error::new(format!(
                "--service-type {given} contradicts the service {service} named before the path"
            )));
        }
    }
    if method.is_some() && args.method.is_some() {
        return Err(Error::new(
            "the method is given twice: as -X and before the path",
        ));
    }
    if path.contains("://") {
        return Err(Error::new(format!(
            "{path:?}: after a service, give a path relative to its endpoint, not a URL"
        )));
    }
    let cloud = cloud::require(&args.cloud, timeout, "a request to a service")?;
    let endpoint = cloud.endpoint(service).await.map_err(Error::from_client)?;
    let mut base = endpoint.clone();
    if !base.path().ends_with('/') {
        base.set_path(&format!("{}/", base.path()));
    }
    let url = base
        .join(path.trim_start_matches('/'))
        .map_err(|e| Error::with_source(format!("invalid path {path:?}"), e))?;
    Ok(Target {
        url,
        endpoint: Some(endpoint),
        service_type: Some(service.clone()),
        method,
        cloud: Some(cloud),
    })
}

/// The API root of a request URL: the URL up to its first version segment
/// (`/v2.1`, `/v1`), else the server root.
pub(crate) fn default_endpoint(url: &Url) -> Url {
    let mut endpoint = url.clone();
    endpoint.set_query(None);
    endpoint.set_fragment(None);
    let segments: Vec<&str> = url.path().split('/').filter(|s| !s.is_empty()).collect();
    let path = match segments.iter().position(|s| is_version_segment(s)) {
        Some(i) => format!("/{}", segments[..=i].join("/")),
        None => "/".to_owned(),
    };
    endpoint.set_path(&path);
    endpoint
}

/// `v2`, `v2.1`, `V3`: the name of an API version in a URL.
fn is_version_segment(segment: &str) -> bool {
    let Some(rest) = segment.strip_prefix(['v', 'V']) else {
        return false;
    };
    let (major, minor) = rest.split_once('.').unwrap_or((rest, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(major) && digits(minor)
}

fn read_body(data: &str) -> Result<Vec<u8>, Error> {
    match BodySource::parse(data) {
        BodySource::Inline(text) => Ok(text.into_bytes()),
        BodySource::File(path) => std::fs::read(&path).map_err(|e| {
            Error::with_source(format!("cannot read the body from {}", path.display()), e)
        }),
        BodySource::Stdin => {
            let mut body = Vec::new();
            std::io::stdin()
                .read_to_end(&mut body)
                .map_err(|e| Error::with_source("cannot read the body from standard input", e))?;
            Ok(body)
        }
    }
}

fn parse_method(args: &RequestArgs, target: &Target) -> Result<Method, Error> {
    match target.method.as_ref().or(args.method.as_ref()) {
        Some(text) => Method::from_bytes(text.trim().to_ascii_uppercase().as_bytes())
            .map_err(|e| Error::with_source(format!("invalid method {text:?}"), e)),
        None if args.data.is_some() => Ok(Method::POST),
        None => Ok(Method::GET),
    }
}

/// Everything a request needs, checked before anything is sent.
struct Prepared {
    url: Url,
    method: Method,
    headers: HeaderMap,
    body: Option<Vec<u8>>,
    requested: VersionRequest,
    from: String,
}

fn prepare(args: &RequestArgs, target: &Target) -> Result<Prepared, Error> {
    let url = target.url.clone();
    let (requested, from) = requested_version(args, target)?;
    let method = parse_method(args, target)?;
    let mut headers = HeaderMap::new();
    for text in &args.headers {
        let (name, value) = net::parse_header(text)?;
        headers.append(name, value);
    }
    if let Some(token) = &args.token {
        headers.insert("x-auth-token", net::token_value(token)?);
    }
    let body = args.data.as_deref().map(read_body).transpose()?;
    if body.is_some() && !headers.contains_key(CONTENT_TYPE) {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    if !headers.contains_key(ACCEPT) {
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    }
    if requested.is_microversioned() {
        let Some(service_type) = &target.service_type else {
            return Err(Error::new(format!(
                "version {requested} ({from}) needs --service-type, the service the \
                 version header names (such as compute or placement); --api-version None \
                 sends no version header"
            )));
        };
        let legacy = legacy_header(service_type);
        for name in headers.keys() {
            if *name == OPENSTACK_API_VERSION || legacy.as_ref() == Some(name) {
                return Err(Error::new(format!(
                    "-H {name}: the version headers are negotiated; choose the version with \
                     --api-version (--api-version None sends the headers as given)"
                )));
            }
        }
    }
    Ok(Prepared {
        url,
        method,
        headers,
        body,
        requested,
        from,
    })
}

/// Runs `microversion request`.
pub(crate) async fn run(
    args: &RequestArgs,
    timeout: Duration,
    out: &mut Outputs<'_>,
) -> Result<ExitCode, Error> {
    let target = resolve(args, timeout).await?;
    let prepared = prepare(args, &target)?;
    let http = match &target.cloud {
        Some(cloud) => cloud.http_client().clone(),
        None => net::http_client(timeout, true, false)?,
    };
    let (response, note) = if prepared.requested.is_microversioned() {
        negotiated(args, &target, prepared, http).await?
    } else {
        plain(&target, prepared, &http).await?
    };
    let status = response.status();
    let _ = writeln!(out.stderr, "{note}");
    print_response(response, args.include, out).await?;
    Ok(
        if args.fail && (status.is_client_error() || status.is_server_error()) {
            ExitCode::from(EXIT_FAILURES)
        } else {
            ExitCode::from(EXIT_SUCCESS)
        },
    )
}

/// A request with a microversion, through the client crate.
async fn negotiated(
    args: &RequestArgs,
    target: &Target,
    prepared: Prepared,
    http: reqwest::Client,
) -> Result<(reqwest::Response, String), Error> {
    let service_type = target.service_type.clone().unwrap_or_default();
    let endpoint = match (&args.endpoint, &target.endpoint) {
        (Some(text), _) => net::parse_url(text)?,
        (None, Some(endpoint)) => endpoint.clone(),
        (None, None) => default_endpoint(&prepared.url),
    };
    let mut builder = Client::builder()
        .endpoint(endpoint.as_str())
        .service_type(service_type.clone())
        .supported_versions(cli_range())
        .version(prepared.requested)
        .ignored_header(IgnoredHeader::FallBack)
        .http_client(http);
    // The cloud's token, renewed and got again once after a 401; a token
    // given with --token or -H is sent as it is.
    if let Some(auth) = target.cloud.as_ref().and_then(Cloud::auth) {
        builder = builder.auth(auth.clone());
    }
    if !args.no_cache {
        if let Some(dir) = DiskCache::default_dir() {
            builder = builder.disk_cache(DiskCache::new(dir));
        }
    }
    let client = builder
        .build()
        .map_err(|e| Error::with_source(e.to_string(), e))?;
    let mut request = client
        .request(prepared.method, prepared.url.as_str())
        .headers(prepared.headers);
    if let Some(body) = prepared.body {
        request = request.body(body);
    }
    let response = request
        .send()
        .await
        .map_err(|e| client_error(e, &endpoint))?;
    let sent = response.sent_version();
    let server = client.known_server_versions();
    let inner = response.into_inner();
    let served = served_version(inner.headers(), &service_type);
    let header_type = header_service_type(&service_type);
    let mut note = match sent {
        Some(v) => format!(
            "API version: {header_type} {v} ({} {}",
            prepared.requested, prepared.from
        ),
        None => format!(
            "API version: no version header ({} {}",
            prepared.requested, prepared.from
        ),
    };
    match server {
        Some(ServerVersions::Microversions(range)) => {
            note.push_str(&format!("; the server supports {range})"));
        }
        Some(ServerVersions::Unversioned) => {
            note.push_str("; the server does not support microversions)");
        }
        None => note.push(')'),
    }
    if let Some(sent) = sent {
        if inner.status().is_success() && served != Some(sent) {
            note.push_str(&match served {
                None => format!(
                    "\nwarning: the response names no version although {sent} was sent: \
                     the server ignored the version header"
                ),
                Some(other) => {
                    format!("\nwarning: {sent} was sent, but the response names {other}")
                }
            });
        }
    }
    Ok((inner, note))
}

/// A request without a microversion: sent as given.
async fn plain(
    target: &Target,
    prepared: Prepared,
    http: &reqwest::Client,
) -> Result<(reqwest::Response, String), Error> {
    let mut headers = prepared.headers;
    if let Some(cloud) = &target.cloud {
        if !headers.contains_key("x-auth-token") {
            if let Some(token) = cloud.token_header().await.map_err(Error::from_client)? {
                headers.insert("x-auth-token", token);
            }
        }
    }
    let mut request = http
        .request(prepared.method, prepared.url.clone())
        .headers(headers);
    if let Some(body) = prepared.body {
        request = request.body(body);
    }
    let response = request.send().await.map_err(|e| {
        Error::with_source(format!("cannot send the request to {}", prepared.url), e)
    })?;
    let mut note = format!(
        "API version: no version header ({} {})",
        prepared.requested, prepared.from
    );
    if let Some(service_type) = &target.service_type {
        if let Some(v) = served_version(response.headers(), service_type) {
            note.push_str(&format!(
                "; the response names {} {v}",
                header_service_type(service_type)
            ));
        }
    }
    Ok((response, note))
}

/// The version a response names: the standard header's entry for the
/// service, else the service's legacy header.
pub(crate) fn served_version(headers: &HeaderMap, service_type: &str) -> Option<Version> {
    let codec = VersionHeader::try_new(header_service_type(service_type)).ok()?;
    let exact = |decoded: Decoded<'_>| match decoded {
        Decoded::Present(RequestedVersion::Exact(v)) => Some(v),
        _ => None,
    };
    exact(codec.decode(headers.get_all(OPENSTACK_API_VERSION))).or_else(|| {
        let legacy = legacy_header(service_type)?;
        exact(codec.decode_legacy(headers.get_all(legacy)))
    })
}

/// A client error, with the negotiation cases worded for a CLI that
/// supports every version (its own range is never the reason).
fn client_error(e: microversion_client::Error, endpoint: &Url) -> Error {
    let message = match e.negotiation() {
        Some(NegotiationError::OutsideServerRange {
            requested, server, ..
        }) => format!("version {requested} is not supported by {endpoint} (it supports {server})"),
        Some(
            NegotiationError::ServerTooOld {
                requested, server, ..
            }
            | NegotiationError::ServerTooNew {
                requested, server, ..
            },
        ) => format!("no version for {requested} at {endpoint}: it supports {server}"),
        _ => return Error::from_client(e),
    };
    Error::new(message)
}

async fn print_response(
    response: reqwest::Response,
    include: bool,
    out: &mut Outputs<'_>,
) -> Result<(), Error> {
    let mut head = String::new();
    if include {
        let status = response.status();
        head.push_str(&format!(
            "{:?} {} {}\n",
            response.version(),
            status.as_u16(),
            status.canonical_reason().unwrap_or_default()
        ));
        for (name, value) in response.headers() {
            head.push_str(&format!(
                "{name}: {}\n",
                String::from_utf8_lossy(value.as_bytes())
            ));
        }
        head.push('\n');
    }
    let body = response
        .bytes()
        .await
        .map_err(|e| Error::with_source("cannot read the response body", e))?;
    let result = (|| {
        out.stdout.write_all(head.as_bytes())?;
        out.stdout.write_all(&body)?;
        if out.terminal && !body.is_empty() && !body.ends_with(b"\n") {
            out.stdout.write_all(b"\n")?;
        }
        out.stdout.flush()
    })();
    match result {
        // A reader that stopped early (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::with_source("cannot write the response", e)),
        Ok(()) => Ok(()),
    }
}

/// Whether standard output is a terminal.
pub(crate) fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn endpoints_stop_at_the_version_segment() {
        let cases = [
            (
                "http://h:8774/v2.1/servers/detail?x=1",
                "http://h:8774/v2.1",
            ),
            ("http://h/compute/v2.1/flavors", "http://h/compute/v2.1"),
            ("http://h:6385/v1/nodes", "http://h:6385/v1"),
            ("http://h:8778/resource_providers", "http://h:8778/"),
            ("http://h:8778/", "http://h:8778/"),
            ("http://h/version/v2x/a", "http://h/"),
        ];
        for (input, want) in cases {
            assert_eq!(default_endpoint(&url(input)).as_str(), want, "{input}");
        }
        assert!(is_version_segment("v2.1") && is_version_segment("V3"));
        for no in ["v", "v.", "v2.", "va", "2.1", "v2.1.3", "v-1"] {
            assert!(!is_version_segment(no), "{no}");
        }
    }

    #[test]
    fn env_var_names() {
        assert_eq!(version_env_var("compute"), "OS_COMPUTE_API_VERSION");
        assert_eq!(
            version_env_var("block-storage"),
            "OS_BLOCK_STORAGE_API_VERSION"
        );
        assert_eq!(
            version_env_var("shared-file-system"),
            "OS_SHARED_FILE_SYSTEM_API_VERSION"
        );
    }

    #[test]
    fn served_versions_read_both_headers() {
        let mut h = HeaderMap::new();
        h.insert("openstack-api-version", "compute 2.53".parse().unwrap());
        assert_eq!(served_version(&h, "compute"), Some(Version::new(2, 53)));
        let mut h = HeaderMap::new();
        h.insert("x-openstack-ironic-api-version", "1.80".parse().unwrap());
        assert_eq!(served_version(&h, "baremetal"), Some(Version::new(1, 80)));
        h.insert("openstack-api-version", "placement 1.2".parse().unwrap());
        assert_eq!(served_version(&h, "baremetal"), Some(Version::new(1, 80)));
        assert_eq!(served_version(&HeaderMap::new(), "compute"), None);
    }

    #[test]
    fn the_cli_range_is_everything() {
        let r = cli_range();
        assert_eq!(r.min(), Version::new(1, 0));
        assert_eq!(r.max(), Version::MAX);
    }
}
