//! The reshaper's inventory steps, inside the allocation write's
//! transaction: each provider's inventory is first set to the union of
//! what it has and what is asked (so moved allocations have inventory to
//! land on, and old ones are not orphaned), then the allocations are
//! replaced, then the inventory is set to what is asked (which fails if
//! allocations still use a class being removed).

use crate::db::ids::ProviderId;
use crate::db::{Conn, Store};
use crate::error::{Error, code};
use crate::objects::allocation::{Attempt, PROVIDERS_CHANGED, WriteError};
use crate::objects::inventory::{self, Inventory, Replacement};
use crate::objects::provider;

/// The inventories one provider should have after a reshape.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct InventoryReplacement {
    pub(crate) provider_uuid: String,
    /// The generation the client expects the provider to have.
    pub(crate) generation: i64,
    pub(crate) inventories: Vec<Inventory>,
}

/// A provider being reshaped, with its generation as this transaction
/// moved it.
#[derive(Debug)]
pub(crate) struct Reshaped<'a> {
    replacement: &'a InventoryReplacement,
    id: ProviderId,
    generation: i64,
}

/// Finds every provider and checks the generation the client gave.
pub(crate) async fn lookup<'a>(
    store: &Store,
    tx: &mut Conn<'_>,
    replacements: &'a [InventoryReplacement],
) -> Result<Vec<Reshaped<'a>>, WriteError> {
    let mut out = Vec::with_capacity(replacements.len());
    for r in replacements {
        let uuid = &r.provider_uuid;
        let Some(rp) = provider::find(store, &mut *tx, uuid).await? else {
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
    tx: &mut Conn<'_>,
    reshaped: &mut [Reshaped<'_>],
) -> Result<(), Attempt> {
    for rp in reshaped.iter_mut() {
        // Setting a provider's inventories to what it has is no change.
        if rp.replacement.inventories.is_empty() {
            continue;
        }
        let mut union = inventory::list(store, &mut *tx, rp.id).await?;
        for asked in &rp.replacement.inventories {
            match union
                .iter_mut()
                .find(|r| r.resource_class == asked.resource_class)
            {
                Some(have) => *have = asked.clone(),
                None => union.push(asked.clone()),
            }
        }
        set_inventory(store, tx, rp, &union).await?;
    }
    Ok(())
}

/// Records that the allocation step moved the generations of `bumped`.
pub(crate) fn note_bumped(reshaped: &mut [Reshaped<'_>], bumped: &[ProviderId]) {
    for rp in reshaped.iter_mut() {
        if bumped.contains(&rp.id) {
            rp.generation += 1;
        }
    }
}

/// The final step: each provider gets exactly the inventories asked.
pub(crate) async fn set_final(
    store: &Store,
    tx: &mut Conn<'_>,
    reshaped: &mut [Reshaped<'_>],
) -> Result<(), Attempt> {
    for rp in reshaped.iter_mut() {
        let records = rp.replacement.inventories.clone();
        set_inventory(store, tx, rp, &records).await?;
    }
    Ok(())
}

/// Upstream's `_set_inventory`: replaces the provider's inventories with
/// `records` and moves its generation.
async fn set_inventory(
    store: &Store,
    tx: &mut Conn<'_>,
    rp: &mut Reshaped<'_>,
    records: &[Inventory],
) -> Result<(), Attempt> {
    let uuid = &rp.replacement.provider_uuid;
    let written = match Replacement::plan(store, tx, rp.id, records).await {
        Ok(plan) => plan.apply(store, tx, uuid).await,
        Err(e) => Err(e),
    };
    written.map_err(|e| match e {
        inventory::WriteError::ResourceClassNotFound(class) => {
            Attempt::Failed(WriteError::NoSuchResourceClass(class))
        }
        inventory::WriteError::InUse(_) => {
            Attempt::Failed(WriteError::InventoryInUse(e.message(uuid)))
        }
        // A record added or removed by a concurrent writer since the read.
        inventory::WriteError::Exists(_) | inventory::WriteError::NoInventory(_) => {
            Attempt::Failed(WriteError::Concurrent(PROVIDERS_CHANGED.to_owned()))
        }
        // The database's transient failures (deadlock, busy): the whole
        // write is tried again.
        inventory::WriteError::Concurrent => {
            Attempt::Again("the database reported a conflict (deadlock or busy)".to_owned())
        }
        inventory::WriteError::Other(e) => Attempt::Failed(WriteError::Done(e)),
    })?;
    if !provider::try_bump_generation(store, &mut *tx, rp.id, rp.generation).await? {
        return Err(Attempt::Failed(WriteError::Concurrent(
            PROVIDERS_CHANGED.to_owned(),
        )));
    }
    rp.generation += 1;
    Ok(())
}
