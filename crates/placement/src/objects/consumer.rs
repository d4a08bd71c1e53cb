//! Consumers (what allocations belong to), and the projects, users and
//! consumer types they name.
//!
//! Projects, users and consumer types are created on first use and never
//! deleted; a consumer is created with its first allocations and deleted
//! when a write leaves it none.

use std::collections::{BTreeSet, HashMap};

use sqlx::Row;

use crate::db::{self, Store, sql};
use crate::error::Result;

/// A consumer as a write transaction read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Consumer {
    pub(crate) id: i64,
    pub(crate) uuid: String,
    pub(crate) project_id: i64,
    pub(crate) user_id: i64,
    pub(crate) generation: i64,
    pub(crate) consumer_type_id: Option<i64>,
}

/// The internal ids of projects, users and consumer types, by name.
#[derive(Clone, Debug, Default)]
pub(crate) struct Owners {
    pub(crate) projects: HashMap<String, i64>,
    pub(crate) users: HashMap<String, i64>,
    pub(crate) types: HashMap<String, i64>,
}

/// The tables [`Owners`] come from: table and name column.
const PROJECTS: (&str, &str) = ("projects", "external_id");
const USERS: (&str, &str) = ("users", "external_id");
const TYPES: (&str, &str) = ("consumer_types", "name");

async fn ids_of<'c, E>(
    store: &Store,
    conn: E,
    (table, column): (&str, &str),
    names: &[&String],
) -> Result<HashMap<String, i64>>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    if names.is_empty() {
        return Ok(HashMap::new());
    }
    let query = store.dialect().placeholders(format!(
        "SELECT id, {column} AS name FROM {table} WHERE {column} IN ({})",
        db::placeholder_list(names.len())
    ));
    let mut q = sqlx::query(&query);
    for name in names {
        q = q.bind(name.as_str());
    }
    let rows = q.fetch_all(conn).await?;
    rows.iter()
        .map(|r| Ok((r.try_get("name")?, r.try_get("id")?)))
        .collect()
}

/// What a write needs: the names of the projects, users and consumer types
/// it refers to.
#[derive(Clone, Debug, Default)]
pub(crate) struct Wanted {
    pub(crate) projects: BTreeSet<String>,
    pub(crate) users: BTreeSet<String>,
    pub(crate) types: BTreeSet<String>,
}

impl Wanted {
    /// Reads the ids of those that exist (outside any transaction: they
    /// are never deleted, so an id once read stays right).
    /// One statement for the three tables (a `UNION ALL`, each part
    /// tagged with its table), not one per table.
    pub(crate) async fn existing(&self, store: &Store) -> Result<Owners> {
        let parts = [
            (PROJECTS, &self.projects),
            (USERS, &self.users),
            (TYPES, &self.types),
        ];
        let mut selects = Vec::with_capacity(parts.len());
        for (kind, ((table, column), names)) in parts.iter().enumerate() {
            if !names.is_empty() {
                selects.push(format!(
                    "SELECT {kind} AS kind, id, {column} AS name FROM {table} WHERE {column} IN ({})",
                    db::placeholder_list(names.len())
                ));
            }
        }
        let mut owners = Owners::default();
        if selects.is_empty() {
            return Ok(owners);
        }
        let query = store.dialect().placeholders(selects.join(" UNION ALL "));
        let mut q = sqlx::query(&query);
        for (_, names) in &parts {
            for name in names.iter() {
                q = q.bind(name.as_str());
            }
        }
        for row in q.fetch_all(store.reader()).await? {
            let found = match row.try_get::<i64, _>("kind")? {
                0 => &mut owners.projects,
                1 => &mut owners.users,
                _ => &mut owners.types,
            };
            found.insert(row.try_get("name")?, row.try_get("id")?);
        }
        Ok(owners)
    }

    /// Creates, in `tx`, those `known` lacks and returns every id. Call it
    /// first in the transaction: on MySQL the rows another transaction
    /// committed meanwhile are then visible to the reads that follow.
    pub(crate) async fn ensure(
        &self,
        store: &Store,
        tx: &mut sqlx::Transaction<'static, sqlx::Any>,
        known: &Owners,
    ) -> Result<Owners> {
        let missing = |wanted: &BTreeSet<String>, have: &HashMap<String, i64>| -> Vec<String> {
            wanted
                .iter()
                .filter(|n| !have.contains_key(*n))
                .cloned()
                .collect()
        };
        let projects = missing(&self.projects, &known.projects);
        let users = missing(&self.users, &known.users);
        let types = missing(&self.types, &known.types);
        // Every insert before any read: see above.
        insert_missing(store, tx, PROJECTS, &projects).await?;
        insert_missing(store, tx, USERS, &users).await?;
        insert_missing(store, tx, TYPES, &types).await?;
        let mut owners = known.clone();
        owners
            .projects
            .extend(ids_of(store, &mut **tx, PROJECTS, &refs(&projects)).await?);
        owners
            .users
            .extend(ids_of(store, &mut **tx, USERS, &refs(&users)).await?);
        owners
            .types
            .extend(ids_of(store, &mut **tx, TYPES, &refs(&types)).await?);
        Ok(owners)
    }
}

