//! `GET /allocation_candidates` (from 1.10): the ways the providers can
//! satisfy a request of resources, with the query parameters that grew
//! from 1.16 to 1.39 and the response shapes of 1.12, 1.17, 1.27, 1.29
//! and 1.34.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{RawQuery, State};
use axum::response::Response;
use http::{HeaderMap, StatusCode};
use microversion::{Version, VersionSpan};
use microversion_server::{BodySchemas, BuildError, ServedVersion, VersionedRouter};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value, json};
use smallvec::SmallVec;

use crate::config::CandidateStrategy;
use crate::context::RequestContext;
use crate::error::{Error, Result, code};
use crate::handlers::pieces::Pieces;
use crate::handlers::query::{invalid, query_schemas, validate};
use crate::handlers::util::{cache_headers, check_accept, is_uuid_like, push_int, push_plain_str};
use crate::handlers::{RequestSchemas, RouterState};
use crate::history;
use crate::limits::MAX_REQUEST_GROUPS;
use crate::objects::candidate::{
    self, AllocationRequest, Candidates, Group, RequestWide, SearchError, Summary, SummaryResource,
};
use crate::policy::Action;
use crate::query::{self, QueryParams};
use crate::state::AppState;

pub(crate) fn routes(router: VersionedRouter<RouterState>) -> VersionedRouter<RouterState> {
    router.get(
        "/allocation_candidates",
        history::ALLOCATION_CANDIDATES.since(),
        list,
    )
}

/// Dict-form allocations (as PUT /allocations/{consumer} takes them).
const DICT_ALLOCATIONS: VersionSpan = history::DICT_ALLOCATIONS.since();
/// Traits in the summaries.
const SUMMARY_TRAITS: VersionSpan = history::REQUIRED_TRAITS.since();
/// Forbidden traits (and the check of conflicts).
const FORBIDDEN_TRAITS: VersionSpan = history::FORBIDDEN_TRAITS.since();
/// Every inventory in the summaries, not only the classes asked for.
const ALL_RESOURCES: VersionSpan = history::ALL_RESOURCES_IN_SUMMARIES.since();
/// Nested providers: a group may spread over a tree; parent and root in
/// the summaries.
const NESTED: VersionSpan = history::NESTED_CANDIDATES.since();
/// Group suffixes of letters, digits, `_` and `-`.
const VERBOSE_SUFFIX: VersionSpan = history::LONG_SUFFIXES.since();
/// `mappings` in the allocation requests.
const MAPPINGS: VersionSpan = history::MAPPINGS.since();
/// `same_subtree` and resourceless groups.
const SAME_SUBTREE: VersionSpan = history::SAME_SUBTREE.since();

/// A numbered suffix (1.25) and a named one (1.33).
const NUMBERED: &str = "[1-9][0-9]*";
const NAMED: &str = "[a-zA-Z0-9_-]{1,64}";

/// The query string of `GET /allocation_candidates`.
#[derive(Debug)]
pub(crate) struct Schemas {
    pub(crate) query: BodySchemas<Value>,
}

impl Schemas {
    pub(crate) fn build() -> std::result::Result<Schemas, BuildError> {
        Ok(Schemas {
            query: list_query_schemas()?,
        })
    }
}

