//! An SQLite database through the SQLite driver (rusqlite): one write
//! connection, and for a file, read connections beside it.
//!
//! SQLite allows one writer at a time, so writes take turns on the one
//! write connection (an async lock, see [`super::Store::writing`]): no
//! lock contention between connections, no busy errors. Each statement of
//! a write is a plain call on the task (inside a transaction they are
//! short), while the commit, which waits for the disk, runs on a blocking
//! thread. With WAL, reads use connections of their own beside the
//! writer ([`SqliteReader`]). An in-memory database is one connection,
//! for reads and writes alike.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::sqlite_read::SqliteReader;
use super::{Error, READERS, Result};

/// How long a statement waits for another process's lock on the file.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a write waits for its turn before it fails as a pool would.
const WRITE_TURN_TIMEOUT: Duration = Duration::from_secs(60);

/// One SQLite database.
pub(crate) struct Sqlite {
    /// The write connection; for an in-memory database, the only one.
    pub(super) writer: Arc<Mutex<Connection>>,
    /// The turn of one write at a time on `writer`.
    turn: Arc<Semaphore>,
    /// Reads of a file (`None` for an in-memory database, read through
    /// `writer`).
    pub(super) readers: Option<Arc<SqliteReader>>,
}

impl std::fmt::Debug for Sqlite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sqlite")
            .field("readers", &self.readers)
            .finish_non_exhaustive()
    }
}

/// The connection (a panic while it was held left it usable: SQLite
/// rolls back what a failed statement did).
pub(super) fn lock(conn: &Mutex<Connection>) -> std::sync::MutexGuard<'_, Connection> {
    conn.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Sqlite {
    /// Opens the database of an SQLite driver URL from
    /// [`super::translate_url`] (`sqlite::memory:` or
    /// `sqlite://PATH?...`), creating a file that does not exist.
    pub(super) fn open(driver_url: &str) -> Result<Sqlite> {
        let Some(path) = sqlite_file(driver_url) else {
            let conn = Connection::open_in_memory()?;
            // Upstream leaves foreign keys unenforced on SQLite.
            conn.pragma_update(None, "foreign_keys", false)?;
            conn.set_prepared_statement_cache_capacity(64);
            return Ok(Sqlite::with(conn, None));
        };
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // WAL lets readers run beside the writer; synchronous=FULL makes
        // every acknowledged commit survive a power loss.
        let _mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        // Upstream leaves foreign keys unenforced on SQLite; a database it
        // filled may rely on that.
        conn.pragma_update(None, "foreign_keys", false)?;
        conn.set_prepared_statement_cache_capacity(64);
        let readers = SqliteReader::new(&path, READERS as usize);
        Ok(Sqlite::with(conn, Some(readers)))
    }

    fn with(writer: Connection, readers: Option<Arc<SqliteReader>>) -> Sqlite {
        Sqlite {
            writer: Arc::new(Mutex::new(writer)),
            turn: Arc::new(Semaphore::new(1)),
            readers,
        }
    }

    /// Whether a write holds its turn now.
    pub(super) fn writing_now(&self) -> bool {
        self.turn.available_permits() == 0
    }

    /// Waits for the write turn: the write connection, to this caller
    /// alone until the turn is dropped.
    pub(super) async fn turn(&self) -> Result<SqliteTurn> {
        let permit =
            tokio::time::timeout(WRITE_TURN_TIMEOUT, Arc::clone(&self.turn).acquire_owned())
                .await
                .map_err(|_| Error::timed_out())?
                .map_err(|_| Error::shutting_down())?;
        Ok(SqliteTurn {
            conn: Arc::clone(&self.writer),
            _permit: permit,
        })
    }

    /// Waits for the write in progress, then refuses new writes and
    /// reads.
    pub(super) async fn close(&self) {
        if let Ok(permit) = self.turn.acquire().await {
            permit.forget();
        }
        self.turn.close();
        if let Some(readers) = &self.readers {
            readers.close();
        }
    }
}

/// The write connection, held for one write (see [`Sqlite::turn`]).
pub(crate) struct SqliteTurn {
    pub(super) conn: Arc<Mutex<Connection>>,
    _permit: OwnedSemaphorePermit,
}

impl std::fmt::Debug for SqliteTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteTurn").finish_non_exhaustive()
    }
}

impl SqliteTurn {
    /// Begins a transaction, taking the file's write lock at once so that
    /// it never fails half-way for want of it. Tried here first without
    /// waiting; only when another process holds the lock is it waited for
    /// on a blocking thread.
    pub(super) async fn begin(&self) -> Result<()> {
        {
            let conn = lock(&self.conn);
            conn.busy_timeout(Duration::ZERO)?;
            let begun = conn.execute_batch("BEGIN IMMEDIATE");
            conn.busy_timeout(BUSY_TIMEOUT)?;
            match begun {
                Ok(()) => return Ok(()),
                Err(e) if !super::error::is_busy(&e) => return Err(e.into()),
                Err(_) => {}
            }
        }
        let conn = Arc::clone(&self.conn);
        blocking(move || Ok(lock(&conn).execute_batch("BEGIN IMMEDIATE")?)).await
    }

    /// Commits the transaction on a blocking thread (the commit waits for
    /// the disk).
    pub(super) async fn commit(&self) -> Result<()> {
        let conn = Arc::clone(&self.conn);
        blocking(move || Ok(lock(&conn).execute_batch("COMMIT")?)).await
    }

    /// Rolls the transaction back (fails only when there is none).
    pub(super) fn rollback(&self) {
        let _ = lock(&self.conn).execute_batch("ROLLBACK");
    }
}

/// Runs `work` on a blocking thread. Should the caller be dropped, `work`
/// still runs to its end.
pub(super) async fn blocking<T, F>(work: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        // Blocking tasks are only cancelled when the runtime shuts down.
        Err(_) => Err(Error::shutting_down()),
    }
}

/// The file of an SQLite driver URL from [`super::translate_url`] (its
/// path percent-decoded, as SQLite's URL form has it), `None` for an
/// in-memory database.
fn sqlite_file(driver_url: &str) -> Option<PathBuf> {
    let rest = driver_url.strip_prefix("sqlite://")?;
    let path = rest.split_once('?').map_or(rest, |(path, _)| path);
    (!path.is_empty() && path != ":memory:").then(|| Path::new(&percent_decoded(path)).to_owned())
}

/// `text` with each `%XX` replaced by its byte (kept as it is where the
/// result is not UTF-8).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push(u8::try_from(h * 16 + l).unwrap_or(b'%'));
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sqlite_file_of_a_driver_url() {
        let file = |url| {
            sqlite_file(&super::super::translate_url(url).unwrap().1)
                .map(|p| p.display().to_string())
        };
        assert_eq!(file("sqlite:////tmp/p.db").as_deref(), Some("/tmp/p.db"));
        assert_eq!(file("sqlite:///p.db?x=1").as_deref(), Some("p.db"));
        assert_eq!(file("sqlite://"), None);
        assert_eq!(file("sqlite:///:memory:"), None);
        assert_eq!(
            file("sqlite:////tmp/a%20b.db").as_deref(),
            Some("/tmp/a b.db")
        );
        assert_eq!(
            file("sqlite:////tmp/a%2.db").as_deref(),
            Some("/tmp/a%2.db")
        );
        assert_eq!(file("sqlite:////tmp/a%").as_deref(), Some("/tmp/a%"));
        assert_eq!(file("postgresql://root@127.0.0.1/test"), None);
    }
}
