//! `/resource_providers/{uuid}/inventories`: list, add one, replace all,
//! delete all (from 1.5; 405 before), and one class: show, update,
//! delete. Reserved may equal total from 1.26.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::header::LOCATION;
use http::{HeaderMap, Method, StatusCode};
use microversion::{Version, VersionSpan};
use microversion_server::{BodySchemas, BuildError, ServedVersion, VersionedRouter};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::context::RequestContext;
use crate::error::{Error, Result, code};
use crate::handlers::resource_provider::{self, Missing, existing};
use crate::handlers::util::{Path, body_schemas, check_accept, json_response_dated, require_json};
use crate::handlers::{RequestSchemas, RouterState};
use crate::history;
use crate::objects::inventory::{self, Inventory, WriteError};
use crate::policy::Action;
use crate::proxy::Origin;
use crate::state::AppState;

const INVENTORIES: &str = "/resource_providers/{uuid}/inventories";
const INVENTORY: &str = "/resource_providers/{uuid}/inventories/{resource_class}";

pub(crate) fn routes(router: VersionedRouter<RouterState>) -> VersionedRouter<RouterState> {
    router
        .get(INVENTORIES, VersionSpan::ALL, list)
        .post(INVENTORIES, VersionSpan::ALL, create)
        .put(INVENTORIES, VersionSpan::ALL, replace)
        .delete(INVENTORIES, history::DELETE_INVENTORIES.since(), delete_all)
        .unavailable_status(INVENTORIES, &Method::DELETE, StatusCode::METHOD_NOT_ALLOWED)
        .get(INVENTORY, VersionSpan::ALL, show)
        .put(INVENTORY, VersionSpan::ALL, update)
        .delete(INVENTORY, VersionSpan::ALL, delete)
}

/// Reserved may equal total from this version.
const RESERVED_CAN_BE_TOTAL: VersionSpan = history::RESERVED_EQUALS_TOTAL.since();

/// The largest integer the database keeps.
const MAX_INT: i64 = 2_147_483_647;
/// The largest single-precision float (upstream's limit on ratios).
const SQL_SP_FLOAT_MAX: f64 = 3.40282e38;

/// The fields of one inventory in a body, with upstream's defaults.
/// Integers may be written as integral floats (`2048.0`), which JSON
/// Schema counts as integers.
#[derive(Clone, Debug, Deserialize)]
struct Fields {
    #[serde(deserialize_with = "integer")]
    total: i64,
    #[serde(default, deserialize_with = "integer")]
    reserved: i64,
    #[serde(default = "one", deserialize_with = "integer")]
    min_unit: i64,
    #[serde(default = "max_int", deserialize_with = "integer")]
    max_unit: i64,
    #[serde(default = "one", deserialize_with = "integer")]
    step_size: i64,
    #[serde(default = "ratio_one")]
    allocation_ratio: f64,
}

/// An integer, or a float with no fractional part within `i64`.
fn integer<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<i64, D::Error> {
    let number = serde_json::Number::deserialize(d)?;
    if let Some(i) = number.as_i64() {
        return Ok(i);
    }
    match number.as_f64() {
        #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
        Some(f) if f.fract() == 0.0 && f.abs() < i64::MAX as f64 => Ok(f as i64),
        _ => Err(serde::de::Error::custom(format!(
            "{number} is not an integer"
        ))),
    }
}

fn one() -> i64 {
    1
}

fn max_int() -> i64 {
    MAX_INT
}

fn ratio_one() -> f64 {
    1.0
}

impl Fields {
    fn into_inventory(self, resource_class: &str) -> Inventory {
        Inventory {
            resource_class: resource_class.to_owned(),
            total: self.total,
            reserved: self.reserved,
            min_unit: self.min_unit,
            max_unit: self.max_unit,
            step_size: self.step_size,
            allocation_ratio: self.allocation_ratio,
            created_at: None,
            updated_at: None,
        }
    }
}

/// The body of POST: one inventory and its class.
#[derive(Debug, Deserialize)]
pub(crate) struct CreateBody {
    resource_class: String,
    #[serde(flatten)]
    fields: Fields,
}

/// The body of PUT on one class.
#[derive(Debug, Deserialize)]
pub(crate) struct UpdateBody {
    #[serde(deserialize_with = "integer")]
    resource_provider_generation: i64,
    #[serde(flatten)]
    fields: Fields,
}

/// The body of PUT on all inventories.
#[derive(Debug, Deserialize)]
pub(crate) struct ReplaceBody {
    #[serde(deserialize_with = "integer")]
    resource_provider_generation: i64,
    inventories: BTreeMap<String, Fields>,
}

