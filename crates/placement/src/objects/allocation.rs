//! Allocations: reading them by consumer and by provider, and replacing
//! the allocations of consumers, as upstream does: one transaction per
//! request, upstream's capacity checks, and the provider and consumer
//! generations that make concurrent writers conflict instead of
//! over-allocating.
//!
//! A write runs in one transaction. Every provider it touches has its
//! generation moved on with `UPDATE ... WHERE generation = <read>`, the
//! generation read by the same statement that read the provider's
//! inventories and usage: when another writer committed in between, no row
//! matches and the whole transaction is tried again (as upstream retries a
//! provider conflict), so two writers can never both spend the same
//! capacity. Consumers are guarded the same way; a consumer conflict is a
//! 409 at once, as upstream answers it.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::SystemTime;

use crate::config::Config;
use crate::db::ids::{
    AllocationId, ConsumerTypeId, ProjectId, ProviderId, ResourceClassId, UserId,
};
use crate::db::statement::Statement;
use crate::db::{self, Bind, Columns, Conn, Store, sql};
use crate::error::{Error, Result};
use crate::objects::consumer::{self, Consumer, Owners, Wanted};
use crate::objects::provider;
use crate::objects::reshaper::{self, InventoryReplacement};

/// The resources one consumer takes from one provider, as asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProviderResources {
    pub(crate) provider_uuid: String,
    /// Resource class names and amounts.
    pub(crate) resources: Vec<(String, i64)>,
}

/// The allocations one consumer should have after a write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ConsumerWrite {
    pub(crate) consumer_uuid: String,
    /// `None` (only before 1.8) means upstream's "incomplete consumer"
    /// project and user.
    pub(crate) project_id: Option<String>,
    pub(crate) user_id: Option<String>,
    /// The generation the client expects (`None`: a new consumer); only
    /// checked with [`Rules::consumer_generations`].
    pub(crate) generation: Option<i64>,
    /// Only used with [`Rules::consumer_types`].
    pub(crate) consumer_type: Option<String>,
    /// Empty: remove the consumer's allocations.
    pub(crate) allocations: Vec<ProviderResources>,
}

/// What the served version asks of a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rules {
    /// From 1.28: the client's consumer generation must match.
    pub(crate) consumer_generations: bool,
    /// From 1.38: the consumer's type is set.
    pub(crate) consumer_types: bool,
}

/// Why a write failed. The handler words each kind as its upstream
/// handler does.
#[derive(Debug)]
pub(crate) enum WriteError {
    /// An answer as it is (a consumer generation conflict, a provider
    /// that does not exist, a database failure).
    Done(Error),
    /// A resource class that does not exist: upstream's `NotFound`.
    NoSuchResourceClass(String),
    /// Upstream's `InvalidInventory` family: no such inventory, a
    /// constraint violated, capacity exceeded.
    Invalid(String),
    /// Inventory that allocations still use (reshaper only).
    InventoryInUse(String),
    /// Another transaction changed a consumer, or providers kept changing.
    Concurrent(String),
}

impl WriteError {
    /// The upstream message of a [`WriteError::NoSuchResourceClass`].
    pub(crate) fn no_such_class(name: &str) -> String {
        format!("No such resource class {name}.")
    }
}

impl From<Error> for WriteError {
    fn from(e: Error) -> Self {
        WriteError::Done(e)
    }
}

impl From<crate::db::Error> for WriteError {
    fn from(e: crate::db::Error) -> Self {
        Error::from(e).into()
    }
}

/// Why one try of a write's transaction did not complete: it failed, or
/// it met a concurrent writer and the write is to be tried again.
#[derive(Debug)]
pub(crate) enum Attempt {
    Failed(WriteError),
    /// To be tried again, for this reason (logged).
    Again(String),
}

impl From<WriteError> for Attempt {
    fn from(e: WriteError) -> Self {
        match e {
            WriteError::Done(e) if e.is_transient() => Attempt::Again(e.to_string()),
            other => Attempt::Failed(other),
        }
    }
}

impl From<Error> for Attempt {
    fn from(e: Error) -> Self {
        WriteError::from(e).into()
    }
}

impl From<crate::db::Error> for Attempt {
    fn from(e: crate::db::Error) -> Self {
        Error::from(e).into()
    }
}

/// Upstream's words for a consumer changed by another transaction.
const CONSUMER_CHANGED: &str =
    "Another thread concurrently updated the data. Please retry your update";
/// Upstream's words when providers kept changing through every try.
pub(crate) const PROVIDERS_CHANGED: &str =
    "Another thread concurrently updated the resource provider data. Please retry your update";

