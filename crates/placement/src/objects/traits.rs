//! Traits: the standard ones (synced at start) and custom ones
//! (`CUSTOM_*`), and the traits of resource providers.

use std::collections::BTreeSet;
use std::time::SystemTime;

use crate::db::ids::{ProviderId, TraitId};
use crate::db::statement::Statement;
use crate::db::{self, Bind, Columns, Conn, Store, sql};
use crate::error::{Error, Result};
use crate::objects::provider::{self, ProviderRef};

/// Custom traits start with this.
pub(crate) const CUSTOM_NAMESPACE: &str = "CUSTOM_";

/// One trait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Trait {
    pub(crate) id: TraitId,
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

/// `SELECT` of the columns of the traits aliased `t`, read by
/// [`read_trait`].
fn select(store: &Store) -> Statement {
    let d = store.dialect();
    let mut q = Statement::new(d);
    q.push(&format!(
        "SELECT t.id, t.name, {}, {} FROM traits t",
        d.timestamp_text("t.created_at"),
        d.timestamp_text("t.updated_at"),
    ));
    q
}

/// A row of [`select`].
fn read_trait(row: &dyn Columns) -> db::Result<Trait> {
    Ok(Trait {
        id: TraitId::read(row, 0)?,
        name: row.required_text(1)?.to_owned(),
        created_at: row.timestamp(2)?,
        updated_at: row.timestamp(3)?,
    })
}

/// The trait `name`, or `None`.
pub(crate) async fn find<'c>(
    store: &Store,
    conn: impl Into<Conn<'c>>,
    name: &str,
) -> Result<Option<Trait>> {
    let mut q = select(store);
    q.push(" WHERE t.name = ").bind(name);
    Ok(q.row_on(&mut conn.into(), read_trait).await?)
}

/// The id of the trait `name`, or `None`.
pub(crate) async fn id_of<'c>(
    store: &Store,
    conn: impl Into<Conn<'c>>,
    name: &str,
) -> Result<Option<TraitId>> {
    Ok(conn
        .into()
        .row(
            sql!(store, "SELECT id FROM traits WHERE name = ?"),
            &[Bind::from(name)],
            |row| TraitId::read(row, 0),
        )
        .await?)
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
    if filters.name_in.as_ref().is_some_and(Vec::is_empty) {
        return Ok(Vec::new());
    }
    let mut q = select(store);
    // Each condition after the first is joined with `AND`.
    let mut conditions = 0;
    let mut and = |q: &mut Statement| {
        q.push(if conditions == 0 { " WHERE " } else { " AND " });
        conditions += 1;
    };
    match filters.associated {
        Some(true) => {
            and(&mut q);
            q.push("EXISTS (SELECT 1 FROM resource_provider_traits rpt WHERE rpt.trait_id = t.id)");
        }
        Some(false) => {
            and(&mut q);
            q.push(
                "NOT EXISTS (SELECT 1 FROM resource_provider_traits rpt WHERE rpt.trait_id = t.id)",
            );
        }
        None => {}
    }
    if let Some(names) = &filters.name_in {
        and(&mut q);
        q.push("t.name IN (")
            .list(names.iter().map(String::as_str))
            .push(")");
    }
    if let Some(prefix) = &filters.prefix {
        and(&mut q);
        q.push("t.name LIKE ").bind(format!("{prefix}%"));
    }
    q.push(" ORDER BY t.id");
    Ok(q.rows_on(&mut Conn::from(store.reader()), read_trait)
        .await?)
}

/// The traits of the provider `provider_id`, by id.
pub(crate) async fn of_provider<'c>(
    store: &Store,
    conn: impl Into<Conn<'c>>,
    provider_id: ProviderId,
) -> Result<Vec<Trait>> {
    let mut q = select(store);
    q.push(
        " JOIN resource_provider_traits rpt ON rpt.trait_id = t.id \
         WHERE rpt.resource_provider_id = ",
    )
    .bind(provider_id)
    .push(" ORDER BY t.id");
    Ok(q.rows_on(&mut conn.into(), read_trait).await?)
}

