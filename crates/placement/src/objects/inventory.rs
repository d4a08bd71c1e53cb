//! Inventories of resource providers, and the resource class names they
//! are kept by. Every write changes the provider's generation in the same
//! transaction (from the one the caller read), so concurrent writers of
//! one provider's inventory or allocations get a conflict.

use std::collections::{BTreeMap, HashMap};
use std::time::SystemTime;

use sqlx::Row;
use sqlx::any::AnyRow;

use crate::db::{self, Store, sql};
use crate::error::{Error, Result};
use crate::objects::provider::{self, ProviderRef};

/// The id of the resource class `name`, or `None`.
pub(crate) async fn resource_class_id<'c, E>(
    store: &Store,
    conn: E,
    name: &str,
) -> Result<Option<i64>>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let row = sqlx::query(sql!(
        store,
        "SELECT id FROM resource_classes WHERE name = ?"
    ))
    .bind(name)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|r| r.try_get::<i64, _>("id")).transpose()?)
}

/// What an inventory of `total` with `reserved` and `allocation_ratio`
/// can hand out: `int((total - reserved) * allocation_ratio)`, truncated
/// toward zero as upstream's `int()`.
pub(crate) fn capacity(total: i64, reserved: i64, allocation_ratio: f64) -> i64 {
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    let capacity = ((total - reserved) as f64 * allocation_ratio).trunc() as i64;
    capacity
}

/// One inventory record.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Inventory {
    pub(crate) resource_class: String,
    pub(crate) total: i64,
    pub(crate) reserved: i64,
    pub(crate) min_unit: i64,
    pub(crate) max_unit: i64,
    pub(crate) step_size: i64,
    pub(crate) allocation_ratio: f64,
    pub(crate) created_at: Option<SystemTime>,
    pub(crate) updated_at: Option<SystemTime>,
}

impl Inventory {
    /// What can be allocated (see [`capacity`]).
    pub(crate) fn capacity(&self) -> i64 {
        capacity(self.total, self.reserved, self.allocation_ratio)
    }

    /// When it last changed (`updated_at`, else `created_at`).
    pub(crate) fn last_modified(&self) -> Option<SystemTime> {
        self.updated_at.or(self.created_at)
    }
}

fn row_to_inventory(row: &AnyRow) -> Result<Inventory> {
    let stamp = |column: &str| -> Result<Option<SystemTime>> {
        let text: Option<String> = row.try_get(column)?;
        Ok(text.as_deref().and_then(db::parse_timestamp))
    };
    Ok(Inventory {
        resource_class: row.try_get("resource_class")?,
        total: row.try_get("total")?,
        reserved: row.try_get("reserved")?,
        min_unit: row.try_get("min_unit")?,
        max_unit: row.try_get("max_unit")?,
        step_size: row.try_get("step_size")?,
        allocation_ratio: db::read_float(row, "allocation_ratio")?,
        created_at: stamp("created_at")?,
        updated_at: stamp("updated_at")?,
    })
}

/// The inventories of the provider `provider_id`, by resource class id.
pub(crate) async fn list<'c, E>(store: &Store, conn: E, provider_id: i64) -> Result<Vec<Inventory>>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let d = store.dialect();
    let query = d.placeholders(format!(
        "SELECT rc.name AS resource_class, inv.total AS total, inv.reserved AS reserved, \
         inv.min_unit AS min_unit, inv.max_unit AS max_unit, inv.step_size AS step_size, \
         inv.allocation_ratio AS allocation_ratio, {} AS created_at, {} AS updated_at \
         FROM inventories inv JOIN resource_classes rc ON rc.id = inv.resource_class_id \
         WHERE inv.resource_provider_id = ? ORDER BY inv.resource_class_id",
        d.timestamp_text("inv.created_at"),
        d.timestamp_text("inv.updated_at"),
    ));
    let rows = sqlx::query(&query)
        .bind(provider_id)
        .fetch_all(conn)
        .await?;
    rows.iter().map(row_to_inventory).collect()
}

/// Why an inventory write failed (upstream's exceptions).
#[derive(Debug)]
pub(crate) enum WriteError {
    /// `No such resource class {0}.`
    ResourceClassNotFound(String),
    /// The provider has no inventory of this class.
    NoInventory(String),
    /// The provider already has inventory of this class.
    Exists(String),
    /// Inventory to be removed has allocations (the classes, joined).
    InUse(String),
    /// The provider's generation changed meanwhile.
    Concurrent,
    /// Anything else (the database failed).
    Other(Error),
}

