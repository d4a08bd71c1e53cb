//! Traits: the standard ones (synced at start) and custom ones
//! (`CUSTOM_*`), and the traits of resource providers.

use std::collections::BTreeSet;
use std::time::SystemTime;

use sqlx::Row;
use sqlx::any::AnyRow;

use crate::db::{self, Store, sql};
use crate::error::{Error, Result};
use crate::objects::provider::{self, ProviderRef};

/// Custom traits start with this.
pub(crate) const CUSTOM_NAMESPACE: &str = "CUSTOM_";

/// One trait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Trait {
    pub(crate) id: i64,
    pub(crate) name: String,
    pub(crate) created_at: Option<SystemTime>,
    pub(crate) updated_at: Option<SystemTime>,
}

impl Trait {
    /// When it last changed (`updated_at`, else `created_at`).
    pub(crate) fn last_modified(&self) -> Option<SystemTime> {
        self.updated_at.or(self.created_at)
    }
}

fn select(store: &Store, alias: &str) -> String {
    let d = store.dialect();
    format!(
        "SELECT {alias}.id AS id, {alias}.name AS name, {} AS created_at, {} AS updated_at FROM traits {alias}",
        d.timestamp_text(&format!("{alias}.created_at")),
        d.timestamp_text(&format!("{alias}.updated_at")),
    )
}

fn row_to_trait(row: &AnyRow) -> Result<Trait> {
    let stamp = |column: &str| -> Result<Option<SystemTime>> {
        let text: Option<String> = row.try_get(column)?;
        Ok(text.as_deref().and_then(db::parse_timestamp))
    };
    Ok(Trait {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        created_at: stamp("created_at")?,
        updated_at: stamp("updated_at")?,
    })
}

/// The trait `name`, or `None`.
pub(crate) async fn find<'c, E>(store: &Store, conn: E, name: &str) -> Result<Option<Trait>>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let query = store
        .dialect()
        .placeholders(format!("{} WHERE t.name = ?", select(store, "t")));
    let row = sqlx::query(&query).bind(name).fetch_optional(conn).await?;
    row.as_ref().map(row_to_trait).transpose()
}

/// The id of the trait `name`, or `None`.
pub(crate) async fn id_of<'c, E>(store: &Store, conn: E, name: &str) -> Result<Option<i64>>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let row = sqlx::query(sql!(store, "SELECT id FROM traits WHERE name = ?"))
        .bind(name)
        .fetch_optional(conn)
        .await?;
    Ok(row.map(|r| r.try_get::<i64, _>("id")).transpose()?)
}

/// What `GET /traits` filters on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Filters {
    /// Only these names (`name=in:`).
    pub(crate) name_in: Option<Vec<String>>,
    /// Only names starting so (`name=startswith:`, a SQL `LIKE` prefix as
    /// upstream).
    pub(crate) prefix: Option<String>,
    /// Only traits some provider has (`true`) or none has (`false`).
    pub(crate) associated: Option<bool>,
}

/// The traits matching `filters`, by id.
pub(crate) async fn list(store: &Store, filters: &Filters) -> Result<Vec<Trait>> {
    let mut query = select(store, "t");
    let mut conditions: Vec<String> = Vec::new();
    let mut binds: Vec<String> = Vec::new();
    match filters.associated {
        Some(true) => conditions.push(
            "EXISTS (SELECT 1 FROM resource_provider_traits rpt WHERE rpt.trait_id = t.id)"
                .to_owned(),
        ),
        Some(false) => conditions.push(
            "NOT EXISTS (SELECT 1 FROM resource_provider_traits rpt WHERE rpt.trait_id = t.id)"
                .to_owned(),
        ),
        None => {}
    }
    if let Some(names) = &filters.name_in {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        conditions.push(format!("t.name IN ({})", vec!["?"; names.len()].join(", ")));
        binds.extend(names.iter().cloned());
    }
    if let Some(prefix) = &filters.prefix {
        conditions.push("t.name LIKE ?".to_owned());
        binds.push(format!("{prefix}%"));
    }
    if !conditions.is_empty() {
        query.push_str(" WHERE ");
        query.push_str(&conditions.join(" AND "));
    }
    query.push_str(" ORDER BY t.id");
    let query = store.dialect().placeholders(query);
    let mut q = sqlx::query(&query);
    for bind in binds {
        q = q.bind(bind);
    }
    let rows = q.fetch_all(store.reader()).await?;
    rows.iter().map(row_to_trait).collect()
}

/// The traits of the provider `provider_id`, by id.
pub(crate) async fn of_provider<'c, E>(
    store: &Store,
    conn: E,
    provider_id: i64,
) -> Result<Vec<Trait>>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let query = store.dialect().placeholders(format!(
        "{} JOIN resource_provider_traits rpt ON rpt.trait_id = t.id \
         WHERE rpt.resource_provider_id = ? ORDER BY t.id",
        select(store, "t")
    ));
    let rows = sqlx::query(&query)
        .bind(provider_id)
        .fetch_all(conn)
        .await?;
    rows.iter().map(row_to_trait).collect()
}

