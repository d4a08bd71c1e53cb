//! The store's own error: what a driver said, or a row that could not be
//! read, with predicates for the kinds of failure the callers tell apart
//! (a conflict worth another try, a taken unique key, a server that
//! cannot be reached). What each kind means to a client is decided at the
//! HTTP edge (`crate::error`), not here.

use std::fmt;

/// A failure of the database, or of reading a row it gave.
///
/// One pointer wide, so that the per-row results of a long read stay
/// small.
pub struct Error {
    kind: Box<Kind>,
}

/// A result whose error is the store's.
pub type Result<T, E = Error> = std::result::Result<T, E>;

enum Kind {
    /// The PostgreSQL or MySQL driver (sqlx) failed.
    Sqlx(sqlx::Error),
    /// The SQLite driver (rusqlite) failed.
    Sqlite(rusqlite::Error),
    /// A column held NULL where a value was required.
    NullColumn(usize),
    /// The work could not start because the service is stopping.
    ShuttingDown,
    /// The write turn of an SQLite database was not had in time.
    TimedOut,
}

impl Error {
    /// The error for a NULL in the required column `column` (from 0).
    pub(crate) fn null_column(column: usize) -> Self {
        Kind::NullColumn(column).into()
    }

    /// The error for work that cannot start because the runtime is
    /// shutting down.
    pub(crate) fn shutting_down() -> Self {
        Kind::ShuttingDown.into()
    }

    /// The error for a write turn not had in time.
    pub(crate) fn timed_out() -> Self {
        Kind::TimedOut.into()
    }

    /// Whether this is a conflict between concurrent transactions that a
    /// new try of the whole transaction may not meet again: a deadlock, a
    /// serialization failure, a lock timeout, or a busy SQLite database.
    #[must_use]
    pub fn is_transient(&self) -> bool {
        match &*self.kind {
            Kind::Sqlx(sqlx::Error::Database(e)) => {
                let code = e.code();
                let code = code.as_deref().unwrap_or_default();
                // SQLSTATE 40001 (serialization failure, and MySQL's
                // deadlock), 40P01 (PostgreSQL's deadlock).
                matches!(code, "40001" | "40P01")
                    || e.message().contains("Lock wait timeout exceeded")
            }
            Kind::Sqlite(e) => is_busy(e),
            _ => false,
        }
    }

    /// Whether this is a write that a unique key refused (a key that a
    /// concurrent transaction took).
    #[must_use]
    pub fn is_unique_violation(&self) -> bool {
        match &*self.kind {
            Kind::Sqlx(sqlx::Error::Database(e)) => {
                e.kind() == sqlx::error::ErrorKind::UniqueViolation
            }
            Kind::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => matches!(
                e.extended_code,
                rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
            ),
            _ => false,
        }
    }

    /// Whether this is a write that a foreign key refused (where foreign
    /// keys are enforced: not on SQLite, as upstream).
    #[must_use]
    pub fn is_foreign_key_violation(&self) -> bool {
        match &*self.kind {
            Kind::Sqlx(sqlx::Error::Database(e)) => e.is_foreign_key_violation(),
            Kind::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => {
                e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY
            }
            _ => false,
        }
    }

    /// Whether this says the database server cannot be reached or cannot
    /// serve now, which is not the request's fault: the connection failed
    /// or was lost, the pool timed out or closed, or the server is
    /// starting, stopping or (a Galera node) outside the cluster's primary
    /// component. SQLite, a file of this process, is never unreachable.
    #[must_use]
    pub fn is_unreachable(&self) -> bool {
        match &*self.kind {
            Kind::Sqlx(e) => super::health::is_unreachable(e),
            // As a pool's connection not had in time.
            Kind::TimedOut => true,
            _ => false,
        }
    }

    /// Whether this is text the database cannot store, which the client
    /// sent: a NUL character on PostgreSQL (SQLSTATE 22021, "invalid byte
    /// sequence"), a character outside the column's character set on
    /// MySQL (error 1366, "Incorrect string value", such as a 4-byte
    /// character in a `utf8mb3` column). SQLite stores both.
    #[must_use]
    pub fn is_unstorable_text(&self) -> bool {
        let Kind::Sqlx(sqlx::Error::Database(e)) = &*self.kind else {
            return false;
        };
        e.code().as_deref() == Some("22021")
            || e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
                .is_some_and(|m| m.number() == 1366)
    }

