//! Statements run on whichever connection a caller holds: any connection
//! of the store outside a transaction ([`Reader`]), a transaction, or a
//! connection held for the start-up work. The objects write each
//! statement once, against [`Conn`], and read its rows by position
//! ([`Columns`]).

use std::sync::Mutex;

use sqlx::mysql::{MySqlConnection, MySqlPool};
use sqlx::postgres::{PgConnection, PgPool};

use super::Result;
use super::rows::{Bind, Columns, bind_all, fold_fetched, fold_sqlite};
use super::sqlite::lock;
use super::sqlite_read::SqliteReader;

/// Where a statement runs. Text is written for the store's dialect (as
/// `sql!` and [`super::Dialect::placeholders`] give it).
pub(crate) enum Conn<'a> {
    /// Any connection of the PostgreSQL pool, outside a transaction.
    PgPool(&'a PgPool),
    /// One PostgreSQL connection (a transaction's, or one held).
    Pg(&'a mut PgConnection),
    /// Any connection of the MySQL pool, outside a transaction.
    MySqlPool(&'a MySqlPool),
    /// One MySQL connection (a transaction's, or one held).
    MySql(&'a mut MySqlConnection),
    /// A read connection of an SQLite file, outside a transaction.
    SqliteRead(&'a SqliteReader),
    /// The SQLite write connection, inside the transaction of its turn
    /// (or an in-memory database's only connection).
    Sqlite(&'a Mutex<rusqlite::Connection>),
}

/// Any connection of the store, outside a transaction, for reads: as
/// cheap to copy as a reference ([`super::Store::reader`]).
#[derive(Clone, Copy)]
pub(crate) enum Reader<'a> {
    Postgres(&'a PgPool),
    MySql(&'a MySqlPool),
    SqliteFile(&'a SqliteReader),
    SqliteMemory(&'a Mutex<rusqlite::Connection>),
}

impl<'a> From<Reader<'a>> for Conn<'a> {
    fn from(reader: Reader<'a>) -> Self {
        match reader {
            Reader::Postgres(pool) => Conn::PgPool(pool),
            Reader::MySql(pool) => Conn::MySqlPool(pool),
            Reader::SqliteFile(reader) => Conn::SqliteRead(reader),
            Reader::SqliteMemory(conn) => Conn::Sqlite(conn),
        }
    }
}

impl<'a, 'b> From<&'a mut Conn<'b>> for Conn<'a> {
    /// The same connection, for one more call.
    fn from(conn: &'a mut Conn<'b>) -> Self {
        match conn {
            Conn::PgPool(pool) => Conn::PgPool(pool),
            Conn::Pg(conn) => Conn::Pg(conn),
            Conn::MySqlPool(pool) => Conn::MySqlPool(pool),
            Conn::MySql(conn) => Conn::MySql(conn),
            Conn::SqliteRead(reader) => Conn::SqliteRead(reader),
            Conn::Sqlite(conn) => Conn::Sqlite(conn),
        }
    }
}

/// What a statement that returns no rows did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Executed {
    pub(crate) rows_affected: u64,
    /// The new row's id where the database tells it (SQLite, MySQL).
    pub(crate) last_insert_id: Option<i64>,
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
            Conn::PgPool(pool) => fold_fetched(*pool, sql, binds, init, step).await,
            Conn::Pg(conn) => fold_fetched(&mut **conn, sql, binds, init, step).await,
            Conn::MySqlPool(pool) => fold_fetched(*pool, sql, binds, init, step).await,
            Conn::MySql(conn) => fold_fetched(&mut **conn, sql, binds, init, step).await,
            Conn::SqliteRead(reader) => {
                reader
                    .read_here(|conn| fold_sqlite(conn, sql, binds, init, step))
                    .await
            }
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
        fn server(rows_affected: u64, last_insert_id: Option<i64>) -> Executed {
            Executed {
                rows_affected,
                last_insert_id,
            }
        }
        let mysql_id =
            |done: &sqlx::mysql::MySqlQueryResult| i64::try_from(done.last_insert_id()).ok();
        Ok(match self {
            Conn::PgPool(pool) => {
                let done = bind_all(sqlx::query(sql), binds).execute(*pool).await?;
                server(done.rows_affected(), None)
            }
            Conn::Pg(conn) => {
                let done = bind_all(sqlx::query(sql), binds)
                    .execute(&mut **conn)
                    .await?;
                server(done.rows_affected(), None)
            }
            Conn::MySqlPool(pool) => {
                let done = bind_all(sqlx::query(sql), binds).execute(*pool).await?;
                server(done.rows_affected(), mysql_id(&done))
            }
            Conn::MySql(conn) => {
                let done = bind_all(sqlx::query(sql), binds)
                    .execute(&mut **conn)
                    .await?;
                server(done.rows_affected(), mysql_id(&done))
            }
            Conn::SqliteRead(reader) => {
                reader
                    .read_here(|conn| execute_sqlite(conn, sql, binds))
                    .await?
            }
            Conn::Sqlite(conn) => execute_sqlite(&lock(conn), sql, binds)?,
        })
    }
}

/// Runs the statement `sql` with `binds` on an SQLite connection.
fn execute_sqlite(conn: &rusqlite::Connection, sql: &str, binds: &[Bind]) -> Result<Executed> {
    let rows_affected = conn
        .prepare_cached(sql)?
        .execute(rusqlite::params_from_iter(binds))?;
    Ok(Executed {
        rows_affected: rows_affected as u64,
        last_insert_id: Some(conn.last_insert_rowid()),
    })
}
