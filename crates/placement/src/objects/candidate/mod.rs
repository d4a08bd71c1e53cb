//! Allocation candidates: the ways a set of request groups can be
//! satisfied by the providers, each a set of allocations that could be
//! written as is, with a summary of every provider of the trees involved.
//!
//! The search follows upstream's steps, so that the same request meets the
//! same errors and the same answer:
//!
//! 1. Request-wide filters: `root_required` narrows the trees that may
//!    anchor a candidate.
//! 2. Each request group in turn finds its own candidates: the unsuffixed
//!    group may spread over a tree and the sharing providers in an
//!    aggregate with it (when trees or sharing providers exist); a
//!    suffixed group needs one provider for all its resources. A group
//!    that finds nothing ends the search with an empty answer.
//! 3. The groups' candidates are combined per anchor tree: one candidate
//!    of each group, kept when the combination fits the capacity of every
//!    provider, honours `group_policy=isolate` and `same_subtree`.
//!
//! The combination is the expensive step (a product over the groups). It
//! is walked depth first and a partial combination is dropped as soon as
//! it exceeds a capacity or breaks `isolate`, which no completion could
//! repair: the work is bounded by the candidates found rather than by the
//! full product. `[placement] max_allocation_candidates` bounds the number
//! of candidates generated, as upstream's option of that name, and so
//! does `limit` where no later step drops candidates. Where little can be
//! pruned, a budget of work ([`MAX_SEARCH_WORK`]) ends each product.
//!
//! The order of the answer is deterministic (providers by id, trees in the
//! order they are met, groups in the order given); upstream's order is
//! that of Python sets. `limit` keeps the first candidates of that order
//! (upstream does the same unless `randomize_allocation_candidates` is
//! set).
//!
//! One deliberate difference: when an unsuffixed group spreads over trees
//! and sharing providers, upstream keeps one of the identical requests
//! made from a sharing provider alone for several anchors (whichever its
//! set meets first), so with other groups some anchors can be lost; here
//! each anchor keeps its own, and identical whole candidates are merged
//! only at the end.

mod db;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use futures_util::StreamExt;
use rand::seq::SliceRandom as _;
use smallvec::{SmallVec, smallvec};

use crate::config::CandidateStrategy;
use crate::db::Store;
use crate::db::ids::{ProviderId, ResourceClassId, TraitId};
use crate::error::Error;
use db::{ProviderRoom, ProviderRoot, Room};

/// One request group (upstream's `RequestGroup`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Group {
    /// `""` for the unsuffixed group.
    pub(crate) suffix: String,
    /// Amounts by class name, in the order given.
    pub(crate) resources: Vec<(String, i64)>,
    /// Each set is "any of these"; all must hold.
    pub(crate) required_traits: Vec<BTreeSet<String>>,
    pub(crate) forbidden_traits: BTreeSet<String>,
    /// Each set is "any of these"; all must hold.
    pub(crate) member_of: Vec<BTreeSet<String>>,
    pub(crate) forbidden_aggregates: BTreeSet<String>,
    pub(crate) in_tree: Option<String>,
}

impl Group {
    /// A suffixed group is satisfied by a single provider.
    pub(crate) fn use_same_provider(&self) -> bool {
        !self.suffix.is_empty()
    }
}

/// What applies to the request as a whole (upstream's
/// `RequestWideParams`, with the settings that shape the search).
#[derive(Clone, Debug)]
pub(crate) struct RequestWide {
    pub(crate) limit: Option<usize>,
    /// `group_policy=isolate`: suffixed groups on distinct providers.
    pub(crate) isolate: bool,
    /// `root_required`: traits the anchor root must have, or not.
    pub(crate) root_required: BTreeSet<String>,
    pub(crate) root_forbidden: BTreeSet<String>,
    /// `same_subtree`: sets of suffixes.
    pub(crate) same_subtrees: Vec<BTreeSet<String>>,
    /// From 1.29: a group may use several providers of one tree.
    pub(crate) nested_aware: bool,
    /// `[placement] max_allocation_candidates`, when not negative.
    pub(crate) max_candidates: Option<usize>,
    pub(crate) strategy: CandidateStrategy,
    /// `[placement] randomize_allocation_candidates`: `limit` keeps a
    /// random sample of every candidate found (within
    /// `max_candidates`), and an unlimited answer comes shuffled.
    pub(crate) randomize: bool,
    /// The most class reads a search runs at once (at least one).
    pub(crate) reads_at_once: usize,
}

impl RequestWide {
    /// `limit` when it ends the search early: the first candidates found
    /// are the answer, unless a random sample of all of them is.
    fn limit_found_first(&self) -> Option<usize> {
        self.limit.filter(|n| *n > 0 && !self.randomize)
    }

    /// How many of the first candidates found the answer keeps, when
    /// `limit` or `max_allocation_candidates` bounds it: the smaller.
    fn candidates_kept(&self) -> Option<usize> {
        match (self.limit_found_first(), self.max_candidates) {
            (Some(limit), Some(max)) => Some(limit.min(max)),
            (limit, max) => limit.or(max),
        }
    }
}

// The answer shares the search's uuids, class names and trait lists
// (`Arc`s): an answer of 1,000 candidates repeats each many times, and
// copying them cost more than the search itself.

/// One allocation request of the answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AllocationRequest {
    /// `(provider uuid, class, amount)`, one per provider and class.
    pub(crate) resources: Vec<(Arc<str>, Arc<str>, i64)>,
    /// Provider uuids by group suffix, in suffix order, each suffix once
    /// with its uuids sorted and unique: the order the answer shows.
    pub(crate) mappings: Vec<GroupProviders>,
}

/// A group suffix and its providers' uuids. A group maps to one provider
/// but for the unsuffixed group's several: one uuid is kept inline, so
/// that a candidate's mappings take one allocation (maps of sets took
/// two or more, most of a large answer's memory).
pub(crate) type GroupProviders = (Arc<str>, SmallVec<[Arc<str>; 1]>);

/// One class of a provider summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SummaryResource {
    pub(crate) class: Arc<str>,
    pub(crate) capacity: i64,
    pub(crate) used: i64,
}

/// A provider of a tree involved in the answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Summary {
    pub(crate) uuid: Arc<str>,
    pub(crate) parent_uuid: Option<Arc<str>>,
    pub(crate) root_uuid: Arc<str>,
    pub(crate) resources: Vec<SummaryResource>,
    /// In trait id order.
    pub(crate) traits: Arc<[String]>,
}

/// The answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Candidates {
    pub(crate) requests: Vec<AllocationRequest>,
    pub(crate) summaries: Vec<Summary>,
}

/// Why the search cannot answer.
#[derive(Debug)]
pub(crate) enum SearchError {
    ResourceClassNotFound(String),
    TraitNotFound(String),
    Other(Error),
}

impl From<Error> for SearchError {
    fn from(e: Error) -> Self {
        SearchError::Other(e)
    }
}

impl From<crate::db::Error> for SearchError {
    fn from(e: crate::db::Error) -> Self {
        SearchError::Other(e.into())
    }
}

type Result<T> = std::result::Result<T, SearchError>;

/// No provider can satisfy a group: the answer is empty.
struct NoneFound;

/// One resource of an allocation request (internal ids).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Part {
    provider: ProviderId,
    class: ResourceClassId,
    amount: i64,
}

impl Part {
    /// The inventory the part is taken from.
    fn inventory(&self) -> InventoryKey {
        InventoryKey {
            provider: self.provider,
            class: self.class,
        }
    }
}

/// A provider's inventory of one class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct InventoryKey {
    provider: ProviderId,
    class: ResourceClassId,
}

/// An allocation request as the search builds it.
#[derive(Clone, Debug)]
struct Areq {
    /// The root of the tree this request is anchored to.
    anchor: ProviderId,
    same_provider: bool,
    parts: Vec<Part>,
    mappings: Mappings,
}

/// A provider of a group of an allocation request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Mapping {
    /// The group's index in the request.
    group: usize,
    provider: ProviderId,
}

/// An allocation request's providers by group, sorted, without repeats.
/// A combination of a few groups fits without an allocation of its own.
type Mappings = SmallVec<[Mapping; 4]>;

impl Areq {
    /// What makes two requests the same (upstream's `__eq__`): the set of
    /// parts and the mappings, whatever the anchor. A request has a few
    /// parts: kept inline, a key costs no allocation.
    fn key(&self) -> (SmallVec<[Part; 4]>, Mappings) {
        let mut parts: SmallVec<[Part; 4]> = SmallVec::from_slice(&self.parts);
        parts.sort_unstable();
        (parts, self.mappings.clone())
    }
}

/// A provider's summary while searching.
#[derive(Clone, Debug)]
struct ProviderInfo {
    uuid: Arc<str>,
    parent_id: Option<ProviderId>,
    parent_uuid: Option<Arc<str>>,
    root_id: ProviderId,
    root_uuid: Arc<str>,
    traits: Arc<[String]>,
    /// By class id.
    resources: Vec<ProviderResource>,
}

/// One class of a provider's summary while searching.
#[derive(Clone, Debug)]
struct ProviderResource {
    class_id: ResourceClassId,
    class: Arc<str>,
    capacity: i64,
    used: i64,
}

