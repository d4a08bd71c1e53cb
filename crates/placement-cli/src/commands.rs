//! What each command needs, sends and prints: osc-placement's requests,
//! bodies and columns, at the version in use.

use clap::ArgMatches;
use http::Method;
use microversion::VersionSpan;
use serde_json::{Map, Value, json};

use crate::args::{
    Aggregate, Allocation, Candidate, Class, ConsumerAllocation, INVENTORY_FIELDS, Inventory,
    InventoryClass, Output, Provider, ProviderTrait, ProviderUsage, Resource, ResourceUsage, Top,
    Trait,
};
use crate::error::Error;
use crate::output::Shown;
use crate::{Api, CLIENT_RANGE, Failure};

const ALL: VersionSpan = VersionSpan::ALL;
const V1_12: VersionSpan = VersionSpan::from_static("1.12 - latest");
const V1_14: VersionSpan = VersionSpan::from_static("1.14 - latest");
const V1_17: VersionSpan = VersionSpan::from_static("1.17 - latest");
const V1_38: VersionSpan = VersionSpan::from_static("1.38 - latest");

const PROVIDER: &[(&str, VersionSpan)] = &[
    ("uuid", ALL),
    ("name", ALL),
    ("generation", ALL),
    ("root_provider_uuid", V1_14),
    ("parent_provider_uuid", V1_14),
];
const PROVIDER_SHOW: &[(&str, VersionSpan)] = &[
    ("uuid", ALL),
    ("name", ALL),
    ("generation", ALL),
    ("root_provider_uuid", V1_14),
    ("parent_provider_uuid", V1_14),
    ("allocations", ALL),
];
const INVENTORY_LIST: &[(&str, VersionSpan)] = &[
    ("resource_class", ALL),
    ("allocation_ratio", ALL),
    ("min_unit", ALL),
    ("max_unit", ALL),
    ("reserved", ALL),
    ("step_size", ALL),
    ("total", ALL),
    ("used", ALL),
];
const INVENTORY_SET: &[(&str, VersionSpan)] = &[
    ("resource_provider", ALL),
    ("resource_class", ALL),
    ("allocation_ratio", ALL),
    ("min_unit", ALL),
    ("max_unit", ALL),
    ("reserved", ALL),
    ("step_size", ALL),
    ("total", ALL),
];
const USAGE: &[(&str, VersionSpan)] = &[("resource_class", ALL), ("usage", ALL)];
const ALLOCATION: &[(&str, VersionSpan)] = &[
    ("resource_provider", ALL),
    ("generation", ALL),
    ("resources", ALL),
    ("project_id", V1_12),
    ("user_id", V1_12),
    ("consumer_type", V1_38),
];
const CANDIDATE: &[(&str, VersionSpan)] = &[
    ("#", ALL),
    ("allocation", ALL),
    ("resource provider", ALL),
    ("inventory used/capacity", ALL),
    ("traits", V1_17),
];
const NAME: &[(&str, VersionSpan)] = &[("name", ALL)];
const UUID: &[(&str, VersionSpan)] = &[("uuid", ALL)];
const VERSIONS: &[(&str, VersionSpan)] = &[
    ("endpoint", ALL),
    ("min_version", ALL),
    ("max_version", ALL),
    ("client_min_version", ALL),
    ("client_max_version", ALL),
];

/// One request group of `allocation candidate list`.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Group {
    suffix: String,
    resources: Vec<String>,
    required: Vec<String>,
    forbidden: Vec<String>,
    member_of: Vec<String>,
}

/// What a command needs before it runs.
#[derive(Debug)]
pub(crate) struct Plan<'a> {
    /// The command, as in messages.
    pub(crate) path: &'static str,
    /// Every column it can print, with the versions that have it.
    pub(crate) columns: &'static [(&'static str, VersionSpan)],
    /// Needs that depend on values, beyond the options' own spans.
    pub(crate) needs: Vec<(String, VersionSpan)>,
    /// How it prints; `None` for commands that print nothing.
    pub(crate) output: Option<&'a Output>,
    groups: Vec<Group>,
}

fn since(text: &'static str) -> VersionSpan {
    VersionSpan::from_static(text)
}