/// The query parameters, by version (upstream's schemas).
fn list_query_schemas() -> std::result::Result<BodySchemas<Value>, BuildError> {
    let string = json!({"type": "string"});
    let limit = json!({
        "type": ["integer", "string"],
        "pattern": "^[1-9][0-9]*$",
        "minimum": 1,
        "minLength": 1
    });
    let group_policy = json!({"type": "string", "enum": ["none", "isolate"]});
    let plain = |extra: &[(&str, &Value)]| {
        let mut properties = json!({"resources": string});
        for (name, schema) in extra {
            properties[*name] = (*schema).clone();
        }
        json!({
            "type": "object",
            "properties": properties,
            "required": ["resources"],
            "additionalProperties": false
        })
    };
    let granular = |suffix: &str, prefixes: &[&str], extra: &[&str]| {
        let mut properties = json!({"limit": limit, "group_policy": group_policy});
        for name in extra {
            properties[*name] = string.clone();
        }
        let mut patterns = Map::new();
        for prefix in prefixes {
            patterns.insert(format!("^{prefix}({suffix})?$"), string.clone());
        }
        json!({
            "type": "object",
            "properties": properties,
            "additionalProperties": false,
            "patternProperties": patterns
        })
    };
    let three = ["resources", "required", "member_of"];
    let four = ["resources", "required", "member_of", "in_tree"];
    query_schemas("GET /allocation_candidates query")
        .json_schema(
            history::ALLOCATION_CANDIDATES.until(history::CANDIDATE_LIMIT),
            &plain(&[]),
        )
        .json_schema(
            history::CANDIDATE_LIMIT.until(history::REQUIRED_TRAITS),
            &plain(&[("limit", &limit)]),
        )
        .json_schema(
            history::REQUIRED_TRAITS.until(history::CANDIDATE_MEMBER_OF),
            &plain(&[("limit", &limit), ("required", &string)]),
        )
        .json_schema(
            history::CANDIDATE_MEMBER_OF.until(history::GRANULAR_GROUPS),
            &plain(&[
                ("limit", &limit),
                ("required", &string),
                ("member_of", &string),
            ]),
        )
        .json_schema(
            history::GRANULAR_GROUPS.until(history::CANDIDATE_IN_TREE),
            &granular(NUMBERED, &three, &[]),
        )
        .json_schema(
            history::CANDIDATE_IN_TREE.until(history::LONG_SUFFIXES),
            &granular(NUMBERED, &four, &[]),
        )
        .json_schema(
            history::LONG_SUFFIXES.until(history::ROOT_REQUIRED),
            &granular(NAMED, &four, &[]),
        )
        .json_schema(
            history::ROOT_REQUIRED.until(history::SAME_SUBTREE),
            &granular(NAMED, &four, &["root_required"]),
        )
        .json_schema(
            history::SAME_SUBTREE.since(),
            &granular(NAMED, &four, &["root_required", "same_subtree"]),
        )
        .build()
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
    state.authorize(&ctx, Action::AllocationCandidatesList)?;
    let version = *version;
    let params = QueryParams::parse(raw.as_deref())?;
    validate(&params, &schemas.allocation_candidate.query, version)?;
    let mut wide = request_wide(&params)?;
    let groups = request_groups(&params, version, &wide.same_subtrees)?;
    let policy = params.get_all("group_policy").first().copied();
    if policy.is_none_or(str::is_empty)
        && groups.iter().filter(|g| g.use_same_provider()).count() > 1
    {
        return Err(Error::bad_request(
            "The \"group_policy\" parameter is required when specifying more than one \"resources{N}\" parameter.",
        ));
    }
    wide.nested_aware = NESTED.contains(version);
    wide.max_candidates = usize::try_from(state.config.max_allocation_candidates).ok();
    wide.strategy = state.config.allocation_candidates_strategy;
    wide.randomize = state.config.randomize_allocation_candidates;
    wide.reads_at_once = state.cores;
    // Held until the answer is serialized; the semaphore is never closed.
    let _running = state.candidate_searches.acquire().await.ok();
    let found = candidate::search(&state.store, &groups, &wide)
        .await
        .map_err(|e| match e {
            SearchError::ResourceClassNotFound(name) => Error::bad_request(format!(
                "Invalid resource class in resources parameter: No such resource class {name}."
            )),
            SearchError::TraitNotFound(name) => {
                Error::bad_request(format!("No such trait(s): {name}."))
            }
            SearchError::Other(e) => e,
        })?;
    let body = render(&found, &groups, version);
    let answer = body.to_json().map_err(|e| {
        Error::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot serialize the allocation candidates: {e}"),
        )
    })?;
    let response = axum::response::IntoResponse::into_response((
        StatusCode::OK,
        [(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        )],
        answer.into_body(),
    ));
    Ok(cache_headers(version, response, Some(SystemTime::now())))
}

/// The request-wide parameters (upstream's `RequestWideParams`): the
/// first `limit` and `group_policy` count; `root_required` once;
/// `same_subtree` as sets of suffixes.
fn request_wide(params: &QueryParams) -> Result<RequestWide> {
    let limit = match params.get_all("limit").first() {
        Some(text) => Some(
            query::python_int(text)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| invalid(&format!("'{text}' does not match '^[1-9][0-9]*$'")))?,
        ),
        None => None,
    };
    let isolate = params.get_all("group_policy").first() == Some(&"isolate");
    let mut root_required = BTreeSet::new();
    let mut root_forbidden = BTreeSet::new();
    let roots = params.get_all("root_required");
    if roots.len() > 1 {
        return Err(Error::bad_request(
            "Query parameter 'root_required' may be specified only once.",
        )
        .with_code(code::QUERYPARAM_DUPLICATE_KEY));
    }
    if let Some(value) = roots.first() {
        let traits = query::traits_value(value, true, false)?;
        root_required = traits.required.into_iter().flatten().collect();
        let conflicts: Vec<&String> = traits.forbidden.intersection(&root_required).collect();
        if !conflicts.is_empty() {
            let names: Vec<&str> = conflicts.iter().map(|s| s.as_str()).collect();
            return Err(Error::bad_request(format!(
                "Conflicting required and forbidden traits found in root_required: {}",
                names.join(", ")
            ))
            .with_code(code::QUERYPARAM_BAD_VALUE));
        }
        root_forbidden = traits.forbidden;
    }
    let mut same_subtrees = Vec::new();
    for value in params.get_all("same_subtree") {
        let suffixes: BTreeSet<String> = value.split(',').map(|s| s.trim().to_owned()).collect();
        if suffixes.contains("") {
            return Err(Error::bad_request(
                "Empty string (unsuffixed group) can not be specified in `same_subtree` ",
            )
            .with_code(code::QUERYPARAM_BAD_VALUE));
        }
        same_subtrees.push(suffixes);
    }
    Ok(RequestWide {
        limit,
        isolate,
        root_required,
        root_forbidden,
        same_subtrees,
        nested_aware: true,
        max_candidates: None,
        strategy: CandidateStrategy::DepthFirst,
        randomize: false,
        reads_at_once: 1,
    })
}

