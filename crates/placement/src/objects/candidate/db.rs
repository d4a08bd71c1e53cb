//! The database reads of the candidate search: which providers have room
//! for an amount of a class, which share, which carry traits or sit in
//! aggregates, and the trees (inventories, usages, traits) the answer
//! summarizes.

use std::collections::{BTreeSet, HashMap, HashSet};

use sqlx::Row;

use crate::db::{self, Store, placeholder_list, sql};
use crate::error::Result;
use crate::objects::inventory;

/// The trait of providers that share their inventory with the trees in
/// their aggregates.
pub(super) const SHARES_VIA_AGGREGATE: &str = "MISC_SHARES_VIA_AGGREGATE";

/// Runs `query` (with `?` for each of `ids`, given as `{ids}`) and reads
/// the integer columns `columns` of every row.
async fn ids_query<const N: usize>(
    store: &Store,
    query: &str,
    binds: &[i64],
    columns: [&str; N],
) -> Result<Vec<[i64; N]>> {
    let query = store.dialect().placeholders(query.to_owned());
    let mut q = sqlx::query(&query);
    for id in binds {
        q = q.bind(*id);
    }
    let rows = q.fetch_all(store.reader()).await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        let mut values = [0; N];
        for (value, column) in values.iter_mut().zip(columns) {
            *value = row.try_get::<i64, _>(column)?;
        }
        out.push(values);
    }
    Ok(out)
}

/// Whether any provider has a parent.
pub(super) async fn has_trees(store: &Store) -> Result<bool> {
    let row = sqlx::query(sql!(
        store,
        "SELECT id FROM resource_providers WHERE parent_provider_id IS NOT NULL LIMIT 1"
    ))
    .fetch_optional(store.reader())
    .await?;
    Ok(row.is_some())
}

/// The providers marked as sharing their inventory.
pub(super) async fn sharing_providers(store: &Store) -> Result<HashSet<i64>> {
    let rows = sqlx::query(sql!(
        store,
        "SELECT rpt.resource_provider_id AS id FROM resource_provider_traits rpt \
         JOIN traits t ON t.id = rpt.trait_id WHERE t.name = ?"
    ))
    .bind(SHARES_VIA_AGGREGATE)
    .fetch_all(store.reader())
    .await?;
    rows.iter()
        .map(|r| Ok(r.try_get::<i64, _>("id")?))
        .collect()
}

/// `(provider, root)` of the providers whose inventory of `class_id` can
/// take `amount` more (capacity after usage, min_unit, max_unit,
/// step_size), in the tree of `root` when given.
pub(super) async fn providers_with_resource(
    store: &Store,
    class_id: i64,
    amount: i64,
    root: Option<i64>,
) -> Result<Vec<(i64, i64)>> {
    let d = store.dialect();
    let mut query = format!(
        "SELECT rp.id AS id, rp.root_provider_id AS root_id, inv.total AS total, \
         inv.reserved AS reserved, inv.allocation_ratio AS allocation_ratio, \
         inv.min_unit AS min_unit, inv.max_unit AS max_unit, inv.step_size AS step_size, \
         {} AS used \
         FROM resource_providers rp \
         JOIN inventories inv ON inv.resource_provider_id = rp.id AND inv.resource_class_id = ? \
         LEFT JOIN (SELECT resource_provider_id, SUM(used) AS used FROM allocations \
                    WHERE resource_class_id = ? GROUP BY resource_provider_id) rp_used \
           ON rp_used.resource_provider_id = inv.resource_provider_id",
        d.int("COALESCE(rp_used.used, 0)")
    );
    if root.is_some() {
        query.push_str(" WHERE rp.root_provider_id = ?");
    }
    query.push_str(" ORDER BY rp.id");
    let query = d.placeholders(query);
    let mut q = sqlx::query(&query).bind(class_id).bind(class_id);
    if let Some(root) = root {
        q = q.bind(root);
    }
    let rows = q.fetch_all(store.reader()).await?;
    let mut out = Vec::new();
    for row in &rows {
        let total: i64 = row.try_get("total")?;
        let reserved: i64 = row.try_get("reserved")?;
        let ratio = db::read_float(row, "allocation_ratio")?;
        let min_unit: i64 = row.try_get("min_unit")?;
        let max_unit: i64 = row.try_get("max_unit")?;
        let step_size: i64 = row.try_get("step_size")?;
        let used: i64 = row.try_get("used")?;
        let fits = (used.saturating_add(amount)) as f64 <= (total - reserved) as f64 * ratio
            && min_unit <= amount
            && max_unit >= amount
            && step_size > 0
            && amount % step_size == 0;
        if fits {
            out.push((row.try_get("id")?, row.try_get("root_id")?));
        }
    }
    Ok(out)
}

