//! Upgrading a database at an earlier upstream schema revision to the
//! head one, step by step, as `placement-manage db sync` does.
//!
//! Upstream's chain: `b4ed3a175331` (initial) -> `611cd6dffd7b` (refuses
//! while a provider lacks its root provider id) -> `b5c396305c25`
//! (refuses while an allocation lacks its consumer) -> `422ece571366`
//! (consumer types) -> `a082b8bb98d0` (redundant indexes dropped). The
//! two refusals change nothing, so they are checked before any step
//! runs: a refused upgrade leaves the database as it was, as upstream's
//! (whose checks come before its first schema change) does.

use std::fmt;

use anyhow::Context as _;

use crate::db::schema::{HEAD, statements};
use crate::db::{Conn, Dialect};

/// Upstream's revisions, oldest first.
pub(crate) const REVISIONS: [&str; 5] = [
    "b4ed3a175331",
    "611cd6dffd7b",
    "b5c396305c25",
    "422ece571366",
    HEAD,
];

/// Why a revision refused the upgrade: rows that need the online data
/// migrations first. Its text is upstream's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Refused(&'static str);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Refused {}

/// Revision `611cd6dffd7b`'s refusal.
pub(crate) const MISSING_ROOT_IDS: Refused = Refused(
    "There is at least one resource provider table record which is missing its root provider id. \
     Run the \"placement-manage db online_data_migrations\" command.",
);

/// Revision `b5c396305c25`'s refusal.
pub(crate) const MISSING_CONSUMERS: Refused = Refused(
    "There is at least one allocation record which is missing a consumer record. \
     Run the \"placement-manage db online_data_migrations\" command.",
);

/// Providers without a root provider id.
pub(crate) const COUNT_MISSING_ROOT_IDS: &str =
    "SELECT COUNT(*) AS n FROM resource_providers WHERE root_provider_id IS NULL";

/// Allocations without a consumer record.
const COUNT_ALLOCATIONS_WITHOUT_CONSUMER: &str = "SELECT COUNT(*) AS n FROM allocations \
     LEFT OUTER JOIN consumers ON allocations.consumer_id = consumers.uuid \
     WHERE consumers.id IS NULL";

/// The statements of one step for `dialect` (none for the two that only
/// check).
fn step_ddl(revision: &str, dialect: Dialect) -> &'static str {
    match (revision, dialect) {
        ("422ece571366", Dialect::Sqlite) => include_str!("sql/422ece571366-sqlite.sql"),
        ("422ece571366", Dialect::Postgres) => include_str!("sql/422ece571366-postgresql.sql"),
        ("422ece571366", Dialect::MySql) => include_str!("sql/422ece571366-mysql.sql"),
        (HEAD, Dialect::Sqlite | Dialect::Postgres) => include_str!("sql/a082b8bb98d0-sqlite.sql"),
        (HEAD, Dialect::MySql) => include_str!("sql/a082b8bb98d0-mysql.sql"),
        _ => "",
    }
}

/// The error for a revision that is not upstream's (alembic's text).
fn unknown(revision: &str) -> anyhow::Error {
    anyhow::anyhow!("Can't locate revision identified by '{revision}'")
}

async fn count(conn: &mut Conn<'_>, sql: &str) -> anyhow::Result<i64> {
    let n = conn.row(sql, &[], |row| row.required_int(0)).await?;
    Ok(n.unwrap_or(0))
}

/// Upgrades the database, held by the caller (see
/// [`crate::db::schema::upgrade`]), from `from` to the head revision,
/// recording each step in `alembic_version`.
///
/// # Errors
///
/// [`Refused`] when rows need the online data migrations first; an error
/// for a revision that is not upstream's, or a statement that fails.
pub(crate) async fn run(dialect: Dialect, conn: &mut Conn<'_>, from: &str) -> anyhow::Result<()> {
    let start = REVISIONS
        .iter()
        .position(|r| *r == from)
        .ok_or_else(|| unknown(from))?;
    let steps = &REVISIONS[start + 1..];
    if steps.contains(&"611cd6dffd7b") && count(conn, COUNT_MISSING_ROOT_IDS).await? > 0 {
        return Err(MISSING_ROOT_IDS.into());
    }
    if steps.contains(&"b5c396305c25") && count(conn, COUNT_ALLOCATIONS_WITHOUT_CONSUMER).await? > 0
    {
        return Err(MISSING_CONSUMERS.into());
    }
    let mut previous = from;
    for revision in steps {
        for statement in statements(step_ddl(revision, dialect)) {
            conn.execute(&statement, &[])
                .await
                .with_context(|| format!("upgrading to {revision} failed at: {statement}"))?;
        }
        let stamp = format!(
            "UPDATE alembic_version SET version_num = '{revision}' WHERE version_num = '{previous}'"
        );
        conn.execute(&stamp, &[]).await?;
        previous = revision;
    }
    Ok(())
}

/// The revision `name` stands for, as alembic resolves it: a revision,
/// a unique prefix of one, `head`/`heads`, or `base` (`None`: no
/// revision).
///
/// # Errors
///
/// Alembic's text when nothing, or more than one revision, matches.
pub(crate) fn resolve(name: &str) -> anyhow::Result<Option<&'static str>> {
    match name {
        "head" | "heads" => return Ok(Some(HEAD)),
        "base" => return Ok(None),
        _ => {}
    }
    let mut matching = REVISIONS
        .iter()
        .filter(|r| !name.is_empty() && r.starts_with(name));
    match (matching.next(), matching.next()) {
        (Some(revision), None) => Ok(Some(revision)),
        _ => Err(unknown(name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_resolve_as_alembic_does() {
        assert_eq!(resolve("head").unwrap(), Some(HEAD));
        assert_eq!(resolve("base").unwrap(), None);
        assert_eq!(resolve("4").unwrap(), Some("422ece571366"));
        assert_eq!(resolve("b5c").unwrap(), Some("b5c396305c25"));
        assert_eq!(resolve("611cd6dffd7b").unwrap(), Some("611cd6dffd7b"));
        for bad in ["b", "", "a082b8bb98d0x", "foo"] {
            assert_eq!(
                resolve(bad).unwrap_err().to_string(),
                format!("Can't locate revision identified by '{bad}'")
            );
        }
    }

    #[test]
    fn each_schema_step_has_statements_on_each_backend() {
        for dialect in [Dialect::Sqlite, Dialect::Postgres, Dialect::MySql] {
            for revision in ["422ece571366", HEAD] {
                assert!(statements(step_ddl(revision, dialect)).count() >= 4);
            }
            for revision in ["611cd6dffd7b", "b5c396305c25"] {
                assert_eq!(statements(step_ddl(revision, dialect)).count(), 0);
            }
        }
    }
}
