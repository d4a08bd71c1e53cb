//! The `placement` command: a client of the Placement API with
//! osc-placement's commands, options and columns, built on the client
//! crate (`microversion-client`).
//!
//! This library is the binary's logic: `main` only calls [`main`], which
//! runs [`run`] on the process's arguments.
//!
//! Each command and option carries the API versions it exists at
//! ([`microversion_client::cli::CliVersions`]), shown in `--help`. Without
//! `--os-placement-api-version` a command sends the lowest version that
//! has every option it was given and every column `-c` asked for, within
//! the server's range; the server's range comes from the on-disk
//! negotiation cache, or from discovery when the cache has none. With an
//! explicit version, an option outside it fails before any request.
//!
//! # Exit codes
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | the server refused a request (its error detail is printed in full), or Keystone refused the credentials |
//! | 2 | a usage, input, version, configuration or connection error, before or instead of the request |

mod args;
mod cloud;
mod commands;
mod error;
mod output;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches};
use http::Method;
use microversion::{ServerVersions, Version, VersionRange, VersionRequest, VersionSpan};
use microversion_client::cloud::Cloud;
use microversion_client::{Client, DiskCache};
use serde_json::Value;

use crate::error::Error;

/// Exit code: success.
pub const EXIT_SUCCESS: u8 = 0;
/// Exit code: the server refused a request, or Keystone refused the
/// credentials.
pub const EXIT_FAILURES: u8 = 1;
/// Exit code: a usage, input, version, configuration or connection error.
pub const EXIT_ERROR: u8 = 2;

/// The versions this client knows: Placement 1.0 to 1.39.
pub(crate) const CLIENT_RANGE: (Version, Version) = (Version::new(1, 0), Version::new(1, 39));

fn client_range() -> VersionRange {
    VersionRange::new(CLIENT_RANGE.0, CLIENT_RANGE.1).unwrap_or(VersionRange::whole_major(1))
}

/// Why a command failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Before or instead of the request: exit code 2 (1 when Keystone
    /// refused the credentials).
    Local(Error),
    /// The server answered with an error status: exit code 1.
    Server {
        method: Method,
        url: String,
        status: http::StatusCode,
        detail: String,
    },
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Local(e)
    }
}

/// Runs the `placement` command on the process's arguments and returns
/// its exit code.
#[must_use]
pub fn main() -> ExitCode {
    run(std::env::args_os())
}

/// Runs the `placement` command line `args` (the program name first),
/// printing to standard output and standard error, and returns the exit
/// code.
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    match run_inner(args) {
        Ok(code) => code,
        Err(Failure::Local(e)) => {
            eprintln!("placement: error: {e}");
            ExitCode::from(e.exit_code())
        }
        Err(Failure::Server {
            method,
            url,
            status,
            detail,
        }) => {
            eprintln!("placement: error: {method} {url}: {status}");
            if !detail.is_empty() {
                eprintln!("{detail}");
            }
            ExitCode::from(EXIT_FAILURES)
        }
    }
}

fn run_inner<I, T>(args: I) -> Result<ExitCode, Failure>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut versions = args::versions();
    let command = versions
        .apply(args::Cli::command())
        .map_err(|e| Error::with_source("the command line is inconsistent", e))?;
    let matches = match command.try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            return Ok(ExitCode::from(
                u8::try_from(e.exit_code()).unwrap_or(EXIT_ERROR),
            ));
        }
    };
    let cli = args::Cli::from_arg_matches(&matches)
        .map_err(|e| Error::with_source("cannot read the command line", e))?;

    // Everything the command line needs, before anything is sent.
    let plan = commands::plan(&cli.command, &matches)?;
    let mut needs = versions.used(&matches);
    needs.extend(plan.needs.iter().cloned());
    if let Some(output) = plan.output {
        for column in &output.columns {
            match plan.columns.iter().find(|(name, _)| name == column) {
                Some((_, span)) => needs.push((format!("column {column}"), *span)),
                None => {
                    let names: Vec<&str> = plan.columns.iter().map(|(n, _)| *n).collect();
                    return Err(Error::new(format!(
                        "no column {column:?} in `{}`: its columns are {}",
                        plan.path,
                        names.join(", ")
                    ))
                    .into());
                }
            }
        }
    }

    let timeout = Duration::from_secs_f64(cli.timeout);
    let cloud = cloud::load(&cli.cloud, timeout)?.ok_or_else(|| {
        Error::new(
            "no Placement endpoint: give --os-endpoint URL and --os-token TOKEN (OS_ENDPOINT, \
             OS_TOKEN) for a service without Keystone, or a cloud: --os-cloud NAME (OS_CLOUD) \
             from clouds.yaml, or --os-auth-url (OS_AUTH_URL) and the other credentials",
        )
    })?;
    let requested = cli
        .api_version
        .or_else(|| cloud.config().api_version("placement"));
    // An explicit version is checked before any request, Keystone's
    // included.
    if let Some(fixed) = requested.and_then(fixed_version) {
        check_client_range(fixed)?;
        check_needs(&needs, fixed)?;
    }

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::with_source("cannot start the async runtime", e))?;
    let shown = runtime.block_on(async {
        let api = connect(&cloud, &cli, requested, &needs).await?;
        if cli.verbose {
            eprintln!("{}", api.note);
        }
        commands::execute(&cli.command, &api, &plan).await
    })?;
    if let (Some(shown), Some(output)) = (shown, plan.output) {
        let text = shown.render(output.format, &output.columns)?;
        let mut out = std::io::stdout().lock();
        match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                return Err(Error::with_source("cannot write to standard output", e).into());
            }
            _ => {}
        }
    }
    Ok(ExitCode::from(EXIT_SUCCESS))
}

