//! The database reads of the candidate search: which providers have room
//! for an amount of a class, which share, which carry traits or sit in
//! aggregates, and the trees (inventories, usages, traits) the answer
//! summarizes.

use std::collections::BTreeSet;
use std::sync::Arc;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use smallvec::SmallVec;

use crate::db::ids::{ProviderId, ResourceClassId, TraitId};
use crate::db::statement::Statement;
use crate::db::{Bind, Columns, Store};
use crate::error::{Error, Result};
use crate::objects::inventory;

/// The trait of providers that share their inventory with the trees in
/// their aggregates.
pub(super) const SHARES_VIA_AGGREGATE: &str = "MISC_SHARES_VIA_AGGREGATE";

/// The most ids one statement binds. The databases cap the values of a
/// statement (SQLite at 32,766, PostgreSQL and MySQL at 65,535); a search
/// over a larger cloud reads its providers in several statements.
const MAX_IDS_PER_READ: usize = 10_000;

/// Folds the rows of the statements `query` writes over `ids`, at most
/// [`MAX_IDS_PER_READ`] ids to a statement: `query` writes a statement
/// for a slice of them. The rows come in no particular order.
async fn fold_by_ids<T, A, F>(
    store: &Store,
    ids: &[T],
    query: impl Fn(&mut Statement, &[T]),
    init: A,
    step: F,
) -> Result<A>
where
    T: Copy + Into<Bind>,
    A: Send + 'static,
    F: FnMut(&mut A, &dyn Columns) -> crate::db::Result<()> + Clone + Send + 'static,
{
    let mut folded = init;
    for slice in ids.chunks(MAX_IDS_PER_READ) {
        let mut q = Statement::new(store.dialect());
        query(&mut q, slice);
        folded = q.fold(store, folded, step.clone()).await?;
    }
    Ok(folded)
}

/// A provider and a root: its own, or for a sharing provider, the root
/// of a tree it shares with (an anchor).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct ProviderRoot {
    pub(super) provider: ProviderId,
    pub(super) root: ProviderId,
}

/// The [`ProviderRoot`]s in the first two columns of the rows `query`
/// writes over `ids` (as [`fold_by_ids`]), sorted and without repeats.
async fn provider_roots_by_ids(
    store: &Store,
    ids: &[ProviderId],
    query: impl Fn(&mut Statement, &[ProviderId]),
) -> Result<Vec<ProviderRoot>> {
    let mut pairs = fold_by_ids(store, ids, query, Vec::new(), |out, row| {
        out.push(ProviderRoot {
            provider: ProviderId::read(row, 0)?,
            root: ProviderId::read(row, 1)?,
        });
        Ok(())
    })
    .await?;
    pairs.sort_unstable();
    pairs.dedup();
    Ok(pairs)
}

/// The providers in the first column of the rows of `q`.
async fn provider_set(store: &Store, q: Statement) -> Result<HashSet<ProviderId>> {
    Ok(q.fold(store, HashSet::new(), ProviderId::insert_first)
        .await?)
}

/// Whether any provider has a parent.
pub(super) async fn has_trees(store: &Store) -> Result<bool> {
    let query = "SELECT id FROM resource_providers WHERE parent_provider_id IS NOT NULL LIMIT 1";
    Ok(store
        .fold_rows(query.to_owned(), Vec::new(), false, |found, _| {
            *found = true;
            Ok(())
        })
        .await?)
}

/// How many trees the cloud has (in a flat cloud, how many providers),
/// counted up to `cap`: whether the cloud has more than a few times a
/// read's trees is known without counting a large cloud's every root.
pub(super) async fn root_count_up_to(store: &Store, cap: usize) -> Result<usize> {
    let mut q = Statement::new(store.dialect());
    q.push(
        "SELECT COUNT(*) FROM (SELECT id FROM resource_providers \
         WHERE parent_provider_id IS NULL LIMIT ",
    )
    .bind(i64::try_from(cap).unwrap_or(i64::MAX))
    .push(") capped");
    Ok(q.fold(store, 0, |count, row| {
        *count = usize::try_from(row.required_int(0)?).unwrap_or(0);
        Ok(())
    })
    .await?)
}