/// The state shared by the groups of one request.
struct Search<'a> {
    store: &'a Store,
    wide: &'a RequestWide,
    has_trees: bool,
    /// Roots allowed to anchor candidates (`root_required`), if filtered.
    anchor_roots: Option<HashSet<ProviderId>>,
    /// Sharing providers. As upstream, a group's `member_of` narrows this
    /// set for the groups after it.
    sharing: HashSet<ProviderId>,
    providers: HashMap<ProviderId, ProviderInfo>,
    /// Summaries in the order their providers were read.
    order: Vec<ProviderId>,
    rooms: HashMap<InventoryKey, Room>,
    class_names: HashMap<ResourceClassId, Arc<str>>,
    /// The inventories of the classes read over the whole cloud, by class,
    /// by provider: the trees read after them leave these classes out.
    class_rows: BTreeMap<ResourceClassId, Vec<ProviderRoom>>,
    /// Whether the request has a single group.
    lone_group: bool,
    /// Whether a sharing provider's candidate was anchored to a tree other
    /// than its own: only then can two anchors hold the same candidate.
    shared_across_anchors: bool,
    /// Classes asked by more than one group, and the total by class.
    multi_group_classes: HashSet<ResourceClassId>,
    class_totals: HashMap<ResourceClassId, i64>,
    /// The groups' suffixes, by their index in [`Areq::mappings`].
    suffixes: Vec<&'a str>,
    /// Each `same_subtree`'s groups, by index.
    same_subtrees: Vec<Vec<usize>>,
    /// The providers the class reads cover, in a windowed search.
    window: Option<db::Window>,
}

/// The first window of a windowed search covers twice as many provider
/// ids as the answer can hold, and at least this many; each next one
/// twice the one before, so that a cloud with little room takes a few
/// windows rather than many.
const FIRST_WINDOW: i64 = 64;

/// One group as searched (upstream's `RequestGroupSearchContext`).
#[derive(Clone)]
struct GroupSearch {
    /// The group's index in the request, in [`Areq::mappings`].
    index: usize,
    same_provider: bool,
    /// In the order given.
    resources: Vec<Amount>,
    member_of: Vec<BTreeSet<String>>,
    in_aggregates: HashSet<ProviderId>,
    forbidden_aggregates: BTreeSet<String>,
    required_names: Vec<BTreeSet<String>>,
    required_ids: Vec<HashSet<TraitId>>,
    forbidden_names: BTreeSet<String>,
    forbidden_ids: HashSet<TraitId>,
    tree_root: Option<ProviderId>,
    /// By class, the providers with room for the group's amount.
    with_resource: HashMap<ResourceClassId, Vec<ProviderRoot>>,
}

/// An amount of a class a group asks for.
#[derive(Clone, Copy, Debug)]
struct Amount {
    class: ResourceClassId,
    amount: i64,
}

/// A provider that can give a class of an unsuffixed group to the tree
/// of an anchor root (its own, or for a sharing provider, one it shares
/// with). Ordered by provider, root, class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Holder {
    provider: ProviderId,
    root: ProviderId,
    class: ResourceClassId,
}

/// A [`Holder`] ordered by root, class, provider: a tree's providers by
/// class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct ByTree {
    root: ProviderId,
    class: ResourceClassId,
    provider: ProviderId,
}

/// What one read of [`db::providers_with_resource`] asks: an amount of a
/// class (in one provider tree).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct ClassRead {
    class: ResourceClassId,
    amount: i64,
    tree: Option<ProviderId>,
}

/// The providers with room, by what was read, for the groups asking that
/// amount of the class (in that provider tree).
type ClassReads = HashMap<ClassRead, crate::error::Result<db::ClassInventories>>;

/// The id of the trait `name`, or `TraitNotFound`.
async fn trait_id(store: &Store, name: &str) -> Result<TraitId> {
    crate::objects::traits::id_of(store, store.reader(), name)
        .await?
        .ok_or_else(|| SearchError::TraitNotFound(name.to_owned()))
}

/// Finds the allocation candidates for `groups` (in the order given).
pub(crate) async fn search(
    store: &Store,
    groups: &[Group],
    wide: &RequestWide,
) -> Result<Candidates> {
    let has_trees = db::has_trees(store).await?;
    let sharing = db::sharing_providers(store).await?;
    let windowed = windowed_reach(has_trees, &sharing, groups, wide);
    let mut anchor_roots = None;
    let mut root_traits = None;
    if !wide.root_required.is_empty() || !wide.root_forbidden.is_empty() {
        let mut required = HashSet::new();
        for name in &wide.root_required {
            required.insert(trait_id(store, name).await?);
        }
        let mut forbidden = HashSet::new();
        for name in &wide.root_forbidden {
            forbidden.insert(trait_id(store, name).await?);
        }
        if windowed.is_some() {
            // Each window reads its own roots; here only whether any
            // root qualifies, which ends the search as before.
            if db::roots_with_traits_in(store, &required, &forbidden, None, true)
                .await?
                .is_empty()
            {
                return Ok(Candidates::default());
            }
            root_traits = Some((required, forbidden));
        } else {
            let roots = db::roots_with_traits(store, &required, &forbidden).await?;
            if roots.is_empty() {
                return Ok(Candidates::default());
            }
            anchor_roots = Some(roots);
        }
    }
    let mut search = Search {
        store,
        wide,
        has_trees,
        anchor_roots,
        sharing,
        providers: HashMap::new(),
        order: Vec::new(),
        rooms: HashMap::new(),
        class_names: HashMap::new(),
        class_rows: BTreeMap::new(),
        lone_group: groups.len() == 1,
        shared_across_anchors: false,
        multi_group_classes: HashSet::new(),
        class_totals: HashMap::new(),
        suffixes: groups.iter().map(|g| g.suffix.as_str()).collect(),
        same_subtrees: wide
            .same_subtrees
            .iter()
            .map(|suffixes| {
                groups
                    .iter()
                    .enumerate()
                    .filter(|(_, g)| suffixes.contains(&g.suffix))
                    .map(|(index, _)| index)
                    .collect()
            })
            .collect(),
        window: None,
    };
    // Each of the two products (a tree's providers for an unsuffixed
    // group's classes, the groups' candidates) has a budget of its own:
    // when the first runs out, the candidates found are still combined.
    let mut spread_budget = Budget::new(MAX_SEARCH_WORK);
    if let Some(reach) = windowed {
        return search
            .windowed(groups, reach, root_traits.as_ref(), &spread_budget)
            .await;
    }
    // Every group's inventories are read before the first group's trees,
    // so that the trees' read leaves out all of their classes. A group
    // that finds nothing, or fails, still ends the search, as upstream:
    // what the groups after it found is not looked at.
    let resolved = search.groups(groups).await;
    // Each group's candidates, in the groups' order (their suffixes are
    // `search.suffixes`).
    let mut by_group: Vec<Vec<Areq>> = Vec::with_capacity(groups.len());
    for (group, g) in groups.iter().zip(resolved) {
        let Ok(g) = g? else {
            return Ok(Candidates::default());
        };
        search.count_classes(&g);
        let mut areqs = search.one_group(&g, &mut spread_budget).await?;
        if areqs.is_empty() {
            warn_if_spent(&[&spread_budget], groups.len(), 0);
            return Ok(Candidates::default());
        }
        for areq in &mut areqs {
            areq.same_provider = group.use_same_provider();
        }
        by_group.push(areqs);
    }
    Ok(search.finish(by_group, groups.len(), &spread_budget))
}

/// How many candidates a windowed search must find, when one can answer
/// the request: a lone group with resources, in a flat cloud without
/// sharing providers, where `limit` (or `max_allocation_candidates`)
/// keeps the first candidates. Each provider with room is then one
/// candidate, anchored to itself, and the answer holds the first ones by
/// id: reading the providers a range of ids at a time, the search stops
/// once it has enough, rather than reading every provider of a large
/// cloud to keep a thousand.
fn windowed_reach(
    has_trees: bool,
    sharing: &HashSet<ProviderId>,
    groups: &[Group],
    wide: &RequestWide,
) -> Option<usize> {
    match groups {
        [g] if !has_trees
            && sharing.is_empty()
            && !g.resources.is_empty()
            && g.in_tree.is_none() =>
        {
            wide.candidates_kept()
        }
        _ => None,
    }
}