/// The version an explicit request fixes without asking the server:
/// `X.Y`, or 1.0 for `1` and `None` (no header).
fn fixed_version(requested: VersionRequest) -> Option<Version> {
    match requested {
        VersionRequest::Exact(v) => Some(v),
        VersionRequest::Latest | VersionRequest::MajorLatest(_) => None,
        VersionRequest::Major(major) => Some(Version::new(major, 0)),
        _ => Some(Version::new(1, 0)),
    }
}

fn check_client_range(version: Version) -> Result<(), Error> {
    if client_range().contains(version) {
        Ok(())
    } else {
        Err(Error::new(format!(
            "API version {version} is outside what this client supports ({})",
            client_range()
        )))
    }
}

/// Fails naming the first need whose span excludes `version`.
fn check_needs(needs: &[(String, VersionSpan)], version: Version) -> Result<(), Error> {
    for (feature, span) in needs {
        if !span.contains(version) {
            return Err(Error::new(format!(
                "{feature} is supported by API versions {span}; the version in use is {version}"
            )));
        }
    }
    Ok(())
}

/// The client, the version it sends and what to say about it.
pub(crate) struct Api {
    client: Client,
    /// The version sent with each request (`None`: as the client was
    /// built).
    send: Option<Version>,
    /// The version the server answers at.
    pub(crate) version: Version,
    /// The endpoint.
    pub(crate) endpoint: String,
    /// How the version was chosen, for `--verbose`.
    note: String,
}

async fn connect(
    cloud: &Cloud,
    cli: &args::Cli,
    requested: Option<VersionRequest>,
    needs: &[(String, VersionSpan)],
) -> Result<Api, Failure> {
    let mut builder = cloud
        .client("placement")
        .await
        .map_err(Error::from_client)?
        .supported_versions(client_range());
    if !cli.no_cache && !matches!(cli.command, args::Top::VersionList(_)) {
        if let Some(dir) = DiskCache::default_dir() {
            builder = builder.disk_cache(DiskCache::new(dir));
        }
    }
    if let Some(requested) = requested {
        builder = builder.version(requested);
    }
    let client = builder
        .build()
        .map_err(|e| Error::with_source(e.to_string(), e))?;
    let endpoint = client.endpoint().to_string();
    let unsupported = |e: microversion_client::Error| -> Failure {
        match e.negotiation() {
            Some(n) => Error::new(format!("{n} at {endpoint}")).into(),
            None => Error::from_client(e).into(),
        }
    };
    let (send, version, note) = match requested {
        Some(VersionRequest::Exact(v)) => {
            // The server's range is checked too, before the request.
            client.version().await.map_err(unsupported)?;
            (
                None,
                v,
                format!("API version: placement {v} (from --os-placement-api-version)"),
            )
        }
        Some(r) if fixed_version(r).is_some() => (
            None,
            Version::new(1, 0),
            "API version: none sent (the server's default, 1.0)".to_owned(),
        ),
        Some(r) => {
            let v = client
                .version()
                .await
                .map_err(unsupported)?
                .effective()
                .unwrap_or(CLIENT_RANGE.0);
            check_needs(needs, v)?;
            (None, v, format!("API version: placement {v} ({r})"))
        }
        None => {
            let server = client.server_versions().await.map_err(unsupported)?;
            let (v, why) = lowest(needs, server, &endpoint)?;
            (Some(v), v, format!("API version: placement {v} ({why})"))
        }
    };
    Ok(Api {
        client,
        send,
        version,
        endpoint,
        note,
    })
}

/// The lowest version that has every need, within the client's and the
/// server's ranges, and why.
fn lowest(
    needs: &[(String, VersionSpan)],
    server: ServerVersions,
    endpoint: &str,
) -> Result<(Version, String), Error> {
    let server = match server {
        ServerVersions::Microversions(range) => range,
        ServerVersions::Unversioned => VersionRange::new(CLIENT_RANGE.0, CLIENT_RANGE.0)
            .unwrap_or(VersionRange::whole_major(1)),
    };
    let Some(common) = server.intersect(client_range()) else {
        return Err(Error::new(format!(
            "no common API version: the server at {endpoint} supports {server}, this client {}",
            client_range()
        )));
    };
    let mut version = common.min();
    let mut why = format!("the server's minimum; it supports {server}");
    for (feature, span) in needs {
        if span.start() > version {
            version = span.start();
            why = format!("the lowest with {feature}; the server supports {server}");
        }
    }
    for (feature, span) in needs {
        if !span.contains(version) || !common.contains(version) {
            return Err(Error::new(format!(
                "{feature} is supported by API versions {span}; the server at {endpoint} \
                 supports {server}"
            )));
        }
    }
    Ok((version, why))
}

