//! Versioned commands and options for CLIs built with clap (feature
//! `clap`).
//!
//! A subcommand or an option that exists only from some API version on is
//! registered with its [`VersionSpan`]. [`CliVersions::apply`] appends the
//! span to its help text, "(supported by API versions 1.14 - latest)";
//! [`CliVersions::validate`] checks a parsed command line against the
//! negotiated version and fails naming the span. [`api_version_arg`] is the
//! `--os-<service>-api-version` option of the OpenStack CLIs.
//!
//! What such commands share besides: [`CloudArgs`], osc's `--os-cloud`,
//! `--os-auth-url`, `--os-token`... options feeding a
//! [`ConfigLoader`](crate::config::ConfigLoader); [`parse_seconds`] for
//! `--timeout`; [`CommandError`], why a command failed and its exit code;
//! [`error_chain`], an error and its causes on one line.
//!
//! ```
//! use clap::{Arg, Command};
//! use microversion::Version;
//! use microversion::VersionSpan;
//! use microversion_client::cli::{CliVersions, api_version_arg};
//!
//! let mut versions = CliVersions::new()
//!     .command("allocation-candidate list", VersionSpan::from_static("1.10 - latest"))
//!     .option("resource-provider list", "in_tree", VersionSpan::from_static("1.14 - latest"));
//! let cli = Command::new("placement")
//!     .arg(api_version_arg("placement"))
//!     .subcommand(Command::new("allocation-candidate")
//!         .subcommand(Command::new("list").about("List allocation candidates")))
//!     .subcommand(Command::new("resource-provider").subcommand(
//!         Command::new("list").arg(
//!             Arg::new("in_tree").long("in-tree").help("Only providers in this tree"),
//!         ),
//!     ));
//! let mut cli = versions.apply(cli)?;
//! let help = cli.render_long_help().to_string();
//! assert!(help.contains("--os-placement-api-version"));
//!
//! let matches = cli.try_get_matches_from(
//!     ["placement", "resource-provider", "list", "--in-tree", "4e8e5957"],
//! ).unwrap();
//! let err = versions.validate(&matches, Version::new(1, 10)).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "option --in-tree of `resource-provider list` is supported by API versions \
//!      1.14 - latest; the version in use is 1.10"
//! );
//! assert!(versions.validate(&matches, Version::new(1, 14)).is_ok());
//! # Ok::<(), microversion_client::Error>(())
//! ```

mod cloud_args;
mod command_error;
mod error_chain;

pub use self::cloud_args::{CloudArgs, parse_seconds};
pub use self::command_error::{CommandError, EXIT_ERROR, EXIT_FAILURES};
pub use self::error_chain::error_chain;

use clap::parser::ValueSource;
use clap::{Arg, ArgMatches, Command};
use microversion::{Version, VersionRequest, VersionSpan};

use crate::error::Error;
use crate::versioned::{check_span, help_suffix};

/// The version spans of a CLI's subcommands and options.
///
/// Commands are named by their path of subcommand names separated by
/// spaces (`"resource-provider list"`); options by their clap argument id
/// within a command (`""` for the top level).
#[derive(Clone, Debug, Default)]
pub struct CliVersions {
    commands: Vec<(String, VersionSpan)>,
    options: Vec<OptionSpan>,
}

#[derive(Clone, Debug)]
struct OptionSpan {
    command: String,
    id: String,
    span: VersionSpan,
    /// How the option is written (`--in-tree`), once [`CliVersions::apply`]
    /// has seen the command.
    display: Option<String>,
}

impl CliVersions {
    /// No versioned command or option.
    #[must_use]
    pub fn new() -> Self {
        CliVersions::default()
    }

    /// The subcommand at `path` exists at `span`.
    #[must_use]
    pub fn command(mut self, path: &str, span: VersionSpan) -> Self {
        self.commands.push((normalize_path(path), span));
        self
    }

    /// The option with argument id `id` of the subcommand at `command`
    /// exists at `span`.
    #[must_use]
    pub fn option(mut self, command: &str, id: &str, span: VersionSpan) -> Self {
        self.options.push(OptionSpan {
            command: normalize_path(command),
            id: id.to_owned(),
            span,
            display: None,
        });
        self
    }