/// Splits a parameter name into its prefix and group suffix, when it
/// names a group parameter at `version`.
fn group_key(key: &str, version: Version) -> Option<(&'static str, &str)> {
    let verbose = VERBOSE_SUFFIX.contains(version);
    for prefix in ["resources", "required", "member_of", "in_tree"] {
        let Some(suffix) = key.strip_prefix(prefix) else {
            continue;
        };
        let valid = suffix.is_empty()
            || if verbose {
                suffix.len() <= 64
                    && suffix
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            } else {
                suffix.bytes().all(|b| b.is_ascii_digit()) && !suffix.starts_with('0')
            };
        if valid {
            return Some((prefix, suffix));
        }
    }
    None
}

/// 400 when the parameters name more than [`MAX_REQUEST_GROUPS`] groups,
/// before any of their values is read.
fn check_group_count(params: &QueryParams, version: Version) -> Result<()> {
    let suffixes: BTreeSet<&str> = params
        .pairs()
        .filter_map(|(key, _)| group_key(key, version))
        .map(|(_, suffix)| suffix)
        .collect();
    if suffixes.len() > MAX_REQUEST_GROUPS {
        return Err(invalid(&format!(
            "The query string names {} request groups (resources, required, member_of and \
             in_tree, a group for each suffix); at most {MAX_REQUEST_GROUPS} are accepted.",
            suffixes.len()
        )));
    }
    Ok(())
}

/// Python's `repr` of a list of strings.
fn py_list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = items.into_iter().map(|s| format!("'{s}'")).collect();
    format!("[{}]", quoted.join(", "))
}

/// The request groups, by suffix in the order first given, with
/// upstream's checks (`RequestGroup.dict_from_request`).
fn request_groups(
    params: &QueryParams,
    version: Version,
    same_subtrees: &[BTreeSet<String>],
) -> Result<Vec<Group>> {
    check_group_count(params, version)?;
    let mut groups: Vec<Group> = Vec::new();
    // `required{S}` and `member_of{S}` are read whole (every value) at
    // their first parameter; reading them again at each repeat would make
    // the work grow with the square of the repeats.
    let mut read_whole: BTreeSet<(&str, &str)> = BTreeSet::new();
    for (key, value) in params.pairs() {
        let Some((prefix, suffix)) = group_key(key, version) else {
            continue;
        };
        if matches!(prefix, "required" | "member_of") && !read_whole.insert((prefix, suffix)) {
            continue;
        }
        let n = match groups.iter().position(|g| g.suffix == suffix) {
            Some(n) => n,
            None => {
                groups.push(Group {
                    suffix: suffix.to_owned(),
                    ..Group::default()
                });
                groups.len() - 1
            }
        };
        let group = &mut groups[n];
        match prefix {
            "resources" => group.resources = query::resources(value)?,
            "required" => {
                let traits = query::required_traits(params, version, suffix)?;
                group.required_traits = traits.required;
                group.forbidden_traits = traits.forbidden;
            }
            "member_of" => {
                let member_of = query::member_of(params, version, suffix)?;
                group.member_of = member_of.required;
                group.forbidden_aggregates = member_of.forbidden;
            }
            _ => {
                let tree = value.trim();
                if !is_uuid_like(tree) {
                    return Err(Error::bad_request(format!(
                        "Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. Got: {value}"
                    )));
                }
                group.in_tree = Some(tree.to_owned());
            }
        }
    }
    if SAME_SUBTREE.contains(version) {
        let resourceless: BTreeSet<&str> = groups
            .iter()
            .filter(|g| g.resources.is_empty())
            .map(|g| g.suffix.as_str())
            .collect();
        if resourceless.len() == groups.len() {
            return Err(Error::bad_request(
                "There must be at least one resources or resources[$S] parameter.",
            )
            .with_code(code::QUERYPARAM_MISSING_VALUE));
        }
        let in_subtrees: BTreeSet<&str> =
            same_subtrees.iter().flatten().map(String::as_str).collect();
        let bad: Vec<&str> = resourceless
            .iter()
            .copied()
            .filter(|s| !in_subtrees.contains(s))
            .collect();
        if !bad.is_empty() {
            return Err(Error::bad_request(format!(
                "Resourceless suffixed group request should be specified in `same_subtree` query param: bad group(s) - {}.",
                py_list(bad)
            ))
            .with_code(code::QUERYPARAM_BAD_VALUE));
        }
        let unknown: Vec<&str> = in_subtrees
            .iter()
            .copied()
            .filter(|s| !groups.iter().any(|g| g.suffix == *s))
            .collect();
        if !unknown.is_empty() {
            return Err(Error::bad_request(format!(
                "Real suffixes should be specified in `same_subtree`: {} not found in {}.",
                py_list(unknown),
                py_list(groups.iter().map(|g| g.suffix.as_str()))
            ))
            .with_code(code::QUERYPARAM_BAD_VALUE));
        }
    } else {
        let orphans: Vec<String> = groups
            .iter()
            .filter(|g| !g.required_traits.is_empty() && g.resources.is_empty())
            .map(|g| format!("required{}", g.suffix))
            .collect();
        if !orphans.is_empty() {
            return Err(Error::bad_request(format!(
                "All traits parameters must be associated with resources.  Found the following orphaned traits keys: {}",
                orphans.join(", ")
            )));
        }
        let orphans: Vec<String> = groups
            .iter()
            .filter(|g| {
                g.resources.is_empty()
                    && (!g.member_of.is_empty() || !g.forbidden_aggregates.is_empty())
            })
            .map(|g| format!("member_of{}", g.suffix))
            .collect();
        if !orphans.is_empty() {
            return Err(Error::bad_request(format!(
                "All member_of parameters must be associated with resources. Found the following orphaned member_of keys: {}",
                orphans.join(", ")
            )));
        }
        if groups.iter().any(|g| g.resources.is_empty()) {
            return Err(Error::bad_request(
                "All request groups must specify resources.",
            ));
        }
        if groups.is_empty() {
            return Err(Error::bad_request(
                "At least one request group (`resources` or `resources{$S}`) is required.",
            ));
        }
    }
    if FORBIDDEN_TRAITS.contains(version) {
        let mut conflicts: Vec<String> = Vec::new();
        for g in &groups {
            for any in &g.required_traits {
                if any.iter().all(|t| g.forbidden_traits.contains(t)) {
                    let names: Vec<&str> = any.iter().map(String::as_str).collect();
                    conflicts.push(format!("required{}: ({})", g.suffix, names.join(", ")));
                }
            }
        }
        if !conflicts.is_empty() {
            conflicts.sort();
            return Err(Error::bad_request(format!(
                "Conflicting required and forbidden traits found in the following traits keys: {}",
                conflicts.join(", ")
            )));
        }
    }
    Ok(groups)
}

