//! The database: connection URLs in upstream's forms, the connection
//! pools, and the small differences between SQLite, PostgreSQL and MySQL.
//!
//! One driver per database: SQLite through rusqlite, PostgreSQL and MySQL
//! through their own sqlx drivers ([`Store`] holds the one of its
//! database). Queries are written once with `?` placeholders; the `sql!`
//! macro rewrites them for PostgreSQL (`$1`, `$2`, ...) once per call
//! site. A statement runs on a `Conn`: any connection of the store
//! outside a transaction, a transaction (see `Store::writing`), or a
//! connection held for the start-up work.

mod conn;
mod error;
mod health;
pub(crate) mod ids;
mod rows;
pub mod schema;
mod server;
mod sqlite;
mod sqlite_read;
pub mod standard;
pub(crate) mod statement;
mod url;
mod write;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use sqlx::mysql::MySql;
use sqlx::postgres::Postgres;

pub(crate) use conn::{Conn, Reader};
pub use error::{Error, Result};
pub(crate) use health::Health;
pub(crate) use rows::{Bind, Columns};
use server::Server;
use sqlite::Sqlite;
pub(crate) use url::redacted;
pub use url::{InvalidDatabaseUrl, translate_url};
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

/// The database of the service, through the one driver of its kind.
///
/// Cheap to clone: the clones share the connections.
#[derive(Clone, Debug)]
pub struct Store {
    driver: Driver,
    /// Waits and write conflicts, for the metrics.
    pub(crate) stats: Arc<StoreStats>,
}

/// The driver of the store's database, with what that database needs.
#[derive(Clone, Debug)]
enum Driver {
    /// An SQLite file, or an in-memory database.
    Sqlite(Arc<Sqlite>),
    /// PostgreSQL.
    Postgres(Server<Postgres>),
    /// MySQL or MariaDB.
    MySql(Server<MySql>),
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
        let (dialect, driver_url) = translate_url(url)?;
        let driver = match dialect {
            Dialect::Sqlite => Driver::Sqlite(Arc::new(Sqlite::open(&driver_url)?)),
            Dialect::Postgres => Driver::Postgres(server::postgres(&driver_url, settings).await?),
            Dialect::MySql => Driver::MySql(server::mysql(&driver_url, settings).await?),
        };
        Ok(Store {
            driver,
            stats: Arc::default(),
        })
    }

    /// The database kind.
    #[must_use]
    pub fn dialect(&self) -> Dialect {
        match self.driver {
            Driver::Sqlite(_) => Dialect::Sqlite,
            Driver::Postgres(_) => Dialect::Postgres,
            Driver::MySql(_) => Dialect::MySql,
        }
    }

    /// Whether the database server can be reached (PostgreSQL and MySQL;
    /// `None` for SQLite, a file of this process).
    pub(crate) fn health(&self) -> Option<&Arc<Health>> {
        match &self.driver {
            Driver::Sqlite(_) => None,
            Driver::Postgres(server) => Some(&server.health),
            Driver::MySql(server) => Some(&server.health),
        }
    }

    /// Any connection of the store, for reads outside a transaction.
    pub(crate) fn reader(&self) -> Reader<'_> {
        match &self.driver {
            Driver::Sqlite(sqlite) => match &sqlite.readers {
                Some(readers) => Reader::SqliteFile(readers),
                None => Reader::SqliteMemory(&sqlite.writer),
            },
            Driver::Postgres(server) => Reader::Postgres(&server.main),
            Driver::MySql(server) => Reader::MySql(&server.main),
        }
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
        match &self.driver {
            Driver::Sqlite(sqlite) => {
                let writing = u64::from(sqlite.writing_now());
                let mut usage = vec![PoolUsage {
                    name: "write",
                    in_use: writing,
                    idle: 1 - writing,
                    max: 1,
                    waits: write_waits,
                }];
                if let Some(readers) = &sqlite.readers {
                    let (in_use, idle, max, waits) = readers.usage();
                    usage.push(PoolUsage {
                        name: "sqlite_read",
                        in_use: in_use as u64,
                        idle: idle as u64,
                        max: max as u64,
                        waits: Some(waits),
                    });
                }
                usage
            }
            // The main pool serves writes and short reads alike.
            Driver::Postgres(server) => vec![
                of("main", &server.main, write_waits),
                of("server_read", &server.read, None),
            ],
            Driver::MySql(server) => vec![
                of("main", &server.main, write_waits),
                of("server_read", &server.read, None),
            ],
        }
    }

    /// Closes every connection, waiting for those in use.
    pub async fn close(&self) {
        match &self.driver {
            Driver::Sqlite(sqlite) => sqlite.close().await,
            Driver::Postgres(server) => {
                server.main.close().await;
                server.read.close().await;
            }
            Driver::MySql(server) => {
                server.main.close().await;
                server.read.close().await;
            }
        }
    }
}

/// Read connections of an SQLite file, and of the read pool of
/// PostgreSQL and MySQL.
const READERS: u32 = 8;

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

    /// Writes of one store in turn, each committed or rolled back whole,
    /// and read back on every read path: an in-memory database (one
    /// connection) and a file (a write connection, read connections).
    #[tokio::test]
    async fn sqlite_writes_commit_or_roll_back_whole() {
        let dir = std::env::temp_dir().join(format!(
            "placement-store-{}-{}",
            std::process::id(),
            now_text().replace([' ', ':', '.'], "-")
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let file = format!("sqlite:///{}", dir.join("p.db").display());
        for url in ["sqlite://", file.as_str()] {
            let store = Store::connect(url).await.unwrap();
            schema::sync(&store).await.unwrap();
            standard::sync(&store).await.unwrap();
            let insert = "INSERT INTO traits (name, created_at) VALUES (?, ?)";
            let failed: Result<()> = store
                .transaction(move |_, tx| {
                    Box::pin(async move {
                        tx.execute(insert, &["CUSTOM_GONE".into(), now_text().into()])
                            .await?;
                        Err(Error::shutting_down())
                    })
                })
                .await;
            assert!(failed.is_err_and(|e| e.is_shutting_down()), "{url}");
            let writes = (0..8).map(|i| {
                store.transaction(move |_, tx| {
                    Box::pin(async move {
                        let name = format!("CUSTOM_{i}");
                        tx.execute(insert, &[name.into(), now_text().into()])
                            .await?;
                        Ok::<_, Error>(())
                    })
                })
            });
            for written in futures_util::future::join_all(writes).await {
                written.unwrap();
            }
            let custom = "SELECT COUNT(*) FROM traits WHERE name LIKE 'CUSTOM%'";
            let here = Conn::from(store.reader())
                .row(custom, &[], |row| row.required_int(0))
                .await
                .unwrap();
            let folded = store
                .fold_rows(custom.to_owned(), Vec::new(), 0, |n, row| {
                    *n = row.required_int(0)?;
                    Ok(())
                })
                .await
                .unwrap();
            assert_eq!((here, folded), (Some(8), 8), "{url}");
            assert_eq!(standard::sync(&store).await.ok(), Some(()), "{url}");
            store.close().await;
        }
        let _ = std::fs::remove_dir_all(&dir);
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
