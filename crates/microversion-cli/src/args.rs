//! The command line, as clap derives it. No logic lives here: the commands
//! read these values and do the work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use microversion::{Profile, Version, VersionRequest};
use microversion_client::cli::{CloudArgs, parse_seconds};

/// The exit codes, shown at the end of every `--help`.
const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  `check` found failures; `request --fail` got an HTTP error status;
     `diff` found differences; Keystone refused the credentials
  2  usage, input, configuration or connection error";

/// Tools for OpenStack-style microversioned APIs: see what endpoints
/// support, send requests at a negotiated version, and check that a server
/// follows the microversion rules.
#[derive(Debug, Parser)]
#[command(name = "microversion", version, after_help = EXIT_CODES)]
pub(crate) struct Cli {
    /// Time limit of each HTTP request, in seconds.
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 30.0,
          value_parser = parse_seconds)]
    pub(crate) timeout: f64,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List each endpoint's API versions (id, status, min, max) and the
    /// microversion range they all support.
    #[command(after_help = EXIT_CODES)]
    VersionList(VersionListArgs),
    /// Send a request at a negotiated microversion and print the answer.
    #[command(after_help = EXIT_CODES)]
    Request(RequestArgs),
    /// Check a server against the microversion rules (wire.md), rule by
    /// rule, optionally as one of the server crate's profiles.
    #[command(after_help = EXIT_CODES)]
    Check(CheckArgs),
    /// Tell which clients a narrower range would break (a raised minimum,
    /// a capped maximum), from the service's request counters: who would
    /// be refused with 406, who would be served another version, how
    /// often, and when each was last seen.
    #[command(after_help = EXIT_CODES)]
    Impact(ImpactArgs),
    /// Print what differs between two OpenAPI documents of an API (two
    /// versions, or one version before and after a change), operation by
    /// operation, marking what breaks a client of the first.
    #[command(after_help = EXIT_CODES)]
    Diff(DiffArgs),
}

#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
    /// The first document: a file (`-`: standard input) or a URL; with
    /// `--url`, a version of the server's documents (`1.19`, `latest`).
    #[arg(value_name = "OLD")]
    pub(crate) old: String,

    /// The second document, in the same forms.
    #[arg(value_name = "NEW")]
    pub(crate) new: String,

    /// A server serving its documents at `/openapi.json?version=X.Y`
    /// under this URL (placement-api with `[openapi] enabled`, or any
    /// service built on microversion-server): OLD and NEW are versions.
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,

    /// Output format.
    #[arg(short = 'f', long, value_enum, default_value_t = ListFormat::Table)]
    pub(crate) format: ListFormat,
}

/// How `version-list` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ListFormat {
    /// Aligned columns, for people.
    Table,
    /// One JSON document, for programs.
    Json,
}

/// How `check` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CheckFormat {
    /// Aligned columns, for people.
    Table,
    /// One JSON document, for programs.
    Json,
    /// JUnit XML, for CI systems.
    Junit,
}

#[derive(Debug, Args)]
pub(crate) struct VersionListArgs {
    /// Endpoints to ask (their versions document is read with GET, from the
    /// parent URL when the endpoint answers 404). None: every service of
    /// the cloud's catalog (--os-cloud, OS_CLOUD or the OS_* variables).
    #[arg(value_name = "URL")]
    pub(crate) urls: Vec<String>,

    /// The service type of the endpoints, shown with them.
    #[arg(long, value_name = "TYPE")]
    pub(crate) service_type: Option<String>,

    /// Output format.
    #[arg(short = 'f', long, value_enum, default_value_t = ListFormat::Table)]
    pub(crate) format: ListFormat,

    /// Authentication token, sent as X-Auth-Token.
    #[arg(long, env = "OS_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    pub(crate) token: Option<String>,

    #[command(flatten)]
    pub(crate) cloud: CloudArgs,
}

#[derive(Debug, Args)]
pub(crate) struct RequestArgs {
    /// URL, or SERVICE PATH, or SERVICE METHOD PATH: a service type of the
    /// cloud's catalog (placement, compute, block-storage, ...) and a path
    /// relative to its endpoint, as in `request placement GET
    /// /resource_providers`.
    #[arg(value_name = "TARGET", required = true, num_args = 1..=3)]
    pub(crate) target: Vec<String>,

    /// HTTP method [default: GET, or POST with --data].
    #[arg(short = 'X', long = "request", value_name = "METHOD")]
    pub(crate) method: Option<String>,

    /// Request body; @FILE reads it from a file, @- from standard input.
    /// Sent as application/json unless -H sets a Content-Type.
    #[arg(short = 'd', long = "data", value_name = "BODY")]
    pub(crate) data: Option<String>,

    /// Extra header, "Name: value"; may be repeated.
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub(crate) headers: Vec<String>,

    /// The service type named in the version header (compute, placement,
    /// baremetal, ...). Needed unless no microversion is sent.
    #[arg(long, value_name = "TYPE")]
    pub(crate) service_type: Option<String>,

    /// The API version: X.Y, X.latest, latest, X (no microversion) or None
    /// [default: $OS_<SERVICE_TYPE>_API_VERSION, else latest].
    #[arg(long, value_name = "VERSION", value_parser = VersionRequest::parse_cli)]
    pub(crate) api_version: Option<VersionRequest>,