fn refs(names: &[String]) -> Vec<&String> {
    names.iter().collect()
}

async fn insert_missing(
    store: &Store,
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    (table, column): (&str, &str),
    names: &[String],
) -> Result<()> {
    let d = store.dialect();
    let insert = d.placeholders(d.insert_unless_present(
        table,
        &[column, "created_at"],
        &format!("?, {}", d.timestamp_param()),
    ));
    for name in names {
        sqlx::query(&insert)
            .bind(name.as_str())
            .bind(db::now_text())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

fn row_to_consumer(row: &sqlx::any::AnyRow) -> Result<Consumer> {
    Ok(Consumer {
        id: row.try_get("id")?,
        uuid: row.try_get("uuid")?,
        project_id: row.try_get("project_id")?,
        user_id: row.try_get("user_id")?,
        generation: row.try_get::<Option<i64>, _>("generation")?.unwrap_or(0),
        consumer_type_id: row.try_get("consumer_type_id")?,
    })
}

/// The consumer with `uuid`, read in `tx`.
pub(crate) async fn find(
    store: &Store,
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    uuid: &str,
) -> Result<Option<Consumer>> {
    let row = sqlx::query(sql!(
        store,
        "SELECT id, uuid, project_id, user_id, generation, consumer_type_id FROM consumers WHERE uuid = ?"
    ))
    .bind(uuid)
    .fetch_optional(&mut **tx)
    .await?;
    row.as_ref().map(row_to_consumer).transpose()
}

/// Creates a consumer with generation 0. A unique key violation (another
/// transaction created it meanwhile) comes back as the database error.
pub(crate) async fn create(
    store: &Store,
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    uuid: &str,
    project_id: i64,
    user_id: i64,
    consumer_type_id: Option<i64>,
) -> Result<Consumer> {
    let d = store.dialect();
    let insert = d.placeholders(format!(
        "INSERT INTO consumers (uuid, project_id, user_id, generation, consumer_type_id, created_at) VALUES (?, ?, ?, 0, ?, {})",
        d.timestamp_param()
    ));
    let inserted = sqlx::query(&insert)
        .bind(uuid)
        .bind(project_id)
        .bind(user_id)
        .bind(consumer_type_id)
        .bind(db::now_text())
        .execute(&mut **tx)
        .await?;
    // The row is what was just written; only its id is the database's.
    // SQLite and MySQL tell it; PostgreSQL does not, so read it back.
    if let Some(id) = inserted.last_insert_id() {
        return Ok(Consumer {
            id,
            uuid: uuid.to_owned(),
            project_id,
            user_id,
            generation: 0,
            consumer_type_id,
        });
    }
    find(store, tx, uuid).await?.ok_or_else(|| {
        crate::error::Error::Db(sqlx::Error::Protocol(format!(
            "the consumer {uuid} just inserted cannot be read back"
        )))
    })
}

/// Sets the consumer's project, user and type without changing its
/// generation, if its generation is still the one read (if not, the
/// generation increment of the same write fails).
pub(crate) async fn update_owner(
    store: &Store,
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    consumer: &Consumer,
) -> Result<()> {
    let d = store.dialect();
    let update = d.placeholders(format!(
        "UPDATE consumers SET project_id = ?, user_id = ?, consumer_type_id = ?, updated_at = {} WHERE id = ? AND generation = ?",
        d.timestamp_param()
    ));
    sqlx::query(&update)
        .bind(consumer.project_id)
        .bind(consumer.user_id)
        .bind(consumer.consumer_type_id)
        .bind(db::now_text())
        .bind(consumer.id)
        .bind(consumer.generation)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Moves the consumer's generation on by one if it is still the one read;
/// `false` when another transaction changed it.
pub(crate) async fn increment_generation(
    store: &Store,
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    consumer: &mut Consumer,
) -> Result<bool> {
    let d = store.dialect();
    let update = d.placeholders(format!(
        "UPDATE consumers SET generation = ?, updated_at = {} WHERE id = ? AND generation = ?",
        d.timestamp_param()
    ));
    let done = sqlx::query(&update)
        .bind(consumer.generation + 1)
        .bind(db::now_text())
        .bind(consumer.id)
        .bind(consumer.generation)
        .execute(&mut **tx)
        .await?;
    if done.rows_affected() == 1 {
        consumer.generation += 1;
        Ok(true)
    } else {
        Ok(false)
    }
}

/// Deletes those of the consumers `uuids` that have no allocations left.
pub(crate) async fn delete_if_no_allocations(
    store: &Store,
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    uuids: &[&str],
) -> Result<()> {
    if uuids.is_empty() {
        return Ok(());
    }
    let delete = store.dialect().placeholders(format!(
        "DELETE FROM consumers WHERE uuid IN ({}) AND NOT EXISTS (SELECT 1 FROM allocations WHERE allocations.consumer_id = consumers.uuid)",
        db::placeholder_list(uuids.len())
    ));
    let mut q = sqlx::query(&delete);
    for uuid in uuids {
        q = q.bind(*uuid);
    }
    q.execute(&mut **tx).await?;
    Ok(())
}
