//! Aggregates of resource providers: `placement_aggregates` rows are made
//! on first use and never removed; `resource_provider_aggregates` holds
//! the associations.

use std::collections::BTreeMap;

use sqlx::Row;

use crate::db::{self, Store, sql};
use crate::error::{Error, Result};
use crate::objects::provider::{self, ProviderRef};

/// The aggregate uuids of the provider `provider_id`.
pub(crate) async fn of_provider<'c, E>(
    store: &Store,
    conn: E,
    provider_id: i64,
) -> Result<Vec<String>>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    Ok(ids_of_provider(store, conn, provider_id)
        .await?
        .into_values()
        .collect())
}

/// The provider's aggregates: uuid by internal id.
async fn ids_of_provider<'c, E>(
    store: &Store,
    conn: E,
    provider_id: i64,
) -> Result<BTreeMap<i64, String>, sqlx::Error>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let rows = sqlx::query(sql!(
        store,
        "SELECT agg.id AS id, agg.uuid AS uuid FROM placement_aggregates agg \
         JOIN resource_provider_aggregates rpa ON rpa.aggregate_id = agg.id \
         WHERE rpa.resource_provider_id = ?"
    ))
    .bind(provider_id)
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get::<i64, _>("id")?,
                r.try_get::<Option<String>, _>("uuid")?.unwrap_or_default(),
            ))
        })
        .collect()
}

type Tx = sqlx::Transaction<'static, sqlx::Any>;

/// The id of the aggregate `uuid`, made if new.
async fn ensure(store: &Store, tx: &mut Tx, uuid: &str) -> Result<i64, sqlx::Error> {
    let find = sql!(store, "SELECT id FROM placement_aggregates WHERE uuid = ?");
    if let Some(row) = sqlx::query(find)
        .bind(uuid)
        .fetch_optional(&mut **tx)
        .await?
    {
        return row.try_get("id");
    }
    let insert = store.dialect().placeholders(format!(
        "INSERT INTO placement_aggregates (uuid, created_at) VALUES (?, {})",
        store.dialect().timestamp_param()
    ));
    sqlx::query(&insert)
        .bind(uuid)
        .bind(db::now_text())
        .execute(&mut **tx)
        .await?;
    sqlx::query(find)
        .bind(uuid)
        .fetch_one(&mut **tx)
        .await?
        .try_get("id")
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
    let mut last = String::new();
    for _ in 0..10 {
        match try_set(store, provider, uuids, bump).await {
            Err(SetError::Other(Error::Db(sqlx::Error::Database(e))))
                if e.is_unique_violation() =>
            {
                last = e.message().to_owned();
            }
            other => return other,
        }
    }
    Err(SetError::Duplicate(last))
}

async fn try_set(
    store: &Store,
    provider: &ProviderRef,
    uuids: &[String],
    bump: bool,
) -> Result<i64, SetError> {
    let db_err = |e: sqlx::Error| SetError::Other(e.into());
    let mut tx = store.begin().await.map_err(db_err)?;
    let generation = if bump {
        provider::bump_generation(store, &mut tx, provider, provider.generation)
            .await
            .map_err(|e| match e {
                Error::Api(_) => SetError::Concurrent,
                other => SetError::Other(other),
            })?
    } else {
        // Take the provider's row lock, so that concurrent writers of its
        // associations wait for each other.
        sqlx::query(sql!(
            store,
            "UPDATE resource_providers SET generation = generation WHERE id = ?"
        ))
        .bind(provider.id)
        .execute(&mut *tx)
        .await
        .map_err(db_err)?;
        provider.generation
    };
    let existing = ids_of_provider(store, &mut *tx, provider.id)
        .await
        .map_err(db_err)?;
    for uuid in uuids {
        if existing.values().any(|u| u == uuid) {
            continue;
        }
        let id = ensure(store, &mut tx, uuid).await.map_err(db_err)?;
        let insert = store.dialect().placeholders(format!(
            "INSERT INTO resource_provider_aggregates (resource_provider_id, aggregate_id, created_at) \
             VALUES (?, ?, {})",
            store.dialect().timestamp_param()
        ));
        sqlx::query(&insert)
            .bind(provider.id)
            .bind(id)
            .bind(db::now_text())
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
    }
    for (id, uuid) in &existing {
        if !uuids.contains(uuid) {
            sqlx::query(sql!(
                store,
                "DELETE FROM resource_provider_aggregates WHERE resource_provider_id = ? AND aggregate_id = ?"
            ))
            .bind(provider.id)
            .bind(*id)
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
        }
    }
    tx.commit().await.map_err(db_err)?;
    Ok(generation)
}
