//! `/resource_classes` (from 1.2): list, create, show, update (1.2 - 1.6),
//! create-or-validate without a body (1.7), delete.

use std::sync::LazyLock;
use std::time::SystemTime;

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::header::LOCATION;
use http::{HeaderMap, StatusCode};
use microversion_server::{BodySchemas, ServedVersion, VersionedRouter, Versions};
use serde::Deserialize;
use serde_json::{Value, json};
use sqlx::Row;

use crate::app::AppState;
use crate::context::RequestContext;
use crate::db::{self, Store, sql, standard};
use crate::error::{Error, Result};
use crate::handlers::util::{body_schemas, check_accept, json_body, json_response, later};

pub(crate) fn routes(router: VersionedRouter<AppState>) -> VersionedRouter<AppState> {
    router
        .get("/resource_classes", Versions::since("1.2"), list)
        .post("/resource_classes", Versions::since("1.2"), create)
        .get("/resource_classes/{name}", Versions::since("1.2"), show)
        .put(
            "/resource_classes/{name}",
            Versions::between("1.2", "1.6"),
            update,
        )
        .put(
            "/resource_classes/{name}",
            Versions::since("1.7"),
            create_or_validate,
        )
        .delete("/resource_classes/{name}", Versions::since("1.2"), delete)
}

/// The body of POST (and of PUT before 1.7): a custom class name.
#[derive(Debug, Deserialize)]
struct NameBody {
    name: String,
}

static NAME_SCHEMA: LazyLock<BodySchemas<NameBody>> = LazyLock::new(|| {
    body_schemas("resource class")
        .json_schema(
            Versions::all(),
            &json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "pattern": "^CUSTOM_[A-Z0-9_]+$", "maxLength": 255}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        )
        .build()
        .unwrap_or_else(|e| panic!("the resource class schema is valid: {e}"))
});

/// A row of `resource_classes`.
struct ResourceClass {
    id: i64,
    name: String,
    updated: Option<SystemTime>,
}

fn link(name: &str) -> Value {
    json!([{"rel": "self", "href": format!("/resource_classes/{name}")}])
}

fn render(rc: &ResourceClass) -> Value {
    json!({"name": rc.name, "links": link(&rc.name)})
}

fn row_to_class(row: &sqlx::any::AnyRow) -> Result<ResourceClass> {
    let stamp = |column: &str| -> Result<Option<SystemTime>> {
        let text: Option<String> = row.try_get(column)?;
        Ok(text.as_deref().and_then(db::parse_timestamp))
    };
    Ok(ResourceClass {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        updated: later(stamp("created_at")?, stamp("updated_at")?),
    })
}

fn select_columns(store: &Store) -> String {
    let d = store.dialect();
    format!(
        "SELECT id, name, {} AS created_at, {} AS updated_at FROM resource_classes",
        d.timestamp_text("created_at"),
        d.timestamp_text("updated_at")
    )
}

async fn find(store: &Store, name: &str) -> Result<Option<ResourceClass>> {
    let query = store
        .dialect()
        .placeholders(format!("{} WHERE name = ?", select_columns(store)));
    let row = sqlx::query(&query)
        .bind(name)
        .fetch_optional(store.reader())
        .await?;
    row.as_ref().map(row_to_class).transpose()
}

fn not_found(name: &str) -> Error {
    Error::not_found(format!("No such resource class {name}."))
}

async fn list(
    State(state): State<AppState>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
) -> Result<Response> {
    state.authorize(&ctx, "placement:resource_classes:list")?;
    check_accept(&headers)?;
    let query = format!("{} ORDER BY id", select_columns(&state.store));
    let rows = sqlx::query(&query).fetch_all(state.store.reader()).await?;
    let classes = rows.iter().map(row_to_class).collect::<Result<Vec<_>>>()?;
    let last_modified = classes.iter().fold(None, |acc, rc| later(acc, rc.updated));
    let body = json!({"resource_classes": classes.iter().map(render).collect::<Vec<_>>()});
    Ok(json_response(
        *version,
        StatusCode::OK,
        &body,
        last_modified,
    ))
}

async fn show(
    State(state): State<AppState>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Response> {
    state.authorize(&ctx, "placement:resource_classes:show")?;
    check_accept(&headers)?;
    let rc = find(&state.store, &name)
        .await?
        .ok_or_else(|| not_found(&name))?;
    // Standard classes are not dated in a way worth telling: use now.
    let last_modified = (rc.id >= standard::MIN_CUSTOM_RESOURCE_CLASS_ID)
        .then_some(rc.updated)
        .flatten();
    Ok(json_response(
        *version,
        StatusCode::OK,
        &render(&rc),
        last_modified,
    ))
}

/// Tries of [`insert`] before it gives up (upstream's count).
const CREATE_TRIES: usize = 100;

/// Creates the custom class `name` with the next free id; `None` when it
/// exists. Concurrent creators may pick the same id: the loser tries again
/// (and finds its name taken, if that was the race), as upstream does.
async fn insert(store: &Store, name: &str) -> Result<Option<ResourceClass>> {
    for _ in 0..CREATE_TRIES {
        match try_insert(store, name).await {
            Err(Error::Db(e)) if db::is_unique_violation(&e) || db::is_transient(&e) => {}
            done => return done,
        }
    }
    Err(Error::conflict(format!(
        "Creating resource class {name} met {CREATE_TRIES} concurrent creations; please retry"
    )))
}

/// One try of [`insert`]: the class with the next free custom id, in a
/// transaction of its own; `None` when the name is taken.
async fn try_insert(store: &Store, name: &str) -> Result<Option<ResourceClass>> {
    let mut tx = store.begin().await?;
    let exists = sqlx::query(sql!(
        store,
        "SELECT id FROM resource_classes WHERE name = ?"
    ))
    .bind(name)
    .fetch_optional(&mut *tx)
    .await?;
    if exists.is_some() {
        return Ok(None);
    }
    let max_query = format!(
        "SELECT {} AS max_id FROM resource_classes",
        store.dialect().int("MAX(id)")
    );
    let max: Option<i64> = sqlx::query(&max_query)
        .fetch_one(&mut *tx)
        .await?
        .try_get("max_id")?;
    let id = match max {
        Some(max) if max >= standard::MIN_CUSTOM_RESOURCE_CLASS_ID => max + 1,
        _ => standard::MIN_CUSTOM_RESOURCE_CLASS_ID,
    };
    let insert = store.dialect().placeholders(format!(
        "INSERT INTO resource_classes (id, name, created_at) VALUES (?, ?, {})",
        store.dialect().timestamp_param()
    ));
    sqlx::query(&insert)
        .bind(id)
        .bind(name)
        .bind(db::now_text())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Some(ResourceClass {
        id,
        name: name.to_owned(),
        updated: Some(SystemTime::now()),
    }))
}

