//! The OpenAPI documents of the API: made by `microversion-server` from
//! the routes of the handlers (`handlers::routes`), the request body
//! and query schemas the handlers check, and the responses declared here
//! for each version range. `placement-api openapi [--version X.Y]` prints
//! them; with `[openapi] enabled = true` in the config file the service
//! also serves them at `/openapi.json[?version=X.Y]` (upstream has no such
//! path, so it is off by default), and with `[openapi] reference_page =
//! true` as well, an API reference page with a version picker at
//! `/api-ref` (`microversion-server`'s `ReferencePage`).

mod responses;

use std::io::Write as _;
use std::process::ExitCode;

use axum::Router;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use microversion::VersionSpan;
use microversion_server::openapi::{
    ApiDescription, Documents, OperationDoc, ReferencePage, ResponseDoc,
};
use microversion_server::{BuildError, Microversions, VersionedRouter};
use serde_json::{Value, json};

use self::responses::Candidates;
use crate::handlers::{self, RequestSchemas};
use crate::history;

/// The path the documents are served at, when enabled.
pub const OPENAPI_PATH: &str = microversion_server::openapi::DOCUMENTS_PATH;

/// The path of the API reference page, when enabled.
pub const REFERENCE_PAGE_PATH: &str = "/api-ref";

/// The errors every operation but `GET /` may answer: a query string
/// with too many parameters or too long, no or a bad token, a refusal
/// by policy, a body past the limit, the database out of reach.
fn common(doc: OperationDoc) -> OperationDoc {
    doc.error(
        StatusCode::BAD_REQUEST,
        "The query string has more parameters than are accepted.",
    )
    .error(
        StatusCode::UNAUTHORIZED,
        "No token, or one that is not valid.",
    )
    .error(
        StatusCode::FORBIDDEN,
        "The policy does not allow the caller.",
    )
    // Any request may carry a body, and any may have a long query
    // string: the bounds are checked before the route is.
    .error(
        StatusCode::PAYLOAD_TOO_LARGE,
        "The body is larger than the configured limit.",
    )
    .error(
        StatusCode::URI_TOO_LONG,
        "The query string is longer than accepted.",
    )
    .error(
        StatusCode::SERVICE_UNAVAILABLE,
        "The database cannot be reached.",
    )
}

/// What operations that take a body may also answer.
fn with_body(doc: OperationDoc) -> OperationDoc {
    common(doc)
        .error(StatusCode::BAD_REQUEST, "The body is not valid.")
        .error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "The body is not `application/json`.",
        )
}

fn json(description: &str, schema: Value) -> ResponseDoc {
    ResponseDoc::json(description, schema)
}

fn empty(description: &str) -> ResponseDoc {
    ResponseDoc::empty(description)
}

fn uuid_param(what: &str) -> (String, Value) {
    (what.to_owned(), json!({"type": "string"}))
}

