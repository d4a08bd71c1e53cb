//! `placement-manage`: upstream's database commands, with its arguments,
//! output and exit codes.
//!
//! ```text
//! placement-manage [--config-file PATH]... [--config-dir DIR]... db sync
//! placement-manage ... db version
//! placement-manage ... db stamp VERSION
//! placement-manage ... db online_data_migrations [--max-count N]
//! ```
//!
//! The configuration is read as `placement-api` reads it (oslo.config's
//! search path: `/etc/placement/placement.conf` and the others, then
//! `placement.conf.d/`); only `[placement_database] connection` and the
//! incomplete consumer ids are used.
//!
//! Exit codes: 0 success; 1 failure (a refused or failed sync, an
//! unreadable configuration, an unreachable database), or, for
//! `online_data_migrations --max-count N`, rows were migrated (run it
//! again until it exits 0); 2 a migration failed, or bad usage; 127 an
//! invalid `--max-count`.

pub(crate) mod online;
pub(crate) mod table;
pub(crate) mod upgrade;

use std::future::Future;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{CommandFactory as _, Parser, Subcommand};

use crate::config::{Config, ConfigFiles, Overrides, SearchPath};
use crate::db::schema::Upgraded;
use crate::db::{Conn, Store};

/// Placement's database commands (as upstream's `placement-manage`).
#[derive(Debug, Parser)]
#[command(name = "placement-manage", version)]
struct Cli {
    /// A configuration file to read (repeatable: later files win);
    /// without it, `placement.conf` is searched as oslo.config does.
    #[arg(long, value_name = "PATH")]
    config_file: Vec<PathBuf>,
    /// A directory whose `*.conf` files are read after the config files.
    #[arg(long, value_name = "DIR")]
    config_dir: Vec<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Available DB commands.
    Db {
        #[command(subcommand)]
        command: Option<Db>,
    },
}

#[derive(Debug, Subcommand)]
enum Db {
    /// Sync the database to the current version.
    Sync,
    /// Report the current database version.
    Version,
    /// Stamp the revision table with the given version.
    Stamp {
        /// the version to stamp
        version: String,
    },
    /// Run the online data migrations.
    #[command(name = "online_data_migrations")]
    OnlineDataMigrations {
        /// Maximum number of objects to consider
        #[arg(long, value_name = "<number>", allow_negative_numbers = true)]
        max_count: Option<String>,
    },
}

/// Reads the configuration of `program` (upstream's search path).
pub(crate) fn load_config(
    program: &str,
    files: &[PathBuf],
    dirs: &[PathBuf],
) -> anyhow::Result<Config> {
    let files = ConfigFiles::load(files, dirs, SearchPath::of_process(program))?;
    // Without a file naming it, placement-api falls back to a development
    // database in the working directory; these commands, as upstream's,
    // want it named (oslo.config's text).
    if files.get("placement_database", "connection").is_none() {
        anyhow::bail!("value required for option connection in group [placement_database]");
    }
    Config::load(&files, Overrides::default())
}

/// Runs `work` on a runtime of this thread.
pub(crate) fn block_on<T>(work: impl Future<Output = T>) -> anyhow::Result<T> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    Ok(runtime.block_on(work))
}

/// Connects to the configured database; a server that cannot be reached
/// yet is tried again as `[placement_database] max_retries` says, each try
/// said on standard error (the commands' own output stays on standard
/// output, as upstream's).
pub(crate) async fn connect(config: &Config) -> anyhow::Result<Store> {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(tracing_subscriber::EnvFilter::new("warn,sqlx=error"))
        .try_init();
    Store::connect_with(&config.database, &config.database_pool)
        .await
        .with_context(|| {
            format!(
                "cannot open the database {}",
                crate::db::redacted(&config.database)
            )
        })
}

