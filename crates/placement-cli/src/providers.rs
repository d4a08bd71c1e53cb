//! `resource provider create/list/show/set/delete`, and the provider's
//! subcommands, each in its resource's module.

use clap::{ArgMatches, Args, Subcommand};
use http::Method;
use indexmap::IndexMap;
use microversion::VersionSpan;
use microversion_client::cli::CliVersions;
use serde::{Deserialize, Serialize};

use crate::Failure;
use crate::aggregates::Aggregate;
use crate::allocations::{ConsumerAllocation, ProviderAllocations, Resources};
use crate::api::Api;
use crate::args::{Output, Uuid, parse_amount, parse_uuid, parse_uuid_list};
use crate::command::{ALL, Columns, Command, Plan, cells, columns_at, q, required_params};
use crate::error::Error;
use crate::inventories::Inventory;
use crate::output::Shown;
use crate::traits::ProviderTrait;
use crate::usages::ProviderUsage;

const V1_14: VersionSpan = VersionSpan::from_static("1.14 - latest");

/// A provider's columns.
const PROVIDER: Columns = &[
    ("uuid", ALL),
    ("name", ALL),
    ("generation", ALL),
    ("root_provider_uuid", V1_14),
    ("parent_provider_uuid", V1_14),
];
/// `show`'s, with `--allocations`.
const PROVIDER_SHOW: Columns = &[
    ("uuid", ALL),
    ("name", ALL),
    ("generation", ALL),
    ("root_provider_uuid", V1_14),
    ("parent_provider_uuid", V1_14),
    ("allocations", ALL),
];

/// A resource provider, as the server sends it; fields in osc-placement's
/// column order.
#[derive(Debug, Deserialize, Serialize)]
pub(crate) struct ResourceProvider {
    pub(crate) uuid: String,
    pub(crate) name: String,
    pub(crate) generation: i64,
    /// From 1.14.
    #[serde(default)]
    pub(crate) root_provider_uuid: Option<String>,
    /// From 1.14.
    #[serde(default)]
    pub(crate) parent_provider_uuid: Option<String>,
}

/// `GET /resource_providers`.
#[derive(Debug, Deserialize)]
pub(crate) struct ResourceProviders {
    pub(crate) resource_providers: Vec<ResourceProvider>,
}

/// `POST /resource_providers`.
#[derive(Debug, Serialize)]
struct NewProvider<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    uuid: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_provider_uuid: Option<&'a str>,
}

/// `POST /resource_providers`' answer from 1.20.
#[derive(Debug, Deserialize)]
struct Created {
    uuid: Option<String>,
}

/// `PUT /resource_providers/{uuid}`.
#[derive(Debug, Serialize)]
struct ProviderUpdate<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_provider_uuid: Option<&'a str>,
}

/// `resource provider show --allocations`: the provider and its
/// consumers' allocations.
#[derive(Debug, Serialize)]
struct ProviderWithAllocations<'a> {
    #[serde(flatten)]
    provider: &'a ResourceProvider,
    allocations: &'a IndexMap<String, Resources>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Provider {
    /// Create a resource provider.
    Create(ProviderCreate),
    /// List resource providers.
    List(ProviderList),
    /// Show a resource provider.
    Show(ProviderShow),
    /// Rename a resource provider (and set its parent).
    Set(ProviderSet),
    /// Delete a resource provider.
    Delete(Uuid),
    /// A provider's inventories.
    #[command(subcommand)]
    Inventory(Inventory),
    /// A provider's usages.
    #[command(subcommand)]
    Usage(ProviderUsage),
    /// A consumer's allocations.
    #[command(subcommand)]
    Allocation(ConsumerAllocation),
    /// A provider's traits.
    #[command(subcommand)]
    Trait(ProviderTrait),
    /// A provider's aggregates.
    #[command(subcommand)]
    Aggregate(Aggregate),
}

#[derive(Debug, Args)]
pub(crate) struct ProviderCreate {
    /// Name of the resource provider.
    #[arg(value_name = "NAME")]
    name: String,
    /// UUID of the resource provider [default: chosen by the server].
    #[arg(long, value_name = "UUID", value_parser = parse_uuid)]
    uuid: Option<String>,
    /// UUID of the parent provider.
    #[arg(long, value_name = "UUID", value_parser = parse_uuid)]
    parent_provider: Option<String>,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Args)]
