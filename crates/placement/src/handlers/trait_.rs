//! `/traits` and `/resource_providers/{uuid}/traits` (from 1.6): list
//! traits (filtered by name and association), create, show and delete
//! custom traits; show, replace and clear a provider's traits.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{RawQuery, State};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::header::LOCATION;
use http::{HeaderMap, StatusCode};
use microversion::{Version, VersionSpan};
use microversion_server::{BodySchemas, BuildError, ServedVersion, VersionedRouter};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::RequestContext;
use crate::error::{Error, Result, code};
use crate::handlers::query::{query_schemas, validate};
use crate::handlers::resource_provider::{Missing, existing};
use crate::handlers::util::{
    Path, body_schemas, cache_headers, check_accept, json_response_dated, require_json,
};
use crate::handlers::{RequestSchemas, RouterState};
use crate::history;
use crate::objects::traits::{self, CUSTOM_NAMESPACE, DeleteError, Filters, SetError, Trait};
use crate::policy::Action;
use crate::proxy::Origin;
use crate::query::QueryParams;
use crate::state::AppState;

const PROVIDER_TRAITS: &str = "/resource_providers/{uuid}/traits";

/// Traits and provider traits came in 1.6.
const TRAITS: VersionSpan = history::TRAITS.since();

pub(crate) fn routes(router: VersionedRouter<RouterState>) -> VersionedRouter<RouterState> {
    router
        .get("/traits", TRAITS, list)
        .get("/traits/{name}", TRAITS, show)
        .put("/traits/{name}", TRAITS, create)
        .delete("/traits/{name}", TRAITS, delete)
        .get(PROVIDER_TRAITS, TRAITS, list_for_provider)
        .put(PROVIDER_TRAITS, TRAITS, set_for_provider)
        .delete(PROVIDER_TRAITS, TRAITS, clear_for_provider)
}

/// The body of `PUT /resource_providers/{uuid}/traits`.
#[derive(Debug, Deserialize)]
pub(crate) struct SetBody {
    traits: Vec<String>,
    resource_provider_generation: i64,
}

/// The query string and request bodies of these routes.
#[derive(Debug)]
pub(crate) struct Schemas {
    pub(crate) list_query: BodySchemas<Value>,
    pub(crate) set: BodySchemas<SetBody>,
}

impl Schemas {
    pub(crate) fn build() -> std::result::Result<Schemas, BuildError> {
        let list_query = query_schemas("GET /traits query")
            .json_schema(
                VersionSpan::ALL,
                &json!({
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "associated": {"type": "string"}},
                    "additionalProperties": false
                }),
            )
            .build()?;
        let set = body_schemas("PUT /resource_providers/{uuid}/traits")
            .json_schema(
                VersionSpan::ALL,
                &json!({
                    "type": "object",
                    "properties": {
                        "traits": {
                            "type": "array",
                            "items": {"type": "string", "minLength": 1, "maxLength": 255}
                        },
                        "resource_provider_generation": {"type": "integer"}
                    },
                    "required": ["traits", "resource_provider_generation"],
                    "additionalProperties": false
                }),
            )
            .build()?;
        Ok(Schemas { list_query, set })
    }
}

/// Names and when the newest of them last changed (now when there are
/// none, as upstream).
fn render(list: &[Trait]) -> (Vec<String>, SystemTime) {
    let last = list
        .iter()
        .map(|t| t.last_modified().unwrap_or_else(SystemTime::now))
        .max()
        .unwrap_or_else(SystemTime::now);
    (list.iter().map(|t| t.name.clone()).collect(), last)
}

/// A custom trait name: `CUSTOM_` then `A`-`Z`, `0`-`9`, `_`; at most
/// 255 characters.
fn is_custom_trait_name(name: &str) -> bool {
    name.chars().count() <= 255
        && name.strip_prefix(CUSTOM_NAMESPACE).is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        })
}

fn no_such_trait(name: &str) -> Error {
    Error::not_found(format!("No such trait(s): {name}."))
}

async fn list(
    State(state): State<AppState>,
    State(schemas): State<Arc<RequestSchemas>>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response> {
    check_accept(&headers)?;
    state.authorize(&ctx, Action::TraitsList)?;
    let params = QueryParams::parse(raw.as_deref())?;
    validate(&params, &schemas.trait_.list_query, *version)?;
    let mut filters = Filters::default();
    if let Some(name) = params.get("name") {
        let Some((op, value)) = name.split_once(':') else {
            return Err(Error::bad_request(format!(
                "Badly formatted name parameter. Expected name query string parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. Got: \"{name}\""
            )));
        };
        match op {
            "in" => filters.name_in = Some(value.split(',').map(str::to_owned).collect()),
            "startswith" => filters.prefix = Some(value.to_owned()),
            // Upstream ignores any other operator.
            _ => {}
        }
    }
    if let Some(associated) = params.get("associated") {
        filters.associated = match associated.to_lowercase().as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => {
                return Err(Error::bad_request(
                    "The query parameter \"associated\" only accepts \"true\" or \"false\"",
                ));
            }
        };
    }
    let found = traits::list(&state.store, &filters).await?;
    let (names, last_modified) = render(&found);
    Ok(json_response_dated(
        *version,
        StatusCode::OK,
        &json!({"traits": names}),
        Some(last_modified),
    ))
}

async fn show(
    State(state): State<AppState>,
    ctx: RequestContext,
    version: ServedVersion,
    Path(name): Path<String>,
) -> Result<Response> {
    state.authorize(&ctx, Action::TraitsShow)?;
    let found = traits::find(&state.store, state.store.reader(), &name)
        .await?
        .ok_or_else(|| no_such_trait(&name))?;
    Ok(cache_headers(
        *version,
        StatusCode::NO_CONTENT.into_response(),
        found.created_at,
    ))
}

