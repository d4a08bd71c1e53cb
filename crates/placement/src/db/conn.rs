//! Statements run on whichever connection a caller holds: a pool, a
//! transaction of the `Any` driver, or the SQLite driver's own write
//! connection (see [`super::Writer`]). The objects write each statement
//! once, against [`Conn`], and read its rows by position ([`Columns`]).

use std::sync::{Mutex, PoisonError};

use sqlx::AnyPool;

use super::Result;
use super::rows::{Bind, Columns, bind_all, fold_fetched, fold_sqlite};

/// Where a statement runs. Text is written for the store's dialect (as
/// `sql!` and [`super::Dialect::placeholders`] give it).
pub(crate) enum Conn<'a> {
    /// Any connection of a pool, outside a transaction.
    Pool(&'a AnyPool),
    /// A transaction of the `Any` driver.
    Tx(&'a mut sqlx::Transaction<'static, sqlx::Any>),
    /// The SQLite driver's own connection, inside the transaction its
    /// [`super::Transaction`] began.
    Sqlite(&'a Mutex<rusqlite::Connection>),
}

impl<'a, 'b> From<&'a mut Conn<'b>> for Conn<'a> {
    /// The same connection, for one more call.
    fn from(conn: &'a mut Conn<'b>) -> Self {
        match conn {
            Conn::Pool(pool) => Conn::Pool(pool),
            Conn::Tx(tx) => Conn::Tx(tx),
            Conn::Sqlite(sqlite) => Conn::Sqlite(sqlite),
        }
    }
}

impl<'a> From<&'a AnyPool> for Conn<'a> {
    fn from(pool: &'a AnyPool) -> Self {
        Conn::Pool(pool)
    }
}

/// What a statement that returns no rows did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Executed {
    pub(crate) rows_affected: u64,
    /// The new row's id where the database tells it (SQLite, MySQL).
    pub(crate) last_insert_id: Option<i64>,
}

/// The connection (a panic while it was held left it usable: SQLite
/// rolls back what a failed statement did).
pub(super) fn lock(
    conn: &Mutex<rusqlite::Connection>,
) -> std::sync::MutexGuard<'_, rusqlite::Connection> {
    conn.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Conn<'_> {
    /// Runs the query `sql` with `binds`, folding its rows into `init`
    /// with `step`.
    ///
    /// # Errors
    ///
    /// The database failed, or `step` did.
    pub(crate) async fn fold<A, F>(
        &mut self,
        sql: &str,
        binds: &[Bind],
        init: A,
        step: F,
    ) -> Result<A>
    where
        F: FnMut(&mut A, &dyn Columns) -> Result<()> + Send,
    {
        match self {
            Conn::Pool(pool) => fold_fetched(*pool, sql, binds, init, step).await,
            Conn::Tx(tx) => fold_fetched(&mut ***tx, sql, binds, init, step).await,
            Conn::Sqlite(conn) => fold_sqlite(&lock(conn), sql, binds, init, step),
        }
    }

    /// Every row of the query, each made into a `T` by `decode`.
    ///
    /// # Errors
    ///
    /// The database failed, or `decode` did.
    pub(crate) async fn rows<T, F>(
        &mut self,
        sql: &str,
        binds: &[Bind],
        mut decode: F,
    ) -> Result<Vec<T>>
    where
        F: FnMut(&dyn Columns) -> Result<T> + Send,
    {
        self.fold(sql, binds, Vec::new(), |out: &mut Vec<T>, row| {
            out.push(decode(row)?);
            Ok(())
        })
        .await
    }

    /// The first row of the query, made into a `T` by `decode`.
    ///
    /// # Errors
    ///
    /// The database failed, or `decode` did.
    pub(crate) async fn row<T, F>(
        &mut self,
        sql: &str,
        binds: &[Bind],
        mut decode: F,
    ) -> Result<Option<T>>
    where
        F: FnMut(&dyn Columns) -> Result<T> + Send,
    {
        self.fold(sql, binds, None, |first: &mut Option<T>, row| {
            if first.is_none() {
                *first = Some(decode(row)?);
            }
            Ok(())
        })
        .await
    }

    /// Runs the statement `sql` (an insert, update or delete) with `binds`.
    ///
    /// # Errors
    ///
    /// The database failed.
    pub(crate) async fn execute(&mut self, sql: &str, binds: &[Bind]) -> Result<Executed> {
        let query = || bind_all(sqlx::query(sql), binds);
        let done = match self {
            Conn::Pool(pool) => query().execute(*pool).await?,
            Conn::Tx(tx) => query().execute(&mut ***tx).await?,
            Conn::Sqlite(conn) => {
                let conn = lock(conn);
                let rows_affected = conn
                    .prepare_cached(sql)?
                    .execute(rusqlite::params_from_iter(binds))?;
                return Ok(Executed {
                    rows_affected: rows_affected as u64,
                    last_insert_id: Some(conn.last_insert_rowid()),
                });
            }
        };
        Ok(Executed {
            rows_affected: done.rows_affected(),
            last_insert_id: done.last_insert_id(),
        })
    }
}
