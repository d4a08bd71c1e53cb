//! Resource providers: lookup by uuid, the generation that guards
//! concurrent changes, trees (parent and root), listing with upstream's
//! filters, and the writes of `/resource_providers`.

use std::collections::{BTreeSet, HashMap};
use std::time::SystemTime;

use crate::db::ids::{AggregateId, AllocationId, IdSet, ProviderId, ResourceClassId};
use crate::db::statement::Statement;
use crate::db::{self, Bind, Columns, Conn, Store, sql};
use crate::error::{Error, Result, code};

/// The identity of a provider and its current generation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProviderRef {
    pub(crate) id: ProviderId,
    pub(crate) uuid: String,
    pub(crate) generation: i64,
}

/// The provider with `uuid`, read within `conn` (a transaction or a pool),
/// or `None`.
pub(crate) async fn find<'c>(
    store: &Store,
    conn: impl Into<Conn<'c>>,
    uuid: &str,
) -> Result<Option<ProviderRef>> {
    Ok(conn
        .into()
        .row(
            sql!(
                store,
                "SELECT id, uuid, generation FROM resource_providers WHERE uuid = ?"
            ),
            &[Bind::from(uuid)],
            |row| {
                Ok(ProviderRef {
                    id: ProviderId::read(row, 0)?,
                    uuid: row.required_text(1)?.to_owned(),
                    generation: row.int(2)?.unwrap_or(0),
                })
            },
        )
        .await?)
}

/// Moves the provider's generation from `expected` to the next one, in the
/// transaction `tx`; 409 when someone changed it meanwhile.
pub(crate) async fn bump_generation<'c>(
    store: &Store,
    tx: impl Into<Conn<'c>>,
    provider: &ProviderRef,
    expected: i64,
) -> Result<i64> {
    if try_bump_generation(store, tx, provider.id, expected).await? {
        Ok(expected + 1)
    } else {
        Err(concurrent_update(&provider.uuid))
    }
}

/// 409 for a stale provider generation, in upstream's words.
pub(crate) fn concurrent_update(uuid: &str) -> Error {
    Error::conflict(format!(
        "resource provider generation conflict: {uuid} was changed by another request"
    ))
    .with_code(code::CONCURRENT_UPDATE)
}

/// Moves the generation of the provider with id `id` from `expected` to
/// the next one, in `tx`; `false` (nothing changed) when another
/// transaction changed it meanwhile, for callers that try again.
pub(crate) async fn try_bump_generation<'c>(
    store: &Store,
    tx: impl Into<Conn<'c>>,
    id: ProviderId,
    expected: i64,
) -> Result<bool> {
    let mut update = Statement::new(store.dialect());
    update
        .push("UPDATE resource_providers SET generation = ")
        .bind(expected + 1)
        .push(", updated_at = ")
        .bind_timestamp(db::now_text())
        .push(" WHERE id = ")
        .bind(id)
        .push(" AND generation = ")
        .bind(expected);
    Ok(update.execute_on(&mut tx.into()).await?.rows_affected == 1)
}

/// A provider as the API shows it, with its place in its tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Provider {
    pub(crate) id: ProviderId,
    pub(crate) uuid: String,
    pub(crate) name: Option<String>,
    pub(crate) generation: i64,
    pub(crate) root_uuid: String,
    pub(crate) parent_uuid: Option<String>,
    /// When it last changed, as upstream tells it (`updated_at`, else
    /// `created_at`).
    pub(crate) last_modified: Option<SystemTime>,
}

impl Provider {
    /// The provider's fields as the API shows them, borrowed.
    pub(crate) fn view(&self) -> ProviderView<'_> {
        ProviderView {
            uuid: &self.uuid,
            name: self.name.as_deref(),
            generation: self.generation,
            root_uuid: &self.root_uuid,
            parent_uuid: self.parent_uuid.as_deref(),
        }
    }
}

/// The fields of a provider the API shows, borrowed from a [`Provider`]
/// or from a database row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ProviderView<'a> {
    pub(crate) uuid: &'a str,
    pub(crate) name: Option<&'a str>,
    pub(crate) generation: i64,
    pub(crate) root_uuid: &'a str,
    pub(crate) parent_uuid: Option<&'a str>,
}

