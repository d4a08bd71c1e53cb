//! Configuration: upstream's `placement.conf` keys, then environment
//! variables and command-line flags, which override the file.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, bail};
use microversion_server::openapi::ResponseValidation;

use crate::cors::CorsConfig;
use crate::db::PoolSettings;
use crate::keystone_authtoken::KeystoneAuthtoken;
pub use crate::oslo_config::{ConfigFiles, SearchPath};

/// The default listen address (upstream's port).
pub const DEFAULT_BIND: &str = "127.0.0.1:8778";
/// The default database: a SQLite file in the working directory.
pub const DEFAULT_DATABASE: &str = "sqlite:///placement.db";
/// Upstream's default project and user of consumers whose allocations
/// were written without them (before microversion 1.8).
pub const DEFAULT_INCOMPLETE_CONSUMER_ID: &str = "00000000-0000-0000-0000-000000000000";
/// Upstream's default number of tries of an allocation write that meets a
/// concurrent provider change.
pub const DEFAULT_ALLOCATION_CONFLICT_RETRY_COUNT: u32 = 10;
/// The default largest request body, in bytes (1 MiB); a larger one is
/// refused with 413 before any handler reads it.
pub const DEFAULT_MAX_BODY_SIZE: usize = 1024 * 1024;
/// How long, by default, the requests in flight when the service is told
/// to stop may take to finish (30 s, systemd's default before it kills).
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// Which default policy rules are enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PolicyDefaults {
    /// The legacy rules: `enforce_new_defaults = false`, with scope still
    /// checked (`enforce_scope = true`), as upstream's functional tests run
    /// them: oslo.policy 6 always checks scope, so a system-scoped token
    /// is refused by project-scoped rules even with the legacy rules.
    Legacy,
    /// Secure RBAC: the new defaults with scope checks (upstream's default).
    Secure,
}

/// How requests are authenticated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthStrategy {
    /// Upstream's `noauth2`: the token `user[:project]` names the caller;
    /// the user `admin` has the admin role. Nothing is verified, so it is
    /// only ever used when asked for (development and tests).
    Noauth2,
    /// Keystone tokens, validated as keystonemiddleware does with the
    /// settings of `[keystone_authtoken]` (the default, as upstream's).
    #[default]
    Keystone,
}

impl AuthStrategy {
    /// Reads `[api] auth_strategy`'s values.
    fn from_conf(value: &str) -> Option<AuthStrategy> {
        match value.trim() {
            "noauth2" => Some(AuthStrategy::Noauth2),
            "keystone" => Some(AuthStrategy::Keystone),
            _ => None,
        }
    }
}

/// Why the service refuses to start with the keystone strategy and no
/// `[keystone_authtoken]` settings: it says what to write, and how to ask
/// for the open strategy instead.
pub const KEYSTONE_NEEDS_SETTINGS: &str = "auth strategy keystone (the default, as upstream's) \
    needs the [keystone_authtoken] section of a placement.conf: auth_type, auth_url, username, \
    password, project_name, user_domain_name, project_domain_name. For development without \
    Keystone, ask for noauth2, which trusts every caller: --auth-strategy noauth2, \
    PLACEMENT_AUTH_STRATEGY=noauth2 or [api] auth_strategy = noauth2";

/// What the service logs at warning level on start with noauth2.
pub const NOAUTH2_WARNING: &str = "auth strategy noauth2: requests are not authenticated \
    (the token names the caller, and the token admin is an administrator); for development \
    and tests only, use keystone in a cloud";

/// The settings the service runs with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Where to listen.
    pub bind: SocketAddr,
    /// The database URL, in upstream's forms.
    pub database: String,
    /// `[placement_database]`'s pool and retry settings (oslo.db's keys).
    pub database_pool: PoolSettings,
    /// How requests are authenticated.
    pub auth_strategy: AuthStrategy,
    /// `[keystone_authtoken]`, read when the strategy is `keystone`.
    pub keystone: Option<KeystoneAuthtoken>,
    /// oslo.policy's `enforce_new_defaults`.
    pub enforce_new_defaults: bool,
    /// oslo.policy's `enforce_scope`.
    pub enforce_scope: bool,
    /// A policy file overriding default rules (oslo.policy YAML).
    pub policy_file: Option<PathBuf>,
    /// `[placement] incomplete_consumer_project_id`: the project of
    /// allocations written without one (before 1.8).
    pub incomplete_consumer_project_id: String,
    /// `[placement] incomplete_consumer_user_id`: the user of allocations
    /// written without one (before 1.8).
    pub incomplete_consumer_user_id: String,
    /// `[placement] allocation_conflict_retry_count`: how many times an
    /// allocation write is tried when providers change concurrently.
    pub allocation_conflict_retry_count: u32,
    /// The largest request body accepted, in bytes (`--max-body-size`,
    /// `[oslo_middleware] max_request_body_size`); larger is 413.
    pub max_body_size: usize,
    /// `[placement] max_allocation_candidates`: the most allocation
    /// candidates one request generates (before `limit`); `-1` (the
    /// default) means no bound but the data's.
    pub max_allocation_candidates: i64,
    /// `[placement] allocation_candidates_generation_strategy`: the order
    /// in which the viable trees give their candidates.
    pub allocation_candidates_strategy: CandidateStrategy,
    /// `[placement] randomize_allocation_candidates`: `limit` keeps a
    /// random sample of the candidates rather than the first ones, so
    /// that Nova's `limit=1000` in a large cloud does not send every boot
    /// to the same hosts; off by default, as upstream's.
    pub randomize_allocation_candidates: bool,
    /// `[cors]`: cross-origin resource sharing, on when `allowed_origin`
    /// is set.
    pub cors: Option<CorsConfig>,
    /// `[openapi] enabled`: serve the OpenAPI documents at
    /// `/openapi.json` (upstream has no such path; off by default).
    pub openapi: bool,
    /// `[api] response_validation` (Nova's key; upstream Placement has
    /// none): check every response against the OpenAPI documents of its
    /// version, `error` (a mismatch answers 500: for tests), `warn` (it is
    /// logged) or `ignore`/`off` (the default: nothing is checked).
    pub response_validation: ResponseValidation,
    /// `[openapi] reference_page`: serve an API reference page with a
    /// version picker at `/api-ref`, reading the documents of
    /// `/openapi.json` (needs `[openapi] enabled`; off by default).
    pub reference_page: bool,
    /// How long the requests in flight when SIGTERM or SIGINT comes may
    /// take to finish before their connections are dropped
    /// (`--shutdown-timeout`; upstream has no such key).
    pub shutdown_timeout: Duration,
    /// `[DEFAULT] debug` (`--debug`): log at debug level, not info.
    pub debug: bool,
    /// `[DEFAULT] log_file` (`--log-file`), relative to `[DEFAULT]
    /// log_dir` when that is set (`placement-api.log` there when only
    /// `log_dir` is): the log is appended to this file rather than written
    /// to standard output.
    pub log_file: Option<PathBuf>,
    /// `[DEFAULT] use_json` (`--log-json`): one JSON object per log line
    /// rather than oslo.log's text lines.
    pub log_json: bool,
    /// `[DEFAULT] use_stderr`: the log (also) goes to standard error; with
    /// neither this nor `log_file`, it goes to standard output.
    pub log_stderr: bool,
    /// `[microversions] min_version` and `max_version` (settings of ours;
    /// upstream has neither): the operator's raised minimum and capped
    /// maximum, inside the code's 1.0 to 1.39. Reloaded on SIGHUP.
    pub microversions: ServedVersions,
    /// `[metrics] bind` (`--metrics-bind`): where to serve Prometheus
    /// metrics at `/metrics`; off when unset (upstream has no such key).
    pub metrics_bind: Option<SocketAddr>,
    /// `[oslo_middleware] enable_proxy_headers_parsing`: take the client's
    /// address, the scheme, host and path prefix from `Forwarded` and
    /// `X-Forwarded-*` (see [`crate::proxy`]); off by default.
    pub enable_proxy_headers_parsing: bool,
    /// `[server]` (flags `--tls-cert-file`, `--unix-socket`,
    /// `--root-path`, ...): the listener and the path prefix, settings of
    /// ours (see [`crate::listen`]).
    pub server: crate::listen::ServerSettings,
    /// What loading the settings noticed that the operator should hear
    /// (a development default in force, say): logged at warning level
    /// when the service starts, once the log is set up.
    pub warnings: Vec<String>,
}

