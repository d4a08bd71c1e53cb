//! The response bodies of Placement 1.0 to 1.39, by version range, as
//! upstream's handlers write them (its api-ref and gabbi files say the
//! same): JSON Schemas for the OpenAPI documents.

use serde_json::{Value, json};

use crate::handlers::allocation::{RC_PATTERN, UUID_PATTERN};

/// The pattern of a request group's suffix in `mappings` (1.34).
const SUFFIX_PATTERN: &str = "^[a-zA-Z0-9_-]{0,64}$";

fn uuid() -> Value {
    json!({"type": "string", "format": "uuid"})
}

fn nullable_uuid() -> Value {
    json!({"type": ["string", "null"], "format": "uuid"})
}

fn integer() -> Value {
    json!({"type": "integer"})
}

/// An object with exactly these members, all required unless listed in
/// `optional`.
pub(super) fn object(properties: &Value, optional: &[&str]) -> Value {
    let required: Vec<&String> = properties
        .as_object()
        .map(|p| {
            p.keys()
                .filter(|k| !optional.contains(&k.as_str()))
                .collect()
        })
        .unwrap_or_default();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    })
}

/// An object keyed by names matching `pattern`, each holding `value`.
fn keyed(pattern: &str, value: &Value) -> Value {
    json!({
        "type": "object",
        "patternProperties": {pattern: value},
        "additionalProperties": false
    })
}

/// Amounts by resource class.
fn amounts() -> Value {
    keyed(RC_PATTERN, &integer())
}

/// `links`: relations and their URLs.
fn links() -> Value {
    json!({
        "type": "array",
        "items": object(&json!({"rel": {"type": "string"}, "href": {"type": "string"}}), &[])
    })
}

/// The versions document of `GET /`.
pub(super) fn versions() -> Value {
    let version = object(
        &json!({
            "id": {"type": "string"},
            "min_version": {"type": "string"},
            "max_version": {"type": "string"},
            "status": {"type": "string", "enum": ["CURRENT", "SUPPORTED", "DEPRECATED"]},
            "version": {"type": "string"},
            "links": links(),
        }),
        &["version"],
    );
    object(
        &json!({"versions": {"type": "array", "items": version}}),
        &[],
    )
}

/// A resource class.
pub(super) fn resource_class() -> Value {
    object(&json!({"name": {"type": "string"}, "links": links()}), &[])
}

/// `GET /resource_classes`.
pub(super) fn resource_classes() -> Value {
    object(
        &json!({"resource_classes": {"type": "array", "items": resource_class()}}),
        &[],
    )
}

/// A resource provider: parents and roots from 1.14.
pub(super) fn provider(nested: bool) -> Value {
    let mut properties = json!({
        "uuid": uuid(),
        "name": {"type": "string"},
        "generation": integer(),
        "links": links(),
    });
    if nested {
        properties["parent_provider_uuid"] = nullable_uuid();
        properties["root_provider_uuid"] = uuid();
    }
    object(&properties, &[])
}

/// `GET /resource_providers`.
pub(super) fn providers(nested: bool) -> Value {
    object(
        &json!({"resource_providers": {"type": "array", "items": provider(nested)}}),
        &[],
    )
}

fn inventory_fields() -> Value {
    json!({
        "total": integer(),
        "reserved": integer(),
        "min_unit": integer(),
        "max_unit": integer(),
        "step_size": integer(),
        "allocation_ratio": {"type": "number"},
    })
}

/// One inventory, with the provider's generation (left out when it is
/// 0, as upstream does).
pub(super) fn inventory() -> Value {
    let mut properties = inventory_fields();
    properties["resource_provider_generation"] = integer();
    object(&properties, &["resource_provider_generation"])
}

/// Every inventory of a provider.
pub(super) fn inventories() -> Value {
    object(
        &json!({
            "resource_provider_generation": integer(),
            "inventories": keyed(RC_PATTERN, &object(&inventory_fields(), &[])),
        }),
        &[],
    )
}

/// A provider's aggregates: with its generation from 1.19.
pub(super) fn aggregates(generation: bool) -> Value {
    let mut properties = json!({"aggregates": {"type": "array", "items": uuid()}});
    if generation {
        properties["resource_provider_generation"] = integer();
    }
    object(&properties, &[])
}

