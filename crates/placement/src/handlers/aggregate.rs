//! `/resource_providers/{uuid}/aggregates` (from 1.1): list and replace.
//! Before 1.19 the body is a list of uuids and the generation stays; from
//! 1.19 it carries the provider's generation, which must match and moves
//! on.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::State;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use microversion::{Version, VersionSpan};
use microversion_server::{BodySchemas, BuildError, ServedVersion, VersionedRouter};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::RequestContext;
use crate::error::{Error, Result, code};
use crate::handlers::resource_provider::{Missing, existing};
use crate::handlers::util::{Path, body_schemas, check_accept, json_response_dated, require_json};
use crate::handlers::{RequestSchemas, RouterState};
use crate::history;
use crate::objects::aggregate::{self, SetError};
use crate::policy::Action;
use crate::state::AppState;

const AGGREGATES: &str = "/resource_providers/{uuid}/aggregates";

pub(crate) fn routes(router: VersionedRouter<RouterState>) -> VersionedRouter<RouterState> {
    router
        .get(AGGREGATES, history::AGGREGATES.since(), list)
        .put(AGGREGATES, history::AGGREGATES.since(), replace)
}

/// From this version bodies carry the provider generation.
const WITH_GENERATION: VersionSpan = history::AGGREGATE_GENERATIONS.since();

/// A PUT body: a list of uuids before 1.19, an object with the
/// generation from 1.19 (the schema of the version decides which).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum AggregatesBody {
    List(Vec<String>),
    WithGeneration {
        aggregates: Vec<String>,
        resource_provider_generation: i64,
    },
}

impl AggregatesBody {
    fn aggregates(&self) -> &[String] {
        match self {
            AggregatesBody::List(list)
            | AggregatesBody::WithGeneration {
                aggregates: list, ..
            } => list,
        }
    }

    fn generation(&self) -> Option<i64> {
        match self {
            AggregatesBody::List(_) => None,
            AggregatesBody::WithGeneration {
                resource_provider_generation,
                ..
            } => Some(*resource_provider_generation),
        }
    }
}

fn list_schema() -> Value {
    json!({
        "type": "array",
        "items": {"type": "string", "format": "uuid"},
        "uniqueItems": true
    })
}

/// The request bodies of these routes.
#[derive(Debug)]
pub(crate) struct Schemas {
    pub(crate) put: BodySchemas<AggregatesBody>,
}

impl Schemas {
    pub(crate) fn build() -> std::result::Result<Schemas, BuildError> {
        let put = body_schemas("PUT /resource_providers/{uuid}/aggregates")
            .json_schema(
                history::AGGREGATES.until(history::AGGREGATE_GENERATIONS),
                &list_schema(),
            )
            .json_schema(
                history::AGGREGATE_GENERATIONS.since(),
                &json!({
                    "type": "object",
                    "properties": {
                        "aggregates": list_schema(),
                        "resource_provider_generation": {"type": "integer"}
                    },
                    "required": ["aggregates", "resource_provider_generation"],
                    "additionalProperties": false
                }),
            )
            .build()?;
        Ok(Schemas { put })
    }
}

fn respond(version: Version, aggregates: &[String], generation: i64) -> Response {
    let mut body = json!({"aggregates": aggregates});
    if WITH_GENERATION.contains(version) {
        body["resource_provider_generation"] = json!(generation);
    }
    // Associations are not dated: upstream tells "now".
    json_response_dated(version, StatusCode::OK, &body, Some(SystemTime::now()))
}

async fn list(
    State(state): State<AppState>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    Path(uuid): Path<String>,
) -> Result<Response> {
    check_accept(&headers)?;
    state.authorize(&ctx, Action::AggregatesList)?;
    let rp = existing(&state, &uuid, Missing::Plain).await?;
    let aggregates = aggregate::of_provider(&state.store, state.store.reader(), rp.id).await?;
    Ok(respond(*version, &aggregates, rp.generation))
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
    state.authorize(&ctx, Action::AggregatesUpdate)?;
    let rp = existing(&state, &uuid, Missing::Plain).await?;
    let data = schemas.aggregate.put.parse(*version, &body)?;
    if let Some(generation) = data.generation() {
        if generation != rp.generation {
            return Err(Error::conflict(
                "Resource provider's generation already changed. Please update the generation and try again.",
            )
            .with_code(code::CONCURRENT_UPDATE));
        }
    }
    let generation = aggregate::set(&state.store, &rp, data.aggregates(), data.generation().is_some())
        .await
        .map_err(|e| match e {
            SetError::Concurrent => Error::conflict(
                "Update conflict: Another thread concurrently updated the resource provider data. Please retry your update",
            )
            .with_code(code::CONCURRENT_UPDATE),
            SetError::Duplicate(why) => Error::conflict(format!("Update conflict: {why}")),
            SetError::Other(e) => e,
        })?;
    Ok(respond(*version, data.aggregates(), generation))
}