/// oslo.policy's default policy file, looked up in the configuration
/// directories when `[oslo_policy] policy_file` is not set.
pub const DEFAULT_POLICY_FILE: &str = "policy.yaml";

/// The keys this service reads, by group; any other key of these groups
/// is logged as ignored. (`[keystone_authtoken]` checks its own keys.)
const KNOWN_KEYS: &[(&str, &[&str])] = &[
    (
        "DEFAULT",
        &[
            "auth_strategy",
            "debug",
            "use_json",
            "use_stderr",
            "log_file",
            "log_dir",
        ],
    ),
    ("api", &["auth_strategy", "response_validation"]),
    (
        "placement_database",
        &[
            "connection",
            "max_pool_size",
            "max_overflow",
            "pool_timeout",
            "connection_recycle_time",
            "max_retries",
            "retry_interval",
        ],
    ),
    (
        "placement",
        &[
            "incomplete_consumer_project_id",
            "incomplete_consumer_user_id",
            "allocation_conflict_retry_count",
            "max_allocation_candidates",
            "allocation_candidates_generation_strategy",
            "randomize_allocation_candidates",
        ],
    ),
    (
        "oslo_policy",
        &["enforce_new_defaults", "enforce_scope", "policy_file"],
    ),
    (
        "oslo_middleware",
        &["max_request_body_size", "enable_proxy_headers_parsing"],
    ),
    (crate::listen::GROUP, crate::listen::KEYS),
    (
        "cors",
        &[
            "allowed_origin",
            "allow_credentials",
            "expose_headers",
            "max_age",
            "allow_methods",
            "allow_headers",
        ],
    ),
    ("openapi", &["enabled", "reference_page"]),
    ("microversions", &["min_version", "max_version"]),
    ("metrics", &["bind"]),
];

/// One group's values, read as a section.
struct Group<'a>(&'a ConfigFiles, &'a str);

impl Group<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(self.1, key)
    }
}

/// `[microversions]`: the bounds an operator set on the versions served
/// (unset: the code's own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServedVersions {
    /// `min_version`: requests below it get 406; requests without a
    /// version are served at it.
    pub min_version: Option<microversion::Version>,
    /// `max_version`: `latest` means it, and versions above get 406.
    pub max_version: Option<microversion::Version>,
}

impl ServedVersions {
    /// Reads `[microversions]` of `files`: each bound a version as a
    /// client writes it in the header (`1.10`), and the range they make
    /// inside the code's range.
    ///
    /// # Errors
    ///
    /// Names the file, section and key of a value that is not a version,
    /// a minimum above the maximum, or a range outside the code's.
    pub fn read(files: &ConfigFiles) -> anyhow::Result<ServedVersions> {
        let at = |key: &str| files.origin("microversions", key).display().to_string();
        let version = |key: &str| -> anyhow::Result<Option<microversion::Version>> {
            let Some(text) = files.get("microversions", key) else {
                return Ok(None);
            };
            let text = text.trim();
            text.parse().map(Some).map_err(|e| {
                anyhow::anyhow!(
                    "{}: [microversions] {key} = {text} is not a version ({e}); write it as in the header, such as 1.10",
                    at(key)
                )
            })
        };
        let served = ServedVersions {
            min_version: version("min_version")?,
            max_version: version("max_version")?,
        };
        crate::versioning::served_range(served).with_context(|| {
            let key = if served.min_version.is_some() {
                "min_version"
            } else {
                "max_version"
            };
            format!("{}: [microversions]", at(key))
        })?;
        Ok(served)
    }
}