/// The answer as the served version shows it, written straight from the
/// search's result: a thousand candidates would otherwise be tens of
/// thousands of JSON values made and dropped for one response.
struct Rendered<'a> {
    found: &'a Candidates,
    /// The classes summaries show: those asked for, before 1.27; `None`:
    /// every class.
    shown: Option<BTreeSet<&'a str>>,
    dict: bool,
    mappings: bool,
    traits: bool,
    nested: bool,
}

fn render<'a>(found: &'a Candidates, groups: &'a [Group], version: Version) -> Rendered<'a> {
    let shown = (!ALL_RESOURCES.contains(version)).then(|| {
        groups
            .iter()
            .flat_map(|g| g.resources.iter().map(|(c, _)| c.as_str()))
            .collect()
    });
    Rendered {
        found,
        shown,
        dict: DICT_ALLOCATIONS.contains(version),
        mappings: MAPPINGS.contains(version),
        traits: SUMMARY_TRAITS.contains(version),
        nested: NESTED.contains(version),
    }
}

impl Serialize for Rendered<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let requests = SeqOf(|| {
            self.found.requests.iter().map(|request| RenderedRequest {
                request,
                dict: self.dict,
                mappings: self.mappings,
            })
        });
        // By provider uuid.
        let summaries = MapOf(|| {
            self.found.summaries.iter().map(|summary| {
                (
                    &*summary.uuid,
                    RenderedSummary {
                        summary,
                        answer: self,
                    },
                )
            })
        });
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("allocation_requests", &requests)?;
        map.serialize_entry("provider_summaries", &summaries)?;
        map.end()
    }
}

