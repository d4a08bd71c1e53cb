//! The whole service in process ([`Harness`]), on a temporary SQLite
//! database holding the [`fixture`](crate::fixture), and the checks of
//! each answer.

use std::fmt;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::Context as _;
use axum::Router;
use axum::body::Body;
use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::BodyExt as _;
use microversion::Version;
use placement::app::{ready, router};
use placement::config::{AuthStrategy, Config};
use placement::cors::CorsConfig;
use placement::state::AppState;
use serde_json::Value;
use tower::ServiceExt as _;

use crate::{Violation, admin_request, fixture};

/// An answer of the service.
#[derive(Clone, Debug)]
pub struct Answer {
    /// The status.
    pub status: StatusCode,
    /// The body, read whole.
    pub body: Bytes,
}

impl Answer {
    /// The `detail` of the first error of an errors body.
    #[must_use]
    pub fn detail(&self) -> Option<String> {
        let value: Value = serde_json::from_slice(&self.body).ok()?;
        value["errors"][0]["detail"].as_str().map(str::to_owned)
    }
}

/// One database of [`Harness`]: a copy of the template with the service
/// on it.
struct Live {
    file: PathBuf,
    state: AppState,
    router: Router,
    /// A connection of the harness's own, to see what the service wrote.
    watch: rusqlite::Connection,
    /// `PRAGMA data_version` on `watch` when `rows` was read.
    version: i64,
    /// Every row of every table, as text.
    rows: Vec<(String, Vec<String>)>,
}

/// Requests after which the database is replaced by a fresh copy.
const RESET_EVERY: u64 = 5_000;
/// Requests that wrote after which the database is replaced.
const RESET_AFTER_WRITES: u64 = 500;
/// The request body limit of the service under test, below the fuzzer's
/// input size so that the 413 answers are reached.
const BODY_LIMIT: usize = 3_000;

static HARNESSES: AtomicU32 = AtomicU32::new(0);

/// The service in process on a temporary SQLite database (in `/dev/shm`
/// when there is one: the service syncs every commit), with the
/// [`fixture`], and the checks of every answer.
///
/// The database lives across requests, so that writes the fuzzer makes
/// are there for the next ones; it is replaced by a fresh copy of the
/// fixture every 5,000 requests, or after 500 that wrote. A violation
/// says how many requests the database had seen.
pub struct Harness {
    runtime: tokio::runtime::Runtime,
    dir: PathBuf,
    /// The fixture, read-only, copied for each database.
    template: rusqlite::Connection,
    live: Option<Live>,
    copies: u64,
    requests: u64,
    writes: u64,
}