/// The properties of one inventory record (upstream's
/// `BASE_INVENTORY_SCHEMA`).
fn record_properties() -> Value {
    let int = || json!({"type": "integer", "maximum": MAX_INT, "minimum": 1});
    json!({
        "resource_provider_generation": {"type": "integer"},
        "total": int(),
        "reserved": {"type": "integer", "maximum": MAX_INT, "minimum": 0},
        "min_unit": int(),
        "max_unit": int(),
        "step_size": int(),
        "allocation_ratio": {"type": "number", "maximum": SQL_SP_FLOAT_MAX},
    })
}

const RC_PATTERN: &str = "^[A-Z0-9_]+$";

/// The request bodies of these routes.
#[derive(Debug)]
pub(crate) struct Schemas {
    pub(crate) create: BodySchemas<CreateBody>,
    pub(crate) update: BodySchemas<UpdateBody>,
    pub(crate) replace: BodySchemas<ReplaceBody>,
}

impl Schemas {
    pub(crate) fn build() -> std::result::Result<Schemas, BuildError> {
        let mut create_properties = record_properties();
        create_properties["resource_class"] = json!({"type": "string", "pattern": RC_PATTERN});
        let create = body_schemas("POST /resource_providers/{uuid}/inventories")
            .json_schema(
                VersionSpan::ALL,
                &json!({
                    "type": "object",
                    "properties": create_properties,
                    "required": ["total", "resource_class"],
                    "additionalProperties": false
                }),
            )
            .build()?;
        let update = body_schemas("PUT /resource_providers/{uuid}/inventories/{resource_class}")
            .json_schema(
                VersionSpan::ALL,
                &json!({
                    "type": "object",
                    "properties": record_properties(),
                    "required": ["total", "resource_provider_generation"],
                    "additionalProperties": false
                }),
            )
            .build()?;
        let record = json!({
            "type": "object",
            "properties": record_properties(),
            "required": ["total"],
            "additionalProperties": false
        });
        let replace = body_schemas("PUT /resource_providers/{uuid}/inventories")
            .json_schema(
                VersionSpan::ALL,
                &json!({
                    "type": "object",
                    "properties": {
                        "resource_provider_generation": {"type": "integer"},
                        "inventories": {
                            "type": "object",
                            "patternProperties": {RC_PATTERN: record}
                        }
                    },
                    "required": ["resource_provider_generation", "inventories"],
                    "additionalProperties": false
                }),
            )
            .build()?;
        Ok(Schemas {
            create,
            update,
            replace,
        })
    }
}

fn inventory_url(uuid: &str, class: &str) -> String {
    format!("{}/inventories/{class}", resource_provider::url(uuid))
}

fn fields(inv: &Inventory) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("total".to_owned(), json!(inv.total));
    map.insert("reserved".to_owned(), json!(inv.reserved));
    map.insert("min_unit".to_owned(), json!(inv.min_unit));
    map.insert("max_unit".to_owned(), json!(inv.max_unit));
    map.insert("step_size".to_owned(), json!(inv.step_size));
    map.insert("allocation_ratio".to_owned(), json!(inv.allocation_ratio));
    map
}

/// One inventory, with the provider's generation (which upstream leaves
/// out when it is 0).
fn render_one(inv: &Inventory, generation: i64) -> Value {
    let mut map = fields(inv);
    if generation != 0 {
        map.insert("resource_provider_generation".to_owned(), json!(generation));
    }
    Value::Object(map)
}

/// Every inventory of a provider, by class, and when they last changed
/// (`None` when there are none, as upstream).
fn render_all(inventories: &[Inventory], generation: i64) -> (Value, Option<SystemTime>) {
    let mut by_class = Map::new();
    let mut last = None;
    for inv in inventories {
        let when = inv.last_modified().unwrap_or_else(SystemTime::now);
        last = Some(last.map_or(when, |l: SystemTime| l.max(when)));
        by_class.insert(inv.resource_class.clone(), Value::Object(fields(inv)));
    }
    (
        json!({"resource_provider_generation": generation, "inventories": by_class}),
        last,
    )
}

/// Refuses inventory whose capacity is not positive (before 1.26) or is
/// negative (from 1.26).
fn check_capacity(
    version: Version,
    uuid: &str,
    inventories: &[Inventory],
) -> std::result::Result<(), String> {
    let reserved_can_be_total = RESERVED_CAN_BE_TOTAL.contains(version);
    for inv in inventories {
        let capacity = inv.capacity();
        let class = &inv.resource_class;
        if reserved_can_be_total && capacity < 0 {
            return Err(format!(
                "Invalid inventory for '{class}' on resource provider '{uuid}'. The reserved value is greater than total."
            ));
        }
        if !reserved_can_be_total && capacity <= 0 {
            return Err(format!(
                "Invalid inventory for '{class}' on resource provider '{uuid}'. The reserved value is greater than or equal to total."
            ));
        }
    }
    Ok(())
}