impl From<sqlx::Error> for WriteError {
    fn from(e: sqlx::Error) -> Self {
        if crate::db::is_transient(&e) {
            WriteError::Concurrent
        } else {
            WriteError::Other(e.into())
        }
    }
}

impl From<Error> for WriteError {
    fn from(e: Error) -> Self {
        WriteError::Other(e)
    }
}

impl WriteError {
    /// Upstream's message for it, about the provider `uuid`.
    pub(crate) fn message(&self, uuid: &str) -> String {
        match self {
            WriteError::ResourceClassNotFound(class) => format!("No such resource class {class}."),
            WriteError::NoInventory(class) => format!("No inventory of class {class} found."),
            WriteError::Exists(class) => {
                format!("Inventory for '{class}' on resource provider '{uuid}' already exists.")
            }
            WriteError::InUse(classes) => {
                format!("Inventory for '{classes}' on resource provider '{uuid}' in use.")
            }
            WriteError::Concurrent => "Another thread concurrently updated the resource provider data. Please retry your update".to_owned(),
            WriteError::Other(e) => e.to_string(),
        }
    }
}

pub(crate) type Tx = sqlx::Transaction<'static, sqlx::Any>;

/// Resource class ids of `classes`, in order; the first unknown one fails.
async fn class_ids(store: &Store, tx: &mut Tx, classes: &[&str]) -> Result<Vec<i64>, WriteError> {
    let mut ids = Vec::with_capacity(classes.len());
    for class in classes {
        ids.push(
            resource_class_id(store, &mut **tx, class)
                .await?
                .ok_or_else(|| WriteError::ResourceClassNotFound((*class).to_owned()))?,
        );
    }
    Ok(ids)
}

/// The resource class ids the provider has inventory of.
async fn existing_classes(
    store: &Store,
    tx: &mut Tx,
    provider_id: i64,
) -> Result<Vec<i64>, sqlx::Error> {
    let rows = sqlx::query(sql!(
        store,
        "SELECT resource_class_id FROM inventories WHERE resource_provider_id = ?"
    ))
    .bind(provider_id)
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| r.try_get::<i64, _>("resource_class_id"))
        .collect()
}

/// Used amounts of the provider by resource class id.
async fn usage(
    store: &Store,
    tx: &mut Tx,
    provider_id: i64,
) -> Result<HashMap<i64, i64>, sqlx::Error> {
    let query = store.dialect().placeholders(format!(
        "SELECT resource_class_id, {} AS used FROM allocations \
         WHERE resource_provider_id = ? GROUP BY resource_class_id",
        store.dialect().int("SUM(used)")
    ));
    let rows = sqlx::query(&query)
        .bind(provider_id)
        .fetch_all(&mut **tx)
        .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get::<i64, _>("resource_class_id")?,
                r.try_get::<Option<i64>, _>("used")?.unwrap_or(0),
            ))
        })
        .collect()
}

/// `InUse` when any of `to_delete` (class id to name) has allocations.
fn check_unused(
    to_delete: &BTreeMap<i64, String>,
    used: &HashMap<i64, i64>,
) -> Result<(), WriteError> {
    let in_use: Vec<&str> = to_delete
        .iter()
        .filter(|(id, _)| used.contains_key(id))
        .map(|(_, name)| name.as_str())
        .collect();
    if in_use.is_empty() {
        Ok(())
    } else {
        Err(WriteError::InUse(in_use.join(", ")))
    }
}

