//! The reshaper's inventory steps, inside the allocation write's
//! transaction: each provider's inventory is first set to the union of
//! what it has and what is asked (so moved allocations have inventory to
//! land on, and old ones are not orphaned), then the allocations are
//! replaced, then the inventory is set to what is asked (which fails if
//! allocations still use a class being removed).

use std::collections::{BTreeSet, HashMap};

use sqlx::Row;

use crate::db::{self, Store, sql};
use crate::error::{Error, code};
use crate::objects::allocation::{PROVIDERS_CHANGED, WriteError, class_ids_of};
use crate::objects::provider;

/// One inventory record, with upstream's defaults filled in.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct InventoryRecord {
    pub(crate) class: String,
    pub(crate) total: i64,
    pub(crate) reserved: i64,
    pub(crate) min_unit: i64,
    pub(crate) max_unit: i64,
    pub(crate) step_size: i64,
    pub(crate) allocation_ratio: f64,
}

impl InventoryRecord {
    /// Upstream's `capacity`: what allocations may use.
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    fn capacity(&self) -> i64 {
        ((self.total - self.reserved) as f64 * self.allocation_ratio) as i64
    }
}

/// The inventories one provider should have after a reshape.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct InventoryReplacement {
    pub(crate) provider_uuid: String,
    /// The generation the client expects the provider to have.
    pub(crate) generation: i64,
    pub(crate) inventories: Vec<InventoryRecord>,
}

/// A provider being reshaped, with its generation as this transaction
/// moved it.
#[derive(Debug)]
pub(crate) struct Reshaped<'a> {
    replacement: &'a InventoryReplacement,
    id: i64,
    generation: i64,
}

/// Finds every provider and checks the generation the client gave.
pub(crate) async fn lookup<'a>(
    store: &Store,
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    replacements: &'a [InventoryReplacement],
) -> Result<Vec<Reshaped<'a>>, WriteError> {
    let mut out = Vec::with_capacity(replacements.len());
    for r in replacements {
        let uuid = &r.provider_uuid;
        let Some(rp) = provider::find(store, &mut **tx, uuid).await? else {
            return Err(WriteError::Done(
                Error::bad_request(format!(
                    "Resource provider {uuid} in inventories not found: No resource provider with uuid {uuid} found"
                ))
                .with_code(code::RESOURCE_PROVIDER_NOT_FOUND),
            ));
        };
        if rp.generation != r.generation {
            return Err(WriteError::Done(
                Error::conflict(format!(
                    "resource provider generation conflict for provider {uuid}: actual: {}, given: {}",
                    rp.generation, r.generation
                ))
                .with_code(code::CONCURRENT_UPDATE),
            ));
        }
        out.push(Reshaped {
            replacement: r,
            id: rp.id,
            generation: rp.generation,
        });
    }
    Ok(out)
}