/// Takes each provider of a listing as it is read, so that a long list is
/// rendered without a [`Provider`] (and its strings) per row.
pub(crate) trait ListVisitor: Send + 'static {
    /// One provider, with its last-modified time as the database wrote it
    /// (`YYYY-MM-DD HH:MM:SS[.ffffff]`, UTC; `None` when it has none).
    fn visit(&mut self, provider: ProviderView<'_>, last_modified: Option<&str>);
}

/// The columns of [`Provider`], from `rp` joined to its `root` and
/// (left) its `parent`, read by [`ProviderRow::read`].
fn provider_select(store: &Store) -> Statement {
    let d = store.dialect();
    let mut q = Statement::new(d);
    q.push(&format!(
        "SELECT rp.id AS id, rp.uuid AS uuid, rp.name AS name, rp.generation AS generation, \
         root.uuid AS root_uuid, parent.uuid AS parent_uuid, \
         {} AS last_modified \
         FROM resource_providers rp \
         JOIN resource_providers root ON rp.root_provider_id = root.id \
         LEFT JOIN resource_providers parent ON rp.parent_provider_id = parent.id",
        d.timestamp_text("COALESCE(rp.updated_at, rp.created_at)"),
    ));
    q
}

/// A row of [`provider_select`], borrowed from the row.
struct ProviderRow<'a> {
    id: ProviderId,
    /// What the API shows.
    view: ProviderView<'a>,
    /// The last-modified time as the database wrote it.
    last_modified: Option<&'a str>,
}

impl<'a> ProviderRow<'a> {
    /// The columns of [`provider_select`], read by position (a name
    /// lookup per column shows in the 1,000-provider list).
    fn read(row: &'a dyn Columns) -> db::Result<Self> {
        Ok(ProviderRow {
            id: ProviderId::read(row, 0)?,
            view: ProviderView {
                uuid: row.required_text(1)?,
                name: row.text(2)?,
                generation: row.int(3)?.unwrap_or(0),
                root_uuid: row.required_text(4)?,
                parent_uuid: row.text(5)?,
            },
            last_modified: row.text(6)?,
        })
    }
}

/// A row of [`provider_select`] as an owned [`Provider`].
fn read_provider(row: &dyn Columns) -> db::Result<Provider> {
    let ProviderRow {
        id,
        view,
        last_modified,
    } = ProviderRow::read(row)?;
    Ok(Provider {
        id,
        uuid: view.uuid.to_owned(),
        name: view.name.map(str::to_owned),
        generation: view.generation,
        root_uuid: view.root_uuid.to_owned(),
        parent_uuid: view.parent_uuid.map(str::to_owned),
        last_modified: last_modified.and_then(db::parse_timestamp),
    })
}

/// The `updated_at` of the provider `uuid` (itself none until the
/// provider's first change), or `None` when there is no such provider.
pub(crate) async fn updated_at(store: &Store, uuid: &str) -> Result<Option<Option<SystemTime>>> {
    let mut q = Statement::new(store.dialect());
    q.push(&format!(
        "SELECT {} FROM resource_providers WHERE uuid = ",
        store.dialect().timestamp_text("updated_at")
    ))
    .bind(uuid);
    Ok(q.fold(store, None, |found, row| {
        *found = Some(row.timestamp(0)?);
        Ok(())
    })
    .await?)
}

/// The provider with `uuid`, with its tree, read within `conn`.
pub(crate) async fn load<'c>(
    store: &Store,
    conn: impl Into<Conn<'c>>,
    uuid: &str,
) -> Result<Option<Provider>> {
    let mut q = provider_select(store);
    q.push(" WHERE rp.uuid = ").bind(uuid);
    Ok(q.row_on(&mut conn.into(), read_provider).await?)
}

/// A provider's internal ids and those of its parent and root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TreeIds {
    pub(crate) id: ProviderId,
    pub(crate) uuid: String,
    pub(crate) parent_id: Option<ProviderId>,
    pub(crate) root_id: ProviderId,
    pub(crate) root_uuid: String,
}

/// The ids of the provider with `uuid` in its tree, or `None`.
pub(crate) async fn tree_ids<'c>(
    store: &Store,
    conn: impl Into<Conn<'c>>,
    uuid: &str,
) -> Result<Option<TreeIds>> {
    let query = sql!(
        store,
        "SELECT me.id, me.uuid, me.parent_provider_id, root.id, root.uuid \
         FROM resource_providers me \
         JOIN resource_providers root ON me.root_provider_id = root.id \
         WHERE me.uuid = ?"
    );
    Ok(conn
        .into()
        .row(query, &[Bind::from(uuid)], |row| {
            Ok(TreeIds {
                id: ProviderId::read(row, 0)?,
                uuid: row.required_text(1)?.to_owned(),
                parent_id: ProviderId::read_optional(row, 2)?,
                root_id: ProviderId::read(row, 3)?,
                root_uuid: row.required_text(4)?.to_owned(),
            })
        })
        .await?)
}