/// Deletes the provider's inventory of the classes `to_delete`.
async fn delete_classes(
    store: &Store,
    tx: &mut Tx,
    provider_id: i64,
    to_delete: &BTreeMap<i64, String>,
) -> Result<(), WriteError> {
    for id in to_delete.keys() {
        sqlx::query(sql!(
            store,
            "DELETE FROM inventories WHERE resource_provider_id = ? AND resource_class_id = ?"
        ))
        .bind(provider_id)
        .bind(*id)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

async fn insert(
    store: &Store,
    tx: &mut Tx,
    provider_id: i64,
    class_id: i64,
    inv: &Inventory,
) -> Result<(), WriteError> {
    let d = store.dialect();
    let query = d.placeholders(format!(
        "INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, \
         min_unit, max_unit, step_size, allocation_ratio, created_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, {})",
        d.timestamp_param()
    ));
    let done = sqlx::query(&query)
        .bind(provider_id)
        .bind(class_id)
        .bind(inv.total)
        .bind(inv.reserved)
        .bind(inv.min_unit)
        .bind(inv.max_unit)
        .bind(inv.step_size)
        .bind(inv.allocation_ratio)
        .bind(db::now_text())
        .execute(&mut **tx)
        .await;
    match done {
        Ok(_) => Ok(()),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            Err(WriteError::Exists(inv.resource_class.clone()))
        }
        Err(e) => Err(e.into()),
    }
}

/// Updates the record; warns (as upstream) when its allocations now
/// exceed the new capacity.
async fn update_record(
    store: &Store,
    tx: &mut Tx,
    (provider_id, uuid): (i64, &str),
    class_id: i64,
    inv: &Inventory,
    used: &HashMap<i64, i64>,
) -> Result<(), WriteError> {
    if used.get(&class_id).is_some_and(|u| *u > inv.capacity()) {
        tracing::warn!(
            provider = %uuid,
            resource_class = %inv.resource_class,
            "resource provider is now over-capacity"
        );
    }
    let d = store.dialect();
    let query = d.placeholders(format!(
        "UPDATE inventories SET total = ?, reserved = ?, min_unit = ?, max_unit = ?, \
         step_size = ?, allocation_ratio = ?, updated_at = {} \
         WHERE resource_provider_id = ? AND resource_class_id = ?",
        d.timestamp_param()
    ));
    let done = sqlx::query(&query)
        .bind(inv.total)
        .bind(inv.reserved)
        .bind(inv.min_unit)
        .bind(inv.max_unit)
        .bind(inv.step_size)
        .bind(inv.allocation_ratio)
        .bind(db::now_text())
        .bind(provider_id)
        .bind(class_id)
        .execute(&mut **tx)
        .await?;
    if done.rows_affected() == 0 {
        return Err(WriteError::NoInventory(inv.resource_class.clone()));
    }
    Ok(())
}

/// Adds one inventory the provider lacks; returns the new generation.
pub(crate) async fn add(
    store: &Store,
    provider: &ProviderRef,
    inv: &Inventory,
) -> Result<i64, WriteError> {
    let mut tx = store.begin().await?;
    let class_id = class_ids(store, &mut tx, &[inv.resource_class.as_str()]).await?[0];
    if existing_classes(store, &mut tx, provider.id)
        .await?
        .contains(&class_id)
    {
        return Err(WriteError::Exists(inv.resource_class.clone()));
    }
    let generation = bump(store, &mut tx, provider).await?;
    insert(store, &mut tx, provider.id, class_id, inv).await?;
    tx.commit().await?;
    Ok(generation)
}

/// Replaces one inventory the provider has; returns the new generation.
pub(crate) async fn update(
    store: &Store,
    provider: &ProviderRef,
    inv: &Inventory,
) -> Result<i64, WriteError> {
    let mut tx = store.begin().await?;
    let class_id = class_ids(store, &mut tx, &[inv.resource_class.as_str()]).await?[0];
    if !existing_classes(store, &mut tx, provider.id)
        .await?
        .contains(&class_id)
    {
        return Err(WriteError::NoInventory(inv.resource_class.clone()));
    }
    let used = usage(store, &mut tx, provider.id).await?;
    let generation = bump(store, &mut tx, provider).await?;
    update_record(
        store,
        &mut tx,
        (provider.id, &provider.uuid),
        class_id,
        inv,
        &used,
    )
    .await?;
    tx.commit().await?;
    Ok(generation)
}

/// Deletes the provider's inventory of `class`; returns the new
/// generation.
pub(crate) async fn delete(
    store: &Store,
    provider: &ProviderRef,
    class: &str,
) -> Result<i64, WriteError> {
    let mut tx = store.begin().await?;
    let class_id = class_ids(store, &mut tx, &[class]).await?[0];
    if !existing_classes(store, &mut tx, provider.id)
        .await?
        .contains(&class_id)
    {
        return Err(WriteError::NoInventory(class.to_owned()));
    }
    let used = usage(store, &mut tx, provider.id).await?;
    let to_delete = BTreeMap::from([(class_id, class.to_owned())]);
    check_unused(&to_delete, &used)?;
    // The provider's row is locked before its inventory rows, as by every
    // writer.
    let generation = bump(store, &mut tx, provider).await?;
    delete_classes(store, &mut tx, provider.id, &to_delete).await?;
    tx.commit().await?;
    Ok(generation)
}

/// Makes `inventories` the provider's whole inventory: adds, updates and
/// deletes as needed; returns the new generation.
pub(crate) async fn replace(
    store: &Store,
    provider: &ProviderRef,
    inventories: &[Inventory],
) -> Result<i64, WriteError> {
    let mut tx = store.begin().await?;
    let plan = Replacement::plan(store, &mut tx, provider.id, inventories).await?;
    // The provider's row is locked before its inventory rows, as by every
    // writer.
    let generation = bump(store, &mut tx, provider).await?;
    plan.apply(store, &mut tx, &provider.uuid).await?;
    tx.commit().await?;
    Ok(generation)
}

/// A provider's whole inventory about to be replaced, read and checked in
/// the writer's transaction; moving the provider's generation is the
/// writer's (before or after [`Replacement::apply`]).
pub(crate) struct Replacement<'a> {
    provider_id: i64,
    inventories: &'a [Inventory],
    /// The class id of each of `inventories`, in order.
    wanted: Vec<i64>,
    existing: Vec<i64>,
    used: HashMap<i64, i64>,
    to_delete: BTreeMap<i64, String>,
}