/// The interim step: each provider with inventories asked gets the union
/// of its inventories and those asked (the asked ones win).
pub(crate) async fn set_interim(
    store: &Store,
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    reshaped: &mut [Reshaped<'_>],
) -> Result<(), WriteError> {
    for rp in reshaped.iter_mut() {
        // Setting a provider's inventories to what it has is no change.
        if rp.replacement.inventories.is_empty() {
            continue;
        }
        let mut union = current(store, tx, rp.id).await?;
        for asked in &rp.replacement.inventories {
            match union.iter_mut().find(|r| r.class == asked.class) {
                Some(have) => *have = asked.clone(),
                None => union.push(asked.clone()),
            }
        }
        set_inventory(store, tx, rp, &union).await?;
    }
    Ok(())
}

/// Records that the allocation step moved the generations of `bumped`.
pub(crate) fn note_bumped(reshaped: &mut [Reshaped<'_>], bumped: &[i64]) {
    for rp in reshaped.iter_mut() {
        if bumped.contains(&rp.id) {
            rp.generation += 1;
        }
    }
}

/// The final step: each provider gets exactly the inventories asked.
pub(crate) async fn set_final(
    store: &Store,
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    reshaped: &mut [Reshaped<'_>],
) -> Result<(), WriteError> {
    for rp in reshaped.iter_mut() {
        let records = rp.replacement.inventories.clone();
        set_inventory(store, tx, rp, &records).await?;
    }
    Ok(())
}

/// The provider's inventories, in `tx`.
async fn current(
    store: &Store,
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    provider_id: i64,
) -> Result<Vec<InventoryRecord>, WriteError> {
    let rows = sqlx::query(sql!(
        store,
        "SELECT rc.name AS name, i.total AS total, i.reserved AS reserved, i.min_unit AS min_unit, \
         i.max_unit AS max_unit, i.step_size AS step_size, i.allocation_ratio AS allocation_ratio \
         FROM inventories i JOIN resource_classes rc ON i.resource_class_id = rc.id \
         WHERE i.resource_provider_id = ? ORDER BY i.resource_class_id"
    ))
    .bind(provider_id)
    .fetch_all(&mut **tx)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(InventoryRecord {
                class: r.try_get("name")?,
                total: r.try_get("total")?,
                reserved: r.try_get("reserved")?,
                min_unit: r.try_get("min_unit")?,
                max_unit: r.try_get("max_unit")?,
                step_size: r.try_get("step_size")?,
                allocation_ratio: db::read_float(r, "allocation_ratio")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(WriteError::from)
}

/// Upstream's `_set_inventory`: replaces the provider's inventories with
/// `records` and moves its generation.
async fn set_inventory(
    store: &Store,
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    rp: &mut Reshaped<'_>,
    records: &[InventoryRecord],
) -> Result<(), WriteError> {
    let d = store.dialect();
    let uuid = &rp.replacement.provider_uuid;
    let names: BTreeSet<&str> = records.iter().map(|r| r.class.as_str()).collect();
    let ids = class_ids_of(store, tx, &names).await?;
    if let Some(missing) = records.iter().find(|r| !ids.contains_key(&r.class)) {
        return Err(WriteError::NoSuchResourceClass(missing.class.clone()));
    }
    let rows = sqlx::query(sql!(
        store,
        "SELECT resource_class_id FROM inventories WHERE resource_provider_id = ?"
    ))
    .bind(rp.id)
    .fetch_all(&mut **tx)
    .await?;
    let existing: BTreeSet<i64> = rows
        .iter()
        .map(|r| r.try_get("resource_class_id"))
        .collect::<Result<_, _>>()?;
    let wanted: HashMap<i64, &InventoryRecord> =
        records.iter().map(|r| (ids[&r.class], r)).collect();
    let to_delete: Vec<i64> = existing
        .iter()
        .filter(|id| !wanted.contains_key(id))
        .copied()
        .collect();

    if !to_delete.is_empty() {
        let list = db::placeholder_list(to_delete.len());
        let in_use = d.placeholders(format!(
            "SELECT DISTINCT rc.id AS id, rc.name AS name FROM allocations a \
             JOIN resource_classes rc ON a.resource_class_id = rc.id \
             WHERE a.resource_provider_id = ? AND a.resource_class_id IN ({list}) ORDER BY rc.id"
        ));
        let mut q = sqlx::query(&in_use).bind(rp.id);
        for id in &to_delete {
            q = q.bind(*id);
        }
        let used = q.fetch_all(&mut **tx).await?;
        if !used.is_empty() {
            let classes = used
                .iter()
                .map(|r| r.try_get::<String, _>("name"))
                .collect::<Result<Vec<_>, _>>()?;
            return Err(WriteError::InventoryInUse(format!(
                "Inventory for '{}' on resource provider '{uuid}' in use.",
                classes.join(", ")
            )));
        }
        let delete = d.placeholders(format!(
            "DELETE FROM inventories WHERE resource_provider_id = ? AND resource_class_id IN ({list})"
        ));
        let mut q = sqlx::query(&delete).bind(rp.id);
        for id in &to_delete {
            q = q.bind(*id);
        }
        q.execute(&mut **tx).await?;
    }

    let insert = d.placeholders(format!(
        "INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, \
         max_unit, step_size, allocation_ratio, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, {})",
        d.timestamp_param()
    ));
    let update = d.placeholders(format!(
        "UPDATE inventories SET total = ?, reserved = ?, min_unit = ?, max_unit = ?, step_size = ?, \
         allocation_ratio = ?, updated_at = {} WHERE resource_provider_id = ? AND resource_class_id = ?",
        d.timestamp_param()
    ));
    let usage_query = d.placeholders(format!(
        "SELECT {} AS used FROM allocations WHERE resource_provider_id = ? AND resource_class_id = ?",
        d.int("SUM(used)")
    ));
    let now = db::now_text();
    for r in records {
        let class_id = ids[&r.class];
        if existing.contains(&class_id) {
            let used: Option<i64> = sqlx::query(&usage_query)
                .bind(rp.id)
                .bind(class_id)
                .fetch_one(&mut **tx)
                .await?
                .try_get("used")?;
            if used.is_some_and(|u| u > r.capacity()) {
                tracing::warn!(provider = %uuid, resource_class = %r.class, "provider is now over capacity");
            }
            let done = sqlx::query(&update)
                .bind(r.total)
                .bind(r.reserved)
                .bind(r.min_unit)
                .bind(r.max_unit)
                .bind(r.step_size)
                .bind(r.allocation_ratio)
                .bind(&now)
                .bind(rp.id)
                .bind(class_id)
                .execute(&mut **tx)
                .await?;
            if done.rows_affected() == 0 {
                // Deleted by a concurrent writer since the read above.
                return Err(WriteError::Concurrent(PROVIDERS_CHANGED.to_owned()));
            }
        } else {
            let inserted = sqlx::query(&insert)
                .bind(rp.id)
                .bind(class_id)
                .bind(r.total)
                .bind(r.reserved)
                .bind(r.min_unit)
                .bind(r.max_unit)
                .bind(r.step_size)
                .bind(r.allocation_ratio)
                .bind(&now)
                .execute(&mut **tx)
                .await;
            match inserted {
                Ok(_) => {}
                // Added by a concurrent writer since the read above.
                Err(e) if db::is_unique_violation(&e) => {
                    return Err(WriteError::Concurrent(PROVIDERS_CHANGED.to_owned()));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    if !provider::try_bump_generation(store, tx, rp.id, rp.generation).await? {
        return Err(WriteError::Concurrent(PROVIDERS_CHANGED.to_owned()));
    }
    rp.generation += 1;
    Ok(())
}
