//! Reads whose rows are visited by column position, whichever driver
//! reads them: the SQLite driver's own rows for an SQLite file (see
//! [`super::SqliteReader`]), the `Any` reader pool otherwise. One decoder
//! serves both.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::Store;
use crate::error::Result;

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

/// `query` with `binds` bound, for the `Any` driver.
pub(crate) fn bind_all<'q>(
    mut query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    binds: &'q [Bind],
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
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
    fn required_text(&self, column: usize) -> Result<&str> {
        self.text(column)?.ok_or_else(|| null_column(column))
    }

    /// An integer column that is never NULL.
    fn required_int(&self, column: usize) -> Result<i64> {
        self.int(column)?.ok_or_else(|| null_column(column))
    }

    /// A floating-point column that is never NULL.
    fn required_float(&self, column: usize) -> Result<f64> {
        self.float(column)?.ok_or_else(|| null_column(column))
    }
}

fn null_column(column: usize) -> crate::error::Error {
    crate::error::Error::Db(sqlx::Error::ColumnDecode {
        index: column.to_string(),
        source: "unexpected NULL".into(),
    })
}

impl Columns for AnyRow {
    fn int(&self, column: usize) -> Result<Option<i64>> {
        Ok(self.try_get(column)?)
    }

    fn text(&self, column: usize) -> Result<Option<&str>> {
        Ok(self.try_get(column)?)
    }

    fn float(&self, column: usize) -> Result<Option<f64>> {
        // MySQL's `FLOAT` is single precision: read as `f32`, it is given
        // the shortest decimal that reads back as the same `f32`, so a
        // stored 1.1 is 1.1 (not 1.100000023841858).
        if let Ok(single) = self.try_get::<Option<f32>, _>(column) {
            return Ok(single.map(|s| s.to_string().parse::<f64>().unwrap_or(f64::from(s))));
        }
        match self.try_get::<Option<f64>, _>(column) {
            Ok(double) => Ok(double),
            // SQLite keeps a whole number written as an integer as one.
            #[allow(clippy::cast_precision_loss)]
            Err(e) => match self.try_get::<Option<i64>, _>(column) {
                Ok(whole) => Ok(whole.map(|i| i as f64)),
                Err(_) => Err(e.into()),
            },
        }
    }
}

impl Columns for rusqlite::Row<'_> {
    fn int(&self, column: usize) -> Result<Option<i64>> {
        Ok(self.get(column)?)
    }

    fn text(&self, column: usize) -> Result<Option<&str>> {
        self.get_ref(column)?.as_str_or_null().map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(
                column,
                rusqlite::types::Type::Text,
                Box::new(e),
            )
            .into()
        })
    }

    fn float(&self, column: usize) -> Result<Option<f64>> {
        use rusqlite::types::ValueRef;
        #[allow(clippy::cast_precision_loss)]
        match self.get_ref(column)? {
            ValueRef::Null => Ok(None),
            ValueRef::Real(f) => Ok(Some(f)),
            // SQLite keeps a whole number written as an integer as one.
            ValueRef::Integer(i) => Ok(Some(i as f64)),
            other => Err(rusqlite::Error::FromSqlConversionFailure(
                column,
                other.data_type(),
                "not a number".into(),
            )
            .into()),
        }
    }
}

impl Store {
    /// Runs the read `query` (`?` placeholders) with `binds`, folding its
    /// rows into `init` with `step`, on the store's read path: the SQLite
    /// driver's own rows for an SQLite file, the reader pool otherwise.
    ///
    /// # Errors
    ///
    /// The database failed, or `step` did.
    pub(crate) async fn fold_rows<A, F>(
        &self,
        query: String,
        binds: Vec<Bind>,
        init: A,
        mut step: F,
    ) -> Result<A>
    where
        A: Send + 'static,
        F: FnMut(&mut A, &dyn Columns) -> Result<()> + Send + 'static,
    {
        let mut acc = init;
        if let Some(reader) = self.sqlite_reader() {
            return reader
                .read(move |conn| {
                    let mut statement = conn.prepare_cached(&query)?;
                    let mut rows = statement.query(rusqlite::params_from_iter(&binds))?;
                    while let Some(row) = rows.next()? {
                        step(&mut acc, row)?;
                    }
                    Ok(acc)
                })
                .await;
        }
        let query = self.dialect().placeholders(query);
        let q = bind_all(sqlx::query(&query), &binds);
        for row in &q.fetch_all(self.reader()).await? {
            step(&mut acc, row)?;
        }
        Ok(acc)
    }
}