/// Every operation of Placement 1.39, documented.
///
/// # Errors
///
/// Fails when the documentation does not match the routes or schemas: a
/// programming error, which the tests catch.
pub fn description() -> Result<ApiDescription, BuildError> {
    let api = crate::versioning::microversions()?;
    let schemas = RequestSchemas::build()?;
    let router = handlers::routes(VersionedRouter::new());
    let (uuid_desc, uuid_schema) = uuid_param("The resource provider's UUID.");
    let provider_path =
        |doc: OperationDoc| doc.path_parameter("uuid", uuid_desc.clone(), uuid_schema.clone());
    let rc_name = json!({"type": "string", "maxLength": 255});
    let not_found = |doc: OperationDoc, what: &str| doc.error(StatusCode::NOT_FOUND, what);
    let no_provider = "No resource provider has that UUID.";
    let conflict = |doc: OperationDoc, what: &str| doc.error(StatusCode::CONFLICT, what);
    let generation_conflict = "The generation given is not the provider's (someone else changed it), or the change conflicts with what exists.";

    let docs = vec![
        // Root.
        OperationDoc::get("/")
            .summary("List versions")
            .description("The API versions with their microversion ranges; not versioned itself.")
            .response(VersionSpan::ALL, StatusCode::OK, json("The versions", responses::versions())),
        // Resource classes (1.2).
        common(OperationDoc::get("/resource_classes"))
            .summary("List resource classes")
            .response(history::RESOURCE_CLASSES.since(), StatusCode::OK, json("The resource classes", responses::resource_classes())),
        conflict(
            with_body(OperationDoc::post("/resource_classes"))
                .summary("Create resource class")
                .body(&schemas.resource_class.name)
                .response(history::RESOURCE_CLASSES.since(), StatusCode::CREATED, empty("Created; `Location` names it.")),
            "A resource class of that name exists.",
        ),
        not_found(
            common(OperationDoc::get("/resource_classes/{name}"))
                .summary("Show resource class")
                .path_parameter("name", "The resource class.", rc_name.clone())
                .response(history::RESOURCE_CLASSES.since(), StatusCode::OK, json("The resource class", responses::resource_class())),
            "No resource class has that name.",
        ),
        not_found(
            conflict(
                with_body(OperationDoc::put("/resource_classes/{name}"))
                    .summary("Update resource class")
                    .description(
                        "Up to 1.6, renames a custom resource class. From 1.7, creates the \
                         custom class `{name}` (201) or finds it exists (204), without a body.",
                    )
                    .path_parameter("name", "The resource class.", rc_name.clone())
                    .body_at(history::RESOURCE_CLASSES.until(history::PUT_RESOURCE_CLASS), &schemas.resource_class.name)
                    .response(history::RESOURCE_CLASSES.until(history::PUT_RESOURCE_CLASS), StatusCode::OK, json("The renamed class", responses::resource_class()))
                    .response(history::PUT_RESOURCE_CLASS.since(), StatusCode::CREATED, empty("Created"))
                    .response(history::PUT_RESOURCE_CLASS.since(), StatusCode::NO_CONTENT, empty("It exists already")),
                "A resource class of the new name exists.",
            ),
            "No resource class has that name.",
        ),
        not_found(
            conflict(
                common(OperationDoc::delete("/resource_classes/{name}"))
                    .summary("Delete resource class")
                    .path_parameter("name", "The resource class.", rc_name.clone())
                    .response(history::RESOURCE_CLASSES.since(), StatusCode::NO_CONTENT, empty("Deleted"))
                    .error(StatusCode::BAD_REQUEST, "Standard resource classes cannot be deleted."),
                "The class has inventories.",
            ),
            "No resource class has that name.",
        ),
        // Resource providers.
        common(OperationDoc::get("/resource_providers"))
            .summary("List resource providers")
            .query(&schemas.resource_provider.list_query)
            .query_description("name", "Only the provider of this name.")
            .query_description("uuid", "Only the provider of this UUID.")
            .query_description("member_of", "Only providers in the aggregate (`in:` one of several; repeated from 1.24; `!` forbidden from 1.32).")
            .query_description("resources", "Only providers with capacity for these amounts: `VCPU:4,DISK_GB:64`.")
            .query_description("in_tree", "Only providers in the tree of this provider.")
            .query_description("required", "Only providers with these traits (`!` forbidden from 1.22; `in:` and repeated from 1.39).")
            .response(history::INITIAL.until(history::NESTED_PROVIDERS), StatusCode::OK, json("The providers", responses::providers(false)))
            .response(history::NESTED_PROVIDERS.since(), StatusCode::OK, json("The providers", responses::providers(true)))
            .error(StatusCode::BAD_REQUEST, "A parameter is not valid."),
        conflict(
            with_body(OperationDoc::post("/resource_providers"))
                .summary("Create resource provider")
                .body(&schemas.resource_provider.create)
                .response(history::INITIAL.until(history::CREATE_ANSWERS_PROVIDER), StatusCode::CREATED, empty("Created; `Location` names it."))
                .response(history::CREATE_ANSWERS_PROVIDER.since(), StatusCode::OK, json("The new provider", responses::provider(true))),
            "A provider of that name or UUID exists.",
        ),
        not_found(
            provider_path(common(OperationDoc::get("/resource_providers/{uuid}")))
                .summary("Show resource provider")
                .response(history::INITIAL.until(history::NESTED_PROVIDERS), StatusCode::OK, json("The provider", responses::provider(false)))
                .response(history::NESTED_PROVIDERS.since(), StatusCode::OK, json("The provider", responses::provider(true))),
            no_provider,
        ),
        not_found(
            conflict(
                provider_path(with_body(OperationDoc::put("/resource_providers/{uuid}")))
                    .summary("Update resource provider")
                    .body(&schemas.resource_provider.update)
                    .response(history::INITIAL.until(history::NESTED_PROVIDERS), StatusCode::OK, json("The provider", responses::provider(false)))
                    .response(history::NESTED_PROVIDERS.since(), StatusCode::OK, json("The provider", responses::provider(true))),
                "Another provider has that name, or the new parent is not allowed.",
            ),
            no_provider,
        ),
        not_found(
            conflict(
                provider_path(common(OperationDoc::delete("/resource_providers/{uuid}")))
                    .summary("Delete resource provider")
                    .response(VersionSpan::ALL, StatusCode::NO_CONTENT, empty("Deleted")),
                "The provider has allocations or children.",
            ),
            no_provider,
        ),
        // Inventories.
        not_found(
            provider_path(common(OperationDoc::get("/resource_providers/{uuid}/inventories")))
                .summary("List resource provider inventories")
                .response(VersionSpan::ALL, StatusCode::OK, json("The inventories", responses::inventories())),
            no_provider,
        ),
        not_found(
            conflict(
                provider_path(with_body(OperationDoc::post("/resource_providers/{uuid}/inventories")))
                    .summary("Create resource provider inventory")
                    .body(&schemas.inventory.create)
                    .response(VersionSpan::ALL, StatusCode::CREATED, json("The new inventory; `Location` names it", responses::inventory())),
                generation_conflict,
            ),
            no_provider,
        ),
        not_found(
            conflict(
                provider_path(with_body(OperationDoc::put("/resource_providers/{uuid}/inventories")))
                    .summary("Update resource provider inventories")
                    .body(&schemas.inventory.replace)
                    .response(VersionSpan::ALL, StatusCode::OK, json("The inventories", responses::inventories())),
                generation_conflict,
            ),
            no_provider,
        ),
        not_found(
            conflict(
                provider_path(common(OperationDoc::delete("/resource_providers/{uuid}/inventories")))
                    .summary("Delete resource provider inventories")
                    .response(history::DELETE_INVENTORIES.since(), StatusCode::NO_CONTENT, empty("Deleted")),
                "The provider has allocations, or changed meanwhile.",
            ),
            no_provider,
        ),
        not_found(
            provider_path(common(OperationDoc::get("/resource_providers/{uuid}/inventories/{resource_class}")))
                .summary("Show resource provider inventory")
                .path_parameter("resource_class", "The resource class.", rc_name.clone())
                .response(VersionSpan::ALL, StatusCode::OK, json("The inventory", responses::inventory())),
            "No such provider, or it has no inventory of the class.",
        ),
        not_found(
            conflict(
                provider_path(with_body(OperationDoc::put("/resource_providers/{uuid}/inventories/{resource_class}")))
                    .summary("Update resource provider inventory")
                    .path_parameter("resource_class", "The resource class.", rc_name.clone())
                    .body(&schemas.inventory.update)
                    .response(VersionSpan::ALL, StatusCode::OK, json("The inventory", responses::inventory())),
                generation_conflict,
            ),
            "No such provider, or it has no inventory of the class.",
        ),
        not_found(
            conflict(
                provider_path(common(OperationDoc::delete("/resource_providers/{uuid}/inventories/{resource_class}")))
                    .summary("Delete resource provider inventory")
                    .path_parameter("resource_class", "The resource class.", rc_name.clone())
                    .response(VersionSpan::ALL, StatusCode::NO_CONTENT, empty("Deleted")),
                "The inventory has allocations, or the provider changed meanwhile.",
            ),
            "No such provider, or it has no inventory of the class.",
        ),
        // Aggregates (1.1).
        not_found(
            provider_path(common(OperationDoc::get("/resource_providers/{uuid}/aggregates")))
                .summary("List resource provider aggregates")
                .response(history::AGGREGATES.until(history::AGGREGATE_GENERATIONS), StatusCode::OK, json("The aggregates", responses::aggregates(false)))
                .response(history::AGGREGATE_GENERATIONS.since(), StatusCode::OK, json("The aggregates", responses::aggregates(true))),
            no_provider,
        ),
        not_found(
            conflict(
                provider_path(with_body(OperationDoc::put("/resource_providers/{uuid}/aggregates")))
                    .summary("Update resource provider aggregates")
                    .body(&schemas.aggregate.put)
                    .response(history::AGGREGATES.until(history::AGGREGATE_GENERATIONS), StatusCode::OK, json("The aggregates", responses::aggregates(false)))
                    .response(history::AGGREGATE_GENERATIONS.since(), StatusCode::OK, json("The aggregates", responses::aggregates(true))),
                generation_conflict,
            ),
            no_provider,
        ),
        // Traits (1.6).
        common(OperationDoc::get("/traits"))
            .summary("List traits")
            .query(&schemas.trait_.list_query)
            .query_description("name", "`startswith:PREFIX` or `in:A,B`.")
            .query_description("associated", "`true`: only traits some provider has; `false`: only traits none has.")
            .response(history::TRAITS.since(), StatusCode::OK, json("The traits", responses::traits()))
            .error(StatusCode::BAD_REQUEST, "A parameter is not valid."),
        not_found(
            common(OperationDoc::get("/traits/{name}"))
                .summary("Show traits")
                .path_parameter("name", "The trait.", json!({"type": "string"}))
                .response(history::TRAITS.since(), StatusCode::NO_CONTENT, empty("The trait exists")),
            "No trait has that name.",
        ),
        common(OperationDoc::put("/traits/{name}"))
            .summary("Update traits")
            .description("Creates the custom trait `{name}` (201), or finds it exists (204).")
            .path_parameter("name", "The trait.", json!({"type": "string"}))
            .response(history::TRAITS.since(), StatusCode::CREATED, empty("Created"))
            .response(history::TRAITS.since(), StatusCode::NO_CONTENT, empty("It exists already"))
            .error(StatusCode::BAD_REQUEST, "The name is not that of a custom trait."),
        not_found(
            conflict(
                common(OperationDoc::delete("/traits/{name}"))
                    .summary("Delete traits")
                    .path_parameter("name", "The trait.", json!({"type": "string"}))
                    .response(history::TRAITS.since(), StatusCode::NO_CONTENT, empty("Deleted"))
                    .error(StatusCode::BAD_REQUEST, "Standard traits cannot be deleted."),
                "A provider has the trait.",
            ),
            "No trait has that name.",
        ),
        not_found(
            provider_path(common(OperationDoc::get("/resource_providers/{uuid}/traits")))
                .summary("List resource provider traits")
                .response(history::TRAITS.since(), StatusCode::OK, json("The traits", responses::provider_traits())),
            no_provider,
        ),
        not_found(
            conflict(
                provider_path(with_body(OperationDoc::put("/resource_providers/{uuid}/traits")))
                    .summary("Update resource provider traits")
                    .body(&schemas.trait_.set)
                    .response(history::TRAITS.since(), StatusCode::OK, json("The traits", responses::provider_traits())),
                generation_conflict,
            ),
            no_provider,
        ),
        not_found(
            conflict(
                provider_path(common(OperationDoc::delete("/resource_providers/{uuid}/traits")))
                    .summary("Delete resource provider traits")
                    .response(history::TRAITS.since(), StatusCode::NO_CONTENT, empty("Deleted")),
                "The provider changed meanwhile.",
            ),
            no_provider,
        ),
        // Allocations.
        common(OperationDoc::get("/allocations/{consumer_uuid}"))
            .summary("List allocations")
            .path_parameter("consumer_uuid", "The consumer's UUID.", json!({"type": "string"}))
            .response(history::INITIAL.until(history::DICT_ALLOCATIONS), StatusCode::OK, json("The consumer's allocations", responses::consumer_allocations(false, false, false)))
            .response(history::DICT_ALLOCATIONS.until(history::CONSUMER_GENERATIONS), StatusCode::OK, json("The consumer's allocations", responses::consumer_allocations(true, false, false)))
            .response(history::CONSUMER_GENERATIONS.until(history::CONSUMER_TYPES), StatusCode::OK, json("The consumer's allocations", responses::consumer_allocations(true, true, false)))
            .response(history::CONSUMER_TYPES.since(), StatusCode::OK, json("The consumer's allocations", responses::consumer_allocations(true, true, true))),
        not_found(
            conflict(
                with_body(OperationDoc::put("/allocations/{consumer_uuid}"))
                    .summary("Update allocations")
                    .path_parameter("consumer_uuid", "The consumer's UUID.", json!({"type": "string"}))
                    .body(&schemas.allocation.put)
                    .response(VersionSpan::ALL, StatusCode::NO_CONTENT, empty("Written")),
                "Not enough capacity, or a provider or the consumer changed meanwhile.",
            ),
            "A provider does not exist.",
        ),
        not_found(
            conflict(
                common(OperationDoc::delete("/allocations/{consumer_uuid}"))
                    .summary("Delete allocations")
                    .path_parameter("consumer_uuid", "The consumer's UUID.", json!({"type": "string"}))
                    .response(VersionSpan::ALL, StatusCode::NO_CONTENT, empty("Deleted")),
                "The allocations changed meanwhile.",
            ),
            "The consumer has no allocations.",
        ),
        conflict(
            with_body(OperationDoc::post("/allocations"))
                .summary("Manage allocations")
                .body(&schemas.allocation.post)
                .response(history::POST_ALLOCATIONS.since(), StatusCode::NO_CONTENT, empty("Written")),
            "Not enough capacity, or a provider or consumer changed meanwhile.",
        ),
        not_found(
            provider_path(common(OperationDoc::get("/resource_providers/{uuid}/allocations")))
                .summary("List resource provider allocations")
                .response(history::INITIAL.until(history::CONSUMER_GENERATIONS), StatusCode::OK, json("The allocations", responses::provider_allocations(false)))
                .response(history::CONSUMER_GENERATIONS.since(), StatusCode::OK, json("The allocations", responses::provider_allocations(true))),
            no_provider,
        ),
        // Allocation candidates (1.10).
        common(OperationDoc::get("/allocation_candidates"))
            .summary("List allocation candidates")
            .query(&schemas.allocation_candidate.query)
            .query_description("resources", "The amounts to allocate: `VCPU:4,DISK_GB:64`.")
            .query_description("limit", "At most this many allocation requests.")
            .query_description("required", "Traits the providers must (or, with `!`, must not) have.")
            .query_description("member_of", "Aggregates the providers must be in.")
            .query_description("in_tree", "Only providers in the tree of this provider.")
            .query_description("group_policy", "With several groups: `none`, or `isolate` (each group on its own provider).")
            .query_description("root_required", "Traits the root provider must (or must not) have.")
            .query_description("same_subtree", "Suffixes of groups whose providers share a subtree.")
            .response(history::ALLOCATION_CANDIDATES.until(history::DICT_ALLOCATIONS), StatusCode::OK, json("The candidates", responses::candidates(Candidates { keyed: false, traits: false, nested: false, mappings: false })))
            .response(history::DICT_ALLOCATIONS.until(history::REQUIRED_TRAITS), StatusCode::OK, json("The candidates", responses::candidates(Candidates { keyed: true, traits: false, nested: false, mappings: false })))
            .response(history::REQUIRED_TRAITS.until(history::NESTED_CANDIDATES), StatusCode::OK, json("The candidates", responses::candidates(Candidates { keyed: true, traits: true, nested: false, mappings: false })))
            .response(history::NESTED_CANDIDATES.until(history::MAPPINGS), StatusCode::OK, json("The candidates", responses::candidates(Candidates { keyed: true, traits: true, nested: true, mappings: false })))
            .response(history::MAPPINGS.since(), StatusCode::OK, json("The candidates", responses::candidates(Candidates { keyed: true, traits: true, nested: true, mappings: true })))
            .error(StatusCode::BAD_REQUEST, "A parameter is not valid."),
        // Usages.
        not_found(
            provider_path(common(OperationDoc::get("/resource_providers/{uuid}/usages")))
                .summary("List resource provider usages")
                .response(VersionSpan::ALL, StatusCode::OK, json("The usages", responses::provider_usages())),
            no_provider,
        ),
        common(OperationDoc::get("/usages"))
            .summary("List usages")
            .query_schema(history::USAGES.until(history::CONSUMER_TYPES), handlers::usage::query_schema(false))
            .query_schema(history::CONSUMER_TYPES.since(), handlers::usage::query_schema(true))
            .query_description("project_id", "The project whose usages to add up.")
            .query_description("user_id", "Only this user's usages.")
            .query_description("consumer_type", "Group by consumer type: one type, `all` or `unknown`.")
            .response(history::USAGES.until(history::CONSUMER_TYPES), StatusCode::OK, json("The usages", responses::usages(false)))
            .response(history::CONSUMER_TYPES.since(), StatusCode::OK, json("The usages by consumer type", responses::usages(true)))
            .error(StatusCode::BAD_REQUEST, "A parameter is not valid."),
        // Reshaper (1.30).
        conflict(
            with_body(OperationDoc::post("/reshaper"))
                .summary("Reshaper")
                .body(&schemas.reshaper.body)
                .response(history::RESHAPER.since(), StatusCode::NO_CONTENT, empty("Reshaped")),
            "A provider changed meanwhile, or the inventories would not hold the allocations.",
        ),
    ];
    let builder = ApiDescription::builder(&api)
        .title("Placement API")
        .description(
            "A Placement-compatible service: the API of OpenStack Placement 16.0.0, \
             microversions 1.0 to 1.39.",
        )
        .routes(&router)
        .history(&crate::history::history()?);
    Ok(builder.operations(docs).build()?)
}