impl Search<'_> {
    /// Adds a group's amounts to the totals by class, noting the classes
    /// more than one group asks for.
    fn count_classes(&mut self, g: &GroupSearch) {
        for r in &g.resources {
            if self.class_totals.contains_key(&r.class) {
                self.multi_group_classes.insert(r.class);
            }
            *self.class_totals.entry(r.class).or_default() += r.amount;
        }
    }

    /// The groups' candidates combined, checked, limited and rendered.
    fn finish(self, by_group: Vec<Vec<Areq>>, groups: usize, spread_budget: &Budget) -> Candidates {
        let mut walk_budget = Budget::new(MAX_SEARCH_WORK);
        let (areqs, summaries) = self.merge(by_group, &mut walk_budget);
        warn_if_spent(&[spread_budget, &walk_budget], groups, areqs.len());
        let (areqs, summaries) = self.exclude_nested(areqs, summaries);
        let (areqs, summaries) = self.limit(areqs, summaries);
        self.render(areqs, &summaries)
    }

    /// The search of [`windowed_reach`]: the group's filters once, then
    /// its classes (and the roots `root_required` allows) a window of
    /// provider ids at a time, in ascending order, until `reach` providers
    /// with room are found or the ids run out. The windows' providers in
    /// order are the whole search's, so the answer is the same.
    async fn windowed(
        mut self,
        groups: &[Group],
        reach: usize,
        root_traits: Option<&(HashSet<TraitId>, HashSet<TraitId>)>,
        spread_budget: &Budget,
    ) -> Result<Candidates> {
        let filtered = self.filters(groups).await;
        let Some(base) = filtered.into_iter().next() else {
            return Ok(Candidates::default());
        };
        let Ok(base) = base? else {
            return Ok(Candidates::default());
        };
        let Some((first, last)) = db::provider_id_bounds(self.store).await? else {
            return Ok(Candidates::default());
        };
        let mut found: Vec<ProviderRoot> = Vec::new();
        let mut from = first;
        let mut width = i64::try_from(reach)
            .unwrap_or(i64::MAX)
            .saturating_mul(2)
            .max(FIRST_WINDOW);
        loop {
            let to = ProviderId::new(from.get().saturating_add(width));
            let window = db::Window { from, to };
            self.window = Some(window);
            let read = self.read_classes(vec![Ok(Ok(base.clone()))]).await;
            if let Some(g) = read.into_iter().next() {
                // A class without room in this window ends only the window.
                if let Ok(g) = g? {
                    let mut these = self.single_providers(&g).await?;
                    if let Some((required, forbidden)) = root_traits {
                        let roots = db::roots_with_traits_in(
                            self.store,
                            required,
                            forbidden,
                            Some(window),
                            false,
                        )
                        .await?;
                        these.retain(|p| roots.contains(&p.root));
                    }
                    found.extend(these);
                }
            }
            if found.len() >= reach || to > last {
                break;
            }
            from = to;
            width = width.saturating_mul(2);
        }
        self.window = None;
        found.truncate(reach);
        self.count_classes(&base);
        let mut areqs = self.single_candidates(&base, found).await?;
        if areqs.is_empty() {
            return Ok(Candidates::default());
        }
        for areq in &mut areqs {
            areq.same_provider = base.same_provider;
        }
        Ok(self.finish(vec![areqs], groups.len(), spread_budget))
    }

    /// Resolves each group's names and reads the providers with room for
    /// each of its resources (upstream's order of checks), in the groups'
    /// order up to the first group that ends the search (finds nothing or
    /// fails), which is the last one returned.
    async fn groups(
        &mut self,
        groups: &[Group],
    ) -> Vec<Result<std::result::Result<GroupSearch, NoneFound>>> {
        let filtered = self.filters(groups).await;
        self.read_classes(filtered).await
    }

    /// Each group's names resolved and its filters read, in the groups'
    /// order up to the first that ends the search.
    async fn filters(
        &mut self,
        groups: &[Group],
    ) -> Vec<Result<std::result::Result<GroupSearch, NoneFound>>> {
        let mut filtered = Vec::with_capacity(groups.len());
        for (index, group) in groups.iter().enumerate() {
            let g = self.group_filters(index, group).await;
            let complete = matches!(g, Ok(Ok(_)));
            filtered.push(g);
            if !complete {
                break;
            }
        }
        filtered
    }

    /// The providers with room for each resource of the groups `filtered`
    /// kept (in [`Search::window`], when set), checked in the groups'
    /// order.
    async fn read_classes(
        &mut self,
        filtered: Vec<Result<std::result::Result<GroupSearch, NoneFound>>>,
    ) -> Vec<Result<std::result::Result<GroupSearch, NoneFound>>> {
        // Every group's classes are read at once, up to one read per
        // core: each read waits for a thread of its own, and one after
        // another they left a core idle while a search ran alone on it;
        // more reads than cores run no sooner and each holds a connection
        // with its page cache, which the process's peak memory carries.
        // Groups asking the same amount of a class in the same place share
        // one read.
        let shape = self.shape();
        let mut keys: Vec<ClassRead> = filtered
            .iter()
            .filter_map(|g| g.as_ref().ok()?.as_ref().ok())
            .flat_map(|g| {
                g.resources.iter().map(|r| ClassRead {
                    class: r.class,
                    amount: r.amount,
                    tree: g.tree_root,
                })
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let store = self.store;
        let window = self.window;
        let reads = keys.iter().copied().map(move |key| {
            db::providers_with_resource(store, shape, key.class, key.amount, key.tree, window)
        });
        let read: Vec<_> = futures_util::stream::iter(reads)
            .buffered(self.wide.reads_at_once.max(1))
            .collect()
            .await;
        let mut read: ClassReads = keys.iter().copied().zip(read).collect();
        // Checked in the groups' order: a group whose class finds nothing
        // ends the search, as upstream, whatever the later ones found.
        let mut resolved = Vec::with_capacity(filtered.len());
        for g in filtered {
            let g = match g {
                Ok(Ok(g)) => g,
                ended => {
                    resolved.push(ended);
                    break;
                }
            };
            let g = self.with_resources(g, &mut read);
            let complete = matches!(g, Ok(Ok(_)));
            resolved.push(g);
            if !complete {
                break;
            }
        }
        resolved
    }

    /// A group's names resolved and its aggregates and tree read: all
    /// of [`GroupSearch`] but the providers with room.
    async fn group_filters(
        &self,
        index: usize,
        group: &Group,
    ) -> Result<std::result::Result<GroupSearch, NoneFound>> {
        let store = self.store;
        let mut resources = Vec::with_capacity(group.resources.len());
        for (name, amount) in &group.resources {
            let id = crate::objects::inventory::resource_class_id(store, store.reader(), name)
                .await?
                .ok_or_else(|| SearchError::ResourceClassNotFound(name.clone()))?;
            resources.push(Amount {
                class: id,
                amount: *amount,
            });
        }
        let mut in_aggregates = HashSet::new();
        if !group.member_of.is_empty() {
            in_aggregates = db::providers_in_aggregates(store, &group.member_of).await?;
            if in_aggregates.is_empty() {
                return Ok(Err(NoneFound));
            }
        }
        let mut required_ids = Vec::with_capacity(group.required_traits.len());
        for any in &group.required_traits {
            let mut ids = HashSet::new();
            for name in any {
                ids.insert(trait_id(store, name).await?);
            }
            required_ids.push(ids);
        }
        let mut forbidden_ids = HashSet::new();
        for name in &group.forbidden_traits {
            forbidden_ids.insert(trait_id(store, name).await?);
        }
        let mut tree_root = None;
        if let Some(uuid) = &group.in_tree {
            match crate::objects::provider::tree_ids(store, store.reader(), uuid).await? {
                Some(tree) => tree_root = Some(tree.root_id),
                None => return Ok(Err(NoneFound)),
            }
        }
        Ok(Ok(GroupSearch {
            index,
            same_provider: group.use_same_provider(),
            resources,
            member_of: group.member_of.clone(),
            in_aggregates,
            forbidden_aggregates: group.forbidden_aggregates.clone(),
            required_names: group.required_traits.clone(),
            required_ids,
            forbidden_names: group.forbidden_traits.clone(),
            forbidden_ids,
            tree_root,
            with_resource: HashMap::new(),
        }))
    }

    /// `g` with the providers that have room for each of its classes,
    /// taken from `read` (copied: a later group may share the read).
    fn with_resources(
        &mut self,
        mut g: GroupSearch,
        read: &mut ClassReads,
    ) -> Result<std::result::Result<GroupSearch, NoneFound>> {
        for r in &g.resources {
            let key = ClassRead {
                class: r.class,
                amount: r.amount,
                tree: g.tree_root,
            };
            let Some(Ok(found)) = read.get_mut(&key) else {
                return match read.remove(&key) {
                    Some(Err(error)) => Err(error.into()),
                    _ => unreachable!("every class of a group is read once"),
                };
            };
            if self.window.is_some() {
                // The windows come in ascending order: the rows stay
                // sorted by provider. (A windowed search has one group,
                // which names each class once.)
                self.class_rows
                    .entry(r.class)
                    .or_default()
                    .append(&mut found.all);
            } else if g.tree_root.is_none() && !self.class_rows.contains_key(&r.class) {
                self.class_rows
                    .insert(r.class, std::mem::take(&mut found.all));
            }
            if found.with_room.is_empty() {
                return Ok(Err(NoneFound));
            }
            g.with_resource.insert(r.class, found.with_room.clone());
        }
        Ok(Ok(g))
    }

    /// How to read `roots` trees: scanned where they are at least a quarter
    /// of the cloud's trees (a scan reads a row for less than a quarter of
    /// what finding it through an index costs), listed otherwise.
    async fn tree_reads(&self, roots: usize) -> Result<db::TreeReads> {
        let cap = roots.saturating_mul(4).saturating_add(1);
        let trees = db::root_count_up_to(self.store, cap).await?;
        Ok(if trees < cap {
            db::TreeReads::Scanned
        } else {
            db::TreeReads::Listed
        })
    }

    fn shape(&self) -> db::Shape {
        if self.has_trees {
            db::Shape::Trees
        } else {
            db::Shape::Flat
        }
    }

    fn in_anchors(&self, root: ProviderId) -> bool {
        self.anchor_roots.as_ref().is_none_or(|a| a.contains(&root))
    }

    /// The candidates of one group.
    async fn one_group(&mut self, g: &GroupSearch, budget: &mut Budget) -> Result<Vec<Areq>> {
        if !g.same_provider && (!self.sharing.is_empty() || self.has_trees) {
            if !g.required_ids.is_empty() {
                let all: HashSet<TraitId> = g.required_ids.iter().flatten().copied().collect();
                if db::providers_with_any_trait(self.store, &all)
                    .await?
                    .is_empty()
                {
                    return Ok(Vec::new());
                }
            }
            let found = self.trees_matching_all(g).await?;
            return self.spread_candidates(g, &found, budget).await;
        }
        let mut found = self.single_providers(g).await?;
        if let Some(reach) = self.reach_known_early() {
            found.truncate(reach);
        }
        self.single_candidates(g, found).await
    }

    /// How many of the providers found for a lone group can reach the
    /// answer, when that is known before their trees are read: without
    /// trees, sharing providers or a `root_required` filter, each provider
    /// found is one candidate, in the order found, so `limit` and
    /// `max_allocation_candidates` keep the first ones (a provider filled
    /// by another writer between the two reads is then missing rather than
    /// replaced by the next). Nova asks for 1,000 candidates; in a larger
    /// cloud the other providers' summaries were read only to be dropped.
    fn reach_known_early(&self) -> Option<usize> {
        if !self.lone_group
            || self.has_trees
            || !self.sharing.is_empty()
            || self.anchor_roots.is_some()
        {
            return None;
        }
        self.wide.candidates_kept()
    }

    /// Sharing providers with room for `class` (in the group's aggregates,
    /// when it names some: as upstream, this narrows the sharing set for
    /// the rest of the request).
    fn sharing_with_room(&mut self, g: &GroupSearch, class: ResourceClassId) -> Vec<ProviderId> {
        if !g.in_aggregates.is_empty() {
            self.sharing.retain(|id| g.in_aggregates.contains(id));
        }
        if self.sharing.is_empty() {
            return Vec::new();
        }
        let mut ids: Vec<ProviderId> = g.with_resource[&class]
            .iter()
            .map(|p| p.provider)
            .filter(|id| self.sharing.contains(id))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The providers (with their anchor roots and classes) that together
    /// can satisfy every resource of an unsuffixed group, in trees (or
    /// with sharing providers) that have room for all of them.
    async fn trees_matching_all(&mut self, g: &GroupSearch) -> Result<Vec<Holder>> {
        let bad_aggregates = if g.forbidden_aggregates.is_empty() {
            HashSet::new()
        } else {
            db::providers_in_aggregates(self.store, std::slice::from_ref(&g.forbidden_aggregates))
                .await?
        };
        // Sorted and unique (as a set, in a list: cheaper to build).
        let mut all: Vec<Holder> = Vec::new();
        for &Amount { class, .. } in &g.resources {
            let mut these: Vec<Holder> = g.with_resource[&class]
                .iter()
                .map(|p| Holder {
                    provider: p.provider,
                    root: p.root,
                    class,
                })
                .collect();
            let sharing = self.sharing_with_room(g, class);
            if !sharing.is_empty() && g.tree_root.is_none() {
                for anchor in db::anchors_for_sharing(self.store, &sharing).await? {
                    these.push(Holder {
                        provider: anchor.provider,
                        root: anchor.root,
                        class,
                    });
                    self.shared_across_anchors = true;
                }
            }
            // `sort`, not `sort_unstable`, here and for `all`: these lists
            // are a few sorted runs (the class's providers, the sharing
            // providers' anchors; the classes before and this one), which
            // the stable sort finds and merges and the unstable one sorts
            // anew (docs/decisions.md). Equal elements are equal integers:
            // the order is the same.
            these.sort();
            these.dedup();
            if let Some(anchors) = &self.anchor_roots {
                these.retain(|h| anchors.contains(&h.root));
                if these.is_empty() {
                    return Ok(Vec::new());
                }
            }
            if !g.member_of.is_empty() {
                these.retain(|h| {
                    g.in_aggregates.contains(&h.provider) || g.in_aggregates.contains(&h.root)
                });
                if these.is_empty() {
                    return Ok(Vec::new());
                }
            }
            if !g.forbidden_aggregates.is_empty() {
                these.retain(|h| {
                    !bad_aggregates.contains(&h.provider) && !bad_aggregates.contains(&h.root)
                });
                if these.is_empty() {
                    return Ok(Vec::new());
                }
            }
            if all.is_empty() {
                all = these;
            } else {
                let trees_in_both: HashSet<ProviderId> = {
                    let mine: HashSet<ProviderId> = all.iter().map(|h| h.root).collect();
                    these
                        .iter()
                        .map(|h| h.root)
                        .filter(|r| mine.contains(r))
                        .collect()
                };
                all.extend(these);
                all.retain(|h| trees_in_both.contains(&h.root));
                all.sort();
                all.dedup();
            }
            if all.is_empty() {
                return Ok(Vec::new());
            }
        }
        if (g.required_ids.is_empty() && g.forbidden_ids.is_empty()) || !self.sharing.is_empty() {
            return Ok(all);
        }
        // Trees whose providers (those not carrying a forbidden trait)
        // collectively have the required traits.
        let mut ids: Vec<ProviderId> = all.iter().map(|h| h.provider).collect();
        ids.dedup();
        let roots: HashMap<ProviderId, ProviderId> = db::roots_of(self.store, &ids)
            .await?
            .into_iter()
            .map(|p| (p.provider, p.root))
            .collect();
        let traits = db::trait_ids_of(self.store, &ids).await?;
        let none = HashSet::new();
        let good: Vec<ProviderId> = ids
            .iter()
            .copied()
            .filter(|id| {
                traits
                    .get(id)
                    .unwrap_or(&none)
                    .is_disjoint(&g.forbidden_ids)
            })
            .collect();
        let mut keep: HashSet<ProviderRoot> = HashSet::new();
        let kept = |provider: &ProviderId, root: &ProviderId| ProviderRoot {
            provider: *provider,
            root: *root,
        };
        if g.required_ids.is_empty() {
            let good_roots: HashSet<ProviderId> = good
                .iter()
                .filter_map(|id| roots.get(id))
                .copied()
                .collect();
            for (id, root) in &roots {
                if good_roots.contains(root) {
                    keep.insert(kept(id, root));
                }
            }
        } else {
            let mut tree_traits: HashMap<ProviderId, HashSet<TraitId>> = HashMap::new();
            for id in &good {
                if let (Some(root), Some(t)) = (roots.get(id), traits.get(id)) {
                    tree_traits.entry(*root).or_default().extend(t);
                }
            }
            for (root, provided) in &tree_traits {
                if g.required_ids.iter().all(|any| !any.is_disjoint(provided)) {
                    for (id, r) in &roots {
                        if r == root {
                            keep.insert(kept(id, r));
                        }
                    }
                }
            }
        }
        all.retain(|h| {
            keep.contains(&ProviderRoot {
                provider: h.provider,
                root: h.root,
            })
        });
        Ok(all)
    }

    /// Candidates of an unsuffixed group spread over a tree: per anchor,
    /// one provider for each class, keeping the combinations whose
    /// providers together have the required traits and none has a
    /// forbidden one.
    async fn spread_candidates(
        &mut self,
        g: &GroupSearch,
        found: &[Holder],
        budget: &mut Budget,
    ) -> Result<Vec<Areq>> {
        if found.is_empty() {
            return Ok(Vec::new());
        }
        let roots: BTreeSet<ProviderId> = found.iter().flat_map(|h| [h.provider, h.root]).collect();
        self.summarize(&roots).await?;
        let amounts: HashMap<ResourceClassId, i64> =
            g.resources.iter().map(|r| (r.class, r.amount)).collect();
        // (anchor, class, provider), sorted: by anchor, by class id, the
        // providers. `found` is in provider order, so most of this list
        // is already in anchor order (the roots' own rows, each sharing
        // provider's anchors): the stable sort merges those runs, where
        // `sort_unstable` would sort the whole list anew.
        let mut by_tree: Vec<ByTree> = found
            .iter()
            .map(|h| ByTree {
                root: h.root,
                class: h.class,
                provider: h.provider,
            })
            .collect();
        by_tree.sort();
        // A tree's parts by class, one class after another (`lists`: each
        // class's range), reused from tree to tree.
        let mut class_parts: Vec<Part> = Vec::new();
        let mut lists: SmallVec<[std::ops::Range<usize>; 4]> = SmallVec::new();
        let mut out = Vec::new();
        // Sized ahead for a candidate per row (one class, one provider
        // each): growing it rehashed every key at each doubling.
        let mut seen = HashSet::with_capacity(by_tree.len());
        // The work of one combination: its parts, and the required traits
        // looked up in their traits.
        let required: usize = g.required_names.iter().map(BTreeSet::len).sum();
        'trees: for tree in by_tree.chunk_by(|a, b| a.root == b.root) {
            let anchor = tree[0].root;
            if !self.providers.contains_key(&anchor) {
                continue;
            }
            class_parts.clear();
            lists.clear();
            for rows in tree.chunk_by(|a, b| a.class == b.class) {
                let class = rows[0].class;
                let start = class_parts.len();
                class_parts.extend(
                    rows.iter()
                        .map(|row| row.provider)
                        .filter(|id| self.traits_of(*id).all(|t| !g.forbidden_names.contains(t)))
                        .map(|id| Part {
                            provider: id,
                            class,
                            amount: amounts[&class],
                        }),
                );
                // A class no provider of the tree can give: no candidate.
                if class_parts.len() == start {
                    continue 'trees;
                }
                lists.push(start..class_parts.len());
            }
            let mut idx: SmallVec<[usize; 4]> = smallvec![0; lists.len()];
            'product: loop {
                if !budget.spend(CHECK_WORK + CANDIDATE_WORK * lists.len() + required) {
                    break 'trees;
                }
                let parts: Vec<Part> = idx
                    .iter()
                    .zip(&lists)
                    .map(|(i, range)| class_parts[range.start + i])
                    .collect();
                let has_required = g.required_names.is_empty() || {
                    let traits: HashSet<&str> = parts
                        .iter()
                        .flat_map(|p| self.traits_of(p.provider))
                        .map(String::as_str)
                        .collect();
                    g.required_names
                        .iter()
                        .all(|any| any.iter().any(|t| traits.contains(t.as_str())))
                };
                if has_required {
                    let mut mappings: Mappings = parts
                        .iter()
                        .map(|p| Mapping {
                            group: g.index,
                            provider: p.provider,
                        })
                        .collect();
                    mappings.sort_unstable();
                    mappings.dedup();
                    let areq = Areq {
                        anchor,
                        same_provider: g.same_provider,
                        parts,
                        mappings,
                    };
                    if seen.insert((anchor, areq.key())) {
                        out.push(areq);
                    }
                }
                // The next combination (odometer).
                let mut position = lists.len();
                loop {
                    if position == 0 {
                        break 'product;
                    }
                    position -= 1;
                    idx[position] += 1;
                    if idx[position] < lists[position].len() {
                        break;
                    }
                    idx[position] = 0;
                }
            }
        }
        Ok(out)
    }

    fn traits_of(&self, id: ProviderId) -> impl Iterator<Item = &String> {
        self.providers
            .get(&id)
            .map(|p| p.traits.iter())
            .into_iter()
            .flatten()
    }

    /// The providers (with their roots) that alone satisfy a group
    /// (upstream's `get_provider_ids_matching`).
    async fn single_providers(&self, g: &GroupSearch) -> Result<Vec<ProviderRoot>> {
        let store = self.store;
        // `filtered`: None when a filter left nothing; an empty set when
        // no filter applied.
        let mut filtered: HashSet<ProviderId> = HashSet::new();
        if !g.required_ids.is_empty() {
            filtered = db::providers_with_all_traits(store, &g.required_ids).await?;
            if filtered.is_empty() {
                return Ok(Vec::new());
            }
        }
        if !g.member_of.is_empty() {
            if filtered.is_empty() {
                filtered = g.in_aggregates.clone();
            } else {
                filtered.retain(|id| g.in_aggregates.contains(id));
            }
            if filtered.is_empty() {
                return Ok(Vec::new());
            }
        }
        let mut forbidden: HashSet<ProviderId> = HashSet::new();
        if !g.forbidden_aggregates.is_empty() {
            let bad =
                db::providers_in_aggregates(store, std::slice::from_ref(&g.forbidden_aggregates))
                    .await?;
            if !filtered.is_empty() {
                filtered.retain(|id| !bad.contains(id));
                if filtered.is_empty() {
                    return Ok(Vec::new());
                }
            }
            forbidden.extend(bad);
        }
        if !g.forbidden_ids.is_empty() {
            let bad = db::providers_with_any_trait(store, &g.forbidden_ids).await?;
            if !filtered.is_empty() {
                filtered.retain(|id| !bad.contains(id));
                if filtered.is_empty() {
                    return Ok(Vec::new());
                }
            }
            forbidden.extend(bad);
        }
        let mut last: Vec<ProviderRoot> = Vec::new();
        for (i, r) in g.resources.iter().enumerate() {
            let with = &g.with_resource[&r.class];
            let ids: HashSet<ProviderId> = with.iter().map(|p| p.provider).collect();
            if i == 0 && filtered.is_empty() {
                filtered = ids;
                filtered.retain(|id| !forbidden.contains(id));
            } else {
                filtered.retain(|id| ids.contains(id));
            }
            if filtered.is_empty() {
                return Ok(Vec::new());
            }
            last.clone_from(with);
        }
        if g.resources.is_empty() {
            // A resourceless group: the providers the filters kept (none
            // when no filter applied, as upstream).
            let mut ids: Vec<ProviderId> = filtered
                .iter()
                .copied()
                .filter(|id| !forbidden.contains(id))
                .collect();
            ids.sort_unstable();
            last = db::roots_of(store, &ids).await?;
        }
        last.retain(|p| filtered.contains(&p.provider));
        last.sort_unstable();
        Ok(last)
    }

    /// Candidates of a group satisfied by one provider: each provider
    /// found, anchored to its own tree and, when it shares, to the trees
    /// in an aggregate with it.
    async fn single_candidates(
        &mut self,
        g: &GroupSearch,
        found: Vec<ProviderRoot>,
    ) -> Result<Vec<Areq>> {
        if found.is_empty() {
            return Ok(Vec::new());
        }
        let roots: BTreeSet<ProviderId> = found.iter().map(|p| p.root).collect();
        self.summarize(&roots).await?;
        let mut out = Vec::new();
        for ProviderRoot { provider: id, root } in found {
            let Some(info) = self.providers.get(&id) else {
                continue;
            };
            let areq = Areq {
                anchor: info.root_id,
                same_provider: g.same_provider,
                parts: g
                    .resources
                    .iter()
                    .map(|r| Part {
                        provider: id,
                        class: r.class,
                        amount: r.amount,
                    })
                    .collect(),
                mappings: smallvec![Mapping {
                    group: g.index,
                    provider: id,
                }],
            };
            let shares = info.traits.iter().any(|t| t == db::SHARES_VIA_AGGREGATE);
            if !shares {
                if self.in_anchors(root) {
                    out.push(areq);
                }
                continue;
            }
            if self.in_anchors(root) {
                out.push(areq.clone());
            }
            for ProviderRoot { root: anchor, .. } in
                db::anchors_for_sharing(self.store, &[id]).await?
            {
                if anchor == root || !self.in_anchors(anchor) {
                    continue;
                }
                let mut copy = areq.clone();
                copy.anchor = anchor;
                out.push(copy);
                self.shared_across_anchors = true;
            }
        }
        Ok(out)
    }

    /// Reads the trees of `roots` not read yet into the summaries.
    async fn summarize(&mut self, roots: &BTreeSet<ProviderId>) -> Result<()> {
        let new: Vec<ProviderId> = roots
            .iter()
            .copied()
            .filter(|r| !self.providers.contains_key(r))
            .collect();
        if new.is_empty() {
            return Ok(());
        }
        let known: Vec<ResourceClassId> = self.class_rows.keys().copied().collect();
        let reads = self.tree_reads(new.len()).await?;
        let trees = db::trees(self.store, self.shape(), reads, &new, &known).await?;
        // Sized ahead: a large answer's trees hold thousands of providers
        // and inventories, and growing the maps rehashed them over and
        // over.
        let mut fresh = HashSet::with_capacity(trees.providers.len());
        self.providers.reserve(trees.providers.len());
        self.order.reserve(trees.providers.len());
        let known_rows: usize = self
            .class_rows
            .values()
            .map(|rows| rows.len().min(trees.providers.len()))
            .sum();
        self.rooms.reserve(trees.inventories.len() + known_rows);
        let no_traits: Arc<[String]> = Arc::from([]);
        for p in trees.providers {
            if self.providers.contains_key(&p.id) {
                continue;
            }
            fresh.insert(p.id);
            self.order.push(p.id);
            self.providers.insert(
                p.id,
                ProviderInfo {
                    traits: trees
                        .traits
                        .get(&p.id)
                        .map_or_else(|| Arc::clone(&no_traits), Arc::clone),
                    uuid: p.uuid,
                    parent_id: p.parent_id,
                    parent_uuid: p.parent_uuid,
                    root_id: p.root_id,
                    root_uuid: p.root_uuid,
                    resources: Vec::new(),
                },
            );
        }
        for inv in trees.inventories {
            if !fresh.contains(&inv.provider) {
                continue;
            }
            self.class_names
                .entry(inv.class_id)
                .or_insert_with(|| Arc::clone(&inv.class));
            let key = InventoryKey {
                provider: inv.provider,
                class: inv.class_id,
            };
            self.rooms.insert(
                key,
                Room {
                    capacity: inv.capacity,
                    used: inv.used,
                    max_unit: inv.max_unit,
                },
            );
            if let Some(p) = self.providers.get_mut(&inv.provider) {
                p.resources.push(ProviderResource {
                    class_id: inv.class_id,
                    class: inv.class,
                    capacity: inv.capacity,
                    used: inv.used,
                });
            }
        }
        // The inventories of the classes the trees read left out.
        for (class, rows) in &self.class_rows {
            let Some(name) = trees.class_names.get(class) else {
                continue;
            };
            let mut named = false;
            for id in &fresh {
                let Ok(at) = rows.binary_search_by_key(id, |row| row.provider) else {
                    continue;
                };
                let room = rows[at].room;
                if !named {
                    self.class_names.insert(*class, Arc::clone(name));
                    named = true;
                }
                let key = InventoryKey {
                    provider: *id,
                    class: *class,
                };
                self.rooms.insert(key, room);
                if let Some(p) = self.providers.get_mut(id) {
                    p.resources.push(ProviderResource {
                        class_id: *class,
                        class: Arc::clone(name),
                        capacity: room.capacity,
                        used: room.used,
                    });
                }
            }
        }
        if !self.class_rows.is_empty() {
            for id in &fresh {
                if let Some(p) = self.providers.get_mut(id) {
                    p.resources.sort_unstable_by_key(|r| r.class_id);
                }
            }
        }
        Ok(())
    }

    /// Whether the suffixed groups of `areqs` use distinct providers.
    fn isolated(areqs: &[&Areq]) -> bool {
        // A few providers: a list searched in order costs less than a set.
        let mut seen: SmallVec<[ProviderId; 8]> = SmallVec::new();
        areqs
            .iter()
            .filter(|a| a.same_provider)
            .flat_map(|a| a.mappings.iter().map(|m| m.provider))
            .all(|id| {
                let new = !seen.contains(&id);
                seen.push(id);
                new
            })
    }

    /// Whether a partial combination can still become a candidate, when
    /// its leading requests (all but the last) can together, as
    /// [`Combinations::next`] asks: only the last request's providers and
    /// parts can make it fail (isolation where asked, room), so the
    /// earlier parts are not checked again for each prefix the walk
    /// extends.
    fn viable_with_last(&self, areqs: &[&Areq]) -> bool {
        let Some((last, earlier)) = areqs.split_last() else {
            return true;
        };
        (!self.wide.isolate || Self::isolated_with(earlier, last)) && self.fits_with(earlier, last)
    }

    /// [`Self::isolated`] of `earlier` and `last`, where `earlier` is.
    fn isolated_with(earlier: &[&Areq], last: &Areq) -> bool {
        if !last.same_provider {
            return true;
        }
        let in_last = |id: ProviderId| last.mappings.iter().any(|m| m.provider == id);
        Self::isolated(&[last])
            && earlier
                .iter()
                .filter(|a| a.same_provider)
                .flat_map(|a| a.mappings.iter())
                .all(|m| !in_last(m.provider))
    }

    /// Whether `earlier` and `last` together stay within every capacity
    /// and max_unit, where `earlier` does: the totals of the classes
    /// `last` asks of its providers, with what the earlier requests ask of
    /// the same, within room. (Amounts are positive, so a total within
    /// room was within it at every step.) A request has a few parts:
    /// searching them costs less than a map made for each check.
    fn fits_with(&self, earlier: &[&Areq], last: &Areq) -> bool {
        last.parts.iter().all(|part| {
            let key = part.inventory();
            let total: i64 = earlier
                .iter()
                .copied()
                .chain(std::iter::once(last))
                .flat_map(|a| a.parts.iter())
                .filter(|p| p.inventory() == key)
                .map(|p| p.amount)
                .sum();
            self.rooms
                .get(&key)
                .is_some_and(|room| room.used + total <= room.capacity && total <= room.max_unit)
        })
    }

    /// Each summarized provider's parent, for [`Self::same_subtree`]
    /// (made once per search: once per candidate, it cost a pass over
    /// every provider read).
    fn parents(&self) -> HashMap<ProviderId, ProviderId> {
        self.providers
            .iter()
            .filter_map(|(id, p)| Some((*id, p.parent_id?)))
            .collect()
    }

    /// Whether, for each `same_subtree`, the providers of its groups all
    /// sit under one of them (`parents` from [`Self::parents`]).
    fn same_subtree(&self, areqs: &[&Areq], parents: &HashMap<ProviderId, ProviderId>) -> bool {
        self.same_subtrees.iter().all(|groups| {
            // A few providers: a sorted list costs less than a set.
            let mut ids: SmallVec<[ProviderId; 8]> = areqs
                .iter()
                .flat_map(|a| a.mappings.iter())
                .filter(|m| groups.contains(&m.group) && self.providers.contains_key(&m.provider))
                .map(|m| m.provider)
                .collect();
            ids.sort_unstable();
            ids.dedup();
            ids.len() <= 1
                || ids
                    .iter()
                    .any(|top| ids.iter().all(|id| is_within(*id, *top, parents)))
        })
    }

    /// Whether the tree anchored at `anchor` has, over all the providers
    /// its candidates use, enough capacity of each class several groups
    /// ask for (a quick way to skip trees that cannot fit).
    fn enough_overall(&self, lists: &[Vec<&Areq>]) -> bool {
        if self.multi_group_classes.is_empty() {
            return true;
        }
        let providers: HashSet<ProviderId> = lists
            .iter()
            .flatten()
            .flat_map(|a| a.parts.iter().map(|p| p.provider))
            .collect();
        self.multi_group_classes.iter().all(|class| {
            let available: i64 = providers
                .iter()
                .filter_map(|p| {
                    self.rooms.get(&InventoryKey {
                        provider: *p,
                        class: *class,
                    })
                })
                .map(|r| r.capacity)
                .sum();
            self.class_totals.get(class).copied().unwrap_or(0) <= available
        })
    }

    /// Combines the groups' candidates per anchor into whole candidates.
    fn merge(&self, by_group: Vec<Vec<Areq>>, budget: &mut Budget) -> (Vec<Areq>, Vec<ProviderId>) {
        let out = if self.lone_group
            && !self.shared_across_anchors
            && self.wide.same_subtrees.is_empty()
            && self.wide.strategy == CandidateStrategy::DepthFirst
        {
            let areqs = by_group.into_iter().next().unwrap_or_default();
            self.lone_group_candidates(areqs, budget)
        } else {
            self.combinations(&by_group, budget)
        };
        if out.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let summaries = self.in_trees_of(&out, self.order.iter().copied());
        (out, summaries)
    }

    /// The providers of `summaries`, in their order, whose trees hold a
    /// part of one of `areqs`.
    fn in_trees_of(
        &self,
        areqs: &[Areq],
        summaries: impl IntoIterator<Item = ProviderId>,
    ) -> Vec<ProviderId> {
        let trees: HashSet<ProviderId> = areqs
            .iter()
            .flat_map(|a| a.parts.iter())
            .filter_map(|p| self.providers.get(&p.provider))
            .map(|p| p.root_id)
            .collect();
        summaries
            .into_iter()
            .filter(|id| {
                self.providers
                    .get(id)
                    .is_some_and(|p| trees.contains(&p.root_id))
            })
            .collect()
    }

    /// What [`Self::combinations`] makes of a lone group's candidates,
    /// without copying them: each is a whole candidate, taken by anchor in
    /// the order the anchors are first met, while it fits, up to
    /// [`Self::enough`], spending the budget as the walk would. No two are
    /// the same, as no sharing provider was anchored outside its tree.
    fn lone_group_candidates(&self, areqs: Vec<Areq>, budget: &mut Budget) -> Vec<Areq> {
        let mut first_met: HashMap<ProviderId, usize> = HashMap::new();
        for areq in &areqs {
            let next = first_met.len();
            first_met.entry(areq.anchor).or_insert(next);
        }
        let mut areqs: Vec<(usize, Areq)> = areqs
            .into_iter()
            .map(|a| (first_met[&a.anchor], a))
            .collect();
        areqs.sort_by_key(|(anchor, _)| *anchor);
        let enough = self.enough();
        let mut out = Vec::new();
        for (_, mut areq) in areqs {
            if !budget.spend(CHECK_WORK + areq.parts.len()) {
                break;
            }
            if !self.fits_with(&[], &areq) {
                continue;
            }
            if enough.is_some_and(|m| out.len() >= m) || !budget.spend(candidate_work(&[&areq])) {
                break;
            }
            areq.same_provider = false;
            out.push(areq);
        }
        out
    }

    /// Walks the combinations of the groups' candidates per anchor.
    fn combinations(&self, by_group: &[Vec<Areq>], budget: &mut Budget) -> Vec<Areq> {
        // Anchors in the order first met; per anchor, per group (in the
        // groups' order), the candidates.
        let mut anchors: Vec<ProviderId> = Vec::new();
        let mut lists: HashMap<ProviderId, Vec<Vec<&Areq>>> = HashMap::new();
        for (n, areqs) in by_group.iter().enumerate() {
            for areq in areqs {
                let entry = lists.entry(areq.anchor).or_insert_with(|| {
                    anchors.push(areq.anchor);
                    vec![Vec::new(); by_group.len()]
                });
                entry[n].push(areq);
            }
        }
        let mut walks: Vec<Combinations<'_>> = anchors
            .iter()
            .filter_map(|anchor| lists.remove(anchor))
            .filter(|l| l.iter().all(|g| !g.is_empty()) && self.enough_overall(l))
            .map(Combinations::new)
            .collect();
        let mut out: Vec<Areq> = Vec::new();
        let enough = self.enough();
        // Sized ahead for a candidate per anchor, as many as are asked for
        // at most: growing it rehashed every key at each doubling.
        let mut seen = HashSet::with_capacity(enough.map_or(walks.len(), |m| m.min(walks.len())));
        let full = |out: &Vec<Areq>| enough.is_some_and(|m| out.len() >= m);
        let parents = if self.wide.same_subtrees.is_empty() {
            HashMap::new()
        } else {
            self.parents()
        };
        let mut take = |combo: Combo<'_>, out: &mut Vec<Areq>| {
            if !self.same_subtree(&combo, &parents) {
                return;
            }
            let areq = consolidate(&combo);
            if seen.insert(areq.key()) {
                out.push(areq);
            }
        };
        match self.wide.strategy {
            CandidateStrategy::DepthFirst => {
                'walks: for walk in &mut walks {
                    while let Some(combo) = walk.next(|p| self.viable_with_last(p), budget) {
                        if full(&out) || !budget.spend(candidate_work(&combo)) {
                            break 'walks;
                        }
                        take(combo, &mut out);
                    }
                }
            }
            CandidateStrategy::BreadthFirst => {
                while !walks.is_empty() && !full(&out) {
                    walks.retain_mut(|walk| {
                        if full(&out) {
                            return true;
                        }
                        match walk.next(|p| self.viable_with_last(p), budget) {
                            Some(combo) if budget.spend(candidate_work(&combo)) => {
                                take(combo, &mut out);
                                true
                            }
                            _ => false,
                        }
                    });
                }
            }
        }
        out
    }

    /// How many candidates the walk may stop at: `max_allocation_candidates`,
    /// and `limit` too when no later step drops candidates (before 1.29 on
    /// a cloud with trees, [`Self::exclude_nested`] does), as `limit`
    /// keeps the first ones of the whole answer. Nova asks for 1,000: a
    /// walk over trees offering millions of combinations stops there.
    fn enough(&self) -> Option<usize> {
        let limit = self
            .wide
            .limit_found_first()
            .filter(|_| self.wide.nested_aware || !self.has_trees);
        match (limit, self.wide.max_candidates) {
            (Some(limit), Some(max)) => Some(limit.min(max)),
            (limit, max) => limit.or(max),
        }
    }

    /// Before 1.29: only candidates with at most one provider per tree,
    /// and only their providers in the summaries (when trees exist).
    fn exclude_nested(
        &self,
        areqs: Vec<Areq>,
        summaries: Vec<ProviderId>,
    ) -> (Vec<Areq>, Vec<ProviderId>) {
        if self.wide.nested_aware || !self.has_trees {
            return (areqs, summaries);
        }
        let mut used = HashSet::new();
        let kept: Vec<Areq> = areqs
            .into_iter()
            .filter(|a| {
                let providers: HashSet<ProviderId> = a.parts.iter().map(|p| p.provider).collect();
                let roots: HashSet<ProviderId> = providers
                    .iter()
                    .filter_map(|p| self.providers.get(p))
                    .map(|p| p.root_id)
                    .collect();
                let ok = providers.len() == roots.len();
                if ok {
                    used.extend(providers);
                }
                ok
            })
            .collect();
        let summaries = summaries
            .into_iter()
            .filter(|id| used.contains(id))
            .collect();
        (kept, summaries)
    }

    /// `limit`: the first candidates (a random sample of them with
    /// `randomize`), and the summaries of their trees. With `randomize`
    /// and nothing to cut, the candidates are shuffled, as upstream's.
    fn limit(
        &self,
        mut areqs: Vec<Areq>,
        summaries: Vec<ProviderId>,
    ) -> (Vec<Areq>, Vec<ProviderId>) {
        if self.wide.randomize {
            areqs.shuffle(&mut rand::rng());
        }
        let Some(limit) = self.wide.limit else {
            return (areqs, summaries);
        };
        if limit == 0 || limit >= areqs.len() {
            return (areqs, summaries);
        }
        areqs.truncate(limit);
        let summaries = self.in_trees_of(&areqs, summaries);
        (areqs, summaries)
    }

    /// The answer, made from what the search found. The search is used
    /// up: what only the search needed is freed first, and the
    /// summaries take their providers' data instead of copies, so that a
    /// large answer is not held twice.
    fn render(self, areqs: Vec<Areq>, summaries: &[ProviderId]) -> Candidates {
        let Search {
            mut providers,
            class_names,
            suffixes,
            rooms,
            class_rows,
            ..
        } = self;
        drop((rooms, class_rows));
        let suffixes: Vec<Arc<str>> = suffixes.iter().map(|s| Arc::from(*s)).collect();
        let uuid = |providers: &HashMap<ProviderId, ProviderInfo>, id: &ProviderId| {
            providers
                .get(id)
                .map_or_else(|| Arc::from(""), |p| p.uuid.clone())
        };
        let requests = areqs
            .into_iter()
            .map(|a| AllocationRequest {
                resources: a
                    .parts
                    .iter()
                    .map(|p| {
                        (
                            uuid(&providers, &p.provider),
                            class_names
                                .get(&p.class)
                                .map_or_else(|| Arc::from(""), Arc::clone),
                            p.amount,
                        )
                    })
                    .collect(),
                mappings: answer_mappings(&a.mappings, &suffixes, |id| uuid(&providers, id)),
            })
            .collect();
        let summaries = summaries
            .iter()
            .filter_map(|id| providers.remove(id))
            .map(|p| Summary {
                uuid: p.uuid,
                parent_uuid: p.parent_uuid,
                root_uuid: p.root_uuid,
                resources: p
                    .resources
                    .into_iter()
                    .map(|r| SummaryResource {
                        class: r.class,
                        capacity: r.capacity,
                        used: r.used,
                    })
                    .collect(),
                traits: p.traits,
            })
            .collect();
        Candidates {
            requests,
            summaries,
        }
    }
}

