//! The command line of `placement-api`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::config::{AuthStrategy, Config, ConfigFiles, Overrides, PolicyDefaults, SearchPath};

/// A Placement-compatible API service (OpenStack Placement 16.0.0,
/// microversions 1.0 to 1.39).
///
/// Exit codes: 0 success (a stop with every request in flight finished),
/// 1 the service failed, 2 bad usage or configuration, 3 stopped, but
/// connections still open at the end of `--shutdown-timeout` were
/// dropped.
#[derive(Clone, Debug, Parser)]
#[command(name = "placement-api", version)]
pub struct Cli {
    /// Address to listen on.
    #[arg(long, env = "PLACEMENT_BIND", global = true)]
    bind: Option<SocketAddr>,
    /// Database URL, in upstream's forms: `sqlite:///PATH`,
    /// `postgresql://USER@HOST/DB`, `mysql+pymysql://USER:PASSWORD@HOST/DB`.
    /// Overrides `[placement_database] connection`; without either, and
    /// without a config file, `sqlite:///placement.db` (development only).
    #[arg(long, env = "PLACEMENT_DATABASE", global = true)]
    database: Option<String>,
    /// An upstream `placement.conf` to read (repeatable: later files win);
    /// without it, oslo.config's defaults: `$OS_PLACEMENT_CONFIG_DIR/
    /// placement.conf`, else the first `placement.conf` (and
    /// `placement-api.conf`) in `~/.placement/`, `~/`, `/etc/placement/`,
    /// `/etc/`. Flags and environment override the files.
    #[arg(long, env = "PLACEMENT_CONFIG_FILE", global = true)]
    config_file: Vec<PathBuf>,
    /// A directory whose `*.conf` files are read, in name order, after the
    /// config files (repeatable); without it, the first `placement.conf.d/`
    /// found where `placement.conf` is searched.
    #[arg(long, global = true, value_name = "DIR")]
    config_dir: Vec<PathBuf>,
    /// Default policy rules: legacy (enforce_new_defaults off) or secure
    /// (on); scope is checked in both, as oslo.policy 6 does.
    #[arg(long, env = "PLACEMENT_POLICY", value_enum, global = true)]
    policy: Option<PolicyDefaults>,
    /// A policy file (oslo.policy YAML) overriding default rules.
    #[arg(long, env = "PLACEMENT_POLICY_FILE", global = true)]
    policy_file: Option<PathBuf>,
    /// Authentication strategy: keystone (the default, as upstream's;
    /// needs `[keystone_authtoken]` in the config file) or noauth2, which
    /// trusts every caller (development and tests only).
    #[arg(long, env = "PLACEMENT_AUTH_STRATEGY", value_enum, global = true)]
    auth_strategy: Option<AuthStrategy>,
    /// Check every response against the OpenAPI document of its version
    /// (`[api] response_validation`): error (a mismatch answers 500, for
    /// tests), warn (logged) or ignore (the default).
    #[arg(
        long,
        env = "PLACEMENT_RESPONSE_VALIDATION",
        global = true,
        value_name = "MODE"
    )]
    response_validation: Option<microversion_server::openapi::ResponseValidation>,
    /// The largest request body accepted, in bytes (default 1 MiB); a
    /// larger one gets 413 with an errors body.
    #[arg(long, env = "PLACEMENT_MAX_BODY_SIZE", global = true)]
    max_body_size: Option<usize>,
    /// On SIGTERM or SIGINT, how many seconds the requests in flight may
    /// take to finish (default 30); connections still open then are
    /// dropped and the exit code is 3.
    #[arg(
        long,
        env = "PLACEMENT_SHUTDOWN_TIMEOUT",
        global = true,
        value_name = "SECONDS"
    )]
    shutdown_timeout: Option<u64>,
    /// Log at debug level (`[DEFAULT] debug`); the default is info, where
    /// each request writes one line (upstream's request log).
    #[arg(long, env = "PLACEMENT_DEBUG", global = true)]
    debug: bool,
    /// Append the log to this file (`[DEFAULT] log_file`) rather than
    /// write it to standard output.
    #[arg(long, env = "PLACEMENT_LOG_FILE", global = true)]
    log_file: Option<PathBuf>,
    /// Log one JSON object per line (`[DEFAULT] use_json`) rather than
    /// oslo.log's text lines.
    #[arg(long, env = "PLACEMENT_LOG_JSON", global = true)]
    log_json: bool,
    /// Serve Prometheus metrics at `/metrics` on this address
    /// (`[metrics] bind`); off by default.
    #[arg(long, env = "PLACEMENT_METRICS_BIND", global = true)]
    metrics_bind: Option<SocketAddr>,
    /// Serve HTTPS on the bind address with this PEM certificate chain
    /// (`[server] tls_cert_file`, ours; upstream leaves TLS to its WSGI
    /// server). Needs `--tls-key-file`.
    #[arg(
        long,
        env = "PLACEMENT_TLS_CERT_FILE",
        global = true,
        value_name = "PEM"
    )]
    tls_cert_file: Option<PathBuf>,
    /// The PEM private key of `--tls-cert-file` (`[server] tls_key_file`).
    #[arg(
        long,
        env = "PLACEMENT_TLS_KEY_FILE",
        global = true,
        value_name = "PEM"
    )]
    tls_key_file: Option<PathBuf>,
    /// Require a client certificate signed by one of these PEM CA
    /// certificates (`[server] tls_client_ca_file`); needs TLS.
    #[arg(
        long,
        env = "PLACEMENT_TLS_CLIENT_CA_FILE",
        global = true,
        value_name = "PEM"
    )]
    tls_client_ca_file: Option<PathBuf>,
    /// Listen on this Unix socket instead of TCP (`[server] unix_socket`);
    /// exclusive with `--bind` and TLS.
    #[arg(
        long,
        env = "PLACEMENT_UNIX_SOCKET",
        global = true,
        value_name = "PATH"
    )]
    unix_socket: Option<PathBuf>,
    /// Serve under this path prefix, as upstream under a mount whose
    /// SCRIPT_NAME it is (`[server] root_path`, such as `/placement`):
    /// requests outside it get 404, links and `Location` carry it.
    #[arg(long, env = "PLACEMENT_ROOT_PATH", global = true, value_name = "PATH")]
    root_path: Option<crate::listen::RootPath>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Clone, Debug, Subcommand)]
