//! Resource classes: the standard ones (added at start, ids below
//! [`standard::MIN_CUSTOM_RESOURCE_CLASS_ID`]) and custom ones
//! (`CUSTOM_*`, ids from it up).

use std::time::SystemTime;

use crate::db::ids::ResourceClassId;
use crate::db::statement::Statement;
use crate::db::{self, Bind, Columns, Conn, Store, sql, standard};
use crate::error::{Error, Result};
use crate::objects::inventory;

/// A row of `resource_classes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResourceClass {
    pub(crate) id: ResourceClassId,
    pub(crate) name: String,
    /// The later of its creation and its last change.
    pub(crate) updated: Option<SystemTime>,
}

impl ResourceClass {
    /// One of the standard classes (which cannot be changed or deleted).
    pub(crate) fn is_standard(&self) -> bool {
        self.id.get() < standard::MIN_CUSTOM_RESOURCE_CLASS_ID
    }
}

/// `SELECT` of the classes' columns, read by [`read_class`].
fn select_columns(store: &Store) -> Statement {
    let d = store.dialect();
    let mut q = Statement::new(d);
    q.push(&format!(
        "SELECT id, name, {}, {} FROM resource_classes",
        d.timestamp_text("created_at"),
        d.timestamp_text("updated_at")
    ));
    q
}

/// A row of [`select_columns`].
fn read_class(row: &dyn Columns) -> db::Result<ResourceClass> {
    Ok(ResourceClass {
        id: ResourceClassId::read(row, 0)?,
        name: row.required_text(1)?.to_owned(),
        updated: row.timestamp(2)?.max(row.timestamp(3)?),
    })
}

/// The class `name`, or `None`.
pub(crate) async fn find(store: &Store, name: &str) -> Result<Option<ResourceClass>> {
    let mut q = select_columns(store);
    q.push(" WHERE name = ").bind(name);
    Ok(q.row_on(&mut Conn::from(store.reader()), read_class)
        .await?)
}

/// Every class, by id.
pub(crate) async fn list(store: &Store) -> Result<Vec<ResourceClass>> {
    let mut q = select_columns(store);
    q.push(" ORDER BY id");
    Ok(q.rows_on(&mut Conn::from(store.reader()), read_class)
        .await?)
}

/// Tries of [`create`] before it gives up (upstream's count).
const CREATE_TRIES: usize = 100;

/// Creates the custom class `name` with the next free id; `None` when it
/// exists. Concurrent creators may pick the same id: the loser tries again
/// (and finds its name taken, if that was the race), as upstream does.
pub(crate) async fn create(store: &Store, name: &str) -> Result<Option<ResourceClass>> {
    let (owned, name) = (store.clone(), name.to_owned());
    store
        .writing(move |mut writer| async move {
            for _ in 0..CREATE_TRIES {
                let mut tx = writer.begin().await?;
                let done = match try_create(&owned, &mut tx.conn(), &name).await {
                    Ok(Some(created)) => tx
                        .commit()
                        .await
                        .map(|()| Some(created))
                        .map_err(Error::from),
                    other => other,
                };
                match done {
                    Err(e) if e.is_unique_violation() || e.is_transient() => {}
                    done => return done,
                }
            }
            Err(Error::conflict(format!(
                "Creating resource class {name} met {CREATE_TRIES} concurrent creations; please retry"
            )))
        })
        .await
}

/// One try of [`create`]: the class with the next free custom id, in the
/// transaction `tx`; `None` when the name is taken.
async fn try_create(store: &Store, tx: &mut Conn<'_>, name: &str) -> Result<Option<ResourceClass>> {
    if inventory::resource_class_id(store, &mut *tx, name)
        .await?
        .is_some()
    {
        return Ok(None);
    }
    let max_query = format!(
        "SELECT {} FROM resource_classes",
        store.dialect().int("MAX(id)")
    );
    let max = tx.row(&max_query, &[], |row| row.int(0)).await?.flatten();
    let id = ResourceClassId::new(match max {
        Some(max) if max >= standard::MIN_CUSTOM_RESOURCE_CLASS_ID => max + 1,
        _ => standard::MIN_CUSTOM_RESOURCE_CLASS_ID,
    });
    let mut insert = Statement::new(store.dialect());
    insert
        .push("INSERT INTO resource_classes (id, name, created_at) VALUES (")
        .bind(id)
        .push(", ")
        .bind(name)
        .push(", ")
        .bind_timestamp(db::now_text())
        .push(")");
    insert.execute_on(tx).await?;
    Ok(Some(ResourceClass {
        id,
        name: name.to_owned(),
        updated: Some(SystemTime::now()),
    }))
}

/// Renames the custom class `id` to `new_name`; 409 when another class
/// has that name.
pub(crate) async fn rename(store: &Store, id: ResourceClassId, new_name: &str) -> Result<()> {
    let new_name = new_name.to_owned();
    store
        .transaction(move |store, tx| {
            Box::pin(async move {
                let taken = tx
                    .row(
                        sql!(
                            store,
                            "SELECT id FROM resource_classes WHERE name = ? AND id <> ?"
                        ),
                        &[Bind::from(new_name.as_str()), Bind::from(id)],
                        |row| ResourceClassId::read(row, 0),
                    )
                    .await?;
                if taken.is_some() {
                    return Err(Error::conflict(format!(
                        "Resource class already exists: {new_name}"
                    )));
                }
                let mut update = Statement::new(store.dialect());
                update
                    .push("UPDATE resource_classes SET name = ")
                    .bind(new_name)
                    .push(", updated_at = ")
                    .bind_timestamp(db::now_text())
                    .push(" WHERE id = ")
                    .bind(id);
                update.execute_on(tx).await?;
                Ok(())
            })
        })
        .await
}

/// What [`delete`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Deleted {
    Done,
    /// Some inventory is of this class: nothing was deleted.
    InUse,
    /// Someone else deleted it first.
    Gone,
}

/// Deletes the custom class `id` unless an inventory is of it.
pub(crate) async fn delete(store: &Store, id: ResourceClassId) -> Result<Deleted> {
    store
        .transaction(move |store, tx| {
            Box::pin(async move {
                let in_use = tx
                    .row(
                        sql!(
                            store,
                            "SELECT id FROM inventories WHERE resource_class_id = ? LIMIT 1"
                        ),
                        &[Bind::from(id)],
                        |row| row.required_int(0),
                    )
                    .await?;
                if in_use.is_some() {
                    return Ok(Deleted::InUse);
                }
                let done = tx
                    .execute(
                        sql!(store, "DELETE FROM resource_classes WHERE id = ?"),
                        &[Bind::from(id)],
                    )
                    .await?;
                Ok(if done.rows_affected == 0 {
                    Deleted::Gone
                } else {
                    Deleted::Done
                })
            })
        })
        .await
}