/// The providers having at least one of the traits `trait_ids`.
pub(super) async fn providers_with_any_trait(
    store: &Store,
    trait_ids: &HashSet<i64>,
) -> Result<HashSet<i64>> {
    if trait_ids.is_empty() {
        return Ok(HashSet::new());
    }
    let ids: Vec<i64> = trait_ids.iter().copied().collect();
    let query = format!(
        "SELECT DISTINCT resource_provider_id AS id FROM resource_provider_traits \
         WHERE trait_id IN ({})",
        placeholder_list(ids.len())
    );
    Ok(ids_query(store, &query, &ids, ["id"])
        .await?
        .into_iter()
        .map(|[id]| id)
        .collect())
}

/// The providers having at least one trait of each of `groups`.
pub(super) async fn providers_with_all_traits(
    store: &Store,
    groups: &[HashSet<i64>],
) -> Result<HashSet<i64>> {
    let groups: Vec<Vec<i64>> = groups
        .iter()
        .map(|g| {
            let mut ids: Vec<i64> = g.iter().copied().collect();
            ids.sort_unstable();
            ids
        })
        .collect();
    Ok(crate::objects::provider::providers_having_all(
        store,
        "resource_provider_traits",
        "trait_id",
        &groups,
    )
    .await?)
}

/// The providers in at least one aggregate of each of `groups`.
pub(super) async fn providers_in_aggregates(
    store: &Store,
    groups: &[BTreeSet<String>],
) -> Result<HashSet<i64>> {
    Ok(crate::objects::provider::providers_in_aggregates(store, groups).await?)
}

/// `(sharing provider, anchor root)` for each of `sharing`: the roots of
/// every tree holding a provider in an aggregate with it (its own tree
/// included, when it is in any aggregate).
pub(super) async fn anchors_for_sharing(store: &Store, sharing: &[i64]) -> Result<Vec<(i64, i64)>> {
    if sharing.is_empty() {
        return Ok(Vec::new());
    }
    let query = format!(
        "SELECT DISTINCT sps.id AS rp_id, rps.id AS anchor_id \
         FROM resource_providers sps \
         JOIN resource_provider_aggregates shr_aggs ON sps.id = shr_aggs.resource_provider_id \
         JOIN resource_provider_aggregates shr_with_sps_aggs \
           ON shr_aggs.aggregate_id = shr_with_sps_aggs.aggregate_id \
         JOIN resource_providers shr_with_sps \
           ON shr_with_sps_aggs.resource_provider_id = shr_with_sps.id \
         JOIN resource_providers rps ON shr_with_sps.root_provider_id = rps.id \
         WHERE sps.id IN ({}) ORDER BY sps.id, rps.id",
        placeholder_list(sharing.len())
    );
    Ok(ids_query(store, &query, sharing, ["rp_id", "anchor_id"])
        .await?
        .into_iter()
        .map(|[rp, anchor]| (rp, anchor))
        .collect())
}

/// The roots (providers without a parent) having every trait of
/// `required` and none of `forbidden`.
pub(super) async fn roots_with_traits(
    store: &Store,
    required: &HashSet<i64>,
    forbidden: &HashSet<i64>,
) -> Result<HashSet<i64>> {
    let roots: HashSet<i64> = ids_query(
        store,
        "SELECT id FROM resource_providers WHERE parent_provider_id IS NULL",
        &[],
        ["id"],
    )
    .await?
    .into_iter()
    .map(|[id]| id)
    .collect();
    let mut matching = roots;
    if !required.is_empty() {
        let groups: Vec<HashSet<i64>> = required.iter().map(|t| HashSet::from([*t])).collect();
        let having = providers_with_all_traits(store, &groups).await?;
        matching.retain(|id| having.contains(id));
    }
    if !forbidden.is_empty() {
        let having = providers_with_any_trait(store, forbidden).await?;
        matching.retain(|id| !having.contains(id));
    }
    Ok(matching)
}

/// `(provider, root)` of each of `ids`.
pub(super) async fn roots_of(store: &Store, ids: &[i64]) -> Result<Vec<(i64, i64)>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let query = format!(
        "SELECT id, root_provider_id AS root_id FROM resource_providers WHERE id IN ({}) ORDER BY id",
        placeholder_list(ids.len())
    );
    Ok(ids_query(store, &query, ids, ["id", "root_id"])
        .await?
        .into_iter()
        .map(|[id, root]| (id, root))
        .collect())
}

/// The trait ids of each of `ids`.
pub(super) async fn trait_ids_of(store: &Store, ids: &[i64]) -> Result<HashMap<i64, HashSet<i64>>> {
    let mut out: HashMap<i64, HashSet<i64>> = HashMap::new();
    if ids.is_empty() {
        return Ok(out);
    }
    let query = format!(
        "SELECT resource_provider_id AS id, trait_id FROM resource_provider_traits \
         WHERE resource_provider_id IN ({})",
        placeholder_list(ids.len())
    );
    for [id, t] in ids_query(store, &query, ids, ["id", "trait_id"]).await? {
        out.entry(id).or_default().insert(t);
    }
    Ok(out)
}

/// A provider of the trees read for the summaries.
#[derive(Clone, Debug)]
pub(super) struct TreeProvider {
    pub(super) id: i64,
    pub(super) uuid: String,
    pub(super) parent_uuid: Option<String>,
    pub(super) root_id: i64,
    pub(super) root_uuid: String,
}