impl Harness {
    /// Creates the template database with the fixture, and the first copy
    /// of it with the service on it. Removes what harnesses of processes
    /// gone left behind.
    ///
    /// # Errors
    ///
    /// Fails when the temporary directory or the database cannot be made,
    /// or a fixture request is refused.
    pub fn new() -> anyhow::Result<Harness> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let base = Path::new("/dev/shm");
        let base = if base.is_dir() {
            base.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        remove_stale(&base);
        let dir = base.join(format!(
            "placement-fuzz-{}-{}",
            std::process::id(),
            HARNESSES.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let file = dir.join("template.db");
        runtime.block_on(async {
            let (state, app) = ready(config(&file)).await?;
            for (method, path, body) in fixture::requests() {
                let bytes = (!body.is_null()).then(|| body.to_string().into_bytes());
                let request =
                    admin_request(method.clone(), &path, Version::new(1, 39), bytes.as_deref())
                        .context("a fixture request")?;
                let response = app.clone().oneshot(request).await?;
                let status = response.status();
                let body = response.into_body().collect().await?.to_bytes();
                anyhow::ensure!(
                    status.is_success(),
                    "fixture {method} {path}: {status} {}",
                    String::from_utf8_lossy(&body)
                );
            }
            drop(app);
            state.store.close().await;
            anyhow::Ok(())
        })?;
        let template = rusqlite::Connection::open_with_flags(
            &file,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )?;
        let mut harness = Harness {
            runtime,
            dir,
            template,
            live: None,
            copies: 0,
            requests: 0,
            writes: 0,
        };
        harness.reset()?;
        Ok(harness)
    }

    /// Replaces the database by a fresh copy of the template.
    fn reset(&mut self) -> anyhow::Result<()> {
        if let Some(old) = self.live.take() {
            let Live {
                file,
                state,
                router,
                watch,
                ..
            } = old;
            drop(router);
            drop(watch);
            self.runtime.block_on(state.store.close());
            drop(state);
            remove_database(&file);
        }
        self.copies += 1;
        let file = self.dir.join(format!("live-{}.db", self.copies));
        remove_database(&file);
        self.template
            .execute("VACUUM INTO ?1", [file.to_string_lossy().as_ref()])?;
        let (state, router) = self.runtime.block_on(async {
            let state = AppState::new(config(&file)).await?;
            let router = router(state.clone())?;
            anyhow::Ok((state, router))
        })?;
        let watch = rusqlite::Connection::open_with_flags(
            &file,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )?;
        let version = data_version(&watch)?;
        let rows = dump(&watch)?;
        self.live = Some(Live {
            file,
            state,
            router,
            watch,
            version,
            rows,
        });
        self.requests = 0;
        self.writes = 0;
        Ok(())
    }

    /// Sends `request` to the service and checks the answer: no 5xx; a 4xx
    /// to a request that accepts `application/json` (alone; not `HEAD`)
    /// with an errors body whose first error has the same status; no row
    /// changed by a 4xx.
    ///
    /// # Errors
    ///
    /// A [`Violation`] saying what went wrong, with the request and the
    /// answer.
    ///
    /// # Panics
    ///
    /// When the harness's own database work fails (not the service's).
    pub fn send(&mut self, request: Request<Body>) -> Result<Answer, Violation> {
        let described = format!(
            "{} {} {:?}",
            request.method(),
            request.uri(),
            request.headers()
        );
        // Only a client that asks for JSON alone is promised an errors
        // body: upstream (webob) answers others in text or HTML.
        let wants_errors_body = request.method() != Method::HEAD
            && request
                .headers()
                .get_all(http::header::ACCEPT)
                .iter()
                .count()
                == 1
            && request
                .headers()
                .get(http::header::ACCEPT)
                .is_some_and(|v| v == "application/json");
        let live = self.live.as_mut().expect("a database is open");
        let (status, body) = self.runtime.block_on(async {
            let response = live
                .router
                .clone()
                .oneshot(request)
                .await
                .unwrap_or_else(|e| match e {});
            let status = response.status();
            let body = response
                .into_body()
                .collect()
                .await
                .map(http_body_util::Collected::to_bytes);
            (status, body)
        });
        self.requests += 1;
        let seen = self.requests;
        let context = |what: String| {
            Violation::new(format!(
                "{what}\nrequest: {described}\n(request {seen} on this copy of the database)"
            ))
        };
        let body = body.map_err(|e| context(format!("the body of a {status} broke off: {e}")))?;
        let answer = Answer {
            status,
            body: body.clone(),
        };
        let text = String::from_utf8_lossy(&body);
        if status.is_server_error() {
            return Err(context(format!("answered {status}: {text}")));
        }
        if status.is_client_error() && wants_errors_body {
            let first = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v["errors"][0]["status"].as_u64());
            if first != Some(u64::from(status.as_u16())) {
                return Err(context(format!(
                    "answered {status} without an errors body of that status: {text}"
                )));
            }
        }
        let version = data_version(&live.watch).expect("PRAGMA data_version");
        if version != live.version {
            self.writes += 1;
            let rows = dump(&live.watch).expect("the tables can be read");
            if status.is_client_error() && rows != live.rows {
                return Err(context(format!(
                    "answered {status} but wrote:\n{}\nanswer: {text}",
                    difference(&live.rows, &rows)
                )));
            }
            live.version = version;
            live.rows = rows;
        }
        if self.requests >= RESET_EVERY || self.writes >= RESET_AFTER_WRITES {
            self.reset().expect("a fresh copy of the database");
        }
        Ok(answer)
    }
}

impl fmt::Debug for Harness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Harness")
            .field("dir", &self.dir)
            .field("copies", &self.copies)
            .field("requests", &self.requests)
            .field("writes", &self.writes)
            .finish_non_exhaustive()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(live) = self.live.take() {
            self.runtime.block_on(live.state.store.close());
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The service's settings: no Keystone (`noauth2`: the token is the
/// user), the legacy policy (upstream's tests' default), a small body
/// limit, CORS for one origin.
fn config(file: &Path) -> Config {
    Config {
        database: format!("sqlite:///{}", file.display()),
        auth_strategy: AuthStrategy::Noauth2,
        enforce_new_defaults: false,
        enforce_scope: false,
        max_body_size: BODY_LIMIT,
        cors: Some(CorsConfig {
            allowed_origins: vec![fixture::ORIGIN.to_owned()],
            ..CorsConfig::default()
        }),
        ..Config::default()
    }
}

/// Removes an SQLite file and its journals.
fn remove_database(file: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = file.as_os_str().to_owned();
        name.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(name));
    }
}