/// What `GET /resource_providers` filters on (upstream's
/// `get_all_by_filters`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Filters {
    pub(crate) name: Option<String>,
    pub(crate) uuid: Option<String>,
    pub(crate) in_tree: Option<String>,
    /// Groups of trait names: each group is "any of".
    pub(crate) required_traits: Vec<BTreeSet<String>>,
    pub(crate) forbidden_traits: BTreeSet<String>,
    /// Groups of aggregate uuids: each group is "any of".
    pub(crate) member_of: Vec<BTreeSet<String>>,
    pub(crate) forbidden_aggregates: BTreeSet<String>,
    /// Amounts by resource class name, each to fit the provider's
    /// remaining capacity and unit constraints.
    pub(crate) resources: Vec<(String, i64)>,
}

/// Why a provider listing cannot be answered.
#[derive(Debug)]
pub(crate) enum ListError {
    /// A trait named in `required` does not exist.
    TraitNotFound(String),
    /// A resource class named in `resources` does not exist.
    ResourceClassNotFound(String),
    /// Anything else (the database failed).
    Other(Error),
}

impl From<crate::db::Error> for ListError {
    fn from(e: crate::db::Error) -> Self {
        ListError::Other(e.into())
    }
}

impl From<Error> for ListError {
    fn from(e: Error) -> Self {
        ListError::Other(e)
    }
}

/// Hands each provider matching `filters` to `visitor`, by id, and gives
/// the visitor back. Filters apply in upstream's order, so that the same
/// request meets the same error (or the same early empty answer).
pub(crate) async fn list<V: ListVisitor>(
    store: &Store,
    filters: &Filters,
    visitor: V,
) -> Result<V, ListError> {
    let pool = store.reader();
    let mut q = provider_select(store);
    // Each condition after the first is joined with `AND`.
    let mut conditions = 0;
    let mut and = |q: &mut Statement| {
        q.push(if conditions == 0 { " WHERE " } else { " AND " });
        conditions += 1;
    };
    // An empty name or uuid filters nothing, as upstream (`if name:`).
    if let Some(name) = filters.name.as_deref().filter(|n| !n.is_empty()) {
        and(&mut q);
        q.push("rp.name = ").bind(name);
    }
    if let Some(uuid) = filters.uuid.as_deref().filter(|u| !u.is_empty()) {
        and(&mut q);
        q.push("rp.uuid = ").bind(uuid);
    }
    if let Some(in_tree) = filters.in_tree.as_deref().filter(|u| !u.is_empty()) {
        let Some(tree) = tree_ids(store, pool, in_tree).await? else {
            return Ok(visitor);
        };
        and(&mut q);
        q.push("rp.root_provider_id = ").bind(tree.root_id);
    }
    // Each id filter narrows `allowed` (None: no such filter yet) or
    // grows `denied`.
    let mut allowed: Option<IdSet<ProviderId>> = None;
    let mut denied: IdSet<ProviderId> = IdSet::default();
    if !filters.required_traits.is_empty() {
        let mut groups = Vec::with_capacity(filters.required_traits.len());
        for group in &filters.required_traits {
            let mut ids = Vec::with_capacity(group.len());
            for name in group {
                ids.push(
                    crate::objects::traits::id_of(store, pool, name)
                        .await?
                        .ok_or_else(|| ListError::TraitNotFound(name.clone()))?,
                );
            }
            groups.push(ids);
        }
        let matching =
            providers_having_all(store, "resource_provider_traits", "trait_id", &groups).await?;
        if matching.is_empty() {
            return Ok(visitor);
        }
        allowed = Some(matching);
    }
    if !filters.forbidden_traits.is_empty() {
        let mut ids = Vec::with_capacity(filters.forbidden_traits.len());
        for name in &filters.forbidden_traits {
            ids.push(
                crate::objects::traits::id_of(store, pool, name)
                    .await?
                    .ok_or_else(|| ListError::TraitNotFound(name.clone()))?,
            );
        }
        denied.extend(
            providers_having_all(store, "resource_provider_traits", "trait_id", &[ids]).await?,
        );
    }
    if !filters.member_of.is_empty() {
        let matching = providers_in_aggregates(store, &filters.member_of).await?;
        if matching.is_empty() {
            return Ok(visitor);
        }
        allowed = Some(match allowed {
            Some(before) => before.intersection(&matching).copied().collect(),
            None => matching,
        });
    }
    if !filters.forbidden_aggregates.is_empty() {
        denied.extend(
            providers_in_aggregates(store, std::slice::from_ref(&filters.forbidden_aggregates))
                .await?,
        );
    }
    for (class, amount) in &filters.resources {
        let class_id = crate::objects::inventory::resource_class_id(store, pool, class)
            .await?
            .ok_or_else(|| ListError::ResourceClassNotFound(class.clone()))?;
        let fitting = providers_with_capacity(store, class_id, *amount).await?;
        allowed = Some(match allowed {
            Some(before) => before.intersection(&fitting).copied().collect(),
            None => fitting,
        });
    }
    q.push(" ORDER BY rp.id");
    let keep = move |id: ProviderId| {
        !denied.contains(&id) && allowed.as_ref().is_none_or(|a| a.contains(&id))
    };
    Ok(q.fold(store, visitor, move |visitor, row| {
        let provider = ProviderRow::read(row)?;
        if keep(provider.id) {
            visitor.visit(provider.view, provider.last_modified);
        }
        Ok(())
    })
    .await?)
}

