//! Inventories of resource providers, and the resource class names they
//! are kept by. Every write changes the provider's generation in the same
//! transaction (from the one the caller read), so concurrent writers of
//! one provider's inventory or allocations get a conflict.

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;
use std::time::SystemTime;

use std::sync::Arc;

use crate::db::ids::{ProviderId, ResourceClassId};
use crate::db::statement::Statement;
use crate::db::{self, Bind, Columns, Conn, Store, sql};
use crate::error::{Error, Result};
use crate::objects::provider::{self, ProviderRef};

/// The id of the resource class `name`, or `None`.
pub(crate) async fn resource_class_id<'c>(
    store: &Store,
    conn: impl Into<Conn<'c>>,
    name: &str,
) -> Result<Option<ResourceClassId>> {
    Ok(conn
        .into()
        .row(
            sql!(store, "SELECT id FROM resource_classes WHERE name = ?"),
            &[Bind::from(name)],
            |row| ResourceClassId::read(row, 0),
        )
        .await?)
}

/// What an inventory of `total` with `reserved` and `allocation_ratio`
/// can hand out: `int((total - reserved) * allocation_ratio)`, truncated
/// toward zero as upstream's `int()`.
pub(crate) fn capacity(total: i64, reserved: i64, allocation_ratio: f64) -> i64 {
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    let capacity = ((total - reserved) as f64 * allocation_ratio).trunc() as i64;
    capacity
}

/// SQL for the amount allocated of the inventory aliased `inv` (NULL when
/// nothing is), read for each inventory from the index on (provider,
/// class, used). Summing every allocation of a class first and joining
/// the sums sorted them all, slower with many allocations
/// (docs/decisions.md).
pub(crate) const USED: &str = "(SELECT SUM(a.used) FROM allocations a \
     WHERE a.resource_provider_id = inv.resource_provider_id \
     AND a.resource_class_id = inv.resource_class_id)";

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

    /// The record's columns and their values, in the order the
    /// inventory statements write them.
    fn record_columns(&self) -> [RecordColumn; 6] {
        let column = |name, value| RecordColumn { name, value };
        [
            column("total", Bind::Int(self.total)),
            column("reserved", Bind::Int(self.reserved)),
            column("min_unit", Bind::Int(self.min_unit)),
            column("max_unit", Bind::Int(self.max_unit)),
            column("step_size", Bind::Int(self.step_size)),
            column("allocation_ratio", Bind::Float(self.allocation_ratio)),
        ]
    }

    /// When it last changed (`updated_at`, else `created_at`).
    pub(crate) fn last_modified(&self) -> Option<SystemTime> {
        self.updated_at.or(self.created_at)
    }
}

/// A column of an inventory record and its value, as written.
struct RecordColumn {
    name: &'static str,
    value: Bind,
}