/// Removes the directories of harnesses whose process is gone (a fuzzer
/// ends with `exit`, which runs no destructor).
fn remove_stale(base: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("placement-fuzz-"))
            .and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// `PRAGMA data_version`: changes when another connection commits.
fn data_version(conn: &rusqlite::Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA data_version", [], |row| row.get(0))
}

/// Every row of every table, sorted, as text.
fn dump(conn: &rusqlite::Connection) -> rusqlite::Result<Vec<(String, Vec<String>)>> {
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?
        .query_map([], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut out = Vec::with_capacity(tables.len());
    for table in tables {
        let mut statement = conn.prepare(&format!("SELECT * FROM \"{table}\""))?;
        let columns = statement.column_count();
        let mut rows: Vec<String> = statement
            .query_map([], |row| {
                let mut text = String::new();
                for i in 0..columns {
                    let _ = write!(text, "{:?}|", row.get_ref(i)?);
                }
                Ok(text)
            })?
            .collect::<rusqlite::Result<_>>()?;
        rows.sort();
        out.push((table, rows));
    }
    Ok(out)
}

/// The rows added and removed between two dumps.
fn difference(before: &[(String, Vec<String>)], after: &[(String, Vec<String>)]) -> String {
    let mut out = String::new();
    for (table, rows) in after {
        let old = before
            .iter()
            .find(|(t, _)| t == table)
            .map(|(_, r)| r.as_slice())
            .unwrap_or_default();
        for row in rows.iter().filter(|r| !old.contains(r)) {
            let _ = writeln!(out, "+ {table}: {row}");
        }
        for row in old.iter().filter(|r| !rows.contains(r)) {
            let _ = writeln!(out, "- {table}: {row}");
        }
    }
    for (table, _) in before
        .iter()
        .filter(|(t, _)| !after.iter().any(|(a, _)| a == t))
    {
        let _ = writeln!(out, "- table {table}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RouterInput;

    #[test]
    fn the_harness_sees_answers_and_writes() {
        let mut harness = Harness::new().unwrap();
        let get = RouterInput::parse(&[1, 0]).to_request().unwrap();
        assert_eq!(harness.send(get).unwrap().status, StatusCode::OK);
        let create =
            admin_request(Method::PUT, "/traits/CUSTOM_NEW", Version::new(1, 39), None).unwrap();
        assert_eq!(harness.send(create).unwrap().status, StatusCode::CREATED);
        let stale = admin_request(
            Method::PUT,
            &format!("/resource_providers/{}/traits", fixture::CN1),
            Version::new(1, 39),
            Some(br#"{"resource_provider_generation": 0, "traits": []}"#),
        )
        .unwrap();
        let answer = harness.send(stale).unwrap();
        assert_eq!(answer.status, StatusCode::CONFLICT);
        assert!(answer.detail().is_some());
        let before = harness.live.as_ref().unwrap().rows.clone();
        let file = harness.live.as_ref().unwrap().file.clone();
        harness.reset().unwrap();
        assert!(!file.exists());
        assert_ne!(harness.live.as_ref().unwrap().rows, before);
    }
}
