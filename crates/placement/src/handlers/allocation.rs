//! Allocations: `/allocations/{consumer_uuid}` (GET, PUT, DELETE),
//! `POST /allocations` (1.13) for several consumers at once, and
//! `/resource_providers/{uuid}/allocations`.
//!
//! PUT takes a list of providers before 1.12 and a dict keyed by provider
//! from 1.12; project and user are required from 1.8, the consumer
//! generation from 1.28 (when empty allocations remove them), request
//! group mappings are accepted from 1.34, and the consumer type is required
//! from 1.38.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use microversion::{Version, VersionSpan};
use microversion_server::{BodySchemas, BuildError, ServedVersion, VersionedRouter};
use serde_json::{Map, Value, json};

use crate::context::RequestContext;
use crate::error::{Error, Result, code};
use crate::handlers::resource_provider::{Missing, existing};
use crate::handlers::util::{Path, body_schemas, check_accept, json_response, require_json};
use crate::handlers::{RequestSchemas, RouterState};
use crate::history;
use crate::objects::allocation::{
    self, ConsumerWrite, ProviderResources, Rules, WriteError, last_modified,
};
use crate::objects::usage::UNKNOWN_CONSUMER_TYPE;
use crate::policy::Action;
use crate::state::AppState;

pub(crate) fn routes(router: VersionedRouter<RouterState>) -> VersionedRouter<RouterState> {
    router
        .get(
            "/allocations/{consumer_uuid}",
            VersionSpan::ALL,
            list_for_consumer,
        )
        .put(
            "/allocations/{consumer_uuid}",
            VersionSpan::ALL,
            set_for_consumer,
        )
        .delete(
            "/allocations/{consumer_uuid}",
            VersionSpan::ALL,
            delete_for_consumer,
        )
        .post("/allocations", history::POST_ALLOCATIONS.since(), set_many)
        // Upstream declares POST on /allocations at every version: other
        // methods are 405 even before 1.13.
        .methods_at_every_version("/allocations")
        .get(
            "/resource_providers/{uuid}/allocations",
            VersionSpan::ALL,
            list_for_provider,
        )
}

/// Dict-form allocations and project and user in GET and PUT.
const DICT_FORM: VersionSpan = history::DICT_ALLOCATIONS.since();
/// Consumer generations.
const CONSUMER_GENERATION: VersionSpan = history::CONSUMER_GENERATIONS.since();
/// Consumer types.
const CONSUMER_TYPE: VersionSpan = history::CONSUMER_TYPES.since();

/// The upstream patterns of the schemas.
pub(crate) const UUID_PATTERN: &str = "^[0-9a-fA-F-]{36}$";
pub(crate) const RC_PATTERN: &str = "^[A-Z0-9_]+$";
const GROUP_PATTERN: &str = "[a-zA-Z0-9_-]{1,64}";

fn string_255() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": 255})
}

fn resources_schema() -> Value {
    json!({
        "type": "object",
        "minProperties": 1,
        "patternProperties": {RC_PATTERN: {"type": "integer", "minimum": 1}},
        "additionalProperties": false
    })
}

/// Before 1.12: a list of providers and their resources; from 1.8 with
/// project and user.
fn list_schema(with_owner: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "allocations": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {
                        "resource_provider": {
                            "type": "object",
                            "properties": {"uuid": {"type": "string", "format": "uuid"}},
                            "additionalProperties": false,
                            "required": ["uuid"]
                        },
                        "resources": resources_schema()
                    },
                    "required": ["resource_provider", "resources"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["allocations"],
        "additionalProperties": false
    });
    if with_owner {
        schema["properties"]["project_id"] = string_255();
        schema["properties"]["user_id"] = string_255();
        schema["required"] = json!(["allocations", "project_id", "user_id"]);
    }
    schema
}

