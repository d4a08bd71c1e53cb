//! Consumers (what allocations belong to), and the projects, users and
//! consumer types they name.
//!
//! Projects, users and consumer types are created on first use and never
//! deleted; a consumer is created with its first allocations and deleted
//! when a write leaves it none.

use std::collections::{BTreeSet, HashMap};

use crate::db::ids::{ConsumerId, ConsumerTypeId, ProjectId, RowId, UserId};
use crate::db::statement::Statement;
use crate::db::{self, Bind, Columns, Conn, Store, sql};
use crate::error::Result;

/// A consumer as a write transaction read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Consumer {
    pub(crate) id: ConsumerId,
    pub(crate) uuid: String,
    pub(crate) project_id: ProjectId,
    pub(crate) user_id: UserId,
    pub(crate) generation: i64,
    pub(crate) consumer_type_id: Option<ConsumerTypeId>,
}

/// The internal ids of projects, users and consumer types, by name.
#[derive(Clone, Debug, Default)]
pub(crate) struct Owners {
    pub(crate) projects: HashMap<String, ProjectId>,
    pub(crate) users: HashMap<String, UserId>,
    pub(crate) types: HashMap<String, ConsumerTypeId>,
}

/// A table of owners ([`Owners`]): its name and its name column.
#[derive(Clone, Copy, Debug)]
struct OwnerTable {
    table: &'static str,
    column: &'static str,
}

const PROJECTS: OwnerTable = OwnerTable {
    table: "projects",
    column: "external_id",
};
const USERS: OwnerTable = OwnerTable {
    table: "users",
    column: "external_id",
};
const TYPES: OwnerTable = OwnerTable {
    table: "consumer_types",
    column: "name",
};

impl OwnerTable {
    /// The columns `id, name` (read by [`OwnerTable::insert_row`]) and the
    /// rest of a `SELECT` of the rows named `names` (not empty).
    fn select<'a>(self, q: &mut Statement, names: impl IntoIterator<Item = &'a String>) {
        let OwnerTable { table, column } = self;
        q.push(&format!("id, {column} FROM {table} WHERE {column} IN ("))
            .list(names.into_iter().map(String::as_str))
            .push(")");
    }

    /// Adds the row's id (in the column `first`, its name next) to
    /// `ids`, by name.
    fn insert_row<T: RowId>(
        ids: &mut HashMap<String, T>,
        row: &dyn Columns,
        first: usize,
    ) -> db::Result<()> {
        ids.insert(
            row.required_text(first + 1)?.to_owned(),
            T::read(row, first)?,
        );
        Ok(())
    }
}

/// The ids of the rows of `table` named `names`, by name.
async fn ids_of<T>(
    store: &Store,
    conn: &mut Conn<'_>,
    table: OwnerTable,
    names: &[String],
) -> Result<HashMap<String, T>>
where
    T: RowId + Send,
{
    if names.is_empty() {
        return Ok(HashMap::new());
    }
    let mut q = Statement::new(store.dialect());
    q.push("SELECT ");
    table.select(&mut q, names);
    Ok(q.fold_on(conn, HashMap::new(), move |ids, row| {
        OwnerTable::insert_row(ids, row, 0)
    })
    .await?)
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
        if parts.iter().all(|(_, names)| names.is_empty()) {
            return Ok(Owners::default());
        }
        // Columns: the part's index in `parts` (its table), then the
        // table's id and name.
        let mut q = Statement::new(store.dialect());
        let mut first = true;
        for (kind, (table, names)) in parts.iter().enumerate() {
            if names.is_empty() {
                continue;
            }
            if !first {
                q.push(" UNION ALL ");
            }
            first = false;
            q.push(&format!("SELECT {kind} AS kind, "));
            table.select(&mut q, names.iter());
        }
        Ok(q.fold_on(
            &mut Conn::from(store.reader()),
            Owners::default(),
            |owners, row| match row.required_int(0)? {
                0 => OwnerTable::insert_row(&mut owners.projects, row, 1),
                1 => OwnerTable::insert_row(&mut owners.users, row, 1),
                _ => OwnerTable::insert_row(&mut owners.types, row, 1),
            },
        )
        .await?)
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
        fn missing<T>(wanted: &BTreeSet<String>, have: &HashMap<String, T>) -> Vec<String> {
            wanted
                .iter()
                .filter(|n| !have.contains_key(*n))
                .cloned()
                .collect()
        }
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
    OwnerTable { table, column }: OwnerTable,
    names: &[String],
) -> Result<()> {
    let d = store.dialect();
    // The statement's text around its values, as the dialect writes it.
    let marker = "{values}";
    let around = d.insert_unless_present(table, &[column, "created_at"], marker);
    debug_assert!(around.contains(marker), "{around}");
    let (before, after) = around.split_once(marker).unwrap_or((&around, ""));
    for name in names {
        let mut insert = Statement::new(d);
        insert
            .push(before)
            .bind(name.as_str())
            .push(", ")
            .bind_timestamp(db::now_text())
            .push(after);
        insert.execute_on(tx).await?;
    }
    Ok(())
}

