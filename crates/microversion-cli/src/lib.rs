//! The `microversion` command, for people who live with OpenStack-style
//! microversioned APIs:
//!
//! - `microversion version-list URL...`: each endpoint's API versions (id,
//!   status, min, max) and the microversion range they all support;
//! - `microversion request URL`: one request at a negotiated version
//!   (`latest` unless `--api-version` or `OS_<SERVICE_TYPE>_API_VERSION`
//!   says otherwise), through the on-disk negotiation cache;
//! - `microversion check URL --service-type T`: every rule of the
//!   project's wire specification that can be observed from outside, as
//!   PASS / FAIL / WARN rows, optionally judged against one of the
//!   profiles of [`microversion::Profile`] ([`check`]);
//! - `microversion impact METRICS --min X.Y [--max X.Y]`: which clients a
//!   narrower range would break, read from the service's request counters
//!   (a metrics URL or a saved scrape; `--baseline` an earlier one,
//!   `--hours` the clients seen lately): who would be refused with 406,
//!   who would be served another version, how often.
//!
//! This library is the binary's logic; `main` only calls [`run`]. The
//! checker is also usable from Rust ([`check::Check`]). The `placement`
//! command, a client of the Placement API, is the `placement-cli` crate.
//!
//! # Exit codes
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | `check` found failures; `request --fail` got a 4xx or 5xx status |
//! | 2 | a usage, input or connection error |
//!
//! `version-list` exits with 2 when an endpoint could not be read, after
//! listing every endpoint. `request` exits with 0 whatever the HTTP status
//! unless `--fail` is given, like curl.
//!
//! # The negotiation cache
//!
//! `request` keeps what discovery learns of each endpoint in
//! `$XDG_CACHE_HOME/microversion` (else `~/.cache/microversion`), one
//! small JSON file per endpoint, valid for five minutes; `--no-cache`
//! neither reads nor writes it. `version-list` and `check` always ask the
//! servers.
//!
//! # Example
//!
//! ```text
//! $ microversion version-list http://127.0.0.1:8778/ http://127.0.0.1:8779/
//! ENDPOINT                ID    STATUS   MIN  MAX   NOTE
//! http://127.0.0.1:8778/  v1.0  CURRENT  1.0  1.39  *
//! http://127.0.0.1:8779/  v1.0  CURRENT  1.0  1.36  *
//!
//! Common microversion range: 1.0 - 1.36
//! * the API version the endpoint serves
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

mod args;
pub mod check;
mod cloud;
mod cloud_list;
mod diff;
mod error;
pub mod impact;
mod net;
mod request;
mod table;
mod version_list;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

pub use crate::error::Error;

/// Exit code: success.
pub const EXIT_SUCCESS: u8 = 0;
/// Exit code: `check` found failures, or `request --fail` got an error
/// status.
pub const EXIT_FAILURES: u8 = microversion_client::cli::EXIT_FAILURES;
/// Exit code: a usage, input or connection error.
pub const EXIT_ERROR: u8 = microversion_client::cli::EXIT_ERROR;

/// Runs the command line `args` (the program name first), printing to
/// standard output and standard error.
///
/// Usage errors and `--help` are printed by clap; the exit code says which.
///
/// # Errors
///
/// Returns an input or connection error; the caller prints it and exits
/// with [`EXIT_ERROR`].
pub fn run<I, T>(args: I) -> Result<ExitCode, Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match args::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with 0; errors to stderr with 2.
            let _ = e.print();
            return Ok(ExitCode::from(
                u8::try_from(e.exit_code()).unwrap_or(EXIT_ERROR),
            ));
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::with_source("cannot start the async runtime", e))?;
    runtime.block_on(dispatch(cli))
}