/// The most groups [`providers_having_all`] joins in one statement.
/// SQLite joins at most 64 tables, MySQL 61; a `required` of 70 traits
/// (each trait a group) failed there with a 500.
const MAX_JOINED_GROUPS: usize = 16;

/// The ids of providers that have, in the association `table`, at least
/// one of each group of `column` values: one join per group, at most
/// [`MAX_JOINED_GROUPS`] to a statement, the statements' answers
/// intersected. The ids come from the association rows, without a join
/// to `resource_providers` (a seek per row): on SQLite, whose foreign keys
/// upstream leaves unenforced, a row left by a removed provider may add
/// its id, which matches no provider the callers filter.
pub(crate) async fn providers_having_all<T>(
    store: &Store,
    table: &str,
    column: &str,
    groups: &[Vec<T>],
) -> Result<IdSet<ProviderId>>
where
    T: Copy + Into<Bind>,
{
    if groups.iter().any(Vec::is_empty) {
        return Ok(IdSet::default());
    }
    // No group at all: every provider, from one statement without joins.
    let chunks: Vec<&[Vec<T>]> = if groups.is_empty() {
        vec![&[]]
    } else {
        groups.chunks(MAX_JOINED_GROUPS).collect()
    };
    let mut having: Option<IdSet<ProviderId>> = None;
    for chunk in chunks {
        let mut q = Statement::new(store.dialect());
        match chunk.split_first() {
            None => {
                q.push("SELECT rp.id FROM resource_providers rp");
            }
            Some((first, others)) => {
                q.push(&format!("SELECT a0.resource_provider_id FROM {table} a0"));
                for (n, group) in others.iter().enumerate() {
                    let n = n + 1;
                    q.push(&format!(
                        " JOIN {table} a{n} ON a{n}.resource_provider_id = a0.resource_provider_id \
                         AND a{n}.{column} IN ("
                    ))
                    .list(group.iter().copied())
                    .push(")");
                }
                q.push(&format!(" WHERE a0.{column} IN ("))
                    .list(first.iter().copied())
                    .push(")");
            }
        }
        let these = q
            .fold(store, IdSet::default(), ProviderId::insert_first)
            .await?;
        let these = match having {
            None => these,
            Some(before) => before.into_iter().filter(|id| these.contains(id)).collect(),
        };
        if these.is_empty() {
            return Ok(these);
        }
        having = Some(these);
    }
    Ok(having.unwrap_or_default())
}