/// The providers marked as sharing their inventory.
pub(super) async fn sharing_providers(store: &Store) -> Result<HashSet<ProviderId>> {
    let mut q = Statement::new(store.dialect());
    q.push(
        "SELECT rpt.resource_provider_id FROM resource_provider_traits rpt \
         JOIN traits t ON t.id = rpt.trait_id WHERE t.name = ",
    )
    .bind(SHARES_VIA_AGGREGATE);
    provider_set(store, q).await
}

/// Whether any provider of the cloud has a parent, as read at the start
/// of a search. In a flat cloud every provider is its own root, so the
/// reads take a provider's id for its root instead of joining
/// `resource_providers` for each row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shape {
    Flat,
    Trees,
}

/// The inventories of one class, as read to find the providers with room.
pub(super) struct ClassInventories {
    /// The providers (with their roots) whose inventory can take the
    /// amount asked (capacity after usage, min_unit, max_unit, step_size),
    /// by provider.
    pub(super) with_room: Vec<ProviderRoot>,
    /// Every inventory of the class read, with room or not, by provider:
    /// what the summaries need of them, so that the trees read later
    /// need not read them again.
    pub(super) all: Vec<ProviderRoom>,
}

/// One provider's [`Room`] in an inventory of a class.
#[derive(Clone, Copy, Debug)]
pub(super) struct ProviderRoom {
    pub(super) provider: ProviderId,
    pub(super) room: Room,
}

/// Capacity, usage and max_unit of one inventory: what a summary and the
/// capacity checks need of it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Room {
    pub(super) capacity: i64,
    pub(super) used: i64,
    pub(super) max_unit: i64,
}

/// A range of provider ids, `from` included, `to` not: the part of the
/// cloud a windowed search reads at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Window {
    pub(super) from: ProviderId,
    pub(super) to: ProviderId,
}

/// The smallest and largest provider ids, if there are providers.
pub(super) async fn provider_id_bounds(store: &Store) -> Result<Option<(ProviderId, ProviderId)>> {
    // Two subqueries: each is then one step down the primary key, where
    // one `SELECT MIN(id), MAX(id)` walks every row.
    let query = "SELECT (SELECT MIN(id) FROM resource_providers), \
                 (SELECT MAX(id) FROM resource_providers)";
    Ok(store
        .fold_rows(query.to_owned(), Vec::new(), None, |bounds, row| {
            if let (Some(low), Some(high)) = (row.int(0)?, row.int(1)?) {
                *bounds = Some((ProviderId::new(low), ProviderId::new(high)));
            }
            Ok(())
        })
        .await?)
}

