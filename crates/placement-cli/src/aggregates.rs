//! `resource provider aggregate list/set`: the aggregates a provider is
//! in.

use clap::{ArgMatches, Args, Subcommand};
use microversion::VersionSpan;
use microversion_client::cli::CliVersions;
use serde::{Deserialize, Serialize};

use crate::Failure;
use crate::api::Api;
use crate::args::{Output, Uuid, WithOutput, parse_integer, parse_uuid};
use crate::command::{ALL, Columns, Command, Plan, names};
use crate::error::Error;
use crate::output::Shown;

const UUID: Columns = &[("uuid", ALL)];

/// A provider's aggregates, as the server sends them.
#[derive(Debug, Deserialize)]
struct Aggregates {
    aggregates: Vec<String>,
}

/// `PUT /resource_providers/{uuid}/aggregates`: from 1.19 with the
/// provider's generation, before as a bare list.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum AggregatesUpdate<'a> {
    WithGeneration {
        aggregates: &'a [String],
        resource_provider_generation: i64,
    },
    List(&'a [String]),
}

#[derive(Debug, Subcommand)]
pub(crate) enum Aggregate {
    /// List a provider's aggregates.
    List(WithOutput<Uuid>),
    /// Replace a provider's aggregates.
    Set(AggregateSet),
}

#[derive(Debug, Args)]
pub(crate) struct AggregateSet {
    /// UUID of the resource provider.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    uuid: String,
    /// UUID of an aggregate; may be repeated (none: remove them all).
    #[arg(long, value_name = "UUID", value_parser = parse_uuid)]
    aggregate: Vec<String>,
    /// The provider's generation, which must match the server's.
    #[arg(long, value_name = "INTEGER", value_parser = parse_integer)]
    generation: Option<i64>,
    #[command(flatten)]
    output: Output,
}

/// The versions of `resource provider aggregate`.
pub(crate) fn versions(v: CliVersions) -> CliVersions {
    v.command(
        "resource provider aggregate",
        VersionSpan::from_static("1.1 - latest"),
    )
    .option(
        "resource provider aggregate set",
        "generation",
        VersionSpan::from_static("1.19 - latest"),
    )
}

impl Command for Aggregate {
    fn plan(&self, _: &ArgMatches) -> Result<Plan<'_>, Error> {
        Ok(match self {
            Aggregate::List(a) => {
                Plan::printing("resource provider aggregate list", UUID, &a.output)
            }
            Aggregate::Set(a) => Plan::printing("resource provider aggregate set", UUID, &a.output),
        })
    }

    async fn run(&self, api: &Api, _: &ArgMatches) -> Result<Option<Shown>, Failure> {
        let body: Aggregates = match self {
            Aggregate::List(a) => {
                api.get(
                    &format!("resource_providers/{}/aggregates", a.args.uuid),
                    &[],
                )
                .await?
            }
            Aggregate::Set(a) => {
                let body = if api.at_least("1.19") {
                    let Some(generation) = a.generation else {
                        return Err(Error::new(format!(
                            "`resource provider aggregate set` needs --generation from API \
                             version 1.19; the version in use is {}",
                            api.version
                        ))
                        .into());
                    };
                    AggregatesUpdate::WithGeneration {
                        aggregates: &a.aggregate,
                        resource_provider_generation: generation,
                    }
                } else {
                    AggregatesUpdate::List(&a.aggregate)
                };
                api.put(&format!("resource_providers/{}/aggregates", a.uuid), &body)
                    .await?
            }
        };
        Ok(Some(Shown::list(&["uuid"], names(body.aggregates))))
    }
}
