//! Usages: what is allocated, by provider, or by project (and user), and
//! from 1.38 by consumer type.

use std::collections::BTreeMap;

use crate::db::ids::{ConsumerId, IdSet};
use crate::db::statement::Statement;
use crate::db::{Columns, Store};
use crate::error::Result;

/// Upstream's name for consumers without a type.
pub(crate) const UNKNOWN_CONSUMER_TYPE: &str = "unknown";
/// The `consumer_type` filter that groups every consumer together.
pub(crate) const ALL_CONSUMER_TYPES: &str = "all";

/// The usage of each resource class the provider `uuid` has inventory of
/// (0 when nothing is allocated).
pub(crate) async fn by_provider(store: &Store, uuid: &str) -> Result<BTreeMap<String, i64>> {
    let mut q = Statement::new(store.dialect());
    q.push(&format!(
        "SELECT rc.name AS name, {} AS used FROM inventories i \
         JOIN resource_providers rp ON i.resource_provider_id = rp.id \
         JOIN resource_classes rc ON i.resource_class_id = rc.id \
         LEFT JOIN allocations a ON i.resource_provider_id = a.resource_provider_id \
           AND i.resource_class_id = a.resource_class_id \
         WHERE rp.uuid = ",
        store.dialect().int("COALESCE(SUM(a.used), 0)")
    ))
    .bind(uuid)
    .push(" GROUP BY i.resource_class_id, rc.name");
    Ok(q.fold(store, BTreeMap::new(), add_usage).await?)
}

/// Adds a row of (resource class name, amount) to `usages`.
fn add_usage(usages: &mut BTreeMap<String, i64>, row: &dyn Columns) -> crate::db::Result<()> {
    usages.insert(row.required_text(0)?.to_owned(), row.required_int(1)?);
    Ok(())
}

/// Which allocations of a project count.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Filter<'a> {
    pub(crate) project_id: &'a str,
    pub(crate) user_id: Option<&'a str>,
}

impl Filter<'_> {
    /// Appends the `FROM` and `WHERE` clauses selecting the allocations
    /// of the project's (and user's) consumers, as `a`, with their
    /// consumers (`c`), consumer types (`ct`, left joined) and resource
    /// classes (`rc`). More conditions can follow with `AND`.
    fn allocations(&self, q: &mut Statement) {
        q.push(
            "FROM allocations a JOIN consumers c ON a.consumer_id = c.uuid \
             JOIN projects p ON c.project_id = p.id",
        );
        if self.user_id.is_some() {
            q.push(" JOIN users u ON c.user_id = u.id");
        }
        q.push(
            " LEFT JOIN consumer_types ct ON c.consumer_type_id = ct.id \
             JOIN resource_classes rc ON a.resource_class_id = rc.id \
             WHERE p.external_id = ",
        )
        .bind(self.project_id);
        if let Some(user) = self.user_id {
            q.push(" AND u.external_id = ").bind(user);
        }
    }
}

/// The usage of each resource class by the project (and user).
pub(crate) async fn by_project(store: &Store, filter: Filter<'_>) -> Result<BTreeMap<String, i64>> {
    let mut groups = by_consumer_type(store, filter, Some(ALL_CONSUMER_TYPES)).await?;
    Ok(groups
        .remove(ALL_CONSUMER_TYPES)
        .map(|group| group.usages)
        .unwrap_or_default())
}

/// One group of [`by_consumer_type`] as its rows are summed: its
/// consumers (each counted once, whatever it holds) and its usage by
/// class.
struct GroupSums {
    name: String,
    consumers: IdSet<ConsumerId>,
    group: Group,
}

/// Usage of one group of consumers: the count of consumers, and the usage
/// of each resource class.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Group {
    pub(crate) consumer_count: i64,
    pub(crate) usages: BTreeMap<String, i64>,
}

/// The usage of the project (and user) by consumer type (1.38):
/// `consumer_type` `all` groups every consumer under `all`, `unknown`
/// takes the consumers without a type, another name those of that type,
/// and none groups by type (`unknown` for those without).
///
/// One pass over the allocations, summed here: on SQLite, grouping and
/// counting distinct consumers in SQL (two statements, each with a
/// temporary B-tree) cost more than the join itself
/// (docs/decisions.md).
pub(crate) async fn by_consumer_type(
    store: &Store,
    filter: Filter<'_>,
    consumer_type: Option<&str>,
) -> Result<BTreeMap<String, Group>> {
    let mut q = Statement::new(store.dialect());
    q.push("SELECT c.id, ct.name, rc.name, a.used ");
    filter.allocations(&mut q);
    let key: Option<&'static str> = match consumer_type {
        Some(ALL_CONSUMER_TYPES) => Some(ALL_CONSUMER_TYPES),
        Some(UNKNOWN_CONSUMER_TYPE) => {
            q.push(" AND c.consumer_type_id IS NULL");
            Some(UNKNOWN_CONSUMER_TYPE)
        }
        Some(name) => {
            q.push(" AND ct.name = ").bind(name);
            None
        }
        None => None,
    };
    let sums = q
        .fold(store, Vec::<GroupSums>::new(), move |groups, row| {
            let group = key.or(row.text(1)?).unwrap_or(UNKNOWN_CONSUMER_TYPE);
            // Groups are few: found by `&str`, a `String` only for a new
            // one.
            let index = match groups.iter().position(|sums| sums.name == group) {
                Some(index) => index,
                None => {
                    groups.push(GroupSums {
                        name: group.to_owned(),
                        consumers: IdSet::default(),
                        group: Group::default(),
                    });
                    groups.len() - 1
                }
            };
            let sums = &mut groups[index];
            sums.consumers.insert(ConsumerId::read(row, 0)?);
            let class = row.required_text(2)?;
            let used = row.required_int(3)?;
            match sums.group.usages.get_mut(class) {
                Some(total) => *total = total.saturating_add(used),
                None => {
                    sums.group.usages.insert(class.to_owned(), used);
                }
            }
            Ok(())
        })
        .await?;
    Ok(sums
        .into_iter()
        .map(|mut sums| {
            sums.group.consumer_count = i64::try_from(sums.consumers.len()).unwrap_or(i64::MAX);
            (sums.name, sums.group)
        })
        .collect())
}