/// oslo.config's boolean spellings.
fn parse_bool(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// The order in which allocation candidates are generated from the
/// viable trees (upstream's `allocation_candidates_generation_strategy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CandidateStrategy {
    /// Every candidate of the first tree, then of the next.
    #[default]
    DepthFirst,
    /// One candidate of each tree in turn.
    BreadthFirst,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: DEFAULT_BIND
                .parse()
                .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 8778))),
            database: DEFAULT_DATABASE.to_owned(),
            database_pool: PoolSettings::default(),
            auth_strategy: AuthStrategy::Keystone,
            keystone: None,
            enforce_new_defaults: true,
            enforce_scope: true,
            policy_file: None,
            incomplete_consumer_project_id: DEFAULT_INCOMPLETE_CONSUMER_ID.to_owned(),
            incomplete_consumer_user_id: DEFAULT_INCOMPLETE_CONSUMER_ID.to_owned(),
            allocation_conflict_retry_count: DEFAULT_ALLOCATION_CONFLICT_RETRY_COUNT,
            max_body_size: DEFAULT_MAX_BODY_SIZE,
            max_allocation_candidates: -1,
            allocation_candidates_strategy: CandidateStrategy::DepthFirst,
            randomize_allocation_candidates: false,
            cors: None,
            openapi: false,
            response_validation: ResponseValidation::Off,
            reference_page: false,
            shutdown_timeout: DEFAULT_SHUTDOWN_TIMEOUT,
            debug: false,
            log_file: None,
            log_json: false,
            log_stderr: false,
            microversions: ServedVersions::default(),
            metrics_bind: None,
            enable_proxy_headers_parsing: false,
            server: crate::listen::ServerSettings::default(),
            warnings: Vec::new(),
        }
    }
}

/// What may override the file: flags or their environment variables.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--bind`.
    pub bind: Option<SocketAddr>,
    /// `--database`.
    pub database: Option<String>,
    /// `--policy`.
    pub policy: Option<PolicyDefaults>,
    /// `--auth-strategy`.
    pub auth_strategy: Option<AuthStrategy>,
    /// `--response-validation`.
    pub response_validation: Option<ResponseValidation>,
    /// `--policy-file`.
    pub policy_file: Option<PathBuf>,
    /// `--max-body-size`.
    pub max_body_size: Option<usize>,
    /// `--shutdown-timeout`.
    pub shutdown_timeout: Option<Duration>,
    /// `--debug` (only turns debug on, as oslo.config's flag).
    pub debug: bool,
    /// `--log-file`.
    pub log_file: Option<PathBuf>,
    /// `--log-json` (only turns JSON on).
    pub log_json: bool,
    /// `--metrics-bind`.
    pub metrics_bind: Option<SocketAddr>,
    /// `--tls-cert-file`, `--tls-key-file`, `--tls-client-ca-file`,
    /// `--unix-socket`, `--root-path`: each set one wins over the file.
    pub server: crate::listen::ServerSettings,
}

impl Config {
    /// Reads the settings of `files` (found and merged as oslo.config
    /// does: [`ConfigFiles`]) and applies `overrides`.
    ///
    /// The auth strategy is keystone unless noauth2 is asked for (by the
    /// file, a flag or its environment variable); the keystone settings
    /// are read here and required when the service starts
    /// ([`crate::state::AppState::new`]), so that `db sync` needs none. A
    /// file must name the database (`[placement_database] connection`,
    /// or `--database`), as upstream refuses to start without one; with
    /// neither a file nor `--database`, the embedded SQLite file of
    /// [`DEFAULT_DATABASE`] is used, with a warning that it is for
    /// development only.
    ///
    /// # Errors
    ///
    /// Fails when a value is invalid (naming the file, section and key),
    /// or files are read and none names the database.
    pub fn load(files: &ConfigFiles, overrides: Overrides) -> anyhow::Result<Config> {
        let mut config = Config::default();
        config.read_file(files)?;
        config.warnings.extend(files.warnings().iter().cloned());
        config.warnings.extend(files.unknown_keys(KNOWN_KEYS));
        if let Some(bind) = overrides.bind {
            config.bind = bind;
        }
        let file_names_database = files
            .get("placement_database", "connection")
            .is_some_and(|c| !c.trim().is_empty());
        match (overrides.database, files.files().is_empty()) {
            (Some(database), _) => config.database = database,
            (None, false) if !file_names_database => bail!(
                "{}: [placement_database] connection is not set: name the database there \
                 (mysql+pymysql://USER:PASSWORD@HOST/placement, postgresql://USER@HOST/placement \
                 or sqlite:////PATH) or with --database",
                files.origin("placement_database", "connection").display()
            ),
            (None, false) => {}
            (None, true) => config.warnings.push(format!(
                "no configuration file and no --database: serving the embedded SQLite database \
                 {DEFAULT_DATABASE} (placement.db in the working directory), for development only"
            )),
        }
        if let Some(auth) = overrides.auth_strategy {
            config.auth_strategy = auth;
        }
        if let Some(mode) = overrides.response_validation {
            config.response_validation = mode;
        }
        if let Some(policy) = overrides.policy {
            config.enforce_new_defaults = policy == PolicyDefaults::Secure;
            config.enforce_scope = true;
        }
        if let Some(file) = overrides.policy_file {
            config.policy_file = Some(file);
        }
        if let Some(size) = overrides.max_body_size {
            config.max_body_size = size;
        }
        if let Some(timeout) = overrides.shutdown_timeout {
            config.shutdown_timeout = timeout;
        }
        config.debug |= overrides.debug;
        config.log_json |= overrides.log_json;
        if let Some(file) = overrides.log_file {
            config.log_file = Some(file);
        }
        if let Some(bind) = overrides.metrics_bind {
            config.metrics_bind = Some(bind);
        }
        config.server = std::mem::take(&mut config.server).overridden_by(overrides.server);
        config.server.check(overrides.bind.is_some())?;
        if let (AuthStrategy::Keystone, Some((section, path))) =
            (config.auth_strategy, files.section("keystone_authtoken"))
        {
            config.keystone = Some(KeystoneAuthtoken::read(&section, path)?);
        }
        Ok(config)
    }

    /// Whether the service can authenticate as configured: the keystone
    /// strategy needs the `[keystone_authtoken]` settings.
    ///
    /// # Errors
    ///
    /// [`KEYSTONE_NEEDS_SETTINGS`] when they are missing.
    pub fn check_auth(&self) -> anyhow::Result<()> {
        if self.auth_strategy == AuthStrategy::Keystone && self.keystone.is_none() {
            bail!(KEYSTONE_NEEDS_SETTINGS);
        }
        Ok(())
    }

