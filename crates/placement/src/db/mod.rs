//! The database: connection URLs in upstream's forms, the connection
//! pools, and the small differences between SQLite, PostgreSQL and MySQL.
//!
//! Queries are written once with `?` placeholders; the `sql!` macro rewrites them
//! for PostgreSQL (`$1`, `$2`, ...) once per call site. A statement runs on
//! a `Conn`: a pool, a transaction, or, for an SQLite file, the SQLite
//! driver's own connections (reads of many rows, and every write of a
//! request, see `Store::writing`).

mod conn;
mod error;
mod health;
pub(crate) mod ids;
mod rows;
pub mod schema;
mod server_read;
mod sqlite_read;
pub mod standard;
pub(crate) mod statement;
mod url;
mod write;

use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, ConnectOptions, Executor};

pub(crate) use conn::Conn;
pub use error::{Error, Result};
pub(crate) use health::Health;
pub(crate) use rows::{Bind, Columns};
use server_read::ServerReader;
use sqlite_read::SqliteReader;
pub(crate) use url::redacted;
pub use url::{InvalidDatabaseUrl, translate_url};
use write::SqliteWriter;
pub(crate) use write::pause_before_retry;

/// The database kinds served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// An embedded SQLite file.
    Sqlite,
    /// PostgreSQL.
    Postgres,
    /// MySQL or MariaDB.
    MySql,
}

impl Dialect {
    /// `sql` with `?` placeholders written for this database. For
    /// PostgreSQL the rewritten text is kept in `cache`.
    pub(crate) fn render<'a>(self, cache: &'a OnceLock<String>, sql: &'a str) -> &'a str {
        match self {
            Dialect::Postgres => cache.get_or_init(|| numbered_placeholders(sql)),
            Dialect::Sqlite | Dialect::MySql => sql,
        }
    }

    /// `sql` (built at run time) with `?` placeholders written for this
    /// database.
    pub(crate) fn placeholders(self, sql: String) -> String {
        match self {
            Dialect::Postgres => numbered_placeholders(&sql),
            Dialect::Sqlite | Dialect::MySql => sql,
        }
    }

    /// An expression reading an integer aggregate (such as `SUM(x)`) as a
    /// 64-bit integer on every backend.
    pub(crate) fn int(self, expr: &str) -> String {
        match self {
            Dialect::MySql => format!("CAST({expr} AS SIGNED)"),
            Dialect::Postgres => format!("CAST({expr} AS BIGINT)"),
            Dialect::Sqlite => format!("CAST({expr} AS INTEGER)"),
        }
    }

    /// An expression reading a timestamp column as text
    /// (`YYYY-MM-DD HH:MM:SS[.ffffff]`, UTC).
    pub(crate) fn timestamp_text(self, column: &str) -> String {
        match self {
            // The driver cannot read a column declared DATETIME as text.
            Dialect::Sqlite => format!("CAST({column} AS TEXT)"),
            Dialect::Postgres => format!("to_char({column}, 'YYYY-MM-DD HH24:MI:SS.US')"),
            Dialect::MySql => format!("DATE_FORMAT({column}, '%Y-%m-%d %H:%i:%s.%f')"),
        }
    }

    /// The suffix making a `SELECT` lock the rows it reads for writing
    /// (SQLite has no row locks: its writers are serialized).
    pub(crate) fn for_update(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::Postgres | Dialect::MySql => " FOR UPDATE",
        }
    }

    /// The suffix making a `SELECT` read the latest committed rows and
    /// keep writers off them until the transaction ends.
    pub(crate) fn for_share(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::Postgres => " FOR SHARE",
            Dialect::MySql => " LOCK IN SHARE MODE",
        }
    }

    /// The placeholder for a timestamp parameter given as text.
    pub(crate) fn timestamp_param(self) -> &'static str {
        match self {
            Dialect::Postgres => "CAST(? AS TIMESTAMP)",
            Dialect::Sqlite | Dialect::MySql => "?",
        }
    }

    /// An `INSERT INTO table (columns) VALUES (values)` that inserts
    /// nothing, without failing, when a unique key already holds the row
    /// (`columns` non-empty; its first column is left as it is on MySQL).
    pub(crate) fn insert_unless_present(
        self,
        table: &str,
        columns: &[&str],
        values: &str,
    ) -> String {
        let list = columns.join(", ");
        match self {
            Dialect::Sqlite => format!("INSERT OR IGNORE INTO {table} ({list}) VALUES ({values})"),
            Dialect::Postgres => {
                format!("INSERT INTO {table} ({list}) VALUES ({values}) ON CONFLICT DO NOTHING")
            }
            Dialect::MySql => {
                let first = columns.first().copied().unwrap_or("id");
                format!(
                    "INSERT INTO {table} ({list}) VALUES ({values}) ON DUPLICATE KEY UPDATE {first} = {first}"
                )
            }
        }
    }
}

