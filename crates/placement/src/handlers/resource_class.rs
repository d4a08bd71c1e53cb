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
use crate::db::{self, Bind, Conn, Store, sql, standard};
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
    let (owned, name) = (store.clone(), name.to_owned());
    store
        .writing(move |mut writer| async move {
            for _ in 0..CREATE_TRIES {
                let mut tx = writer.begin().await?;
                let done = match try_insert(&owned, &mut tx.conn(), &name).await {
                    Ok(Some(created)) => tx.commit().await.map(|()| Some(created)),
                    other => other,
                };
                match done {
                    Err(e) if e.is_unique_violation() || e.is_transient() => {}
                    done => return done,
                }
            }
            Err(Error::conflict(format!(
                "Creating resource class {name} met {CREATE_TRIES} concurrent creations; please retry"
            )))
        })
        .await
}

/// One try of [`insert`]: the class with the next free custom id, in the
/// transaction `tx`; `None` when the name is taken.
async fn try_insert(store: &Store, tx: &mut Conn<'_>, name: &str) -> Result<Option<ResourceClass>> {
    let exists = tx
        .row(
            sql!(store, "SELECT id FROM resource_classes WHERE name = ?"),
            &[Bind::from(name)],
            |row| row.required_int(0),
        )
        .await?;
    if exists.is_some() {
        return Ok(None);
    }
    let max_query = format!(
        "SELECT {} FROM resource_classes",
        store.dialect().int("MAX(id)")
    );
    let max = tx.row(&max_query, &[], |row| row.int(0)).await?.flatten();
    let id = match max {
        Some(max) if max >= standard::MIN_CUSTOM_RESOURCE_CLASS_ID => max + 1,
        _ => standard::MIN_CUSTOM_RESOURCE_CLASS_ID,
    };
    let insert = store.dialect().placeholders(format!(
        "INSERT INTO resource_classes (id, name, created_at) VALUES (?, ?, {})",
        store.dialect().timestamp_param()
    ));
    let binds = [Bind::Int(id), Bind::from(name), Bind::from(db::now_text())];
    tx.execute(&insert, &binds).await?;
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
    let (id, renamed) = (rc.id, new_name.clone());
    store
        .transaction(move |store, tx| {
            Box::pin(async move {
                let taken = tx
                    .row(
                        sql!(
                            store,
                            "SELECT id FROM resource_classes WHERE name = ? AND id <> ?"
                        ),
                        &[Bind::from(renamed.as_str()), Bind::Int(id)],
                        |row| row.required_int(0),
                    )
                    .await?;
                if taken.is_some() {
                    return Err(Error::conflict(format!(
                        "Resource class already exists: {renamed}"
                    )));
                }
                let update = store.dialect().placeholders(format!(
                    "UPDATE resource_classes SET name = ?, updated_at = {} WHERE id = ?",
                    store.dialect().timestamp_param()
                ));
                let binds = [
                    Bind::from(renamed),
                    Bind::from(db::now_text()),
                    Bind::Int(id),
                ];
                tx.execute(&update, &binds).await?;
                Ok(())
            })
        })
        .await?;
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
    let id = rc.id;
    let deleted = store
        .transaction(move |store, tx| {
            Box::pin(async move {
                let in_use = tx
                    .row(
                        sql!(
                            store,
                            "SELECT id FROM inventories WHERE resource_class_id = ? LIMIT 1"
                        ),
                        &[Bind::Int(id)],
                        |row| row.required_int(0),
                    )
                    .await?;
                if in_use.is_some() {
                    return Ok(None);
                }
                let done = tx
                    .execute(
                        sql!(store, "DELETE FROM resource_classes WHERE id = ?"),
                        &[Bind::Int(id)],
                    )
                    .await?;
                Ok::<_, Error>(Some(done.rows_affected))
            })
        })
        .await?;
    match deleted {
        None => Err(Error::conflict(format!(
            "Error in delete resource class: Cannot delete resource class {name}. Class is in use in inventory."
        ))),
        Some(0) => Err(not_found(&name)),
        Some(_) => Ok(StatusCode::NO_CONTENT.into_response()),
    }
}
