//! Resource providers as other resources need them: lookup by uuid, and
//! the generation that guards concurrent changes.

use sqlx::Row;

use crate::db::{Store, sql};
use crate::error::{Error, Result, code};

/// The identity of a provider and its current generation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProviderRef {
    pub(crate) id: i64,
    pub(crate) uuid: String,
    pub(crate) generation: i64,
}

/// The provider with `uuid`, read within `conn` (a transaction or a pool
/// connection), or `None`.
pub(crate) async fn find<'c, E>(store: &Store, conn: E, uuid: &str) -> Result<Option<ProviderRef>>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let row = sqlx::query(sql!(
        store,
        "SELECT id, uuid, generation FROM resource_providers WHERE uuid = ?"
    ))
    .bind(uuid)
    .fetch_optional(conn)
    .await?;
    row.map(|row| {
        Ok(ProviderRef {
            id: row.try_get("id")?,
            uuid: row.try_get("uuid")?,
            generation: row.try_get::<Option<i64>, _>("generation")?.unwrap_or(0),
        })
    })
    .transpose()
}

/// 404 for a provider that does not exist, in upstream's words.
pub(crate) fn not_found(uuid: &str) -> Error {
    Error::not_found(format!("No resource provider with uuid {uuid} found"))
        .with_code(code::RESOURCE_PROVIDER_NOT_FOUND)
}

/// The provider with `uuid`, or 404.
pub(crate) async fn get<'c, E>(store: &Store, conn: E, uuid: &str) -> Result<ProviderRef>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    find(store, conn, uuid)
        .await?
        .ok_or_else(|| not_found(uuid))
}

/// Moves the provider's generation from `expected` to the next one, in the
/// transaction `tx`; 409 when someone changed it meanwhile.
pub(crate) async fn bump_generation(
    store: &Store,
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    provider: &ProviderRef,
    expected: i64,
) -> Result<i64> {
    let update = store.dialect().placeholders(format!(
        "UPDATE resource_providers SET generation = ?, updated_at = {} WHERE id = ? AND generation = ?",
        store.dialect().timestamp_param()
    ));
    let done = sqlx::query(&update)
        .bind(expected + 1)
        .bind(crate::db::now_text())
        .bind(provider.id)
        .bind(expected)
        .execute(&mut **tx)
        .await?;
    if done.rows_affected() == 1 {
        Ok(expected + 1)
    } else {
        Err(concurrent_update(&provider.uuid))
    }
}

/// 409 for a stale provider generation, in upstream's words.
pub(crate) fn concurrent_update(uuid: &str) -> Error {
    Error::conflict(format!(
        "resource provider generation conflict: {uuid} was changed by another request"
    ))
    .with_code(code::CONCURRENT_UPDATE)
}