/// A candidate's mappings as the answer's: by suffix (`suffixes`, by
/// group index), in suffix order, each suffix's uuids sorted and unique.
fn answer_mappings(
    mappings: &Mappings,
    suffixes: &[Arc<str>],
    uuid: impl Fn(&ProviderId) -> Arc<str>,
) -> Vec<GroupProviders> {
    let mut pairs: SmallVec<[(&Arc<str>, Arc<str>); 4]> = mappings
        .iter()
        .map(|m| (&suffixes[m.group], uuid(&m.provider)))
        .collect();
    pairs.sort_unstable_by(|(s1, u1), (s2, u2)| (&**s1, &**u1).cmp(&(&**s2, &**u2)));
    // `mappings` is sorted by group index, and each group has its suffix.
    let groups = 1 + mappings
        .windows(2)
        .filter(|w| w[0].group != w[1].group)
        .count();
    let mut out: Vec<GroupProviders> = Vec::with_capacity(groups);
    for (suffix, uuid) in pairs {
        match out.last_mut() {
            Some((last, uuids)) if **last == **suffix => {
                if uuids.last() != Some(&uuid) {
                    uuids.push(uuid);
                }
            }
            _ => out.push((Arc::clone(suffix), smallvec![uuid])),
        }
    }
    out
}