    /// Whether the work could not start because the service is stopping.
    #[must_use]
    pub fn is_shutting_down(&self) -> bool {
        matches!(*self.kind, Kind::ShuttingDown)
    }

    /// What the database server said of a failed statement, when it said
    /// something.
    #[must_use]
    pub fn database_message(&self) -> Option<&str> {
        match &*self.kind {
            Kind::Sqlx(sqlx::Error::Database(e)) => Some(e.message()),
            Kind::Sqlite(rusqlite::Error::SqliteFailure(_, Some(message))) => Some(message),
            _ => None,
        }
    }

    /// The SQLite driver's error, if that is what this is.
    #[cfg(test)]
    pub(crate) fn as_sqlite(&self) -> Option<&rusqlite::Error> {
        match &*self.kind {
            Kind::Sqlite(e) => Some(e),
            _ => None,
        }
    }
}

/// Whether SQLite said that another connection holds the lock wanted.
pub(super) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

impl From<Kind> for Error {
    fn from(kind: Kind) -> Self {
        Error {
            kind: Box::new(kind),
        }
    }
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        Kind::Sqlx(e).into()
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Kind::Sqlite(e).into()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.kind {
            Kind::Sqlx(e) => e.fmt(f),
            Kind::Sqlite(e) => e.fmt(f),
            // The words the drivers use for the same failure.
            Kind::NullColumn(column) => write!(
                f,
                "error occurred while decoding column {column}: unexpected NULL"
            ),
            Kind::ShuttingDown => f.write_str("The service is shutting down."),
            // The words of a pool's timeout, which this one stands for.
            Kind::TimedOut => f.write_str("pool timed out while waiting for an open connection"),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.kind {
            Kind::Sqlx(e) => f.debug_tuple("Sqlx").field(e).finish(),
            Kind::Sqlite(e) => f.debug_tuple("Sqlite").field(e).finish(),
            Kind::NullColumn(column) => f.debug_tuple("NullColumn").field(column).finish(),
            Kind::ShuttingDown => f.write_str("ShuttingDown"),
            Kind::TimedOut => f.write_str("TimedOut"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.kind {
            Kind::Sqlx(e) => Some(e),
            Kind::Sqlite(e) => Some(e),
            Kind::NullColumn(_) | Kind::ShuttingDown | Kind::TimedOut => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_connections_are_unreachable_and_nothing_else_is() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert!(Error::from(sqlx::Error::Io(refused)).is_unreachable());
        assert!(Error::from(sqlx::Error::PoolTimedOut).is_unreachable());
        assert!(!Error::from(sqlx::Error::RowNotFound).is_unreachable());
        assert!(!Error::null_column(2).is_unreachable());
        assert!(!Error::shutting_down().is_unreachable());
        assert!(Error::timed_out().is_unreachable());
        assert_eq!(
            Error::timed_out().to_string(),
            sqlx::Error::PoolTimedOut.to_string()
        );
    }

    #[test]
    fn sqlite_constraint_and_busy_errors() {
        let conn = rusqlite::Connection::open_in_memory().expect("in-memory SQLite");
        conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE)")
            .expect("table");
        conn.execute("INSERT INTO t (name) VALUES ('a')", [])
            .expect("first row");
        let taken: Error = conn
            .execute("INSERT INTO t (name) VALUES ('a')", [])
            .expect_err("the name is taken")
            .into();
        assert!(taken.is_unique_violation());
        assert!(!taken.is_transient());
        assert!(!taken.is_foreign_key_violation());
        assert!(taken.database_message().is_some());
        let busy: Error = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        )
        .into();
        assert!(busy.is_transient());
        assert!(!busy.is_unique_violation());
    }

    #[test]
    fn a_null_column_is_named() {
        assert_eq!(
            Error::null_column(3).to_string(),
            "error occurred while decoding column 3: unexpected NULL"
        );
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    }
}