/// The inventories of `class_id` (in the tree of `root` when given, of
/// the providers in `window` when given), and which of them can take
/// `amount` more.
pub(super) async fn providers_with_resource(
    store: &Store,
    shape: Shape,
    class_id: ResourceClassId,
    amount: i64,
    root: Option<ProviderId>,
    window: Option<Window>,
) -> Result<ClassInventories> {
    let used = store
        .dialect()
        .int(&format!("COALESCE({}, 0)", inventory::USED));
    let columns = "inv.total, inv.reserved, inv.allocation_ratio, \
                   inv.min_unit, inv.max_unit, inv.step_size";
    // Columns: the provider, its root (`Trees` only), `columns`, `used`.
    // A window reads its providers' rows through the index on (provider,
    // class); SQLite, without statistics, would take the one on the class
    // and walk every inventory of the class, unless the class's term is
    // kept off indexes (its unary `+`).
    let class_term = match (window, store.dialect()) {
        (Some(_), crate::db::Dialect::Sqlite) => "+inv.resource_class_id",
        _ => "inv.resource_class_id",
    };
    let select = match shape {
        // A flat provider is its own root: its id is read once.
        Shape::Flat => format!(
            "SELECT inv.resource_provider_id, {columns}, {used} \
             FROM inventories inv WHERE {class_term} = "
        ),
        Shape::Trees => format!(
            "SELECT rp.id, rp.root_provider_id, {columns}, {used} \
             FROM resource_providers rp \
             JOIN inventories inv ON inv.resource_provider_id = rp.id \
             AND inv.resource_class_id = "
        ),
    };
    let mut q = Statement::new(store.dialect());
    q.push(&select).bind(class_id);
    if let Some(root) = root {
        q.push(match shape {
            Shape::Flat => " AND inv.resource_provider_id = ",
            Shape::Trees => " WHERE rp.root_provider_id = ",
        })
        .bind(root);
    }
    if let Some(Window { from, to }) = window {
        let column = match shape {
            Shape::Flat => "inv.resource_provider_id",
            Shape::Trees => "rp.id",
        };
        let joined = if root.is_some() || shape == Shape::Flat {
            " AND "
        } else {
            " WHERE "
        };
        q.push(joined).push(column).push(" >= ").bind(from);
        q.push(" AND ").push(column).push(" < ").bind(to);
    }
    let init = ClassInventories {
        with_room: Vec::new(),
        all: Vec::new(),
    };
    let mut found = q
        .fold(store, init, move |out, row| {
            let int = |column| row.required_int(column);
            let id = ProviderId::read(row, 0)?;
            let (root, first) = match shape {
                Shape::Flat => (id, 1),
                Shape::Trees => (ProviderId::read(row, 1)?, 2),
            };
            let at = |offset: usize| first + offset;
            let (total, reserved, ratio) = (int(at(0))?, int(at(1))?, row.required_float(at(2))?);
            let (min_unit, max_unit, step_size) = (int(at(3))?, int(at(4))?, int(at(5))?);
            let used = int(at(6))?;
            let fits = (used.saturating_add(amount)) as f64 <= (total - reserved) as f64 * ratio
                && min_unit <= amount
                && max_unit >= amount
                && step_size > 0
                && amount % step_size == 0;
            if fits {
                out.with_room.push(ProviderRoot { provider: id, root });
            }
            let capacity = inventory::capacity(total, reserved, ratio);
            out.all.push(ProviderRoom {
                provider: id,
                room: Room {
                    capacity,
                    used,
                    max_unit,
                },
            });
            Ok(())
        })
        .await?;
    // Sorted here: cheaper than SQLite's sorter.
    found.with_room.sort_unstable();
    found.all.sort_unstable_by_key(|p| p.provider);
    Ok(found)
}

/// The providers having at least one of the traits `trait_ids`.
pub(super) async fn providers_with_any_trait(
    store: &Store,
    trait_ids: &HashSet<TraitId>,
) -> Result<HashSet<ProviderId>> {
    if trait_ids.is_empty() {
        return Ok(HashSet::new());
    }
    let mut q = Statement::new(store.dialect());
    q.push(
        "SELECT DISTINCT resource_provider_id FROM resource_provider_traits \
         WHERE trait_id IN (",
    )
    .list(trait_ids.iter().copied())
    .push(")");
    provider_set(store, q).await
}

/// The providers having at least one trait of each of `groups`.
pub(super) async fn providers_with_all_traits(
    store: &Store,
    groups: &[HashSet<TraitId>],
) -> Result<HashSet<ProviderId>> {
    let groups: Vec<Vec<TraitId>> = groups
        .iter()
        .map(|g| {
            let mut ids: Vec<TraitId> = g.iter().copied().collect();
            ids.sort_unstable();
            ids
        })
        .collect();
    crate::objects::provider::providers_having_all(
        store,
        "resource_provider_traits",
        "trait_id",
        &groups,
    )
    .await
}

/// The providers in at least one aggregate of each of `groups`.
pub(super) async fn providers_in_aggregates(
    store: &Store,
    groups: &[BTreeSet<String>],
) -> Result<HashSet<ProviderId>> {
    crate::objects::provider::providers_in_aggregates(store, groups).await
}

/// The sharing provider and the anchor root for each of `sharing`: the
/// roots of every tree holding a provider in an aggregate with it (its
/// own tree included, when it is in any aggregate). The root is the
/// provider's `root_provider_id`, which names a provider: joining the
/// root's row would cost a seek per provider for nothing.
pub(super) async fn anchors_for_sharing(
    store: &Store,
    sharing: &[ProviderId],
) -> Result<Vec<ProviderRoot>> {
    provider_roots_by_ids(store, sharing, |q, slice| {
        q.push(
            "SELECT DISTINCT sps.id, shr_with_sps.root_provider_id \
             FROM resource_providers sps \
             JOIN resource_provider_aggregates shr_aggs \
               ON sps.id = shr_aggs.resource_provider_id \
             JOIN resource_provider_aggregates shr_with_sps_aggs \
               ON shr_aggs.aggregate_id = shr_with_sps_aggs.aggregate_id \
             JOIN resource_providers shr_with_sps \
               ON shr_with_sps_aggs.resource_provider_id = shr_with_sps.id \
             WHERE sps.id IN (",
        )
        .list(slice.iter().copied())
        .push(")");
    })
    .await
}