/// The plan of `command`; `matches` gives the order of the options of
/// `allocation candidate list`.
pub(crate) fn plan<'a>(command: &'a Top, matches: &ArgMatches) -> Result<Plan<'a>, Error> {
    let mut plan = Plan {
        path: "",
        columns: &[],
        needs: Vec::new(),
        output: None,
        groups: Vec::new(),
    };
    let mut set = |path: &'static str, columns, output: Option<&'a Output>| {
        plan.path = path;
        plan.columns = columns;
        plan.output = output;
    };
    match command {
        Top::VersionList(o) => set("version-list", VERSIONS, Some(o)),
        Top::Trait(t) => match t {
            Trait::Create(_) => set("trait create", &[], None),
            Trait::List(a) => set("trait list", NAME, Some(&a.output)),
            Trait::Show(a) => set("trait show", NAME, Some(&a.output)),
            Trait::Delete(_) => set("trait delete", &[], None),
        },
        Top::Allocation(Allocation::Candidate(Candidate::List(a))) => {
            set("allocation candidate list", CANDIDATE, Some(&a.output));
            let sub = matches
                .subcommand_matches("allocation")
                .and_then(|m| m.subcommand_matches("candidate"))
                .and_then(|m| m.subcommand_matches("list"));
            let groups = match sub {
                Some(sub) => candidate_groups(sub)?,
                None => Vec::new(),
            };
            for g in &groups {
                let name = if g.suffix.is_empty() {
                    "the unnamed group".to_owned()
                } else {
                    format!("group {}", g.suffix)
                };
                if g.required.iter().any(|r| r.contains(',')) {
                    plan.needs.push((
                        format!("option --required with a comma (any of the traits) in {name}"),
                        since("1.39 - latest"),
                    ));
                }
                if g.member_of.len() > 1 {
                    plan.needs.push((
                        format!("option --member-of given more than once in {name}"),
                        since("1.24 - latest"),
                    ));
                }
                if !g.suffix.is_empty() && !g.suffix.bytes().all(|b| b.is_ascii_digit()) {
                    plan.needs.push((
                        format!("group {} (a suffix that is not a number)", g.suffix),
                        since("1.33 - latest"),
                    ));
                }
            }
            plan.groups = groups;
        }
        Top::Resource(r) => match r {
            Resource::Class(c) => match c {
                Class::Create(_) => set("resource class create", &[], None),
                Class::List(o) => set("resource class list", NAME, Some(o)),
                Class::Show(a) => set("resource class show", NAME, Some(&a.output)),
                Class::Set(_) => set("resource class set", &[], None),
                Class::Delete(_) => set("resource class delete", &[], None),
            },
            Resource::Usage(ResourceUsage::Show(a)) => {
                set("resource usage show", USAGE, Some(&a.output));
            }
            Resource::Provider(p) => match p {
                Provider::Create(a) => set("resource provider create", PROVIDER, Some(&a.output)),
                Provider::List(a) => {
                    set("resource provider list", PROVIDER, Some(&a.output));
                    if a.member_of.len() > 1 {
                        plan.needs.push((
                            "option --member-of given more than once".to_owned(),
                            since("1.24 - latest"),
                        ));
                    }
                    if a.required.iter().any(|r| r.contains(',')) {
                        plan.needs.push((
                            "option --required with a comma (any of the traits)".to_owned(),
                            since("1.39 - latest"),
                        ));
                    }
                }
                Provider::Show(a) => {
                    set("resource provider show", PROVIDER_SHOW, Some(&a.output));
                }
                Provider::Set(a) => set("resource provider set", PROVIDER, Some(&a.output)),
                Provider::Delete(_) => set("resource provider delete", &[], None),
                Provider::Inventory(i) => match i {
                    Inventory::List(a) => {
                        set(
                            "resource provider inventory list",
                            INVENTORY_LIST,
                            Some(&a.output),
                        );
                    }
                    Inventory::Show(a) => set(
                        "resource provider inventory show",
                        &INVENTORY_LIST[1..],
                        Some(&a.output),
                    ),
                    Inventory::Set(a) => {
                        set(
                            "resource provider inventory set",
                            INVENTORY_SET,
                            Some(&a.output),
                        );
                    }
                    Inventory::Delete(a) => {
                        set("resource provider inventory delete", &[], None);
                        if a.resource_class.is_none() {
                            plan.needs.push((
                                "`resource provider inventory delete` without --resource-class \
                                 (all inventories)"
                                    .to_owned(),
                                since("1.5 - latest"),
                            ));
                        }
                    }
                    Inventory::Class(InventoryClass::Set(a)) => set(
                        "resource provider inventory class set",
                        &INVENTORY_SET[2..],
                        Some(&a.output),
                    ),
                },
                Provider::Usage(ProviderUsage::Show(a)) => {
                    set("resource provider usage show", USAGE, Some(&a.output));
                }
                Provider::Allocation(a) => match a {
                    ConsumerAllocation::Show(a) => {
                        set(
                            "resource provider allocation show",
                            ALLOCATION,
                            Some(&a.output),
                        );
                    }
                    ConsumerAllocation::Set(a) => {
                        set(
                            "resource provider allocation set",
                            ALLOCATION,
                            Some(&a.output),
                        );
                    }
                    ConsumerAllocation::Unset(a) => {
                        set(
                            "resource provider allocation unset",
                            ALLOCATION,
                            Some(&a.output),
                        );
                    }
                    ConsumerAllocation::Delete(_) => {
                        set("resource provider allocation delete", &[], None);
                    }
                },
                Provider::Trait(t) => match t {
                    ProviderTrait::List(a) => {
                        set("resource provider trait list", NAME, Some(&a.output));
                    }
                    ProviderTrait::Set(a) => {
                        set("resource provider trait set", NAME, Some(&a.output));
                    }
                    ProviderTrait::Delete(_) => set("resource provider trait delete", &[], None),
                },
                Provider::Aggregate(g) => match g {
                    Aggregate::List(a) => {
                        set("resource provider aggregate list", UUID, Some(&a.output));
                    }
                    Aggregate::Set(a) => {
                        set("resource provider aggregate set", UUID, Some(&a.output));
                    }
                },
            },
        },
    }
    Ok(plan)
}