enum Command {
    /// Serve the API (the default).
    Serve,
    /// Print the OpenAPI 3.1 document of one version, or of the whole
    /// range (with `x-openstack` version ranges) when none is given.
    Openapi {
        /// The version, as in the header: `X.Y` or `latest`.
        #[arg(long)]
        version: Option<String>,
        /// YAML instead of JSON.
        #[arg(long)]
        yaml: bool,
    },
    /// Database maintenance.
    Db {
        #[command(subcommand)]
        command: DbCommand,
    },
}

#[derive(Clone, Debug, Subcommand)]
enum DbCommand {
    /// Create the schema on a new database, or check that it is current.
    Sync,
}

impl Cli {
    fn config(&self) -> anyhow::Result<Config> {
        let files = ConfigFiles::load(
            &self.config_file,
            &self.config_dir,
            SearchPath::of_process("placement-api"),
        )?;
        Config::load(
            &files,
            Overrides {
                bind: self.bind,
                database: self.database.clone(),
                policy: self.policy,
                auth_strategy: self.auth_strategy,
                response_validation: self.response_validation,
                policy_file: self.policy_file.clone(),
                max_body_size: self.max_body_size,
                shutdown_timeout: self.shutdown_timeout.map(Duration::from_secs),
                debug: self.debug,
                log_file: self.log_file.clone(),
                log_json: self.log_json,
                metrics_bind: self.metrics_bind,
                server: crate::listen::ServerSettings {
                    tls_cert_file: self.tls_cert_file.clone(),
                    tls_key_file: self.tls_key_file.clone(),
                    tls_client_ca_file: self.tls_client_ca_file.clone(),
                    unix_socket: self.unix_socket.clone(),
                    root_path: self.root_path.clone(),
                },
            },
        )
    }
}

/// How long blocking work still running at exit (an SQLite call of a
/// request whose connection was dropped) may take before the process
/// exits anyway.
const BLOCKING_GRACE: Duration = Duration::from_secs(1);

/// Runs the command line.
#[must_use]
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(Command::Openapi { version, yaml }) = &cli.command {
        return crate::openapi::print(version.as_deref(), *yaml);
    }
    let config = match cli.config() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("placement-api: {e:#}");
            return ExitCode::from(2);
        }
    };
    // A service that could not authenticate is a configuration error, said
    // before anything starts (db sync needs no auth).
    if matches!(cli.command, Some(Command::Serve) | None) {
        if let Err(e) = config.check_auth() {
            eprintln!("placement-api: {e:#}");
            return ExitCode::from(2);
        }
        // Unreadable or mismatched TLS files too.
        if let Err(e) = config.server.tls_config() {
            eprintln!("placement-api: {e:#}");
            return ExitCode::from(2);
        }
    }
    // Before the runtime's threads start: the local time offset of the
    // log lines can only be read while the process has one thread.
    // Held to the end: dropping it writes the buffered lines.
    let _log_writers = match crate::logging::init(&config) {
        Ok(writers) => writers,
        Err(e) => {
            eprintln!("placement-api: {e:#}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("placement-api: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result: anyhow::Result<ExitCode> = runtime.block_on(async {
        match cli.command.clone() {
            Some(Command::Db {
                command: DbCommand::Sync,
            }) => crate::db_sync(&config).await.map(|synced| {
                println!(
                    "database {}",
                    match synced {
                        crate::db::schema::Synced::Created => "created",
                        crate::db::schema::Synced::AlreadyCurrent => "already current",
                    }
                );
                ExitCode::SUCCESS
            }),
            Some(Command::Serve) | None => {
                // SIGHUP reads the files (and flags) again, as at the start.
                let reload = cli.clone();
                let reload = move || reload.config();
                crate::serve(config, reload)
                    .await
                    .map(|stopped| match stopped {
                        crate::Stopped::Drained => ExitCode::SUCCESS,
                        crate::Stopped::TimedOut => ExitCode::from(3),
                    })
            }
            Some(Command::Openapi { .. }) => Ok(ExitCode::SUCCESS),
        }
    });
    // Work the drain timeout cut short (a database call in progress on a
    // blocking thread) is not waited for.
    runtime.shutdown_timeout(BLOCKING_GRACE);
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("placement-api: {e:#}");
            ExitCode::FAILURE
        }
    }
}