    /// The span of a subcommand, if registered.
    #[must_use]
    pub fn command_span(&self, path: &str) -> Option<VersionSpan> {
        let path = normalize_path(path);
        self.commands
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, span)| *span)
    }

    /// Appends "(supported by API versions A - B)" to the help of every
    /// registered subcommand and option of `command`.
    ///
    /// # Errors
    ///
    /// Returns an error ([`Error::is_builder`]) naming a registered
    /// subcommand or option that `command` does not have.
    pub fn apply(&mut self, mut command: Command) -> Result<Command, Error> {
        for (path, span) in &self.commands {
            let names: Vec<&str> = path.split(' ').filter(|s| !s.is_empty()).collect();
            if names.is_empty() {
                return Err(Error::builder(
                    "a versioned command needs a subcommand name",
                ));
            }
            command = edit_at(command, &names, &mut |cmd| {
                let about = cmd
                    .get_about()
                    .map(|a| format!("{a} {}", help_suffix(*span)))
                    .unwrap_or_else(|| help_suffix(*span));
                Ok(cmd.about(about))
            })
            .map_err(|e| e.with_context(format!("command `{path}`")))?;
        }
        for option in &mut self.options {
            let names: Vec<&str> = option
                .command
                .split(' ')
                .filter(|s| !s.is_empty())
                .collect();
            let (id, span) = (option.id.clone(), option.span);
            let mut display = None;
            command = edit_at(command, &names, &mut |cmd| {
                let Some(arg) = cmd.get_arguments().find(|a| a.get_id() == id.as_str()) else {
                    return Err(Error::builder(format!("no option with id {id:?}")));
                };
                display = Some(arg_display(arg));
                Ok(cmd.mut_arg(id.as_str(), |arg| {
                    let help = arg
                        .get_help()
                        .map(|h| format!("{h} {}", help_suffix(span)))
                        .unwrap_or_else(|| help_suffix(span));
                    arg.help(help)
                }))
            })
            .map_err(|e| e.with_context(format!("command `{}`", option.command)))?;
            option.display = display;
        }
        Ok(command)
    }

    /// The registered subcommands and options that `matches` uses, in
    /// order from the top level down, each named as messages name it
    /// (``command `resource-provider list` ``, ``option --in-tree of
    /// `resource-provider list` ``) with its span. Options count when
    /// given on the command line or by an environment variable, not when
    /// they hold their default.
    ///
    /// A CLI that sends the lowest version its user needs starts from the
    /// latest start of these spans.
    #[must_use]
    pub fn used(&self, matches: &ArgMatches) -> Vec<(String, VersionSpan)> {
        let mut used = Vec::new();
        let mut path = String::new();
        let mut level = Some(matches);
        while let Some(matches) = level {
            if !path.is_empty() {
                if let Some(span) = self.command_span(&path) {
                    used.push((format!("command `{path}`"), span));
                }
            }
            for option in self.options.iter().filter(|o| o.command == path) {
                let present = matches.ids().any(|id| id.as_str() == option.id);
                let given = present
                    && matches!(
                        matches.value_source(&option.id),
                        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
                    );
                if given {
                    let name = option
                        .display
                        .clone()
                        .unwrap_or_else(|| format!("--{}", option.id.replace('_', "-")));
                    let feature = if path.is_empty() {
                        format!("option {name}")
                    } else {
                        format!("option {name} of `{path}`")
                    };
                    used.push((feature, option.span));
                }
            }
            level = matches.subcommand().map(|(name, sub)| {
                if !path.is_empty() {
                    path.push(' ');
                }
                path.push_str(name);
                sub
            });
        }
        used
    }

    /// Checks the subcommand and options used in `matches` against
    /// `version`. Options count when given on the command line or by an
    /// environment variable, not when they hold their default.
    ///
    /// # Errors
    ///
    /// Returns an error ([`Error::is_gate`]) naming the first subcommand or
    /// option whose span excludes `version`, its span and the version.
    pub fn validate(&self, matches: &ArgMatches, version: Version) -> Result<(), Error> {
        for (feature, span) in self.used(matches) {
            check_span(&feature, span, version)?;
        }
        Ok(())
    }
}

