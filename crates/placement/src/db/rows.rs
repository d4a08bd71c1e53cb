//! Reads whose rows are visited by column position, whichever driver
//! reads them: the SQLite driver's (rusqlite) or the PostgreSQL or MySQL
//! driver's (sqlx) own rows, read in place. One decoder serves them all.

use sqlx::database::HasStatementCache;
use sqlx::{Database, Encode, Executor, IntoArguments, Type};

use super::sqlite::{blocking, lock};
use super::{Driver, Error, Result, Store};

/// A value bound to a query built at run time.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Bind {
    Text(String),
    Int(i64),
    Float(f64),
    /// NULL in an integer column.
    Null,
}

impl From<&str> for Bind {
    fn from(text: &str) -> Self {
        Bind::Text(text.to_owned())
    }
}

impl From<String> for Bind {
    fn from(text: String) -> Self {
        Bind::Text(text)
    }
}

impl From<i64> for Bind {
    fn from(value: i64) -> Self {
        Bind::Int(value)
    }
}

impl From<Option<i64>> for Bind {
    fn from(value: Option<i64>) -> Self {
        value.map_or(Bind::Null, Bind::Int)
    }
}

impl From<f64> for Bind {
    fn from(value: f64) -> Self {
        Bind::Float(value)
    }
}

impl rusqlite::ToSql for Bind {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Bind::Text(t) => t.to_sql(),
            Bind::Int(i) => i.to_sql(),
            Bind::Float(f) => f.to_sql(),
            Bind::Null => Ok(rusqlite::types::ToSqlOutput::Owned(
                rusqlite::types::Value::Null,
            )),
        }
    }
}

/// `query` with `binds` bound, for any sqlx driver: text, 64-bit
/// integers, doubles, an integer NULL.
pub(crate) fn bind_all<'q, DB>(
    mut query: sqlx::query::Query<'q, DB, <DB as Database>::Arguments<'q>>,
    binds: &'q [Bind],
) -> sqlx::query::Query<'q, DB, <DB as Database>::Arguments<'q>>
where
    DB: Database,
    &'q str: Encode<'q, DB> + Type<DB>,
    i64: Encode<'q, DB> + Type<DB>,
    f64: Encode<'q, DB> + Type<DB>,
    Option<i64>: Encode<'q, DB> + Type<DB>,
{
    for bind in binds {
        query = match bind {
            Bind::Text(t) => query.bind(t.as_str()),
            Bind::Int(i) => query.bind(*i),
            Bind::Float(f) => query.bind(*f),
            Bind::Null => query.bind(None::<i64>),
        };
    }
    query
}

/// The most values a read may bind and still be kept prepared.
const MAX_CACHED_BINDS: usize = 64;

/// Runs the query `sql` with `binds` on `executor` (a pool or a
/// transaction of an sqlx driver whose rows are [`Columns`]), folding its
/// rows into `init` with `step`.
pub(crate) async fn fold_fetched<'q, DB, E, A, F>(
    executor: E,
    sql: &'q str,
    binds: &'q [Bind],
    init: A,
    mut step: F,
) -> Result<A>
where
    DB: Database + HasStatementCache,
    DB::Row: Columns,
    E: Executor<'q, Database = DB>,
    F: FnMut(&mut A, &dyn Columns) -> Result<()>,
    &'q str: Encode<'q, DB> + Type<DB>,
    i64: Encode<'q, DB> + Type<DB>,
    f64: Encode<'q, DB> + Type<DB>,
    Option<i64>: Encode<'q, DB> + Type<DB>,
    <DB as Database>::Arguments<'q>: IntoArguments<'q, DB>,
{
    let mut acc = init;
    // A statement binding many values (an IN list of a thousand provider
    // ids) is sent unnamed: PostgreSQL plans an unnamed statement for the
    // values bound, where a cached one soon gets a generic plan, which
    // made the candidate search's tree reads slower there
    // (docs/decisions.md). Its text changes with the list's length too,
    // so caching it mostly evicts statements that recur.
    for row in bind_all(sqlx::query(sql), binds)
        .persistent(binds.len() <= MAX_CACHED_BINDS)
        .fetch_all(executor)
        .await?
    {
        step(&mut acc, &row)?;
    }
    Ok(acc)
}

/// A row, its columns read by position (from 0).
pub(crate) trait Columns {
    /// An integer column; `None` for NULL.
    fn int(&self, column: usize) -> Result<Option<i64>>;
    /// A text column, borrowed from the row; `None` for NULL.
    fn text(&self, column: usize) -> Result<Option<&str>>;
    /// A floating-point column (such as `allocation_ratio`) as upstream
    /// shows it; `None` for NULL.
    fn float(&self, column: usize) -> Result<Option<f64>>;

    /// A text column that is never NULL.
    #[inline]
    fn required_text(&self, column: usize) -> Result<&str> {
        self.text(column)?.ok_or_else(|| null_column(column))
    }

    /// An integer column that is never NULL.
    #[inline]
    fn required_int(&self, column: usize) -> Result<i64> {
        self.int(column)?.ok_or_else(|| null_column(column))
    }

    /// A floating-point column that is never NULL.
    #[inline]
    fn required_float(&self, column: usize) -> Result<f64> {
        self.float(column)?.ok_or_else(|| null_column(column))
    }

    /// A timestamp column read as text (`Dialect::timestamp_text`);
    /// `None` for NULL or text that is not a timestamp.
    fn timestamp(&self, column: usize) -> Result<Option<std::time::SystemTime>> {
        Ok(self.text(column)?.and_then(super::parse_timestamp))
    }
}

// Kept out of the row loops, which read many columns and meet this never.
#[cold]
fn null_column(column: usize) -> Error {
    Error::null_column(column)
}