/// Replaces the allocations of the consumers in `writes` (and, for the
/// reshaper, the inventories in `reshape` around them) in one transaction,
/// tried again when concurrent writers changed the providers.
pub(crate) async fn write(
    store: &Store,
    config: &Arc<Config>,
    writes: Vec<ConsumerWrite>,
    rules: Rules,
    reshape: Vec<InventoryReplacement>,
) -> Result<(), WriteError> {
    let wanted = wanted(config, &writes, rules);
    let known = wanted.existing(store).await?;
    let tries = config.allocation_conflict_retry_count.max(1);
    let (owned_store, config) = (store.clone(), Arc::clone(config));
    store
        .writing(move |mut writer| async move {
            let store = &owned_store;
            let mut last = String::new();
            for done in 0..tries {
                if done > 0 {
                    db::StoreStats::add(&store.stats.allocation_retries);
                    db::pause_before_retry(done).await;
                }
                let mut tx = writer.begin().await?;
                let outcome = attempt(
                    store,
                    &mut tx.conn(),
                    &config,
                    &wanted,
                    &known,
                    &writes,
                    rules,
                    &reshape,
                )
                .await;
                let again = match outcome {
                    Ok(()) => match tx.commit().await {
                        Ok(()) => return Ok(()),
                        Err(e) if e.is_transient() => e.to_string(),
                        Err(e) => return Err(e.into()),
                    },
                    Err(Attempt::Again(why)) => why,
                    Err(Attempt::Failed(e)) => return Err(e),
                };
                db::StoreStats::add(&store.stats.allocation_conflicts);
                tracing::debug!(try_number = done + 1, tries, reason = %again, "allocation write met a concurrent writer");
                last = again;
            }
            db::StoreStats::add(&store.stats.allocation_gave_up);
            tracing::warn!(tries, last_reason = %last, "allocation write gave up after every try met a concurrent writer");
            Err(WriteError::Concurrent(PROVIDERS_CHANGED.to_owned()))
        })
        .await
}

/// The project and user a write names (upstream's incomplete consumer ids
/// when the project is not given).
fn owner_names<'a>(config: &'a Config, write: &'a ConsumerWrite) -> (&'a str, &'a str) {
    match &write.project_id {
        Some(project) => (
            project.as_str(),
            write
                .user_id
                .as_deref()
                .unwrap_or(&config.incomplete_consumer_user_id),
        ),
        None => (
            config.incomplete_consumer_project_id.as_str(),
            config.incomplete_consumer_user_id.as_str(),
        ),
    }
}

fn wanted(config: &Config, writes: &[ConsumerWrite], rules: Rules) -> Wanted {
    let mut wanted = Wanted::default();
    for w in writes {
        let (project, user) = owner_names(config, w);
        wanted.projects.insert(project.to_owned());
        wanted.users.insert(user.to_owned());
        if rules.consumer_types {
            if let Some(t) = &w.consumer_type {
                wanted.types.insert(t.clone());
            }
        }
    }
    wanted
}

/// One allocation being written: `used` 0 removes it.
#[derive(Clone, Debug)]
struct Alloc {
    /// Index into the write's consumers.
    consumer: usize,
    provider_id: ProviderId,
    provider_uuid: String,
    class: String,
    used: i64,
}

#[allow(clippy::too_many_arguments)]
async fn attempt(
    store: &Store,
    tx: &mut Conn<'_>,
    config: &Config,
    wanted: &Wanted,
    known: &Owners,
    writes: &[ConsumerWrite],
    rules: Rules,
    reshape: &[InventoryReplacement],
) -> Result<(), Attempt> {
    let owners = wanted.ensure(store, tx, known).await?;
    // The reshaper checks its providers and their generations first.
    let mut reshaped = reshaper::lookup(store, tx, reshape).await?;
    let mut consumers = ensure_consumers(store, tx, config, &owners, writes, rules).await?;
    let mut allocs = Vec::new();
    for (index, w) in writes.iter().enumerate() {
        if w.allocations.is_empty() {
            allocs.extend(current_allocations(store, tx, index, &w.consumer_uuid).await?);
            continue;
        }
        for pr in &w.allocations {
            let Some(rp) = provider::find(store, &mut *tx, &pr.provider_uuid).await? else {
                return Err(Attempt::Failed(WriteError::Done(Error::bad_request(
                    format!(
                        "Allocation for resource provider '{}' that does not exist.",
                        pr.provider_uuid
                    ),
                ))));
            };
            allocs.extend(pr.resources.iter().map(|(class, used)| Alloc {
                consumer: index,
                provider_id: rp.id,
                provider_uuid: rp.uuid.clone(),
                class: class.clone(),
                used: *used,
            }));
        }
    }
    for c in &mut consumers {
        if c.requested.differs_from(&c.consumer) {
            c.requested.apply_to(&mut c.consumer);
            consumer::update_owner(store, tx, &c.consumer).await?;
        }
    }
    reshaper::set_interim(store, tx, &mut reshaped).await?;
    let bumped = set_allocations(store, tx, &mut consumers, &allocs).await?;
    reshaper::note_bumped(&mut reshaped, &bumped);
    reshaper::set_final(store, tx, &mut reshaped).await?;
    Ok(())
}