    /// Authentication token, sent as X-Auth-Token.
    #[arg(long, env = "OS_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    pub(crate) token: Option<String>,

    /// Also print the status line and the response headers.
    #[arg(short = 'i', long)]
    pub(crate) include: bool,

    /// The API root where discovery starts [default: URL up to its version
    /// segment such as /v2.1, else the server root].
    #[arg(long, value_name = "URL")]
    pub(crate) endpoint: Option<String>,

    /// Neither read nor write the on-disk negotiation cache.
    #[arg(long)]
    pub(crate) no_cache: bool,

    /// Exit with 1 when the answer has a 4xx or 5xx status.
    #[arg(long)]
    pub(crate) fail: bool,

    #[command(flatten)]
    pub(crate) cloud: CloudArgs,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The endpoint: the URL of the versions document, such as
    /// http://127.0.0.1:8778/ [default: the service's endpoint in the
    /// cloud's catalog].
    #[arg(value_name = "URL")]
    pub(crate) url: Option<String>,

    /// The service type the server answers to in OpenStack-API-Version.
    #[arg(long, value_name = "TYPE")]
    pub(crate) service_type: String,

    /// Judge against this profile's documented behaviour instead of the
    /// API-SIG rules: api-sig, placement, nova, ironic or cinder.
    #[arg(long, value_name = "PROFILE")]
    pub(crate) profile: Option<Profile>,

    /// Authentication token, sent as X-Auth-Token (not to the versions
    /// document, which must answer without one).
    #[arg(long, env = "OS_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    pub(crate) token: Option<String>,

    /// A versioned path to send the version headers to, resolved against
    /// URL [default: URL itself].
    #[arg(long, value_name = "PATH")]
    pub(crate) path: Option<String>,

    /// Output format.
    #[arg(short = 'f', long, value_enum, default_value_t = CheckFormat::Table)]
    pub(crate) format: CheckFormat,

    #[command(flatten)]
    pub(crate) cloud: CloudArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ImpactArgs {
    /// The service's metrics: their URL (placement-api's `[metrics] bind`
    /// address and /metrics), or a file of a scrape in the Prometheus text
    /// format (`-`: standard input).
    #[arg(value_name = "URL|FILE")]
    pub(crate) source: String,

    /// The minimum the service would serve.
    #[arg(long, value_name = "X.Y")]
    pub(crate) min: Version,

    /// The maximum the service would serve [default: the code's].
    #[arg(long, value_name = "X.Y")]
    pub(crate) max: Option<Version>,

    /// An earlier scrape (a URL or a file): count only the requests made
    /// since it was taken.
    #[arg(long, value_name = "URL|FILE")]
    pub(crate) baseline: Option<String>,

    /// Only the clients seen in the last this many hours.
    #[arg(long, value_name = "HOURS")]
    pub(crate) hours: Option<f64>,

    /// The service type whose requests to read, when the metrics count
    /// several.
    #[arg(long, value_name = "TYPE")]
    pub(crate) service_type: Option<String>,

    /// Output format.
    #[arg(short = 'f', long, value_enum, default_value_t = ListFormat::Table)]
    pub(crate) format: ListFormat,
}

/// Where a `-d @FILE` body comes from.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum BodySource {
    /// The text itself.
    Inline(String),
    /// A file.
    File(PathBuf),
    /// Standard input (`@-`).
    Stdin,
}

impl BodySource {
    pub(crate) fn parse(data: &str) -> BodySource {
        match data.strip_prefix('@') {
            Some("-") => BodySource::Stdin,
            Some(path) => BodySource::File(PathBuf::from(path)),
            None => BodySource::Inline(data.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn bodies() {
        assert_eq!(BodySource::parse("{}"), BodySource::Inline("{}".into()));
        assert_eq!(BodySource::parse("@-"), BodySource::Stdin);
        assert_eq!(
            BodySource::parse("@body.json"),
            BodySource::File("body.json".into())
        );
    }

    #[test]
    fn versions_are_parsed_by_the_cli_grammar() {
        let cli = Cli::try_parse_from([
            "microversion",
            "request",
            "http://h/",
            "--api-version",
            " 2.latest ",
        ])
        .unwrap();
        let Command::Request(args) = cli.command else {
            panic!("not request")
        };
        assert_eq!(args.api_version, Some(VersionRequest::MajorLatest(2)));
        let err = Cli::try_parse_from([
            "microversion",
            "request",
            "http://h/",
            "--api-version",
            "2.01",
        ])
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("invalid version \"2.01\": expected X.Y, X.latest or latest"),
            "{err}"
        );
    }

    #[test]
    fn profiles_are_parsed_by_the_core_crate() {
        let cli = Cli::try_parse_from([
            "microversion",
            "check",
            "http://h/",
            "--service-type",
            "compute",
            "--profile",
            "nova",
        ])
        .unwrap();
        let Command::Check(args) = cli.command else {
            panic!("not check")
        };
        assert_eq!(args.profile, Some(Profile::Nova));
        let err = Cli::try_parse_from([
            "microversion",
            "check",
            "http://h/",
            "--service-type",
            "compute",
            "--profile",
            "keystone",
        ])
        .unwrap_err();
        assert!(err.to_string().contains("unknown profile"), "{err}");
    }
}
