//! PostgreSQL and MySQL (or MariaDB) through their own sqlx drivers: a
//! main pool for statements and transactions, and a pool of its own for
//! reads of many rows ([`super::Store::fold_rows`]), so that a long
//! read never keeps a write waiting for a connection.
//!
//! The drivers' own rows keep the values where the server's message put
//! them, and [`Columns`] reads them in place, by position: no owned copy
//! of each value, as a driver-neutral row would make (docs/decisions.md).

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::mysql::{MySql, MySqlConnectOptions, MySqlConnection, MySqlRow};
use sqlx::pool::PoolOptions;
use sqlx::postgres::{PgConnectOptions, PgRow, Postgres};
use sqlx::{ConnectOptions, Connection, Database, Executor, Pool, Row, TypeInfo, ValueRef};

use super::health::{Health, Probe};
use super::{Columns, Dialect, PoolSettings, READERS, Result, shown};

/// The pools of one PostgreSQL or MySQL database.
#[derive(Debug)]
pub(crate) struct Server<DB: Database> {
    /// Statements and transactions of requests, and the start-up work.
    pub(crate) main: Pool<DB>,
    /// Reads of many rows.
    pub(crate) read: Pool<DB>,
    /// Whether the server can be reached.
    pub(crate) health: Arc<Health>,
}

impl<DB: Database> Clone for Server<DB> {
    fn clone(&self) -> Self {
        Server {
            main: self.main.clone(),
            read: self.read.clone(),
            health: Arc::clone(&self.health),
        }
    }
}

/// Connects to the PostgreSQL database of `driver_url` (from
/// [`super::translate_url`]), once the server can be reached.
pub(super) async fn postgres(
    driver_url: &str,
    settings: &PoolSettings,
) -> anyhow::Result<Server<Postgres>> {
    let options = PgConnectOptions::from_str(driver_url)?.disable_statement_logging();
    wait_for_server(&options, settings).await?;
    let main = main_pool::<Postgres>(settings)
        .after_connect(|conn, _| {
            Box::pin(async move { session::<Postgres>(conn, Dialect::Postgres).await })
        })
        .connect_with(options.clone())
        .await?;
    let read = read_pool::<Postgres>()
        .after_connect(|conn, _| {
            Box::pin(async move { session::<Postgres>(conn, Dialect::Postgres).await })
        })
        .connect_with(options.clone())
        .await?;
    Ok(Server {
        main,
        read,
        health: Health::new(Probe::Postgres(options)),
    })
}

/// Connects to the MySQL or MariaDB database of `driver_url` (from
/// [`super::translate_url`]), once the server can be reached.
pub(super) async fn mysql(
    driver_url: &str,
    settings: &PoolSettings,
) -> anyhow::Result<Server<MySql>> {
    let options = MySqlConnectOptions::from_str(driver_url)?.disable_statement_logging();
    wait_for_server(&options, settings).await?;
    let main = main_pool::<MySql>(settings)
        .after_connect(|conn, _| {
            Box::pin(async move {
                session::<MySql>(conn, Dialect::MySql).await?;
                read_committed(conn).await
            })
        })
        .connect_with(options.clone())
        .await?;
    let read = read_pool::<MySql>()
        .after_connect(|conn, _| {
            Box::pin(async move { session::<MySql>(conn, Dialect::MySql).await })
        })
        .connect_with(options.clone())
        .await?;
    Ok(Server {
        main,
        read,
        health: Health::new(Probe::MySql(options)),
    })
}

/// The main pool's settings: oslo.db's (`PoolSettings`).
fn main_pool<DB: Database>(settings: &PoolSettings) -> PoolOptions<DB> {
    PoolOptions::<DB>::new()
        .max_connections(settings.max_connections)
        .acquire_timeout(settings.acquire_timeout)
        .max_lifetime(settings.max_lifetime)
}

/// The read pool's settings.
fn read_pool<DB: Database>() -> PoolOptions<DB> {
    PoolOptions::<DB>::new()
        .max_connections(READERS)
        .acquire_timeout(Duration::from_secs(30))
}

/// One connection first, tried again while the server cannot be reached
/// (the pool itself would keep trying for its whole acquire timeout on
/// each try).
async fn wait_for_server<O>(options: &O, settings: &PoolSettings) -> anyhow::Result<()>
where
    O: ConnectOptions,
    O::Connection: Sized,
{
    let mut tries = 0u32;
    loop {
        match options.connect().await {
            Ok(conn) => {
                let _ = conn.close().await;
                return Ok(());
            }
            Err(e)
                if super::unreachable(&e) && settings.max_retries.is_none_or(|max| tries < max) =>
            {
                tries += 1;
                let of = settings
                    .max_retries
                    .map_or_else(|| "without end".to_owned(), |m| format!("of {m}"));
                tracing::warn!(
                    "the database cannot be reached ({e}); try {tries} {of} in {} s",
                    settings.retry_interval.as_secs_f64()
                );
                tokio::time::sleep(settings.retry_interval).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Runs what every session runs first ([`session_statements`]).
async fn session<DB>(conn: &mut DB::Connection, dialect: Dialect) -> sqlx::Result<()>
where
    DB: Database,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
{
    for statement in session_statements(dialect) {
        (&mut *conn).execute(*statement).await?;
    }
    Ok(())
}

/// What every PostgreSQL or MySQL session runs first: timestamps are
/// written and read in UTC; on MySQL, upstream's strict modes, with id 0
/// (VCPU) insertable explicitly.
fn session_statements(dialect: Dialect) -> &'static [&'static str] {
    match dialect {
        Dialect::Sqlite => &[],
        Dialect::Postgres => &["SET TIME ZONE 'UTC'"],
        Dialect::MySql => &[
            "SET time_zone = '+00:00'",
            "SET SESSION sql_mode = 'TRADITIONAL,NO_AUTO_VALUE_ON_ZERO'",
        ],
    }
}

/// Puts a MySQL or MariaDB session in read committed, PostgreSQL's
/// default. Under InnoDB's repeatable read, a search that finds nothing
/// locks the index gap where the row would be, and concurrent writers of
/// neighbouring keys (new consumers, their allocations) deadlock on each
/// other's gaps. No write here relies on a snapshot: the generations'
/// compare-and-set and row locks decide, as on PostgreSQL. Statement-based
/// binary logging refuses read committed writes, so with it the server's
/// level is kept.
async fn read_committed(conn: &mut MySqlConnection) -> sqlx::Result<()> {
    let statement_binlog: i64 = sqlx::query_scalar(
        "SELECT CAST(@@log_bin = 1 AND @@binlog_format = 'STATEMENT' AS SIGNED)",
    )
    .fetch_one(&mut *conn)
    .await?;
    if statement_binlog == 0 {
        conn.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
            .await?;
    }
    Ok(())
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
/// column is read as a number too. A single-precision value is shown as
/// upstream shows it (see [`shown`]).
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