/// From 1.12: a dict of providers; `deletable` allows it empty (POST, and
/// PUT from 1.28); then the consumer generation (1.28), mappings (1.34)
/// and consumer type (1.38).
fn dict_schema(deletable: bool, since: Version) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "allocations": {
                "type": "object",
                "minProperties": if deletable { 0 } else { 1 },
                "patternProperties": {
                    UUID_PATTERN: {
                        "type": "object",
                        "properties": {
                            "generation": {"type": "integer"},
                            "resources": resources_schema()
                        },
                        "required": ["resources"],
                        "additionalProperties": false
                    }
                },
                "additionalProperties": false
            },
            "project_id": string_255(),
            "user_id": string_255()
        },
        "additionalProperties": false
    });
    let mut required = vec!["allocations", "project_id", "user_id"];
    if CONSUMER_GENERATION.contains(since) {
        schema["properties"]["consumer_generation"] =
            json!({"type": ["integer", "null"], "additionalProperties": false});
        required.push("consumer_generation");
    }
    if since >= Version::new(1, 34) {
        schema["properties"]["mappings"] = json!({
            "type": "object",
            "minProperties": 1,
            "patternProperties": {
                GROUP_PATTERN: {
                    "type": "array",
                    "minItems": 1,
                    "items": {"type": "string", "format": "uuid"}
                }
            }
        });
    }
    if CONSUMER_TYPE.contains(since) {
        schema["properties"]["consumer_type"] = json!({
            "type": "string", "pattern": RC_PATTERN, "minLength": 1, "maxLength": 255
        });
        required.push("consumer_type");
    }
    schema["required"] = json!(required);
    schema
}

/// `POST /allocations` (and the reshaper's allocations): consumers and
/// their allocations, keyed by consumer.
pub(crate) fn many_schema(since: Version, min_consumers: u32) -> Value {
    json!({
        "type": "object",
        "minProperties": min_consumers,
        "additionalProperties": false,
        "patternProperties": {UUID_PATTERN: dict_schema(true, since)}
    })
}

/// The request bodies of these routes, by version.
#[derive(Debug)]
pub(crate) struct Schemas {
    pub(crate) put: BodySchemas<Value>,
    pub(crate) post: BodySchemas<Value>,
}

impl Schemas {
    pub(crate) fn build() -> std::result::Result<Schemas, BuildError> {
        let put = by_version(
            "PUT /allocations/{consumer_uuid}",
            vec![
                (
                    history::INITIAL.until(history::PROJECT_AND_USER),
                    list_schema(false),
                ),
                (
                    history::PROJECT_AND_USER.until(history::DICT_ALLOCATIONS),
                    list_schema(true),
                ),
                (
                    history::DICT_ALLOCATIONS.until(history::CONSUMER_GENERATIONS),
                    dict_schema(false, DICT_FORM.start()),
                ),
                (
                    history::CONSUMER_GENERATIONS.until(history::MAPPINGS),
                    dict_schema(true, CONSUMER_GENERATION.start()),
                ),
                (
                    history::MAPPINGS.until(history::CONSUMER_TYPES),
                    dict_schema(true, Version::new(1, 34)),
                ),
                (
                    history::CONSUMER_TYPES.since(),
                    dict_schema(true, CONSUMER_TYPE.start()),
                ),
            ],
        )?;
        let post = by_version(
            "POST /allocations",
            vec![
                (
                    history::POST_ALLOCATIONS.until(history::CONSUMER_GENERATIONS),
                    many_schema(Version::new(1, 13), 1),
                ),
                (
                    history::CONSUMER_GENERATIONS.until(history::MAPPINGS),
                    many_schema(CONSUMER_GENERATION.start(), 1),
                ),
                (
                    history::MAPPINGS.until(history::CONSUMER_TYPES),
                    many_schema(Version::new(1, 34), 1),
                ),
                (
                    history::CONSUMER_TYPES.since(),
                    many_schema(CONSUMER_TYPE.start(), 1),
                ),
            ],
        )?;
        Ok(Schemas { put, post })
    }
}

/// The body schemas of the operation `name`, one per range of versions.
fn by_version(
    name: &str,
    entries: Vec<(VersionSpan, Value)>,
) -> std::result::Result<BodySchemas<Value>, BuildError> {
    entries
        .into_iter()
        .fold(body_schemas(name), |b, (versions, schema)| {
            b.json_schema(versions, &schema)
        })
        .build()
}

/// The write rules of the served version.
pub(crate) fn rules(version: Version) -> Rules {
    Rules {
        consumer_generations: CONSUMER_GENERATION.contains(version),
        consumer_types: CONSUMER_TYPE.contains(version),
    }
}

