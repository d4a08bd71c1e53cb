//! `/resource_providers`: list (with filters growing from 1.3 to 1.39),
//! create (201 before 1.20, 200 with the provider from 1.20; parents from
//! 1.14), show, update (rename; re-parenting and un-parenting from 1.37),
//! delete.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{RawQuery, State};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::header::{CONTENT_TYPE, LOCATION};
use http::{HeaderMap, HeaderValue, StatusCode};
use microversion::{Version, VersionSpan};
use microversion_server::{BodySchemas, BuildError, ServedVersion, VersionedRouter};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};

use crate::context::RequestContext;
use crate::error::{Error, Result, code};
use crate::handlers::pieces::Pieces;
use crate::handlers::query::{query_schemas, validate};
use crate::handlers::util::{
    Path, body_schemas, cache_headers, check_accept, json_response_dated, push_int, push_plain_str,
    require_json,
};
use crate::handlers::{RequestSchemas, RouterState};
use crate::history;
use crate::objects::provider::{
    self, Filters, ListError, Provider, ProviderRef, ProviderView, Update, WriteError,
};
use crate::policy::Action;
use crate::proxy::Origin;
use crate::query::{self, QueryParams};
use crate::state::AppState;

pub(crate) fn routes(router: VersionedRouter<RouterState>) -> VersionedRouter<RouterState> {
    router
        .get("/resource_providers", VersionSpan::ALL, list)
        .post("/resource_providers", VersionSpan::ALL, create)
        .get("/resource_providers/{uuid}", VersionSpan::ALL, show)
        .put("/resource_providers/{uuid}", VersionSpan::ALL, update)
        .delete("/resource_providers/{uuid}", VersionSpan::ALL, delete)
}

/// Aggregates link (1.1), traits link (1.6), allocations link (1.11).
const AGGREGATES: VersionSpan = history::AGGREGATES.since();
const TRAITS: VersionSpan = history::TRAITS.since();
const ALLOCATIONS: VersionSpan = history::ALLOCATIONS_LINK.since();
/// Nested providers: parent and root in the representation and bodies.
const NESTED: VersionSpan = history::NESTED_PROVIDERS.since();
/// POST answers 200 with the provider.
const CREATE_RETURNS_BODY: VersionSpan = history::CREATE_ANSWERS_PROVIDER.since();
/// Re-parenting and un-parenting.
const REPARENTING: VersionSpan = history::REPARENTING.since();

/// The URL of a provider (at the root: [`Origin`] puts the prefix
/// before it).
pub(crate) fn url(uuid: &str) -> String {
    format!("{PREFIX}{uuid}")
}

/// The relations a provider links to at `version`, after `self`.
fn link_rels(version: Version) -> impl Iterator<Item = &'static str> {
    ["inventories", "usages"].into_iter().chain(
        [
            (AGGREGATES, "aggregates"),
            (TRAITS, "traits"),
            (ALLOCATIONS, "allocations"),
        ]
        .into_iter()
        .filter(move |(since, _)| since.contains(version))
        .map(|(_, rel)| rel),
    )
}

/// A provider as the served version shows it: serialized straight from
/// the provider (no `Value` tree, no link URL strings), with the keys in
/// upstream's order: `uuid`, `name`, `generation`, `links` (`self`,
/// `inventories`, `usages`, then `aggregates` from 1.1, `traits` from
/// 1.6, `allocations` from 1.11, each `rel` then `href`), and from 1.14
/// `parent_provider_uuid` and `root_provider_uuid`. The hrefs start with
/// `prefix` (the path prefix of the request's [`Origin`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rendered<'a> {
    provider: ProviderView<'a>,
    version: Version,
    prefix: &'a str,
}

/// A provider as the served version shows it, its links under `prefix`.
pub(crate) fn render<'a>(p: &'a Provider, version: Version, prefix: &'a str) -> Rendered<'a> {
    Rendered {
        provider: p.view(),
        version,
        prefix,
    }
}

