//! The `placement` command line's top: global options, the command tree
//! down to each resource's module (which has its own subcommands), the
//! output options, and the value parsers the resources share. Values are
//! checked while clap parses (a UUID, an integer, a `CLASS=AMOUNT` pair),
//! so bad input fails with exit code 2 before any request.

use clap::{ArgMatches, Args, Parser, Subcommand, ValueEnum};
use microversion::VersionRequest;
use microversion_client::cli::{CliVersions, CloudArgs};

use crate::Failure;
use crate::api::Api;
use crate::candidates::Allocation;
use crate::classes::Class;
use crate::command::{Command, Plan};
use crate::error::Error;
use crate::output::Shown;
use crate::providers::Provider;
use crate::traits::Trait;
use crate::usages::ResourceUsage;
use crate::versions::VersionList;

/// The exit codes, shown at the end of every `--help`.
pub(crate) const EXIT_CODES: &str = "\
Without --os-placement-api-version, each command sends the lowest API version
that has everything it was asked for (options, columns), within the server's
range (read once and kept for five minutes in ~/.cache/microversion).

Exit codes:
  0  success
  1  the server refused the request (its error detail is printed)
  2  usage, input, version, configuration or connection error";

/// A command-line client of the Placement API: resource providers, their
/// inventories, usages, allocations, traits and aggregates, resource
/// classes and allocation candidates, with osc-placement's command and
/// option names.
#[derive(Debug, Parser)]
#[command(name = "placement", version, after_help = EXIT_CODES)]
pub(crate) struct Cli {
    /// The Placement API version to send: X.Y, latest, or 1 / None (1.0)
    /// [default: the lowest version the command needs].
    #[arg(long = "os-placement-api-version", env = "OS_PLACEMENT_API_VERSION", hide_env_values = true,
          value_name = "VERSION", value_parser = microversion_client::cli::parse_api_version)]
    pub(crate) api_version: Option<VersionRequest>,

    /// Time limit of each HTTP request, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0,
          value_parser = microversion_client::cli::parse_seconds)]
    pub(crate) timeout: f64,

    /// Ask the server for its versions, not the on-disk cache.
    #[arg(long)]
    pub(crate) no_cache: bool,

    /// Print the API version sent, and why, on standard error.
    #[arg(short = 'v', long)]
    pub(crate) verbose: bool,

    #[command(flatten)]
    pub(crate) cloud: CloudArgs,

    #[command(subcommand)]
    pub(crate) command: Top,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Top {
    /// Resource providers, resource classes and usages.
    #[command(subcommand)]
    Resource(Resource),
    /// Allocation candidates.
    #[command(subcommand)]
    Allocation(Allocation),
    /// Traits.
    #[command(subcommand)]
    Trait(Trait),
    /// The Placement API versions of the server and of this client.
    VersionList(VersionList),
}

#[derive(Debug, Subcommand)]
pub(crate) enum Resource {
    /// Resource providers.
    #[command(subcommand)]
    Provider(Provider),
    /// Resource classes.
    #[command(subcommand)]
    Class(Class),
    /// Usages of a project (and user).
    #[command(subcommand)]
    Usage(ResourceUsage),
}

impl Command for Top {
    fn plan(&self, matches: &ArgMatches) -> Result<Plan<'_>, Error> {
        match self {
            Top::Resource(c) => c.plan(matches),
            Top::Allocation(c) => c.plan(matches),
            Top::Trait(c) => c.plan(matches),
            Top::VersionList(c) => c.plan(matches),
        }
    }

    async fn run(&self, api: &Api, matches: &ArgMatches) -> Result<Option<Shown>, Failure> {
        match self {
            Top::Resource(c) => c.run(api, matches).await,
            Top::Allocation(c) => c.run(api, matches).await,
            Top::Trait(c) => c.run(api, matches).await,
            Top::VersionList(c) => c.run(api, matches).await,
        }
    }
}

impl Command for Resource {
    fn plan(&self, matches: &ArgMatches) -> Result<Plan<'_>, Error> {
        match self {
            Resource::Provider(c) => c.plan(matches),
            Resource::Class(c) => c.plan(matches),
            Resource::Usage(c) => c.plan(matches),
        }
    }

    async fn run(&self, api: &Api, matches: &ArgMatches) -> Result<Option<Shown>, Failure> {
        match self {
            Resource::Provider(c) => c.run(api, matches).await,
            Resource::Class(c) => c.run(api, matches).await,
            Resource::Usage(c) => c.run(api, matches).await,
        }
    }
}

/// How a command prints: osc's `-f` and `-c`.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Output options")]
pub(crate) struct Output {
    /// Output format.
    #[arg(short = 'f', long = "format", value_enum, default_value_t = Format::Table)]
    pub(crate) format: Format,
    /// A column to print (may be repeated) [default: all of the version in
    /// use]. A column that only newer versions have raises the version
    /// sent.
    #[arg(short = 'c', long = "column", value_name = "COLUMN")]
    pub(crate) columns: Vec<String>,
}