/// `a  b ` -> `a b`.
fn normalize_path(path: &str) -> String {
    path.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How an option is written in messages: `--long`, `-s`, or its id.
fn arg_display(arg: &Arg) -> String {
    if let Some(long) = arg.get_long() {
        format!("--{long}")
    } else if let Some(short) = arg.get_short() {
        format!("-{short}")
    } else {
        arg.get_id().to_string()
    }
}

/// Applies `edit` to the subcommand at `names` (or `command` itself when
/// `names` is empty), checking that each exists first (clap panics on an
/// unknown name).
fn edit_at(
    command: Command,
    names: &[&str],
    edit: &mut dyn FnMut(Command) -> Result<Command, Error>,
) -> Result<Command, Error> {
    let Some((first, rest)) = names.split_first() else {
        return edit(command);
    };
    let Some(sub) = command.find_subcommand(first) else {
        return Err(Error::builder(format!("no subcommand {first:?}")));
    };
    let name = sub.get_name().to_owned();
    let edited = edit_at(sub.clone(), rest, edit)?;
    Ok(command.mut_subcommand(name, |_| edited))
}

/// The `--os-<service>-api-version` option: env `OS_<SERVICE>_API_VERSION`,
/// default `latest`, parsed with the CLI grammar
/// ([`VersionRequest::parse_cli`]: `2.10`, `2`, `2.latest`, `latest`,
/// `None`) while clap parses, so a bad value fails before anything else
/// happens. Read it with `matches.get_one::<VersionRequest>(id)`, where the
/// id is `os_<service>_api_version` (dashes become underscores).
#[must_use]
pub fn api_version_arg(service_type: &str) -> Arg {
    let slug = service_type.to_ascii_lowercase().replace('_', "-");
    let id = format!("os_{}_api_version", slug.replace('-', "_"));
    let env = format!(
        "OS_{}_API_VERSION",
        slug.replace('-', "_").to_ascii_uppercase()
    );
    Arg::new(id)
        .long(format!("os-{slug}-api-version"))
        .env(env)
        .value_name("VERSION")
        .default_value("latest")
        .value_parser(parse_api_version)
        .help(format!(
            "The {service_type} API version: X.Y, X.latest, latest, X (no microversion) or None"
        ))
}

/// The value parser of [`api_version_arg`]: [`VersionRequest::parse_cli`].
///
/// # Errors
///
/// Returns the core crate's error, which quotes the input and says the
/// expected form "X.Y, X.latest or latest".
pub fn parse_api_version(
    text: &str,
) -> Result<VersionRequest, microversion::InvalidVersionRequest> {
    VersionRequest::parse_cli(text)
}

#[cfg(test)]
mod tests {
    use clap::ArgAction;

    use super::*;

    fn cli() -> Command {
        Command::new("tool")
            .arg(
                Arg::new("verbose")
                    .long("verbose")
                    .action(ArgAction::SetTrue),
            )
            .arg(
                Arg::new("fields")
                    .long("fields")
                    .default_value("all")
                    .help("Fields to show"),
            )
            .subcommand(
                Command::new("server").subcommand(
                    Command::new("list")
                        .about("List servers")
                        .arg(Arg::new("tag").long("tag").help("Filter by tag"))
                        .arg(Arg::new("host").short('H')),
                ),
            )
            .subcommand(Command::new("volume-attachments"))
    }

    fn versions() -> CliVersions {
        CliVersions::new()
            .command("server  list", VersionSpan::from_static("2.1 - latest"))
            .command("volume-attachments", VersionSpan::from_static("2.1 - 2.88"))
            .option(
                "server list",
                "tag",
                VersionSpan::from_static("2.26 - latest"),
            )
            .option(
                "server list",
                "host",
                VersionSpan::from_static("2.9 - latest"),
            )
            .option("", "fields", VersionSpan::from_static("2.30 - latest"))
    }

    fn v(s: &'static str) -> Version {
        Version::from_static(s)
    }

    #[test]
    fn help_suffixes() {
        let mut versions = versions();
        let mut cmd = versions.apply(cli()).unwrap();
        let server = cmd.find_subcommand_mut("server").unwrap();
        let list = server.find_subcommand_mut("list").unwrap();
        assert_eq!(
            list.get_about().unwrap().to_string(),
            "List servers (supported by API versions 2.1 - latest)"
        );
        let tag = list.get_arguments().find(|a| a.get_id() == "tag").unwrap();
        assert_eq!(
            tag.get_help().unwrap().to_string(),
            "Filter by tag (supported by API versions 2.26 - latest)"
        );
        let host = list.get_arguments().find(|a| a.get_id() == "host").unwrap();
        assert_eq!(
            host.get_help().unwrap().to_string(),
            "(supported by API versions 2.9 - latest)"
        );
        let att = cmd.find_subcommand("volume-attachments").unwrap();
        assert_eq!(
            att.get_about().unwrap().to_string(),
            "(supported by API versions 2.1 - 2.88)"
        );
        let help = cmd.render_long_help().to_string();
        assert!(
            help.contains("Fields to show (supported by API versions 2.30 - latest)"),
            "{help}"
        );
    }

    #[test]
    fn unknown_names_fail_to_apply() {
        let err = CliVersions::new()
            .command("server show", VersionSpan::from_static("2.1 - latest"))
            .apply(cli())
            .unwrap_err();
        assert!(err.is_builder());
        assert_eq!(
            err.to_string(),
            "command `server show`: invalid configuration: no subcommand \"show\""
        );
        let err = CliVersions::new()
            .option(
                "server list",
                "nope",
                VersionSpan::from_static("2.1 - latest"),
            )
            .apply(cli())
            .unwrap_err();
        assert!(
            err.to_string().contains("no option with id \"nope\""),
            "{err}"
        );
        let err = CliVersions::new()
            .command(" ", VersionSpan::from_static("2.1 - latest"))
            .apply(cli())
            .unwrap_err();
        assert!(err.is_builder());
    }

    #[test]
    fn validation_names_the_span() {
        let mut versions = versions();
        let cmd = versions.apply(cli()).unwrap();
        let m = cmd
            .clone()
            .try_get_matches_from(["tool", "server", "list", "--tag", "a", "-H", "h1"])
            .unwrap();
        assert!(versions.validate(&m, v("2.26")).is_ok());
        let err = versions.validate(&m, v("2.10")).unwrap_err();
        assert!(err.is_gate());
        assert_eq!(
            err.to_string(),
            "option --tag of `server list` is supported by API versions 2.26 - latest; the version in use is 2.10"
        );
        let err = versions.validate(&m, v("2.5")).unwrap_err();
        assert!(err.to_string().starts_with("option --tag"), "{err}");
        let m = cmd
            .clone()
            .try_get_matches_from(["tool", "server", "list", "-H", "h1"])
            .unwrap();
        assert_eq!(
            versions.validate(&m, v("2.5")).unwrap_err().to_string(),
            "option -H of `server list` is supported by API versions 2.9 - latest; the version in use is 2.5"
        );
        // A default value is not a use of the option.
        let m = cmd
            .clone()
            .try_get_matches_from(["tool", "volume-attachments"])
            .unwrap();
        assert!(versions.validate(&m, v("2.20")).is_ok());
        let err = versions.validate(&m, v("2.89")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "command `volume-attachments` is supported by API versions 2.1 - 2.88; the version in use is 2.89"
        );
        let m = cmd
            .try_get_matches_from(["tool", "--fields", "id", "volume-attachments"])
            .unwrap();
        assert_eq!(
            versions.validate(&m, v("2.20")).unwrap_err().to_string(),
            "option --fields is supported by API versions 2.30 - latest; the version in use is 2.20"
        );
    }

    #[test]
    fn used_lists_what_the_command_line_uses() {
        let mut versions = versions();
        let cmd = versions.apply(cli()).unwrap();
        let m = cmd
            .clone()
            .try_get_matches_from(["tool", "--fields", "id", "server", "list", "--tag", "a"])
            .unwrap();
        let used: Vec<(String, String)> = versions
            .used(&m)
            .into_iter()
            .map(|(what, span)| (what, span.to_string()))
            .collect();
        assert_eq!(
            used,
            [
                ("option --fields".to_owned(), "2.30 - latest".to_owned()),
                (
                    "command `server list`".to_owned(),
                    "2.1 - latest".to_owned()
                ),
                (
                    "option --tag of `server list`".to_owned(),
                    "2.26 - latest".to_owned()
                ),
            ]
        );
        // Defaults are not uses.
        let m = cmd
            .try_get_matches_from(["tool", "server", "list"])
            .unwrap();
        assert_eq!(versions.used(&m).len(), 1);
    }

    #[test]
    fn validation_without_apply_uses_the_id() {
        let versions = versions();
        let m = cli()
            .try_get_matches_from(["tool", "server", "list", "--tag", "a"])
            .unwrap();
        assert!(
            versions
                .validate(&m, v("2.2"))
                .unwrap_err()
                .to_string()
                .starts_with("option --tag of `server list`")
        );
    }

    #[test]
    fn api_version_option() {
        let cmd = Command::new("nova").arg(api_version_arg("compute"));
        let m = cmd.clone().try_get_matches_from(["nova"]).unwrap();
        assert_eq!(
            m.get_one::<VersionRequest>("os_compute_api_version"),
            Some(&VersionRequest::Latest)
        );
        let m = cmd
            .clone()
            .try_get_matches_from(["nova", "--os-compute-api-version", " 2.53 "])
            .unwrap();
        assert_eq!(
            m.get_one::<VersionRequest>("os_compute_api_version"),
            Some(&VersionRequest::Exact(v("2.53")))
        );
        let m = cmd
            .clone()
            .try_get_matches_from(["nova", "--os-compute-api-version", "None"])
            .unwrap();
        assert_eq!(
            m.get_one::<VersionRequest>("os_compute_api_version"),
            Some(&VersionRequest::Unversioned)
        );
        let err = cmd
            .try_get_matches_from(["nova", "--os-compute-api-version", "spam"])
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("expected X.Y, X.latest or latest"), "{text}");
        let arg = api_version_arg("shared-file-system");
        assert_eq!(arg.get_long(), Some("os-shared-file-system-api-version"));
        assert_eq!(
            arg.get_env()
                .map(|e| e.to_string_lossy().into_owned())
                .as_deref(),
            Some("OS_SHARED_FILE_SYSTEM_API_VERSION")
        );
    }
}
