//! Consumers (what allocations belong to), and the projects, users and
//! consumer types they name.
//!
//! Projects, users and consumer types are created on first use and never
//! deleted; a consumer is created with its first allocations and deleted
//! when a write leaves it none.

use std::collections::{BTreeSet, HashMap};

use crate::db::{self, Bind, Columns, Conn, Store, sql};
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

async fn ids_of(
    store: &Store,
    conn: &mut Conn<'_>,
    (table, column): (&str, &str),
    names: &[String],
) -> Result<HashMap<String, i64>> {
    if names.is_empty() {
        return Ok(HashMap::new());
    }
    let query = store.dialect().placeholders(format!(
        "SELECT id, {column} FROM {table} WHERE {column} IN ({})",
        db::placeholder_list(names.len())
    ));
    let binds: Vec<Bind> = names.iter().map(|n| Bind::from(n.as_str())).collect();
    conn.fold(&query, &binds, HashMap::new(), |ids, row| {
        ids.insert(row.required_text(1)?.to_owned(), row.required_int(0)?);
        Ok(())
    })
    .await
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
                    "SELECT {kind} AS kind, id, {column} FROM {table} WHERE {column} IN ({})",
                    db::placeholder_list(names.len())
                ));
            }
        }
        if selects.is_empty() {
            return Ok(Owners::default());
        }
        let query = store.dialect().placeholders(selects.join(" UNION ALL "));
        let binds: Vec<Bind> = parts
            .iter()
            .flat_map(|(_, names)| names.iter().map(|n| Bind::from(n.as_str())))
            .collect();
        Conn::from(store.reader())
            .fold(&query, &binds, Owners::default(), |owners, row| {
                let found = match row.required_int(0)? {
                    0 => &mut owners.projects,
                    1 => &mut owners.users,
                    _ => &mut owners.types,
                };
                found.insert(row.required_text(2)?.to_owned(), row.required_int(1)?);
                Ok(())
            })
            .await
    }

    /// Creates, in `tx`, those `known` lacks and returns every id. Call it
    /// first in the transaction: on MySQL the rows another transaction
    /// committed meanwhile are then visible to the reads that follow.
    pub(crate) async fn ensure(
        &self,
        store: &Store,
        tx: &mut Conn<'_>,
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
            .extend(ids_of(store, tx, PROJECTS, &projects).await?);
        owners.users.extend(ids_of(store, tx, USERS, &users).await?);
        owners.types.extend(ids_of(store, tx, TYPES, &types).await?);
        Ok(owners)
    }
}

async fn insert_missing(
    store: &Store,
    tx: &mut Conn<'_>,
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
        tx.execute(
            &insert,
            &[Bind::from(name.as_str()), Bind::from(db::now_text())],
        )
        .await?;
    }
    Ok(())
}

fn read_consumer(row: &dyn Columns) -> Result<Consumer> {
    Ok(Consumer {
        id: row.required_int(0)?,
        uuid: row.required_text(1)?.to_owned(),
        project_id: row.required_int(2)?,
        user_id: row.required_int(3)?,
        generation: row.int(4)?.unwrap_or(0),
        consumer_type_id: row.int(5)?,
    })
}

/// The consumer with `uuid`, read in `tx`.
pub(crate) async fn find(store: &Store, tx: &mut Conn<'_>, uuid: &str) -> Result<Option<Consumer>> {
    tx.row(
        sql!(
            store,
            "SELECT id, uuid, project_id, user_id, generation, consumer_type_id FROM consumers WHERE uuid = ?"
        ),
        &[Bind::from(uuid)],
        read_consumer,
    )
    .await
}

