//! Aggregates of resource providers: `placement_aggregates` rows are made
//! on first use and never removed; `resource_provider_aggregates` holds
//! the associations.

use std::collections::BTreeMap;

use crate::db::{self, Bind, Conn, Store, sql};
use crate::error::{Error, Result};
use crate::objects::provider::{self, ProviderRef};

/// The aggregate uuids of the provider `provider_id`.
pub(crate) async fn of_provider<'c>(
    store: &Store,
    conn: impl Into<Conn<'c>>,
    provider_id: i64,
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
    provider_id: i64,
) -> Result<BTreeMap<i64, String>> {
    conn.fold(
        sql!(
            store,
            "SELECT agg.id, agg.uuid FROM placement_aggregates agg \
             JOIN resource_provider_aggregates rpa ON rpa.aggregate_id = agg.id \
             WHERE rpa.resource_provider_id = ?"
        ),
        &[Bind::Int(provider_id)],
        BTreeMap::new(),
        |ids: &mut BTreeMap<i64, String>, row| {
            ids.insert(
                row.required_int(0)?,
                row.text(1)?.unwrap_or_default().to_owned(),
            );
            Ok(())
        },
    )
    .await
}

/// The id of the aggregate `uuid`, made if new.
async fn ensure(store: &Store, tx: &mut Conn<'_>, uuid: &str) -> Result<i64> {
    let find = sql!(store, "SELECT id FROM placement_aggregates WHERE uuid = ?");
    let binds = [Bind::from(uuid)];
    if let Some(id) = tx.row(find, &binds, |row| row.required_int(0)).await? {
        return Ok(id);
    }
    let insert = store.dialect().placeholders(format!(
        "INSERT INTO placement_aggregates (uuid, created_at) VALUES (?, {})",
        store.dialect().timestamp_param()
    ));
    tx.execute(&insert, &[Bind::from(uuid), Bind::from(db::now_text())])
        .await?;
    tx.row(find, &binds, |row| row.required_int(0))
        .await?
        .ok_or_else(|| {
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
        Error::Db(sqlx::Error::Database(db)) => db.message().to_owned(),
        Error::Sqlite(rusqlite::Error::SqliteFailure(_, Some(message))) => message.clone(),
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
            &[Bind::Int(provider.id)],
        )
        .await?;
        provider.generation
    };
    let existing = ids_of_provider(store, tx, provider.id).await?;
    let insert = store.dialect().placeholders(format!(
        "INSERT INTO resource_provider_aggregates (resource_provider_id, aggregate_id, created_at) \
         VALUES (?, ?, {})",
        store.dialect().timestamp_param()
    ));
    for uuid in uuids {
        if existing.values().any(|u| u == uuid) {
            continue;
        }
        let id = ensure(store, tx, uuid).await?;
        let binds = [
            Bind::Int(provider.id),
            Bind::Int(id),
            Bind::from(db::now_text()),
        ];
        tx.execute(&insert, &binds).await?;
    }
    for (id, uuid) in &existing {
        if !uuids.contains(uuid) {
            tx.execute(
                sql!(
                    store,
                    "DELETE FROM resource_provider_aggregates WHERE resource_provider_id = ? AND aggregate_id = ?"
                ),
                &[Bind::Int(provider.id), Bind::Int(*id)],
            )
            .await?;
        }
    }
    Ok(generation)
}
