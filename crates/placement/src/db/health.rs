//! Whether the database server can be reached, for PostgreSQL and MySQL.
//!
//! When the server goes away (a crash, a Galera node killed), the pool's
//! connections fail at once, but a request waiting for a connection would
//! wait the whole acquire timeout: the pool takes a refused connection for
//! a server still starting and tries again. So the first request that
//! meets an unreachable database has [`Health::suspect`] probe it with a
//! connection of its own; when that fails too the database is marked
//! down, the requests waiting for it are answered 503 at once, and new
//! ones are answered 503 without waiting, until a probe (every
//! [`PROBE_INTERVAL`]) connects again.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sqlx::mysql::MySqlConnectOptions;
use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, Connection, Executor};
use tokio::sync::watch;

/// How long a probe may take to connect and run its query.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The pause between probes of a database marked down.
const PROBE_INTERVAL: Duration = Duration::from_millis(250);

/// How to reach the server for a probe.
#[derive(Debug)]
pub(crate) enum Probe {
    Postgres(PgConnectOptions),
    MySql(MySqlConnectOptions),
}

/// The reachability of one database server.
#[derive(Debug)]
pub(crate) struct Health {
    options: Probe,
    /// `true` while the server is known to be unreachable.
    down: watch::Sender<bool>,
    /// A probe task runs.
    probing: AtomicBool,
}

impl Health {
    /// The health of the server of `options`, taken as reachable.
    pub(crate) fn new(options: Probe) -> Arc<Health> {
        Arc::new(Health {
            options,
            down: watch::Sender::new(false),
            probing: AtomicBool::new(false),
        })
    }

    /// Whether the server is known to be unreachable now.
    pub(crate) fn is_down(&self) -> bool {
        *self.down.borrow()
    }

    /// Resolves when the server is marked unreachable (at once if it is).
    pub(crate) fn went_down(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut changes = self.down.subscribe();
        async move {
            // An error means the sender is gone: the service is stopping,
            // and the request keeps its own course.
            if changes.wait_for(|down| *down).await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    /// A request met an unreachable server: probe it (one probe at a
    /// time), marking it down while probes fail and up again when one
    /// succeeds. Needs a Tokio runtime.
    pub(crate) fn suspect(self: &Arc<Self>) {
        if self.probing.swap(true, Ordering::AcqRel) {
            return;
        }
        let health = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                let reached = tokio::time::timeout(PROBE_TIMEOUT, health.probe())
                    .await
                    .is_ok_and(|probed| probed.is_ok());
                health.mark(!reached);
                if reached {
                    break;
                }
                tokio::time::sleep(PROBE_INTERVAL).await;
            }
            health.probing.store(false, Ordering::Release);
        });
    }

    /// Marks the server down or up, logging a change.
    fn mark(&self, down: bool) {
        let changed = self.down.send_if_modified(|state| {
            let changed = *state != down;
            *state = down;
            changed
        });
        if changed && down {
            tracing::error!("the database cannot be reached: requests get 503 until it can");
        } else if changed {
            tracing::warn!("the database can be reached again");
        }
    }

    /// A new connection and a query on it.
    async fn probe(&self) -> sqlx::Result<()> {
        match &self.options {
            Probe::Postgres(options) => {
                let mut conn = options.connect().await?;
                conn.execute("SELECT 1").await?;
                conn.close().await
            }
            Probe::MySql(options) => {
                let mut conn = options.connect().await?;
                conn.execute("SELECT 1").await?;
                conn.close().await
            }
        }
    }
}

/// Whether `error` says the database server cannot be reached or cannot
/// serve now, which is not the request's fault: a failed or lost
/// connection, no connection from the pool in time, a server shutting
/// down or starting, a Galera node not part of the primary component.
pub(crate) fn is_unreachable(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(e) => {
            if let Some(mysql) = e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>() {
                // 1047: a Galera node outside the primary component ("WSREP
                // has not yet prepared node for application use"); 1053:
                // server shutdown in progress; 1927: connection killed;
                // 4031: disconnected by the server for inactivity.
                return matches!(mysql.number(), 1047 | 1053 | 1927 | 4031);
            }
            // PostgreSQL: class 08 (connection exception), and 57P01-03
            // (admin shutdown, crash shutdown, cannot connect now).
            let code = e.code();
            let code = code.as_deref().unwrap_or_default();
            code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn options_for_a_closed_port() -> Probe {
        // A port just bound and released: nothing listens there.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or(9);
        Probe::Postgres(
            PgConnectOptions::from_str(&format!("postgres://nobody@127.0.0.1:{port}/none"))
                .unwrap_or_else(|e| panic!("options: {e}")),
        )
    }

    #[test]
    fn lost_connections_and_pool_timeouts_are_unreachable() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert!(is_unreachable(&sqlx::Error::Io(refused)));
        assert!(is_unreachable(&sqlx::Error::PoolTimedOut));
        assert!(is_unreachable(&sqlx::Error::PoolClosed));
        assert!(!is_unreachable(&sqlx::Error::RowNotFound));
        assert!(!is_unreachable(&sqlx::Error::ColumnNotFound("x".into())));
    }

    #[tokio::test]
    async fn a_refused_probe_marks_the_database_down_and_wakes_the_waiting() {
        let health = Health::new(options_for_a_closed_port());
        assert!(!health.is_down());
        let waiting = health.went_down();
        health.suspect();
        tokio::time::timeout(Duration::from_secs(10), waiting)
            .await
            .unwrap_or_else(|_| panic!("not marked down within 10 s"));
        assert!(health.is_down());
        // A second suspicion while the probe runs starts no other probe.
        health.suspect();
        assert!(health.probing.load(Ordering::Acquire));
    }

    #[tokio::test]
    async fn a_probe_that_connects_marks_the_database_up() {
        let Ok(url) = std::env::var("PLACEMENT_TEST_DATABASE") else {
            return;
        };
        if url.starts_with("sqlite") {
            return;
        }
        let (dialect, driver_url) =
            super::super::translate_url(&url).unwrap_or_else(|e| panic!("url: {e}"));
        let options = match dialect {
            super::super::Dialect::Postgres => Probe::Postgres(
                PgConnectOptions::from_str(&driver_url).unwrap_or_else(|e| panic!("options: {e}")),
            ),
            _ => Probe::MySql(
                MySqlConnectOptions::from_str(&driver_url)
                    .unwrap_or_else(|e| panic!("options: {e}")),
            ),
        };
        let health = Health::new(options);
        health.mark(true);
        assert!(health.is_down());
        health.suspect();
        let mut changes = health.down.subscribe();
        tokio::time::timeout(Duration::from_secs(10), changes.wait_for(|down| !*down))
            .await
            .unwrap_or_else(|_| panic!("not marked up within 10 s"))
            .unwrap_or_else(|e| panic!("watch: {e}"));
    }
}