/// The roots (providers without a parent) having every trait of
/// `required` and none of `forbidden`.
pub(super) async fn roots_with_traits(
    store: &Store,
    required: &HashSet<TraitId>,
    forbidden: &HashSet<TraitId>,
) -> Result<HashSet<ProviderId>> {
    let mut q = Statement::new(store.dialect());
    q.push("SELECT id FROM resource_providers WHERE parent_provider_id IS NULL");
    let mut matching = provider_set(store, q).await?;
    if !required.is_empty() {
        let groups: Vec<HashSet<TraitId>> =
            required.iter().map(|t| HashSet::from_iter([*t])).collect();
        let having = providers_with_all_traits(store, &groups).await?;
        matching.retain(|id| having.contains(id));
    }
    if !forbidden.is_empty() {
        let having = providers_with_any_trait(store, forbidden).await?;
        matching.retain(|id| !having.contains(id));
    }
    Ok(matching)
}

/// The roots in `window` (the first one found only, with `first_only`)
/// having every trait of `required` and none of `forbidden`: one
/// statement, so that a window costs its own rows rather than every
/// provider with the traits.
pub(super) async fn roots_with_traits_in(
    store: &Store,
    required: &HashSet<TraitId>,
    forbidden: &HashSet<TraitId>,
    window: Option<Window>,
    first_only: bool,
) -> Result<HashSet<ProviderId>> {
    let mut q = Statement::new(store.dialect());
    q.push("SELECT rp.id FROM resource_providers rp WHERE rp.parent_provider_id IS NULL");
    if let Some(Window { from, to }) = window {
        q.push(" AND rp.id >= ")
            .bind(from)
            .push(" AND rp.id < ")
            .bind(to);
    }
    for id in required {
        q.push(
            " AND EXISTS (SELECT 1 FROM resource_provider_traits t \
             WHERE t.resource_provider_id = rp.id AND t.trait_id = ",
        )
        .bind(*id)
        .push(")");
    }
    if !forbidden.is_empty() {
        q.push(
            " AND NOT EXISTS (SELECT 1 FROM resource_provider_traits t \
             WHERE t.resource_provider_id = rp.id AND t.trait_id IN (",
        )
        .list(forbidden.iter().copied())
        .push("))");
    }
    if first_only {
        q.push(" LIMIT 1");
    }
    provider_set(store, q).await
}

/// The root of each of `ids`, by provider.
pub(super) async fn roots_of(store: &Store, ids: &[ProviderId]) -> Result<Vec<ProviderRoot>> {
    provider_roots_by_ids(store, ids, |q, slice| {
        q.push("SELECT id, root_provider_id FROM resource_providers WHERE id IN (")
            .list(slice.iter().copied())
            .push(")");
    })
    .await
}

/// The trait ids of each of `ids`.
pub(super) async fn trait_ids_of(
    store: &Store,
    ids: &[ProviderId],
) -> Result<HashMap<ProviderId, HashSet<TraitId>>> {
    fold_by_ids(
        store,
        ids,
        |q, slice| {
            q.push(
                "SELECT resource_provider_id, trait_id FROM resource_provider_traits \
                 WHERE resource_provider_id IN (",
            )
            .list(slice.iter().copied())
            .push(")");
        },
        HashMap::new(),
        |out: &mut HashMap<ProviderId, HashSet<TraitId>>, row| {
            let (provider, t) = (ProviderId::read(row, 0)?, TraitId::read(row, 1)?);
            out.entry(provider).or_default().insert(t);
            Ok(())
        },
    )
    .await
}

/// How the statements of [`trees`] find the rows of the trees read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TreeReads {
    /// The roots' ids bound in `IN` lists: a seek per id.
    Listed,
    /// Every row of the table in its order, kept here by its root's id.
    /// Where most of the cloud's trees are in the answer (Nova's request
    /// in a flat cloud, or in one of hosts with NUMA and PCI children),
    /// one pass costs less than a seek per root and per provider.
    Scanned,
}