fn generation_conflict() -> Error {
    Error::conflict("resource provider generation conflict").with_code(code::CONCURRENT_UPDATE)
}

async fn list(
    State(state): State<AppState>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    Path(uuid): Path<String>,
) -> Result<Response> {
    check_accept(&headers)?;
    state.authorize(&ctx, Action::InventoriesList)?;
    let rp = existing(&state, &uuid, Missing::RepeatedSpaced).await?;
    let inventories = inventory::list(&state.store, state.store.reader(), rp.id).await?;
    let (body, last_modified) = render_all(&inventories, rp.generation);
    Ok(json_response_dated(
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
    Path((uuid, class)): Path<(String, String)>,
) -> Result<Response> {
    check_accept(&headers)?;
    state.authorize(&ctx, Action::InventoriesShow)?;
    let rp = existing(&state, &uuid, Missing::RepeatedSpaced).await?;
    let inventories = inventory::list(&state.store, state.store.reader(), rp.id).await?;
    let inv = inventories
        .iter()
        .find(|i| i.resource_class == class)
        .ok_or_else(|| Error::not_found(format!("No inventory of class {class} for {uuid}")))?;
    Ok(json_response_dated(
        *version,
        StatusCode::OK,
        &render_one(inv, rp.generation),
        Some(inv.last_modified().unwrap_or_else(SystemTime::now)),
    ))
}

// Extractors: one argument each.
#[expect(clippy::too_many_arguments)]
async fn create(
    State(state): State<AppState>,
    State(schemas): State<Arc<RequestSchemas>>,
    ctx: RequestContext,
    version: ServedVersion,
    origin: Origin,
    headers: HeaderMap,
    Path(uuid): Path<String>,
    body: Bytes,
) -> Result<Response> {
    require_json(&headers)?;
    state.authorize(&ctx, Action::InventoriesCreate)?;
    let rp = existing(&state, &uuid, Missing::Plain).await?;
    let data = schemas.inventory.create.parse(*version, &body)?;
    let class = data.resource_class;
    let inv = data.fields.into_inventory(&class);
    let unable = |why: String| {
        Error::bad_request(format!(
            "Unable to create inventory for resource provider {}: {why}",
            rp.uuid
        ))
    };
    check_capacity(*version, &rp.uuid, std::slice::from_ref(&inv)).map_err(unable)?;
    let generation = inventory::add(&state.store, &rp, &inv)
        .await
        .map_err(|e| match e {
            WriteError::Concurrent | WriteError::Exists(_) => {
                Error::conflict(format!("Update conflict: {}", e.message(&rp.uuid)))
                    .with_code(code::CONCURRENT_UPDATE)
            }
            WriteError::Other(e) => e,
            other => unable(other.message(&rp.uuid)),
        })?;
    let mut response = json_response_dated(
        *version,
        StatusCode::CREATED,
        &render_one(&inv, generation),
        Some(SystemTime::now()),
    );
    if let Ok(location) =
        http::HeaderValue::try_from(origin.absolute_url(&headers, &inventory_url(&rp.uuid, &class)))
    {
        response.headers_mut().insert(LOCATION, location);
    }
    Ok(response)
}

async fn update(
    State(state): State<AppState>,
    State(schemas): State<Arc<RequestSchemas>>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    Path((uuid, class)): Path<(String, String)>,
    body: Bytes,
) -> Result<Response> {
    require_json(&headers)?;
    state.authorize(&ctx, Action::InventoriesUpdate)?;
    let rp = existing(&state, &uuid, Missing::Plain).await?;
    let data = schemas.inventory.update.parse(*version, &body)?;
    if data.resource_provider_generation != rp.generation {
        return Err(generation_conflict());
    }
    let inv = data.fields.into_inventory(&class);
    check_capacity(*version, &rp.uuid, std::slice::from_ref(&inv)).map_err(|why| {
        Error::bad_request(format!(
            "Unable to update inventory for resource provider {}: {why}",
            rp.uuid
        ))
    })?;
    let generation = inventory::update(&state.store, &rp, &inv)
        .await
        .map_err(|e| match e {
            WriteError::Concurrent | WriteError::Exists(_) => {
                Error::conflict(format!("update conflict: {}", e.message(&rp.uuid)))
                    .with_code(code::CONCURRENT_UPDATE)
            }
            // An unknown class is a lookup that fails: 404.
            WriteError::ResourceClassNotFound(_) => Error::not_found(e.message(&rp.uuid)),
            WriteError::NoInventory(_) => Error::bad_request(format!(
                "No inventory record with resource class for resource provider {}: {}",
                rp.uuid,
                e.message(&rp.uuid)
            )),
            WriteError::InUse(_) => {
                Error::conflict(format!("update conflict: {}", e.message(&rp.uuid)))
                    .with_code(code::INVENTORY_INUSE)
            }
            WriteError::Other(e) => e,
        })?;
    Ok(json_response_dated(
        *version,
        StatusCode::OK,
        &render_one(&inv, generation),
        Some(SystemTime::now()),
    ))
}

async fn replace(
    State(state): State<AppState>,
    State(schemas): State<Arc<RequestSchemas>>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    Path(uuid): Path<String>,
    body: Bytes,
) -> Result<Response> {
    require_json(&headers)?;
    state.authorize(&ctx, Action::InventoriesUpdate)?;
    let rp = existing(&state, &uuid, Missing::Plain).await?;
    let data = schemas.inventory.replace.parse(*version, &body)?;
    if data.resource_provider_generation != rp.generation {
        return Err(generation_conflict());
    }
    let inventories: Vec<Inventory> = data
        .inventories
        .into_iter()
        .map(|(class, fields)| fields.into_inventory(&class))
        .collect();
    check_capacity(*version, &rp.uuid, &inventories).map_err(|why| {
        Error::bad_request(format!(
            "Unable to update inventory for resource provider {}: {why}",
            rp.uuid
        ))
    })?;
    let generation = inventory::replace(&state.store, &rp, &inventories)
        .await
        .map_err(|e| {
            let message = e.message(&rp.uuid);
            match e {
                WriteError::ResourceClassNotFound(_) => Error::bad_request(format!(
                    "Unknown resource class in inventory for resource provider {}: {message}",
                    rp.uuid
                )),
                WriteError::NoInventory(_) => Error::conflict(format!(
                    "Race condition detected when setting inventory. No inventory record with resource class for resource provider {}: {message}",
                    rp.uuid
                )),
                WriteError::Concurrent | WriteError::Exists(_) => {
                    Error::conflict(format!("update conflict: {message}"))
                        .with_code(code::CONCURRENT_UPDATE)
                }
                WriteError::InUse(_) => Error::conflict(format!("update conflict: {message}"))
                    .with_code(code::INVENTORY_INUSE),
                WriteError::Other(e) => e,
            }
        })?;
    // The new inventories were not read back: they date from now.
    let (body, _) = render_all(&inventories, generation);
    let last_modified = (!inventories.is_empty()).then(SystemTime::now);
    Ok(json_response_dated(
        *version,
        StatusCode::OK,
        &body,
        last_modified,
    ))
}

async fn delete_all(
    State(state): State<AppState>,
    ctx: RequestContext,
    Path(uuid): Path<String>,
) -> Result<Response> {
    state.authorize(&ctx, Action::InventoriesDelete)?;
    let rp = existing(&state, &uuid, Missing::Plain).await?;
    inventory::replace(&state.store, &rp, &[])
        .await
        .map_err(|e| match e {
            WriteError::Concurrent => Error::conflict(format!(
                "Unable to delete inventory for resource provider {} because the inventory was updated by another process. Please retry your request.",
                rp.uuid
            ))
            .with_code(code::CONCURRENT_UPDATE),
            WriteError::InUse(_) => {
                Error::conflict(e.message(&rp.uuid)).with_code(code::INVENTORY_INUSE)
            }
            WriteError::Other(e) => e,
            other => Error::conflict(other.message(&rp.uuid)),
        })?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn delete(
    State(state): State<AppState>,
    ctx: RequestContext,
    Path((uuid, class)): Path<(String, String)>,
) -> Result<Response> {
    state.authorize(&ctx, Action::InventoriesDelete)?;
    let rp = existing(&state, &uuid, Missing::Plain).await?;
    inventory::delete(&state.store, &rp, &class)
        .await
        .map_err(|e| {
            let message = e.message(&rp.uuid);
            match e {
                WriteError::ResourceClassNotFound(_) => Error::not_found(format!(
                    "No inventory of class {class} found for delete: {message}"
                )),
                WriteError::NoInventory(_) => Error::not_found(format!(
                    "No inventory of class {class} found for delete: No inventory of class {class} found for delete"
                )),
                WriteError::Other(e) => e,
                _ => Error::conflict(format!(
                    "Unable to delete inventory of class {class}: {message}"
                ))
                .with_code(code::CONCURRENT_UPDATE),
            }
        })?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