/// Whether `id` is `top` or below it, by `parents` (child to parent). A
/// loop (a corrupt tree) ends the walk once it has taken as many steps as
/// there are parents.
fn is_within(id: ProviderId, top: ProviderId, parents: &HashMap<ProviderId, ProviderId>) -> bool {
    let mut here = id;
    for _ in 0..=parents.len() {
        if here == top {
            return true;
        }
        match parents.get(&here) {
            Some(parent) => here = *parent,
            None => return false,
        }
    }
    false
}

/// Up to this many parts, [`consolidate`] finds a part's provider and
/// class by searching the parts rather than with a map.
const FEW_PARTS: usize = 16;

/// One request from a combination of the groups' requests: the amounts of
/// a provider and class added up, the mappings joined.
fn consolidate(areqs: &[&Areq]) -> Areq {
    let count: usize = areqs.iter().map(|a| a.parts.len()).sum();
    let mut parts: Vec<Part> = Vec::with_capacity(count);
    // Where each (provider, class) is in `parts`, for a combination of
    // many parts (an unsuffixed group over a large tree), where a search
    // of `parts` for each part would cost the square of the parts. Most
    // combinations have a few, and the search costs less than a map.
    let mut at: Option<HashMap<InventoryKey, usize>> =
        (count > FEW_PARTS).then(|| HashMap::with_capacity(count));
    let mut mappings = Mappings::new();
    for areq in areqs {
        for part in &areq.parts {
            let key = part.inventory();
            let found = match &at {
                Some(at) => at.get(&key).copied(),
                None => parts.iter().position(|p| p.inventory() == key),
            };
            match found {
                Some(n) => parts[n].amount += part.amount,
                None => {
                    if let Some(at) = &mut at {
                        at.insert(key, parts.len());
                    }
                    parts.push(*part);
                }
            }
        }
        mappings.extend_from_slice(&areq.mappings);
    }
    mappings.sort_unstable();
    mappings.dedup();
    Areq {
        anchor: areqs.first().map_or(ProviderId::new(0), |a| a.anchor),
        same_provider: false,
        parts,
        mappings,
    }
}