/// The request groups of `allocation candidate list`: each option belongs
/// to the last `--group` before it, or to the unnamed group.
fn candidate_groups(m: &ArgMatches) -> Result<Vec<Group>, Error> {
    let indexed = |id: &str| -> Vec<(usize, String)> {
        match (m.indices_of(id), m.get_many::<String>(id)) {
            (Some(i), Some(v)) => i.zip(v.cloned()).collect(),
            _ => Vec::new(),
        }
    };
    let starts = indexed("group");
    let mut groups = vec![Group::default()];
    for (_, suffix) in &starts {
        if groups.iter().any(|g| g.suffix == *suffix) {
            return Err(Error::new(format!("--group {suffix} is given twice")));
        }
        groups.push(Group {
            suffix: suffix.clone(),
            ..Group::default()
        });
    }
    let owner = |index: usize| starts.iter().filter(|(i, _)| *i < index).count();
    if let (Some(i), Some(v)) = (
        m.indices_of("resource"),
        m.get_many::<(String, i64)>("resource"),
    ) {
        for (index, (class, amount)) in i.zip(v) {
            groups[owner(index)]
                .resources
                .push(format!("{class}:{amount}"));
        }
    }
    for (index, value) in indexed("required") {
        groups[owner(index)].required.push(value);
    }
    for (index, value) in indexed("forbidden") {
        groups[owner(index)].forbidden.push(value);
    }
    for (index, value) in indexed("member_of") {
        groups[owner(index)].member_of.push(value);
    }
    if groups[0].resources.is_empty()
        && groups[0].required.is_empty()
        && groups[0].forbidden.is_empty()
        && groups[0].member_of.is_empty()
    {
        groups.remove(0);
    }
    if groups.is_empty() {
        return Err(Error::new(
            "`allocation candidate list` needs at least one --resource CLASS=AMOUNT",
        ));
    }
    for g in &groups {
        if g.resources.is_empty() {
            let name = if g.suffix.is_empty() {
                "the unnamed group (before any --group)".to_owned()
            } else {
                format!("group {}", g.suffix)
            };
            return Err(Error::new(format!(
                "{name} has no --resource CLASS=AMOUNT: each group needs one"
            )));
        }
    }
    Ok(groups)
}

/// `required` values from required and forbidden traits, as osc-placement
/// builds them: one `in:` value per comma list, one for the rest.
fn required_params(required: &[String], forbidden: &[String]) -> Vec<String> {
    let mut params = Vec::new();
    let mut all = Vec::new();
    for r in required {
        if r.contains(',') {
            params.push(format!("in:{r}"));
        } else {
            all.push(r.clone());
        }
    }
    all.extend(forbidden.iter().map(|f| format!("!{f}")));
    if !all.is_empty() {
        params.push(all.join(","));
    }
    params
}

/// `object[name]`, or an empty string as osc prints a missing field.
fn field(object: &Value, name: &str) -> Value {
    object
        .get(name)
        .cloned()
        .unwrap_or_else(|| Value::String(String::new()))
}