/// The project, user and type a write asks a consumer to have.
#[derive(Clone, Copy, Debug)]
struct Requested {
    project_id: ProjectId,
    user_id: UserId,
    /// `None` before 1.38: leave the type as it is.
    consumer_type_id: Option<ConsumerTypeId>,
}

impl Requested {
    fn differs_from(&self, c: &Consumer) -> bool {
        self.project_id != c.project_id
            || self.user_id != c.user_id
            || self
                .consumer_type_id
                .is_some_and(|t| Some(t) != c.consumer_type_id)
    }

    fn apply_to(&self, c: &mut Consumer) {
        c.project_id = self.project_id;
        c.user_id = self.user_id;
        if let Some(t) = self.consumer_type_id {
            c.consumer_type_id = Some(t);
        }
    }
}

/// A consumer of the write, as read or created, and what the write asks
/// of it.
#[derive(Clone, Debug)]
struct Written {
    consumer: Consumer,
    requested: Requested,
}

/// The id of the owner `name`, which the write made if it was missing.
fn id_of<T: Copy>(ids: &HashMap<String, T>, name: &str) -> Result<T, Attempt> {
    ids.get(name).copied().ok_or_else(|| {
        Attempt::Failed(WriteError::Done(Error::Inconsistent(format!(
            "{name} was created but cannot be read back"
        ))))
    })
}