/// The inventories of the provider `provider_id`, by resource class id.
pub(crate) async fn list<'c>(
    store: &Store,
    conn: impl Into<Conn<'c>>,
    provider_id: ProviderId,
) -> Result<Vec<Inventory>> {
    let d = store.dialect();
    let mut q = Statement::new(d);
    q.push(&format!(
        "SELECT rc.name, inv.total, inv.reserved, inv.min_unit, inv.max_unit, inv.step_size, \
         inv.allocation_ratio, {}, {} \
         FROM inventories inv JOIN resource_classes rc ON rc.id = inv.resource_class_id \
         WHERE inv.resource_provider_id = ",
        d.timestamp_text("inv.created_at"),
        d.timestamp_text("inv.updated_at"),
    ))
    .bind(provider_id)
    .push(" ORDER BY inv.resource_class_id");
    Ok(q.rows_on(&mut conn.into(), |row| {
        Ok(Inventory {
            resource_class: row.required_text(0)?.to_owned(),
            total: row.required_int(1)?,
            reserved: row.required_int(2)?,
            min_unit: row.required_int(3)?,
            max_unit: row.required_int(4)?,
            step_size: row.required_int(5)?,
            allocation_ratio: row.required_float(6)?,
            created_at: row.timestamp(7)?,
            updated_at: row.timestamp(8)?,
        })
    })
    .await?)
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

impl From<Error> for WriteError {
    fn from(e: Error) -> Self {
        if e.is_transient() {
            WriteError::Concurrent
        } else {
            WriteError::Other(e)
        }
    }
}

impl From<crate::db::Error> for WriteError {
    fn from(e: crate::db::Error) -> Self {
        Error::from(e).into()
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

/// Resource class ids of `classes`, in order; the first unknown one fails.
async fn class_ids(
    store: &Store,
    tx: &mut Conn<'_>,
    classes: &[&str],
) -> Result<Vec<ResourceClassId>, WriteError> {
    let mut ids = Vec::with_capacity(classes.len());
    for class in classes {
        ids.push(
            resource_class_id(store, &mut *tx, class)
                .await?
                .ok_or_else(|| WriteError::ResourceClassNotFound((*class).to_owned()))?,
        );
    }
    Ok(ids)
}

/// The resource class ids the provider has inventory of.
async fn existing_classes(
    store: &Store,
    tx: &mut Conn<'_>,
    provider_id: ProviderId,
) -> Result<Vec<ResourceClassId>> {
    Ok(tx
        .rows(
            sql!(
                store,
                "SELECT resource_class_id FROM inventories WHERE resource_provider_id = ?"
            ),
            &[Bind::from(provider_id)],
            |row| ResourceClassId::read(row, 0),
        )
        .await?)
}

/// Used amounts of the provider by resource class id.
async fn usage(
    store: &Store,
    tx: &mut Conn<'_>,
    provider_id: ProviderId,
) -> Result<HashMap<ResourceClassId, i64>> {
    let mut q = Statement::new(store.dialect());
    q.push(&format!(
        "SELECT resource_class_id, {} FROM allocations WHERE resource_provider_id = ",
        store.dialect().int("SUM(used)")
    ))
    .bind(provider_id)
    .push(" GROUP BY resource_class_id");
    Ok(q.fold_on(
        tx,
        HashMap::new(),
        |used: &mut HashMap<ResourceClassId, i64>, row| {
            used.insert(ResourceClassId::read(row, 0)?, row.int(1)?.unwrap_or(0));
            Ok(())
        },
    )
    .await?)
}

/// `InUse` when any of `to_delete` (class id to name) has allocations.
fn check_unused(
    to_delete: &BTreeMap<ResourceClassId, String>,
    used: &HashMap<ResourceClassId, i64>,
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
    tx: &mut Conn<'_>,
    provider_id: ProviderId,
    to_delete: &BTreeMap<ResourceClassId, String>,
) -> Result<(), WriteError> {
    for id in to_delete.keys() {
        tx.execute(
            sql!(
                store,
                "DELETE FROM inventories WHERE resource_provider_id = ? AND resource_class_id = ?"
            ),
            &[Bind::from(provider_id), Bind::from(*id)],
        )
        .await?;
    }
    Ok(())
}

async fn insert(
    store: &Store,
    tx: &mut Conn<'_>,
    provider_id: ProviderId,
    class_id: ResourceClassId,
    inv: &Inventory,
) -> Result<(), WriteError> {
    let record = inv.record_columns();
    let mut q = Statement::new(store.dialect());
    q.push("INSERT INTO inventories (resource_provider_id, resource_class_id, ");
    for column in &record {
        q.push(column.name).push(", ");
    }
    q.push("created_at) VALUES (")
        .bind(provider_id)
        .push(", ")
        .bind(class_id);
    for column in record {
        q.push(", ").bind(column.value);
    }
    q.push(", ").bind_timestamp(db::now_text()).push(")");
    match q.execute_on(tx).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_unique_violation() => Err(WriteError::Exists(inv.resource_class.clone())),
        Err(e) => Err(e.into()),
    }
}

/// Updates the record; warns (as upstream) when its allocations now
/// exceed the new capacity.
async fn update_record(
    store: &Store,
    tx: &mut Conn<'_>,
    provider: ProviderKey<'_>,
    class_id: ResourceClassId,
    inv: &Inventory,
    used: &HashMap<ResourceClassId, i64>,
) -> Result<(), WriteError> {
    if used.get(&class_id).is_some_and(|u| *u > inv.capacity()) {
        tracing::warn!(
            provider = %provider.uuid,
            resource_class = %inv.resource_class,
            "resource provider is now over-capacity"
        );
    }
    let mut q = Statement::new(store.dialect());
    q.push("UPDATE inventories SET ");
    for column in inv.record_columns() {
        q.push(column.name)
            .push(" = ")
            .bind(column.value)
            .push(", ");
    }
    q.push("updated_at = ")
        .bind_timestamp(db::now_text())
        .push(" WHERE resource_provider_id = ")
        .bind(provider.id)
        .push(" AND resource_class_id = ")
        .bind(class_id);
    if q.execute_on(tx).await?.rows_affected == 0 {
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
    let (provider, inv) = (provider.clone(), inv.clone());
    store
        .transaction(move |store, tx| {
            Box::pin(async move {
                let class_id = class_ids(store, tx, &[inv.resource_class.as_str()]).await?[0];
                if existing_classes(store, tx, provider.id)
                    .await?
                    .contains(&class_id)
                {
                    return Err(WriteError::Exists(inv.resource_class.clone()));
                }
                let generation = bump(store, tx, &provider).await?;
                insert(store, tx, provider.id, class_id, &inv).await?;
                Ok(generation)
            })
        })
        .await
}

/// Replaces one inventory the provider has; returns the new generation.
pub(crate) async fn update(
    store: &Store,
    provider: &ProviderRef,
    inv: &Inventory,
) -> Result<i64, WriteError> {
    let (provider, inv) = (provider.clone(), inv.clone());
    store
        .transaction(move |store, tx| {
            Box::pin(async move {
                let class_id = class_ids(store, tx, &[inv.resource_class.as_str()]).await?[0];
                if !existing_classes(store, tx, provider.id)
                    .await?
                    .contains(&class_id)
                {
                    return Err(WriteError::NoInventory(inv.resource_class.clone()));
                }
                let used = usage(store, tx, provider.id).await?;
                let generation = bump(store, tx, &provider).await?;
                let key = ProviderKey {
                    id: provider.id,
                    uuid: &provider.uuid,
                };
                update_record(store, tx, key, class_id, &inv, &used).await?;
                Ok(generation)
            })
        })
        .await
}

/// Deletes the provider's inventory of `class`; returns the new
/// generation.
pub(crate) async fn delete(
    store: &Store,
    provider: &ProviderRef,
    class: &str,
) -> Result<i64, WriteError> {
    let (provider, class) = (provider.clone(), class.to_owned());
    store
        .transaction(move |store, tx| {
            Box::pin(async move {
                let class_id = class_ids(store, tx, &[class.as_str()]).await?[0];
                if !existing_classes(store, tx, provider.id)
                    .await?
                    .contains(&class_id)
                {
                    return Err(WriteError::NoInventory(class.clone()));
                }
                let used = usage(store, tx, provider.id).await?;
                let to_delete = BTreeMap::from([(class_id, class.clone())]);
                check_unused(&to_delete, &used)?;
                // The provider's row is locked before its inventory rows, as by
                // every writer.
                let generation = bump(store, tx, &provider).await?;
                delete_classes(store, tx, provider.id, &to_delete).await?;
                Ok(generation)
            })
        })
        .await
}

/// Makes `inventories` the provider's whole inventory: adds, updates and
/// deletes as needed; returns the new generation.
pub(crate) async fn replace(
    store: &Store,
    provider: &ProviderRef,
    inventories: &[Inventory],
) -> Result<i64, WriteError> {
    let (provider, inventories) = (provider.clone(), Arc::new(inventories.to_vec()));
    store
        .transaction(move |store, tx| {
            Box::pin(async move {
                let plan = Replacement::plan(store, tx, provider.id, &inventories).await?;
                // The provider's row is locked before its inventory rows, as by
                // every writer.
                let generation = bump(store, tx, &provider).await?;
                plan.apply(store, tx, &provider.uuid).await?;
                Ok(generation)
            })
        })
        .await
}

/// A provider's whole inventory about to be replaced, read and checked in
/// the writer's transaction; moving the provider's generation is the
/// writer's (before or after [`Replacement::apply`]).
pub(crate) struct Replacement<'a> {
    provider_id: ProviderId,
    inventories: &'a [Inventory],
    /// The class id of each of `inventories`, in order.
    wanted: Vec<ResourceClassId>,
    existing: Vec<ResourceClassId>,
    used: HashMap<ResourceClassId, i64>,
    to_delete: BTreeMap<ResourceClassId, String>,
}

/// A provider as [`update_record`] names it: its id, and its uuid for
/// the log.
#[derive(Clone, Copy, Debug)]
struct ProviderKey<'a> {
    id: ProviderId,
    uuid: &'a str,
}

impl<'a> Replacement<'a> {
    /// Fails when a class does not exist or a class to remove is in use.
    pub(crate) async fn plan(
        store: &Store,
        tx: &mut Conn<'_>,
        provider_id: ProviderId,
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
        tx: &mut Conn<'_>,
        uuid: &str,
    ) -> Result<(), WriteError> {
        delete_classes(store, tx, self.provider_id, &self.to_delete).await?;
        for (inv, class_id) in self.inventories.iter().zip(&self.wanted) {
            if self.existing.contains(class_id) {
                let key = ProviderKey {
                    id: self.provider_id,
                    uuid,
                };
                update_record(store, tx, key, *class_id, inv, &self.used).await?;
            } else {
                insert(store, tx, self.provider_id, *class_id, inv).await?;
            }
        }
        Ok(())
    }
}

/// Every resource class's id and name.
pub(crate) const CLASS_NAMES: &str = "SELECT id, name FROM resource_classes";

/// A fold step adding a row of [`CLASS_NAMES`] to names by id.
pub(crate) fn insert_class_name<S: BuildHasher>(
    names: &mut HashMap<ResourceClassId, String, S>,
    row: &dyn Columns,
) -> db::Result<()> {
    names.insert(
        ResourceClassId::read(row, 0)?,
        row.required_text(1)?.to_owned(),
    );
    Ok(())
}

/// Every resource class name by id.
async fn class_names(store: &Store, tx: &mut Conn<'_>) -> Result<HashMap<ResourceClassId, String>> {
    Ok(tx
        .fold(
            sql!(store, CLASS_NAMES),
            &[],
            HashMap::new(),
            insert_class_name,
        )
        .await?)
}

/// Moves the provider's generation on from the one the caller read.
async fn bump(store: &Store, tx: &mut Conn<'_>, provider: &ProviderRef) -> Result<i64, WriteError> {
    provider::bump_generation(store, &mut *tx, provider, provider.generation)
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
