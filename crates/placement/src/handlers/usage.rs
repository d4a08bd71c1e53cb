//! Usages: `/resource_providers/{uuid}/usages`, and `GET /usages` (1.9)
//! for a project (and user), grouped by consumer type with a consumer
//! count from 1.38.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::response::Response;
use http::{HeaderMap, StatusCode};
use jsonschema_python_messages::PythonSchema;
use microversion::VersionSpan;
use microversion_server::{BuildError, ServedVersion, VersionedRouter};
use serde_json::{Map, Value, json};

use crate::context::RequestContext;
use crate::error::Result;
use crate::handlers::resource_provider::{Missing, existing};
use crate::handlers::util::{Path, check_accept, json_response, validate_query};
use crate::handlers::{RequestSchemas, RouterState};
use crate::history;
use crate::objects::usage;
use crate::policy::{Action, Target};
use crate::state::AppState;

pub(crate) fn routes(router: VersionedRouter<RouterState>) -> VersionedRouter<RouterState> {
    router
        .get(
            "/resource_providers/{uuid}/usages",
            VersionSpan::ALL,
            for_provider,
        )
        .get("/usages", history::USAGES.since(), total)
        .methods_at_every_version("/usages")
}

/// Usages grouped by consumer type.
const BY_CONSUMER_TYPE: VersionSpan = history::CONSUMER_TYPES.since();

pub(crate) fn query_schema(consumer_type: bool) -> Value {
    let string = json!({"type": "string", "minLength": 1, "maxLength": 255});
    let mut schema = json!({
        "type": "object",
        "properties": {"project_id": string, "user_id": string},
        "required": ["project_id"],
        "additionalProperties": false
    });
    if consumer_type {
        schema["properties"]["consumer_type"] = json!({
            "type": "string",
            "pattern": "^[A-Z0-9_]+$|^all|^unknown$",
            "minLength": 1,
            "maxLength": 255
        });
    }
    schema
}

/// The query string of `GET /usages`, checked as a JSON object of
/// strings (the last value of a repeated key), as upstream checks it.
#[derive(Debug)]
pub(crate) struct Schemas {
    /// Before 1.38.
    pub(crate) query: PythonSchema,
    /// From 1.38, with `consumer_type`.
    pub(crate) query_by_type: PythonSchema,
}

impl Schemas {
    pub(crate) fn build() -> std::result::Result<Schemas, BuildError> {
        let compile = |consumer_type, versions| {
            PythonSchema::new(&query_schema(consumer_type)).map_err(|e| BuildError::InvalidSchema {
                name: "the query of GET /usages".to_owned(),
                versions,
                source: Box::new(e),
            })
        };
        Ok(Schemas {
            query: compile(false, history::USAGES.until(history::CONSUMER_TYPES))?,
            query_by_type: compile(true, BY_CONSUMER_TYPE)?,
        })
    }
}

async fn for_provider(
    State(state): State<AppState>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    Path(uuid): Path<String>,
) -> Result<Response> {
    check_accept(&headers)?;
    state.authorize(&ctx, Action::ProviderUsages)?;
    let rp = existing(&state, &uuid, Missing::Repeated).await?;
    let usages = usage::by_provider(&state.store, &uuid).await?;
    let body = json!({"resource_provider_generation": rp.generation, "usages": usages});
    // Usage is what it is now.
    Ok(json_response(*version, StatusCode::OK, &body, None))
}

/// The query parameters, the last value of each.
fn query_object(query: Option<&str>) -> Map<String, Value> {
    let mut params = Map::new();
    for (key, value) in url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        params.insert(key.into_owned(), Value::String(value.into_owned()));
    }
    params
}

async fn total(
    State(state): State<AppState>,
    State(schemas): State<Arc<RequestSchemas>>,
    ctx: RequestContext,
    version: ServedVersion,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Result<Response> {
    check_accept(&headers)?;
    let params = query_object(query.as_deref());
    let project_id = params.get("project_id").and_then(Value::as_str);
    // Upstream checks policy against the project asked for, before it
    // checks the query (a missing project is the text "None").
    let target = Target::default().with("project_id", project_id.unwrap_or("None"));
    state.authorize_on(&ctx, Action::Usages, &target)?;
    let by_type = BY_CONSUMER_TYPE.contains(version);
    let schemas = &schemas.usage;
    let schema = if by_type {
        &schemas.query_by_type
    } else {
        &schemas.query
    };
    validate_query(schema, &Value::Object(params.clone()))?;
    let project_id = project_id.unwrap_or_default();
    let filter = usage::Filter {
        project_id,
        user_id: params.get("user_id").and_then(Value::as_str),
    };
    let body = if by_type {
        let consumer_type = params.get("consumer_type").and_then(Value::as_str);
        let groups = usage::by_consumer_type(&state.store, filter, consumer_type).await?;
        let usages: Map<String, Value> = groups
            .into_iter()
            .map(|(name, group)| {
                let mut entry: Map<String, Value> = group
                    .usages
                    .into_iter()
                    .map(|(class, used)| (class, json!(used)))
                    .collect();
                entry.insert("consumer_count".to_owned(), json!(group.consumer_count));
                (name, Value::Object(entry))
            })
            .collect();
        json!({"usages": usages})
    } else {
        json!({"usages": usage::by_project(&state.store, filter).await?})
    };
    Ok(json_response(*version, StatusCode::OK, &body, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn the_last_value_of_a_key_counts() {
        let q = query_object(Some("project_id=a&user_id=b+c&project_id=d%20e"));
        assert_eq!(q["project_id"], "d e");
        assert_eq!(q["user_id"], "b c");
        assert!(query_object(None).is_empty());
    }

    #[test]
    fn the_query_is_checked_as_upstream_checks_it() {
        let check = |schema: &PythonSchema, q: &str| {
            validate_query(schema, &Value::Object(query_object(Some(q))))
        };
        let schemas = Schemas::build().unwrap();
        let (v19, v138) = (&schemas.query, &schemas.query_by_type);
        assert!(check(v19, "project_id=p").is_ok());
        assert!(check(v19, "user_id=u").is_err());
        assert!(check(v19, "project_id=p&consumer_type=all").is_err());
        assert!(check(v138, "project_id=p&consumer_type=all").is_ok());
        assert!(check(v138, "project_id=p&consumer_type=INSTANCE").is_ok());
        assert!(check(v138, "project_id=p&consumer_type=instance").is_err());
        let detail = |schema, q| match check(schema, q) {
            Err(Error::Api(e)) => e.detail().to_owned(),
            other => panic!("{other:?}"),
        };
        let d = detail(v19, "project_id=");
        assert!(d.starts_with("Invalid query string parameters: ''"), "{d}");
        assert!(d.contains("Failed validating 'minLength'"), "{d}");
        let d = detail(v19, "project_id=p&dummy=1");
        assert!(
            d.contains("Additional properties are not allowed ('dummy' was unexpected)"),
            "{d}"
        );
    }
}