/// Reads or creates every consumer of the write, checking generations as
/// upstream's `ensure_consumer` does.
async fn ensure_consumers(
    store: &Store,
    tx: &mut Conn<'_>,
    config: &Config,
    owners: &Owners,
    writes: &[ConsumerWrite],
    rules: Rules,
) -> Result<Vec<Written>, Attempt> {
    let mut out = Vec::with_capacity(writes.len());
    for w in writes {
        let (project, user) = owner_names(config, w);
        let requested = Requested {
            project_id: id_of(&owners.projects, project)?,
            user_id: id_of(&owners.users, user)?,
            consumer_type_id: match (&w.consumer_type, rules.consumer_types) {
                (Some(t), true) => Some(id_of(&owners.types, t)?),
                _ => None,
            },
        };
        let existing = consumer::find(store, tx, &w.consumer_uuid).await?;
        let c = match existing {
            Some(c) => {
                if rules.consumer_generations && Some(c.generation) != w.generation {
                    let got = w
                        .generation
                        .map_or_else(|| "None".to_owned(), |g| g.to_string());
                    return Err(Attempt::Failed(WriteError::Done(generation_conflict(
                        &format!("expected {} but got {got}", c.generation),
                    ))));
                }
                c
            }
            None => {
                if rules.consumer_generations {
                    if let Some(got) = w.generation {
                        return Err(Attempt::Failed(WriteError::Done(generation_conflict(
                            &format!("expected null but got {got}"),
                        ))));
                    }
                }
                match consumer::create(
                    store,
                    tx,
                    &w.consumer_uuid,
                    requested.project_id,
                    requested.user_id,
                    requested.consumer_type_id,
                )
                .await
                {
                    Ok(c) => c,
                    // Created by a concurrent write: try again, and meet it.
                    Err(e) if e.is_unique_violation() => {
                        return Err(Attempt::Again(format!(
                            "consumer {} was created concurrently",
                            w.consumer_uuid
                        )));
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        };
        out.push(Written {
            consumer: c,
            requested,
        });
    }
    Ok(out)
}

fn generation_conflict(detail: &str) -> Error {
    Error::conflict(format!("consumer generation conflict - {detail}"))
        .with_code(crate::error::code::CONCURRENT_UPDATE)
}

/// The consumer's allocations as they are, marked for removal.
async fn current_allocations(
    store: &Store,
    tx: &mut Conn<'_>,
    consumer: usize,
    uuid: &str,
) -> Result<Vec<Alloc>> {
    // As upstream reads them: only allocations whose consumer, project and
    // user rows exist.
    let query = sql!(
        store,
        "SELECT a.resource_provider_id, rp.uuid, rc.name \
         FROM allocations a \
         JOIN resource_providers rp ON a.resource_provider_id = rp.id \
         JOIN consumers c ON a.consumer_id = c.uuid \
         JOIN projects p ON c.project_id = p.id \
         JOIN users u ON c.user_id = u.id \
         JOIN resource_classes rc ON a.resource_class_id = rc.id \
         WHERE a.consumer_id = ? ORDER BY a.id"
    );
    Ok(tx
        .rows(query, &[Bind::from(uuid)], |row| {
            Ok(Alloc {
                consumer,
                provider_id: ProviderId::read(row, 0)?,
                provider_uuid: row.required_text(1)?.to_owned(),
                class: row.required_text(2)?.to_owned(),
                used: 0,
            })
        })
        .await?)
}

/// A provider's inventory of one class (see [`InventoryKey`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct InventoryKey {
    provider: ProviderId,
    class: ResourceClassId,
}

/// A provider's inventory of one class, with what is allocated from it.
#[derive(Clone, Debug)]
struct Usage {
    provider_uuid: String,
    generation: i64,
    total: i64,
    reserved: i64,
    allocation_ratio: f64,
    min_unit: i64,
    max_unit: i64,
    step_size: i64,
    used: i64,
}

/// A provider's generation as [`set_allocations`] read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct ProviderGeneration {
    id: ProviderId,
    generation: i64,
}

/// Upstream's `_set_allocations`: removes the consumers' allocations,
/// checks that the new ones fit, writes them, and moves the generations of
/// every provider and consumer involved. Returns the ids of the providers
/// whose generation moved.
async fn set_allocations(
    store: &Store,
    tx: &mut Conn<'_>,
    consumers: &mut [Written],
    allocs: &[Alloc],
) -> Result<Vec<ProviderId>, Attempt> {
    if allocs.is_empty() {
        return Ok(Vec::new());
    }
    let d = store.dialect();
    let class_ids = class_ids(store, tx, allocs).await?;
    // `class_ids` has every class of `allocs`, or failed.
    let class_of = |a: &Alloc| class_ids[&a.class];
    let rc_ids: BTreeSet<ResourceClassId> = allocs.iter().map(class_of).collect();
    let rp_ids: BTreeSet<ProviderId> = allocs.iter().map(|a| a.provider_id).collect();
    let in_classes = |q: &mut Statement| {
        q.push("IN (").list(rc_ids.iter().copied()).push(")");
    };
    let in_providers = |q: &mut Statement| {
        q.push("IN (").list(rp_ids.iter().copied()).push(")");
    };

    // Usage before this write, to allow a change that leaves a provider
    // over capacity no worse than it was.
    let mut prev_query = Statement::new(d);
    prev_query.push(&format!(
        "SELECT resource_provider_id, resource_class_id, {} \
         FROM allocations WHERE resource_class_id ",
        d.int("SUM(used)")
    ));
    in_classes(&mut prev_query);
    prev_query.push(" AND resource_provider_id ");
    in_providers(&mut prev_query);
    prev_query.push(" GROUP BY resource_provider_id, resource_class_id");
    let prev_usage = prev_query
        .fold_on(
            tx,
            HashMap::new(),
            |prev: &mut HashMap<InventoryKey, i64>, row| {
                let key = InventoryKey {
                    provider: ProviderId::read(row, 0)?,
                    class: ResourceClassId::read(row, 1)?,
                };
                prev.insert(key, row.int(2)?.unwrap_or(0));
                Ok(())
            },
        )
        .await?;

    let consumer_uuids: BTreeSet<&str> = allocs
        .iter()
        .map(|a| consumers[a.consumer].consumer.uuid.as_str())
        .collect();
    // Found by a plain read, deleted by primary key: on MySQL a DELETE
    // searching the consumer index locks the index gap where a new
    // consumer would go, and concurrent writers of new consumers then
    // deadlock on each other's gaps. Allocations of these consumers that a
    // concurrent writer adds in between are that writer's: it moved the
    // consumer's generation, which the check below meets.
    let mut existing = Statement::new(d);
    existing
        .push("SELECT id FROM allocations WHERE consumer_id IN (")
        .list(consumer_uuids.iter().copied())
        .push(")");
    let old = existing
        .rows_on(tx, |row| AllocationId::read(row, 0))
        .await?;
    delete_by_id(store, tx, &old).await?;

    // Inventory, usage and generation in one statement: one consistent
    // view, whose generation guards the writes below.
    let mut usage_query = Statement::new(d);
    usage_query.push(
        "SELECT rp.id, rp.uuid, rp.generation, inv.resource_class_id, inv.total, inv.reserved, \
         inv.allocation_ratio, inv.min_unit, inv.max_unit, inv.step_size, ",
    );
    usage_query.push(&d.int("usg.used")).push(
        " FROM resource_providers rp \
         JOIN inventories inv ON rp.id = inv.resource_provider_id AND inv.resource_class_id ",
    );
    in_classes(&mut usage_query);
    usage_query.push(
        " LEFT JOIN (SELECT resource_provider_id, resource_class_id, SUM(used) AS used FROM allocations \
           WHERE resource_class_id ",
    );
    in_classes(&mut usage_query);
    usage_query.push(" AND resource_provider_id ");
    in_providers(&mut usage_query);
    usage_query.push(
        " GROUP BY resource_provider_id, resource_class_id) usg \
         ON inv.resource_provider_id = usg.resource_provider_id AND inv.resource_class_id = usg.resource_class_id \
         WHERE rp.id ",
    );
    in_providers(&mut usage_query);
    usage_query.push(" AND inv.resource_class_id ");
    in_classes(&mut usage_query);
    let usage = usage_query
        .fold_on(
            tx,
            HashMap::new(),
            |usage: &mut HashMap<InventoryKey, Usage>, row| {
                let key = InventoryKey {
                    provider: ProviderId::read(row, 0)?,
                    class: ResourceClassId::read(row, 3)?,
                };
                usage.insert(
                    key,
                    Usage {
                        provider_uuid: row.required_text(1)?.to_owned(),
                        generation: row.int(2)?.unwrap_or(0),
                        total: row.required_int(4)?,
                        reserved: row.required_int(5)?,
                        allocation_ratio: row.required_float(6)?,
                        min_unit: row.required_int(7)?,
                        max_unit: row.required_int(8)?,
                        step_size: row.required_int(9)?,
                        used: row.int(10)?.unwrap_or(0),
                    },
                );
                Ok(())
            },
        )
        .await?;
    check_capacity(allocs, &class_ids, &usage, &prev_usage).map_err(Attempt::Failed)?;

    // Every new allocation in one statement.
    let kept: Vec<&Alloc> = allocs.iter().filter(|a| a.used > 0).collect();
    if !kept.is_empty() {
        let now = db::now_text();
        let mut insert = Statement::new(d);
        insert.push(
            "INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at) \
             VALUES ",
        );
        for (n, a) in kept.iter().enumerate() {
            if n > 0 {
                insert.push(", ");
            }
            insert
                .push("(")
                .bind(a.provider_id)
                .push(", ")
                .bind(consumers[a.consumer].consumer.uuid.as_str())
                .push(", ")
                .bind(class_of(a))
                .push(", ")
                .bind(a.used)
                .push(", ")
                .bind_timestamp(now.as_str())
                .push(")");
        }
        insert.execute_on(tx).await?;
    }

    // Every provider involved, in id order (one lock order for all
    // writers): a generation that moved means another writer committed
    // since the read above; try the whole write again.
    let mut generations: Vec<ProviderGeneration> = rp_ids
        .iter()
        .filter_map(|id| {
            usage
                .iter()
                .find(|(key, _)| key.provider == *id)
                .map(|(_, u)| ProviderGeneration {
                    id: *id,
                    generation: u.generation,
                })
        })
        .collect();
    generations.sort_unstable();
    for ProviderGeneration { id, generation } in &generations {
        if !provider::try_bump_generation(store, &mut *tx, *id, *generation).await? {
            return Err(Attempt::Again(format!(
                "the generation of provider {id} moved from {generation}"
            )));
        }
    }

    let mut touched: Vec<usize> = allocs.iter().map(|a| a.consumer).collect();
    touched.sort_by_key(|i| consumers[*i].consumer.id);
    touched.dedup();
    for i in &touched {
        if !consumer::increment_generation(store, tx, &mut consumers[*i].consumer).await? {
            return Err(Attempt::Failed(WriteError::Concurrent(
                CONSUMER_CHANGED.to_owned(),
            )));
        }
    }
    let keeping: HashSet<usize> = kept.iter().map(|a| a.consumer).collect();
    let emptied: Vec<&str> = touched
        .iter()
        .filter(|i| !keeping.contains(i))
        .map(|i| consumers[*i].consumer.uuid.as_str())
        .collect();
    consumer::delete_if_no_allocations(store, tx, &emptied).await?;
    Ok(generations.into_iter().map(|g| g.id).collect())
}

/// The ids of the allocations' resource classes; the first unknown one
/// (in the order asked) is an error.
async fn class_ids(
    store: &Store,
    tx: &mut Conn<'_>,
    allocs: &[Alloc],
) -> Result<HashMap<String, ResourceClassId>, Attempt> {
    let names: BTreeSet<&str> = allocs.iter().map(|a| a.class.as_str()).collect();
    let mut query = Statement::new(store.dialect());
    query
        .push("SELECT id, name FROM resource_classes WHERE name IN (")
        .list(names.iter().copied())
        .push(")");
    let found = query
        .fold_on(
            tx,
            HashMap::new(),
            |found: &mut HashMap<String, ResourceClassId>, row| {
                found.insert(
                    row.required_text(1)?.to_owned(),
                    ResourceClassId::read(row, 0)?,
                );
                Ok(())
            },
        )
        .await?;
    if let Some(missing) = allocs.iter().find(|a| !found.contains_key(&a.class)) {
        return Err(Attempt::Failed(WriteError::NoSuchResourceClass(
            missing.class.clone(),
        )));
    }
    Ok(found)
}

/// Upstream's `_check_capacity_exceeded`, on what one statement read.
fn check_capacity(
    allocs: &[Alloc],
    class_ids: &HashMap<String, ResourceClassId>,
    usage: &HashMap<InventoryKey, Usage>,
    prev_usage: &HashMap<InventoryKey, i64>,
) -> Result<(), WriteError> {
    // Every provider must have inventory of at least one of the classes.
    let with_inventory: HashSet<ProviderId> = usage.keys().map(|key| key.provider).collect();
    let missing: BTreeSet<&str> = allocs
        .iter()
        .filter(|a| !with_inventory.contains(&a.provider_id))
        .map(|a| a.provider_uuid.as_str())
        .collect();
    if !missing.is_empty() {
        let mut classes: Vec<(ResourceClassId, &str)> = class_ids
            .iter()
            .map(|(name, id)| (*id, name.as_str()))
            .collect();
        classes.sort_unstable();
        classes.dedup();
        let classes: Vec<&str> = classes.into_iter().map(|(_, n)| n).collect();
        return Err(WriteError::Invalid(invalid_inventory(
            &classes.join(", "),
            &missing.into_iter().collect::<Vec<_>>().join(", "),
        )));
    }
    let mut asked: HashMap<InventoryKey, i64> = HashMap::new();
    for a in allocs {
        let Some(class) = class_ids.get(&a.class).copied() else {
            return Err(WriteError::NoSuchResourceClass(a.class.clone()));
        };
        let key = InventoryKey {
            provider: a.provider_id,
            class,
        };
        let needed_all = {
            let sum = asked.entry(key).or_insert(0);
            *sum = sum.saturating_add(a.used);
            *sum
        };
        if a.used == 0 {
            continue;
        }
        let Some(u) = usage.get(&key) else {
            return Err(WriteError::Invalid(invalid_inventory(
                &a.class,
                &a.provider_uuid,
            )));
        };
        if a.used < u.min_unit
            || a.used > u.max_unit
            || u.step_size == 0
            || a.used % u.step_size != 0
        {
            tracing::warn!(
                resource_class = %a.class, provider = %u.provider_uuid, requested = a.used,
                min_unit = u.min_unit, max_unit = u.max_unit, step_size = u.step_size,
                "allocation violates min_unit, max_unit or step_size"
            );
            return Err(WriteError::Invalid(format!(
                "Unable to create allocation for '{}' on resource provider '{}'. \
                 The requested amount would violate inventory constraints.",
                a.class, a.provider_uuid
            )));
        }
        #[allow(clippy::cast_precision_loss)]
        let capacity = (u.total - u.reserved) as f64 * u.allocation_ratio;
        #[allow(clippy::cast_precision_loss)]
        let over = |amount: i64| capacity < amount as f64;
        let after_all = u.used.saturating_add(needed_all);
        if over(u.used.saturating_add(a.used)) || over(after_all) {
            // Allowed when it leaves the provider no more over capacity
            // than it was.
            let better = prev_usage.get(&key).is_some_and(|prev| after_all <= *prev);
            if better {
                tracing::warn!(
                    resource_class = %a.class, provider = %u.provider_uuid,
                    "over capacity, but the allocation reduces the overage"
                );
            } else {
                tracing::warn!(
                    resource_class = %a.class, provider = %u.provider_uuid,
                    needed = a.used, used = u.used, capacity, "over capacity"
                );
                return Err(WriteError::Invalid(format!(
                    "Unable to create allocation for '{}' on resource provider '{}'. \
                     The requested amount would exceed the capacity.",
                    a.class, a.provider_uuid
                )));
            }
        }
    }
    Ok(())
}

fn invalid_inventory(class: &str, provider: &str) -> String {
    format!("Inventory for '{class}' on resource provider '{provider}' invalid.")
}

/// One allocation of a consumer, as `GET /allocations/{consumer}` shows it.
#[derive(Clone, Debug)]
pub(crate) struct ConsumerAllocation {
    pub(crate) provider_uuid: String,
    pub(crate) provider_generation: i64,
    pub(crate) class: String,
    pub(crate) used: i64,
    pub(crate) modified: Option<SystemTime>,
}

/// The consumer of allocations, as `GET /allocations/{consumer}` shows it.
#[derive(Clone, Debug)]
pub(crate) struct ConsumerInfo {
    pub(crate) project_id: String,
    pub(crate) user_id: String,
    pub(crate) generation: i64,
    /// `None`: no type (upstream shows `unknown`).
    pub(crate) consumer_type: Option<String>,
}

/// Upstream's modification time of an allocation row: `updated_at`, else
/// `created_at` (the row's columns `updated` and `created`).
fn modified(row: &dyn Columns, created: usize, updated: usize) -> db::Result<Option<SystemTime>> {
    Ok(row.timestamp(updated)?.or(row.timestamp(created)?))
}

/// The allocations of `consumer_uuid` (empty when it has none).
pub(crate) async fn for_consumer(
    store: &Store,
    consumer_uuid: &str,
) -> Result<(Vec<ConsumerAllocation>, Option<ConsumerInfo>)> {
    let d = store.dialect();
    let mut q = Statement::new(d);
    q.push(&format!(
        "SELECT rp.uuid, rp.generation, rc.name, a.used, {}, {}, c.generation, ct.name, \
         p.external_id, u.external_id \
         FROM allocations a \
         JOIN resource_providers rp ON a.resource_provider_id = rp.id \
         JOIN consumers c ON a.consumer_id = c.uuid \
         JOIN projects p ON c.project_id = p.id \
         JOIN users u ON c.user_id = u.id \
         JOIN resource_classes rc ON a.resource_class_id = rc.id \
         LEFT JOIN consumer_types ct ON c.consumer_type_id = ct.id \
         WHERE a.consumer_id = ",
        d.timestamp_text("a.created_at"),
        d.timestamp_text("a.updated_at")
    ))
    .bind(consumer_uuid)
    .push(" ORDER BY a.id");
    Ok(q.fold(store, (Vec::new(), None), |(out, info), row| {
        if info.is_none() {
            *info = Some(ConsumerInfo {
                project_id: row.required_text(8)?.to_owned(),
                user_id: row.required_text(9)?.to_owned(),
                generation: row.int(6)?.unwrap_or(0),
                consumer_type: row.text(7)?.map(str::to_owned),
            });
        }
        out.push(ConsumerAllocation {
            provider_uuid: row.required_text(0)?.to_owned(),
            provider_generation: row.int(1)?.unwrap_or(0),
            class: row.required_text(2)?.to_owned(),
            used: row.required_int(3)?,
            modified: modified(row, 4, 5)?,
        });
        Ok(())
    })
    .await?)
}

/// One allocation from a provider, as
/// `GET /resource_providers/{uuid}/allocations` shows it.
#[derive(Clone, Debug)]
pub(crate) struct ProviderAllocation {
    pub(crate) consumer_uuid: String,
    pub(crate) consumer_generation: i64,
    pub(crate) class: String,
    pub(crate) used: i64,
    pub(crate) modified: Option<SystemTime>,
}

/// The allocations from the provider with id `provider_id`.
pub(crate) async fn for_provider(
    store: &Store,
    provider_id: ProviderId,
) -> Result<Vec<ProviderAllocation>> {
    let d = store.dialect();
    let mut q = Statement::new(d);
    q.push(&format!(
        "SELECT c.uuid, c.generation, rc.name, a.used, {}, {} \
         FROM allocations a \
         JOIN consumers c ON a.consumer_id = c.uuid \
         JOIN projects p ON c.project_id = p.id \
         JOIN users u ON c.user_id = u.id \
         JOIN resource_classes rc ON a.resource_class_id = rc.id \
         WHERE a.resource_provider_id = ",
        d.timestamp_text("a.created_at"),
        d.timestamp_text("a.updated_at")
    ))
    .bind(provider_id)
    .push(" ORDER BY a.id");
    Ok(q.read_rows(store, |row| {
        Ok(ProviderAllocation {
            consumer_uuid: row.required_text(0)?.to_owned(),
            consumer_generation: row.int(1)?.unwrap_or(0),
            class: row.required_text(2)?.to_owned(),
            used: row.required_int(3)?,
            modified: modified(row, 4, 5)?,
        })
    })
    .await?)
}

/// The latest of the allocations' modification times.
pub(crate) fn last_modified(times: impl Iterator<Item = Option<SystemTime>>) -> Option<SystemTime> {
    times.flatten().max()
}

/// Deletes the allocations of `consumer_uuid` (and the consumer, left
/// without any) in one transaction, tried again when it meets concurrent
/// writers (a deadlock); `false` when it has none.
pub(crate) async fn delete_for_consumer(
    store: &Store,
    config: &Config,
    consumer_uuid: &str,
) -> Result<bool> {
    let tries = config.allocation_conflict_retry_count.max(1);
    let (owned_store, consumer_uuid) = (store.clone(), consumer_uuid.to_owned());
    store
        .writing(move |mut writer| async move {
            let mut done = 0;
            loop {
                if done > 0 {
                    db::pause_before_retry(done).await;
                }
                let mut tx = writer.begin().await?;
                let outcome =
                    match try_delete_for_consumer(&owned_store, &mut tx.conn(), &consumer_uuid).await {
                        Ok(deleted) => tx.commit().await.map(|()| deleted).map_err(Error::from),
                        Err(e) => Err(e),
                    };
                match outcome {
                    Ok(deleted) => return Ok(deleted),
                    Err(e) if e.is_transient() && done + 1 < tries => {
                        db::StoreStats::add(&owned_store.stats.allocation_conflicts);
                        db::StoreStats::add(&owned_store.stats.allocation_retries);
                        done += 1;
                        tracing::debug!(try_number = done, tries, reason = %e, "allocation delete tried again");
                    }
                    Err(e) => return Err(e),
                }
            }
        })
        .await
}

async fn try_delete_for_consumer(
    store: &Store,
    tx: &mut Conn<'_>,
    consumer_uuid: &str,
) -> Result<bool> {
    // As upstream reads them: only allocations whose consumer, project
    // and user rows exist.
    let query = sql!(
        store,
        "SELECT a.id FROM allocations a \
         JOIN resource_providers rp ON a.resource_provider_id = rp.id \
         JOIN consumers c ON a.consumer_id = c.uuid \
         JOIN projects p ON c.project_id = p.id \
         JOIN users u ON c.user_id = u.id \
         WHERE a.consumer_id = ?"
    );
    let ids = tx
        .rows(query, &[Bind::from(consumer_uuid)], |row| {
            AllocationId::read(row, 0)
        })
        .await?;
    if ids.is_empty() {
        return Ok(false);
    }
    delete_by_id(store, tx, &ids).await?;
    consumer::delete_if_no_allocations(store, tx, &[consumer_uuid]).await?;
    Ok(true)
}

/// Deletes the allocation rows of these ids (by primary key: on MySQL a
/// delete that searches another index also locks its gaps).
async fn delete_by_id(store: &Store, tx: &mut Conn<'_>, ids: &[AllocationId]) -> Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    let mut delete = Statement::new(store.dialect());
    delete
        .push("DELETE FROM allocations WHERE id IN (")
        .list(ids.iter().copied())
        .push(")");
    delete.execute_on(tx).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alloc(provider_id: i64, class: &str, used: i64) -> Alloc {
        Alloc {
            consumer: 0,
            provider_id: ProviderId::new(provider_id),
            provider_uuid: format!("rp{provider_id}"),
            class: class.to_owned(),
            used,
        }
    }

    fn usage(total: i64, used: i64) -> Usage {
        Usage {
            provider_uuid: "rp1".to_owned(),
            generation: 3,
            total,
            reserved: 2,
            allocation_ratio: 1.5,
            min_unit: 1,
            max_unit: 10,
            step_size: 1,
            used,
        }
    }

    fn classes() -> HashMap<String, ResourceClassId> {
        HashMap::from([
            ("VCPU".to_owned(), ResourceClassId::new(0)),
            ("DISK_GB".to_owned(), ResourceClassId::new(2)),
        ])
    }

    /// Provider 1's inventory of VCPU (class 0).
    fn vcpu_of_1() -> InventoryKey {
        InventoryKey {
            provider: ProviderId::new(1),
            class: ResourceClassId::new(0),
        }
    }

    #[test]
    fn capacity_is_total_less_reserved_times_ratio() {
        // (10 - 2) * 1.5 = 12, 4 used.
        let inv = HashMap::from([(vcpu_of_1(), usage(10, 4))]);
        let prev = HashMap::new();
        let check = |allocs: &[Alloc]| check_capacity(allocs, &classes(), &inv, &prev);
        assert!(check(&[alloc(1, "VCPU", 8)]).is_ok());
        let Err(WriteError::Invalid(m)) = check(&[alloc(1, "VCPU", 9)]) else {
            panic!("over capacity");
        };
        assert_eq!(
            m,
            "Unable to create allocation for 'VCPU' on resource provider 'rp1'. The requested amount would exceed the capacity."
        );
        // Two allocations of one class add up.
        assert!(check(&[alloc(1, "VCPU", 4), alloc(1, "VCPU", 5)]).is_err());
        // Beyond max_unit, below min_unit, off the step: constraints.
        let Err(WriteError::Invalid(m)) = check(&[alloc(1, "VCPU", 11)]) else {
            panic!("constraints");
        };
        assert!(m.ends_with("would violate inventory constraints."), "{m}");
        // Zero removes, and is never checked.
        assert!(check(&[alloc(1, "VCPU", 0)]).is_ok());
        // Amounts too large for any inventory do not overflow.
        assert!(check(&[alloc(1, "VCPU", i64::MAX), alloc(1, "VCPU", i64::MAX)]).is_err());
    }

    #[test]
    fn inventory_must_exist() {
        let inv = HashMap::from([(vcpu_of_1(), usage(10, 0))]);
        let prev = HashMap::new();
        let Err(WriteError::Invalid(m)) =
            check_capacity(&[alloc(1, "DISK_GB", 1)], &classes(), &inv, &prev)
        else {
            panic!("no DISK_GB inventory");
        };
        assert_eq!(
            m,
            "Inventory for 'DISK_GB' on resource provider 'rp1' invalid."
        );
        // A provider with none of the classes names them all.
        let Err(WriteError::Invalid(m)) = check_capacity(
            &[alloc(1, "VCPU", 1), alloc(2, "DISK_GB", 1)],
            &classes(),
            &inv,
            &prev,
        ) else {
            panic!("no inventory on rp2");
        };
        assert_eq!(
            m,
            "Inventory for 'VCPU, DISK_GB' on resource provider 'rp2' invalid."
        );
    }

    #[test]
    fn an_overage_may_shrink() {
        // Capacity 12, 14 used by others after this consumer's 6 were
        // removed (20 before): asking 4 leaves 18 <= 20, allowed; 7 is not.
        let inv = HashMap::from([(vcpu_of_1(), usage(10, 14))]);
        let prev = HashMap::from([(vcpu_of_1(), 20)]);
        assert!(check_capacity(&[alloc(1, "VCPU", 4)], &classes(), &inv, &prev).is_ok());
        assert!(check_capacity(&[alloc(1, "VCPU", 7)], &classes(), &inv, &prev).is_err());
        assert!(check_capacity(&[alloc(1, "VCPU", 4)], &classes(), &inv, &HashMap::new()).is_err());
    }
}