impl<'a> Replacement<'a> {
    /// Fails when a class does not exist or a class to remove is in use.
    pub(crate) async fn plan(
        store: &Store,
        tx: &mut Tx,
        provider_id: i64,
        inventories: &'a [Inventory],
    ) -> Result<Replacement<'a>, WriteError> {
        let names: Vec<&str> = inventories
            .iter()
            .map(|i| i.resource_class.as_str())
            .collect();
        let wanted = class_ids(store, tx, &names).await?;
        let existing = existing_classes(store, tx, provider_id).await?;
        let used = usage(store, tx, provider_id).await?;
        let mut to_delete = BTreeMap::new();
        if existing.iter().any(|id| !wanted.contains(id)) {
            let names = class_names(store, tx).await?;
            for id in existing.iter().filter(|id| !wanted.contains(id)) {
                to_delete.insert(
                    *id,
                    names.get(id).cloned().unwrap_or_else(|| id.to_string()),
                );
            }
        }
        check_unused(&to_delete, &used)?;
        Ok(Replacement {
            provider_id,
            inventories,
            wanted,
            existing,
            used,
            to_delete,
        })
    }

    /// Deletes, updates and inserts the records of the provider `uuid`.
    pub(crate) async fn apply(
        &self,
        store: &Store,
        tx: &mut Tx,
        uuid: &str,
    ) -> Result<(), WriteError> {
        delete_classes(store, tx, self.provider_id, &self.to_delete).await?;
        for (inv, class_id) in self.inventories.iter().zip(&self.wanted) {
            if self.existing.contains(class_id) {
                update_record(
                    store,
                    tx,
                    (self.provider_id, uuid),
                    *class_id,
                    inv,
                    &self.used,
                )
                .await?;
            } else {
                insert(store, tx, self.provider_id, *class_id, inv).await?;
            }
        }
        Ok(())
    }
}

/// Every resource class name by id.
async fn class_names(store: &Store, tx: &mut Tx) -> Result<HashMap<i64, String>, sqlx::Error> {
    let rows = sqlx::query(sql!(store, "SELECT id, name FROM resource_classes"))
        .fetch_all(&mut **tx)
        .await?;
    rows.iter()
        .map(|r| Ok((r.try_get::<i64, _>("id")?, r.try_get::<String, _>("name")?)))
        .collect()
}

/// Moves the provider's generation on from the one the caller read.
async fn bump(store: &Store, tx: &mut Tx, provider: &ProviderRef) -> Result<i64, WriteError> {
    provider::bump_generation(store, tx, provider, provider.generation)
        .await
        .map_err(|e| match e {
            Error::Api(_) => WriteError::Concurrent,
            other => WriteError::Other(other),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv(total: i64, reserved: i64, ratio: f64) -> Inventory {
        Inventory {
            resource_class: "VCPU".to_owned(),
            total,
            reserved,
            min_unit: 1,
            max_unit: total,
            step_size: 1,
            allocation_ratio: ratio,
            created_at: None,
            updated_at: None,
        }
    }

    #[test]
    fn capacity_truncates_like_python_int() {
        assert_eq!(inv(10, 2, 1.5).capacity(), 12);
        assert_eq!(inv(3, 0, 0.5).capacity(), 1);
        assert_eq!(inv(253, 253, 1.0).capacity(), 0);
        assert_eq!(inv(1, 3, 0.5).capacity(), -1);
        assert_eq!(inv(1, 2, 0.5).capacity(), 0);
    }
}