/// How a statement over a table finds a row's root.
struct TreeRoot {
    /// A join to add after the table (empty for none).
    join: String,
    /// The expression of the row's root.
    root: String,
}

/// How a statement over `table` (its alias) finds a row's root. In a
/// flat cloud a root's tree is the root alone, found by the provider's id
/// without a join.
fn tree_root(shape: Shape, table: &str) -> TreeRoot {
    match shape {
        Shape::Flat => TreeRoot {
            join: String::new(),
            root: format!("{table}.resource_provider_id"),
        },
        Shape::Trees => TreeRoot {
            join: format!(" JOIN resource_providers rp ON {table}.resource_provider_id = rp.id"),
            root: "rp.root_provider_id".to_owned(),
        },
    }
}

/// Which rows a read of [`trees`] keeps, and how it finds them.
#[derive(Clone, Debug)]
enum Reach<'a> {
    /// Statements binding the roots (sorted) in `IN` lists.
    Listed(&'a [ProviderId]),
    /// One statement over every row of the table, keeping here those
    /// whose column `column` is one of `ids` (sorted).
    Scanned {
        column: usize,
        ids: Arc<[ProviderId]>,
    },
}

/// Folds the rows `reach` keeps of the statement `select(join)`, then the
/// condition on the tree, then `rest`. Listed, `join` and the condition
/// come from `tree` (as [`tree_root`] makes it), the condition its root
/// `IN` a list of roots; scanned, the statement reads every row, without
/// a join.
async fn fold_trees<A, F>(
    store: &Store,
    reach: &Reach<'_>,
    tree: TreeRoot,
    select: impl Fn(&str) -> String,
    rest: &str,
    init: A,
    mut step: F,
) -> Result<A>
where
    A: Send + 'static,
    F: FnMut(&mut A, &dyn Columns) -> crate::db::Result<()> + Clone + Send + 'static,
{
    match reach {
        Reach::Listed(roots) => {
            debug_assert!(roots.windows(2).all(|w| w[0] < w[1]), "roots sorted");
            let head = select(&tree.join);
            fold_by_ids(
                store,
                roots,
                |q, slice| {
                    q.push(&head)
                        .push(&tree.root)
                        .push(" IN (")
                        .list(slice.iter().copied())
                        .push(")")
                        .push(rest);
                },
                init,
                step,
            )
            .await
        }
        Reach::Scanned { column, ids } => {
            debug_assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids sorted");
            let (column, ids) = (*column, Arc::clone(ids));
            let keep = move |acc: &mut A, row: &dyn Columns| {
                if ids.binary_search(&ProviderId::read(row, column)?).is_ok() {
                    step(acc, row)
                } else {
                    Ok(())
                }
            };
            let mut q = Statement::new(store.dialect());
            q.push(&select("")).push("1 = 1").push(rest);
            Ok(q.fold(store, init, keep).await?)
        }
    }
}

/// A provider of the trees read for the summaries.
#[derive(Clone, Debug)]
pub(super) struct TreeProvider {
    pub(super) id: ProviderId,
    pub(super) uuid: Arc<str>,
    pub(super) parent_id: Option<ProviderId>,
    pub(super) parent_uuid: Option<Arc<str>>,
    pub(super) root_id: ProviderId,
    pub(super) root_uuid: Arc<str>,
}

/// One inventory of the trees read, with its usage.
#[derive(Clone, Debug)]
pub(super) struct TreeInventory {
    pub(super) provider: ProviderId,
    pub(super) class_id: ResourceClassId,
    pub(super) class: Arc<str>,
    pub(super) capacity: i64,
    pub(super) used: i64,
    pub(super) max_unit: i64,
}

/// The trees rooted at `roots`: providers, inventories with usage, and
/// trait names by provider.
pub(super) struct Trees {
    pub(super) providers: Vec<TreeProvider>,
    pub(super) inventories: Vec<TreeInventory>,
    /// By provider, in trait id order; alike providers share a list.
    pub(super) traits: HashMap<ProviderId, Arc<[String]>>,
    /// Every class's name, by id.
    pub(super) class_names: HashMap<ResourceClassId, Arc<str>>,
}

