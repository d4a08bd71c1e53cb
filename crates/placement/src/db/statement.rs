//! Statements built at run time, each bound value pushed with its
//! placeholder.
//!
//! A [`Statement`] is SQL text and the values it binds, grown together:
//! [`Statement::push`] adds text (which holds no `?` of its own),
//! [`Statement::bind`] adds a `?` and its value in one call,
//! [`Statement::list`] a comma-separated run of them for `IN (...)`. The
//! values are then in the order of their placeholders however the text
//! was assembled. The text is written with `?` placeholders and rewritten
//! for the store's dialect once, where it runs: by
//! [`Store::fold_rows`] on the read path, here before a [`Conn`].
//!
//! ```ignore
//! let mut q = Statement::new(store.dialect());
//! q.push("SELECT id FROM consumers WHERE uuid IN (").list(uuids).push(")");
//! let ids = q.rows_on(&mut tx, |row| ConsumerId::read(row, 0)).await?;
//! ```

use super::Result;
use super::conn::Executed;
use super::{Bind, Columns, Conn, Dialect, Store};

/// SQL text with `?` placeholders and the values bound to them, in order.
#[derive(Clone, Debug)]
pub(crate) struct Statement {
    dialect: Dialect,
    sql: String,
    binds: Vec<Bind>,
}

impl Statement {
    /// An empty statement for a store of `dialect`.
    pub(crate) fn new(dialect: Dialect) -> Self {
        Statement {
            dialect,
            sql: String::new(),
            binds: Vec::new(),
        }
    }

    /// Appends `sql`, text without placeholders: values come with
    /// [`Statement::bind`] and [`Statement::list`].
    pub(crate) fn push(&mut self, sql: &str) -> &mut Self {
        debug_assert!(!sql.contains('?'), "a placeholder without its value: {sql}");
        self.sql.push_str(sql);
        self
    }

    /// Appends a `?` bound to `value`.
    pub(crate) fn bind(&mut self, value: impl Into<Bind>) -> &mut Self {
        self.sql.push('?');
        self.binds.push(value.into());
        self
    }

    /// Appends a timestamp placeholder ([`Dialect::timestamp_param`])
    /// bound to `value`, a timestamp as text (see [`super::now_text`]).
    pub(crate) fn bind_timestamp(&mut self, value: impl Into<Bind>) -> &mut Self {
        self.sql.push_str(self.dialect.timestamp_param());
        self.binds.push(value.into());
        self
    }

    /// Appends `?, ?, ...`, one placeholder bound to each of `values`, for
    /// an `IN (...)` list (nothing for none: an empty `IN ()` is not SQL,
    /// so callers skip the statement).
    pub(crate) fn list<I>(&mut self, values: I) -> &mut Self
    where
        I: IntoIterator,
        I::Item: Into<Bind>,
    {
        let values = values.into_iter();
        let (at_least, _) = values.size_hint();
        self.sql.reserve(at_least * 3);
        self.binds.reserve(at_least);
        for (n, value) in values.enumerate() {
            if n > 0 {
                self.sql.push_str(", ");
            }
            self.bind(value);
        }
        self
    }

    /// The text as written, with `?` placeholders.
    #[cfg(test)]
    pub(crate) fn sql(&self) -> &str {
        &self.sql
    }

    /// The values bound, in the order of their placeholders.
    #[cfg(test)]
    pub(crate) fn binds(&self) -> &[Bind] {
        &self.binds
    }

    /// The text for the dialect, and the values.
    fn rendered(self) -> (String, Vec<Bind>) {
        (self.dialect.placeholders(self.sql), self.binds)
    }

    /// Folds the rows of the query into `init` with `step`, on the
    /// store's read path ([`Store::fold_rows`]).
    ///
    /// # Errors
    ///
    /// The database failed, or `step` did.
    pub(crate) async fn fold<A, F>(self, store: &Store, init: A, step: F) -> Result<A>
    where
        A: Send + 'static,
        F: FnMut(&mut A, &dyn Columns) -> Result<()> + Send + 'static,
    {
        // `Store::fold_rows` writes the placeholders for the dialect.
        store.fold_rows(self.sql, self.binds, init, step).await
    }