async fn create(
    State(state): State<AppState>,
    ctx: RequestContext,
    version: ServedVersion,
    origin: Origin,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Response> {
    state.authorize(&ctx, Action::TraitsUpdate)?;
    if !is_custom_trait_name(&name) {
        return Err(Error::bad_request(
            "The trait is invalid. A valid trait must be no longer than 255 characters, start with the prefix \"CUSTOM_\" and use following characters: \"A\"-\"Z\", \"0\"-\"9\" and \"_\"",
        ));
    }
    let (status, created_at) = match traits::find(&state.store, state.store.reader(), &name).await?
    {
        Some(existing) => (StatusCode::NO_CONTENT, existing.created_at),
        None => match traits::create(&state.store, &name).await? {
            Some(made) => (StatusCode::CREATED, made.created_at),
            // Made by another request meanwhile.
            None => (StatusCode::NO_CONTENT, None),
        },
    };
    let location = origin.absolute_url(&headers, &format!("/traits/{name}"));
    Ok(cache_headers(
        *version,
        (status, [(LOCATION, location)]).into_response(),
        Some(created_at.unwrap_or_else(SystemTime::now)),
    ))
}

async fn delete(
    State(state): State<AppState>,
    ctx: RequestContext,
    Path(name): Path<String>,
) -> Result<Response> {
    state.authorize(&ctx, Action::TraitsDelete)?;
    traits::delete(&state.store, &name)
        .await
        .map_err(|e| match e {
            DeleteError::NotFound => no_such_trait(&name),
            DeleteError::Standard => {
                Error::bad_request(format!("Cannot delete standard trait {name}."))
            }
            DeleteError::InUse => Error::conflict(format!(
                "The trait {name} is in use by a resource provider."
            )),
            DeleteError::Other(e) => e,
        })?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

fn provider_body(list: &[Trait], generation: i64, version: Version) -> Response {
    let (names, last_modified) = render(list);
    json_response_dated(
        version,
        StatusCode::OK,
        &json!({"traits": names, "resource_provider_generation": generation}),
        Some(last_modified),
    )
}

async fn list_for_provider(
    State(state): State<AppState>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    Path(uuid): Path<String>,
) -> Result<Response> {
    check_accept(&headers)?;
    state.authorize(&ctx, Action::ProviderTraitsList)?;
    let rp = existing(&state, &uuid, Missing::Repeated).await?;
    let found = traits::of_provider(&state.store, state.store.reader(), rp.id).await?;
    Ok(provider_body(&found, rp.generation, *version))
}

async fn set_for_provider(
    State(state): State<AppState>,
    State(schemas): State<Arc<RequestSchemas>>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    Path(uuid): Path<String>,
    body: Bytes,
) -> Result<Response> {
    require_json(&headers)?;
    state.authorize(&ctx, Action::ProviderTraitsUpdate)?;
    let data = schemas.trait_.set.parse(*version, &body)?;
    let rp = existing(&state, &uuid, Missing::Plain).await?;
    if data.resource_provider_generation != rp.generation {
        return Err(Error::conflict(
            "Resource provider's generation already changed. Please update the generation and try again.",
        )
        .with_code(code::CONCURRENT_UPDATE));
    }
    let found = if data.traits.is_empty() {
        Vec::new()
    } else {
        traits::list(
            &state.store,
            &Filters {
                name_in: Some(data.traits.clone()),
                ..Filters::default()
            },
        )
        .await?
    };
    let mut unknown: Vec<&str> = Vec::new();
    for name in &data.traits {
        if !found.iter().any(|t| t.name == *name) && !unknown.contains(&name.as_str()) {
            unknown.push(name);
        }
    }
    if !unknown.is_empty() {
        return Err(Error::bad_request(format!(
            "No such trait {}",
            unknown.join(", ")
        )));
    }
    let generation = traits::set_for_provider(&state.store, &rp, &found)
        .await
        .map_err(|e| match e {
            SetError::Concurrent => concurrent(),
            SetError::Other(e) => e,
        })?;
    Ok(provider_body(&found, generation, *version))
}

fn concurrent() -> Error {
    Error::conflict(
        "Another thread concurrently updated the resource provider data. Please retry your update",
    )
    .with_code(code::CONCURRENT_UPDATE)
}

async fn clear_for_provider(
    State(state): State<AppState>,
    ctx: RequestContext,
    Path(uuid): Path<String>,
) -> Result<Response> {
    state.authorize(&ctx, Action::ProviderTraitsDelete)?;
    let rp = existing(&state, &uuid, Missing::Plain).await?;
    traits::set_for_provider(&state.store, &rp, &[])
        .await
        .map_err(|e| match e {
            SetError::Concurrent => concurrent(),
            SetError::Other(e) => e,
        })?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_trait_names() {
        assert!(is_custom_trait_name("CUSTOM_TRAIT_1"));
        assert!(!is_custom_trait_name("CUSTOM_"));
        assert!(!is_custom_trait_name("TRAIT_X"));
        assert!(!is_custom_trait_name("CUSTOM_ABC:1"));
        assert!(!is_custom_trait_name("CUSTOM_abc"));
        assert!(is_custom_trait_name(&format!("CUSTOM_{}", "A".repeat(248))));
        assert!(!is_custom_trait_name(&format!(
            "CUSTOM_{}",
            "A".repeat(249)
        )));
    }
}