/// Rewrites `?` placeholders outside quotes as `$1`, `$2`, ...
fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    let mut quote: Option<char> = None;
    for c in sql.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                out.push(c);
            }
            (Some(q), _) if c == q => {
                quote = None;
                out.push(c);
            }
            (None, '?') => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            }
            _ => out.push(c),
        }
    }
    out
}

/// A query text for the store's dialect, rewritten at most once per call
/// site.
macro_rules! sql {
    ($store:expr, $text:expr) => {{
        static CACHE: ::std::sync::OnceLock<String> = ::std::sync::OnceLock::new();
        $store.dialect().render(&CACHE, $text)
    }};
}
pub(crate) use sql;

/// oslo.db's pool and retry settings of `[placement_database]`, for
/// PostgreSQL and MariaDB (an SQLite file's pools are sized by the
/// service: one writer, a few readers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolSettings {
    /// The most connections the pool opens: `max_pool_size` plus
    /// `max_overflow` (16 when neither is set). The reads of many rows
    /// use a pool of their own besides, of 8 connections.
    pub max_connections: u32,
    /// `pool_timeout`: how long a request waits for a free connection
    /// before it fails (30 s).
    pub acquire_timeout: Duration,
    /// `connection_recycle_time`: connections older than this are closed
    /// and opened again (3600 s, as oslo.db's; `None` for -1: never).
    pub max_lifetime: Option<Duration>,
    /// `max_retries`: how many more times the start tries to reach a
    /// database that cannot be reached (10, as oslo.db's; `None` for -1:
    /// without end), `retry_interval` apart (10 s), logging each try.
    pub max_retries: Option<u32>,
    /// `retry_interval`.
    pub retry_interval: Duration,
}

impl Default for PoolSettings {
    fn default() -> Self {
        PoolSettings {
            max_connections: 16,
            acquire_timeout: Duration::from_secs(30),
            max_lifetime: Some(Duration::from_secs(3600)),
            max_retries: Some(10),
            retry_interval: Duration::from_secs(10),
        }
    }
}

/// Whether a failed connection is worth another try at start: the server
/// could not be reached (refused, reset, closed, timed out); not a refused
/// login, a bad URL or a certificate that does not verify, which another
/// try would not change.
fn unreachable(e: &sqlx::Error) -> bool {
    use std::io::ErrorKind;
    match e {
        sqlx::Error::Io(io) => matches!(
            io.kind(),
            ErrorKind::ConnectionRefused
                | ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::NotConnected
                | ErrorKind::AddrNotAvailable
                | ErrorKind::HostUnreachable
                | ErrorKind::NetworkUnreachable
                | ErrorKind::TimedOut
                | ErrorKind::UnexpectedEof
                | ErrorKind::BrokenPipe
        ),
        _ => false,
    }
}

/// The connection pools of the service.
///
/// SQLite allows one writer at a time, so writes go through a pool of one
/// connection (no lock contention, no busy errors) while reads use several;
/// PostgreSQL and MySQL use one pool for both.
#[derive(Clone, Debug)]
pub struct Store {
    read: AnyPool,
    write: AnyPool,
    /// For an SQLite file: reads of many rows through the SQLite driver.
    sqlite_read: Option<Arc<SqliteReader>>,
    /// The write connection of an SQLite file (see [`Store::writing`]).
    sqlite_write: Option<Arc<SqliteWriter>>,
    /// For PostgreSQL and MySQL: reads of many rows through their own
    /// drivers.
    server_read: Option<ServerReader>,
    /// For PostgreSQL and MySQL: whether the server can be reached.
    health: Option<Arc<Health>>,
    dialect: Dialect,
    /// Waits and write conflicts, for the metrics.
    pub(crate) stats: Arc<StoreStats>,
}

