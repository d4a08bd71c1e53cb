//! Creating the schema: upstream's tables, at upstream's head revision, so
//! that this service and upstream can serve the same database.

use anyhow::{Context as _, bail};

use super::{Conn, Dialect, Store};

/// Upstream's head migration, recorded in `alembic_version`.
pub(crate) const HEAD: &str = "a082b8bb98d0";

/// The tables of the schema (besides `alembic_version`).
pub(crate) const TABLES: [&str; 12] = [
    "allocations",
    "consumer_types",
    "consumers",
    "inventories",
    "placement_aggregates",
    "projects",
    "resource_classes",
    "resource_provider_aggregates",
    "resource_provider_traits",
    "resource_providers",
    "traits",
    "users",
];

/// What [`sync`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Synced {
    /// The schema was created.
    Created,
    /// The database was already at the head revision.
    AlreadyCurrent,
}

/// The schema's statements for `dialect`.
fn ddl(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Sqlite => include_str!("sql/sqlite.sql"),
        Dialect::Postgres => include_str!("sql/postgresql.sql"),
        Dialect::MySql => include_str!("sql/mysql.sql"),
    }
}

/// The statements of a DDL file: separated by blank lines, comments
/// dropped.
pub(crate) fn statements(ddl: &str) -> impl Iterator<Item = String> + '_ {
    ddl.split("\n\n").filter_map(|chunk| {
        let text: Vec<&str> = chunk
            .lines()
            .filter(|l| !l.trim_start().starts_with("--"))
            .collect();
        let text = text.join("\n");
        let text = text.trim().trim_end_matches(';').trim();
        (!text.is_empty()).then(|| text.to_owned())
    })
}

/// The tables that exist, of those the schema has (and `alembic_version`).
async fn existing_tables(dialect: Dialect, conn: &mut Conn<'_>) -> anyhow::Result<Vec<String>> {
    let query = match dialect {
        Dialect::Sqlite => "SELECT name FROM sqlite_master WHERE type = 'table'",
        Dialect::Postgres => {
            "SELECT CAST(table_name AS TEXT) AS name FROM information_schema.tables WHERE table_schema = current_schema()"
        }
        Dialect::MySql => {
            "SELECT CAST(table_name AS CHAR) AS name FROM information_schema.tables WHERE table_schema = DATABASE()"
        }
    };
    let names = conn
        .rows(query, &[], |row| Ok(row.required_text(0)?.to_owned()))
        .await?;
    Ok(names
        .into_iter()
        .filter(|name| name == "alembic_version" || TABLES.contains(&name.as_str()))
        .collect())
}

/// The name of the MySQL lock (`GET_LOCK`) and the key of the PostgreSQL
/// advisory lock that serialize concurrent syncs of one database.
const MYSQL_LOCK: &str = "placement.db_sync";
const POSTGRES_LOCK: i64 = 0x706c_6163_656d_6e74;
/// How long a sync waits for another one to finish.
const LOCK_WAIT_SECONDS: u32 = 300;

/// Creates the schema on an empty database; leaves a database already at
/// the head revision unchanged.
///
/// Syncs started at once on one database (several services starting
/// together) take turns: the first creates the schema, the others find it
/// current. On SQLite the turn is the write lock (`BEGIN IMMEDIATE`), on
/// PostgreSQL an advisory lock held by the transaction, on MySQL a named
/// lock (`GET_LOCK`), whose DDL commits by itself.
///
/// # Errors
///
/// Fails on a database at another revision, or one holding some of the
/// tables without `alembic_version`: those are not ours to change; or when
/// another sync holds the database for more than five minutes.
pub async fn sync(store: &Store) -> anyhow::Result<Synced> {
    match sync_or_upgrade(store, false).await? {
        Upgraded::Created => Ok(Synced::Created),
        Upgraded::AlreadyCurrent => Ok(Synced::AlreadyCurrent),
        Upgraded::From(revision) => bail!("unexpected upgrade from {revision}"),
    }
}

/// What [`upgrade`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Upgraded {
    /// The schema was created.
    Created,
    /// The database was already at the head revision.
    AlreadyCurrent,
    /// The database was upgraded from this earlier revision.
    From(String),
}

/// As [`sync`], and upgrades a database at an earlier upstream revision
/// to the head one (`placement-manage db sync`), under the same lock.
///
/// # Errors
///
/// As [`sync`]; and [`crate::manage::upgrade::Refused`] when a revision
/// on the way finds rows that need the online data migrations first.
pub(crate) async fn upgrade(store: &Store) -> anyhow::Result<Upgraded> {
    sync_or_upgrade(store, true).await
}

