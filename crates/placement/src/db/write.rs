//! Write transactions: on the `Any` write pool, or, for an SQLite file,
//! on the SQLite driver's own connection on a blocking thread.
//!
//! Through sqlx, every statement of an SQLite transaction is a round trip
//! to the driver's worker thread and back; a write of a dozen statements
//! spent most of its time in those hand-overs while it held the one write
//! lock. [`Store::writing`] instead runs the whole of a write's work on one
//! blocking thread, where each statement is a plain call. Every write of a
//! request goes this way; the write pool is left to the start-up work
//! (schema and standard rows). Its one connection is the lock: a write
//! holds it throughout, so that one write at a time uses the SQLite
//! connection and none writes beside a transaction of the pool.

use std::future::Future;
use std::hash::{BuildHasher, RandomState};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use sqlx::AnyPool;

use super::conn::{Conn, lock};
use super::sqlite_read::shutting_down;
use super::{Error, Result, Store};

/// The SQLite driver's own write connection to one file.
pub(crate) struct SqliteWriter {
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for SqliteWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteWriter").finish_non_exhaustive()
    }
}

impl SqliteWriter {
    /// Opens the file at `path` (which exists, in WAL mode) for writing,
    /// with the settings of the `Any` pools' connections.
    pub(crate) fn open(path: &Path) -> rusqlite::Result<SqliteWriter> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(Duration::from_secs(30))?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", false)?;
        conn.set_prepared_statement_cache_capacity(64);
        Ok(SqliteWriter {
            conn: Mutex::new(conn),
        })
    }
}

/// Begins the write transactions of one [`Store::writing`].
pub(crate) enum Writer {
    Any(AnyPool),
    Sqlite(Arc<SqliteWriter>),
}

impl Writer {
    /// Begins a transaction (on SQLite, taking the write lock at once, so
    /// that it never fails half-way for want of it).
    ///
    /// # Errors
    ///
    /// No connection could be had, or the lock not taken in time.
    pub(crate) async fn begin(&mut self) -> Result<Transaction<'_>> {
        match self {
            Writer::Any(pool) => Ok(Transaction::Any(pool.begin().await?)),
            Writer::Sqlite(writer) => {
                lock(&writer.conn).execute_batch("BEGIN IMMEDIATE")?;
                Ok(Transaction::Sqlite(SqliteTransaction {
                    conn: &writer.conn,
                    open: true,
                }))
            }
        }
    }
}

/// One write transaction; dropped without [`Transaction::commit`], it is
/// rolled back.
pub(crate) enum Transaction<'w> {
    Any(sqlx::Transaction<'static, sqlx::Any>),
    Sqlite(SqliteTransaction<'w>),
}

/// A transaction begun on [`SqliteWriter`]'s connection.
pub(crate) struct SqliteTransaction<'w> {
    conn: &'w Mutex<Connection>,
    open: bool,
}

impl Drop for SqliteTransaction<'_> {
    fn drop(&mut self) {
        if self.open {
            // Fails only when there is no transaction left to roll back.
            let _ = lock(self.conn).execute_batch("ROLLBACK");
        }
    }
}

impl Transaction<'_> {
    /// Where the transaction's statements run.
    pub(crate) fn conn(&mut self) -> Conn<'_> {
        match self {
            Transaction::Any(tx) => Conn::Tx(tx),
            Transaction::Sqlite(tx) => Conn::Sqlite(tx.conn),
        }
    }

    /// Commits the transaction.
    ///
    /// # Errors
    ///
    /// The database failed to commit; nothing was written.
    pub(crate) async fn commit(self) -> Result<()> {
        match self {
            Transaction::Any(tx) => Ok(tx.commit().await?),
            Transaction::Sqlite(mut tx) => {
                lock(tx.conn).execute_batch("COMMIT")?;
                tx.open = false;
                Ok(())
            }
        }
    }
}

