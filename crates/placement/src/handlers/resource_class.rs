//! `/resource_classes` (from 1.2): list, create, show, update (1.2 - 1.6),
//! create-or-validate without a body (1.7), delete.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::header::LOCATION;
use http::{HeaderMap, StatusCode};
use microversion::VersionSpan;
use microversion_server::{BodySchemas, BuildError, ServedVersion, VersionedRouter};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::RequestContext;
use crate::db::standard;
use crate::error::{Error, Result};
use crate::handlers::util::{Path, body_schemas, check_accept, json_body, json_response, later};
use crate::handlers::{RequestSchemas, RouterState};
use crate::history;
use crate::objects::resource_class::{self, Deleted, ResourceClass};
use crate::policy::Action;
use crate::proxy::Origin;
use crate::state::AppState;

/// Resource classes came in 1.2.
const RESOURCE_CLASSES: VersionSpan = history::RESOURCE_CLASSES.since();

pub(crate) fn routes(router: VersionedRouter<RouterState>) -> VersionedRouter<RouterState> {
    router
        .get("/resource_classes", RESOURCE_CLASSES, list)
        .post("/resource_classes", RESOURCE_CLASSES, create)
        .get("/resource_classes/{name}", RESOURCE_CLASSES, show)
        .put(
            "/resource_classes/{name}",
            history::RESOURCE_CLASSES.until(history::PUT_RESOURCE_CLASS),
            update,
        )
        .put(
            "/resource_classes/{name}",
            history::PUT_RESOURCE_CLASS.since(),
            create_or_validate,
        )
        .delete("/resource_classes/{name}", RESOURCE_CLASSES, delete)
}

/// The body of POST (and of PUT before 1.7): a custom class name.
#[derive(Debug, Deserialize)]
pub(crate) struct NameBody {
    name: String,
}

/// The request bodies of these routes.
#[derive(Debug)]
pub(crate) struct Schemas {
    pub(crate) name: BodySchemas<NameBody>,
}

impl Schemas {
    pub(crate) fn build() -> std::result::Result<Schemas, BuildError> {
        let name = body_schemas("resource class")
            .json_schema(
                VersionSpan::ALL,
                &json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "pattern": "^CUSTOM_[A-Z0-9_]+$", "maxLength": 255}
                    },
                    "required": ["name"],
                    "additionalProperties": false
                }),
            )
            .build()?;
        Ok(Schemas { name })
    }
}

fn link(origin: &Origin, name: &str) -> Value {
    json!([{"rel": "self", "href": origin.link(&format!("/resource_classes/{name}"))}])
}

fn render(origin: &Origin, rc: &ResourceClass) -> Value {
    json!({"name": rc.name, "links": link(origin, &rc.name)})
}

fn not_found(name: &str) -> Error {
    Error::not_found(format!("No such resource class {name}."))
}

async fn list(
    State(state): State<AppState>,
    ctx: RequestContext,
    version: ServedVersion,
    origin: Origin,
    headers: HeaderMap,
) -> Result<Response> {
    state.authorize(&ctx, Action::ResourceClassesList)?;
    check_accept(&headers)?;
    let classes = resource_class::list(&state.store).await?;
    let last_modified = classes.iter().fold(None, |acc, rc| later(acc, rc.updated));
    let body = json!({"resource_classes": classes.iter().map(|rc| render(&origin, rc)).collect::<Vec<_>>()});
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
    origin: Origin,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Response> {
    state.authorize(&ctx, Action::ResourceClassesShow)?;
    check_accept(&headers)?;
    let rc = resource_class::find(&state.store, &name)
        .await?
        .ok_or_else(|| not_found(&name))?;
    // Standard classes are not dated in a way worth telling: use now.
    let last_modified = (!rc.is_standard()).then_some(rc.updated).flatten();
    Ok(json_response(
        *version,
        StatusCode::OK,
        &render(&origin, &rc),
        last_modified,
    ))
}

async fn create(
    State(state): State<AppState>,
    State(schemas): State<Arc<RequestSchemas>>,
    ctx: RequestContext,
    version: ServedVersion,
    origin: Origin,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response> {
    state.authorize(&ctx, Action::ResourceClassesCreate)?;
    let NameBody { name } = json_body(&schemas.resource_class.name, *version, &headers, &body)?;
    if standard::is_standard_resource_class(&name) {
        return Err(conflicting(&name));
    }
    match resource_class::create(&state.store, &name).await? {
        Some(rc) => Ok((
            StatusCode::CREATED,
            [(
                LOCATION,
                origin.link(&format!("/resource_classes/{}", rc.name)),
            )],
        )
            .into_response()),
        None => Err(conflicting(&name)),
    }
}

fn conflicting(name: &str) -> Error {
    Error::conflict(format!("Conflicting resource class already exists: {name}"))
}

// Extractors: one argument each.
#[expect(clippy::too_many_arguments)]
async fn update(
    State(state): State<AppState>,
    State(schemas): State<Arc<RequestSchemas>>,
    ctx: RequestContext,
    version: ServedVersion,
    origin: Origin,
    headers: HeaderMap,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<Response> {
    state.authorize(&ctx, Action::ResourceClassesUpdate)?;
    let NameBody { name: new_name } =
        json_body(&schemas.resource_class.name, *version, &headers, &body)?;
    let store = &state.store;
    let rc = resource_class::find(store, &name)
        .await?
        .ok_or_else(|| not_found(&name))?;
    if rc.is_standard() {
        return Err(Error::bad_request(format!(
            "Cannot update standard resource class {name}"
        )));
    }
    resource_class::rename(store, rc.id, &new_name).await?;
    let updated = ResourceClass {
        name: new_name,
        ..rc
    };
    Ok(json_response(
        *version,
        StatusCode::OK,
        &render(&origin, &updated),
        None,
    ))
}

async fn create_or_validate(
    State(state): State<AppState>,
    State(schemas): State<Arc<RequestSchemas>>,
    ctx: RequestContext,
    version: ServedVersion,
    origin: Origin,
    Path(name): Path<String>,
) -> Result<Response> {
    state.authorize(&ctx, Action::ResourceClassesUpdate)?;
    // Upstream validates the name as the body `{"name": "<name>"}`, made
    // by string formatting (so a quote in the name is malformed JSON).
    let as_body = format!("{{\"name\": \"{name}\"}}");
    schemas
        .resource_class
        .name
        .parse(*version, as_body.as_bytes())?;
    let location = [(LOCATION, origin.link(&format!("/resource_classes/{name}")))];
    if resource_class::find(&state.store, &name).await?.is_some() {
        return Ok((StatusCode::NO_CONTENT, location).into_response());
    }
    let status = match resource_class::create(&state.store, &name).await? {
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
    state.authorize(&ctx, Action::ResourceClassesDelete)?;
    let store = &state.store;
    let rc = resource_class::find(store, &name)
        .await?
        .ok_or_else(|| not_found(&name))?;
    if rc.is_standard() {
        return Err(Error::bad_request(format!(
            "Error in delete resource class: Cannot delete standard resource class {name}."
        )));
    }
    match resource_class::delete(store, rc.id).await? {
        Deleted::Done => Ok(StatusCode::NO_CONTENT.into_response()),
        Deleted::InUse => Err(Error::conflict(format!(
            "Error in delete resource class: Cannot delete resource class {name}. Class is in use in inventory."
        ))),
        Deleted::Gone => Err(not_found(&name)),
    }
}