/// One inventory of the trees read, with its usage.
#[derive(Clone, Debug)]
pub(super) struct TreeInventory {
    pub(super) provider: i64,
    pub(super) class_id: i64,
    pub(super) class: String,
    pub(super) capacity: i64,
    pub(super) used: i64,
    pub(super) max_unit: i64,
}

/// The trees rooted at `roots`: providers, inventories with usage, and
/// trait names by provider.
pub(super) struct Trees {
    pub(super) providers: Vec<TreeProvider>,
    pub(super) inventories: Vec<TreeInventory>,
    pub(super) traits: HashMap<i64, Vec<String>>,
}

/// Reads the trees rooted at `roots`.
pub(super) async fn trees(store: &Store, roots: &[i64]) -> Result<Trees> {
    let marks = placeholder_list(roots.len());
    let d = store.dialect();
    let bind_all = |query: String| {
        let query = d.placeholders(query);
        (query, roots.to_vec())
    };
    let run = |(query, binds): (String, Vec<i64>)| async move {
        let mut q = sqlx::query(&query);
        for id in binds {
            q = q.bind(id);
        }
        q.fetch_all(store.reader()).await
    };
    let provider_rows = run(bind_all(format!(
        "SELECT rp.id AS id, rp.uuid AS uuid, rp.root_provider_id AS root_id, \
         root.uuid AS root_uuid, parent.uuid AS parent_uuid \
         FROM resource_providers rp \
         JOIN resource_providers root ON rp.root_provider_id = root.id \
         LEFT JOIN resource_providers parent ON rp.parent_provider_id = parent.id \
         WHERE rp.root_provider_id IN ({marks}) ORDER BY rp.id"
    )))
    .await?;
    let mut providers = Vec::with_capacity(provider_rows.len());
    for row in &provider_rows {
        providers.push(TreeProvider {
            id: row.try_get("id")?,
            uuid: row.try_get("uuid")?,
            parent_uuid: row.try_get("parent_uuid")?,
            root_id: row.try_get("root_id")?,
            root_uuid: row.try_get("root_uuid")?,
        });
    }
    let usage_rows = run(bind_all(format!(
        "SELECT a.resource_provider_id AS id, a.resource_class_id AS class_id, {} AS used \
         FROM allocations a JOIN resource_providers rp ON a.resource_provider_id = rp.id \
         WHERE rp.root_provider_id IN ({marks}) \
         GROUP BY a.resource_provider_id, a.resource_class_id",
        d.int("SUM(a.used)")
    )))
    .await?;
    let mut usage: HashMap<(i64, i64), i64> = HashMap::new();
    for row in &usage_rows {
        usage.insert(
            (row.try_get("id")?, row.try_get("class_id")?),
            row.try_get::<Option<i64>, _>("used")?.unwrap_or(0),
        );
    }
    let inventory_rows = run(bind_all(format!(
        "SELECT inv.resource_provider_id AS id, inv.resource_class_id AS class_id, \
         rc.name AS class, inv.total AS total, inv.reserved AS reserved, \
         inv.allocation_ratio AS allocation_ratio, inv.max_unit AS max_unit \
         FROM inventories inv \
         JOIN resource_providers rp ON inv.resource_provider_id = rp.id \
         JOIN resource_classes rc ON rc.id = inv.resource_class_id \
         WHERE rp.root_provider_id IN ({marks}) ORDER BY inv.resource_provider_id, inv.resource_class_id"
    )))
    .await?;
    let mut inventories = Vec::with_capacity(inventory_rows.len());
    for row in &inventory_rows {
        let provider: i64 = row.try_get("id")?;
        let class_id: i64 = row.try_get("class_id")?;
        let total: i64 = row.try_get("total")?;
        let reserved: i64 = row.try_get("reserved")?;
        let ratio = db::read_float(row, "allocation_ratio")?;
        inventories.push(TreeInventory {
            provider,
            class_id,
            class: row.try_get("class")?,
            capacity: inventory::capacity(total, reserved, ratio),
            used: usage.get(&(provider, class_id)).copied().unwrap_or(0),
            max_unit: row.try_get("max_unit")?,
        });
    }
    let trait_rows = run(bind_all(format!(
        "SELECT rpt.resource_provider_id AS id, t.name AS name \
         FROM resource_provider_traits rpt \
         JOIN resource_providers rp ON rpt.resource_provider_id = rp.id \
         JOIN traits t ON t.id = rpt.trait_id \
         WHERE rp.root_provider_id IN ({marks}) ORDER BY rpt.resource_provider_id, t.id"
    )))
    .await?;
    let mut traits: HashMap<i64, Vec<String>> = HashMap::new();
    for row in &trait_rows {
        traits
            .entry(row.try_get("id")?)
            .or_default()
            .push(row.try_get("name")?);
    }
    Ok(Trees {
        providers,
        inventories,
        traits,
    })
}
