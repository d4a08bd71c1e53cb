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
//! Each resource has its module (providers, inventories, usages,
//! allocations, traits, aggregates, resource classes, allocation
//! candidates, versions), with its subcommands, its typed request and
//! response bodies and its columns; it plans and runs its own commands
//! through one trait, `command::Command`. The rest is shared: the
//! connection and version choice (`api`), the output forms (`output`).
//!
//! # Exit codes
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | the server refused a request (its error detail is printed in full), or Keystone refused the credentials |
//! | 2 | a usage, input, version, configuration or connection error, before or instead of the request |

mod aggregates;
mod allocations;
mod api;
mod args;
mod candidates;
mod classes;
mod cloud;
mod command;
mod error;
mod inventories;
mod output;
mod providers;
mod traits;
mod usages;
mod versions;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches};
use http::Method;

use crate::command::Command;
use crate::error::Error;

/// Exit code: success.
pub const EXIT_SUCCESS: u8 = 0;
/// Exit code: the server refused a request, or Keystone refused the
/// credentials.
pub const EXIT_FAILURES: u8 = microversion_client::cli::EXIT_FAILURES;
/// Exit code: a usage, input, version, configuration or connection error.
pub const EXIT_ERROR: u8 = microversion_client::cli::EXIT_ERROR;

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
    let plan = cli.command.plan(&matches)?;
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
    if let Some(fixed) = requested.and_then(api::fixed_version) {
        api::check_client_range(fixed)?;
        api::check_needs(&needs, fixed)?;
    }

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::with_source("cannot start the async runtime", e))?;
    let shown = runtime.block_on(async {
        let disk_cache = !cli.no_cache && !plan.fresh_versions;
        let api = api::connect(&cloud, requested, &needs, disk_cache).await?;
        if cli.verbose {
            eprintln!("{}", api.note);
        }
        cli.command.run(&api, &matches).await
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