/// The most work one request's search may spend on each of its two
/// products: the providers of a tree for the classes of an unsuffixed
/// group, and the groups' candidates into whole candidates. A unit is
/// about one part of a combination looked at (a few tens of nanoseconds:
/// a budget is about half a second). Both products are pruned where they
/// can be, but some requests leave little to prune: 13 groups of one unit
/// each, with `group_policy=isolate`, over a tree of 12 providers of two
/// units each explore every arrangement of the 12 (about 10^9) and find
/// none; an unsuffixed group of 30 classes over a tree of 10 providers
/// holding each has 10^30 combinations. Past this the product stops, a
/// warning is logged, and the answer holds the candidates complete by
/// then, as with `max_allocation_candidates`. Ordinary answers stay far
/// below it: a candidate of a single group on one provider costs
/// [`CHECK_WORK`] twice and [`CANDIDATE_WORK`] + 1 (17 units, so about
/// 600,000 providers fit), and `limit` (Nova asks for 1,000) ends the walk
/// early.
const MAX_SEARCH_WORK: usize = 10_000_000;

/// Logs that a budget ran out, if one did.
fn warn_if_spent(budgets: &[&Budget], groups: usize, candidates: usize) {
    if budgets.iter().any(|b| b.is_spent()) {
        tracing::warn!(
            groups,
            candidates,
            "the allocation candidate search stopped after {MAX_SEARCH_WORK} units of work \
             combining providers and request groups; the answer holds the candidates \
             complete by then"
        );
    }
}

