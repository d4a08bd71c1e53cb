//! `POST /reshaper` (1.30): moves inventories and the allocations on them
//! between providers in one transaction (for instance from a root provider
//! to a new child).

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use microversion::Version;
use microversion_server::{BodySchemas, BuildError, ServedVersion, VersionedRouter};
use serde_json::{Value, json};

use crate::context::RequestContext;
use crate::error::{Error, Result, code};
use crate::handlers::allocation::{
    RC_PATTERN, UUID_PATTERN, consumer_writes, integer, many_schema, rules,
};
use crate::handlers::util::{body_schemas, require_json};
use crate::handlers::{RequestSchemas, RouterState};
use crate::history;
use crate::objects::allocation::{self, WriteError};
use crate::objects::inventory::Inventory;
use crate::objects::reshaper::InventoryReplacement;
use crate::policy::Action;
use crate::state::AppState;

pub(crate) fn routes(router: VersionedRouter<RouterState>) -> VersionedRouter<RouterState> {
    router
        .post("/reshaper", history::RESHAPER.since(), reshape)
        .methods_at_every_version("/reshaper")
}

/// Upstream's largest inventory amount and allocation ratio.
const MAX_INT: i64 = 0x7FFF_FFFF;
const SQL_SP_FLOAT_MAX: f64 = 3.40282e+38;

/// One provider's inventories, as `PUT /resource_providers/{uuid}/inventories`
/// takes them.
fn inventories_schema() -> Value {
    let amount = |minimum: i64| json!({"type": "integer", "maximum": MAX_INT, "minimum": minimum});
    json!({
        "type": "object",
        "properties": {
            "resource_provider_generation": {"type": "integer"},
            "inventories": {
                "type": "object",
                "patternProperties": {
                    RC_PATTERN: {
                        "type": "object",
                        "properties": {
                            "resource_provider_generation": {"type": "integer"},
                            "total": amount(1),
                            "reserved": amount(0),
                            "min_unit": amount(1),
                            "max_unit": amount(1),
                            "step_size": amount(1),
                            "allocation_ratio": {"type": "number", "maximum": SQL_SP_FLOAT_MAX}
                        },
                        "required": ["total"],
                        "additionalProperties": false
                    }
                }
            }
        },
        "required": ["resource_provider_generation", "inventories"],
        "additionalProperties": false
    })
}

fn schema(allocations_since: Version) -> Value {
    let mut allocations = many_schema(allocations_since, 0);
    allocations["minProperties"] = json!(0);
    json!({
        "type": "object",
        "properties": {
            "inventories": {
                "type": "object",
                "patternProperties": {UUID_PATTERN: inventories_schema()},
                "minProperties": 1,
                "additionalProperties": false
            },
            "allocations": allocations
        },
        "required": ["inventories", "allocations"],
        "additionalProperties": false
    })
}

/// The request body of `POST /reshaper`.
#[derive(Debug)]
pub(crate) struct Schemas {
    pub(crate) body: BodySchemas<Value>,
}

impl Schemas {
    pub(crate) fn build() -> std::result::Result<Schemas, BuildError> {
        let body = body_schemas("POST /reshaper")
            .json_schema(
                history::RESHAPER.until(history::MAPPINGS),
                &schema(Version::new(1, 28)),
            )
            .json_schema(
                history::MAPPINGS.until(history::CONSUMER_TYPES),
                &schema(Version::new(1, 34)),
            )
            .json_schema(
                history::CONSUMER_TYPES.since(),
                &schema(Version::new(1, 38)),
            )
            .build()?;
        Ok(Schemas { body })
    }
}

/// An inventory record with upstream's defaults, or why it is not one.
fn record(class: &str, provider: &str, value: &Value) -> Result<Inventory> {
    let Some(fields) = value.as_object() else {
        return Err(Error::bad_request(format!(
            "Bad inventory {class} for resource provider {provider}: the inventory must be an object"
        )));
    };
    let int = |key: &str, default: i64| fields.get(key).and_then(integer).unwrap_or(default);
    Ok(Inventory {
        resource_class: class.to_owned(),
        total: int("total", 0),
        reserved: int("reserved", 0),
        min_unit: int("min_unit", 1),
        max_unit: int("max_unit", MAX_INT),
        step_size: int("step_size", 1),
        allocation_ratio: fields
            .get("allocation_ratio")
            .and_then(Value::as_f64)
            .unwrap_or(1.0),
        created_at: None,
        updated_at: None,
    })
}

fn replacements(inventories: Option<&Value>) -> Result<Vec<InventoryReplacement>> {
    let mut out = Vec::new();
    for (uuid, entry) in inventories.and_then(Value::as_object).into_iter().flatten() {
        let records = entry["inventories"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(class, value)| record(class, uuid, value))
            .collect::<Result<Vec<_>>>()?;
        out.push(InventoryReplacement {
            provider_uuid: uuid.clone(),
            generation: integer(&entry["resource_provider_generation"]).unwrap_or(-1),
            inventories: records,
        });
    }
    Ok(out)
}

async fn reshape(
    State(state): State<AppState>,
    State(schemas): State<Arc<RequestSchemas>>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response> {
    require_json(&headers)?;
    state.authorize(&ctx, Action::Reshape)?;
    let data = schemas.reshaper.body.parse(*version, &body)?;
    let inventories = replacements(data.get("inventories"))?;
    let writes = consumer_writes(data.get("allocations"));
    allocation::write(
        &state.store,
        &state.config,
        writes,
        rules(*version),
        inventories,
    )
    .await
    .map_err(|e| match e {
        WriteError::Done(e) => e,
        WriteError::NoSuchResourceClass(name) => Error::bad_request(format!(
            "malformed reshaper data: {}",
            WriteError::no_such_class(&name)
        )),
        WriteError::Concurrent(detail) => {
            Error::conflict(format!("update conflict: {detail}")).with_code(code::CONCURRENT_UPDATE)
        }
        WriteError::InventoryInUse(detail) => {
            Error::conflict(format!("update conflict: {detail}")).with_code(code::INVENTORY_INUSE)
        }
        WriteError::Invalid(detail) => {
            Error::conflict(format!("Unable to allocate inventory: {detail}"))
        }
    })?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_take_upstream_defaults() {
        let r = record("VCPU", "rp", &json!({"total": 8})).unwrap();
        assert_eq!(
            r,
            Inventory {
                resource_class: "VCPU".into(),
                total: 8,
                reserved: 0,
                min_unit: 1,
                max_unit: MAX_INT,
                step_size: 1,
                allocation_ratio: 1.0,
                created_at: None,
                updated_at: None,
            }
        );
        assert!(record("vcpu", "rp", &json!("x")).is_err());
    }

    #[test]
    fn schemas_by_version() {
        let schemas = Schemas::build().unwrap();
        let body = json!({
            "inventories": {"4e05a85b-e8a6-4b3a-82c1-5f6ad3f71d55": {
                "resource_provider_generation": 0, "inventories": {"VCPU": {"total": 1}}}},
            "allocations": {}
        });
        for v in [(1, 30), (1, 34), (1, 38)] {
            assert!(
                schemas
                    .body
                    .parse(Version::new(v.0, v.1), body.to_string().as_bytes())
                    .is_ok()
            );
        }
        let missing = json!({"inventories": body["inventories"]});
        assert!(
            schemas
                .body
                .parse(Version::new(1, 30), missing.to_string().as_bytes())
                .is_err()
        );
    }
}