// Inlined into the required reads of the same row type: one call per
// column rather than two.
impl Columns for rusqlite::Row<'_> {
    #[inline]
    fn int(&self, column: usize) -> Result<Option<i64>> {
        use rusqlite::types::ValueRef;
        // Matched here rather than through `FromSql`'s glue: a candidate
        // request reads tens of thousands of these.
        match self.get_ref(column)? {
            ValueRef::Integer(i) => Ok(Some(i)),
            ValueRef::Null => Ok(None),
            other => Err(wrong_type(column, other, "not an integer".into())),
        }
    }

    #[inline]
    fn text(&self, column: usize) -> Result<Option<&str>> {
        let value = self.get_ref(column)?;
        value
            .as_str_or_null()
            .map_err(|e| wrong_type(column, value, Box::new(e)))
    }

    #[inline]
    fn float(&self, column: usize) -> Result<Option<f64>> {
        use rusqlite::types::ValueRef;
        #[allow(clippy::cast_precision_loss)]
        match self.get_ref(column)? {
            ValueRef::Null => Ok(None),
            ValueRef::Real(f) => Ok(Some(f)),
            // SQLite keeps a whole number written as an integer as one.
            ValueRef::Integer(i) => Ok(Some(i as f64)),
            other => Err(wrong_type(column, other, "not a number".into())),
        }
    }
}

/// The error for an SQLite column holding `found` where another type was
/// expected: it names the column and the type found.
#[cold]
fn wrong_type(
    column: usize,
    found: rusqlite::types::ValueRef<'_>,
    what: Box<dyn std::error::Error + Send + Sync>,
) -> Error {
    rusqlite::Error::FromSqlConversionFailure(column, found.data_type(), what).into()
}

impl Store {
    /// Runs the read `query` (`?` placeholders) with `binds`, folding its
    /// rows into `init` with `step`, on the store's read path: on a
    /// blocking thread with the SQLite driver's own rows, or on the read
    /// pool of PostgreSQL or MySQL with their drivers' own rows.
    ///
    /// # Errors
    ///
    /// The database failed, or `step` did.
    pub(crate) async fn fold_rows<A, F>(
        &self,
        query: String,
        binds: Vec<Bind>,
        init: A,
        step: F,
    ) -> Result<A>
    where
        A: Send + 'static,
        F: FnMut(&mut A, &dyn Columns) -> Result<()> + Send + 'static,
    {
        match &self.driver {
            Driver::Sqlite(sqlite) => match &sqlite.readers {
                Some(readers) => {
                    readers
                        .read(move |conn| fold_sqlite(conn, &query, &binds, init, step))
                        .await
                }
                None => {
                    let conn = std::sync::Arc::clone(&sqlite.writer);
                    blocking(move || fold_sqlite(&lock(&conn), &query, &binds, init, step)).await
                }
            },
            Driver::Postgres(server) => {
                let query = self.dialect().placeholders(query);
                fold_fetched(&server.read, &query, &binds, init, step).await
            }
            Driver::MySql(server) => fold_fetched(&server.read, &query, &binds, init, step).await,
        }
    }

    /// Every row of the read `query`, each made into a `T` by `decode`, on
    /// the read path of [`Store::fold_rows`].
    ///
    /// # Errors
    ///
    /// The database failed, or `decode` did.
    pub(crate) async fn read_rows<T, F>(
        &self,
        query: String,
        binds: Vec<Bind>,
        mut decode: F,
    ) -> Result<Vec<T>>
    where
        T: Send + 'static,
        F: FnMut(&dyn Columns) -> Result<T> + Send + 'static,
    {
        self.fold_rows(query, binds, Vec::new(), move |out, row| {
            out.push(decode(row)?);
            Ok(())
        })
        .await
    }
}

/// Runs the query `sql` with `binds` on an SQLite driver connection,
/// folding its rows into `init` with `step` as they are stepped.
pub(super) fn fold_sqlite<A>(
    conn: &rusqlite::Connection,
    sql: &str,
    binds: &[Bind],
    init: A,
    mut step: impl FnMut(&mut A, &dyn Columns) -> Result<()>,
) -> Result<A> {
    let mut acc = init;
    let mut statement = conn.prepare_cached(sql)?;
    let mut rows = statement.query(rusqlite::params_from_iter(binds))?;
    while let Some(row) = rows.next()? {
        step(&mut acc, row)?;
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::types::Type;

    /// SQLite's columns: an integer, NULL as `None`; reading a value as
    /// another type is an error naming the column and the type found.
    #[test]
    fn sqlite_typed_columns() {
        let conn = rusqlite::Connection::open_in_memory().expect("in-memory SQLite");
        let sql = "SELECT 7, NULL, -9223372036854775808, 2.5, 'x'";
        let read = fold_sqlite(&conn, sql, &[], Vec::new(), |out, row| {
            out.extend([row.int(0)?, row.int(1)?, row.int(2)?]);
            let wrong = [
                (3, Type::Real, row.int(3).map(|_| ())),
                (4, Type::Text, row.int(4).map(|_| ())),
                (0, Type::Integer, row.text(0).map(|_| ())),
                (4, Type::Text, row.float(4).map(|_| ())),
            ];
            for (column, found, read) in wrong {
                match read.as_ref().map_err(Error::as_sqlite) {
                    Err(Some(rusqlite::Error::FromSqlConversionFailure(at, ty, _))) => {
                        assert_eq!((*at, *ty), (column, found));
                    }
                    _ => panic!("column {column}: {read:?}"),
                }
            }
            assert!(row.required_int(1).is_err(), "NULL is not required");
            Ok(())
        })
        .expect("the row reads");
        assert_eq!(read, [Some(7), None, Some(i64::MIN)]);
    }
}