/// Runs `placement-manage` with the process's arguments.
#[must_use]
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let db = match cli.command {
        None => {
            // Upstream prints its help and exits 1 without a command.
            let _ = Cli::command().print_help();
            return ExitCode::FAILURE;
        }
        Some(Command::Db { command: None }) => {
            // Built, so that its usage line names the program.
            let mut command = Cli::command();
            command.build();
            let _ = command
                .find_subcommand_mut("db")
                .map(clap::Command::print_help);
            return ExitCode::SUCCESS;
        }
        Some(Command::Db { command: Some(db) }) => db,
    };
    let config = match load_config("placement-manage", &cli.config_file, &cli.config_dir) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("placement-manage: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = block_on(async {
        let store = connect(&config).await?;
        let code = run(&store, &config, db).await;
        store.close().await;
        code
    })
    .and_then(|code| code);
    match outcome {
        Ok(code) => code,
        Err(e) => {
            match e.downcast_ref::<upgrade::Refused>() {
                // The last line of upstream's traceback.
                Some(refused) => eprintln!("Exception: {refused}"),
                None => eprintln!("placement-manage: {e:#}"),
            }
            ExitCode::FAILURE
        }
    }
}

/// Runs one command on the database.
async fn run(store: &Store, config: &Config, db: Db) -> anyhow::Result<ExitCode> {
    match db {
        Db::Sync => {
            // As upstream's, silent on success.
            let _: Upgraded = crate::db::schema::upgrade(store).await?;
            Ok(ExitCode::SUCCESS)
        }
        Db::Version => {
            let revision = version(store).await?;
            println!("{}", revision.as_deref().unwrap_or("None"));
            Ok(ExitCode::SUCCESS)
        }
        Db::Stamp { version } => {
            stamp(store, upgrade::resolve(&version)?).await?;
            Ok(ExitCode::SUCCESS)
        }
        Db::OnlineDataMigrations { max_count } => {
            Ok(online_data_migrations(store, config, max_count.as_deref()).await)
        }
    }
}

/// Whether the database has an `alembic_version` table.
async fn has_version_table(store: &Store) -> anyhow::Result<bool> {
    let query = match store.dialect() {
        crate::db::Dialect::Sqlite => {
            "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'"
        }
        crate::db::Dialect::Postgres => {
            "SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'alembic_version'"
        }
        crate::db::Dialect::MySql => {
            "SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'alembic_version'"
        }
    };
    let n = Conn::from(store.reader())
        .row(query, &[], |row| row.required_int(0))
        .await?;
    Ok(n.unwrap_or(0) > 0)
}

/// The revision recorded in `alembic_version`, if any.
async fn version(store: &Store) -> anyhow::Result<Option<String>> {
    if !has_version_table(store).await? {
        return Ok(None);
    }
    Ok(Conn::from(store.reader())
        .row("SELECT version_num FROM alembic_version", &[], |row| {
            Ok(row.required_text(0)?.to_owned())
        })
        .await?)
}

/// Records `revision` (or none) in `alembic_version`, creating the table
/// when missing, as alembic's stamp does; the schema is left as it is.
async fn stamp(store: &Store, revision: Option<&str>) -> anyhow::Result<()> {
    let has_table = has_version_table(store).await?;
    let revision = revision.map(str::to_owned);
    store
        .transaction(move |_, tx| {
            Box::pin(async move {
                if !has_table {
                    tx.execute(
                        "CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL, \
                         CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))",
                        &[],
                    )
                    .await?;
                }
                tx.execute("DELETE FROM alembic_version", &[]).await?;
                if let Some(revision) = revision {
                    tx.execute(
                        &format!("INSERT INTO alembic_version (version_num) VALUES ('{revision}')"),
                        &[],
                    )
                    .await?;
                }
                Ok::<_, anyhow::Error>(())
            })
        })
        .await
}

/// `db online_data_migrations`: upstream's output and exit codes.
async fn online_data_migrations(
    store: &Store,
    config: &Config,
    max_count: Option<&str>,
) -> ExitCode {
    let (max_count, limited) = match max_count {
        Some(text) => match text.trim().parse::<i64>() {
            Ok(n) if n >= 1 => (n, true),
            _ => {
                println!("Must supply a positive value for max_count");
                return ExitCode::from(127);
            }
        },
        None => {
            println!("Running batches of 50 until complete");
            (50, false)
        }
    };
    let (totals, ran, failed) = online::run(store, config, max_count, limited).await;
    let rows: Vec<Vec<String>> = totals
        .iter()
        .map(|(name, found, done)| vec![(*name).to_owned(), found.to_string(), done.to_string()])
        .collect();
    println!(
        "{}",
        table::centred(&["Migration", "Total Found", "Completed"], &rows)
    );
    if failed && !(limited && ran > 0) {
        println!("Some migrations failed unexpectedly. Check log for details.");
        return ExitCode::from(2);
    }
    if ran > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