/// Creates a consumer with generation 0. A unique key violation (another
/// transaction created it meanwhile) comes back as the database error.
pub(crate) async fn create(
    store: &Store,
    tx: &mut Conn<'_>,
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
    let binds = [
        Bind::from(uuid),
        Bind::from(project_id),
        Bind::from(user_id),
        Bind::from(consumer_type_id),
        Bind::from(db::now_text()),
    ];
    let inserted = tx.execute(&insert, &binds).await?;
    // The row is what was just written; only its id is the database's.
    // SQLite and MySQL tell it; PostgreSQL does not, so read it back.
    if let Some(id) = inserted.last_insert_id {
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
        crate::error::Error::Inconsistent(format!(
            "the consumer {uuid} just inserted cannot be read back"
        ))
    })
}

/// Sets the consumer's project, user and type without changing its
/// generation, if its generation is still the one read (if not, the
/// generation increment of the same write fails).
pub(crate) async fn update_owner(
    store: &Store,
    tx: &mut Conn<'_>,
    consumer: &Consumer,
) -> Result<()> {
    let d = store.dialect();
    let update = d.placeholders(format!(
        "UPDATE consumers SET project_id = ?, user_id = ?, consumer_type_id = ?, updated_at = {} WHERE id = ? AND generation = ?",
        d.timestamp_param()
    ));
    let binds = [
        Bind::from(consumer.project_id),
        Bind::from(consumer.user_id),
        Bind::from(consumer.consumer_type_id),
        Bind::from(db::now_text()),
        Bind::from(consumer.id),
        Bind::from(consumer.generation),
    ];
    tx.execute(&update, &binds).await?;
    Ok(())
}

/// Moves the consumer's generation on by one if it is still the one read;
/// `false` when another transaction changed it.
pub(crate) async fn increment_generation(
    store: &Store,
    tx: &mut Conn<'_>,
    consumer: &mut Consumer,
) -> Result<bool> {
    let d = store.dialect();
    let update = d.placeholders(format!(
        "UPDATE consumers SET generation = ?, updated_at = {} WHERE id = ? AND generation = ?",
        d.timestamp_param()
    ));
    let binds = [
        Bind::from(consumer.generation + 1),
        Bind::from(db::now_text()),
        Bind::from(consumer.id),
        Bind::from(consumer.generation),
    ];
    if tx.execute(&update, &binds).await?.rows_affected == 1 {
        consumer.generation += 1;
        Ok(true)
    } else {
        Ok(false)
    }
}

/// Deletes those of the consumers `uuids` that have no allocations left.
pub(crate) async fn delete_if_no_allocations(
    store: &Store,
    tx: &mut Conn<'_>,
    uuids: &[&str],
) -> Result<()> {
    if uuids.is_empty() {
        return Ok(());
    }
    let d = store.dialect();
    let list = db::placeholder_list(uuids.len());
    let binds: Vec<Bind> = uuids.iter().map(|u| Bind::from(*u)).collect();
    // The consumers first: a writer giving one of them allocations moves
    // its generation, so once this transaction holds their rows, such a
    // writer has either committed (and the read below sees its
    // allocations) or will find its consumer gone and fail. One statement
    // with `NOT EXISTS (SELECT ... FROM allocations ...)` instead scanned
    // the allocations on MariaDB, share-locking every row, and concurrent
    // deleters deadlocked.
    let lock = d.placeholders(format!(
        "SELECT id FROM consumers WHERE uuid IN ({list}){}",
        d.for_update()
    ));
    tx.rows(&lock, &binds, |row| row.required_int(0)).await?;
    let holding = d.placeholders(format!(
        "SELECT consumer_id FROM allocations WHERE consumer_id IN ({list}){}",
        d.for_share()
    ));
    let holding = tx
        .fold(&holding, &binds, BTreeSet::new(), |held, row| {
            held.insert(row.required_text(0)?.to_owned());
            Ok(())
        })
        .await?;
    let empty: Vec<Bind> = uuids
        .iter()
        .filter(|u| !holding.contains(**u))
        .map(|u| Bind::from(*u))
        .collect();
    if empty.is_empty() {
        return Ok(());
    }
    let delete = d.placeholders(format!(
        "DELETE FROM consumers WHERE uuid IN ({})",
        db::placeholder_list(empty.len())
    ));
    tx.execute(&delete, &empty).await?;
    Ok(())
}
