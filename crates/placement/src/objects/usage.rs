//! Usages: what is allocated, by provider, or by project (and user), and
//! from 1.38 by consumer type.

use std::collections::BTreeMap;

use sqlx::Row;

use crate::db::Store;
use crate::error::Result;

/// Upstream's name for consumers without a type.
pub(crate) const UNKNOWN_CONSUMER_TYPE: &str = "unknown";
/// The `consumer_type` filter that groups every consumer together.
pub(crate) const ALL_CONSUMER_TYPES: &str = "all";

/// The usage of each resource class the provider `uuid` has inventory of
/// (0 when nothing is allocated).
pub(crate) async fn by_provider(store: &Store, uuid: &str) -> Result<BTreeMap<String, i64>> {
    let query = store.dialect().placeholders(format!(
        "SELECT rc.name AS name, {} AS used FROM inventories i \
         JOIN resource_providers rp ON i.resource_provider_id = rp.id \
         JOIN resource_classes rc ON i.resource_class_id = rc.id \
         LEFT JOIN allocations a ON i.resource_provider_id = a.resource_provider_id \
           AND i.resource_class_id = a.resource_class_id \
         WHERE rp.uuid = ? GROUP BY i.resource_class_id, rc.name",
        store.dialect().int("COALESCE(SUM(a.used), 0)")
    ));
    let rows = sqlx::query(&query)
        .bind(uuid)
        .fetch_all(store.reader())
        .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("name")?, r.try_get("used")?)))
        .collect()
}

/// Which allocations of a project count.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Filter<'a> {
    pub(crate) project_id: &'a str,
    pub(crate) user_id: Option<&'a str>,
}

impl Filter<'_> {
    /// The joins and conditions selecting the allocations of the project
    /// (and user), with the values to bind.
    fn tables_and_conditions(&self) -> (String, Vec<&str>) {
        let mut sql = String::from(
            "FROM allocations a JOIN consumers c ON a.consumer_id = c.uuid \
             JOIN projects p ON c.project_id = p.id",
        );
        let mut binds = Vec::new();
        if self.user_id.is_some() {
            sql.push_str(" JOIN users u ON c.user_id = u.id");
        }
        sql.push_str(
            " JOIN resource_classes rc ON a.resource_class_id = rc.id \
             LEFT JOIN consumer_types ct ON c.consumer_type_id = ct.id \
             WHERE p.external_id = ?",
        );
        binds.push(self.project_id);
        if let Some(user) = self.user_id {
            sql.push_str(" AND u.external_id = ?");
            binds.push(user);
        }
        (sql, binds)
    }
}

/// The usage of each resource class by the project (and user).
pub(crate) async fn by_project(store: &Store, filter: Filter<'_>) -> Result<BTreeMap<String, i64>> {
    let (from, binds) = filter.tables_and_conditions();
    let query = store.dialect().placeholders(format!(
        "SELECT rc.name AS name, {} AS used {from} GROUP BY a.resource_class_id, rc.name",
        store.dialect().int("SUM(a.used)")
    ));
    let mut q = sqlx::query(&query);
    for b in &binds {
        q = q.bind(*b);
    }
    let rows = q.fetch_all(store.reader()).await?;
    rows.iter()
        .map(|r| Ok((r.try_get("name")?, r.try_get("used")?)))
        .collect()
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
    let (from, mut binds) = filter.tables_and_conditions();
    let d = store.dialect();
    let (extra, key) = match consumer_type {
        Some(ALL_CONSUMER_TYPES) => (String::new(), Some(ALL_CONSUMER_TYPES)),
        Some(UNKNOWN_CONSUMER_TYPE) => (
            " AND c.consumer_type_id IS NULL".to_owned(),
            Some(UNKNOWN_CONSUMER_TYPE),
        ),
        Some(name) => {
            binds.push(name);
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
        "ct.name AS type_name, "
    };
    let counts_query = d.placeholders(format!(
        "SELECT {type_column}{} AS consumers {from}{extra}{group_by}",
        d.int("COUNT(DISTINCT a.consumer_id)")
    ));
    let usage_group_by = if key.is_some() {
        " GROUP BY a.resource_class_id, rc.name".to_owned()
    } else {
        " GROUP BY a.resource_class_id, rc.name, ct.name".to_owned()
    };
    let usage_query = d.placeholders(format!(
        "SELECT {type_column}rc.name AS name, {} AS used {from}{extra}{usage_group_by}",
        d.int("SUM(a.used)")
    ));
    let name_of = |row: &sqlx::any::AnyRow| -> Result<String> {
        if let Some(key) = key {
            return Ok(key.to_owned());
        }
        let name: Option<String> = row.try_get("type_name")?;
        Ok(name.unwrap_or_else(|| UNKNOWN_CONSUMER_TYPE.to_owned()))
    };
    let mut q = sqlx::query(&counts_query);
    for b in &binds {
        q = q.bind(*b);
    }
    let mut counts = BTreeMap::new();
    for row in q.fetch_all(store.reader()).await? {
        counts.insert(name_of(&row)?, row.try_get::<i64, _>("consumers")?);
    }
    let mut q = sqlx::query(&usage_query);
    for b in &binds {
        q = q.bind(*b);
    }
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for row in q.fetch_all(store.reader()).await? {
        let name = name_of(&row)?;
        let group = groups.entry(name.clone()).or_default();
        group.consumer_count = counts.get(&name).copied().unwrap_or(0);
        group
            .usages
            .insert(row.try_get("name")?, row.try_get("used")?);
    }
    Ok(groups)
}
