//! `trait create/list/show/delete` and `resource provider trait
//! list/set/delete`: traits, and a provider's.

use clap::{ArgMatches, Args, Subcommand};
use http::Method;
use microversion::VersionSpan;
use microversion_client::cli::CliVersions;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Failure;
use crate::api::Api;
use crate::args::{Output, Uuid, WithOutput, parse_name, parse_uuid};
use crate::command::{ALL, Columns, Command, Plan, names, q};
use crate::error::Error;
use crate::output::Shown;
use crate::providers;

const NAME: Columns = &[("name", ALL)];

/// `GET /traits` and a provider's traits.
#[derive(Debug, Deserialize)]
struct Traits {
    traits: Vec<String>,
}

/// `PUT /resource_providers/{uuid}/traits`.
#[derive(Debug, Serialize)]
struct ProviderTraits<'a> {
    resource_provider_generation: i64,
    traits: &'a [String],
}

#[derive(Debug, Subcommand)]
pub(crate) enum Trait {
    /// Create a custom trait.
    Create(TraitName),
    /// List traits.
    List(TraitList),
    /// Show whether a trait exists.
    Show(WithOutput<TraitName>),
    /// Delete a custom trait.
    Delete(TraitName),
}

/// A trait name.
#[derive(Debug, Args)]
pub(crate) struct TraitName {
    /// The trait (CUSTOM_... to create or delete).
    #[arg(value_name = "NAME", value_parser = parse_name)]
    name: String,
}

#[derive(Debug, Args)]
pub(crate) struct TraitList {
    /// A filter: startswith:PREFIX or in:A,B,C.
    #[arg(long, value_name = "FILTER")]
    name: Option<String>,
    /// Only traits some provider has.
    #[arg(long)]
    associated: bool,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ProviderTrait {
    /// List a provider's traits.
    List(WithOutput<Uuid>),
    /// Replace a provider's traits.
    Set(TraitSet),
    /// Remove every trait of a provider.
    Delete(Uuid),
}

#[derive(Debug, Args)]
pub(crate) struct TraitSet {
    /// UUID of the resource provider.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    uuid: String,
    /// A trait; may be repeated (none: remove them all).
    #[arg(long = "trait", value_name = "TRAIT")]
    traits: Vec<String>,
    #[command(flatten)]
    output: Output,
}

/// The versions of `trait`.
pub(crate) fn versions(v: CliVersions) -> CliVersions {
    v.command("trait", VersionSpan::from_static("1.6 - latest"))
        .option(
            "trait list",
            "associated",
            VersionSpan::from_static("1.6 - latest"),
        )
}

/// The versions of `resource provider trait`.
pub(crate) fn provider_versions(v: CliVersions) -> CliVersions {
    v.command(
        "resource provider trait",
        VersionSpan::from_static("1.6 - latest"),
    )
}

impl Command for Trait {
    fn plan(&self, _: &ArgMatches) -> Result<Plan<'_>, Error> {
        Ok(match self {
            Trait::Create(_) => Plan::quiet("trait create"),
            Trait::List(a) => Plan::printing("trait list", NAME, &a.output),
            Trait::Show(a) => Plan::printing("trait show", NAME, &a.output),
            Trait::Delete(_) => Plan::quiet("trait delete"),
        })
    }

    async fn run(&self, api: &Api, _: &ArgMatches) -> Result<Option<Shown>, Failure> {
        match self {
            Trait::Create(t) => {
                api.put_ignoring_answer::<()>(&format!("traits/{}", t.name), None)
                    .await?;
                Ok(None)
            }
            Trait::Delete(t) => {
                api.delete(&format!("traits/{}", t.name)).await?;
                Ok(None)
            }
            Trait::Show(t) => {
                // The answer has no body: its status says the trait exists.
                api.send::<()>(Method::GET, &format!("traits/{}", t.args.name), &[], None)
                    .await?;
                Ok(Some(Shown::one(vec![(
                    "name",
                    Value::from(t.args.name.as_str()),
                )])))
            }
            Trait::List(a) => {
                let mut query = Vec::new();
                if let Some(name) = &a.name {
                    query.push(q("name", name.clone()));
                }
                if a.associated {
                    query.push(q("associated", "true"));
                }
                let body: Traits = api.get("traits", &query).await?;
                Ok(Some(Shown::list(&["name"], names(body.traits))))
            }
        }
    }
}

impl Command for ProviderTrait {
    fn plan(&self, _: &ArgMatches) -> Result<Plan<'_>, Error> {
        Ok(match self {
            ProviderTrait::List(a) => {
                Plan::printing("resource provider trait list", NAME, &a.output)
            }
            ProviderTrait::Set(a) => Plan::printing("resource provider trait set", NAME, &a.output),
            ProviderTrait::Delete(_) => Plan::quiet("resource provider trait delete"),
        })
    }

    async fn run(&self, api: &Api, _: &ArgMatches) -> Result<Option<Shown>, Failure> {
        match self {
            ProviderTrait::List(a) => {
                let body: Traits = api
                    .get(&format!("resource_providers/{}/traits", a.args.uuid), &[])
                    .await?;
                Ok(Some(Shown::list(&["name"], names(body.traits))))
            }
            ProviderTrait::Set(a) => {
                let provider = providers::get(api, &a.uuid).await?;
                let body = ProviderTraits {
                    resource_provider_generation: provider.generation,
                    traits: &a.traits,
                };
                let body: Traits = api
                    .put(&format!("resource_providers/{}/traits", a.uuid), &body)
                    .await?;
                Ok(Some(Shown::list(&["name"], names(body.traits))))
            }
            ProviderTrait::Delete(a) => {
                api.delete(&format!("resource_providers/{}/traits", a.uuid))
                    .await?;
                Ok(None)
            }
        }
    }
}
