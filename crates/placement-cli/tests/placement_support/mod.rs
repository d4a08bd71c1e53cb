//! The Placement-compatible service of this workspace on 127.0.0.1 (a
//! fresh SQLite database, noauth2), and the `placement` binary run
//! against it with a private cache directory.

#![allow(dead_code, unreachable_pub)]

use std::path::Path;
use std::process::{Command, Output};

use microversion_test_support::{Scratch, serve_on};
use placement::config::{AuthStrategy, Config};

/// A running placement-api.
pub struct Service {
    /// `http://127.0.0.1:PORT/`
    pub url: String,
    _dir: Scratch,
}

impl Service {
    /// Starts the service on a thread and runtime of its own.
    pub fn start() -> Service {
        let dir = Scratch::new("placement-cli");
        let database = format!("sqlite:///{}", dir.join("placement.db").display());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let config = Config {
                    database,
                    auth_strategy: AuthStrategy::Noauth2,
                    enforce_new_defaults: false,
                    enforce_scope: false,
                    ..Config::default()
                };
                let (_, app) = placement::app::ready(config)
                    .await
                    .expect("the service starts");
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                let base = serve_on(listener, app);
                tx.send(base).expect("send the address");
                std::future::pending::<()>().await;
            });
        });
        let base = rx.recv().expect("the service starts");
        Service {
            url: format!("{base}/"),
            _dir: dir,
        }
    }
}

/// What a run printed and its exit code.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The standard output as JSON.
    pub fn json(&self) -> serde_json::Value {
        assert_eq!(self.code, 0, "{self:?}");
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }
}

/// Runs `placement ARGS` against `endpoint` with the token `admin`, its
/// cache in `cache`, and no OS_* variable of the environment.
pub fn placement(endpoint: &str, cache: &Path, args: &[&str]) -> Run {
    let mut all = vec!["--os-endpoint", endpoint, "--os-token", "admin"];
    all.extend(args);
    run_in(cache, &all, &[])
}

/// Runs `placement ARGS` in `dir` (its cache there too) with the
/// variables `env` and no other OS_* or proxy variable.
pub fn run_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let (cache, args) = (dir, args);
    let mut command = Command::new(env!("CARGO_BIN_EXE_placement"));
    for (name, _) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if text.starts_with("OS_") || text.to_ascii_lowercase().ends_with("_proxy") {
            command.env_remove(name);
        }
    }
    let Output {
        status,
        stdout,
        stderr,
    } = command
        .env("XDG_CACHE_HOME", cache)
        .env("HOME", cache)
        .envs(env.iter().copied())
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the binary runs");
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}
