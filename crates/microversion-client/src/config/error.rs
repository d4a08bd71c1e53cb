//! [`ConfigError`]: a cloud configuration that cannot be used, named by
//! file, cloud and key.

use std::fmt;
use std::path::PathBuf;

/// Where a setting came from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Source {
    /// A key of a cloud in a clouds.yaml or secure.yaml file.
    File {
        /// The file.
        path: PathBuf,
        /// The cloud.
        cloud: String,
        /// The key as written: `auth.password`, `region_name`.
        key: String,
    },
    /// An `OS_*` environment variable.
    Env(String),
    /// A command-line option (`--os-password`) or a value set in code.
    Option(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File { path, cloud, key } => {
                write!(f, "{}: cloud {cloud:?}: key {key}", path.display())
            }
            Self::Env(name) => write!(f, "environment variable {name}"),
            Self::Option(name) => write!(f, "option {name}"),
        }
    }
}

/// A cloud configuration that cannot be used. Found when it is loaded,
/// before any request; the message names the file, the cloud and the key
/// (or the variable or option) at fault, and what is accepted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A cloud was named but no clouds file was found.
    #[error("cloud {cloud:?}: no clouds.yaml found (looked for {looked})")]
    NoCloudsFile {
        /// The cloud asked for.
        cloud: String,
        /// The paths tried.
        looked: String,
    },
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file is not YAML (or JSON) of the clouds.yaml shape.
    #[error("{} is not a valid clouds file: {reason}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the parser said, with the line and column.
        reason: String,
    },
    /// The cloud is not in the file.
    #[error("cloud {cloud:?} is not in {} (it has: {available})", path.display())]
    UnknownCloud {
        /// The cloud asked for.
        cloud: String,
        /// The clouds file.
        path: PathBuf,
        /// The clouds it has, joined.
        available: String,
    },
    /// Neither a cloud nor `OS_*` variables say which cloud to use.
    #[error(
        "no cloud configured: name one with --os-cloud or OS_CLOUD (from clouds.yaml), or set \
         OS_AUTH_URL and the other OS_* variables"
    )]
    NothingConfigured,
    /// A needed setting is missing.
    #[error("{place}: missing {key} (needed {why}){extra}", extra = also(.hint))]
    Missing {
        /// `/path/clouds.yaml: cloud "x"`, or `the OS_* variables`.
        place: String,
        /// The key, as clouds.yaml writes it (`auth.password`).
        key: String,
        /// Why it is needed (`by auth_type password`).
        why: String,
        /// Other places it may be given (`OS_PASSWORD, --os-password`).
        hint: String,
    },
    /// A setting has a value that cannot be used.
    #[error("{origin}: invalid value{value}: {reason}", value = quoted(.value.as_deref()))]
    Invalid {
        /// Where the value came from.
        origin: Source,
        /// The value, unless it is a secret.
        value: Option<String>,
        /// What is wrong and what is accepted.
        reason: String,
    },
}

fn also(hint: &str) -> String {
    if hint.is_empty() {
        String::new()
    } else {
        format!("; it may also be given as {hint}")
    }
}

fn quoted(value: Option<&str>) -> String {
    value.map_or_else(String::new, |v| format!(" {v:?}"))
}