/// Upstream's `is_uuid_like` then `str(UUID(...))`: 32 hex digits, with
/// or without hyphens, braces or a `urn:uuid:` prefix, in any case; the
/// canonical form, or `None`.
pub(crate) fn canonical_uuid(text: &str) -> Option<String> {
    let bare: String = text
        .replace("urn:", "")
        .replace("uuid:", "")
        .trim_matches(|c| c == '{' || c == '}')
        .replace('-', "")
        .to_ascii_lowercase();
    if bare.len() != 32 || !bare.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(format!(
        "{}-{}-{}-{}-{}",
        &bare[0..8],
        &bare[8..12],
        &bare[12..16],
        &bare[16..20],
        &bare[20..32]
    ))
}

/// A JSON integer (validated as one), as upstream reads it: `1.0` is 1.
pub(crate) fn integer(value: &Value) -> Option<i64> {
    value.as_i64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0)
            // Saturates: amounts this large fail the inventory checks.
            .map(|f| f as i64)
    })
}

fn resources(value: &Value) -> Vec<(String, i64)> {
    value
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(class, amount)| (class.clone(), integer(amount).unwrap_or(i64::MAX)))
                .collect()
        })
        .unwrap_or_default()
}

/// The dict-form allocations of a validated body.
fn dict_allocations(allocations: Option<&Value>) -> Vec<ProviderResources> {
    allocations
        .and_then(Value::as_object)
        .map(|providers| {
            providers
                .iter()
                .map(|(uuid, entry)| ProviderResources {
                    provider_uuid: uuid.clone(),
                    resources: resources(&entry["resources"]),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The list-form allocations of a validated body: one entry per provider
/// (a later one replaces an earlier one, as upstream's dict does).
fn list_allocations(allocations: Option<&Value>) -> Vec<ProviderResources> {
    let mut out: Vec<ProviderResources> = Vec::new();
    for item in allocations
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let uuid = item["resource_provider"]["uuid"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let entry = ProviderResources {
            provider_uuid: uuid,
            resources: resources(&item["resources"]),
        };
        match out
            .iter_mut()
            .find(|p| p.provider_uuid == entry.provider_uuid)
        {
            Some(existing) => *existing = entry,
            None => out.push(entry),
        }
    }
    out
}

fn text(body: &Map<String, Value>, key: &str) -> Option<String> {
    body.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// A consumer's write from a validated dict-form body.
pub(crate) fn consumer_write(uuid: String, body: &Map<String, Value>) -> ConsumerWrite {
    ConsumerWrite {
        consumer_uuid: uuid,
        project_id: text(body, "project_id"),
        user_id: text(body, "user_id"),
        generation: body.get("consumer_generation").and_then(integer),
        consumer_type: text(body, "consumer_type"),
        allocations: dict_allocations(body.get("allocations")),
    }
}

/// The consumers of a validated `POST /allocations` (or reshaper) body.
pub(crate) fn consumer_writes(body: Option<&Value>) -> Vec<ConsumerWrite> {
    body.and_then(Value::as_object)
        .map(|consumers| {
            consumers
                .iter()
                .map(|(uuid, entry)| {
                    consumer_write(uuid.clone(), entry.as_object().unwrap_or(&Map::new()))
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn list_for_consumer(
    State(state): State<AppState>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    Path(consumer_uuid): Path<String>,
) -> Result<Response> {
    check_accept(&headers)?;
    state.authorize(&ctx, Action::AllocationsList)?;
    // There is no 404: a consumer without allocations has none.
    let (allocations, consumer) = allocation::for_consumer(&state.store, &consumer_uuid).await?;
    let mut by_provider = Map::new();
    for a in &allocations {
        let entry = by_provider
            .entry(a.provider_uuid.clone())
            .or_insert_with(|| json!({"resources": {}}));
        entry["resources"][&a.class] = json!(a.used);
        entry["generation"] = json!(a.provider_generation);
    }
    let mut body = json!({"allocations": by_provider});
    if let Some(c) = consumer.filter(|_| DICT_FORM.contains(version)) {
        body["project_id"] = json!(c.project_id);
        body["user_id"] = json!(c.user_id);
        if CONSUMER_GENERATION.contains(version) {
            body["consumer_generation"] = json!(c.generation);
        }
        if CONSUMER_TYPE.contains(version) {
            body["consumer_type"] =
                json!(c.consumer_type.as_deref().unwrap_or(UNKNOWN_CONSUMER_TYPE));
        }
    }
    let modified = last_modified(allocations.iter().map(|a| a.modified));
    Ok(json_response(*version, StatusCode::OK, &body, modified))
}

async fn list_for_provider(
    State(state): State<AppState>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    Path(uuid): Path<String>,
) -> Result<Response> {
    check_accept(&headers)?;
    state.authorize(&ctx, Action::ProviderAllocationsList)?;
    let rp = existing(&state, &uuid, Missing::Named).await?;
    let allocations = allocation::for_provider(&state.store, rp.id).await?;
    let show_generation = CONSUMER_GENERATION.contains(version);
    let mut by_consumer = Map::new();
    for a in &allocations {
        let entry = by_consumer
            .entry(a.consumer_uuid.clone())
            .or_insert_with(|| json!({"resources": {}}));
        entry["resources"][&a.class] = json!(a.used);
        if show_generation {
            entry["consumer_generation"] = json!(a.consumer_generation);
        }
    }
    let body = json!({
        "allocations": by_consumer,
        "resource_provider_generation": rp.generation,
    });
    let modified = last_modified(allocations.iter().map(|a| a.modified));
    Ok(json_response(*version, StatusCode::OK, &body, modified))
}

/// The 409 and 400 answers of PUT and POST, in upstream's words.
fn write_error(e: WriteError, not_found_prefix: &str) -> Error {
    match e {
        WriteError::Done(e) => e,
        WriteError::NoSuchResourceClass(name) => Error::bad_request(format!(
            "{not_found_prefix}{}",
            WriteError::no_such_class(&name)
        )),
        WriteError::Invalid(detail) | WriteError::InventoryInUse(detail) => {
            Error::conflict(format!("Unable to allocate inventory: {detail}"))
        }
        WriteError::Concurrent(detail) => Error::conflict(format!(
            "Inventory and/or allocations changed while attempting to allocate: {detail}"
        ))
        .with_code(code::CONCURRENT_UPDATE),
    }
}

async fn set_for_consumer(
    State(state): State<AppState>,
    State(schemas): State<Arc<RequestSchemas>>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    Path(consumer_uuid): Path<String>,
    body: Bytes,
) -> Result<Response> {
    require_json(&headers)?;
    state.authorize(&ctx, Action::AllocationsUpdate)?;
    let consumer_uuid = canonical_uuid(&consumer_uuid)
        .ok_or_else(|| Error::bad_request(format!("Malformed consumer_uuid: {consumer_uuid}")))?;
    let data = schemas.allocation.put.parse(*version, &body)?;
    let empty = Map::new();
    let data = data.as_object().unwrap_or(&empty);
    let write = if DICT_FORM.contains(version) {
        consumer_write(consumer_uuid.clone(), data)
    } else {
        ConsumerWrite {
            allocations: list_allocations(data.get("allocations")),
            ..consumer_write(consumer_uuid.clone(), data)
        }
    };
    allocation::write(
        &state.store,
        &state.config,
        vec![write],
        rules(*version),
        Vec::new(),
    )
    .await
    .map_err(|e| {
        write_error(
            e,
            &format!("Unable to allocate inventory for consumer {consumer_uuid}: "),
        )
    })?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn set_many(
    State(state): State<AppState>,
    State(schemas): State<Arc<RequestSchemas>>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response> {
    require_json(&headers)?;
    state.authorize(&ctx, Action::AllocationsManage)?;
    let data = schemas.allocation.post.parse(*version, &body)?;
    let writes = consumer_writes(Some(&data));
    allocation::write(
        &state.store,
        &state.config,
        writes,
        rules(*version),
        Vec::new(),
    )
    .await
    .map_err(|e| write_error(e, "Unable to allocate inventory "))?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn delete_for_consumer(
    State(state): State<AppState>,
    ctx: RequestContext,
    Path(consumer_uuid): Path<String>,
) -> Result<Response> {
    state.authorize(&ctx, Action::AllocationsDelete)?;
    if allocation::delete_for_consumer(&state.store, &state.config, &consumer_uuid).await? {
        Ok(StatusCode::NO_CONTENT.into_response())
    } else {
        Err(Error::not_found(format!(
            "No allocations for consumer '{consumer_uuid}'"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consumer_uuids_are_read_as_upstream_reads_them() {
        let canonical = "75d0f5f7-75d9-458c-b204-f90ac91604ec";
        for form in [
            canonical,
            "75d0f5f775d9458cb204f90ac91604ec",
            "75D0F5F7-75D9-458C-B204-F90AC91604EC",
            "{75d0f5f7-75d9-458c-b204-f90ac91604ec}",
            "urn:uuid:75d0f5f7-75d9-458c-b204-f90ac91604ec",
        ] {
            assert_eq!(canonical_uuid(form).as_deref(), Some(canonical), "{form}");
        }
        for bad in [
            "not-a-uuid",
            "",
            "75d0f5f7-75d9-458c-b204-f90ac91604e",
            "75d0f5f7_75d9458cb204f90ac91604ec",
        ] {
            assert_eq!(canonical_uuid(bad), None, "{bad}");
        }
    }

    #[test]
    fn integers_as_upstream_reads_them() {
        assert_eq!(integer(&json!(3)), Some(3));
        assert_eq!(integer(&json!(3.0)), Some(3));
        assert_eq!(integer(&json!(3.5)), None);
        assert_eq!(integer(&json!(1e30)), Some(i64::MAX));
        assert_eq!(integer(&json!(null)), None);
    }

    #[test]
    fn list_form_keeps_the_last_entry_of_a_provider() {
        let body = json!([
            {"resource_provider": {"uuid": "a"}, "resources": {"VCPU": 1}},
            {"resource_provider": {"uuid": "b"}, "resources": {"DISK_GB": 2}},
            {"resource_provider": {"uuid": "a"}, "resources": {"VCPU": 3}}
        ]);
        let got = list_allocations(Some(&body));
        assert_eq!(
            got,
            vec![
                ProviderResources {
                    provider_uuid: "a".into(),
                    resources: vec![("VCPU".into(), 3)]
                },
                ProviderResources {
                    provider_uuid: "b".into(),
                    resources: vec![("DISK_GB".into(), 2)]
                },
            ]
        );
    }

    #[test]
    fn every_schema_builds() {
        let schemas = Schemas::build().unwrap();
        for v in [(1, 0), (1, 8), (1, 12), (1, 28), (1, 34), (1, 38)] {
            let v = Version::new(v.0, v.1);
            assert!(schemas.put.parse(v, b"{}").is_err(), "{v}");
        }
        assert!(schemas.post.parse(Version::new(1, 13), b"{}").is_err());
        let consumer = "75d0f5f7-75d9-458c-b204-f90ac91604ec";
        let body = json!({consumer: {"allocations": {}, "project_id": "p", "user_id": "u"}});
        let parsed = schemas
            .post
            .parse(Version::new(1, 13), body.to_string().as_bytes())
            .unwrap();
        let writes = consumer_writes(Some(&parsed));
        assert_eq!(writes.len(), 1);
        assert_eq!(writes[0].project_id.as_deref(), Some("p"));
        assert!(writes[0].allocations.is_empty());
        // consumer_generation is required from 1.28, consumer_type from 1.38.
        assert!(
            schemas
                .post
                .parse(Version::new(1, 28), body.to_string().as_bytes())
                .is_err()
        );
    }

    #[test]
    fn a_bad_table_is_a_build_error() {
        // What `router` returns instead of answering requests with it.
        let invalid = by_version(
            "POST /things",
            vec![(
                history::RESOURCE_CLASSES.since(),
                json!({"type": "nonsense"}),
            )],
        );
        match invalid {
            Err(e @ BuildError::InvalidSchema { .. }) => {
                let message = e.to_string();
                assert!(
                    message.starts_with("invalid JSON Schema for POST /things"),
                    "{message}"
                );
            }
            other => panic!("expected an invalid schema, got {other:?}"),
        }
        let overlapping = by_version(
            "POST /things",
            vec![
                (
                    history::INITIAL.until(history::TRAITS),
                    json!({"type": "object"}),
                ),
                (
                    history::DELETE_INVENTORIES.since(),
                    json!({"type": "object"}),
                ),
            ],
        );
        assert!(
            matches!(overlapping, Err(BuildError::Overlap(_))),
            "{overlapping:?}"
        );
    }
}
