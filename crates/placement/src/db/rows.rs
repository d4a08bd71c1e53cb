//! Reads whose rows are visited by column position, whichever driver
//! reads them: the SQLite driver's own rows for an SQLite file (see
//! [`super::SqliteReader`]), the `Any` reader pool otherwise. One decoder
//! serves both.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::Store;
use crate::error::Result;

/// A value bound to a query built at run time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Bind {
    Text(String),
    Int(i64),
}

impl From<&str> for Bind {
    fn from(text: &str) -> Self {
        Bind::Text(text.to_owned())
    }
}

impl rusqlite::ToSql for Bind {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Bind::Text(t) => t.to_sql(),
            Bind::Int(i) => i.to_sql(),
        }
    }
}

/// A row, its columns read by position (from 0).
pub(crate) trait Columns {
    /// An integer column; `None` for NULL.
    fn int(&self, column: usize) -> Result<Option<i64>>;
    /// A text column, borrowed from the row; `None` for NULL.
    fn text(&self, column: usize) -> Result<Option<&str>>;

    /// A text column that is never NULL.
    fn required_text(&self, column: usize) -> Result<&str> {
        self.text(column)?.ok_or_else(|| null_column(column))
    }

    /// An integer column that is never NULL.
    fn required_int(&self, column: usize) -> Result<i64> {
        self.int(column)?.ok_or_else(|| null_column(column))
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
        let mut q = sqlx::query(&query);
        for bind in binds {
            q = match bind {
                Bind::Text(t) => q.bind(t),
                Bind::Int(i) => q.bind(i),
            };
        }
        for row in &q.fetch_all(self.reader()).await? {
            step(&mut acc, row)?;
        }
        Ok(acc)
    }
}