/// A server's answer.
pub(crate) struct Reply {
    pub(crate) body: Value,
    pub(crate) location: Option<String>,
}

impl Api {
    /// Whether the version in use is `v` or later.
    pub(crate) fn at_least(&self, v: &'static str) -> bool {
        self.version >= Version::from_static(v)
    }

    /// Sends a request; an error status is a [`Failure::Server`].
    pub(crate) async fn call(
        &self,
        method: Method,
        path: &str,
        query: &[(String, String)],
        body: Option<&Value>,
    ) -> Result<Reply, Failure> {
        let mut request = self
            .client
            .request(method.clone(), path)
            .header("accept", "application/json");
        if let Some(v) = self.send {
            request = request.version(v);
        }
        if !query.is_empty() {
            request = request.query(query);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.map_err(Error::from_client)?;
        let status = response.status();
        let url = response.url().to_string();
        let location = response
            .headers()
            .get(http::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let bytes = response.bytes().await.map_err(Error::from_client)?;
        if !status.is_success() {
            return Err(Failure::Server {
                method,
                url,
                status,
                detail: error_detail(&bytes),
            });
        }
        let body = if bytes.iter().all(u8::is_ascii_whitespace) {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).map_err(|e| {
                Error::with_source(format!("{method} {url}: the answer is not JSON"), e)
            })?
        };
        Ok(Reply { body, location })
    }

    pub(crate) async fn get(
        &self,
        path: &str,
        query: &[(String, String)],
    ) -> Result<Value, Failure> {
        Ok(self.call(Method::GET, path, query, None).await?.body)
    }

    pub(crate) async fn put(&self, path: &str, body: Option<&Value>) -> Result<Value, Failure> {
        Ok(self.call(Method::PUT, path, &[], body).await?.body)
    }

    pub(crate) async fn delete(&self, path: &str) -> Result<(), Failure> {
        self.call(Method::DELETE, path, &[], None).await.map(|_| ())
    }
}

/// The `detail` of every error of an API-SIG error body, each in full;
/// else the body as text.
fn error_detail(body: &[u8]) -> String {
    let details = serde_json::from_slice::<Value>(body).ok().and_then(|v| {
        let errors = v.get("errors")?.as_array()?;
        let details: Vec<String> = errors
            .iter()
            .filter_map(|e| e.get("detail").and_then(Value::as_str))
            .map(|d| d.trim().to_owned())
            .collect();
        (!details.is_empty()).then(|| details.join("\n"))
    });
    details.unwrap_or_else(|| String::from_utf8_lossy(body).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(s: &'static str) -> VersionSpan {
        VersionSpan::from_static(s)
    }

    #[test]
    fn the_lowest_version_with_every_need() {
        let server = ServerVersions::Microversions(VersionRange::from_static("1.0", "1.39"));
        let needs = vec![
            ("option --in-tree".to_owned(), span("1.14 - latest")),
            ("option --resource".to_owned(), span("1.4 - latest")),
        ];
        let (v, why) = lowest(&needs, server, "http://h/").unwrap();
        assert_eq!(v, Version::new(1, 14));
        assert_eq!(
            why,
            "the lowest with option --in-tree; the server supports 1.0 - 1.39"
        );
        assert_eq!(
            lowest(&[], server, "http://h/").unwrap().0,
            Version::new(1, 0)
        );
        let old = ServerVersions::Microversions(VersionRange::from_static("1.0", "1.10"));
        assert_eq!(
            lowest(&needs, old, "http://h/").unwrap_err().to_string(),
            "option --in-tree is supported by API versions 1.14 - latest; the server at \
             http://h/ supports 1.0 - 1.10"
        );
        let newer = ServerVersions::Microversions(VersionRange::from_static("1.20", "1.50"));
        assert_eq!(
            lowest(&needs, newer, "http://h/").unwrap().0,
            Version::new(1, 20)
        );
    }

    #[test]
    fn explicit_versions_are_checked() {
        let needs = vec![("option --limit".to_owned(), span("1.16 - latest"))];
        assert_eq!(
            check_needs(&needs, Version::new(1, 10))
                .unwrap_err()
                .to_string(),
            "option --limit is supported by API versions 1.16 - latest; the version in use is 1.10"
        );
        assert!(check_needs(&needs, Version::new(1, 16)).is_ok());
        assert!(check_client_range(Version::new(1, 40)).is_err());
        assert_eq!(
            fixed_version(VersionRequest::Unversioned),
            Some(Version::new(1, 0))
        );
    }

    #[test]
    fn error_details_in_full() {
        let body = br#"{"errors": [{"status": 404, "title": "Not Found", "detail": "The resource could not be found.\n\n No provider  "}]}"#;
        assert_eq!(
            error_detail(body),
            "The resource could not be found.\n\n No provider"
        );
        assert_eq!(error_detail(b"plain text\n"), "plain text");
    }
}