    fn read_file(&mut self, files: &ConfigFiles) -> anyhow::Result<()> {
        let get = |section: &str, key: &str| files.get(section, key);
        let at = |section: &str, key: &str| files.origin(section, key).display().to_string();
        if let Some(connection) = get("placement_database", "connection") {
            self.database = connection.trim().to_owned();
        }
        self.read_pool(files)?;
        // `[DEFAULT] auth_strategy` is the option's old place, read when
        // `[api]` does not set it (as oslo.config's deprecated group).
        let strategy = [("api", "auth_strategy"), ("DEFAULT", "auth_strategy")]
            .into_iter()
            .find_map(|(section, key)| Some((section, get(section, key)?)));
        if let Some((section, strategy)) = strategy {
            self.auth_strategy = AuthStrategy::from_conf(strategy).with_context(|| {
                format!(
                    "{}: [{section}] auth_strategy = {} is not supported; the accepted values are keystone and noauth2",
                    at(section, "auth_strategy"),
                    strategy.trim()
                )
            })?;
        }
        let boolean = |key: &str| -> anyhow::Result<Option<bool>> {
            match get("oslo_policy", key).map(|v| v.trim().to_ascii_lowercase()) {
                None => Ok(None),
                Some(v) if matches!(v.as_str(), "true" | "1" | "yes" | "on") => Ok(Some(true)),
                Some(v) if matches!(v.as_str(), "false" | "0" | "no" | "off") => Ok(Some(false)),
                Some(v) => bail!(
                    "{}: [oslo_policy] {key} = {v} is not a boolean; use true or false",
                    at("oslo_policy", key)
                ),
            }
        };
        if let Some(v) = boolean("enforce_new_defaults")? {
            self.enforce_new_defaults = v;
        }
        if let Some(v) = boolean("enforce_scope")? {
            self.enforce_scope = v;
        }
        if let Some(id) = get("placement", "incomplete_consumer_project_id") {
            self.incomplete_consumer_project_id = id.trim().to_owned();
        }
        if let Some(id) = get("placement", "incomplete_consumer_user_id") {
            self.incomplete_consumer_user_id = id.trim().to_owned();
        }
        if let Some(count) = get("placement", "allocation_conflict_retry_count") {
            self.allocation_conflict_retry_count = count.trim().parse().with_context(|| {
                format!(
                    "{}: [placement] allocation_conflict_retry_count = {count} is not a non-negative integer",
                    at("placement", "allocation_conflict_retry_count")
                )
            })?;
        }
        if let Some(max) = get("placement", "max_allocation_candidates") {
            self.max_allocation_candidates = max.trim().parse().with_context(|| {
                format!(
                    "{}: [placement] max_allocation_candidates = {max} is not an integer",
                    at("placement", "max_allocation_candidates")
                )
            })?;
        }
        if let Some(strategy) = get("placement", "allocation_candidates_generation_strategy") {
            self.allocation_candidates_strategy = match strategy.trim() {
                "depth-first" => CandidateStrategy::DepthFirst,
                "breadth-first" => CandidateStrategy::BreadthFirst,
                other => bail!(
                    "{}: [placement] allocation_candidates_generation_strategy = {other} is not depth-first or breadth-first",
                    at("placement", "allocation_candidates_generation_strategy")
                ),
            };
        }
        if let Some(v) = get("placement", "randomize_allocation_candidates") {
            self.randomize_allocation_candidates = parse_bool(v).with_context(|| {
                format!(
                    "{}: [placement] randomize_allocation_candidates = {} is not a boolean; use true or false",
                    at("placement", "randomize_allocation_candidates"),
                    v.trim()
                )
            })?;
        }
        if let Some(size) = get("oslo_middleware", "max_request_body_size") {
            self.max_body_size = size.trim().parse().with_context(|| {
                format!(
                    "{}: [oslo_middleware] max_request_body_size = {size} is not a non-negative integer",
                    at("oslo_middleware", "max_request_body_size")
                )
            })?;
        }
        if let Some(v) = get("oslo_middleware", "enable_proxy_headers_parsing") {
            self.enable_proxy_headers_parsing = parse_bool(v).with_context(|| {
                format!(
                    "{}: [oslo_middleware] enable_proxy_headers_parsing = {} is not a boolean; use true or false",
                    at("oslo_middleware", "enable_proxy_headers_parsing"),
                    v.trim()
                )
            })?;
        }
        self.server = crate::listen::ServerSettings::read(files)?;
        self.read_cors(files)?;
        let boolean = |key: &str, v: &str| match v.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Ok(true),
            "false" | "0" | "no" | "off" => Ok(false),
            other => Err(anyhow::anyhow!(
                "{}: [openapi] {key} = {other} is not a boolean; use true or false",
                at("openapi", key)
            )),
        };
        if let Some(v) = get("openapi", "enabled") {
            self.openapi = boolean("enabled", v)?;
        }
        if let Some(v) = get("api", "response_validation") {
            self.response_validation = v.trim().parse().with_context(|| {
                format!(
                    "{}: [api] response_validation = {} is not supported; \
                     the accepted values are error, warn and ignore",
                    at("api", "response_validation"),
                    v.trim()
                )
            })?;
        }
        if let Some(v) = get("openapi", "reference_page") {
            self.reference_page = boolean("reference_page", v)?;
        }
        if self.reference_page && !self.openapi {
            bail!(
                "{}: [openapi] reference_page = true needs [openapi] enabled = true: \
                 the page reads the documents at /openapi.json",
                at("openapi", "reference_page")
            );
        }
        self.read_logging(files)?;
        self.microversions = ServedVersions::read(files)?;
        if let Some(bind) = get("metrics", "bind") {
            let bind = bind.trim();
            self.metrics_bind = Some(bind.parse().with_context(|| {
                format!(
                    "{}: [metrics] bind = {bind} is not an address and port such as 127.0.0.1:9778",
                    at("metrics", "bind")
                )
            })?);
        }
        // oslo.policy's `policy_file` (default `policy.yaml`), looked up
        // as oslo.config's `find_file` does: in the configuration
        // directories, beside the files read, then in the default places.
        // A file named but found nowhere stays relative to the file that
        // named it, so that the policy's start says which file is missing.
        match get("oslo_policy", "policy_file").map(str::trim) {
            Some(file) => {
                let file = PathBuf::from(file);
                self.policy_file = Some(match files.find_file(&file) {
                    Some(found) if file.is_relative() => found,
                    _ => match (
                        file.is_relative(),
                        files.origin("oslo_policy", "policy_file").parent(),
                    ) {
                        (true, Some(dir)) => dir.join(file),
                        _ => file,
                    },
                });
            }
            None => self.policy_file = files.find_file(Path::new(DEFAULT_POLICY_FILE)),
        }
        Ok(())
    }

    /// oslo.db's pool and retry keys of `[placement_database]`: the most
    /// connections are `max_pool_size` + `max_overflow`, each defaulting
    /// to oslo.db's (5 and 50) when the other is set, and 16 in all when
    /// neither is.
    fn read_pool(&mut self, files: &ConfigFiles) -> anyhow::Result<()> {
        let group = "placement_database";
        let integer = |key: &str, least: i64| -> anyhow::Result<Option<i64>> {
            let Some(v) = files.get(group, key) else {
                return Ok(None);
            };
            let n: i64 = v
                .trim()
                .parse()
                .ok()
                .filter(|n| *n >= least)
                .with_context(|| {
                    format!(
                        "{}: [{group}] {key} = {} is not an integer of at least {least}",
                        files.origin(group, key).display(),
                        v.trim()
                    )
                })?;
            Ok(Some(n))
        };
        let seconds = |n: i64| Duration::from_secs(n.unsigned_abs());
        let pool_size = integer("max_pool_size", 1)?;
        let overflow = integer("max_overflow", 0)?;
        if pool_size.is_some() || overflow.is_some() {
            let total = pool_size.unwrap_or(5) + overflow.unwrap_or(50);
            self.database_pool.max_connections = u32::try_from(total).with_context(|| {
                format!(
                    "{}: [{group}] max_pool_size + max_overflow = {total} is more connections than can be opened",
                    files.origin(group, "max_pool_size").display()
                )
            })?;
        }
        if let Some(n) = integer("pool_timeout", 1)? {
            self.database_pool.acquire_timeout = seconds(n);
        }
        if let Some(n) = integer("connection_recycle_time", -1)? {
            self.database_pool.max_lifetime = (n > 0).then(|| seconds(n));
        }
        if let Some(n) = integer("max_retries", -1)? {
            self.database_pool.max_retries = u32::try_from(n).ok();
        }
        if let Some(n) = integer("retry_interval", 0)? {
            self.database_pool.retry_interval = seconds(n);
        }
        Ok(())
    }

    /// oslo.log's `[DEFAULT]` keys: `debug`, `use_json`, `use_stderr`,
    /// `log_file` and
    /// `log_dir` (alone, it means `log_dir/placement-api.log`).
    fn read_logging(&mut self, files: &ConfigFiles) -> anyhow::Result<()> {
        let at = |section: &str, key: &str| files.origin(section, key).display().to_string();
        let section = Group(files, "DEFAULT");
        for (key, field) in [
            ("debug", &mut self.debug),
            ("use_json", &mut self.log_json),
            ("use_stderr", &mut self.log_stderr),
        ] {
            if let Some(v) = section.get(key) {
                *field = parse_bool(v).with_context(|| {
                    format!(
                        "{}: [DEFAULT] {key} = {} is not a boolean; use true or false",
                        at("DEFAULT", key),
                        v.trim()
                    )
                })?;
            }
        }
        let dir = section
            .get("log_dir")
            .map(str::trim)
            .filter(|d| !d.is_empty());
        match section
            .get("log_file")
            .map(str::trim)
            .filter(|f| !f.is_empty())
        {
            Some(file) => {
                let file = PathBuf::from(file);
                // oslo.log: a relative log_file is under log_dir when set.
                self.log_file = Some(match dir {
                    Some(dir) if file.is_relative() => Path::new(dir).join(file),
                    _ => file,
                });
            }
            // oslo.log: log_dir alone names a file after the program.
            None => self.log_file = dir.map(|dir| Path::new(dir).join("placement-api.log")),
        }
        Ok(())
    }

    /// `[cors]`, oslo.middleware's options; CORS is on when
    /// `allowed_origin` lists an origin.
    fn read_cors(&mut self, files: &ConfigFiles) -> anyhow::Result<()> {
        if !files.has_group("cors") {
            return Ok(());
        }
        let at = |section: &str, key: &str| files.origin(section, key).display().to_string();
        let section = Group(files, "cors");
        let list = |key: &str| -> Option<Vec<String>> {
            section.get(key).map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
        };
        let mut cors = CorsConfig::default();
        if let Some(origins) = list("allowed_origin") {
            cors.allowed_origins = origins;
        }
        if let Some(v) = section.get("allow_credentials") {
            cors.allow_credentials = match v.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" | "on" => true,
                "false" | "0" | "no" | "off" => false,
                other => bail!(
                    "{}: [cors] allow_credentials = {other} is not a boolean; use true or false",
                    at("cors", "allow_credentials")
                ),
            };
        }
        if let Some(v) = list("expose_headers") {
            cors.expose_headers = v;
        }
        if let Some(v) = section.get("max_age") {
            cors.max_age = v.trim().parse().with_context(|| {
                format!(
                    "{}: [cors] max_age = {v} is not a non-negative integer",
                    at("cors", "max_age")
                )
            })?;
        }
        if let Some(v) = list("allow_methods") {
            cors.allow_methods = v;
        }
        if let Some(v) = list("allow_headers") {
            cors.allow_headers = v;
        }
        self.cors = (!cors.allowed_origins.is_empty()).then_some(cors);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `file` (when given) as the only configuration: the default
    /// places searched are in a directory that does not exist.
    fn load_conf(file: Option<&Path>, overrides: Overrides) -> anyhow::Result<Config> {
        let search = SearchPath {
            prog: "placement-api".to_owned(),
            root: Some(PathBuf::from("/nonexistent-placement-test-root")),
            ..SearchPath::default()
        };
        let files: Vec<PathBuf> = file.into_iter().map(Path::to_path_buf).collect();
        Config::load(&ConfigFiles::load(&files, &[], search)?, overrides)
    }

    /// Writes a placement.conf that names a database (a file must), then
    /// `text`.
    fn write_conf(path: &Path, text: &str) -> std::io::Result<()> {
        std::fs::write(
            path,
            format!("[placement_database]\nconnection = sqlite://\n{text}"),
        )
    }

    #[test]
    fn file_then_overrides() {
        let dir = std::env::temp_dir().join(format!("placement-conf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("placement.conf");
        std::fs::write(
            &path,
            "[placement_database]\nconnection = sqlite:////tmp/x.db\n[api]\nauth_strategy = noauth2\n\
             [oslo_policy]\nenforce_new_defaults = false\nenforce_scope = False\npolicy_file = policy.yaml\n\
             [placement]\nincomplete_consumer_project_id = p0\nallocation_conflict_retry_count = 3\n\
             randomize_allocation_candidates = True\n\
             [oslo_middleware]\nmax_request_body_size = 4096\n",
        )
        .unwrap();
        let c = load_conf(Some(&path), Overrides::default()).unwrap();
        assert_eq!(c.database, "sqlite:////tmp/x.db");
        assert_eq!(c.incomplete_consumer_project_id, "p0");
        assert_eq!(
            c.incomplete_consumer_user_id,
            DEFAULT_INCOMPLETE_CONSUMER_ID
        );
        assert_eq!(c.allocation_conflict_retry_count, 3);
        assert!(c.randomize_allocation_candidates);
        assert!(!Config::default().randomize_allocation_candidates);
        assert_eq!(c.max_body_size, 4096);
        assert!(!c.enforce_new_defaults && !c.enforce_scope);
        assert_eq!(c.policy_file, Some(dir.join("policy.yaml")));
        assert_eq!(c.shutdown_timeout, DEFAULT_SHUTDOWN_TIMEOUT);
        let c = load_conf(
            Some(&path),
            Overrides {
                database: Some("sqlite:///y.db".into()),
                policy: Some(PolicyDefaults::Secure),
                shutdown_timeout: Some(Duration::from_secs(5)),
                ..Overrides::default()
            },
        )
        .unwrap();
        assert_eq!(c.database, "sqlite:///y.db");
        assert_eq!(c.shutdown_timeout, Duration::from_secs(5));
        assert!(c.enforce_new_defaults && c.enforce_scope);
        let c = load_conf(
            Some(&path),
            Overrides {
                policy: Some(PolicyDefaults::Legacy),
                ..Overrides::default()
            },
        )
        .unwrap();
        assert!(!c.enforce_new_defaults && c.enforce_scope);

        write_conf(&path, "[api]\nauth_strategy = keystone2\n").unwrap();
        let err = load_conf(Some(&path), Overrides::default()).unwrap_err();
        assert!(
            err.to_string()
                .contains("accepted values are keystone and noauth2"),
            "{err}"
        );
        write_conf(&path, "[placement]\nallocation_conflict_retry_count = -1\n").unwrap();
        let err = load_conf(Some(&path), Overrides::default()).unwrap_err();
        assert!(
            err.to_string().contains("not a non-negative integer"),
            "{err}"
        );
        write_conf(
            &path,
            "[placement]\nrandomize_allocation_candidates = often\n",
        )
        .unwrap();
        let err = load_conf(Some(&path), Overrides::default()).unwrap_err();
        assert!(
            err.to_string().ends_with(
                "[placement] randomize_allocation_candidates = often is not a boolean; use true or false"
            ),
            "{err}"
        );
        write_conf(&path, "[oslo_policy]\nenforce_scope = maybe\n").unwrap();
        let err = load_conf(Some(&path), Overrides::default()).unwrap_err();
        assert!(err.to_string().contains("not a boolean"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cors_section() {
        let dir = std::env::temp_dir().join(format!("placement-cors-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("placement.conf");
        write_conf(&path, "[cors]\nallow_headers = a\n").unwrap();
        let c = load_conf(Some(&path), Overrides::default()).unwrap();
        assert_eq!(c.cors, None, "no allowed_origin: off");
        write_conf(
            &path,
            "[cors]\nallowed_origin = http://a.example, http://b.example\n\
             allow_headers = openstack-api-version\nmax_age = 0\nallow_credentials = false\n",
        )
        .unwrap();
        let c = load_conf(Some(&path), Overrides::default()).unwrap();
        let cors = c.cors.unwrap();
        assert_eq!(
            cors.allowed_origins,
            ["http://a.example", "http://b.example"]
        );
        assert_eq!(cors.allow_headers, ["openstack-api-version"]);
        assert_eq!(cors.max_age, 0);
        assert!(!cors.allow_credentials);
        assert_eq!(cors.allow_methods, CorsConfig::default().allow_methods);
        write_conf(&path, "[cors]\nallowed_origin = x\nmax_age = soon\n").unwrap();
        assert!(load_conf(Some(&path), Overrides::default()).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn logging_and_metrics_keys() {
        let dir = std::env::temp_dir().join(format!("placement-logging-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("placement.conf");
        let load = |text: &str| {
            write_conf(&path, text).unwrap();
            load_conf(Some(&path), Overrides::default())
        };
        let c = load("[placement_database]\nconnection = sqlite://\n").unwrap();
        assert!(!c.debug && !c.log_json && !c.log_stderr);
        assert_eq!((c.log_file, c.metrics_bind), (None, None));
        let c = load(
            "[DEFAULT]\ndebug = True\nuse_json = yes\nuse_stderr = 1\nlog_dir = /var/log/placement\n\
             log_file = api.log\n[metrics]\nbind = 127.0.0.1:9778\n",
        )
        .unwrap();
        assert!(c.debug && c.log_json && c.log_stderr);
        assert_eq!(
            c.log_file,
            Some(PathBuf::from("/var/log/placement/api.log"))
        );
        assert_eq!(c.metrics_bind, Some("127.0.0.1:9778".parse().unwrap()));
        let c = load("[DEFAULT]\nlog_dir = /var/log/placement\nlog_file = /tmp/p.log\n").unwrap();
        assert_eq!(c.log_file, Some(PathBuf::from("/tmp/p.log")));
        let c = load("[DEFAULT]\nlog_dir = /var/log/placement\n").unwrap();
        assert_eq!(
            c.log_file,
            Some(PathBuf::from("/var/log/placement/placement-api.log"))
        );
        let err = load("[DEFAULT]\ndebug = sometimes\n").unwrap_err();
        assert!(
            format!("{err:#}").contains("[DEFAULT] debug = sometimes is not a boolean"),
            "{err:#}"
        );
        let err = load("[metrics]\nbind = 9778\n").unwrap_err();
        assert!(
            format!("{err:#}").contains("[metrics] bind = 9778 is not an address and port"),
            "{err:#}"
        );
        // Flags override the file.
        write_conf(&path, "[DEFAULT]\nlog_file = a.log\n").unwrap();
        let c = load_conf(
            Some(&path),
            Overrides {
                debug: true,
                log_json: true,
                log_file: Some(PathBuf::from("b.log")),
                metrics_bind: Some("127.0.0.1:1".parse().unwrap()),
                ..Overrides::default()
            },
        )
        .unwrap();
        assert!(c.debug && c.log_json);
        assert_eq!(c.log_file, Some(PathBuf::from("b.log")));
        assert_eq!(c.metrics_bind, Some("127.0.0.1:1".parse().unwrap()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn response_validation_as_nova_names_it() {
        let dir = microversion_test_support::Scratch::new("conf-response-validation");
        let path = dir.join("placement.conf");
        assert_eq!(
            load_conf(None, Overrides::default())
                .unwrap()
                .response_validation,
            ResponseValidation::Off
        );
        for (value, mode) in [
            ("error", ResponseValidation::Error),
            ("warn", ResponseValidation::Warn),
            ("ignore", ResponseValidation::Off),
        ] {
            write_conf(&path, &format!("[api]\nresponse_validation = {value}\n")).unwrap();
            let c = load_conf(Some(&path), Overrides::default()).unwrap();
            assert_eq!(c.response_validation, mode, "{value}");
            assert!(c.warnings.is_empty(), "a known key: {:?}", c.warnings);
        }
        // The flag wins over the file.
        let c = load_conf(
            Some(&path),
            Overrides {
                response_validation: Some(ResponseValidation::Error),
                ..Overrides::default()
            },
        )
        .unwrap();
        assert_eq!(c.response_validation, ResponseValidation::Error);
        write_conf(&path, "[api]\nresponse_validation = strict\n").unwrap();
        let err = load_conf(Some(&path), Overrides::default()).unwrap_err();
        assert!(
            err.to_string().ends_with(
                "[api] response_validation = strict is not supported; \
                 the accepted values are error, warn and ignore"
            ),
            "{err}"
        );
    }

    #[test]
    fn openapi_section() {
        let dir = std::env::temp_dir().join(format!("placement-openapi-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("placement.conf");
        write_conf(&path, "[openapi]\nenabled = True\n").unwrap();
        assert!(
            load_conf(Some(&path), Overrides::default())
                .unwrap()
                .openapi
        );
        write_conf(&path, "[openapi]\nenabled = maybe\n").unwrap();
        assert!(load_conf(Some(&path), Overrides::default()).is_err());
        assert!(!Config::default().openapi);
        assert!(!Config::default().reference_page);
        write_conf(&path, "[openapi]\nenabled = true\nreference_page = yes\n").unwrap();
        let c = load_conf(Some(&path), Overrides::default()).unwrap();
        assert!(c.openapi && c.reference_page);
        write_conf(&path, "[openapi]\nreference_page = true\n").unwrap();
        let err = load_conf(Some(&path), Overrides::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: [openapi] reference_page = true needs [openapi] enabled = true: \
                 the page reads the documents at /openapi.json",
                path.display()
            )
        );
        write_conf(&path, "[openapi]\nenabled = true\nreference_page = sure\n").unwrap();
        let err = load_conf(Some(&path), Overrides::default()).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("[openapi] reference_page = sure is not a boolean; use true or false"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn keystone_unless_noauth2_is_asked_for() {
        let dir = std::env::temp_dir().join(format!("placement-auth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("placement.conf");
        let load = |text: &str, overrides: Overrides| {
            write_conf(&path, text).unwrap();
            load_conf(Some(&path), overrides)
        };
        // No [api] section, as kolla-ansible, OpenStack-Ansible and helm
        // write it: keystone, with the settings read for the start.
        let c = load(
            "[keystone_authtoken]\nauth_type = password\nauth_url = http://k/v3\nusername = placement\n\
             password = p\nproject_name = service\nuser_domain_name = Default\nproject_domain_name = Default\n",
            Overrides::default(),
        )
        .unwrap();
        assert_eq!(c.auth_strategy, AuthStrategy::Keystone);
        assert!(c.keystone.is_some());
        // Without [keystone_authtoken] the loader still answers (db sync
        // needs no auth); the service's start refuses (AppState::new).
        let c = load("", Overrides::default()).unwrap();
        assert_eq!(
            (c.auth_strategy, c.keystone),
            (AuthStrategy::Keystone, None)
        );
        // The old place of the option, and [api] winning over it.
        let c = load("[DEFAULT]\nauth_strategy = noauth2\n", Overrides::default()).unwrap();
        assert_eq!(c.auth_strategy, AuthStrategy::Noauth2);
        let c = load(
            "[DEFAULT]\nauth_strategy = noauth2\n[api]\nauth_strategy = keystone\n",
            Overrides::default(),
        )
        .unwrap();
        assert_eq!(c.auth_strategy, AuthStrategy::Keystone);
        let err = load("[DEFAULT]\nauth_strategy = none\n", Overrides::default()).unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            format!(
                "{}: [DEFAULT] auth_strategy = none is not supported; the accepted values are keystone and noauth2",
                path.display()
            )
        );
        // The flag (or its environment variable) asks for noauth2.
        let noauth2 = Overrides {
            auth_strategy: Some(AuthStrategy::Noauth2),
            ..Overrides::default()
        };
        let c = load("", noauth2.clone()).unwrap();
        assert_eq!(c.auth_strategy, AuthStrategy::Noauth2);
        // With no file at all: keystone still, on the development database.
        let c = load_conf(None, Overrides::default()).unwrap();
        assert_eq!(c.auth_strategy, AuthStrategy::Keystone);
        let c = load_conf(None, noauth2).unwrap();
        assert_eq!(c.auth_strategy, AuthStrategy::Noauth2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_must_name_the_database() {
        let dir = std::env::temp_dir().join(format!("placement-db-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("placement.conf");
        for text in [
            "[api]\nauth_strategy = noauth2\n",
            "[placement_database]\nconnection =\n",
        ] {
            std::fs::write(&path, text).unwrap();
            let err = load_conf(Some(&path), Overrides::default()).unwrap_err();
            assert!(
                err.to_string().starts_with(&format!(
                    "{}: [placement_database] connection is not set: name the database there",
                    path.display()
                )),
                "{err}"
            );
            // --database (or PLACEMENT_DATABASE) names it instead.
            let c = load_conf(
                Some(&path),
                Overrides {
                    database: Some("sqlite:///x.db".into()),
                    ..Overrides::default()
                },
            )
            .unwrap();
            assert_eq!(c.database, "sqlite:///x.db");
            assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        }
        // No file and no --database: the development default, said so.
        let c = load_conf(None, Overrides::default()).unwrap();
        assert_eq!(c.database, DEFAULT_DATABASE);
        assert_eq!(c.warnings.len(), 1);
        assert!(
            c.warnings[0].contains("for development only"),
            "{:?}",
            c.warnings
        );
        let c = load_conf(
            None,
            Overrides {
                database: Some("sqlite:///y.db".into()),
                ..Overrides::default()
            },
        )
        .unwrap();
        assert!(c.warnings.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn proxy_headers_and_server_keys() {
        let dir = std::env::temp_dir().join(format!("placement-proxy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("placement.conf");
        let load = |text: &str, overrides: Overrides| {
            write_conf(&path, text).unwrap();
            load_conf(Some(&path), overrides)
        };
        let c = load("", Overrides::default()).unwrap();
        assert!(!c.enable_proxy_headers_parsing);
        assert_eq!(c.server, crate::listen::ServerSettings::default());
        let c = load(
            "[oslo_middleware]\nenable_proxy_headers_parsing = True\n\
             [server]\nroot_path = /placement\nunix_socket = run/p.sock\n",
            Overrides::default(),
        )
        .unwrap();
        assert!(c.enable_proxy_headers_parsing);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!(c.server.root_path.unwrap().as_str(), "/placement");
        assert_eq!(c.server.unix_socket, Some(dir.join("run/p.sock")));
        let err = load(
            "[oslo_middleware]\nenable_proxy_headers_parsing = perhaps\n",
            Overrides::default(),
        )
        .unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            format!(
                "{}: [oslo_middleware] enable_proxy_headers_parsing = perhaps is not a boolean; use true or false",
                path.display()
            )
        );
        let err = load("[server]\nroot_path = placement\n", Overrides::default()).unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            format!(
                "{}: [server] root_path = placement: a root path starts with /",
                path.display()
            )
        );
        // A key without its certificate, and a Unix socket with --bind.
        let err = load("[server]\ntls_key_file = k.pem\n", Overrides::default()).unwrap_err();
        assert!(
            err.to_string()
                .contains("tls_key_file (--tls-key-file) is set without"),
            "{err}"
        );
        let err = load(
            "[server]\nunix_socket = /run/p.sock\n",
            Overrides {
                bind: Some("127.0.0.1:1".parse().unwrap()),
                ..Overrides::default()
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("are exclusive"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn pool_keys_as_oslo_db_reads_them() {
        let dir = microversion_test_support::Scratch::new("placement-pool");
        let path = dir.join("placement.conf");
        let load = |text: &str| {
            write_conf(&path, &format!("[placement_database]\n{text}")).unwrap();
            load_conf(Some(&path), Overrides::default())
        };
        let c = load("").unwrap();
        assert_eq!(c.database_pool, PoolSettings::default());
        assert_eq!(c.database_pool.max_connections, 16);
        // OpenStack-Ansible's 5/50/30/600.
        let c = load(
            "max_pool_size = 5\nmax_overflow = 50\npool_timeout = 30\nconnection_recycle_time = 600\n\
             max_retries = -1\nretry_interval = 2\n",
        )
        .unwrap();
        assert_eq!(
            c.database_pool,
            PoolSettings {
                max_connections: 55,
                acquire_timeout: Duration::from_secs(30),
                max_lifetime: Some(Duration::from_secs(600)),
                max_retries: None,
                retry_interval: Duration::from_secs(2),
            }
        );
        // kolla-ansible's max_overflow alone: oslo.db's pool size of 5.
        assert_eq!(
            load("max_overflow = 1000\n")
                .unwrap()
                .database_pool
                .max_connections,
            1005
        );
        assert_eq!(
            load("max_pool_size = 10\n")
                .unwrap()
                .database_pool
                .max_connections,
            60
        );
        assert_eq!(
            load("connection_recycle_time = -1\n")
                .unwrap()
                .database_pool
                .max_lifetime,
            None
        );
        assert_eq!(
            load("max_retries = 0\n").unwrap().database_pool.max_retries,
            Some(0)
        );
        for (text, wanted) in [
            (
                "max_pool_size = 0\n",
                "[placement_database] max_pool_size = 0 is not an integer of at least 1",
            ),
            (
                "max_overflow = -1\n",
                "[placement_database] max_overflow = -1 is not an integer of at least 0",
            ),
            (
                "pool_timeout = soon\n",
                "[placement_database] pool_timeout = soon is not an integer of at least 1",
            ),
            (
                "max_retries = -2\n",
                "[placement_database] max_retries = -2 is not an integer of at least -1",
            ),
        ] {
            let e = load(text).unwrap_err();
            assert!(e.to_string().ends_with(wanted), "{text}: {e}");
        }
    }

    #[test]
    fn missing_file_is_an_error() {
        let err = load_conf(
            Some(Path::new("/nonexistent/placement.conf")),
            Overrides::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("cannot read config file"));
    }
}