/// The consumer with `uuid`, read in `tx`.
pub(crate) async fn find(store: &Store, tx: &mut Conn<'_>, uuid: &str) -> Result<Option<Consumer>> {
    Ok(tx.row(
        sql!(
            store,
            "SELECT id, uuid, project_id, user_id, generation, consumer_type_id FROM consumers WHERE uuid = ?"
        ),
        &[Bind::from(uuid)],
        |row| {
            Ok(Consumer {
                id: ConsumerId::read(row, 0)?,
                uuid: row.required_text(1)?.to_owned(),
                project_id: ProjectId::read(row, 2)?,
                user_id: UserId::read(row, 3)?,
                generation: row.int(4)?.unwrap_or(0),
                consumer_type_id: ConsumerTypeId::read_optional(row, 5)?,
            })
        },
    )
    .await?)
}

/// Creates a consumer with generation 0. A unique key violation (another
/// transaction created it meanwhile) comes back as the database error.
pub(crate) async fn create(
    store: &Store,
    tx: &mut Conn<'_>,
    uuid: &str,
    project_id: ProjectId,
    user_id: UserId,
    consumer_type_id: Option<ConsumerTypeId>,
) -> Result<Consumer> {
    let mut insert = Statement::new(store.dialect());
    insert
        .push("INSERT INTO consumers (uuid, project_id, user_id, generation, consumer_type_id, created_at) VALUES (")
        .bind(uuid)
        .push(", ")
        .bind(project_id)
        .push(", ")
        .bind(user_id)
        .push(", 0, ")
        .bind(consumer_type_id)
        .push(", ")
        .bind_timestamp(db::now_text())
        .push(")");
    let inserted = insert.execute_on(tx).await?;
    // The row is what was just written; only its id is the database's.
    // SQLite and MySQL tell it; PostgreSQL does not, so read it back.
    if let Some(id) = inserted.last_insert_id {
        return Ok(Consumer {
            id: ConsumerId::new(id),
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
    let mut update = Statement::new(store.dialect());
    update
        .push("UPDATE consumers SET project_id = ")
        .bind(consumer.project_id)
        .push(", user_id = ")
        .bind(consumer.user_id)
        .push(", consumer_type_id = ")
        .bind(consumer.consumer_type_id)
        .push(", updated_at = ")
        .bind_timestamp(db::now_text())
        .push(" WHERE id = ")
        .bind(consumer.id)
        .push(" AND generation = ")
        .bind(consumer.generation);
    update.execute_on(tx).await?;
    Ok(())
}

/// Moves the consumer's generation on by one if it is still the one read;
/// `false` when another transaction changed it.
pub(crate) async fn increment_generation(
    store: &Store,
    tx: &mut Conn<'_>,
    consumer: &mut Consumer,
) -> Result<bool> {
    let mut update = Statement::new(store.dialect());
    update
        .push("UPDATE consumers SET generation = ")
        .bind(consumer.generation + 1)
        .push(", updated_at = ")
        .bind_timestamp(db::now_text())
        .push(" WHERE id = ")
        .bind(consumer.id)
        .push(" AND generation = ")
        .bind(consumer.generation);
    if update.execute_on(tx).await?.rows_affected == 1 {
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
    // The consumers first: a writer giving one of them allocations moves
    // its generation, so once this transaction holds their rows, such a
    // writer has either committed (and the read below sees its
    // allocations) or will find its consumer gone and fail. One statement
    // with `NOT EXISTS (SELECT ... FROM allocations ...)` instead scanned
    // the allocations on MariaDB, share-locking every row, and concurrent
    // deleters deadlocked.
    let mut lock = Statement::new(d);
    lock.push("SELECT id FROM consumers WHERE uuid IN (")
        .list(uuids.iter().copied())
        .push(")")
        .push(d.for_update());
    lock.rows_on(tx, |row| ConsumerId::read(row, 0)).await?;
    let mut holding = Statement::new(d);
    holding
        .push("SELECT consumer_id FROM allocations WHERE consumer_id IN (")
        .list(uuids.iter().copied())
        .push(")")
        .push(d.for_share());
    let holding = holding
        .fold_on(tx, BTreeSet::new(), |held, row| {
            held.insert(row.required_text(0)?.to_owned());
            Ok(())
        })
        .await?;
    let empty: Vec<&str> = uuids
        .iter()
        .copied()
        .filter(|u| !holding.contains(*u))
        .collect();
    if empty.is_empty() {
        return Ok(());
    }
    let mut delete = Statement::new(d);
    delete
        .push("DELETE FROM consumers WHERE uuid IN (")
        .list(empty)
        .push(")");
    delete.execute_on(tx).await?;
    Ok(())
}