/// The ids of providers in at least one aggregate of each group (of
/// aggregate uuids); aggregates never seen match nothing.
pub(crate) async fn providers_in_aggregates(
    store: &Store,
    groups: &[BTreeSet<String>],
) -> Result<IdSet<ProviderId>> {
    let all: BTreeSet<&String> = groups.iter().flatten().collect();
    if all.is_empty() {
        return Ok(IdSet::default());
    }
    let mut q = Statement::new(store.dialect());
    q.push("SELECT uuid, id FROM placement_aggregates WHERE uuid IN (")
        .list(all.iter().map(|uuid| uuid.as_str()))
        .push(")");
    let ids_by_uuid = q
        .fold(store, HashMap::new(), |ids, row| {
            ids.insert(row.required_text(0)?.to_owned(), AggregateId::read(row, 1)?);
            Ok(())
        })
        .await?;
    let id_groups: Vec<Vec<AggregateId>> = groups
        .iter()
        .map(|g| {
            g.iter()
                .filter_map(|u| ids_by_uuid.get(u).copied())
                .collect()
        })
        .collect();
    providers_having_all(
        store,
        "resource_provider_aggregates",
        "aggregate_id",
        &id_groups,
    )
    .await
}

/// The ids of providers whose inventory of `class_id` can take `amount`
/// more: within capacity after their allocations, and within the unit
/// constraints.
async fn providers_with_capacity(
    store: &Store,
    class_id: ResourceClassId,
    amount: i64,
) -> Result<IdSet<ProviderId>> {
    // No inventory holds more than the database's 32-bit integers; asking
    // the database would overflow its arithmetic instead.
    if amount > i64::from(i32::MAX) {
        return Ok(IdSet::default());
    }
    let used = store
        .dialect()
        .int(&format!("COALESCE({}, 0)", crate::objects::inventory::USED));
    let mut q = Statement::new(store.dialect());
    q.push("SELECT inv.resource_provider_id FROM inventories inv WHERE inv.resource_class_id = ")
        .bind(class_id)
        .push(&format!(" AND {used} + "))
        .bind(amount)
        .push(" <= (inv.total - inv.reserved) * inv.allocation_ratio AND inv.min_unit <= ")
        .bind(amount)
        .push(" AND inv.max_unit >= ")
        .bind(amount)
        .push(" AND (")
        .bind(amount)
        .push(" % inv.step_size) = 0");
    Ok(q.fold(store, IdSet::default(), ProviderId::insert_first)
        .await?)
}

/// Why a provider could not be created, changed or deleted (upstream's
/// object exceptions).
#[derive(Debug)]
pub(crate) enum WriteError {
    /// No such provider.
    NotFound,
    /// Unique columns already taken: `uuid` and/or `name`.
    Duplicate(Vec<&'static str>),
    /// `Object action {action} failed because: {reason}`.
    Action {
        action: &'static str,
        reason: &'static str,
    },
    /// It has children.
    HasChildren,
    /// It has allocations.
    InUse,
    /// Its generation changed meanwhile.
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

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::NotFound => f.write_str("Resource could not be found."),
            WriteError::Duplicate(columns) => write!(f, "duplicate {}", columns.join(", ")),
            WriteError::Action { action, reason } => {
                write!(f, "Object action {action} failed because: {reason}")
            }
            WriteError::HasChildren => f.write_str(
                "Cannot delete resource provider that is a parent of another. Delete child providers first.",
            ),
            WriteError::InUse => f.write_str("Resource provider has allocations."),
            WriteError::Concurrent => f.write_str(
                "Another thread concurrently updated the resource provider data. Please retry your update",
            ),
            WriteError::Other(e) => write!(f, "{e}"),
        }
    }
}

/// The parent went away between the check and the write (the foreign key,
/// where enforced).
const PARENT_GONE: &str = "parent provider UUID does not exist.";

/// Which of `uuid` and `name` are taken, within `tx`.
async fn taken_columns(
    store: &Store,
    tx: &mut Conn<'_>,
    uuid: &str,
    name: &str,
    except_id: Option<ProviderId>,
) -> Result<Vec<&'static str>> {
    let mut taken = Vec::new();
    let by_uuid = tx
        .row(
            sql!(store, "SELECT id FROM resource_providers WHERE uuid = ?"),
            &[Bind::from(uuid)],
            |row| ProviderId::read(row, 0),
        )
        .await?;
    if by_uuid.is_some() && except_id.is_none() {
        taken.push("uuid");
    }
    let by_name = tx
        .row(
            sql!(store, "SELECT id FROM resource_providers WHERE name = ?"),
            &[Bind::from(name)],
            |row| ProviderId::read(row, 0),
        )
        .await?;
    if by_name.is_some_and(|id| except_id != Some(id)) {
        taken.push("name");
    }
    Ok(taken)
}