/// Why no document can be given (the framework's).
pub use microversion_server::openapi::DocumentError;

/// The document `version` names (written as in the header: `1.20`,
/// `latest`), or the whole range's when it names none.
///
/// # Errors
///
/// Returns the refusal a request carrying that version would get (400
/// for a malformed version, 406 for one outside 1.0 to 1.39), in the
/// same words.
pub fn document(
    description: &ApiDescription,
    api: &Microversions,
    version: Option<&str>,
) -> Result<Value, DocumentError> {
    description.served_document(api, version)
}

/// The routes of the documents when `[openapi] enabled` is on, and of
/// the reference page when `[openapi] reference_page` is too, for
/// [`app::router`](crate::app::router) to put before the API.
///
/// # Errors
///
/// Fails when the description cannot be built (a programming error).
pub fn served(
    config: &crate::config::Config,
    api: &Microversions,
) -> Result<Option<Router>, BuildError> {
    if !config.openapi {
        return Ok(None);
    }
    let description = description()?;
    let page = if config.reference_page {
        Some(reference_page(&description, api)?)
    } else {
        None
    };
    let documents = router(description, api);
    Ok(Some(match page {
        Some(page) => documents.merge(page),
        None => documents,
    }))
}

/// `GET /api-ref`: the API reference page, with a picker of the versions
/// `api` serves (1.0 to 1.39 unless narrowed) that loads
/// `/openapi.json?version=X.Y`.
///
/// # Errors
///
/// Never in practice: the page's path and versions are fixed.
pub fn reference_page(
    description: &ApiDescription,
    api: &Microversions,
) -> Result<Router, BuildError> {
    let page = ReferencePage::builder(description)
        .title("Placement")
        .document_url(OPENAPI_PATH)
        .served_by(api)
        .build()?;
    Ok(page.router(REFERENCE_PAGE_PATH)?)
}