/// A row of the providers of [`trees`], before its root's and parent's
/// uuids are looked up.
struct ProviderRow {
    id: ProviderId,
    uuid: Arc<str>,
    root: ProviderId,
    parent: Option<ProviderId>,
}

/// A trait of a provider, as [`trees`] reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct ProviderTrait {
    provider: ProviderId,
    trait_id: TraitId,
}

/// The most classes a scanned read of inventories names in its `IN`
/// list; past it (a cloud of many custom classes), it leaves out the
/// known ones instead.
const MAX_CLASSES_LISTED: usize = 100;

/// Reads the trees rooted at `roots`, but for the inventories of the
/// classes `known` (read already, of every provider). The rows are sorted
/// here, which costs less than SQLite's sorter, and the uuids of roots and
/// parents and the names of classes and traits are looked up in memory
/// rather than joined per row. Scanned, the inventories and traits are
/// kept by their provider, one of the providers read first, so that no
/// row needs a join to find its root.
pub(super) async fn trees(
    store: &Store,
    shape: Shape,
    reads: TreeReads,
    roots: &[ProviderId],
    known: &[ResourceClassId],
) -> Result<Trees> {
    let providers_of = match shape {
        Shape::Flat => "id",
        Shape::Trees => "root_provider_id",
    };
    let reach = match reads {
        TreeReads::Listed => Reach::Listed(roots),
        // Column 2: the provider's root.
        TreeReads::Scanned => Reach::Scanned {
            column: 2,
            ids: Arc::from(roots),
        },
    };
    let mut rows = fold_trees(
        store,
        &reach,
        TreeRoot {
            join: String::new(),
            root: providers_of.to_owned(),
        },
        |_| {
            "SELECT id, uuid, root_provider_id, parent_provider_id FROM resource_providers WHERE "
                .to_owned()
        },
        "",
        Vec::new(),
        |rows, row| {
            rows.push(ProviderRow {
                id: ProviderId::read(row, 0)?,
                uuid: Arc::<str>::from(row.required_text(1)?),
                root: ProviderId::read(row, 2)?,
                parent: ProviderId::read_optional(row, 3)?,
            });
            Ok(())
        },
    )
    .await?;
    // A provider moved to another tree between two statements is read
    // twice; its first reading stands, as do its inventories and traits.
    rows.sort_by_key(|row| row.id);
    rows.dedup_by_key(|row| row.id);
    let reach = match reach {
        Reach::Listed(roots) => Reach::Listed(roots),
        // Column 0: the provider of an inventory or a trait.
        Reach::Scanned { .. } => Reach::Scanned {
            column: 0,
            ids: rows.iter().map(|row| row.id).collect(),
        },
    };
    let uuids: HashMap<ProviderId, Arc<str>> = rows
        .iter()
        .map(|row| (row.id, Arc::clone(&row.uuid)))
        .collect();
    let uuid_of = |id: ProviderId| {
        uuids.get(&id).map(Arc::clone).ok_or_else(|| {
            Error::Inconsistent(format!("resource provider {id} is not in its tree"))
        })
    };
    let mut providers = Vec::with_capacity(rows.len());
    for row in &rows {
        providers.push(TreeProvider {
            id: row.id,
            uuid: uuid_of(row.id)?,
            parent_id: row.parent,
            parent_uuid: row.parent.map(uuid_of).transpose()?,
            root_id: row.root,
            root_uuid: uuid_of(row.root)?,
        });
    }
    let class_names: Arc<HashMap<ResourceClassId, Arc<str>>> = store
        .fold_rows(
            inventory::CLASS_NAMES.to_owned(),
            Vec::new(),
            HashMap::new(),
            inventory::insert_class_name,
        )
        .await?
        .into_iter()
        .map(|(id, name): (ResourceClassId, String)| (id, Arc::from(name)))
        .collect::<HashMap<_, _>>()
        .into();
    let used = store.dialect().int(inventory::USED);
    // Literal ids (integers the search read), so that the statement's
    // binds stay the roots alone. A scan names the other classes, which
    // the class index finds without reading the known classes' rows.
    let mut others: Vec<ResourceClassId> = class_names
        .keys()
        .copied()
        .filter(|id| !known.contains(id))
        .collect();
    others.sort_unstable();
    let literal = |ids: &[ResourceClassId]| {
        ids.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let classes = match &reach {
        Reach::Scanned { .. } if others.len() <= MAX_CLASSES_LISTED => {
            format!(" AND inv.resource_class_id IN ({})", literal(&others))
        }
        _ if known.is_empty() => " AND 1 = 1".to_owned(),
        _ => format!(" AND inv.resource_class_id NOT IN ({})", literal(known)),
    };
    let mut inventories = if others.is_empty() {
        Vec::new()
    } else {
        let names = Arc::clone(&class_names);
        fold_trees(
            store,
            &reach,
            tree_root(shape, "inv"),
            |join| {
                format!(
                    "SELECT inv.resource_provider_id, inv.resource_class_id, inv.total, \
                     inv.reserved, inv.allocation_ratio, inv.max_unit, {used} \
                     FROM inventories inv{join} WHERE ",
                )
            },
            &classes,
            Vec::new(),
            move |inventories: &mut Vec<TreeInventory>, row| {
                // A class created since its names were read is left out,
                // as its inventory would be by an earlier read.
                let class_id = ResourceClassId::read(row, 1)?;
                let Some(class) = names.get(&class_id) else {
                    return Ok(());
                };
                let (total, reserved) = (row.required_int(2)?, row.required_int(3)?);
                inventories.push(TreeInventory {
                    provider: ProviderId::read(row, 0)?,
                    class_id,
                    class: Arc::clone(class),
                    capacity: inventory::capacity(total, reserved, row.required_float(4)?),
                    used: row.int(6)?.unwrap_or(0),
                    max_unit: row.required_int(5)?,
                });
                Ok(())
            },
        )
        .await?
    };
    inventories.sort_by_key(|inv| (inv.provider, inv.class_id));
    inventories.dedup_by_key(|inv| (inv.provider, inv.class_id));
    let mut trait_rows = fold_trees(
        store,
        &reach,
        tree_root(shape, "rpt"),
        |join| {
            format!(
                "SELECT rpt.resource_provider_id, rpt.trait_id \
                 FROM resource_provider_traits rpt{join} WHERE ",
            )
        },
        "",
        Vec::new(),
        |rows, row| {
            rows.push(ProviderTrait {
                provider: ProviderId::read(row, 0)?,
                trait_id: TraitId::read(row, 1)?,
            });
            Ok(())
        },
    )
    .await?;
    trait_rows.sort_unstable();
    trait_rows.dedup();
    let mut trait_ids: Vec<TraitId> = trait_rows.iter().map(|row| row.trait_id).collect();
    trait_ids.sort_unstable();
    trait_ids.dedup();
    let trait_names: HashMap<TraitId, String> = fold_by_ids(
        store,
        &trait_ids,
        |q, slice| {
            q.push("SELECT id, name FROM traits WHERE id IN (")
                .list(slice.iter().copied())
                .push(")");
        },
        HashMap::new(),
        |names: &mut HashMap<TraitId, String>, row| {
            names.insert(TraitId::read(row, 0)?, row.required_text(1)?.to_owned());
            Ok(())
        },
    )
    .await?;
    // Providers with the same traits share one list: a cloud's many
    // alike providers (NUMA nodes, devices of one model) would otherwise
    // each hold copies of the same names. A trait deleted since its
    // providers' rows were read had left them first: the provider's row
    // is left out, as a later read would.
    let mut lists: HashMap<SmallVec<[TraitId; 4]>, Arc<[String]>> = HashMap::new();
    let mut traits: HashMap<ProviderId, Arc<[String]>> = HashMap::with_capacity(providers.len());
    for rows in trait_rows.chunk_by(|a, b| a.provider == b.provider) {
        let ids: SmallVec<[TraitId; 4]> = rows
            .iter()
            .map(|row| row.trait_id)
            .filter(|id| trait_names.contains_key(id))
            .collect();
        if ids.is_empty() {
            continue;
        }
        let list = lists.entry(ids).or_insert_with_key(|ids| {
            ids.iter()
                .filter_map(|id| trait_names.get(id).cloned())
                .collect()
        });
        traits.insert(rows[0].provider, Arc::clone(list));
    }
    Ok(Trees {
        providers,
        inventories,
        traits,
        class_names: Arc::unwrap_or_clone(class_names),
    })
}
