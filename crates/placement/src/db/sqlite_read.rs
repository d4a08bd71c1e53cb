//! Read connections of an SQLite file, beside its write connection (see
//! [`super::sqlite`]).
//!
//! A read of many rows (the provider list, the candidate search's) runs
//! on a blocking thread, where a closure reads each row's columns in place
//! as the statement is stepped ([`SqliteReader::read`]); a short read
//! (one provider, a class's id) runs on the task itself
//! ([`SqliteReader::read_here`]), sparing the hand-over to another
//! thread.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::{Connection, OpenFlags};
use tokio::sync::{Semaphore, SemaphorePermit};

use super::sqlite::{BUSY_TIMEOUT, blocking};
use super::{Error, Result};

/// Read connections to one SQLite file, opened when first needed and
/// kept for the next read (with their prepared statements).
pub(crate) struct SqliteReader {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    /// At most this many reads at once, so that at most as many
    /// connections (and blocking threads) are in use.
    permits: Semaphore,
    size: usize,
    /// Reads that found every connection busy and waited.
    waits: AtomicU64,
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
            waits: AtomicU64::new(0),
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
        let _permit = self.permit().await?;
        let reader = Arc::clone(self);
        blocking(move || reader.with_connection(read)).await
    }

    /// Runs `read` on a connection of its own, here: for reads of a few
    /// rows.
    ///
    /// # Errors
    ///
    /// The connection could not be opened, or `read` failed.
    pub(crate) async fn read_here<T>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T>,
    ) -> Result<T> {
        let _permit = self.permit().await?;
        self.with_connection(read)
    }

    async fn permit(&self) -> Result<SemaphorePermit<'_>> {
        if self.permits.available_permits() == 0 {
            self.waits.fetch_add(1, Ordering::Relaxed);
        }
        self.permits
            .acquire()
            .await
            .map_err(|_| Error::shutting_down())
    }

    /// Runs `read` on an idle connection, or a new one, and keeps the
    /// connection for the next read.
    fn with_connection<T>(&self, read: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let conn = match self.take_idle() {
            Some(conn) => conn,
            None => self.open()?,
        };
        let result = read(&conn);
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(conn);
        result
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
            self.waits.load(Ordering::Relaxed),
        )
    }

    /// Refuses new reads.
    pub(crate) fn close(&self) {
        self.permits.close();
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
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "query_only", true)?;
        Ok(conn)
    }
}
