//! Write transactions: on the main pool of PostgreSQL or MySQL, or on
//! the write connection of SQLite in its turn (see [`super::sqlite`]).

use std::future::Future;
use std::hash::{BuildHasher, RandomState};
use std::time::Duration;

use sqlx::mysql::{MySql, MySqlPool};
use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgPool, Postgres};

use super::conn::Conn;
use super::sqlite::SqliteTurn;
use super::{Driver, Error, Result, Store, StoreStats};

/// Begins the write transactions of one [`Store::writing`].
#[derive(Debug)]
pub(crate) enum Writer {
    Postgres(PgPool),
    MySql(MySqlPool),
    Sqlite(SqliteTurn),
}

impl Writer {
    /// Begins a transaction (on SQLite, taking the write lock at once, so
    /// that it never fails half-way for want of it).
    ///
    /// # Errors
    ///
    /// No connection could be had, or the lock not taken in time.
    pub(crate) async fn begin(&mut self) -> Result<Transaction<'_>> {
        Ok(match self {
            Writer::Postgres(pool) => Transaction::Postgres(pool.begin().await?),
            Writer::MySql(pool) => Transaction::MySql(pool.begin().await?),
            Writer::Sqlite(turn) => {
                turn.begin().await?;
                Transaction::Sqlite(SqliteTransaction { turn, open: true })
            }
        })
    }
}

/// One write transaction; dropped without [`Transaction::commit`], it is
/// rolled back.
pub(crate) enum Transaction<'w> {
    Postgres(sqlx::Transaction<'static, Postgres>),
    MySql(sqlx::Transaction<'static, MySql>),
    Sqlite(SqliteTransaction<'w>),
}

/// A transaction begun on the SQLite write connection of a turn.
pub(crate) struct SqliteTransaction<'w> {
    turn: &'w SqliteTurn,
    open: bool,
}

impl Drop for SqliteTransaction<'_> {
    fn drop(&mut self) {
        if self.open {
            self.turn.rollback();
        }
    }
}

impl Transaction<'_> {
    /// Where the transaction's statements run.
    pub(crate) fn conn(&mut self) -> Conn<'_> {
        match self {
            Transaction::Postgres(tx) => Conn::Pg(tx),
            Transaction::MySql(tx) => Conn::MySql(tx),
            Transaction::Sqlite(tx) => Conn::Sqlite(&tx.turn.conn),
        }
    }

    /// Commits the transaction.
    ///
    /// # Errors
    ///
    /// The database failed to commit; nothing was written.
    pub(crate) async fn commit(self) -> Result<()> {
        match self {
            Transaction::Postgres(tx) => Ok(tx.commit().await?),
            Transaction::MySql(tx) => Ok(tx.commit().await?),
            Transaction::Sqlite(mut tx) => {
                tx.turn.commit().await?;
                tx.open = false;
                Ok(())
            }
        }
    }
}

/// One connection held for work that manages its own transaction or
/// session lock (the schema sync): a connection of the main pool, or
/// SQLite's write connection in its turn.
pub(crate) enum Held {
    Postgres(PoolConnection<Postgres>),
    MySql(PoolConnection<MySql>),
    Sqlite(SqliteTurn),
}

impl Held {
    /// Where the statements run.
    pub(crate) fn conn(&mut self) -> Conn<'_> {
        match self {
            Held::Postgres(conn) => Conn::Pg(conn),
            Held::MySql(conn) => Conn::MySql(conn),
            Held::Sqlite(turn) => Conn::Sqlite(&turn.conn),
        }
    }

    /// Closes a server connection that must not go back to its pool (left
    /// inside a transaction or holding a lock); SQLite's is rolled back.
    pub(crate) fn discard(self) {
        match self {
            Held::Postgres(conn) => drop(conn.detach()),
            Held::MySql(conn) => drop(conn.detach()),
            Held::Sqlite(turn) => turn.rollback(),
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

    /// Runs `work`, which writes through the [`Writer`] it is given. On
    /// SQLite, `work` waits for the write connection's turn (one `work` at
    /// a time) and runs as a task of its own: should the caller be
    /// dropped (its client gone), `work` still runs to its end, holding
    /// the turn. On PostgreSQL and MySQL it runs here, on the main pool.
    ///
    /// # Errors
    ///
    /// Those of `work`, and a turn not had in time.
    pub(crate) async fn writing<T, E, F, Fut>(&self, work: F) -> Result<T, E>
    where
        F: FnOnce(Writer) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
        T: Send + 'static,
        E: From<Error> + Send + 'static,
    {
        match &self.driver {
            Driver::Postgres(server) => {
                if busy(&server.main) {
                    StoreStats::add(&self.stats.write_waits);
                }
                work(Writer::Postgres(server.main.clone())).await
            }
            Driver::MySql(server) => {
                if busy(&server.main) {
                    StoreStats::add(&self.stats.write_waits);
                }
                work(Writer::MySql(server.main.clone())).await
            }
            Driver::Sqlite(sqlite) => {
                if sqlite.writing_now() {
                    StoreStats::add(&self.stats.write_waits);
                }
                let turn = sqlite.turn().await?;
                match tokio::spawn(work(Writer::Sqlite(turn))).await {
                    Ok(result) => result,
                    Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                    // Tasks are only cancelled when the runtime shuts down.
                    Err(_) => Err(Error::shutting_down().into()),
                }
            }
        }
    }

    /// One connection held for work that manages its own transaction or
    /// session lock (the schema sync); on SQLite, the write connection in
    /// its turn.
    ///
    /// # Errors
    ///
    /// No connection could be had.
    pub(crate) async fn hold(&self) -> Result<Held> {
        Ok(match &self.driver {
            Driver::Postgres(server) => Held::Postgres(server.main.acquire().await?),
            Driver::MySql(server) => Held::MySql(server.main.acquire().await?),
            Driver::Sqlite(sqlite) => Held::Sqlite(sqlite.turn().await?),
        })
    }
}

/// Whether every connection of `pool` is in use: a write waits for one.
fn busy<DB: sqlx::Database>(pool: &sqlx::Pool<DB>) -> bool {
    pool.num_idle() == 0 && pool.size() >= pool.options().get_max_connections()
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