    /// Every row of the query, each made into a `T` by `decode`, on the
    /// store's read path ([`Store::read_rows`]).
    ///
    /// # Errors
    ///
    /// The database failed, or `decode` did.
    pub(crate) async fn read_rows<T, F>(self, store: &Store, decode: F) -> Result<Vec<T>>
    where
        T: Send + 'static,
        F: FnMut(&dyn Columns) -> Result<T> + Send + 'static,
    {
        store.read_rows(self.sql, self.binds, decode).await
    }

    /// Folds the rows of the query on `conn` ([`Conn::fold`]).
    ///
    /// # Errors
    ///
    /// The database failed, or `step` did.
    pub(crate) async fn fold_on<A, F>(self, conn: &mut Conn<'_>, init: A, step: F) -> Result<A>
    where
        F: FnMut(&mut A, &dyn Columns) -> Result<()> + Send,
    {
        let (sql, binds) = self.rendered();
        conn.fold(&sql, &binds, init, step).await
    }

    /// Every row of the query on `conn` ([`Conn::rows`]).
    ///
    /// # Errors
    ///
    /// The database failed, or `decode` did.
    pub(crate) async fn rows_on<T, F>(self, conn: &mut Conn<'_>, decode: F) -> Result<Vec<T>>
    where
        F: FnMut(&dyn Columns) -> Result<T> + Send,
    {
        let (sql, binds) = self.rendered();
        conn.rows(&sql, &binds, decode).await
    }

    /// The first row of the query on `conn` ([`Conn::row`]).
    ///
    /// # Errors
    ///
    /// The database failed, or `decode` did.
    pub(crate) async fn row_on<T, F>(self, conn: &mut Conn<'_>, decode: F) -> Result<Option<T>>
    where
        F: FnMut(&dyn Columns) -> Result<T> + Send,
    {
        let (sql, binds) = self.rendered();
        conn.row(&sql, &binds, decode).await
    }

    /// Runs the statement (an insert, update or delete) on `conn`
    /// ([`Conn::execute`]).
    ///
    /// # Errors
    ///
    /// The database failed.
    pub(crate) async fn execute_on(self, conn: &mut Conn<'_>) -> Result<Executed> {
        let (sql, binds) = self.rendered();
        conn.execute(&sql, &binds).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each value lands with its placeholder, whatever the order the text
    /// is assembled in; a list binds its values in order.
    #[test]
    fn binds_follow_their_placeholders() {
        let mut q = Statement::new(Dialect::Sqlite);
        q.push("SELECT a FROM t WHERE b = ")
            .bind(1_i64)
            .push(" AND c IN (")
            .list(["x", "y"])
            .push(") AND d IN (")
            .list(Vec::<i64>::new())
            .push(") AND e = ")
            .bind_timestamp("2024-01-01 00:00:00.000000");
        assert_eq!(
            q.sql(),
            "SELECT a FROM t WHERE b = ? AND c IN (?, ?) AND d IN () AND e = ?"
        );
        assert_eq!(
            q.binds(),
            [
                Bind::Int(1),
                Bind::from("x"),
                Bind::from("y"),
                Bind::from("2024-01-01 00:00:00.000000")
            ]
        );
    }

    /// PostgreSQL's numbered placeholders, its timestamp cast among them.
    #[test]
    fn postgres_numbers_the_placeholders_once() {
        let mut q = Statement::new(Dialect::Postgres);
        q.push("UPDATE t SET at = ")
            .bind_timestamp("now")
            .push(" WHERE id IN (")
            .list([1_i64, 2])
            .push(")");
        let (sql, binds) = q.rendered();
        assert_eq!(
            sql,
            "UPDATE t SET at = CAST($1 AS TIMESTAMP) WHERE id IN ($2, $3)"
        );
        assert_eq!(binds.len(), 3);
    }

    #[test]
    #[should_panic(expected = "a placeholder without its value")]
    #[cfg(debug_assertions)]
    fn text_with_a_placeholder_is_refused() {
        Statement::new(Dialect::Sqlite).push("a = ?");
    }
}