/// The work of one check besides its parts (its allocations).
const CHECK_WORK: usize = 4;

/// The work of a candidate made, by part (its parts copied, summed,
/// sorted and hashed to be told from the others).
const CANDIDATE_WORK: usize = 8;

/// The work of making a candidate of `combo`.
fn candidate_work(combo: &[&Areq]) -> usize {
    CHECK_WORK + CANDIDATE_WORK * combo.iter().map(|a| a.parts.len()).sum::<usize>()
}

/// What is left of the search's work (see [`MAX_SEARCH_WORK`]).
#[derive(Debug)]
struct Budget {
    left: usize,
    spent: bool,
}

impl Budget {
    fn new(work: usize) -> Self {
        Budget {
            left: work,
            spent: false,
        }
    }

    /// Takes `work` units; false (and spent for good) when fewer are left.
    fn spend(&mut self, work: usize) -> bool {
        if self.spent || work > self.left {
            self.spent = true;
            return false;
        }
        self.left -= work;
        true
    }

    fn is_spent(&self) -> bool {
        self.spent
    }
}

/// One request per group, or the first groups' (a few: kept inline).
type Combo<'a> = SmallVec<[&'a Areq; 8]>;

/// The combinations (one request per group) of one anchor, walked depth
/// first, skipping every completion of a partial combination that is not
/// viable.
struct Combinations<'a> {
    lists: Vec<Vec<&'a Areq>>,
    /// The choice at each depth.
    index: Vec<usize>,
    /// How many leading choices are fixed (and viable together).
    depth: usize,
    done: bool,
}