/// The columns of `catalog` the version in use has.
fn columns_at(api: &Api, catalog: &[(&'static str, VersionSpan)]) -> Vec<&'static str> {
    catalog
        .iter()
        .filter(|(_, span)| span.contains(api.version))
        .map(|(name, _)| *name)
        .collect()
}

fn provider_shown(api: &Api, provider: &Value) -> Shown {
    let columns = columns_at(api, PROVIDER);
    Shown::one(columns.iter().map(|c| (*c, field(provider, c))).collect())
}

fn names(body: &Value, key: &str) -> Vec<Vec<Value>> {
    body.get(key)
        .and_then(Value::as_array)
        .map(|items| items.iter().map(|t| vec![t.clone()]).collect())
        .unwrap_or_default()
}

fn object<'v>(body: &'v Value, key: &str) -> Result<&'v Map<String, Value>, Failure> {
    body.get(key).and_then(Value::as_object).ok_or_else(|| {
        Failure::Local(Error::new(format!(
            "the server's answer has no {key:?} object"
        )))
    })
}

fn q(key: &str, value: impl Into<String>) -> (String, String) {
    (key.to_owned(), value.into())
}

/// Runs the command; `None` for commands that print nothing.
pub(crate) async fn execute(
    command: &Top,
    api: &Api,
    plan: &Plan<'_>,
) -> Result<Option<Shown>, Failure> {
    match command {
        Top::VersionList(_) => {
            let server = api
                .client
                .server_versions()
                .await
                .map_err(Error::from_client)?;
            let (min, max) = match server {
                microversion::ServerVersions::Microversions(r) => {
                    (json!(r.min().to_string()), json!(r.max().to_string()))
                }
                microversion::ServerVersions::Unversioned => (Value::Null, Value::Null),
            };
            Ok(Some(Shown::one(vec![
                ("endpoint", json!(api.endpoint)),
                ("min_version", min),
                ("max_version", max),
                ("client_min_version", json!(CLIENT_RANGE.0.to_string())),
                ("client_max_version", json!(CLIENT_RANGE.1.to_string())),
            ])))
        }
        Top::Trait(t) => traits(t, api).await,
        Top::Allocation(Allocation::Candidate(Candidate::List(a))) => {
            candidates(
                api,
                plan,
                a.limit,
                a.group_policy.as_deref(),
                &a.root_required,
            )
            .await
        }
        Top::Resource(Resource::Class(c)) => classes(c, api).await,
        Top::Resource(Resource::Usage(ResourceUsage::Show(a))) => {
            let mut query = vec![q("project_id", a.project_id.clone())];
            if let Some(user) = &a.user_id {
                query.push(q("user_id", user.clone()));
            }
            let body = api.get("usages", &query).await?;
            Ok(Some(usages(&body)?))
        }
        Top::Resource(Resource::Provider(p)) => providers(p, api).await,
    }
}

fn usages(body: &Value) -> Result<Shown, Failure> {
    let rows = object(body, "usages")?
        .iter()
        .map(|(class, usage)| vec![json!(class), usage.clone()])
        .collect();
    Ok(Shown::list(&["resource_class", "usage"], rows))
}

async fn traits(command: &Trait, api: &Api) -> Result<Option<Shown>, Failure> {
    match command {
        Trait::Create(t) => {
            api.put(&format!("traits/{}", t.name), None).await?;
            Ok(None)
        }
        Trait::Delete(t) => {
            api.delete(&format!("traits/{}", t.name)).await?;
            Ok(None)
        }
        Trait::Show(t) => {
            api.get(&format!("traits/{}", t.args.name), &[]).await?;
            Ok(Some(Shown::one(vec![("name", json!(t.args.name))])))
        }
        Trait::List(a) => {
            let mut query = Vec::new();
            if let Some(name) = &a.name {
                query.push(q("name", name.clone()));
            }
            if a.associated {
                query.push(q("associated", "true"));
            }
            let body = api.get("traits", &query).await?;
            Ok(Some(Shown::list(&["name"], names(&body, "traits"))))
        }
    }
}

async fn classes(command: &Class, api: &Api) -> Result<Option<Shown>, Failure> {
    match command {
        Class::Create(c) => {
            let body = json!({"name": c.name});
            api.call(Method::POST, "resource_classes", &[], Some(&body))
                .await?;
            Ok(None)
        }
        Class::Set(c) => {
            api.put(&format!("resource_classes/{}", c.name), None)
                .await?;
            Ok(None)
        }
        Class::Delete(c) => {
            api.delete(&format!("resource_classes/{}", c.name)).await?;
            Ok(None)
        }
        Class::Show(c) => {
            let body = api
                .get(&format!("resource_classes/{}", c.args.name), &[])
                .await?;
            Ok(Some(Shown::one(vec![("name", field(&body, "name"))])))
        }
        Class::List(_) => {
            let body = api.get("resource_classes", &[]).await?;
            let rows = body
                .get("resource_classes")
                .and_then(Value::as_array)
                .map(|items| items.iter().map(|c| vec![field(c, "name")]).collect())
                .unwrap_or_default();
            Ok(Some(Shown::list(&["name"], rows)))
        }
    }
}

async fn candidates(
    api: &Api,
    plan: &Plan<'_>,
    limit: Option<u64>,
    policy: Option<&str>,
    root_required: &[String],
) -> Result<Option<Shown>, Failure> {
    let mut query = Vec::new();
    if let Some(limit) = limit {
        query.push(q("limit", limit.to_string()));
    }
    if plan.groups.iter().any(|g| !g.suffix.is_empty()) {
        query.push(q("group_policy", policy.unwrap_or("none")));
    }
    for g in &plan.groups {
        let key = |name: &str| format!("{name}{}", g.suffix);
        query.push(q(&key("resources"), g.resources.join(",")));
        for r in required_params(&g.required, &g.forbidden) {
            query.push(q(&key("required"), r));
        }
        for m in &g.member_of {
            query.push(q(&key("member_of"), format!("in:{m}")));
        }
    }
    if !root_required.is_empty() {
        query.push(q("root_required", root_required.join(",")));
    }
    let body = api.get("allocation_candidates", &query).await?;
    let with_traits = api.at_least("1.17");
    let mut capacity = Map::new();
    let mut traits = Map::new();
    for (rp, summary) in object(&body, "provider_summaries")? {
        let resources = summary
            .get("resources")
            .and_then(Value::as_object)
            .map(|r| {
                r.iter()
                    .map(|(class, v)| {
                        format!(
                            "{class}={}/{}",
                            crate::output::text(&field(v, "used")),
                            crate::output::text(&field(v, "capacity"))
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default();
        capacity.insert(rp.clone(), json!(resources));
        let names: Vec<String> = summary
            .get("traits")
            .and_then(Value::as_array)
            .map(|t| t.iter().map(crate::output::text).collect())
            .unwrap_or_default();
        traits.insert(rp.clone(), json!(names.join(",")));
    }
    let amounts = |resources: Option<&Value>| -> String {
        resources
            .and_then(Value::as_object)
            .map(|r| {
                r.iter()
                    .map(|(class, n)| format!("{class}={}", crate::output::text(n)))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default()
    };
    let mut rows = Vec::new();
    let requests = body
        .get("allocation_requests")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, request) in requests.iter().enumerate() {
        // From 1.12 a map of provider to resources; before, a list.
        let mut per_provider: Vec<(String, String)> = Vec::new();
        match request.get("allocations") {
            Some(Value::Object(map)) => {
                for (rp, a) in map {
                    per_provider.push((rp.clone(), amounts(a.get("resources"))));
                }
            }
            Some(Value::Array(list)) => {
                for a in list {
                    let rp = a
                        .pointer("/resource_provider/uuid")
                        .map(crate::output::text)
                        .unwrap_or_default();
                    per_provider.push((rp, amounts(a.get("resources"))));
                }
            }
            _ => {}
        }
        for (rp, allocation) in per_provider {
            let mut row = vec![
                json!(i + 1),
                json!(allocation),
                json!(rp),
                capacity.get(&rp).cloned().unwrap_or_else(|| json!("")),
            ];
            if with_traits {
                row.push(traits.get(&rp).cloned().unwrap_or_else(|| json!("")));
            }
            rows.push(row);
        }
    }
    let columns = columns_at(api, CANDIDATE);
    Ok(Some(Shown::list(&columns, rows)))
}

async fn providers(command: &Provider, api: &Api) -> Result<Option<Shown>, Failure> {
    match command {
        Provider::Create(a) => {
            let mut body = json!({"name": a.name});
            if let Some(uuid) = &a.uuid {
                body["uuid"] = json!(uuid);
            }
            if let Some(parent) = &a.parent_provider {
                body["parent_provider_uuid"] = json!(parent);
            }
            let reply = api
                .call(Method::POST, "resource_providers", &[], Some(&body))
                .await?;
            // 1.20 answers with the provider; before, its Location.
            let uuid = match reply.body.get("uuid").and_then(Value::as_str) {
                Some(uuid) => uuid.to_owned(),
                None => reply
                    .location
                    .as_deref()
                    .and_then(|l| l.trim_end_matches('/').rsplit('/').next())
                    .map(str::to_owned)
                    .ok_or_else(|| Error::new("the server did not say where the provider is"))?,
            };
            let provider = api.get(&format!("resource_providers/{uuid}"), &[]).await?;
            Ok(Some(provider_shown(api, &provider)))
        }
        Provider::List(a) => {
            let mut query = Vec::new();
            if let Some(name) = &a.name {
                query.push(q("name", name.clone()));
            }
            if let Some(uuid) = &a.uuid {
                query.push(q("uuid", uuid.clone()));
            }
            if !a.resource.is_empty() {
                let resources: Vec<String> =
                    a.resource.iter().map(|(c, n)| format!("{c}:{n}")).collect();
                query.push(q("resources", resources.join(",")));
            }
            if let Some(tree) = &a.in_tree {
                query.push(q("in_tree", tree.clone()));
            }
            for r in required_params(&a.required, &a.forbidden) {
                query.push(q("required", r));
            }
            for m in &a.member_of {
                query.push(q("member_of", format!("in:{m}")));
            }
            let body = api.get("resource_providers", &query).await?;
            let columns = columns_at(api, PROVIDER);
            let rows = body
                .get("resource_providers")
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .map(|rp| columns.iter().map(|c| field(rp, c)).collect())
                        .collect()
                })
                .unwrap_or_default();
            Ok(Some(Shown::list(&columns, rows)))
        }
        Provider::Show(a) => {
            let mut provider = api
                .get(&format!("resource_providers/{}", a.uuid), &[])
                .await?;
            let mut columns = columns_at(api, PROVIDER);
            if a.allocations {
                let allocations = api
                    .get(&format!("resource_providers/{}/allocations", a.uuid), &[])
                    .await?;
                provider["allocations"] = field(&allocations, "allocations");
                columns.push("allocations");
            }
            Ok(Some(Shown::one(
                columns.iter().map(|c| (*c, field(&provider, c))).collect(),
            )))
        }
        Provider::Set(a) => {
            let mut body = json!({"name": a.name});
            if let Some(parent) = &a.parent_provider {
                body["parent_provider_uuid"] = json!(parent);
            }
            let provider = api
                .put(&format!("resource_providers/{}", a.uuid), Some(&body))
                .await?;
            Ok(Some(provider_shown(api, &provider)))
        }
        Provider::Delete(a) => {
            api.delete(&format!("resource_providers/{}", a.uuid))
                .await?;
            Ok(None)
        }
        Provider::Inventory(i) => inventories(i, api).await,
        Provider::Usage(ProviderUsage::Show(a)) => {
            let body = api
                .get(&format!("resource_providers/{}/usages", a.args.uuid), &[])
                .await?;
            Ok(Some(usages(&body)?))
        }
        Provider::Allocation(a) => allocations(a, api).await,
        Provider::Trait(t) => match t {
            ProviderTrait::List(a) => {
                let body = api
                    .get(&format!("resource_providers/{}/traits", a.args.uuid), &[])
                    .await?;
                Ok(Some(Shown::list(&["name"], names(&body, "traits"))))
            }
            ProviderTrait::Set(a) => {
                let path = format!("resource_providers/{}", a.uuid);
                let provider = api.get(&path, &[]).await?;
                let body = json!({
                    "resource_provider_generation": field(&provider, "generation"),
                    "traits": a.traits,
                });
                let body = api.put(&format!("{path}/traits"), Some(&body)).await?;
                Ok(Some(Shown::list(&["name"], names(&body, "traits"))))
            }
            ProviderTrait::Delete(a) => {
                api.delete(&format!("resource_providers/{}/traits", a.uuid))
                    .await?;
                Ok(None)
            }
        },
        Provider::Aggregate(g) => match g {
            Aggregate::List(a) => {
                let body = api
                    .get(
                        &format!("resource_providers/{}/aggregates", a.args.uuid),
                        &[],
                    )
                    .await?;
                Ok(Some(Shown::list(&["uuid"], names(&body, "aggregates"))))
            }
            Aggregate::Set(a) => {
                let path = format!("resource_providers/{}/aggregates", a.uuid);
                let body = if api.at_least("1.19") {
                    let Some(generation) = a.generation else {
                        return Err(Error::new(format!(
                            "`resource provider aggregate set` needs --generation from API \
                             version 1.19; the version in use is {}",
                            api.version
                        ))
                        .into());
                    };
                    json!({"aggregates": a.aggregate, "resource_provider_generation": generation})
                } else {
                    json!(a.aggregate)
                };
                let body = api.put(&path, Some(&body)).await?;
                Ok(Some(Shown::list(&["uuid"], names(&body, "aggregates"))))
            }
        },
    }
}

fn inventory_row(class: &str, inventory: &Value, fields: &[&str]) -> Vec<Value> {
    let mut row = vec![json!(class)];
    row.extend(fields.iter().map(|f| field(inventory, f)));
    row
}

async fn inventories(command: &Inventory, api: &Api) -> Result<Option<Shown>, Failure> {
    let fields: Vec<&str> = INVENTORY_FIELDS.iter().map(|(f, _)| *f).collect();
    match command {
        Inventory::List(a) => {
            let path = format!("resource_providers/{}", a.args.uuid);
            let body = api.get(&format!("{path}/inventories"), &[]).await?;
            let used = api.get(&format!("{path}/usages"), &[]).await?;
            let used = object(&used, "usages")?;
            let rows = object(&body, "inventories")?
                .iter()
                .map(|(class, inventory)| {
                    let mut row = inventory_row(class, inventory, &fields);
                    row.push(used.get(class).cloned().unwrap_or(json!("")));
                    row
                })
                .collect();
            let columns: Vec<&str> = INVENTORY_LIST.iter().map(|(c, _)| *c).collect();
            Ok(Some(Shown::list(&columns, rows)))
        }
        Inventory::Show(a) => {
            let path = format!("resource_providers/{}", a.uuid);
            let inventory = api
                .get(&format!("{path}/inventories/{}", a.resource_class), &[])
                .await?;
            let used = api.get(&format!("{path}/usages"), &[]).await?;
            let used = object(&used, "usages")?
                .get(&a.resource_class)
                .cloned()
                .unwrap_or(json!(""));
            let mut pairs: Vec<(&str, Value)> =
                fields.iter().map(|f| (*f, field(&inventory, f))).collect();
            pairs.push(("used", used));
            Ok(Some(Shown::one(pairs)))
        }
        Inventory::Set(a) => {
            let providers = if a.aggregate {
                let query = [q("member_of", a.uuid.clone())];
                let body = api.get("resource_providers", &query).await?;
                let list = body
                    .get("resource_providers")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                if list.is_empty() {
                    return Err(Error::new(format!(
                        "no resource provider is in the aggregate {}",
                        a.uuid
                    ))
                    .into());
                }
                list
            } else {
                vec![
                    api.get(&format!("resource_providers/{}", a.uuid), &[])
                        .await?,
                ]
            };
            let mut rows = Vec::new();
            for provider in providers {
                let uuid = crate::output::text(&field(&provider, "uuid"));
                let path = format!("resource_providers/{uuid}/inventories");
                let mut payload = if a.amend {
                    api.get(&path, &[]).await?
                } else {
                    json!({
                        "inventories": {},
                        "resource_provider_generation": field(&provider, "generation"),
                    })
                };
                let inventories = payload
                    .get_mut("inventories")
                    .and_then(Value::as_object_mut)
                    .ok_or_else(|| Error::new("the server's answer has no \"inventories\""))?;
                for r in &a.resource {
                    let entry = inventories
                        .entry(r.class.clone())
                        .or_insert_with(|| json!({}));
                    entry[r.field] = r.value.clone();
                }
                let result = if a.dry_run {
                    payload
                } else {
                    api.put(&path, Some(&payload)).await?
                };
                for (class, inventory) in object(&result, "inventories")? {
                    let mut row = inventory_row(class, inventory, &fields);
                    if a.aggregate {
                        row.insert(0, json!(uuid));
                    }
                    rows.push(row);
                }
            }
            let columns: Vec<&str> = INVENTORY_SET
                .iter()
                .map(|(c, _)| *c)
                .skip(usize::from(!a.aggregate))
                .collect();
            Ok(Some(Shown::list(&columns, rows)))
        }
        Inventory::Delete(a) => {
            let mut path = format!("resource_providers/{}/inventories", a.uuid);
            if let Some(class) = &a.resource_class {
                path = format!("{path}/{class}");
            }
            api.delete(&path).await?;
            Ok(None)
        }
        Inventory::Class(InventoryClass::Set(a)) => {
            let path = format!("resource_providers/{}", a.uuid);
            let provider = api.get(&path, &[]).await?;
            let mut body = json!({
                "resource_provider_generation": field(&provider, "generation"),
                "total": a.total,
            });
            for (name, value) in [
                ("reserved", a.reserved),
                ("min_unit", a.min_unit),
                ("max_unit", a.max_unit),
                ("step_size", a.step_size),
            ] {
                if let Some(v) = value {
                    body[name] = json!(v);
                }
            }
            if let Some(ratio) = a.allocation_ratio {
                body["allocation_ratio"] = json!(ratio);
            }
            let inventory = api
                .put(
                    &format!("{path}/inventories/{}", a.resource_class),
                    Some(&body),
                )
                .await?;
            Ok(Some(Shown::one(
                fields.iter().map(|f| (*f, field(&inventory, f))).collect(),
            )))
        }
    }
}

/// A consumer's allocations as rows, with the columns of the version in
/// use (`unset` always shows the project and user).
fn allocation_rows(api: &Api, body: &Value, owner_always: bool) -> Result<Shown, Failure> {
    let columns: Vec<&str> = ALLOCATION
        .iter()
        .filter(|(c, span)| {
            span.contains(api.version) || (owner_always && matches!(*c, "project_id" | "user_id"))
        })
        .map(|(c, _)| *c)
        .collect();
    let rows = object(body, "allocations")?
        .iter()
        .map(|(rp, a)| {
            columns
                .iter()
                .map(|c| match *c {
                    "resource_provider" => json!(rp),
                    "generation" | "resources" => field(a, c),
                    other => body.get(other).cloned().unwrap_or(Value::Null),
                })
                .collect()
        })
        .collect();
    Ok(Shown::list(&columns, rows))
}

async fn allocations(command: &ConsumerAllocation, api: &Api) -> Result<Option<Shown>, Failure> {
    match command {
        ConsumerAllocation::Show(a) => {
            let body = api
                .get(&format!("allocations/{}", a.args.uuid), &[])
                .await?;
            Ok(Some(allocation_rows(api, &body, false)?))
        }
        ConsumerAllocation::Delete(a) => {
            api.delete(&format!("allocations/{}", a.uuid)).await?;
            Ok(None)
        }
        ConsumerAllocation::Set(a) => {
            if api.at_least("1.8") && (a.project_id.is_none() || a.user_id.is_none()) {
                return Err(Error::new(format!(
                    "`resource provider allocation set` needs --project-id and --user-id from \
                     API version 1.8; the version in use is {}",
                    api.version
                ))
                .into());
            }
            if api.at_least("1.38") && a.consumer_type.is_none() {
                return Err(Error::new(format!(
                    "`resource provider allocation set` needs --consumer-type from API version \
                     1.38; the version in use is {}",
                    api.version
                ))
                .into());
            }
            // One entry per provider; the same class twice must agree.
            let mut merged: Vec<(String, Map<String, Value>)> = Vec::new();
            for alloc in &a.allocation {
                let index = match merged.iter().position(|(rp, _)| *rp == alloc.provider) {
                    Some(i) => i,
                    None => {
                        merged.push((alloc.provider.clone(), Map::new()));
                        merged.len() - 1
                    }
                };
                for (class, amount) in &alloc.resources {
                    let resources = &mut merged[index].1;
                    if let Some(old) = resources.get(class) {
                        if *old != json!(amount) {
                            return Err(Error::new(format!(
                                "--allocation gives {class} of provider {} twice, as {old} and \
                                 {amount}",
                                alloc.provider
                            ))
                            .into());
                        }
                    }
                    resources.insert(class.clone(), json!(amount));
                }
            }
            let path = format!("allocations/{}", a.uuid);
            let mut body = if api.at_least("1.12") {
                let map: Map<String, Value> = merged
                    .into_iter()
                    .map(|(rp, r)| (rp, json!({"resources": r})))
                    .collect();
                json!({"allocations": map})
            } else {
                let list: Vec<Value> = merged
                    .into_iter()
                    .map(|(rp, r)| json!({"resource_provider": {"uuid": rp}, "resources": r}))
                    .collect();
                json!({"allocations": list})
            };
            if api.at_least("1.28") {
                let current = api.get(&path, &[]).await?;
                body["consumer_generation"] = current
                    .get("consumer_generation")
                    .cloned()
                    .unwrap_or(Value::Null);
            }
            if api.at_least("1.8") {
                body["project_id"] = json!(a.project_id);
                body["user_id"] = json!(a.user_id);
            }
            if api.at_least("1.38") {
                body["consumer_type"] = json!(a.consumer_type);
            }
            api.put(&path, Some(&body)).await?;
            let body = api.get(&path, &[]).await?;
            Ok(Some(allocation_rows(api, &body, false)?))
        }
        ConsumerAllocation::Unset(a) => {
            let path = format!("allocations/{}", a.uuid);
            let current = api.get(&path, &[]).await?;
            let mut allocations = object(&current, "allocations")?.clone();
            if a.resource_class.is_empty() {
                if a.provider.is_empty() {
                    allocations.clear();
                } else {
                    for rp in &a.provider {
                        allocations.remove(rp);
                    }
                }
            } else {
                let providers: Vec<String> = allocations
                    .keys()
                    .filter(|rp| a.provider.is_empty() || a.provider.contains(rp))
                    .cloned()
                    .collect();
                for rp in providers {
                    let empty = match allocations
                        .get_mut(&rp)
                        .and_then(|x| x.get_mut("resources"))
                        .and_then(Value::as_object_mut)
                    {
                        Some(resources) => {
                            for class in &a.resource_class {
                                resources.remove(class);
                            }
                            resources.is_empty()
                        }
                        None => true,
                    };
                    if empty {
                        allocations.remove(&rp);
                    }
                }
            }
            if allocations.is_empty() && !api.at_least("1.28") {
                // Before 1.28 an empty set cannot be PUT.
                api.delete(&path).await?;
            } else {
                let resources: Map<String, Value> = allocations
                    .into_iter()
                    .map(|(rp, x)| (rp, json!({"resources": field(&x, "resources")})))
                    .collect();
                let mut body = json!({
                    "allocations": resources,
                    "project_id": field(&current, "project_id"),
                    "user_id": field(&current, "user_id"),
                });
                if api.at_least("1.28") {
                    body["consumer_generation"] = field(&current, "consumer_generation");
                }
                if api.at_least("1.38") {
                    body["consumer_type"] = field(&current, "consumer_type");
                }
                api.put(&path, Some(&body)).await?;
            }
            let body = api.get(&path, &[]).await?;
            Ok(Some(allocation_rows(api, &body, true)?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_as_osc_placement_builds_it() {
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            required_params(&s(&["A", "B,C", "D"]), &s(&["E"])),
            ["in:B,C", "A,D,!E"]
        );
        assert!(required_params(&[], &[]).is_empty());
        assert_eq!(required_params(&[], &s(&["E"])), ["!E"]);
    }
}