/// osc's output formats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// A table with borders.
    #[default]
    Table,
    /// JSON, as osc prints it.
    Json,
    /// YAML.
    Yaml,
    /// The values only, space separated.
    Value,
}

/// A resource provider UUID.
#[derive(Debug, Args)]
pub(crate) struct Uuid {
    /// UUID of the resource provider.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) uuid: String,
}

/// A command's arguments and its output options.
#[derive(Debug, Args)]
pub(crate) struct WithOutput<T: Args> {
    #[command(flatten)]
    pub(crate) args: T,
    #[command(flatten)]
    pub(crate) output: Output,
}

/// The versions of commands and options, shown in `--help` and checked
/// against the version in use, from each resource's module. Options whose
/// need depends on their value (a comma in `--required`) are checked by
/// the commands.
pub(crate) fn versions() -> CliVersions {
    let v = crate::providers::versions(CliVersions::new());
    let v = crate::classes::versions(v);
    let v = crate::usages::versions(v);
    let v = crate::candidates::versions(v);
    crate::traits::versions(v)
}

const UUID_FORM: &str = "expected a UUID such as 4e8e5957-649f-477b-9e5b-f1f75b21c03c";

/// A UUID, in any of the forms Placement accepts, as its hyphenated
/// lower-case form.
pub(crate) fn parse_uuid(text: &str) -> Result<String, String> {
    uuid::Uuid::try_parse(text.trim())
        .map(|u| u.hyphenated().to_string())
        .map_err(|_| format!("invalid UUID {text:?}: {UUID_FORM}"))
}

/// Comma separated UUIDs.
pub(crate) fn parse_uuid_list(text: &str) -> Result<String, String> {
    let uuids = text
        .split(',')
        .map(parse_uuid)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(uuids.join(","))
}

/// A non-negative integer that fits Placement's columns.
pub(crate) fn parse_integer(text: &str) -> Result<i64, String> {
    match text.trim().parse::<i64>() {
        Ok(n) if (0..=i64::from(i32::MAX)).contains(&n) => Ok(n),
        _ => Err(format!(
            "invalid integer {text:?}: expected a whole number from 0 to {}",
            i32::MAX
        )),
    }
}

/// A finite positive number.
pub(crate) fn parse_ratio(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(format!(
            "invalid ratio {text:?}: expected a number above 0, such as 16.0"
        )),
    }
}

/// A resource class name: upper-case letters, digits and `_`.
pub(crate) fn check_class(class: &str, whole: &str) -> Result<(), String> {
    let ok = !class.is_empty()
        && class.len() <= 255
        && class
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid resource class {class:?} in {whole:?}: expected upper-case letters, digits \
             and _, such as VCPU or CUSTOM_GPU"
        ))
    }
}

/// A resource class or trait name, as a path segment.
pub(crate) fn parse_name(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text.len() <= 255
        && text
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "invalid name {text:?}: expected upper-case letters, digits and _, such as VCPU, \
             CUSTOM_GPU or HW_CPU_X86_AVX2"
        ))
    }
}

/// `CLASS=AMOUNT`.
pub(crate) fn parse_amount(text: &str) -> Result<(String, i64), String> {
    let Some((class, amount)) = text.split_once('=') else {
        return Err(format!(
            "invalid {text:?}: expected CLASS=AMOUNT, such as VCPU=2"
        ));
    };
    let class = class.trim();
    check_class(class, text)?;
    let amount = parse_integer(amount).map_err(|e| format!("in {text:?}: {e}"))?;
    Ok((class.to_owned(), amount))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
        versions().apply(Cli::command()).unwrap();
    }

    #[test]
    fn values_are_checked() {
        assert_eq!(
            parse_uuid("4E8E5957649F477B9E5BF1F75B21C03C").unwrap(),
            "4e8e5957-649f-477b-9e5b-f1f75b21c03c"
        );
        assert_eq!(
            parse_uuid("nope").unwrap_err(),
            format!("invalid UUID \"nope\": {UUID_FORM}")
        );
        assert_eq!(parse_amount("VCPU=2"), Ok(("VCPU".to_owned(), 2)));
        assert!(parse_amount("VCPU=2.5").is_err());
        assert!(parse_amount("vcpu=2").is_err());
        assert!(parse_amount("VCPU").is_err());
        assert!(parse_integer("-1").is_err());
        assert!(parse_ratio("0").is_err() && parse_ratio("1.5") == Ok(1.5));
        assert!(parse_name("CUSTOM_GPU").is_ok() && parse_name("gpu").is_err());
    }
}
