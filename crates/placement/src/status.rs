//! `placement-status upgrade check`: upstream's three checks, its table
//! and its exit codes.
//!
//! ```text
//! placement-status [--config-file PATH]... [--config-dir DIR]... upgrade check
//! ```
//!
//! Exit codes: 0 every check succeeded, 1 a warning (incomplete
//! consumers), 2 a failure (missing root provider ids, a JSON policy
//! file) or bad usage, 255 a check could not run (the database cannot be
//! read), as upstream's.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::config::Config;
use crate::db::{Conn, Store};
use crate::manage::table;
use crate::manage::upgrade::COUNT_MISSING_ROOT_IDS;

/// Checks whether this deployment is ready for an upgrade (as upstream's
/// `placement-status`).
#[derive(Debug, Parser)]
#[command(name = "placement-status", version)]
struct Cli {
    /// A configuration file to read (repeatable: later files win);
    /// without it, `placement.conf` is searched as oslo.config does.
    #[arg(long, value_name = "PATH")]
    config_file: Vec<PathBuf>,
    /// A directory whose `*.conf` files are read after the config files.
    #[arg(long, value_name = "DIR")]
    config_dir: Vec<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Upgrade readiness checks.
    Upgrade {
        /// `check` (upstream takes any word here and runs the checks).
        check: String,
        /// Accepted as upstream accepts it; as upstream's, the table is
        /// printed anyway (upstream's command never hands this flag to
        /// the code that would print JSON).
        #[arg(long)]
        json: bool,
    },
}

/// A check's outcome, ordered by severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Code {
    Success = 0,
    Warning = 1,
    Failure = 2,
}

impl Code {
    fn text(self) -> &'static str {
        match self {
            Code::Success => "Success",
            Code::Warning => "Warning",
            Code::Failure => "Failure",
        }
    }
}

/// Upstream's text for providers without a root provider id.
const ROOT_IDS_DETAILS: &str = "There is at least one resource provider table record which misses \
     its root provider id. Run the \"placement-manage db online_data_migrations\" command.";

/// Upstream's text for a JSON policy file.
const POLICY_DETAILS: &str = "Your policy file is JSON-formatted which is deprecated. You need to \
     switch to YAML-formatted file. Use the ``oslopolicy-convert-json-to-yaml`` tool to convert \
     the existing JSON-formatted files to YAML in a backwards-compatible manner: \
     https://docs.openstack.org/oslo.policy/latest/cli/oslopolicy-convert-json-to-yaml.html.";

/// Runs `placement-status` with the process's arguments.
#[must_use]
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let Command::Upgrade { check: _, json: _ } = cli.command;
    let config =
        match crate::manage::load_config("placement-status", &cli.config_file, &cli.config_dir) {
            Ok(config) => config,
            Err(e) => {
                eprintln!("placement-status: {e:#}");
                return ExitCode::from(255);
            }
        };
    let results = crate::manage::block_on(async {
        let store = crate::manage::connect(&config).await?;
        let results = checks(&store, &config).await;
        store.close().await;
        results
    })
    .and_then(|results| results);
    match results {
        Ok(results) => {
            print!("{}", render(&results));
            let worst = results
                .iter()
                .map(|(_, code, _)| *code)
                .max()
                .unwrap_or(Code::Success);
            ExitCode::from(worst as u8)
        }
        Err(e) => {
            println!("Error:\n{e:#}");
            ExitCode::from(255)
        }
    }
}

/// The checks' names, outcomes and details, in upstream's order.
async fn checks(
    store: &Store,
    config: &Config,
) -> anyhow::Result<Vec<(&'static str, Code, Option<String>)>> {
    let count = |sql| async move {
        Conn::from(store.reader())
            .row(sql, &[], |row| row.required_int(0))
            .await
            .map(Option::unwrap_or_default)
    };
    let missing_roots = count(COUNT_MISSING_ROOT_IDS).await?;
    let roots = if missing_roots > 0 {
        (Code::Failure, Some(ROOT_IDS_DETAILS.to_owned()))
    } else {
        (Code::Success, None)
    };
    let incomplete = count(
        "SELECT COUNT(DISTINCT allocations.consumer_id) AS n FROM allocations \
         LEFT OUTER JOIN consumers ON allocations.consumer_id = consumers.uuid \
         WHERE consumers.id IS NULL",
    )
    .await?;
    let consumers = if incomplete > 0 {
        (
            Code::Warning,
            Some(format!(
                "There are {incomplete} incomplete consumers table records for existing \
                 allocations. Run the \"placement-manage db online_data_migrations\" command."
            )),
        )
    } else {
        (Code::Success, None)
    };
    let policy = if config.policy_file.as_deref().is_some_and(is_json) {
        (Code::Failure, Some(POLICY_DETAILS.to_owned()))
    } else {
        (Code::Success, None)
    };
    Ok(vec![
        ("Missing Root Provider IDs", roots.0, roots.1),
        ("Incomplete Consumers", consumers.0, consumers.1),
        ("Policy File JSON to YAML Migration", policy.0, policy.1),
    ])
}

/// Whether the file holds a JSON document (what oslo.utils' `is_json`
/// asks); a file that cannot be read is not one.
fn is_json(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .is_some_and(|text| serde_json::from_str::<serde_json::Value>(&text).is_ok())
}

/// Upstream's table of results, with a final newline.
fn render(results: &[(&'static str, Code, Option<String>)]) -> String {
    let cells: Vec<String> = results
        .iter()
        .map(|(name, code, details)| {
            let details = details.as_deref().map_or_else(
                || "None".to_owned(),
                |d| table::wrap(d, 60, "  ").join("\n"),
            );
            format!("Check: {name}\nResult: {}\nDetails: {details}", code.text())
        })
        .collect();
    format!("{}\n", table::boxed("Upgrade Check Results", &cells))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_told_from_yaml() {
        let dir = std::env::temp_dir().join(format!("status-json-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("policy.yaml");
        for (text, json) in [
            ("{}", true),
            ("{\"a\": \"b\"}\n", true),
            ("a: b\n", false),
            ("", false),
        ] {
            std::fs::write(&file, text).unwrap();
            assert_eq!(is_json(&file), json, "{text:?}");
        }
        assert!(!is_json(&dir.join("missing.yaml")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