async fn dispatch(cli: args::Cli) -> Result<ExitCode, Error> {
    let timeout = Duration::from_secs_f64(cli.timeout);
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    match cli.command {
        args::Command::VersionList(list) => {
            let (text, all_answered) = if list.urls.is_empty() {
                let cloud = cloud::require(&list.cloud, timeout, "version-list without URLs")?;
                let listing = cloud_list::CloudListing::fetch(&cloud).await?;
                (listing.render(list.format), listing.all_answered())
            } else {
                let token = match cloud::load(&list.cloud, cloud::Need::Explicit, timeout)? {
                    Some(cloud) => cloud_token(&cloud).await?,
                    None => None,
                };
                let listing = version_list::Listing::fetch(&list, timeout, token).await?;
                (listing.render(list.format), listing.all_answered())
            };
            write_out(&mut stdout.lock(), &text)?;
            if all_answered {
                Ok(ExitCode::from(EXIT_SUCCESS))
            } else {
                let _ = writeln!(
                    stderr.lock(),
                    "microversion: error: some endpoints could not be read"
                );
                Ok(ExitCode::from(EXIT_ERROR))
            }
        }
        args::Command::Request(request) => {
            let (mut out, mut err) = (stdout.lock(), stderr.lock());
            let mut outputs = request::Outputs {
                stdout: &mut out,
                stderr: &mut err,
                terminal: request::stdout_is_terminal(),
            };
            request::run(&request, timeout, &mut outputs).await
        }
        args::Command::Check(args) => {
            let need = if args.url.is_some() {
                cloud::Need::Explicit
            } else {
                cloud::Need::Environment
            };
            let cloud = cloud::load(&args.cloud, need, timeout)?;
            let url = match (&args.url, &cloud) {
                (Some(url), _) => url.clone(),
                (None, Some(cloud)) => cloud
                    .endpoint(&args.service_type)
                    .await
                    .map_err(Error::from_client)?
                    .to_string(),
                (None, None) => {
                    return Err(Error::new(
                        "check needs a URL, or a cloud (--os-cloud, OS_CLOUD, OS_AUTH_URL) whose \
                         catalog has the service",
                    ));
                }
            };
            let mut check = check::Check::new(&url, &args.service_type).timeout(timeout);
            if let Some(profile) = args.profile {
                check = check.profile(profile);
            }
            let cloud_token = match &cloud {
                Some(cloud) if args.token.is_none() => cloud_token(cloud).await?,
                _ => None,
            };
            if let Some(token) = args.token.as_ref().or(cloud_token.as_ref()) {
                check = check.token(token);
            }
            if let Some(path) = &args.path {
                check = check.path(path);
            }
            let report = check.run().await?;
            let text = match args.format {
                args::CheckFormat::Table => report.to_table(),
                args::CheckFormat::Json => {
                    let mut text =
                        serde_json::to_string_pretty(&report.to_json()).unwrap_or_default();
                    text.push('\n');
                    text
                }
                args::CheckFormat::Junit => report.to_junit(),
            };
            write_out(&mut stdout.lock(), &text)?;
            Ok(ExitCode::from(if report.has_failures() {
                EXIT_FAILURES
            } else {
                EXIT_SUCCESS
            }))
        }
        args::Command::Impact(args) => {
            let text = impact::run(&args, timeout).await?;
            write_out(&mut stdout.lock(), &text)?;
            Ok(ExitCode::from(EXIT_SUCCESS))
        }
        args::Command::Diff(args) => {
            let (text, differ) = diff::run(&args, timeout).await?;
            write_out(&mut stdout.lock(), &text)?;
            Ok(ExitCode::from(if differ {
                EXIT_FAILURES
            } else {
                EXIT_SUCCESS
            }))
        }
    }
}

/// The cloud's token as text, if it has one.
async fn cloud_token(cloud: &microversion_client::cloud::Cloud) -> Result<Option<String>, Error> {
    Ok(cloud
        .token_header()
        .await
        .map_err(Error::from_client)?
        .and_then(|v| v.to_str().ok().map(str::to_owned)))
}

/// Writes to standard output; a closed pipe (`| head`) is not an error.
fn write_out(out: &mut dyn Write, text: &str) -> Result<(), Error> {
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::with_source("cannot write to standard output", e)),
        Ok(()) => Ok(()),
    }
}