impl Serialize for Rendered<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let p = self.provider;
        let nested = NESTED.contains(self.version);
        let mut map = s.serialize_map(Some(if nested { 6 } else { 4 }))?;
        map.serialize_entry("uuid", &p.uuid)?;
        map.serialize_entry("name", &p.name)?;
        map.serialize_entry("generation", &p.generation)?;
        map.serialize_entry(
            "links",
            &Links {
                uuid: p.uuid,
                version: self.version,
                prefix: self.prefix,
            },
        )?;
        if nested {
            map.serialize_entry("parent_provider_uuid", &p.parent_uuid)?;
            map.serialize_entry("root_provider_uuid", &p.root_uuid)?;
        }
        map.end()
    }
}

impl Rendered<'_> {
    /// Appends the provider's JSON to `out`: the bytes `serde_json`
    /// writes for it, without its escaping pass over every byte when no
    /// string of the provider needs escaping (the hrefs are made of the
    /// uuid and fixed text); otherwise through `serde_json`. `links` is
    /// the template of the served version and prefix.
    fn write_json(&self, links: &LinksTemplate, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let start = out.len();
        if self.write_plain(links, out).is_none() {
            out.truncate(start);
            return serde_json::to_writer(out, self);
        }
        Ok(())
    }

    /// [`Self::write_json`]'s direct writing; `None` at the first string
    /// that needs escaping.
    fn write_plain(&self, links: &LinksTemplate, out: &mut Vec<u8>) -> Option<()> {
        let p = self.provider;
        let quoted = |out: &mut Vec<u8>, s: Option<&str>| match s {
            Some(s) => push_plain_str(out, s),
            None => {
                out.extend_from_slice(b"null");
                Some(())
            }
        };
        out.extend_from_slice(br#"{"uuid":"#);
        // Checked before the links repeat it.
        push_plain_str(out, p.uuid)?;
        out.extend_from_slice(br#","name":"#);
        quoted(out, p.name)?;
        out.extend_from_slice(br#","generation":"#);
        push_int(out, p.generation);
        links.write(p.uuid, out);
        if NESTED.contains(self.version) {
            out.extend_from_slice(br#","parent_provider_uuid":"#);
            quoted(out, p.parent_uuid)?;
            out.extend_from_slice(br#","root_provider_uuid":"#);
            push_plain_str(out, p.root_uuid)?;
        }
        out.push(b'}');
        Some(())
    }
}

/// The `"links"` member of a provider at one version, as the text
/// between the places the provider's uuid goes (one per link): built once
/// per list rather than rel by rel for each provider.
struct LinksTemplate {
    /// `pieces[0] uuid pieces[1] uuid ... pieces[n]`.
    pieces: Vec<Vec<u8>>,
}

impl LinksTemplate {
    /// The template of `version`, its hrefs under the path `prefix`.
    fn new(version: Version, prefix: &str) -> Self {
        // The prefix as JSON writes it inside a string (a forwarded one
        // may hold a quote).
        let quoted = serde_json::to_string(prefix).unwrap_or_default();
        let prefix = quoted
            .strip_prefix('"')
            .and_then(|q| q.strip_suffix('"'))
            .unwrap_or_default();
        let mut pieces = Vec::new();
        let mut piece = format!(r#","links":[{{"rel":"self","href":"{prefix}{PREFIX}"#);
        // What follows the uuid in the href of the link before.
        let mut close = String::from(r#""}"#);
        for rel in link_rels(version) {
            pieces.push(piece.into_bytes());
            piece = format!(r#"{close},{{"rel":"{rel}","href":"{prefix}{PREFIX}"#);
            close = format!(r#"/{rel}"}}"#);
        }
        pieces.push(piece.into_bytes());
        pieces.push(format!("{close}]").into_bytes());
        LinksTemplate { pieces }
    }

    fn write(&self, uuid: &str, out: &mut Vec<u8>) {
        if let Some((last, rest)) = self.pieces.split_last() {
            for piece in rest {
                out.extend_from_slice(piece);
                out.extend_from_slice(uuid.as_bytes());
            }
            out.extend_from_slice(last);
        }
    }
}

/// The `links` of a provider.
struct Links<'a> {
    uuid: &'a str,
    version: Version,
    prefix: &'a str,
}

impl Serialize for Links<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        // Every href is the provider's URL or a relation below it: one
        // buffer, cut back to the URL for each relation.
        let mut href =
            String::with_capacity(self.prefix.len() + PREFIX.len() + self.uuid.len() + 13);
        href.push_str(self.prefix);
        href.push_str(PREFIX);
        href.push_str(self.uuid);
        let base = href.len();
        let mut seq = s.serialize_seq(None)?;
        seq.serialize_element(&Link {
            rel: "self",
            href: &href,
        })?;
        for rel in link_rels(self.version) {
            href.truncate(base);
            href.push('/');
            href.push_str(rel);
            seq.serialize_element(&Link { rel, href: &href })?;
        }
        seq.end()
    }
}

/// The start of every provider URL.
const PREFIX: &str = "/resource_providers/";

/// One link of a provider.
struct Link<'a> {
    rel: &'a str,
    href: &'a str,
}

impl Serialize for Link<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("rel", self.rel)?;
        map.serialize_entry("href", self.href)?;
        map.end()
    }
}

/// The query parameters of `GET /resource_providers`, by version.
fn list_query_schemas() -> std::result::Result<BodySchemas<Value>, BuildError> {
    let string = json!({"type": "string"});
    let uuid = json!({"type": "string", "format": "uuid"});
    let schema = |extra: &[(&str, &Value)]| {
        let mut properties = json!({"name": string, "uuid": uuid});
        for (name, schema) in extra {
            properties[*name] = (*schema).clone();
        }
        json!({"type": "object", "properties": properties, "additionalProperties": false})
    };
    query_schemas("GET /resource_providers query")
        .json_schema(history::INITIAL.until(history::MEMBER_OF), &schema(&[]))
        .json_schema(
            history::MEMBER_OF.until(history::RESOURCES_FILTER),
            &schema(&[("member_of", &string)]),
        )
        .json_schema(
            history::RESOURCES_FILTER.until(history::NESTED_PROVIDERS),
            &schema(&[("member_of", &string), ("resources", &string)]),
        )
        .json_schema(
            history::NESTED_PROVIDERS.until(history::PROVIDER_REQUIRED_TRAITS),
            &schema(&[
                ("member_of", &string),
                ("resources", &string),
                ("in_tree", &uuid),
            ]),
        )
        .json_schema(
            history::PROVIDER_REQUIRED_TRAITS.since(),
            &schema(&[
                ("member_of", &string),
                ("resources", &string),
                ("in_tree", &uuid),
                ("required", &string),
            ]),
        )
        .build()
}

async fn list(
    State(state): State<AppState>,
    State(schemas): State<Arc<RequestSchemas>>,
    ctx: RequestContext,
    version: ServedVersion,
    origin: Origin,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response> {
    check_accept(&headers)?;
    state.authorize(&ctx, Action::ResourceProvidersList)?;
    let version = *version;
    let params = QueryParams::parse(raw.as_deref())?;
    validate(&params, &schemas.resource_provider.list_query, version)?;
    let mut filters = Filters::default();
    if params.contains("member_of") {
        let member_of = query::member_of(&params, version, "")?;
        filters.member_of = member_of.required;
        filters.forbidden_aggregates = member_of.forbidden;
    }
    if params.contains("required") {
        let traits = query::required_traits(&params, version, "")?;
        filters.required_traits = traits.required;
        filters.forbidden_traits = traits.forbidden;
    }
    filters.name = params.get("name").map(str::to_owned);
    filters.uuid = params.get("uuid").map(str::to_owned);
    filters.in_tree = params.get("in_tree").map(str::to_owned);
    if let Some(resources) = params.get("resources") {
        filters.resources = query::resources(resources)?;
    }
    let listed = provider::list(
        &state.store,
        &filters,
        ListBody::new(version, &origin.prefix),
    )
    .await
    .map_err(|e| match e {
        ListError::TraitNotFound(name) => Error::bad_request(format!(
            "Invalid trait(s) in \"required\" parameter: No such trait(s): {name}."
        )),
        ListError::ResourceClassNotFound(name) => Error::bad_request(format!(
            "Invalid resource class in resources parameter: No such resource class {name}."
        )),
        ListError::Other(e) => e,
    })?;
    let last_modified = listed.last_modified();
    let response = (
        StatusCode::OK,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        listed.finish()?.into_body(),
    )
        .into_response();
    Ok(cache_headers(version, response, Some(last_modified)))
}

/// The body of `GET /resource_providers`, written one provider at a time
/// as the rows are read: the same bytes as serializing
/// `{"resource_providers": [...]}` as one `Value`, without a `Provider`
/// (and its strings) per row or a tree of maps (with 1,000 providers
/// most of the time went to the allocator).
struct ListBody {
    version: Version,
    /// The path prefix of the links.
    prefix: String,
    links: LinksTemplate,
    body: Pieces,
    count: usize,
    /// The latest last-modified text seen: the database's form
    /// (`YYYY-MM-DD HH:MM:SS[.ffffff]`) sorts as the times do, so only the
    /// latest is parsed.
    latest: String,
    /// A provider had no time (it counts as now, as upstream).
    undated: bool,
    failed: Option<serde_json::Error>,
}

impl ListBody {
    fn new(version: Version, prefix: &str) -> Self {
        let mut body = Pieces::new();
        body.buf().extend_from_slice(br#"{"resource_providers":["#);
        ListBody {
            version,
            prefix: prefix.to_owned(),
            links: LinksTemplate::new(version, prefix),
            body,
            count: 0,
            latest: String::new(),
            undated: false,
            failed: None,
        }
    }

    /// The `Last-Modified` of the list: its latest provider's, now when a
    /// provider has none (or the list is empty).
    fn last_modified(&self) -> SystemTime {
        if self.undated || self.count == 0 {
            return SystemTime::now();
        }
        crate::db::parse_timestamp(&self.latest).unwrap_or_else(SystemTime::now)
    }

    fn finish(mut self) -> Result<Pieces> {
        if let Some(e) = self.failed {
            return Err(Error::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot serialize a resource provider: {e}"),
            ));
        }
        self.body.buf().extend_from_slice(b"]}");
        Ok(self.body)
    }
}

impl provider::ListVisitor for ListBody {
    fn visit(&mut self, provider: ProviderView<'_>, last_modified: Option<&str>) {
        match last_modified {
            Some(text) if text > self.latest.as_str() => {
                self.latest.clear();
                self.latest.push_str(text);
            }
            Some(_) => {}
            None => self.undated = true,
        }
        if self.count > 0 {
            self.body.buf().push(b',');
        }
        self.count += 1;
        let rendered = Rendered {
            provider,
            version: self.version,
            prefix: &self.prefix,
        };
        if let Err(e) = rendered.write_json(&self.links, self.body.buf()) {
            self.failed.get_or_insert(e);
        }
        self.body.item_done();
    }
}

/// `Some(value)` for a field that is present (even `null`), so that
/// `None` means absent.
fn present<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

/// The body of POST and PUT.
#[derive(Debug, Deserialize)]
pub(crate) struct ProviderBody {
    name: String,
    #[serde(default)]
    uuid: Option<String>,
    #[serde(default, deserialize_with = "present")]
    parent_provider_uuid: Option<Option<String>>,
}

fn provider_schema(with_uuid: bool, with_parent: bool) -> Value {
    let mut properties = json!({"name": {"type": "string", "maxLength": 200}});
    if with_uuid {
        properties["uuid"] = json!({"type": "string", "format": "uuid"});
    }
    if with_parent {
        properties["parent_provider_uuid"] = json!({
            "anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]
        });
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": ["name"],
        "additionalProperties": false
    })
}

/// The query string and request bodies of these routes.
#[derive(Debug)]
pub(crate) struct Schemas {
    pub(crate) list_query: BodySchemas<Value>,
    pub(crate) create: BodySchemas<ProviderBody>,
    pub(crate) update: BodySchemas<ProviderBody>,
}

impl Schemas {
    pub(crate) fn build() -> std::result::Result<Schemas, BuildError> {
        let create = body_schemas("POST /resource_providers")
            .json_schema(
                history::INITIAL.until(history::NESTED_PROVIDERS),
                &provider_schema(true, false),
            )
            .json_schema(
                history::NESTED_PROVIDERS.since(),
                &provider_schema(true, true),
            )
            .build()?;
        let update = body_schemas("PUT /resource_providers/{uuid}")
            .json_schema(
                history::INITIAL.until(history::NESTED_PROVIDERS),
                &provider_schema(false, false),
            )
            .json_schema(
                history::NESTED_PROVIDERS.since(),
                &provider_schema(false, true),
            )
            .build()?;
        Ok(Schemas {
            list_query: list_query_schemas()?,
            create,
            update,
        })
    }
}

fn duplicate(columns: &[&str], uuid: &str, name: &str) -> Error {
    let described: Vec<String> = columns
        .iter()
        .map(|c| match *c {
            "uuid" => format!("uuid: {uuid}"),
            _ => format!("name: {name}"),
        })
        .collect();
    Error::conflict(format!(
        "Conflicting resource provider {} already exists.",
        described.join(", ")
    ))
    .with_code(code::DUPLICATE_NAME)
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
    require_json(&headers)?;
    state.authorize(&ctx, Action::ResourceProvidersCreate)?;
    let version = *version;
    let data = schemas.resource_provider.create.parse(version, &body)?;
    let uuid = match data.uuid.as_deref() {
        Some(given) if !given.is_empty() => {
            query::canonical_uuid(given).unwrap_or_else(|| given.to_owned())
        }
        _ => uuid::Uuid::new_v4().to_string(),
    };
    let parent = data.parent_provider_uuid.clone().flatten();
    let created = provider::create(&state.store, &uuid, &data.name, parent.as_deref())
        .await
        .map_err(|e| match e {
            WriteError::Duplicate(columns) => duplicate(&columns, &uuid, &data.name),
            WriteError::Other(e) => e,
            other => Error::bad_request(format!(
                "Unable to create resource provider \"{}\", {uuid}: {other}",
                data.name
            )),
        })?;
    let location = origin.absolute_url(&headers, &url(&created.uuid));
    if CREATE_RETURNS_BODY.contains(version) {
        let mut response = json_response_dated(
            version,
            StatusCode::OK,
            &render(&created, version, &origin.prefix),
            Some(SystemTime::now()),
        );
        if let Ok(value) = HeaderValue::try_from(location) {
            response.headers_mut().insert(LOCATION, value);
        }
        Ok(response)
    } else {
        Ok((StatusCode::CREATED, [(LOCATION, location)]).into_response())
    }
}

/// How a handler words the 404 for a provider that does not exist.
/// Upstream's handlers word it differently, and its tests match the words.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Missing {
    /// The words of upstream's lookup: `No resource provider with uuid U
    /// found`.
    Plain,
    /// The lookup's words twice, joined by `": "` (the traits and usages
    /// GETs).
    Repeated,
    /// The lookup's words twice, joined by `" : "` (the inventory GETs).
    RepeatedSpaced,
    /// `Resource provider 'U' not found: ` and the lookup's words (the
    /// allocations GET).
    Named,
}

impl Missing {
    fn error(self, uuid: &str) -> Error {
        let plain = format!("No resource provider with uuid {uuid} found");
        Error::not_found(match self {
            Missing::Plain => plain,
            Missing::Repeated => format!("{plain}: {plain}"),
            Missing::RepeatedSpaced => format!("{plain} : {plain}"),
            Missing::Named => format!("Resource provider '{uuid}' not found: {plain}"),
        })
    }
}

/// The provider `uuid` names, or 404 in the words of `missing`.
pub(crate) async fn existing(
    state: &AppState,
    uuid: &str,
    missing: Missing,
) -> Result<ProviderRef> {
    provider::find(&state.store, state.store.reader(), uuid)
        .await?
        .ok_or_else(|| missing.error(uuid))
}

async fn show(
    State(state): State<AppState>,
    ctx: RequestContext,
    version: ServedVersion,
    origin: Origin,
    headers: HeaderMap,
    Path(uuid): Path<String>,
) -> Result<Response> {
    check_accept(&headers)?;
    state.authorize(&ctx, Action::ResourceProvidersShow)?;
    let found = provider::load(&state.store, state.store.reader(), &uuid)
        .await?
        .ok_or_else(|| Missing::Plain.error(&uuid))?;
    Ok(json_response_dated(
        *version,
        StatusCode::OK,
        &render(&found, *version, &origin.prefix),
        Some(found.last_modified.unwrap_or_else(SystemTime::now)),
    ))
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
    Path(uuid): Path<String>,
    body: Bytes,
) -> Result<Response> {
    require_json(&headers)?;
    state.authorize(&ctx, Action::ResourceProvidersUpdate)?;
    let version = *version;
    let before_updated_at = provider::updated_at(&state.store, &uuid)
        .await?
        .ok_or_else(|| Missing::Plain.error(&uuid))?;
    let data = schemas.resource_provider.update.parse(version, &body)?;
    let change = Update {
        name: data.name.clone(),
        parent: data.parent_provider_uuid.clone(),
        allow_reparenting: REPARENTING.contains(version),
    };
    let updated = provider::update(&state.store, &uuid, &change)
        .await
        .map_err(|e| match e {
            WriteError::NotFound => Missing::Plain.error(&uuid),
            WriteError::Duplicate(_) => Error::conflict(format!(
                "Conflicting resource provider {} already exists.",
                data.name
            ))
            .with_code(code::DUPLICATE_NAME),
            WriteError::Other(e) => e,
            other => {
                Error::bad_request(format!("Unable to save resource provider {uuid}: {other}"))
            }
        })?;
    // Upstream dates the answer with `updated_at` as read before the
    // change (none for a provider never changed since its creation).
    Ok(json_response_dated(
        version,
        StatusCode::OK,
        &render(&updated, version, &origin.prefix),
        before_updated_at,
    ))
}

async fn delete(
    State(state): State<AppState>,
    ctx: RequestContext,
    Path(uuid): Path<String>,
) -> Result<Response> {
    state.authorize(&ctx, Action::ResourceProvidersDelete)?;
    provider::delete(&state.store, &uuid)
        .await
        .map_err(|e| match e {
            WriteError::NotFound => Error::not_found(format!(
                "No resource provider with uuid {uuid} found for delete"
            )),
            WriteError::InUse => Error::conflict(format!(
                "Unable to delete resource provider {uuid}: {}",
                WriteError::InUse
            ))
            .with_code(code::PROVIDER_IN_USE),
            WriteError::HasChildren => Error::conflict(format!(
                "Unable to delete parent resource provider {uuid}: It has child resource providers."
            ))
            .with_code(code::PROVIDER_CANNOT_DELETE_PARENT),
            WriteError::Concurrent => Error::conflict(format!(
                "Unable to delete resource provider {uuid}: {}",
                WriteError::Concurrent
            ))
            .with_code(code::CONCURRENT_UPDATE),
            WriteError::Other(e) => e,
            other => Error::bad_request(format!(
                "Unable to delete resource provider {uuid}: {other}"
            )),
        })?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_providers_are_worded_as_upstream_words_them() {
        let u = "7d2bc3a1-86f6-4e3e-a3d5-7b0dd4c7b0a1";
        let plain = format!("No resource provider with uuid {u} found");
        for (missing, expected) in [
            (Missing::Plain, plain.clone()),
            (Missing::Repeated, format!("{plain}: {plain}")),
            (Missing::RepeatedSpaced, format!("{plain} : {plain}")),
            (
                Missing::Named,
                format!("Resource provider '{u}' not found: {plain}"),
            ),
        ] {
            let Error::Api(e) = missing.error(u) else {
                panic!("{missing:?}: not an API error");
            };
            assert_eq!(e.status(), StatusCode::NOT_FOUND, "{missing:?}");
            assert_eq!(e.detail(), expected, "{missing:?}");
        }
    }

    /// The representation as it was built before [`Rendered`]: a `Value`
    /// per provider, keys in insertion order.
    fn as_value(p: &Provider, version: Version) -> Value {
        let base = url(&p.uuid);
        let mut links = vec![json!({"rel": "self", "href": base})];
        let mut rels = vec!["inventories", "usages"];
        if AGGREGATES.contains(version) {
            rels.push("aggregates");
        }
        if TRAITS.contains(version) {
            rels.push("traits");
        }
        if ALLOCATIONS.contains(version) {
            rels.push("allocations");
        }
        links.extend(
            rels.into_iter()
                .map(|rel| json!({"rel": rel, "href": format!("{base}/{rel}")})),
        );
        let mut body = json!({
            "uuid": p.uuid,
            "name": p.name,
            "generation": p.generation,
            "links": Value::Array(links),
        });
        if NESTED.contains(version) {
            body["parent_provider_uuid"] = json!(p.parent_uuid);
            body["root_provider_uuid"] = json!(p.root_uuid);
        }
        body
    }

    fn providers() -> Vec<Provider> {
        let root = Provider {
            id: crate::db::ids::ProviderId::new(1),
            uuid: "4e8e5957-649f-477b-9e5b-f1f75b21c03c".to_owned(),
            name: Some("compute \"one\" \u{e9}\\ \u{1}".to_owned()),
            generation: 7,
            root_uuid: "4e8e5957-649f-477b-9e5b-f1f75b21c03c".to_owned(),
            parent_uuid: None,
            last_modified: None,
        };
        let child = Provider {
            id: crate::db::ids::ProviderId::new(2),
            uuid: "a\"b".to_owned(),
            name: None,
            generation: -1,
            root_uuid: root.uuid.clone(),
            parent_uuid: Some(root.uuid.clone()),
            last_modified: None,
        };
        let plain_child = Provider {
            id: crate::db::ids::ProviderId::new(3),
            uuid: "0b9a5c1e-2f4d-4c59-8e0b-5a8d7f3e6c21".to_owned(),
            name: Some("compute-2 \u{e9}\u{7f}/".to_owned()),
            generation: 12345678901,
            root_uuid: root.uuid.clone(),
            parent_uuid: Some(root.uuid.clone()),
            last_modified: None,
        };
        let plain_unnamed = Provider {
            id: crate::db::ids::ProviderId::new(4),
            uuid: "c2d9e7a4-6b1f-4e8a-9d3c-7f5e1a2b4c68".to_owned(),
            name: None,
            generation: 0,
            root_uuid: "c2d9e7a4-6b1f-4e8a-9d3c-7f5e1a2b4c68".to_owned(),
            parent_uuid: None,
            last_modified: None,
        };
        vec![root, child, plain_child, plain_unnamed]
    }

    #[test]
    fn rendered_bytes_are_those_of_the_value_at_every_version() {
        for minor in 0..=39 {
            let version = Version::new(1, minor);
            for p in providers() {
                let expected = serde_json::to_vec(&as_value(&p, version)).unwrap();
                let rendered = serde_json::to_vec(&render(&p, version, "")).unwrap();
                assert_eq!(
                    String::from_utf8(rendered).unwrap(),
                    String::from_utf8(expected).unwrap(),
                    "at 1.{minor}"
                );
                let pretty = serde_json::to_string_pretty(&render(&p, version, "")).unwrap();
                assert_eq!(
                    pretty,
                    serde_json::to_string_pretty(&as_value(&p, version)).unwrap()
                );
                assert_eq!(
                    serde_json::to_value(render(&p, version, "")).unwrap(),
                    as_value(&p, version)
                );
                // Appended after what a list wrote before it, which a
                // provider written through serde_json keeps.
                let mut written = b"[{},".to_vec();
                render(&p, version, "")
                    .write_json(&LinksTemplate::new(version, ""), &mut written)
                    .unwrap();
                assert_eq!(
                    String::from_utf8(written).unwrap(),
                    format!(
                        "[{{}},{}",
                        serde_json::to_string(&as_value(&p, version)).unwrap()
                    ),
                    "written at 1.{minor}"
                );
            }
        }
    }

    #[test]
    fn a_list_is_the_providers_in_one_array_dated_by_the_latest() {
        use provider::ListVisitor;
        let version = Version::new(1, 39);
        let mut listed = ListBody::new(version, "");
        let providers = providers();
        for (p, time) in providers.iter().zip([
            "2024-02-29 12:00:00.5",
            "2024-02-29 12:00:00.123456",
            "2024-02-29 12:00:00",
            "2024-02-28 23:59:59.999999",
        ]) {
            listed.visit(p.view(), Some(time));
        }
        assert_eq!(
            listed.last_modified(),
            crate::db::parse_timestamp("2024-02-29 12:00:00.500000").unwrap()
        );
        let expected = json!({
            "resource_providers": providers.iter().map(|p| as_value(p, version)).collect::<Vec<_>>()
        });
        let body = listed.finish().unwrap();
        assert_eq!(
            String::from_utf8(body.to_vec()).unwrap(),
            serde_json::to_string(&expected).unwrap()
        );

        let before = SystemTime::now();
        let mut undated = ListBody::new(version, "");
        undated.visit(providers[0].view(), Some("2024-02-29 12:00:00"));
        undated.visit(providers[1].view(), None);
        assert!(undated.last_modified() >= before);
        assert!(ListBody::new(version, "").last_modified() >= before);
        assert_eq!(
            ListBody::new(version, "").finish().unwrap().to_vec(),
            br#"{"resource_providers":[]}"#
        );
    }
}
