//! Reads of many rows from PostgreSQL and MySQL through their own sqlx
//! drivers, beside the `Any` pool.
//!
//! sqlx's `Any` driver converts every row it reads into an `AnyRow`, with
//! an owned copy of each value and of the statement's column list, a
//! large part of the time of long lists (docs/decisions.md). The
//! drivers' own rows keep the values where the server's message put them,
//! and [`Columns`] reads them in place, by position.

use std::str::FromStr;
use std::time::Duration;

use sqlx::mysql::{MySqlConnectOptions, MySqlPool, MySqlRow};
use sqlx::pool::PoolOptions;
use sqlx::postgres::{PgConnectOptions, PgPool, PgRow};
use sqlx::{ConnectOptions, Connection, Database, Executor, Pool, Row, TypeInfo, ValueRef};

use super::rows::fold_fetched;
use super::{Bind, Columns, Dialect, Result, session_statements, shown};

/// A read pool of the database's own driver.
#[derive(Clone, Debug)]
pub(crate) enum ServerReader {
    Postgres(PgPool),
    MySql(MySqlPool),
}

impl ServerReader {
    /// A pool of at most `size` connections to `driver_url` (from
    /// [`super::translate_url`]), its sessions set up as the `Any` pool's
    /// are; `None` for SQLite.
    pub(crate) async fn connect(
        dialect: Dialect,
        driver_url: &str,
        size: u32,
    ) -> sqlx::Result<Option<ServerReader>> {
        Ok(Some(match dialect {
            Dialect::Sqlite => return Ok(None),
            Dialect::Postgres => ServerReader::Postgres(
                pool(PgConnectOptions::from_str(driver_url)?, dialect, size).await?,
            ),
            Dialect::MySql => ServerReader::MySql(
                pool(MySqlConnectOptions::from_str(driver_url)?, dialect, size).await?,
            ),
        }))
    }

    /// Runs the read `sql` (the dialect's placeholders) with `binds`,
    /// folding its rows into `init` with `step`.
    pub(crate) async fn fold<A, F>(&self, sql: &str, binds: &[Bind], init: A, step: F) -> Result<A>
    where
        F: FnMut(&mut A, &dyn Columns) -> Result<()>,
    {
        match self {
            ServerReader::Postgres(pool) => fold_fetched(pool, sql, binds, init, step).await,
            ServerReader::MySql(pool) => fold_fetched(pool, sql, binds, init, step).await,
        }
    }
}

/// A pool of the driver of `DB`, its sessions set up for `dialect`.
async fn pool<DB>(
    options: <DB::Connection as Connection>::Options,
    dialect: Dialect,
    size: u32,
) -> sqlx::Result<Pool<DB>>
where
    DB: Database,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
{
    PoolOptions::<DB>::new()
        .max_connections(size)
        .acquire_timeout(Duration::from_secs(30))
        .after_connect(move |conn, _| {
            Box::pin(async move {
                for statement in session_statements(dialect) {
                    conn.execute(*statement).await?;
                }
                Ok(())
            })
        })
        .connect_with(options.disable_statement_logging())
        .await
}

impl Columns for PgRow {
    fn int(&self, column: usize) -> Result<Option<i64>> {
        let raw = self.try_get_raw(column)?;
        if raw.is_null() {
            return Ok(None);
        }
        // The driver decodes a 64-bit integer from INT8 only; upstream's
        // ids and most counts are INT4.
        let value = match raw.type_info().name() {
            "INT4" => i64::from(self.try_get_unchecked::<i32, _>(column)?),
            "INT2" => i64::from(self.try_get_unchecked::<i16, _>(column)?),
            _ => self.try_get::<i64, _>(column)?,
        };
        Ok(Some(value))
    }

    fn text(&self, column: usize) -> Result<Option<&str>> {
        Ok(self.try_get(column)?)
    }

    fn float(&self, column: usize) -> Result<Option<f64>> {
        float(self, column, "FLOAT4", "FLOAT8")
    }
}

impl Columns for MySqlRow {
    fn int(&self, column: usize) -> Result<Option<i64>> {
        // The driver decodes a 64-bit integer from any signed integer type.
        Ok(self.try_get(column)?)
    }

    fn text(&self, column: usize) -> Result<Option<&str>> {
        Ok(self.try_get(column)?)
    }

    fn float(&self, column: usize) -> Result<Option<f64>> {
        float(self, column, "FLOAT", "DOUBLE")
    }
}

/// A floating-point column of a driver's row whose single- and
/// double-precision types are named `single` and `double`; an integer
/// column is read as a number too.
fn float<R>(row: &R, column: usize, single: &str, double: &str) -> Result<Option<f64>>
where
    R: Row + Columns,
    usize: sqlx::ColumnIndex<R>,
    for<'r> f32: sqlx::Decode<'r, R::Database>,
    for<'r> f64: sqlx::Decode<'r, R::Database>,
{
    let raw = row.try_get_raw(column)?;
    if raw.is_null() {
        return Ok(None);
    }
    let kind = raw.type_info();
    let value = if kind.name() == single {
        shown(row.try_get_unchecked::<f32, _>(column)?)
    } else if kind.name() == double {
        row.try_get_unchecked::<f64, _>(column)?
    } else {
        #[allow(clippy::cast_precision_loss)]
        let whole = row.required_int(column)? as f64;
        whole
    };
    Ok(Some(value))
}