/// Waits a little before a write's next try, after `tries` tries met a
/// concurrent writer or a busy database (see [`retry_pause`]). Without it,
/// the tries of a write can all be spent within the millisecond that the
/// conflict lasts.
pub(crate) async fn pause_before_retry(tries: u32) {
    tokio::time::sleep(retry_pause(tries)).await;
}

/// How long to wait after `tries` tries: up to about 1 ms after the
/// first, doubling to at most 64 ms, drawn from the upper half of that so
/// that writers that failed together do not try again together.
fn retry_pause(tries: u32) -> Duration {
    let longest = 1000u64 << tries.saturating_sub(1).min(6);
    // A fresh `RandomState` hashes with new random keys: a cheap draw.
    let draw = RandomState::new().hash_one(tries) % (longest / 2);
    Duration::from_micros(longest / 2 + draw)
}

/// The work of one [`Store::transaction`]: a boxed future borrowing the
/// store and the transaction's connection.
pub(crate) type TransactionWork<'a, T, E> =
    std::pin::Pin<Box<dyn Future<Output = Result<T, E>> + Send + 'a>>;

impl Store {
    /// Runs `work` in one write transaction (see [`Store::writing`]),
    /// committed when `work` succeeds and rolled back when it fails.
    ///
    /// # Errors
    ///
    /// Those of `work`, and the database's (no connection, a failed
    /// commit).
    pub(crate) async fn transaction<T, E, F>(&self, work: F) -> Result<T, E>
    where
        F: for<'a> FnOnce(&'a Store, &'a mut Conn<'a>) -> TransactionWork<'a, T, E>
            + Send
            + 'static,
        T: Send + 'static,
        E: From<Error> + Send + 'static,
    {
        let store = self.clone();
        self.writing(move |mut writer| async move {
            let mut tx = writer.begin().await?;
            let mut conn = tx.conn();
            let done = work(&store, &mut conn).await?;
            tx.commit().await?;
            Ok(done)
        })
        .await
    }

    /// Runs `work`, which writes through the [`Writer`] it is given. For
    /// an SQLite file, `work` runs on a blocking thread with the SQLite
    /// driver's own connection (its statements never wait on another
    /// thread), holding the write pool's one connection meanwhile: one
    /// `work` at a time, and never beside a transaction of that pool.
    /// Elsewhere it runs here, on the write pool.
    ///
    /// # Errors
    ///
    /// Those of `work`, and a failure to take the write pool's connection.
    pub(crate) async fn writing<T, E, F, Fut>(&self, work: F) -> Result<T, E>
    where
        F: FnOnce(Writer) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, E>> + Send,
        T: Send + 'static,
        E: From<Error> + Send + 'static,
    {
        // Every write connection busy: this write waits for one.
        if self.write.num_idle() == 0
            && self.write.size() >= self.write.options().get_max_connections()
        {
            super::StoreStats::add(&self.stats.write_waits);
        }
        let Some(writer) = self.sqlite_write.clone() else {
            return work(Writer::Any(self.write.clone())).await;
        };
        let lock = self.write.acquire().await.map_err(Error::from)?;
        let runtime = tokio::runtime::Handle::current();
        // The lock goes with the work: should this task be dropped (its
        // client gone), the work still runs to its end, holding the lock.
        let done = tokio::task::spawn_blocking(move || {
            runtime.block_on(async move {
                let done = work(Writer::Sqlite(writer)).await;
                drop(lock);
                done
            })
        })
        .await;
        match done {
            Ok(result) => result,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // Blocking tasks are only cancelled when the runtime shuts down.
            Err(_) => Err(shutting_down().into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_pauses_double_up_to_a_cap_and_vary() {
        for tries in 1..=12u32 {
            let longest = Duration::from_millis(1 << (tries - 1).min(6));
            let pauses: Vec<Duration> = (0..50).map(|_| retry_pause(tries)).collect();
            for pause in &pauses {
                assert!(
                    *pause >= longest / 2 && *pause < longest,
                    "{tries}: {pause:?}"
                );
            }
            let first = pauses[0];
            assert!(
                pauses.iter().any(|p| *p != first),
                "{tries}: always {first:?}"
            );
        }
    }
}