pub(crate) struct ProviderList {
    /// UUID of the resource provider.
    #[arg(long, value_name = "UUID", value_parser = parse_uuid)]
    uuid: Option<String>,
    /// Name of the resource provider.
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// CLASS=AMOUNT: providers with the capacity for it; may be repeated.
    #[arg(long, value_name = "CLASS=AMOUNT", value_parser = parse_amount)]
    resource: Vec<(String, i64)>,
    /// Only providers in the tree of this provider.
    #[arg(long, value_name = "UUID", value_parser = parse_uuid)]
    in_tree: Option<String>,
    /// A trait every provider must have; may be repeated. A comma
    /// separated list (any of them) needs version 1.39.
    #[arg(long, value_name = "TRAIT")]
    required: Vec<String>,
    /// A trait no provider may have; may be repeated.
    #[arg(long, value_name = "TRAIT")]
    forbidden: Vec<String>,
    /// Comma separated aggregate UUIDs: providers in any of them; repeated
    /// (all of the lists) needs version 1.24.
    #[arg(long, value_name = "UUIDS", value_parser = parse_uuid_list)]
    member_of: Vec<String>,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Args)]
pub(crate) struct ProviderShow {
    /// UUID of the resource provider.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    uuid: String,
    /// Also show the provider's allocations.
    #[arg(long)]
    allocations: bool,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Args)]
pub(crate) struct ProviderSet {
    /// UUID of the resource provider.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    uuid: String,
    /// The new name.
    #[arg(long, value_name = "NAME", required = true)]
    name: String,
    /// UUID of the parent provider (only for a provider without one).
    #[arg(long, value_name = "UUID", value_parser = parse_uuid)]
    parent_provider: Option<String>,
    #[command(flatten)]
    output: Output,
}

/// The versions of these commands' options, and of the subcommands'.
pub(crate) fn versions(v: CliVersions) -> CliVersions {
    const fn since(v: &'static str) -> VersionSpan {
        VersionSpan::from_static(v)
    }
    let v = v
        .option(
            "resource provider create",
            "parent_provider",
            since("1.14 - latest"),
        )
        .option(
            "resource provider set",
            "parent_provider",
            since("1.14 - latest"),
        )
        .option("resource provider list", "resource", since("1.4 - latest"))
        .option("resource provider list", "in_tree", since("1.14 - latest"))
        .option("resource provider list", "required", since("1.18 - latest"))
        .option(
            "resource provider list",
            "forbidden",
            since("1.22 - latest"),
        )
        .option("resource provider list", "member_of", since("1.3 - latest"));
    let v = crate::inventories::versions(v);
    let v = crate::allocations::versions(v);
    let v = crate::traits::provider_versions(v);
    crate::aggregates::versions(v)
}

/// The provider's columns at the version in use, as one object.
pub(crate) fn shown(api: &Api, provider: &ResourceProvider) -> Shown {
    let columns = columns_at(api, PROVIDER);
    Shown::one(
        columns
            .iter()
            .copied()
            .zip(cells(provider, &columns))
            .collect(),
    )
}

/// `GET /resource_providers/{uuid}`.
pub(crate) async fn get(api: &Api, uuid: &str) -> Result<ResourceProvider, Failure> {
    api.get(&format!("resource_providers/{uuid}"), &[]).await
}