async fn create(
    State(state): State<AppState>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response> {
    state.authorize(&ctx, "placement:resource_classes:create")?;
    let NameBody { name } = json_body(&NAME_SCHEMA, *version, &headers, &body)?;
    if standard::is_standard_resource_class(&name) {
        return Err(conflicting(&name));
    }
    match insert(&state.store, &name).await? {
        Some(rc) => Ok((
            StatusCode::CREATED,
            [(LOCATION, format!("/resource_classes/{}", rc.name))],
        )
            .into_response()),
        None => Err(conflicting(&name)),
    }
}

fn conflicting(name: &str) -> Error {
    Error::conflict(format!("Conflicting resource class already exists: {name}"))
}

async fn update(
    State(state): State<AppState>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<Response> {
    state.authorize(&ctx, "placement:resource_classes:update")?;
    let NameBody { name: new_name } = json_body(&NAME_SCHEMA, *version, &headers, &body)?;
    let store = &state.store;
    let rc = find(store, &name).await?.ok_or_else(|| not_found(&name))?;
    if rc.id < standard::MIN_CUSTOM_RESOURCE_CLASS_ID {
        return Err(Error::bad_request(format!(
            "Cannot update standard resource class {name}"
        )));
    }
    let mut tx = store.begin().await?;
    let taken = sqlx::query(sql!(
        store,
        "SELECT id FROM resource_classes WHERE name = ? AND id <> ?"
    ))
    .bind(&new_name)
    .bind(rc.id)
    .fetch_optional(&mut *tx)
    .await?;
    if taken.is_some() {
        return Err(Error::conflict(format!(
            "Resource class already exists: {new_name}"
        )));
    }
    let update = store.dialect().placeholders(format!(
        "UPDATE resource_classes SET name = ?, updated_at = {} WHERE id = ?",
        store.dialect().timestamp_param()
    ));
    sqlx::query(&update)
        .bind(&new_name)
        .bind(db::now_text())
        .bind(rc.id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    let updated = ResourceClass {
        name: new_name,
        ..rc
    };
    Ok(json_response(
        *version,
        StatusCode::OK,
        &render(&updated),
        None,
    ))
}

async fn create_or_validate(
    State(state): State<AppState>,
    ctx: RequestContext,
    version: ServedVersion,
    Path(name): Path<String>,
) -> Result<Response> {
    state.authorize(&ctx, "placement:resource_classes:update")?;
    // Upstream validates the name as the body `{"name": "<name>"}`, made
    // by string formatting (so a quote in the name is malformed JSON).
    let as_body = format!("{{\"name\": \"{name}\"}}");
    NAME_SCHEMA.parse(*version, as_body.as_bytes())?;
    let location = [(LOCATION, format!("/resource_classes/{name}"))];
    if find(&state.store, &name).await?.is_some() {
        return Ok((StatusCode::NO_CONTENT, location).into_response());
    }
    let status = match insert(&state.store, &name).await? {
        Some(_) => StatusCode::CREATED,
        // Created by someone else meanwhile: it exists, as asked.
        None => StatusCode::NO_CONTENT,
    };
    Ok((status, location).into_response())
}

async fn delete(
    State(state): State<AppState>,
    ctx: RequestContext,
    Path(name): Path<String>,
) -> Result<Response> {
    state.authorize(&ctx, "placement:resource_classes:delete")?;
    let store = &state.store;
    let rc = find(store, &name).await?.ok_or_else(|| not_found(&name))?;
    if rc.id < standard::MIN_CUSTOM_RESOURCE_CLASS_ID {
        return Err(Error::bad_request(format!(
            "Error in delete resource class: Cannot delete standard resource class {name}."
        )));
    }
    let mut tx = store.begin().await?;
    let in_use = sqlx::query(sql!(
        store,
        "SELECT id FROM inventories WHERE resource_class_id = ? LIMIT 1"
    ))
    .bind(rc.id)
    .fetch_optional(&mut *tx)
    .await?;
    if in_use.is_some() {
        return Err(Error::conflict(format!(
            "Error in delete resource class: Cannot delete resource class {name}. Class is in use in inventory."
        )));
    }
    let deleted = sqlx::query(sql!(store, "DELETE FROM resource_classes WHERE id = ?"))
        .bind(rc.id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    if deleted.rows_affected() == 0 {
        return Err(not_found(&name));
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}