/// `GET /traits`.
pub(super) fn traits() -> Value {
    object(
        &json!({"traits": {"type": "array", "items": {"type": "string"}}}),
        &[],
    )
}

/// A provider's traits.
pub(super) fn provider_traits() -> Value {
    object(
        &json!({
            "traits": {"type": "array", "items": {"type": "string"}},
            "resource_provider_generation": integer(),
        }),
        &[],
    )
}

/// `GET /allocations/{consumer_uuid}`: the consumer's project and user
/// from 1.12, its generation from 1.28, its type from 1.38; each only
/// when the consumer has allocations.
pub(super) fn consumer_allocations(project: bool, generation: bool, kind: bool) -> Value {
    let mut properties = json!({
        "allocations": keyed(
            UUID_PATTERN,
            &object(&json!({"resources": amounts(), "generation": integer()}), &[]),
        ),
    });
    let mut optional = Vec::new();
    if project {
        properties["project_id"] = json!({"type": "string"});
        properties["user_id"] = json!({"type": "string"});
        optional.extend(["project_id", "user_id"]);
    }
    if generation {
        properties["consumer_generation"] = json!({"type": ["integer", "null"]});
        optional.push("consumer_generation");
    }
    if kind {
        properties["consumer_type"] = json!({"type": "string"});
        optional.push("consumer_type");
    }
    object(&properties, &optional)
}

/// `GET /resource_providers/{uuid}/allocations`: each consumer's
/// generation from 1.28.
pub(super) fn provider_allocations(generation: bool) -> Value {
    let mut consumer = json!({"resources": amounts()});
    if generation {
        consumer["consumer_generation"] = json!({"type": ["integer", "null"]});
    }
    object(
        &json!({
            "allocations": keyed(UUID_PATTERN, &object(&consumer, &[])),
            "resource_provider_generation": integer(),
        }),
        &[],
    )
}

/// The shape of `GET /allocation_candidates` at one version.
#[derive(Clone, Copy, Debug)]
pub(super) struct Candidates {
    /// 1.12: allocation requests keyed by provider, as PUT takes them.
    pub(super) keyed: bool,
    /// 1.17: traits in the summaries.
    pub(super) traits: bool,
    /// 1.29: parents and roots in the summaries.
    pub(super) nested: bool,
    /// 1.34: `mappings` in the requests.
    pub(super) mappings: bool,
}

/// `GET /allocation_candidates`.
pub(super) fn candidates(shape: Candidates) -> Value {
    let allocations = if shape.keyed {
        keyed(UUID_PATTERN, &object(&json!({"resources": amounts()}), &[]))
    } else {
        json!({
            "type": "array",
            "items": object(&json!({
                "resource_provider": object(&json!({"uuid": uuid()}), &[]),
                "resources": amounts(),
            }), &[])
        })
    };
    let mut request = json!({"allocations": allocations});
    if shape.mappings {
        request["mappings"] = keyed(SUFFIX_PATTERN, &json!({"type": "array", "items": uuid()}));
    }
    let capacity = object(&json!({"capacity": integer(), "used": integer()}), &[]);
    let mut summary = json!({"resources": keyed(RC_PATTERN, &capacity)});
    if shape.traits {
        summary["traits"] = json!({"type": "array", "items": {"type": "string"}});
    }
    if shape.nested {
        summary["parent_provider_uuid"] = nullable_uuid();
        summary["root_provider_uuid"] = uuid();
    }
    object(
        &json!({
            "allocation_requests": {"type": "array", "items": object(&request, &[])},
            "provider_summaries": keyed(UUID_PATTERN, &object(&summary, &[])),
        }),
        &[],
    )
}

/// A provider's usages.
pub(super) fn provider_usages() -> Value {
    object(
        &json!({"resource_provider_generation": integer(), "usages": amounts()}),
        &[],
    )
}

/// `GET /usages`: by consumer type from 1.38, each with its count of
/// consumers.
pub(super) fn usages(by_type: bool) -> Value {
    let usages = if by_type {
        let group = json!({
            "type": "object",
            "properties": {"consumer_count": integer()},
            "required": ["consumer_count"],
            "patternProperties": {RC_PATTERN: integer()},
            "additionalProperties": false
        });
        json!({"type": "object", "additionalProperties": group})
    } else {
        amounts()
    };
    object(&json!({"usages": usages}), &[])
}