/// What the metrics read of the database work (all counters since start).
#[derive(Debug, Default)]
pub(crate) struct StoreStats {
    /// Writes that found the write connections all busy and waited.
    pub(crate) write_waits: AtomicU64,
    /// Allocation write attempts that met a concurrent writer (a provider
    /// or consumer generation changed, a deadlock, a busy database).
    pub(crate) allocation_conflicts: AtomicU64,
    /// Allocation write attempts after the first.
    pub(crate) allocation_retries: AtomicU64,
    /// Allocation writes that met a concurrent writer on every try (409).
    pub(crate) allocation_gave_up: AtomicU64,
}

impl StoreStats {
    pub(crate) fn add(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Connections of one pool as the metrics show them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PoolUsage {
    /// The pool's name in the metrics.
    pub(crate) name: &'static str,
    /// Connections (or, for SQLite file reads, reads) in use.
    pub(crate) in_use: u64,
    /// Connections open and idle.
    pub(crate) idle: u64,
    /// The most connections the pool opens.
    pub(crate) max: u64,
    /// Acquisitions that waited, when counted.
    pub(crate) waits: Option<u64>,
}

impl Store {
    /// Connects to `url` (upstream's forms, see [`translate_url`]) with
    /// the default [`PoolSettings`].
    ///
    /// # Errors
    ///
    /// Fails on an invalid URL or when the database cannot be reached.
    pub async fn connect(url: &str) -> anyhow::Result<Store> {
        Store::connect_with(url, &PoolSettings::default()).await
    }

    /// Connects to `url` with `settings`: a PostgreSQL or MariaDB server
    /// that cannot be reached is tried again `max_retries` times,
    /// `retry_interval` apart, each try logged at warning level.
    ///
    /// # Errors
    ///
    /// Fails on an invalid URL, a refused login, or a database still
    /// unreachable after the last try.
    pub async fn connect_with(url: &str, settings: &PoolSettings) -> anyhow::Result<Store> {
        sqlx::any::install_default_drivers();
        let (dialect, driver_url) = translate_url(url)?;
        let options = AnyConnectOptions::from_str(&driver_url)?.disable_statement_logging();
        let store = match dialect {
            Dialect::Sqlite => {
                let read = sqlite_pool(READERS).connect_with(options.clone()).await?;
                let write = sqlite_pool(1).connect_with(options).await?;
                // The pools have created the file (and set WAL) by now.
                let file = sqlite_file(&driver_url).map(std::path::Path::new);
                let sqlite_read = file.map(|path| SqliteReader::new(path, READERS as usize));
                let sqlite_write = match file {
                    Some(path) => Some(Arc::new(SqliteWriter::open(path)?)),
                    None => None,
                };
                Store {
                    read,
                    write,
                    sqlite_read,
                    sqlite_write,
                    server_read: None,
                    health: None,
                    dialect,
                    stats: Arc::default(),
                }
            }
            Dialect::Postgres | Dialect::MySql => {
                let pool_options = AnyPoolOptions::new()
                    .max_connections(settings.max_connections)
                    .acquire_timeout(settings.acquire_timeout)
                    .max_lifetime(settings.max_lifetime)
                    .after_connect(move |conn, _| {
                        Box::pin(async move {
                            for statement in session_statements(dialect) {
                                conn.execute(*statement).await?;
                            }
                            if dialect == Dialect::MySql {
                                read_committed(conn).await?;
                            }
                            Ok(())
                        })
                    });
                // One connection first, tried again while the server
                // cannot be reached (the pool itself would keep trying for
                // its whole acquire timeout on each try).
                let mut tries = 0u32;
                loop {
                    match options.connect().await {
                        Ok(conn) => {
                            let _ = sqlx::Connection::close(conn).await;
                            break;
                        }
                        Err(e)
                            if unreachable(&e)
                                && settings.max_retries.is_none_or(|max| tries < max) =>
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
                let pool = pool_options.connect_with(options.clone()).await?;
                let server_read = ServerReader::connect(dialect, &driver_url, READERS).await?;
                Store {
                    read: pool.clone(),
                    write: pool,
                    sqlite_read: None,
                    sqlite_write: None,
                    server_read,
                    health: Some(Health::new(options)),
                    dialect,
                    stats: Arc::default(),
                }
            }
        };
        Ok(store)
    }

    /// The database kind.
    #[must_use]
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Whether the database server can be reached (PostgreSQL and MySQL;
    /// `None` for SQLite, a file of this process).
    pub(crate) fn health(&self) -> Option<&Arc<Health>> {
        self.health.as_ref()
    }

    /// The pool for reads.
    #[must_use]
    pub fn reader(&self) -> &AnyPool {
        &self.read
    }

    /// Reads through the SQLite driver's own rows, for an SQLite file
    /// (`None` for other databases and an in-memory SQLite one).
    fn sqlite_reader(&self) -> Option<&Arc<SqliteReader>> {
        self.sqlite_read.as_ref()
    }

    /// Starts a write transaction on the write pool (for the start-up
    /// work; requests write through `Store::writing`).
    ///
    /// # Errors
    ///
    /// Fails when no connection can be had.
    pub async fn begin(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
        self.write.begin().await
    }

    /// A connection of the write pool, for work that manages its own
    /// transaction (the schema sync).
    ///
    /// # Errors
    ///
    /// Fails when no connection can be had.
    pub(crate) async fn write_connection(
        &self,
    ) -> Result<sqlx::pool::PoolConnection<sqlx::Any>, sqlx::Error> {
        self.write.acquire().await
    }

    /// The connections of each pool, for the metrics.
    pub(crate) fn pool_usage(&self) -> Vec<PoolUsage> {
        fn of<DB: sqlx::Database>(
            name: &'static str,
            pool: &sqlx::Pool<DB>,
            waits: Option<u64>,
        ) -> PoolUsage {
            let size = u64::from(pool.size());
            let idle = pool.num_idle() as u64;
            PoolUsage {
                name,
                in_use: size.saturating_sub(idle),
                idle,
                max: u64::from(pool.options().get_max_connections()),
                waits,
            }
        }
        let write_waits = Some(self.stats.write_waits.load(Ordering::Relaxed));
        let mut usage = Vec::with_capacity(3);
        if self.dialect == Dialect::Sqlite {
            usage.push(of("read", &self.read, None));
            usage.push(of("write", &self.write, write_waits));
        } else {
            // One pool for both (PostgreSQL, MySQL).
            usage.push(of("main", &self.write, write_waits));
        }
        if let Some(reader) = &self.sqlite_read {
            let (in_use, idle, max, waits) = reader.usage();
            usage.push(PoolUsage {
                name: "sqlite_read",
                in_use: in_use as u64,
                idle: idle as u64,
                max: max as u64,
                waits: Some(waits),
            });
        }
        match &self.server_read {
            Some(ServerReader::Postgres(pool)) => usage.push(of("server_read", pool, None)),
            Some(ServerReader::MySql(pool)) => usage.push(of("server_read", pool, None)),
            None => {}
        }
        usage
    }

    /// Closes every connection, waiting for those in use.
    pub async fn close(&self) {
        self.read.close().await;
        self.write.close().await;
    }
}

/// Read connections of an SQLite database.
const READERS: u32 = 8;

/// The file of an SQLite driver URL from [`translate_url`], `None` for an
/// in-memory database, and for a path with `%` (which the driver would
/// percent-decode: such a file is read through the pools only).
fn sqlite_file(driver_url: &str) -> Option<&str> {
    let rest = driver_url.strip_prefix("sqlite://")?;
    let path = rest.split_once('?').map_or(rest, |(path, _)| path);
    (!path.is_empty() && !path.contains('%')).then_some(path)
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
async fn read_committed(conn: &mut sqlx::AnyConnection) -> sqlx::Result<()> {
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

fn sqlite_pool(size: u32) -> AnyPoolOptions {
    AnyPoolOptions::new()
        .max_connections(size)
        .acquire_timeout(Duration::from_secs(60))
        // A connection to a local file has nothing to check before use
        // (the check is a round trip to the driver's thread).
        .test_before_acquire(false)
        .after_connect(|conn, _| {
            Box::pin(async move {
                // WAL lets readers run beside the writer; synchronous=FULL
                // makes every acknowledged commit survive a power loss.
                conn.execute("PRAGMA journal_mode = WAL").await?;
                conn.execute("PRAGMA synchronous = FULL").await?;
                conn.execute("PRAGMA busy_timeout = 30000").await?;
                // Upstream leaves foreign keys unenforced on SQLite; a
                // database it filled may rely on that.
                conn.execute("PRAGMA foreign_keys = OFF").await?;
                Ok(())
            })
        })
}

/// Reads a floating-point column (such as `allocation_ratio`) as upstream
/// shows it, `None` for NULL. MySQL's `FLOAT` is single precision: read as
/// `f32`, it is given the shortest decimal that reads back as the same
/// `f32`, so a stored 1.1 is 1.1 (not 1.100000023841858).
///
/// # Errors
///
/// Fails when the column is missing or not a number.
pub(crate) fn read_optional_float<I>(
    row: &sqlx::any::AnyRow,
    column: I,
) -> Result<Option<f64>, sqlx::Error>
where
    I: sqlx::ColumnIndex<sqlx::any::AnyRow> + Copy,
{
    use sqlx::Row;
    if let Ok(single) = row.try_get::<Option<f32>, _>(column) {
        return Ok(single.map(shown));
    }
    match row.try_get::<Option<f64>, _>(column) {
        Ok(double) => Ok(double),
        // SQLite keeps a whole number written as an integer as one.
        #[allow(clippy::cast_precision_loss)]
        Err(e) => row
            .try_get::<Option<i64>, _>(column)
            .map(|i| i.map(|i| i as f64))
            .map_err(|_| e),
    }
}

/// A single-precision value as upstream shows it: its shortest decimal
/// form (a stored 1.1 is 1.1, not 1.100000023841858).
fn shown(single: f32) -> f64 {
    single
        .to_string()
        .parse::<f64>()
        .unwrap_or(f64::from(single))
}

/// How upstream writes `created_at` and `updated_at`: UTC, microseconds.
const TIMESTAMP: &[time::format_description::FormatItem<'static>] = time::macros::format_description!(
    "[year]-[month]-[day] [hour]:[minute]:[second].[subsecond digits:6]"
);

/// A timestamp for `created_at` and `updated_at`: now, in UTC.
#[must_use]
pub fn now_text() -> String {
    time::OffsetDateTime::now_utc()
        .format(TIMESTAMP)
        .unwrap_or_default()
}

/// Parses a stored timestamp (`YYYY-MM-DD HH:MM:SS[.f]`, UTC).
#[must_use]
pub fn parse_timestamp(text: &str) -> Option<std::time::SystemTime> {
    let text = text.trim();
    parse_timestamp_fast(text).or_else(|| parse_timestamp_general(text))
}

/// [`parse_timestamp`] by the format description's parser: any form it
/// takes, at the cost of allocations.
fn parse_timestamp_general(text: &str) -> Option<std::time::SystemTime> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, "0"));
    let seconds = time::PrimitiveDateTime::parse(
        whole,
        time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]"),
    )
    .ok()?
    .assume_utc();
    let digits: String = fraction.chars().take(9).collect();
    let nanos = format!("{digits:0<9}").parse::<i64>().unwrap_or(0);
    Some((seconds + time::Duration::nanoseconds(nanos)).into())
}

/// [`parse_timestamp`] for the form the databases give
/// (`YYYY-MM-DD HH:MM:SS`, then `.` and one to nine digits), without the
/// format description's parser and without allocating; `None` for
/// anything else, which the general parser then reads (or refuses).
fn parse_timestamp_fast(text: &str) -> Option<std::time::SystemTime> {
    let b = text.as_bytes();
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b' '
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        b[range].iter().try_fold(0u32, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    let year = i32::try_from(number(0..4)?).ok()?;
    let month = time::Month::try_from(u8::try_from(number(5..7)?).ok()?).ok()?;
    let day = u8::try_from(number(8..10)?).ok()?;
    let hour = u8::try_from(number(11..13)?).ok()?;
    let minute = u8::try_from(number(14..16)?).ok()?;
    let second = u8::try_from(number(17..19)?).ok()?;
    let nanos = match &b[19..] {
        [] => 0,
        [b'.', digits @ ..] if (1..=9).contains(&digits.len()) => {
            let n = number(20..b.len())?;
            n * 10u32.pow(9 - u32::try_from(digits.len()).ok()?)
        }
        _ => return None,
    };
    let date = time::Date::from_calendar_date(year, month, day).ok()?;
    let time = time::Time::from_hms_nano(hour, minute, second, nanos).ok()?;
    Some(time::PrimitiveDateTime::new(date, time).assume_utc().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_timestamp_path_agrees_with_the_general_parser() {
        for text in [
            "2024-02-29 12:00:00",
            "2024-02-29 12:00:00.5",
            "2024-02-29 12:00:00.123456",
            "2024-02-29 12:00:00.123456789",
            "1970-01-01 00:00:00.000000",
            "9999-12-31 23:59:59.999999",
            "2023-02-29 12:00:00",
            "2024-13-01 00:00:00",
            "2024-00-01 00:00:00",
            "2024-01-32 00:00:00",
            "2024-01-01 24:00:00",
            "2024-01-01 00:60:00",
            "2024-01-01 00:00:60",
            "2024-01-01T00:00:00",
            "2024-01-01 00:00:00.",
            "2024-01-01 00:00:00.1234567890",
            "2024-01-01 00:00:00.12a",
            "2024-01-01 00:00:00Z",
            "+024-01-01 00:00:00",
            "2024-1-01 00:00:00",
        ] {
            if let Some(fast) = parse_timestamp_fast(text) {
                assert_eq!(Some(fast), parse_timestamp_general(text), "{text}");
            }
            assert_eq!(
                parse_timestamp(text),
                parse_timestamp_general(text),
                "{text}"
            );
        }
        assert!(parse_timestamp_fast("2024-02-29 12:00:00.123456").is_some());
        assert!(parse_timestamp_fast("2024-02-29 12:00:00").is_some());
    }

    #[test]
    fn the_sqlite_file_of_a_driver_url() {
        let file = |url| sqlite_file(&translate_url(url).unwrap().1).map(str::to_owned);
        assert_eq!(file("sqlite:////tmp/p.db").as_deref(), Some("/tmp/p.db"));
        assert_eq!(file("sqlite:///p.db?x=1").as_deref(), Some("p.db"));
        assert_eq!(file("sqlite://"), None);
        assert_eq!(file("sqlite:///:memory:"), None);
        assert_eq!(file("sqlite:////tmp/a%20b.db"), None);
        assert_eq!(file("postgresql://root@127.0.0.1/test"), None);
    }

    #[test]
    fn placeholders_are_numbered_outside_quotes() {
        assert_eq!(
            numbered_placeholders("SELECT '?' FROM t WHERE a = ? AND b = ?"),
            "SELECT '?' FROM t WHERE a = $1 AND b = $2"
        );
    }

    #[test]
    fn timestamps_round_trip() {
        let text = now_text();
        let parsed = parse_timestamp(&text).unwrap();
        let back = parsed
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(now - back < 5, "{text}");
        assert_eq!(
            parse_timestamp("1970-01-02 00:00:01"),
            Some(std::time::UNIX_EPOCH + Duration::from_secs(86_401))
        );
        assert_eq!(
            parse_timestamp("2024-02-29 12:00:00.5"),
            Some(std::time::UNIX_EPOCH + Duration::from_millis(1_709_208_000_500))
        );
        assert_eq!(parse_timestamp("yesterday"), None);
    }
}