impl Rendered<'_> {
    /// The answer's JSON: the bytes `serde_json` writes for it, without
    /// its escaping pass over every byte when none of the answer's strings
    /// needs escaping, as uuids, class and trait names and group suffixes
    /// never do; otherwise through `serde_json`.
    fn to_json(&self) -> serde_json::Result<Pieces> {
        let mut out = Pieces::new();
        match self.write_plain(&mut out) {
            Some(()) => Ok(out),
            None => serde_json::to_vec(self).map(Pieces::from),
        }
    }

    /// [`Self::to_json`]'s direct writing, a piece for each allocation
    /// request and summary; `None` at the first string that needs
    /// escaping.
    fn write_plain(&self, out: &mut Pieces) -> Option<()> {
        out.buf().extend_from_slice(br#"{"allocation_requests":["#);
        out.joined(&self.found.requests, |out, request| {
            self.write_request(request, out)
        })?;
        out.buf().extend_from_slice(br#"],"provider_summaries":{"#);
        out.joined(&self.found.summaries, |out, summary| {
            push_plain_str(out, &summary.uuid)?;
            out.push(b':');
            self.write_summary(summary, out)
        })?;
        out.buf().extend_from_slice(b"}}");
        Some(())
    }

    /// [`RenderedRequest`]'s JSON, written directly.
    fn write_request(&self, request: &AllocationRequest, out: &mut Vec<u8>) -> Option<()> {
        let dict = self.dict;
        let (open, close) = if dict { (b'{', b'}') } else { (b'[', b']') };
        out.extend_from_slice(br#"{"allocations":"#);
        out.push(open);
        push_joined(
            out,
            by_provider(&request.resources),
            |out, (uuid, classes)| {
                if dict {
                    push_plain_str(out, uuid)?;
                    out.extend_from_slice(br#":{"resources":{"#);
                } else {
                    out.extend_from_slice(br#"{"resource_provider":{"uuid":"#);
                    push_plain_str(out, uuid)?;
                    out.extend_from_slice(br#"},"resources":{"#);
                }
                push_joined(out, classes, |out, (class, amount)| {
                    push_plain_str(out, class)?;
                    out.push(b':');
                    push_int(out, amount);
                    Some(())
                })?;
                out.extend_from_slice(b"}}");
                Some(())
            },
        )?;
        out.push(close);
        if dict && self.mappings {
            out.extend_from_slice(br#","mappings":{"#);
            push_joined(out, &request.mappings, |out, (suffix, uuids)| {
                push_plain_str(out, suffix)?;
                out.extend_from_slice(b":[");
                push_joined(out, uuids, |out, uuid| push_plain_str(out, uuid))?;
                out.push(b']');
                Some(())
            })?;
            out.push(b'}');
        }
        out.push(b'}');
        Some(())
    }

    /// [`RenderedSummary`]'s JSON, written directly.
    fn write_summary(&self, summary: &Summary, out: &mut Vec<u8>) -> Option<()> {
        out.extend_from_slice(br#"{"resources":{"#);
        push_joined(out, self.shown_resources(summary), |out, r| {
            push_plain_str(out, &r.class)?;
            out.extend_from_slice(br#":{"capacity":"#);
            push_int(out, r.capacity);
            out.extend_from_slice(br#","used":"#);
            push_int(out, r.used);
            out.push(b'}');
            Some(())
        })?;
        out.push(b'}');
        if self.traits {
            out.extend_from_slice(br#","traits":["#);
            push_joined(out, summary.traits.iter(), |out, name| {
                push_plain_str(out, name)
            })?;
            out.push(b']');
        }
        if self.nested {
            out.extend_from_slice(br#","parent_provider_uuid":"#);
            match &summary.parent_uuid {
                Some(parent) => push_plain_str(out, parent)?,
                None => out.extend_from_slice(b"null"),
            }
            out.extend_from_slice(br#","root_provider_uuid":"#);
            push_plain_str(out, &summary.root_uuid)?;
        }
        out.push(b'}');
        Some(())
    }

    /// The classes of `summary` the served version shows.
    fn shown_resources<'s>(
        &'s self,
        summary: &'s Summary,
    ) -> impl Iterator<Item = &'s SummaryResource> {
        summary
            .resources
            .iter()
            .filter(|r| self.shown.as_ref().is_none_or(|s| s.contains(&*r.class)))
    }
}

/// Writes `items` with `write`, separated by commas; `None` as soon as
/// `write` gives up.
fn push_joined<T>(
    out: &mut Vec<u8>,
    items: impl IntoIterator<Item = T>,
    mut write: impl FnMut(&mut Vec<u8>, T) -> Option<()>,
) -> Option<()> {
    for (n, item) in items.into_iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        write(out, item)?;
    }
    Some(())
}

/// One allocation request: its providers in the order first met, each with
/// its classes in the order given.
struct RenderedRequest<'a> {
    request: &'a AllocationRequest,
    dict: bool,
    mappings: bool,
}

impl Serialize for RenderedRequest<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let by_provider = by_provider(&self.request.resources);
        let mut map = serializer.serialize_map(None)?;
        if self.dict {
            let allocations = MapOf(|| {
                by_provider
                    .iter()
                    .map(|(uuid, classes)| (*uuid, ResourcesOnly(classes)))
            });
            map.serialize_entry("allocations", &allocations)?;
            if self.mappings {
                let mappings = MapOf(|| {
                    self.request
                        .mappings
                        .iter()
                        .map(|(suffix, uuids)| (suffix, SeqOf(|| uuids.iter().map(|u| &**u))))
                });
                map.serialize_entry("mappings", &mappings)?;
            }
        } else {
            let allocations = SeqOf(|| {
                by_provider.iter().map(|(uuid, classes)| ProviderResources {
                    uuid,
                    resources: Amounts(classes),
                })
            });
            map.serialize_entry("allocations", &allocations)?;
        }
        map.end()
    }
}

/// `(provider uuid, [(class, amount)])`, as [`by_provider`] groups them.
type ByProvider<'a> = SmallVec<[(&'a str, SmallVec<[(&'a str, i64); 4]>); 4]>;

/// A request's parts by provider, providers in the order first met, each
/// with its classes in the order given. The search sums a provider's class
/// into one part, so a class comes once; were it repeated, the last amount
/// would count, in the first one's place, as in a JSON object built by
/// inserting. A request has a few providers of a few classes each: kept
/// inline, the grouping costs no allocation.
fn by_provider(resources: &[(Arc<str>, Arc<str>, i64)]) -> ByProvider<'_> {
    // Past a few parts, where each provider and class is in the lists is
    // kept in maps: a search of the lists for each part would cost the
    // square of the parts.
    const FEW: usize = 16;
    let mut by_provider = ByProvider::new();
    let mut provider_at: foldhash::HashMap<&str, usize> = foldhash::HashMap::default();
    let mut class_at: foldhash::HashMap<(&str, &str), usize> = foldhash::HashMap::default();
    let many = resources.len() > FEW;
    for (uuid, class, amount) in resources {
        let (uuid, class) = (&**uuid, &**class);
        let found = if many {
            provider_at.get(uuid).copied()
        } else {
            by_provider.iter().position(|(u, _)| *u == uuid)
        };
        let n = found.unwrap_or_else(|| {
            by_provider.push((uuid, SmallVec::new()));
            if many {
                provider_at.insert(uuid, by_provider.len() - 1);
            }
            by_provider.len() - 1
        });
        let classes = &mut by_provider[n].1;
        let found = if many {
            class_at.get(&(uuid, class)).copied()
        } else {
            classes.iter().position(|(c, _)| *c == class)
        };
        match found {
            Some(at) => classes[at].1 = *amount,
            None => {
                if many {
                    class_at.insert((uuid, class), classes.len());
                }
                classes.push((class, *amount));
            }
        }
    }
    by_provider
}

/// Amounts by class, in order.
struct Amounts<'a>(&'a [(&'a str, i64)]);

impl Serialize for Amounts<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().copied())
    }
}

/// `{"resources": {class: amount}}`, an allocation of the dict form.
struct ResourcesOnly<'a>(&'a [(&'a str, i64)]);

impl Serialize for ResourcesOnly<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("resources", &Amounts(self.0))?;
        map.end()
    }
}

/// An allocation of the list form (before 1.12).
#[derive(Serialize)]
struct ProviderResources<'a> {
    #[serde(rename = "resource_provider", serialize_with = "uuid_object")]
    uuid: &'a str,
    resources: Amounts<'a>,
}

/// `{"uuid": uuid}`.
fn uuid_object<S: Serializer>(uuid: &&str, serializer: S) -> std::result::Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(Some(1))?;
    map.serialize_entry("uuid", uuid)?;
    map.end()
}

/// One provider summary: its classes (those shown), then from 1.17 its
/// traits, from 1.29 its parent and root.
struct RenderedSummary<'a> {
    summary: &'a Summary,
    answer: &'a Rendered<'a>,
}

impl Serialize for RenderedSummary<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let (summary, answer) = (self.summary, self.answer);
        let resources = MapOf(|| {
            answer.shown_resources(summary).map(|r| {
                let (capacity, used) = (r.capacity, r.used);
                (&*r.class, Capacity { capacity, used })
            })
        });
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("resources", &resources)?;
        if answer.traits {
            map.serialize_entry("traits", &*summary.traits)?;
        }
        if answer.nested {
            map.serialize_entry("parent_provider_uuid", &summary.parent_uuid.as_deref())?;
            map.serialize_entry("root_provider_uuid", &*summary.root_uuid)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct Capacity {
    capacity: i64,
    used: i64,
}

/// A JSON array of the items the closure yields.
struct SeqOf<F>(F);

impl<F, I> Serialize for SeqOf<F>
where
    F: Fn() -> I,
    I: IntoIterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}

/// A JSON object of the `(key, value)` pairs the closure yields.
struct MapOf<F>(F);

impl<F, I, K, V> Serialize for MapOf<F>
where
    F: Fn() -> I,
    I: IntoIterator<Item = (K, V)>,
    K: Serialize,
    V: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_map((self.0)())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_keys_by_version() {
        let v = |m| Version::new(1, m);
        assert_eq!(group_key("resources", v(25)), Some(("resources", "")));
        assert_eq!(group_key("resources12", v(25)), Some(("resources", "12")));
        assert_eq!(group_key("resources01", v(25)), None);
        assert_eq!(group_key("required_NIC", v(25)), None);
        assert_eq!(group_key("required_NIC", v(33)), Some(("required", "_NIC")));
        assert_eq!(group_key("in_tree-x", v(33)), Some(("in_tree", "-x")));
        assert_eq!(group_key("member_of!", v(33)), None);
        assert_eq!(group_key("limit", v(33)), None);
        let long = format!("resources{}", "a".repeat(65));
        assert_eq!(group_key(&long, v(33)), None);
    }

    fn groups_detail(query: &str, minor: u32) -> Option<String> {
        let params = QueryParams::parse(Some(query)).unwrap();
        match request_groups(&params, Version::new(1, minor), &[]) {
            Ok(_) => None,
            Err(Error::Api(e)) => Some(e.detail().to_owned()),
            Err(other) => panic!("unexpected error {other}"),
        }
    }

    #[test]
    fn request_groups_up_to_the_bound() {
        // Every kind of group key counts, each suffix once; the unsuffixed
        // group is one of them.
        let mut keys = vec!["resources=VCPU:1".to_owned()];
        for i in 1..MAX_REQUEST_GROUPS {
            let key = match i % 4 {
                0 => format!("resources_G{i}=VCPU:1&required_G{i}=A"),
                1 => format!("resources{i}=VCPU:1&member_of{i}=in:{}", uuid(i)),
                2 => format!("resources-{i}=VCPU:1&in_tree-{i}={}", uuid(i)),
                _ => format!("resources_N{i}=VCPU:1&required_N{i}=B&required_N{i}=C"),
            };
            keys.push(key);
        }
        let at = format!("{}&group_policy=none", keys.join("&"));
        assert_eq!(groups_detail(&at, 39), None);
        let params = QueryParams::parse(Some(&at)).unwrap();
        let groups = request_groups(&params, Version::new(1, 39), &[]).unwrap();
        assert_eq!(groups.len(), MAX_REQUEST_GROUPS);
        let repeated = groups.iter().find(|g| g.suffix == "_N3").unwrap();
        assert_eq!(repeated.required_traits.len(), 2);
        // One more, by a key of any kind, is refused.
        for extra in [
            "required_X=A",
            "member_of_X=in:",
            "in_tree_X=x",
            "resources_X=VCPU:1",
        ] {
            let past = format!("{at}&{extra}");
            assert_eq!(
                groups_detail(&past, 39).as_deref(),
                Some(
                    "Invalid query string parameters: The query string names 129 request \
                     groups (resources, required, member_of and in_tree, a group for each \
                     suffix); at most 128 are accepted."
                ),
                "{extra}"
            );
        }
        // Keys that are not group keys at the version are not counted.
        let numbered: Vec<String> = (1..=MAX_REQUEST_GROUPS)
            .map(|i| format!("resources{i}=VCPU:1&required_X{i}=A"))
            .collect();
        let numbered = format!("{}&group_policy=none", numbered.join("&"));
        assert_eq!(groups_detail(&numbered, 25), None);
        assert!(groups_detail(&numbered, 33).is_some());
    }

    fn uuid(i: usize) -> String {
        format!("00000000-0000-4000-8000-{i:012x}")
    }

    /// Two requests over a parent and its child, one with a class not
    /// asked for.
    fn sample() -> (Candidates, Vec<Group>) {
        let (p1, p2) = ("p1", "p2");
        let resources = |list: &[(&str, &str, i64)]| {
            list.iter()
                .map(|(u, c, n)| (Arc::from(*u), Arc::from(*c), *n))
                .collect()
        };
        let mappings = |list: &[(&str, &[&str])]| {
            list.iter()
                .map(|(k, v)| (Arc::from(*k), v.iter().map(|u| Arc::from(*u)).collect()))
                .collect()
        };
        let class = |class: &str, capacity, used| SummaryResource {
            class: Arc::from(class),
            capacity,
            used,
        };
        let found = Candidates {
            requests: vec![
                AllocationRequest {
                    resources: resources(&[
                        (p2, "VCPU", 1),
                        (p1, "MEMORY_MB", 64),
                        (p2, "DISK_GB", 5),
                    ]),
                    mappings: mappings(&[("", &[p1, p2]), ("_X", &[p2])]),
                },
                AllocationRequest {
                    resources: resources(&[(p1, "VCPU", 1), (p1, "MEMORY_MB", 64)]),
                    mappings: mappings(&[("", &[p1])]),
                },
            ],
            summaries: vec![
                Summary {
                    uuid: Arc::from(p2),
                    parent_uuid: Some(Arc::from(p1)),
                    root_uuid: Arc::from(p1),
                    resources: vec![class("VCPU", 8, 1), class("DISK_GB", 100, 0)],
                    traits: Arc::from(["HW_CPU_X86_AVX".to_owned(), "HW_NIC".to_owned()]),
                },
                Summary {
                    uuid: Arc::from(p1),
                    parent_uuid: None,
                    root_uuid: Arc::from(p1),
                    resources: vec![class("VCPU", 4, 0), class("MEMORY_MB", 1024, 128)],
                    traits: Arc::from([]),
                },
            ],
        };
        let groups = vec![Group {
            resources: vec![("VCPU".to_owned(), 1), ("MEMORY_MB".to_owned(), 64)],
            ..Group::default()
        }];
        (found, groups)
    }

    /// The answer's exact bytes (key order included) at the versions that
    /// change its shape.
    #[test]
    fn rendered_answers() {
        let (found, groups) = sample();
        // Written directly, and through serde_json: the same bytes.
        let text = |minor| {
            let body = render(&found, &groups, Version::new(1, minor));
            let direct = String::from_utf8(body.to_json().unwrap().to_vec()).unwrap();
            assert_eq!(direct, serde_json::to_string(&body).unwrap(), "1.{minor}");
            direct
        };
        let list_requests = r#"{"allocation_requests":[{"allocations":[{"resource_provider":{"uuid":"p2"},"resources":{"VCPU":1,"DISK_GB":5}},{"resource_provider":{"uuid":"p1"},"resources":{"MEMORY_MB":64}}]},{"allocations":[{"resource_provider":{"uuid":"p1"},"resources":{"VCPU":1,"MEMORY_MB":64}}]}]"#;
        let asked_summaries = r#""provider_summaries":{"p2":{"resources":{"VCPU":{"capacity":8,"used":1}}},"p1":{"resources":{"VCPU":{"capacity":4,"used":0},"MEMORY_MB":{"capacity":1024,"used":128}}}}}"#;
        assert_eq!(text(10), format!("{list_requests},{asked_summaries}"));
        let dict_requests = r#"{"allocation_requests":[{"allocations":{"p2":{"resources":{"VCPU":1,"DISK_GB":5}},"p1":{"resources":{"MEMORY_MB":64}}}},{"allocations":{"p1":{"resources":{"VCPU":1,"MEMORY_MB":64}}}}]"#;
        assert_eq!(text(12), format!("{dict_requests},{asked_summaries}"));
        assert_eq!(
            text(17),
            format!(
                r#"{dict_requests},"provider_summaries":{{"p2":{{"resources":{{"VCPU":{{"capacity":8,"used":1}}}},"traits":["HW_CPU_X86_AVX","HW_NIC"]}},"p1":{{"resources":{{"VCPU":{{"capacity":4,"used":0}},"MEMORY_MB":{{"capacity":1024,"used":128}}}},"traits":[]}}}}}}"#
            )
        );
        let all_summaries = r#""provider_summaries":{"p2":{"resources":{"VCPU":{"capacity":8,"used":1},"DISK_GB":{"capacity":100,"used":0}},"traits":["HW_CPU_X86_AVX","HW_NIC"],"parent_provider_uuid":"p1","root_provider_uuid":"p1"},"p1":{"resources":{"VCPU":{"capacity":4,"used":0},"MEMORY_MB":{"capacity":1024,"used":128}},"traits":[],"parent_provider_uuid":null,"root_provider_uuid":"p1"}}}"#;
        assert_eq!(text(29), format!("{dict_requests},{all_summaries}"));
        assert_eq!(
            text(34),
            format!(
                r#"{{"allocation_requests":[{{"allocations":{{"p2":{{"resources":{{"VCPU":1,"DISK_GB":5}}}},"p1":{{"resources":{{"MEMORY_MB":64}}}}}},"mappings":{{"":["p1","p2"],"_X":["p2"]}}}},{{"allocations":{{"p1":{{"resources":{{"VCPU":1,"MEMORY_MB":64}}}}}},"mappings":{{"":["p1"]}}}}],{all_summaries}"#
            )
        );
    }

    /// A string that needs escaping anywhere in the answer sends all of it
    /// through serde_json, which escapes it.
    #[test]
    fn escaped_answers() {
        let (found, groups) = sample();
        let edits: [fn(&mut Candidates); 5] = [
            |f| f.summaries[0].traits = Arc::from(["A\"B".to_owned()]),
            |f| f.summaries[1].uuid = Arc::from("p\\1"),
            |f| f.summaries[0].parent_uuid = Some(Arc::from("p\n")),
            |f| f.requests[1].resources[0].1 = Arc::from("V\tCPU"),
            |f| f.requests[0].mappings[1].0 = Arc::from("_\u{1}"),
        ];
        for (n, edit) in edits.iter().enumerate() {
            let mut found = found.clone();
            edit(&mut found);
            let body = render(&found, &groups, Version::new(1, 39));
            let direct = String::from_utf8(body.to_json().unwrap().to_vec()).unwrap();
            assert_eq!(direct, serde_json::to_string(&body).unwrap(), "edit {n}");
            assert!(direct.contains('\\'), "edit {n}: {direct}");
        }
    }

    #[test]
    fn python_lists() {
        assert_eq!(py_list(["", "_A"]), "['', '_A']");
        assert_eq!(py_list(Vec::<&str>::new()), "[]");
    }
}