/// [`sync`], or [`upgrade`] when `upgrade` is set.
async fn sync_or_upgrade(store: &Store, upgrade: bool) -> anyhow::Result<Upgraded> {
    let dialect = store.dialect();
    let mut held = store.hold().await?;
    let (outcome, ended) = {
        let mut conn = held.conn();
        let begin = match dialect {
            Dialect::Sqlite => "BEGIN IMMEDIATE".to_owned(),
            Dialect::Postgres => "BEGIN".to_owned(),
            Dialect::MySql => {
                format!("SELECT GET_LOCK('{MYSQL_LOCK}', {LOCK_WAIT_SECONDS}) AS got")
            }
        };
        let got: Option<i64> = match dialect {
            Dialect::MySql => conn.row(&begin, &[], |row| row.int(0)).await?.flatten(),
            _ => {
                conn.execute(&begin, &[]).await?;
                Some(1)
            }
        };
        if got != Some(1) {
            bail!(
                "another schema sync of this database has held it for {LOCK_WAIT_SECONDS} seconds"
            );
        }
        let outcome = locked_sync(dialect, &mut conn, upgrade).await;
        let end = match (dialect, outcome.is_ok()) {
            (Dialect::MySql, _) => format!("SELECT RELEASE_LOCK('{MYSQL_LOCK}')"),
            (_, true) => "COMMIT".to_owned(),
            (_, false) => "ROLLBACK".to_owned(),
        };
        let ended = match dialect {
            Dialect::MySql => conn.row(&end, &[], |_| Ok(())).await.map(|_| ()),
            _ => conn.execute(&end, &[]).await.map(|_| ()),
        };
        (outcome, ended)
    };
    if let Err(e) = ended {
        // A connection left inside a transaction or holding the lock must
        // not go back to the pool.
        held.discard();
        return outcome.and(Err(e.into()));
    }
    outcome
}

/// [`sync`] once the database is held.
async fn locked_sync(
    dialect: Dialect,
    conn: &mut Conn<'_>,
    upgrade: bool,
) -> anyhow::Result<Upgraded> {
    if dialect == Dialect::Postgres {
        conn.execute(
            &format!("SET LOCAL lock_timeout = '{LOCK_WAIT_SECONDS}s'"),
            &[],
        )
        .await?;
        conn.row(
            &format!("SELECT pg_advisory_xact_lock({POSTGRES_LOCK})"),
            &[],
            |_| Ok(()),
        )
        .await
        .context("waiting for another schema sync of this database")?;
    }
    let existing = existing_tables(dialect, conn).await?;
    if existing.iter().any(|t| t == "alembic_version") {
        let revision = conn
            .row("SELECT version_num FROM alembic_version", &[], |row| {
                Ok(row.required_text(0)?.to_owned())
            })
            .await?;
        return match revision.as_deref() {
            Some(HEAD) => Ok(Upgraded::AlreadyCurrent),
            Some(other) if upgrade => {
                crate::manage::upgrade::run(dialect, conn, other).await?;
                Ok(Upgraded::From(other.to_owned()))
            }
            Some(other) => bail!(
                "the database is at schema revision {other}; this service needs {HEAD}: upgrade it with placement-manage db sync"
            ),
            None => bail!(
                "the database has an empty alembic_version table; it is not a Placement database this service can use"
            ),
        };
    }
    if !existing.is_empty() {
        bail!(
            "the database already holds Placement tables ({}) but no alembic_version: refusing to change it",
            existing.join(", ")
        );
    }
    for statement in statements(ddl(dialect)) {
        conn.execute(&statement, &[])
            .await
            .with_context(|| format!("creating the schema failed at: {statement}"))?;
    }
    Ok(Upgraded::Created)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_is_created() {
        for dialect in [Dialect::Sqlite, Dialect::Postgres, Dialect::MySql] {
            let all: Vec<String> = statements(ddl(dialect)).collect();
            for table in TABLES.iter().chain(&["alembic_version"]) {
                let create = format!("CREATE TABLE {table} (");
                assert_eq!(
                    all.iter().filter(|s| s.starts_with(&create)).count(),
                    1,
                    "{dialect:?}: {table}"
                );
            }
            assert!(all.iter().any(|s| s.contains(HEAD)), "{dialect:?}");
            // A table is created before the tables whose keys refer to it.
            let position = |table: &str| {
                all.iter()
                    .position(|s| s.starts_with(&format!("CREATE TABLE {table} (")))
            };
            for statement in &all {
                for reference in statement.split("REFERENCES ").skip(1) {
                    let target = reference.split_whitespace().next().unwrap_or_default();
                    let here = all.iter().position(|s| s == statement);
                    assert!(
                        position(target) <= here,
                        "{dialect:?}: {target} after {statement}"
                    );
                }
            }
        }
    }
}