/// What [`create`] asks.
struct Creation {
    uuid: String,
    name: String,
    parent: Option<String>,
}

/// Creates a provider (under `parent`, a uuid, when given) in one
/// transaction; a provider without a parent is its own root.
pub(crate) async fn create(
    store: &Store,
    uuid: &str,
    name: &str,
    parent: Option<&str>,
) -> Result<Provider, WriteError> {
    if name.is_empty() {
        return Err(WriteError::Action {
            action: "create",
            reason: "name is required",
        });
    }
    if parent == Some(uuid) {
        return Err(WriteError::Action {
            action: "create",
            reason: "parent provider UUID cannot be same as UUID. Please set parent provider UUID to None if there is no parent.",
        });
    }
    let asked = Creation {
        uuid: uuid.to_owned(),
        name: name.to_owned(),
        parent: parent.map(str::to_owned),
    };
    let owned = store.clone();
    store
        .writing(move |mut writer| async move {
            let mut tx = writer.begin().await?;
            match try_create(&owned, &mut tx.conn(), &asked).await {
                Ok(created) => {
                    tx.commit().await?;
                    Ok(created)
                }
                // Someone else took the uuid or the name meanwhile: say
                // which, as a new transaction sees it.
                Err(WriteError::Other(e)) if e.is_unique_violation() => {
                    drop(tx);
                    let mut tx = writer.begin().await?;
                    let taken =
                        taken_columns(&owned, &mut tx.conn(), &asked.uuid, &asked.name, None)
                            .await?;
                    Err(WriteError::Duplicate(if taken.is_empty() {
                        vec!["uuid"]
                    } else {
                        taken
                    }))
                }
                Err(e) => Err(e),
            }
        })
        .await
}

/// One try of [`create`], in `tx`.
async fn try_create(
    store: &Store,
    tx: &mut Conn<'_>,
    asked: &Creation,
) -> Result<Provider, WriteError> {
    let parent_gone = WriteError::Action {
        action: "create",
        reason: PARENT_GONE,
    };
    let mut parent_ids = None;
    if let Some(parent) = &asked.parent {
        parent_ids = Some(
            tree_ids(store, &mut *tx, parent)
                .await?
                .ok_or(parent_gone)?,
        );
    }
    let taken = taken_columns(store, tx, &asked.uuid, &asked.name, None).await?;
    if !taken.is_empty() {
        return Err(WriteError::Duplicate(taken));
    }
    let d = store.dialect();
    let now = db::now_text();
    // As upstream: a root is written twice (its root is itself), so it
    // has `updated_at` from the start; a child is written once.
    let mut insert = Statement::new(d);
    insert
        .push(
            "INSERT INTO resource_providers (uuid, name, generation, root_provider_id, parent_provider_id, created_at) \
             VALUES (",
        )
        .bind(asked.uuid.as_str())
        .push(", ")
        .bind(asked.name.as_str())
        .push(", 0, ")
        .bind(parent_ids.as_ref().map(|p| p.root_id))
        .push(", ")
        .bind(parent_ids.as_ref().map(|p| p.id))
        .push(", ")
        .bind_timestamp(now.as_str())
        .push(")");
    match insert.execute_on(tx).await {
        Ok(_) => {}
        Err(e) if e.is_foreign_key_violation() => {
            return Err(WriteError::Action {
                action: "create",
                reason: PARENT_GONE,
            });
        }
        // A unique violation stays `Other`: the caller looks again.
        Err(e) if e.is_unique_violation() => return Err(WriteError::Other(e.into())),
        Err(e) => return Err(e.into()),
    }
    if parent_ids.is_none() {
        let mut own_root = Statement::new(d);
        own_root
            .push("UPDATE resource_providers SET root_provider_id = id, updated_at = ")
            .bind_timestamp(now)
            .push(" WHERE uuid = ")
            .bind(asked.uuid.as_str());
        own_root.execute_on(tx).await?;
    }
    load(store, tx, &asked.uuid)
        .await?
        .ok_or(WriteError::NotFound)
}

/// A provider of a subtree (see [`subtree_ids`]).
#[derive(Clone, Debug)]
struct SubtreeMember {
    id: ProviderId,
    uuid: String,
}