/// Creates the custom trait `name`: `Some` when made here, `None` when it
/// already existed (or another request made it meanwhile).
pub(crate) async fn create(store: &Store, name: &str) -> Result<Option<Trait>> {
    let mut tx = store.begin().await?;
    if find(store, &mut *tx, name).await?.is_some() {
        return Ok(None);
    }
    let insert = store.dialect().placeholders(format!(
        "INSERT INTO traits (name, created_at) VALUES (?, {})",
        store.dialect().timestamp_param()
    ));
    match sqlx::query(&insert)
        .bind(name)
        .bind(db::now_text())
        .execute(&mut *tx)
        .await
    {
        Ok(_) => {}
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    let created = find(store, &mut *tx, name).await?;
    tx.commit().await?;
    Ok(created)
}

/// Why a trait could not be deleted.
#[derive(Debug)]
pub(crate) enum DeleteError {
    NotFound,
    Standard,
    InUse,
    Other(Error),
}

impl From<Error> for DeleteError {
    fn from(e: Error) -> Self {
        DeleteError::Other(e)
    }
}

impl From<sqlx::Error> for DeleteError {
    fn from(e: sqlx::Error) -> Self {
        DeleteError::Other(e.into())
    }
}

/// Deletes the custom trait `name` unless a provider has it.
pub(crate) async fn delete(store: &Store, name: &str) -> Result<(), DeleteError> {
    let mut tx = store.begin().await?;
    let found = find(store, &mut *tx, name)
        .await?
        .ok_or(DeleteError::NotFound)?;
    if !name.starts_with(CUSTOM_NAMESPACE) {
        return Err(DeleteError::Standard);
    }
    let used = sqlx::query(sql!(
        store,
        "SELECT trait_id FROM resource_provider_traits WHERE trait_id = ? LIMIT 1"
    ))
    .bind(found.id)
    .fetch_optional(&mut *tx)
    .await?;
    if used.is_some() {
        return Err(DeleteError::InUse);
    }
    match sqlx::query(sql!(store, "DELETE FROM traits WHERE id = ?"))
        .bind(found.id)
        .execute(&mut *tx)
        .await
    {
        Ok(done) if done.rows_affected() == 1 => {}
        Ok(_) => return Err(DeleteError::NotFound),
        // A provider got it meanwhile (the foreign key, where enforced).
        Err(sqlx::Error::Database(e)) if e.is_foreign_key_violation() => {
            return Err(DeleteError::InUse);
        }
        Err(e) => return Err(e.into()),
    }
    tx.commit().await?;
    Ok(())
}

/// Why setting a provider's traits failed.
#[derive(Debug)]
pub(crate) enum SetError {
    /// The provider's generation changed meanwhile.
    Concurrent,
    /// Anything else (the database failed).
    Other(Error),
}

impl From<sqlx::Error> for SetError {
    fn from(e: sqlx::Error) -> Self {
        if crate::db::is_transient(&e) {
            SetError::Concurrent
        } else {
            SetError::Other(e.into())
        }
    }
}

impl From<Error> for SetError {
    fn from(e: Error) -> Self {
        SetError::Other(e)
    }
}

/// Makes `traits` the provider's traits. When that changes anything the
/// generation moves on from the one the caller read; returns the
/// provider's generation after.
pub(crate) async fn set_for_provider(
    store: &Store,
    provider: &ProviderRef,
    traits: &[Trait],
) -> Result<i64, SetError> {
    let mut tx = store.begin().await?;
    let rows = sqlx::query(sql!(
        store,
        "SELECT trait_id FROM resource_provider_traits WHERE resource_provider_id = ?"
    ))
    .bind(provider.id)
    .fetch_all(&mut *tx)
    .await?;
    let existing: BTreeSet<i64> = rows
        .iter()
        .map(|r| r.try_get::<i64, _>("trait_id"))
        .collect::<Result<_, _>>()?;
    let wanted: BTreeSet<i64> = traits.iter().map(|t| t.id).collect();
    if existing == wanted {
        return Ok(provider.generation);
    }
    let generation = provider::bump_generation(store, &mut tx, provider, provider.generation)
        .await
        .map_err(|e| match e {
            Error::Api(_) => SetError::Concurrent,
            other => SetError::Other(other),
        })?;
    for id in existing.difference(&wanted) {
        sqlx::query(sql!(
            store,
            "DELETE FROM resource_provider_traits WHERE resource_provider_id = ? AND trait_id = ?"
        ))
        .bind(provider.id)
        .bind(*id)
        .execute(&mut *tx)
        .await?;
    }
    let insert = store.dialect().placeholders(format!(
        "INSERT INTO resource_provider_traits (trait_id, resource_provider_id, created_at) VALUES (?, ?, {})",
        store.dialect().timestamp_param()
    ));
    for id in wanted.difference(&existing) {
        sqlx::query(&insert)
            .bind(*id)
            .bind(provider.id)
            .bind(db::now_text())
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(generation)
}