/// Creates the custom trait `name`: `Some` when made here, `None` when it
/// already existed (or another request made it meanwhile).
pub(crate) async fn create(store: &Store, name: &str) -> Result<Option<Trait>> {
    let name = name.to_owned();
    store
        .transaction(move |store, tx| {
            Box::pin(async move {
                if find(store, &mut *tx, &name).await?.is_some() {
                    return Ok(None);
                }
                let mut insert = Statement::new(store.dialect());
                insert
                    .push("INSERT INTO traits (name, created_at) VALUES (")
                    .bind(name.as_str())
                    .push(", ")
                    .bind_timestamp(db::now_text())
                    .push(")");
                match insert.execute_on(tx).await {
                    Ok(_) => {}
                    Err(e) if e.is_unique_violation() => return Ok(None),
                    Err(e) => return Err(e.into()),
                }
                find(store, &mut *tx, &name).await
            })
        })
        .await
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

impl From<crate::db::Error> for DeleteError {
    fn from(e: crate::db::Error) -> Self {
        Error::from(e).into()
    }
}

/// Deletes the custom trait `name` unless a provider has it.
pub(crate) async fn delete(store: &Store, name: &str) -> Result<(), DeleteError> {
    let name = name.to_owned();
    store
        .transaction(move |store, tx| {
            Box::pin(async move {
                let found = find(store, &mut *tx, &name)
                    .await?
                    .ok_or(DeleteError::NotFound)?;
                if !name.starts_with(CUSTOM_NAMESPACE) {
                    return Err(DeleteError::Standard);
                }
                let used = tx
                    .row(
                        sql!(
                            store,
                            "SELECT trait_id FROM resource_provider_traits WHERE trait_id = ? LIMIT 1"
                        ),
                        &[Bind::from(found.id)],
                        |row| TraitId::read(row, 0),
                    )
                    .await?;
                if used.is_some() {
                    return Err(DeleteError::InUse);
                }
                match tx
                    .execute(
                        sql!(store, "DELETE FROM traits WHERE id = ?"),
                        &[Bind::from(found.id)],
                    )
                    .await
                {
                    Ok(done) if done.rows_affected == 1 => Ok(()),
                    Ok(_) => Err(DeleteError::NotFound),
                    // A provider got it meanwhile (the foreign key, where
                    // enforced).
                    Err(e) if e.is_foreign_key_violation() => Err(DeleteError::InUse),
                    Err(e) => Err(e.into()),
                }
            })
        })
        .await
}

/// Why setting a provider's traits failed.
#[derive(Debug)]
pub(crate) enum SetError {
    /// The provider's generation changed meanwhile.
    Concurrent,
    /// Anything else (the database failed).
    Other(Error),
}

impl From<Error> for SetError {
    fn from(e: Error) -> Self {
        if e.is_transient() {
            SetError::Concurrent
        } else {
            SetError::Other(e)
        }
    }
}

impl From<crate::db::Error> for SetError {
    fn from(e: crate::db::Error) -> Self {
        Error::from(e).into()
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
    let provider = provider.clone();
    let wanted: BTreeSet<TraitId> = traits.iter().map(|t| t.id).collect();
    store
        .transaction(move |store, tx| {
            Box::pin(async move {
                let existing: BTreeSet<TraitId> = tx
                    .fold(
                        sql!(
                            store,
                            "SELECT trait_id FROM resource_provider_traits WHERE resource_provider_id = ?"
                        ),
                        &[Bind::from(provider.id)],
                        BTreeSet::new(),
                        |ids: &mut BTreeSet<TraitId>, row| {
                            ids.insert(TraitId::read(row, 0)?);
                            Ok(())
                        },
                    )
                    .await?;
                if existing == wanted {
                    return Ok(provider.generation);
                }
                let generation =
                    provider::bump_generation(store, &mut *tx, &provider, provider.generation)
                        .await
                        .map_err(|e| match e {
                            Error::Api(_) => SetError::Concurrent,
                            other => SetError::from(other),
                        })?;
                for id in existing.difference(&wanted) {
                    tx.execute(
                        sql!(
                            store,
                            "DELETE FROM resource_provider_traits WHERE resource_provider_id = ? AND trait_id = ?"
                        ),
                        &[Bind::from(provider.id), Bind::from(*id)],
                    )
                    .await?;
                }
                for id in wanted.difference(&existing) {
                    let mut insert = Statement::new(store.dialect());
                    insert
                        .push("INSERT INTO resource_provider_traits (trait_id, resource_provider_id, created_at) VALUES (")
                        .bind(*id)
                        .push(", ")
                        .bind(provider.id)
                        .push(", ")
                        .bind_timestamp(db::now_text())
                        .push(")");
                    insert.execute_on(tx).await?;
                }
                Ok(generation)
            })
        })
        .await
}