/// The provider `me` and every provider below it, read within `tx`.
async fn subtree_ids(store: &Store, tx: &mut Conn<'_>, me: &TreeIds) -> Result<Vec<SubtreeMember>> {
    let children = tx
        .fold(
            sql!(
                store,
                "SELECT id, uuid, parent_provider_id FROM resource_providers WHERE root_provider_id = ?"
            ),
            &[Bind::from(me.root_id)],
            HashMap::new(),
            |children: &mut HashMap<ProviderId, Vec<SubtreeMember>>, row| {
                if let Some(parent) = ProviderId::read_optional(row, 2)? {
                    children.entry(parent).or_default().push(SubtreeMember {
                        id: ProviderId::read(row, 0)?,
                        uuid: row.required_text(1)?.to_owned(),
                    });
                }
                Ok(())
            },
        )
        .await?;
    let mut subtree = vec![SubtreeMember {
        id: me.id,
        uuid: me.uuid.clone(),
    }];
    let mut next = 0;
    while next < subtree.len() {
        let id = subtree[next].id;
        if let Some(kids) = children.get(&id) {
            for kid in kids {
                // A tree read mid-change could hold a cycle: visit once.
                if !subtree.iter().any(|seen| seen.id == kid.id) {
                    subtree.push(kid.clone());
                }
            }
        }
        next += 1;
    }
    Ok(subtree)
}

/// What a PUT asks of a provider: a new name and, from 1.14, the parent
/// (`None` in the body means un-parenting).
#[derive(Clone, Debug)]
pub(crate) struct Update {
    pub(crate) name: String,
    /// `Some(parent)` when the body names `parent_provider_uuid`.
    pub(crate) parent: Option<Option<String>>,
    /// Re-parenting and un-parenting are allowed (1.37).
    pub(crate) allow_reparenting: bool,
}

/// Renames and (re-/un-)parents the provider `uuid` in one transaction,
/// moving its whole subtree to the new root.
pub(crate) async fn update(
    store: &Store,
    uuid: &str,
    change: &Update,
) -> Result<Provider, WriteError> {
    let (uuid, change) = (uuid.to_owned(), change.clone());
    store
        .transaction(move |store, tx| {
            Box::pin(async move { try_update(store, tx, &uuid, &change).await })
        })
        .await
}

async fn try_update(
    store: &Store,
    tx: &mut Conn<'_>,
    uuid: &str,
    change: &Update,
) -> Result<Provider, WriteError> {
    let me = tree_ids(store, &mut *tx, uuid)
        .await?
        .ok_or(WriteError::NotFound)?;
    // The parent asked for; the current one when the body names none.
    let wanted_parent = match &change.parent {
        Some(p) => p.clone(),
        None => match me.parent_id {
            Some(parent_id) => {
                tx.row(
                    sql!(store, "SELECT uuid FROM resource_providers WHERE id = ?"),
                    &[Bind::from(parent_id)],
                    |row| Ok(row.required_text(0)?.to_owned()),
                )
                .await?
            }
            None => None,
        },
    };
    let mut new_parent: Option<Option<ProviderId>> = None;
    let mut new_root: Option<ProviderId> = None;
    match wanted_parent {
        Some(parent_uuid) => {
            let parent =
                tree_ids(store, &mut *tx, &parent_uuid)
                    .await?
                    .ok_or(WriteError::Action {
                        action: "create",
                        reason: PARENT_GONE,
                    })?;
            if me.parent_id.is_some()
                && me.parent_id != Some(parent.id)
                && !change.allow_reparenting
            {
                return Err(WriteError::Action {
                    action: "update",
                    reason: "re-parenting a provider is not currently allowed.",
                });
            }
            let subtree = subtree_ids(store, tx, &me).await?;
            if subtree.iter().any(|member| member.uuid == parent.uuid) {
                return Err(WriteError::Action {
                    action: "update",
                    reason: "creating loop in the provider tree is not allowed.",
                });
            }
            new_parent = Some(Some(parent.id));
            new_root = Some(parent.root_id);
        }
        None => {
            if me.parent_id.is_some() {
                if !change.allow_reparenting {
                    return Err(WriteError::Action {
                        action: "update",
                        reason: "un-parenting a provider is not currently allowed.",
                    });
                }
                new_parent = Some(None);
                new_root = Some(me.id);
            }
        }
    }
    let taken = taken_columns(store, tx, uuid, &change.name, Some(me.id)).await?;
    if !taken.is_empty() {
        return Err(WriteError::Duplicate(taken));
    }
    let d = store.dialect();
    let now = db::now_text();
    let mut rename = Statement::new(d);
    rename
        .push("UPDATE resource_providers SET name = ")
        .bind(change.name.as_str());
    if let Some(parent) = new_parent {
        rename.push(", parent_provider_id = ").bind(parent);
    }
    rename
        .push(", updated_at = ")
        .bind_timestamp(now.as_str())
        .push(" WHERE id = ")
        .bind(me.id);
    let renamed = rename.execute_on(tx).await;
    match renamed {
        Ok(_) => {}
        Err(e) if e.is_unique_violation() => {
            return Err(WriteError::Duplicate(vec!["name"]));
        }
        Err(e) if e.is_foreign_key_violation() => {
            return Err(WriteError::Action {
                action: "update",
                reason: PARENT_GONE,
            });
        }
        Err(e) => return Err(e.into()),
    }
    if let Some(root) = new_root {
        for member in subtree_ids(store, tx, &me).await? {
            let mut update = Statement::new(d);
            update
                .push("UPDATE resource_providers SET root_provider_id = ")
                .bind(root)
                .push(", updated_at = ")
                .bind_timestamp(now.as_str())
                .push(" WHERE id = ")
                .bind(member.id);
            update.execute_on(tx).await?;
        }
    }
    load(store, tx, uuid).await?.ok_or(WriteError::NotFound)
}

