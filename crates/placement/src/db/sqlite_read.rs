//! Reads of an SQLite file through the SQLite driver's own rows
//! (rusqlite), on blocking threads, beside the `Any` pools.
//!
//! For reads of many rows (the provider list): sqlx's `Any` driver copies
//! every value of every row into an owned value and hands each row over
//! from its worker thread, which cost most of a 1,000-provider list.
//! Here a closure reads the columns in place on the thread that steps the
//! statement. Only reads come this way; writes go through
//! [`super::Store::writing`] or the write pool.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use tokio::sync::Semaphore;

use super::{Error, Result};

/// Read connections to one SQLite file, opened when first needed and
/// kept for the next read (with their prepared statements).
pub(crate) struct SqliteReader {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    /// At most this many reads at once, so that at most as many
    /// connections and blocking threads are in use.
    permits: Semaphore,
    size: usize,
    /// Reads that found every connection busy and waited.
    waits: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for SqliteReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteReader")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl SqliteReader {
    /// Reads of the file at `path` (which exists), at most `size` at once.
    pub(crate) fn new(path: &Path, size: usize) -> Arc<SqliteReader> {
        Arc::new(SqliteReader {
            path: path.to_owned(),
            idle: Mutex::new(Vec::with_capacity(size)),
            permits: Semaphore::new(size),
            size,
            waits: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Runs `read` on a connection of its own, on a blocking thread.
    ///
    /// # Errors
    ///
    /// The connection could not be opened, or `read` failed.
    pub(crate) async fn read<T, F>(self: &Arc<Self>, read: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        if self.permits.available_permits() == 0 {
            self.waits
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let _permit = self.permits.acquire().await.map_err(|_| shutting_down())?;
        let reader = Arc::clone(self);
        let done = tokio::task::spawn_blocking(move || {
            let idle = reader.take_idle();
            let conn = match idle {
                Some(conn) => conn,
                None => reader.open()?,
            };
            let result = read(&conn);
            reader
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(conn);
            result
        })
        .await;
        match done {
            Ok(result) => result,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // Blocking tasks are only cancelled when the runtime shuts down.
            Err(_) => Err(shutting_down()),
        }
    }

    /// Reads running now, connections open and idle, the most reads at
    /// once, and how many reads waited.
    pub(crate) fn usage(&self) -> (usize, usize, usize, u64) {
        (
            self.size.saturating_sub(self.permits.available_permits()),
            self.idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .len(),
            self.size,
            self.waits.load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    fn take_idle(&self) -> Option<Connection> {
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        // Not SQLITE_OPEN_READ_ONLY: a read-only connection cannot
        // recover a WAL file that another process left behind.
        // `query_only` keeps this connection from writing instead.
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(Duration::from_secs(30))?;
        conn.pragma_update(None, "query_only", true)?;
        Ok(conn)
    }
}

/// The error of a read that cannot start because the service is
/// stopping (503 at the edge).
pub(super) fn shutting_down() -> Error {
    Error::shutting_down()
}