/// `GET /openapi.json[?version=X.Y]`: the documents over HTTP, as the
/// framework serves them, with a refused version answered in API-SIG's
/// body without webob's page around the message: the endpoint is not
/// upstream's, so it does not mimic upstream's error pages.
pub fn router(description: ApiDescription, api: &Microversions) -> Router {
    Documents::new(description, api)
        .refusal_answer(refused)
        .router(OPENAPI_PATH)
}

/// A version without a document: its status and message in API-SIG's
/// error body.
fn refused(refused: &DocumentError, _request: &http::request::Parts) -> Response {
    let entry = microversion::ErrorEntry::new(refused.status(), refused.to_string());
    let body = serde_json::to_value(microversion::ErrorBody::single(entry)).unwrap_or(Value::Null);
    (refused.status(), axum::Json(body)).into_response()
}

/// `placement-api openapi`: prints the document `version` names (JSON,
/// or YAML), exit code 0; a bad version gets the message a request
/// carrying it would get, exit code 2.
#[must_use]
pub fn print(version: Option<&str>, yaml: bool) -> ExitCode {
    let built = description().and_then(|d| Ok((d, crate::versioning::microversions()?)));
    let (description, api) = match built {
        Ok(built) => built,
        Err(e) => {
            eprintln!("placement-api: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let document = match document(&description, &api, version) {
        Ok(document) => document,
        Err(e) => {
            // The header's own words, then the range they leave out.
            let range = api.range();
            eprintln!(
                "placement-api: {e} (this service serves {} to {})",
                range.min(),
                range.max()
            );
            return ExitCode::from(2);
        }
    };
    let text = if yaml {
        serde_yaml_ng::to_string(&document).map_err(|e| e.to_string())
    } else {
        serde_json::to_string_pretty(&document)
            .map(|mut text| {
                text.push('\n');
                text
            })
            .map_err(|e| e.to_string())
    };
    let written = text.and_then(|text| {
        let mut out = std::io::stdout().lock();
        match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            // A reader that stopped early (`| head`) is no failure.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => other.map_err(|e| e.to_string()),
        }
    });
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("placement-api: cannot write the document: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests;