/// Deletes the provider `uuid` with its inventories and its aggregate and
/// trait associations, in one transaction: refused while it has children
/// or allocations. The delete is guarded by the generation read here, so
/// an allocation written meanwhile (which moves it) makes it a conflict.
pub(crate) async fn delete(store: &Store, uuid: &str) -> Result<(), WriteError> {
    let uuid = uuid.to_owned();
    store
        .transaction(move |store, tx| Box::pin(async move { try_delete(store, tx, &uuid).await }))
        .await
}

async fn try_delete(store: &Store, tx: &mut Conn<'_>, uuid: &str) -> Result<(), WriteError> {
    let me = find(store, &mut *tx, uuid)
        .await?
        .ok_or(WriteError::NotFound)?;
    let id = [Bind::from(me.id)];
    let child = tx
        .row(
            sql!(
                store,
                "SELECT id FROM resource_providers WHERE parent_provider_id = ? LIMIT 1"
            ),
            &id,
            |row| ProviderId::read(row, 0),
        )
        .await?;
    if child.is_some() {
        return Err(WriteError::HasChildren);
    }
    let allocation = tx
        .row(
            sql!(
                store,
                "SELECT id FROM allocations WHERE resource_provider_id = ? LIMIT 1"
            ),
            &id,
            |row| AllocationId::read(row, 0),
        )
        .await?;
    if allocation.is_some() {
        return Err(WriteError::InUse);
    }
    // Lock the provider's row first (as every writer of its inventory,
    // traits or aggregates does), checking that its generation did not
    // move meanwhile: an allocation written since moved it.
    let locked = tx
        .execute(
            sql!(
                store,
                "UPDATE resource_providers SET generation = generation WHERE id = ? AND generation = ?"
            ),
            &[Bind::from(me.id), Bind::Int(me.generation)],
        )
        .await?;
    if locked.rows_affected != 1 {
        return Err(WriteError::Concurrent);
    }
    for statement in [
        sql!(
            store,
            "DELETE FROM inventories WHERE resource_provider_id = ?"
        ),
        sql!(
            store,
            "DELETE FROM resource_provider_aggregates WHERE resource_provider_id = ?"
        ),
        sql!(
            store,
            "DELETE FROM resource_provider_traits WHERE resource_provider_id = ?"
        ),
        sql!(
            store,
            "UPDATE resource_providers SET root_provider_id = NULL WHERE id = ? AND root_provider_id = id"
        ),
    ] {
        tx.execute(statement, &id).await?;
    }
    match tx
        .execute(
            sql!(store, "DELETE FROM resource_providers WHERE id = ?"),
            &id,
        )
        .await
    {
        Ok(done) if done.rows_affected == 1 => Ok(()),
        Ok(_) => Err(WriteError::Concurrent),
        // A child added meanwhile (the foreign key, where enforced).
        Err(e) if e.is_foreign_key_violation() => Err(WriteError::HasChildren),
        Err(e) => Err(e.into()),
    }
}
