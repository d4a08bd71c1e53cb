//! Usages: what is allocated, by provider, or by project (and user), and
//! from 1.38 by consumer type.

use std::collections::BTreeMap;

use crate::db::{Bind, Columns, Store};
use crate::error::Result;

/// Upstream's name for consumers without a type.
pub(crate) const UNKNOWN_CONSUMER_TYPE: &str = "unknown";
/// The `consumer_type` filter that groups every consumer together.
pub(crate) const ALL_CONSUMER_TYPES: &str = "all";

/// The usage of each resource class the provider `uuid` has inventory of
/// (0 when nothing is allocated).
pub(crate) async fn by_provider(store: &Store, uuid: &str) -> Result<BTreeMap<String, i64>> {
    let query = format!(
        "SELECT rc.name AS name, {} AS used FROM inventories i \
         JOIN resource_providers rp ON i.resource_provider_id = rp.id \
         JOIN resource_classes rc ON i.resource_class_id = rc.id \
         LEFT JOIN allocations a ON i.resource_provider_id = a.resource_provider_id \
           AND i.resource_class_id = a.resource_class_id \
         WHERE rp.uuid = ? GROUP BY i.resource_class_id, rc.name",
        store.dialect().int("COALESCE(SUM(a.used), 0)")
    );
    store
        .fold_rows(query, vec![uuid.into()], BTreeMap::new(), add_usage)
        .await
}

/// Adds a row of (resource class name, amount) to `usages`.
fn add_usage(usages: &mut BTreeMap<String, i64>, row: &dyn Columns) -> Result<()> {
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
    /// The joins from `consumers c` and the conditions (after `WHERE`)
    /// selecting the consumers of the project (and user), with the values
    /// to bind.
    fn consumers(&self) -> (String, String, Vec<Bind>) {
        let mut joins = String::from("JOIN projects p ON c.project_id = p.id");
        let mut conditions = String::from("p.external_id = ?");
        let mut binds = vec![Bind::from(self.project_id)];
        if let Some(user) = self.user_id {
            joins.push_str(" JOIN users u ON c.user_id = u.id");
            conditions.push_str(" AND u.external_id = ?");
            binds.push(user.into());
        }
        joins.push_str(" LEFT JOIN consumer_types ct ON c.consumer_type_id = ct.id");
        (joins, conditions, binds)
    }
}

/// The `FROM` clause of the allocations of consumers joined by `joins`,
/// with their resource classes.
fn allocations_from(joins: &str) -> String {
    format!(
        "FROM allocations a JOIN consumers c ON a.consumer_id = c.uuid {joins} \
         JOIN resource_classes rc ON a.resource_class_id = rc.id"
    )
}

/// The usage of each resource class by the project (and user).
pub(crate) async fn by_project(store: &Store, filter: Filter<'_>) -> Result<BTreeMap<String, i64>> {
    let (joins, conditions, binds) = filter.consumers();
    let query = format!(
        "SELECT rc.name AS name, {} AS used {} WHERE {conditions} \
         GROUP BY a.resource_class_id, rc.name",
        store.dialect().int("SUM(a.used)"),
        allocations_from(&joins),
    );
    store
        .fold_rows(query, binds, BTreeMap::new(), add_usage)
        .await
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
pub(crate) async fn by_consumer_type(
    store: &Store,
    filter: Filter<'_>,
    consumer_type: Option<&str>,
) -> Result<BTreeMap<String, Group>> {
    let (joins, conditions, mut binds) = filter.consumers();
    let d = store.dialect();
    let (extra, key): (String, Option<&'static str>) = match consumer_type {
        Some(ALL_CONSUMER_TYPES) => (String::new(), Some(ALL_CONSUMER_TYPES)),
        Some(UNKNOWN_CONSUMER_TYPE) => (
            " AND c.consumer_type_id IS NULL".to_owned(),
            Some(UNKNOWN_CONSUMER_TYPE),
        ),
        Some(name) => {
            binds.push(name.into());
            (" AND ct.name = ?".to_owned(), None)
        }
        None => (String::new(), None),
    };
    // Consumers are counted per group on their own: one consumer of
    // several classes counts once.
    let group_by = if key.is_some() {
        ""
    } else {
        " GROUP BY ct.name"
    };
    let type_column = if key.is_some() {
        ""
    } else {
        ", ct.name AS type_name"
    };
    // The consumers holding allocations, each once (an EXISTS probe of
    // the allocations' consumer index rather than a COUNT(DISTINCT) over
    // every allocation: half the work on SQLite).
    let counts_query = format!(
        "SELECT {} AS consumers{type_column} FROM consumers c {joins} \
         WHERE {conditions}{extra} \
         AND EXISTS (SELECT 1 FROM allocations a WHERE a.consumer_id = c.uuid){group_by}",
        d.int("COUNT(*)")
    );
    let usage_group_by = if key.is_some() {
        " GROUP BY a.resource_class_id, rc.name"
    } else {
        " GROUP BY a.resource_class_id, rc.name, ct.name"
    };
    let usage_query = format!(
        "SELECT rc.name AS name, {} AS used{type_column} {} \
         WHERE {conditions}{extra}{usage_group_by}",
        d.int("SUM(a.used)"),
        allocations_from(&joins),
    );
    // The group of a row: the key asked for, else the type in the row's
    // last column.
    let group_of = move |row: &dyn Columns, column: usize| -> Result<String> {
        if let Some(key) = key {
            return Ok(key.to_owned());
        }
        Ok(row
            .text(column)?
            .unwrap_or(UNKNOWN_CONSUMER_TYPE)
            .to_owned())
    };
    let counts = store
        .fold_rows(
            counts_query,
            binds.clone(),
            BTreeMap::new(),
            move |counts, row| {
                counts.insert(group_of(row, 1)?, row.required_int(0)?);
                Ok(())
            },
        )
        .await?;
    store
        .fold_rows(
            usage_query,
            binds,
            BTreeMap::<String, Group>::new(),
            move |groups, row| {
                let name = group_of(row, 2)?;
                let consumer_count = counts.get(&name).copied().unwrap_or(0);
                let group = groups.entry(name).or_default();
                group.consumer_count = consumer_count;
                group
                    .usages
                    .insert(row.required_text(0)?.to_owned(), row.required_int(1)?);
                Ok(())
            },
        )
        .await
}
