//! Aggregates of resource providers: `placement_aggregates` rows are made
//! on first use and never removed; `resource_provider_aggregates` holds
//! the associations.

use std::collections::BTreeMap;

use crate::db::ids::{AggregateId, ProviderId};
use crate::db::statement::Statement;
use crate::db::{self, Bind, Conn, Store, sql};
use crate::error::{Error, Result};
use crate::objects::provider::{self, ProviderRef};

/// The aggregate uuids of the provider `provider_id`.
pub(crate) async fn of_provider<'c>(
    store: &Store,
    conn: impl Into<Conn<'c>>,
    provider_id: ProviderId,
) -> Result<Vec<String>> {
    Ok(ids_of_provider(store, &mut conn.into(), provider_id)
        .await?
        .into_values()
        .collect())
}

/// The provider's aggregates: uuid by internal id.
async fn ids_of_provider(
    store: &Store,
    conn: &mut Conn<'_>,
    provider_id: ProviderId,
) -> Result<BTreeMap<AggregateId, String>> {
    Ok(conn
        .fold(
            sql!(
                store,
                "SELECT agg.id, agg.uuid FROM placement_aggregates agg \
             JOIN resource_provider_aggregates rpa ON rpa.aggregate_id = agg.id \
             WHERE rpa.resource_provider_id = ?"
            ),
            &[Bind::from(provider_id)],
            BTreeMap::new(),
            |ids: &mut BTreeMap<AggregateId, String>, row| {
                ids.insert(
                    AggregateId::read(row, 0)?,
                    row.text(1)?.unwrap_or_default().to_owned(),
                );
                Ok(())
            },
        )
        .await?)
}

/// The id of the aggregate `uuid`, made if new.
async fn ensure(store: &Store, tx: &mut Conn<'_>, uuid: &str) -> Result<AggregateId> {
    let find = sql!(store, "SELECT id FROM placement_aggregates WHERE uuid = ?");
    let binds = [Bind::from(uuid)];
    let read = |row: &dyn db::Columns| AggregateId::read(row, 0);
    if let Some(id) = tx.row(find, &binds, read).await? {
        return Ok(id);
    }
    let mut insert = Statement::new(store.dialect());
    insert
        .push("INSERT INTO placement_aggregates (uuid, created_at) VALUES (")
        .bind(uuid)
        .push(", ")
        .bind_timestamp(db::now_text())
        .push(")");
    insert.execute_on(tx).await?;
    tx.row(find, &binds, read).await?.ok_or_else(|| {
        Error::Inconsistent(format!(
            "the aggregate {uuid} just inserted cannot be read back"
        ))
    })
}

/// Why setting aggregates failed.
#[derive(Debug)]
pub(crate) enum SetError {
    /// The provider's generation changed meanwhile.
    Concurrent,
    /// Another writer made the same rows meanwhile, every time we tried.
    Duplicate(String),
    /// Anything else (the database failed).
    Other(Error),
}

impl From<Error> for SetError {
    fn from(e: Error) -> Self {
        SetError::Other(e)
    }
}

impl From<crate::db::Error> for SetError {
    fn from(e: crate::db::Error) -> Self {
        Error::from(e).into()
    }
}

/// Makes `uuids` the provider's aggregates. With `bump` (from 1.19) the
/// provider's generation moves on from the one the caller read, and the
/// new one is returned; without, it stays.
///
/// A unique violation (another writer made the same aggregate or
/// association meanwhile) or a deadlock retries the whole transaction, up
/// to 10 times, as upstream does.
pub(crate) async fn set(
    store: &Store,
    provider: &ProviderRef,
    uuids: &[String],
    bump: bool,
) -> Result<i64, SetError> {
    let (owned, provider, uuids) = (store.clone(), provider.clone(), uuids.to_vec());
    store
        .writing(move |mut writer| async move {
            let mut last = String::new();
            for _ in 0..10 {
                let mut tx = writer.begin().await?;
                let done = match try_set(&owned, &mut tx.conn(), &provider, &uuids, bump).await {
                    Ok(generation) => tx
                        .commit()
                        .await
                        .map(|()| generation)
                        .map_err(SetError::from),
                    Err(e) => Err(e),
                };
                match done {
                    Err(SetError::Other(e)) if e.is_unique_violation() => {
                        last = database_message(&e);
                    }
                    other => return other,
                }
            }
            Err(SetError::Duplicate(last))
        })
        .await
}

/// What the database said of a failed statement.
fn database_message(e: &Error) -> String {
    match e {
        Error::Db(db) => db
            .database_message()
            .map_or_else(|| db.to_string(), str::to_owned),
        other => other.to_string(),
    }
}

async fn try_set(
    store: &Store,
    tx: &mut Conn<'_>,
    provider: &ProviderRef,
    uuids: &[String],
    bump: bool,
) -> Result<i64, SetError> {
    let generation = if bump {
        provider::bump_generation(store, &mut *tx, provider, provider.generation)
            .await
            .map_err(|e| match e {
                Error::Api(_) => SetError::Concurrent,
                other => SetError::Other(other),
            })?
    } else {
        // Take the provider's row lock, so that concurrent writers of its
        // associations wait for each other.
        tx.execute(
            sql!(
                store,
                "UPDATE resource_providers SET generation = generation WHERE id = ?"
            ),
            &[Bind::from(provider.id)],
        )
        .await?;
        provider.generation
    };
    let existing = ids_of_provider(store, tx, provider.id).await?;
    for uuid in uuids {
        if existing.values().any(|u| u == uuid) {
            continue;
        }
        let id = ensure(store, tx, uuid).await?;
        let mut insert = Statement::new(store.dialect());
        insert
            .push(
                "INSERT INTO resource_provider_aggregates (resource_provider_id, aggregate_id, created_at) \
                 VALUES (",
            )
            .bind(provider.id)
            .push(", ")
            .bind(id)
            .push(", ")
            .bind_timestamp(db::now_text())
            .push(")");
        insert.execute_on(tx).await?;
    }
    for (id, uuid) in &existing {
        if !uuids.contains(uuid) {
            tx.execute(
                sql!(
                    store,
                    "DELETE FROM resource_provider_aggregates WHERE resource_provider_id = ? AND aggregate_id = ?"
                ),
                &[Bind::from(provider.id), Bind::from(*id)],
            )
            .await?;
        }
    }
    Ok(generation)
}