impl Command for Provider {
    fn plan(&self, matches: &ArgMatches) -> Result<Plan<'_>, Error> {
        Ok(match self {
            Provider::Create(a) => Plan::printing("resource provider create", PROVIDER, &a.output),
            Provider::List(a) => {
                let mut plan = Plan::printing("resource provider list", PROVIDER, &a.output);
                if a.member_of.len() > 1 {
                    plan.need("option --member-of given more than once", "1.24 - latest");
                }
                if a.required.iter().any(|r| r.contains(',')) {
                    plan.need(
                        "option --required with a comma (any of the traits)",
                        "1.39 - latest",
                    );
                }
                plan
            }
            Provider::Show(a) => Plan::printing("resource provider show", PROVIDER_SHOW, &a.output),
            Provider::Set(a) => Plan::printing("resource provider set", PROVIDER, &a.output),
            Provider::Delete(_) => Plan::quiet("resource provider delete"),
            Provider::Inventory(c) => c.plan(matches)?,
            Provider::Usage(c) => c.plan(matches)?,
            Provider::Allocation(c) => c.plan(matches)?,
            Provider::Trait(c) => c.plan(matches)?,
            Provider::Aggregate(c) => c.plan(matches)?,
        })
    }

    async fn run(&self, api: &Api, matches: &ArgMatches) -> Result<Option<Shown>, Failure> {
        match self {
            Provider::Create(a) => create(api, a).await.map(Some),
            Provider::List(a) => list(api, a).await.map(Some),
            Provider::Show(a) => show(api, a).await.map(Some),
            Provider::Set(a) => {
                let body = ProviderUpdate {
                    name: &a.name,
                    parent_provider_uuid: a.parent_provider.as_deref(),
                };
                let provider: ResourceProvider = api
                    .put(&format!("resource_providers/{}", a.uuid), &body)
                    .await?;
                Ok(Some(shown(api, &provider)))
            }
            Provider::Delete(a) => {
                api.delete(&format!("resource_providers/{}", a.uuid))
                    .await?;
                Ok(None)
            }
            Provider::Inventory(c) => c.run(api, matches).await,
            Provider::Usage(c) => c.run(api, matches).await,
            Provider::Allocation(c) => c.run(api, matches).await,
            Provider::Trait(c) => c.run(api, matches).await,
            Provider::Aggregate(c) => c.run(api, matches).await,
        }
    }
}

async fn create(api: &Api, a: &ProviderCreate) -> Result<Shown, Failure> {
    let body = NewProvider {
        name: &a.name,
        uuid: a.uuid.as_deref(),
        parent_provider_uuid: a.parent_provider.as_deref(),
    };
    let reply = api
        .send(Method::POST, "resource_providers", &[], Some(&body))
        .await?;
    // 1.20 answers with the provider; before, its Location.
    let created = if reply.is_empty() {
        None
    } else {
        reply.json::<Created>()?.uuid
    };
    let uuid = match created {
        Some(uuid) => uuid,
        None => reply
            .location
            .as_deref()
            .and_then(|l| l.trim_end_matches('/').rsplit('/').next())
            .map(str::to_owned)
            .ok_or_else(|| Error::new("the server did not say where the provider is"))?,
    };
    Ok(shown(api, &get(api, &uuid).await?))
}

async fn list(api: &Api, a: &ProviderList) -> Result<Shown, Failure> {
    let mut query = Vec::new();
    if let Some(name) = &a.name {
        query.push(q("name", name.clone()));
    }
    if let Some(uuid) = &a.uuid {
        query.push(q("uuid", uuid.clone()));
    }
    if !a.resource.is_empty() {
        let resources: Vec<String> = a.resource.iter().map(|(c, n)| format!("{c}:{n}")).collect();
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
    let body: ResourceProviders = api.get("resource_providers", &query).await?;
    let columns = columns_at(api, PROVIDER);
    let rows = body
        .resource_providers
        .iter()
        .map(|rp| cells(rp, &columns))
        .collect();
    Ok(Shown::list(&columns, rows))
}

async fn show(api: &Api, a: &ProviderShow) -> Result<Shown, Failure> {
    let provider = get(api, &a.uuid).await?;
    let mut columns = columns_at(api, PROVIDER);
    if !a.allocations {
        return Ok(Shown::one(
            columns
                .iter()
                .copied()
                .zip(cells(&provider, &columns))
                .collect(),
        ));
    }
    let allocations: ProviderAllocations = api
        .get(&format!("resource_providers/{}/allocations", a.uuid), &[])
        .await?;
    columns.push("allocations");
    let shown = ProviderWithAllocations {
        provider: &provider,
        allocations: &allocations.allocations,
    };
    Ok(Shown::one(
        columns
            .iter()
            .copied()
            .zip(cells(&shown, &columns))
            .collect(),
    ))
}