impl<'a> Combinations<'a> {
    fn new(lists: Vec<Vec<&'a Areq>>) -> Self {
        let n = lists.len();
        Combinations {
            lists,
            index: vec![0; n],
            depth: 0,
            done: n == 0,
        }
    }

    fn prefix(&self, len: usize) -> Combo<'a> {
        (0..len).map(|i| self.lists[i][self.index[i]]).collect()
    }

    /// The next complete combination whose every prefix is `viable`;
    /// `None` too once `budget` is spent (each check of a prefix costs
    /// its parts and [`CHECK_WORK`]). `viable` is asked only of a prefix
    /// one longer than a prefix it passed, so it may check the last
    /// request alone against the earlier ones.
    fn next(
        &mut self,
        viable: impl Fn(&[&Areq]) -> bool,
        budget: &mut Budget,
    ) -> Option<Combo<'a>> {
        let n = self.lists.len();
        loop {
            if self.done {
                return None;
            }
            if self.depth == n {
                let combo = self.prefix(n);
                self.depth -= 1;
                self.index[self.depth] += 1;
                return Some(combo);
            }
            if self.index[self.depth] >= self.lists[self.depth].len() {
                if self.depth == 0 {
                    self.done = true;
                    return None;
                }
                self.index[self.depth] = 0;
                self.depth -= 1;
                self.index[self.depth] += 1;
                continue;
            }
            let prefix = self.prefix(self.depth + 1);
            let parts: usize = prefix.iter().map(|a| a.parts.len()).sum();
            if !budget.spend(CHECK_WORK + parts) {
                self.done = true;
                return None;
            }
            if viable(&prefix) {
                self.depth += 1;
                if self.depth < n {
                    self.index[self.depth] = 0;
                }
            } else {
                self.index[self.depth] += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(raw: i64) -> ProviderId {
        ProviderId::new(raw)
    }

    fn mapping(group: usize, provider: i64) -> Mapping {
        Mapping {
            group,
            provider: id(provider),
        }
    }

    fn areq(provider: i64, same: bool) -> Areq {
        Areq {
            anchor: id(1),
            same_provider: same,
            parts: vec![Part {
                provider: id(provider),
                class: ResourceClassId::new(0),
                amount: 1,
            }],
            mappings: smallvec![mapping(0, provider)],
        }
    }

    #[test]
    fn combinations_skip_what_cannot_complete() {
        let a: Vec<Areq> = (1..=3).map(|p| areq(p, true)).collect();
        let lists = vec![a.iter().collect::<Vec<_>>(); 3];
        // Distinct providers only: the 6 permutations of 3.
        let mut budget = Budget::new(usize::MAX);
        let mut walk = Combinations::new(lists.clone());
        let mut n = 0;
        while walk.next(Search::isolated, &mut budget).is_some() {
            n += 1;
        }
        assert_eq!(n, 6);
        // No filter: the whole product.
        let mut walk = Combinations::new(lists);
        let mut n = 0;
        while walk.next(|_| true, &mut budget).is_some() {
            n += 1;
        }
        assert_eq!(n, 27);
        assert!(!budget.is_spent());
    }

    /// After a prefix that is isolated, the last request alone decides,
    /// as a check of the whole prefix would: for every pair of earlier
    /// requests and every last one, spread or not, over one or two
    /// providers.
    #[test]
    fn isolation_of_the_last_request_agrees_with_the_whole_check() {
        let mut requests: Vec<Areq> = Vec::new();
        for same in [true, false] {
            for provider in 1..=3 {
                requests.push(areq(provider, same));
            }
            let mut pair = areq(1, same);
            pair.mappings = smallvec![mapping(0, 1), mapping(1, 3)];
            requests.push(pair);
        }
        for a in &requests {
            for b in &requests {
                let earlier = [a, b];
                if !Search::isolated(&earlier) {
                    continue;
                }
                for last in &requests {
                    let whole = [a, b, last];
                    assert_eq!(
                        Search::isolated_with(&earlier, last),
                        Search::isolated(&whole),
                        "{whole:?}"
                    );
                }
            }
        }
    }

    /// 13 groups over 12 interchangeable providers, isolated: no
    /// combination completes, and without a bound the walk would look at
    /// every arrangement of the 12 (about 1.3 * 10^9 prefixes). The budget
    /// ends it, for good, and the walk says no more.
    #[test]
    fn the_walk_stops_when_its_budget_is_spent() {
        let a: Vec<Areq> = (1..=12).map(|p| areq(p, true)).collect();
        let lists = vec![a.iter().collect::<Vec<_>>(); 13];
        let mut walk = Combinations::new(lists.clone());
        let mut budget = Budget::new(1_000_000);
        assert!(walk.next(Search::isolated, &mut budget).is_none());
        assert!(budget.is_spent());
        assert!(walk.next(Search::isolated, &mut budget).is_none());
        // The work counted: every check costs its parts and CHECK_WORK.
        let mut budget = Budget::new(2 * (CHECK_WORK + 1));
        let mut walk = Combinations::new(vec![vec![&a[0], &a[1], &a[2]]]);
        assert!(walk.next(|_| true, &mut budget).is_some());
        assert!(walk.next(|_| true, &mut budget).is_some());
        assert!(walk.next(|_| true, &mut budget).is_none());
        assert!(budget.is_spent());
    }

    #[test]
    fn within_follows_parents() {
        // 1 is the root, 2 its NUMA child, 3 a PCI device of that child.
        let parents: HashMap<ProviderId, ProviderId> =
            [(id(2), id(1)), (id(3), id(2))].into_iter().collect();
        let within = |a, b, parents| is_within(id(a), id(b), parents);
        assert!(within(3, 1, &parents));
        assert!(within(3, 2, &parents));
        assert!(within(3, 3, &parents));
        assert!(!within(1, 3, &parents));
        assert!(!within(2, 3, &parents));
        assert!(!within(9, 1, &parents));
        // A loop (a corrupt tree) ends.
        let looped: HashMap<ProviderId, ProviderId> =
            [(id(1), id(2)), (id(2), id(1))].into_iter().collect();
        assert!(within(1, 2, &looped));
        assert!(!within(1, 3, &looped));
    }

    #[test]
    fn answer_mappings_by_suffix_then_uuid() {
        // Group 0 is `_NET`, group 1 the unsuffixed group, group 2 `_A`:
        // the answer orders by suffix, not by group index, and by uuid
        // within a suffix, not by provider id.
        let suffixes: Vec<Arc<str>> = ["_NET", "", "_A"].into_iter().map(Arc::from).collect();
        let uuids =
            |id: &ProviderId| Arc::from(["", "c", "a", "b"][usize::try_from(id.get()).unwrap()]);
        let mappings: Mappings = smallvec![
            mapping(0, 3),
            mapping(1, 1),
            mapping(1, 2),
            mapping(1, 3),
            mapping(2, 1)
        ];
        let got = answer_mappings(&mappings, &suffixes, uuids);
        let shown: Vec<(&str, Vec<&str>)> = got
            .iter()
            .map(|(suffix, uuids)| (&**suffix, uuids.iter().map(|u| &**u).collect()))
            .collect();
        assert_eq!(
            shown,
            [
                ("", vec!["a", "b", "c"]),
                ("_A", vec!["c"]),
                ("_NET", vec!["b"])
            ]
        );
        // Two providers with one uuid (a provider not found shows as "")
        // are one entry, as a set of uuids would have them.
        let missing = |_: &ProviderId| Arc::from("");
        let got = answer_mappings(&smallvec![mapping(1, 5), mapping(1, 6)], &suffixes, missing);
        assert_eq!(got, [(Arc::from(""), smallvec![Arc::from("")])]);
    }

    #[test]
    fn consolidation_adds_amounts_and_joins_mappings() {
        let (a, b) = (areq(1, true), areq(1, true));
        let c = consolidate(&[&a, &b]);
        assert_eq!(c.parts.len(), 1);
        assert_eq!(c.parts[0].amount, 2);
        assert_eq!(c.mappings.as_slice(), [mapping(0, 1)]);
    }

    /// A combination of few parts and one of many (past [`FEW_PARTS`])
    /// consolidate alike: the amounts of a provider and class added up,
    /// the parts in the order first met.
    #[test]
    fn consolidation_of_few_and_many_parts() {
        for providers in [3, FEW_PARTS as i64 + 5] {
            // Each provider twice, in two rounds: 1, 2, ..., 1, 2, ...
            let areqs: Vec<Areq> = (1..=providers)
                .chain(1..=providers)
                .map(|p| areq(p, false))
                .collect();
            let refs: Vec<&Areq> = areqs.iter().collect();
            let c = consolidate(&refs);
            let got: Vec<(i64, i64)> = c
                .parts
                .iter()
                .map(|p| (p.provider.get(), p.amount))
                .collect();
            let want: Vec<(i64, i64)> = (1..=providers).map(|p| (p, 2)).collect();
            assert_eq!(got, want, "{providers} providers");
            assert_eq!(c.mappings.len(), usize::try_from(providers).expect("small"));
        }
    }

    #[test]
    fn isolation_refuses_a_provider_used_by_two_suffixed_groups() {
        let (a, b, c) = (areq(1, true), areq(2, true), areq(1, true));
        assert!(Search::isolated(&[&a, &b]));
        assert!(!Search::isolated(&[&a, &b, &c]));
        // The unsuffixed group may share a provider with a suffixed one.
        assert!(Search::isolated(&[&a, &areq(1, false)]));
    }
}
